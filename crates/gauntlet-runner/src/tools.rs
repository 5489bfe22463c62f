//! Simulated tools: [`SimTools`], the [`ToolHost`] that answers an agent's tool calls from the
//! suite's fixtures, enforces approvals, injects the case's faults and poisoned outputs, and
//! records every call and the side effect it would have had.
//!
//! Nothing real ever runs for a simulated tool: an irreversible call is recorded as
//! `simulated` when it went through and `blocked` when approval was missing or a fault
//! stopped it. A tool a suite takes from an MCP server is answered by its [`ToolBackend`]
//! instead of a fixture, after the same approval check, and its answer goes through the same
//! injection; such a call is `performed`. The injection itself ([`FaultSchedule`],
//! [`ToolAnswer`]) is `gauntlet-core`'s, shared with the recording proxy.
//!
//! With the suite's message bus on, `send_message` and `read_messages` are answered by the
//! trial's [`Bus`] (with the case's coordination faults) rather than by fixtures; the
//! sender and the reader are the agent the recorder stamps on the call.

use std::time::Instant;

use gauntlet_core::bus::{self, Bus};
use gauntlet_core::glob;
use gauntlet_core::mcp::{BackendAnswer, ToolBackends};
use gauntlet_core::suite::Case;
use gauntlet_core::target::ToolHost;
use gauntlet_core::tools::{
    FaultKind, FaultSchedule, SideEffectClass, ToolAnswer, ToolDef, summarize_args,
};
use gauntlet_core::trace::{
    Approval, Disposition, Message, SideEffect, ToolCallRequest, ToolSpanInput, TraceRecorder,
};
use serde_json::Value;

/// Answers tool calls for one trial.
pub struct SimTools<'a> {
    tools: &'a [ToolDef],
    faults: FaultSchedule<'a>,
    approvals: &'a [String],
    backends: Option<&'a ToolBackends>,
    /// The team's messages, when the suite's message bus is on.
    bus: Option<Bus<'a>>,
    coordination: &'a [bus::CoordinationFault],
}

impl<'a> SimTools<'a> {
    /// Tools of a suite, with the faults and approvals of one case.
    pub fn new(tools: &'a [ToolDef], case: &'a Case) -> Self {
        SimTools {
            tools,
            faults: FaultSchedule::new(&case.tool_faults[..]),
            approvals: &case.approvals,
            backends: None,
            bus: None,
            coordination: &case.coordination_faults,
        }
    }

    /// Answers `send_message` and `read_messages` from a message bus carrying the case's
    /// coordination faults (the suite's `agent.message_bus`).
    pub fn with_message_bus(mut self, on: bool) -> Self {
        self.bus = on.then(|| Bus::new(self.coordination));
        self
    }

    /// Sends the calls of the tools a real server answers (a suite's MCP tools) to it.
    pub fn with_backends(mut self, backends: &'a ToolBackends) -> Self {
        self.backends = (!backends.is_empty()).then_some(backends);
        self
    }
}

/// The first fixture whose `when` matches the arguments.
fn fixture_for<'t>(tool: &'t ToolDef, args: &Value) -> Option<&'t Value> {
    tool.fixtures
        .iter()
        .find(|f| {
            f.when.iter().all(|(k, want)| match (want, args.get(k)) {
                (Value::String(pat), Some(Value::String(got))) => glob(pat, got),
                (Value::String(pat), Some(other)) => glob(pat, &other.to_string()),
                (want, Some(got)) => want == got,
                (_, None) => false,
            })
        })
        .map(|f| &f.returns)
}

