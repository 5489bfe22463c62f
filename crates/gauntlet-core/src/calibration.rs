//! The calibration gate: a [`CalibrationRecord`] (how well one judge agrees with people on
//! one check, and exactly which judge that was), the figures in it ([`CalibrationMetrics`],
//! computed by [`CalibrationMetrics::compute`]), and the decision whether a judge's verdicts
//! may change the state ([`gate`], [`answer_gate`]) or stay triage, with the reason
//! ([`Triage`]).
//!
//! A record is bound to the judge that earned it ([`JudgeBinding`]): the endpoint and model
//! it called, its sampling settings, the values of the settings that change its answers
//! (an exec judge's `MODEL`, a header), secret ones as salted hashes ([`SECRET_PREFIX`]),
//! the model its configuration pins, the model id its answers reported, the hash of the
//! prompt template and the hash of the rubric. A judge gates only when its record matches
//! all of them, the binding is strong ([`BindingStrength`]: something pins the model that
//! answers), the lower bound of kappa's 95% interval clears the suite's threshold, and
//! enough labelled items were answered. Change any of those and the judge is triage again
//! until it is calibrated again. A record of an older format ([`CALIBRATION_FORMAT`]) was
//! bound to less and never gates.

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// The gate's defaults are the judges' settings: re-exported where calibration names them.
pub use crate::judges::{DEFAULT_MIN_KAPPA, DEFAULT_MIN_LABELS};

use crate::judges::{JudgeForm, JudgeScale};
use crate::stats::{KappaWeights, bootstrap_kappa, confusion, kappa};

/// The version of the record format. Format 2 binds a record to the values of the judge's
/// settings, its pinned and its reported model; a record of format 1 was bound to the names
/// of its variables only, so it never gates ([`Triage::OldRecord`]).
pub const CALIBRATION_FORMAT: u32 = 2;
/// How a secret setting's value shows in a binding: this prefix and a salted hash, never the
/// value.
pub const SECRET_PREFIX: &str = "secret:";
/// Bootstrap resamples behind the interval.
pub const BOOTSTRAP_RESAMPLES: u32 = 2000;
/// The seed of the bootstrap when none is given: fixed, so a record can be recomputed.
pub const BOOTSTRAP_SEED: u64 = 0x6761_756e_746c_6574;

/// The file a check's record is written to, next to the suite file whose stem is given:
/// `support.yaml` and `tone` give `support.tone.calibration.json`.
pub fn record_file_name(suite_stem: &str, check: &str) -> String {
    format!("{suite_stem}.{check}.calibration.json")
}

/// How well a judge agreed with people on one check, and which judge it was.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CalibrationRecord {
    /// The record format ([`CALIBRATION_FORMAT`]).
    pub format: u32,
    /// The judge check id.
    pub check: String,
    /// The suite it was calibrated for.
    pub suite: String,
    /// When (RFC 3339, UTC).
    pub created: String,
    /// The gauntlet that wrote it.
    pub gauntlet_version: String,
    /// The judge that earned it.
    pub judge: RecordedJudge,
    /// The labels it was measured on.
    pub labels: RecordedLabels,
    /// The figures.
    pub metrics: CalibrationMetrics,
    /// The thresholds in force when it was written and whether it cleared them (for reading;
    /// a run applies the suite's thresholds of the day).
    pub gate: RecordedGate,
}

/// The judge a record is bound to.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RecordedJudge {
    /// Where it was called (`openai https://api.openai.com/v1`, `exec python3 judge.py`).
    pub endpoint: String,
    /// The model asked for.
    pub configured_model: String,
    /// The model id the answers reported (the configured one when the API reports none), for
    /// reading; the gate reads `reported_model`.
    pub model: String,
    /// Sampling settings (temperature, seed, max tokens).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub params: String,
    /// The values of the settings that change the answers beyond the endpoint (`env.MODEL`,
    /// `header.x-model`); secret ones as [`SECRET_PREFIX`] and a salted hash.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
    /// The model the configuration pins (the model sent to the API, the value of a `MODEL`
    /// variable), if any.
    #[serde(default)]
    pub pinned_model: Option<String>,
    /// The model id the answers reported; null when they reported none.
    #[serde(default)]
    pub reported_model: Option<String>,
    /// The prompt template, `name@version`.
    pub template: String,
    /// SHA-256 of the template's text, system and user prompts.
    pub template_sha256: String,
    /// SHA-256 of the rubric: the criterion, the scale, the pass score, the form.
    pub rubric_sha256: String,
    /// The form of the question.
    pub form: JudgeForm,
    /// The scale of the answer.
    pub scale: JudgeScale,
}

