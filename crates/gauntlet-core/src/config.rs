//! The project config file: [`Config`] (`gauntlet.yaml`), holding named targets and
//! project-wide settings so that suites stay free of endpoints and credentials.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::target_config::TargetConfig;

/// `gauntlet.yaml`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Named targets: `--target NAME` picks one. API keys are named by `api_key_env`,
    /// never written here.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub targets: BTreeMap<String, TargetConfig>,
    /// Where runs are stored (default `.gauntlet/runs.db`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
    /// `gauntlet validate` warns when a suite with more cases than this has no hold-out
    /// case (`holdout: true`); `--holdout-min-cases` overrides it. No warning when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holdout_min_cases: Option<usize>,
    /// `gauntlet plan --diff`: which kind of change a changed file is, as globs by kind
    /// (`prompt`, `tool`, `model`, `judge`, `retrieval`, `workflow`, `agent_code`). A kind
    /// listed here replaces its built-in globs; `*` matches across folders.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub change_globs: BTreeMap<crate::regression::FileChange, Vec<String>>,
    /// Model prices in US dollars per million tokens, by model id (or id prefix: `gpt-4o`
    /// prices `gpt-4o-2024-08-06`), over the built-in defaults. A model without a price has
    /// an unknown cost, never zero. e.g. `prices: {my-model: {input_per_mtok: 0.2,
    /// output_per_mtok: 0.6}}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub prices: BTreeMap<String, crate::cost::Price>,
}
