//! Streaming: a complete answer replayed as one minimal SSE stream in the wire's format
//! ([`sse_response`]), for agents that asked for `stream: true` (the upstream was asked for
//! the whole answer at once).

use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::Wire;

pub(super) fn sse_response(wire: Wire, v: &Value, include_usage: bool) -> Response {
    let body = match wire {
        Wire::OpenAi => openai_sse(v, include_usage),
        Wire::Anthropic => anthropic_sse(v),
        Wire::Responses => crate::responses::stream::events(v, crate::responses::stream::whole),
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
pub(super) fn anthropic_sse(v: &Value) -> String {
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
