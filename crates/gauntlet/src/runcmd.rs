//! `gauntlet run` and `gauntlet redteam` (with `--resume` and `--rerun-failed`): resolve the
//! settings, load the suites with the run's selection, plan, and hand the plan, the target
//! and the reporters to the runner; the exit code is the state's.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use gauntlet_core::cost::{Budget, PriceTable};
use gauntlet_core::event::{EvidenceLevel, Invocation, Reporter, ShardOf};
use gauntlet_core::result::{CaseResult, CaseStatus, Outcome, TrialResult};
use gauntlet_core::target::TargetConfig;
use gauntlet_graders::OracleGrader;
use gauntlet_runner::{PlanItem, RunConfig, Runner, Stop};
use gauntlet_store::{Store, StoreError, StoreLocation};
use gauntlet_suite::filter::{CaseFilter, Selection, Shard};
use gauntlet_suite::load::LoadedSuite;
use gauntlet_suite::{ManifestFacts, Plan, PlanSettings};

use crate::cli::{ExecOpts, RedteamArgs, RunArgs};
use crate::error::CliError;
use crate::out;
use crate::printer::{TerminalReporter, Verbosity, print_summary};
use crate::setup::{
    BUILTIN_OWASP, current_dir, integrity_check, load_all, new_run_id, open_store, quarantine,
    resolve_spec, resolve_suite_paths, resolve_target, runtime, store_err, store_location,
};

/// gauntlet's version, recorded in every manifest.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Everything a run needs beyond its suites, resolved from flags, or from a stored run's
/// invocation when resuming.
pub struct Settings {
    pub invocation: Invocation,
    pub k: u32,
    pub seed: Option<u64>,
    pub out: Option<PathBuf>,
    pub verbosity: Verbosity,
    pub store: Option<StoreLocation>,
    /// `--run-id` (a shard's own id adds its shard to it).
    pub run_id: Option<String>,
    /// `--whole-rate-limit`: a shard keeps the target's whole rate limit.
    pub whole_rate_limit: bool,
    pub quarantine: Option<PathBuf>,
    pub baseline: Option<String>,
    /// `--judge SPEC`: the judge model of every judge check.
    pub judge: Option<String>,
    /// `--judge-cache FILE`.
    pub judge_cache: Option<PathBuf>,
    /// Ask judges afresh every time (flake triage must see a judge's instability).
    pub fresh_judges: bool,
    /// `--no-cache`: no response cache at all.
    pub no_cache: bool,
    /// The config file with named targets.
    pub config: Option<PathBuf>,
    pub user_model: Option<TargetConfig>,
    /// `--note KEY=VALUE` entries for the manifest.
    pub notes: BTreeMap<String, String>,
    /// The OpenTelemetry export flags (`None`: no export, whatever the variables say).
    pub otel: Option<crate::otel::OtelFlags>,
}

/// What kind of run, and what it continues.
pub struct Mode {
    pub command: &'static str,
    /// Resume: the run id and its stored trials.
    pub resume: Option<(String, HashMap<String, Vec<TrialResult>>)>,
    /// Resume: when the run first started (the manifest keeps it).
    pub started_at: Option<String>,
    /// Warnings to record as the run starts.
    pub warnings: Vec<String>,
    /// Only these case ids (re-run of failures).
    pub only: Option<HashSet<String>>,
    /// Extra manifest notes.
    pub notes: BTreeMap<String, String>,
    /// Pin every trial's seed (flake triage).
    pub pin_seed: bool,
    /// Collects the case results (flake triage reads them after the run).
    pub capture: Option<Arc<std::sync::Mutex<Vec<CaseResult>>>>,
    /// Print neither the run's progress nor its summary: the command prints its own report
    /// (and may print JSON).
    pub no_summary: bool,
}

impl Mode {
    pub fn new(command: &'static str) -> Mode {
        Mode {
            command,
            resume: None,
            started_at: None,
            warnings: Vec::new(),
            only: None,
            notes: BTreeMap::new(),
            pin_seed: false,
            capture: None,
            no_summary: false,
        }
    }
}

/// A reporter that keeps case results in memory (for small runs only: flake triage).
struct Capture(Arc<std::sync::Mutex<Vec<CaseResult>>>);

impl Reporter for Capture {
    fn on_event(
        &mut self,
        ev: &gauntlet_core::event::RunEvent,
    ) -> Result<(), gauntlet_core::event::ReportError> {
        if let gauntlet_core::event::EventKind::CaseFinished { result } = &ev.kind {
            self.0
                .lock()
                .expect("capture lock")
                .push((**result).clone());
        }
        Ok(())
    }
}

/// The run's selection from its filter terms, its shard and an explicit id set.
pub fn selection(
    filters: &[String],
    shard: Option<&str>,
    only: Option<HashSet<String>>,
) -> Result<Selection, CliError> {
    let filter = CaseFilter::parse(filters).map_err(|e| {
        CliError::usage(
            e.to_string(),
            "e.g. --filter pack:smoke --filter owasp:LLM01",
        )
    })?;
    let shard = shard
        .map(Shard::parse)
        .transpose()
        .map_err(|e| CliError::usage(e.to_string(), "e.g. --shard 1/4"))?;
    Ok(Selection {
        filter,
        shard,
        only,
        include_holdout: false,
    })
}

