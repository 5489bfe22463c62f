//! What a run continues: [`find`] checks a stored run that `--resume` names and loads its
//! suites as they were ([`ResumePoint`]), [`reopen`] turns it into the run's [`Origin`]
//! (its stored trials, its faulted trials opened again), and [`failed_cases`] reads what
//! `--rerun-failed` runs again ([`Rerun`]).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use gauntlet_core::event::{Invocation, RunManifest, ShardOf};
use gauntlet_core::result::{CaseStatus, Outcome, TrialResult};
use gauntlet_runner::Stop;
use gauntlet_store::{Store, StoreError};
use gauntlet_suite::filter::{Selection, Shard};
use gauntlet_suite::load::LoadedSuite;

use super::{Origin, Resume, selection};
use crate::error::{EngineError, store_err};
use crate::setup::load_recorded;

/// A stored run that can go on, with its suites loaded as they were.
pub struct ResumePoint {
    /// The run's id.
    pub run: String,
    pub manifest: RunManifest,
    /// What it was asked for.
    pub invocation: Invocation,
    /// Whether it finished (it goes on to re-run its faulted trials, or its budget ran out).
    pub finished: bool,
    pub suites: Vec<LoadedSuite>,
    pub select: Selection,
}

/// The run `spec` names, checked: it must have something left to do, a recorded
/// invocation, and suites that did not change since it started.
pub fn find(
    store: &mut Store,
    spec: &str,
    shard: Option<&str>,
) -> Result<ResumePoint, EngineError> {
    let run = resolve_resumed(store, spec, shard)?;
    let manifest = store.manifest(&run).map_err(store_err)?;
    let summary = store.summary(&run).map_err(store_err)?;
    let finished = summary.is_some();
    // A run its budget stopped has cases that never ran: it goes on like an interrupted one.
    let budget_stopped = summary
        .as_ref()
        .is_some_and(|(s, _)| matches!(s.end.stop, Stop::Budget(_)));
    if finished && !budget_stopped && !has_faulted_trials(&store.trials(&run).map_err(store_err)?) {
        return Err(EngineError::usage(
            format!("run {run} already finished, and none of its trials ended in error or timeout"),
            "use `gauntlet run --rerun-failed RUN` to run its failures again as a new run",
        ));
    }
    let inv = manifest.invocation.clone().ok_or_else(|| {
        EngineError::usage(
            format!("run {run} has no recorded invocation"),
            "it was made by an older gauntlet; start a new run",
        )
    })?;
    // A suite that changed since the run started would make the resumed run a mixture.
    let (suites, select) = recorded_suites(&inv, &manifest, store.location(), |path| {
        EngineError::usage(
            format!("`{path}` changed since run {run} started (sha256 differs)"),
            "restore the suite as it was, or start a new run",
        )
    })?;
    Ok(ResumePoint {
        run,
        manifest,
        invocation: inv,
        finished,
        suites,
        select,
    })
}

/// A recorded run's suites loaded again as its invocation found them, under its filters and
/// shard, each checked unchanged since it ran (`changed` says what a changed suite, by its
/// path, means to the caller).
pub fn recorded_suites(
    inv: &Invocation,
    manifest: &RunManifest,
    store: &gauntlet_store::StoreLocation,
    changed: impl Fn(&str) -> EngineError,
) -> Result<(Vec<LoadedSuite>, Selection), EngineError> {
    let mut select = selection(&inv.filters, inv.shard.as_deref(), None)?;
    select.include_holdout = inv.include_holdout;
    let suites = load_recorded(inv, manifest, store, Some(&select), &allowed_paths(inv))?;
    if let Some((_, r)) = suites
        .iter()
        .zip(&manifest.suites)
        .find(|(s, r)| s.sha256 != r.sha256)
    {
        return Err(changed(&r.path));
    }
    Ok((suites, select))
}

/// The origin of the resumed run: its stored trials, and, for a finished run, its faulted
/// trials opened again (each recorded as a warning). Call it only once every setting is
/// checked: a resume refused for bad settings must leave the run as it was.
pub fn reopen(store: &mut Store, point: &ResumePoint) -> Result<Origin, EngineError> {
    let reopened = if point.finished {
        store.reopen_failed_trials(&point.run).map_err(store_err)?
    } else {
        Vec::new()
    };
    let finished = store.trials(&point.run).map_err(store_err)?;
    let mut origin = Origin::new(recorded_command(&point.manifest));
    origin.notes = point.manifest.notes.clone();
    origin.notes.insert("resumed".into(), "true".into());
    if !reopened.is_empty() {
        // Not a silent retry: the manifest says how many, and the run keeps a warning per
        // re-run trial with the fault it had ended in.
        origin
            .notes
            .insert("resumed_faulted_trials".into(), reopened.len().to_string());
        origin.warnings = reopened;
    }
    origin.resume = Some(Resume {
        run_id: point.run.clone(),
        finished,
        started_at: point.manifest.started_at.clone(),
    });
    Ok(origin)
}

