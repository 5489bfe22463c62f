//! Multi-turn attack strategies and model-driven converters, as one trial plays them:
//! [`Helpers`] (the attacker and rewriter models and the pure converters a trial may need),
//! [`play`] (the crescendo and attacker loops: propose, send, score, decide, backtrack) and
//! the converter steps applied while the trial runs, where the attack travels:
//! [`convert_user_turn`] (a whole user turn, or the planted span in it) and
//! [`convert_carried`] (a retrieved document or a tool's poison, recorded in the trace as
//! sent), both over [`convert_turn`].
//!
//! Everything a strategy does is recorded in the trace ([`StrategyEvent`]): each attacker
//! and rewriter call (prompt, answer, seed, tokens), the score after each exchange and each
//! decision. The final verdicts are the graders' over the whole trace, every exchange
//! included (taken back or not), so `regrade` reproduces them from the stored trace alone.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use gauntlet_core::attack::{Carrier, replace_span};
use gauntlet_core::grader::{GradeContext, Grader};
use gauntlet_core::plan::{PlannedCase, SuiteContext};
use gauntlet_core::result::Outcome;
use gauntlet_core::strategy::{
    ATTACKER_PROMPT_VERSION, DEFAULT_ATTACKER_TURNS, DEFAULT_BACKTRACKS, HelperModel, HelperRole,
    REWRITER_PROMPT_VERSION, Strategy, StrategyKind, attacker_messages, converter_needs_model,
    rewriter_messages,
};
use gauntlet_core::suite::Case;
use gauntlet_core::target::{Session, Target, TargetError, TrialContext};
use gauntlet_core::trace::{
    HelperCall, JudgeSpan, Message, StrategyAction, StrategyDecision, StrategyEvent, Trace,
    TraceRecorder, TurnScore,
};
use gauntlet_core::verdict::Verdict;

use crate::tools::SimTools;

/// Applies one pure converter: `(name, text, seed)` to the converted text (`None` for a name
/// it does not know).
pub type PureConverter = Arc<dyn Fn(&str, &str, u64) -> Option<String> + Send + Sync>;

/// Decides whether an answer is a refusal: for turn conditions (`when: {refused: true}`)
/// and for an attack's backtracking. Defined here, below the executors that use it too.
pub type RefusalProbe = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// The seed of one converter step: `(run seed, case id, turn, step)`.
pub type StepSeed = fn(u64, &str, usize, usize) -> u64;

/// What trials with strategies or model-driven converters need, built by the binary.
#[derive(Clone)]
pub struct Helpers {
    /// The attacker model (`--attacker`).
    pub attacker: Option<Arc<dyn HelperModel>>,
    /// The rewriter model (`--rewriter`).
    pub rewriter: Option<Arc<dyn HelperModel>>,
    /// The pure converters, for the steps of a chain applied while the trial runs.
    pub pure: PureConverter,
    /// The seed of each converter step (the plan's, so both agree).
    pub step_seed: StepSeed,
    /// The run seed.
    pub run_seed: u64,
}

/// Where the converter chain of a case starts to apply while the trial runs: from the
/// start for an attacker's messages (written during the trial), from the first model step
/// for whole user turns (the plan applied the steps before it), from the start for an
/// attack that travels elsewhere (a document, a tool output, a span of a turn: the plan
/// leaves a chain with a model step to the trial whole), or not at all.
pub fn runtime_from(case: &Case) -> Option<usize> {
    if case.converters.is_empty() {
        return None;
    }
    if case
        .strategy
        .as_ref()
        .is_some_and(|s| s.kind.uses_attacker())
    {
        return Some(0);
    }
    let first = case
        .converters
        .iter()
        .position(|n| converter_needs_model(n))?;
    let site = case.attack_site();
    match (site.carrier, &site.span) {
        (Carrier::None, _) => None,
        (Carrier::User, None) => Some(first),
        _ => Some(0),
    }
}

