//! The recording proxy: [`RecordingProxy`] stands between an unmodified agent and its model
//! API, so that an agent written in any language with any framework is trace-graded by
//! pointing its model base URL at gauntlet.
//!
//! This module owns the HTTP side and the recording:
//!
//! - the routes: the OpenAI chat-completions wire (`POST {prefix}/v1/chat/completions`, also
//!   `{prefix}/chat/completions`) and the Anthropic Messages wire (`POST {prefix}/v1/messages`),
//!   forwarded to one upstream base URL with the client's auth headers, the upstream's answer
//!   passed back unchanged (status and body); `GET {prefix}/v1/models` is passed through;
//! - sessions: `{prefix}` is `/s/{session}` (optionally followed by `/a/{agent}`), else the
//!   `x-gauntlet-session` and `x-gauntlet-agent` headers, else the session `default`;
//! - recording, per session, into a [`TraceRecorder`]: every model call is an LLM span; the
//!   tool calls the model asked for become tool spans when the agent sends their results back
//!   in its next request (paired by `tool_call_id` / `tool_use_id`);
//! - fault injection and poisoning in transit: a session may carry a case's `tool_faults`,
//!   applied to the tool results on their way to the model (the agent keeps its real result)
//!   by the same injection as the simulated tools (`gauntlet_core::tools::FaultSchedule`);
//! - streaming: a `stream: true` request is forwarded with `stream: false` and the answer is
//!   replayed to the agent as a minimal, complete SSE stream in the wire's format.
//!
//! Nothing is retried on the agent's behalf: transport failures and 5xx go back to the agent
//! as they happened (502 when the upstream could not be reached, 504 when it timed out) and
//! are recorded as transport events, because the agent's own retry logic is under test.
//! Secrets (the auth header values seen) are registered with the proxy's [`Redactor`] and
//! never appear in exported traces or in error messages.
//!
//! The `proxy` target kind, which launches an agent per trial against a shared proxy, is
//! [`ProxyTarget`].

mod target;

pub use target::ProxyTarget;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use gauntlet_core::redact::Redactor;
use gauntlet_core::tools::{
    FaultSchedule, SideEffectClass, ToolAnswer, ToolDef, ToolFault, summarize_args,
};
use gauntlet_core::trace::{
    Approval, Disposition, SideEffect, Span, ToolCallRequest, ToolSpanInput, Trace, TraceRecorder,
    TransportKind,
};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::chat::ChatReply;
use crate::client::{clip_body, error_chain};
use crate::{anthropic, openai};

/// The session of requests that name none.
pub const DEFAULT_SESSION: &str = "default";

/// Header naming the session when the URL does not.
pub const SESSION_HEADER: &str = "x-gauntlet-session";

/// Header naming the (sub-)agent that makes the request when the URL does not.
pub const AGENT_HEADER: &str = "x-gauntlet-agent";

/// Recorded as the error of a tool call whose result never reached the model.
pub const NO_RESULT: &str = "no result returned by the agent";

/// Default time limit of one upstream request (long: the agent has its own time limits, and
/// cutting a slow model short would change what is under test).
pub const DEFAULT_UPSTREAM_TIMEOUT: Duration = Duration::from_secs(600);

/// Largest request body accepted (a long conversation with tool output can be large).
const MAX_BODY: usize = 64 << 20;

/// Request headers passed through to the upstream: credentials and API selectors. Nothing
/// else is forwarded (no `Host`, no hop-by-hop headers, no gauntlet routing headers).
const FORWARDED_REQUEST_HEADERS: &[&str] = &[
    "authorization",
    "x-api-key",
    "api-key",
    "anthropic-version",
    "anthropic-beta",
    "openai-organization",
    "openai-project",
    "openai-beta",
];

/// Request headers whose values are secrets, registered with the redactor as they are seen.
const SECRET_HEADERS: &[(&str, &str)] = &[
    ("authorization", "Authorization"),
    ("x-api-key", "x-api-key"),
    ("api-key", "api-key"),
];

/// Response headers passed back to the agent besides `Content-Type`: what a client's retry
/// and rate-limit logic reads.
fn passes_back(name: &str) -> bool {
    name == "retry-after"
        || name == "x-request-id"
        || name == "request-id"
        || name.starts_with("x-ratelimit-")
        || name.starts_with("anthropic-ratelimit-")
        || name.starts_with("openai-")
}

/// The two wire formats the proxy speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// OpenAI chat completions.
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
}

/// Proxy settings.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// Base URL of the real model API: OpenAI requests go to `{upstream}/chat/completions`,
    /// Anthropic requests to `{upstream}/v1/messages` (a trailing `/v1` is tolerated).
    pub upstream: String,
    /// Time limit of one upstream request.
    pub request_timeout: Duration,
    /// Create a session the first time a request names it. When false, only sessions opened
    /// with [`RecordingProxy::open_session`] are served and other requests get a 404, so that
    /// an agent that bypasses its session is an error rather than unrecorded evidence.
    pub sessions_on_demand: bool,
}

