//! serve-fake's `POST /v1/responses`: the personas behind the OpenAI Responses API, plain or
//! streamed (`stream: true`, the API's events with text in a few deltas), with function
//! calls, and multi-turn both ways: the full conversation as `input`, or the new items with
//! the `previous_response_id` of a stored response ([`Conversations`], a bounded memory of
//! the last responses, as the API keeps the ones stored); a stored response is retrieved
//! (`GET /v1/responses/{id}`) and deleted (`DELETE`) as on the API. Listing its input items
//! and cancelling (a background response's) are not served.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use gauntlet_core::trace::{Message, Role, Usage};
use serde_json::Value;

use super::{
    ServeState, bad_request, event_stream, json_response, pause_until, persona_for, pieces,
};
use crate::fake::approx_tokens;
use crate::persona;
use crate::responses::{Conversations, stream, wire};

fn lock(m: &Mutex<Conversations>) -> std::sync::MutexGuard<'_, Conversations> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

pub(super) async fn responses(State(state): State<Arc<ServeState>>, body: Bytes) -> Response {
    let arrived = tokio::time::Instant::now();
    let Ok(req) = serde_json::from_slice::<Value>(&body) else {
        return bad_request("the request body is not valid JSON");
    };
    let answer = response(&state, &req);
    pause_until(&state, arrived).await;
    answer
}

/// The conversation a request continues: the stored one its `previous_response_id` names
/// (after its own system prompt), then its input.
fn conversation(state: &ServeState, req: &Value) -> Result<Vec<Message>, String> {
    let messages = wire::messages_from_request(req);
    let Some(prev) = req.get("previous_response_id").and_then(Value::as_str) else {
        return Ok(messages);
    };
    lock(&state.conversations)
        .continued(prev, messages)
        .ok_or_else(|| format!("Previous response with id '{prev}' not found."))
}

fn response(state: &ServeState, req: &Value) -> Response {
    let model = req.get("model").and_then(Value::as_str);
    let p = persona_for(state, model);
    let messages = match conversation(state, req) {
        Ok(m) => m,
        Err(e) => return bad_request(&e),
    };
    if !messages.iter().any(|m| m.role != Role::System) {
        return bad_request("`input` must be a non-empty string or array of items");
    }
    let tools = wire::tools_from_wire(req.get("tools"));
    let id = state.ids.fetch_add(1, Ordering::Relaxed);
    let reply = persona::reply(p, &messages, &tools).into_message(id as usize);
    let usage = Usage {
        input_tokens: messages.iter().map(|m| approx_tokens(&m.content)).sum(),
        output_tokens: approx_tokens(&reply.content),
    };
    let echo = wire::Echo {
        model: model.unwrap_or(p.model_id()),
        instructions: req.get("instructions"),
        tools: req.get("tools"),
        previous_response_id: req.get("previous_response_id").and_then(Value::as_str),
    };
    let full = wire::response_to_wire(echo, &reply, usage, id);
    if req.get("store").and_then(Value::as_bool) != Some(false) {
        let rid = full["id"].as_str().unwrap_or_default();
        let mut memory = lock(&state.conversations);
        memory.keep(rid, &messages, &reply);
        memory.keep_object(rid, full.clone());
    }
    if req.get("stream").and_then(Value::as_bool) == Some(true) {
        return event_stream(stream::events(&full, pieces));
    }
    json_response(StatusCode::OK, &full)
}

/// `GET /v1/responses/{id}`: a stored response, as it was answered.
pub(super) async fn retrieve(
    State(state): State<Arc<ServeState>>,
    Path(id): Path<String>,
) -> Response {
    match lock(&state.conversations).object(&id) {
        Some(object) => json_response(StatusCode::OK, &object),
        None => not_found(&id),
    }
}

/// `DELETE /v1/responses/{id}`: forgets a stored response; it can no longer be retrieved or
/// continued.
pub(super) async fn delete(
    State(state): State<Arc<ServeState>>,
    Path(id): Path<String>,
) -> Response {
    if !lock(&state.conversations).forget(&id) {
        return not_found(&id);
    }
    let body = serde_json::json!({ "id": id, "object": "response", "deleted": true });
    json_response(StatusCode::OK, &body)
}

fn not_found(id: &str) -> Response {
    let body = serde_json::json!({ "error": {
        "message": format!("Response with id '{id}' not found."),
        "type": "invalid_request_error", "param": null, "code": null,
    }});
    json_response(StatusCode::NOT_FOUND, &body)
}
