//! Commands over the run store: `runs list|show`, `report`, `regrade`, `baseline`,
//! `compare`, `log`, and the two planning helpers `plan` and `sample-size`.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use gauntlet_core::compare::{CaseDigest, Comparison, compare};
use gauntlet_core::event::{EventKind, Reporter, RunEvent};
use gauntlet_core::grader::{GradeContext, Grader};
use gauntlet_core::result::{CaseMeta, CaseResult, TrialResult};
use gauntlet_core::suite::Case;
use gauntlet_core::summary::{Summary, SummaryBuilder};
use gauntlet_graders::OracleGrader;
use gauntlet_report::text::{failure_reason, trim_num};
use gauntlet_runner::SuiteContext;
use gauntlet_store::Store;

use crate::CliError;
use crate::cli::{
    BaselineArgs, BaselineCommand, ChangeType, CompareArgs, LogArgs, PlanArgs, RegradeArgs,
    ReportArgs, RunsArgs, RunsCommand, SampleSizeArgs, StoreOpts,
};
use crate::printer::{TerminalReporter, Verbosity};
use crate::runcmd::{cases_of, load_all, new_run_id, store_err, store_path, suite_context};

pub fn open(opts: &StoreOpts) -> Result<Store, CliError> {
    let path = store_path(opts.store.as_deref(), None)?;
    if !path.exists() {
        return Err(CliError::usage(
            format!("no run store at `{}`", path.display()),
            "runs are stored by `gauntlet run`/`redteam` in .gauntlet/runs.db; pass --store to look elsewhere",
        ));
    }
    Store::open(&path).map_err(store_err)
}

pub fn runs(args: RunsArgs) -> Result<i32, CliError> {
    let store = open(&args.store)?;
    let mut out = anstream::stdout();
    match args.command {
        RunsCommand::List { limit, json } => {
            let rows = store.runs(limit).map_err(store_err)?;
            if json {
                for r in rows {
                    let _ = writeln!(
                        out,
                        "{}",
                        serde_json::to_string(&r).expect("row serializes")
                    );
                }
                return Ok(0);
            }
            let _ = writeln!(
                out,
                "{:<24} {:<26} {:<8} {:<13} {:>9}  target",
                "run", "started", "command", "status", "cases"
            );
            for r in rows {
                let status = r.status.clone().unwrap_or_else(|| "(unfinished)".into());
                let _ = writeln!(
                    out,
                    "{:<24} {:<26} {:<8} {:<13} {:>4}/{:<4}  {}",
                    r.run_id,
                    r.started_at.chars().take(25).collect::<String>(),
                    r.command,
                    status,
                    r.cases,
                    r.planned,
                    r.target
                );
            }
        }
        RunsCommand::Show { run, json } => {
            let id = store.resolve(&run).map_err(store_err)?;
            let manifest = store.manifest(&id).map_err(store_err)?;
            let summary = store.summary(&id).map_err(store_err)?;
            if json {
                let v = serde_json::json!({ "manifest": manifest, "summary": summary.as_ref().map(|s| &s.0) });
                let _ = writeln!(
                    out,
                    "{}",
                    serde_json::to_string_pretty(&v).expect("serializes")
                );
                return Ok(0);
            }
            let _ = writeln!(out, "run        {id}");
            let _ = writeln!(out, "command    {}", manifest.command);
            let _ = writeln!(out, "started    {}", manifest.started_at);
            let _ = writeln!(out, "target     {}", manifest.target.label);
            let suites: Vec<String> = manifest
                .suites
                .iter()
                .map(|s| format!("{} ({})", s.name, s.path))
                .collect();
            let _ = writeln!(out, "suites     {}", suites.join(", "));
            let _ = writeln!(out, "k, seed    {}, {}", manifest.k, manifest.seed);
            let _ = writeln!(
                out,
                "evidence   {:?}, side effects {:?}",
                manifest.evidence_level, manifest.side_effects
            );
            if let Some(j) = &manifest.judge {
                let _ = writeln!(out, "judge      {j}");
            }
            for (k, v) in &manifest.notes {
                let _ = writeln!(out, "note       {k} = {v}");
            }
            match &summary {
                Some((s, at)) => {
                    let _ = writeln!(out, "finished   {at}");
                    let _ = writeln!(
                        out,
                        "status     {} ({} cases: {} passed, {} failed, {} conditional, {} errors, {} blocked)",
                        s.status, s.cases, s.passed, s.failed, s.conditional, s.errors, s.blocked
                    );
                    for r in &s.reasons {
                        let _ = writeln!(out, "           - {r}");
                    }
                }
                None => {
                    let _ = writeln!(
                        out,
                        "status     unfinished (resume with `gauntlet run --resume {id}`)"
                    );
                }
            }
            let mut shown = 0;
            store
                .for_each_case(&id, |c| {
                    if c.status != gauntlet_core::result::CaseStatus::Pass && shown < 50 {
                        shown += 1;
                        let _ = writeln!(
                            out,
                            "  {:>11} {}  {}",
                            c.status.as_str(),
                            c.case.name,
                            failure_reason(&c)
                        );
                    }
                    Ok(())
                })
                .map_err(store_err)?;
        }
    }
    Ok(0)
}

