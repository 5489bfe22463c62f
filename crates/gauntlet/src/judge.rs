//! Model judges for `judge` checks: [`ModelJudge`] adapts any chat model target (`--judge
//! SPEC`) to the graders' [`JudgeBackend`].

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
        let model = gauntlet_targets::build_chat_model(cfg, redactor)?;
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
    ) -> BoxFuture<'a, Result<String, String>> {
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
                .await
                .map_err(|e| e.to_string())?;
            Ok(reply.message.content)
        })
    }
}
