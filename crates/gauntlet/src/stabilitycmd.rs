//! `gauntlet stability SUITE... --repeat N`: the server nondeterminism check. The repeats
//! run through `gauntlet_engine::stability::repeat` (the target pinned to temperature 0 and
//! one seed, every trial's seed pinned, no response cache, judges asked afresh); this module
//! prints the comparison as a table or `--json`. `--metamorphic` is its own command module
//! (`metamorphiccmd`), over the same repeats.

use std::io::Write;

use gauntlet_core::stability::{StabilityClass, StabilityReport};
use gauntlet_engine::stability::{Repeated, assess, exit_code};

use crate::cli::StabilityArgs;
use crate::error::CliError;
use crate::out::Printer;
use crate::setup::repeat_command;

pub fn stability(args: StabilityArgs) -> Result<i32, CliError> {
    let compare = |repeated: &Repeated| {
        let report = assess(args.repeat, &repeated.outcome.cases);
        let code = exit_code(&report, args.fail_on_unstable, args.max_differ);
        Ok((report, code))
    };
    repeat_command(&args, compare, print_table)
}

/// The comparison as a table, with the overall line.
fn print_table(out: &mut Printer, report: &StabilityReport) -> Result<(), CliError> {
    let unstable = report.count(StabilityClass::Unstable);
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
