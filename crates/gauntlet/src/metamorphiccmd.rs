//! `gauntlet stability SUITE --metamorphic`: [`expand`] replaces the selected cases by the
//! ones that declare `metamorphic:` (or take the suite's default relations) followed by
//! their perturbed variants
//! (`gauntlet_suite::perturb::variant`, ids `CASE~PERTURB`), which `stabilitycmd` then runs
//! N times each with its pinned settings; [`report`] compares every variant with its base
//! (`gauntlet_core::metamorphic`) and prints a table or `--json`.

use std::collections::{HashMap, HashSet};
use std::io::Write;

use gauntlet_core::metamorphic::{MetaClass, MetamorphicReport, Variant, assess_case};
use gauntlet_core::result::CaseResult;
use gauntlet_core::suite::RelationExpect;
use gauntlet_core::target::TargetConfig;
use gauntlet_core::text::{clip, escape_controls};
use gauntlet_suite::LoadedSuite;
use gauntlet_suite::filter::Selection;

use crate::cli::StabilityArgs;
use crate::error::CliError;

/// One case with relations, and the ids of its variants.
struct Planned {
    base: String,
    relations: Vec<(String, RelationExpect, String)>,
}

/// The cases a metamorphic run takes.
pub struct Plan {
    cases: Vec<Planned>,
    /// What the output should say about how the plan was made.
    pub notes: Vec<String>,
}

impl Plan {
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
) -> Result<(Vec<LoadedSuite>, Plan), CliError> {
    let taken: HashSet<String> = suites
        .iter()
        .flat_map(|s| s.suite.cases.iter().map(|c| c.id.clone()))
        .collect();
    let mut plan = Plan {
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
                        return Err(CliError::usage(
                            format!("case `{}`: {e}", case.id),
                            "see docs/stability.md for the perturbations",
                        ));
                    }
                };
                if taken.contains(&v.id) {
                    return Err(CliError::usage(
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
        s.selected = cases.len();
        s.case_count = cases.len();
        s.suite.cases = cases;
    }
    if plan.cases.is_empty() {
        return Err(CliError::usage(
            "no selected case declares `metamorphic:` relations (or takes one from the suite's default)",
            "add e.g. `metamorphic: [{perturb: reorder}, {perturb: noise}]` to a case or at the top of the suite (see docs/stability.md)",
        ));
    }
    Ok((suites, plan))
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// Compares every variant with its base, prints, and returns the exit code.
pub fn report(
    args: &StabilityArgs,
    target: &TargetConfig,
    notes: &[String],
    plan: &Plan,
    results: &[CaseResult],
) -> Result<i32, CliError> {
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
    let report = MetamorphicReport::new(args.repeat, cases, args.seed as u64);
    let flagged = report.count(MetaClass::Unstable);
    let unassessed = report.count(MetaClass::Faulted) + report.count(MetaClass::NotAssessed);
    let code = if args.fail_on_unstable && flagged > 0 {
        1
    } else if args.fail_on_unstable && unassessed > 0 {
        4
    } else {
        0
    };
    let mut out = crate::out::Printer::stdout();
    if args.json {
        crate::stabilitycmd::write_json(
            &mut out,
            Some("metamorphic"),
            target,
            notes,
            &report,
            code,
        )?;
        return Ok(code);
    }
    writeln!(
        out,
        "target {target}, {} repeats of each case and of each perturbed variant, response cache bypassed",
        args.repeat
    )?;
    for n in notes {
        writeln!(out, "note: {n}")?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{:<36} {:>4} {:>6} {:>4} {:>7} {:>5} {:>6}  verdict",
        "case / perturbation", "done", "fault", "n/a", "broken", "text", "pass"
    )?;
    for c in &report.cases {
        let b = &c.base.side;
        let faults = |f: &std::collections::BTreeMap<String, u32>| f.values().sum::<u32>();
        let scored = b
            .score_median
            .map(|m| format!(", median score {m:.2}"))
            .unwrap_or_default();
        let has_score_relation = c
            .relations
            .iter()
            .any(|r| matches!(r.expect, RelationExpect::Score(_)));
        writeln!(
            out,
            "{:<36} {:>4} {:>6} {:>4} {:>7} {:>5} {:>6}  base, noise {}{scored}",
            clip(&escape_controls(&c.case_id), 36),
            b.completed,
            faults(&b.faulted),
            if has_score_relation {
                b.unscored.to_string()
            } else {
                "-".into()
            },
            "-",
            "-",
            pct(b.pass_rate),
            pct(c.base.noise)
        )?;
        for r in &c.relations {
            let state = if r.flagged {
                "FLAGGED: pass rate moved beyond the base's noise"
            } else if r.side.completed == 0 {
                "no completed repeat"
            } else if !r.assessed {
                "not assessed: no score to compare"
            } else if r.broken > 0 {
                "broken, pass rate within the base's noise"
            } else if r.not_assessed > 0 {
                "kept where scored, some repeats without a score"
            } else {
                "kept"
            };
            let bar = match r.expect {
                RelationExpect::SameVerdict => String::new(),
                RelationExpect::Score(_) => format!(", score noise {}", pct(r.noise)),
            };
            writeln!(
                out,
                "{:<36} {:>4} {:>6} {:>4} {:>7} {:>5} {:>6}  {state} ({}{bar})",
                clip(&format!("  ~{}", escape_controls(&r.perturb)), 36),
                r.side.completed,
                faults(&r.side.faulted),
                r.not_assessed,
                if r.assessed {
                    pct(r.broken_share)
                } else {
                    "-".into()
                },
                r.text_differs,
                pct(r.side.pass_rate),
                r.expect.label()
            )?;
            for input in r.side.inputs.iter().take(2) {
                // One line per input: line breaks shown as `\n`.
                let flat = input.replace('\r', "\\r").replace('\n', "\\n");
                writeln!(out, "      sent: {}", clip(&escape_controls(&flat), 100))?;
            }
        }
        let index = c
            .index
            .map(|i| format!("index {}", pct(i)))
            .unwrap_or_else(|| "no index".into());
        writeln!(out, "  => {} ({index})", c.class.as_str())?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "overall: {} unstable, {} shifted, {} stable, {} faulted, {} not assessed; {} faulted repeats",
        flagged,
        report.count(MetaClass::Shifted),
        report.count(MetaClass::Stable),
        report.count(MetaClass::Faulted),
        report.count(MetaClass::NotAssessed),
        report.faulted
    )?;
    let with = |v: Option<f64>, i: Option<gauntlet_core::metamorphic::Interval>| match (v, i) {
        (Some(v), Some(i)) => format!(
            "{v:.2} ({:.0}% interval {:.2} to {:.2})",
            report.level * 100.0,
            i.low,
            i.high
        ),
        (Some(v), None) => format!("{v:.2}"),
        _ => "n/a".into(),
    };
    writeln!(
        out,
        "instability index {}; pass rate shift {}; over {} assessed case(s), bootstrap of cases, seed {}",
        with(report.index, report.index_interval),
        with(report.pass_shift, report.pass_shift_interval),
        report.assessed,
        report.seed
    )?;
    writeln!(
        out,
        "phi (perturbed vs not passed, completed repeats): {}",
        report
            .phi
            .map(|p| format!("{p:.2}"))
            .unwrap_or_else(|| "undefined (every repeat passed, or every repeat failed)".into())
    )?;
    if flagged > 0 {
        writeln!(
            out,
            "a meaning-preserving perturbation changed whether a case passes, beyond the server's own noise: the agent depends on the wording, not the request"
        )?;
    }
    Ok(code)
}
