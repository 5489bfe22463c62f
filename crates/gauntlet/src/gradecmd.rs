//! `gauntlet grade TRACES... --suite SUITE` ([`grade`]): the flags become a
//! `gauntlet_engine::grade::GradeRequest` (captured traces matched to the suite's cases and
//! graded through the runner's re-grade mode, as a run with evidence `replay` or `online`);
//! this module prints the summary and what was not graded.

use std::io::Write;

use gauntlet_engine::grade::{GradeRequest, LISTED};
use gauntlet_suite::capture::Format;
use gauntlet_suite::capture::matching::Rule;

use crate::cli::GradeArgs;
use crate::error::CliError;
use crate::out::{Printer, shown};
use crate::printer::{print_summary, show_notice};
use crate::setup::{store_location, terminal_view};

pub fn grade(args: GradeArgs) -> Result<i32, CliError> {
    let format = Format::parse(&args.format).ok_or_else(|| {
        CliError::usage(
            format!("unknown trace format `{}`", args.format),
            "--format auto, otlp, proxy or jsonl",
        )
    })?;
    let rules: Vec<Rule> = if args.match_rules.is_empty() {
        vec![Rule::Id, Rule::Input]
    } else {
        args.match_rules
            .iter()
            .map(|r| Rule::parse(r))
            .collect::<Result<_, _>>()
            .map_err(|e| {
                CliError::usage(
                    e,
                    "--match id | case_id=attr:NAME | input | input=regex:PATTERN (repeat to try several, in order)",
                )
            })?
    };
    let req = GradeRequest {
        suites: args.suite.clone(),
        traces: args.traces.clone(),
        format,
        rules,
        judge: args.judge.clone(),
        judge_cache: args.judge_cache.clone(),
        embeddings: args.embeddings.clone(),
        config: args.config.clone(),
        store: store_location(args.store.store.as_deref(), args.config.as_deref())?,
        run_id: args.run_id.clone(),
        online: args.online,
        skip_malformed: args.skip_malformed,
        concurrency: args.concurrency,
        out: args.out.clone(),
        view: Some(terminal_view(args.quiet)),
    };
    let graded = gauntlet_engine::grade::grade(req, &mut show_notice)?;
    print_summary(
        &graded.outcome.summary,
        Some(&args.out.display().to_string()),
    )?;
    let mut out = Printer::stdout();
    writeln!(
        out,
        "graded {} trace(s) from {} file(s) as run {} (evidence {}): {} matched, {} not graded (unmatched or empty), {} malformed skipped; {} case(s) without a trace are NOT_ASSESSED",
        graded.read,
        graded.files,
        graded.run_id,
        if args.online { "online" } else { "replay" },
        graded.matched,
        graded.unmatched.len(),
        graded.malformed,
        graded.without_trace,
    )?;
    for (source, label, why) in graded.unmatched.iter().take(LISTED) {
        writeln!(
            out,
            "  not graded: {}{}: {}",
            shown(source),
            if label.is_empty() {
                String::new()
            } else {
                format!(" ({})", shown(label))
            },
            shown(why)
        )?;
    }
    if graded.unmatched.len() > LISTED {
        writeln!(
            out,
            "  ... and {} more, listed in {}",
            graded.unmatched.len() - LISTED,
            args.out.join("unmatched.jsonl").display()
        )?;
    }
    Ok(graded.outcome.summary.status.exit_code())
}
