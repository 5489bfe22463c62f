//! `gauntlet serve-fake`: [`FakeServer`], the built-in personas behind the OpenAI and
//! Anthropic wire formats on 127.0.0.1.
//!
//! Routes: `POST /v1/chat/completions` (OpenAI), `POST /v1/responses` (the OpenAI Responses
//! API, in [`responses`]; `GET` and `DELETE /v1/responses/{id}` for a stored response), `POST /v1/messages` (Anthropic), `POST /v1/embeddings` (the
//! deterministic test vectors of [`crate::embeddings::fake_embedding`], not a model's),
//! `GET /v1/models`, `GET /health`. `stream: true` is answered as the real APIs stream, so
//! the vendors' SDKs read it: OpenAI chunks with text and tool-call deltas and, with
//! `stream_options.include_usage`, a last chunk that carries the usage; Anthropic's events
//! (`message_start`, a `content_block_start`/`_delta`/`_stop` run per block with `text_delta`
//! or `input_json_delta`, `message_delta`, `message_stop`). The persona is the
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

mod responses;

use crate::fake::approx_tokens;
use crate::persona::{self, Persona};
use crate::{anthropic, openai};

/// Server settings.
#[derive(Debug, Clone, Copy)]
pub struct FakeServer {
    /// The persona when the request's model does not name one.
    pub persona: Persona,
    /// Latency per request: an answer leaves this long after its request arrived.
    pub latency: Duration,
}

struct ServeState {
    cfg: FakeServer,
    ids: AtomicU64,
    /// The stored responses' conversations, for `previous_response_id`.
    conversations: std::sync::Mutex<crate::responses::Conversations>,
}

