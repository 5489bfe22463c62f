//! The simulated message bus between the agents of a team: [`Bus`] carries the messages of
//! one trial, [`CoordinationFault`] is what a case injects into them (a dropped, duplicated,
//! delayed or impersonated message; declared in [`fault`], below the suite model), and
//! [`bus_messages`] reads the messages back out of a recorded [`Trace`] for the graders.
//!
//! A suite turns the bus on with `agent: {message_bus: true}`. The team's agents then have
//! two more tools, [`SEND_MESSAGE`] (`{to, content}`) and [`READ_MESSAGES`] (`{}`), answered
//! by the simulated tools like any other; the sender and the reader are the agent names
//! stamped on the calling span. Nothing new goes into the trace: every message is the tool
//! span of its `send_message` (true sender, recipient, content, the message number in its
//! output, the injected fault in `injected`), and every delivery is an entry in the output
//! of a `read_messages` span (the number, the sender as the recipient saw it, the content).
//! That is why `regrade` reproduces the bus exactly: there is no randomness to seed, the
//! faults pick messages by number or by a match, and what happened is all in the spans.

use serde::{Deserialize, Serialize};

pub mod fault;

pub use fault::*;

use crate::tools::{SideEffectClass, ToolDef};
use crate::trace::{Span, Trace};

/// The bus tool that sends a message: `{to, content}`.
pub const SEND_MESSAGE: &str = "send_message";
/// The bus tool that hands the calling agent the messages waiting for it: `{}`.
pub const READ_MESSAGES: &str = "read_messages";
/// Whether a tool name is one of the bus's.
pub fn is_bus_tool(name: &str) -> bool {
    name == SEND_MESSAGE || name == READ_MESSAGES
}

/// The two tools the bus adds to a team's tools. Both are `read_only`: a message between
/// the team's own agents changes nothing outside the team, and classing it as a write would
/// make every handoff an uncontrolled side effect for `recovery` and `no_side_effect`.
pub fn bus_tools() -> Vec<ToolDef> {
    let def = |name: &str, description: &str, parameters: serde_json::Value| ToolDef {
        side_effect: SideEffectClass::ReadOnly,
        version: Some("gauntlet-bus-1".into()),
        ..ToolDef::declared(name, description, parameters)
    };
    vec![
        def(
            SEND_MESSAGE,
            "Send a message to another agent of the team. Answers with the message's number.",
            serde_json::json!({
                "type": "object",
                "required": ["to", "content"],
                "properties": {
                    "to": {"type": "string", "description": "the receiving agent's name"},
                    "content": {"type": "string", "description": "the message"}
                }
            }),
        ),
        def(
            READ_MESSAGES,
            "Read the messages other agents sent you since your last read.",
            serde_json::json!({"type": "object", "properties": {}}),
        ),
    ]
}

/// One message as a recipient reads it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Delivered {
    /// The message's number (the same for both copies of a duplicate).
    pub message: u32,
    /// The sender, as the recipient is shown it (rewritten by `impersonate`).
    pub from: String,
    /// The text.
    pub content: String,
}

/// A message on its way: the recipient has not read it yet.
#[derive(Debug, Clone)]
struct Pending {
    to: String,
    delivered: Delivered,
    /// Reads of the recipient that still come back without it.
    hold: u32,
}

/// What became of one `send_message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    /// The message's number.
    pub message: u32,
    /// The fault that hit it.
    pub fault: Option<CoordinationFaultKind>,
}

/// The messages of one trial, with the case's faults. The first fault that picks a message
/// (and has `times` left) is the one applied to it.
#[derive(Debug, Clone, Default)]
pub struct Bus<'a> {
    faults: &'a [CoordinationFault],
    used: Vec<u32>,
    sent: u32,
    pending: Vec<Pending>,
}

impl<'a> Bus<'a> {
    /// An empty bus with the faults of one case.
    pub fn new(faults: &'a [CoordinationFault]) -> Self {
        Bus {
            faults,
            used: vec![0; faults.len()],
            sent: 0,
            pending: Vec::new(),
        }
    }