/// A user turn as the trial sends it: the case's run-time converter steps applied where the
/// attack is in it (the whole turn of a direct attack, the planted span of quoted content),
/// and none when the attack travels outside the user's turns.
pub async fn convert_user_turn(
    helpers: Option<&Helpers>,
    case: &Case,
    text: &str,
    turn: usize,
    rec: &mut TraceRecorder,
) -> Result<String, TargetError> {
    let Some(from) = runtime_from(case) else {
        return Ok(text.to_owned());
    };
    let site = case.attack_site();
    if site.carrier != Carrier::User {
        return Ok(text.to_owned());
    }
    let Some(span) = site.span.as_deref() else {
        return convert_turn(helpers, case, text, turn, from, rec).await;
    };
    if !text.contains(span) {
        return Ok(text.to_owned());
    }
    let converted = convert_turn(helpers, case, span, turn, from, rec).await?;
    Ok(replace_span(text, span, |_| converted).unwrap_or_else(|| text.to_owned()))
}

/// The case as this trial sends it when its attack travels in documents or tool outputs:
/// the run-time converter steps applied there (`None` when there is nothing to apply while
/// the trial runs). Every text a converter changed there, at planning or now, is recorded
/// in the trace as sent.
pub async fn convert_carried(
    helpers: Option<&Helpers>,
    case: &Case,
    rec: &mut TraceRecorder,
) -> Result<Option<Case>, TargetError> {
    // What the plan changed.
    for (at, _) in &case.as_written {
        if let Some(t) = carried_text(case, at) {
            rec.converted(at.clone(), t.to_owned());
        }
    }
    let site = case.attack_site();
    let Some(from) = runtime_from(case) else {
        return Ok(None);
    };
    if !matches!(site.carrier, Carrier::Documents | Carrier::ToolOutput) {
        return Ok(None);
    }
    let mut c = case.clone();
    let count = match site.carrier {
        Carrier::Documents => case.documents.len(),
        _ => case.tool_faults.len(),
    };
    for i in 0..count {
        let (at, written) = match site.carrier {
            Carrier::Documents => (format!("documents[{i}]"), case.documents[i].text.as_deref()),
            _ => (
                format!("tool_faults[{i}].poison"),
                case.tool_faults[i].poison.as_deref(),
            ),
        };
        let Some(t) = written else { continue };
        let seed_index = site.carrier.seed_index(i);
        let sent = match site.span.as_deref() {
            None => convert_turn(helpers, case, t, seed_index, from, rec).await?,
            Some(span) if t.contains(span) => {
                let conv = convert_turn(helpers, case, span, seed_index, from, rec).await?;
                replace_span(t, span, |_| conv).unwrap_or_else(|| t.to_owned())
            }
            Some(_) => continue,
        };
        rec.converted(at, sent.clone());
        match site.carrier {
            Carrier::Documents => c.documents[i].text = Some(sent),
            _ => c.tool_faults[i].poison = Some(sent),
        }
    }
    Ok(Some(c))
}

/// The text at a site of a case (`documents[0]`, `tool_faults[1].poison`).
fn carried_text<'a>(case: &'a Case, at: &str) -> Option<&'a str> {
    let index = |prefix: &str, suffix: &str| -> Option<usize> {
        at.strip_prefix(prefix)?.strip_suffix(suffix)?.parse().ok()
    };
    if let Some(i) = index("documents[", "]") {
        return case.documents.get(i)?.text.as_deref();
    }
    let i = index("tool_faults[", "].poison")?;
    case.tool_faults.get(i)?.poison.as_deref()
}

