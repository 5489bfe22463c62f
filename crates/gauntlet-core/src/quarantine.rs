//! Quarantine records: [`QuarantineEntry`], one line of `quarantine.yaml`.
//!
//! A quarantined case still runs and is reported, but its result does not gate: a
//! quarantined blocking case makes the run INCONCLUSIVE, never PASS. Every entry has an owner
//! and an expiry date; an expired entry is a configuration error naming the owner, so a
//! quarantine cannot quietly become permanent.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::flake::FlakeClass;

/// One quarantined case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuarantineEntry {
    /// The case id.
    pub case: String,
    /// When the flake was first seen (YYYY-MM-DD).
    pub first_seen: String,
    /// Trials in the triage run.
    pub k: u32,
    /// Observed pass rate in that run.
    pub pass_rate: f64,
    /// The suspected class.
    pub class: FlakeClass,
    /// Who fixes it.
    pub owner: String,
    /// When the quarantine ends (YYYY-MM-DD); after it, runs refuse to start.
    pub expires: String,
    /// Why, in a sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
