//! The Responses API's JSON, both ways: a conversation as `instructions` and `input` items
//! ([`input_to_wire`]) and back ([`messages_from_request`]), tools in its flat function shape,
//! a response object read into a [`ChatReply`] ([`parse_response`]) and written from one
//! ([`response_to_wire`], for serve-fake).
//!
//! Readers are tolerant (a field of the wrong type is read as absent, an unknown item type
//! such as `reasoning` is skipped): the bodies come from servers and agents under test.

use gauntlet_core::tools::ToolDef;
use gauntlet_core::trace::{Message, Role, ToolCallRequest, Usage};
use serde_json::{Map, Value, json};

use crate::chat::ChatReply;
use crate::error::WireError;
use crate::openai::{arguments_text, content_text, declared_tool};

/// The system prompt (as `instructions`) and the other messages as `input` items: user and
/// assistant messages, each tool call a `function_call` item and each result a
/// `function_call_output` item, paired by `call_id`.
pub fn input_to_wire(messages: &[Message]) -> (Option<String>, Value) {
    let mut system: Vec<&str> = Vec::new();
    let mut items = Vec::with_capacity(messages.len());
    for m in messages {
        match m.role {
            Role::System => system.push(&m.content),
            Role::User => items.push(json!({ "role": "user", "content": m.content })),
            Role::Assistant => {
                if !m.content.is_empty() || m.tool_calls.is_empty() {
                    items.push(json!({ "role": "assistant", "content": m.content }));
                }
                for c in &m.tool_calls {
                    items.push(json!({
                        "type": "function_call",
                        "call_id": c.id,
                        "name": c.name,
                        "arguments": arguments_text(&c.arguments, c.malformed),
                    }));
                }
            }
            Role::Tool => items.push(json!({
                "type": "function_call_output",
                "call_id": m.tool_call_id.clone().unwrap_or_default(),
                "output": m.content,
            })),
        }
    }
    let system = (!system.is_empty()).then(|| system.join("\n\n"));
    (system, Value::Array(items))
}

/// Tools in the Responses API's function shape. `strict` is sent as false: the API's
/// default (true) refuses any schema that is not closed and fully required, which a suite's
/// tool schema need not be.
pub fn tools_to_wire(tools: &[ToolDef]) -> Value {
    Value::Array(
        tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                    "strict": false,
                })
            })
            .collect(),
    )
}

/// Reads the function tools of a request body (other tool types, such as `web_search`, are
/// not the agent's tools and are left out).
pub fn tools_from_wire(v: Option<&Value>) -> Vec<ToolDef> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|t| t.get("type").and_then(Value::as_str).unwrap_or("function") == "function")
        .filter_map(|t| declared_tool(t, "parameters"))
        .collect()
}

/// Tool arguments from the wire's JSON text; text that is not JSON is kept and marked.
fn arguments_from(raw: Option<&Value>) -> (Value, bool) {
    match raw {
        Some(Value::String(s)) if s.trim().is_empty() => (json!({}), false),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(v) => (v, false),
            Err(_) => (Value::String(s.clone()), true),
        },
        None | Some(Value::Null) => (json!({}), false),
        Some(other) => (other.clone(), false),
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// A `function_call` item as a tool call: its `call_id` (else its `id`) is what the result
/// answers.
fn call_from_item(item: &Value) -> ToolCallRequest {
    let (arguments, malformed) = arguments_from(item.get("arguments"));
    ToolCallRequest {
        id: str_of(item, "call_id")
            .or_else(|| str_of(item, "id"))
            .unwrap_or("")
            .to_owned(),
        name: str_of(item, "name").unwrap_or("").to_owned(),
        arguments,
        malformed,
    }
}

/// The text of a message's content or a tool's output: a string, or parts with `text`
/// (`input_text`, `output_text`) or a `refusal`.
pub fn parts_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| str_of(p, "text").or_else(|| str_of(p, "refusal")))
            .collect::<Vec<_>>()
            .join(""),
        other => content_text(other),
    }
}

/// Reads the conversation of a request body: `instructions` as the system message, then
/// `input` (a string is one user message). Consecutive `function_call` items join the
/// assistant message before them, as one turn's calls.
pub fn messages_from_request(req: &Value) -> Vec<Message> {
    let mut out = Vec::new();
    if let Some(i) = str_of(req, "instructions").filter(|i| !i.is_empty()) {
        out.push(Message::system(i));
    }
    match req.get("input") {
        Some(Value::String(s)) => out.push(Message::user(s.clone())),
        Some(Value::Array(items)) => {
            for item in items {
                push_item(&mut out, item);
            }
        }
        _ => {}
    }
    out
}

fn push_item(out: &mut Vec<Message>, item: &Value) {
    let kind = str_of(item, "type").unwrap_or("message");
    match kind {
        "message" => {
            let content = parts_text(item.get("content"));
            let msg = match str_of(item, "role") {
                Some("system" | "developer") => Message::system(content),
                Some("assistant") => Message::assistant(content),
                _ => Message::user(content),
            };
            out.push(msg);
        }
        "function_call" => {
            let call = call_from_item(item);
            match out.last_mut() {
                Some(last) if last.role == Role::Assistant => last.tool_calls.push(call),
                _ => {
                    let mut m = Message::assistant("");
                    m.tool_calls.push(call);
                    out.push(m);
                }
            }
        }
        "function_call_output" => {
            let id = str_of(item, "call_id").unwrap_or("").to_owned();
            out.push(Message {
                role: Role::Tool,
                content: parts_text(item.get("output")),
                tool_calls: Vec::new(),
                tool_call_id: Some(id),
                name: None,
            });
        }
        // Reasoning, item references and hosted tools' items are not the conversation.
        _ => {}
    }
}

