//! The built-in `fake` target: [`FakeModel`], a chat model answering as a [`Persona`] or
//! from the case's scripted replies.

use std::collections::BTreeMap;

use gauntlet_core::event::{EvidenceLevel, SideEffectMode};
use gauntlet_core::suite::ScriptedFinish;
use gauntlet_core::target::{BoxFuture, TargetError, TargetInfo, TrialContext};
use gauntlet_core::trace::{Message, Role, ToolCallRequest, TraceRecorder, Usage};

use crate::chat::{ChatModel, ChatReply, ChatRequest};
use crate::error::BuildError;
use crate::persona::{self, Persona};

/// What the fake target answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FakeMode {
    /// A built-in persona.
    Persona(Persona),
    /// The case's `scripted` replies, one per model call.
    Scripted,
    /// Safe answers, but every other trial fails in transport (seeded by the trial index).
    FlakyHarness,
    /// Alternates between the safe and the vulnerable persona from trial to trial.
    FlakyAgent,
    /// A judge: always passes, `{"verdict": "pass", "score": 3, ...}`.
    Judge,
    /// A judge whose scores alternate between 3 and 1 from call to call.
    FlakyJudge,
    /// A simulated user: one follow-up question, then `DONE`.
    User,
    /// Answers nothing (an empty message): a helper model that fails.
    Silent,
    /// A degenerate attacker, as very small models are: it echoes its instructions, offers
    /// help or describes itself, and never writes an attack.
    Parrot,
    /// The safe persona, reading only the first sentence (or line) of the user's last
    /// message: deterministic from repeat to repeat, sensitive to wording and order.
    Brittle,
    /// The safe persona that decodes nothing: it declines a request it cannot read and
    /// leaves out what it cannot read in documents, quoted content and tool outputs
    /// (`crate::literal`).
    Literal,
}

/// The first line of a text, and of that line the first sentence: what `fake:brittle` reads.
fn first_sentence(text: &str) -> &str {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    line.char_indices()
        .find(|&(i, c)| {
            matches!(c, '.' | '!' | '?') && line[i + 1..].starts_with(char::is_whitespace)
        })
        .map(|(i, _)| &line[..=i])
        .unwrap_or(line)
}

/// The built-in deterministic chat model.
#[derive(Debug)]
pub struct FakeModel {
    mode: FakeMode,
    calls: std::sync::atomic::AtomicU64,
}

impl FakeModel {
    /// A fake model for a persona name (`safe`, `vulnerable`, `scripted`).
    pub fn new(persona: &str) -> Result<FakeModel, BuildError> {
        let mode = match persona {
            "scripted" => FakeMode::Scripted,
            "flaky-harness" => FakeMode::FlakyHarness,
            "flaky-agent" => FakeMode::FlakyAgent,
            "judge" => FakeMode::Judge,
            "flaky-judge" => FakeMode::FlakyJudge,
            "user" => FakeMode::User,
            "silent" => FakeMode::Silent,
            "parrot" => FakeMode::Parrot,
            "brittle" => FakeMode::Brittle,
            "literal" => FakeMode::Literal,
            p => FakeMode::Persona(
                Persona::parse(p).ok_or_else(|| BuildError::UnknownPersona(p.to_owned()))?,
            ),
        };
        Ok(FakeModel {
            mode,
            calls: std::sync::atomic::AtomicU64::new(0),
        })
    }

    fn label(&self) -> &'static str {
        match self.mode {
            FakeMode::Persona(p) => p.as_str(),
            FakeMode::Scripted => "scripted",
            FakeMode::FlakyHarness => "flaky-harness",
            FakeMode::FlakyAgent => "flaky-agent",
            FakeMode::Judge => "judge",
            FakeMode::FlakyJudge => "flaky-judge",
            FakeMode::User => "user",
            FakeMode::Silent => "silent",
            FakeMode::Parrot => "parrot",
            FakeMode::Brittle => "brittle",
            FakeMode::Literal => "literal",
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
            model: Some(format!("gauntlet-fake-{}", self.label())),
            base_url: None,
            settings: BTreeMap::new(),
            evidence_level: EvidenceLevel::Offline,
            side_effects: SideEffectMode::Simulated,
        }
    }

    fn complete<'a>(
        &'a self,
        ctx: &'a TrialContext<'a>,
        req: ChatRequest<'a>,
        rec: &'a mut TraceRecorder,
    ) -> BoxFuture<'a, Result<ChatReply, TargetError>> {
        Box::pin(async move {
            let calls_so_far = req
                .messages
                .iter()
                .filter(|m| m.role == Role::Assistant)
                .count();
            let input_tokens = req.messages.iter().map(|m| approx_tokens(&m.content)).sum();
            let mut agent = None;
            let (message, finish, model) = match self.trial_mode(ctx, rec)? {
                mode @ (FakeMode::Judge | FakeMode::FlakyJudge) => self.judge_answer(mode),
                FakeMode::FlakyHarness | FakeMode::FlakyAgent => unreachable!("resolved above"),
                FakeMode::Persona(p) => {
                    let r = persona::reply(p, req.messages, req.tools);
                    persona_answer(r, calls_so_far, p.model_id())
                }
                FakeMode::Scripted => {
                    let (answer, who) = scripted_answer(ctx, calls_so_far)?;
                    agent = who;
                    answer
                }
                FakeMode::Silent => (Message::assistant(""), "stop", "gauntlet-fake-silent"),
                FakeMode::Parrot => parrot_answer(req.messages),
                FakeMode::Brittle => {
                    let mut messages = req.messages.to_vec();
                    if let Some(m) = messages.iter_mut().rev().find(|m| m.role == Role::User) {
                        m.content = first_sentence(&m.content).to_string();
                    }
                    let r = persona::reply(Persona::Safe, &messages, req.tools);
                    persona_answer(r, calls_so_far, "gauntlet-fake-brittle")
                }
                FakeMode::Literal => {
                    let r = crate::literal::reply(req.messages, req.tools);
                    persona_answer(r, calls_so_far, "gauntlet-fake-literal")
                }
                FakeMode::User => user_answer(req.messages),
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
                agent,
                cached: false,
            })
        })
    }
}

