//! The run API: [`run`] takes a [`RunRequest`] (suites loaded with their selection, the
//! invocation, and the settings grouped by what they decide) and returns a [`RunOutcome`]
//! (the run id, the summary, how it stopped, what was written). `run`, `redteam`,
//! `--resume`, `--rerun-failed`, `flaky`, `stability` and `stability --metamorphic` all go
//! through it. It prints nothing: warnings are handed to the caller as they arise
//! ([`Notice`]), the terminal view is one of the reporters the caller passes in, and what
//! is said after the run is in the outcome.
//!
//! The steps, each a module: [`target`] resolves what the run calls (target, judges, helper
//! models, response cache), [`plan`] plans the cases and connects MCP servers, [`attach`]
//! names the run and attaches its consumers (the view, the report writers, the store, the
//! OpenTelemetry export), [`dispatch`] hands everything to the runner; [`resume`] finds what
//! a resumed or re-run run continues.

pub mod attach;
pub mod dispatch;
pub mod list;
pub mod matrix;
pub mod plan;
pub mod resume;
pub mod target;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use gauntlet_core::event::{Invocation, Reporter};
use gauntlet_core::result::{CaseResult, TrialResult};
use gauntlet_core::summary::Summary;
use gauntlet_core::target::TargetConfig;
use gauntlet_report::html::HtmlBaseline;
use gauntlet_runner::Stop;
use gauntlet_store::{Store, StoreLocation};
use gauntlet_suite::filter::{CaseFilter, Selection, Shard};
use gauntlet_suite::load::LoadedSuite;

use crate::error::{EngineError, Notice};
use crate::otel::OtelFlags;

pub use attach::{canary_disclosures, report_writers};
pub(crate) use attach::{graded_run_reporters, recorded};
pub use list::list;
pub use target::helpers;

/// Builds report.html's baseline section from the store the run writes to (`--baseline`
/// with reports): `None` when the baseline cannot be read (the comparison after the run
/// says why).
pub type BaselinePage = Box<dyn FnOnce(&mut Store) -> Option<HtmlBaseline>>;

/// One run: what to run, against what, and where its results go.
pub struct RunRequest {
    /// The suites, loaded with `select` (their selected cases counted).
    pub suites: Vec<LoadedSuite>,
    /// Which cases run.
    pub select: Selection,
    /// What the run was asked for, recorded in its manifest: the target, filters, canary,
    /// converters, helpers, budget, limits.
    pub invocation: Invocation,
    /// What kind of run, and what it continues.
    pub origin: Origin,
    /// How many trials, with which seeds, under which scheduling limits.
    pub trials: Trials,
    /// The models of the run other than the agent: judges, the simulated user, caching.
    pub models: Models,
    /// Where results go.
    pub outputs: Outputs,
    /// The terminal view: the first reporter, when the caller shows the run as it goes.
    pub view: Option<Box<dyn Reporter>>,
}

impl RunRequest {
    /// A request with the defaults of a plain run: one trial per case, no store, no
    /// reports, no view.
    pub fn new(
        command: &'static str,
        suites: Vec<LoadedSuite>,
        select: Selection,
        invocation: Invocation,
    ) -> RunRequest {
        RunRequest {
            suites,
            select,
            invocation,
            origin: Origin::new(command),
            trials: Trials::default(),
            models: Models::default(),
            outputs: Outputs::default(),
            view: None,
        }
    }
}

/// What kind of run, and what it continues.
pub struct Origin {
    /// The command recorded in the manifest (`run`, `redteam`, `flaky`, `stability`, ...).
    pub command: &'static str,
    /// A resumed run: its id, its stored trials, when it first started.
    pub resume: Option<Resume>,
    /// Warnings to record as the run starts.
    pub warnings: Vec<String>,
    /// Manifest notes (the command's, then `--note` entries).
    pub notes: BTreeMap<String, String>,
}

impl Origin {
    /// A new run of `command`.
    pub fn new(command: &'static str) -> Origin {
        Origin {
            command,
            resume: None,
            warnings: Vec::new(),
            notes: BTreeMap::new(),
        }
    }
}

/// What a resumed run continues.
pub struct Resume {
    /// The run's id.
    pub run_id: String,
    /// Its stored trials by case id: their slots are filled, not run again.
    pub finished: HashMap<String, Vec<TrialResult>>,
    /// When the run first started (the manifest keeps it).
    pub started_at: String,
}

/// How many trials, with which seeds, under which limits.
pub struct Trials {
    /// Trials per case (`--k`).
    pub k: u32,
    /// The run seed (`--seed`).
    pub seed: Option<u64>,
    /// Pin every trial's seed to the run seed (flake triage, stability).
    pub pin_seed: bool,
    /// `--whole-rate-limit`: a shard keeps the target's whole rate limit.
    pub whole_rate_limit: bool,
    /// The quarantine file (`--quarantine`, else `quarantine.yaml` if present).
    pub quarantine: Option<PathBuf>,
}

impl Default for Trials {
    fn default() -> Trials {
        Trials {
            k: 1,
            seed: None,
            pin_seed: false,
            whole_rate_limit: false,
            quarantine: None,
        }
    }
}

/// The run's models other than the agent, and their caching.
#[derive(Default)]
pub struct Models {
    /// `--judge SPEC`: the judge model of every judge check.
    pub judge: Option<String>,
    /// `--judge-cache FILE`.
    pub judge_cache: Option<PathBuf>,
    /// Ask judges afresh every time (flake triage must see a judge's instability).
    pub fresh_judges: bool,
    /// `--no-cache`: no response cache at all.
    pub no_cache: bool,
    /// The config file with named targets and prices.
    pub config: Option<PathBuf>,
    /// `--user-model SPEC`: the simulated user.
    pub user_model: Option<TargetConfig>,
    /// `--embeddings SPEC`: the embeddings model of `similar:` checks (over the suites').
    pub embeddings: Option<String>,
}

