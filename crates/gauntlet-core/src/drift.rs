//! Drift between two batches of graded traffic (a canary or nightly batch against a baseline
//! run or the previous batch): per check, the pass rate on each side with its Wilson
//! interval, a two-proportion test, and a drift flag ([`DriftReport`], built by [`drift`]).
//!
//! The test is the pooled two-proportion z-test (two-sided); when any expected cell count is
//! below 5, where the normal approximation is poor, Fisher's exact test (two-sided, summing
//! the tables no more likely than the one observed) is used instead, and the result says
//! which. A check drifts when its p-value is below `alpha / m` (Bonferroni over the `m` checks
//! compared), so that comparing many checks does not flag one by chance.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::result::CaseResult;
use crate::stats::wilson;

/// Passes out of assessed verdicts of one check.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Verdicts that passed.
    pub passed: u64,
    /// Verdicts that were assessed and gating.
    pub total: u64,
}

/// Tallies the gating, assessed verdicts of every trial, per check key; plus `(case)`, the
/// cases that passed out of the cases with a decided status.
pub fn tally<'a>(cases: impl IntoIterator<Item = &'a CaseResult>) -> BTreeMap<String, Tally> {
    use crate::result::CaseStatus;
    let mut out: BTreeMap<String, Tally> = BTreeMap::new();
    for c in cases {
        if matches!(
            c.status,
            CaseStatus::Pass | CaseStatus::Fail | CaseStatus::Conditional
        ) {
            let t = out.entry("(case)".into()).or_default();
            t.total += 1;
            t.passed += u64::from(c.status == CaseStatus::Pass);
        }
        for trial in &c.trials {
            for v in trial.verdicts.iter().filter(|v| v.counts()) {
                let t = out.entry(v.check.clone()).or_default();
                t.total += 1;
                t.passed += u64::from(v.passed);
            }
        }
    }
    out
}

/// One side's pass rate.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct SideRate {
    /// Passed.
    pub passed: u64,
    /// Assessed.
    pub total: u64,
    /// passed / total (0 when nothing was assessed).
    pub rate: f64,
    /// 95% Wilson interval, low end.
    pub low: f64,
    /// 95% Wilson interval, high end.
    pub high: f64,
}

impl SideRate {
    fn of(t: Tally) -> SideRate {
        let (low, high) = wilson(t.passed, t.total, 0.05);
        SideRate {
            passed: t.passed,
            total: t.total,
            rate: if t.total == 0 {
                0.0
            } else {
                t.passed as f64 / t.total as f64
            },
            low,
            high,
        }
    }
}

/// One check compared.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct CheckDrift {
    /// The check key (`no_canary`, `refusal`, ...), or `(case)` for case pass rates.
    pub check: String,
    /// The baseline side.
    pub a: SideRate,
    /// The new batch.
    pub b: SideRate,
    /// `b.rate - a.rate`.
    pub delta: f64,
    /// `z` (pooled two-proportion z-test) or `fisher` (exact); `none` when a side has no
    /// assessed verdict.
    pub test: String,
    /// Two-sided p-value (1 when not tested).
    pub p: f64,
    /// Significant at the corrected threshold.
    pub drift: bool,
}

/// The drift of every check between two runs.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct DriftReport {
    /// The baseline run.
    pub run_a: String,
    /// The new batch.
    pub run_b: String,
    /// The family-wise significance level.
    pub alpha: f64,
    /// The per-check threshold: `alpha / m`.
    pub threshold: f64,
    /// Every check seen on either side.
    pub checks: Vec<CheckDrift>,
    /// Checks flagged.
    pub drifted: usize,
}

/// Compares two tallies.
pub fn drift(
    run_a: &str,
    a: &BTreeMap<String, Tally>,
    run_b: &str,
    b: &BTreeMap<String, Tally>,
    alpha: f64,
) -> DriftReport {
    let keys: Vec<&String> = {
        let mut k: Vec<&String> = a.keys().chain(b.keys()).collect();
        k.sort();
        k.dedup();
        k
    };
    let tested = keys
        .iter()
        .filter(|k| {
            a.get(**k).is_some_and(|t| t.total > 0) && b.get(**k).is_some_and(|t| t.total > 0)
        })
        .count()
        .max(1);
    let threshold = alpha / tested as f64;
    let mut checks = Vec::new();
    for k in keys {
        let ta = a.get(k).copied().unwrap_or_default();
        let tb = b.get(k).copied().unwrap_or_default();
        let (test, p) = if ta.total == 0 || tb.total == 0 {
            ("none", 1.0)
        } else {
            two_proportion(ta, tb)
        };
        let (ra, rb) = (SideRate::of(ta), SideRate::of(tb));
        checks.push(CheckDrift {
            check: k.clone(),
            delta: rb.rate - ra.rate,
            a: ra,
            b: rb,
            test: test.into(),
            p,
            drift: p < threshold,
        });
    }
    let drifted = checks.iter().filter(|c| c.drift).count();
    DriftReport {
        run_a: run_a.into(),
        run_b: run_b.into(),
        alpha,
        threshold,
        checks,
        drifted,
    }
}

