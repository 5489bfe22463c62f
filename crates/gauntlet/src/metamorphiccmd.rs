//! `gauntlet stability SUITE --metamorphic`: the selected cases that declare `metamorphic:`
//! and their perturbed variants (`CASE~PERTURB`) run as pinned repeats through
//! `gauntlet_engine::stability::repeat`; `gauntlet_engine::metamorphic::assess` compares
//! every variant with its base, and this module prints the table or `--json`.

use std::io::Write;

use gauntlet_core::metamorphic::{MetaClass, MetamorphicReport};
use gauntlet_core::suite::RelationExpect;
use gauntlet_core::text::{clip, escape_controls};
use gauntlet_engine::metamorphic::{assess, exit_code};
use gauntlet_engine::stability::Repeated;

use crate::cli::StabilityArgs;
use crate::error::CliError;
use crate::out::Printer;
use crate::setup::repeat_command;

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// `gauntlet stability --metamorphic`: runs, compares, prints; returns the exit code.
pub fn metamorphic(args: StabilityArgs) -> Result<i32, CliError> {
    let compare = |repeated: &Repeated| {
        let Some(plan) = &repeated.plan else {
            return Err(CliError::plain("the run had no metamorphic plan"));
        };
        let report = assess(plan, &repeated.outcome.cases, args.repeat, args.seed as u64);
        let code = exit_code(&report, args.fail_on_unstable);
        Ok((report, code))
    };
    repeat_command(&args, compare, print_table)
}

/// The table: each case's base, then each relation with what it sent.
fn print_table(out: &mut Printer, report: &MetamorphicReport) -> Result<(), CliError> {
    let flagged = report.count(MetaClass::Unstable);
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
    Ok(())
}
