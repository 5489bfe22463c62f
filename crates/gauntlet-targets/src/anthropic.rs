//! The Anthropic Messages wire format: [`AnthropicModel`] (a [`ChatModel`]) and the
//! conversions to and from the wire, shared with `serve-fake` and the recording proxy.
//!
//! Tool use travels as content blocks: the model's `tool_use` blocks become tool calls, and
//! tool results go back as `tool_result` blocks in a user message. A `stop_reason` of
//! `refusal` (the platform's safety classifier stopping the answer) is a content-filter
//! block, the Anthropic equivalent of OpenAI's `content_filter`.

use gauntlet_core::redact::Redactor;
use gauntlet_core::target::{BoxFuture, TargetConfig, TargetError, TargetInfo, TrialContext};
use gauntlet_core::tools::ToolDef;
use gauntlet_core::trace::{Message, Role, ToolCallRequest, TraceRecorder, Usage};
use reqwest::header::HeaderValue;
use serde_json::{Map, Value, json};

use crate::chat::{ChatModel, ChatReply, ChatRequest};
use crate::error::{BuildError, WireError};
use crate::openai::{ApiEndpoint, ApiSetup, ImplicitKeyScope, base_url, declared_tool, key_header};

/// Default base URL.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// The API version header sent.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// `max_tokens` is required by the API; this is used when the config gives none.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;
/// The variable the key is read from when the config names none.
pub const ANTHROPIC_KEY_ENV: &str = "ANTHROPIC_API_KEY";
/// The variable the base URL is read from when the config gives none.
pub const ANTHROPIC_BASE_URL_ENV: &str = "ANTHROPIC_BASE_URL";

/// A model behind the Anthropic Messages API.
pub struct AnthropicModel {
    api: ApiEndpoint,
}

