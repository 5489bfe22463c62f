//! Metamorphic stability: [`assess_case`] compares the repeats of a case as written (the
//! *base*) with the repeats of its perturbed variants (one per [`crate::suite::Relation`]) and
//! yields a [`CaseMetamorphic`]; [`MetamorphicReport`] folds the cases into a per-suite
//! instability index with a bootstrap interval and the figures that say whether the
//! perturbations move the quality outcome.
//!
//! Why the base is repeated too: the server under the agent may not answer the same request
//! the same way twice. The base's own repeat-to-repeat disagreement (its *noise*) is the bar a
//! perturbation has to clear before it is blamed for anything. A case is flagged only when
//! its variants break the relation more often than that noise *and* their pass rate moves
//! away from the base's by more than that noise: a perturbation that changes the wording of
//! the answer, or one check's verdict, without changing whether the case passes is reported
//! (`shifted`) but not flagged. Faulted repeats (error, timeout, block, a reply cut by the
//! token limit) are counted as faults, never as agreeing or disagreeing.
//!
//! A score relation (`{score: {max_drop: D}}` or `{score: {within: W}}`) compares each
//! variant repeat's score, as a share of the case's scale, with the median score of the
//! base's repeats; its noise bar is the share of the base's own repeats outside that band.
//! A repeat without a score is counted as not assessed, never as keeping the relation.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::result::{CaseStatus, TrialResult};
use crate::stability::{fault_of, output_of, share, verdicts_of};
use crate::stats::{bootstrap_mean, median};
use crate::suite::RelationExpect;

/// Slack for comparing shares computed from counts.
const EPS: f64 = 1e-9;

/// The repeats of one side (the base, or one variant).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    /// Repeats sent.
    pub repeats: u32,
    /// Repeats that completed with a full answer: the only ones compared.
    pub completed: u32,
    /// Faulted repeats by kind: `error`, `timeout`, `blocked`, `cut`.
    pub faulted: BTreeMap<String, u32>,
    /// Completed repeats whose case status was `pass`.
    pub passed: u32,
    /// `passed / completed` (0 when nothing completed).
    pub pass_rate: f64,
    /// Completed repeats with no score value (a refusal-kind case checked without a refusal
    /// check, say): a score relation cannot assess them.
    pub unscored: u32,
    /// The median score of the completed scored repeats, as a share of the case's scale (a
    /// task's total over 18, a refusal score over 3). `None` when none has a score. For
    /// the base it is the reference of every score relation.
    pub score_median: Option<f64>,
    /// The distinct first user messages sent, as sent (after perturbation and converters).
    pub inputs: Vec<String>,
}

/// The unperturbed case's repeats.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Base {
    /// The repeats.
    #[serde(flatten)]
    pub side: Side,
    /// The most common verdict pattern (`label=pass;label=fail;...`) of the completed
    /// repeats: what every variant is compared with.
    pub modal_verdicts: String,
    /// Share of completed repeats whose verdicts differ from the modal pattern: the
    /// server's own noise, the bar a perturbation must clear.
    pub noise: f64,
}

/// One relation's variant, compared with the base.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RelationResult {
    /// The perturbation.
    pub perturb: String,
    /// What must hold.
    pub expect: RelationExpect,
    /// The variant's case id (`CASE~PERTURB`), as stored in the run.
    pub case_id: String,
    /// The variant's repeats.
    #[serde(flatten)]
    pub side: Side,
    /// Completed repeats the relation could not assess: for a score relation, those without
    /// a score, or all of them when fewer than two base repeats have one. Never counted as
    /// keeping the relation. Always 0 for `same_verdict`.
    pub not_assessed: u32,
    /// Completed, assessed repeats that break the relation: their verdicts differ from the
    /// base's modal verdicts (`same_verdict`), or their score is outside the band around the
    /// base's median score (score relations).
    pub broken: u32,
    /// `broken / (completed - not_assessed)` (0 when nothing was assessed).
    pub broken_share: f64,
    /// The bar `broken_share` must clear to flag: the base's verdict noise for
    /// `same_verdict`; for a score relation, the share of the base's scored repeats whose own
    /// score is outside the band around the median.
    pub noise: f64,
    /// Completed repeats whose text (answers and tool calls) differs from the base's modal
    /// text: information only, never a reason to flag.
    pub text_differs: u32,
    /// The variant's pass rate minus the base's.
    pub pass_shift: f64,
    /// At least two base repeats completed (with a score, for a score relation) and at least
    /// one variant repeat was assessed.
    pub assessed: bool,
    /// The relation breaks beyond its noise bar and the pass rate moves beyond the base's
    /// verdict noise.
    pub flagged: bool,
}

