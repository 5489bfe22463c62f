//! The dispatcher: [`Runner`], the one place where a run's mutable state lives.
//!
//! It pulls work lazily from the plan, keeps at most `concurrency` trials in flight, gathers
//! each case's trials, and completes the case in one place ([`Dispatch::complete`]: combine
//! the trials, mark quarantine, count, fold into the summary, emit). Executors
//! ([`crate::execute`]) run one trial each and only send their result back; events go out
//! through [`Delivery`]. The end of the run (changed harness files, crashed trials, an
//! interruption, an early stop) is an input of the fold's finish, so every state comes out
//! of one pure function ([`gauntlet_core::score::decide_status`]).
//!
//! A re-grade is a mode of the same loop: its work items carry recorded trials, and a trial
//! is graded again instead of played against a target, with the same concurrency.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use gauntlet_core::cost::{Budget, PriceTable, Spend};
use gauntlet_core::event::{EventKind, Reporter, RunEvent, RunManifest};
use gauntlet_core::grader::Grader;
use gauntlet_core::matrix::{ColumnFolds, Columns};
use gauntlet_core::plan::PlannedCase;
use gauntlet_core::redact::Redactor;
use gauntlet_core::result::{CaseMeta, CaseResult, CaseStatus, Outcome, TrialResult};
use gauntlet_core::score::Stop;
use gauntlet_core::summary::{PackRequirements, RunEnd, Summary, SummaryBuilder};
use gauntlet_core::target::{Target, UserSimulator};
use tokio::task::JoinSet;

use crate::deliver::{Delivery, FLUSH_EVERY};
use crate::execute::{CatchPanic, RefusalProbe, execute, redact_trial, regrade, trial_seed};

/// Run settings.
#[derive(Clone)]
pub struct RunConfig {
    /// Most trials in flight.
    pub concurrency: usize,
    /// Trials per case (a re-grade takes each case's recorded trials instead).
    pub k: u32,
    /// The run seed (trial seeds derive from it).
    pub seed: u64,
    /// Stop scheduling new cases after this many failed cases.
    pub max_fail: Option<usize>,
    /// Refusal detector for turn conditions.
    pub refusal_probe: Option<RefusalProbe>,
    /// Case ids under quarantine: they run, but do not gate.
    pub quarantined: HashSet<String>,
    /// Trials already finished (resume), by case id: folded in instead of run again.
    pub finished: HashMap<String, Vec<TrialResult>>,
    /// Secrets to redact from everything the run records.
    pub redactor: Redactor,
    /// Set to stop scheduling (Ctrl-C); in-flight trials finish.
    pub cancel: Arc<AtomicBool>,
    /// Pack requirements for the state.
    pub packs: PackRequirements,
    /// Give every trial of a case the same seed (flake triage pins its inputs).
    pub pin_seed: bool,
    /// Plays the user for cases with `simulated_user`.
    pub user_simulator: Option<Arc<dyn UserSimulator>>,
    /// Attacker and rewriter models and the converters applied while a trial runs.
    pub helpers: Option<Arc<crate::strategy::Helpers>>,
    /// Called when the last trial has finished, before the state is decided: returns the
    /// harness files that changed during the run, which FAIL it.
    pub integrity: Option<Arc<dyn Fn() -> Vec<String> + Send + Sync>>,
    /// Warnings to record as the run starts (a resume lists the faults of the trials it runs
    /// again, so that they stay on record in the run and its reports).
    pub warnings: Vec<String>,
    /// Facts to add to the state's reasons (a re-grade says where it came from).
    pub notes: Vec<String>,
    /// Prices that turn each trial's token usage into money.
    pub prices: Arc<PriceTable>,
    /// Spending limits: when one is reached no new trial starts (`--max-cost`,
    /// `--max-tokens`), counted over every trial of the run, resumed ones included.
    pub budget: Budget,
    /// A matrix run's columns: each case id names its column
    /// (`gauntlet_core::matrix::SEPARATOR`), each column is folded apart, and the run's
    /// state is the worst column's. `None` for a run of one target.
    pub columns: Option<Columns>,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            concurrency: 8,
            k: 1,
            seed: 0,
            max_fail: None,
            refusal_probe: None,
            quarantined: HashSet::new(),
            finished: HashMap::new(),
            redactor: Redactor::new(),
            cancel: Arc::new(AtomicBool::new(false)),
            packs: PackRequirements::default(),
            pin_seed: false,
            integrity: None,
            user_simulator: None,
            helpers: None,
            warnings: Vec::new(),
            notes: Vec::new(),
            prices: Arc::new(PriceTable::builtin()),
            budget: Budget::default(),
            columns: None,
        }
    }
}

