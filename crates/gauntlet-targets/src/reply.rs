//! The next assistant message of a built-in fake model: [`PersonaReply`], what the
//! personas (`crate::persona`) and the scripted attacker and rewriter (`crate::helpers`)
//! answer. It lives below both, so that neither imports the other for it.

use gauntlet_core::trace::{Message, ToolCallRequest};
use serde_json::Value;

/// The next assistant message: text, or tool calls.
#[derive(Debug, Clone, PartialEq)]
pub struct PersonaReply {
    /// Reply text (empty when the reply is only tool calls).
    pub content: String,
    /// Tool calls: name and arguments.
    pub tool_calls: Vec<(String, Value)>,
}

impl PersonaReply {
    /// A reply of text only.
    pub(crate) fn text(s: impl Into<String>) -> Self {
        PersonaReply {
            content: s.into(),
            tool_calls: Vec::new(),
        }
    }

    /// The reply as an assistant [`Message`], with call ids derived from `id_seed`.
    pub fn into_message(self, id_seed: usize) -> Message {
        let mut m = Message::assistant(self.content);
        m.tool_calls = self
            .tool_calls
            .into_iter()
            .enumerate()
            .map(|(i, (name, arguments))| ToolCallRequest {
                id: format!("call_{id_seed}_{i}"),
                name,
                arguments,
                malformed: false,
            })
            .collect();
        m
    }
}