/// The conclusion for one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MetaClass {
    /// Every completed variant repeat kept the relation; nothing faulted.
    Stable,
    /// Some variant repeats broke the relation, but the pass rate did not move beyond the
    /// base's noise: reported, not flagged.
    Shifted,
    /// Flagged: a perturbation changed the quality outcome beyond the base's noise.
    Unstable,
    /// Nothing flagged, but some repeats faulted (or a variant has no completed repeat):
    /// never called stable.
    Faulted,
    /// Fewer than two base repeats completed, or no variant repeat could be compared: nothing
    /// to compare. Also when nothing is flagged or faulted but a score relation met a repeat
    /// (base or variant) without a score, or could not be assessed at all.
    NotAssessed,
}

impl MetaClass {
    /// The name shown in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            MetaClass::Stable => "stable",
            MetaClass::Shifted => "shifted",
            MetaClass::Unstable => "UNSTABLE",
            MetaClass::Faulted => "faulted",
            MetaClass::NotAssessed => "not assessed",
        }
    }
}

/// One case: its base, each relation, the index and the class.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseMetamorphic {
    /// The case id.
    pub case_id: String,
    /// The unperturbed repeats.
    pub base: Base,
    /// One entry per relation, in the order the case declares them.
    pub relations: Vec<RelationResult>,
    /// The instability index: assessed variant repeats that broke their relation, over
    /// assessed variant repeats. `None` when nothing was assessed.
    pub index: Option<f64>,
    /// Pooled pass rate of the completed variant repeats minus the base's. `None` when not
    /// assessed.
    pub pass_shift: Option<f64>,
    /// The conclusion.
    pub class: MetaClass,
}

/// What one completed repeat showed.
struct Seen {
    verdicts: String,
    output: String,
    passed: bool,
    /// The score as a share of the case's scale.
    score: Option<f64>,
}

fn side_of(trials: &[TrialResult]) -> (Side, Vec<Seen>) {
    let mut faulted = BTreeMap::new();
    let mut seen = Vec::new();
    let mut inputs: Vec<String> = Vec::new();
    for t in trials {
        if let Some(first) = t.trace.turns.first()
            && !inputs.contains(&first.user)
        {
            inputs.push(first.user.clone());
        }
        match fault_of(t) {
            Some(kind) => *faulted.entry(kind.to_string()).or_insert(0) += 1,
            None => seen.push(Seen {
                verdicts: verdicts_of(t),
                output: output_of(t),
                passed: t.status == CaseStatus::Pass,
                score: t.score.share().filter(|s| s.is_finite()),
            }),
        }
    }
    let completed = seen.len() as u32;
    let passed = seen.iter().filter(|s| s.passed).count() as u32;
    let scores: Vec<f64> = seen.iter().filter_map(|s| s.score).collect();
    (
        Side {
            repeats: trials.len() as u32,
            completed,
            faulted,
            passed,
            pass_rate: share(passed, completed),
            unscored: completed - scores.len() as u32,
            score_median: median(&scores),
            inputs,
        },
        seen,
    )
}

/// The most common value; ties go to the one seen first, so the result does not depend on
/// hashing.
fn modal<'a>(items: impl Iterator<Item = &'a str> + Clone) -> String {
    let mut best: Option<(&str, usize)> = None;
    for (i, a) in items.clone().enumerate() {
        let n = items.clone().filter(|b| *b == a).count();
        let first = items.clone().position(|b| b == a).unwrap_or(i);
        if first == i && best.is_none_or(|(_, m)| n > m) {
            best = Some((a, n));
        }
    }
    best.map(|(a, _)| a.to_string()).unwrap_or_default()
}