/// One unit of work from the plan.
#[derive(Debug)]
pub enum PlanItem {
    /// A case to run, or (with recorded trials) to grade again.
    Case(CaseJob),
    /// A stored case passed through as it was (a re-grade of a case its suite no longer has).
    Kept(Box<CaseResult>),
}

/// A case and, for a re-grade, the trials recorded for it.
#[derive(Debug)]
pub struct CaseJob {
    /// The case.
    pub planned: PlannedCase,
    /// Recorded trials to grade again, in order (empty for a live run).
    pub recorded: Vec<TrialResult>,
}

impl From<PlannedCase> for PlanItem {
    fn from(planned: PlannedCase) -> PlanItem {
        PlanItem::Case(CaseJob {
            planned,
            recorded: Vec::new(),
        })
    }
}

/// What a finished run returns.
#[derive(Debug)]
pub struct RunOutcome {
    /// The summary.
    pub summary: Summary,
    /// Whether it stopped early.
    pub stop: Stop,
    /// Errors from reporters (a report that could not be written).
    pub reporter_errors: Vec<String>,
}

/// Where trials come from.
#[derive(Clone)]
enum Source {
    /// Played against a target.
    Target(Arc<dyn Target>),
    /// Recorded trials graded again.
    Recorded,
}

/// Runs cases against a target, or grades recorded ones again.
pub struct Runner {
    source: Source,
    grader: Arc<dyn Grader>,
    config: RunConfig,
}

/// A case whose trials are not all in.
struct Pending {
    meta: CaseMeta,
    /// A hold-out case: folded into its slices' pass rates, never emitted.
    holdout: bool,
    trials: Vec<Option<TrialResult>>,
    remaining: usize,
}

/// One trial to start: the case's sequence number, the trial's slot, its index, the case,
/// and (re-grade) the recorded trial.
struct Queued {
    seq: u64,
    slot: usize,
    trial: u32,
    planned: PlannedCase,
    recorded: Option<TrialResult>,
}

/// The run's mutable state, owned by the dispatcher loop.
struct Dispatch<'a> {
    cfg: &'a RunConfig,
    out: Delivery,
    started: Instant,
    fold: SummaryBuilder,
    /// A matrix run's fold per column.
    column_folds: Option<ColumnFolds>,
    failed_cases: usize,
    crashed: usize,
    kept: usize,
    /// What the run's trials spent so far (the budget's measure).
    spent: Spend,
}

/// The trials in flight and the cases still waiting for some of theirs.
struct Window {
    inflight: JoinSet<(u64, usize, TrialResult)>,
    pending: HashMap<u64, Pending>,
    /// Trials of the current case still to start, last first.
    queue: Vec<Queued>,
    next_seq: u64,
    /// Trials per case.
    k: u32,
}

/// What waiting for the next finished trial gave.
// Matched as soon as it is made: boxing the trial would only add an allocation per trial.
#[allow(clippy::large_enum_variant)]
enum Joined {
    Trial(Result<(u64, usize, TrialResult), tokio::task::JoinError>),
    /// Nothing finished in time: fill the window and offer held events again.
    Again,
    /// No trial is in flight.
    AllDone,
}

/// Takes a finished trial without waiting; waits (after handing the held events to the
/// reporters) only when none is ready.
async fn next_finished(
    d: &mut Dispatch<'_>,
    inflight: &mut JoinSet<(u64, usize, TrialResult)>,
) -> Joined {
    if let Some(j) = inflight.try_join_next() {
        return Joined::Trial(j);
    }
    if d.out.offer(false) {
        return match inflight.join_next().await {
            Some(j) => Joined::Trial(j),
            None => Joined::AllDone,
        };
    }
    // Events are still held here (the reporters are behind): wait for the next trial at
    // most FLUSH_EVERY, then offer them again, so that slow trials never keep finished ones
    // from the store.
    match tokio::time::timeout(FLUSH_EVERY, inflight.join_next()).await {
        Ok(Some(j)) => Joined::Trial(j),
        Ok(None) => Joined::AllDone,
        Err(_) => Joined::Again,
    }
}

