//! What a case injects into the team's messages: [`CoordinationFault`] (a dropped,
//! duplicated, delayed or impersonated message, picked by number or by a [`MessageMatch`]),
//! and the [`MARK_PREFIX`] a faulted send span carries. Suite model only: the suite holds it,
//! the bus above the trace plays it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the `injected` field of a faulted `send_message` span starts with.
pub const MARK_PREFIX: &str = "coordination:";

/// Kinds of injected coordination fault.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CoordinationFaultKind {
    /// `send_message` answers as usual, but the message is never delivered.
    Drop,
    /// The message is delivered twice, with the same number (an at-least-once bus).
    Duplicate,
    /// The message is held back from the recipient's next `delay_reads` reads.
    Delay,
    /// The message is delivered with its sender rewritten to `as`.
    Impersonate,
}

impl CoordinationFaultKind {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            CoordinationFaultKind::Drop => "drop",
            CoordinationFaultKind::Duplicate => "duplicate",
            CoordinationFaultKind::Delay => "delay",
            CoordinationFaultKind::Impersonate => "impersonate",
        }
    }

    /// The `injected` mark of a send span: `coordination:drop`, ...
    pub fn mark(self) -> String {
        format!("{MARK_PREFIX}{}", self.as_str())
    }

    pub(super) fn from_mark(mark: &str) -> Option<Self> {
        let kind = mark.split(',').find_map(|m| m.strip_prefix(MARK_PREFIX))?;
        [
            CoordinationFaultKind::Drop,
            CoordinationFaultKind::Duplicate,
            CoordinationFaultKind::Delay,
            CoordinationFaultKind::Impersonate,
        ]
        .into_iter()
        .find(|k| k.as_str() == kind)
    }
}

/// Which messages a fault picks, by what they say about themselves. Every field given must
/// hold.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MessageMatch {
    /// The recipient.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The (true) sender.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Text the content holds (case-insensitive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<String>,
}

/// A fault injected into the team's messages for one case.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CoordinationFault {
    /// What goes wrong.
    pub fault: CoordinationFaultKind,
    /// The message it hits, by number: the Nth `send_message` of the trial (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<u32>,
    /// The messages it hits, by recipient, sender or content.
    #[serde(default, rename = "match", skip_serializing_if = "Option::is_none")]
    pub matches: Option<MessageMatch>,
    /// Only the first N messages it picks (default: all of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
    /// For `delay`: how many of the recipient's reads come back without the message.
    /// Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_reads: Option<u32>,
    /// For `impersonate`: the sender the recipient is shown.
    #[serde(default, rename = "as", skip_serializing_if = "Option::is_none")]
    pub as_agent: Option<String>,
}

impl CoordinationFault {
    pub(super) fn picks(&self, number: u32, from: &str, to: &str, content: &str) -> bool {
        if self.message.is_some_and(|n| n != number) {
            return false;
        }
        let Some(m) = &self.matches else { return true };
        m.to.as_deref().is_none_or(|t| t == to)
            && m.from.as_deref().is_none_or(|f| f == from)
            && m.contains
                .as_deref()
                .is_none_or(|c| content.to_lowercase().contains(&c.to_lowercase()))
    }
}
