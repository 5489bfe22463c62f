//! Server nondeterminism: [`assess`] reads the N repeats of one case (the same request, at
//! temperature 0, with the same seed) and says how often the output text and the verdicts
//! differ; [`StabilityReport`] folds the cases into one overall line.
//!
//! Why this comes first: an inference server that answers the same request differently
//! (batching, floating-point order, a seed it ignores) makes every later claim about the
//! agent's consistency noise. A repeat that did not produce a full answer (an error, a
//! timeout, a block, a reply cut by the token limit) is a *faulted* repeat: it is counted as
//! such and never as a stable one, and a case with fewer than two full answers is not
//! assessed.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::result::{Outcome, TrialResult};

/// What the repeats of one case show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StabilityClass {
    /// Every repeat completed with the same text and the same verdicts.
    Stable,
    /// The completed repeats differ in text or in verdicts.
    Unstable,
    /// The completed repeats agree, but some repeats faulted: not enough to call it stable.
    Faulted,
    /// Fewer than two repeats completed: nothing to compare.
    NotAssessed,
}

impl StabilityClass {
    /// The name shown in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            StabilityClass::Stable => "stable",
            StabilityClass::Unstable => "UNSTABLE",
            StabilityClass::Faulted => "faulted",
            StabilityClass::NotAssessed => "not assessed",
        }
    }
}

/// The repeats of one case, compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseStability {
    /// The case id.
    pub case_id: String,
    /// Repeats sent.
    pub repeats: u32,
    /// Repeats that completed with a full answer (compared below).
    pub completed: u32,
    /// Faulted repeats by kind: `error`, `timeout`, `blocked`, `cut` (token limit).
    pub faulted: BTreeMap<String, u32>,
    /// Distinct output texts among the completed repeats.
    pub distinct_outputs: u32,
    /// Completed repeats whose text differs from the most common one.
    pub outputs_differing: u32,
    /// `outputs_differing / completed` (0 when nothing completed).
    pub output_differ_share: f64,
    /// Distinct verdict patterns (each check's pass, fail or not assessed) among the
    /// completed repeats.
    pub distinct_verdicts: u32,
    /// Completed repeats whose verdicts differ from the most common pattern.
    pub verdicts_differing: u32,
    /// `verdicts_differing / completed`.
    pub verdict_differ_share: f64,
    /// The conclusion.
    pub class: StabilityClass,
}

/// The text a repeat produced: every answer, with tool calls and their arguments, in order.
pub(crate) fn output_of(t: &TrialResult) -> String {
    let mut s = String::new();
    for tc in t.trace.tool_calls() {
        s.push_str("\u{1}tool:");
        s.push_str(&tc.name);
        s.push('\u{1}');
        s.push_str(&tc.arguments.to_string());
    }
    for a in t.trace.answers() {
        s.push('\u{2}');
        s.push_str(a);
    }
    s
}