/// The label file a record was measured on.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RecordedLabels {
    /// Its file name.
    pub file: String,
    /// SHA-256 of its bytes.
    pub sha256: String,
    /// Rows read.
    pub rows: usize,
    /// Rows for this check with a label, used once each.
    pub used: usize,
    /// Rows for other checks, left out.
    pub other_checks: usize,
    /// Rows with an empty label, left out.
    pub unlabelled: usize,
    /// Rows that repeat an earlier row's item and label (the first one is used).
    pub duplicates: usize,
    /// Items labelled differently by different rows: left out entirely, since no one knows
    /// which label is right.
    pub conflicts: usize,
}

/// The thresholds in force when a record was written.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RecordedGate {
    /// The threshold on kappa's lower bound.
    pub min_kappa: f64,
    /// The minimum number of answered items.
    pub min_labels: usize,
    /// Whether the record cleared them.
    pub passed: bool,
    /// Why not, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The figures of a calibration.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CalibrationMetrics {
    /// Labelled items put to the judge.
    pub items: usize,
    /// Items the judge answered: the n of every figure below.
    pub n: usize,
    /// Items the judge did not answer in the strict format (or, for a pairwise judge,
    /// answered differently in the two orders).
    pub judge_errors: usize,
    /// The share of answered items people labelled failing (`fail`, or below the pass score).
    pub base_rate: f64,
    /// The share the judge called failing.
    pub judge_rate: f64,
    /// Exact agreement.
    pub accuracy: f64,
    /// Cohen's kappa (quadratic weighted on the 0-3 scale); null when undefined (every
    /// label and every verdict in one category).
    pub kappa: Option<f64>,
    /// The weighting of `kappa`.
    pub weights: KappaWeights,
    /// The seeded bootstrap interval of kappa.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<KappaInterval>,
    /// Category names, the order of the matrix.
    pub categories: Vec<String>,
    /// Counts: rows are the judge's verdicts, columns the people's labels.
    pub confusion: Vec<Vec<u64>>,
    /// The judge asked the same items a second time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_consistency: Option<Agreement>,
    /// Pairwise judges: items whose verdict survived swapping A and B.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_swap: Option<Agreement>,
}

/// A bootstrap interval of kappa.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct KappaInterval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
    /// Its level (0.95).
    pub level: f64,
    /// Resamples drawn.
    pub resamples: u32,
    /// Resamples whose kappa was undefined, left out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub undefined: u32,
    /// The seed.
    pub seed: u64,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// How often two answers to the same item agreed.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Agreement {
    /// Items asked twice and answered both times.
    pub n: usize,
    /// Items whose two answers agreed.
    pub agreed: usize,
    /// `agreed / n`.
    pub rate: f64,
}

impl Agreement {
    /// An agreement from its counts.
    pub fn of(agreed: usize, n: usize) -> Agreement {
        Agreement {
            n,
            agreed,
            rate: if n == 0 {
                0.0
            } else {
                agreed as f64 / n as f64
            },
        }
    }
}

/// A label or verdict as a category index: binary `fail` is 0 and `pass` 1; the 0-3 scale is
/// its own number.
pub type Category = usize;