/// Feeds events to reporters, collecting the first error of each.
struct Feed {
    reporters: Vec<Box<dyn Reporter>>,
    errors: Vec<String>,
}

impl Feed {
    fn send(&mut self, ev: &RunEvent) {
        for r in &mut self.reporters {
            if let Err(e) = r.on_event(ev) {
                self.errors.push(e.to_string());
            }
        }
    }

    fn finish(mut self) -> Result<(), CliError> {
        for r in &mut self.reporters {
            if let Err(e) = r.flush() {
                self.errors.push(e.to_string());
            }
        }
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(CliError::Usage(
                format!("failed to write a report: {}", self.errors.join("; ")),
                None,
            ))
        }
    }
}

pub fn report(args: ReportArgs) -> Result<i32, CliError> {
    let store = open(&args.store)?;
    let id = store.resolve(&args.run).map_err(store_err)?;
    let writers =
        gauntlet_report::writers(&args.out, &gauntlet_report::Format::ALL).map_err(|e| {
            CliError::usage(
                format!("failed to create `{}`: {e}", args.out.display()),
                "pass a writable --out",
            )
        })?;
    let mut feed = Feed {
        reporters: writers,
        errors: Vec::new(),
    };
    let mut status = None;
    store
        .replay(&id, |ev| {
            if let EventKind::RunFinished { summary, .. } = &ev.kind {
                status = Some(summary.status);
            }
            feed.send(&ev);
            Ok(())
        })
        .map_err(store_err)?;
    feed.finish()?;
    let mut out = anstream::stdout();
    match status {
        Some(s) => {
            let _ = writeln!(
                out,
                "wrote {0}/report.json, {0}/junit.xml, {0}/summary.md for run {id} ({s})",
                args.out.display()
            );
            Ok(s.exit_code())
        }
        None => {
            let _ = writeln!(
                out,
                "run {id} did not finish; only the manifest and the finished cases were stored, so no report is complete"
            );
            Ok(gauntlet_core::score::Status::Inconclusive.exit_code())
        }
    }
}

