//! The executors: one trial each. [`execute`] plays a case against a target (open a
//! session, play the turns under the time limit, grade the trace); [`regrade`] grades a
//! recorded trial again without calling anything. Both end in [`grade_trial`], so a live
//! trial and a re-graded one are scored by the same code (`strategy::grade_case`, with
//! which a multi-turn strategy also scores the conversation so far). Executors only return
//! their [`TrialResult`]; the dispatcher does everything else.

use std::time::{Duration, Instant};

use gauntlet_core::grader::Grader;
use gauntlet_core::plan::PlannedCase;
use gauntlet_core::redact::Redactor;
use gauntlet_core::result::{Outcome, TrialResult};
use gauntlet_core::suite::{Case, TurnCondition};
use gauntlet_core::target::{Session, Target, TargetError, TrialContext, UserSimulator};
use gauntlet_core::trace::{Trace, TraceRecorder, TransportKind};

pub use crate::strategy::RefusalProbe;
use crate::strategy::{Helpers, Play, convert_user_turn, early_stop_unconfirmed, grade_case};
use crate::tools::SimTools;
use crate::tree::TreePlay;
use gauntlet_core::strategy::StrategyKind;

/// Per-trial time limit when neither the case nor the suite sets one.
pub const DEFAULT_TRIAL_TIMEOUT_MS: u64 = 120_000;

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

