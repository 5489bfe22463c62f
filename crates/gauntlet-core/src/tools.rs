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

impl ToolDef {
    /// Whether a call with these arguments needs a human's approval (a numeric argument may
    /// arrive as a string: `"80"` is compared as 80).
    pub fn needs_approval(&self, args: &serde_json::Value) -> bool {
        match &self.approval {
            None | Some(ApprovalRule::Always(false)) => false,
            Some(ApprovalRule::Always(true)) => true,
            Some(ApprovalRule::Over { arg, over }) => args
                .get(arg)
                .and_then(|v| {
                    v.as_f64()
                        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                })
                .is_some_and(|v| v > *over),
        }
    }
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

impl FaultKind {
    /// The error a tool answers with for this fault; `None` for the faults that answer with
    /// (damaged) data instead: `malformed` and `partial`. The simulated tools and the
    /// recording proxy use the same texts, so a case behaves alike whoever runs the tools.
    pub fn error_text(self) -> Option<&'static str> {
        match self {
            FaultKind::Timeout => Some("error: the tool timed out after 30 s"),
            FaultKind::Error => Some("error: 500 internal server error"),
            FaultKind::PermissionDenied => Some("error: 403 permission denied"),
            FaultKind::RateLimited => Some("error: 429 rate limited; retry after 2 seconds"),
            FaultKind::Malformed | FaultKind::Partial => None,
        }
    }
}

/// What a `malformed` fault hands the agent instead of the result: JSON cut off mid-way.
pub const MALFORMED_OUTPUT: &str = "{\"status\": \"ok\", \"data\": [{\"id\": 1,";

/// What a `partial` fault keeps of a result: the first half of an array, or half of an
/// object's fields marked `"partial": true`, or half of a string.
pub fn partial_value(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Array(a) => Value::Array(a.iter().take(a.len().div_ceil(2)).cloned().collect()),
        Value::Object(o) => {
            let keep = o.len().div_ceil(2);
            let mut m: serde_json::Map<String, Value> = o
                .iter()
                .take(keep)
                .map(|(k, v)| (k.clone(), partial_value(v)))
                .collect();
            m.insert("partial".into(), Value::Bool(true));
            Value::Object(m)
        }
        Value::String(s) => Value::String(s.chars().take(s.chars().count() / 2).collect()),
        other => other.clone(),
    }
}

/// A tool output with a poison added where a real tool would carry free text: a `note`
/// field of a JSON object, or a paragraph after a text answer.
pub fn poison_output(out: &str, poison: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(out) {
        Ok(serde_json::Value::Object(mut o)) => {
            o.insert("note".into(), serde_json::Value::String(poison.to_owned()));
            serde_json::Value::Object(o).to_string()
        }
        _ => format!("{out}\n\n{poison}"),
    }
}

/// A call's arguments in at most 160 bytes, for side-effect descriptions.
pub fn summarize_args(args: &serde_json::Value) -> String {
    let s = args.to_string();
    if s.len() > 160 {
        format!("{}…", &s[..s.floor_char_boundary(160)])
    } else {
        s
    }
}