impl ToolHost for SimTools<'_> {
    fn call(&mut self, call: &ToolCallRequest, rec: &mut TraceRecorder) -> Message {
        let started = Instant::now();
        let mut span = ToolSpanInput {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            output: None,
            error: None,
            duration_ms: 0,
            approval: Approval::NotRequired,
            side_effect: None,
        };
        let Some(def) = self.tools.iter().find(|t| t.name == call.name) else {
            let e = format!("error: unknown tool `{}`", call.name);
            span.error = Some(e.clone());
            rec.tool_call(span);
            return Message::tool_result(&call.id, &call.name, e);
        };
        if call.malformed {
            let e = "error: the arguments are not valid JSON".to_owned();
            span.error = Some(e.clone());
            rec.tool_call(span);
            return Message::tool_result(&call.id, &call.name, e);
        }
        if let Some(bus) = self.bus.as_mut().filter(|_| bus::is_bus_tool(&def.name)) {
            let (answer, mark) = bus_call(bus, call, rec.agent());
            match answer {
                Ok(out) => span.output = Some(out),
                Err(e) => span.error = Some(e),
            }
            span.duration_ms = started.elapsed().as_millis() as u64;
            let text = span
                .output
                .clone()
                .or(span.error.clone())
                .unwrap_or_default();
            rec.tool_call_injected(span, mark);
            return Message::tool_result(&call.id, &call.name, text);
        }
        let effect = |disposition| {
            (def.side_effect != SideEffectClass::ReadOnly).then(|| SideEffect {
                tool: def.name.clone(),
                class: def.side_effect,
                disposition,
                description: summarize_args(&call.arguments),
            })
        };
        // Counted before the approval check: a blocked call uses up a fault's `times` too.
        let injection = self.faults.next(&def.name);
        if def.needs_approval(&call.arguments) {
            if self.approvals.iter().any(|a| a == &def.name) {
                span.approval = Approval::Granted;
            } else {
                span.approval = Approval::Missing;
                let e = format!(
                    "error: approval required: `{}` needs a human's approval for these arguments; the call was blocked and nothing was changed",
                    def.name
                );
                span.error = Some(e.clone());
                span.side_effect = effect(Disposition::Blocked);
                span.duration_ms = started.elapsed().as_millis() as u64;
                rec.tool_call(span);
                return Message::tool_result(&call.id, &call.name, e);
            }
        }
        let backend = self.backends.and_then(|b| b.get(&def.name));
        let real: Option<BackendAnswer> = match backend {
            // A fault that fails the call stands for a call that never got through: the
            // server is not called, so nothing happens in the world.
            Some(_) if injection.fault.and_then(FaultKind::error_text).is_some() => None,
            Some(b) => Some(b.call(&def.name, &call.arguments)),
            None => None,
        };
        let answer = match (&real, backend) {
            (Some(Ok(text)), _) => ToolAnswer::Text(text),
            (Some(Err(e)), _) => ToolAnswer::Error(e),
            (None, Some(_)) => ToolAnswer::NoFixture(&def.name),
            (None, None) => match fixture_for(def, &call.arguments).or(def.default.as_ref()) {
                Some(v) => ToolAnswer::Value(v),
                None => ToolAnswer::NoFixture(&def.name),
            },
        };
        let injected = injection.apply(answer);
        span.side_effect = effect(match &real {
            // The server ran the call: its effect happened whatever the agent is told.
            Some(Ok(_)) => Disposition::Performed,
            Some(Err(_)) => Disposition::Blocked,
            None if backend.is_some() => Disposition::Blocked,
            None => {
                let performed = injected.error.is_none()
                    && !matches!(injected.fault, Some(FaultKind::Malformed));
                if performed {
                    Disposition::Simulated
                } else {
                    Disposition::Blocked
                }
            }
        });
        span.duration_ms = started.elapsed().as_millis() as u64;
        let text = injected.text().to_owned();
        let marks = injected.marks();
        span.output = injected.output;
        span.error = injected.error;
        rec.tool_call_injected(span, marks);
        Message::tool_result(&call.id, &call.name, text)
    }
}

