//! The built-in `fake` target: [`FakeModel`], a chat model answering as a [`Persona`] or
//! from the case's scripted replies.

use std::collections::BTreeMap;

use gauntlet_core::suite::ScriptedFinish;
use gauntlet_core::target::{BoxFuture, TargetError, TargetInfo, TrialContext};
use gauntlet_core::trace::{Message, Role, ToolCallRequest, TraceRecorder, Usage};

use crate::chat::{ChatModel, ChatReply, ChatRequest};
use crate::persona::{self, Persona};

/// What the fake target answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FakeMode {
    /// A built-in persona.
    Persona(Persona),
    /// The case's `scripted` replies, one per model call.
    Scripted,
}

/// The built-in deterministic chat model.
#[derive(Debug, Clone)]
pub struct FakeModel {
    mode: FakeMode,
}

impl FakeModel {
    /// A fake model for a persona name (`safe`, `vulnerable`, `scripted`).
    pub fn new(persona: &str) -> Result<FakeModel, String> {
        let mode = match persona {
            "scripted" => FakeMode::Scripted,
            p => FakeMode::Persona(Persona::parse(p).ok_or_else(|| {
                format!("unknown fake persona `{p}`; choose safe, vulnerable or scripted")
            })?),
        };
        Ok(FakeModel { mode })
    }

    fn label(&self) -> &'static str {
        match self.mode {
            FakeMode::Persona(p) => p.as_str(),
            FakeMode::Scripted => "scripted",
        }
    }
}

/// A rough token count (words), so that usage figures are not all zero.
pub fn approx_tokens(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}

impl ChatModel for FakeModel {
    fn info(&self) -> TargetInfo {
        TargetInfo {
            kind: "fake".into(),
            label: format!("fake:{}", self.label()),
            model: Some(match self.mode {
                FakeMode::Persona(p) => p.model_id().into(),
                FakeMode::Scripted => "gauntlet-fake-scripted".into(),
            }),
            base_url: None,
            settings: BTreeMap::new(),
        }
    }

    fn complete<'a>(
        &'a self,
        ctx: &'a TrialContext<'a>,
        req: ChatRequest<'a>,
        _rec: &'a mut TraceRecorder,
    ) -> BoxFuture<'a, Result<ChatReply, TargetError>> {
        Box::pin(async move {
            let calls_so_far = req
                .messages
                .iter()
                .filter(|m| m.role == Role::Assistant)
                .count();
            let input_tokens = req.messages.iter().map(|m| approx_tokens(&m.content)).sum();
            let (message, finish, model) = match self.mode {
                FakeMode::Persona(p) => {
                    let r = persona::reply(p, req.messages, req.tools);
                    let finish = if r.tool_calls.is_empty() {
                        "stop"
                    } else {
                        "tool_calls"
                    };
                    (r.into_message(calls_so_far), finish, p.model_id())
                }
                FakeMode::Scripted => {
                    let Some(s) = ctx.case.scripted.get(calls_so_far) else {
                        return Err(TargetError::Harness(format!(
                            "case `{}` has {} scripted repl{} but the conversation needed reply {}; add more `scripted:` entries",
                            ctx.case.id,
                            ctx.case.scripted.len(),
                            if ctx.case.scripted.len() == 1 {
                                "y"
                            } else {
                                "ies"
                            },
                            calls_so_far + 1
                        )));
                    };
                    let finish = match s.finish {
                        ScriptedFinish::Error => {
                            return Err(TargetError::Transport(
                                "scripted transport failure".into(),
                            ));
                        }
                        ScriptedFinish::Timeout => {
                            return Err(TargetError::Timeout("scripted timeout".into()));
                        }
                        ScriptedFinish::ContentFilter => "content_filter",
                        ScriptedFinish::Length => "length",
                        ScriptedFinish::Stop if !s.tool_calls.is_empty() => "tool_calls",
                        ScriptedFinish::Stop => "stop",
                    };
                    let mut m = Message::assistant(s.content.clone().unwrap_or_default());
                    m.tool_calls = s
                        .tool_calls
                        .iter()
                        .enumerate()
                        .map(|(i, c)| ToolCallRequest {
                            id: format!("call_{calls_so_far}_{i}"),
                            name: c.name.clone(),
                            arguments: c.arguments.clone(),
                            malformed: false,
                        })
                        .collect();
                    (m, finish, "gauntlet-fake-scripted")
                }
            };
            let output_tokens = approx_tokens(&message.content);
            Ok(ChatReply {
                message,
                model: Some(model.to_owned()),
                usage: Usage {
                    input_tokens,
                    output_tokens,
                },
                finish_reason: Some(finish.to_owned()),
                attempts: 1,
            })
        })
    }
}
