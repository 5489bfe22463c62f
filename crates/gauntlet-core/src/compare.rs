//! Comparing two runs of the same suite: [`Comparison`], built by [`compare`] from the two
//! runs' case results.
//!
//! Cases are paired by id. A case "passes" when its combined status is PASS (pass^k over its
//! trials). Cases that ended in error, were blocked, skipped or quarantined in either run
//! are not comparable and are listed apart: an error is not evidence either way. The paired
//! pass/fail outcomes get an exact McNemar test; each run's pass rate gets a Wilson interval.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::result::{CaseResult, CaseStatus, Score};
use crate::stats::{mcnemar_exact, wilson};
use crate::summary::Summary;

/// What comparison needs from one case (a few bytes, so large runs compare cheaply).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CaseDigest {
    /// Case id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Combined status.
    pub status: CaseStatus,
    /// Task total or refusal score.
    pub score: Option<f64>,
    /// Hard policy failures.
    pub hard_fail: bool,
    /// Quarantined.
    pub quarantined: bool,
    /// Mean trial wall time in milliseconds.
    pub latency_ms: f64,
    /// Tokens used over all trials (prompt and completion).
    pub tokens: u64,
    /// The most useful reason it did not pass.
    pub reason: String,
    /// The check kinds (`no_canary`, `tool_called`, ...) of the gating verdicts that failed,
    /// hard failures first, each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_checks: Vec<String>,
}

impl CaseDigest {
    /// Digests a case result.
    pub fn of(r: &CaseResult, reason: String) -> CaseDigest {
        let n = r.trials.len().max(1) as f64;
        CaseDigest {
            id: r.case.id.clone(),
            name: r.case.name.clone(),
            status: r.status,
            score: match r.score {
                Score::Unscored => None,
                ref s => s.value(),
            },
            hard_fail: !r.hard_fails.is_empty(),
            quarantined: r.quarantined,
            latency_ms: r.trials.iter().map(|t| t.duration_ms as f64).sum::<f64>() / n,
            tokens: r
                .trials
                .iter()
                .flat_map(|t| t.trace.llm_calls())
                .map(|l| l.usage.input_tokens + l.usage.output_tokens)
                .sum(),
            reason,
            failed_checks: failed_checks(r),
        }
    }

    fn comparable(&self) -> bool {
        !self.quarantined
            && matches!(
                self.status,
                CaseStatus::Pass | CaseStatus::Fail | CaseStatus::Conditional
            )
    }

    fn passed(&self) -> bool {
        self.status == CaseStatus::Pass
    }
}

/// The check kinds of a case's failing gating verdicts over its trials, hard ones first.
pub fn failed_checks(r: &CaseResult) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for hard in [true, false] {
        for v in r.trials.iter().flat_map(|t| &t.verdicts) {
            if v.gating && !v.passed && v.hard_fail == hard && !out.contains(&v.check) {
                out.push(v.check.clone());
            }
        }
    }
    out
}

/// A case whose result changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CaseChange {
    /// Case id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Status in run A.
    pub before: CaseStatus,
    /// Status in run B.
    pub after: CaseStatus,
    /// Score in run A.
    pub score_before: Option<f64>,
    /// Score in run B.
    pub score_after: Option<f64>,
    /// Why it does not pass now (for new failures).
    pub reason: String,
    /// The check kinds that fail now, hard failures first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_checks: Vec<String>,
}

/// A pass rate with its 95% Wilson interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Rate {
    /// Passing cases.
    pub passed: u64,
    /// Comparable cases.
    pub total: u64,
    /// passed / total.
    pub rate: f64,
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

impl Rate {
    fn of(passed: u64, total: u64) -> Rate {
        let (low, high) = wilson(passed, total, 0.05);
        Rate {
            passed,
            total,
            rate: if total == 0 {
                0.0
            } else {
                passed as f64 / total as f64
            },
            low,
            high,
        }
    }
}

