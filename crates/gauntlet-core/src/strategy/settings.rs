//! What a suite writes about a multi-turn attack: [`Strategy`] (a case's `strategy:`: a
//! crescendo, an attacker or a tree of attacks) and its defaults, and [`HelperRole`] (what a helper model is called for, as a trace records
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
    /// A tree of attacks: the attacker model writes `branching` prompts from each node
    /// kept, prompts off the objective are pruned before they are sent, each one is sent
    /// to the agent in a fresh conversation and its reply scored, and the best `width` of
    /// each level are grown further, for `depth` levels within a budget of calls and tokens.
    Tree,
}

impl StrategyKind {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            StrategyKind::Crescendo => "crescendo",
            StrategyKind::Attacker => "attacker",
            StrategyKind::Tree => "tree",
        }
    }

    /// Whether an attacker model writes the messages (`attacker` and `tree`): the case needs
    /// an objective, not scripted turns, and its converters apply to what the attacker wrote.
    pub fn uses_attacker(self) -> bool {
        matches!(self, StrategyKind::Attacker | StrategyKind::Tree)
    }
}

/// A case's multi-turn strategy. After every turn the case's violation checks (and judge
/// checks) grade the conversation so far; the attack stops as soon as one that gates
/// fails (the objective was reached), or when its bounds run out.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Strategy {
    /// `crescendo` (scripted turns), `attacker` (an attacker model writes the turns) or
    /// `tree` (a tree of attacker prompts, each sent in a fresh conversation).
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
    /// Tree: nodes kept per level, the best-scoring ones. Default 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    /// Tree: prompts the attacker writes from each node kept. Default 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branching: Option<u32>,
    /// Tree: levels of the tree. Default 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// Tree: most model calls (the attacker's, the agent's and the judges' that score the
    /// replies, together) before the search stops. Default 50.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_calls: Option<u32>,
    /// Tree: the judge check (an id of the suite's `judges.checks` that one of the case's
    /// `judge` entries uses) whose answer on each reply ranks the nodes instead of the
    /// `attack_success` reading. Its calls count against `max_calls` and `max_tokens`. It
    /// decides the case (and stops the search) only when it gates, as a judge does
    /// anywhere: calibrated, and bound to what answers; uncalibrated, it only ranks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<String>,
}

impl Strategy {
    /// A strategy of this kind with every bound left to its default.
    pub fn of_kind(kind: StrategyKind) -> Self {
        Strategy {
            kind,
            objective: None,
            max_turns: None,
            max_backtracks: None,
            max_tokens: None,
            width: None,
            branching: None,
            depth: None,
            max_calls: None,
            judge: None,
        }
    }
}

/// Default `max_turns` of an attacker strategy.
pub const DEFAULT_ATTACKER_TURNS: u32 = 5;
/// Default `max_backtracks`.
pub const DEFAULT_BACKTRACKS: u32 = 2;
/// Default `width` of a tree strategy.
pub const DEFAULT_TREE_WIDTH: u32 = 3;
/// Default `branching` of a tree strategy.
pub const DEFAULT_TREE_BRANCHING: u32 = 3;
/// Default `depth` of a tree strategy.
pub const DEFAULT_TREE_DEPTH: u32 = 3;
/// Default `max_calls` of a tree strategy: the default tree (3 + 9 + 9 nodes, an attacker
/// call and an agent call each) fits, with room for none of it to be wasted.
pub const DEFAULT_TREE_CALLS: u32 = 50;
/// Largest `width`, `branching` and `depth` a suite may ask for: a tree grows as their
/// product, and a CI gate must stay bounded.
pub const MAX_TREE_SHAPE: u32 = 10;

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
