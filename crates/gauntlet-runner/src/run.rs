//! The dispatcher and the executor: [`Runner`].
//!
//! One dispatcher task owns the run's mutable state: it pulls cases lazily from the plan,
//! keeps at most `concurrency` trials in flight, collects each case's k trials, folds results
//! into the summary and emits events in order. Executors run one trial each (open a session,
//! play the turns, grade the trace) and only send their result back. Reporters run on their
//! own thread behind a bounded channel, so slow disks apply back-pressure instead of memory
//! (the dispatcher keeps gathering events while the channel is full and waits only once it
//! holds a full batch); they flush (the store commits) at most [`FLUSH_EVERY`] after the
//! first unflushed event.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::TrySendError;
use std::time::{Duration, Instant};

use gauntlet_core::event::{EventKind, Reporter, RunEvent, RunManifest};
use gauntlet_core::grader::{GradeContext, Grader};
use gauntlet_core::redact::Redactor;
use gauntlet_core::result::{CaseMeta, CaseResult, Outcome, TrialResult};
use gauntlet_core::suite::{Case, TurnCondition};
use gauntlet_core::summary::{PackRequirements, Summary, SummaryBuilder};
use gauntlet_core::target::{Target, TargetError, TrialContext};
use gauntlet_core::tools::ToolDef;
use gauntlet_core::trace::{TraceRecorder, TransportKind};
use tokio::task::JoinSet;

use crate::tools::SimTools;

/// Per-trial time limit when neither the case nor the suite sets one.
pub const DEFAULT_TRIAL_TIMEOUT_MS: u64 = 120_000;

/// How long reporters may hold events before flushing (the store: before committing). A
/// finished trial is durable at most this long after it finished, unless the reporters are
/// behind (a slow disk): then it waits with the dispatcher, which offers it again this often.
pub const FLUSH_EVERY: Duration = Duration::from_millis(25);

/// Batches of events the reporter thread's channel holds.
const CHANNEL_BATCHES: usize = 4;

/// Events the dispatcher gathers before a batch must be handed over (waiting if need be).
const BATCH_MAX: usize = 256;

/// What every case of one suite shares.
#[derive(Debug, Clone, Default)]
pub struct SuiteContext {
    /// The suite's name.
    pub name: String,
    /// The system prompt in force.
    pub system_prompt: Option<String>,
    /// The canary in force (the agent's, else the run's).
    pub canary: Option<String>,
    /// The agent's tools.
    pub tools: Vec<ToolDef>,
    /// Whether cases gate the suite by default.
    pub default_blocking: bool,
    /// Default per-trial time limit.
    pub timeout_ms: Option<u64>,
}

/// One case to run.
#[derive(Debug, Clone)]
pub struct PlannedCase {
    /// Its suite.
    pub suite: Arc<SuiteContext>,
    /// The case.
    pub case: Arc<Case>,
}

/// Decides whether an answer is a refusal, for turn conditions (`when: {refused: true}`).
pub type RefusalProbe = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// Run settings.
#[derive(Clone)]
pub struct RunConfig {
    /// Most trials in flight.
    pub concurrency: usize,
    /// Trials per case.
    pub k: u32,
    /// The run seed (trial seeds derive from it).
    pub seed: u64,
    /// Stop scheduling new cases after this many failed cases.
    pub max_fail: Option<usize>,
    /// Refusal detector for turn conditions.
    pub refusal_probe: Option<RefusalProbe>,
    /// Case ids under quarantine: they run, but do not gate.
    pub quarantined: HashSet<String>,
    /// Trials already finished (resume): `(case id, trial index)` pairs to skip, with their
    /// stored results to fold in.
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
    pub user_simulator: Option<Arc<dyn gauntlet_core::target::UserSimulator>>,
    /// Called when the last trial has finished, before the summary is final: returns
    /// integrity violations (harness files changed during the run), which FAIL the run.
    pub integrity: Option<Arc<dyn Fn() -> Vec<String> + Send + Sync>>,
    /// Warnings to record as the run starts (a resume lists the faults of the trials it runs
    /// again, so that they stay on record in the run and its reports).
    pub warnings: Vec<String>,
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
            warnings: Vec::new(),
        }
    }
}

/// Why the run stopped early, if it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Every planned case ran.
    Completed,
    /// `max_fail` was reached.
    MaxFail,
    /// Cancelled (Ctrl-C).
    Cancelled,
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