/// Applies `case.converters[from..]` to one message: pure steps locally, model steps by the
/// rewriter, each rewriter call recorded. A rewriter that fails or answers nothing ends the
/// trial in error: the original prompt is never sent in its place.
pub async fn convert_turn(
    helpers: Option<&Helpers>,
    case: &Case,
    text: &str,
    turn: usize,
    from: usize,
    rec: &mut TraceRecorder,
) -> Result<String, TargetError> {
    let Some(h) = helpers else {
        return Err(TargetError::Harness(
            "this case's converters are applied while the trial runs, but no converter was set up for the run".into(),
        ));
    };
    let mut out = text.to_owned();
    for (step, name) in case.converters.iter().enumerate().skip(from) {
        let seed = (h.step_seed)(h.run_seed, &case.id, turn, step);
        if !converter_needs_model(name) {
            out = (h.pure)(name, &out, seed).unwrap_or(out);
            continue;
        }
        let Some(model) = &h.rewriter else {
            return Err(TargetError::Harness(format!(
                "converter `{name}` needs a rewriter model; pass --rewriter TARGET"
            )));
        };
        let Some(messages) = rewriter_messages(name, &out, seed) else {
            continue;
        };
        let answer = call_helper(
            &**model,
            HelperRole::Rewriter,
            Some(name),
            REWRITER_PROMPT_VERSION,
            turn as u32,
            messages,
            seed,
            rec,
        )
        .await;
        match answer {
            Ok(t) => out = t,
            Err(e) => {
                return Err(TargetError::Harness(format!(
                    "the rewriter failed on converter `{name}`: {e}"
                )));
            }
        }
    }
    Ok(out)
}

/// Calls a helper model once and records the call, whatever happened. An empty answer is a
/// failure: there is nothing to send.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn call_helper(
    model: &dyn HelperModel,
    role: HelperRole,
    converter: Option<&str>,
    prompt: &str,
    turn: u32,
    messages: Vec<Message>,
    seed: u64,
    rec: &mut TraceRecorder,
) -> Result<String, String> {
    let started = Instant::now();
    let reply = model.complete(&messages, seed).await;
    let latency_ms = started.elapsed().as_millis() as u64;
    let mut call = HelperCall {
        role,
        turn,
        converter: converter.map(str::to_owned),
        endpoint: model.endpoint(),
        prompt: prompt.to_owned(),
        seed,
        model: None,
        messages_in: messages,
        answer: String::new(),
        usage: Default::default(),
        latency_ms,
        attempts: 1,
        cached: false,
        error: None,
    };
    let result = match reply {
        Ok(r) => {
            call.cached = r.cached;
            call.model = r.model;
            call.usage = r.usage;
            call.attempts = r.attempts;
            call.answer = r.text.clone();
            let text = r.text.trim().to_owned();
            if text.is_empty() {
                Err("the model answered nothing".to_owned())
            } else {
                Ok(text)
            }
        }
        Err(e) => Err(e),
    };
    if let Err(e) = &result {
        call.error = Some(e.clone());
    }
    rec.strategy(StrategyEvent::HelperCall(call));
    result
}

/// One conversation with the agent: a session opened for `ctx` and fresh simulated tools
/// for the case it sends (`ctx.case`), answered through the suite's tool backends and
/// message bus. A trial plays one; a tree of attacks opens one per prompt.
pub(crate) async fn open_conversation<'a>(
    target: &'a dyn Target,
    suite: &'a SuiteContext,
    ctx: &'a TrialContext<'a>,
) -> Result<(Box<dyn Session + 'a>, SimTools<'a>), TargetError> {
    let session = target.open(ctx).await?;
    let tools = SimTools::new(&suite.tools, ctx.case)
        .with_backends(&suite.tool_backends)
        .with_message_bus(suite.message_bus);
    Ok((session, tools))
}