impl CalibrationMetrics {
    /// The figures for `(judge, people)` pairs of answered items on `scale`.
    /// `pass_score` decides "failing" on the 0-3 scale; `errors` are the items the judge did
    /// not answer. The interval is seeded, so the same pairs give the same record.
    pub fn compute(
        pairs: &[(Category, Category)],
        scale: JudgeScale,
        pass_score: u8,
        errors: usize,
        seed: u64,
    ) -> CalibrationMetrics {
        let k = scale.categories();
        let weights = match scale {
            JudgeScale::Binary => KappaWeights::Unweighted,
            JudgeScale::Graded => KappaWeights::Quadratic,
        };
        let failing = |c: Category| match scale {
            JudgeScale::Binary => c == 0,
            JudgeScale::Graded => c < usize::from(pass_score),
        };
        let n = pairs.len();
        let share = |count: usize| if n == 0 { 0.0 } else { count as f64 / n as f64 };
        let table = confusion(pairs, k);
        let interval =
            bootstrap_kappa(pairs, k, weights, BOOTSTRAP_RESAMPLES, seed, 0.95).map(|b| {
                KappaInterval {
                    low: b.low,
                    high: b.high,
                    level: 0.95,
                    resamples: b.resamples,
                    undefined: b.undefined,
                    seed,
                }
            });
        CalibrationMetrics {
            items: n + errors,
            n,
            judge_errors: errors,
            base_rate: share(pairs.iter().filter(|(_, h)| failing(*h)).count()),
            judge_rate: share(pairs.iter().filter(|(j, _)| failing(*j)).count()),
            accuracy: share(pairs.iter().filter(|(j, h)| j == h).count()),
            kappa: kappa(&table, weights),
            weights,
            interval,
            categories: match scale {
                JudgeScale::Binary => vec!["fail".into(), "pass".into()],
                JudgeScale::Graded => (0..4).map(|i| i.to_string()).collect(),
            },
            confusion: table,
            self_consistency: None,
            order_swap: None,
        }
    }
}

/// What identifies the judge a run would use, before it answers anything: what a record
/// must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JudgeBinding {
    /// Where it is called.
    pub endpoint: String,
    /// The model asked for.
    pub configured_model: String,
    /// Sampling settings.
    pub params: String,
    /// The values of the settings that change answers, secret ones hashed.
    pub settings: BTreeMap<String, String>,
    /// The model the configuration pins, if any.
    pub pinned_model: Option<String>,
    /// SHA-256 of the prompt template.
    pub template_sha256: String,
    /// SHA-256 of the rubric.
    pub rubric_sha256: String,
}

/// How firmly a record is tied to the model that answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BindingStrength {
    /// The answers reported a model id, or the configuration pins one: another model behind
    /// the same judge is seen.
    Strong,
    /// Nothing pins what answers (an exec judge whose answers report no model and whose
    /// configuration sets none): the program could be swapped for a worse one under the
    /// same record, so the record never gates.
    Weak,
}

impl BindingStrength {
    /// `strong` or `weak`.
    pub fn as_str(self) -> &'static str {
        match self {
            BindingStrength::Strong => "strong",
            BindingStrength::Weak => "weak",
        }
    }
}

impl RecordedJudge {
    /// Whether the record is tied to a model: by the model id its answers reported, or by the
    /// model its configuration pins.
    pub fn strength(&self) -> BindingStrength {
        if self.reported_model.is_some() || self.pinned_model.is_some() {
            BindingStrength::Strong
        } else {
            BindingStrength::Weak
        }
    }
}

/// What a judge's binding does not pin, and how to pin it: the notice behind
/// [`Triage::WeakBinding`].
pub const WEAK_BINDING_HELP: &str = "nothing pins the model that answers: its answers report no model id and its configuration sets none. Report the model in the answers (an exec judge: `model` in an `llm_call` message, see docs/exec-protocol.md), or bind it in the configuration (`MODEL: ...` under `exec.env`, `--model NAME` in the command), then calibrate again";