/// Each check's verdict as one comparable string.
pub(crate) fn verdicts_of(t: &TrialResult) -> String {
    t.verdicts
        .iter()
        .map(|v| {
            let state = if !v.assessed {
                "na"
            } else if v.passed {
                "pass"
            } else {
                "fail"
            };
            format!("{}={state}", v.label)
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// Why a repeat faulted, or `None` for a full answer.
pub(crate) fn fault_of(t: &TrialResult) -> Option<&'static str> {
    match t.outcome {
        Outcome::Completed if t.trace.turns.iter().any(|x| x.truncated) => Some("cut"),
        Outcome::Completed => None,
        Outcome::Blocked => Some("blocked"),
        Outcome::Error => Some("error"),
        Outcome::Timeout => Some("timeout"),
    }
}

/// (distinct values, items that differ from the most common value).
fn spread(items: &[String]) -> (u32, u32) {
    let mut counts: HashMap<&str, u32> = HashMap::new();
    for i in items {
        *counts.entry(i.as_str()).or_default() += 1;
    }
    let modal = counts.values().copied().max().unwrap_or(0);
    (counts.len() as u32, items.len() as u32 - modal)
}

pub(crate) fn share(n: u32, of: u32) -> f64 {
    if of == 0 {
        0.0
    } else {
        f64::from(n) / f64::from(of)
    }
}

/// Compares the repeats of one case.
pub fn assess(case_id: &str, trials: &[TrialResult]) -> CaseStability {
    let mut faulted = BTreeMap::new();
    let mut outputs = Vec::new();
    let mut verdicts = Vec::new();
    for t in trials {
        match fault_of(t) {
            Some(kind) => *faulted.entry(kind.to_string()).or_insert(0) += 1,
            None => {
                outputs.push(output_of(t));
                verdicts.push(verdicts_of(t));
            }
        }
    }
    let completed = outputs.len() as u32;
    let (distinct_outputs, outputs_differing) = spread(&outputs);
    let (distinct_verdicts, verdicts_differing) = spread(&verdicts);
    let class = if completed < 2 {
        StabilityClass::NotAssessed
    } else if outputs_differing > 0 || verdicts_differing > 0 {
        StabilityClass::Unstable
    } else if !faulted.is_empty() {
        StabilityClass::Faulted
    } else {
        StabilityClass::Stable
    };
    CaseStability {
        case_id: case_id.to_string(),
        repeats: trials.len() as u32,
        completed,
        faulted,
        distinct_outputs,
        outputs_differing,
        output_differ_share: share(outputs_differing, completed),
        distinct_verdicts,
        verdicts_differing,
        verdict_differ_share: share(verdicts_differing, completed),
        class,
    }
}

/// Every case's repeats and the overall picture.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StabilityReport {
    /// Repeats per case.
    pub repeat: u32,
    /// One entry per case, in suite order.
    pub cases: Vec<CaseStability>,
    /// Cases per class.
    pub classes: BTreeMap<String, u32>,
    /// Completed repeats over every case.
    pub completed: u32,
    /// Faulted repeats over every case.
    pub faulted: u32,
    /// Share of completed repeats whose text differs from their case's modal text.
    pub output_differ_share: f64,
    /// Share of completed repeats whose verdicts differ from their case's modal verdicts.
    pub verdict_differ_share: f64,
}

impl StabilityReport {
    /// Folds the cases.
    pub fn new(repeat: u32, cases: Vec<CaseStability>) -> StabilityReport {
        let mut classes = BTreeMap::new();
        for c in [
            StabilityClass::Stable,
            StabilityClass::Unstable,
            StabilityClass::Faulted,
            StabilityClass::NotAssessed,
        ] {
            let key = serde_json::to_value(c)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            classes.insert(key, cases.iter().filter(|x| x.class == c).count() as u32);
        }
        let completed = cases.iter().map(|c| c.completed).sum();
        let faulted = cases.iter().flat_map(|c| c.faulted.values()).sum();
        let od = cases.iter().map(|c| c.outputs_differing).sum();
        let vd = cases.iter().map(|c| c.verdicts_differing).sum();
        StabilityReport {
            repeat,
            classes,
            completed,
            faulted,
            output_differ_share: share(od, completed),
            verdict_differ_share: share(vd, completed),
            cases,
        }
    }

    /// Cases of one class.
    pub fn count(&self, class: StabilityClass) -> u32 {
        self.cases.iter().filter(|c| c.class == class).count() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(answer: &str, passed: bool, outcome: Outcome, truncated: bool) -> TrialResult {
        crate::result::test_trial("hi", answer, truncated, passed, outcome)
    }

    #[test]
    fn identical_repeats_are_stable() {
        let t = vec![trial("ok", true, Outcome::Completed, false); 4];
        let c = assess("c", &t);
        assert_eq!(c.class, StabilityClass::Stable);
        assert_eq!((c.distinct_outputs, c.outputs_differing), (1, 0));
        assert_eq!(c.output_differ_share, 0.0);
    }

    #[test]
    fn differing_text_is_unstable_even_with_the_same_verdict() {
        let mut t = vec![trial("ok one", true, Outcome::Completed, false); 3];
        t.push(trial("ok two", true, Outcome::Completed, false));
        let c = assess("c", &t);
        assert_eq!(c.class, StabilityClass::Unstable);
        assert_eq!((c.distinct_outputs, c.outputs_differing), (2, 1));
        assert_eq!(c.output_differ_share, 0.25);
        assert_eq!(c.verdicts_differing, 0);
    }

    #[test]
    fn differing_verdicts_are_counted() {
        let t = vec![
            trial("ok", true, Outcome::Completed, false),
            trial("no", false, Outcome::Completed, false),
        ];
        let c = assess("c", &t);
        assert_eq!(c.class, StabilityClass::Unstable);
        assert_eq!((c.distinct_verdicts, c.verdicts_differing), (2, 1));
        assert_eq!(c.verdict_differ_share, 0.5);
    }

    #[test]
    fn faulted_repeats_are_never_stable() {
        let t = vec![
            trial("ok", true, Outcome::Completed, false),
            trial("ok", true, Outcome::Completed, false),
            trial("", false, Outcome::Error, false),
            trial("ok", true, Outcome::Completed, true),
        ];
        let c = assess("c", &t);
        assert_eq!(c.class, StabilityClass::Faulted);
        assert_eq!(c.completed, 2);
        assert_eq!(c.faulted.get("error"), Some(&1));
        assert_eq!(c.faulted.get("cut"), Some(&1));
        let one = vec![
            trial("ok", true, Outcome::Completed, false),
            trial("", false, Outcome::Blocked, false),
        ];
        assert_eq!(assess("c", &one).class, StabilityClass::NotAssessed);
    }

    #[test]
    fn the_report_folds_cases() {
        let stable = assess("a", &vec![trial("ok", true, Outcome::Completed, false); 2]);
        let unstable = assess(
            "b",
            &[
                trial("ok", true, Outcome::Completed, false),
                trial("no", false, Outcome::Completed, false),
            ],
        );
        let r = StabilityReport::new(2, vec![stable, unstable]);
        assert_eq!(r.count(StabilityClass::Stable), 1);
        assert_eq!(r.count(StabilityClass::Unstable), 1);
        assert_eq!(r.classes.get("unstable"), Some(&1));
        assert_eq!(r.completed, 4);
        assert_eq!(r.output_differ_share, 0.25);
    }
}