/// The test used and its two-sided p-value.
pub fn two_proportion(a: Tally, b: Tally) -> (&'static str, f64) {
    let (x1, n1, x2, n2) = (a.passed, a.total, b.passed, b.total);
    let n = (n1 + n2) as f64;
    let pass = (x1 + x2) as f64;
    let fail = n - pass;
    let min_expected = [
        n1 as f64 * pass / n,
        n1 as f64 * fail / n,
        n2 as f64 * pass / n,
        n2 as f64 * fail / n,
    ]
    .into_iter()
    .fold(f64::INFINITY, f64::min);
    if min_expected < 5.0 {
        return ("fisher", fisher_exact(x1, n1, x2, n2));
    }
    let p = pass / n;
    let se = (p * (1.0 - p) * (1.0 / n1 as f64 + 1.0 / n2 as f64)).sqrt();
    if se == 0.0 {
        return ("z", 1.0);
    }
    let z = (x2 as f64 / n2 as f64 - x1 as f64 / n1 as f64) / se;
    ("z", (erfc(z.abs() / std::f64::consts::SQRT_2)).min(1.0))
}

/// The complementary error function (Numerical Recipes' erfcc, fractional error below 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// Two-sided Fisher exact test of a 2x2 table (passes x1 of n1, x2 of n2).
fn fisher_exact(x1: u64, n1: u64, x2: u64, n2: u64) -> f64 {
    let n = (n1 + n2) as usize;
    let mut lf = vec![0.0f64; n + 1];
    for i in 1..=n {
        lf[i] = lf[i - 1] + (i as f64).ln();
    }
    let k = (x1 + x2) as usize;
    let (n1, n2) = (n1 as usize, n2 as usize);
    let ln_p = |a: usize| -> f64 {
        // P(X = a) for the hypergeometric: a passes in the first row.
        lf[k] + lf[n - k] + lf[n1] + lf[n2]
            - lf[n]
            - lf[a]
            - lf[n1 - a]
            - lf[k - a]
            - lf[n2 + a - k]
    };
    let lo = k.saturating_sub(n2);
    let hi = k.min(n1);
    let observed = ln_p(x1 as usize);
    let mut p = 0.0;
    for a in lo..=hi {
        let l = ln_p(a);
        if l <= observed + 1e-7 {
            p += l.exp();
        }
    }
    p.min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(passed: u64, total: u64) -> Tally {
        Tally { passed, total }
    }

    #[test]
    fn a_real_drop_is_flagged_and_noise_is_not() {
        let a: BTreeMap<String, Tally> = [
            ("no_canary".into(), t(198, 200)),
            ("refusal".into(), t(90, 100)),
        ]
        .into();
        let b: BTreeMap<String, Tally> = [
            ("no_canary".into(), t(160, 200)),
            ("refusal".into(), t(88, 100)),
        ]
        .into();
        let r = drift("a", &a, "b", &b, 0.05);
        assert_eq!(r.threshold, 0.025);
        let leak = &r.checks[0];
        assert_eq!(leak.check, "no_canary");
        assert!(leak.drift && leak.p < 1e-6, "{leak:?}");
        let refusal = &r.checks[1];
        assert!(!refusal.drift && refusal.p > 0.5, "{refusal:?}");
        assert_eq!(r.drifted, 1);
    }

    #[test]
    fn the_z_test_matches_a_known_value_and_small_counts_use_fishers_test() {
        // 45/50 vs 35/50: z = 2.5, two-sided p = 0.0124.
        let (test, p) = two_proportion(t(45, 50), t(35, 50));
        assert_eq!(test, "z");
        assert!((p - 0.0124).abs() < 5e-4, "{p}");
        // Fisher's tea-tasting table (3/4 vs 1/4): two-sided p = 0.486.
        let (test, p) = two_proportion(t(3, 4), t(1, 4));
        assert_eq!(test, "fisher");
        assert!((p - 0.4857).abs() < 1e-3, "{p}");
        assert!((two_proportion(t(5, 5), t(5, 5)).1 - 1.0).abs() < 1e-9);
    }
}
