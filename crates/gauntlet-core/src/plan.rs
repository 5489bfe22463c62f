//! What a run is made of once its suites are loaded: [`PlannedCase`] (a case with the
//! [`SuiteContext`] it runs in).
//!
//! The suite crate builds these from loaded suites (filters, shards, contexts); the runner
//! consumes them. Both depend on this crate only, so the type lives here.

use std::sync::Arc;

use crate::suite::Case;
use crate::tools::ToolDef;

/// The placeholder in system prompts that the canary in force replaces.
pub const CANARY_PLACEHOLDER: &str = "{{canary}}";

/// What every case of one suite shares.
#[derive(Debug, Clone, Default)]
pub struct SuiteContext {
    /// The suite's name.
    pub name: String,
    /// The system prompt in force, with the canary in place of [`CANARY_PLACEHOLDER`].
    pub system_prompt: Option<String>,
    /// The canary in force (the run's `--canary`, else the agent's).
    pub canary: Option<String>,
    /// The agent's tools.
    pub tools: Vec<ToolDef>,
    /// Whether cases gate the suite by default.
    pub default_blocking: bool,
    /// Default per-trial time limit.
    pub timeout_ms: Option<u64>,
}

/// One case to run.
#[derive(Debug, Clone)]
pub struct PlannedCase {
    /// Its suite.
    pub suite: Arc<SuiteContext>,
    /// The case.
    pub case: Arc<Case>,
}
