//! Commands that read stored runs: `runs list|show|check|prune`, `report RUN` (the stored
//! stream replayed into the report writers, `gauntlet_engine::stored::write_reports`) and
//! `regrade RUN` (the stored traces graded again by the runner, with no target call, as a
//! new run: `gauntlet_engine::stored::regrade`).

use std::io::Write;

use gauntlet_core::result::CaseStatus;
use gauntlet_engine::stored::RegradeRequest;
use gauntlet_report::text::failure_reason;
use gauntlet_store::Store;

use crate::cli::{RegradeArgs, ReportArgs, RunsArgs, RunsCommand};
use crate::error::CliError;
use crate::out::{Printer, shown};
use crate::printer::{print_summary, show_notice};
use crate::setup::{open_existing_store, store_err, terminal_view};

pub fn runs(args: RunsArgs) -> Result<i32, CliError> {
    if let RunsCommand::Check = args.command {
        return check(&args);
    }
    let mut store = open_existing_store(args.store.store.as_deref())?;
    let mut out = Printer::stdout();
    match args.command {
        RunsCommand::List { limit, json } => {
            let rows = store.runs(limit).map_err(store_err)?;
            if json {
                for r in rows {
                    writeln!(
                        out,
                        "{}",
                        serde_json::to_string(&r).expect("row serializes")
                    )?;
                }
                return Ok(0);
            }
            writeln!(
                out,
                "{:<24} {:<26} {:<8} {:<13} {:>9}  target",
                "run", "started", "command", "status", "cases"
            )?;
            for r in rows {
                let status = r.status.clone().unwrap_or_else(|| "(unfinished)".into());
                writeln!(
                    out,
                    "{:<24} {:<26} {:<8} {:<13} {:>4}/{:<4}  {}",
                    r.run_id,
                    r.started_at.chars().take(25).collect::<String>(),
                    r.command,
                    status,
                    r.cases,
                    r.planned,
                    shown(&r.target)
                )?;
            }
        }
        RunsCommand::Show { run, json } => show(&mut store, &run, json, &mut out)?,
        RunsCommand::Check => unreachable!("handled above"),
        RunsCommand::Prune { keep, older_than } => {
            let before = older_than
                .map(|days| {
                    jiff::Timestamp::now()
                        .checked_sub(jiff::SignedDuration::from_hours(24 * i64::from(days)))
                        .map(|t| t.to_string())
                        .map_err(|e| CliError::plain(format!("--older-than {days}: {e}")))
                })
                .transpose()?;
            let r = store.prune(keep, before.as_deref()).map_err(store_err)?;
            writeln!(
                out,
                "removed {} run(s); {} -> {} bytes (baselines and runs still in progress are kept)",
                r.removed.len(),
                r.bytes_before,
                r.bytes_after
            )?;
        }
    }
    out.flush()?;
    Ok(0)
}

/// `runs check`: the whole store, every problem listed.
fn check(args: &RunsArgs) -> Result<i32, CliError> {
    let location = crate::setup::store_location(args.store.store.as_deref(), None)?;
    if !location.exists() {
        return Err(CliError::usage(
            format!("no run store at `{location}`"),
            "pass --store to check another file",
        ));
    }
    let mut store = Store::open_unchecked(&location).map_err(store_err)?;
    let problems = store.check().map_err(store_err)?;
    if !problems.is_empty() {
        let e = gauntlet_store::StoreError::Damaged {
            path: location.to_string(),
            detail: problems.join("; "),
        };
        return Err(CliError::usage(e.to_string(), e.hint()));
    }
    // Matched through `path()`: the PostgreSQL variant exists only in builds with it.
    let what = if location.path().is_some() {
        "every page and index, and every run's manifest and summary"
    } else {
        "the tables, and every run's manifest and summary"
    };
    writeln!(Printer::stdout(), "ok: {location} ({what} checked)")?;
    Ok(0)
}

