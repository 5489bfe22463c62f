//! `gauntlet run` and `gauntlet redteam`: load suites, resolve the target, build the plan,
//! run it, and pick the exit code from the state.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use gauntlet_core::event::{
    EvidenceLevel, REPORT_SCHEMA_VERSION, RunManifest, SideEffectMode, SuiteRef,
};
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

/// Loads suites, printing nothing; diagnostics become a usage error.
fn load_all(
    paths: &[std::path::PathBuf],
    canary: Option<&str>,
) -> Result<Vec<LoadedSuite>, CliError> {
    let opts = LoadOptions { run_canary: canary };
    let mut suites = Vec::new();
    let mut diags = Vec::new();
    for p in paths {
        match gauntlet_suite::load_file(p, &opts) {
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

pub fn run(args: RunArgs) -> Result<i32, CliError> {
    let suites = load_all(&args.suites, args.canary.as_deref())?;
    let default_target = None;
    execute(suites, &args.exec, args.canary, None, "run", default_target)
}

pub fn redteam(args: RedteamArgs) -> Result<i32, CliError> {
    let mut corpus =
        gauntlet_suite::builtin::owasp(&LoadOptions::default()).map_err(CliError::Diagnostics)?;
    let mut canary = args.canary.clone();
    if let Some(path) = &args.system_prompt {
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
    }
    if canary.is_none() {
        canary = corpus.suite.agent.canary.clone();
    }
    let mut filter_terms = args.exec.filter.clone();
    for c in &args.category {
        let c = c.trim().to_ascii_uppercase();
        if gauntlet_core::suite::owasp_title(&c).is_none() {
            return Err(CliError::usage(
                format!("unknown OWASP category `{c}`"),
                "the corpus covers LLM01, LLM02, LLM05, LLM06 and LLM07 (2025 numbering)",
            ));
        }
        filter_terms.push(format!("owasp:{c}"));
    }
    let mut exec = args.exec.clone();
    exec.filter = filter_terms;
    execute(
        vec![corpus],
        &exec,
        canary,
        args.system_prompt.as_deref(),
        "redteam",
        Some(TargetConfig::parse("fake:safe").expect("valid")),
    )
}

/// Resolves the target: the flag, else the suites' (all the same), else the default.
fn resolve_target(
    suites: &[LoadedSuite],
    opts: &ExecOpts,
    default: Option<TargetConfig>,
) -> Result<TargetConfig, CliError> {
    let mut cfg = match &opts.target {
        Some(spec) => TargetConfig::parse(spec)
            .map_err(|e| CliError::usage(e, "try --target fake:safe or --target openai:MODEL"))?,
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
        cfg = named_target(&name, opts)?;
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
fn named_target(name: &str, opts: &ExecOpts) -> Result<TargetConfig, CliError> {
    let path = opts
        .config
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from("gauntlet.yaml"));
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

fn suite_context(s: &LoadedSuite, canary: Option<&str>, timeout_ms: Option<u64>) -> SuiteContext {
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

/// Every case of a suite that passes the filter and shard, streamed.
fn cases_of(
    s: &LoadedSuite,
    ctx: Arc<SuiteContext>,
    filter: CaseFilter,
    shard: Option<Shard>,
) -> impl Iterator<Item = PlannedCase> + Send + use<> {
    let keep = move |c: &Case| filter.matches(c) && shard.is_none_or(|sh| sh.contains(&c.id));
    let inline: Vec<Case> = s.suite.cases.clone();
    let streamed = s.streamed.clone();
    let keep2 = keep.clone();
    let ctx2 = Arc::clone(&ctx);
    inline
        .into_iter()
        .filter(move |c| keep(c))
        .map(move |c| PlannedCase {
            suite: Arc::clone(&ctx),
            case: Arc::new(c),
        })
        .chain(streamed.into_iter().flat_map(move |path| {
            let keep = keep2.clone();
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

fn run_id() -> String {
    let now = jiff::Timestamp::now();
    let stamp = now.strftime("%Y%m%dT%H%M%SZ").to_string();
    let nanos = now.subsec_nanosecond() as u32;
    let pid = std::process::id();
    format!("{stamp}-{:04x}", (nanos ^ pid.rotate_left(16)) & 0xffff)
}

fn execute(
    suites: Vec<LoadedSuite>,
    opts: &ExecOpts,
    canary: Option<String>,
    system_prompt_file: Option<&Path>,
    command: &str,
    default_target: Option<TargetConfig>,
) -> Result<i32, CliError> {
    let target_cfg = resolve_target(&suites, opts, default_target)?;
    let filter = CaseFilter::parse(&opts.filter)
        .map_err(|e| CliError::usage(e, "e.g. --filter pack:smoke --filter owasp:LLM01"))?;
    let shard = opts
        .shard
        .as_deref()
        .map(Shard::parse)
        .transpose()
        .map_err(|e| CliError::usage(e, "e.g. --shard 1/4"))?;
    if opts.k == 0 {
        return Err(CliError::usage(
            "--k must be at least 1",
            "use --k 1 for one trial per case",
        ));
    }
    let mut redactor = gauntlet_core::redact::Redactor::new();
    let target = gauntlet_targets::build_target(&target_cfg, &mut redactor).map_err(|e| {
        CliError::usage(
            e,
            "check the target settings and the environment variables it names",
        )
    })?;

    let contexts: Vec<Arc<SuiteContext>> = suites
        .iter()
        .map(|s| Arc::new(suite_context(s, canary.as_deref(), opts.timeout_ms)))
        .collect();
    if let (Some(file), Some(c)) = (system_prompt_file, &canary)
        && contexts.iter().any(|ctx| {
            ctx.system_prompt
                .as_deref()
                .is_some_and(|p| !p.contains(c.as_str()))
        })
    {
        eprintln!(
            "warning: the canary does not appear in {}: leak checks cannot fire unless the prompt holds it",
            file.display()
        );
    }

    // Count the planned cases (a streaming pass over JSON lines files when filtered).
    let unfiltered = filter.is_empty() && shard.is_none();
    let mut planned = 0usize;
    for (s, ctx) in suites.iter().zip(&contexts) {
        planned += if unfiltered {
            s.case_count
        } else {
            cases_of(s, Arc::clone(ctx), filter.clone(), shard).count()
        };
    }
    if planned == 0 {
        return Err(CliError::usage(
            "no case to run: the filters and shard left nothing",
            "check --filter and --shard (keys: id, pack, owasp, technique, tag, kind)",
        ));
    }

    let mut packs = PackRequirements::default();
    let mut tool_suites = 0;
    let mut waived = 0;
    for s in &suites {
        for p in &s.suite.packs.required {
            if !packs.required.contains(p) {
                packs.required.push(p.clone());
            }
        }
        if !s.suite.agent.tools.is_empty() {
            tool_suites += 1;
            if s.suite.packs.no_refusal_pack {
                waived += 1;
            }
        }
    }
    packs.tool_agent = tool_suites > 0;
    packs.no_refusal_pack = tool_suites > 0 && waived == tool_suites;

    let info = target.info();
    let kind = target_cfg.kind.expect("resolved");
    let mut filters: Vec<String> = Vec::new();
    if !filter.is_empty() {
        filters.push(format!("filter {filter}"));
    }
    if let Some(s) = shard {
        filters.push(format!("shard {s}"));
    }
    let mut tool_versions = BTreeMap::new();
    for s in &suites {
        for t in &s.suite.agent.tools {
            tool_versions.insert(
                t.name.clone(),
                t.version.clone().unwrap_or_else(|| "unversioned".into()),
            );
        }
    }
    let mut notes = BTreeMap::new();
    if let Some(f) = system_prompt_file {
        notes.insert("system_prompt_file".into(), f.display().to_string());
    }
    let manifest = RunManifest {
        schema_version: REPORT_SCHEMA_VERSION,
        run_id: run_id(),
        gauntlet_version: VERSION.into(),
        started_at: jiff::Timestamp::now().to_string(),
        command: command.into(),
        suites: suites
            .iter()
            .map(|s| SuiteRef {
                name: s.suite.suite.clone(),
                path: s.origin.clone(),
                sha256: s.sha256.clone(),
                cases: s.case_count,
            })
            .collect(),
        target: info,
        k: opts.k,
        seed: opts.seed.unwrap_or(0),
        planned_cases: planned,
        evidence_level: if kind == TargetKind::Fake {
            EvidenceLevel::Offline
        } else {
            EvidenceLevel::Online
        },
        side_effects: SideEffectMode::Simulated,
        dataset_revision: gauntlet_suite::builtin::corpus_revision(),
        tool_versions,
        judge: None,
        filters,
        notes,
    };

    let verbosity = if opts.quiet {
        Verbosity::Quiet
    } else if opts.verbose {
        Verbosity::Verbose
    } else {
        Verbosity::Normal
    };
    let reports_dir = (!opts.no_reports).then(|| opts.out.display().to_string());
    let mut reporters: Vec<Box<dyn gauntlet_core::event::Reporter>> =
        vec![Box::new(TerminalReporter::new(verbosity, reports_dir))];
    if !opts.no_reports {
        reporters.extend(
            gauntlet_report::writers(&opts.out, &gauntlet_report::Format::ALL).map_err(|e| {
                CliError::usage(
                    format!(
                        "failed to create the report folder `{}`: {e}",
                        opts.out.display()
                    ),
                    "pass --out with a writable folder",
                )
            })?,
        );
    }

    let cancel = Arc::new(AtomicBool::new(false));
    let probe: gauntlet_runner::run::RefusalProbe =
        Arc::new(|t: &str| gauntlet_graders::refusal::analyze(t).refused);
    let config = RunConfig {
        concurrency: opts.concurrency.or(target_cfg.concurrency).unwrap_or(8),
        k: opts.k,
        seed: opts.seed.unwrap_or(0),
        max_fail: opts.max_fail,
        redactor,
        refusal_probe: Some(probe),
        cancel: Arc::clone(&cancel),
        packs,
        ..RunConfig::default()
    };
    let grader = Arc::new(OracleGrader::new());
    let plan: Vec<Box<dyn Iterator<Item = PlannedCase> + Send>> = suites
        .iter()
        .zip(&contexts)
        .map(|(s, ctx)| {
            Box::new(cases_of(s, Arc::clone(ctx), filter.clone(), shard))
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
        Runner::new(target, grader, config)
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
        eprintln!("interrupted: the reports cover the cases that finished");
    }
    Ok(outcome.summary.status.exit_code())
}
