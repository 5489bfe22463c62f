//! `gauntlet run` and `gauntlet redteam` (with `--resume` and `--rerun-failed`): the flags
//! become a `gauntlet_engine::RunRequest`, the run API runs it, and the outcome is printed
//! (the summary, a baseline comparison with `--baseline`); the exit code is the state's.

use std::collections::BTreeMap;
use std::io::Write;

use gauntlet_core::cost::Budget;
use gauntlet_core::event::{EvidenceLevel, Invocation};
use gauntlet_core::target::TargetConfig;
use gauntlet_engine::run::{Origin, RunRequest, resume};
use gauntlet_engine::selection;
use gauntlet_suite::filter::Selection;
use gauntlet_suite::load::LoadedSuite;

use crate::cli::{ExecOpts, RedteamArgs, RunArgs};
use crate::error::CliError;
use crate::printer::{TerminalReporter, Verbosity, print_outcome, show_notice};
use crate::setup::{
    BUILTIN_OWASP, current_dir, load_all, open_store, prompt_columns, resolve_matrix, resolve_spec,
    resolve_target, store_location,
};

fn verbosity(opts: &ExecOpts) -> Verbosity {
    if opts.quiet {
        Verbosity::Quiet
    } else if opts.verbose {
        Verbosity::Verbose
    } else {
        Verbosity::Normal
    }
}

/// The `--note KEY=VALUE` entries.
fn notes(opts: &ExecOpts) -> Result<BTreeMap<String, String>, CliError> {
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
    Ok(notes)
}

/// The run request from the flags: the command's origin (its notes come before the
/// `--note` entries), trials, models and outputs.
fn request(
    opts: &ExecOpts,
    mut origin: Origin,
    suites: Vec<LoadedSuite>,
    select: Selection,
    invocation: Invocation,
) -> Result<RunRequest, CliError> {
    origin.notes.extend(notes(opts)?);
    let user_model = opts
        .user_model
        .as_deref()
        .map(|j| resolve_spec(j, opts.config.as_deref()))
        .transpose()?;
    let store = if opts.no_store {
        None
    } else {
        Some(store_location(
            opts.store.as_deref(),
            opts.config.as_deref(),
        )?)
    };
    let mut req = RunRequest::new(origin.command, suites, select, invocation);
    req.origin = origin;
    req.trials.k = opts.k;
    req.trials.seed = opts.seed;
    req.trials.whole_rate_limit = opts.whole_rate_limit;
    req.trials.quarantine = opts.quarantine.clone();
    req.models.judge = opts.judge.clone();
    req.models.judge_cache = opts.judge_cache.clone();
    req.models.no_cache = opts.no_cache;
    req.models.config = opts.config.clone();
    req.models.user_model = user_model;
    req.models.embeddings = opts.embeddings.clone();
    req.outputs.reports = (!opts.no_reports).then(|| opts.out.clone());
    req.outputs.store = store;
    req.outputs.run_id = opts.run_id.clone();
    req.outputs.otel = Some(gauntlet_engine::otel::OtelFlags {
        endpoint: opts.otel_endpoint.clone(),
        content: opts.otel_content,
    });
    req.view = Some(Box::new(TerminalReporter::new(verbosity(opts))));
    Ok(req)
}

