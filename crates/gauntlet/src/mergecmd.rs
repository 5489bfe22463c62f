//! `gauntlet merge`: the shards of a sharded run, from the store or from their report.json
//! files, made into one run by `gauntlet_engine::merge` (the same reporters as a run: the
//! terminal, the report writers, the store); this module opens the store and prints the
//! merged summary.

use std::io::Write;

use gauntlet_engine::merge::MergeRequest;

use crate::cli::MergeArgs;
use crate::error::CliError;
use crate::out::Printer;
use crate::printer::print_summary;
use crate::setup::{open_existing_store, open_store, terminal_view};

pub fn merge(args: MergeArgs) -> Result<i32, CliError> {
    let from_files = !args.report.is_empty();
    let store = if from_files && args.no_store {
        None
    } else if from_files {
        Some(open_store(args.store.store.as_deref(), None)?)
    } else {
        Some(open_existing_store(args.store.store.as_deref())?)
    };
    let req = MergeRequest {
        runs: args.runs.clone(),
        reports: args.report.clone(),
        run_id: args.run_id.clone(),
        out: (!args.no_reports).then(|| args.out.clone()),
        store,
        view: Some(terminal_view(args.quiet)),
    };
    let merged = gauntlet_engine::merge::merge(req)?;
    if !merged.reporter_errors.is_empty() {
        for e in &merged.reporter_errors {
            CliError::plain(format!(
                "failed to record the merged run (a report or the run store): {e}"
            ))
            .print();
        }
        return Ok(gauntlet_core::score::EXIT_USAGE);
    }
    let summary = &merged.summary;
    let reports = (!args.no_reports).then(|| args.out.display().to_string());
    print_summary(summary, reports.as_deref())?;
    writeln!(
        Printer::stdout(),
        "merged {} shard(s), {} case(s), into run {}{}",
        merged.shards,
        summary.cases,
        merged.run_id,
        if merged.stored {
            ""
        } else {
            " (not stored: --no-store)"
        }
    )?;
    Ok(summary.status.exit_code())
}
