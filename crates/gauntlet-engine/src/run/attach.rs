//! Step "attach consumers" of a run: [`attach`] opens the store, names the run
//! ([`chosen_run_id`]), writes the manifest, and lines up the reporters in their order: the
//! caller's view, the report writers ([`report_writers`]), the store, the capture, and the
//! OpenTelemetry export last (its bounded wait at the end comes after the others' work).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use gauntlet_core::event::{EvidenceLevel, Invocation, Reporter, RunManifest, ShardOf};
use gauntlet_core::result::{CaseResult, TrialResult};
use gauntlet_runner::RunOutcome;
use gauntlet_store::Store;
use gauntlet_suite::ManifestFacts;
use gauntlet_suite::filter::Shard;

use super::plan::Planned;
use super::target::Resolved;
use super::{Capture, Origin, Outputs, Trials};
use crate::error::{EngineError, store_err};
use crate::otel::ExportReport;

/// The run, named and with its consumers.
pub struct Attached {
    pub planned: Planned,
    pub run_id: String,
    pub manifest: RunManifest,
    pub reporters: Vec<Box<dyn Reporter>>,
    pub store: Option<Store>,
    /// A resumed run's stored trials.
    pub finished: HashMap<String, Vec<TrialResult>>,
    pub captured: Option<Arc<Mutex<Vec<CaseResult>>>>,
    pub otel: Option<ExportReport>,
}

/// Names the run, writes its manifest and attaches its reporters.
pub fn attach(
    inv: &Invocation,
    origin: &mut Origin,
    trials: &Trials,
    outputs: &mut Outputs,
    view: Option<Box<dyn Reporter>>,
    resolved: &mut Resolved,
    planned: Planned,
) -> Result<Attached, EngineError> {
    let mut store = match &outputs.store {
        Some(loc) => Some(Store::open(loc).map_err(store_err)?),
        None => None,
    };
    let resume = origin.resume.take();
    let resuming = resume.is_some();
    let shard = planned.plan.selection().shard;
    let (run_id, finished, started_at) = match resume {
        Some(r) => (r.run_id, r.finished, r.started_at),
        None => (
            chosen_run_id(outputs.run_id.as_deref(), shard, store.as_mut())?,
            HashMap::new(),
            jiff::Timestamp::now().to_string(),
        ),
    };
    let facts = Facts {
        run_id: &run_id,
        started_at,
    };
    let manifest = manifest(inv, origin, trials, outputs, resolved, &planned, facts)?;
    let mut reporters: Vec<Box<dyn Reporter>> = Vec::new();
    reporters.extend(view);
    if let Some(dir) = &outputs.reports {
        // An unknown baseline is reported after the run, where the comparison is printed.
        let html_baseline = match (outputs.baseline_page.take(), &mut store) {
            (Some(page), Some(st)) => page(st),
            _ => None,
        };
        reporters.extend(report_writers(dir, html_baseline)?);
    }
    if let Some(st) = &store {
        reporters.push(Box::new(
            if resuming {
                st.resume_reporter()
            } else {
                st.reporter()
            }
            .map_err(store_err)?,
        ));
    }
    let captured = outputs.capture.then(|| Arc::new(Mutex::new(Vec::new())));
    if let Some(c) = &captured {
        reporters.push(Box::new(Capture(Arc::clone(c))));
    }
    // Last: its final wait for the endpoint comes after every other reporter's work.
    let otel = match &resolved.otel {
        Some(export) => {
            let skip = finished
                .values()
                .flatten()
                .map(|t| (t.case_id.clone(), t.trial))
                .collect();
            let (r, report) = export.reporter(resolved.redactor.clone(), skip)?;
            reporters.push(r);
            Some(report)
        }
        None => None,
    };
    Ok(Attached {
        planned,
        run_id,
        manifest,
        reporters,
        store,
        finished,
        captured,
        otel,
    })
}

/// What names the run in its manifest.
struct Facts<'a> {
    run_id: &'a str,
    started_at: String,
}

/// The run's manifest: the plan's, with the target as it describes itself (and the
/// declared evidence level), the judges and the prices.
fn manifest(
    inv: &Invocation,
    origin: &Origin,
    trials: &Trials,
    outputs: &Outputs,
    resolved: &Resolved,
    planned: &Planned,
    facts: Facts<'_>,
) -> Result<RunManifest, EngineError> {
    let mut info = resolved.target.info();
    if let Some(level) = inv.evidence {
        // Declared evidence can say a live target is a canary slice; it cannot make a fake
        // or a simulated run look closer to production than it was.
        if info.evidence_level != EvidenceLevel::Online {
            return Err(EngineError::usage(
                format!(
                    "--evidence canary needs a live target; `{}` gives {:?} evidence",
                    info.label, info.evidence_level
                ),
                "a canary run talks to the deployment that takes the canary traffic (openai:, anthropic:, http:)",
            ));
        }
        info.evidence_level = level;
    }
    let mut notes = origin.notes.clone();
    notes.extend(planned.notes.clone());
    let shard = planned.plan.selection().shard;
    let mut manifest = planned.plan.manifest(ManifestFacts {
        run_id: facts.run_id.to_owned(),
        gauntlet_version: crate::VERSION.into(),
        started_at: facts.started_at,
        command: origin.command.into(),
        target: info,
        k: trials.k,
        seed: trials.seed.unwrap_or(0),
        judge: resolved.judges.label.clone(),
        notes,
        invocation: Some(inv.clone()),
        shard_run: outputs.run_id.clone().filter(|_| shard.is_some()),
    });
    if let Some(c) = &resolved.columns {
        // Each case runs once per column.
        manifest.planned_cases *= c.labels().len();
    }
    manifest.judges = resolved.judges.refs.clone();
    manifest.prices = Some(resolved.prices.source());
    Ok(manifest)
}