impl<'a> Dispatch<'a> {
    /// The run's state at its start: the spend of stored trials counted, the run announced
    /// with its warnings.
    fn start(cfg: &'a RunConfig, manifest: RunManifest, reporters: Vec<Box<dyn Reporter>>) -> Self {
        let mut d = Dispatch {
            cfg,
            out: Delivery::start(reporters),
            started: Instant::now(),
            fold: SummaryBuilder::new(),
            column_folds: cfg.columns.clone().map(ColumnFolds::new),
            failed_cases: 0,
            crashed: 0,
            kept: 0,
            spent: Spend::default(),
        };
        for t in cfg.finished.values().flatten() {
            d.spent.add(&t.spend.total());
        }
        d.emit(EventKind::RunStarted {
            manifest: Box::new(manifest),
        });
        for message in &cfg.warnings {
            d.emit(EventKind::Warning {
                message: message.clone(),
            });
        }
        d
    }

    /// A finished trial: priced, counted, announced (with k > 1), and put in its case's
    /// slot; the case completes with its last trial.
    fn trial_in(
        &mut self,
        pending: &mut HashMap<u64, Pending>,
        seq: u64,
        slot: usize,
        mut result: TrialResult,
        emit_trials: bool,
    ) {
        // Priced here, once, for a played trial and a re-graded one alike (a re-grade
        // replaces the judge calls).
        result.price(&self.cfg.prices);
        self.spent.add(&result.spend.total());
        // With one trial per case, `case_finished` carries the trial right away; a
        // separate event would only copy it.
        if emit_trials && !pending[&seq].holdout {
            self.emit(EventKind::TrialFinished {
                trial: Box::new(result.clone()),
            });
        }
        let p = pending.get_mut(&seq).expect("pending case");
        p.trials[slot] = Some(result);
        p.remaining -= 1;
        if p.remaining == 0 {
            let p = pending.remove(&seq).expect("pending case");
            self.complete(p);
        }
    }

    /// Ends the run: checks the harness, folds the summary, announces it and waits for the
    /// reporters.
    fn finish(mut self, stop: Stop) -> RunOutcome {
        let cfg = self.cfg;
        let end = RunEnd {
            stop,
            harness_changed: cfg
                .integrity
                .as_ref()
                .map(|check| check())
                .unwrap_or_default(),
            crashed: self.crashed,
            kept: self.kept,
            notes: cfg.notes.clone(),
        };
        let elapsed = self.started.elapsed().as_millis() as u64;
        let mut summary = self.fold.finish(&cfg.packs, &end, elapsed);
        if let Some(c) = &self.column_folds {
            c.finish(&cfg.packs, &end, elapsed, &mut summary);
        }
        self.emit(EventKind::RunFinished {
            summary: Box::new(summary.clone()),
            finished_at: jiff::Timestamp::now().to_string(),
        });
        let reporter_errors = self.out.finish();
        RunOutcome {
            summary,
            stop,
            reporter_errors,
        }
    }

    fn emit(&mut self, kind: EventKind) {
        self.out.push(RunEvent::new(
            self.started.elapsed().as_millis() as u64,
            kind,
        ));
    }

    /// The one place a case completes: its trials combine, quarantine applies, it is
    /// counted and folded, and its event goes out. A hold-out case stops here: only its
    /// slices' counts keep anything of it, so no reporter, store or page can show its input
    /// or answers.
    fn complete(&mut self, p: Pending) {
        let trials = p.trials.into_iter().flatten().collect();
        let mut result = CaseResult::combine(p.meta, trials);
        // A case is quarantined by its own id, in every column of a matrix run (a re-grade
        // carries the stored run's quarantined ids, column and all).
        let own_id = match &self.cfg.columns {
            Some(c) => c
                .of(&result.case.id)
                .map_or(result.case.id.as_str(), |(_, id)| id),
            None => result.case.id.as_str(),
        };
        result.quarantined =
            self.cfg.quarantined.contains(own_id) || self.cfg.quarantined.contains(&result.case.id);
        if p.holdout {
            self.fold.add_holdout(&result);
            if let Some(c) = &mut self.column_folds {
                c.add_holdout(&result);
            }
            return;
        }
        self.finish_case(result);
    }