/// Why generation stopped, in the chat loop's words: `length` for `max_output_tokens`,
/// `content_filter`, `tool_calls` when the reply asks for tools, else `stop`.
fn finish_reason(v: &Value, asks_tools: bool) -> String {
    if str_of(v, "status") == Some("incomplete") {
        let why = v
            .pointer("/incomplete_details/reason")
            .and_then(Value::as_str)
            .unwrap_or("incomplete");
        return match why {
            "max_output_tokens" => "length".into(),
            other => other.to_owned(),
        };
    }
    if asks_tools { "tool_calls" } else { "stop" }.into()
}

/// The message of a failed response's `error`, or its status.
fn failure(v: &Value) -> String {
    let e = v.get("error");
    let message = e.and_then(|e| str_of(e, "message")).unwrap_or("no message");
    match e.and_then(|e| str_of(e, "code")) {
        Some(code) => format!("{code}: {message}"),
        None => message.to_owned(),
    }
}

/// Reads a response object into a reply: the text of its `message` items (a refusal's text
/// too) and its `function_call` items as tool calls; other items are skipped. A response
/// whose `status` is `failed` is an error with its message.
pub fn parse_response(v: &Value) -> Result<ChatReply, WireError> {
    if str_of(v, "status") == Some("failed") {
        return Err(WireError::Failed(failure(v)));
    }
    let items = v
        .get("output")
        .and_then(Value::as_array)
        .ok_or(WireError::NoOutput)?;
    let mut text = String::new();
    let mut calls = Vec::new();
    for item in items {
        match str_of(item, "type") {
            Some("message") => text.push_str(&parts_text(item.get("content"))),
            Some("function_call") => calls.push(call_from_item(item)),
            _ => {}
        }
    }
    for (i, c) in calls.iter_mut().enumerate() {
        if c.id.is_empty() {
            c.id = format!("call_{i}");
        }
    }
    let finish = finish_reason(v, !calls.is_empty());
    let mut message = Message::assistant(text);
    message.tool_calls = calls;
    Ok(ChatReply::from_body(
        message,
        v,
        ("input_tokens", "output_tokens"),
        Some(finish),
    ))
}

/// The output items of a reply: a `message` with one `output_text` part when it says
/// something (or asks for nothing), then one `function_call` item per call.
fn output_items(message: &Message, id: u64) -> Vec<Value> {
    let mut out = Vec::new();
    if !message.content.is_empty() || message.tool_calls.is_empty() {
        out.push(json!({
            "id": format!("msg_{id:x}"),
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [{
                "type": "output_text", "text": message.content, "annotations": [], "logprobs": [],
            }],
        }));
    }
    for (i, c) in message.tool_calls.iter().enumerate() {
        out.push(json!({
            "id": format!("fc_{id:x}_{i}"),
            "type": "function_call",
            "status": "completed",
            "call_id": c.id,
            "name": c.name,
            "arguments": arguments_text(&c.arguments, c.malformed),
        }));
    }
    out
}

/// What a response echoes of its request (serve-fake): the model, the instructions, the
/// tools, the previous response's id.
#[derive(Debug, Clone, Copy, Default)]
pub struct Echo<'a> {
    /// The model named.
    pub model: &'a str,
    /// The request's `instructions`.
    pub instructions: Option<&'a Value>,
    /// The request's `tools`.
    pub tools: Option<&'a Value>,
    /// The request's `previous_response_id`.
    pub previous_response_id: Option<&'a str>,
}

/// A complete response object for a reply (serve-fake), as the API returns it.
pub fn response_to_wire(echo: Echo<'_>, message: &Message, usage: Usage, id: u64) -> Value {
    let mut o = Map::new();
    o.insert("id".into(), json!(format!("resp_{id:x}")));
    o.insert("object".into(), json!("response"));
    o.insert("created_at".into(), json!(0));
    o.insert("status".into(), json!("completed"));
    o.insert("error".into(), Value::Null);
    o.insert("incomplete_details".into(), Value::Null);
    o.insert(
        "instructions".into(),
        echo.instructions.cloned().unwrap_or(Value::Null),
    );
    o.insert("max_output_tokens".into(), Value::Null);
    o.insert("model".into(), json!(echo.model));
    o.insert("output".into(), Value::Array(output_items(message, id)));
    o.insert("parallel_tool_calls".into(), json!(true));
    o.insert(
        "previous_response_id".into(),
        json!(echo.previous_response_id),
    );
    o.insert("store".into(), json!(true));
    o.insert("temperature".into(), json!(1.0));
    o.insert("text".into(), json!({ "format": { "type": "text" } }));
    o.insert("tool_choice".into(), json!("auto"));
    o.insert(
        "tools".into(),
        echo.tools.cloned().unwrap_or_else(|| json!([])),
    );
    o.insert("top_p".into(), json!(1.0));
    o.insert("truncation".into(), json!("disabled"));
    o.insert(
        "usage".into(),
        json!({
            "input_tokens": usage.input_tokens,
            "input_tokens_details": { "cached_tokens": 0 },
            "output_tokens": usage.output_tokens,
            "output_tokens_details": { "reasoning_tokens": 0 },
            "total_tokens": usage.input_tokens + usage.output_tokens,
        }),
    );
    o.insert("metadata".into(), json!({}));
    Value::Object(o)
}
