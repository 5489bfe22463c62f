//! The server nondeterminism check (`gauntlet stability`): [`repeat`] runs every selected
//! case N times through the ordinary run ([`crate::run::run`]) with the target pinned to
//! temperature 0 and one seed ([`pin`]), every trial's seed pinned, the response cache
//! bypassed (a replay would fake stability) and judges asked afresh, giving a [`Repeated`];
//! with `metamorphic` the cases are first expanded into their perturbed variants
//! ([`crate::metamorphic::expand`]). [`assess`] compares the repeats
//! (`gauntlet_core::stability`), [`exit_code`] applies the gates, and [`json_doc`] is the
//! `--json` document of both checks.

use gauntlet_core::event::Invocation;
use gauntlet_core::result::CaseResult;
use gauntlet_core::stability::{StabilityClass, StabilityReport};
use gauntlet_core::target::{TargetConfig, TargetKind};
use gauntlet_store::StoreLocation;

use crate::error::{EngineError, Notice};
use crate::metamorphic::MetamorphicPlan;
use crate::run::{RunOutcome, RunRequest, selection};
use crate::setup::{TargetOverrides, case_target, load_all, resolve_spec};

/// A stability check: which cases, how many repeats, against what.
pub struct RepeatRequest {
    /// The suite files.
    pub paths: Vec<String>,
    /// `--filter` terms.
    pub filters: Vec<String>,
    /// Repeats per case (`--repeat`).
    pub repeat: u32,
    /// The seed the target and every trial are pinned to.
    pub seed: i64,
    /// `--target` and its settings (else the suite's target).
    pub target: TargetOverrides,
    /// `--rewriter SPEC`, for the `paraphrase` perturbation.
    pub rewriter: Option<String>,
    /// `--judge SPEC`.
    pub judge: Option<String>,
    /// The run store every repeat is written to.
    pub store: StoreLocation,
    /// Run each case's perturbed variants too (`--metamorphic`).
    pub metamorphic: bool,
}

/// What a stability check ran.
pub struct Repeated {
    /// The target as pinned.
    pub target: TargetConfig,
    /// What the output should say about the pinning and the plan.
    pub notes: Vec<String>,
    /// The metamorphic plan, with `metamorphic`.
    pub plan: Option<MetamorphicPlan>,
    /// The run, with every case's results.
    pub outcome: RunOutcome,
}

/// Refuses settings that cannot measure anything: fewer than two repeats, a share that is
/// not one, `--max-differ` with `--metamorphic`.
pub fn check_args(
    repeat: u32,
    max_differ: Option<f64>,
    metamorphic: bool,
) -> Result<(), EngineError> {
    if repeat < 2 {
        return Err(EngineError::usage(
            "--repeat must be at least 2 to compare repeats",
            "try --repeat 5",
        ));
    }
    if let Some(m) = max_differ
        && !(0.0..=1.0).contains(&m)
    {
        return Err(EngineError::usage(
            format!("--max-differ {m} is not a share"),
            "pass a number from 0 to 1, such as 0.1",
        ));
    }
    if metamorphic && max_differ.is_some() {
        return Err(EngineError::usage(
            "--max-differ compares plain repeats and does not apply to --metamorphic",
            "drop --max-differ, or run without --metamorphic",
        ));
    }
    Ok(())
}