/// Tokens the trial has used so far: the agent's model calls, the helpers', and the judge
/// calls that scored each exchange of an attacker loop or a crescendo, or each reply of a
/// tree. A cached answer counts what it reported, so that a replay stops where the run it
/// replays stopped.
pub(crate) fn tokens_used(trace: &Trace) -> u64 {
    let judged = |calls: &[JudgeSpan]| -> u64 {
        calls
            .iter()
            .map(|j| j.usage.input_tokens + j.usage.output_tokens)
            .sum()
    };
    let agent: u64 = trace
        .llm_calls()
        .map(|c| c.usage.input_tokens + c.usage.output_tokens)
        .sum();
    let helpers: u64 = trace
        .strategy
        .iter()
        .map(|e| match e {
            StrategyEvent::HelperCall(c) => c.usage.input_tokens + c.usage.output_tokens,
            StrategyEvent::Score(s) => judged(&s.judge),
            StrategyEvent::TreeNode(n) => judged(&n.judge_calls),
            _ => 0,
        })
        .sum();
    agent + helpers
}

/// The check keys that can tell, after a turn, whether the objective was reached: the
/// case's violation checks and judges, and the leak check every case gets.
fn deciding_keys(case: &Case) -> BTreeSet<&'static str> {
    let mut keys: BTreeSet<&'static str> = case
        .expect
        .iter()
        .filter(|e| e.oracle.is_violation_check() || !e.oracle.is_objective())
        .map(|e| e.oracle.key())
        .collect();
    keys.insert("no_canary");
    keys
}

/// Whether verdicts say the objective was reached: a deciding check that gates, could
/// decide and failed. A triage judge's failure is reported but decides nothing.
pub fn objective_reached(case: &Case, verdicts: &[Verdict]) -> bool {
    let keys = deciding_keys(case);
    verdicts
        .iter()
        .any(|v| keys.contains(v.check.as_str()) && v.gating && v.assessed && !v.passed)
}

/// What a strategy needs from the trial it runs in.
pub struct Play<'a, 'b> {
    /// The case and its suite.
    pub pc: &'a PlannedCase,
    /// The agent's session.
    pub session: &'a mut (dyn Session + 'b),
    /// The simulated tools.
    pub tools: &'a mut SimTools<'b>,
    /// The trace.
    pub rec: &'a mut TraceRecorder,
    /// The graders, to score the conversation after each turn.
    pub grader: &'a dyn Grader,
    /// The refusal detector (no backtracking without one).
    pub probe: Option<&'a RefusalProbe>,
    /// The helper models and converters.
    pub helpers: Option<&'a Helpers>,
    /// The trial's seed.
    pub seed: u64,
}

fn decide(rec: &mut TraceRecorder, turn: u32, action: StrategyAction, detail: String) {
    rec.strategy(StrategyEvent::Decision(StrategyDecision {
        turn,
        action,
        detail,
    }));
}

/// The seed of one attacker call.
pub(crate) fn attacker_seed(trial_seed: u64, exchange: u32) -> u64 {
    (trial_seed ^ u64::from(exchange).wrapping_mul(0x9e37_79b9_7f4a_7c15)).rotate_left(11)
}

/// The state of one attack as it is played: its bounds, the exchanges kept and where the
/// scripted steps or the attacker stand.
struct Attack {
    /// The attacker model (`None` plays the scripted steps: crescendo).
    attacker: Option<Arc<dyn HelperModel>>,
    objective: String,
    max_turns: u32,
    max_backtracks: u32,
    /// Where the converter chain applies while the trial runs ([`runtime_from`]).
    from: Option<usize>,
    /// The recorded turns kept in the agent's conversation.
    kept: Vec<usize>,
    /// The attacker's messages the agent refused and that were taken back.
    refused_msgs: Vec<String>,
    backtracks: u32,
    /// Exchanges sent so far, kept or taken back.
    exchange: u32,
    /// The scripted step, and which of its wordings (0: the step's own, then its rephrases).
    step: usize,
    attempt: usize,
}

