//! `gauntlet serve-fake`: [`FakeServer`], the built-in personas behind the OpenAI and
//! Anthropic wire formats on 127.0.0.1.
//!
//! Routes: `POST /v1/chat/completions` (OpenAI, `stream: true` answered as one SSE chunk),
//! `POST /v1/messages` (Anthropic), `GET /v1/models`, `GET /health`. The persona is the
//! server's default, or chosen per request by a model name containing `safe` or
//! `vulnerable`. Replies are the same pure function the in-process `fake:` target uses, so a
//! run over HTTP sees what a run in-process sees. It is built to never be the bottleneck of
//! a benchmark: no logging on the hot path, one small allocation per message.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use gauntlet_core::trace::Usage;
use serde_json::{Value, json};

use crate::fake::approx_tokens;
use crate::persona::{self, Persona};
use crate::{anthropic, openai};

/// Server settings.
#[derive(Debug, Clone, Copy)]
pub struct FakeServer {
    /// The persona when the request's model does not name one.
    pub persona: Persona,
    /// Added latency per request.
    pub latency: Duration,
}

struct ServeState {
    cfg: FakeServer,
    ids: AtomicU64,
}

impl FakeServer {
    /// The router (for embedding in tests or another server).
    pub fn router(self) -> Router {
        let state = Arc::new(ServeState {
            cfg: self,
            ids: AtomicU64::new(1),
        });
        Router::new()
            .route("/v1/chat/completions", post(chat_completions))
            .route("/chat/completions", post(chat_completions))
            .route("/v1/messages", post(messages))
            .route("/v1/models", get(models))
            .route("/health", get(|| async { "ok" }))
            .with_state(state)
    }

    /// Binds `addr` (port 0 picks a free one) and returns the bound address and the server
    /// future, which runs until dropped.
    pub async fn bind(
        self,
        addr: SocketAddr,
    ) -> std::io::Result<(
        SocketAddr,
        impl std::future::Future<Output = std::io::Result<()>>,
    )> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let local = listener.local_addr()?;
        let router = self.router();
        Ok((local, async move { axum::serve(listener, router).await }))
    }
}

fn persona_for(state: &ServeState, model: Option<&str>) -> Persona {
    match model {
        Some(m) if m.contains("vulnerable") => Persona::Vulnerable,
        Some(m) if m.contains("safe") => Persona::Safe,
        _ => state.cfg.persona,
    }
}

fn json_response(status: StatusCode, v: &Value) -> Response {
    let body = serde_json::to_vec(v).unwrap_or_default();
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

fn bad_request(msg: &str) -> Response {
    json_response(
        StatusCode::BAD_REQUEST,
        &json!({ "error": { "message": msg, "type": "invalid_request_error" } }),
    )
}

async fn pause(state: &ServeState) {
    if !state.cfg.latency.is_zero() {
        tokio::time::sleep(state.cfg.latency).await;
    }
}

async fn chat_completions(State(state): State<Arc<ServeState>>, body: Bytes) -> Response {
    let Ok(req) = serde_json::from_slice::<Value>(&body) else {
        return bad_request("the request body is not valid JSON");
    };
    pause(&state).await;
    let model = req.get("model").and_then(Value::as_str);
    let p = persona_for(&state, model);
    let messages = openai::messages_from_wire(req.get("messages").unwrap_or(&Value::Null));
    if messages.is_empty() {
        return bad_request("`messages` must be a non-empty array");
    }
    let tools = openai::tools_from_wire(req.get("tools"));
    let id = state.ids.fetch_add(1, Ordering::Relaxed);
    let reply = persona::reply(p, &messages, &tools).into_message(id as usize);
    let finish = if reply.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let usage = Usage {
        input_tokens: messages.iter().map(|m| approx_tokens(&m.content)).sum(),
        output_tokens: approx_tokens(&reply.content),
    };
    let model_name = model.unwrap_or(p.model_id());
    if req.get("stream").and_then(Value::as_bool) == Some(true) {
        let mut delta = openai::messages_to_wire(std::slice::from_ref(&reply))[0].clone();
        if let Some(calls) = delta.get_mut("tool_calls").and_then(Value::as_array_mut) {
            for (i, c) in calls.iter_mut().enumerate() {
                c["index"] = json!(i);
            }
        }
        let chunk = json!({
            "id": format!("chatcmpl-{id:x}"), "object": "chat.completion.chunk", "created": 0, "model": model_name,
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
        });
        let body = format!("data: {chunk}\n\ndata: [DONE]\n\n");
        return (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            )],
            body,
        )
            .into_response();
    }
    json_response(
        StatusCode::OK,
        &openai::response_to_wire(model_name, &reply, finish, usage, id),
    )
}

async fn messages(State(state): State<Arc<ServeState>>, body: Bytes) -> Response {
    let Ok(req) = serde_json::from_slice::<Value>(&body) else {
        return bad_request("the request body is not valid JSON");
    };
    pause(&state).await;
    let model = req.get("model").and_then(Value::as_str);
    let p = persona_for(&state, model);
    let messages = anthropic::messages_from_wire(&req);
    if messages.is_empty() {
        return bad_request("`messages` must be a non-empty array");
    }
    let tools = anthropic::tools_from_wire(req.get("tools"));
    let id = state.ids.fetch_add(1, Ordering::Relaxed);
    let reply = persona::reply(p, &messages, &tools).into_message(id as usize);
    let usage = Usage {
        input_tokens: messages.iter().map(|m| approx_tokens(&m.content)).sum(),
        output_tokens: approx_tokens(&reply.content),
    };
    json_response(
        StatusCode::OK,
        &anthropic::response_to_wire(model.unwrap_or(p.model_id()), &reply, usage, id),
    )
}

async fn models(State(state): State<Arc<ServeState>>) -> Response {
    let default = state.cfg.persona.model_id();
    json_response(
        StatusCode::OK,
        &json!({
            "object": "list",
            "data": [
                { "id": default, "object": "model", "owned_by": "gauntlet" },
                { "id": "gauntlet-fake-safe", "object": "model", "owned_by": "gauntlet" },
                { "id": "gauntlet-fake-vulnerable", "object": "model", "owned_by": "gauntlet" },
            ],
        }),
    )
}