    /// Sends a message from `from` to `to`. The sender is told the same whatever the fault:
    /// a dropped message looks sent.
    pub fn send(&mut self, from: &str, to: &str, content: &str) -> Sent {
        self.sent += 1;
        let number = self.sent;
        let mut fault = None;
        for (f, used) in self.faults.iter().zip(&mut self.used) {
            if f.times.is_some_and(|t| *used >= t) || !f.picks(number, from, to, content) {
                continue;
            }
            *used += 1;
            fault = Some(f);
            break;
        }
        let delivered = Delivered {
            message: number,
            from: match fault {
                Some(f) if f.fault == CoordinationFaultKind::Impersonate => {
                    f.as_agent.clone().unwrap_or_else(|| from.to_owned())
                }
                _ => from.to_owned(),
            },
            content: content.to_owned(),
        };
        let pending = |hold| Pending {
            to: to.to_owned(),
            delivered: delivered.clone(),
            hold,
        };
        match fault.map(|f| f.fault) {
            Some(CoordinationFaultKind::Drop) => {}
            Some(CoordinationFaultKind::Duplicate) => {
                self.pending.push(pending(0));
                self.pending.push(pending(0));
            }
            Some(CoordinationFaultKind::Delay) => {
                let reads = fault.and_then(|f| f.delay_reads).unwrap_or(1);
                self.pending.push(pending(reads));
            }
            Some(CoordinationFaultKind::Impersonate) | None => self.pending.push(pending(0)),
        }
        Sent {
            message: number,
            fault: fault.map(|f| f.fault),
        }
    }

    /// The messages waiting for `reader`, in the order they were sent; a delayed message
    /// stays back until its reads are used up.
    pub fn read(&mut self, reader: &str) -> Vec<Delivered> {
        let mut out = Vec::new();
        self.pending.retain_mut(|p| {
            if p.to != reader {
                return true;
            }
            if p.hold > 0 {
                p.hold -= 1;
                return true;
            }
            out.push(p.delivered.clone());
            false
        });
        out
    }
}

/// One delivery of a message, read back from a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The index in `trace.spans` of the `read_messages` span that delivered it.
    pub at: usize,
    /// The sender the recipient was shown.
    pub shown_from: String,
}

/// One message, read back from a trace: its `send_message` span and its deliveries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BusMessage<'t> {
    /// The message's number.
    pub number: u32,
    /// The index in `trace.spans` of its `send_message` span.
    pub sent_at: usize,
    /// The agent that truly sent it (the name on the span).
    pub from: Option<&'t str>,
    /// The recipient.
    pub to: &'t str,
    /// The text.
    pub content: &'t str,
    /// The fault injected into it.
    pub fault: Option<CoordinationFaultKind>,
    /// Every time the recipient read it, in order (two for a delivered duplicate, none for
    /// a dropped message or one never read).
    pub deliveries: Vec<Delivery>,
}

impl BusMessage<'_> {
    /// Whether its recipient read it.
    pub fn delivered(&self) -> bool {
        !self.deliveries.is_empty()
    }
}

