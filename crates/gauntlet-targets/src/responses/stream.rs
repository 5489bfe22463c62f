//! The Responses API's server-sent events, both ways: a complete response written as the
//! stream the API sends ([`events`], for serve-fake and the proxy's replay) and a stream read
//! back into a response object ([`read_events`], for the target).
//!
//! The stream written is the whole lifecycle the official SDK's stream helper checks:
//! `response.created`, `response.in_progress`, per output item `response.output_item.added`,
//! its deltas (`response.content_part.added`, `response.output_text.delta`…`.done`,
//! `response.content_part.done`; or `response.function_call_arguments.delta`…`.done`) and
//! `response.output_item.done`, then `response.completed` with the usage. Every event carries
//! a `sequence_number`.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::error::WireError;

/// Appends SSE events, numbering them.
struct Writer {
    out: String,
    seq: u64,
}

impl Writer {
    fn event(&mut self, kind: &str, mut data: Value) {
        if let Some(o) = data.as_object_mut() {
            o.insert("type".into(), json!(kind));
            o.insert("sequence_number".into(), json!(self.seq));
        }
        self.seq += 1;
        self.out
            .push_str(&format!("event: {kind}\ndata: {data}\n\n"));
    }
}

/// A complete response as the stream of events the API sends. `split` cuts a text or the
/// arguments' JSON into the deltas sent (one piece is a valid stream).
pub fn events(full: &Value, split: fn(&str) -> Vec<&str>) -> String {
    let mut w = Writer {
        out: String::new(),
        seq: 0,
    };
    let mut start = full.clone();
    if let Some(o) = start.as_object_mut() {
        o.insert("status".into(), json!("in_progress"));
        o.insert("output".into(), json!([]));
        o.insert("usage".into(), Value::Null);
    }
    w.event("response.created", json!({ "response": start }));
    w.event("response.in_progress", json!({ "response": start }));
    let items = full
        .get("output")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (i, item) in items.iter().enumerate() {
        match item.get("type").and_then(Value::as_str) {
            Some("message") => message_events(&mut w, i, item, split),
            Some("function_call") => call_events(&mut w, i, item, split),
            _ => {
                w.event(
                    "response.output_item.added",
                    json!({ "output_index": i, "item": item }),
                );
            }
        }
        w.event(
            "response.output_item.done",
            json!({ "output_index": i, "item": item }),
        );
    }
    let last = match full.get("status").and_then(Value::as_str) {
        Some("incomplete") => "response.incomplete",
        Some("failed") => "response.failed",
        _ => "response.completed",
    };
    w.event(last, json!({ "response": full }));
    w.out
}

fn message_events(w: &mut Writer, i: usize, item: &Value, split: fn(&str) -> Vec<&str>) {
    let id = item.get("id").cloned().unwrap_or(Value::Null);
    let mut opened = item.clone();
    opened["status"] = json!("in_progress");
    opened["content"] = json!([]);
    w.event(
        "response.output_item.added",
        json!({ "output_index": i, "item": opened }),
    );
    let parts = item
        .get("content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (c, part) in parts.iter().enumerate() {
        let at = json!({ "item_id": id, "output_index": i, "content_index": c });
        let text = part.get("text").and_then(Value::as_str);
        let mut empty = part.clone();
        if text.is_some() {
            empty["text"] = json!("");
        }
        let mut added = at.clone();
        added["part"] = empty;
        w.event("response.content_part.added", added);
        if let Some(text) = text {
            for piece in split(text) {
                let mut d = at.clone();
                d["delta"] = json!(piece);
                d["logprobs"] = json!([]);
                w.event("response.output_text.delta", d);
            }
            let mut d = at.clone();
            d["text"] = json!(text);
            d["logprobs"] = json!([]);
            w.event("response.output_text.done", d);
        }
        let mut done = at;
        done["part"] = part.clone();
        w.event("response.content_part.done", done);
    }
}

fn call_events(w: &mut Writer, i: usize, item: &Value, split: fn(&str) -> Vec<&str>) {
    let id = item.get("id").cloned().unwrap_or(Value::Null);
    let args = item.get("arguments").and_then(Value::as_str).unwrap_or("");
    let mut opened = item.clone();
    opened["status"] = json!("in_progress");
    opened["arguments"] = json!("");
    w.event(
        "response.output_item.added",
        json!({ "output_index": i, "item": opened }),
    );
    for piece in split(args) {
        w.event(
            "response.function_call_arguments.delta",
            json!({ "item_id": id, "output_index": i, "delta": piece }),
        );
    }
    w.event(
        "response.function_call_arguments.done",
        json!({ "item_id": id, "output_index": i, "name": item.get("name"), "arguments": args }),
    );
}

