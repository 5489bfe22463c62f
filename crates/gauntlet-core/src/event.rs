//! The run's event stream: [`RunEvent`], and the [`Reporter`] seam that consumes it.
//!
//! The runner emits events in order through one consumer chain; the terminal printer, the
//! report writers and the run store are all reporters. Re-rendering a stored run replays its
//! events into the same reporters.

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::result::{CaseResult, TrialResult};
use crate::summary::Summary;
use crate::target::TargetInfo;

// Declared with the target info that carries them; the manifest's fields name them here.
pub use crate::target::{EvidenceLevel, SideEffectMode};

/// The version of the event and report format. Bumped on any incompatible change.
pub const REPORT_SCHEMA_VERSION: u32 = 1;

/// One event of a run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct RunEvent {
    /// Milliseconds since the run started.
    pub elapsed_ms: u64,
    /// What happened.
    pub kind: EventKind,
    /// The JSON of a finished case, computed once for every consumer that writes it
    /// (`report.json` and the run store write the same bytes).
    #[serde(skip)]
    #[schemars(skip)]
    pub encoded: EncodedCase,
    /// What the consumers derive alike from this event (the run's canary mask from its
    /// manifest, a result with the canary masked), made by the first that asks.
    #[serde(skip)]
    #[schemars(skip)]
    pub derived: Derived,
}

impl RunEvent {
    /// An event.
    pub fn new(elapsed_ms: u64, kind: EventKind) -> RunEvent {
        RunEvent {
            elapsed_ms,
            kind,
            encoded: EncodedCase::default(),
            derived: Derived::default(),
        }
    }

    /// For a `case_finished` event, the case result as JSON (serialized on first use).
    pub fn case_json(&self) -> Option<Result<&str, serde_json::Error>> {
        let EventKind::CaseFinished { result } = &self.kind else {
            return None;
        };
        if let Some(s) = self.encoded.0.get() {
            return Some(Ok(s));
        }
        match serde_json::to_string(result) {
            Ok(s) => Some(Ok(self.encoded.0.get_or_init(|| s))),
            Err(e) => Some(Err(e)),
        }
    }
}

/// A lazily computed encoding; equal whatever it holds (it is derived data).
#[derive(Debug, Clone, Default)]
pub struct EncodedCase(std::sync::OnceLock<String>);

/// One value derived from an event, made once for every consumer that derives the same:
/// the writers and the terminal each mask what they quote with the same canary mask, and
/// built apart, the mask and each masked result cost four times over. A consumer names what
/// it derives with a key (equal keys, equal values); one whose key differs from the first
/// consumer's gets its own, unshared. Equal whatever it holds (it is derived data).
#[derive(Debug, Clone, Default)]
pub struct Derived(DerivedSlot);

type DerivedSlot = OnceLock<(usize, Arc<dyn Any + Send + Sync>)>;

impl Derived {
    /// The value under `key`: the one made by an earlier caller with the same key and type,
    /// or what `make` makes (kept for later callers when the slot is free).
    pub fn get_or_make<T: Any + Send + Sync>(
        &self,
        key: usize,
        make: impl FnOnce() -> T,
    ) -> Arc<T> {
        if let Some((k, v)) = self.0.get() {
            if *k == key
                && let Ok(t) = v.clone().downcast::<T>()
            {
                return t;
            }
            return Arc::new(make());
        }
        let made = Arc::new(make());
        let shared: Arc<dyn Any + Send + Sync> = made.clone();
        let _ = self.0.set((key, shared));
        made
    }
}