impl Attack {
    /// The attack's bounds and helpers; an attacker strategy needs an objective and a model.
    fn new(
        strategy: &Strategy,
        case: &Case,
        helpers: Option<&Helpers>,
    ) -> Result<Self, TargetError> {
        let scripted = case.turns.len() as u32;
        let max_turns = match strategy.kind {
            StrategyKind::Crescendo => strategy.max_turns.unwrap_or(scripted).min(scripted),
            StrategyKind::Attacker | StrategyKind::Tree => {
                strategy.max_turns.unwrap_or(DEFAULT_ATTACKER_TURNS)
            }
        };
        let objective = strategy.objective_for(case).unwrap_or_default();
        let attacker = match strategy.kind {
            StrategyKind::Attacker | StrategyKind::Tree => {
                if objective.is_empty() {
                    return Err(TargetError::Harness(
                        "this attacker case has no objective (`strategy.objective` or `input`)"
                            .into(),
                    ));
                }
                match helpers.and_then(|h| h.attacker.as_ref()) {
                    Some(a) => Some(Arc::clone(a)),
                    None => {
                        return Err(TargetError::Harness(
                            "this case's strategy needs an attacker model; pass --attacker TARGET"
                                .into(),
                        ));
                    }
                }
            }
            StrategyKind::Crescendo => None,
        };
        Ok(Attack {
            attacker,
            objective,
            max_turns,
            max_backtracks: strategy.max_backtracks.unwrap_or(DEFAULT_BACKTRACKS),
            from: runtime_from(case),
            kept: Vec::new(),
            refused_msgs: Vec::new(),
            backtracks: 0,
            exchange: 0,
            step: 0,
            attempt: 0,
        })
    }

    /// The next message: the scripted step in its current wording, or the attacker's.
    async fn propose(&self, case: &Case, p: &mut Play<'_, '_>) -> Result<String, TargetError> {
        let Some(a) = &self.attacker else {
            let t = &case.turns[self.step];
            return Ok(if self.attempt == 0 {
                t.user.clone()
            } else {
                t.rephrase[self.attempt - 1].clone()
            });
        };
        let records: Vec<_> = self.kept.iter().map(|&i| &p.rec.trace().turns[i]).collect();
        let refused: Vec<&str> = self.refused_msgs.iter().map(String::as_str).collect();
        let messages = attacker_messages(
            &self.objective,
            self.kept.len() as u32 + 1,
            self.max_turns,
            &records,
            &refused,
        );
        let seed = attacker_seed(p.seed, self.exchange);
        match call_helper(
            &**a,
            HelperRole::Attacker,
            None,
            ATTACKER_PROMPT_VERSION,
            self.exchange,
            messages,
            seed,
            p.rec,
        )
        .await
        {
            Ok(m) => Ok(m),
            Err(e) => {
                decide(p.rec, self.exchange, StrategyAction::Fault, e.clone());
                Err(TargetError::Harness(format!("the attacker failed: {e}")))
            }
        }
    }

    /// The proposed message with the case's run-time converters applied where its attack
    /// is ([`convert_user_turn`]).
    async fn convert(
        &self,
        case: &Case,
        proposed: &str,
        p: &mut Play<'_, '_>,
    ) -> Result<String, TargetError> {
        if self.from.is_none() {
            return Ok(proposed.to_owned());
        }
        let turn = if self.attacker.is_some() {
            self.exchange as usize
        } else {
            self.step + self.attempt * 1_000_000
        };
        match convert_user_turn(p.helpers, case, proposed, turn, p.rec).await {
            Ok(s) => Ok(s),
            Err(e) => {
                decide(p.rec, self.exchange, StrategyAction::Fault, e.to_string());
                Err(e)
            }
        }
    }

