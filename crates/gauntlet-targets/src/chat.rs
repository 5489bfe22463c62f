//! The chat-model adapter: [`ChatModel`] (one completion call) and [`ChatTarget`], which turns
//! any chat model into a [`Target`] by running the conversation and the tool loop itself.
//!
//! The loop: send the history; if the reply asks for tools, hand each call to the runner's
//! [`ToolHost`], append the results and ask again, until the model answers in text or the
//! step limit is reached. Every call is an LLM span in the trace. A reply stopped by a
//! content filter ends the trial as `blocked`, but what it carried is recorded as the turn's
//! answer first ([`record_filtered_reply`]), so that a leak the filter flagged is still graded.

use std::sync::Arc;
use std::time::Instant;

use gauntlet_core::context::with_documents;
use gauntlet_core::target::{
    BoxFuture, Session, Target, TargetError, TargetInfo, ToolHost, TrialContext, TurnAnswer,
};
use gauntlet_core::tools::ToolDef;
use gauntlet_core::trace::{
    Approval, Message, Role, ToolSpanInput, TraceRecorder, TransportKind, Usage,
};

/// Most model calls in one turn unless the case says otherwise.
pub const DEFAULT_MAX_STEPS: u32 = 12;

/// A request to a chat model.
#[derive(Debug, Clone)]
pub struct ChatRequest<'a> {
    /// The conversation so far (system prompt first, when there is one).
    pub messages: &'a [Message],
    /// Tools the model may call.
    pub tools: &'a [ToolDef],
}

/// A chat model's reply.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatReply {
    /// The assistant message (text and/or tool calls).
    pub message: Message,
    /// Model id as reported.
    pub model: Option<String>,
    /// Token usage.
    pub usage: Usage,
    /// Why generation stopped.
    pub finish_reason: Option<String>,
    /// Attempts made (retries of infrastructure failures included).
    pub attempts: u32,
    /// The agent that gave the reply, when the model reports one (multi-agent fixtures).
    pub agent: Option<String>,
    /// The reply came from the response cache ([`crate::cache::CachedModel`]): no request
    /// was made, and the span is marked so that the trial reads as a replay.
    pub cached: bool,
}

impl ChatReply {
    /// A reply as a vendor's response body gave it: the model it names (`model`) and the
    /// token counts under `usage` by the vendor's names for them (0 when absent), one
    /// attempt, no agent, not cached.
    pub(crate) fn from_body(
        message: Message,
        body: &serde_json::Value,
        tokens: (&str, &str),
        finish_reason: Option<String>,
    ) -> ChatReply {
        let count = |k: &str| {
            body.get("usage")
                .and_then(|u| u.get(k))
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0)
        };
        ChatReply {
            message,
            model: body
                .get("model")
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned),
            usage: Usage {
                input_tokens: count(tokens.0),
                output_tokens: count(tokens.1),
            },
            finish_reason,
            attempts: 1,
            agent: None,
            cached: false,
        }
    }
}

/// Whether a message says nothing: no text but blanks, and no tool call.
pub fn says_nothing(message: &Message) -> bool {
    message.tool_calls.is_empty() && message.content.trim().is_empty()
}

/// Recorded as the error of a tool call a filtered reply asked for, which is never run.
pub const FILTERED_CALL: &str = "not run: the reply asking for it was stopped by a content filter";

/// Records what a reply stopped by a content filter still carried, as the answer to `user`
/// and as tool spans for the calls it asked for (not run), so that violation checks grade
/// it: a filter that flags an answer does not take back what the answer said. A reply with
/// nothing in it records nothing, and the blocked trial stays without evidence.
pub fn record_filtered_reply(rec: &mut TraceRecorder, user: &str, message: &Message) {
    if says_nothing(message) {
        return;
    }
    for call in &message.tool_calls {
        rec.tool_call(ToolSpanInput {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            output: None,
            error: Some(FILTERED_CALL.into()),
            duration_ms: 0,
            approval: Approval::NotRequired,
            side_effect: None,
        });
    }
    rec.turn(user.to_owned(), message.content.clone(), false);
}

/// One completion call against a chat model.
pub trait ChatModel: Send + Sync {
    /// Facts for the manifest.
    fn info(&self) -> TargetInfo;

    /// Sends the request. Transport events (retries, rate limits) go into `rec`.
    fn complete<'a>(
        &'a self,
        ctx: &'a TrialContext<'a>,
        req: ChatRequest<'a>,
        rec: &'a mut TraceRecorder,
    ) -> BoxFuture<'a, Result<ChatReply, TargetError>>;

    /// The exact body this model sends for `req` (messages, tools, sampling parameters,
    /// seed, extra fields), which the response cache keys on. `None`: the model sends no
    /// request (a fake persona answers from the case) and is never cached.
    fn wire_body(&self, _req: &ChatRequest<'_>) -> Option<Vec<u8>> {
        None
    }
}