fn verbosity(opts: &ExecOpts) -> Verbosity {
    if opts.quiet {
        Verbosity::Quiet
    } else if opts.verbose {
        Verbosity::Verbose
    } else {
        Verbosity::Normal
    }
}

fn settings(opts: &ExecOpts, invocation: Invocation) -> Result<Settings, CliError> {
    let mut notes = BTreeMap::new();
    for n in &opts.note {
        let Some((k, v)) = n.split_once('=').filter(|(k, _)| !k.trim().is_empty()) else {
            return Err(CliError::usage(
                format!("--note `{n}` is not KEY=VALUE"),
                "e.g. --note server=\"llama.cpp b4500\" --note flags=\"-c 4096 --jinja\"",
            ));
        };
        notes.insert(k.trim().to_owned(), v.trim().to_owned());
    }
    let spec = |s: &Option<String>| {
        s.as_deref()
            .map(|j| resolve_spec(j, opts.config.as_deref()))
            .transpose()
    };
    Ok(Settings {
        invocation,
        k: opts.k,
        seed: opts.seed,
        out: (!opts.no_reports).then(|| opts.out.clone()),
        verbosity: verbosity(opts),
        store: if opts.no_store {
            None
        } else {
            Some(store_location(
                opts.store.as_deref(),
                opts.config.as_deref(),
            )?)
        },
        run_id: opts.run_id.clone(),
        whole_rate_limit: opts.whole_rate_limit,
        quarantine: opts.quarantine.clone(),
        baseline: opts.baseline.clone(),
        judge: opts.judge.clone(),
        judge_cache: opts.judge_cache.clone(),
        fresh_judges: false,
        no_cache: opts.no_cache,
        config: opts.config.clone(),
        user_model: spec(&opts.user_model)?,
        notes,
        otel: Some(crate::otel::OtelFlags {
            endpoint: opts.otel_endpoint.clone(),
            content: opts.otel_content,
        }),
    })
}

pub fn run(args: RunArgs) -> Result<i32, CliError> {
    let opts = &args.exec;
    if let Some(spec) = &args.resume {
        return resume(spec, opts);
    }
    let mut mode = Mode::new("run");
    let (paths, base_invocation) = match &args.rerun_failed {
        Some(spec) => {
            let mut store = open_store(opts.store.as_deref(), opts.config.as_deref())?;
            let run = store.resolve(spec).map_err(store_err)?;
            let manifest = store.manifest(&run).map_err(store_err)?;
            let mut failed = HashSet::new();
            store
                .for_each_case(&run, |c| {
                    if c.status != CaseStatus::Pass {
                        failed.insert(c.case.id.clone());
                    }
                    Ok(())
                })
                .map_err(store_err)?;
            if failed.is_empty() {
                return Err(CliError::usage(
                    format!("every case of run {run} passed; nothing to re-run"),
                    "pick a run with failures (gauntlet runs list)",
                ));
            }
            let inv = manifest.invocation.clone().ok_or_else(|| {
                CliError::usage(
                    format!("run {run} has no recorded invocation (made by an older gauntlet)"),
                    "pass the suite files and --filter the cases instead",
                )
            })?;
            mode.notes.insert("rerun_failed_from".into(), run.clone());
            mode.command = if manifest.command == "redteam" {
                "redteam"
            } else {
                "run"
            };
            mode.only = Some(failed);
            (resolve_suite_paths(&inv, store.location())?, Some(inv))
        }
        None => (
            args.suites
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            None,
        ),
    };
    let canary = args
        .canary
        .clone()
        .or_else(|| base_invocation.as_ref().and_then(|i| i.canary.clone()));
    let spf = base_invocation
        .as_ref()
        .and_then(|i| i.system_prompt_file.clone());
    let mut select = selection(&opts.filter, opts.shard.as_deref(), mode.only.clone())?;
    select.include_holdout = opts.include_holdout;
    let allow = base_invocation
        .as_ref()
        .map_or_else(|| opts.allow_path.clone(), allowed_paths);
    let suites = load_all(
        &paths,
        canary.as_deref(),
        spf.as_deref(),
        Some(&select),
        &allow,
    )?;
    let target = match (&opts.target, &base_invocation) {
        (None, Some(inv)) => inv.target.clone(),
        _ => resolve_target(
            &suites,
            opts,
            (mode.command == "redteam").then(default_redteam),
        )?,
    };
    let invocation = Invocation {
        suites: paths,
        base_dir: current_dir(),
        target,
        filters: opts.filter.clone(),
        shard: opts.shard.clone(),
        canary,
        system_prompt_file: spf,
        timeout_ms: opts.timeout_ms,
        concurrency: opts.concurrency.unwrap_or(0),
        max_fail: opts.max_fail,
        blocked_is_defended: opts.blocked_is_defended,
        evidence: opts.evidence.map(|_| EvidenceLevel::Canary),
        allow_paths: allow.iter().map(|p| p.display().to_string()).collect(),
        converters: converters(opts, base_invocation.as_ref())?,
        sample: opts.sample,
        include_holdout: select.include_holdout,
        cache: opts.cache,
        budget: budget(opts)?,
        ..Invocation::default()
    };
    let invocation = with_helpers(invocation, opts, base_invocation.as_ref())?;
    let s = settings(opts, invocation)?;
    execute(suites, select, s, mode)
}