impl ProxyConfig {
    /// A config for an upstream, with the default time limit and sessions on demand.
    pub fn new(upstream: impl Into<String>) -> Self {
        ProxyConfig {
            upstream: upstream.into(),
            request_timeout: DEFAULT_UPSTREAM_TIMEOUT,
            sessions_on_demand: true,
        }
    }
}

/// What a session applies and knows about the agent's tools.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// Faults and poisons applied to tool results in transit (a case's `tool_faults`).
    pub faults: Vec<ToolFault>,
    /// The suite's tool declarations, used only to classify side effects on tool spans.
    pub tools: Vec<ToolDef>,
}

/// The recording proxy. Cheap to clone: clones share the sessions.
#[derive(Clone)]
pub struct RecordingProxy {
    shared: Arc<Shared>,
}

struct Shared {
    http: reqwest::Client,
    upstream: String,
    openai_url: String,
    anthropic_url: String,
    models_url: String,
    on_demand: bool,
    redactor: RwLock<Redactor>,
    sessions: Mutex<HashMap<String, Arc<SessionCell>>>,
}

/// One session's state, shared by the requests that name it and by its owner.
struct SessionCell {
    state: Mutex<SessionState>,
    /// Signalled after every request, so that an owner can merge new spans as they come.
    changed: Notify,
}

struct SessionState {
    rec: TraceRecorder,
    faults: FaultSchedule<'static>,
    tools: Vec<ToolDef>,
    /// Tool calls the model asked for whose results have not come back yet, in order.
    pending: Vec<PendingCall>,
    /// Results rewritten in transit, by call id: every later request carries the same
    /// history, and the model must see the same (injected) text each time.
    rewritten: HashMap<String, Rewrite>,
    last_seen: Instant,
    in_flight: u32,
}

struct PendingCall {
    call: ToolCallRequest,
    agent: Option<String>,
    asked_at: Instant,
}

