//! Routing and forwarding: [`parse_route`] reads the session, the agent and the endpoint
//! from a request's path, [`dispatch`] serves it, and [`Shared`]'s methods forward it to the
//! upstream with the client's auth headers, record the call, and pass the upstream's answer
//! back unchanged (or the proxy's own error, in the wire's error shape).

use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use gauntlet_core::redact::Redactor;
use gauntlet_core::trace::TransportKind;
use serde_json::{Value, json};

use super::session::{InFlight, SessionCell};
use super::sse::sse_response;
use super::{AGENT_HEADER, DEFAULT_SESSION, SESSION_HEADER, SessionOptions, Shared, Wire, lock};
use crate::client::{BodyError, clip_body, clip_head, error_chain, read_capped};
use crate::error::WireError;
use crate::{anthropic, openai, responses};

/// The conversation a request sends the model.
fn messages_in(wire: Wire, cell: &SessionCell, req: &Value) -> Vec<gauntlet_core::trace::Message> {
    match wire {
        Wire::OpenAi => openai::messages_from_wire(req.get("messages").unwrap_or(&Value::Null)),
        Wire::Anthropic => anthropic::messages_from_wire(req),
        Wire::Responses => responses_input(cell, req),
    }
}

/// The conversation of a Responses API request: its `instructions` and `input`, after the
/// conversation its `previous_response_id` continues when this session saw it.
fn responses_input(cell: &SessionCell, req: &Value) -> Vec<gauntlet_core::trace::Message> {
    let messages = responses::wire::messages_from_request(req);
    let Some(prev) = req.get("previous_response_id").and_then(Value::as_str) else {
        return messages;
    };
    let state = lock(&cell.state);
    if state.conversations.get(prev).is_none() {
        // Continued from a response this session never saw: only the new input is known.
        return messages;
    }
    state
        .conversations
        .continued(prev, messages)
        .unwrap_or_default()
}

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

#[derive(Debug, PartialEq)]
pub(super) enum Endpoint {
    Chat(Wire),
    Models,
    /// A stored response of the Responses API: `/{id}`, `/{id}/input_items` or
    /// `/{id}/cancel` after `/responses`, passed through (no model is called).
    StoredResponse(String),
}

/// The path after `/responses` when it names a stored response: an id of letters, digits,
/// `_` and `-`, then nothing, `/input_items` or `/cancel`. Anything else (a `..`, an
/// encoded slash) is no route, so that no other upstream path is reached through it.
fn stored_response(rest: &str) -> Option<String> {
    let rest = rest.strip_prefix('/')?;
    let (id, tail) = rest.split_once('/').unwrap_or((rest, ""));
    let id_ok = !id.is_empty()
        && id.len() <= 256
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    (id_ok && matches!(tail, "" | "input_items" | "cancel")).then(|| format!("/{rest}"))
}

#[derive(Debug, PartialEq)]
pub(super) struct Route {
    pub(super) session: Option<String>,
    pub(super) agent: Option<String>,
    pub(super) endpoint: Endpoint,
}

/// `/s/{session}[/a/{agent}]` then the endpoint.
pub(super) fn parse_route(path: &str) -> Option<Route> {
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
        "/v1/responses" | "/responses" => Endpoint::Chat(Wire::Responses),
        "/v1/messages" | "/messages" => Endpoint::Chat(Wire::Anthropic),
        "/v1/models" | "/models" => Endpoint::Models,
        other => {
            let rest = other
                .strip_prefix("/v1/responses")
                .or_else(|| other.strip_prefix("/responses"))?;
            Endpoint::StoredResponse(stored_response(rest)?)
        }
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
        Wire::OpenAi | Wire::Responses => json!({
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

pub(super) async fn dispatch(
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
            "gauntlet proxy: no such route; use /v1/chat/completions, /v1/responses or /v1/messages, optionally under /s/SESSION[/a/AGENT]",
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
        (Endpoint::StoredResponse(rest), m) => {
            // Retrieve and list (GET), delete (DELETE), cancel (POST .../cancel).
            let allowed = match rest.ends_with("/cancel") {
                true => m == Method::POST,
                false => m == Method::GET || m == Method::DELETE,
            };
            if !allowed {
                return error_response(
                    Wire::Responses,
                    StatusCode::METHOD_NOT_ALLOWED,
                    "gauntlet proxy: a stored response is read with GET, deleted with DELETE and cancelled with POST .../cancel",
                );
            }
            shared
                .stored_response(m, &rest, &headers, uri.query(), body)
                .await
        }
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
        let mut resp = req
            .send()
            .await
            .map_err(|e| unreachable(e, "the upstream request failed"))?;
        let status = resp.status();
        let headers = resp.headers().clone();
        let body = match read_capped(&mut resp, self.max_reply).await {
            Ok(b) => b,
            Err(BodyError::Read(e)) => {
                return Err(unreachable(e, "reading the upstream's answer failed"));
            }
            // Not passed on: an agent would buffer it as the proxy would have.
            Err(BodyError::Over { head }) => {
                return Err(Unreachable {
                    status: StatusCode::BAD_GATEWAY,
                    timed_out: false,
                    detail: format!(
                        "the upstream's reply is over {} bytes (max_reply_bytes); HTTP {}, it starts: {}",
                        self.max_reply,
                        status.as_u16(),
                        clip_head(&head, &self.redactor())
                    ),
                });
            }
        };
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

    /// A stored response's route, passed through to the upstream: not a model call, so
    /// nothing is recorded.
    async fn stored_response(
        &self,
        method: Method,
        rest: &str,
        headers: &HeaderMap,
        query: Option<&str>,
        body: Bytes,
    ) -> Response {
        self.learn_secrets(headers);
        let method = match method {
            Method::GET => reqwest::Method::GET,
            Method::DELETE => reqwest::Method::DELETE,
            _ => reqwest::Method::POST,
        };
        let body = (!body.is_empty()).then_some(body);
        let url = format!("{}{rest}", self.responses_url);
        match self.send(method, &url, query, headers, body).await {
            Ok(up) => up.into_response(),
            Err(u) => error_response(Wire::Responses, u.status, &u.detail),
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
            Wire::Responses => &self.responses_url,
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
        let messages_in = messages_in(wire, cell, &req);
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
            } else if wire != Wire::Anthropic
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
            .map_err(WireError::NotJson)
            .and_then(|v| {
                let reply = match wire {
                    Wire::OpenAi => openai::parse_response(&v),
                    Wire::Anthropic => anthropic::parse_response(&v),
                    Wire::Responses => responses::wire::parse_response(&v),
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
        let mut state = lock(&cell.state);
        state.remember(wire, &v, &messages_in, &reply.message);
        state.record_reply(agent, requested_model, messages_in, reply, latency_ms);
        drop(state);
        if stream {
            return sse_response(wire, &v, include_usage);
        }
        up.into_response()
    }
}