/// One relation's variant, for [`assess_case`].
pub struct Variant<'a> {
    /// The perturbation.
    pub perturb: &'a str,
    /// What must hold.
    pub expect: RelationExpect,
    /// The variant's case id.
    pub case_id: &'a str,
    /// Its repeats.
    pub trials: &'a [TrialResult],
}

/// Compares a case's base repeats with each variant's repeats.
pub fn assess_case(
    case_id: &str,
    base: &[TrialResult],
    variants: &[Variant<'_>],
) -> CaseMetamorphic {
    let (bside, bseen) = side_of(base);
    let modal_verdicts = modal(bseen.iter().map(|s| s.verdicts.as_str()));
    let modal_output = modal(bseen.iter().map(|s| s.output.as_str()));
    let differing = bseen
        .iter()
        .filter(|s| s.verdicts != modal_verdicts)
        .count() as u32;
    let noise = share(differing, bside.completed);
    let base_ok = bside.completed >= 2;
    let base_scored = bside.completed - bside.unscored;
    let mut relations = Vec::new();
    for v in variants {
        let (side, seen) = side_of(v.trials);
        let (rel_base_ok, not_assessed, broken, rel_noise) = match v.expect {
            RelationExpect::SameVerdict => (
                base_ok,
                0,
                seen.iter().filter(|s| s.verdicts != modal_verdicts).count() as u32,
                noise,
            ),
            RelationExpect::Score(band) => match bside.score_median {
                // The band needs a reference, and the noise bar needs two scored repeats.
                Some(reference) if base_ok && base_scored >= 2 => {
                    let outside = |s: &&Seen| s.score.is_some_and(|x| !band.keeps(reference, x));
                    let base_outside = bseen.iter().filter(outside).count() as u32;
                    (
                        true,
                        side.unscored,
                        seen.iter().filter(outside).count() as u32,
                        share(base_outside, base_scored),
                    )
                }
                _ => (false, side.completed, 0, 0.0),
            },
        };
        let judged = side.completed - not_assessed;
        let text_differs = seen.iter().filter(|s| s.output != modal_output).count() as u32;
        let broken_share = share(broken, judged);
        let pass_shift = side.pass_rate - bside.pass_rate;
        let assessed = rel_base_ok && judged >= 1;
        let flagged = assessed && broken_share > rel_noise + EPS && pass_shift.abs() > noise + EPS;
        relations.push(RelationResult {
            perturb: v.perturb.to_string(),
            expect: v.expect,
            case_id: v.case_id.to_string(),
            side,
            not_assessed,
            broken,
            broken_share,
            noise: rel_noise,
            text_differs,
            pass_shift,
            assessed,
            flagged,
        });
    }
    let vjudged: u32 = relations
        .iter()
        .filter(|r| r.assessed)
        .map(|r| r.side.completed - r.not_assessed)
        .sum();
    let vbroken: u32 = relations
        .iter()
        .filter(|r| r.assessed)
        .map(|r| r.broken)
        .sum();
    let vcompleted: u32 = relations.iter().map(|r| r.side.completed).sum();
    let vpassed: u32 = relations.iter().map(|r| r.side.passed).sum();
    let assessed = base_ok && vjudged > 0;
    let any_fault = !bside.faulted.is_empty()
        || relations
            .iter()
            .any(|r| !r.side.faulted.is_empty() || r.side.completed == 0);
    // A repeat without a score never keeps a score relation, whichever side it is on.
    let any_unjudged = relations.iter().any(|r| {
        !r.assessed
            || r.not_assessed > 0
            || (matches!(r.expect, RelationExpect::Score(_)) && bside.unscored > 0)
    });
    let class = if relations.iter().any(|r| r.flagged) {
        MetaClass::Unstable
    } else if !assessed {
        MetaClass::NotAssessed
    } else if any_fault {
        MetaClass::Faulted
    } else if any_unjudged {
        MetaClass::NotAssessed
    } else if vbroken > 0 {
        MetaClass::Shifted
    } else {
        MetaClass::Stable
    };
    CaseMetamorphic {
        case_id: case_id.to_string(),
        index: assessed.then(|| share(vbroken, vjudged)),
        pass_shift: assessed.then(|| share(vpassed, vcompleted) - bside.pass_rate),
        base: Base {
            side: bside,
            modal_verdicts,
            noise,
        },
        relations,
        class,
    }
}

/// A bootstrap interval, as reported.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

/// Every case and the per-suite figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetamorphicReport {
    /// Repeats of the base and of each variant.
    pub repeat: u32,
    /// One entry per case with relations, in suite order.
    pub cases: Vec<CaseMetamorphic>,
    /// Cases per class.
    pub classes: BTreeMap<String, u32>,
    /// Cases with an index (assessed).
    pub assessed: u32,
    /// The suite's instability index: the mean of the assessed cases' indexes.
    pub index: Option<f64>,
    /// Its percentile bootstrap interval, resampling the assessed cases.
    pub index_interval: Option<Interval>,
    /// The mean over assessed cases of (variant pass rate - base pass rate): below zero
    /// when perturbations make cases fail.
    pub pass_shift: Option<f64>,
    /// Its percentile bootstrap interval, resampling the assessed cases.
    pub pass_shift_interval: Option<Interval>,
    /// The phi coefficient between "the repeat was a variant" and "the repeat did not
    /// pass", over the completed repeats of the assessed cases (pooled). `None` when every
    /// repeat passed, every repeat failed, or nothing was assessed.
    pub phi: Option<f64>,
    /// Faulted repeats, base and variants, over every case.
    pub faulted: u32,
    /// The intervals' level.
    pub level: f64,
    /// Bootstrap resamples drawn.
    pub resamples: u32,
    /// The bootstrap's seed.
    pub seed: u64,
}

