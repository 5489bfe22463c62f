//! `gauntlet flaky SUITE --case ID`: re-runs one case alone k times with pinned inputs (the
//! same input and the same seed for every trial), keeps every trace in the store, and
//! classifies what it sees: harness flake, grader/judge instability, or agent
//! nondeterminism, with the evidence and a quarantine entry ready to paste.

use std::io::Write;

use gauntlet_core::event::Invocation;
use gauntlet_core::flake::{FlakeClass, classify};
use gauntlet_engine::{RunRequest, selection};

use crate::cli::FlakyArgs;
use crate::error::CliError;
use crate::printer::{TerminalReporter, Verbosity, print_outcome, show_notice};
use crate::setup::{TargetOverrides, case_target, load_all, store_location};

pub fn flaky(args: FlakyArgs) -> Result<i32, CliError> {
    let path = args.suite.display().to_string();
    let filters = vec![format!("id:{}", args.case)];
    let select = selection(&filters, None, None)?;
    let suites = load_all(std::slice::from_ref(&path), None, None, Some(&select), &[])?;
    let s = &suites[0];
    // The selection was counted while the suite was checked: no second read of its cases.
    if s.selected == 0 {
        return Err(CliError::usage(
            format!("`{}` has no case `{}`", path, args.case),
            "pass the id of a case in that suite (a hold-out case is not triaged case by case: its results are reported only as slice pass rates)",
        ));
    }
    if args.k < 2 {
        return Err(CliError::usage(
            "--k must be at least 2 to see a flake",
            "try --k 5",
        ));
    }
    let target = case_target(
        s.suite.target.as_ref(),
        &TargetOverrides {
            target: args.target.clone(),
            config: args.config.clone(),
            base_url: args.base_url.clone(),
            api_key_env: args.api_key_env.clone(),
            ..TargetOverrides::default()
        },
    )?;
    let invocation = Invocation {
        suites: vec![path],
        base_dir: crate::setup::current_dir(),
        target,
        filters,
        shard: None,
        canary: None,
        system_prompt_file: None,
        timeout_ms: None,
        concurrency: 1,
        max_fail: None,
        ..Invocation::default()
    };
    let store = store_location(args.store.store.as_deref(), args.config.as_deref())?;
    let mut req = RunRequest::new("flaky", suites, select, invocation);
    req.origin
        .notes
        .insert("flaky_case".into(), args.case.clone());
    req.trials.k = args.k;
    req.trials.seed = Some(args.seed);
    req.trials.pin_seed = true;
    req.models.judge = args.judge.clone();
    // Judge instability is one of the classes told apart: every trial asks afresh.
    req.models.fresh_judges = true;
    req.models.no_cache = true;
    req.models.config = args.config.clone();
    req.outputs.store = Some(store);
    req.outputs.capture = true;
    req.view = Some(Box::new(TerminalReporter::new(Verbosity::Quiet)));
    let outcome = gauntlet_engine::run(req, &mut show_notice)?;
    print_outcome(&outcome, true)?;
    let Some(result) = outcome.cases.first() else {
        return Err(CliError::Usage("the case did not run".into(), None));
    };
    let refused = |t: &str| gauntlet_graders::refusal::analyze(t).refused;
    let report = classify(&result.trials, &refused);
    let mut out = crate::out::Printer::stdout();
    writeln!(out)?;
    writeln!(
        out,
        "case {}: {} of {} trials passed (pass rate {:.2}); every trace is in the run store",
        args.case, report.passes, report.k, report.pass_rate
    )?;
    writeln!(out, "class: {}", report.class.as_str())?;
    for e in &report.evidence {
        writeln!(out, "  - {e}")?;
    }
    writeln!(out, "action: {}", report.class.action())?;
    if report.class == FlakeClass::AgentNondeterminism && result.case.blocking {
        writeln!(
            out,
            "this is a blocking case: under pass^k the suite FAILs until the agent is consistent"
        )?;
    }
    if report.class != FlakeClass::Stable {
        let today: jiff::civil::Date = jiff::Timestamp::now()
            .strftime("%Y-%m-%d")
            .to_string()
            .parse()
            .expect("a date");
        let expires = today
            .checked_add(jiff::Span::new().days(i64::from(args.days)))
            .unwrap_or(today);
        writeln!(out, "\nquarantine entry (paste into quarantine.yaml):\n")?;
        writeln!(out, "- case: {}", args.case)?;
        writeln!(out, "  first_seen: {today}")?;
        writeln!(out, "  k: {}", report.k)?;
        writeln!(out, "  pass_rate: {:.2}", report.pass_rate)?;
        writeln!(out, "  class: {}", report.class.as_str())?;
        writeln!(out, "  owner: {}", args.owner)?;
        writeln!(out, "  expires: {expires}")?;
        let reason = report
            .evidence
            .first()
            .cloned()
            .unwrap_or_default()
            .replace('"', "'");
        writeln!(out, "  reason: \"{reason}\"")?;
    }
    Ok(0)
}