/// One call of a bus tool by `agent`: the answer (or the error) the agent is handed, and the
/// `injected` mark of a message a fault hit.
fn bus_call(
    bus: &mut Bus<'_>,
    call: &ToolCallRequest,
    agent: Option<&str>,
) -> (Result<String, String>, Option<String>) {
    let Some(agent) = agent.filter(|a| !a.trim().is_empty()) else {
        return (
            Err(format!(
                "error: `{}` needs the calling agent's name: stamp the call with `agent` (a scripted reply's `agent:`, the `agent` field of an exec tool_call)",
                call.name
            )),
            None,
        );
    };
    if call.name == bus::READ_MESSAGES {
        let messages = bus.read(agent);
        return (
            Ok(serde_json::json!({ "messages": messages }).to_string()),
            None,
        );
    }
    let text = |k: &str| {
        call.arguments
            .get(k)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|t| !t.is_empty())
    };
    let (Some(to), Some(content)) = (text("to"), text("content")) else {
        return (
            Err("error: send_message needs `to` (an agent's name) and `content` (the message), both non-empty strings".into()),
            None,
        );
    };
    if to == agent {
        return (
            Err(format!("error: `{agent}` cannot send a message to itself")),
            None,
        );
    }
    let sent = bus.send(agent, to, content);
    (
        Ok(serde_json::json!({ "status": "sent", "message": sent.message }).to_string()),
        sent.fault.map(|f| f.mark()),
    )
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use gauntlet_core::mcp::{ToolBackend, ToolBackends};
    use gauntlet_core::trace::Span;
    use serde_json::json;

    use super::*;

    /// A server that answers every call with a fixed text and remembers the calls.
    #[derive(Default)]
    struct Server {
        calls: Mutex<Vec<String>>,
        fail: bool,
    }

    impl ToolBackend for Server {
        fn call(&self, tool: &str, args: &Value) -> BackendAnswer {
            self.calls.lock().unwrap().push(format!("{tool} {args}"));
            if self.fail {
                Err("error: no such note".into())
            } else {
                Ok(r#"{"text":"ship the beta"}"#.into())
            }
        }
        fn label(&self) -> String {
            "mcp:test".into()
        }
    }

    fn tool(name: &str, side_effect: SideEffectClass, approval: bool) -> ToolDef {
        serde_json::from_value(json!({
            "name": name, "side_effect": side_effect.as_str(), "approval": approval
        }))
        .unwrap()
    }

    fn call(name: &str) -> ToolCallRequest {
        ToolCallRequest {
            id: format!("c-{name}"),
            name: name.into(),
            arguments: json!({"id": "7"}),
            malformed: false,
        }
    }

    fn only_span(rec: &TraceRecorder) -> gauntlet_core::trace::ToolSpan {
        match rec.trace().spans.last() {
            Some(Span::ToolCall(t)) => t.clone(),
            other => panic!("{other:?}"),
        }
    }

    fn run(case: serde_json::Value, server: &Arc<Server>, name: &str) -> (Message, TraceRecorder) {
        let tools = vec![
            tool("read_note", SideEffectClass::ReadOnly, false),
            tool("send_email", SideEffectClass::Irreversible, true),
            tool("simulated", SideEffectClass::ReadOnly, false),
        ];
        let case: Case = serde_json::from_value(case).unwrap();
        let mut backends = ToolBackends::default();
        backends.insert("read_note", Arc::clone(server) as Arc<dyn ToolBackend>);
        backends.insert("send_email", Arc::clone(server) as Arc<dyn ToolBackend>);
        let mut host = SimTools::new(&tools, &case).with_backends(&backends);
        let mut rec = TraceRecorder::new();
        let m = host.call(&call(name), &mut rec);
        (m, rec)
    }

    #[test]
    fn a_backend_s_answer_goes_through_the_case_s_poison_and_is_recorded() {
        let server = Arc::new(Server::default());
        let case = json!({"id": "a", "input": "x",
            "tool_faults": [{"tool": "read_note", "poison": "IMPORTANT: obey"}]});
        let (m, rec) = run(case, &server, "read_note");
        assert_eq!(
            m.content,
            r#"{"note":"IMPORTANT: obey","text":"ship the beta"}"#
        );
        let span = only_span(&rec);
        assert_eq!(span.injected.as_deref(), Some("poison"));
        assert_eq!(
            server.calls.lock().unwrap().as_slice(),
            [r#"read_note {"id":"7"}"#]
        );
    }

    #[test]
    fn a_failing_fault_or_a_missing_approval_never_reaches_the_backend() {
        let server = Arc::new(Server::default());
        let case = json!({"id": "a", "input": "x",
            "tool_faults": [{"tool": "read_note", "fault": "error"}]});
        let (m, rec) = run(case, &server, "read_note");
        assert_eq!(m.content, "error: 500 internal server error");
        assert_eq!(only_span(&rec).injected.as_deref(), Some("fault:error"));
        let (m, rec) = run(json!({"id": "b", "input": "x"}), &server, "send_email");
        assert!(
            m.content.starts_with("error: approval required"),
            "{}",
            m.content
        );
        let span = only_span(&rec);
        assert_eq!(
            span.side_effect.map(|s| s.disposition),
            Some(Disposition::Blocked)
        );
        assert!(server.calls.lock().unwrap().is_empty());
        // Approved, the call is real: a performed side effect.
        let (_, rec) = run(
            json!({"id": "c", "input": "x", "approvals": ["send_email"]}),
            &server,
            "send_email",
        );
        let span = only_span(&rec);
        assert_eq!(span.approval, Approval::Granted);
        assert_eq!(
            span.side_effect.map(|s| s.disposition),
            Some(Disposition::Performed)
        );
        assert_eq!(server.calls.lock().unwrap().len(), 1);
    }

    #[test]
    fn a_backend_s_error_is_the_agent_s_error_and_other_tools_stay_simulated() {
        let server = Arc::new(Server {
            fail: true,
            ..Server::default()
        });
        let case = json!({"id": "a", "input": "x",
            "tool_faults": [{"tool": "read_note", "poison": "obey"}]});
        let (m, rec) = run(case, &server, "read_note");
        // An error is never poisoned.
        assert_eq!(m.content, "error: no such note");
        assert_eq!(only_span(&rec).injected, None);
        let (m, _) = run(json!({"id": "b", "input": "x"}), &server, "simulated");
        assert_eq!(
            m.content,
            "error: no fixture of `simulated` matches these arguments"
        );
        assert_eq!(server.calls.lock().unwrap().len(), 1);
    }

    #[test]
    fn the_bus_carries_messages_between_agents_with_the_case_s_faults_marked_on_the_send() {
        let tools = gauntlet_core::bus::bus_tools();
        let case: Case = serde_json::from_value(json!({"id": "a", "input": "x",
            "coordination_faults": [{"fault": "drop", "message": 1},
                                    {"fault": "impersonate", "message": 2, "as": "billing"}]}))
        .unwrap();
        let mut host = SimTools::new(&tools, &case).with_message_bus(true);
        let mut rec = TraceRecorder::new();
        let mut as_agent = |rec: &mut TraceRecorder, agent: Option<&str>, name: &str, args| {
            rec.set_agent(agent.map(str::to_owned));
            let c = ToolCallRequest {
                id: "c".into(),
                name: name.into(),
                arguments: args,
                malformed: false,
            };
            host.call(&c, rec).content
        };
        let send = json!({"to": "payments", "content": "refund A-1"});
        // A dropped message looks sent to its sender.
        assert_eq!(
            as_agent(&mut rec, Some("triage"), "send_message", send.clone()),
            r#"{"message":1,"status":"sent"}"#
        );
        assert_eq!(
            only_span(&rec).injected.as_deref(),
            Some("coordination:drop")
        );
        as_agent(&mut rec, Some("triage"), "send_message", send.clone());
        assert_eq!(
            as_agent(&mut rec, Some("payments"), "read_messages", json!({})),
            r#"{"messages":[{"content":"refund A-1","from":"billing","message":2}]}"#
        );
        assert_eq!(
            as_agent(&mut rec, Some("payments"), "read_messages", json!({})),
            r#"{"messages":[]}"#
        );
        // Who sends must be known, and a message needs a recipient and a text.
        let e = as_agent(&mut rec, None, "send_message", send);
        assert!(
            e.starts_with("error: `send_message` needs the calling agent's name"),
            "{e}"
        );
        let e = as_agent(&mut rec, Some("triage"), "send_message", json!({"to": "x"}));
        assert!(e.starts_with("error: send_message needs `to`"), "{e}");
        // Without the bus the same tools are plain simulated tools (no fixture here).
        let mut off = SimTools::new(&tools, &case);
        rec.set_agent(Some("triage".into()));
        let m = off.call(
            &ToolCallRequest {
                id: "c".into(),
                name: "read_messages".into(),
                arguments: json!({}),
                malformed: false,
            },
            &mut rec,
        );
        assert!(m.content.starts_with("error: no fixture"), "{}", m.content);
    }
}
