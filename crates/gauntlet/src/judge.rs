//! Models that play a part in a run other than the agent: [`ModelJudge`] adapts a chat model
//! target (`--judge SPEC`) to the graders' [`JudgeBackend`], and [`ModelUser`] plays the user
//! of cases with a `simulated_user` (`--user-model SPEC`).

use std::sync::Arc;

use gauntlet_core::suite::Case;
use gauntlet_core::target::{BoxFuture, TargetConfig, TrialContext};
use gauntlet_core::trace::{Message, TraceRecorder};
use gauntlet_graders::judge::{JUDGE_PROMPT_VERSION, JudgeBackend};
use gauntlet_targets::chat::{ChatModel, ChatRequest};

/// A chat model used as a judge.
pub struct ModelJudge {
    model: Arc<dyn ChatModel>,
    label: String,
    case: Case,
}

impl ModelJudge {
    /// Builds the judge from a target spec; secrets it reads go to `redactor`.
    pub fn new(
        cfg: &TargetConfig,
        redactor: &mut gauntlet_core::redact::Redactor,
    ) -> Result<ModelJudge, String> {
        let model = gauntlet_targets::build_chat_model(cfg, redactor).map_err(|e| e.to_string())?;
        let label = model.info().label;
        // The chat adapters take a trial context; a judge call is not a trial, so it gets a
        // fixed, empty one.
        let case: Case = serde_json::from_value(serde_json::json!({
            "id": "judge", "input": "", "expect": [{"contains": "x"}]
        }))
        .map_err(|e| e.to_string())?;
        Ok(ModelJudge { model, label, case })
    }

    /// `model, prompt version`, for the manifest.
    pub fn describe(&self) -> String {
        format!("{} (prompt {JUDGE_PROMPT_VERSION})", self.label)
    }
}

impl JudgeBackend for ModelJudge {
    fn describe(&self) -> String {
        ModelJudge::describe(self)
    }

    fn complete<'a>(
        &'a self,
        system: String,
        user: String,
    ) -> BoxFuture<'a, Result<String, gauntlet_core::target::TargetError>> {
        Box::pin(async move {
            let ctx = TrialContext {
                case: &self.case,
                system_prompt: None,
                tools: &[],
                trial: 0,
                seed: 0,
                session_id: "judge".into(),
            };
            let messages = [Message::system(system), Message::user(user)];
            let mut rec = TraceRecorder::new();
            let reply = self
                .model
                .complete(
                    &ctx,
                    ChatRequest {
                        messages: &messages,
                        tools: &[],
                    },
                    &mut rec,
                )
                .await?;
            Ok(reply.message.content)
        })
    }
}

/// A chat model playing the user of a conversation (`--user-model SPEC`).
pub struct ModelUser {
    inner: ModelJudge,
}

impl ModelUser {
    /// Builds the simulated user from a target spec.
    pub fn new(
        cfg: &TargetConfig,
        redactor: &mut gauntlet_core::redact::Redactor,
    ) -> Result<ModelUser, String> {
        Ok(ModelUser {
            inner: ModelJudge::new(cfg, redactor)?,
        })
    }
}

impl gauntlet_core::target::UserSimulator for ModelUser {
    fn next<'a>(
        &'a self,
        user: &'a gauntlet_core::suite::SimulatedUser,
        transcript: &'a [gauntlet_core::trace::TurnRecord],
    ) -> BoxFuture<'a, Result<Option<String>, gauntlet_core::target::TargetError>> {
        Box::pin(async move {
            let stop = user.stop.as_deref().unwrap_or("DONE");
            let system = format!(
                "You play the user in a conversation with an assistant. Persona: {}. Goal: {}. \
                 Write only the user's next message. When the goal is met, or the assistant cannot \
                 help further, write exactly {stop}.",
                user.persona, user.goal
            );
            let mut convo = String::new();
            for t in transcript {
                convo.push_str(&format!("USER: {}\nASSISTANT: {}\n\n", t.user, t.answer));
            }
            let text = JudgeBackend::complete(&self.inner, system, convo)
                .await
                .map_err(|e| gauntlet_core::target::TargetError::Transport(e.to_string()))?;
            let text = text.trim();
            if text.is_empty() || text.contains(stop) {
                Ok(None)
            } else {
                Ok(Some(text.to_owned()))
            }
        })
    }
}
