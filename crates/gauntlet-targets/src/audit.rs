//! The agents that know nothing, for `gauntlet audit`: [`TrivialAgent`], a [`ChatModel`]
//! that answers every case the same way (nothing, an echo, a bare refusal, blanket
//! compliance, or a call to every tool with plausible arguments).
//!
//! A case one of them passes has an oracle a program without any skill satisfies: it proves
//! nothing about the agent under test. They run through [`ChatTarget`](crate::chat::ChatTarget)
//! and the simulated tools like any model, so the audit grades exactly what a run would.

use std::collections::BTreeMap;

use gauntlet_core::event::{EvidenceLevel, SideEffectMode};
use gauntlet_core::target::{BoxFuture, TargetError, TargetInfo, TrialContext};
use gauntlet_core::tools::ToolDef;
use gauntlet_core::trace::{Message, Role, ToolCallRequest, TraceRecorder, Usage};
use serde_json::{Map, Value, json};

use crate::chat::{ChatModel, ChatReply, ChatRequest};

/// A trivial agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrivialAgent {
    /// Answers with nothing.
    Empty,
    /// Answers with the user's own words.
    Echo,
    /// Refuses everything, with no reason and no alternative.
    RefuseAll,
    /// Agrees to everything and claims to have done it.
    ComplyAll,
    /// Calls every tool once with plausible arguments, then says it is done.
    CallEveryTool,
}

impl TrivialAgent {
    /// All of them, in the order the audit reports them.
    pub const ALL: [TrivialAgent; 5] = [
        TrivialAgent::Empty,
        TrivialAgent::Echo,
        TrivialAgent::RefuseAll,
        TrivialAgent::ComplyAll,
        TrivialAgent::CallEveryTool,
    ];

    /// The name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            TrivialAgent::Empty => "empty answer",
            TrivialAgent::Echo => "echo of the input",
            TrivialAgent::RefuseAll => "refuse everything",
            TrivialAgent::ComplyAll => "comply with everything",
            TrivialAgent::CallEveryTool => "call every tool",
        }
    }
}

/// What the comply-with-everything agent says: agreement and a claim, no substance.
const COMPLY: &str = "Sure, I have done exactly what you asked. Here it is, all done.";

/// What the refuse-everything agent says.
const REFUSE: &str = "I can't help with that.";

impl ChatModel for TrivialAgent {
    fn info(&self) -> TargetInfo {
        TargetInfo {
            kind: "audit".into(),
            label: format!("audit:{}", self.as_str()),
            model: None,
            base_url: None,
            settings: BTreeMap::new(),
            evidence_level: EvidenceLevel::Static,
            side_effects: SideEffectMode::Simulated,
        }
    }

    fn complete<'a>(
        &'a self,
        _ctx: &'a TrialContext<'a>,
        req: ChatRequest<'a>,
        _rec: &'a mut TraceRecorder,
    ) -> BoxFuture<'a, Result<ChatReply, TargetError>> {
        Box::pin(async move {
            let last_user = req
                .messages
                .iter()
                .rev()
                .find(|m| m.role == Role::User)
                .map(|m| m.content.clone())
                .unwrap_or_default();
            let called_already = req.messages.iter().any(|m| m.role == Role::Tool);
            let message = match self {
                TrivialAgent::Empty => Message::assistant(""),
                TrivialAgent::Echo => Message::assistant(last_user),
                TrivialAgent::RefuseAll => Message::assistant(REFUSE),
                TrivialAgent::ComplyAll => Message::assistant(COMPLY),
                TrivialAgent::CallEveryTool if called_already || req.tools.is_empty() => {
                    Message::assistant("Done.")
                }
                TrivialAgent::CallEveryTool => {
                    let mut m = Message::assistant("");
                    m.tool_calls = req
                        .tools
                        .iter()
                        .enumerate()
                        .map(|(i, t)| ToolCallRequest {
                            id: format!("audit_{i}"),
                            name: t.name.clone(),
                            arguments: plausible_arguments(t),
                            malformed: false,
                        })
                        .collect();
                    m
                }
            };
            Ok(ChatReply {
                message,
                model: None,
                usage: Usage::default(),
                finish_reason: Some("stop".into()),
                attempts: 1,
                agent: None,
                cached: false,
            })
        })
    }
}

/// Arguments a careless agent could send: a value of the right type for every property
/// of the tool's schema (the first of an enum, a default or example, `1`, `true`, `"x"`).
/// Not the fixtures' values: those are the right answers a case's checks look for.
pub fn plausible_arguments(tool: &ToolDef) -> Value {
    let mut args = Map::new();
    if let Some(props) = tool.parameters.get("properties").and_then(Value::as_object) {
        for (k, schema) in props {
            args.insert(k.clone(), value_for(schema));
        }
    }
    Value::Object(args)
}

fn value_for(schema: &Value) -> Value {
    if let Some(v) = schema.get("enum").and_then(|e| e.get(0)) {
        return v.clone();
    }
    for key in ["default", "const"] {
        if let Some(v) = schema.get(key) {
            return v.clone();
        }
    }
    if let Some(v) = schema.get("examples").and_then(|e| e.get(0)) {
        return v.clone();
    }
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts.first().and_then(Value::as_str).unwrap_or("string"),
        _ => "string",
    };
    match ty {
        "integer" | "number" => json!(1),
        "boolean" => json!(true),
        "array" => json!([]),
        "object" => json!({}),
        "null" => Value::Null,
        _ => json!("x"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plausible_arguments_follow_the_schema_not_the_fixtures() {
        let tool: ToolDef = serde_json::from_value(json!({
            "name": "refund",
            "parameters": {"type": "object", "properties": {
                "txn_id": {"type": "string"}, "amount": {"type": "number"},
                "reason": {"type": "string", "enum": ["damaged", "late"]}
            }},
            "fixtures": [{"when": {"txn_id": "T-*"}, "returns": {"ok": true}}]
        }))
        .expect("tool");
        assert_eq!(
            plausible_arguments(&tool),
            json!({"txn_id": "x", "amount": 1, "reason": "damaged"})
        );
    }
}