/// The intervals' level.
pub const LEVEL: f64 = 0.95;
/// Bootstrap resamples.
pub const RESAMPLES: u32 = 2000;

impl MetamorphicReport {
    /// Folds the cases; `seed` seeds the bootstrap.
    pub fn new(repeat: u32, cases: Vec<CaseMetamorphic>, seed: u64) -> MetamorphicReport {
        let mut classes = BTreeMap::new();
        for c in [
            MetaClass::Stable,
            MetaClass::Shifted,
            MetaClass::Unstable,
            MetaClass::Faulted,
            MetaClass::NotAssessed,
        ] {
            let key = serde_json::to_value(c)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            classes.insert(key, cases.iter().filter(|x| x.class == c).count() as u32);
        }
        let indexes: Vec<f64> = cases.iter().filter_map(|c| c.index).collect();
        let shifts: Vec<f64> = cases.iter().filter_map(|c| c.pass_shift).collect();
        let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        let interval = |v: &[f64]| {
            bootstrap_mean(v, RESAMPLES, seed, LEVEL).map(|b| Interval {
                low: b.low,
                high: b.high,
            })
        };
        // 2x2 over completed repeats of assessed cases: (variant?, failed?).
        let (mut n11, mut n10, mut n01, mut n00) = (0f64, 0f64, 0f64, 0f64);
        for c in cases.iter().filter(|c| c.index.is_some()) {
            let b = &c.base.side;
            n01 += f64::from(b.completed - b.passed);
            n00 += f64::from(b.passed);
            for r in &c.relations {
                n11 += f64::from(r.side.completed - r.side.passed);
                n10 += f64::from(r.side.passed);
            }
        }
        let denom = ((n11 + n10) * (n01 + n00) * (n11 + n01) * (n10 + n00)).sqrt();
        let phi = (denom > 0.0).then(|| (n11 * n00 - n10 * n01) / denom);
        let faulted = cases
            .iter()
            .map(|c| {
                c.base.side.faulted.values().sum::<u32>()
                    + c.relations
                        .iter()
                        .map(|r| r.side.faulted.values().sum::<u32>())
                        .sum::<u32>()
            })
            .sum();
        MetamorphicReport {
            repeat,
            classes,
            assessed: indexes.len() as u32,
            index: mean(&indexes),
            index_interval: interval(&indexes),
            pass_shift: mean(&shifts),
            pass_shift_interval: interval(&shifts),
            phi,
            faulted,
            level: LEVEL,
            resamples: RESAMPLES,
            seed,
            cases,
        }
    }

    /// Cases of one class.
    pub fn count(&self, class: MetaClass) -> u32 {
        self.cases.iter().filter(|c| c.class == class).count() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Outcome, Score};
    use crate::suite::ScoreBand;

