//! `gauntlet audit`'s work: [`audit`] takes an [`AuditRequest`] and returns an
//! [`AuditReport`]. It runs every case against the trivial agents of [`TrivialAgent`] (an
//! empty answer, an echo, refuse-everything, comply-with-everything, call-every-tool) and
//! flags every case one of them passes (cases played by an attacker, a tree of attacks
//! among them, against the scripted attacker), then adds the checklist items a program can check
//! without an agent ([`gauntlet_suite::audit::lint`]). The binary prints the report.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use gauntlet_core::cache::MemoryCache;
use gauntlet_core::event::{EventKind, ReportError, Reporter, RunEvent};
use gauntlet_core::grader::Grader;
use gauntlet_core::redact::Redactor;
use gauntlet_core::result::CaseStatus;
use gauntlet_core::target::Target;
use gauntlet_graders::OracleGrader;
use gauntlet_runner::{PlanItem, ProcessScripts, RunConfig, Runner};
use gauntlet_suite::audit::{AuditFinding, Severity, lint};
use gauntlet_suite::filter::Selection;
use gauntlet_suite::{ManifestFacts, Plan, PlanSettings};
use gauntlet_targets::audit::TrivialAgent;
use gauntlet_targets::chat::ChatTarget;

use crate::VERSION;
use crate::error::EngineError;
use crate::setup::{load_all, runtime};

/// What to audit.
#[derive(Debug, Clone, Default)]
pub struct AuditRequest {
    /// Suite files (or `builtin:...`).
    pub suites: Vec<String>,
    /// The run's canary, as `--canary` gives it.
    pub canary: Option<String>,
    /// Folders outside the suites' own that their files may come from.
    pub allow_paths: Vec<PathBuf>,
    /// The embeddings model of `similar:` checks (`--embeddings`).
    pub embeddings: Option<String>,
    /// `gauntlet.yaml`, for a named embeddings target.
    pub config: Option<PathBuf>,
}

/// What the audit found.
#[derive(Debug, Clone)]
pub struct AuditReport {
    /// The cases audited.
    pub cases: usize,
    /// The trivial agents every case was run against.
    pub agents: Vec<&'static str>,
    /// The findings in suite order, weak ones first within a case.
    pub findings: Vec<AuditFinding>,
}

impl AuditReport {
    /// Findings that make a case weak (a trivial agent passes it).
    pub fn weak(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Weak)
            .count()
    }

    /// Cases with at least one finding.
    pub fn flagged(&self) -> usize {
        let cases: BTreeSet<&str> = self.findings.iter().map(|f| f.case.as_str()).collect();
        cases.len()
    }

    /// The state and exit code, by the state model: a weak case FAILs (1), warnings alone
    /// make it CONDITIONAL (3), none is a PASS (0).
    pub fn status(&self) -> (&'static str, i32) {
        if self.weak() > 0 {
            ("FAIL", 1)
        } else if !self.findings.is_empty() {
            ("CONDITIONAL", 3)
        } else {
            ("PASS", 0)
        }
    }
}

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

/// Audits the suites: every case held to the trivial agents, security cases included (a
/// security case whose checks only look for violations is passed by an agent that answers
/// nothing, and a non-answer is not a defence: such a case needs a check on the legitimate
/// task its attack hides in), plus the checklist items.
pub fn audit(req: &AuditRequest) -> Result<AuditReport, EngineError> {
    let suites = load_all(
        &req.suites,
        req.canary.as_deref(),
        None,
        None,
        &req.allow_paths,
    )?;
    let embeddings = crate::embeddings::embeddings(
        &suites,
        req.embeddings.as_deref(),
        req.config.as_deref(),
        Some(Arc::new(MemoryCache::new())),
        &mut Redactor::new(),
    )?;
    let plan = Plan::new(
        suites,
        Selection::default(),
        PlanSettings {
            canary: req.canary.as_deref(),
            ..PlanSettings::default()
        },
    );
    let mut findings = Vec::new();
    let mut seen = HashMap::new();
    let mut order = Vec::new();
    for pc in plan.cases() {
        order.push(pc.case.id.clone());
        findings.extend(lint(&pc.case, &pc.suite, &mut seen));
    }
    // Scripts run as in a real run, and `similar:` checks ask the embeddings model: every
    // check must be able to fail too.
    let mut oracles = OracleGrader::new().with_scripts(Arc::new(ProcessScripts::default()));
    if let Some(e) = embeddings {
        oracles = oracles.with_embeddings(e);
    }
    let passed_by = trivial_passes(&plan, Arc::new(oracles))?;
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
    Ok(AuditReport {
        cases: order.len(),
        agents: TrivialAgent::ALL.map(TrivialAgent::as_str).to_vec(),
        findings,
    })
}

/// The scripted attacker and rewriter (`fake:attacker`, `fake:rewriter`): a case played by
/// an attacker (an attacker or a tree strategy) or rewritten by a model converter is played
/// against each trivial agent too, instead of ending in error for want of a model (an error
/// passes nothing, so a weak case would go unflagged).
fn scripted_helpers() -> Result<Arc<gauntlet_runner::Helpers>, EngineError> {
    let spec = |s: &str| {
        gauntlet_core::target::TargetConfig::parse(s).map_err(|e| EngineError::plain(e.to_string()))
    };
    let inv = gauntlet_core::event::Invocation {
        attacker: Some(spec("fake:attacker")?),
        rewriter: Some(spec("fake:rewriter")?),
        ..Default::default()
    };
    crate::run::helpers(&inv, 0, &mut Redactor::new(), None)
}

/// Runs the plan against each trivial agent; which agents pass each case.
fn trivial_passes(
    plan: &Plan,
    grader: Arc<dyn Grader>,
) -> Result<BTreeMap<String, Vec<&'static str>>, EngineError> {
    let mut passed_by: BTreeMap<String, Vec<&'static str>> = BTreeMap::new();
    let rt = runtime()?;
    let helpers = scripted_helpers()?;
    for agent in TrivialAgent::ALL {
        let statuses = Arc::new(Mutex::new(HashMap::new()));
        let target = Arc::new(ChatTarget::new(agent));
        let manifest = plan.manifest(ManifestFacts {
            run_id: format!("audit-{}", agent.as_str().replace(' ', "-")),
            gauntlet_version: VERSION.into(),
            started_at: jiff::Timestamp::now().to_string(),
            command: "audit".into(),
            target: Target::info(&*target),
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
            helpers: Some(Arc::clone(&helpers)),
            ..RunConfig::default()
        };
        let outcome = rt.block_on(Runner::new(target, Arc::clone(&grader), config).run(
            manifest,
            plan.cases().map(PlanItem::from),
            vec![Box::new(Statuses(Arc::clone(&statuses)))],
        ));
        if !outcome.reporter_errors.is_empty() {
            return Err(EngineError::plain(outcome.reporter_errors.join("; ")));
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
    Ok(passed_by)
}