/// The comparison of run A (before) with run B (after).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Comparison {
    /// Run A.
    pub run_a: String,
    /// Run B.
    pub run_b: String,
    /// Cases that passed in A and do not in B.
    pub new_failures: Vec<CaseChange>,
    /// Cases that did not pass in A and pass in B.
    pub fixed: Vec<CaseChange>,
    /// Comparable cases that did not pass in either.
    pub still_failing: Vec<CaseChange>,
    /// Comparable cases that passed in both.
    pub unchanged_pass: usize,
    /// Cases not comparable (error, blocked, skipped or quarantined in either run).
    pub not_comparable: Vec<String>,
    /// Cases only in A.
    pub only_in_a: Vec<String>,
    /// Cases only in B.
    pub only_in_b: Vec<String>,
    /// Pairs that passed only in A (McNemar's b).
    pub discordant_a_only: u64,
    /// Pairs that passed only in B (McNemar's c).
    pub discordant_b_only: u64,
    /// Two-sided exact McNemar p-value.
    pub mcnemar_p: f64,
    /// A's pass rate over comparable paired cases.
    pub pass_rate_a: Rate,
    /// B's pass rate over comparable paired cases.
    pub pass_rate_b: Rate,
    /// States.
    pub status_a: String,
    /// State of B.
    pub status_b: String,
    /// Task averages.
    pub task_avg_a: Option<f64>,
    /// Task average of B.
    pub task_avg_b: Option<f64>,
    /// Refusal averages.
    pub refusal_avg_a: Option<f64>,
    /// Refusal average of B.
    pub refusal_avg_b: Option<f64>,
    /// Cases with hard policy failures.
    pub hard_fails_a: usize,
    /// Hard failures in B.
    pub hard_fails_b: usize,
    /// Mean trial latency, ms.
    pub latency_ms_a: f64,
    /// Mean trial latency of B.
    pub latency_ms_b: f64,
    /// Total tokens (a cost proxy).
    pub tokens_a: u64,
    /// Total tokens of B.
    pub tokens_b: u64,
    /// What changed in the judges between the runs (model, prompt, rubric, gate): a score
    /// that moved may be the judge's doing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judge_changes: Vec<String>,
    /// What run A's model calls spent (agent, judges, total), when it recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spend_a: Option<crate::cost::RunSpend>,
    /// What run B's model calls spent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spend_b: Option<crate::cost::RunSpend>,
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 { 0.0 } else { s / n as f64 }
}