/// The id of a new run: `--run-id` (with its shard, for one shard of a sharded run), which
/// must be free in the store, else a fresh one.
pub fn chosen_run_id(
    given: Option<&str>,
    shard: Option<Shard>,
    store: Option<&mut Store>,
) -> Result<String, EngineError> {
    let Some(given) = given else {
        return Ok(crate::setup::new_run_id());
    };
    let valid = !given.is_empty()
        && given.len() <= 100
        && given
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'));
    if !valid || given == "latest" {
        return Err(EngineError::usage(
            format!("`{given}` is not a usable run id"),
            "use up to 100 letters, digits and - _ . : (e.g. --run-id ci-${CI_PIPELINE_ID}), and not `latest`",
        ));
    }
    let id = match shard {
        Some(sh) => ShardOf::run_id(given, sh.index, sh.total),
        None => given.to_owned(),
    };
    if let Some(store) = store
        && store.exists(&id).map_err(store_err)?
    {
        return Err(EngineError::usage(
            format!("run {id} is already in the store"),
            format!(
                "continue it with `gauntlet run --resume {id}`, or pick another --run-id{}",
                if shard.is_some() {
                    " (a shard is stored once per sharded run)"
                } else {
                    ""
                }
            ),
        ));
    }
    Ok(id)
}

/// The files this run writes itself (the reports, their temporary names, the store, the
/// response cache), which the integrity check does not count as changes to the suite
/// folder.
pub fn written_by_us(outputs: &Outputs) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = outputs
        .store
        .iter()
        .filter_map(|l| l.path().map(Path::to_path_buf))
        .collect();
    // The response cache may sit inside a suite's folder too.
    let cache = crate::cache::cache_path(outputs.store.as_ref());
    for suffix in ["", "-wal", "-shm", "-journal"] {
        out.push(PathBuf::from(format!("{}{suffix}", cache.display())));
    }
    if let Some(dir) = &outputs.reports {
        for f in gauntlet_report::Format::ALL {
            out.push(dir.join(f.file_name()));
            // The writers' temporary files, by prefix: JUnit keeps one set per suite until
            // the run ends, so their names are not known in advance.
            out.push(dir.join(f.temporary_prefix()));
        }
    }
    out
}

/// The report writers for an output folder; with a baseline, report.html compares with it.
pub fn report_writers(
    dir: &Path,
    baseline: Option<gauntlet_report::html::HtmlBaseline>,
) -> Result<Vec<Box<dyn Reporter>>, EngineError> {
    use gauntlet_report::{Format, html::HtmlReport};
    let err = |e: std::io::Error| {
        EngineError::usage(
            format!(
                "failed to create the report folder `{}`: {e}",
                dir.display()
            ),
            "pass --out with a writable folder",
        )
    };
    let Some(b) = baseline else {
        return gauntlet_report::writers(dir, &Format::ALL, Some(canary_disclosures)).map_err(err);
    };
    let plain: Vec<Format> = Format::ALL
        .into_iter()
        .filter(|f| *f != Format::Html)
        .collect();
    let mut out = gauntlet_report::writers(dir, &plain, Some(canary_disclosures)).map_err(err)?;
    out.push(Box::new(
        HtmlReport::create(dir).map_err(err)?.with_baseline(b),
    ));
    Ok(out)
}

/// The canary detector, as the report writers' finder of a canary in disguise: the files
/// that leave the run's folder mask every disclosure it finds, not only the plain canary.
#[derive(Debug)]
struct DetectedLeaks(gauntlet_graders::canary::CanaryDetector);

impl gauntlet_report::mask::Disclosures for DetectedLeaks {
    fn find(&self, text: &str) -> Vec<(std::ops::Range<usize>, &'static str)> {
        self.0
            .scan_all(text)
            .into_iter()
            .map(|l| (l.offset..l.end, l.method.as_str()))
            .collect()
    }
}

/// The finder of `secret` in disguise that the report writers are lent, for any other view
/// that masks what it quotes as they do (the terminal's case lines).
pub fn canary_disclosures(secret: &str) -> Box<dyn gauntlet_report::mask::Disclosures> {
    Box::new(DetectedLeaks(
        gauntlet_graders::canary::CanaryDetector::new(secret),
    ))
}

/// The reporters of a run graded from traces already recorded (`regrade`, `grade`): the
/// terminal view first, the report files in `out`, then the store.
pub(crate) fn graded_run_reporters(
    view: Option<Box<dyn Reporter>>,
    out: &Path,
    store: &Store,
) -> Result<Vec<Box<dyn Reporter>>, EngineError> {
    let mut reporters: Vec<Box<dyn Reporter>> = Vec::new();
    reporters.extend(view);
    reporters.extend(report_writers(out, None)?);
    reporters.push(Box::new(store.reporter().map_err(store_err)?));
    Ok(reporters)
}

/// The run's outcome, or the error when a reporter (a report or the store) failed to record
/// it: such a run is not one the user can rely on.
pub(crate) fn recorded(outcome: RunOutcome) -> Result<RunOutcome, EngineError> {
    if outcome.reporter_errors.is_empty() {
        return Ok(outcome);
    }
    Err(EngineError::plain(format!(
        "failed to record the run (a report or the run store): {}",
        outcome.reporter_errors.join("; ")
    )))
}
