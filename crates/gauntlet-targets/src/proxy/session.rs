//! Sessions: [`ProxySession`], the owner's handle on one session (it merges what the proxy
//! records into a trial's trace, and removes the session when dropped), the shared
//! [`SessionCell`] with its [`SessionState`], and [`InFlight`], which marks a request of a
//! session in flight so that an idle session is never finished mid-request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use gauntlet_core::redact::Redactor;
use gauntlet_core::tools::{FaultSchedule, ToolDef};
use gauntlet_core::trace::{Span, ToolCallRequest, ToolSpanInput, Trace, TraceRecorder};
use tokio::sync::Notify;

use super::{RecordingProxy, SessionOptions, lock, redacted};

/// One session's state, shared by the requests that name it and by its owner.
pub(super) struct SessionCell {
    pub(super) state: Mutex<SessionState>,
    /// Signalled after every request, so that an owner can merge new spans as they come.
    changed: Notify,
}

pub(super) struct SessionState {
    pub(super) rec: TraceRecorder,
    pub(super) faults: FaultSchedule<'static>,
    pub(super) tools: Vec<ToolDef>,
    /// Tool calls the model asked for whose results have not come back yet, in order.
    pub(super) pending: Vec<PendingCall>,
    /// Results rewritten in transit, by call id: every later request carries the same
    /// history, and the model must see the same (injected) text each time.
    pub(super) rewritten: HashMap<String, Rewrite>,
    pub(super) last_seen: Instant,
    pub(super) in_flight: u32,
    /// The Responses API conversations seen, for requests that continue one by
    /// `previous_response_id`.
    pub(super) conversations: crate::responses::Conversations,
}

pub(super) struct PendingCall {
    pub(super) call: ToolCallRequest,
    pub(super) agent: Option<String>,
    pub(super) asked_at: Instant,
}

#[derive(Debug, Clone)]
pub(super) struct Rewrite {
    pub(super) text: String,
    pub(super) error: bool,
}

impl SessionCell {
    pub(super) fn new(opts: SessionOptions) -> Self {
        SessionCell {
            state: Mutex::new(SessionState {
                rec: TraceRecorder::new(),
                faults: FaultSchedule::new(opts.faults),
                tools: opts.tools,
                pending: Vec::new(),
                rewritten: HashMap::new(),
                last_seen: Instant::now(),
                in_flight: 0,
                conversations: Default::default(),
            }),
            changed: Notify::new(),
        }
    }
}

/// One session as its owner sees it: merges what the proxy records into a trial's trace.
/// Dropping it removes the session from the proxy.
pub struct ProxySession {
    pub(super) proxy: RecordingProxy,
    pub(super) id: String,
    pub(super) cell: Arc<SessionCell>,
    pub(super) spans_done: usize,
    pub(super) transport_done: usize,
}

impl ProxySession {
    /// The session id (the `/s/{session}` part of the agent's base URL).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Waits until a request of this session has been handled.
    pub async fn changed(&self) {
        self.cell.changed.notified().await;
    }

    /// Closes the tool calls whose results have not come back, as unanswered (the model
    /// asked for them, the agent never returned a result to the model).
    pub fn close_unanswered(&self) {
        lock(&self.cell.state).close_unanswered();
    }

    /// Copies the spans and transport events recorded since the last call into `rec`, in
    /// order, with secrets redacted. Span ids and parents are assigned by `rec`.
    pub fn drain_into(&mut self, rec: &mut TraceRecorder) {
        let redactor = self.proxy.redactor();
        let s = lock(&self.cell.state);
        let trace = s.rec.trace();
        for span in &trace.spans[self.spans_done.min(trace.spans.len())..] {
            replay(rec, redacted(span.clone(), &redactor));
        }
        self.spans_done = trace.spans.len();
        for ev in &trace.transport[self.transport_done.min(trace.transport.len())..] {
            rec.transport(ev.kind, ev.status, redactor.redact(&ev.detail).into_owned());
        }
        self.transport_done = trace.transport.len();
    }

    /// The proxy's redactor (the secrets it started with and every auth value seen).
    pub fn redactor(&self) -> Redactor {
        self.proxy.redactor()
    }

    /// The trace recorded so far (redacted), without closing anything.
    pub fn snapshot(&self) -> Trace {
        let trace = lock(&self.cell.state).rec.trace().clone();
        redacted(trace, &self.proxy.redactor())
    }
}

impl Drop for ProxySession {
    fn drop(&mut self) {
        let mut map = lock(&self.proxy.shared.sessions);
        // Only if it is still ours (a later open_session with the same id replaced it).
        if map
            .get(&self.id)
            .is_some_and(|c| Arc::ptr_eq(c, &self.cell))
        {
            map.remove(&self.id);
        }
    }
}

/// Records a span into another recorder, which assigns the ids and parents.
fn replay(rec: &mut TraceRecorder, span: Span) {
    match span {
        Span::LlmCall(l) => {
            rec.set_agent(l.agent);
            rec.llm_call(
                l.model,
                l.messages_in,
                l.message_out,
                l.usage,
                l.latency_ms,
                l.finish_reason,
                l.attempts,
            );
        }
        Span::ToolCall(t) => {
            rec.set_agent(t.agent);
            rec.tool_call_injected(
                ToolSpanInput {
                    call_id: t.call_id,
                    name: t.name,
                    arguments: t.arguments,
                    output: t.output,
                    error: t.error,
                    duration_ms: t.duration_ms,
                    approval: t.approval,
                    side_effect: t.side_effect,
                },
                t.injected,
            );
        }
        Span::Decision(d) => {
            rec.set_agent(d.agent);
            rec.decision(d.branch, d.reason);
        }
    }
    rec.set_agent(None);
}

/// Marks a request of a session in flight; leaving (also when the agent hangs up and the
/// handler is dropped) makes the session idle-able again and wakes its owner.
pub(super) struct InFlight<'a>(&'a SessionCell);

impl<'a> InFlight<'a> {
    pub(super) fn enter(cell: &'a SessionCell) -> Self {
        let mut s = lock(&cell.state);
        s.in_flight += 1;
        s.last_seen = Instant::now();
        InFlight(cell)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        {
            let mut s = lock(&self.0.state);
            s.in_flight = s.in_flight.saturating_sub(1);
            s.last_seen = Instant::now();
        }
        self.0.changed.notify_one();
    }
}
