//! Target adapters: everything that talks to the agent under test.
//!
//! [`build_target`] turns a [`TargetConfig`] into a [`Target`]. Chat models (the built-in
//! personas, OpenAI-compatible chat completions, the OpenAI Responses API and Anthropic
//! APIs) go through [`chat::ChatTarget`], which runs
//! the conversation and the tool loop; agents that run their own loop (HTTP apps,
//! subprocesses) implement [`Target`] directly. API keys are read from the environment
//! variables the config names (or a `.env` file, [`keys`]), registered with the run's
//! [`Redactor`], and never stored.

pub mod anthropic;
pub mod audit;
pub mod binding;
pub mod cache;
mod careful;
pub mod chat;
pub mod client;
pub mod codeloop;
pub mod embeddings;
pub mod error;
pub mod exec;
pub mod fake;
pub mod helpers;
pub mod http_app;
pub mod keys;
mod literal;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod openai;
pub mod persona;
pub mod proxy;
pub mod reading;
mod reply;
pub mod responses;
pub mod serve;
pub mod tool_view;

#[cfg(test)]
mod clip_tests;

pub use error::{AgentError, BuildError, WireError};

use std::sync::Arc;

use gauntlet_core::redact::Redactor;
use gauntlet_core::target::{Target, TargetConfig, TargetKind};

/// Builds the target for a configuration. Secrets it reads are added to `redactor`, and are
/// redacted from the error.
pub fn build_target(
    cfg: &TargetConfig,
    redactor: &mut Redactor,
) -> Result<Arc<dyn Target>, BuildError> {
    let built: Result<Arc<dyn Target>, BuildError> = match cfg.kind {
        Some(TargetKind::Fake) => {
            let persona = cfg.persona.as_deref().unwrap_or("safe");
            Ok(Arc::new(chat::ChatTarget::new(fake::FakeModel::new(
                persona,
            )?)))
        }
        Some(TargetKind::Openai) => Ok(Arc::new(chat::ChatTarget::new(openai::OpenAiModel::new(
            cfg, redactor,
        )?))),
        Some(TargetKind::OpenaiResponses) => Ok(Arc::new(chat::ChatTarget::new(
            responses::ResponsesModel::new(cfg, redactor)?,
        ))),
        Some(TargetKind::Anthropic) => Ok(Arc::new(chat::ChatTarget::new(
            anthropic::AnthropicModel::new(cfg, redactor)?,
        ))),
        Some(TargetKind::Http) => Ok(Arc::new(http_app::HttpAppTarget::new(cfg, redactor)?)),
        Some(TargetKind::Exec) => match &cfg.exec {
            Some(e) => Ok(Arc::new(exec::ExecTarget::new_in(
                e,
                cfg.base_dir.as_deref(),
                redactor,
            )?)),
            None => Err(BuildError::MissingSection {
                kind: "exec",
                wants: "an `exec:` section with a `command`",
            }),
        },
        Some(TargetKind::Proxy) => Ok(Arc::new(proxy::ProxyTarget::new(cfg, redactor)?)),
        None => Err(BuildError::UnknownTarget(
            cfg.name.as_deref().unwrap_or("").to_owned(),
        )),
    };
    built.map_err(|e| e.redacted(redactor))
}

/// Builds a chat model (for model judges and simulated users): `fake`, `openai`,
/// `openai-responses` or `anthropic`. Secrets it reads are added to `redactor`, and are redacted from the error.
pub fn build_chat_model(
    cfg: &TargetConfig,
    redactor: &mut Redactor,
) -> Result<Arc<dyn chat::ChatModel>, BuildError> {
    let built: Result<Arc<dyn chat::ChatModel>, BuildError> = match cfg.kind {
        Some(TargetKind::Fake) => Ok(Arc::new(fake::FakeModel::new(
            cfg.persona.as_deref().unwrap_or("safe"),
        )?)),
        Some(TargetKind::Openai) => Ok(Arc::new(openai::OpenAiModel::new(cfg, redactor)?)),
        Some(TargetKind::OpenaiResponses) => {
            Ok(Arc::new(responses::ResponsesModel::new(cfg, redactor)?))
        }
        Some(TargetKind::Anthropic) => Ok(Arc::new(anthropic::AnthropicModel::new(cfg, redactor)?)),
        Some(k) => Err(BuildError::NotAModel(k.as_str())),
        None => Err(BuildError::NoModelKind),
    };
    built.map_err(|e| e.redacted(redactor))
}