    /// A stored case passed through unchanged.
    fn keep(&mut self, result: CaseResult) {
        self.kept += 1;
        self.finish_case(result);
    }

    fn finish_case(&mut self, result: CaseResult) {
        if result.status == CaseStatus::Fail && !result.quarantined {
            self.failed_cases += 1;
        }
        self.fold.add(&result);
        if let Some(c) = &mut self.column_folds {
            c.add(&result);
        }
        self.emit(EventKind::CaseFinished {
            result: Box::new(result),
        });
    }
}

impl Runner {
    /// A runner that plays cases against a target and grades them.
    pub fn new(target: Arc<dyn Target>, grader: Arc<dyn Grader>, config: RunConfig) -> Self {
        Runner {
            source: Source::Target(target),
            grader,
            config,
        }
    }

    /// A runner that grades recorded trials again (the plan's items carry them): no target
    /// is called.
    pub fn regrade(grader: Arc<dyn Grader>, config: RunConfig) -> Self {
        Runner {
            source: Source::Recorded,
            grader,
            config,
        }
    }

    /// Runs the plan, streaming events to the reporters (in this order, on their own thread).
    pub async fn run(
        self,
        manifest: RunManifest,
        plan: impl Iterator<Item = PlanItem> + Send,
        reporters: Vec<Box<dyn Reporter>>,
    ) -> RunOutcome {
        let cfg = &self.config;
        let emit_trials = manifest.k > 1;
        let mut d = Dispatch::start(cfg, manifest, reporters);
        let mut w = Window {
            inflight: JoinSet::new(),
            pending: HashMap::new(),
            queue: Vec::new(),
            next_seq: 0,
            k: cfg.k.max(1),
        };
        let mut plan = plan.peekable();
        let mut stop = Stop::Completed;
        loop {
            if let Some(s) = self.fill_window(&mut d, &mut w, &mut plan) {
                stop = s;
            }
            let joined = match next_finished(&mut d, &mut w.inflight).await {
                Joined::Trial(j) => j,
                Joined::Again => continue,
                Joined::AllDone => break,
            };
            let (seq, slot, result) = match joined {
                Ok(x) => x,
                Err(e) => {
                    // The task failed outside the trial (panics inside it are caught, see
                    // `CatchPanic`). Its case cannot finish; the state says so.
                    d.crashed += 1;
                    d.emit(EventKind::Warning {
                        message: format!("a trial crashed inside gauntlet: {e}"),
                    });
                    continue;
                }
            };
            d.trial_in(&mut w.pending, seq, slot, result, emit_trials);
        }
        if stop == Stop::Completed && plan.peek().is_some() {
            stop = if cfg.cancel.load(Ordering::Relaxed) {
                Stop::Cancelled
            } else if let Some(b) = cfg.budget.reached(&d.spent) {
                Stop::Budget(b)
            } else {
                Stop::MaxFail(d.failed_cases)
            };
        }
        d.finish(stop)
    }

