//! `gauntlet stability SUITE... --repeat N`: the server nondeterminism check. Every case is
//! run N times through the ordinary run loop with the target pinned to temperature 0 and one
//! seed (where its wire takes one), every trial's seed pinned, the response cache bypassed
//! (a replay would fake stability) and judges asked afresh; then
//! `gauntlet_core::stability` compares the repeats. Prints a table or `--json`. With
//! `--metamorphic` the same pinned repeats run each case's perturbed variants too
//! (`crate::metamorphiccmd`).

use std::io::Write;
use std::sync::{Arc, Mutex};

use gauntlet_core::event::Invocation;
use gauntlet_core::stability::{StabilityClass, StabilityReport, assess};
use gauntlet_core::target::{TargetConfig, TargetKind};

use crate::cli::StabilityArgs;
use crate::error::CliError;
use crate::printer::Verbosity;
use crate::runcmd::{Mode, Settings, execute, selection};
use crate::setup::{load_all, resolve_spec, store_location};

/// The `--json` document of a stability run: the pinned target, the notes, the report and
/// the exit code (`mode` names a mode other than the plain repeat check).
pub(crate) fn write_json(
    out: &mut crate::out::Printer,
    mode: Option<&str>,
    target: &TargetConfig,
    notes: &[String],
    report: &impl serde::Serialize,
    code: i32,
) -> Result<(), CliError> {
    let mut doc = serde_json::json!({
        "target": target.to_string(),
        "temperature": target.temperature,
        "seed": target.seed,
        "notes": notes,
        "report": report,
        "exit_code": code,
    });
    if let Some(mode) = mode {
        doc["mode"] = serde_json::Value::from(mode);
    }
    writeln!(
        out,
        "{}",
        serde_json::to_string_pretty(&doc).unwrap_or_default()
    )?;
    Ok(())
}

/// Pins the target to temperature 0 and the seed; says what its wire could not take.
fn pin(target: &mut TargetConfig, seed: i64) -> Vec<String> {
    let mut notes = Vec::new();
    match target.kind {
        Some(TargetKind::Openai) => {
            if target.temperature.is_some_and(|t| t != 0.0) {
                notes.push("the target's temperature was replaced by 0".to_string());
            }
            target.temperature = Some(0.0);
            target.seed = Some(target.seed.unwrap_or(seed));
        }
        Some(TargetKind::Anthropic) => {
            if target.temperature.is_some_and(|t| t != 0.0) {
                notes.push("the target's temperature was replaced by 0".to_string());
            }
            target.temperature = Some(0.0);
            notes.push(
                "this target can't take a seed: the Anthropic Messages API has none; temperature 0 only"
                    .to_string(),
            );
        }
        Some(TargetKind::Fake) => {
            notes.push(
                "fake target: it takes no temperature or seed; each repeat gets the same pinned trial seed"
                    .to_string(),
            );
        }
        Some(TargetKind::Http | TargetKind::Exec | TargetKind::Proxy) | None => {
            notes.push(
                "this target can't take a seed or a temperature from gauntlet: the app builds its own model request, its own settings apply"
                    .to_string(),
            );
        }
    }
    notes
}