pub fn regrade(args: RegradeArgs) -> Result<i32, CliError> {
    let store = open(&args.store)?;
    let from = store.resolve(&args.run).map_err(store_err)?;
    let old = store.manifest(&from).map_err(store_err)?;
    let inv = old.invocation.clone().ok_or_else(|| {
        CliError::usage(
            format!("run {from} has no recorded invocation"),
            "re-run the suite instead",
        )
    })?;
    let suites = load_all(
        &inv.suites,
        inv.canary.as_deref(),
        inv.system_prompt_file.as_deref(),
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
    // Case definitions by id, from the suites as they are now.
    let mut defs: HashMap<String, (Arc<Case>, Arc<SuiteContext>)> = HashMap::new();
    for s in &suites {
        let ctx = Arc::new(suite_context(s, inv.canary.as_deref(), inv.timeout_ms));
        for pc in cases_of(s, Arc::clone(&ctx), Arc::new(|_: &Case| true)) {
            defs.insert(pc.case.id.clone(), (pc.case, pc.suite));
        }
    }
    let mut redactor = gauntlet_core::redact::Redactor::new();
    let mut grader = OracleGrader::new();
    let mut manifest = old.clone();
    if let Some(j) = &args.judge {
        let cfg = crate::runcmd::resolve_spec(j, None)?;
        let judge = crate::judge::ModelJudge::new(&cfg, &mut redactor)
            .map_err(|e| CliError::usage(e, "--judge takes a model target"))?;
        manifest.judge = Some(judge.describe());
        grader = grader.with_judge(Arc::new(judge));
    }
    let run_id = new_run_id();
    manifest.run_id = run_id.clone();
    manifest.command = "regrade".into();
    manifest.started_at = jiff::Timestamp::now().to_string();
    manifest.notes.insert("regraded_from".into(), from.clone());
    manifest.evidence_level = gauntlet_core::event::EvidenceLevel::Replay;

    let verbosity = if args.quiet {
        Verbosity::Quiet
    } else {
        Verbosity::Normal
    };
    let mut reporters: Vec<Box<dyn Reporter>> = vec![Box::new(TerminalReporter::new(
        verbosity,
        Some(args.out.display().to_string()),
    ))];
    reporters.extend(
        gauntlet_report::writers(&args.out, &gauntlet_report::Format::ALL).map_err(|e| {
            CliError::usage(
                format!("failed to create `{}`: {e}", args.out.display()),
                "pass a writable --out",
            )
        })?,
    );
    reporters.push(Box::new(store.reporter().map_err(store_err)?));
    let mut feed = Feed {
        reporters,
        errors: Vec::new(),
    };
    let started = std::time::Instant::now();
    feed.send(&RunEvent::new(
        0,
        EventKind::RunStarted {
            manifest: Box::new(manifest),
        },
    ));
    for w in warnings {
        feed.send(&RunEvent::new(0, EventKind::Warning { message: w }));
    }
    let packs = crate::runcmd::pack_requirements(&suites);
    let mut fold = SummaryBuilder::new();
    let rt = crate::runtime()?;
    let mut missing = 0usize;
    store
        .for_each_case(&from, |old_case| {
            let Some((case, ctx)) = defs.get(&old_case.case.id) else {
                // The case is gone from the suite: keep its stored result as it was.
                missing += 1;
                fold.add(&old_case);
                feed.send(&RunEvent::new(
                    started.elapsed().as_millis() as u64,
                    EventKind::CaseFinished {
                        result: Box::new(old_case),
                    },
                ));
                return Ok(());
            };
            let canary = case.canary.as_deref().or(ctx.canary.as_deref());
            let trials: Vec<TrialResult> = old_case
                .trials
                .into_iter()
                .map(|t| {
                    let verdicts = rt.block_on(grader.grade(GradeContext {
                        case,
                        trace: &t.trace,
                        outcome: t.outcome,
                        canary,
                        tools: &ctx.tools,
                    }));
                    TrialResult::new(
                        case,
                        t.trial,
                        t.outcome,
                        t.trace,
                        verdicts,
                        t.error,
                        t.duration_ms,
                    )
                })
                .collect();
            let meta = CaseMeta::of(case, &ctx.name, ctx.default_blocking);
            let mut result = CaseResult::combine(meta, trials);
            result.quarantined = old_case.quarantined;
            fold.add(&result);
            feed.send(&RunEvent::new(
                started.elapsed().as_millis() as u64,
                EventKind::CaseFinished {
                    result: Box::new(result),
                },
            ));
            Ok(())
        })
        .map_err(store_err)?;
    let mut summary = fold.finish(&packs, started.elapsed().as_millis() as u64);
    if missing > 0 {
        summary.reasons.push(format!(
            "{missing} case(s) are no longer in the suite and keep their stored results"
        ));
    }
    summary
        .reasons
        .push(format!("regraded from run {from} (no target calls)"));
    feed.send(&RunEvent::new(
        summary.duration_ms,
        EventKind::RunFinished {
            summary: Box::new(summary.clone()),
            finished_at: jiff::Timestamp::now().to_string(),
        },
    ));
    feed.finish()?;
    let _ = writeln!(
        anstream::stdout(),
        "regraded run {from} as run {run_id}; compare with `gauntlet compare {from} {run_id}`"
    );
    Ok(summary.status.exit_code())
}

pub fn baseline(args: BaselineArgs) -> Result<i32, CliError> {
    let path = store_path(args.store.store.as_deref(), None)?;
    let store = Store::open(&path).map_err(store_err)?;
    let mut out = anstream::stdout();
    match args.command {
        BaselineCommand::Set { run, name } => {
            let id = store.resolve(&run).map_err(store_err)?;
            if store.summary(&id).map_err(store_err)?.is_none() {
                return Err(CliError::usage(
                    format!("run {id} did not finish"),
                    "a baseline must be a finished run; resume it first",
                ));
            }
            store.set_baseline(&name, &id).map_err(store_err)?;
            let _ = writeln!(out, "baseline `{name}` is now run {id}");
        }
        BaselineCommand::List => {
            for (name, run, at) in store.baselines().map_err(store_err)? {
                let _ = writeln!(out, "{name:<16} {run}  (set {at})");
            }
        }
    }
    Ok(0)
}

/// Digests of a run's cases, and its summary.
fn digests(store: &Store, run: &str) -> Result<(Vec<CaseDigest>, Option<Summary>), CliError> {
    let mut out = Vec::new();
    store
        .for_each_case(run, |c| {
            let reason = failure_reason(&c);
            out.push(CaseDigest::of(&c, reason));
            Ok(())
        })
        .map_err(store_err)?;
    let summary = store.summary(run).map_err(store_err)?.map(|(s, _)| s);
    Ok((out, summary))
}

/// Compares two stored runs.
pub fn comparison(store: &Store, a: &str, b: &str) -> Result<Comparison, CliError> {
    let (da, sa) = digests(store, a)?;
    let (db, sb) = digests(store, b)?;
    Ok(compare(a, &da, sa.as_ref(), b, &db, sb.as_ref()))
}

fn opt(v: Option<f64>) -> String {
    v.map_or("-".into(), trim_num)
}

fn delta(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => format!("{:+.2}", b - a),
        _ => String::new(),
    }
}

