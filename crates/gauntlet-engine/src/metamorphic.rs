//! Metamorphic stability (`gauntlet stability --metamorphic`): [`expand`] replaces the
//! selected cases by the ones that declare `metamorphic:` (or take the suite's default
//! relations) followed by their perturbed variants (`gauntlet_suite::perturb::variant`, ids
//! `CASE~PERTURB`), as a [`MetamorphicPlan`]; after the pinned repeats, [`assess`] compares
//! every variant with its base (`gauntlet_core::metamorphic`) into a `MetamorphicReport`,
//! and [`exit_code`] applies `--fail-on-unstable`.

use std::collections::{HashMap, HashSet};

use gauntlet_core::metamorphic::{MetaClass, MetamorphicReport, Variant, assess_case};
use gauntlet_core::result::CaseResult;
use gauntlet_core::suite::RelationExpect;
use gauntlet_suite::LoadedSuite;
use gauntlet_suite::filter::Selection;

use crate::error::EngineError;

/// One case with relations, and the ids of its variants.
struct Planned {
    base: String,
    relations: Vec<(String, RelationExpect, String)>,
}

/// The cases a metamorphic run takes.
pub struct MetamorphicPlan {
    cases: Vec<Planned>,
    /// What the output should say about how the plan was made.
    pub notes: Vec<String>,
}

impl MetamorphicPlan {
    /// Every case id the run takes: bases and variants.
    pub fn ids(&self) -> HashSet<String> {
        self.cases
            .iter()
            .flat_map(|c| {
                std::iter::once(c.base.clone()).chain(c.relations.iter().map(|r| r.2.clone()))
            })
            .collect()
    }

    /// Some relation paraphrases: the run needs `--rewriter`.
    pub fn needs_rewriter(&self) -> bool {
        self.cases
            .iter()
            .any(|c| c.relations.iter().any(|r| r.0 == "paraphrase"))
    }
}

/// Keeps the selected cases that declare relations, each followed by its variants.
pub fn expand(
    mut suites: Vec<LoadedSuite>,
    select: &Selection,
    seed: u64,
) -> Result<(Vec<LoadedSuite>, MetamorphicPlan), EngineError> {
    let taken: HashSet<String> = suites
        .iter()
        .flat_map(|s| s.suite.cases.iter().map(|c| c.id.clone()))
        .collect();
    let mut plan = MetamorphicPlan {
        cases: Vec::new(),
        notes: Vec::new(),
    };
    for s in &mut suites {
        let mut cases = Vec::new();
        for case in &s.suite.cases {
            // A case's own list replaces the suite's default; `[]` opts out.
            let (list, defaulted) = match &case.metamorphic {
                Some(own) => (own.as_slice(), false),
                None => (s.suite.metamorphic.as_slice(), true),
            };
            if list.is_empty() || !select.keeps(case) {
                continue;
            }
            let mut planned = Planned {
                base: case.id.clone(),
                relations: Vec::new(),
            };
            let mut variants = Vec::new();
            for r in list {
                let v = match gauntlet_suite::perturb::variant(case, r, seed) {
                    Ok(v) => v,
                    // The default was not written for this case: skipped, said, not an error.
                    Err(e) if defaulted => {
                        plan.notes.push(format!(
                            "case `{}`: the suite's default relation `{}` is skipped: {e}",
                            case.id, r.perturb
                        ));
                        continue;
                    }
                    Err(e) => {
                        return Err(EngineError::usage(
                            format!("case `{}`: {e}", case.id),
                            "see docs/stability.md for the perturbations",
                        ));
                    }
                };
                if taken.contains(&v.id) {
                    return Err(EngineError::usage(
                        format!(
                            "the variant id `{}` is already a case id in the suites",
                            v.id
                        ),
                        "rename that case: `~` marks perturbed variants",
                    ));
                }
                planned
                    .relations
                    .push((r.perturb.clone(), r.expect, v.id.clone()));
                variants.push(v);
            }
            if planned.relations.is_empty() {
                continue;
            }
            cases.push(case.clone());
            cases.extend(variants);
            plan.cases.push(planned);
        }
        if !s.streamed.is_empty() {
            plan.notes.push(format!(
                "{}: cases from JSON lines includes are not perturbed and not run; declare metamorphic relations in YAML",
                s.origin
            ));
            s.streamed.clear();
        }
        // The repeats compare a case with its variants: no benign twin runs beside them.
        for c in &mut cases {
            c.benign = None;
        }
        s.selected = cases.len();
        s.case_count = cases.len();
        s.suite.cases = cases;
    }
    if plan.cases.is_empty() {
        return Err(EngineError::usage(
            "no selected case declares `metamorphic:` relations (or takes one from the suite's default)",
            "add e.g. `metamorphic: [{perturb: reorder}, {perturb: noise}]` to a case or at the top of the suite (see docs/stability.md)",
        ));
    }
    Ok((suites, plan))
}

/// Compares every variant with its base over the repeats of a run.
pub fn assess(
    plan: &MetamorphicPlan,
    results: &[CaseResult],
    repeat: u32,
    seed: u64,
) -> MetamorphicReport {
    let by_id: HashMap<&str, &CaseResult> =
        results.iter().map(|r| (r.case.id.as_str(), r)).collect();
    let trials = |id: &str| by_id.get(id).map(|r| r.trials.as_slice()).unwrap_or(&[]);
    let cases = plan
        .cases
        .iter()
        .map(|c| {
            let variants: Vec<Variant<'_>> = c
                .relations
                .iter()
                .map(|(perturb, expect, id)| Variant {
                    perturb,
                    expect: *expect,
                    case_id: id,
                    trials: trials(id),
                })
                .collect();
            assess_case(&c.base, trials(&c.base), &variants)
        })
        .collect();
    MetamorphicReport::new(repeat, cases, seed)
}

/// The exit code: with `--fail-on-unstable`, 1 when a case is unstable, else 4 when one
/// could not be assessed; else 0.
pub fn exit_code(report: &MetamorphicReport, fail_on_unstable: bool) -> i32 {
    let flagged = report.count(MetaClass::Unstable);
    let unassessed = report.count(MetaClass::Faulted) + report.count(MetaClass::NotAssessed);
    if fail_on_unstable && flagged > 0 {
        1
    } else if fail_on_unstable && unassessed > 0 {
        4
    } else {
        0
    }
}