/// The run's strategy, attacker and rewriter (`--strategy`, `--attacker`, `--rewriter`),
/// else those of the run being re-run; refused when a strategy or a model converter would
/// have no model to call.
fn with_helpers(
    mut inv: Invocation,
    opts: &ExecOpts,
    base: Option<&Invocation>,
) -> Result<Invocation, CliError> {
    let spec = |s: &Option<String>| {
        s.as_deref()
            .map(|j| resolve_spec(j, opts.config.as_deref()))
            .transpose()
    };
    inv.attacker = spec(&opts.attacker)?.or_else(|| base.and_then(|b| b.attacker.clone()));
    inv.rewriter = spec(&opts.rewriter)?.or_else(|| base.and_then(|b| b.rewriter.clone()));
    inv.strategy = match opts.strategy {
        Some(crate::cli::StrategyArg::Attacker) => Some(gauntlet_core::strategy::Strategy {
            kind: gauntlet_core::strategy::StrategyKind::Attacker,
            objective: None,
            max_turns: opts.max_turns,
            max_backtracks: opts.max_backtracks,
            max_tokens: opts.max_attack_tokens,
        }),
        None => base.and_then(|b| b.strategy.clone()),
    };
    if inv.strategy.is_some() && inv.attacker.is_none() {
        return Err(CliError::usage(
            "--strategy attacker needs an attacker model",
            "pass --attacker SPEC, e.g. --attacker fake:attacker or --attacker openai:gpt-4.1-mini",
        ));
    }
    if inv.rewriter.is_none()
        && let Some(step) = inv
            .converters
            .iter()
            .find(|c| gauntlet_core::strategy::converter_needs_model(c))
    {
        return Err(CliError::usage(
            format!("converter `{step}` needs a rewriter model"),
            "pass --rewriter SPEC, e.g. --rewriter fake:rewriter or --rewriter openai:gpt-4.1-mini",
        ));
    }
    Ok(inv)
}

/// The helper models and run-time converters of a run, when it may need them.
pub fn helpers(
    inv: &Invocation,
    seed: u64,
    redactor: &mut gauntlet_core::redact::Redactor,
    cache: Option<Arc<dyn gauntlet_core::cache::ResponseCache>>,
) -> Result<Arc<gauntlet_runner::Helpers>, CliError> {
    let build = |cfg: &Option<gauntlet_core::target::TargetConfig>,
                 redactor: &mut gauntlet_core::redact::Redactor,
                 flag: &str|
     -> Result<Option<Arc<dyn gauntlet_core::strategy::HelperModel>>, CliError> {
        match cfg {
            None => Ok(None),
            Some(c) => crate::judge::ChatHelper::new(c, redactor, cache.clone())
                .map(|h| Some(Arc::new(h) as Arc<dyn gauntlet_core::strategy::HelperModel>))
                .map_err(|e| {
                    CliError::usage(
                        e,
                        format!("{flag} takes a model target: fake:..., openai:MODEL, anthropic:MODEL or a named one"),
                    )
                }),
        }
    };
    Ok(Arc::new(gauntlet_runner::Helpers {
        attacker: build(&inv.attacker, redactor, "--attacker")?,
        rewriter: build(&inv.rewriter, redactor, "--rewriter")?,
        pure: Arc::new(|name: &str, text: &str, seed: u64| {
            gauntlet_suite::converters::find(name).map(|c| {
                let mut rng = gauntlet_suite::converters::Rng::new(seed);
                (c.apply)(text, &mut rng)
            })
        }),
        step_seed: gauntlet_suite::converters::turn_seed,
        run_seed: seed,
    }))
}