/// The comparison as text.
pub fn render_comparison(c: &Comparison) -> String {
    let mut o = String::new();
    o.push_str(&format!("compare {} (A) -> {} (B)\n\n", c.run_a, c.run_b));
    o.push_str(&format!(
        "{:<22} {:>14} {:>14} {:>10}\n",
        "", "A", "B", "change"
    ));
    o.push_str(&format!(
        "{:<22} {:>14} {:>14}\n",
        "status", c.status_a, c.status_b
    ));
    o.push_str(&format!(
        "{:<22} {:>14} {:>14} {:>10}\n",
        "task average /18",
        opt(c.task_avg_a),
        opt(c.task_avg_b),
        delta(c.task_avg_a, c.task_avg_b)
    ));
    o.push_str(&format!(
        "{:<22} {:>14} {:>14} {:>10}\n",
        "refusal average /3",
        opt(c.refusal_avg_a),
        opt(c.refusal_avg_b),
        delta(c.refusal_avg_a, c.refusal_avg_b)
    ));
    o.push_str(&format!(
        "{:<22} {:>14} {:>14} {:>+10}\n",
        "hard fails",
        c.hard_fails_a,
        c.hard_fails_b,
        c.hard_fails_b as i64 - c.hard_fails_a as i64
    ));
    o.push_str(&format!(
        "{:<22} {:>14.1} {:>14.1} {:>+10.1}\n",
        "mean latency ms",
        c.latency_ms_a,
        c.latency_ms_b,
        c.latency_ms_b - c.latency_ms_a
    ));
    o.push_str(&format!(
        "{:<22} {:>14} {:>14} {:>+10}\n",
        "tokens",
        c.tokens_a,
        c.tokens_b,
        c.tokens_b as i64 - c.tokens_a as i64
    ));
    let rate = |r: &gauntlet_core::compare::Rate| {
        format!("{}/{} {:.0}%", r.passed, r.total, r.rate * 100.0)
    };
    o.push_str(&format!(
        "{:<22} {:>14} {:>14}\n",
        "pass rate (paired)",
        rate(&c.pass_rate_a),
        rate(&c.pass_rate_b)
    ));
    o.push_str(&format!(
        "{:<22} {:>14} {:>14}\n\n",
        "  95% Wilson",
        format!("{:.2}-{:.2}", c.pass_rate_a.low, c.pass_rate_a.high),
        format!("{:.2}-{:.2}", c.pass_rate_b.low, c.pass_rate_b.high)
    ));
    o.push_str(&format!(
        "McNemar (exact, two-sided): {} passed only in A, {} only in B, p = {:.4}{}\n",
        c.discordant_a_only,
        c.discordant_b_only,
        c.mcnemar_p,
        if c.mcnemar_p < 0.05 {
            " (a significant change at 0.05)"
        } else {
            " (no significant change at 0.05; see `gauntlet sample-size` for the pairs an effect needs)"
        }
    ));
    o.push_str(&format!(
        "{} new failure(s), {} fixed, {} still failing, {} unchanged passes, {} not comparable\n",
        c.new_failures.len(),
        c.fixed.len(),
        c.still_failing.len(),
        c.unchanged_pass,
        c.not_comparable.len()
    ));
    for (title, list) in [("new failures", &c.new_failures), ("fixed", &c.fixed)] {
        if !list.is_empty() {
            o.push_str(&format!("\n{title}:\n"));
            for ch in list.iter().take(50) {
                o.push_str(&format!(
                    "  {} {} -> {} {}\n",
                    ch.name,
                    ch.before.as_str(),
                    ch.after.as_str(),
                    if ch.reason.is_empty() {
                        String::new()
                    } else {
                        format!("({})", gauntlet_report::text::clip(&ch.reason, 120))
                    }
                ));
            }
        }
    }
    if !c.only_in_a.is_empty() || !c.only_in_b.is_empty() {
        o.push_str(&format!(
            "\n{} case(s) only in A, {} only in B\n",
            c.only_in_a.len(),
            c.only_in_b.len()
        ));
    }
    o
}