impl FakeServer {
    /// The router (for embedding in tests or another server).
    pub fn router(self) -> Router {
        let state = Arc::new(ServeState {
            cfg: self,
            ids: AtomicU64::new(1),
            conversations: Default::default(),
        });
        Router::new()
            .route("/v1/chat/completions", post(chat_completions))
            .route("/chat/completions", post(chat_completions))
            .route("/v1/messages", post(messages))
            .route("/v1/responses", post(responses::responses))
            .route("/responses", post(responses::responses))
            .route(
                "/v1/responses/{id}",
                get(responses::retrieve).delete(responses::delete),
            )
            .route(
                "/responses/{id}",
                get(responses::retrieve).delete(responses::delete),
            )
            .route("/v1/embeddings", post(embeddings))
            .route("/embeddings", post(embeddings))
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
        Some(m) if m.contains("attacker") => Persona::Attacker,
        Some(m) if m.contains("rewriter") => Persona::Rewriter,
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

/// Holds an answer until `latency` after its request arrived. The persona's work is done
/// first, inside that time: a latency-bound benchmark then measures the latency asked for,
/// not that plus the fake's own work on every request of a round queued on the same cores.
///
/// tokio's timer counts whole milliseconds and rounds a deadline up, so its sleep alone
/// answered 1.3 to 3.8 ms late (a sequential client saw 102.3 ms for 100, median of 20):
/// over the 32 rounds of the latency-bound benchmark that was about 60 ms of the "overhead"
/// it billed to gauntlet. The timer waits for all but the last [`FINE_WAIT`], a thread's
/// sleep (microseconds) for the rest.
async fn pause_until(state: &ServeState, arrived: tokio::time::Instant) {
    if state.cfg.latency.is_zero() {
        return;
    }
    let deadline = arrived + state.cfg.latency;
    if let Some(coarse) = deadline.checked_sub(FINE_WAIT) {
        tokio::time::sleep_until(coarse).await;
    }
    let rest = deadline.saturating_duration_since(tokio::time::Instant::now());
    if !rest.is_zero() {
        // A blocking thread, not a worker: the runtime keeps serving other requests.
        let _ = tokio::task::spawn_blocking(move || std::thread::sleep(rest)).await;
    }
}

/// The part of an answer's latency waited with a thread's sleep rather than tokio's
/// millisecond timer, which rounds the deadline up to its next tick and its wait for events
/// up again: measured up to 2.5 ms late, so the last 4 are a thread's.
const FINE_WAIT: Duration = Duration::from_millis(4);

async fn chat_completions(State(state): State<Arc<ServeState>>, body: Bytes) -> Response {
    let arrived = tokio::time::Instant::now();
    let Ok(req) = serde_json::from_slice::<Value>(&body) else {
        return bad_request("the request body is not valid JSON");
    };
    let answer = chat_completion(&state, &req);
    pause_until(&state, arrived).await;
    answer
}

fn chat_completion(state: &ServeState, req: &Value) -> Response {
    let model = req.get("model").and_then(Value::as_str);
    let p = persona_for(state, model);
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
    let full = openai::response_to_wire(model_name, &reply, finish, usage, id);
    if req.get("stream").and_then(Value::as_bool) == Some(true) {
        let include_usage = req
            .pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            == Some(true);
        return event_stream(openai_stream(&full, include_usage));
    }
    json_response(StatusCode::OK, &full)
}

/// A streamed answer: `text/event-stream`, sent whole (the fake has it at once).
fn event_stream(body: String) -> Response {
    (
        StatusCode::OK,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body,
    )
        .into_response()
}

/// Cuts text into a few pieces (about four words each, spaces kept), so that a client reads
/// more than one delta as it would from a real model; `""` is no pieces.
fn pieces(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut words = 0;
    for (i, c) in text.char_indices() {
        if c == ' ' {
            words += 1;
            if words == 4 {
                out.push(&text[start..=i]);
                start = i + 1;
                words = 0;
            }
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// An OpenAI chat completion as the stream of `chat.completion.chunk`s the API sends: the
/// role, the content in pieces, each tool call's id and name then its arguments in pieces,
/// the finish reason, and (with `include_usage`) a last chunk with no choices and the usage,
/// every earlier one carrying `"usage": null`; then `[DONE]`.
fn openai_stream(full: &Value, include_usage: bool) -> String {
    let choice = &full["choices"][0];
    let msg = &choice["message"];
    let mut body = String::new();
    let mut chunk = |delta: Value, finish: Value| {
        let mut c = json!({
            "id": full["id"], "object": "chat.completion.chunk", "created": full["created"],
            "model": full["model"],
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
        });
        if include_usage {
            c["usage"] = Value::Null;
        }
        body.push_str(&format!("data: {c}\n\n"));
    };
    chunk(json!({ "role": "assistant", "content": "" }), Value::Null);
    for p in pieces(msg["content"].as_str().unwrap_or("")) {
        chunk(json!({ "content": p }), Value::Null);
    }
    for (i, call) in msg["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        chunk(
            json!({ "tool_calls": [{
                "index": i, "id": call["id"], "type": "function",
                "function": { "name": call["function"]["name"], "arguments": "" },
            }] }),
            Value::Null,
        );
        for p in pieces(call["function"]["arguments"].as_str().unwrap_or("")) {
            chunk(
                json!({ "tool_calls": [{ "index": i, "function": { "arguments": p } }] }),
                Value::Null,
            );
        }
    }
    chunk(json!({}), choice["finish_reason"].clone());
    if include_usage {
        let last = json!({
            "id": full["id"], "object": "chat.completion.chunk", "created": full["created"],
            "model": full["model"], "choices": [], "usage": full["usage"],
        });
        body.push_str(&format!("data: {last}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    body
}

/// An Anthropic message as the Messages API streams it: `message_start` (no content yet,
/// the input tokens), per content block a `content_block_start`, its deltas (`text_delta`
/// pieces, or `input_json_delta` pieces of the tool input's JSON) and a
/// `content_block_stop`, then `message_delta` with the stop reason and the output tokens,
/// and `message_stop`.
fn anthropic_stream(full: &Value) -> String {
    let mut body = String::new();
    let mut event = |name: &str, data: Value| {
        body.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    };
    let mut start = full.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["usage"] = json!({ "input_tokens": full["usage"]["input_tokens"], "output_tokens": 1 });
    event(
        "message_start",
        json!({ "type": "message_start", "message": start }),
    );
    for (i, block) in full["content"].as_array().into_iter().flatten().enumerate() {
        let (opened, deltas): (Value, Vec<Value>) = match block["type"].as_str() {
            Some("tool_use") => {
                let input = block["input"].to_string();
                (
                    json!({ "type": "tool_use", "id": block["id"], "name": block["name"], "input": {} }),
                    pieces(&input)
                        .into_iter()
                        .map(|p| json!({ "type": "input_json_delta", "partial_json": p }))
                        .collect(),
                )
            }
            _ => (
                json!({ "type": "text", "text": "" }),
                pieces(block["text"].as_str().unwrap_or(""))
                    .into_iter()
                    .map(|p| json!({ "type": "text_delta", "text": p }))
                    .collect(),
            ),
        };
        event(
            "content_block_start",
            json!({ "type": "content_block_start", "index": i, "content_block": opened }),
        );
        for d in deltas {
            event(
                "content_block_delta",
                json!({ "type": "content_block_delta", "index": i, "delta": d }),
            );
        }
        event(
            "content_block_stop",
            json!({ "type": "content_block_stop", "index": i }),
        );
    }
    event(
        "message_delta",
        json!({
            "type": "message_delta",
            "delta": { "stop_reason": full["stop_reason"], "stop_sequence": null },
            "usage": { "output_tokens": full["usage"]["output_tokens"] },
        }),
    );
    event("message_stop", json!({ "type": "message_stop" }));
    body
}

async fn messages(State(state): State<Arc<ServeState>>, body: Bytes) -> Response {
    let arrived = tokio::time::Instant::now();
    let Ok(req) = serde_json::from_slice::<Value>(&body) else {
        return bad_request("the request body is not valid JSON");
    };
    let answer = anthropic_message(&state, &req);
    pause_until(&state, arrived).await;
    answer
}

fn anthropic_message(state: &ServeState, req: &Value) -> Response {
    let model = req.get("model").and_then(Value::as_str);
    let p = persona_for(state, model);
    let messages = anthropic::messages_from_wire(req);
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
    let full = anthropic::response_to_wire(model.unwrap_or(p.model_id()), &reply, usage, id);
    if req.get("stream").and_then(Value::as_bool) == Some(true) {
        return event_stream(anthropic_stream(&full));
    }
    json_response(StatusCode::OK, &full)
}

/// `POST /v1/embeddings`: `{"model", "input": text or [texts]}` answered in the OpenAI
/// shape, one [`crate::embeddings::fake_embedding`] per text.
async fn embeddings(State(state): State<Arc<ServeState>>, body: Bytes) -> Response {
    let arrived = tokio::time::Instant::now();
    let Ok(req) = serde_json::from_slice::<Value>(&body) else {
        return bad_request("the request body is not valid JSON");
    };
    let texts: Vec<&str> = match req.get("input") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(items)) if !items.is_empty() => {
            match items.iter().map(Value::as_str).collect::<Option<Vec<_>>>() {
                Some(t) => t,
                None => return bad_request("`input` must be a text or a list of texts"),
            }
        }
        _ => return bad_request("`input` must be a text or a non-empty list of texts"),
    };
    let data: Vec<Value> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            json!({
                "object": "embedding",
                "index": i,
                "embedding": crate::embeddings::fake_embedding(t),
            })
        })
        .collect();
    let tokens: u64 = texts.iter().map(|t| approx_tokens(t)).sum();
    let model = req
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("gauntlet-fake-embedding");
    let answer = json_response(
        StatusCode::OK,
        &json!({
            "object": "list",
            "data": data,
            "model": model,
            "usage": { "prompt_tokens": tokens, "total_tokens": tokens },
        }),
    );
    pause_until(&state, arrived).await;
    answer
}

async fn models(State(state): State<Arc<ServeState>>) -> Response {
    // Each model once, the server's default first.
    let default = state.cfg.persona;
    let data: Vec<Value> = [default, Persona::Safe, Persona::Vulnerable]
        .into_iter()
        .enumerate()
        .filter(|(i, p)| *i == 0 || *p != default)
        .map(|(_, p)| json!({ "id": p.model_id(), "object": "model", "created": 0, "owned_by": "gauntlet" }))
        .collect();
    json_response(StatusCode::OK, &json!({ "object": "list", "data": data }))
}