/// The run's converter chain: `--converters`, else the chain of the run being re-run.
fn converters(opts: &ExecOpts, base: Option<&Invocation>) -> Result<Vec<String>, CliError> {
    if opts.converters.is_empty()
        && let Some(inv) = base
    {
        return Ok(inv.converters.clone());
    }
    gauntlet_suite::converters::parse_list(&opts.converters).map_err(|e| {
        CliError::usage(
            e,
            format!(
                "converters: {}",
                gauntlet_suite::converters::CONVERTERS
                    .iter()
                    .map(|c| c.name)
                    .chain(["paraphrase", "translate:LANG"])
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })
}

/// The run's spending limits from `--max-cost` and `--max-total-tokens`.
fn budget(opts: &ExecOpts) -> Result<Budget, CliError> {
    if let Some(c) = opts.max_cost
        && !(c.is_finite() && c > 0.0)
    {
        return Err(CliError::usage(
            format!("--max-cost must be a positive number of US dollars, not {c}"),
            "e.g. --max-cost 2.50",
        ));
    }
    if opts.max_total_tokens == Some(0) {
        return Err(CliError::usage(
            "--max-total-tokens must be at least 1",
            "e.g. --max-total-tokens 200000",
        ));
    }
    Ok(Budget {
        max_cost_usd: opts.max_cost,
        max_tokens: opts.max_total_tokens,
    })
}

fn default_redteam() -> TargetConfig {
    TargetConfig::parse("fake:safe").expect("valid")
}

pub fn redteam(args: RedteamArgs) -> Result<i32, CliError> {
    let spf = args.system_prompt.as_ref().map(|p| p.display().to_string());
    let mut filters = args.exec.filter.clone();
    let categories: Vec<String> = args
        .category
        .iter()
        .map(|c| c.trim().to_ascii_uppercase())
        .collect();
    for c in &categories {
        filters.push(format!("owasp:{c}"));
    }
    let mut select = selection(&filters, args.exec.shard.as_deref(), None)?;
    select.include_holdout = args.exec.include_holdout;
    let suites = load_all(
        &[BUILTIN_OWASP.to_owned()],
        args.canary.as_deref(),
        spf.as_deref(),
        Some(&select),
        &args.exec.allow_path,
    )?;
    // A category must have cases in the corpus; say which ones do (read from the corpus,
    // so the list never goes stale).
    let present: std::collections::BTreeSet<&str> = suites
        .iter()
        .flat_map(|s| s.suite.cases.iter().filter_map(|c| c.owasp.as_deref()))
        .collect();
    if let Some(c) = categories.iter().find(|c| !present.contains(c.as_str())) {
        let what = match gauntlet_core::suite::owasp_title(c) {
            Some(title) => format!("the corpus has no case in OWASP category `{c}` ({title})"),
            None => format!("unknown OWASP category `{c}`"),
        };
        return Err(CliError::usage(
            what,
            format!(
                "categories with cases: {}",
                present.iter().copied().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    let canary = args
        .canary
        .clone()
        .or_else(|| suites[0].suite.agent.canary.clone());
    let target = resolve_target(&suites, &args.exec, Some(default_redteam()))?;
    let invocation = Invocation {
        suites: vec![BUILTIN_OWASP.to_owned()],
        base_dir: current_dir(),
        target,
        filters,
        shard: args.exec.shard.clone(),
        canary,
        system_prompt_file: spf,
        timeout_ms: args.exec.timeout_ms,
        concurrency: args.exec.concurrency.unwrap_or(0),
        max_fail: args.exec.max_fail,
        blocked_is_defended: args.exec.blocked_is_defended,
        evidence: args.exec.evidence.map(|_| EvidenceLevel::Canary),
        allow_paths: args
            .exec
            .allow_path
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        converters: converters(&args.exec, None)?,
        sample: args.exec.sample,
        include_holdout: select.include_holdout,
        cache: args.exec.cache,
        budget: budget(&args.exec)?,
        ..Invocation::default()
    };
    let invocation = with_helpers(invocation, &args.exec, None)?;
    let s = settings(&args.exec, invocation)?;
    execute(suites, select, s, Mode::new("redteam"))
}

/// Continues an interrupted run with the same id, settings and suites.
fn resume(spec: &str, opts: &ExecOpts) -> Result<i32, CliError> {
    let mut store = open_store(opts.store.as_deref(), opts.config.as_deref())?;
    let run = resolve_resumed(&mut store, spec, opts.shard.as_deref())?;
    let manifest = store.manifest(&run).map_err(store_err)?;
    let summary = store.summary(&run).map_err(store_err)?;
    let finished_run = summary.is_some();
    // A run its budget stopped has cases that never ran: it goes on like an interrupted one.
    let budget_stopped = summary
        .as_ref()
        .is_some_and(|(s, _)| matches!(s.end.stop, Stop::Budget(_)));
    if finished_run
        && !budget_stopped
        && !has_faulted_trials(&store.trials(&run).map_err(store_err)?)
    {
        return Err(CliError::usage(
            format!("run {run} already finished, and none of its trials ended in error or timeout"),
            "use `gauntlet run --rerun-failed RUN` to run its failures again as a new run",
        ));
    }
    let inv = manifest.invocation.clone().ok_or_else(|| {
        CliError::usage(
            format!("run {run} has no recorded invocation"),
            "it was made by an older gauntlet; start a new run",
        )
    })?;
    let mut select = selection(&inv.filters, inv.shard.as_deref(), None)?;
    select.include_holdout = inv.include_holdout;
    let suites = load_all(
        &resolve_suite_paths(&inv, store.location())?,
        inv.canary.as_deref(),
        inv.system_prompt_file.as_deref(),
        Some(&select),
        &allowed_paths(&inv),
    )?;
    // A suite that changed since the run started would make the resumed run a mixture.
    for (s, r) in suites.iter().zip(&manifest.suites) {
        if s.sha256 != r.sha256 {
            return Err(CliError::usage(
                format!(
                    "`{}` changed since run {run} started (sha256 differs)",
                    r.path
                ),
                "restore the suite as it was, or start a new run",
            ));
        }
    }
    // Validate everything before touching the store: a resume refused for bad settings
    // leaves the run as it was.
    let mut s = settings(opts, inv)?;
    // A budget given again replaces the recorded one (a run stopped by its budget goes on
    // with a larger one); `--cache` can be turned on for the rest of the run.
    let given = budget(opts)?;
    if given.is_set() {
        s.invocation.budget = given;
    }
    s.invocation.cache |= opts.cache;
    let reopened = if finished_run {
        store.reopen_failed_trials(&run).map_err(store_err)?
    } else {
        Vec::new()
    };
    let finished = store.trials(&run).map_err(store_err)?;
    s.k = manifest.k;
    s.seed = Some(manifest.seed);
    let mut mode = Mode::new(if manifest.command == "redteam" {
        "redteam"
    } else {
        "run"
    });
    mode.notes = manifest.notes.clone();
    mode.notes.insert("resumed".into(), "true".into());
    if !reopened.is_empty() {
        // Not a silent retry: the manifest says how many, and the run keeps a warning per
        // re-run trial with the fault it had ended in.
        mode.notes
            .insert("resumed_faulted_trials".into(), reopened.len().to_string());
        mode.warnings = reopened;
    }
    mode.resume = Some((run, finished));
    mode.started_at = Some(manifest.started_at.clone());
    // A shard keeps the id it shares with the other shards.
    s.run_id = manifest.shard.as_ref().and_then(|sh| sh.run.clone());
    execute(suites, select, s, mode)
}

/// The folders a recorded run let its suites read from.
fn allowed_paths(inv: &Invocation) -> Vec<PathBuf> {
    inv.allow_paths.iter().map(PathBuf::from).collect()
}

/// The id of a new run: `--run-id` (with its shard, for one shard of a sharded run), which
/// must be free in the store, else a fresh one.
fn chosen_run_id(
    given: Option<&str>,
    shard: Option<Shard>,
    store: Option<&mut Store>,
) -> Result<String, CliError> {
    let Some(given) = given else {
        return Ok(new_run_id());
    };
    let valid = !given.is_empty()
        && given.len() <= 100
        && given
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'));
    if !valid || given == "latest" {
        return Err(CliError::usage(
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
        return Err(CliError::usage(
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

/// The run a `--resume RUN` means. RUN may also be the id the shards of a sharded run share:
/// with `--shard i/n` it is that shard; without, the one shard of it that did not finish.
fn resolve_resumed(store: &mut Store, spec: &str, shard: Option<&str>) -> Result<String, CliError> {
    if let Some(sh) = shard {
        let sh =
            Shard::parse(sh).map_err(|e| CliError::usage(e.to_string(), "e.g. --shard 2/4"))?;
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
                0 => Err(CliError::usage(
                    format!("every shard of run {spec} finished"),
                    "resume one shard with --shard i/n (to re-run its faulted trials), or merge them: gauntlet merge RUN",
                )),
                _ => Err(CliError::usage(
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

/// Runs suites (loaded with `select`) against the invocation's target.
pub fn execute(
    suites: Vec<LoadedSuite>,
    select: Selection,
    s: Settings,
    mode: Mode,
) -> Result<i32, CliError> {
    let inv = &s.invocation;
    if s.k == 0 {
        return Err(CliError::usage(
            "--k must be at least 1",
            "use --k 1 for one trial per case",
        ));
    }
    let mut redactor = gauntlet_core::redact::Redactor::new();
    for (name, secret) in s.store.iter().flat_map(StoreLocation::secrets) {
        redactor.add(&name, &secret);
    }
    let otel = match &s.otel {
        Some(flags) => crate::otel::prepare(flags, &mut redactor)?,
        None => None,
    };
    // Rate limits are per target, whichever process calls it: each shard takes its share.
    let mut target_cfg = inv.target.clone();
    let mut rate_note = None;
    if let Some(sh) = select
        .shard
        .filter(|sh| sh.total > 1 && !s.whole_rate_limit)
        && let Some(rl) = &mut target_cfg.rate_limit
    {
        let share = |v: &mut Option<u32>, unit: &str| {
            v.map(|whole| {
                let part = (whole / sh.total).max(1);
                *v = Some(part);
                format!("{part} of {whole} {unit}")
            })
        };
        let parts: Vec<String> = [
            share(&mut rl.requests_per_minute, "requests/min"),
            share(&mut rl.tokens_per_minute, "tokens/min"),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !parts.is_empty() {
            rate_note = Some(format!("{} (shard {sh})", parts.join(", ")));
        }
    }
    let prices = Arc::new(crate::setup::prices(s.config.as_deref())?);
    // One response cache for the run: judges use it unless `--no-cache`, the agent only with
    // `--cache`. Flake triage asks everything afresh.
    // Without a run store (`--no-store`) nothing is kept on disk: the cache lasts the run.
    let response_cache: Option<Arc<dyn gauntlet_core::cache::ResponseCache>> =
        if s.no_cache || s.fresh_judges {
            None
        } else if s.store.is_none() {
            Some(Arc::new(gauntlet_core::cache::MemoryCache::new()))
        } else {
            Some(crate::cachecmd::open_response_cache(s.store.as_ref())?)
        };
    let build_err = |e: gauntlet_targets::BuildError| {
        CliError::usage(
            e.to_string(),
            e.hint()
                .unwrap_or("check the target settings and the environment variables it names"),
        )
    };
    let target = if inv.cache {
        let Some(cache) = &response_cache else {
            return Err(CliError::usage(
                "--cache needs the response cache, and --no-cache turns it off",
                "pass one of them",
            ));
        };
        gauntlet_targets::cache::cacheable(target_cfg.kind).map_err(|e| {
            CliError::usage(
                format!("--cache: {e}"),
                "cache only model targets (openai:, anthropic:); run exec agents, HTTP apps and the proxy without --cache",
            )
        })?;
        if target_cfg.kind == Some(gauntlet_core::target::TargetKind::Fake) {
            out::warn("--cache: a fake target sends no request, so nothing of it is cached");
        }
        gauntlet_targets::cache::build_cached_target(&target_cfg, &mut redactor, cache.clone())
            .map_err(build_err)?
    } else {
        gauntlet_targets::build_target(&target_cfg, &mut redactor).map_err(build_err)?
    };
    let judges = crate::judge::judge_panel(
        &suites,
        s.judge.as_deref(),
        s.config.as_deref(),
        crate::judge::open_cache(
            s.judge_cache.as_deref(),
            s.fresh_judges || s.no_cache,
            response_cache.clone(),
        )?,
        Some(&target.info()),
        &mut redactor,
    )?;
    check_budget(&inv.budget, &prices, &target.info(), &judges.refs)?;
    for w in &judges.warnings {
        out::warn(w);
    }
    let grader = OracleGrader::new().with_judges(Arc::clone(&judges.panel));
    let judge_label = judges.label.clone();
    let quarantined = quarantine(s.quarantine.as_deref())?;
    let user_simulator: Option<Arc<dyn gauntlet_core::target::UserSimulator>> = match &s.user_model
    {
        Some(u) => Some(Arc::new(
            crate::judge::ModelUser::new(u, &mut redactor).map_err(|e| {
                CliError::usage(
                    e,
                    "--user-model takes a model target: fake:user, openai:MODEL, anthropic:MODEL",
                )
            })?,
        )),
        None => None,
    };

    let run_helpers = helpers(
        inv,
        s.seed.unwrap_or(0),
        &mut redactor,
        response_cache.clone(),
    )?;
    let (mut suites, mut select) = (suites, select);
    if let Some(n) = inv.sample {
        gauntlet_suite::sample::apply(&mut suites, &mut select, n, s.seed.unwrap_or(0)).map_err(
            |e| {
                CliError::usage(
                    format!("failed to read the cases to sample: {e}"),
                    "check the included files",
                )
            },
        )?;
    }
    let mut plan = Plan::new(
        suites,
        select,
        PlanSettings {
            canary: inv.canary.as_deref(),
            timeout_ms: inv.timeout_ms,
            blocked_is_defended: inv.blocked_is_defended,
            converters: &inv.converters,
            seed: s.seed.unwrap_or(0),
            strategy: inv.strategy.as_ref(),
        },
    );
    plan.redact_prompts(&redactor);
    if let (Some(file), Some(c)) = (&inv.system_prompt_file, &inv.canary)
        && plan.contexts().any(|ctx| {
            ctx.system_prompt.as_deref().is_some_and(|p| {
                !p.contains(c.as_str()) && !p.contains(gauntlet_core::plan::CANARY_PLACEHOLDER)
            })
        })
    {
        out::warn(&format!(
            "the canary does not appear in {file}: leak checks cannot fire unless the prompt holds it"
        ));
    }
    let shard = plan.selection().shard;
    if plan.planned() == 0 {
        // A shard may hold none of a small suite's cases: that is its whole share of the
        // run, recorded (so that the merge finds every shard) and nothing to fail on.
        match shard {
            Some(sh) => out::note(&format!(
                "shard {sh} holds none of the {} case(s): its empty result is recorded for `gauntlet merge`",
                plan.suite_refs().iter().map(|r| r.cases).sum::<usize>()
            )),
            None if plan.suite_refs().iter().all(|r| r.cases == 0) => {
                return Err(CliError::usage(
                    "no case to run: the suite has no cases",
                    "add at least one case under `cases:` (or `include:` a file of cases)",
                ));
            }
            None => {
                return Err(CliError::usage(
                    "no case to run: the filters left nothing",
                    "check --filter (keys: id, pack, owasp, technique, tag, kind)",
                ));
            }
        }
    }

    // The suites' MCP servers start now, once for the run, and close when it ends.
    let mut mcp_servers = crate::setup::connect_mcp(&mut plan, &mut redactor)?;
    let mut notes = mode.notes.clone();
    notes.extend(s.notes.clone());
    if !mcp_servers.is_empty() {
        // Their calls are real: the manifest says so next to the simulated side-effect mode.
        notes.insert("mcp_servers".into(), mcp_servers.len().to_string());
    }
    if let Some(f) = &inv.system_prompt_file {
        notes.insert("system_prompt_file".into(), f.clone());
    }
    if !quarantined.is_empty() {
        notes.insert("quarantined".into(), quarantined.len().to_string());
    }
    if let Some(n) = rate_note {
        notes.insert("rate_limit_share".into(), n);
    }
    if inv.cache {
        notes.insert(
            "cache".into(),
            "the agent's model calls go through the response cache: a trial answered from it has evidence `replay`".into(),
        );
    }
    let mut store = match &s.store {
        Some(loc) => Some(Store::open(loc).map_err(store_err)?),
        None => None,
    };
    let no_summary = mode.no_summary;
    let resuming = mode.resume.is_some();
    let (run_id, finished) = match mode.resume {
        Some((id, f)) => (id, f),
        None => (
            chosen_run_id(s.run_id.as_deref(), shard, store.as_mut())?,
            HashMap::new(),
        ),
    };
    let mut info = target.info();
    if let Some(level) = inv.evidence {
        // Declared evidence can say a live target is a canary slice; it cannot make a fake
        // or a simulated run look closer to production than it was.
        if info.evidence_level != EvidenceLevel::Online {
            return Err(CliError::usage(
                format!(
                    "--evidence canary needs a live target; `{}` gives {:?} evidence",
                    info.label, info.evidence_level
                ),
                "a canary run talks to the deployment that takes the canary traffic (openai:, anthropic:, http:)",
            ));
        }
        info.evidence_level = level;
    }
    let manifest = plan.manifest(ManifestFacts {
        run_id: run_id.clone(),
        gauntlet_version: VERSION.into(),
        started_at: mode
            .started_at
            .clone()
            .unwrap_or_else(|| jiff::Timestamp::now().to_string()),
        command: mode.command.into(),
        target: info,
        k: s.k,
        seed: s.seed.unwrap_or(0),
        judge: judge_label,
        notes,
        invocation: Some(inv.clone()),
        shard_run: s.run_id.clone().filter(|_| shard.is_some()),
    });
    let mut manifest = manifest;
    manifest.judges = judges.refs.clone();
    manifest.prices = Some(prices.source());

    let mut reporters: Vec<Box<dyn Reporter>> = Vec::new();
    if !no_summary {
        reporters.push(Box::new(TerminalReporter::new(s.verbosity)));
    }
    if let Some(dir) = &s.out {
        // An unknown baseline is reported after the run, where the comparison is printed.
        let html_baseline = match (&s.baseline, &mut store) {
            (Some(name), Some(st)) => crate::comparecmd::html_baseline(st, name).ok(),
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
    if let Some(c) = &mode.capture {
        reporters.push(Box::new(Capture(Arc::clone(c))));
    }
    // Last: its final wait for the endpoint comes after every other reporter's work.
    let otel_report = match &otel {
        Some(export) => {
            let skip = finished
                .values()
                .flatten()
                .map(|t| (t.case_id.clone(), t.trial))
                .collect();
            let (r, report) = export.reporter(redactor.clone(), skip)?;
            reporters.push(r);
            Some(report)
        }
        None => None,
    };

    let cancel = Arc::new(AtomicBool::new(false));
    let probe: gauntlet_runner::RefusalProbe =
        Arc::new(|t: &str| gauntlet_graders::refusal::analyze(t).refused);
    let concurrency = if inv.concurrency > 0 {
        inv.concurrency
    } else {
        inv.target.concurrency.unwrap_or(8)
    };
    let config = RunConfig {
        concurrency,
        k: s.k,
        seed: s.seed.unwrap_or(0),
        max_fail: inv.max_fail,
        refusal_probe: Some(probe),
        cancel: Arc::clone(&cancel),
        packs: plan.packs().clone(),
        redactor,
        quarantined,
        finished,
        pin_seed: mode.pin_seed,
        // Every harness file is hashed now and again when the trials are done.
        // Calibration records decide whether a judge gates: they are harness files too.
        integrity: Some(integrity_check(
            plan.harness_files()
                .into_iter()
                .chain(judges.records.iter().cloned())
                .collect(),
            written_by_us(&s),
        )),
        user_simulator,
        helpers: Some(run_helpers),
        warnings: mode.warnings.clone(),
        notes: Vec::new(),
        prices,
        budget: inv.budget,
    };

    let rt = runtime()?;
    let outcome = rt.block_on(async {
        let c = Arc::clone(&cancel);
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                c.store(true, Ordering::Relaxed);
                // Agents run in process groups of their own, out of the terminal's reach:
                // they get the interrupt from here, as they used to from the terminal.
                gauntlet_targets::exec::interrupt_agents();
            }
        });
        Runner::new(target, Arc::new(grader), config)
            .run(manifest, plan.cases().map(PlanItem::from), reporters)
            .await
    });
    mcp_servers.shutdown();
    if !outcome.reporter_errors.is_empty() {
        // The state is not printed: a report or the run store did not record it.
        for e in &outcome.reporter_errors {
            CliError::plain(format!(
                "failed to record the run (a report or the run store): {e}"
            ))
            .print();
        }
        return Ok(gauntlet_core::score::EXIT_USAGE);
    }
    let reports_dir = s.out.as_ref().map(|o| o.display().to_string());
    if !no_summary {
        print_summary(&outcome.summary, reports_dir.as_deref())?;
    }
    if let Some(r) = &otel_report {
        r.print();
    }
    if outcome.stop == Stop::Cancelled {
        out::note(&format!(
            "interrupted: the reports cover the cases that finished; continue with `gauntlet run --resume {run_id}`"
        ));
    }
    if let Stop::Budget(b) = outcome.stop {
        out::note(&format!(
            "the budget {} was spent: no new trial was started; continue with `gauntlet run --resume {run_id}` and a larger budget",
            b.flag()
        ));
    }
    if let (Some(name), Some(st)) = (&s.baseline, store.as_mut()) {
        crate::comparecmd::print_baseline_comparison(st, name, &run_id)?;
    }
    Ok(outcome.summary.status.exit_code())
}

/// A cost budget needs a price for every model the run is configured to call: with an
/// unknown price the budget could never be reached.
fn check_budget(
    budget: &Budget,
    prices: &PriceTable,
    target: &gauntlet_core::target::TargetInfo,
    judges: &[gauntlet_core::calibration::JudgeRef],
) -> Result<(), CliError> {
    if budget.max_cost_usd.is_none() {
        return Ok(());
    }
    let mut models: Vec<String> = Vec::new();
    if let Some(m) = &target.model {
        models.push(m.clone());
    } else if matches!(target.kind.as_str(), "exec" | "http" | "proxy") {
        // Such a target reports its model calls (or not) as it goes; unpriced ones make
        // the cost unknown, and the budget then counts the priced part.
        out::warn(&format!(
            "--max-cost: the `{}` target names no model up front; calls it reports with a model that has no price are not counted against the budget",
            target.kind
        ));
    }
    models.extend(judges.iter().map(|j| j.configured_model.clone()));
    if let Some(m) = models.iter().find(|m| prices.price(m).is_none()) {
        return Err(CliError::usage(
            format!("--max-cost: the model `{m}` has no price, so its cost is unknown"),
            format!(
                "add it to gauntlet.yaml: `prices: {{{m}: {{input_per_mtok: ..., output_per_mtok: ...}}}}`, or budget tokens with --max-total-tokens"
            ),
        ));
    }
    Ok(())
}

/// The files this run writes itself (the reports, their temporary names, the store), which
/// the integrity check does not count as changes to the suite folder.
fn written_by_us(s: &Settings) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = s
        .store
        .iter()
        .filter_map(|l| l.path().map(std::path::Path::to_path_buf))
        .collect();
    // The response cache may sit inside a suite's folder too.
    let cache = crate::cachecmd::cache_path(s.store.as_ref());
    for suffix in ["", "-wal", "-shm", "-journal"] {
        out.push(PathBuf::from(format!("{}{suffix}", cache.display())));
    }
    if let Some(dir) = &s.out {
        for f in gauntlet_report::Format::ALL {
            out.push(dir.join(f.file_name()));
            out.push(dir.join(format!(".{}.partial", f.file_name())));
        }
    }
    out
}

/// The report writers for an output folder; with a baseline, report.html compares with it.
pub fn report_writers(
    dir: &std::path::Path,
    baseline: Option<gauntlet_report::html::HtmlBaseline>,
) -> Result<Vec<Box<dyn Reporter>>, CliError> {
    use gauntlet_report::{Format, html::HtmlReport};
    let err = |e: std::io::Error| {
        CliError::usage(
            format!(
                "failed to create the report folder `{}`: {e}",
                dir.display()
            ),
            "pass --out with a writable folder",
        )
    };
    let Some(b) = baseline else {
        return gauntlet_report::writers(dir, &Format::ALL).map_err(err);
    };
    let plain: Vec<Format> = Format::ALL
        .into_iter()
        .filter(|f| *f != Format::Html)
        .collect();
    let mut out = gauntlet_report::writers(dir, &plain).map_err(err)?;
    out.push(Box::new(
        HtmlReport::create(dir).map_err(err)?.with_baseline(b),
    ));
    Ok(out)
}