/// Runs cases against a target.
pub struct Runner {
    target: Arc<dyn Target>,
    grader: Arc<dyn Grader>,
    config: RunConfig,
}

struct Pending {
    meta: CaseMeta,
    trials: Vec<Option<TrialResult>>,
    remaining: u32,
}

impl Runner {
    /// A runner over a target and a grader.
    pub fn new(target: Arc<dyn Target>, grader: Arc<dyn Grader>, config: RunConfig) -> Self {
        Runner {
            target,
            grader,
            config,
        }
    }

    /// Runs the plan, streaming events to the reporters (in this order, on their own thread).
    pub async fn run(
        self,
        manifest: RunManifest,
        plan: impl Iterator<Item = PlannedCase> + Send,
        reporters: Vec<Box<dyn Reporter>>,
    ) -> RunOutcome {
        let started = Instant::now();
        // Events travel to the reporter thread in batches: one wake-up per batch instead of
        // per event, which matters at tens of thousands of trials per second.
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<RunEvent>>(CHANNEL_BATCHES);
        let writer = std::thread::Builder::new()
            .name("gauntlet-report".into())
            .spawn(move || {
                let mut reporters = reporters;
                let mut errors = Vec::new();
                let mut failed = vec![false; reporters.len()];
                let mut flush_all = |reporters: &mut Vec<Box<dyn Reporter>>,
                                     failed: &mut Vec<bool>| {
                    for (i, r) in reporters.iter_mut().enumerate() {
                        if !failed[i]
                            && let Err(e) = r.flush()
                        {
                            failed[i] = true;
                            errors.push(e.to_string());
                        }
                    }
                };
                let mut event_errors = Vec::new();
                // Reporters flush (the store commits) at most every FLUSH_EVERY and whenever
                // the stream pauses that long: one commit per batch cost a fifth of the CPU at
                // full speed, and a finished trial is still durable within FLUSH_EVERY.
                let mut pending = false;
                let mut last_flush = Instant::now();
                loop {
                    let wait = if pending {
                        FLUSH_EVERY.saturating_sub(last_flush.elapsed())
                    } else {
                        Duration::from_secs(3600)
                    };
                    match rx.recv_timeout(wait) {
                        Ok(batch) => {
                            for ev in &batch {
                                for (i, r) in reporters.iter_mut().enumerate() {
                                    if failed[i] {
                                        continue;
                                    }
                                    if let Err(e) = r.on_event(ev) {
                                        failed[i] = true;
                                        event_errors.push(e.to_string());
                                    }
                                }
                            }
                            if !pending {
                                pending = true;
                                last_flush = Instant::now();
                            }
                            if last_flush.elapsed() >= FLUSH_EVERY {
                                flush_all(&mut reporters, &mut failed);
                                pending = false;
                            }
                        }
                        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                            if pending {
                                flush_all(&mut reporters, &mut failed);
                                pending = false;
                            }
                        }
                        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                            if pending {
                                flush_all(&mut reporters, &mut failed);
                            }
                            break;
                        }
                    }
                }
                event_errors.extend(errors);
                event_errors
            })
            .expect("spawn the reporter thread");
        let batch = std::cell::RefCell::new(Vec::<RunEvent>::with_capacity(BATCH_MAX));
        let emit = |kind: EventKind| {
            batch
                .borrow_mut()
                .push(RunEvent::new(started.elapsed().as_millis() as u64, kind));
        };
        // Hands the batch to the reporter thread; returns whether nothing is left held here.
        // While the reporters are busy (a commit, a checkpoint's fsync, or simply not
        // scheduled), a batch smaller than BATCH_MAX stays here and keeps growing instead of
        // stopping the dispatcher: with small batches a full channel would otherwise stall
        // every trial on a hiccup of the reporter thread. `wait` (the end of the run) and a
        // full batch block, so at most CHANNEL_BATCHES + 1 batches are ever held.
        let flush = |wait: bool| {
            let mut held = batch.borrow_mut();
            if held.is_empty() {
                return true;
            }
            let events = std::mem::take(&mut *held);
            // The writer thread only stops when the channel closes, so a send cannot fail
            // unless it panicked; its panic surfaces at join.
            match tx.try_send(events) {
                Ok(()) | Err(TrySendError::Disconnected(_)) => true,
                Err(TrySendError::Full(events)) if wait || events.len() >= BATCH_MAX => {
                    let _ = tx.send(events);
                    true
                }
                Err(TrySendError::Full(events)) => {
                    *held = events;
                    false
                }
            }
        };
        emit(EventKind::RunStarted {
            manifest: Box::new(manifest),
        });
        for message in &self.config.warnings {
            emit(EventKind::Warning {
                message: message.clone(),
            });
        }

        let cfg = &self.config;
        let k = cfg.k.max(1);
        let mut fold = SummaryBuilder::new();
        let mut inflight: JoinSet<(u64, u32, TrialResult)> = JoinSet::new();
        let mut pending: HashMap<u64, Pending> = HashMap::new();
        let mut plan = plan.peekable();
        let mut next_seq: u64 = 0;
        // Trials of the current case still to schedule.
        let mut queue: Vec<(u64, u32, PlannedCase)> = Vec::new();
        let mut failed_cases = 0usize;
        let mut crashed = 0usize;
        let mut stop = Stop::Completed;

        loop {
            // Fill the window.
            while inflight.len() < cfg.concurrency.max(1) {
                if cfg.cancel.load(Ordering::Relaxed) {
                    stop = Stop::Cancelled;
                    break;
                }
                if cfg.max_fail.is_some_and(|m| failed_cases >= m) {
                    stop = Stop::MaxFail;
                    break;
                }
                if queue.is_empty() {
                    let Some(pc) = plan.next() else { break };
                    let seq = next_seq;
                    next_seq += 1;
                    let meta = CaseMeta::of(&pc.case, &pc.suite.name, pc.suite.default_blocking);
                    let done = cfg.finished.get(&pc.case.id).cloned().unwrap_or_default();
                    let mut slots: Vec<Option<TrialResult>> = (0..k).map(|_| None).collect();
                    for t in done {
                        if (t.trial as usize) < slots.len() {
                            let i = t.trial as usize;
                            slots[i] = Some(t);
                        }
                    }
                    let todo: Vec<u32> = (0..k).filter(|i| slots[*i as usize].is_none()).collect();
                    if todo.is_empty() {
                        // Every trial was already stored (resume): fold it without running.
                        let trials: Vec<TrialResult> = slots.into_iter().flatten().collect();
                        let mut result = CaseResult::combine(meta, trials);
                        result.quarantined = cfg.quarantined.contains(&result.case.id);
                        if result.status == gauntlet_core::result::CaseStatus::Fail
                            && !result.quarantined
                        {
                            failed_cases += 1;
                        }
                        fold.add(&result);
                        emit(EventKind::CaseFinished {
                            result: Box::new(result),
                        });
                        continue;
                    }
                    pending.insert(
                        seq,
                        Pending {
                            meta,
                            trials: slots,
                            remaining: todo.len() as u32,
                        },
                    );
                    for t in todo.into_iter().rev() {
                        queue.push((seq, t, pc.clone()));
                    }
                }
                let Some((seq, trial, pc)) = queue.pop() else {
                    break;
                };
                let target = Arc::clone(&self.target);
                let grader = Arc::clone(&self.grader);
                let probe = cfg.refusal_probe.clone();
                let seed = trial_seed(cfg.seed, &pc.case.id, if cfg.pin_seed { 0 } else { trial });
                let redactor = cfg.redactor.clone();
                let user = cfg.user_simulator.clone();
                inflight.spawn(async move {
                    let started = Instant::now();
                    let played = CatchPanic(Box::pin(execute(
                        &*target,
                        &*grader,
                        &pc,
                        trial,
                        seed,
                        probe.as_ref(),
                        user.as_deref(),
                    )))
                    .await;
                    // A panic inside gauntlet (a grader, an adapter) is a harness fault: the
                    // trial is recorded as an error, so its case is reported and the run
                    // cannot pass on missing evidence.
                    let mut r = played.unwrap_or_else(|msg| {
                        TrialResult::new(
                            &pc.case,
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
                    (seq, trial, r)
                });
            }
            // Take every finished trial without waiting; wait (after handing the batch to the
            // reporters) only when none is ready. The batch is also handed over whenever it
            // is full, so memory stays bounded however fast trials finish.
            if batch.borrow().len() >= BATCH_MAX {
                flush(false);
            }
            let joined = match inflight.try_join_next() {
                Some(j) => j,
                None if flush(false) => match inflight.join_next().await {
                    Some(j) => j,
                    None => break,
                },
                None => {
                    // Events are still held here (the reporters are behind): wait for the
                    // next trial at most FLUSH_EVERY, then offer them again, so that slow
                    // trials never keep finished ones from the store.
                    match tokio::time::timeout(FLUSH_EVERY, inflight.join_next()).await {
                        Ok(Some(j)) => j,
                        Ok(None) => break,
                        Err(_) => continue,
                    }
                }
            };
            let (seq, trial, result) = match joined {
                Ok(x) => x,
                Err(e) => {
                    // The task failed outside the trial (panics inside it are caught, see
                    // `CatchPanic`). Its case cannot finish; the run is marked below so that
                    // it cannot pass on missing evidence.
                    crashed += 1;
                    emit(EventKind::Warning {
                        message: format!("a trial crashed inside gauntlet: {e}"),
                    });
                    continue;
                }
            };
            // With one trial per case, `case_finished` carries the trial right away; a
            // separate event would only copy it.
            if k > 1 {
                emit(EventKind::TrialFinished {
                    trial: Box::new(result.clone()),
                });
            }
            let p = pending.get_mut(&seq).expect("pending case");
            p.trials[trial as usize] = Some(result);
            p.remaining -= 1;
            if p.remaining == 0 {
                let p = pending.remove(&seq).expect("pending case");
                let trials: Vec<TrialResult> = p.trials.into_iter().flatten().collect();
                let mut result = CaseResult::combine(p.meta, trials);
                result.quarantined = cfg.quarantined.contains(&result.case.id);
                if result.status == gauntlet_core::result::CaseStatus::Fail && !result.quarantined {
                    failed_cases += 1;
                }
                fold.add(&result);
                emit(EventKind::CaseFinished {
                    result: Box::new(result),
                });
            }
        }
        if stop == Stop::Completed && plan.peek().is_some() {
            stop = if cfg.cancel.load(Ordering::Relaxed) {
                Stop::Cancelled
            } else {
                Stop::MaxFail
            };
        }
        let mut summary = fold.finish(&cfg.packs, started.elapsed().as_millis() as u64);
        if let Some(check) = &cfg.integrity {
            let changed = check();
            if !changed.is_empty() {
                // Graders must live where the agent cannot write: a run whose harness files
                // changed under it proves nothing.
                summary.status = gauntlet_core::score::Status::Fail;
                summary.reasons.insert(
                    0,
                    format!(
                        "harness files changed during the run: {}",
                        changed.join(", ")
                    ),
                );
            }
        }
        if crashed > 0 {
            if summary.status != gauntlet_core::score::Status::Fail {
                summary.status = gauntlet_core::score::Status::Inconclusive;
            }
            summary.reasons.push(format!(
                "{crashed} trial(s) crashed inside gauntlet and their cases are missing (see the warnings)"
            ));
        }
        match stop {
            Stop::Completed => {}
            Stop::MaxFail => summary.reasons.push(format!(
                "stopped early after {failed_cases} failed case(s) (--max-fail)"
            )),
            Stop::Cancelled => {
                if summary.status != gauntlet_core::score::Status::Fail {
                    summary.status = gauntlet_core::score::Status::Inconclusive;
                }
                summary
                    .reasons
                    .push("the run was interrupted before every case ran".into());
            }
        }
        emit(EventKind::RunFinished {
            summary: Box::new(summary.clone()),
            finished_at: jiff::Timestamp::now().to_string(),
        });
        flush(true);
        drop(tx);
        let reporter_errors = writer
            .join()
            .unwrap_or_else(|_| vec!["a reporter panicked".into()]);
        RunOutcome {
            summary,
            stop,
            reporter_errors,
        }
    }
}

/// A seed per (run, case, trial), so that trials differ from each other but a rerun of the
/// same run seed repeats them.
pub fn trial_seed(run_seed: u64, case_id: &str, trial: u32) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325 ^ run_seed;
    for b in case_id.bytes().chain(trial.to_le_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

fn condition_holds(c: &TurnCondition, previous: &str, probe: Option<&RefusalProbe>) -> bool {
    let p = previous.to_lowercase();
    if let Some(s) = &c.contains
        && !p.contains(&s.to_lowercase())
    {
        return false;
    }
    if let Some(s) = &c.not_contains
        && p.contains(&s.to_lowercase())
    {
        return false;
    }
    if let (Some(want), Some(probe)) = (c.refused, probe)
        && probe(previous) != want
    {
        return false;
    }
    true
}

/// Runs one trial: open a session, play the turns, grade.
pub async fn execute(
    target: &dyn Target,
    grader: &dyn Grader,
    pc: &PlannedCase,
    trial: u32,
    seed: u64,
    probe: Option<&RefusalProbe>,
    user_sim: Option<&dyn gauntlet_core::target::UserSimulator>,
) -> TrialResult {
    let started = Instant::now();
    let case = &*pc.case;
    let suite = &*pc.suite;
    let system_prompt = case
        .system_prompt
        .as_deref()
        .or(suite.system_prompt.as_deref());
    let ctx = TrialContext {
        case,
        system_prompt,
        tools: &suite.tools,
        trial,
        seed,
        session_id: format!("{}-{trial}-{seed:016x}", case.id),
    };
    let timeout_ms = case
        .timeout_ms
        .or(suite.timeout_ms)
        .unwrap_or(DEFAULT_TRIAL_TIMEOUT_MS);
    let mut rec = TraceRecorder::new();
    let mut tools = SimTools::new(&suite.tools, case);
    let played = tokio::time::timeout(Duration::from_millis(timeout_ms), async {
        let mut session = target.open(&ctx).await?;
        let single;
        let turns: Vec<(&str, Option<&TurnCondition>)> = match &case.input {
            Some(i) => {
                single = i.as_str();
                vec![(single, None)]
            }
            None => case
                .turns
                .iter()
                .map(|t| (t.user.as_str(), t.when.as_ref()))
                .collect(),
        };
        let mut previous = String::new();
        for (user, when) in turns {
            if let Some(c) = when
                && !condition_holds(c, &previous, probe)
            {
                continue;
            }
            let answer = session.turn(user, &mut tools, &mut rec).await?;
            previous = answer.content.clone();
            rec.turn(user.to_owned(), answer.content, answer.truncated);
        }
        if let Some(spec) = &case.simulated_user {
            let Some(sim) = user_sim else {
                return Err(TargetError::Harness(
                    "this case has a simulated user but no user model was given (--user-model)"
                        .into(),
                ));
            };
            for _ in 0..spec.max_turns.unwrap_or(3) {
                let Some(next) = sim.next(spec, &rec.trace().turns).await? else {
                    break;
                };
                let answer = session.turn(&next, &mut tools, &mut rec).await?;
                rec.turn(next, answer.content, answer.truncated);
            }
        }
        Ok::<(), TargetError>(())
    })
    .await;
    let (outcome, error) = match played {
        Err(_) => {
            rec.transport(
                TransportKind::Timeout,
                None,
                format!("the trial ran past its {timeout_ms} ms limit"),
            );
            (
                Outcome::Timeout,
                Some(format!("no answer within {timeout_ms} ms")),
            )
        }
        Ok(Ok(())) => (Outcome::Completed, None),
        Ok(Err(e)) => {
            let outcome = match &e {
                TargetError::Blocked(_) => Outcome::Blocked,
                TargetError::Timeout(_) => Outcome::Timeout,
                TargetError::Transport(_) | TargetError::Protocol(_) | TargetError::Harness(_) => {
                    Outcome::Error
                }
            };
            (outcome, Some(e.to_string()))
        }
    };
    let trace = rec.finish();
    let canary = case.canary.as_deref().or(suite.canary.as_deref());
    let verdicts = grader
        .grade(GradeContext {
            case,
            trace: &trace,
            outcome,
            canary,
            tools: &suite.tools,
        })
        .await;
    TrialResult::new(
        case,
        trial,
        outcome,
        trace,
        verdicts,
        error,
        started.elapsed().as_millis() as u64,
    )
}

/// Redacts secrets anywhere in a trial result. Cheap when there is nothing to redact.
fn redact_trial(redactor: &Redactor, r: &mut TrialResult) {
    if redactor.is_empty() {
        return;
    }
    let Ok(text) = serde_json::to_string(r) else {
        return;
    };
    if let std::borrow::Cow::Borrowed(_) = redactor.redact(&text) {
        return;
    }
    if let Ok(mut v) = serde_json::to_value(&*r) {
        redactor.redact_json(&mut v);
        if let Ok(clean) = serde_json::from_value(v) {
            *r = clean;
        }
    }
}

/// Runs a future, turning a panic while polling it into an error with the panic's message.
struct CatchPanic<F>(std::pin::Pin<Box<F>>);

impl<F: std::future::Future> std::future::Future for CatchPanic<F> {
    type Output = Result<F::Output, String>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let inner = self.0.as_mut();
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(std::task::Poll::Pending) => std::task::Poll::Pending,
            Ok(std::task::Poll::Ready(v)) => std::task::Poll::Ready(Ok(v)),
            Err(payload) => {
                let msg = payload
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic without a message".into());
                std::task::Poll::Ready(Err(msg))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use gauntlet_core::event::ReportError;
    use gauntlet_core::target::{BoxFuture, Session, TargetInfo, ToolHost, TurnAnswer};
    use gauntlet_core::verdict::Verdict;

    use super::*;

    /// Answers every turn at once with the user's words.
    struct Echo;

    struct EchoSession;

    impl Target for Echo {
        fn info(&self) -> TargetInfo {
            TargetInfo {
                kind: "echo".into(),
                label: "echo".into(),
                model: None,
                base_url: None,
                settings: Default::default(),
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

    struct NoChecks;

    impl Grader for NoChecks {
        fn grade<'a>(&'a self, _ctx: GradeContext<'a>) -> BoxFuture<'a, Vec<Verdict>> {
            Box::pin(async { Vec::new() })
        }
    }

    /// A reporter far slower than the trials: it records what it sees.
    struct Slow(Arc<Mutex<Vec<String>>>);

    impl Reporter for Slow {
        fn on_event(&mut self, ev: &RunEvent) -> Result<(), ReportError> {
            std::thread::sleep(Duration::from_micros(50));
            let name = match &ev.kind {
                EventKind::RunStarted { .. } => "started".to_owned(),
                EventKind::CaseFinished { result } => result.case.id.clone(),
                EventKind::RunFinished { .. } => "finished".to_owned(),
                _ => return Ok(()),
            };
            self.0.lock().expect("lock").push(name);
            Ok(())
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_slow_reporter_gets_every_event_in_order_and_loses_none() {
        const CASES: usize = 3000;
        let suite = Arc::new(SuiteContext {
            name: "s".into(),
            ..SuiteContext::default()
        });
        let plan = (0..CASES).map(move |i| {
            let case: Case = serde_json::from_value(serde_json::json!({
                "id": format!("case-{i:04}"), "input": "hello"
            }))
            .expect("case");
            PlannedCase {
                suite: Arc::clone(&suite),
                case: Arc::new(case),
            }
        });
        let manifest: RunManifest = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "run_id": "r", "gauntlet_version": "0", "started_at": "t",
            "command": "run", "suites": [], "target": {"kind": "echo", "label": "echo"},
            "k": 1, "seed": 0, "planned_cases": CASES, "evidence_level": "online",
            "side_effects": "simulated", "dataset_revision": "-"
        }))
        .expect("manifest");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let runner = Runner::new(
            Arc::new(Echo),
            Arc::new(NoChecks),
            RunConfig {
                concurrency: 64,
                ..RunConfig::default()
            },
        );
        let out = runner
            .run(manifest, plan, vec![Box::new(Slow(Arc::clone(&seen)))])
            .await;
        assert_eq!(out.stop, Stop::Completed);
        assert!(out.reporter_errors.is_empty(), "{:?}", out.reporter_errors);
        let seen = seen.lock().expect("lock");
        // The dispatcher outruns the reporter by far, so the channel is full most of the
        // time and events wait in the dispatcher's batch: none may be lost, repeated or
        // reordered around the start and the end.
        assert_eq!(seen.len(), CASES + 2);
        assert_eq!(seen[0], "started");
        assert_eq!(seen[CASES + 1], "finished");
        let ids: HashSet<&String> = seen[1..=CASES].iter().collect();
        assert_eq!(ids.len(), CASES, "every case exactly once");
    }

    #[tokio::test]
    async fn a_panicking_trial_becomes_an_error_not_a_lost_case() {
        let ok = CatchPanic(Box::pin(async { 7 })).await;
        assert_eq!(ok, Ok(7));
        let boom = CatchPanic(Box::pin(async {
            if std::hint::black_box(true) {
                panic!("grader exploded");
            }
            7
        }))
        .await;
        assert_eq!(boom, Err("grader exploded".to_owned()));
    }
}