    /// After a refused exchange: takes it back while backtracks and wordings remain and the
    /// target can rewind, and records the decision. Returns whether the exchange stays.
    fn after_refusal(&mut self, case: &Case, proposed: String, p: &mut Play<'_, '_>) -> bool {
        let reword_left = match &self.attacker {
            Some(_) => true,
            None => self.attempt < case.turns[self.step].rephrase.len(),
        };
        let (exchange, max_backtracks) = (self.exchange, self.max_backtracks);
        if self.backtracks >= max_backtracks || !reword_left {
            decide(
                p.rec,
                exchange,
                StrategyAction::Keep,
                if reword_left {
                    format!("refused; no backtrack left ({max_backtracks} used)")
                } else {
                    "refused; this step has no other wording left".into()
                },
            );
            return true;
        }
        if !p.session.rewind() {
            decide(
                p.rec,
                exchange,
                StrategyAction::Keep,
                "refused; the target cannot take an exchange back, so it stays".into(),
            );
            return true;
        }
        self.backtracks += 1;
        let backtracks = self.backtracks;
        decide(
            p.rec,
            exchange,
            StrategyAction::Backtrack,
            format!(
                "refused; the exchange was taken back ({backtracks} of {max_backtracks} backtracks)"
            ),
        );
        match &self.attacker {
            Some(_) => self.refused_msgs.push(proposed),
            None => self.attempt += 1,
        }
        false
    }
}

/// The case's checks over `trace`, with what its suite gives them (the canary and the
/// system prompt in force for the case, the tools, the folder): how a trial is graded, and
/// how a strategy scores the conversation so far.
pub(crate) async fn grade_case(
    grader: &dyn Grader,
    pc: &PlannedCase,
    trace: &Trace,
    outcome: Outcome,
) -> Vec<Verdict> {
    let case = &*pc.case;
    let system_prompt = pc.suite.prompt_for(case);
    grader
        .grade(GradeContext {
            case,
            trace,
            outcome,
            canary: pc.suite.canary_for(case),
            system_prompt: system_prompt.as_deref(),
            tools: &pc.suite.tools,
            suite_dir: pc.suite.dir.as_deref(),
        })
        .await
}

/// Grades the conversation so far and records the score of exchange `exchange`; returns
/// whether the objective was reached.
async fn score_exchange(p: &mut Play<'_, '_>, exchange: u32, refused: bool) -> bool {
    let case = &*p.pc.case;
    let verdicts = grade_case(p.grader, p.pc, p.rec.trace(), Outcome::Completed).await;
    let reached = objective_reached(case, &verdicts);
    let keys = deciding_keys(case);
    let failed = verdicts
        .iter()
        .filter(|v| keys.contains(v.check.as_str()) && v.assessed && !v.passed)
        .map(|v| format!("{}: {}", v.label, v.evidence))
        .collect();
    let not_assessed = verdicts
        .iter()
        .filter(|v| keys.contains(v.check.as_str()) && !v.assessed)
        .map(|v| format!("{}: {}", v.label, v.evidence))
        .collect();
    let judge = verdicts.into_iter().flat_map(|v| v.judge_calls).collect();
    p.rec.strategy(StrategyEvent::Score(TurnScore {
        turn: exchange,
        reached,
        refused,
        failed,
        not_assessed,
        judge,
    }));
    reached
}

/// Plays a case's strategy: each exchange is proposed (the next scripted step, a rewording
/// after a refusal, or the attacker's message), converted, sent, recorded, and the
/// conversation so far graded; the attack stops when the objective is reached or its
/// bounds (turns, tokens) run out. A refused exchange is taken back from the agent's
/// conversation while backtracks remain, and the attacker is told.
pub async fn play(strategy: &Strategy, mut p: Play<'_, '_>) -> Result<(), TargetError> {
    let case = &*p.pc.case;
    let mut a = Attack::new(strategy, case, p.helpers)?;
    while (a.kept.len() as u32) < a.max_turns {
        let proposed = a.propose(case, &mut p).await?;
        let sent = a.convert(case, &proposed, &mut p).await?;
        let answer = p.session.turn(&sent, p.tools, p.rec).await?;
        let refused = p.probe.is_some_and(|probe| probe(&answer.content));
        p.rec.turn(sent, answer.content, answer.truncated);
        let index = p.rec.trace().turns.len() - 1;
        let exchange = a.exchange;
        if score_exchange(&mut p, exchange, refused).await {
            decide(
                p.rec,
                exchange,
                StrategyAction::Reached,
                format!(
                    "the objective was reached after {} exchange(s)",
                    exchange + 1
                ),
            );
            return Ok(());
        }
        let keep = !refused || a.after_refusal(case, proposed, &mut p);
        a.exchange += 1;
        if keep {
            a.kept.push(index);
            a.step += 1;
            a.attempt = 0;
            if !refused {
                decide(
                    p.rec,
                    exchange,
                    StrategyAction::Continue,
                    "not reached; kept".into(),
                );
            }
        }
        if let Some(limit) = strategy.max_tokens {
            let used = tokens_used(p.rec.trace());
            if used >= limit {
                decide(
                    p.rec,
                    exchange,
                    StrategyAction::Budget,
                    format!("{used} tokens used of {limit}: the attack stops unfinished"),
                );
                return Ok(());
            }
        }
    }
    decide(
        p.rec,
        a.exchange.saturating_sub(1),
        StrategyAction::MaxTurns,
        format!(
            "not reached in {} turn(s) ({} backtrack(s))",
            a.max_turns, a.backtracks
        ),
    );
    Ok(())
}