pub fn stability(args: StabilityArgs) -> Result<i32, CliError> {
    if args.repeat < 2 {
        return Err(CliError::usage(
            "--repeat must be at least 2 to compare repeats",
            "try --repeat 5",
        ));
    }
    if let Some(m) = args.max_differ
        && !(0.0..=1.0).contains(&m)
    {
        return Err(CliError::usage(
            format!("--max-differ {m} is not a share"),
            "pass a number from 0 to 1, such as 0.1",
        ));
    }
    if args.metamorphic && args.max_differ.is_some() {
        return Err(CliError::usage(
            "--max-differ compares plain repeats and does not apply to --metamorphic",
            "drop --max-differ, or run without --metamorphic",
        ));
    }
    let paths: Vec<String> = args
        .suites
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let select = selection(&args.filter, None, None)?;
    let mut suites = load_all(&paths, None, None, Some(&select), &[])?;
    let mut select = select;
    let mut meta = None;
    if args.metamorphic {
        let (s, plan) = crate::metamorphiccmd::expand(suites, &select, args.seed as u64)?;
        suites = s;
        select = selection(&[], None, Some(plan.ids()))?;
        meta = Some(plan);
    }
    if suites.iter().all(|s| s.selected == 0) {
        return Err(CliError::usage(
            "no case to repeat",
            "check --filter (hold-out cases are not repeated case by case)",
        ));
    }
    let mut target = match &args.target {
        Some(t) => resolve_spec(t, args.config.as_deref())?,
        None => suites[0]
            .suite
            .target
            .clone()
            .ok_or_else(|| CliError::usage("the suite declares no target", "pass --target"))?,
    };
    if let Some(u) = &args.base_url {
        target.base_url = Some(u.clone());
    }
    if let Some(k) = &args.api_key_env {
        target.api_key_env = Some(k.clone());
    }
    if target.kind.is_none() {
        let name = target.name.clone().unwrap_or_default();
        target = resolve_spec(&name, args.config.as_deref())?;
    }
    let mut notes = pin(&mut target, args.seed);
    let rewriter = args
        .rewriter
        .as_deref()
        .map(|r| resolve_spec(r, args.config.as_deref()))
        .transpose()?;
    if let Some(plan) = &meta {
        if plan.needs_rewriter() && rewriter.is_none() {
            return Err(CliError::usage(
                "the `paraphrase` perturbation needs a rewriter model",
                "pass --rewriter SPEC, e.g. --rewriter fake:rewriter or --rewriter openai:gpt-4.1-mini",
            ));
        }
        notes.extend(plan.notes.iter().cloned());
    }
    let settings = Settings {
        invocation: Invocation {
            suites: paths,
            base_dir: crate::setup::current_dir(),
            target: target.clone(),
            filters: args.filter.clone(),
            shard: None,
            canary: None,
            system_prompt_file: None,
            timeout_ms: None,
            concurrency: 1,
            max_fail: None,
            rewriter,
            ..Invocation::default()
        },
        k: args.repeat,
        seed: Some(args.seed as u64),
        out: None,
        verbosity: Verbosity::Quiet,
        store: Some(store_location(
            args.store.store.as_deref(),
            args.config.as_deref(),
        )?),
        run_id: None,
        whole_rate_limit: false,
        quarantine: None,
        baseline: None,
        judge: args.judge.clone(),
        judge_cache: None,
        // A judge that answers from its cache would hide a verdict that flips.
        fresh_judges: true,
        // A replayed reply would fake stability.
        no_cache: true,
        config: args.config.clone(),
        user_model: None,
        notes: Default::default(),
        otel: None,
    };
    let captured = Arc::new(Mutex::new(Vec::new()));
    let mut mode = Mode::new(if meta.is_some() {
        "stability-metamorphic"
    } else {
        "stability"
    });
    mode.pin_seed = true;
    mode.no_summary = true;
    mode.capture = Some(Arc::clone(&captured));
    mode.notes
        .insert("stability_repeat".into(), args.repeat.to_string());
    execute(suites, select, settings, mode)?;
    let results = captured.lock().expect("capture lock");
    if let Some(plan) = meta {
        return crate::metamorphiccmd::report(&args, &target, &notes, &plan, &results);
    }
    let cases = results
        .iter()
        .map(|r| assess(&r.case.id, &r.trials))
        .collect();
    let report = StabilityReport::new(args.repeat, cases);
    let unstable = report.count(StabilityClass::Unstable);
    let unassessed =
        report.count(StabilityClass::Faulted) + report.count(StabilityClass::NotAssessed);
    let over = args
        .max_differ
        .is_some_and(|m| report.output_differ_share > m);
    let code = if (args.fail_on_unstable && unstable > 0) || over {
        1
    } else if args.fail_on_unstable && unassessed > 0 {
        4
    } else {
        0
    };
    let mut out = crate::out::Printer::stdout();
    if args.json {
        write_json(&mut out, None, &target, &notes, &report, code)?;
        return Ok(code);
    }
    writeln!(
        out,
        "target {}, {} repeats per case, response cache bypassed",
        target, args.repeat
    )?;
    for n in &notes {
        writeln!(out, "note: {n}")?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{:<32} {:>4} {:>6} {:>8} {:>8} {:>8} {:>8}  class",
        "case", "done", "fault", "outputs", "differ", "verdicts", "differ"
    )?;
    for c in &report.cases {
        let faults: u32 = c.faulted.values().sum();
        let id = gauntlet_core::text::escape_controls(&c.case_id);
        writeln!(
            out,
            "{:<32} {:>4} {:>6} {:>8} {:>7.0}% {:>8} {:>7.0}%  {}",
            id,
            c.completed,
            faults,
            c.distinct_outputs,
            c.output_differ_share * 100.0,
            c.distinct_verdicts,
            c.verdict_differ_share * 100.0,
            c.class.as_str()
        )?;
        if faults > 0 {
            let kinds: Vec<String> = c.faulted.iter().map(|(k, v)| format!("{v} {k}")).collect();
            writeln!(out, "  faulted repeats: {}", kinds.join(", "))?;
        }
    }
    writeln!(out)?;
    writeln!(
        out,
        "overall: {} stable, {} unstable, {} faulted, {} not assessed; text differs from the modal output in {:.0}% of completed repeats, verdicts in {:.0}%; {} faulted repeats",
        report.count(StabilityClass::Stable),
        unstable,
        report.count(StabilityClass::Faulted),
        report.count(StabilityClass::NotAssessed),
        report.output_differ_share * 100.0,
        report.verdict_differ_share * 100.0,
        report.faulted
    )?;
    if unstable > 0 {
        writeln!(
            out,
            "the server is not deterministic at temperature 0 with one seed: measure agent consistency with pass^k, not with single runs"
        )?;
    }
    Ok(code)
}