impl PartialEq for Derived {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl PartialEq for EncodedCase {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// What happened.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventKind {
    /// The run started.
    RunStarted {
        /// Facts about the run.
        manifest: Box<RunManifest>,
    },
    /// One trial finished (emitted before its case's `case_finished`, and only when cases
    /// run more than one trial: with k = 1 the case event carries the trial).
    TrialFinished {
        /// The trial.
        trial: Box<TrialResult>,
    },
    /// Every trial of a case finished.
    CaseFinished {
        /// The case over its trials.
        result: Box<CaseResult>,
    },
    /// Something worth telling the user that does not change the result.
    Warning {
        /// The message.
        message: String,
    },
    /// The run finished.
    RunFinished {
        /// The result.
        summary: Box<Summary>,
        /// When it finished (RFC 3339).
        finished_at: String,
    },
}

/// A suite file that took part in a run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct SuiteRef {
    /// The suite's name.
    pub name: String,
    /// Where it was loaded from (`builtin:owasp` for the embedded corpus).
    pub path: String,
    /// SHA-256 of the file (and included files), hex.
    pub sha256: String,
    /// Cases it contributed.
    pub cases: usize,
    /// The public data set it was imported from (source, licence, revision).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<crate::suite::DatasetSource>,
    /// The suite's planted canary (`agent.canary`), recorded like `--canary` so that the
    /// reports that leave the run's folder mask it (`summary.md`, `junit.xml`,
    /// `results.sarif`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary: Option<String>,
    /// The secrets single cases name for themselves (a case's `canary:` and the secret of
    /// each of its `no_canary: SECRET` checks), by case id, masked as the suite's is in that
    /// case's results: those of the cases the suite file holds (inline or included), not of
    /// cases streamed from data files, which are not read ahead of the run.
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "secrets_by_case"
    )]
    pub case_canaries: BTreeMap<String, Vec<String>>,
}

/// Reads `case_canaries` either way it was written: a list per case, or one canary per case
/// (runs recorded before a case's `no_canary:` secrets were kept too), so that a stored run
/// stays readable.
fn secrets_by_case<'de, D>(d: D) -> Result<BTreeMap<String, Vec<String>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Secrets {
        One(String),
        Many(Vec<String>),
    }
    let by_case = BTreeMap::<String, Secrets>::deserialize(d)?;
    Ok(by_case
        .into_iter()
        .map(|(id, s)| match s {
            Secrets::One(one) => (id, vec![one]),
            Secrets::Many(many) => (id, many),
        })
        .collect())
}

/// Facts about a run, recorded before the first trial.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct RunManifest {
    /// Format version of events and reports.
    pub schema_version: u32,
    /// The run id.
    pub run_id: String,
    /// gauntlet's version.
    pub gauntlet_version: String,
    /// When the run started (RFC 3339).
    pub started_at: String,
    /// The command that started it (`run`, `redteam`, ...).
    pub command: String,
    /// Suites.
    pub suites: Vec<SuiteRef>,
    /// The target.
    pub target: TargetInfo,
    /// Trials per case.
    pub k: u32,
    /// The run seed.
    pub seed: u64,
    /// Cases planned (after filters and sharding).
    pub planned_cases: usize,
    /// Evidence level.
    pub evidence_level: EvidenceLevel,
    /// Side effects.
    pub side_effects: SideEffectMode,
    /// Revision of the built-in datasets and corpus.
    pub dataset_revision: String,
    /// Tool mock versions, by tool name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tool_versions: BTreeMap<String, String>,
    /// The judge model and prompt version, when judges ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<String>,
    /// Every judge check of the run: its model, prompt and whether it gates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judges: Vec<crate::calibration::JudgeRef>,
    /// Filters and shard applied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<String>,
    /// Anything else worth recording (server build, flags).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub notes: BTreeMap<String, String>,
    /// How the run was invoked, so that it can be resumed or re-run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocation: Option<Invocation>,
    /// The packs the state requires (so that `gauntlet merge` checks them over every shard).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packs: Option<crate::summary::PackRequirements>,
    /// Which shard of a sharded run this is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardOf>,
    /// Where the prices that turn tokens into cost came from (the built-in table's date, the
    /// models `gauntlet.yaml` priced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prices: Option<String>,
}

/// One shard of a sharded run (`--shard i/n`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct ShardOf {
    /// Which shard, from 1.
    pub index: u32,
    /// How many shards.
    pub total: u32,
    /// The run id the shards share (`--run-id`), when they were given one: each shard's own
    /// run id is this id with its shard (`ID-shard2of4`), and `gauntlet merge ID` finds them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
}

