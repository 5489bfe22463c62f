//! `gauntlet run` and `gauntlet redteam` (with `--resume` and `--rerun-failed`): load suites,
//! resolve the target, build the plan, run it with the store and the reports attached, check
//! the harness files did not change, and pick the exit code from the state.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use gauntlet_core::event::{
    EvidenceLevel, Invocation, REPORT_SCHEMA_VERSION, Reporter, RunManifest, SideEffectMode,
    SuiteRef,
};
use gauntlet_core::result::{CaseStatus, TrialResult};
use gauntlet_core::suite::Case;
use gauntlet_core::summary::PackRequirements;
use gauntlet_core::target::{TargetConfig, TargetKind};
use gauntlet_graders::OracleGrader;
use gauntlet_runner::{PlannedCase, RunConfig, Runner, Stop, SuiteContext};
use gauntlet_suite::filter::{CaseFilter, Shard};
use gauntlet_suite::load::{LoadOptions, LoadedSuite, stream_jsonl};

use crate::cli::{ExecOpts, RedteamArgs, RunArgs};
use crate::printer::{TerminalReporter, Verbosity};
use crate::{CliError, VERSION};

/// The canary placeholder in system prompts.
pub const CANARY_PLACEHOLDER: &str = "{{canary}}";

/// The origin recorded for the built-in red-team corpus.
pub const BUILTIN_OWASP: &str = "builtin:owasp";

/// Everything a run needs beyond its suites, resolved from flags, or from a stored run's
/// invocation when resuming.
pub struct Settings {
    pub invocation: Invocation,
    pub k: u32,
    pub seed: Option<u64>,
    pub out: Option<PathBuf>,
    pub verbosity: Verbosity,
    pub store: Option<PathBuf>,
    pub quarantine: Option<PathBuf>,
    pub baseline: Option<String>,
    pub judge: Option<TargetConfig>,
    pub user_model: Option<TargetConfig>,
    /// `--note KEY=VALUE` entries for the manifest.
    pub notes: BTreeMap<String, String>,
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
    pub capture: Option<Arc<std::sync::Mutex<Vec<gauntlet_core::result::CaseResult>>>>,
}

/// A reporter that keeps case results in memory (for small runs only: flake triage).
struct Capture(Arc<std::sync::Mutex<Vec<gauntlet_core::result::CaseResult>>>);

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
        }
    }
}

/// Loads suites, printing nothing; diagnostics become a usage error.
pub fn load_all(
    paths: &[String],
    canary: Option<&str>,
    system_prompt_file: Option<&str>,
) -> Result<Vec<LoadedSuite>, CliError> {
    let opts = LoadOptions { run_canary: canary };
    let mut suites = Vec::new();
    let mut diags = Vec::new();
    for p in paths {
        if p == BUILTIN_OWASP {
            suites.push(corpus(system_prompt_file.map(Path::new), canary)?);
            continue;
        }
        match gauntlet_suite::load_file(Path::new(p), &opts) {
            Ok(s) => suites.push(s),
            Err(mut d) => diags.append(&mut d),
        }
    }
    diags.extend(gauntlet_suite::load::check_unique_ids(&suites));
    if !diags.is_empty() {
        return Err(CliError::Diagnostics(diags));
    }
    Ok(suites)
}