impl AnthropicModel {
    /// Builds the model from a config, reading the API key from the environment.
    pub fn new(cfg: &TargetConfig, redactor: &mut Redactor) -> Result<AnthropicModel, BuildError> {
        let base = base_url(cfg, ANTHROPIC_BASE_URL_ENV, ANTHROPIC_BASE_URL);
        let scope = ImplicitKeyScope {
            vendor_base: ANTHROPIC_BASE_URL,
            base_env: Some(ANTHROPIC_BASE_URL_ENV),
            vendor_suffixes: &[],
        };
        let mut setup =
            ApiSetup::start("anthropic", cfg, redactor, ANTHROPIC_KEY_ENV, &base, scope)?;
        setup.headers.insert(
            "anthropic-version",
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        if let Some(k) = &setup.key {
            setup.headers.insert("x-api-key", key_header(k)?);
        }
        let base = setup.base;
        let url = if base.ends_with("/messages") {
            base.to_owned()
        } else if base.ends_with("/v1") {
            format!("{base}/messages")
        } else {
            format!("{base}/v1/messages")
        };
        let model = cfg
            .model
            .clone()
            .ok_or(BuildError::NoModel { kind: "anthropic" })?;
        Ok(AnthropicModel {
            api: setup.finish(&url, model, redactor)?,
        })
    }

    fn body(&self, req: &ChatRequest<'_>) -> Value {
        let (system, messages) = messages_to_wire(req.messages);
        let cfg = &self.api.cfg;
        let mut body = Map::new();
        body.insert("model".into(), json!(self.api.model));
        body.insert(
            "max_tokens".into(),
            json!(cfg.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
        );
        if let Some(s) = system {
            body.insert("system".into(), json!(s));
        }
        body.insert("messages".into(), messages);
        if !req.tools.is_empty() {
            body.insert("tools".into(), tools_to_wire(req.tools));
        }
        if let Some(t) = cfg.temperature {
            body.insert("temperature".into(), json!(t));
        }
        self.api.merge_extra_body(&mut body);
        Value::Object(body)
    }
}

/// The system prompt and the messages in the Messages API shape. Consecutive tool results
/// are merged into one user message, as the API requires.
pub fn messages_to_wire(messages: &[Message]) -> (Option<String>, Value) {
    let mut system: Vec<&str> = Vec::new();
    let mut out: Vec<Value> = Vec::new();
    for m in messages {
        match m.role {
            Role::System => system.push(&m.content),
            Role::User => out.push(json!({ "role": "user", "content": m.content })),
            Role::Assistant => {
                let mut blocks = Vec::new();
                if !m.content.is_empty() {
                    blocks.push(json!({ "type": "text", "text": m.content }));
                }
                for c in &m.tool_calls {
                    blocks.push(json!({ "type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments }));
                }
                out.push(json!({ "role": "assistant", "content": blocks }));
            }
            Role::Tool => {
                let block = json!({
                    "type": "tool_result",
                    "tool_use_id": m.tool_call_id.clone().unwrap_or_default(),
                    "content": m.content,
                });
                match out.last_mut() {
                    Some(last)
                        if last["role"] == "user"
                            && last["content"]
                                .as_array()
                                .is_some_and(|a| a.iter().all(|b| b["type"] == "tool_result")) =>
                    {
                        if let Some(a) = last["content"].as_array_mut() {
                            a.push(block);
                        }
                    }
                    _ => out.push(json!({ "role": "user", "content": [block] })),
                }
            }
        }
    }
    let system = (!system.is_empty()).then(|| system.join("\n\n"));
    (system, Value::Array(out))
}

/// Tools in the Messages API shape.
pub fn tools_to_wire(tools: &[ToolDef]) -> Value {
    Value::Array(
        tools
            .iter()
            .map(|t| json!({ "name": t.name, "description": t.description, "input_schema": t.parameters }))
            .collect(),
    )
}

/// Reads a Messages API request (serve-fake and the proxy): the system prompt and the
/// messages, with tool-use blocks as tool calls and tool-result blocks as tool messages.
pub fn messages_from_wire(body: &Value) -> Vec<Message> {
    let mut out = Vec::new();
    match body.get("system") {
        Some(Value::String(s)) => out.push(Message::system(s.clone())),
        Some(Value::Array(parts)) => {
            let text: Vec<&str> = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            out.push(Message::system(text.join("\n\n")));
        }
        _ => {}
    }
    for m in body
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
        match m.get("content") {
            Some(Value::String(s)) => out.push(if role == "assistant" {
                Message::assistant(s.clone())
            } else {
                Message::user(s.clone())
            }),
            Some(Value::Array(blocks)) => {
                if role == "assistant" {
                    let mut msg = Message::assistant(String::new());
                    for b in blocks {
                        add_assistant_block(&mut msg, b);
                    }
                    out.push(msg);
                } else {
                    let mut text = String::new();
                    for b in blocks {
                        match b.get("type").and_then(Value::as_str) {
                            Some("tool_result") => {
                                let content = match b.get("content") {
                                    Some(Value::String(s)) => s.clone(),
                                    Some(Value::Array(p)) => p
                                        .iter()
                                        .filter_map(|x| x.get("text").and_then(Value::as_str))
                                        .collect::<Vec<_>>()
                                        .join(""),
                                    _ => String::new(),
                                };
                                let mut t = Message::tool_result(
                                    b.get("tool_use_id").and_then(Value::as_str).unwrap_or(""),
                                    "",
                                    content,
                                );
                                t.name = None;
                                out.push(t);
                            }
                            Some("text") => {
                                text.push_str(b.get("text").and_then(Value::as_str).unwrap_or(""))
                            }
                            _ => {}
                        }
                    }
                    if !text.is_empty() {
                        out.push(Message::user(text));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Adds one content block of an assistant turn to `msg`: text to its content, `tool_use` to
/// its tool calls; other blocks (thinking, a refusal's empty block) add nothing.
fn add_assistant_block(msg: &mut Message, b: &Value) {
    let text = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("");
    match b.get("type").and_then(Value::as_str) {
        Some("text") => msg.content.push_str(text("text")),
        Some("tool_use") => msg.tool_calls.push(ToolCallRequest {
            id: text("id").to_owned(),
            name: text("name").to_owned(),
            arguments: b.get("input").cloned().unwrap_or_else(|| json!({})),
            malformed: false,
        }),
        _ => {}
    }
}

/// Reads tools from a Messages API request body.
pub fn tools_from_wire(v: Option<&Value>) -> Vec<ToolDef> {
    let tools = v.and_then(Value::as_array).into_iter().flatten();
    tools
        .filter_map(|t| declared_tool(t, "input_schema"))
        .collect()
}

/// Maps a `stop_reason` to the finish reasons the chat loop understands.
fn finish_of(stop: Option<&str>) -> Option<String> {
    stop.map(|s| {
        match s {
            "end_turn" | "stop_sequence" | "pause_turn" => "stop",
            "tool_use" => "tool_calls",
            "max_tokens" => "length",
            "refusal" => "content_filter",
            other => other,
        }
        .to_owned()
    })
}

/// Parses a Messages API response body into a reply.
pub fn parse_response(v: &Value) -> Result<ChatReply, WireError> {
    let blocks = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or(WireError::NoContent)?;
    let mut message = Message::assistant(String::new());
    for b in blocks {
        add_assistant_block(&mut message, b);
    }
    let finish = finish_of(v.get("stop_reason").and_then(Value::as_str));
    Ok(ChatReply::from_body(
        message,
        v,
        ("input_tokens", "output_tokens"),
        finish,
    ))
}

/// A Messages API response body for a reply (serve-fake).
pub fn response_to_wire(model: &str, message: &Message, usage: Usage, id: u64) -> Value {
    let mut content = Vec::new();
    if !message.content.is_empty() {
        content.push(json!({ "type": "text", "text": message.content }));
    }
    for c in &message.tool_calls {
        content
            .push(json!({ "type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments }));
    }
    let stop = if message.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    json!({
        "id": format!("msg_{id:x}"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": null,
        "usage": { "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens },
    })
}

impl ChatModel for AnthropicModel {
    fn info(&self) -> TargetInfo {
        self.api.info.clone()
    }

    fn wire_body(&self, req: &ChatRequest<'_>) -> Option<Vec<u8>> {
        serde_json::to_vec(&self.body(req)).ok()
    }

    fn complete<'a>(
        &'a self,
        ctx: &'a TrialContext<'a>,
        req: ChatRequest<'a>,
        rec: &'a mut TraceRecorder,
    ) -> BoxFuture<'a, Result<ChatReply, TargetError>> {
        Box::pin(async move {
            let body = serde_json::to_vec(&self.body(&req))
                .map_err(|e| TargetError::Harness(e.to_string()))?;
            let resp = self.api.post(body, rec, None).await?;
            let v = self.api.client.json_body(&resp, rec)?;
            let reply = parse_response(&v).map_err(|e| {
                let raw = self.api.client.clip_body(&resp.body);
                TargetError::Protocol(format!("{e}; raw body: {raw}"))
            })?;
            // `content: []` (or only blocks that are neither text nor a tool call) is empty. A
            // refusal is a block, empty or not.
            self.api.finish(reply, &resp, ctx, rec)
        })
    }
}