/// When a recorded attack stopped because its objective was reached, but the checks (as
/// they are now) no longer see it, the turns it never played were never put to the test:
/// the verdict that says so is not assessed, so the case cannot pass on a shortened attack.
pub fn early_stop_unconfirmed(case: &Case, trace: &Trace, verdicts: &[Verdict]) -> Option<Verdict> {
    let stopped = trace.strategy.iter().any(|e| {
        matches!(
            e,
            StrategyEvent::Decision(StrategyDecision {
                action: StrategyAction::Reached,
                ..
            })
        )
    });
    if !stopped || objective_reached(case, verdicts) {
        return None;
    }
    Some(Verdict::not_assessed(
        "strategy",
        "strategy (attack stopped early)".into(),
        gauntlet_core::verdict::Dimension::Policy,
        "the recorded attack stopped when its objective was reached, but the checks no longer see it reached; the turns it did not play were never tested".into(),
    ))
}

#[cfg(test)]
mod tests {
    use gauntlet_core::trace::{TreeNode, Usage};

    use super::*;

    fn usage(input_tokens: u64, output_tokens: u64) -> Usage {
        Usage {
            input_tokens,
            output_tokens,
        }
    }

    fn judged(tokens: u64) -> JudgeSpan {
        JudgeSpan {
            check: "jq".into(),
            usage: usage(tokens - 10, 10),
            ..JudgeSpan::default()
        }
    }

    /// Every model call made on the attack's behalf counts against `max_tokens`: the
    /// agent's, the attacker's, and the judges' that scored an exchange or a tree's reply.
    #[test]
    fn tokens_used_counts_the_judges_that_scored_the_exchanges() {
        let mut rec = TraceRecorder::new();
        rec.llm_call(
            None,
            vec![Message::user("hi")],
            Message::assistant("hello"),
            usage(40, 10),
            1,
            None,
            1,
        );
        rec.strategy(StrategyEvent::HelperCall(HelperCall {
            role: HelperRole::Attacker,
            turn: 0,
            converter: None,
            endpoint: "fake".into(),
            prompt: ATTACKER_PROMPT_VERSION.into(),
            seed: 0,
            model: None,
            messages_in: Vec::new(),
            answer: "hi".into(),
            usage: usage(90, 10),
            latency_ms: 0,
            attempts: 1,
            cached: false,
            error: None,
        }));
        rec.strategy(StrategyEvent::Score(TurnScore {
            turn: 0,
            reached: false,
            refused: false,
            failed: Vec::new(),
            not_assessed: Vec::new(),
            judge: vec![judged(300), judged(200)],
        }));
        rec.strategy(StrategyEvent::TreeNode(TreeNode {
            id: 1,
            judge_calls: vec![judged(1000)],
            ..TreeNode::default()
        }));
        assert_eq!(tokens_used(rec.trace()), 50 + 100 + 500 + 1000);
    }
}