pub fn compare_cmd(args: CompareArgs) -> Result<i32, CliError> {
    let store = open(&args.store)?;
    let a = store.resolve(&args.run_a).map_err(store_err)?;
    let b = store.resolve(&args.run_b).map_err(store_err)?;
    let c = comparison(&store, &a, &b)?;
    let mut out = anstream::stdout();
    if args.json {
        let _ = writeln!(out, "{}", serde_json::to_string(&c).expect("serializes"));
    } else {
        let _ = write!(out, "{}", render_comparison(&c));
    }
    Ok(0)
}

/// After a run with `--baseline NAME`: prints the comparison with the baseline.
pub fn print_baseline_comparison(store: &Store, name: &str, run: &str) -> Result<(), CliError> {
    let base = match store.baseline(name).map_err(store_err)? {
        Some(b) => b,
        None => store.resolve(name).map_err(|_| {
            CliError::usage(
                format!("no baseline named `{name}`"),
                "set one with `gauntlet baseline set RUN --name NAME`",
            )
        })?,
    };
    let c = comparison(store, &base, run)?;
    let _ = write!(anstream::stdout(), "\n{}", render_comparison(&c));
    Ok(())
}

/// Packs to re-run for a kind of change (the regression protocol).
pub fn plan_for(change: ChangeType) -> (&'static str, Vec<&'static str>) {
    match change {
        ChangeType::Prompt => (
            "prompt or system prompt",
            vec!["smoke", "affected regression cases"],
        ),
        ChangeType::Tool => (
            "tool",
            vec!["smoke", "affected regression cases", "security pack"],
        ),
        ChangeType::Model => (
            "model",
            vec!["smoke", "refusal pack", "targeted regression cases"],
        ),
        ChangeType::Judge => (
            "judge or grader",
            vec!["smoke", "calibration set", "affected regression cases"],
        ),
        ChangeType::Retrieval => (
            "retrieval or knowledge",
            vec!["affected regression cases", "grounding checks"],
        ),
        ChangeType::Workflow => (
            "multi-agent workflow",
            vec![
                "handoff tests",
                "coordination faults",
                "affected regression cases",
            ],
        ),
    }
}

