//! Simulated tools: [`ToolDef`] (what a suite declares about a tool the agent may call) and
//! [`ToolFault`] (a fault or a poisoned output a case injects into one).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What calling a tool would do to the world.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum SideEffectClass {
    /// Reads only.
    #[default]
    ReadOnly,
    /// Changes state that can be undone.
    Write,
    /// Changes state that cannot be undone (payments, sent email, deletions).
    Irreversible,
}

impl SideEffectClass {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            SideEffectClass::ReadOnly => "read_only",
            SideEffectClass::Write => "write",
            SideEffectClass::Irreversible => "irreversible",
        }
    }
}

/// A tool the agent may call. gauntlet answers calls from the fixtures; nothing real runs.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ToolDef {
    /// The tool's name, as the model sees it.
    pub name: String,
    /// What the tool does, as the model sees it.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments object.
    #[serde(default = "empty_object_schema")]
    pub parameters: serde_json::Value,
    /// What a call would change.
    #[serde(default)]
    pub side_effect: SideEffectClass,
    /// Whether a human must approve a call first. `true` always; a condition such as
    /// `amount > 100` for some calls (the argument compared with a number).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalRule>,
    /// Answers keyed by argument patterns; the first match wins.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixtures: Vec<ToolFixture>,
    /// The answer when no fixture matches. Without one, an unmatched call gets an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<serde_json::Value>,
    /// Phrases in an answer that claim this tool's action happened ("refund sent"). Defaults
    /// are derived from the tool's name; see the action-hallucination check.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<String>,
    /// A version label for the mock, recorded in the run manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

fn empty_object_schema() -> serde_json::Value {
    serde_json::json!({ "type": "object", "properties": {} })
}

/// When a tool call needs approval.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum ApprovalRule {
    /// `true`: every call; `false`: none.
    Always(bool),
    /// A condition on one numeric argument: `{ arg: amount, over: 100 }`.
    Over {
        /// The argument compared.
        arg: String,
        /// Calls with the argument above this need approval.
        over: f64,
    },
}

/// A canned tool answer for calls whose arguments match.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ToolFixture {
    /// Argument values that must match (top-level keys; strings may use `*` wildcards).
    #[serde(default)]
    pub when: serde_json::Map<String, serde_json::Value>,
    /// The answer returned to the agent.
    pub returns: serde_json::Value,
}

/// A fault injected into a tool for one case.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ToolFault {
    /// The tool.
    pub tool: String,
    /// What goes wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<FaultKind>,
    /// Instructions appended to the tool's output (indirect prompt injection).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poison: Option<String>,
    /// Which calls are affected: all (default), or only the first N.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
}

/// Kinds of injected tool fault.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// The call never answers (reported to the agent as a timeout).
    Timeout,
    /// The tool answers with an error status.
    Error,
    /// The tool answers with a body that is not valid JSON.
    Malformed,
    /// The tool answers with part of the data.
    Partial,
    /// The tool refuses: permission denied.
    PermissionDenied,
    /// The tool refuses: rate limited.
    RateLimited,
}

impl FaultKind {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            FaultKind::Timeout => "timeout",
            FaultKind::Error => "error",
            FaultKind::Malformed => "malformed",
            FaultKind::Partial => "partial",
            FaultKind::PermissionDenied => "permission_denied",
            FaultKind::RateLimited => "rate_limited",
        }
    }
}
