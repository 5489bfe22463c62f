//! The recording proxy: [`RecordingProxy`] stands between an unmodified agent and its model
//! API, so that an agent written in any language with any framework is trace-graded by
//! pointing its model base URL at gauntlet.
//!
//! This module owns the HTTP side and the recording:
//!
//! - the routes: the OpenAI chat-completions wire (`POST {prefix}/v1/chat/completions`, also
//!   `{prefix}/chat/completions`), the OpenAI Responses API (`POST {prefix}/v1/responses`,
//!   also `{prefix}/responses`) and the Anthropic Messages wire (`POST {prefix}/v1/messages`),
//!   forwarded to one upstream base URL with the client's auth headers, the upstream's answer
//!   passed back unchanged (status and body); `GET {prefix}/v1/models` and a stored
//!   response's routes (`GET`/`DELETE {prefix}/v1/responses/{id}`, `GET .../input_items`,
//!   `POST .../cancel`) are passed through unrecorded;
//! - sessions: `{prefix}` is `/s/{session}` (optionally followed by `/a/{agent}`), else the
//!   `x-gauntlet-session` and `x-gauntlet-agent` headers, else the session `default`;
//! - recording, per session, into a [`TraceRecorder`](gauntlet_core::trace::TraceRecorder): every model call is an LLM span; the
//!   tool calls the model asked for become tool spans when the agent sends their results back
//!   in its next request (paired by `tool_call_id` / `call_id` / `tool_use_id`); a Responses
//!   request that continues a `previous_response_id` is recorded with the whole conversation;
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
//! The files follow those parts: `forward` (routes and forwarding), `session` (sessions and
//! their handles), `record` (recording and injection), `sse` (the replayed streams); this
//! file holds the configuration and [`RecordingProxy`].
//!
//! The `proxy` target kind, which launches an agent per trial against a shared proxy, is
//! [`ProxyTarget`].

mod forward;
mod record;
mod session;
mod sse;
mod target;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::get;
use gauntlet_core::redact::Redactor;
use gauntlet_core::tools::{ToolDef, ToolFault};
use gauntlet_core::trace::Trace;

use forward::dispatch;
use session::{SessionCell, SessionState};

use crate::error::BuildError;

pub use session::ProxySession;
pub use target::ProxyTarget;

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

/// The wire formats the proxy speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// OpenAI chat completions.
    OpenAi,
    /// The OpenAI Responses API.
    Responses,
    /// Anthropic Messages.
    Anthropic,
}

/// Proxy settings.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// Base URL of the real model API: OpenAI requests go to `{upstream}/chat/completions`
    /// (Responses API requests to `{upstream}/responses`),
    /// Anthropic requests to `{upstream}/v1/messages` (a trailing `/v1` is tolerated).
    pub upstream: String,
    /// Time limit of one upstream request.
    pub request_timeout: Duration,
    /// Create a session the first time a request names it. When false, only sessions opened
    /// with [`RecordingProxy::open_session`] are served and other requests get a 404, so that
    /// an agent that bypasses its session is an error rather than unrecorded evidence.
    pub sessions_on_demand: bool,
    /// Most bytes of one upstream reply (default
    /// [`DEFAULT_MAX_REPLY_BYTES`](crate::client::DEFAULT_MAX_REPLY_BYTES)). A longer one is
    /// not passed on: the agent gets a 502 and the trace a failure quoting its start.
    pub max_reply_bytes: usize,
}

impl ProxyConfig {
    /// A config for an upstream, with the default time limit and sessions on demand.
    pub fn new(upstream: impl Into<String>) -> Self {
        ProxyConfig {
            upstream: upstream.into(),
            request_timeout: DEFAULT_UPSTREAM_TIMEOUT,
            sessions_on_demand: true,
            max_reply_bytes: crate::client::reply_limit(None),
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
    responses_url: String,
    anthropic_url: String,
    models_url: String,
    on_demand: bool,
    max_reply: usize,
    redactor: RwLock<Redactor>,
    sessions: Mutex<HashMap<String, Arc<SessionCell>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves plain data behind; keep serving.
    m.lock().unwrap_or_else(|e| e.into_inner())
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
    pub fn new(cfg: ProxyConfig, redactor: Redactor) -> Result<RecordingProxy, BuildError> {
        crate::client::install_crypto();
        let upstream = cfg.upstream.trim().trim_end_matches('/').to_owned();
        let (openai_url, anthropic_url, models_url) = upstream_urls(&upstream);
        let responses_url = format!("{upstream}/responses");
        for u in [&openai_url, &responses_url, &anthropic_url] {
            reqwest::Url::parse(u).map_err(|source| BuildError::ProxyUpstream {
                url: redactor.redact(&upstream).into_owned(),
                source,
            })?;
        }
        let http = reqwest::Client::builder()
            .timeout(cfg.request_timeout)
            .connect_timeout(cfg.request_timeout.min(Duration::from_secs(10)))
            .pool_max_idle_per_host(64)
            .tcp_nodelay(true)
            .user_agent(concat!("gauntlet-proxy/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(BuildError::ProxyHttpClient)?;
        Ok(RecordingProxy {
            shared: Arc::new(Shared {
                http,
                upstream,
                openai_url,
                responses_url,
                anthropic_url,
                models_url,
                on_demand: cfg.sessions_on_demand,
                max_reply: cfg.max_reply_bytes.max(1),
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

#[cfg(test)]
mod tests;