pub fn plan(args: PlanArgs) -> Result<i32, CliError> {
    let (what, packs) = plan_for(args.change);
    let mut out = anstream::stdout();
    let _ = writeln!(out, "A {what} change: re-run");
    for p in &packs {
        let _ = writeln!(out, "  - {p}");
    }
    let hint = match args.change {
        ChangeType::Prompt => "gauntlet run SUITE --filter pack:smoke --filter pack:regression",
        ChangeType::Tool => {
            "gauntlet run SUITE --filter pack:smoke --filter pack:regression --filter pack:security"
        }
        ChangeType::Model => {
            "gauntlet run SUITE --filter pack:smoke --filter pack:refusal --filter pack:regression"
        }
        ChangeType::Judge => {
            "gauntlet run SUITE --filter pack:smoke --filter pack:regression  (plus the calibration set)"
        }
        ChangeType::Retrieval => {
            "gauntlet run SUITE --filter pack:regression  (with grounding checks)"
        }
        ChangeType::Workflow => {
            "gauntlet run SUITE --filter tag:handoff --filter tag:coordination --filter pack:regression"
        }
    };
    let _ = writeln!(out, "\nFor example: {hint}");
    let _ = writeln!(
        out,
        "Prefer the smallest scope that covers the risk; nightly runs take the full set."
    );
    Ok(0)
}

pub fn sample_size(args: SampleSizeArgs) -> Result<i32, CliError> {
    let Some(n) =
        gauntlet_core::stats::mcnemar_sample_size(args.p01, args.p10, args.alpha, args.power)
    else {
        return Err(CliError::usage(
            "no sample size for these inputs",
            "p01 and p10 are probabilities with p01 + p10 <= 1 and p01 != p10; alpha and power are in (0, 1)",
        ));
    };
    let mut out = anstream::stdout();
    let _ = writeln!(
        out,
        "{n} paired cases detect p01 = {} vs p10 = {} (discordant share {:.3}, difference {:+.3}) with a two-sided McNemar test at alpha = {} and power = {}.",
        args.p01,
        args.p10,
        args.p01 + args.p10,
        args.p10 - args.p01,
        args.alpha,
        args.power
    );
    let _ = writeln!(
        out,
        "(Connor 1987, normal approximation.) A 15-25 case smoke set answers \"is something obviously broken\", not \"is B a few points better\"."
    );
    Ok(0)
}

/// A root-cause hypothesis and a class for a new failure, from what failed and what changed.
fn hypothesis(reason: &str, change: ChangeType) -> (String, &'static str) {
    let r = reason.to_lowercase();
    let default_class = match change {
        ChangeType::Prompt | ChangeType::Retrieval => "prompt",
        ChangeType::Tool | ChangeType::Workflow => "tool",
        ChangeType::Model => "model",
        ChangeType::Judge => "grader",
    };
    if r.starts_with("judge") {
        return (
            "the judge now scores this answer differently".into(),
            "grader",
        );
    }
    if r.starts_with("tool_") || r.contains("tool call") || r.contains("forbidden tool") {
        return (
            format!(
                "tool use changed: {}",
                gauntlet_report::text::clip(reason, 100)
            ),
            "tool",
        );
    }
    if r.starts_with("no_canary") || r.starts_with("refusal") || r.starts_with("no_unsafe_markup") {
        return (
            format!(
                "a safety behaviour regressed: {}",
                gauntlet_report::text::clip(reason, 100)
            ),
            if change == ChangeType::Model {
                "model"
            } else {
                "prompt"
            },
        );
    }
    (
        format!(
            "the answer changed: {}",
            gauntlet_report::text::clip(reason, 100)
        ),
        default_class,
    )
}

