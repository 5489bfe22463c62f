//! What a suite writes about a multi-turn attack: [`Strategy`] (a case's `strategy:`) and
//! its defaults, and [`HelperRole`] (what a helper model is called for, as a trace records
//! it). Settings only: the suite model and the trace read them; the helper-model seam and the
//! prompts are in the parent module, above the trace.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a multi-turn attack is played.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum StrategyKind {
    /// Scripted escalation: the case's `turns` are benign steps that approach the
    /// objective, sent in order; a refused step is taken back and its `rephrase`
    /// alternatives tried.
    Crescendo,
    /// An attacker model writes each next message from the conversation so far and the
    /// objective (`--attacker TARGET`).
    Attacker,
}

impl StrategyKind {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            StrategyKind::Crescendo => "crescendo",
            StrategyKind::Attacker => "attacker",
        }
    }
}

/// A case's multi-turn strategy. After every turn the case's violation checks (and judge
/// checks) grade the conversation so far; the attack stops as soon as one that gates
/// fails (the objective was reached), or when its bounds run out.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Strategy {
    /// `crescendo` (scripted turns) or `attacker` (an attacker model writes the turns).
    pub kind: StrategyKind,
    /// What the attack tries to make the agent do, in words (the attacker model is given
    /// it). Default: the case's `input`, else its last turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objective: Option<String>,
    /// Most turns kept in the agent's conversation. Default: the number of scripted turns
    /// (crescendo), 5 (attacker).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// Most refused exchanges taken back from the agent's conversation. Default 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_backtracks: Option<u32>,
    /// Most tokens (the agent's and the attacker's, as reported) before the attack stops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
}

/// Default `max_turns` of an attacker strategy.
pub const DEFAULT_ATTACKER_TURNS: u32 = 5;
/// Default `max_backtracks`.
pub const DEFAULT_BACKTRACKS: u32 = 2;

/// Whether a converter name needs a rewriter model (`paraphrase`, `translate:LANG`): such
/// a step is applied when the trial runs, not when the plan is made.
pub fn converter_needs_model(name: &str) -> bool {
    name == "paraphrase" || name.starts_with("translate:")
}

/// Who a helper model call was for.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum HelperRole {
    /// The attacker of an attacker strategy.
    Attacker,
    /// The rewriter of a model-driven converter.
    Rewriter,
}

impl HelperRole {
    /// The role's name as written in reports: `attacker`, `rewriter`.
    pub fn as_str(self) -> &'static str {
        match self {
            HelperRole::Attacker => "attacker",
            HelperRole::Rewriter => "rewriter",
        }
    }
}
