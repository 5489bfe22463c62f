//! Traces captured elsewhere, to grade without calling a target: the documented JSON-lines
//! trace format ([`CapturedTrace`], published by `gauntlet schema --trace`), the trial a
//! reader makes of any captured trace ([`CapturedTrial`]), and the pure helpers that turn a
//! conversation into the turns and tool spans graders read ([`turns_from_conversation`],
//! [`tool_spans_from_conversation`]).
//!
//! Reading files (this format, OTLP JSON, the proxy's recordings) and matching traces to
//! cases is `gauntlet-suite`'s `capture` module; this one holds only data and pure functions.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::result::Outcome;
use crate::trace::{Message, Role, ToolSpan, Trace, TurnRecord};

/// One captured exchange in gauntlet's JSON-lines trace format: one object per line.
///
/// A trace is matched to a suite case by `case_id`, by an attribute, or by its first user
/// message (`gauntlet grade --match`), then graded as one trial of that case.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
#[schemars(title = "gauntlet captured trace (one line of a JSON-lines file)")]
pub struct CapturedTrace {
    /// The id of the suite case this exchange is of (`--match id`, the default rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_id: Option<String>,
    /// The trace's own id (a request id, a trace id): shown when it matches no case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// Free-form facts about the exchange; `--match case_id=attr:NAME` reads `NAME` here.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, serde_json::Value>,
    /// The conversation, in order: `system`, `user`, `assistant` (with `tool_calls`) and
    /// `tool` messages, in the shape of report.json's messages. At least one `user` message.
    pub messages: Vec<Message>,
    /// The tool calls the agent ran, with what they returned. When empty, they are read from
    /// the assistant messages' `tool_calls` and the `tool` messages that answer them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<CapturedToolCall>,
    /// The final answer shown to the user, when the messages do not end with it (it replaces
    /// the answer of the last turn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// The model that answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// When the exchange started (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// When it ended (RFC 3339); with `started_at`, the trial's duration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// How it ended: `completed` (the default), `blocked` (a content filter), `error`,
    /// `timeout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// For an outcome other than `completed`: what happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A tool call the agent ran, in a captured trace.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CapturedToolCall {
    /// The call id (the model's `tool_call_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The arguments, as a JSON value.
    #[serde(default)]
    pub arguments: serde_json::Value,
    /// What the tool returned: text, or any JSON value (kept as its JSON text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
    /// The error the tool returned, if it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How long it ran, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// A captured trace made ready to grade: the trial it was, and what matching reads.
#[derive(Debug, Clone, PartialEq)]
pub struct CapturedTrial {
    /// Everything the exchange did, in gauntlet's trace shape (turns derived when the source
    /// has none).
    pub trace: Trace,
    /// How it ended.
    pub outcome: Outcome,
    /// For outcomes other than completed: what happened.
    pub error: Option<String>,
    /// Wall time in milliseconds (0 when the source has no times).
    pub duration_ms: u64,
    /// The case id the source names, if any (`case_id`, an attribute, the proxy session).
    pub case_id: Option<String>,
    /// Attributes the source carries, as text (`--match case_id=attr:NAME` reads them).
    pub attributes: BTreeMap<String, String>,
    /// A short name for reports: the trace id, the session, or the line.
    pub label: String,
}

impl CapturedTrial {
    /// The first user message of the exchange (what `--match input` compares).
    pub fn first_user(&self) -> Option<&str> {
        if let Some(t) = self.trace.turns.first() {
            return Some(t.user.as_str());
        }
        self.trace
            .llm_calls()
            .flat_map(|l| l.messages_in.iter())
            .find(|m| m.role == Role::User)
            .map(|m| m.content.as_str())
    }
}

/// The turns of a conversation: each user message opens a turn, answered by the last
/// assistant text before the next user message (tool-call steps in between are not the
/// answer). A turn with no assistant text has an empty answer.
pub fn turns_from_conversation(messages: &[Message]) -> Vec<TurnRecord> {
    let mut turns: Vec<TurnRecord> = Vec::new();
    for m in messages {
        match m.role {
            Role::User => turns.push(TurnRecord {
                user: m.content.clone(),
                answer: String::new(),
                truncated: false,
            }),
            Role::Assistant if !m.content.trim().is_empty() => {
                if let Some(t) = turns.last_mut() {
                    t.answer = m.content.clone();
                }
            }
            _ => {}
        }
    }
    turns
}

/// Tool spans read from a conversation: every tool call an assistant message asked for, with
/// the `tool` message that answers it (by call id) as its output. A call nobody answered has
/// no output. Span ids and parents are left at 0 / none for the caller to assign.
pub fn tool_spans_from_conversation(messages: &[Message]) -> Vec<ToolSpan> {
    let mut results: BTreeMap<&str, &Message> = BTreeMap::new();
    for m in messages {
        if m.role == Role::Tool
            && let Some(id) = m.tool_call_id.as_deref()
        {
            results.entry(id).or_insert(m);
        }
    }
    let mut out = Vec::new();
    for m in messages.iter().filter(|m| m.role == Role::Assistant) {
        for c in &m.tool_calls {
            let answer = results.get(c.id.as_str());
            out.push(ToolSpan {
                id: 0,
                parent: None,
                agent: None,
                call_id: c.id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
                output: answer.map(|a| a.content.clone()),
                error: None,
                duration_ms: 0,
                approval: Default::default(),
                side_effect: None,
                injected: None,
            });
        }
    }
    out
}

/// Text of a JSON value as a tool result: a string as it is, anything else as its JSON.
pub fn value_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::ToolCallRequest;

    fn call(id: &str, name: &str) -> Message {
        Message {
            tool_calls: vec![ToolCallRequest {
                id: id.into(),
                name: name.into(),
                arguments: serde_json::json!({"order_id": "A-1"}),
                malformed: false,
            }],
            ..Message::assistant("")
        }
    }

    #[test]
    fn turns_take_the_last_assistant_text_before_the_next_user_message() {
        let conv = vec![
            Message::system("be nice"),
            Message::user("status of A-1?"),
            call("c1", "get_order"),
            Message::tool_result("c1", "get_order", "{\"status\":\"shipped\"}"),
            Message::assistant("It shipped."),
            Message::user("thanks"),
        ];
        let turns = turns_from_conversation(&conv);
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[0].user, "status of A-1?");
        assert_eq!(turns[0].answer, "It shipped.");
        assert_eq!(turns[1].answer, "", "an unanswered turn has no answer");
    }

    #[test]
    fn tool_spans_pair_calls_with_their_results_by_id() {
        let conv = vec![
            Message::user("x"),
            call("c1", "get_order"),
            call("c2", "refund_order"),
            Message::tool_result("c1", "get_order", "ok"),
        ];
        let spans = tool_spans_from_conversation(&conv);
        assert_eq!(spans.len(), 2);
        assert_eq!(spans[0].output.as_deref(), Some("ok"));
        assert_eq!(spans[1].name, "refund_order");
        assert_eq!(spans[1].output, None, "an unanswered call has no output");
    }

    #[test]
    fn the_format_refuses_unknown_keys() {
        let bad = serde_json::from_str::<CapturedTrace>(
            r#"{"case_id": "a", "messages": [], "answr": "x"}"#,
        );
        assert!(bad.is_err());
        let ok: CapturedTrace = serde_json::from_str(
            r#"{"case_id": "a", "messages": [{"role": "user", "content": "hi"}], "answer": "hello"}"#,
        )
        .expect("reads");
        assert_eq!(ok.answer.as_deref(), Some("hello"));
    }
}