    /// Starts trials until the window is full, the plan is spent or the run must stop
    /// (cancelled, max-fail, budget), which it returns. Stored cases pass through, and
    /// cases whose every trial is stored (resume) complete without running.
    fn fill_window(
        &self,
        d: &mut Dispatch<'_>,
        w: &mut Window,
        plan: &mut impl Iterator<Item = PlanItem>,
    ) -> Option<Stop> {
        let cfg = d.cfg;
        while w.inflight.len() < cfg.concurrency.max(1) {
            if cfg.cancel.load(Ordering::Relaxed) {
                return Some(Stop::Cancelled);
            }
            if cfg.max_fail.is_some_and(|m| d.failed_cases >= m) {
                return Some(Stop::MaxFail(d.failed_cases));
            }
            if let Some(b) = cfg.budget.reached(&d.spent) {
                return Some(Stop::Budget(b));
            }
            if w.queue.is_empty() {
                let Some(item) = plan.next() else { break };
                let job = match item {
                    PlanItem::Kept(result) => {
                        d.keep(*result);
                        continue;
                    }
                    PlanItem::Case(job) => job,
                };
                let seq = w.next_seq;
                w.next_seq += 1;
                let Some(p) = self.schedule(seq, job, w.k, &mut w.queue) else {
                    continue;
                };
                // Every trial was already stored (resume): fold it without running.
                if p.remaining == 0 {
                    d.complete(p);
                    continue;
                }
                w.pending.insert(seq, p);
            }
            let Some(q) = w.queue.pop() else {
                break;
            };
            self.spawn(&mut w.inflight, q);
        }
        None
    }

    /// Queues a case's trials (last first) and returns its pending record; trials already
    /// stored (resume) fill their slots without running. `None`: nothing to run or fold.
    fn schedule(&self, seq: u64, job: CaseJob, k: u32, queue: &mut Vec<Queued>) -> Option<Pending> {
        let CaseJob { planned, recorded } = job;
        let meta = CaseMeta::of(&planned.case, &planned.suite);
        if matches!(self.source, Source::Recorded) {
            if recorded.is_empty() {
                return None;
            }
            let n = recorded.len();
            for (slot, t) in recorded.into_iter().enumerate().rev() {
                queue.push(Queued {
                    seq,
                    slot,
                    trial: t.trial,
                    planned: planned.clone(),
                    recorded: Some(t),
                });
            }
            return Some(Pending {
                meta,
                holdout: planned.case.holdout,
                trials: (0..n).map(|_| None).collect(),
                remaining: n,
            });
        }
        let mut slots: Vec<Option<TrialResult>> = (0..k).map(|_| None).collect();
        if let Some(done) = self.config.finished.get(&planned.case.id) {
            for t in done {
                if let Some(slot) = slots.get_mut(t.trial as usize) {
                    *slot = Some(t.clone());
                }
            }
        }
        let todo: Vec<u32> = (0..k).filter(|i| slots[*i as usize].is_none()).collect();
        for t in todo.iter().rev() {
            queue.push(Queued {
                seq,
                slot: *t as usize,
                trial: *t,
                planned: planned.clone(),
                recorded: None,
            });
        }
        Some(Pending {
            meta,
            holdout: planned.case.holdout,
            trials: slots,
            remaining: todo.len(),
        })
    }