impl ChatModel for Arc<dyn ChatModel> {
    fn info(&self) -> TargetInfo {
        (**self).info()
    }

    fn complete<'a>(
        &'a self,
        ctx: &'a TrialContext<'a>,
        req: ChatRequest<'a>,
        rec: &'a mut TraceRecorder,
    ) -> BoxFuture<'a, Result<ChatReply, TargetError>> {
        (**self).complete(ctx, req, rec)
    }

    fn wire_body(&self, req: &ChatRequest<'_>) -> Option<Vec<u8>> {
        (**self).wire_body(req)
    }
}

/// A [`Target`] over a [`ChatModel`].
pub struct ChatTarget<M> {
    model: Arc<M>,
}

impl<M: ChatModel + 'static> ChatTarget<M> {
    /// Wraps a model.
    pub fn new(model: M) -> Self {
        Self {
            model: Arc::new(model),
        }
    }
}

impl<M: ChatModel + 'static> Target for ChatTarget<M> {
    fn info(&self) -> TargetInfo {
        self.model.info()
    }

    fn open<'a>(
        &'a self,
        ctx: &'a TrialContext<'a>,
    ) -> BoxFuture<'a, Result<Box<dyn Session + 'a>, TargetError>> {
        Box::pin(async move {
            let mut history = Vec::with_capacity(4);
            if let Some(sp) = ctx.system_prompt {
                history.push(Message::system(sp));
            }
            let s: Box<dyn Session + 'a> = Box::new(ChatSession {
                model: &*self.model,
                ctx,
                history,
                marks: Vec::new(),
            });
            Ok(s)
        })
    }
}

struct ChatSession<'a, M> {
    model: &'a M,
    ctx: &'a TrialContext<'a>,
    history: Vec<Message>,
    /// The history's length before each turn, so that a turn can be taken back.
    marks: Vec<usize>,
}

impl<M: ChatModel> Session for ChatSession<'_, M> {
    fn turn<'a>(
        &'a mut self,
        user: &'a str,
        tools: &'a mut dyn ToolHost,
        rec: &'a mut TraceRecorder,
    ) -> BoxFuture<'a, Result<TurnAnswer, TargetError>> {
        Box::pin(async move {
            self.marks.push(self.history.len());
            // Retrieved documents reach the model with the first turn, as a RAG app would
            // put them in front of the question (`gauntlet_core::context`).
            let first_turn = !self.history.iter().any(|m| m.role == Role::User);
            if first_turn && !self.ctx.case.documents.is_empty() {
                self.history.push(Message::user(with_documents(
                    &self.ctx.case.documents,
                    user,
                )));
            } else {
                self.history.push(Message::user(user));
            }
            let max_steps = self.ctx.case.max_steps.unwrap_or(DEFAULT_MAX_STEPS);
            for _ in 0..max_steps {
                let started = Instant::now();
                let reply = self
                    .model
                    .complete(
                        self.ctx,
                        ChatRequest {
                            messages: &self.history,
                            tools: self.ctx.tools,
                        },
                        rec,
                    )
                    .await?;
                let latency = started.elapsed().as_millis() as u64;
                if reply.agent.is_some() {
                    rec.set_agent(reply.agent.clone());
                }
                rec.llm_call(
                    reply.model.clone(),
                    self.history.clone(),
                    reply.message.clone(),
                    reply.usage,
                    latency,
                    reply.finish_reason.clone(),
                    reply.attempts,
                );
                if reply.cached {
                    rec.mark_last_llm_cached();
                }
                if reply.finish_reason.as_deref() == Some("content_filter") {
                    record_filtered_reply(rec, user, &reply.message);
                    rec.transport(
                        TransportKind::FilterBlock,
                        None,
                        "finish_reason: content_filter".into(),
                    );
                    return Err(TargetError::Blocked("finish_reason: content_filter".into()));
                }
                let calls = reply.message.tool_calls.clone();
                self.history.push(reply.message);
                if calls.is_empty() {
                    let truncated = reply.finish_reason.as_deref() == Some("length");
                    if truncated {
                        rec.transport(
                            TransportKind::Truncated,
                            None,
                            "reply cut by max_tokens".into(),
                        );
                    }
                    let content = self
                        .history
                        .last()
                        .map(|m| m.content.clone())
                        .unwrap_or_default();
                    return Ok(TurnAnswer { content, truncated });
                }
                for call in &calls {
                    let result = tools.call(call, rec);
                    self.history.push(result);
                }
            }
            Err(TargetError::Harness(format!(
                "the agent was still calling tools after {max_steps} model calls in one turn (max_steps)"
            )))
        })
    }

    fn rewind(&mut self) -> bool {
        match self.marks.pop() {
            Some(len) => {
                self.history.truncate(len);
                true
            }
            None => false,
        }
    }
}