/// Runs the request, prints the outcome and, with `--baseline`, the comparison with it; the
/// exit code is the state's, or with `--gate COLUMN` that column's.
fn execute(mut req: RunRequest, opts: &ExecOpts) -> Result<i32, CliError> {
    if opts.list {
        let mut out = crate::out::Printer::stdout();
        for case in gauntlet_engine::run::list(req)? {
            let line = serde_json::to_string(&case).map_err(std::io::Error::other)?;
            writeln!(out, "{line}")?;
        }
        return Ok(0);
    }
    let baseline = opts.baseline.as_deref();
    let gate = gate_column(&req.invocation, opts.gate.as_deref())?;
    if let Some(name) = baseline {
        let name = name.to_owned();
        req.outputs.baseline_page = Some(Box::new(move |st: &mut gauntlet_store::Store| {
            gauntlet_engine::baseline::html_baseline(st, &name).ok()
        }));
    }
    let mut outcome = gauntlet_engine::run(req, &mut show_notice)?;
    let mut code = print_outcome(&outcome, true)?;
    if let Some(label) = gate
        && outcome.reporter_errors.is_empty()
        && let Some(c) = outcome.summary.columns.iter().find(|c| c.label == label)
    {
        code = c.summary.status.exit_code();
        writeln!(
            crate::out::Printer::stdout(),
            "{:>12} column {label}: {} (exit {code})",
            "Gate",
            c.summary.status
        )?;
    }
    if outcome.reporter_errors.is_empty()
        && let (Some(name), Some(st)) = (baseline, outcome.store.as_mut())
    {
        let text = gauntlet_engine::baseline::baseline_comparison(st, name, &outcome.run_id)?;
        write!(crate::out::Printer::stdout(), "\n{text}")?;
    }
    Ok(code)
}

/// `--filter` terms, and each `--framework` value as a `framework:` term (so that the
/// invocation records it and `--rerun-failed` keeps it).
fn filter_terms(opts: &ExecOpts) -> Vec<String> {
    let mut terms = opts.filter.clone();
    terms.extend(opts.framework.iter().map(|f| format!("framework:{f}")));
    terms
}

/// A `--framework` value that no case of the suites maps to is a usage error, with the
/// entries of that framework that cases do map to.
fn check_frameworks(opts: &ExecOpts, suites: &[LoadedSuite]) -> Result<(), CliError> {
    let cases = suites.iter().flat_map(|s| s.suite.cases.iter());
    let Some(miss) = gauntlet_suite::filter::unmapped_framework(&opts.framework, cases) else {
        return Ok(());
    };
    let hint = if miss.mapped.is_empty() {
        "no case of these suites maps to that framework (the map reads a case's `owasp:` and `technique:`)".to_owned()
    } else {
        format!("entries with cases: {}", miss.mapped.join(", "))
    };
    Err(CliError::usage(
        format!("no case maps to `{}`", miss.value),
        hint,
    ))
}