/// Compares run A with run B.
pub fn compare(
    run_a: &str,
    a: &[CaseDigest],
    summary_a: Option<&Summary>,
    run_b: &str,
    b: &[CaseDigest],
    summary_b: Option<&Summary>,
) -> Comparison {
    let by_id: HashMap<&str, &CaseDigest> = a.iter().map(|c| (c.id.as_str(), c)).collect();
    let b_ids: HashMap<&str, ()> = b.iter().map(|c| (c.id.as_str(), ())).collect();
    let mut cmp = Comparison {
        run_a: run_a.into(),
        run_b: run_b.into(),
        new_failures: Vec::new(),
        fixed: Vec::new(),
        still_failing: Vec::new(),
        unchanged_pass: 0,
        not_comparable: Vec::new(),
        only_in_a: a
            .iter()
            .filter(|c| !b_ids.contains_key(c.id.as_str()))
            .map(|c| c.id.clone())
            .collect(),
        only_in_b: Vec::new(),
        discordant_a_only: 0,
        discordant_b_only: 0,
        mcnemar_p: 1.0,
        pass_rate_a: Rate::of(0, 0),
        pass_rate_b: Rate::of(0, 0),
        status_a: summary_a.map_or("unfinished".into(), |s| s.status.to_string()),
        status_b: summary_b.map_or("unfinished".into(), |s| s.status.to_string()),
        task_avg_a: summary_a.and_then(|s| s.tasks.avg),
        task_avg_b: summary_b.and_then(|s| s.tasks.avg),
        refusal_avg_a: summary_a.and_then(|s| s.refusals.avg),
        refusal_avg_b: summary_b.and_then(|s| s.refusals.avg),
        hard_fails_a: a.iter().filter(|c| c.hard_fail).count(),
        hard_fails_b: b.iter().filter(|c| c.hard_fail).count(),
        latency_ms_a: mean(a.iter().map(|c| c.latency_ms)),
        latency_ms_b: mean(b.iter().map(|c| c.latency_ms)),
        tokens_a: a.iter().map(|c| c.tokens).sum(),
        tokens_b: b.iter().map(|c| c.tokens).sum(),
        judge_changes: Vec::new(),
        spend_a: summary_a.and_then(|s| s.spend.clone()),
        spend_b: summary_b.and_then(|s| s.spend.clone()),
    };
    let (mut pa, mut pb, mut n) = (0u64, 0u64, 0u64);
    for cb in b {
        let Some(ca) = by_id.get(cb.id.as_str()) else {
            cmp.only_in_b.push(cb.id.clone());
            continue;
        };
        if !ca.comparable() || !cb.comparable() {
            cmp.not_comparable.push(cb.id.clone());
            continue;
        }
        n += 1;
        let change = CaseChange {
            id: cb.id.clone(),
            name: cb.name.clone(),
            before: ca.status,
            after: cb.status,
            score_before: ca.score,
            score_after: cb.score,
            reason: cb.reason.clone(),
            failed_checks: cb.failed_checks.clone(),
        };
        match (ca.passed(), cb.passed()) {
            (true, true) => {
                cmp.unchanged_pass += 1;
                pa += 1;
                pb += 1;
            }
            (true, false) => {
                cmp.discordant_a_only += 1;
                pa += 1;
                cmp.new_failures.push(change);
            }
            (false, true) => {
                cmp.discordant_b_only += 1;
                pb += 1;
                cmp.fixed.push(change);
            }
            (false, false) => cmp.still_failing.push(change),
        }
    }
    cmp.mcnemar_p = mcnemar_exact(cmp.discordant_a_only, cmp.discordant_b_only);
    cmp.pass_rate_a = Rate::of(pa, n);
    cmp.pass_rate_b = Rate::of(pb, n);
    cmp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(id: &str, status: CaseStatus) -> CaseDigest {
        CaseDigest {
            id: id.into(),
            name: id.into(),
            status,
            score: None,
            hard_fail: status == CaseStatus::Fail,
            quarantined: false,
            latency_ms: 10.0,
            tokens: 5,
            reason: String::new(),
            failed_checks: Vec::new(),
        }
    }

    #[test]
    fn pairs_cases_and_counts_discordance() {
        use CaseStatus::*;
        let a = [
            d("1", Pass),
            d("2", Pass),
            d("3", Fail),
            d("4", Error),
            d("5", Pass),
            d("only-a", Pass),
        ];
        let b = [
            d("1", Pass),
            d("2", Fail),
            d("3", Pass),
            d("4", Pass),
            d("5", Conditional),
            d("only-b", Pass),
        ];
        let c = compare("A", &a, None, "B", &b, None);
        assert_eq!(c.unchanged_pass, 1);
        assert_eq!(
            c.new_failures
                .iter()
                .map(|x| x.id.as_str())
                .collect::<Vec<_>>(),
            ["2", "5"]
        );
        assert_eq!(c.fixed.len(), 1);
        assert_eq!(
            c.not_comparable,
            ["4"],
            "an error is not evidence either way"
        );
        assert_eq!((c.discordant_a_only, c.discordant_b_only), (2, 1));
        assert_eq!(c.mcnemar_p, 1.0);
        assert_eq!(c.only_in_a, ["only-a"]);
        assert_eq!(c.only_in_b, ["only-b"]);
        assert_eq!((c.pass_rate_a.passed, c.pass_rate_a.total), (3, 4));
        assert_eq!((c.pass_rate_b.passed, c.pass_rate_b.total), (2, 4));
    }
}