    /// Starts one trial on the runtime.
    fn spawn(&self, inflight: &mut JoinSet<(u64, usize, TrialResult)>, q: Queued) {
        let cfg = &self.config;
        let grader = Arc::clone(&self.grader);
        let source = self.source.clone();
        let probe = cfg.refusal_probe.clone();
        let seed = trial_seed(
            cfg.seed,
            &q.planned.case.id,
            if cfg.pin_seed { 0 } else { q.trial },
        );
        let redactor = cfg.redactor.clone();
        let user = cfg.user_simulator.clone();
        let helpers = cfg.helpers.clone();
        inflight.spawn(async move {
            let started = Instant::now();
            let Queued {
                seq,
                slot,
                trial,
                planned,
                recorded,
            } = q;
            let played = match (&source, recorded) {
                (Source::Target(target), _) => {
                    CatchPanic(Box::pin(execute(
                        &redactor,
                        &**target,
                        &*grader,
                        &planned,
                        trial,
                        seed,
                        probe.as_ref(),
                        user.as_deref(),
                        helpers.as_deref(),
                    )))
                    .await
                }
                (Source::Recorded, Some(t)) => {
                    CatchPanic(Box::pin(regrade(&*grader, &planned, t))).await
                }
                (Source::Recorded, None) => Err("a re-grade trial without its recording".into()),
            };
            // A panic inside gauntlet (a grader, an adapter) is a harness fault: the trial is
            // recorded as an error, so its case is reported and the run cannot pass on
            // missing evidence.
            let mut r = played.unwrap_or_else(|msg| {
                TrialResult::new(
                    &planned.case,
                    trial,
                    Outcome::Error,
                    gauntlet_core::trace::Trace::default(),
                    Vec::new(),
                    Some(format!(
                        "gauntlet crashed in this trial (a harness bug): {msg}"
                    )),
                    started.elapsed().as_millis() as u64,
                )
            });
            redact_trial(&redactor, &mut r);
            (seq, slot, r)
        });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use gauntlet_core::event::ReportError;
    use gauntlet_core::grader::GradeContext;
    use gauntlet_core::plan::SuiteContext;
    use gauntlet_core::score::Status;
    use gauntlet_core::suite::Case;
    use gauntlet_core::target::{
        BoxFuture, Session, TargetError, TargetInfo, ToolHost, TrialContext, TurnAnswer,
    };
    use gauntlet_core::trace::TraceRecorder;
    use gauntlet_core::verdict::{Dimension, Verdict};

    use super::*;

    /// How long a dispatcher test may wait before it is considered hung.
    const TEST_LIMIT: Duration = Duration::from_secs(60);

    /// Answers every turn at once with the user's words.
    struct Echo;

    struct EchoSession;

    impl Target for Echo {
        fn info(&self) -> TargetInfo {
            TargetInfo {
                kind: "echo".into(),
                label: "echo".into(),
                ..TargetInfo::default()
            }
        }

        fn open<'a>(
            &'a self,
            _ctx: &'a TrialContext<'a>,
        ) -> BoxFuture<'a, Result<Box<dyn Session + 'a>, TargetError>> {
            Box::pin(async { Ok(Box::new(EchoSession) as Box<dyn Session>) })
        }
    }