pub fn run(args: RunArgs) -> Result<i32, CliError> {
    let opts = &args.exec;
    if let Some(spec) = &args.resume {
        if opts.list {
            return Err(CliError::usage(
                "--list plans a new run; --resume continues a stored one",
                "drop --list, or list the suites' cases with `gauntlet run SUITE --list`",
            ));
        }
        return resume(spec, opts);
    }
    let mut origin = Origin::new("run");
    let mut only = None;
    let (paths, base_invocation, recorded) = match &args.rerun_failed {
        Some(spec) => {
            let mut store = open_store(opts.store.as_deref(), opts.config.as_deref())?;
            let rerun = resume::failed_cases(&mut store, spec)?;
            origin.notes.insert("rerun_failed_from".into(), rerun.run);
            origin.command = rerun.command;
            only = Some(rerun.only);
            let recorded = (rerun.manifest, store.location().clone());
            (rerun.paths, Some(rerun.invocation), Some(recorded))
        }
        None => (
            args.suites
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            None,
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
    let filters = filter_terms(opts);
    let mut select = selection(&filters, opts.shard.as_deref(), only)?;
    select.include_holdout = opts.include_holdout;
    let allow = base_invocation
        .as_ref()
        .map_or_else(|| opts.allow_path.clone(), resume::allowed_paths);
    let suites = match (&recorded, &base_invocation) {
        // The failed cases of a run, from its suites as it had them (a `redteam --suite` run
        // aimed the corpus at a suite's tools: aimed again, not the built-in app).
        (Some((manifest, location)), Some(inv)) => {
            let inv = Invocation {
                canary: canary.clone(),
                ..inv.clone()
            };
            gauntlet_engine::setup::load_recorded(&inv, manifest, location, Some(&select), &allow)?
        }
        _ => load_all(
            &paths,
            canary.as_deref(),
            spf.as_deref(),
            Some(&select),
            &allow,
        )?,
    };
    check_frameworks(opts, &suites)?;
    let (target, matrix) = match (opts.target.is_empty(), &base_invocation) {
        (true, Some(inv)) => (inv.target.clone(), inv.matrix.clone()),
        _ => (
            resolve_target(
                &suites,
                opts,
                (origin.command == "redteam").then(default_redteam),
            )?,
            resolve_matrix(&suites, opts)?,
        ),
    };
    let matrix = prompt_columns(&suites, &target, matrix)?;
    let invocation = Invocation {
        suites: paths,
        base_dir: current_dir(),
        target,
        filters,
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
        matrix,
        ..Invocation::default()
    };
    let invocation = with_helpers(invocation, opts, base_invocation.as_ref())?;
    let req = request(opts, origin, suites, select, invocation)?;
    execute(req, opts)
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
        Some(arg) => {
            use gauntlet_core::strategy::{Strategy, StrategyKind};
            let kind = match arg {
                crate::cli::StrategyArg::Attacker => StrategyKind::Attacker,
                crate::cli::StrategyArg::Tree => StrategyKind::Tree,
            };
            let mut s = Strategy::of_kind(kind);
            s.max_tokens = opts.max_attack_tokens;
            if kind == StrategyKind::Tree {
                s.depth = opts.max_turns;
                s.max_calls = opts.max_attack_calls;
                s.judge = opts.tree_judge.clone();
            } else if opts.tree_judge.is_some() {
                return Err(CliError::usage(
                    "--tree-judge ranks the nodes of a tree of attacks",
                    "use it with --strategy tree",
                ));
            } else {
                s.max_turns = opts.max_turns;
                s.max_backtracks = opts.max_backtracks;
            }
            Some(s)
        }
        None => base.and_then(|b| b.strategy.clone()),
    };
    if inv.strategy.is_some() && inv.attacker.is_none() {
        return Err(CliError::usage(
            "--strategy needs an attacker model",
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

/// The column `--gate` names, checked against the run's columns before anything runs.
fn gate_column<'a>(inv: &Invocation, gate: Option<&'a str>) -> Result<Option<&'a str>, CliError> {
    let Some(label) = gate else {
        return Ok(None);
    };
    if inv.matrix.is_empty() {
        return Err(CliError::usage(
            "--gate picks a column of a matrix run, and this run has one target",
            "give several targets (-t A -t B) and --gate with one of them, or drop --gate",
        ));
    }
    if !inv.matrix.iter().any(|c| c.label == label) {
        let labels: Vec<&str> = inv.matrix.iter().map(|c| c.label.as_str()).collect();
        return Err(CliError::usage(
            format!("--gate `{label}` is no column of this run"),
            format!("the columns: {}", labels.join(", ")),
        ));
    }
    Ok(Some(label))
}

fn default_redteam() -> TargetConfig {
    TargetConfig::parse("fake:safe").expect("valid")
}

pub fn redteam(args: RedteamArgs) -> Result<i32, CliError> {
    let spf = args.system_prompt.as_ref().map(|p| p.display().to_string());
    let mut filters = filter_terms(&args.exec);
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
    let mut origin = Origin::new("redteam");
    let suites = match &args.suite {
        Some(path) => retargeted(&args, path, &select, &mut origin)?,
        None => load_all(
            &[BUILTIN_OWASP.to_owned()],
            args.canary.as_deref(),
            spf.as_deref(),
            Some(&select),
            &args.exec.allow_path,
        )?,
    };
    check_frameworks(&args.exec, &suites)?;
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
    let matrix = resolve_matrix(&suites, &args.exec)?;
    let invocation = Invocation {
        // A re-targeted run is recorded by the suite file it wrote, which a re-run loads.
        suites: vec![match (&args.suite, &args.emit) {
            (Some(_), Some(file)) => file.display().to_string(),
            _ => BUILTIN_OWASP.to_owned(),
        }],
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
        matrix,
        ..Invocation::default()
    };
    let invocation = with_helpers(invocation, &args.exec, None)?;
    let req = request(&args.exec, origin, suites, select, invocation)?;
    execute(req, &args.exec)
}

/// `redteam --suite`: the corpus aimed at the suite's tools, written to `--emit`, the plan
/// said on stderr and recorded in the run's notes (`retarget.*`), skipped cases and all.
fn retargeted(
    args: &RedteamArgs,
    path: &std::path::Path,
    select: &Selection,
    origin: &mut Origin,
) -> Result<Vec<LoadedSuite>, CliError> {
    let given = path.display().to_string();
    let shown = args.emit.as_ref().map_or_else(
        || format!("{given}{}", gauntlet_engine::setup::RETARGETED_SUFFIX),
        |p| p.display().to_string(),
    );
    let run = gauntlet_engine::setup::load_retargeted(
        &given,
        &shown,
        args.canary.as_deref(),
        Some(select),
        &args.exec.allow_path,
    )?;
    if let Some(file) = &args.emit {
        std::fs::write(file, &run.text).map_err(|e| {
            CliError::usage(
                format!("failed to write `{}`: {e}", file.display()),
                "pass a writable path to --emit",
            )
        })?;
    }
    let plan = &run.plan;
    let roles: Vec<String> = plan
        .roles
        .iter()
        .map(|r| {
            let mut what = Vec::new();
            for (on, name) in [
                (r.untrusted_output, "untrusted output"),
                (r.sends_out, "sends out"),
                (r.irreversible, "irreversible"),
            ] {
                if on {
                    what.push(name);
                }
            }
            let what = if what.is_empty() {
                "none".to_owned()
            } else {
                what.join(", ")
            };
            format!("{} ({what})", r.tool)
        })
        .collect();
    let skipped: Vec<String> = plan
        .skipped
        .iter()
        .map(|s| format!("{}: {}", s.id, s.reason))
        .collect();
    let mut say = format!(
        "red team aimed at `{given}`: {} cases re-targeted onto its tools, {} text-only kept, {} skipped\n  tools: {}",
        plan.retargeted.len(),
        plan.kept.len(),
        plan.skipped.len(),
        roles.join("; ")
    );
    for s in &skipped {
        say.push_str("\n  skipped ");
        say.push_str(s);
    }
    crate::out::note(&say);
    let notes = &mut origin.notes;
    notes.insert("retarget.suite".into(), given);
    notes.insert("retarget.tools".into(), roles.join("; "));
    notes.insert(
        "retarget.cases".into(),
        plan.retargeted
            .iter()
            .map(|c| {
                let moved: Vec<String> = c.tools.iter().map(|(a, b)| format!("{a}->{b}")).collect();
                format!("{} [{}] {}", c.id, c.attack.as_str(), moved.join(","))
            })
            .collect::<Vec<_>>()
            .join("; "),
    );
    notes.insert("retarget.skipped".into(), skipped.join("; "));
    Ok(vec![run.loaded])
}

/// Continues an interrupted run with the same id, settings and suites.
fn resume(spec: &str, opts: &ExecOpts) -> Result<i32, CliError> {
    let mut store = open_store(opts.store.as_deref(), opts.config.as_deref())?;
    let point = resume::find(&mut store, spec, opts.shard.as_deref())?;
    // Validate everything before touching the store: a resume refused for bad settings
    // leaves the run as it was.
    let origin = Origin::new("run");
    let mut req = request(
        opts,
        origin,
        Vec::new(),
        point.select.clone(),
        point.invocation.clone(),
    )?;
    // A budget given again replaces the recorded one (a run stopped by its budget goes on
    // with a larger one); `--cache` can be turned on for the rest of the run.
    let given = budget(opts)?;
    if given.is_set() {
        req.invocation.budget = given;
    }
    req.invocation.cache |= opts.cache;
    let mut origin = resume::reopen(&mut store, &point)?;
    origin.notes.extend(std::mem::take(&mut req.origin.notes));
    req.origin = origin;
    req.trials.k = point.manifest.k;
    req.trials.seed = Some(point.manifest.seed);
    // A shard keeps the id it shares with the other shards.
    req.outputs.run_id = point.manifest.shard.as_ref().and_then(|sh| sh.run.clone());
    req.suites = point.suites;
    execute(req, opts)
}