/// `redteam` for a red-team run, else `run`.
fn recorded_command(manifest: &RunManifest) -> &'static str {
    if manifest.command == "redteam" {
        "redteam"
    } else {
        "run"
    }
}

/// What `--rerun-failed RUN` runs again.
pub struct Rerun {
    /// The stored run.
    pub run: String,
    /// Its command (`run` or `redteam`).
    pub command: &'static str,
    /// The cases that did not pass.
    pub only: HashSet<String>,
    /// What the run was asked for.
    pub invocation: Invocation,
    /// Its suite files, found again from here.
    pub paths: Vec<String>,
    /// Its manifest, which names a suite `redteam --suite` aimed at a suite's tools without
    /// writing it ([`crate::setup::load_recorded`] loads such a run's suites again).
    pub manifest: gauntlet_core::event::RunManifest,
}

/// The cases of run `spec` that did not pass, and how it was run.
pub fn failed_cases(store: &mut Store, spec: &str) -> Result<Rerun, EngineError> {
    let run = store.resolve(spec).map_err(store_err)?;
    let manifest = store.manifest(&run).map_err(store_err)?;
    // A matrix run's case is selected by its own id: it runs again in every column.
    let columns = gauntlet_core::matrix::Columns::of_manifest(&manifest);
    let mut failed = HashSet::new();
    store
        .for_each_case(&run, |c| {
            if c.status != CaseStatus::Pass {
                let id = c.case.id.as_str();
                let own = columns
                    .as_ref()
                    .and_then(|cols| cols.of(id))
                    .map_or(id, |(_, b)| b);
                failed.insert(own.to_owned());
            }
            Ok(())
        })
        .map_err(store_err)?;
    if failed.is_empty() {
        return Err(EngineError::usage(
            format!("every case of run {run} passed; nothing to re-run"),
            "pick a run with failures (gauntlet runs list)",
        ));
    }
    let inv = manifest.invocation.clone().ok_or_else(|| {
        EngineError::usage(
            format!("run {run} has no recorded invocation (made by an older gauntlet)"),
            "pass the suite files and --filter the cases instead",
        )
    })?;
    let paths = crate::setup::resolve_suite_paths(&inv, store.location())?;
    Ok(Rerun {
        command: recorded_command(&manifest),
        run,
        only: failed,
        invocation: inv,
        paths,
        manifest,
    })
}

/// The folders a recorded run let its suites read from.
pub fn allowed_paths(inv: &Invocation) -> Vec<PathBuf> {
    inv.allow_paths.iter().map(PathBuf::from).collect()
}

/// The run a `--resume RUN` means. RUN may also be the id the shards of a sharded run share:
/// with `--shard i/n` it is that shard; without, the one shard of it that did not finish.
fn resolve_resumed(
    store: &mut Store,
    spec: &str,
    shard: Option<&str>,
) -> Result<String, EngineError> {
    if let Some(sh) = shard {
        let sh =
            Shard::parse(sh).map_err(|e| EngineError::usage(e.to_string(), "e.g. --shard 2/4"))?;
        let id = ShardOf::run_id(spec, sh.index, sh.total);
        if store.exists(&id).map_err(store_err)? {
            return Ok(id);
        }
    }
    match store.resolve(spec) {
        Ok(id) => Ok(id),
        Err(e @ (StoreError::Ambiguous(..) | StoreError::NoSuchRun(_))) => {
            let shards = store
                .runs_starting_with(&format!("{spec}-shard"))
                .map_err(store_err)?;
            if shards.is_empty() {
                return Err(store_err(e));
            }
            let mut open = Vec::new();
            for id in shards {
                if store.summary(&id).map_err(store_err)?.is_none() {
                    open.push(id);
                }
            }
            match open.len() {
                1 => Ok(open.remove(0)),
                0 => Err(EngineError::usage(
                    format!("every shard of run {spec} finished"),
                    "resume one shard with --shard i/n (to re-run its faulted trials), or merge them: gauntlet merge RUN",
                )),
                _ => Err(EngineError::usage(
                    format!(
                        "several shards of run {spec} did not finish: {}",
                        open.join(", ")
                    ),
                    "resume them one at a time: gauntlet run --resume RUN --shard i/n",
                )),
            }
        }
        Err(e) => Err(store_err(e)),
    }
}

/// Whether any stored trial ended in `error` or `timeout`: the trials a resume re-runs.
fn has_faulted_trials(trials: &HashMap<String, Vec<TrialResult>>) -> bool {
    trials
        .values()
        .flatten()
        .any(|t| matches!(t.outcome, Outcome::Error | Outcome::Timeout))
}