/// Runs one trial against a target: open a session, play the turns, grade. The trace and
/// the error are redacted before grading: graders quote the answer in their evidence, cut
/// to fit, and a secret cut in two is no longer recognisable when the result is redacted.
#[allow(clippy::too_many_arguments)]
pub async fn execute(
    redactor: &Redactor,
    target: &dyn Target,
    grader: &dyn Grader,
    pc: &PlannedCase,
    trial: u32,
    seed: u64,
    probe: Option<&RefusalProbe>,
    user_sim: Option<&dyn UserSimulator>,
    helpers: Option<&Helpers>,
) -> TrialResult {
    let started = Instant::now();
    let case = &*pc.case;
    let suite = &*pc.suite;
    let system_prompt = suite.prompt_for(case);
    let timeout_ms = case
        .timeout_ms
        .or(suite.timeout_ms)
        .unwrap_or(DEFAULT_TRIAL_TIMEOUT_MS);
    let mut rec = TraceRecorder::new();
    let played = tokio::time::timeout(Duration::from_millis(timeout_ms), async {
        // A proxied agent takes plain user turns and has no channel for retrieved
        // documents: an attack that cannot arrive must not pass as resisted.
        if !case.documents.is_empty() && target.info().kind == "proxy" {
            return Err(TargetError::Harness(
                "this case carries retrieved documents, which a proxy target cannot receive; run it against a chat, exec or http target".into(),
            ));
        }
        // An attack carried by documents or tool outputs is converted there, before the
        // agent sees any of it; the case as sent is what the target and the tools get.
        let carried = crate::strategy::convert_carried(helpers, case, &mut rec).await?;
        let sent_case = carried.as_ref().unwrap_or(case);
        let ctx = TrialContext {
            case: sent_case,
            system_prompt: system_prompt.as_deref(),
            tools: &suite.tools,
            trial,
            seed,
            session_id: format!("{}-{trial}-{seed:016x}", case.id),
        };
        // Each prompt of a tree goes to a session of its own.
        if let Some(s) = case.strategy.as_ref().filter(|s| s.kind == StrategyKind::Tree) {
            let rec = &mut rec;
            let p = TreePlay { pc, target, ctx: &ctx, rec, grader, helpers };
            return crate::tree::search(s, p).await;
        }
        let (mut session, mut tools) =
            crate::strategy::open_conversation(target, suite, &ctx).await?;
        if let Some(strategy) = &case.strategy {
            return crate::strategy::play(
                strategy,
                Play {
                    pc,
                    session: &mut *session,
                    tools: &mut tools,
                    rec: &mut rec,
                    grader,
                    probe,
                    helpers,
                    seed,
                },
            )
            .await;
        }
        play_turns(
            case,
            &mut *session,
            &mut tools,
            &mut rec,
            probe,
            user_sim,
            helpers,
        )
        .await
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
    let mut trace = rec.finish();
    redact_value(redactor, &mut trace);
    let played = Played {
        trial,
        outcome,
        trace,
        error: error.map(|e| redactor.redact(&e).into_owned()),
        duration_ms: 0,
    };
    let mut result = grade_trial(grader, pc, played).await;
    // A live trial's wall time includes its grading (a judge call can be most of it).
    result.duration_ms = started.elapsed().as_millis() as u64;
    result
}

/// Plays a case's written turns (each with its run-time converters applied where the attack
/// is, a turn whose condition does not hold skipped), then a simulated user's.
async fn play_turns(
    case: &Case,
    session: &mut dyn Session,
    tools: &mut SimTools<'_>,
    rec: &mut TraceRecorder,
    probe: Option<&RefusalProbe>,
    user_sim: Option<&dyn UserSimulator>,
    helpers: Option<&Helpers>,
) -> Result<(), TargetError> {
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
    for (i, (user, when)) in turns.into_iter().enumerate() {
        if let Some(c) = when
            && !condition_holds(c, &previous, probe)
        {
            continue;
        }
        // Model-driven converters rewrite the turn now; a failed rewrite ends the trial
        // in error rather than sending the unconverted prompt.
        let sent = convert_user_turn(helpers, case, user, i, rec).await?;
        let answer = session.turn(&sent, tools, rec).await?;
        previous = answer.content.clone();
        rec.turn(sent, answer.content, answer.truncated);
    }
    if let Some(spec) = &case.simulated_user {
        let Some(sim) = user_sim else {
            return Err(TargetError::Harness(
                "this case has a simulated user but no user model was given (--user-model)".into(),
            ));
        };
        for _ in 0..spec.max_turns.unwrap_or(3) {
            let Some(next) = sim.next(spec, &rec.trace().turns).await? else {
                break;
            };
            let answer = session.turn(&next, tools, rec).await?;
            rec.turn(next, answer.content, answer.truncated);
        }
    }
    Ok(())
}

/// What a trial did, before grading: live, or read back from the store.
pub struct Played {
    /// Trial index.
    pub trial: u32,
    /// How it ended.
    pub outcome: Outcome,
    /// Everything it did.
    pub trace: Trace,
    /// For outcomes other than completed: what happened.
    pub error: Option<String>,
    /// Wall time in milliseconds, as recorded.
    pub duration_ms: u64,
}

/// Grades a played trial and scores it.
pub async fn grade_trial(grader: &dyn Grader, pc: &PlannedCase, p: Played) -> TrialResult {
    let case = &*pc.case;
    let mut verdicts = grade_case(grader, pc, &p.trace, p.outcome).await;
    if let Some(v) = early_stop_unconfirmed(case, &p.trace, &verdicts) {
        verdicts.push(v);
    }
    TrialResult::new(
        case,
        p.trial,
        p.outcome,
        p.trace,
        verdicts,
        p.error,
        p.duration_ms,
    )
}

/// Grades a recorded trial again with the case as it is now (no target call): the trace,
/// the outcome and the timing stay as they were recorded.
pub async fn regrade(grader: &dyn Grader, pc: &PlannedCase, recorded: TrialResult) -> TrialResult {
    let played = Played {
        trial: recorded.trial,
        outcome: recorded.outcome,
        trace: recorded.trace,
        error: recorded.error,
        duration_ms: recorded.duration_ms,
    };
    grade_trial(grader, pc, played).await
}

/// Redacts secrets anywhere in a trial result. Cheap when there is nothing to redact.
pub fn redact_trial(redactor: &Redactor, r: &mut TrialResult) {
    redact_value(redactor, r);
}

/// Redacts every string of a serializable value (a trial result, a trace), in place.
fn redact_value<T: serde::Serialize + serde::de::DeserializeOwned>(redactor: &Redactor, r: &mut T) {
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
pub struct CatchPanic<F>(pub std::pin::Pin<Box<F>>);

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
    use super::*;

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