/// The OWASP corpus with the user's system prompt (if any).
fn corpus(system_prompt: Option<&Path>, canary: Option<&str>) -> Result<LoadedSuite, CliError> {
    let mut corpus =
        gauntlet_suite::builtin::owasp(&LoadOptions::default()).map_err(CliError::Diagnostics)?;
    if let Some(path) = system_prompt {
        let text = std::fs::read_to_string(path).map_err(|e| {
            CliError::usage(
                format!("failed to read the system prompt `{}`: {e}", path.display()),
                "pass a text file holding your app's system prompt",
            )
        })?;
        if !text.contains(CANARY_PLACEHOLDER) && canary.is_none() {
            return Err(CliError::usage(
                format!(
                    "`{}` has no {CANARY_PLACEHOLDER} placeholder and no --canary was given",
                    path.display()
                ),
                "write {{canary}} in your prompt where a secret should be planted, or pass --canary with the secret your prompt already holds",
            ));
        }
        corpus.suite.agent.system_prompt = Some(text.clone());
        corpus.system_prompt = Some(text);
        corpus.files.push(path.to_path_buf());
    }
    Ok(corpus)
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

/// Where the store is: the flag, else `store:` in the config file, else the default.
pub fn store_path(flag: Option<&Path>, config: Option<&Path>) -> Result<PathBuf, CliError> {
    if let Some(p) = flag {
        return Ok(p.to_path_buf());
    }
    let cfg_path = config
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("gauntlet.yaml"));
    if cfg_path.exists() {
        let cfg = gauntlet_suite::load::load_config(&cfg_path).map_err(CliError::Diagnostics)?;
        if let Some(s) = cfg.store {
            return Ok(PathBuf::from(s));
        }
    }
    Ok(PathBuf::from(gauntlet_store::DEFAULT_STORE))
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
    let judge = opts
        .judge
        .as_deref()
        .map(|j| resolve_spec(j, opts.config.as_deref()))
        .transpose()?;
    Ok(Settings {
        invocation,
        k: opts.k,
        seed: opts.seed,
        out: (!opts.no_reports).then(|| opts.out.clone()),
        verbosity: verbosity(opts),
        store: if opts.no_store {
            None
        } else {
            Some(store_path(opts.store.as_deref(), opts.config.as_deref())?)
        },
        quarantine: opts.quarantine.clone(),
        baseline: opts.baseline.clone(),
        judge,
        user_model: opts
            .user_model
            .as_deref()
            .map(|u| resolve_spec(u, opts.config.as_deref()))
            .transpose()?,
        notes,
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
            let store = open_store(opts)?;
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
            (inv.suites.clone(), Some(inv))
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
    let suites = load_all(&paths, canary.as_deref(), spf.as_deref())?;
    let target = match (&opts.target, &base_invocation) {
        (None, Some(inv)) => inv.target.clone(),
        _ => resolve_target(
            &suites,
            opts,
            if mode.command == "redteam" {
                Some(default_redteam())
            } else {
                None
            },
        )?,
    };
    let invocation = Invocation {
        suites: paths,
        target,
        filters: opts.filter.clone(),
        shard: opts.shard.clone(),
        canary,
        system_prompt_file: spf,
        timeout_ms: opts.timeout_ms,
        concurrency: opts.concurrency.unwrap_or(0),
        max_fail: opts.max_fail,
    };
    let s = settings(opts, invocation)?;
    execute(suites, s, mode)
}

fn default_redteam() -> TargetConfig {
    TargetConfig::parse("fake:safe").expect("valid")
}

pub fn redteam(args: RedteamArgs) -> Result<i32, CliError> {
    let spf = args.system_prompt.as_ref().map(|p| p.display().to_string());
    let suites = load_all(
        &[BUILTIN_OWASP.to_owned()],
        args.canary.as_deref(),
        spf.as_deref(),
    )?;
    let canary = args
        .canary
        .clone()
        .or_else(|| suites[0].suite.agent.canary.clone());
    let mut filters = args.exec.filter.clone();
    for c in &args.category {
        let c = c.trim().to_ascii_uppercase();
        if gauntlet_core::suite::owasp_title(&c).is_none() {
            return Err(CliError::usage(
                format!("unknown OWASP category `{c}`"),
                "the corpus covers LLM01, LLM02, LLM05, LLM06 and LLM07 (2025 numbering)",
            ));
        }
        filters.push(format!("owasp:{c}"));
    }
    let target = resolve_target(&suites, &args.exec, Some(default_redteam()))?;
    let invocation = Invocation {
        suites: vec![BUILTIN_OWASP.to_owned()],
        target,
        filters,
        shard: args.exec.shard.clone(),
        canary,
        system_prompt_file: spf,
        timeout_ms: args.exec.timeout_ms,
        concurrency: args.exec.concurrency.unwrap_or(0),
        max_fail: args.exec.max_fail,
    };
    let s = settings(&args.exec, invocation)?;
    execute(suites, s, Mode::new("redteam"))
}

fn open_store(opts: &ExecOpts) -> Result<gauntlet_store::Store, CliError> {
    let path = store_path(opts.store.as_deref(), opts.config.as_deref())?;
    gauntlet_store::Store::open(&path).map_err(store_err)
}

pub fn store_err(e: gauntlet_store::StoreError) -> CliError {
    let hint = match &e {
        gauntlet_store::StoreError::NoSuchRun(_) | gauntlet_store::StoreError::Ambiguous(..) => {
            "list runs with `gauntlet runs list`"
        }
        _ => "check --store (or `store:` in gauntlet.yaml)",
    };
    CliError::usage(e.to_string(), hint)
}

/// Continues an interrupted run with the same id, settings and suites.
fn resume(spec: &str, opts: &ExecOpts) -> Result<i32, CliError> {
    let mut store = open_store(opts)?;
    let run = store.resolve(spec).map_err(store_err)?;
    let manifest = store.manifest(&run).map_err(store_err)?;
    let finished_run = store.summary(&run).map_err(store_err)?.is_some();
    if finished_run && !has_faulted_trials(&store.trials(&run).map_err(store_err)?) {
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
    let suites = load_all(
        &inv.suites,
        inv.canary.as_deref(),
        inv.system_prompt_file.as_deref(),
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
    execute(suites, s, mode)
}

/// Whether any stored trial ended in `error` or `timeout`: the trials a resume re-runs.
fn has_faulted_trials(trials: &HashMap<String, Vec<TrialResult>>) -> bool {
    use gauntlet_core::result::Outcome;
    trials
        .values()
        .flatten()
        .any(|t| matches!(t.outcome, Outcome::Error | Outcome::Timeout))
}

/// A target from a spec: `KIND:ARG`, or a name from the config file.
pub fn resolve_spec(spec: &str, config: Option<&Path>) -> Result<TargetConfig, CliError> {
    let parsed = TargetConfig::parse(spec)
        .map_err(|e| CliError::usage(e, "try fake:safe or openai:MODEL"))?;
    match &parsed.name {
        Some(name) if parsed.kind.is_none() => named_target(name, config),
        _ => Ok(parsed),
    }
}

/// Resolves the target: the flag, else the suites' (all the same), else the default.
fn resolve_target(
    suites: &[LoadedSuite],
    opts: &ExecOpts,
    default: Option<TargetConfig>,
) -> Result<TargetConfig, CliError> {
    let mut cfg = match &opts.target {
        Some(spec) => resolve_spec(spec, opts.config.as_deref())?,
        None => {
            let declared: Vec<&TargetConfig> = suites
                .iter()
                .filter_map(|s| s.suite.target.as_ref())
                .collect();
            match declared.first() {
                Some(first) => {
                    if declared.iter().any(|t| t != first) {
                        return Err(CliError::usage(
                            "the suites declare different targets",
                            "pass --target to choose one for this run",
                        ));
                    }
                    (*first).clone()
                }
                None => default.ok_or_else(|| {
                    CliError::usage(
                        "no target: the suite declares none and --target was not given",
                        "pass --target fake:scripted (answers written in the cases), fake:safe, openai:MODEL, ...",
                    )
                })?,
            }
        }
    };
    if cfg.kind.is_none() {
        let name = cfg.name.clone().unwrap_or_default();
        cfg = named_target(&name, opts.config.as_deref())?;
    }
    if let Some(u) = &opts.base_url {
        cfg.base_url = Some(u.clone());
    }
    if let Some(k) = &opts.api_key_env {
        cfg.api_key_env = Some(k.clone());
    }
    if let Some(t) = opts.temperature {
        cfg.temperature = Some(t);
    }
    if let Some(m) = opts.max_tokens {
        cfg.max_tokens = Some(m);
    }
    if let Some(s) = opts.seed {
        cfg.seed = Some(s as i64);
    }
    gauntlet_suite::load::check_target(&cfg).map_err(|(m, h)| CliError::Usage(m, h))?;
    Ok(cfg)
}

/// A named target from the config file (`--config`, else `gauntlet.yaml` if present).
fn named_target(name: &str, config: Option<&Path>) -> Result<TargetConfig, CliError> {
    let path = config
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("gauntlet.yaml"));
    if !path.exists() {
        return Err(CliError::usage(
            format!(
                "unknown target `{name}`: no config file `{}` defines named targets",
                path.display()
            ),
            "write KIND:ARG (fake:safe, openai:MODEL, ...), or define the target under `targets:` in gauntlet.yaml",
        ));
    }
    let config = gauntlet_suite::load::load_config(&path).map_err(CliError::Diagnostics)?;
    match config.targets.get(name) {
        Some(t) => Ok(t.clone()),
        None => Err(CliError::usage(
            format!("`{}` defines no target named `{name}`", path.display()),
            format!(
                "defined targets: {}",
                if config.targets.is_empty() {
                    "none".to_owned()
                } else {
                    config
                        .targets
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
        )),
    }
}

pub fn suite_context(
    s: &LoadedSuite,
    canary: Option<&str>,
    timeout_ms: Option<u64>,
) -> SuiteContext {
    let canary = canary
        .map(str::to_owned)
        .or_else(|| s.suite.agent.canary.clone());
    let system_prompt = s.system_prompt.as_ref().map(|p| match &canary {
        Some(c) => p.replace(CANARY_PLACEHOLDER, c),
        None => p.clone(),
    });
    SuiteContext {
        name: s.suite.suite.clone(),
        system_prompt,
        canary,
        tools: s.suite.agent.tools.clone(),
        default_blocking: s.suite.defaults.blocking,
        timeout_ms: timeout_ms.or(s.suite.defaults.timeout_ms),
    }
}

/// Every case of a suite that passes `keep`, streamed.
pub fn cases_of(
    s: &LoadedSuite,
    ctx: Arc<SuiteContext>,
    keep: Arc<dyn Fn(&Case) -> bool + Send + Sync>,
) -> impl Iterator<Item = PlannedCase> + Send + use<> {
    let inline: Vec<Case> = s.suite.cases.clone();
    let streamed = s.streamed.clone();
    let keep2 = Arc::clone(&keep);
    let ctx2 = Arc::clone(&ctx);
    inline
        .into_iter()
        .filter(move |c| keep(c))
        .map(move |c| PlannedCase {
            suite: Arc::clone(&ctx),
            case: Arc::new(c),
        })
        .chain(streamed.into_iter().flat_map(move |path| {
            let keep = Arc::clone(&keep2);
            let ctx = Arc::clone(&ctx2);
            // The file was checked when the suite loaded; a read failure now (the file was
            // removed mid-run) ends that file's cases, and the integrity check reports it.
            stream_jsonl(&path)
                .into_iter()
                .flatten()
                .filter_map(Result::ok)
                .filter(move |c| keep(c))
                .map(move |c| PlannedCase {
                    suite: Arc::clone(&ctx),
                    case: Arc::new(c),
                })
        }))
}

pub fn new_run_id() -> String {
    let now = jiff::Timestamp::now();
    let stamp = now.strftime("%Y%m%dT%H%M%SZ").to_string();
    let nanos = now.subsec_nanosecond() as u32;
    let pid = std::process::id();
    format!("{stamp}-{:04x}", (nanos ^ pid.rotate_left(16)) & 0xffff)
}

/// SHA-256 of every harness file, to detect changes during the run.
fn snapshot(files: &[PathBuf]) -> Vec<(PathBuf, Option<String>)> {
    use sha2::{Digest, Sha256};
    files
        .iter()
        .map(|p| {
            // Streamed: a generated suite can be large, and memory must stay flat.
            let h = std::fs::File::open(p).ok().and_then(|mut f| {
                let mut hasher = Sha256::new();
                let mut buf = [0u8; 64 * 1024];
                loop {
                    let n = std::io::Read::read(&mut f, &mut buf).ok()?;
                    if n == 0 {
                        break;
                    }
                    hasher.update(&buf[..n]);
                }
                Some(
                    hasher
                        .finalize()
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect::<String>(),
                )
            });
            (p.clone(), h)
        })
        .collect()
}

/// Loads the quarantine file, failing on expired entries.
fn quarantine(path: Option<&Path>) -> Result<HashSet<String>, CliError> {
    let default = PathBuf::from("quarantine.yaml");
    let path = match path {
        Some(p) => p.to_path_buf(),
        None if default.exists() => default,
        None => return Ok(HashSet::new()),
    };
    let today: jiff::civil::Date = jiff::Timestamp::now()
        .strftime("%Y-%m-%d")
        .to_string()
        .parse()
        .expect("a date");
    let entries =
        gauntlet_suite::load::load_quarantine(&path, today).map_err(CliError::Diagnostics)?;
    Ok(entries.into_iter().map(|e| e.case).collect())
}

pub fn execute(suites: Vec<LoadedSuite>, s: Settings, mode: Mode) -> Result<i32, CliError> {
    let inv = &s.invocation;
    let filter = CaseFilter::parse(&inv.filters)
        .map_err(|e| CliError::usage(e, "e.g. --filter pack:smoke --filter owasp:LLM01"))?;
    let shard = inv
        .shard
        .as_deref()
        .map(Shard::parse)
        .transpose()
        .map_err(|e| CliError::usage(e, "e.g. --shard 1/4"))?;
    if s.k == 0 {
        return Err(CliError::usage(
            "--k must be at least 1",
            "use --k 1 for one trial per case",
        ));
    }
    let target_cfg = inv.target.clone();
    let mut redactor = gauntlet_core::redact::Redactor::new();
    let target = gauntlet_targets::build_target(&target_cfg, &mut redactor).map_err(|e| {
        CliError::usage(
            e.to_string(),
            e.hint()
                .unwrap_or("check the target settings and the environment variables it names"),
        )
    })?;
    let mut grader = OracleGrader::new();
    let mut judge_label = None;
    if let Some(j) = &s.judge {
        let judge = crate::judge::ModelJudge::new(j, &mut redactor).map_err(|e| {
            CliError::usage(
                e,
                "--judge takes a model target: fake:judge, openai:MODEL, anthropic:MODEL",
            )
        })?;
        judge_label = Some(judge.describe());
        grader = grader.with_judge(Arc::new(judge));
    }
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

    let contexts: Vec<Arc<SuiteContext>> = suites
        .iter()
        .map(|su| Arc::new(suite_context(su, inv.canary.as_deref(), inv.timeout_ms)))
        .collect();
    if let (Some(file), Some(c)) = (&inv.system_prompt_file, &inv.canary)
        && contexts.iter().any(|ctx| {
            ctx.system_prompt
                .as_deref()
                .is_some_and(|p| !p.contains(c.as_str()))
        })
    {
        eprintln!(
            "warning: the canary does not appear in {file}: leak checks cannot fire unless the prompt holds it"
        );
    }

    let only = mode.only.clone().map(Arc::new);
    let keep: Arc<dyn Fn(&Case) -> bool + Send + Sync> = {
        let filter = filter.clone();
        let only = only.clone();
        Arc::new(move |c: &Case| {
            filter.matches(c)
                && shard.is_none_or(|sh| sh.contains(&c.id))
                && only.as_ref().is_none_or(|o| o.contains(&c.id))
        })
    };
    // Count the planned cases (a streaming pass over JSON lines files when filtered).
    let unfiltered = filter.is_empty() && shard.is_none() && only.is_none();
    let mut planned = 0usize;
    for (su, ctx) in suites.iter().zip(&contexts) {
        planned += if unfiltered {
            su.case_count
        } else {
            cases_of(su, Arc::clone(ctx), Arc::clone(&keep)).count()
        };
    }
    if planned == 0 {
        return Err(CliError::usage(
            "no case to run: the filters and shard left nothing",
            "check --filter and --shard (keys: id, pack, owasp, technique, tag, kind)",
        ));
    }

    let packs = pack_requirements(&suites);

    let kind = target_cfg.kind.expect("resolved");
    let mut filters: Vec<String> = Vec::new();
    if !filter.is_empty() {
        filters.push(format!("filter {filter}"));
    }
    if let Some(sh) = shard {
        filters.push(format!("shard {sh}"));
    }
    if let Some(o) = &only {
        filters.push(format!("only {} case(s)", o.len()));
    }
    let mut tool_versions = BTreeMap::new();
    for su in &suites {
        for t in &su.suite.agent.tools {
            tool_versions.insert(
                t.name.clone(),
                t.version.clone().unwrap_or_else(|| "unversioned".into()),
            );
        }
    }
    let mut notes = mode.notes.clone();
    notes.extend(s.notes.clone());
    if let Some(f) = &inv.system_prompt_file {
        notes.insert("system_prompt_file".into(), f.clone());
    }
    if !quarantined.is_empty() {
        notes.insert("quarantined".into(), quarantined.len().to_string());
    }
    let (run_id, finished) = match mode.resume {
        Some((id, f)) => (id, f),
        None => (new_run_id(), HashMap::new()),
    };
    let started_at = mode
        .started_at
        .clone()
        .unwrap_or_else(|| jiff::Timestamp::now().to_string());
    let manifest = RunManifest {
        schema_version: REPORT_SCHEMA_VERSION,
        run_id: run_id.clone(),
        gauntlet_version: VERSION.into(),
        started_at,
        command: mode.command.into(),
        suites: suites
            .iter()
            .map(|su| SuiteRef {
                name: su.suite.suite.clone(),
                path: su.origin.clone(),
                sha256: su.sha256.clone(),
                cases: su.case_count,
            })
            .collect(),
        target: target.info(),
        k: s.k,
        seed: s.seed.unwrap_or(0),
        planned_cases: planned,
        evidence_level: if kind == TargetKind::Fake {
            EvidenceLevel::Offline
        } else {
            EvidenceLevel::Online
        },
        // HTTP apps and proxied agents run their own tools: whatever those do, happens.
        side_effects: if matches!(kind, TargetKind::Http | TargetKind::Proxy) {
            SideEffectMode::Real
        } else {
            SideEffectMode::Simulated
        },
        dataset_revision: gauntlet_suite::builtin::corpus_revision(),
        tool_versions,
        judge: judge_label,
        filters,
        notes,
        invocation: Some(inv.clone()),
    };

    let reports_dir = s.out.as_ref().map(|o| o.display().to_string());
    let mut reporters: Vec<Box<dyn Reporter>> =
        vec![Box::new(TerminalReporter::new(s.verbosity, reports_dir))];
    if let Some(out) = &s.out {
        reporters.extend(
            gauntlet_report::writers(out, &gauntlet_report::Format::ALL).map_err(|e| {
                CliError::usage(
                    format!(
                        "failed to create the report folder `{}`: {e}",
                        out.display()
                    ),
                    "pass --out with a writable folder",
                )
            })?,
        );
    }
    let store = match &s.store {
        Some(p) => Some(gauntlet_store::Store::open(p).map_err(store_err)?),
        None => None,
    };
    if let Some(st) = &store {
        reporters.push(Box::new(st.reporter().map_err(store_err)?));
    }
    if let Some(c) = &mode.capture {
        reporters.push(Box::new(Capture(Arc::clone(c))));
    }

    // Integrity: every harness file is hashed now and again when the trials are done.
    let files: Vec<PathBuf> = suites.iter().flat_map(|su| su.files.clone()).collect();
    let before = snapshot(&files);
    let integrity: Arc<dyn Fn() -> Vec<String> + Send + Sync> = Arc::new(move || {
        let after = snapshot(&files);
        before
            .iter()
            .zip(after)
            .filter(|((_, a), (_, b))| a != b)
            .map(|((p, _), _)| p.display().to_string())
            .collect()
    });

    let cancel = Arc::new(AtomicBool::new(false));
    let probe: gauntlet_runner::run::RefusalProbe =
        Arc::new(|t: &str| gauntlet_graders::refusal::analyze(t).refused);
    let concurrency = if inv.concurrency > 0 {
        inv.concurrency
    } else {
        target_cfg.concurrency.unwrap_or(8)
    };
    let config = RunConfig {
        concurrency,
        k: s.k,
        seed: s.seed.unwrap_or(0),
        max_fail: inv.max_fail,
        refusal_probe: Some(probe),
        cancel: Arc::clone(&cancel),
        packs,
        redactor,
        quarantined,
        finished,
        pin_seed: mode.pin_seed,
        integrity: Some(integrity),
        user_simulator,
        warnings: mode.warnings.clone(),
    };
    let plan: Vec<Box<dyn Iterator<Item = PlannedCase> + Send>> = suites
        .iter()
        .zip(&contexts)
        .map(|(su, ctx)| {
            Box::new(cases_of(su, Arc::clone(ctx), Arc::clone(&keep)))
                as Box<dyn Iterator<Item = PlannedCase> + Send>
        })
        .collect();
    let plan = plan.into_iter().flatten();

    let rt = crate::runtime()?;
    let outcome = rt.block_on(async {
        let c = Arc::clone(&cancel);
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                c.store(true, Ordering::Relaxed);
            }
        });
        Runner::new(target, Arc::new(grader), config)
            .run(manifest, plan, reporters)
            .await
    });
    if !outcome.reporter_errors.is_empty() {
        for e in &outcome.reporter_errors {
            eprintln!("error: failed to write a report: {e}");
        }
        return Ok(gauntlet_core::score::EXIT_USAGE);
    }
    if outcome.stop == Stop::Cancelled {
        eprintln!(
            "interrupted: the reports cover the cases that finished; continue with `gauntlet run --resume {run_id}`"
        );
    }
    if let (Some(name), Some(st)) = (&s.baseline, &store) {
        crate::storecmd::print_baseline_comparison(st, name, &run_id)?;
    }
    Ok(outcome.summary.status.exit_code())
}

/// The pack requirements of a set of suites: the union of their required packs, and the
/// refusal pack waived only when every tool-using suite waives it.
pub fn pack_requirements(suites: &[gauntlet_suite::LoadedSuite]) -> PackRequirements {
    let mut packs = PackRequirements::default();
    let mut tool_suites = 0;
    let mut waived = 0;
    for su in suites {
        for p in &su.suite.packs.required {
            if !packs.required.contains(p) {
                packs.required.push(p.clone());
            }
        }
        if !su.suite.agent.tools.is_empty() {
            tool_suites += 1;
            if su.suite.packs.no_refusal_pack {
                waived += 1;
            }
        }
    }
    packs.tool_agent = tool_suites > 0;
    packs.no_refusal_pack = tool_suites > 0 && waived == tool_suites;
    packs
}