/// Where a run's results go.
#[derive(Default)]
pub struct Outputs {
    /// The report folder (`--out`), unless `--no-reports`.
    pub reports: Option<PathBuf>,
    /// The run store, unless `--no-store`.
    pub store: Option<StoreLocation>,
    /// `--run-id` (a shard's own id adds its shard to it).
    pub run_id: Option<String>,
    /// report.html's baseline section, read from the store before the run.
    pub baseline_page: Option<BaselinePage>,
    /// The OpenTelemetry export flags (`None`: no export, whatever the variables say).
    pub otel: Option<OtelFlags>,
    /// Keep every case result in memory for the caller (small runs only: flake triage,
    /// stability).
    pub capture: bool,
}

/// What a run did.
pub struct RunOutcome {
    /// The run's id.
    pub run_id: String,
    /// The summary, with the state.
    pub summary: Summary,
    /// How scheduling stopped.
    pub stop: Stop,
    /// Errors of reporters that could not record the run (a report, the store): when any,
    /// the state must not be shown.
    pub reporter_errors: Vec<String>,
    /// The report folder written, if any.
    pub reports: Option<PathBuf>,
    /// The store the run was written to, still open (for a baseline comparison).
    pub store: Option<Store>,
    /// The case results, when `Outputs::capture` asked for them.
    pub cases: Vec<CaseResult>,
    /// What to tell the user after the summary: the export's line, how to continue.
    pub after: Vec<Notice>,
}

/// The run's selection from its filter terms, its shard and an explicit id set.
pub fn selection(
    filters: &[String],
    shard: Option<&str>,
    only: Option<HashSet<String>>,
) -> Result<Selection, EngineError> {
    let filter = CaseFilter::parse(filters).map_err(|e| {
        let hint = match e {
            gauntlet_suite::filter::FilterError::Framework(_) => {
                "e.g. --framework atlas:AML.T0051 --framework nist-ai-rmf:MEASURE-2.7 --framework eu-ai-act; `gauntlet redteam --help` lists the frameworks"
            }
            _ => "e.g. --filter pack:smoke --filter owasp:LLM01",
        };
        EngineError::usage(e.to_string(), hint)
    })?;
    let shard = shard
        .map(Shard::parse)
        .transpose()
        .map_err(|e| EngineError::usage(e.to_string(), "e.g. --shard 1/4"))?;
    Ok(Selection {
        filter,
        shard,
        only,
        include_holdout: false,
    })
}

/// Runs the request's suites against its target; `notices` gets each warning as the run is
/// set up (before any trial starts).
pub fn run(req: RunRequest, notices: &mut dyn FnMut(Notice)) -> Result<RunOutcome, EngineError> {
    if req.trials.k == 0 {
        return Err(EngineError::usage(
            "--k must be at least 1",
            "use --k 1 for one trial per case",
        ));
    }
    let RunRequest {
        suites,
        select,
        invocation,
        origin,
        trials,
        models,
        mut outputs,
        view,
    } = req;
    let mut origin = origin;
    let mut resolved = target::resolve(
        &suites,
        &invocation,
        &select,
        &trials,
        &models,
        &outputs,
        notices,
    )?;
    let file_cache = resolved.file_cache.clone();
    let planned = plan::plan(suites, select, &invocation, &trials, &mut resolved, notices)?;
    let attached = attach::attach(
        &invocation,
        &mut origin,
        &trials,
        &mut outputs,
        view,
        &mut resolved,
        planned,
    )?;
    let mut ran = dispatch::dispatch(resolved, attached, &invocation, &origin, &trials, &outputs)?;
    ran.mcp_servers.shutdown();
    let mut outcome = finish(ran, outputs);
    if let Some(e) = file_cache.as_ref().and_then(|c| c.open_error()) {
        outcome.after.push(Notice::Warning(format!(
            "the response cache could not be opened, so every model call of this run was made afresh: {e}"
        )));
    }
    Ok(outcome)
}

/// The outcome, with what is said after the run.
fn finish(ran: dispatch::Ran, outputs: Outputs) -> RunOutcome {
    let run_id = ran.run_id;
    let mut after = Vec::new();
    if let Some(r) = &ran.otel {
        after.push(r.notice());
    }
    if ran.outcome.stop == Stop::Cancelled {
        after.push(Notice::Note(format!(
            "interrupted: the reports cover the cases that finished; continue with `gauntlet run --resume {run_id}`"
        )));
    }
    if let Stop::Budget(b) = ran.outcome.stop {
        after.push(Notice::Note(format!(
            "the budget {} was spent: no new trial was started; continue with `gauntlet run --resume {run_id}` and a larger budget",
            b.flag()
        )));
    }
    let cases = ran
        .captured
        .map(|c| std::mem::take(&mut *c.lock().unwrap_or_else(std::sync::PoisonError::into_inner)))
        .unwrap_or_default();
    RunOutcome {
        run_id,
        summary: ran.outcome.summary,
        stop: ran.outcome.stop,
        reporter_errors: ran.outcome.reporter_errors,
        reports: outputs.reports,
        store: ran.store,
        cases,
        after,
    }
}

/// A reporter that keeps case results in memory (for small runs only).
struct Capture(Arc<std::sync::Mutex<Vec<CaseResult>>>);

impl Reporter for Capture {
    fn on_event(
        &mut self,
        ev: &gauntlet_core::event::RunEvent,
    ) -> Result<(), gauntlet_core::event::ReportError> {
        if let gauntlet_core::event::EventKind::CaseFinished { result } = &ev.kind {
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push((**result).clone());
        }
        Ok(())
    }
}