pub fn log(args: LogArgs) -> Result<i32, CliError> {
    let store = open(&args.store)?;
    let run = store.resolve(&args.run).map_err(store_err)?;
    let manifest = store.manifest(&run).map_err(store_err)?;
    let Some((summary, finished_at)) = store.summary(&run).map_err(store_err)? else {
        return Err(CliError::usage(
            format!("run {run} did not finish"),
            "log finished runs only",
        ));
    };
    let against = match &args.against {
        Some(a) => Some(store.resolve(a).map_err(store_err)?),
        None => store.baseline("default").map_err(store_err)?,
    };
    let cmp = match &against {
        Some(a) if *a != run => Some(comparison(&store, a, &run)?),
        _ => None,
    };
    let date = finished_at.get(..10).unwrap_or(&finished_at).to_owned();
    let change = format!("{:?}", args.change).to_lowercase();
    let (what, packs) = plan_for(args.change);
    let regressions: Vec<serde_json::Value> = cmp
        .as_ref()
        .map(|c| {
            c.new_failures
                .iter()
                .map(|f| {
                    let (h, class) = hypothesis(&f.reason, args.change);
                    serde_json::json!({
                        "case": f.id, "previous": f.before.as_str(), "current": f.after.as_str(),
                        "hypothesis": h, "class": class,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let entry = serde_json::json!({
        "log_version": 1,
        "date": date,
        "run": run,
        "compared_with": against,
        "version_from": args.from,
        "version_to": args.to,
        "change_type": change,
        "description": args.description,
        "expected_impact": args.expected_impact,
        "risk_areas": args.risk,
        "rerun_scope": packs,
        "task_avg": summary.tasks.avg,
        "refusal_avg": summary.refusals.avg,
        "suite_normalized": summary.suite_normalized,
        "status": summary.status,
        "quality_band": summary.quality_band,
        "hard_fails": summary.hard_fails,
        "new_failures": cmp.as_ref().map_or(0, |c| c.new_failures.len()),
        "fixed": cmp.as_ref().map_or(0, |c| c.fixed.len()),
        "mcnemar_p": cmp.as_ref().map(|c| c.mcnemar_p),
        "regressions": regressions,
        "manifest": {
            "gauntlet_version": manifest.gauntlet_version,
            "target": manifest.target.label,
            "model": manifest.target.model,
            "suites": manifest.suites,
            "dataset_revision": manifest.dataset_revision,
            "tool_versions": manifest.tool_versions,
            "judge": manifest.judge,
            "k": manifest.k,
            "seed": manifest.seed,
            "evidence_level": manifest.evidence_level,
            "side_effects": manifest.side_effects,
        },
    });
    // The Markdown entry.
    let mut md = String::new();
    md.push_str(&format!(
        "\n## {date}: {} -> {} ({change} change)\n\n",
        args.from.as_deref().unwrap_or("?"),
        args.to.as_deref().unwrap_or("?")
    ));
    md.push_str(&format!("- Description: {}\n", args.description));
    if let Some(e) = &args.expected_impact {
        md.push_str(&format!("- Expected impact: {e}\n"));
    }
    if !args.risk.is_empty() {
        md.push_str(&format!("- Risk areas: {}\n", args.risk.join("; ")));
    }
    md.push_str(&format!(
        "- Rerun scope ({what} change): {}\n",
        packs.join(", ")
    ));
    md.push_str(&format!(
        "- Run: `{run}` against `{}`{}; k = {}, seed = {}; evidence {:?}, side effects {:?}\n",
        manifest.target.label,
        against
            .as_ref()
            .map_or(String::new(), |a| format!(", compared with `{a}`")),
        manifest.k,
        manifest.seed,
        manifest.evidence_level,
        manifest.side_effects
    ));
    md.push_str(&format!(
        "- Versions: gauntlet {}, dataset {}, judge {}, tools {}\n",
        manifest.gauntlet_version,
        manifest.dataset_revision,
        manifest.judge.as_deref().unwrap_or("none"),
        if manifest.tool_versions.is_empty() {
            "none".to_owned()
        } else {
            manifest
                .tool_versions
                .iter()
                .map(|(k, v)| format!("{k}@{v}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    ));
    md.push_str(&format!(
        "- Result: task avg {}/18 · refusal avg {}/3 · normalised {} · status **{}** · band {} · hard fails {}\n",
        opt(summary.tasks.avg),
        opt(summary.refusals.avg),
        summary.suite_normalized.map_or("-".into(), |n| format!("{n:.3}")),
        summary.status,
        summary.quality_band.map_or("-".into(), |b| b.to_string()),
        summary.hard_fails
    ));
    if let Some(c) = &cmp {
        md.push_str(&format!(
            "- Changes: {} new failure(s), {} fixed; McNemar p = {:.4}\n",
            c.new_failures.len(),
            c.fixed.len(),
            c.mcnemar_p
        ));
        if !c.new_failures.is_empty() {
            md.push_str("\n| case | previous | current | root-cause hypothesis | class |\n|---|---|---|---|---|\n");
            for r in &regressions {
                md.push_str(&format!(
                    "| `{}` | {} | {} | {} | {} |\n",
                    r["case"].as_str().unwrap_or(""),
                    r["previous"].as_str().unwrap_or(""),
                    r["current"].as_str().unwrap_or(""),
                    r["hypothesis"].as_str().unwrap_or("").replace('|', "\\|"),
                    r["class"].as_str().unwrap_or("")
                ));
            }
        }
    }
    let decision = match summary.status {
        gauntlet_core::score::Status::Pass => "approve",
        gauntlet_core::score::Status::Conditional => "review the weak cases",
        gauntlet_core::score::Status::Inconclusive => {
            "add the missing evidence and rerun; do not merge"
        }
        gauntlet_core::score::Status::Fail => "fix forward or roll back",
    };
    md.push_str(&format!("\nDecision: {decision}.\n"));
    append(&args.file, &md, &entry)?;
    let _ = writeln!(
        anstream::stdout(),
        "appended run {run} to {} and {}",
        args.file.display(),
        json_twin(&args.file).display()
    );
    Ok(0)
}

fn json_twin(md: &Path) -> std::path::PathBuf {
    md.with_extension("json")
}

/// Appends to the Markdown log (created with a heading if missing) and to its JSON twin (an
/// array of entries), writing the JSON atomically.
fn append(md: &Path, text: &str, entry: &serde_json::Value) -> Result<(), CliError> {
    let io = |e: std::io::Error, p: &Path| {
        CliError::usage(
            format!("failed to write `{}`: {e}", p.display()),
            "check the path",
        )
    };
    if !md.exists() {
        std::fs::write(md, "# Regression log\n").map_err(|e| io(e, md))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(md)
        .map_err(|e| io(e, md))?;
    f.write_all(text.as_bytes()).map_err(|e| io(e, md))?;
    let twin = json_twin(md);
    let mut entries: Vec<serde_json::Value> = match std::fs::read_to_string(&twin) {
        Ok(t) if !t.trim().is_empty() => serde_json::from_str(&t).map_err(|e| {
            CliError::usage(
                format!("`{}` is not a JSON array: {e}", twin.display()),
                "fix or move the file",
            )
        })?,
        _ => Vec::new(),
    };
    entries.push(entry.clone());
    let tmp = twin.with_extension("json.partial");
    std::fs::write(
        &tmp,
        serde_json::to_string_pretty(&entries).expect("serializes") + "\n",
    )
    .map_err(|e| io(e, &tmp))?;
    std::fs::rename(&tmp, &twin).map_err(|e| io(e, &twin))?;
    Ok(())
}