    impl Session for EchoSession {
        fn turn<'a>(
            &'a mut self,
            user: &'a str,
            _tools: &'a mut dyn ToolHost,
            _rec: &'a mut TraceRecorder,
        ) -> BoxFuture<'a, Result<TurnAnswer, TargetError>> {
            Box::pin(async move {
                Ok(TurnAnswer {
                    content: user.to_owned(),
                    truncated: false,
                })
            })
        }
    }

    /// Passes an answer that contains "hello", fails any other.
    struct SaysHello;

    impl Grader for SaysHello {
        fn grade<'a>(&'a self, ctx: GradeContext<'a>) -> BoxFuture<'a, Vec<Verdict>> {
            Box::pin(async move {
                let said = ctx.trace.final_answer().to_owned();
                vec![if said.contains("hello") {
                    Verdict::pass("contains", "hello".into(), Dimension::Outcome, said)
                } else {
                    Verdict::fail("contains", "hello".into(), Dimension::Outcome, 0, said)
                }]
            })
        }
    }

    /// A reporter far slower than the trials: it records what it sees.
    struct Slow(Arc<Mutex<Vec<String>>>);

    impl Reporter for Slow {
        fn on_event(&mut self, ev: &RunEvent) -> Result<(), ReportError> {
            std::thread::sleep(Duration::from_micros(50));
            let name = match &ev.kind {
                EventKind::RunStarted { .. } => "started".to_owned(),
                EventKind::CaseFinished { result } => {
                    format!("{} {}", result.case.id, result.status.as_str())
                }
                EventKind::RunFinished { summary, .. } => format!("finished {}", summary.status),
                _ => return Ok(()),
            };
            self.0.lock().expect("lock").push(name);
            Ok(())
        }
    }

    fn plan(n: usize, input: &'static str) -> impl Iterator<Item = PlanItem> + Send {
        let suite = Arc::new(SuiteContext {
            name: "s".into(),
            default_blocking: true,
            ..SuiteContext::default()
        });
        (0..n).map(move |i| {
            let case: Case = serde_json::from_value(serde_json::json!({
                "id": format!("case-{i:04}"), "input": input
            }))
            .expect("case");
            PlanItem::from(PlannedCase {
                suite: Arc::clone(&suite),
                case: Arc::new(case),
            })
        })
    }

    fn manifest(n: usize) -> RunManifest {
        serde_json::from_value(serde_json::json!({
            "schema_version": 1, "run_id": "r", "gauntlet_version": "0", "started_at": "t",
            "command": "run", "suites": [], "target": {"kind": "echo", "label": "echo"},
            "k": 1, "seed": 0, "planned_cases": n, "evidence_level": "online",
            "side_effects": "simulated", "dataset_revision": "-"
        }))
        .expect("manifest")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_slow_reporter_gets_every_event_in_order_and_loses_none() {
        const CASES: usize = 3000;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let runner = Runner::new(
            Arc::new(Echo),
            Arc::new(SaysHello),
            RunConfig {
                concurrency: 64,
                ..RunConfig::default()
            },
        );
        let out = tokio::time::timeout(
            TEST_LIMIT,
            runner.run(
                manifest(CASES),
                plan(CASES, "hello"),
                vec![Box::new(Slow(Arc::clone(&seen)))],
            ),
        )
        .await
        .expect("the run finishes");
        assert_eq!(out.stop, Stop::Completed);
        assert!(out.reporter_errors.is_empty(), "{:?}", out.reporter_errors);
        let seen = seen.lock().expect("lock");
        // The dispatcher outruns the reporter by far, so the channel is full most of the
        // time and events wait in the dispatcher's batch: none may be lost, repeated or
        // reordered around the start and the end.
        assert_eq!(seen.len(), CASES + 2);
        assert_eq!(seen[0], "started");
        assert_eq!(seen[CASES + 1], "finished PASS");
        let ids: HashSet<&String> = seen[1..=CASES].iter().collect();
        assert_eq!(ids.len(), CASES, "every case exactly once");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_regrade_grades_recorded_trials_without_the_target_and_keeps_the_rest() {
        // Record a run whose answers say "bye": every case fails.
        let seen = Arc::new(Mutex::new(Vec::new()));
        let recorded: Arc<Mutex<Vec<CaseResult>>> = Arc::new(Mutex::new(Vec::new()));
        struct Keep(Arc<Mutex<Vec<CaseResult>>>);
        impl Reporter for Keep {
            fn on_event(&mut self, ev: &RunEvent) -> Result<(), ReportError> {
                if let EventKind::CaseFinished { result } = &ev.kind {
                    self.0.lock().expect("lock").push((**result).clone());
                }
                Ok(())
            }
        }
        let out = Runner::new(Arc::new(Echo), Arc::new(SaysHello), RunConfig::default())
            .run(
                manifest(20),
                plan(20, "bye"),
                vec![Box::new(Keep(Arc::clone(&recorded)))],
            )
            .await;
        assert_eq!(out.summary.status, Status::Fail);
        // Regrade with a grader that now accepts anything: every trace is graded again from
        // the recording, in a window of 4, and one stored case is kept as it was.
        struct Lenient;
        impl Grader for Lenient {
            fn grade<'a>(&'a self, _ctx: GradeContext<'a>) -> BoxFuture<'a, Vec<Verdict>> {
                Box::pin(async {
                    vec![Verdict::pass(
                        "x",
                        "x".into(),
                        Dimension::Outcome,
                        String::new(),
                    )]
                })
            }
        }
        let mut cases = recorded.lock().expect("lock").clone();
        let kept = cases.pop().expect("a case");
        let suite = Arc::new(SuiteContext {
            name: "s".into(),
            default_blocking: true,
            ..SuiteContext::default()
        });
        let mut items: Vec<PlanItem> = cases
            .into_iter()
            .map(|c| {
                let case: Case =
                    serde_json::from_value(serde_json::json!({"id": c.case.id, "input": "bye"}))
                        .expect("case");
                PlanItem::Case(CaseJob {
                    planned: PlannedCase {
                        suite: Arc::clone(&suite),
                        case: Arc::new(case),
                    },
                    recorded: c.trials,
                })
            })
            .collect();
        items.push(PlanItem::Kept(Box::new(kept)));
        let out = Runner::regrade(
            Arc::new(Lenient),
            RunConfig {
                concurrency: 4,
                notes: vec!["regraded from run r".into()],
                ..RunConfig::default()
            },
        )
        .run(
            manifest(20),
            items.into_iter(),
            vec![Box::new(Slow(Arc::clone(&seen)))],
        )
        .await;
        // 19 regraded cases pass, the kept one still fails: the state is FAIL, and says
        // what was kept and where the run came from.
        assert_eq!((out.summary.passed, out.summary.failed), (19, 1));
        assert_eq!(out.summary.status, Status::Fail);
        assert_eq!(
            &out.summary.reasons[1..],
            [
                "1 case(s) are no longer in the suite and keep their stored results",
                "regraded from run r"
            ]
        );
        assert_eq!(seen.lock().expect("lock").len(), 22);
    }

    #[tokio::test]
    async fn a_cancelled_run_is_inconclusive_and_changed_files_fail_it() {
        let cancel = Arc::new(AtomicBool::new(true));
        let out = Runner::new(
            Arc::new(Echo),
            Arc::new(SaysHello),
            RunConfig {
                cancel,
                ..RunConfig::default()
            },
        )
        .run(manifest(5), plan(5, "hello"), Vec::new())
        .await;
        assert_eq!(out.stop, Stop::Cancelled);
        assert_eq!(out.summary.status, Status::Inconclusive);
        assert_eq!(
            out.summary.reasons,
            [
                "no case was scored",
                "the run was interrupted before every case ran"
            ]
        );
        let out = Runner::new(
            Arc::new(Echo),
            Arc::new(SaysHello),
            RunConfig {
                integrity: Some(Arc::new(|| vec!["suite.yaml".to_owned()])),
                ..RunConfig::default()
            },
        )
        .run(manifest(5), plan(5, "hello"), Vec::new())
        .await;
        assert_eq!(out.summary.status, Status::Fail);
        assert_eq!(
            out.summary.reasons[0],
            "harness files changed during the run: suite.yaml"
        );
    }

    /// Quotes the answer in its evidence cut to 40 characters, as oracles do.
    struct QuotesTheAnswer;

    impl Grader for QuotesTheAnswer {
        fn grade<'a>(&'a self, ctx: GradeContext<'a>) -> BoxFuture<'a, Vec<Verdict>> {
            Box::pin(async move {
                let said = gauntlet_core::text::clip(ctx.trace.final_answer(), 40);
                vec![Verdict::fail(
                    "contains",
                    "x".into(),
                    Dimension::Outcome,
                    0,
                    said,
                )]
            })
        }
    }

    /// Keeps every finished case, serialized.
    struct Keeps(Arc<Mutex<String>>);

    impl Reporter for Keeps {
        fn on_event(&mut self, ev: &RunEvent) -> Result<(), ReportError> {
            if let EventKind::CaseFinished { result } = &ev.kind {
                let text = serde_json::to_string(result).expect("serializes");
                self.0.lock().expect("lock").push_str(&text);
            }
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_secret_the_graders_cut_in_their_evidence_is_redacted_first() {
        const KEY: &str = "sk-live-0123456789abcdefghij";
        let mut redactor = Redactor::new();
        redactor.add("API_KEY", KEY);
        // The echoed answer puts the key across the grader's 40-character cut, for every
        // offset of the cut inside the key.
        for pad in 40 - KEY.len() + 1..40 {
            let input: &'static str =
                Box::leak(format!("{}{KEY} and the rest", "a".repeat(pad)).into_boxed_str());
            let kept = Arc::new(Mutex::new(String::new()));
            let runner = Runner::new(
                Arc::new(Echo),
                Arc::new(QuotesTheAnswer),
                RunConfig {
                    redactor: redactor.clone(),
                    ..RunConfig::default()
                },
            );
            tokio::time::timeout(
                TEST_LIMIT,
                runner.run(
                    manifest(1),
                    plan(1, input),
                    vec![Box::new(Keeps(Arc::clone(&kept)))],
                ),
            )
            .await
            .expect("the run finishes");
            let kept = kept.lock().expect("lock");
            assert!(kept.contains("[REDACTED:API_KEY]"), "{kept}");
            let k: Vec<char> = KEY.chars().collect();
            for w in k.windows(8) {
                let part: String = w.iter().collect();
                assert!(
                    !kept.contains(&part),
                    "{part:?} survived at pad {pad}: {kept}"
                );
            }
        }
    }
}
