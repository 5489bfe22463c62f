//! `gauntlet stability SUITE... --repeat N`: the server nondeterminism check. The repeats
//! run through `gauntlet_engine::stability::repeat` (the target pinned to temperature 0 and
//! one seed, every trial's seed pinned, no response cache, judges asked afresh); this module
//! prints the comparison as a table or `--json`. `--metamorphic` is its own command module
//! (`metamorphiccmd`), over the same repeats.

use std::io::Write;

use gauntlet_core::stability::{StabilityClass, StabilityReport};
use gauntlet_core::target::TargetConfig;
use gauntlet_engine::stability::{assess, check_args, exit_code, json_doc};

use crate::cli::StabilityArgs;
use crate::error::CliError;
use crate::out::Printer;
use crate::setup::repeat_run;

pub fn stability(args: StabilityArgs) -> Result<i32, CliError> {
    check_args(args.repeat, args.max_differ, args.metamorphic)?;
    let repeated = repeat_run(&args)?;
    let report = assess(args.repeat, &repeated.outcome.cases);
    let code = exit_code(&report, args.fail_on_unstable, args.max_differ);
    let mut out = Printer::stdout();
    if args.json {
        let doc = json_doc(None, &repeated.target, &repeated.notes, &report, code);
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        )?;
        return Ok(code);
    }
    print_table(&mut out, &args, &repeated.target, &repeated.notes, &report)?;
    Ok(code)
}

/// The comparison as a table, with the overall line.
fn print_table(
    out: &mut Printer,
    args: &StabilityArgs,
    target: &TargetConfig,
    notes: &[String],
    report: &StabilityReport,
) -> Result<(), CliError> {
    let unstable = report.count(StabilityClass::Unstable);
    writeln!(
        out,
        "target {}, {} repeats per case, response cache bypassed",
        target, args.repeat
    )?;
    for n in notes {
        writeln!(out, "note: {n}")?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{:<32} {:>4} {:>6} {:>8} {:>8} {:>8} {:>8}  class",
        "case", "done", "fault", "outputs", "differ", "verdicts", "differ"
    )?;
    for c in &report.cases {
        let faults: u32 = c.faulted.values().sum();
        let id = gauntlet_core::text::escape_controls(&c.case_id);
        writeln!(
            out,
            "{:<32} {:>4} {:>6} {:>8} {:>7.0}% {:>8} {:>7.0}%  {}",
            id,
            c.completed,
            faults,
            c.distinct_outputs,
            c.output_differ_share * 100.0,
            c.distinct_verdicts,
            c.verdict_differ_share * 100.0,
            c.class.as_str()
        )?;
        if faults > 0 {
            let kinds: Vec<String> = c.faulted.iter().map(|(k, v)| format!("{v} {k}")).collect();
            writeln!(out, "  faulted repeats: {}", kinds.join(", "))?;
        }
    }
    writeln!(out)?;
    writeln!(
        out,
        "overall: {} stable, {} unstable, {} faulted, {} not assessed; text differs from the modal output in {:.0}% of completed repeats, verdicts in {:.0}%; {} faulted repeats",
        report.count(StabilityClass::Stable),
        unstable,
        report.count(StabilityClass::Faulted),
        report.count(StabilityClass::NotAssessed),
        report.output_differ_share * 100.0,
        report.verdict_differ_share * 100.0,
        report.faulted
    )?;
    if unstable > 0 {
        writeln!(
            out,
            "the server is not deterministic at temperature 0 with one seed: measure agent consistency with pass^k, not with single runs"
        )?;
    }
    Ok(())
}
