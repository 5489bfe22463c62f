//! `gauntlet audit SUITE`: are the suite's checks able to fail? Runs every case against the
//! trivial agents of [`TrivialAgent`] (an empty answer, an echo, refuse-everything,
//! comply-with-everything, call-every-tool) and flags every case one of them passes, then
//! adds the checklist items a program can check without an agent
//! ([`gauntlet_suite::audit::lint`]). Exit codes follow the state model: 0 clean, 1 a weak
//! case, 3 warnings only, 2 a bad suite.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::sync::{Arc, Mutex};

use gauntlet_core::event::{EventKind, ReportError, Reporter, RunEvent};
use gauntlet_core::result::CaseStatus;
use gauntlet_graders::OracleGrader;
use gauntlet_runner::{PlanItem, RunConfig, Runner};
use gauntlet_suite::audit::{AuditFinding, Severity, lint};
use gauntlet_suite::filter::Selection;
use gauntlet_suite::{ManifestFacts, Plan, PlanSettings};
use gauntlet_targets::audit::TrivialAgent;
use gauntlet_targets::chat::ChatTarget;

use crate::cli::AuditArgs;
use crate::error::CliError;
use crate::out::Printer;
use crate::setup::{load_all, runtime};
use gauntlet_engine::VERSION;

/// Keeps each case's status (a few bytes per case).
struct Statuses(Arc<Mutex<HashMap<String, CaseStatus>>>);

impl Reporter for Statuses {
    fn on_event(&mut self, ev: &RunEvent) -> Result<(), ReportError> {
        if let EventKind::CaseFinished { result } = &ev.kind {
            self.0
                .lock()
                .expect("lock")
                .insert(result.case.id.clone(), result.status);
        }
        Ok(())
    }
}

pub fn audit(args: AuditArgs) -> Result<i32, CliError> {
    let paths: Vec<String> = args
        .suites
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let suites = load_all(&paths, args.canary.as_deref(), None, None, &args.allow_path)?;
    let embeddings = gauntlet_engine::embeddings::embeddings(
        &suites,
        args.embeddings.as_deref(),
        args.config.as_deref(),
        Some(Arc::new(gauntlet_core::cache::MemoryCache::new())),
        &mut gauntlet_core::redact::Redactor::new(),
    )?;
    let plan = Plan::new(
        suites,
        Selection::default(),
        PlanSettings {
            canary: args.canary.as_deref(),
            ..PlanSettings::default()
        },
    );
    let mut findings: Vec<AuditFinding> = Vec::new();
    let mut seen = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    // Every case is held to the trivial agents, security cases included: a security case
    // whose checks only look for violations is passed by an agent that answers nothing, and
    // a non-answer is not a defence. Such a case needs a check on the legitimate task its
    // attack hides in.
    for pc in plan.cases() {
        order.push(pc.case.id.clone());
        findings.extend(lint(&pc.case, &pc.suite, &mut seen));
    }
    // Which trivial agents pass each case.
    let mut passed_by: BTreeMap<String, Vec<&'static str>> = BTreeMap::new();
    let rt = runtime()?;
    // Scripts run as in a real run, and `similar:` checks ask the embeddings model: every
    // check must be able to fail too.
    let mut oracles =
        OracleGrader::new().with_scripts(Arc::new(gauntlet_runner::ProcessScripts::default()));
    if let Some(e) = embeddings {
        oracles = oracles.with_embeddings(e);
    }
    let grader: Arc<dyn gauntlet_core::grader::Grader> = Arc::new(oracles);
    for agent in TrivialAgent::ALL {
        let statuses = Arc::new(Mutex::new(HashMap::new()));
        let target = Arc::new(ChatTarget::new(agent));
        let manifest = plan.manifest(ManifestFacts {
            run_id: format!("audit-{}", agent.as_str().replace(' ', "-")),
            gauntlet_version: VERSION.into(),
            started_at: jiff::Timestamp::now().to_string(),
            command: "audit".into(),
            target: gauntlet_core::target::Target::info(&*target),
            k: 1,
            seed: 0,
            judge: None,
            notes: Default::default(),
            invocation: None,
            shard_run: None,
        });
        let config = RunConfig {
            concurrency: 16,
            packs: plan.packs().clone(),
            ..RunConfig::default()
        };
        let outcome = rt.block_on(Runner::new(target, Arc::clone(&grader), config).run(
            manifest,
            plan.cases().map(PlanItem::from),
            vec![Box::new(Statuses(Arc::clone(&statuses)))],
        ));
        if !outcome.reporter_errors.is_empty() {
            return Err(CliError::plain(outcome.reporter_errors.join("; ")));
        }
        for (id, status) in statuses.lock().expect("lock").iter() {
            if *status == CaseStatus::Pass {
                passed_by
                    .entry(id.clone())
                    .or_default()
                    .push(agent.as_str());
            }
        }
    }
    for (id, agents) in &passed_by {
        findings.push(AuditFinding {
            case: id.clone(),
            severity: Severity::Weak,
            item: "passed by an agent that knows nothing",
            detail: format!(
                "passes against: {}; its checks cannot tell a good agent from a trivial one",
                agents.join(", ")
            ),
        });
    }
    // Report in suite order, weak findings first within a case.
    let pos: HashMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    findings.sort_by_key(|f| {
        (
            pos.get(f.case.as_str()).copied().unwrap_or(usize::MAX),
            f.severity,
        )
    });
    let weak = findings
        .iter()
        .filter(|f| f.severity == Severity::Weak)
        .count();
    let warnings = findings.len() - weak;
    let flagged: std::collections::BTreeSet<&str> =
        findings.iter().map(|f| f.case.as_str()).collect();
    let mut out = Printer::stdout();
    writeln!(
        out,
        "audit of {} case(s) against {} trivial agents ({})",
        order.len(),
        TrivialAgent::ALL.len(),
        TrivialAgent::ALL.map(TrivialAgent::as_str).join(", ")
    )?;
    for f in &findings {
        let mark = match f.severity {
            Severity::Weak => "WEAK",
            Severity::Warning => "warning",
        };
        writeln!(out, "{mark:>8} {}: {}: {}", f.case, f.item, f.detail)?;
    }
    let (status, code) = if weak > 0 {
        ("FAIL", 1)
    } else if warnings > 0 {
        ("CONDITIONAL", 3)
    } else {
        ("PASS", 0)
    };
    writeln!(
        out,
        "{} case(s) flagged: {weak} weak, {warnings} warning(s); {} case(s) clean. Status {status} (exit {code})",
        flagged.len(),
        order.len() - flagged.len()
    )?;
    Ok(code)
}