/// The whole text as one piece (the proxy's replay).
pub fn whole(text: &str) -> Vec<&str> {
    if text.is_empty() {
        Vec::new()
    } else {
        vec![text]
    }
}

/// Whether a reply body is a stream of events rather than one JSON object.
pub fn is_event_stream(body: &[u8]) -> bool {
    let start = body
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(body.len());
    let rest = &body[start..];
    rest.starts_with(b"event:") || rest.starts_with(b"data:") || rest.starts_with(b":")
}

/// Output items as the deltas built them, for a terminal event whose response carries no
/// `output` (the API may leave it out of a long stream's last event).
#[derive(Default)]
struct Assembled {
    items: BTreeMap<u64, Value>,
}

impl Assembled {
    fn apply(&mut self, kind: &str, ev: &Value) {
        let Some(i) = ev.get("output_index").and_then(Value::as_u64) else {
            return;
        };
        match kind {
            "response.output_item.added" | "response.output_item.done" => {
                if let Some(item) = ev.get("item") {
                    self.items.insert(i, item.clone());
                }
            }
            "response.output_text.delta" => {
                let c = ev.get("content_index").and_then(Value::as_u64).unwrap_or(0);
                let delta = ev.get("delta").and_then(Value::as_str).unwrap_or("");
                let Some(content) = self
                    .items
                    .get_mut(&i)
                    .and_then(|it| it.get_mut("content"))
                    .and_then(Value::as_array_mut)
                else {
                    return;
                };
                while content.len() as u64 <= c {
                    content.push(json!({ "type": "output_text", "text": "" }));
                }
                if let Some(Value::String(s)) = content[c as usize].get_mut("text") {
                    s.push_str(delta);
                }
            }
            "response.function_call_arguments.delta" => {
                let delta = ev.get("delta").and_then(Value::as_str).unwrap_or("");
                if let Some(Value::String(s)) = self
                    .items
                    .get_mut(&i)
                    .and_then(|it| it.get_mut("arguments"))
                {
                    s.push_str(delta);
                }
            }
            _ => {}
        }
    }
}

/// Reads a stream of events into the response object of its terminal event
/// (`response.completed`, `.incomplete` or `.failed`), its output rebuilt from the item
/// events when the terminal event leaves it out. An `error` event, or a stream that ends
/// before a terminal event, is an error; lines that are not JSON are skipped.
pub fn read_events(body: &str) -> Result<Value, WireError> {
    let mut built = Assembled::default();
    for data in data_blocks(body) {
        let Ok(ev) = serde_json::from_str::<Value>(&data) else {
            continue;
        };
        let kind = ev.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "response.completed" | "response.incomplete" | "response.failed" => {
                let mut resp = ev.get("response").cloned().unwrap_or_else(|| json!({}));
                let has_output = resp
                    .get("output")
                    .and_then(Value::as_array)
                    .is_some_and(|o| !o.is_empty());
                if !has_output && let Some(o) = resp.as_object_mut() {
                    o.insert(
                        "output".into(),
                        Value::Array(built.items.into_values().collect()),
                    );
                }
                return Ok(resp);
            }
            "error" => {
                let e = ev.get("error").unwrap_or(&ev);
                let msg = e
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("no message");
                return Err(WireError::Failed(msg.to_owned()));
            }
            _ => built.apply(kind, &ev),
        }
    }
    Err(WireError::StreamCut)
}

/// The `data:` of each event (its lines joined), events parted by a blank line (`\n` or
/// `\r\n` line ends alike).
fn data_blocks(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for line in body.lines() {
        if line.is_empty() {
            out.extend(cur.take());
            continue;
        }
        if let Some(d) = line.strip_prefix("data:") {
            let d = d.strip_prefix(' ').unwrap_or(d);
            match &mut cur {
                Some(c) => {
                    c.push('\n');
                    c.push_str(d);
                }
                None => cur = Some(d.to_owned()),
            }
        }
    }
    out.extend(cur);
    out
}