#[derive(Debug, Clone)]
struct Rewrite {
    text: String,
    error: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves plain data behind; keep serving.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl SessionCell {
    fn new(opts: SessionOptions) -> Self {
        SessionCell {
            state: Mutex::new(SessionState {
                rec: TraceRecorder::new(),
                faults: FaultSchedule::new(opts.faults),
                tools: opts.tools,
                pending: Vec::new(),
                rewritten: HashMap::new(),
                last_seen: Instant::now(),
                in_flight: 0,
            }),
            changed: Notify::new(),
        }
    }
}

/// The upstream endpoints for a base URL.
fn upstream_urls(base: &str) -> (String, String, String) {
    let base = base.trim().trim_end_matches('/');
    let root = base.strip_suffix("/v1").unwrap_or(base);
    (
        format!("{base}/chat/completions"),
        format!("{root}/v1/messages"),
        format!("{base}/models"),
    )
}

impl RecordingProxy {
    /// A proxy in front of `cfg.upstream`. `redactor` holds the secrets known already (a run's
    /// `${env:NAME}` values); auth header values are added as requests arrive.
    pub fn new(cfg: ProxyConfig, redactor: Redactor) -> Result<RecordingProxy, String> {
        crate::client::install_crypto();
        let upstream = cfg.upstream.trim().trim_end_matches('/').to_owned();
        let (openai_url, anthropic_url, models_url) = upstream_urls(&upstream);
        for u in [&openai_url, &anthropic_url] {
            reqwest::Url::parse(u).map_err(|e| {
                format!(
                    "the proxy's upstream `{}` is not a valid base URL: {e}",
                    redactor.redact(&upstream)
                )
            })?;
        }
        let http = reqwest::Client::builder()
            .timeout(cfg.request_timeout)
            .connect_timeout(cfg.request_timeout.min(Duration::from_secs(10)))
            .pool_max_idle_per_host(64)
            .tcp_nodelay(true)
            .user_agent(concat!("gauntlet-proxy/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("failed to build the proxy's HTTP client: {e}"))?;
        Ok(RecordingProxy {
            shared: Arc::new(Shared {
                http,
                upstream,
                openai_url,
                anthropic_url,
                models_url,
                on_demand: cfg.sessions_on_demand,
                redactor: RwLock::new(redactor),
                sessions: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// The upstream base URL, redacted.
    pub fn upstream(&self) -> String {
        self.redactor().redact(&self.shared.upstream).into_owned()
    }

    /// A copy of the redactor: the secrets given at start plus every auth value seen so far.
    pub fn redactor(&self) -> Redactor {
        self.shared
            .redactor
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The router (for embedding in tests or another server).
    pub fn router(&self) -> Router {
        Router::new()
            .route("/health", get(|| async { "ok" }))
            .fallback(dispatch)
            .layer(DefaultBodyLimit::max(MAX_BODY))
            .with_state(Arc::clone(&self.shared))
    }

    /// Binds `addr` (port 0 picks a free one) and returns the bound address and the server
    /// future, which runs until dropped.
    pub async fn bind(
        &self,
        addr: SocketAddr,
    ) -> std::io::Result<(
        SocketAddr,
        impl std::future::Future<Output = std::io::Result<()>> + use<>,
    )> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let local = listener.local_addr()?;
        let router = self.router();
        Ok((local, async move { axum::serve(listener, router).await }))
    }

    /// Opens (or replaces) a session with its faults and tool declarations. The session is
    /// removed when the handle is dropped.
    pub fn open_session(&self, id: &str, opts: SessionOptions) -> ProxySession {
        let cell = Arc::new(SessionCell::new(opts));
        lock(&self.shared.sessions).insert(id.to_owned(), Arc::clone(&cell));
        ProxySession {
            proxy: self.clone(),
            id: id.to_owned(),
            cell,
            spans_done: 0,
            transport_done: 0,
        }
    }

    /// Ids of the open sessions, sorted.
    pub fn session_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = lock(&self.shared.sessions).keys().cloned().collect();
        ids.sort();
        ids
    }

    /// Removes the sessions without a request in flight and none for `idle`, and returns
    /// their finished traces (calls whose results never came back closed as unanswered).
    pub fn finish_idle(&self, idle: Duration) -> Vec<(String, Trace)> {
        self.finish_where(|s| s.in_flight == 0 && s.last_seen.elapsed() >= idle)
    }

    /// Removes every session and returns the finished traces, sorted by session id.
    pub fn finish_all(&self) -> Vec<(String, Trace)> {
        self.finish_where(|_| true)
    }

    fn finish_where(&self, pick: impl Fn(&SessionState) -> bool) -> Vec<(String, Trace)> {
        let taken: Vec<(String, Arc<SessionCell>)> = {
            let mut map = lock(&self.shared.sessions);
            let ids: Vec<String> = map
                .iter()
                .filter(|(_, c)| pick(&lock(&c.state)))
                .map(|(k, _)| k.clone())
                .collect();
            ids.into_iter()
                .filter_map(|id| map.remove(&id).map(|c| (id, c)))
                .collect()
        };
        let redactor = self.redactor();
        let mut out: Vec<(String, Trace)> = taken
            .into_iter()
            .map(|(id, cell)| {
                let mut s = lock(&cell.state);
                s.close_unanswered();
                let trace = std::mem::take(&mut s.rec).finish();
                (id, redacted(trace, &redactor))
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

/// One session as its owner sees it: merges what the proxy records into a trial's trace.
/// Dropping it removes the session from the proxy.
pub struct ProxySession {
    proxy: RecordingProxy,
    id: String,
    cell: Arc<SessionCell>,
    spans_done: usize,
    transport_done: usize,
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

/// A value with every registered secret replaced in its strings.
fn redacted<T>(value: T, redactor: &Redactor) -> T
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    if redactor.is_empty() {
        return value;
    }
    let Ok(mut v) = serde_json::to_value(&value) else {
        return value;
    };
    redactor.redact_json(&mut v);
    serde_json::from_value(v).unwrap_or(value)
}

// ---------------------------------------------------------------------------------------
// Recording and injection.

impl SessionState {
    fn side_effect(&self, call: &ToolCallRequest, disposition: Disposition) -> Option<SideEffect> {
        let def = self.tools.iter().find(|t| t.name == call.name)?;
        (def.side_effect != SideEffectClass::ReadOnly).then(|| SideEffect {
            tool: def.name.clone(),
            class: def.side_effect,
            disposition,
            description: summarize_args(&call.arguments),
        })
    }

    /// A tool result arrived for `id`: if it answers a pending call, record the tool span
    /// (applying the session's faults), and say what the model should see instead, if
    /// anything.
    fn result_arrived(&mut self, id: &str, content: &str, flagged_error: bool) {
        let Some(at) = self.pending.iter().position(|p| p.call.id == id) else {
            return;
        };
        let p = self.pending.remove(at);
        let real_error = flagged_error || starts_with_error(content);
        let answer = if real_error {
            ToolAnswer::Error(content)
        } else {
            ToolAnswer::Text(content)
        };
        let injected = self.faults.next(&p.call.name).apply(answer);
        let marks = injected.marks();
        // The agent's tool ran: its effect happened whatever the model is told afterwards.
        let disposition = if real_error {
            Disposition::Blocked
        } else {
            Disposition::Performed
        };
        let span = ToolSpanInput {
            call_id: p.call.id.clone(),
            name: p.call.name.clone(),
            arguments: p.call.arguments.clone(),
            output: (!real_error).then(|| content.to_owned()),
            error: injected.error.clone(),
            duration_ms: p.asked_at.elapsed().as_millis() as u64,
            approval: Approval::NotRequired,
            side_effect: self.side_effect(&p.call, disposition),
        };
        // The model sees the injected text from now on; the span keeps the real result.
        if marks.is_some() {
            self.rewritten.insert(
                id.to_owned(),
                Rewrite {
                    text: injected.text().to_owned(),
                    error: injected.fault_error(),
                },
            );
        }
        self.rec.set_agent(p.agent);
        self.rec.tool_call_injected(span, marks);
        self.rec.set_agent(None);
    }

    /// Reads the tool results in a request: records the ones that answer pending calls, and
    /// rewrites the ones injected in transit. Returns whether the request changed.
    fn take_tool_results(&mut self, wire: Wire, req: &mut Value) -> bool {
        let Some(messages) = req.get_mut("messages").and_then(Value::as_array_mut) else {
            return false;
        };
        let mut changed = false;
        match wire {
            Wire::OpenAi => {
                for m in messages {
                    if m.get("role").and_then(Value::as_str) != Some("tool") {
                        continue;
                    }
                    let Some(id) = m
                        .get("tool_call_id")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                    else {
                        continue;
                    };
                    let text = openai::content_text(m.get("content"));
                    self.result_arrived(&id, &text, false);
                    if let Some(r) = self.rewritten.get(&id) {
                        m["content"] = Value::String(r.text.clone());
                        changed = true;
                    }
                }
            }
            Wire::Anthropic => {
                for m in messages {
                    if m.get("role").and_then(Value::as_str) != Some("user") {
                        continue;
                    }
                    let Some(blocks) = m.get_mut("content").and_then(Value::as_array_mut) else {
                        continue;
                    };
                    for b in blocks {
                        if b.get("type").and_then(Value::as_str) != Some("tool_result") {
                            continue;
                        }
                        let Some(id) = b
                            .get("tool_use_id")
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                        else {
                            continue;
                        };
                        let text = block_text(b.get("content"));
                        let flagged = b.get("is_error").and_then(Value::as_bool) == Some(true);
                        self.result_arrived(&id, &text, flagged);
                        if let Some(r) = self.rewritten.get(&id) {
                            b["content"] = Value::String(r.text.clone());
                            if r.error {
                                b["is_error"] = Value::Bool(true);
                            }
                            changed = true;
                        }
                    }
                }
            }
        }
        changed
    }

    /// Records a model call, and remembers the tool calls it asked for.
    fn record_reply(
        &mut self,
        agent: Option<String>,
        requested_model: Option<String>,
        messages_in: Vec<gauntlet_core::trace::Message>,
        reply: ChatReply,
        latency_ms: u64,
    ) {
        self.rec.set_agent(agent.clone());
        let calls = reply.message.tool_calls.clone();
        let finish = reply.finish_reason.clone();
        self.rec.llm_call(
            reply.model.or(requested_model),
            messages_in,
            reply.message,
            reply.usage,
            latency_ms,
            reply.finish_reason,
            1,
        );
        match finish.as_deref() {
            Some("content_filter") => self.rec.transport(
                TransportKind::FilterBlock,
                None,
                "finish_reason: content_filter (passed to the agent)".into(),
            ),
            Some("length") if calls.is_empty() => self.rec.transport(
                TransportKind::Truncated,
                None,
                "the model's reply was cut by its token limit".into(),
            ),
            _ => {}
        }
        self.rec.set_agent(None);
        let now = Instant::now();
        for call in calls {
            // A reused id (another conversation in the same session) starts afresh.
            self.pending.retain(|p| p.call.id != call.id);
            self.rewritten.remove(&call.id);
            self.pending.push(PendingCall {
                call,
                agent: agent.clone(),
                asked_at: now,
            });
        }
    }

    /// Records every pending call as unanswered.
    fn close_unanswered(&mut self) {
        for p in std::mem::take(&mut self.pending) {
            self.rec.set_agent(p.agent);
            self.rec.tool_call(ToolSpanInput {
                call_id: p.call.id.clone(),
                name: p.call.name.clone(),
                arguments: p.call.arguments.clone(),
                output: None,
                error: Some(NO_RESULT.into()),
                duration_ms: p.asked_at.elapsed().as_millis() as u64,
                approval: Approval::NotRequired,
                side_effect: None,
            });
        }
        self.rec.set_agent(None);
    }
}

fn starts_with_error(text: &str) -> bool {
    text.trim_start()
        .get(..5)
        .is_some_and(|p| p.eq_ignore_ascii_case("error"))
}

/// The text of an Anthropic `tool_result` block's content: a string, or text blocks.
fn block_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

// ---------------------------------------------------------------------------------------
// Routing and forwarding.

#[derive(Debug, PartialEq)]
enum Endpoint {
    Chat(Wire),
    Models,
}

#[derive(Debug, PartialEq)]
struct Route {
    session: Option<String>,
    agent: Option<String>,
    endpoint: Endpoint,
}

/// `/s/{session}[/a/{agent}]` then the endpoint.
fn parse_route(path: &str) -> Option<Route> {
    fn segment(rest: &str) -> Option<(String, &str)> {
        let end = rest.find('/').unwrap_or(rest.len());
        let seg = &rest[..end];
        (!seg.is_empty()).then(|| (seg.to_owned(), &rest[end..]))
    }
    let mut rest = path;
    let mut session = None;
    let mut agent = None;
    if let Some(r) = rest.strip_prefix("/s/") {
        let (s, r) = segment(r)?;
        session = Some(s);
        rest = r;
        if let Some(r) = rest.strip_prefix("/a/") {
            let (a, r) = segment(r)?;
            agent = Some(a);
            rest = r;
        }
    }
    let endpoint = match rest.trim_end_matches('/') {
        "/v1/chat/completions" | "/chat/completions" => Endpoint::Chat(Wire::OpenAi),
        "/v1/messages" | "/messages" => Endpoint::Chat(Wire::Anthropic),
        "/v1/models" | "/models" => Endpoint::Models,
        _ => return None,
    };
    Some(Route {
        session,
        agent,
        endpoint,
    })
}

fn header_str(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

/// An error the proxy itself answers, in the wire's error shape.
fn error_response(wire: Wire, status: StatusCode, message: &str) -> Response {
    let body = match wire {
        Wire::OpenAi => json!({
            "error": { "message": message, "type": "gauntlet_proxy_error", "code": status.as_u16() }
        }),
        Wire::Anthropic => json!({
            "type": "error", "error": { "type": "api_error", "message": message }
        }),
    };
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body.to_string(),
    )
        .into_response()
}

async fn dispatch(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(route) = parse_route(uri.path()) else {
        return error_response(
            Wire::OpenAi,
            StatusCode::NOT_FOUND,
            "gauntlet proxy: no such route; use /v1/chat/completions or /v1/messages, optionally under /s/SESSION[/a/AGENT]",
        );
    };
    let session = route
        .session
        .or_else(|| header_str(&headers, SESSION_HEADER))
        .unwrap_or_else(|| DEFAULT_SESSION.to_owned());
    let agent = route.agent.or_else(|| header_str(&headers, AGENT_HEADER));
    match (route.endpoint, method) {
        (Endpoint::Chat(wire), Method::POST) => {
            shared
                .chat(wire, &session, agent, &headers, uri.query(), body)
                .await
        }
        (Endpoint::Models, Method::GET) => shared.models(&headers).await,
        (Endpoint::Chat(wire), _) => error_response(
            wire,
            StatusCode::METHOD_NOT_ALLOWED,
            "gauntlet proxy: use POST",
        ),
        (Endpoint::Models, _) => error_response(
            Wire::OpenAi,
            StatusCode::METHOD_NOT_ALLOWED,
            "gauntlet proxy: use GET",
        ),
    }
}

/// Marks a request of a session in flight; leaving (also when the agent hangs up and the
/// handler is dropped) makes the session idle-able again and wakes its owner.
struct InFlight<'a>(&'a SessionCell);

impl<'a> InFlight<'a> {
    fn enter(cell: &'a SessionCell) -> Self {
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

/// What came back from the upstream.
struct Upstream {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Upstream {
    /// The upstream's answer, unchanged: status, body, content type, and the headers a
    /// client's retry logic reads.
    fn into_response(self) -> Response {
        let mut resp = (self.status, self.body).into_response();
        let out = resp.headers_mut();
        for (name, value) in &self.headers {
            if name == header::CONTENT_TYPE || passes_back(name.as_str()) {
                out.insert(name.clone(), value.clone());
            }
        }
        resp
    }
}

/// Why the upstream could not be reached.
struct Unreachable {
    status: StatusCode,
    timed_out: bool,
    detail: String,
}

impl Shared {
    fn redactor(&self) -> Redactor {
        self.redactor
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Registers the secrets a request carries (its auth header values).
    fn learn_secrets(&self, headers: &HeaderMap) {
        let mut found = Vec::new();
        for (h, label) in SECRET_HEADERS {
            for v in headers.get_all(*h) {
                let Ok(v) = v.to_str() else { continue };
                let v = v.trim();
                found.push((*label, v.to_owned()));
                // The credential alone too, so that it is caught without its scheme.
                if let Some((_, token)) = v.split_once(' ') {
                    found.push((*label, token.trim().to_owned()));
                }
            }
        }
        if found.is_empty() {
            return;
        }
        let mut r = self.redactor.write().unwrap_or_else(|e| e.into_inner());
        for (label, v) in found {
            r.add(label, &v);
        }
    }

    fn session(&self, id: &str) -> Option<Arc<SessionCell>> {
        let mut map = lock(&self.sessions);
        if let Some(c) = map.get(id) {
            return Some(Arc::clone(c));
        }
        if !self.on_demand {
            return None;
        }
        let cell = Arc::new(SessionCell::new(SessionOptions::default()));
        map.insert(id.to_owned(), Arc::clone(&cell));
        Some(cell)
    }

    fn clip(&self, body: &[u8]) -> String {
        clip_body(body, &self.redactor())
    }

    async fn send(
        &self,
        method: reqwest::Method,
        url: &str,
        query: Option<&str>,
        headers: &HeaderMap,
        body: Option<Bytes>,
    ) -> Result<Upstream, Unreachable> {
        let url = match query {
            Some(q) if !q.is_empty() => format!("{url}?{q}"),
            _ => url.to_owned(),
        };
        let mut req = self.http.request(method, &url);
        for name in FORWARDED_REQUEST_HEADERS {
            for v in headers.get_all(*name) {
                req = req.header(*name, v.clone());
            }
        }
        if let Some(b) = body {
            req = req.header(header::CONTENT_TYPE, "application/json").body(b);
        }
        let unreachable = |e: reqwest::Error, what: &str| {
            let timed_out = e.is_timeout();
            Unreachable {
                status: if timed_out {
                    StatusCode::GATEWAY_TIMEOUT
                } else {
                    StatusCode::BAD_GATEWAY
                },
                timed_out,
                detail: self
                    .redactor()
                    .redact(&format!("{what}: {}", error_chain(&e)))
                    .into_owned(),
            }
        };
        let resp = req
            .send()
            .await
            .map_err(|e| unreachable(e, "the upstream request failed"))?;
        let status = resp.status();
        let headers = resp.headers().clone();
        let body = resp
            .bytes()
            .await
            .map_err(|e| unreachable(e, "reading the upstream's answer failed"))?;
        Ok(Upstream {
            status,
            headers,
            body,
        })
    }

    async fn models(&self, headers: &HeaderMap) -> Response {
        self.learn_secrets(headers);
        match self
            .send(reqwest::Method::GET, &self.models_url, None, headers, None)
            .await
        {
            Ok(up) => up.into_response(),
            Err(u) => error_response(Wire::OpenAi, u.status, &u.detail),
        }
    }

    async fn chat(
        &self,
        wire: Wire,
        session: &str,
        agent: Option<String>,
        headers: &HeaderMap,
        query: Option<&str>,
        body: Bytes,
    ) -> Response {
        self.learn_secrets(headers);
        let Some(cell) = self.session(session) else {
            return error_response(
                wire,
                StatusCode::NOT_FOUND,
                &format!(
                    "gauntlet proxy: unknown session `{session}`; use the base URL gauntlet gave the agent (OPENAI_BASE_URL / ANTHROPIC_BASE_URL)"
                ),
            );
        };
        let _in_flight = InFlight::enter(&cell);
        self.chat_in(wire, &cell, agent, headers, query, body).await
    }

    async fn chat_in(
        &self,
        wire: Wire,
        cell: &SessionCell,
        agent: Option<String>,
        headers: &HeaderMap,
        query: Option<&str>,
        body: Bytes,
    ) -> Response {
        let url = match wire {
            Wire::OpenAi => &self.openai_url,
            Wire::Anthropic => &self.anthropic_url,
        };
        let mut req = match serde_json::from_slice::<Value>(&body) {
            Ok(v @ Value::Object(_)) => v,
            _ => {
                // Not a request the proxy can read: forward it untouched, so that the agent
                // gets the upstream's own answer, and keep a note of it.
                lock(&cell.state).rec.transport(
                    TransportKind::Failed,
                    None,
                    "the agent sent a request body that is not a JSON object; forwarded without recording".into(),
                );
                return match self
                    .send(reqwest::Method::POST, url, query, headers, Some(body))
                    .await
                {
                    Ok(up) => up.into_response(),
                    Err(u) => error_response(wire, u.status, &u.detail),
                };
            }
        };
        let stream = req.get("stream").and_then(Value::as_bool) == Some(true);
        let include_usage = req
            .pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            == Some(true);
        let mut changed = lock(&cell.state).take_tool_results(wire, &mut req);
        if stream && let Some(o) = req.as_object_mut() {
            o.insert("stream".into(), Value::Bool(false));
            // OpenAI rejects stream_options on a request that does not stream.
            o.remove("stream_options");
            changed = true;
        }
        let body = if changed {
            match serde_json::to_vec(&req) {
                Ok(b) => Bytes::from(b),
                Err(_) => body,
            }
        } else {
            body
        };
        let messages_in = match wire {
            Wire::OpenAi => openai::messages_from_wire(req.get("messages").unwrap_or(&Value::Null)),
            Wire::Anthropic => anthropic::messages_from_wire(&req),
        };
        let requested_model = req.get("model").and_then(Value::as_str).map(str::to_owned);
        let started = Instant::now();
        let sent = self
            .send(reqwest::Method::POST, url, query, headers, Some(body))
            .await;
        let latency_ms = started.elapsed().as_millis() as u64;
        let up = match sent {
            Ok(up) => up,
            Err(u) => {
                let kind = if u.timed_out {
                    TransportKind::Timeout
                } else {
                    TransportKind::Failed
                };
                lock(&cell.state).rec.transport(
                    kind,
                    Some(u.status.as_u16()),
                    format!("{} (answered {} to the agent)", u.detail, u.status.as_u16()),
                );
                return error_response(wire, u.status, &format!("gauntlet proxy: {}", u.detail));
            }
        };
        if !up.status.is_success() {
            let code = up.status.as_u16();
            let detail = format!(
                "upstream HTTP {code}: {} (passed to the agent)",
                self.clip(&up.body)
            );
            let kind = if code == 429 {
                TransportKind::RateLimited
            } else if wire == Wire::OpenAi
                && serde_json::from_slice::<Value>(&up.body)
                    .is_ok_and(|v| openai::is_content_filter_error(&v))
            {
                TransportKind::FilterBlock
            } else {
                TransportKind::Failed
            };
            lock(&cell.state).rec.transport(kind, Some(code), detail);
            return up.into_response();
        }
        let parsed = serde_json::from_slice::<Value>(&up.body)
            .map_err(|e| format!("not valid JSON ({e})"))
            .and_then(|v| {
                let reply = match wire {
                    Wire::OpenAi => openai::parse_response(&v),
                    Wire::Anthropic => anthropic::parse_response(&v),
                }?;
                Ok((v, reply))
            });
        let (v, reply) = match parsed {
            Ok(x) => x,
            Err(e) => {
                lock(&cell.state).rec.transport(
                    TransportKind::Failed,
                    Some(up.status.as_u16()),
                    format!(
                        "the upstream's answer is not a completion: {e}; raw body: {} (passed to the agent)",
                        self.clip(&up.body)
                    ),
                );
                return up.into_response();
            }
        };
        lock(&cell.state).record_reply(agent, requested_model, messages_in, reply, latency_ms);
        if stream {
            return sse_response(wire, &v, include_usage);
        }
        up.into_response()
    }
}

// ---------------------------------------------------------------------------------------
// Streaming: a complete answer replayed as one minimal SSE stream.

fn sse_response(wire: Wire, v: &Value, include_usage: bool) -> Response {
    let body = match wire {
        Wire::OpenAi => openai_sse(v, include_usage),
        Wire::Anthropic => anthropic_sse(v),
    };
    (
        StatusCode::OK,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            (
                HeaderName::from_static("x-gauntlet-stream"),
                HeaderValue::from_static("replayed"),
            ),
        ],
        body,
    )
        .into_response()
}

/// One `chat.completion.chunk` carrying the whole message, a usage chunk when asked for, and
/// `[DONE]`.
fn openai_sse(v: &Value, include_usage: bool) -> String {
    let id = v.get("id").cloned().unwrap_or(json!("chatcmpl-gauntlet"));
    let created = v.get("created").cloned().unwrap_or(json!(0));
    let model = v.get("model").cloned().unwrap_or(Value::Null);
    let choices: Vec<Value> = v
        .get("choices")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .enumerate()
                .map(|(i, c)| {
                    let mut delta = c.get("message").cloned().unwrap_or_else(|| json!({}));
                    if let Some(calls) = delta.get_mut("tool_calls").and_then(Value::as_array_mut) {
                        for (j, call) in calls.iter_mut().enumerate() {
                            call["index"] = json!(j);
                        }
                    }
                    json!({
                        "index": c.get("index").cloned().unwrap_or(json!(i)),
                        "delta": delta,
                        "finish_reason": c.get("finish_reason").cloned().unwrap_or(Value::Null),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let mut out = String::new();
    let chunk = json!({
        "id": id, "object": "chat.completion.chunk", "created": created, "model": model,
        "choices": choices,
    });
    out.push_str(&format!("data: {chunk}\n\n"));
    if include_usage {
        let usage = json!({
            "id": id, "object": "chat.completion.chunk", "created": created, "model": model,
            "choices": [], "usage": v.get("usage").cloned().unwrap_or(Value::Null),
        });
        out.push_str(&format!("data: {usage}\n\n"));
    }
    out.push_str("data: [DONE]\n\n");
    out
}

/// `message_start`, each content block as start / one delta / stop, `message_delta` with the
/// stop reason and output tokens, `message_stop`.
fn anthropic_sse(v: &Value) -> String {
    fn event(out: &mut String, name: &str, data: Value) {
        out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    }
    let mut out = String::new();
    let mut start = v.clone();
    if let Some(o) = start.as_object_mut() {
        o.insert("content".into(), json!([]));
        o.insert("stop_reason".into(), Value::Null);
        o.insert("stop_sequence".into(), Value::Null);
        let input = v
            .pointer("/usage/input_tokens")
            .cloned()
            .unwrap_or(json!(0));
        o.insert(
            "usage".into(),
            json!({ "input_tokens": input, "output_tokens": 0 }),
        );
    }
    event(
        &mut out,
        "message_start",
        json!({ "type": "message_start", "message": start }),
    );
    let blocks = v
        .get("content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (i, b) in blocks.iter().enumerate() {
        let (opening, delta) = match b.get("type").and_then(Value::as_str) {
            Some("text") => (
                json!({ "type": "text", "text": "" }),
                Some(
                    json!({ "type": "text_delta", "text": b.get("text").cloned().unwrap_or(json!("")) }),
                ),
            ),
            Some("tool_use") => (
                json!({ "type": "tool_use", "id": b.get("id"), "name": b.get("name"), "input": {} }),
                Some(json!({
                    "type": "input_json_delta",
                    "partial_json": b.get("input").cloned().unwrap_or_else(|| json!({})).to_string(),
                })),
            ),
            // Other blocks (thinking, server tools) arrive whole in their start event.
            _ => (b.clone(), None),
        };
        event(
            &mut out,
            "content_block_start",
            json!({ "type": "content_block_start", "index": i, "content_block": opening }),
        );
        if let Some(d) = delta {
            event(
                &mut out,
                "content_block_delta",
                json!({ "type": "content_block_delta", "index": i, "delta": d }),
            );
        }
        event(
            &mut out,
            "content_block_stop",
            json!({ "type": "content_block_stop", "index": i }),
        );
    }
    event(
        &mut out,
        "message_delta",
        json!({
            "type": "message_delta",
            "delta": {
                "stop_reason": v.get("stop_reason").cloned().unwrap_or(Value::Null),
                "stop_sequence": v.get("stop_sequence").cloned().unwrap_or(Value::Null),
            },
            "usage": { "output_tokens": v.pointer("/usage/output_tokens").cloned().unwrap_or(json!(0)) },
        }),
    );
    event(&mut out, "message_stop", json!({ "type": "message_stop" }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_carry_session_and_agent() {
        assert_eq!(
            parse_route("/v1/chat/completions"),
            Some(Route {
                session: None,
                agent: None,
                endpoint: Endpoint::Chat(Wire::OpenAi)
            })
        );
        assert_eq!(
            parse_route("/s/abc/v1/messages"),
            Some(Route {
                session: Some("abc".into()),
                agent: None,
                endpoint: Endpoint::Chat(Wire::Anthropic)
            })
        );
        assert_eq!(
            parse_route("/s/abc/a/planner/chat/completions"),
            Some(Route {
                session: Some("abc".into()),
                agent: Some("planner".into()),
                endpoint: Endpoint::Chat(Wire::OpenAi)
            })
        );
        assert_eq!(
            parse_route("/s/x/v1/models").map(|r| r.endpoint),
            Some(Endpoint::Models)
        );
        assert_eq!(parse_route("/s//v1/messages"), None);
        assert_eq!(parse_route("/v2/other"), None);
    }

    #[test]
    fn upstream_urls_tolerate_a_trailing_v1() {
        let (o, a, m) = upstream_urls("http://127.0.0.1:9/v1/");
        assert_eq!(o, "http://127.0.0.1:9/v1/chat/completions");
        assert_eq!(a, "http://127.0.0.1:9/v1/messages");
        assert_eq!(m, "http://127.0.0.1:9/v1/models");
        let (_, a, _) = upstream_urls("https://api.anthropic.com");
        assert_eq!(a, "https://api.anthropic.com/v1/messages");
    }

    #[test]
    fn anthropic_sse_is_a_complete_event_sequence() {
        let v = json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": "hi"}, {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}}],
            "stop_reason": "tool_use", "stop_sequence": null, "usage": {"input_tokens": 3, "output_tokens": 2},
        });
        let s = anthropic_sse(&v);
        let names: Vec<&str> = s
            .lines()
            .filter_map(|l| l.strip_prefix("event: "))
            .collect();
        assert_eq!(
            names,
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        assert!(s.contains(r#""partial_json":"{\"a\":1}""#), "{s}");
    }
}