/// Why a judge's verdicts are triage, not state.
#[derive(Debug, Clone, PartialEq)]
pub enum Triage {
    /// The suite keeps it as triage (`gate: false`).
    ByChoice,
    /// An inline judge (`judge: {rubric: ...}`) has no check id to calibrate.
    Inline,
    /// No calibration record exists.
    Uncalibrated,
    /// The record could not be read.
    Unreadable(String),
    /// The record was written for another prompt template or rubric.
    OtherPrompt,
    /// The record was written for another endpoint or model.
    OtherJudge {
        /// What the record names.
        recorded: String,
        /// What the run uses.
        current: String,
    },
    /// Too few labelled items were answered.
    TooFewLabels {
        /// Answered items.
        n: usize,
        /// The suite's minimum.
        min: usize,
    },
    /// Kappa is undefined (every label and verdict in one category).
    KappaUndefined,
    /// The lower bound of kappa's interval is below the threshold.
    LowKappa {
        /// The lower bound.
        low: f64,
        /// The threshold.
        min: f64,
    },
    /// The record was written in an older format, bound to less than the judge's binding
    /// (format 1: the names of an exec judge's variables, not their values).
    OldRecord {
        /// The record's format.
        format: u32,
    },
    /// The record's binding is weak: nothing pins the model that answered.
    WeakBinding,
    /// The answer came from another model than the one calibrated.
    ModelChanged {
        /// The model of the record.
        recorded: String,
        /// The model of the answer.
        answered: String,
    },
}

impl fmt::Display for Triage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Triage::ByChoice => f.write_str("triage by choice (gate: false)"),
            Triage::Inline => f.write_str("uncalibrated (an inline judge has no check id)"),
            Triage::Uncalibrated => f.write_str("uncalibrated"),
            Triage::Unreadable(e) => write!(f, "unreadable calibration record: {e}"),
            Triage::OtherPrompt => f.write_str("record for another prompt"),
            Triage::OtherJudge { recorded, current } => {
                write!(f, "record for another judge ({recorded}, not {current})")
            }
            Triage::TooFewLabels { n, min } => {
                write!(f, "too few labels ({n} answered, the suite needs {min})")
            }
            Triage::KappaUndefined => {
                f.write_str("kappa undefined (the labels or the verdicts hold one category)")
            }
            Triage::LowKappa { low, min } => {
                write!(f, "kappa's lower bound {low:.2} is below {min}")
            }
            Triage::OldRecord { format } => write!(
                f,
                "uncalibrated: the record (format {format}) predates judge bindings; calibrate again"
            ),
            Triage::WeakBinding => f.write_str(
                "uncalibrated: the record's binding is weak (no model id reported, no model setting bound)",
            ),
            Triage::ModelChanged { recorded, answered } => {
                write!(
                    f,
                    "model changed ({recorded} calibrated, {answered} answered)"
                )
            }
        }
    }
}

impl Triage {
    /// The longer notice a run shows once for this reason, when there is more to say than
    /// the short reason beside each verdict: what is wrong with the record and what to do.
    pub fn notice(&self, check: &str) -> Option<String> {
        match self {
            Triage::OldRecord { format } => Some(format!(
                "judge `{check}` stays triage: its calibration record (format {format}) was written before records were bound to what answers (the values of a judge's settings, its pinned and its reported model), so it does not gate under the current rules; calibrate again (`gauntlet judge calibrate SUITE --check {check} --labels FILE`)"
            )),
            Triage::WeakBinding => Some(format!(
                "judge `{check}` stays triage: its calibration record is weakly bound: {WEAK_BINDING_HELP}"
            )),
            _ => None,
        }
    }
}

/// Whether a judge may gate, before it answers: a record exists in the current format, it
/// was written for this prompt and rubric and this judge's binding (endpoint, model,
/// sampling settings, setting values, pinned model), the binding is strong, enough items
/// were answered, and the lower bound of kappa's interval clears `min_kappa`.
pub fn gate(
    record: Option<&CalibrationRecord>,
    current: &JudgeBinding,
    min_kappa: f64,
    min_labels: usize,
) -> Result<(), Triage> {
    let Some(r) = record else {
        return Err(Triage::Uncalibrated);
    };
    if r.format < CALIBRATION_FORMAT {
        return Err(Triage::OldRecord { format: r.format });
    }
    if r.judge.template_sha256 != current.template_sha256
        || r.judge.rubric_sha256 != current.rubric_sha256
    {
        return Err(Triage::OtherPrompt);
    }
    if let Some((recorded, current)) = binding_difference(&r.judge, current) {
        return Err(Triage::OtherJudge { recorded, current });
    }
    standing(r, min_kappa, min_labels)
}

