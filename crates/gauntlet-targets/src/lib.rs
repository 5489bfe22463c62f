//! Target adapters: everything that talks to the agent under test.
//!
//! [`build_target`] turns a [`TargetConfig`] into a [`Target`]. Chat models (the built-in
//! personas, OpenAI-compatible and Anthropic APIs) go through [`chat::ChatTarget`], which runs
//! the conversation and the tool loop; agents that run their own loop (HTTP apps,
//! subprocesses) implement [`Target`] directly.

pub mod chat;
pub mod fake;
pub mod persona;

use std::sync::Arc;

use gauntlet_core::target::{Target, TargetConfig, TargetKind};

/// Builds the target for a configuration.
pub fn build_target(cfg: &TargetConfig) -> Result<Arc<dyn Target>, String> {
    match cfg.kind {
        Some(TargetKind::Fake) => {
            let persona = cfg.persona.as_deref().unwrap_or("safe");
            Ok(Arc::new(chat::ChatTarget::new(fake::FakeModel::new(
                persona,
            )?)))
        }
        Some(k) => Err(format!(
            "the `{}` target is not available in this build",
            k.as_str()
        )),
        None => Err(format!(
            "unknown target `{}`; define it in the config file or write KIND:ARG",
            cfg.name.as_deref().unwrap_or("")
        )),
    }
}