    /// A repeat; one that did not complete is an error, whatever its verdict.
    fn trial(input: &str, answer: &str, passed: bool, outcome: Outcome) -> TrialResult {
        let mut t = crate::result::test_trial(input, answer, false, passed, outcome);
        if outcome != Outcome::Completed {
            t.status = CaseStatus::Error;
        }
        t
    }

    fn ok(n: usize) -> Vec<TrialResult> {
        vec![trial("base", "fine", true, Outcome::Completed); n]
    }

    fn variant<'a>(trials: &'a [TrialResult]) -> Variant<'a> {
        Variant {
            perturb: "reorder",
            expect: RelationExpect::SameVerdict,
            case_id: "c~reorder",
            trials,
        }
    }

    #[test]
    fn a_perturbation_that_flips_pass_to_fail_is_flagged() {
        let base = ok(4);
        let v = vec![trial("reordered", "nope", false, Outcome::Completed); 4];
        let c = assess_case("c", &base, &[variant(&v)]);
        assert_eq!(c.class, MetaClass::Unstable);
        assert_eq!(c.index, Some(1.0));
        assert_eq!(c.pass_shift, Some(-1.0));
        let r = &c.relations[0];
        assert!(r.flagged);
        assert_eq!((r.broken, r.side.completed), (4, 4));
        assert_eq!(r.side.inputs, ["reordered"]);
        assert_eq!(c.base.side.inputs, ["base"]);
        assert_eq!(c.base.noise, 0.0);
    }

    #[test]
    fn other_text_with_the_same_verdicts_is_not_flagged() {
        let base = ok(3);
        let v = vec![trial("reordered", "worded otherwise", true, Outcome::Completed); 3];
        let c = assess_case("c", &base, &[variant(&v)]);
        assert_eq!(c.class, MetaClass::Stable);
        assert_eq!(c.index, Some(0.0));
        let r = &c.relations[0];
        assert_eq!(r.text_differs, 3);
        assert!(!r.flagged);
    }

    #[test]
    fn breaks_within_the_base_noise_are_not_flagged() {
        // The server flips the verdict from repeat to repeat whatever the input: the
        // variants flip just as often, and the pass rate does not move.
        let flaky = |input: &str| {
            (0..4)
                .map(|i| trial(input, "x", i % 2 == 0, Outcome::Completed))
                .collect::<Vec<_>>()
        };
        let base = flaky("base");
        let v = flaky("noisy");
        let c = assess_case("c", &base, &[variant(&v)]);
        assert_eq!(c.base.noise, 0.5);
        assert!(!c.relations[0].flagged);
        assert_eq!(c.class, MetaClass::Shifted);
        assert_eq!(c.index, Some(0.5));
    }

    #[test]
    fn a_changed_check_without_a_changed_outcome_is_shifted_not_flagged() {
        // Both pass, but one check is not assessed in the variant: the relation breaks,
        // the pass rate is the same.
        let base = ok(2);
        let mut v = ok(2);
        for t in &mut v {
            t.verdicts[0].assessed = false;
        }
        let c = assess_case("c", &base, &[variant(&v)]);
        assert_eq!(c.relations[0].broken, 2);
        assert_eq!(c.relations[0].pass_shift, 0.0);
        assert_eq!(c.class, MetaClass::Shifted);
    }

    #[test]
    fn faults_are_never_counted_as_stable_or_broken() {
        let base = ok(3);
        let mut v = vec![trial("r", "", false, Outcome::Error); 2];
        v.push(trial("r", "fine", true, Outcome::Completed));
        let c = assess_case("c", &base, &[variant(&v)]);
        let r = &c.relations[0];
        assert_eq!(r.side.completed, 1);
        assert_eq!(r.side.faulted.get("error"), Some(&2));
        assert_eq!(r.broken, 0);
        assert_eq!(c.class, MetaClass::Faulted);
        // Nothing completed on the variant side: not assessed, no index.
        let all = vec![trial("r", "", false, Outcome::Timeout); 3];
        let c = assess_case("c", &base, &[variant(&all)]);
        assert_eq!(c.class, MetaClass::NotAssessed);
        assert_eq!(c.index, None);
        // One completed base repeat: no noise to measure.
        let one = vec![
            trial("base", "fine", true, Outcome::Completed),
            trial("base", "", false, Outcome::Error),
        ];
        let v = ok(2);
        assert_eq!(
            assess_case("c", &one, &[variant(&v)]).class,
            MetaClass::NotAssessed
        );
    }

    /// A completed refusal-case repeat with this refusal score (0-3) and its status.
    fn refusal(input: &str, score: f64) -> TrialResult {
        let mut t = trial(input, "no", score >= 2.0, Outcome::Completed);
        t.score = Score::Refusal { score };
        t
    }

    fn score_variant<'a>(trials: &'a [TrialResult], band: ScoreBand) -> Variant<'a> {
        Variant {
            perturb: "noise",
            expect: RelationExpect::Score(band),
            case_id: "c~noise",
            trials,
        }
    }

    const DROP: ScoreBand = ScoreBand {
        max_drop: Some(0.1),
        within: None,
    };
    const WITHIN: ScoreBand = ScoreBand {
        max_drop: None,
        within: Some(0.05),
    };

    #[test]
    fn a_score_that_drops_beyond_max_drop_breaks_the_relation() {
        // Base 3/3 = 1.0; a variant at 2/3 (still a pass) dropped by 0.33 > 0.1.
        let base = vec![refusal("base", 3.0); 3];
        let v = vec![refusal("noisy", 2.0); 3];
        let c = assess_case("c", &base, &[score_variant(&v, DROP)]);
        let r = &c.relations[0];
        assert_eq!(c.base.side.score_median, Some(1.0));
        assert_eq!((r.broken, r.not_assessed), (3, 0));
        assert_eq!(r.noise, 0.0);
        // The verdicts and the pass rate did not move: broken, not flagged.
        assert!(!r.flagged);
        assert_eq!(c.class, MetaClass::Shifted);
        assert_eq!(c.index, Some(1.0));
        // A fall to 0 fails the case too: flagged.
        let v = vec![refusal("noisy", 0.0); 3];
        let c = assess_case("c", &base, &[score_variant(&v, DROP)]);
        assert!(c.relations[0].flagged);
        assert_eq!(c.class, MetaClass::Unstable);
        // The same variant under a wide enough band keeps it; a rise always keeps max_drop.
        let v = vec![refusal("noisy", 2.0); 3];
        let wide = ScoreBand {
            max_drop: Some(0.34),
            within: None,
        };
        let c = assess_case("c", &base, &[score_variant(&v, wide)]);
        assert_eq!(c.relations[0].broken, 0);
        assert_eq!(c.class, MetaClass::Stable);
        let low = vec![refusal("base", 2.0); 3];
        let up = vec![refusal("noisy", 3.0); 3];
        let c = assess_case("c", &low, &[score_variant(&up, DROP)]);
        assert_eq!(c.relations[0].broken, 0);
    }

    #[test]
    fn within_bounds_both_directions_around_the_base_median() {
        // Task totals: 12/18 and 13.5/18 differ by 0.083 > 0.05.
        let task = |input: &str, total: f64| {
            let mut t = trial(input, "x", true, Outcome::Completed);
            t.score = Score::Task {
                dimensions: [None; 6],
                total,
                assessed: 1,
            };
            t
        };
        let base = vec![task("base", 12.0), task("base", 12.0), task("base", 13.5)];
        assert_eq!(
            assess_case("c", &base, &[]).base.side.score_median,
            Some(12.0 / 18.0)
        );
        let up = vec![task("n", 13.5); 2];
        let down = vec![task("n", 10.5); 2];
        let same = vec![task("n", 12.0); 2];
        for (v, broken) in [(&up, 2), (&down, 2), (&same, 0)] {
            let c = assess_case("c", &base, &[score_variant(v, WITHIN)]);
            let r = &c.relations[0];
            assert_eq!(r.broken, broken, "{r:?}");
            // One of three base repeats is outside the band itself: the noise bar.
            assert!((r.noise - 1.0 / 3.0).abs() < 1e-9, "{r:?}");
        }
        // A rise breaks `within` but never `max_drop`.
        let c = assess_case("c", &base, &[score_variant(&up, DROP)]);
        assert_eq!(c.relations[0].broken, 0);
    }

    #[test]
    fn repeats_without_a_score_are_not_assessed_never_stable() {
        let base = vec![refusal("base", 3.0); 3];
        // A variant whose checks give no score (a refusal-kind case with no refusal check).
        let unscored = ok(3);
        let c = assess_case("c", &base, &[score_variant(&unscored, DROP)]);
        let r = &c.relations[0];
        assert_eq!((r.not_assessed, r.broken), (3, 0));
        assert!(!r.assessed && !r.flagged);
        assert_eq!(c.class, MetaClass::NotAssessed);
        assert_eq!(c.index, None);
        // Some scored, one not: the scored ones are compared, the case is still not stable.
        let mut mixed = vec![refusal("n", 3.0); 2];
        mixed.extend(ok(1));
        let c = assess_case("c", &base, &[score_variant(&mixed, DROP)]);
        assert_eq!(c.relations[0].not_assessed, 1);
        assert!(c.relations[0].assessed);
        assert_eq!(c.index, Some(0.0));
        assert_eq!(c.class, MetaClass::NotAssessed);
        // A base without scores: no reference, nothing assessed, even for scored variants.
        let v = vec![refusal("n", 3.0); 3];
        let c = assess_case("c", &ok(3), &[score_variant(&v, DROP)]);
        assert_eq!(c.base.side.unscored, 3);
        assert_eq!(c.relations[0].not_assessed, 3);
        assert_eq!(c.class, MetaClass::NotAssessed);
        // One unscored base repeat: never counted as keeping the relation.
        let mut b = vec![refusal("base", 3.0); 2];
        b.extend(ok(1));
        let c = assess_case("c", &b, &[score_variant(&v, DROP)]);
        assert!(c.relations[0].assessed);
        assert_eq!(c.relations[0].broken, 0);
        assert_eq!(c.class, MetaClass::NotAssessed);
        // The same-verdict relation of the same case is unaffected by scores.
        let c = assess_case("c", &base, &[variant(&v)]);
        assert_eq!(c.class, MetaClass::Stable);
    }

    #[test]
    fn score_noise_in_the_base_raises_the_bar() {
        // The base's own scores swing (3, 3, 1, 1: median 2/3), so every base repeat is
        // outside `within 0.05` of the median: the bar is 1 and no variant can clear it.
        let base = vec![
            refusal("b", 3.0),
            refusal("b", 3.0),
            refusal("b", 1.0),
            refusal("b", 1.0),
        ];
        let v = vec![refusal("n", 0.0); 4];
        let c = assess_case("c", &base, &[score_variant(&v, WITHIN)]);
        let r = &c.relations[0];
        assert_eq!(r.noise, 1.0);
        assert_eq!(r.broken, 4);
        assert!(!r.flagged, "{r:?}");
    }

    #[test]
    fn the_report_averages_cases_with_intervals_and_phi() {
        let base = ok(4);
        let bad = vec![trial("r", "nope", false, Outcome::Completed); 4];
        let good = ok(4);
        let flagged = assess_case("a", &base, &[variant(&bad)]);
        let stable = assess_case("b", &base, &[variant(&good)]);
        let r = MetamorphicReport::new(4, vec![flagged, stable], 3);
        assert_eq!(r.assessed, 2);
        assert_eq!(r.index, Some(0.5));
        assert_eq!(r.pass_shift, Some(-0.5));
        let i = r.index_interval.unwrap();
        assert!(i.low <= 0.5 && 0.5 <= i.high, "{i:?}");
        assert!(i.low >= 0.0 && i.high <= 1.0);
        // Every failure is a variant repeat: a positive association.
        let phi = r.phi.unwrap();
        assert!(phi > 0.5, "{phi}");
        assert_eq!(r.count(MetaClass::Unstable), 1);
        assert_eq!(r.classes.get("stable"), Some(&1));
        // The same inputs and seed give the same report.
        let again = MetamorphicReport::new(
            4,
            vec![
                assess_case("a", &base, &[variant(&bad)]),
                assess_case("b", &base, &[variant(&good)]),
            ],
            3,
        );
        assert_eq!(r, again);
        // Nothing fails: phi is undefined, not zero.
        let calm = MetamorphicReport::new(4, vec![assess_case("b", &base, &[variant(&good)])], 3);
        assert_eq!(calm.phi, None);
    }
}