/// Runs the check's repeats; warnings go to `notices`.
pub fn repeat(
    req: RepeatRequest,
    notices: &mut dyn FnMut(Notice),
) -> Result<Repeated, EngineError> {
    let select = selection(&req.filters, None, None)?;
    let mut suites = load_all(&req.paths, None, None, Some(&select), &[])?;
    let mut select = select;
    let mut meta = None;
    if req.metamorphic {
        let (s, plan) = crate::metamorphic::expand(suites, &select, req.seed as u64)?;
        suites = s;
        select = selection(&[], None, Some(plan.ids()))?;
        meta = Some(plan);
    }
    if suites.iter().all(|s| s.selected == 0) {
        return Err(EngineError::usage(
            "no case to repeat",
            "check --filter (hold-out cases are not repeated case by case)",
        ));
    }
    let mut target = case_target(suites[0].suite.target.as_ref(), &req.target)?;
    let mut notes = pin(&mut target, req.seed);
    let rewriter = req
        .rewriter
        .as_deref()
        .map(|r| resolve_spec(r, req.target.config.as_deref()))
        .transpose()?;
    if let Some(plan) = &meta {
        if plan.needs_rewriter() && rewriter.is_none() {
            return Err(EngineError::usage(
                "the `paraphrase` perturbation needs a rewriter model",
                "pass --rewriter SPEC, e.g. --rewriter fake:rewriter or --rewriter openai:gpt-4.1-mini",
            ));
        }
        notes.extend(plan.notes.iter().cloned());
    }
    let invocation = Invocation {
        suites: req.paths,
        base_dir: crate::setup::current_dir(),
        target: target.clone(),
        filters: req.filters,
        concurrency: 1,
        rewriter,
        ..Invocation::default()
    };
    let command = if meta.is_some() {
        "stability-metamorphic"
    } else {
        "stability"
    };
    let mut run = RunRequest::new(command, suites, select, invocation);
    run.origin
        .notes
        .insert("stability_repeat".into(), req.repeat.to_string());
    run.trials.k = req.repeat;
    run.trials.seed = Some(req.seed as u64);
    run.trials.pin_seed = true;
    run.models.judge = req.judge;
    // A judge that answers from its cache would hide a verdict that flips.
    run.models.fresh_judges = true;
    // A replayed reply would fake stability.
    run.models.no_cache = true;
    run.models.config = req.target.config;
    run.outputs.store = Some(req.store);
    run.outputs.capture = true;
    let outcome = crate::run::run(run, notices)?;
    Ok(Repeated {
        target,
        notes,
        plan: meta,
        outcome,
    })
}

/// Pins the target to temperature 0 and the seed; says what its wire could not take.
pub fn pin(target: &mut TargetConfig, seed: i64) -> Vec<String> {
    let mut notes = Vec::new();
    match target.kind {
        Some(TargetKind::Openai) => {
            if target.temperature.is_some_and(|t| t != 0.0) {
                notes.push("the target's temperature was replaced by 0".to_string());
            }
            target.temperature = Some(0.0);
            target.seed = Some(target.seed.unwrap_or(seed));
        }
        Some(kind @ (TargetKind::Anthropic | TargetKind::OpenaiResponses)) => {
            if target.temperature.is_some_and(|t| t != 0.0) {
                notes.push("the target's temperature was replaced by 0".to_string());
            }
            target.temperature = Some(0.0);
            let api = if kind == TargetKind::Anthropic {
                "the Anthropic Messages API"
            } else {
                "the OpenAI Responses API"
            };
            notes.push(format!(
                "this target can't take a seed: {api} has none; temperature 0 only"
            ));
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

/// Compares each case's repeats.
pub fn assess(repeat: u32, results: &[CaseResult]) -> StabilityReport {
    let cases = results
        .iter()
        .map(|r| gauntlet_core::stability::assess(&r.case.id, &r.trials))
        .collect();
    StabilityReport::new(repeat, cases)
}

/// The exit code: 1 when a case is unstable under `--fail-on-unstable`, or when more
/// outputs differ than `--max-differ` allows; else 4 when, under `--fail-on-unstable`, a
/// case could not be assessed; else 0.
pub fn exit_code(report: &StabilityReport, fail_on_unstable: bool, max_differ: Option<f64>) -> i32 {
    let unstable = report.count(StabilityClass::Unstable);
    let unassessed =
        report.count(StabilityClass::Faulted) + report.count(StabilityClass::NotAssessed);
    let over = max_differ.is_some_and(|m| report.output_differ_share > m);
    if (fail_on_unstable && unstable > 0) || over {
        1
    } else if fail_on_unstable && unassessed > 0 {
        4
    } else {
        0
    }
}

/// The `--json` document of a stability run: the pinned target, the notes, the report and
/// the exit code (`mode` names a mode other than the plain repeat check).
pub fn json_doc(
    mode: Option<&str>,
    target: &TargetConfig,
    notes: &[String],
    report: &impl serde::Serialize,
    code: i32,
) -> serde_json::Value {
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
    doc
}