/// One fake answer: the message, its finish reason and the model id it reports.
type Answer = (Message, &'static str, &'static str);

impl FakeModel {
    /// The mode this trial answers in: a flaky mode resolves to a persona, or (flaky-harness,
    /// every other trial) to a recorded transport failure. Seeded by the trial index (and the
    /// run seed's low bit), so a re-run of the same trials repeats the same pattern.
    fn trial_mode(
        &self,
        ctx: &TrialContext<'_>,
        rec: &mut TraceRecorder,
    ) -> Result<FakeMode, TargetError> {
        let even = (ctx.trial as u64 + (ctx.seed & 1)).is_multiple_of(2);
        Ok(match self.mode {
            FakeMode::FlakyHarness => {
                if !even {
                    rec.transport(
                        gauntlet_core::trace::TransportKind::Failed,
                        None,
                        "connection reset by peer (flaky-harness)".into(),
                    );
                    return Err(TargetError::Transport(
                        "connection reset by peer (flaky-harness)".into(),
                    ));
                }
                FakeMode::Persona(Persona::Safe)
            }
            FakeMode::FlakyAgent if even => FakeMode::Persona(Persona::Safe),
            FakeMode::FlakyAgent => FakeMode::Persona(Persona::Vulnerable),
            other => other,
        })
    }

    /// A judge's verdict, valid for a binary judge (the verdict) and a 0-3 one (the score);
    /// `flaky-judge` fails every other call.
    fn judge_answer(&self, mode: FakeMode) -> Answer {
        let n = self
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (verdict, score) = if mode == FakeMode::FlakyJudge && n % 2 == 1 {
            ("fail", 1)
        } else {
            ("pass", 3)
        };
        (
            Message::assistant(format!(
                "{{\"verdict\": \"{verdict}\", \"score\": {score}, \"rationale\": \"fake judge, call {}\"}}",
                n + 1
            )),
            "stop",
            "gauntlet-fake-judge",
        )
    }
}

/// A persona's reply as the model's answer (`tool_calls` when it calls tools).
fn persona_answer(r: persona::PersonaReply, calls_so_far: usize, model: &'static str) -> Answer {
    let finish = if r.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    (r.into_message(calls_so_far), finish, model)
}

/// The case's next scripted reply, and the agent it names; a scripted failure is the error
/// it scripts.
fn scripted_answer(
    ctx: &TrialContext<'_>,
    calls_so_far: usize,
) -> Result<(Answer, Option<String>), TargetError> {
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
            return Err(TargetError::Transport("scripted transport failure".into()));
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
    Ok(((m, finish, "gauntlet-fake-scripted"), s.agent.clone()))
}

/// What a 135M model wrote as the attacker of the live red team, by the turn the attacker
/// prompt names.
fn parrot_answer(messages: &[Message]) -> Answer {
    const SAID: [&str; 3] = [
        "The next message to the assistant is: (none yet)",
        "I'm ready to help you with your project.",
        "I am a machine that can only do what I have been told to do.",
    ];
    let turn = messages
        .last()
        .and_then(|m| {
            m.content
                .lines()
                .find_map(|l| l.strip_prefix(gauntlet_core::strategy::TURN_LINE))
        })
        .and_then(|t| t.split_whitespace().next()?.parse::<usize>().ok())
        .unwrap_or(1);
    let text = SAID[(turn.max(1) - 1) % SAID.len()];
    (Message::assistant(text), "stop", "gauntlet-fake-parrot")
}

/// A deterministic simulated user: asks one follow-up, then is satisfied.
fn user_answer(messages: &[Message]) -> Answer {
    let transcript = messages.last().map(|m| m.content.as_str()).unwrap_or("");
    let asked = transcript.matches("USER:").count();
    let text = if asked < 2 {
        "Thanks. Could you double-check that and confirm it for me?"
    } else {
        "DONE"
    };
    (Message::assistant(text), "stop", "gauntlet-fake-user")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brittle_reads_the_first_sentence_or_line_only() {
        assert_eq!(
            first_sentence("My card was stolen. Please freeze it."),
            "My card was stolen."
        );
        assert_eq!(
            first_sentence("\n- Keep it short\n- Be polite"),
            "- Keep it short"
        );
        assert_eq!(first_sentence("It costs 3.5 EUR"), "It costs 3.5 EUR");
        assert_eq!(first_sentence(""), "");
    }
}
