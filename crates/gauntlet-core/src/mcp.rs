//! MCP servers: what a suite says about one ([`McpServer`], in `agent.mcp_servers`), what a
//! server lists ([`McpListing`]: its tools, prompts and resources, in the protocol's own
//! field names), and the seam through which the simulated tools hand a call to a real
//! server ([`ToolBackend`], collected per suite in [`ToolBackends`]).
//!
//! The client that speaks the protocol lives in `gauntlet-targets` (it owns external I/O),
//! the scan of a listing in `gauntlet-graders`; both read and write these types, and the
//! runner's simulated tools call a [`ToolBackend`] without knowing what is behind it.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::tools::{ApprovalRule, SideEffectClass, ToolDef};

/// An MCP server whose tools the agent under test gets in place of simulated ones. Its
/// answers pass through the same fault and poison injection as a simulated tool's, and every
/// call is recorded as a tool span.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct McpServer {
    /// A name for the server, used in messages and the run manifest.
    pub name: String,
    /// A stdio server: the program and its arguments, started for the run. Relative paths
    /// are resolved in the suite's folder and must stay inside it. Give this or `url`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// A streamable HTTP server: its endpoint URL (`http://` or `https://`). Give this or
    /// `command`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Extra environment variables for a stdio server, as for an `exec` target: nothing else
    /// of gauntlet's environment reaches it but `PATH` and what `pass_env` names; values
    /// `${env:NAME}` are read from gauntlet's environment and redacted as secrets.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Names of variables passed to a stdio server as they are (settings, not secrets).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_env: Vec<String>,
    /// Request headers for an HTTP server; values may use `${env:NAME}` (redacted).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The longest wait, in milliseconds, for the server to start, to list its tools, or to
    /// answer one call. Default 10000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// The server's tools the agent gets (only these: a tool the server lists but the suite
    /// does not name is not offered). Their descriptions and argument schemas are the
    /// server's, read when the run starts.
    pub tools: Vec<McpTool>,
}

/// The default of [`McpServer::timeout_ms`].
pub const DEFAULT_MCP_TIMEOUT_MS: u64 = 10_000;

impl McpServer {
    /// The time limit for starting, listing and each call.
    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.timeout_ms.unwrap_or(DEFAULT_MCP_TIMEOUT_MS))
    }
}

/// One of an MCP server's tools, as a suite offers it to the agent.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct McpTool {
    /// The tool's name on the server (and as the model sees it).
    pub name: String,
    /// What a call would change. The server's own annotations are hints from an untrusted
    /// party; the suite says what the tool does.
    #[serde(default)]
    pub side_effect: SideEffectClass,
    /// Whether a human must approve a call first, as for a simulated tool. A call that
    /// needs approval and lacks it never reaches the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalRule>,
    /// Phrases in an answer that claim this tool's action happened.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<String>,
}

impl McpTool {
    /// The tool as the rest of gauntlet sees it, before the server has described it: no
    /// description, an empty argument schema, no fixtures.
    pub fn to_tool_def(&self, server: &str) -> ToolDef {
        let parameters = serde_json::json!({ "type": "object", "properties": {} });
        ToolDef {
            side_effect: self.side_effect,
            approval: self.approval.clone(),
            claims: self.claims.clone(),
            version: Some(format!("mcp:{server}")),
            ..ToolDef::declared(self.name.clone(), "", parameters)
        }
    }
}

/// What an MCP server listed, in the protocol's field names.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct McpListing {
    /// The server's name and version, as it gave them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<McpServerInfo>,
    /// The instructions the server gave when it started (read by many clients as part of
    /// the system prompt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Its tools.
    #[serde(default)]
    pub tools: Vec<McpToolInfo>,
    /// Its prompts.
    #[serde(default)]
    pub prompts: Vec<McpPromptInfo>,
    /// Its resources.
    #[serde(default)]
    pub resources: Vec<McpResourceInfo>,
}

/// A server's name and version.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct McpServerInfo {
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// Its version.
    #[serde(default)]
    pub version: String,
}

/// A tool as a server lists it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct McpToolInfo {
    /// Its name.
    pub name: String,
    /// A title for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does, as the model reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of its arguments.
    #[serde(default)]
    pub input_schema: serde_json::Value,
    /// The server's hints about what a call does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<McpToolAnnotations>,
}

impl McpToolInfo {
    /// The simulated tool's definition with this tool's description and argument schema.
    pub fn describe(&self, def: &mut ToolDef) {
        def.description = self.description.clone().unwrap_or_default();
        if self.input_schema.is_object() {
            def.parameters = self.input_schema.clone();
        }
    }
}

/// The protocol's tool annotations (all hints, from an untrusted server).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct McpToolAnnotations {
    /// A title for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool changes nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy or change things irreversibly (a client should ask first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling it twice with the same arguments does no more than once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// It reaches outside systems.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// A prompt as a server lists it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct McpPromptInfo {
    /// Its name.
    pub name: String,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<McpPromptArgument>,
}

/// One argument of a prompt.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct McpPromptArgument {
    /// Its name.
    pub name: String,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A resource as a server lists it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct McpResourceInfo {
    /// Its URI.
    pub uri: String,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// What it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// What a real tool answered: its result as the model would read it, or its error.
pub type BackendAnswer = Result<String, String>;

/// Something outside gauntlet that answers calls of some of a suite's tools (an MCP server).
/// The simulated tools call it after the approval check and before injecting the case's
/// faults and poison into its answer. The call blocks: a backend keeps its own time limit,
/// and answers a call it could not complete with an error.
pub trait ToolBackend: Send + Sync {
    /// Calls `tool` with `arguments` (a JSON object).
    fn call(&self, tool: &str, arguments: &serde_json::Value) -> BackendAnswer;
    /// What the backend is, for messages (`mcp:NAME`).
    fn label(&self) -> String;
}

/// A suite's tool backends, by tool name. Empty for a suite whose tools are all simulated.
#[derive(Clone, Default)]
pub struct ToolBackends(BTreeMap<String, Arc<dyn ToolBackend>>);

impl ToolBackends {
    /// Routes calls of `tool` to `backend`.
    pub fn insert(&mut self, tool: impl Into<String>, backend: Arc<dyn ToolBackend>) {
        self.0.insert(tool.into(), backend);
    }

    /// The backend that answers `tool`, when a real one does.
    pub fn get(&self, tool: &str) -> Option<&dyn ToolBackend> {
        self.0.get(tool).map(|b| &**b)
    }

    /// Whether every tool is simulated.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for ToolBackends {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(k, v)| (k, v.label())))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_reads_the_protocol_s_field_names() {
        let t: McpToolInfo = serde_json::from_value(serde_json::json!({
            "name": "delete_note",
            "description": "Deletes a note.",
            "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
            "annotations": {"destructiveHint": true, "readOnlyHint": false}
        }))
        .expect("tool");
        let a = t.annotations.clone().expect("annotations");
        assert_eq!(
            (a.destructive_hint, a.read_only_hint),
            (Some(true), Some(false))
        );
        let mut def = McpTool {
            name: "delete_note".into(),
            side_effect: SideEffectClass::Irreversible,
            approval: Some(ApprovalRule::Always(true)),
            claims: Vec::new(),
        }
        .to_tool_def("notes");
        t.describe(&mut def);
        assert_eq!(def.description, "Deletes a note.");
        assert_eq!(def.parameters["properties"]["id"]["type"], "string");
        assert_eq!(def.version.as_deref(), Some("mcp:notes"));
    }
}