/// The messages of a trace, in the order they were sent. A `send_message` that failed (no
/// number in its output) carried nothing and is left out.
pub fn bus_messages(trace: &Trace) -> Vec<BusMessage<'_>> {
    let mut out: Vec<BusMessage<'_>> = Vec::new();
    for (at, s) in trace.spans.iter().enumerate() {
        let Span::ToolCall(t) = s else { continue };
        if t.error.is_some() {
            continue;
        }
        let output = t
            .output
            .as_deref()
            .and_then(|o| serde_json::from_str::<serde_json::Value>(o).ok());
        match t.name.as_str() {
            SEND_MESSAGE => {
                let Some(number) = output
                    .as_ref()
                    .and_then(|o| o.get("message"))
                    .and_then(serde_json::Value::as_u64)
                else {
                    continue;
                };
                out.push(BusMessage {
                    number: number as u32,
                    sent_at: at,
                    from: t.agent.as_deref(),
                    to: t.arguments.get("to").and_then(|v| v.as_str()).unwrap_or(""),
                    content: t
                        .arguments
                        .get("content")
                        .and_then(|v| v.as_str())
                        .unwrap_or(""),
                    fault: t
                        .injected
                        .as_deref()
                        .and_then(CoordinationFaultKind::from_mark),
                    deliveries: Vec::new(),
                });
            }
            READ_MESSAGES => {
                let Some(list) = output
                    .as_ref()
                    .and_then(|o| o.get("messages"))
                    .and_then(|m| m.as_array())
                else {
                    continue;
                };
                for d in list {
                    let Ok(d) = serde_json::from_value::<Delivered>(d.clone()) else {
                        continue;
                    };
                    if let Some(m) = out.iter_mut().find(|m| m.number == d.message) {
                        m.deliveries.push(Delivery {
                            at,
                            shown_from: d.from,
                        });
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fault(kind: CoordinationFaultKind) -> CoordinationFault {
        CoordinationFault {
            fault: kind,
            message: None,
            matches: None,
            times: None,
            delay_reads: None,
            as_agent: None,
        }
    }

    #[test]
    fn a_clean_bus_delivers_each_message_once_to_its_recipient_in_order() {
        let mut bus = Bus::new(&[]);
        assert_eq!(bus.send("triage", "billing", "refund A-1").message, 1);
        assert_eq!(bus.send("triage", "billing", "and A-2").message, 2);
        assert_eq!(bus.send("triage", "notifier", "email").message, 3);
        assert!(bus.read("triage").is_empty());
        let got = bus.read("billing");
        assert_eq!(
            got.iter().map(|d| d.message).collect::<Vec<_>>(),
            vec![1, 2]
        );
        assert_eq!(got[0].from, "triage");
        assert!(bus.read("billing").is_empty());
        assert_eq!(bus.read("notifier").len(), 1);
    }

    #[test]
    fn faults_pick_messages_by_number_or_match_and_count_times() {
        let faults = [
            CoordinationFault {
                message: Some(2),
                ..fault(CoordinationFaultKind::Drop)
            },
            CoordinationFault {
                matches: Some(MessageMatch {
                    to: Some("billing".into()),
                    contains: Some("REFUND".into()),
                    ..MessageMatch::default()
                }),
                times: Some(1),
                ..fault(CoordinationFaultKind::Duplicate)
            },
        ];
        let mut bus = Bus::new(&faults);
        // Message 1 matches the duplicate; message 2 is dropped by number; message 3 would
        // match the duplicate again, but its one time is used up.
        assert_eq!(
            bus.send("triage", "billing", "refund A-1").fault,
            Some(CoordinationFaultKind::Duplicate)
        );
        assert_eq!(
            bus.send("triage", "billing", "hello").fault,
            Some(CoordinationFaultKind::Drop)
        );
        assert_eq!(bus.send("triage", "billing", "refund A-2").fault, None);
        let got: Vec<u32> = bus.read("billing").iter().map(|d| d.message).collect();
        assert_eq!(got, vec![1, 1, 3]);
    }

    #[test]
    fn a_delayed_message_misses_the_recipient_s_next_reads_and_an_impersonated_one_changes_sender()
    {
        let faults = [
            CoordinationFault {
                message: Some(1),
                delay_reads: Some(2),
                ..fault(CoordinationFaultKind::Delay)
            },
            CoordinationFault {
                message: Some(2),
                as_agent: Some("billing".into()),
                ..fault(CoordinationFaultKind::Impersonate)
            },
        ];
        let mut bus = Bus::new(&faults);
        bus.send("billing", "triage", "refunded RF-1");
        bus.send("triage", "payments", "pay out A-1");
        // Another agent's reads do not count against the delay.
        assert!(bus.read("billing").is_empty());
        assert!(bus.read("triage").is_empty());
        assert!(bus.read("triage").is_empty());
        assert_eq!(bus.read("triage")[0].content, "refunded RF-1");
        let p = bus.read("payments");
        assert_eq!((p[0].message, p[0].from.as_str()), (2, "billing"));
    }

    #[test]
    fn the_messages_read_back_from_a_trace_join_sends_to_deliveries() {
        use crate::trace::{ToolSpanInput, TraceRecorder};
        let mut rec = TraceRecorder::new();
        let span = |rec: &mut TraceRecorder,
                    agent: &str,
                    name: &str,
                    args: serde_json::Value,
                    out: String,
                    mark: Option<String>| {
            rec.set_agent(Some(agent.into()));
            rec.tool_call_injected(
                ToolSpanInput {
                    call_id: "c".into(),
                    name: name.into(),
                    arguments: args,
                    output: Some(out),
                    error: None,
                    duration_ms: 0,
                    approval: Default::default(),
                    side_effect: None,
                },
                mark,
            );
        };
        span(
            &mut rec,
            "triage",
            SEND_MESSAGE,
            serde_json::json!({"to": "payments", "content": "pay A-1"}),
            r#"{"status":"sent","message":1}"#.into(),
            Some(CoordinationFaultKind::Impersonate.mark()),
        );
        span(
            &mut rec,
            "payments",
            READ_MESSAGES,
            serde_json::json!({}),
            r#"{"messages":[{"message":1,"from":"billing","content":"pay A-1"}]}"#.into(),
            None,
        );
        let trace = rec.finish();
        let msgs = bus_messages(&trace);
        assert_eq!(msgs.len(), 1);
        let m = &msgs[0];
        assert_eq!(
            (m.from, m.to, m.content),
            (Some("triage"), "payments", "pay A-1")
        );
        assert_eq!(m.fault, Some(CoordinationFaultKind::Impersonate));
        assert_eq!(
            m.deliveries,
            vec![Delivery {
                at: 1,
                shown_from: "billing".into()
            }]
        );
    }
}