fn show(store: &mut Store, run: &str, json: bool, out: &mut Printer) -> Result<(), CliError> {
    let id = store.resolve(run).map_err(store_err)?;
    let manifest = store.manifest(&id).map_err(store_err)?;
    let summary = store.summary(&id).map_err(store_err)?;
    if json {
        let v =
            serde_json::json!({ "manifest": manifest, "summary": summary.as_ref().map(|s| &s.0) });
        out.json(&v)?;
        return Ok(());
    }
    writeln!(out, "run        {id}")?;
    writeln!(out, "command    {}", manifest.command)?;
    writeln!(out, "started    {}", manifest.started_at)?;
    writeln!(out, "target     {}", shown(&manifest.target.label))?;
    let suites: Vec<String> = manifest
        .suites
        .iter()
        .map(|s| format!("{} ({})", s.name, s.path))
        .collect();
    writeln!(out, "suites     {}", shown(&suites.join(", ")))?;
    writeln!(out, "k, seed    {}, {}", manifest.k, manifest.seed)?;
    writeln!(
        out,
        "evidence   {:?}, side effects {:?}",
        manifest.evidence_level, manifest.side_effects
    )?;
    if let Some(j) = &manifest.judge {
        writeln!(out, "judge      {}", shown(j))?;
    }
    for (k, v) in &manifest.notes {
        writeln!(out, "note       {} = {}", shown(k), shown(v))?;
    }
    match &summary {
        Some((s, at)) => {
            writeln!(out, "finished   {at}")?;
            writeln!(
                out,
                "status     {} ({} cases: {} passed, {} failed, {} conditional, {} errors, {} blocked)",
                s.status, s.cases, s.passed, s.failed, s.conditional, s.errors, s.blocked
            )?;
            for r in &s.reasons {
                writeln!(out, "           - {}", shown(r))?;
            }
            // A matrix run: its columns, each comparable with `compare RUN@A RUN@B`.
            for (i, line) in gauntlet_report::text::column_table(s).iter().enumerate() {
                let head = if i == 0 { "columns" } else { "" };
                writeln!(out, "{head:<10} {}", shown(line))?;
            }
        }
        None => {
            writeln!(
                out,
                "status     unfinished (resume with `gauntlet run --resume {id}`)"
            )?;
        }
    }
    let mut listed = 0;
    let mut failed_write = None;
    store
        .for_each_case(&id, |c| {
            if c.status != CaseStatus::Pass && listed < 50 && failed_write.is_none() {
                listed += 1;
                if let Err(e) = writeln!(
                    out,
                    "  {:>11} {}  {}",
                    c.status.as_str(),
                    shown(&c.case.name),
                    shown(&failure_reason(&c))
                ) {
                    failed_write = Some(e);
                }
            }
            Ok(())
        })
        .map_err(store_err)?;
    match failed_write {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

/// Replays a stored run's event stream into the report writers.
pub fn report(args: ReportArgs) -> Result<i32, CliError> {
    let mut store = open_existing_store(args.store.store.as_deref())?;
    let id = store.resolve(&args.run).map_err(store_err)?;
    let baseline = match &args.baseline {
        Some(name) => Some(gauntlet_engine::baseline::html_baseline(&mut store, name)?),
        None => None,
    };
    let written = gauntlet_engine::stored::write_reports(&mut store, &id, &args.out, baseline)?;
    let mut out = Printer::stdout();
    match written.status {
        Some(s) => {
            let files: Vec<String> = written
                .files
                .iter()
                .map(|f| format!("{}/{f}", args.out.display()))
                .collect();
            writeln!(out, "wrote {} for run {id} ({s})", files.join(", "))?;
            Ok(s.exit_code())
        }
        None => {
            writeln!(
                out,
                "run {id} did not finish; only the manifest and the finished cases were stored, so no report is complete"
            )?;
            Ok(gauntlet_core::score::Status::Inconclusive.exit_code())
        }
    }
}

/// Grades a stored run's traces again with the suites as they are now, as a new run.
pub fn regrade(args: RegradeArgs) -> Result<i32, CliError> {
    let store = open_existing_store(args.store.store.as_deref())?;
    let req = RegradeRequest {
        run: args.run.clone(),
        judge: args.judge.clone(),
        judge_cache: args.judge_cache.clone(),
        embeddings: args.embeddings.clone(),
        config: args.config.clone(),
        out: args.out.clone(),
        view: Some(terminal_view(args.quiet)),
    };
    let done = gauntlet_engine::stored::regrade(store, req, &mut show_notice)?;
    print_summary(&done.outcome.summary, Some(&args.out.display().to_string()))?;
    let mut out = Printer::stdout();
    writeln!(
        out,
        "regraded run {} as run {}; compare with `gauntlet compare {} {}`",
        done.from, done.run_id, done.from, done.run_id
    )?;
    Ok(done.outcome.summary.status.exit_code())
}
