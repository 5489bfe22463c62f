//! The OpenAI Responses API (`POST /v1/responses`, what `client.responses.create` and the
//! OpenAI Agents SDK speak): [`ResponsesModel`], a [`ChatModel`] over it (the
//! `openai-responses:MODEL` target), and the conversions to and from its wire shared with
//! `serve-fake` and the recording proxy ([`wire`], [`stream`]).
//!
//! The model sends the whole conversation as `input` items every call (`store: false`, no
//! `previous_response_id`), as the chat-completions target sends its `messages`: a trial is
//! then replayable and cacheable from its request alone, and nothing of a red-team run is
//! kept on the vendor's side. A reply may come as one JSON object or, when `extra_body` asks
//! for `stream: true`, as the API's event stream, read back into the same response. Keys,
//! retries, rate limits and the classification of errors are the chat target's
//! (`ApiEndpoint`).

mod memory;
pub mod stream;
pub mod wire;

pub use memory::Conversations;

#[cfg(test)]
mod tests;

use gauntlet_core::redact::Redactor;
use gauntlet_core::target::{BoxFuture, TargetConfig, TargetError, TargetInfo, TrialContext};
use gauntlet_core::trace::{TraceRecorder, TransportKind};
use serde_json::{Map, Value, json};

use crate::chat::{ChatModel, ChatReply, ChatRequest};
use crate::client::ApiResponse;
use crate::error::{BuildError, WireError};
use crate::openai::{ApiEndpoint, is_content_filter_error, open_endpoint};

/// A model behind an OpenAI Responses API endpoint.
pub struct ResponsesModel {
    api: ApiEndpoint,
}

impl ResponsesModel {
    /// Builds the model from a config, reading the API key as the chat-completions target
    /// does (`OPENAI_API_KEY`, or `AZURE_OPENAI_API_KEY` with an `azure:` section).
    pub fn new(cfg: &TargetConfig, redactor: &mut Redactor) -> Result<ResponsesModel, BuildError> {
        let api = open_endpoint("openai-responses", cfg, redactor, "responses", |az| {
            format!("openai/responses?api-version={}", az.api_version)
        })?;
        Ok(ResponsesModel { api })
    }

    /// The request body: the conversation, the tools, the sampling settings (`max_tokens` is
    /// sent as `max_output_tokens`, `response_format` as `text.format`; the API takes no
    /// seed), then `extra_body`.
    fn body(&self, req: &ChatRequest<'_>) -> Value {
        let cfg = &self.api.cfg;
        let (instructions, input) = wire::input_to_wire(req.messages);
        let mut body = Map::new();
        body.insert("model".into(), json!(self.api.model));
        if let Some(i) = instructions {
            body.insert("instructions".into(), json!(i));
        }
        body.insert("input".into(), input);
        if !req.tools.is_empty() {
            body.insert("tools".into(), wire::tools_to_wire(req.tools));
        }
        if let Some(t) = cfg.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if let Some(m) = cfg.max_tokens {
            body.insert("max_output_tokens".into(), json!(m));
        }
        if let Some(f) = &cfg.response_format {
            body.insert("text".into(), json!({ "format": { "type": f } }));
        }
        body.insert("store".into(), json!(false));
        self.api.merge_extra_body(&mut body);
        Value::Object(body)
    }

    /// Reads a 200 reply: a response object, or an event stream read into one. A body that
    /// is neither, or a response that reports its own failure, is an error recorded with
    /// the body's start; a failure a content filter caused is a block.
    fn read_reply(
        &self,
        resp: &ApiResponse,
        rec: &mut TraceRecorder,
    ) -> Result<ChatReply, TargetError> {
        let value = if stream::is_event_stream(&resp.body) {
            stream::read_events(&String::from_utf8_lossy(&resp.body))
        } else {
            serde_json::from_slice::<Value>(&resp.body).map_err(WireError::NotJson)
        };
        let raw = || self.api.client.clip_body(&resp.body);
        if let Ok(v) = &value
            && v.get("status").and_then(Value::as_str) == Some("failed")
            && is_content_filter_error(v)
        {
            let detail = format!("the response failed on a content filter: {}", raw());
            rec.transport(
                TransportKind::FilterBlock,
                Some(resp.status),
                detail.clone(),
            );
            return Err(TargetError::Blocked(detail));
        }
        value.and_then(|v| wire::parse_response(&v)).map_err(|e| {
            let detail = format!("{e}; raw body: {}", raw());
            rec.transport(TransportKind::Failed, Some(resp.status), detail.clone());
            match e {
                WireError::Failed(_) => TargetError::Transport(detail),
                _ => TargetError::Protocol(detail),
            }
        })
    }
}

impl ChatModel for ResponsesModel {
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
            let resp = self
                .api
                .post(body, rec, Some(is_content_filter_error))
                .await?;
            let reply = self.read_reply(&resp, rec)?;
            self.api.finish(reply, &resp, ctx, rec)
        })
    }
}