impl ShardOf {
    /// `i/n`.
    pub fn label(&self) -> String {
        format!("{}/{}", self.index, self.total)
    }

    /// The run id of shard `index` of `total` of the sharded run `run`.
    pub fn run_id(run: &str, index: u32, total: u32) -> String {
        format!("{run}-shard{index}of{total}")
    }
}

/// The inputs of a run: enough to rebuild its plan (for `--resume` and `--rerun-failed`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Invocation {
    /// Suite files, as given (`builtin:owasp` for the red-team corpus).
    pub suites: Vec<String>,
    /// The folder the run started in (absolute), against which relative suite paths are
    /// found again by `--resume`, `--rerun-failed` and `regrade` from anywhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_dir: Option<String>,
    /// The target, resolved (names of key variables only; never the keys).
    pub target: crate::target::TargetConfig,
    /// Filter terms.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<String>,
    /// Shard, `i/n`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// The run canary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary: Option<String>,
    /// The system prompt file (red team).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt_file: Option<String>,
    /// Per-trial time limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Trials in flight.
    pub concurrency: usize,
    /// Stop after this many failed cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_fail: Option<usize>,
    /// A content filter's stop counts as defended (`--blocked-is-defended`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub blocked_is_defended: bool,
    /// The evidence level declared on the command line (`--evidence canary`: the target
    /// serves a canary slice of real traffic), over the target's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<EvidenceLevel>,
    /// Folders outside the suites' own that their files may come from (`--allow-path`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_paths: Vec<String>,
    /// The run's converter chain (`--converters`), applied after each case's own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub converters: Vec<String>,
    /// The run's strategy (`redteam --strategy attacker`), applied to every case that has
    /// a check that can tell when the objective is reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<crate::strategy::Strategy>,
    /// The attacker model (`--attacker`), as resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attacker: Option<crate::target::TargetConfig>,
    /// The rewriter model of the model-driven converters (`--rewriter`), as resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewriter: Option<crate::target::TargetConfig>,
    /// A stratified sample of this many cases (`--sample`), drawn with the run seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<usize>,
    /// Hold-out cases were taken too (`--include-holdout`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub include_holdout: bool,
    /// The agent's model calls go through the response cache (`--cache`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cache: bool,
    /// Spending limits (`--max-cost`, `--max-total-tokens`); `--resume` may raise them.
    #[serde(default, skip_serializing_if = "is_unset")]
    pub budget: crate::cost::Budget,
    /// A matrix run (`-t A -t B ...`): every case runs against each of these columns, in
    /// this order; `target` is then the first column's. Empty for a run of one target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matrix: Vec<crate::target::MatrixColumn>,
}

fn is_unset(b: &crate::cost::Budget) -> bool {
    !b.is_set()
}

/// An error from a reporter.
pub type ReportError = Box<dyn std::error::Error + Send + Sync>;

/// The seam every consumer of the event stream implements.
pub trait Reporter: Send {
    /// Handles one event. Events arrive in order: `run_started`, then trials and cases as
    /// they finish, then `run_finished`.
    fn on_event(&mut self, event: &RunEvent) -> Result<(), ReportError>;

    /// Called after each batch of events: a point to make what was received durable (the
    /// run store commits here).
    fn flush(&mut self) -> Result<(), ReportError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suite_ref_reads_case_secrets_as_a_list_or_as_one_canary() {
        let base =
            r#"{"name": "s", "path": "s.yaml", "sha256": "x", "cases": 2, "case_canaries": "#;
        let list: SuiteRef =
            serde_json::from_str(&format!(r#"{base}{{"a": ["K-1111", "K-2222"]}}}}"#)).unwrap();
        assert_eq!(list.case_canaries["a"], ["K-1111", "K-2222"]);
        // A run recorded with one canary per case still reads.
        let one: SuiteRef = serde_json::from_str(&format!(r#"{base}{{"a": "K-1111"}}}}"#)).unwrap();
        assert_eq!(one.case_canaries["a"], ["K-1111"]);
        let back = serde_json::to_value(&one).unwrap();
        assert_eq!(back["case_canaries"]["a"], serde_json::json!(["K-1111"]));
    }
}