/// Whether a record may gate whoever answers: its format, its binding's strength and its
/// figures (the part of [`gate`] that does not compare the record with a judge; a run with
/// no judge model can still be made INCONCLUSIVE by a record that would gate).
pub fn standing(r: &CalibrationRecord, min_kappa: f64, min_labels: usize) -> Result<(), Triage> {
    if r.format < CALIBRATION_FORMAT {
        return Err(Triage::OldRecord { format: r.format });
    }
    if r.judge.strength() == BindingStrength::Weak {
        return Err(Triage::WeakBinding);
    }
    thresholds(&r.metrics, min_kappa, min_labels)
}

/// How the judge of a record differs from the current one, as the two sides would be shown
/// (`None` when they are the same). A secret setting shows as `(secret)`, never its hash.
pub fn binding_difference(r: &RecordedJudge, current: &JudgeBinding) -> Option<(String, String)> {
    if r.endpoint != current.endpoint || r.configured_model != current.configured_model {
        return Some((
            format!("{} at {}", r.configured_model, r.endpoint),
            format!("{} at {}", current.configured_model, current.endpoint),
        ));
    }
    let mut was = Vec::new();
    let mut now = Vec::new();
    if r.params != current.params {
        was.push(format!("settings {}", or_none(&r.params)));
        now.push(format!("settings {}", or_none(&current.params)));
    }
    if r.pinned_model != current.pinned_model {
        let shown = |m: &Option<String>| m.clone().unwrap_or_else(|| "none".into());
        was.push(format!("pinned model {}", shown(&r.pinned_model)));
        now.push(format!("pinned model {}", shown(&current.pinned_model)));
    }
    let keys: std::collections::BTreeSet<&String> =
        r.settings.keys().chain(current.settings.keys()).collect();
    for k in keys {
        let (a, b) = (r.settings.get(k), current.settings.get(k));
        if a != b {
            was.push(shown_setting(k, a, false));
            now.push(shown_setting(k, b, a.is_some()));
        }
    }
    (!was.is_empty()).then(|| (was.join(", "), now.join(", ")))
}

fn or_none(s: &str) -> &str {
    if s.is_empty() { "none" } else { s }
}

/// One setting as a difference shows it: its value, or `(secret)` for a hashed one.
fn shown_setting(key: &str, value: Option<&String>, other: bool) -> String {
    match value {
        None => format!("{key} unset"),
        Some(v) if v.starts_with(SECRET_PREFIX) && other => format!("{key}=(another secret)"),
        Some(v) if v.starts_with(SECRET_PREFIX) => format!("{key}=(secret)"),
        Some(v) => format!("{key}={v}"),
    }
}

/// Whether figures clear the thresholds (the part of [`gate`] that does not depend on the
/// judge's identity).
pub fn thresholds(m: &CalibrationMetrics, min_kappa: f64, min_labels: usize) -> Result<(), Triage> {
    if m.n < min_labels {
        return Err(Triage::TooFewLabels {
            n: m.n,
            min: min_labels,
        });
    }
    let (Some(_), Some(i)) = (m.kappa, m.interval) else {
        return Err(Triage::KappaUndefined);
    };
    if i.low < min_kappa {
        return Err(Triage::LowKappa {
            low: i.low,
            min: min_kappa,
        });
    }
    Ok(())
}

/// Whether one answer may gate under a record: it must report the model id the record's
/// answers reported, or none when they reported none.
pub fn answer_gate(record: &CalibrationRecord, answered: Option<&str>) -> Result<(), Triage> {
    if answered == record.judge.reported_model.as_deref() {
        Ok(())
    } else {
        let shown = |m: Option<&str>| m.unwrap_or("no model id").to_owned();
        Err(Triage::ModelChanged {
            recorded: shown(record.judge.reported_model.as_deref()),
            answered: shown(answered),
        })
    }
}

