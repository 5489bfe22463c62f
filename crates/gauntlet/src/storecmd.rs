//! Commands that read stored runs: `runs list|show`, `report RUN` (the stored stream
//! replayed into the report writers, report.html included) and `regrade RUN` (the stored traces graded again by
//! the runner, with no target call, as a new run).

use std::collections::HashSet;
use std::io::Write;
use std::sync::{Arc, Mutex};

use gauntlet_core::event::{EventKind, EvidenceLevel, Reporter};
use gauntlet_core::result::CaseStatus;
use gauntlet_graders::OracleGrader;
use gauntlet_report::text::failure_reason;
use gauntlet_runner::{CaseJob, Delivery, PlanItem, RunConfig, Runner};
use gauntlet_store::Store;
use gauntlet_suite::filter::Selection;
use gauntlet_suite::{Plan, PlanSettings};

use crate::cli::{RegradeArgs, ReportArgs, RunsArgs, RunsCommand};
use crate::error::CliError;
use crate::out::{Printer, shown};
use crate::printer::{TerminalReporter, Verbosity, print_summary};
use crate::runcmd::report_writers;
use crate::setup::{load_all, new_run_id, open_existing_store, runtime, store_err};

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
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&v).expect("serializes")
        )?;
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
        Some(name) => Some(crate::comparecmd::html_baseline(&mut store, name)?),
        None => None,
    };
    let mut delivery = Delivery::start(report_writers(&args.out, baseline)?);
    let mut status = None;
    let replayed = store.replay(&id, |ev| {
        if let EventKind::RunFinished { summary, .. } = &ev.kind {
            status = Some(summary.status);
        }
        delivery.push(ev);
        Ok(())
    });
    let errors = delivery.finish();
    replayed.map_err(store_err)?;
    if !errors.is_empty() {
        return Err(CliError::plain(format!(
            "failed to write a report: {}",
            errors.join("; ")
        )));
    }
    let mut out = Printer::stdout();
    match status {
        Some(s) => {
            writeln!(
                out,
                "wrote {0}/report.json, {0}/junit.xml, {0}/summary.md, {0}/report.html for run {id} ({s})",
                args.out.display()
            )?;
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

/// Grades a stored run's traces again with the suites as they are now, as a new run: the
/// runner's dispatcher in its re-grade mode, fed by the store instead of a target.
pub fn regrade(args: RegradeArgs) -> Result<i32, CliError> {
    let mut store = open_existing_store(args.store.store.as_deref())?;
    let from = store.resolve(&args.run).map_err(store_err)?;
    let old = store.manifest(&from).map_err(store_err)?;
    let inv = old.invocation.clone().ok_or_else(|| {
        CliError::usage(
            format!("run {from} has no recorded invocation"),
            "re-run the suite instead",
        )
    })?;
    let suites = load_all(
        &crate::setup::resolve_suite_paths(&inv, store.location())?,
        inv.canary.as_deref(),
        inv.system_prompt_file.as_deref(),
        None,
        &inv.allow_paths
            .iter()
            .map(std::path::PathBuf::from)
            .collect::<Vec<_>>(),
    )?;
    let mut warnings = Vec::new();
    for (s, r) in suites.iter().zip(&old.suites) {
        if s.sha256 != r.sha256 {
            warnings.push(format!(
                "`{}` changed since run {from}: its current checks grade the stored traces",
                r.path
            ));
        }
    }
    let mut redactor = gauntlet_core::redact::Redactor::new();
    let judges = crate::judge::judge_panel(
        &suites,
        args.judge.as_deref(),
        args.config.as_deref(),
        crate::judge::open_cache(
            args.judge_cache.as_deref(),
            false,
            Some(crate::cachecmd::open_response_cache(Some(
                store.location(),
            ))?),
        )?,
        Some(&old.target),
        &mut redactor,
    )?;
    for w in &judges.warnings {
        crate::out::warn(w);
    }
    let plan = Plan::new(
        suites,
        Selection::default(),
        PlanSettings {
            canary: inv.canary.as_deref(),
            timeout_ms: inv.timeout_ms,
            blocked_is_defended: inv.blocked_is_defended,
            converters: &inv.converters,
            seed: old.seed,
            strategy: inv.strategy.as_ref(),
        },
    );
    let grader = OracleGrader::new().with_judges(Arc::clone(&judges.panel));
    let mut manifest = old.clone();
    manifest.judge = judges.label.clone();
    manifest.judges = judges.refs.clone();
    let run_id = new_run_id();
    manifest.run_id = run_id.clone();
    manifest.command = "regrade".into();
    manifest.started_at = jiff::Timestamp::now().to_string();
    manifest.notes.insert("regraded_from".into(), from.clone());
    manifest.evidence_level = EvidenceLevel::Replay;

    let verbosity = if args.quiet {
        Verbosity::Quiet
    } else {
        Verbosity::Normal
    };
    let mut reporters: Vec<Box<dyn Reporter>> = vec![Box::new(TerminalReporter::new(verbosity))];
    reporters.extend(report_writers(&args.out, None)?);
    reporters.push(Box::new(store.reporter().map_err(store_err)?));

    let quarantined: HashSet<String> = store
        .quarantined_cases(&from)
        .map_err(store_err)?
        .into_iter()
        .collect();
    let read_errors = Arc::new(Mutex::new(Vec::new()));
    let items = stored_items(
        store.reopen().map_err(store_err)?,
        &from,
        plan.all_cases(),
        Arc::clone(&read_errors),
    )?;
    let config = RunConfig {
        concurrency: if inv.concurrency > 0 {
            inv.concurrency
        } else {
            8
        },
        k: manifest.k,
        quarantined,
        redactor,
        // A shard stays a shard: its packs are checked when it is merged.
        packs: gauntlet_core::summary::PackRequirements {
            deferred: old.shard.is_some(),
            ..plan.packs().clone()
        },
        warnings,
        notes: vec![format!("regraded from run {from} (no target calls)")],
        prices: Arc::new(crate::setup::prices(args.config.as_deref())?),
        ..RunConfig::default()
    };
    let rt = runtime()?;
    let outcome =
        rt.block_on(Runner::regrade(Arc::new(grader), config).run(manifest, items, reporters));
    let read_errors = read_errors.lock().expect("lock");
    if !read_errors.is_empty() {
        return Err(CliError::usage(
            format!(
                "{} stored case(s) of run {from} could not be read: {}",
                read_errors.len(),
                read_errors.join("; ")
            ),
            "check the store with `gauntlet runs show`; the regraded run is incomplete",
        ));
    }
    if !outcome.reporter_errors.is_empty() {
        return Err(CliError::plain(format!(
            "failed to record the run (a report or the run store): {}",
            outcome.reporter_errors.join("; ")
        )));
    }
    print_summary(&outcome.summary, Some(&args.out.display().to_string()))?;
    let mut out = Printer::stdout();
    writeln!(
        out,
        "regraded run {from} as run {run_id}; compare with `gauntlet compare {from} {run_id}`"
    )?;
    Ok(outcome.summary.status.exit_code())
}

/// The work of a re-grade, streamed: each case of the suites that the stored run holds,
/// with its recorded trials (looked up one at a time, so memory stays flat), then the
/// stored cases the suites no longer have, kept as they were. A case that cannot be read
/// is recorded in `errors`, never dropped silently.
///
/// The lookups run on a thread of their own that owns the store's connection: the plan is
/// pulled from inside the runner's async loop, where a blocking client must not run.
fn stored_items(
    mut store: Store,
    run: &str,
    cases: impl Iterator<Item = gauntlet_core::plan::PlannedCase> + Send,
    errors: Arc<Mutex<Vec<String>>>,
) -> Result<impl Iterator<Item = PlanItem> + Send, CliError> {
    type Reply = std::sync::mpsc::SyncSender<Option<gauntlet_core::result::CaseResult>>;
    let ids = store.case_ids(run).map_err(store_err)?;
    let (ask, asked) = std::sync::mpsc::channel::<(String, Reply)>();
    let run_id = run.to_owned();
    std::thread::Builder::new()
        .name("gauntlet-store-read".into())
        .spawn(move || {
            for (id, reply) in asked {
                let found = match store.case(&run_id, &id) {
                    Ok(c) => c,
                    Err(e) => {
                        errors.lock().expect("lock").push(format!("`{id}`: {e}"));
                        None
                    }
                };
                let _ = reply.send(found);
            }
        })
        .map_err(|e| CliError::plain(format!("failed to start the store reader: {e}")))?;
    let ask = Mutex::new(ask);
    let lookup = Arc::new(move |id: &str| {
        let (reply, answer) = std::sync::mpsc::sync_channel(1);
        ask.lock()
            .expect("lock")
            .send((id.to_owned(), reply))
            .ok()?;
        answer.recv().ok().flatten()
    });
    // Stored cases not met in the suites yet; what is left at the end is kept.
    let left: Arc<Mutex<HashSet<String>>> = Arc::new(Mutex::new(ids.iter().cloned().collect()));
    let lookup_kept = Arc::clone(&lookup);
    let left_kept = Arc::clone(&left);
    let regraded = cases.filter_map(move |planned| {
        if !left.lock().expect("lock").remove(&planned.case.id) {
            return None;
        }
        let stored = lookup(&planned.case.id)?;
        Some(PlanItem::Case(CaseJob {
            planned,
            recorded: stored.trials,
        }))
    });
    let kept = ids.into_iter().filter_map(move |id| {
        if !left_kept.lock().expect("lock").contains(&id) {
            return None;
        }
        lookup_kept(&id).map(|c| PlanItem::Kept(Box::new(c)))
    });
    Ok(regraded.chain(kept))
}
