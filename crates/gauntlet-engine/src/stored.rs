//! Stored runs rendered and graded again. [`write_reports`] replays a run's event stream
//! into the report writers (`report RUN`), so the files come out as the run wrote them;
//! [`regrade`] grades a stored run's traces again with the suites as they are now, as a new
//! run ([`RegradeRequest`] -> [`Regraded`]): the runner's dispatcher in its re-grade mode,
//! fed by the store instead of a target.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use gauntlet_core::event::{EventKind, EvidenceLevel, Reporter};
use gauntlet_core::score::Status;
use gauntlet_report::html::HtmlBaseline;
use gauntlet_runner::{CaseJob, Delivery, PlanItem, RunConfig, RunOutcome, Runner};
use gauntlet_store::Store;
use gauntlet_suite::filter::Selection;
use gauntlet_suite::{Plan, PlanSettings};

use crate::error::{EngineError, Notice, store_err};
use crate::run::{graded_run_reporters, recorded, report_writers};
use crate::setup::{new_run_id, runtime};

/// What `report RUN` wrote.
pub struct Rewritten {
    /// The run's state; `None` when it did not finish (no report is complete).
    pub status: Option<Status>,
    /// The files written into the folder, in the report formats' order.
    pub files: Vec<&'static str>,
}

/// Replays run `id`'s stored event stream into the report writers of `dir`; with a
/// baseline, report.html compares with it.
pub fn write_reports(
    store: &mut Store,
    id: &str,
    dir: &Path,
    baseline: Option<HtmlBaseline>,
) -> Result<Rewritten, EngineError> {
    let mut delivery = Delivery::start(report_writers(dir, baseline)?);
    let mut status = None;
    let replayed = store.replay(id, |ev| {
        if let EventKind::RunFinished { summary, .. } = &ev.kind {
            status = Some(summary.status);
        }
        delivery.push(ev);
        Ok(())
    });
    let errors = delivery.finish();
    replayed.map_err(store_err)?;
    if !errors.is_empty() {
        return Err(EngineError::plain(format!(
            "failed to write a report: {}",
            errors.join("; ")
        )));
    }
    Ok(Rewritten {
        status,
        files: gauntlet_report::Format::ALL
            .iter()
            .map(|f| f.file_name())
            .collect(),
    })
}

/// A re-grade of a stored run.
pub struct RegradeRequest {
    /// The stored run (an id, a prefix, `latest`, a baseline name).
    pub run: String,
    /// `--judge SPEC`.
    pub judge: Option<String>,
    /// `--judge-cache FILE`.
    pub judge_cache: Option<PathBuf>,
    /// `--embeddings SPEC`: the embeddings model of `similar:` checks.
    pub embeddings: Option<String>,
    /// The config file with named targets and prices.
    pub config: Option<PathBuf>,
    /// The report folder.
    pub out: PathBuf,
    /// The terminal view, the first reporter.
    pub view: Option<Box<dyn Reporter>>,
}

/// What a re-grade did.
pub struct Regraded {
    /// The stored run graded again.
    pub from: String,
    /// The new run's id.
    pub run_id: String,
    /// The new run.
    pub outcome: RunOutcome,
}

/// Grades run `req.run`'s stored traces again as a new run, written to `store` and the
/// reports; warnings go to `notices`.
pub fn regrade(
    mut store: Store,
    req: RegradeRequest,
    notices: &mut dyn FnMut(Notice),
) -> Result<Regraded, EngineError> {
    let from = store.resolve(&req.run).map_err(store_err)?;
    let old = store.manifest(&from).map_err(store_err)?;
    let inv = old.invocation.clone().ok_or_else(|| {
        EngineError::usage(
            format!("run {from} has no recorded invocation"),
            "re-run the suite instead",
        )
    })?;
    let suites = crate::setup::load_recorded(
        &inv,
        &old,
        store.location(),
        None,
        &crate::run::resume::allowed_paths(&inv),
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
    let response_cache: Arc<dyn gauntlet_core::cache::ResponseCache> =
        crate::cache::lazy_response_cache(Some(store.location()));
    let embeddings = crate::embeddings::embeddings(
        &suites,
        req.embeddings.as_deref(),
        req.config.as_deref(),
        Some(Arc::clone(&response_cache)),
        &mut redactor,
    )?;
    let judges = crate::judge::judge_panel(
        &suites,
        req.judge.as_deref(),
        req.config.as_deref(),
        crate::judge::open_cache(req.judge_cache.as_deref(), false, Some(response_cache))?,
        Some(&old.target),
        &mut redactor,
    )?;
    for w in &judges.warnings {
        notices(Notice::Warning(w.clone()));
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
    let grader = judges.oracle_grader(embeddings);
    let mut manifest = old.clone();
    manifest.judge = judges.label.clone();
    manifest.judges = judges.refs.clone();
    let run_id = new_run_id();
    manifest.run_id = run_id.clone();
    manifest.command = "regrade".into();
    manifest.started_at = jiff::Timestamp::now().to_string();
    manifest.notes.insert("regraded_from".into(), from.clone());
    manifest.evidence_level = EvidenceLevel::Replay;

    let reporters = graded_run_reporters(req.view, &req.out, &store)?;

    let quarantined: HashSet<String> = store
        .quarantined_cases(&from)
        .map_err(store_err)?
        .into_iter()
        .collect();
    let read_errors = Arc::new(Mutex::new(Vec::new()));
    // A matrix run is graded again column by column, each column folded apart.
    let columns = gauntlet_core::matrix::Columns::of_manifest(&old);
    let mut ex = columns.clone().map(crate::run::matrix::Expander::new);
    let cases = plan.all_cases().flat_map(move |pc| match &mut ex {
        Some(ex) => ex.expand(pc),
        None => vec![pc],
    });
    let items = stored_items(
        store.reopen().map_err(store_err)?,
        &from,
        cases,
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
        prices: Arc::new(crate::setup::prices(req.config.as_deref())?),
        columns,
        ..RunConfig::default()
    };
    let rt = runtime()?;
    let outcome =
        rt.block_on(Runner::regrade(Arc::new(grader), config).run(manifest, items, reporters));
    let read_errors = read_errors.lock().expect("lock");
    if !read_errors.is_empty() {
        return Err(EngineError::usage(
            format!(
                "{} stored case(s) of run {from} could not be read: {}",
                read_errors.len(),
                read_errors.join("; ")
            ),
            "check the store with `gauntlet runs show`; the regraded run is incomplete",
        ));
    }
    Ok(Regraded {
        from,
        run_id,
        outcome: recorded(outcome)?,
    })
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
) -> Result<impl Iterator<Item = PlanItem> + Send, EngineError> {
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
        .map_err(|e| EngineError::plain(format!("failed to start the store reader: {e}")))?;
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