/// A judge check as a run's manifest records it: what asked, with which prompt, and whether
/// it could gate when the run started.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct JudgeRef {
    /// The check id.
    pub check: String,
    /// Where the judge was called.
    pub endpoint: String,
    /// The model asked for.
    pub configured_model: String,
    /// The prompt template, `name@version`.
    pub template: String,
    /// SHA-256 of the template.
    pub template_sha256: String,
    /// SHA-256 of the rubric.
    pub rubric_sha256: String,
    /// `gating`, or `triage: REASON`.
    pub gate: String,
}

/// What changed in the judges between two runs, one line per change: a score that moved
/// between them may be the judge's doing, not the agent's. `models_*` are the model ids the
/// judges' answers reported in each run.
pub fn judge_changes(
    a: &[JudgeRef],
    b: &[JudgeRef],
    models_a: &std::collections::BTreeSet<String>,
    models_b: &std::collections::BTreeSet<String>,
) -> Vec<String> {
    let mut out = Vec::new();
    for ja in a {
        let Some(jb) = b.iter().find(|j| j.check == ja.check) else {
            out.push(format!("judge `{}` only in A", ja.check));
            continue;
        };
        let mut what = Vec::new();
        if ja.endpoint != jb.endpoint || ja.configured_model != jb.configured_model {
            what.push(format!(
                "model {} -> {}",
                ja.configured_model, jb.configured_model
            ));
        }
        if ja.template != jb.template || ja.template_sha256 != jb.template_sha256 {
            what.push(format!("prompt {} -> {}", ja.template, jb.template));
        }
        if ja.rubric_sha256 != jb.rubric_sha256 {
            what.push("rubric edited".into());
        }
        if ja.gate != jb.gate {
            what.push(format!("{} -> {}", ja.gate, jb.gate));
        }
        if !what.is_empty() {
            out.push(format!("judge `{}`: {}", ja.check, what.join("; ")));
        }
    }
    for jb in b
        .iter()
        .filter(|jb| !a.iter().any(|ja| ja.check == jb.check))
    {
        out.push(format!("judge `{}` only in B", jb.check));
    }
    if !models_a.is_empty() && !models_b.is_empty() && models_a != models_b {
        let list = |m: &std::collections::BTreeSet<String>| {
            m.iter().cloned().collect::<Vec<_>>().join(", ")
        };
        out.push(format!(
            "judge answers came from {} in A and {} in B",
            list(models_a),
            list(models_b)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding() -> JudgeBinding {
        JudgeBinding {
            endpoint: "fake".into(),
            configured_model: "judge-column:v".into(),
            template_sha256: "t1".into(),
            rubric_sha256: "r1".into(),
            ..JudgeBinding::default()
        }
    }

    fn record(pairs: &[(usize, usize)]) -> CalibrationRecord {
        CalibrationRecord {
            format: CALIBRATION_FORMAT,
            check: "c".into(),
            suite: "s".into(),
            created: "2026-12-01T00:00:00Z".into(),
            gauntlet_version: "0".into(),
            judge: RecordedJudge {
                endpoint: "fake".into(),
                configured_model: "judge-column:v".into(),
                model: "fake-judge".into(),
                params: String::new(),
                settings: BTreeMap::new(),
                pinned_model: None,
                reported_model: Some("fake-judge".into()),
                template: "pointwise@1".into(),
                template_sha256: "t1".into(),
                rubric_sha256: "r1".into(),
                form: JudgeForm::Pointwise,
                scale: JudgeScale::Binary,
            },
            labels: RecordedLabels::default(),
            metrics: CalibrationMetrics::compute(pairs, JudgeScale::Binary, 2, 0, 1),
            gate: RecordedGate {
                min_kappa: 0.6,
                min_labels: 50,
                passed: true,
                reason: None,
            },
        }
    }

    fn agreeing(n: usize) -> Vec<(usize, usize)> {
        (0..n).map(|i| (i % 2, i % 2)).collect()
    }

    #[test]
    fn only_a_matching_record_with_enough_agreement_gates() {
        let good = record(&agreeing(60));
        assert_eq!(gate(None, &binding(), 0.6, 50), Err(Triage::Uncalibrated));
        assert_eq!(gate(Some(&good), &binding(), 0.6, 50), Ok(()));
        let mut b = binding();
        b.template_sha256 = "t2".into();
        assert_eq!(gate(Some(&good), &b, 0.6, 50), Err(Triage::OtherPrompt));
        let mut b = binding();
        b.rubric_sha256 = "r2".into();
        assert_eq!(gate(Some(&good), &b, 0.6, 50), Err(Triage::OtherPrompt));
        let mut b = binding();
        b.configured_model = "other".into();
        assert!(matches!(
            gate(Some(&good), &b, 0.6, 50),
            Err(Triage::OtherJudge { .. })
        ));
        assert_eq!(
            gate(Some(&good), &binding(), 0.6, 61),
            Err(Triage::TooFewLabels { n: 60, min: 61 })
        );
        assert_eq!(answer_gate(&good, Some("fake-judge")), Ok(()));
        assert_eq!(
            answer_gate(&good, Some("fake-judge-2"))
                .unwrap_err()
                .to_string(),
            "model changed (fake-judge calibrated, fake-judge-2 answered)"
        );
        // An answer that stops reporting its model is not taken for the calibrated one.
        assert_eq!(
            answer_gate(&good, None).unwrap_err().to_string(),
            "model changed (fake-judge calibrated, no model id answered)"
        );
    }

    #[test]
    fn a_record_is_bound_to_the_values_of_the_settings() {
        let mut r = record(&agreeing(60));
        r.judge.settings.insert("env.MODEL".into(), "a".into());
        let mut b = binding();
        b.settings.insert("env.MODEL".into(), "a".into());
        assert_eq!(gate(Some(&r), &b, 0.6, 50), Ok(()));
        b.settings.insert("env.MODEL".into(), "b".into());
        assert_eq!(
            gate(Some(&r), &b, 0.6, 50).unwrap_err().to_string(),
            "record for another judge (env.MODEL=a, not env.MODEL=b)"
        );
        // A secret's hash binds it, and a difference never shows the hash.
        let mut r = record(&agreeing(60));
        r.judge
            .settings
            .insert("env.API_KEY".into(), format!("{SECRET_PREFIX}1111"));
        let mut b = binding();
        b.settings
            .insert("env.API_KEY".into(), format!("{SECRET_PREFIX}2222"));
        let why = gate(Some(&r), &b, 0.6, 50).unwrap_err().to_string();
        assert_eq!(
            why,
            "record for another judge (env.API_KEY=(secret), not env.API_KEY=(another secret))"
        );
        assert!(!why.contains("1111") && !why.contains("2222"));
        // The sampling settings are part of the binding too.
        let mut b = binding();
        b.params = "temperature=1".into();
        assert!(matches!(
            gate(Some(&record(&agreeing(60))), &b, 0.6, 50),
            Err(Triage::OtherJudge { .. })
        ));
    }

    #[test]
    fn a_weakly_bound_or_old_record_never_gates() {
        // Perfect agreement, but nothing pins what answered.
        let mut weak = record(&agreeing(60));
        weak.judge.reported_model = None;
        assert_eq!(weak.judge.strength(), BindingStrength::Weak);
        assert_eq!(
            gate(Some(&weak), &binding(), 0.6, 50),
            Err(Triage::WeakBinding)
        );
        assert_eq!(standing(&weak, 0.6, 50), Err(Triage::WeakBinding));
        assert!(
            Triage::WeakBinding
                .notice("tone")
                .unwrap()
                .contains("llm_call")
        );
        assert!(Triage::WeakBinding.to_string().starts_with("uncalibrated"));
        // A model the configuration pins makes it strong.
        weak.judge.pinned_model = Some("llama3".into());
        let mut b = binding();
        b.pinned_model = Some("llama3".into());
        assert_eq!(gate(Some(&weak), &b, 0.6, 50), Ok(()));
        // A record written before bindings: not matching, whatever it says.
        let mut old = record(&agreeing(60));
        old.format = 1;
        assert_eq!(
            gate(Some(&old), &binding(), 0.6, 50),
            Err(Triage::OldRecord { format: 1 })
        );
        assert_eq!(
            standing(&old, 0.6, 50),
            Err(Triage::OldRecord { format: 1 })
        );
    }

    #[test]
    fn a_record_of_format_1_still_reads() {
        let mut v = serde_json::to_value(record(&agreeing(60))).unwrap();
        v["format"] = 1.into();
        let judge = v["judge"].as_object_mut().unwrap();
        judge.remove("pinned_model");
        judge.remove("reported_model");
        let back: CalibrationRecord = serde_json::from_value(v).unwrap();
        assert_eq!(back.format, 1);
        assert_eq!(back.judge.reported_model, None);
    }

    #[test]
    fn a_coin_flip_judge_does_not_gate() {
        // Agrees on half the items, by chance alone: kappa near 0.
        let pairs: Vec<(usize, usize)> = (0..100).map(|i| (i % 2, (i / 2) % 2)).collect();
        let r = record(&pairs);
        assert!(r.metrics.kappa.unwrap().abs() < 0.05);
        assert!(matches!(
            gate(Some(&r), &binding(), 0.6, 50),
            Err(Triage::LowKappa { .. })
        ));
        // A judge that always says pass: kappa 0 however often it agrees.
        let pairs: Vec<(usize, usize)> = (0..100).map(|i| (1, usize::from(i >= 10))).collect();
        let m = CalibrationMetrics::compute(&pairs, JudgeScale::Binary, 2, 0, 1);
        assert_eq!(m.accuracy, 0.9);
        assert_eq!(m.kappa, Some(0.0));
        assert_eq!(m.base_rate, 0.1);
        assert!(thresholds(&m, 0.6, 50).is_err());
    }

    #[test]
    fn graded_scales_use_weighted_kappa_and_the_pass_score() {
        let pairs = [(3, 3), (2, 3), (0, 0), (1, 0), (2, 2), (3, 2)];
        let m = CalibrationMetrics::compute(&pairs, JudgeScale::Graded, 2, 1, 1);
        assert_eq!(m.weights, KappaWeights::Quadratic);
        assert_eq!(m.categories, ["0", "1", "2", "3"]);
        assert_eq!((m.items, m.n, m.judge_errors), (7, 6, 1));
        assert!((m.base_rate - 2.0 / 6.0).abs() < 1e-12);
        assert!((m.accuracy - 3.0 / 6.0).abs() < 1e-12);
        assert_eq!(m.confusion[2][3], 1);
    }

    #[test]
    fn a_judge_change_between_runs_is_named() {
        let j = JudgeRef {
            check: "tone".into(),
            endpoint: "openai https://api.openai.com/v1".into(),
            configured_model: "gpt-a".into(),
            template: "pointwise@1".into(),
            template_sha256: "t".into(),
            rubric_sha256: "r".into(),
            gate: "gating".into(),
        };
        let none = Default::default();
        assert!(
            judge_changes(
                std::slice::from_ref(&j),
                std::slice::from_ref(&j),
                &none,
                &none
            )
            .is_empty()
        );
        let mut k = j.clone();
        k.configured_model = "gpt-b".into();
        k.gate = "triage: record for another judge".into();
        assert_eq!(
            judge_changes(std::slice::from_ref(&j), &[k], &none, &none),
            ["judge `tone`: model gpt-a -> gpt-b; gating -> triage: record for another judge"]
        );
        let ma = ["m-1".to_owned()].into_iter().collect();
        let mb = ["m-2".to_owned()].into_iter().collect();
        assert_eq!(
            judge_changes(std::slice::from_ref(&j), std::slice::from_ref(&j), &ma, &mb),
            ["judge answers came from m-1 in A and m-2 in B"]
        );
    }

    #[test]
    fn records_read_back_as_written() {
        let r = record(&agreeing(60));
        let text = serde_json::to_string_pretty(&r).unwrap();
        let back: CalibrationRecord = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
        assert_eq!(
            record_file_name("support", "tone"),
            "support.tone.calibration.json"
        );
    }
}
