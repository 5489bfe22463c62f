//! One trial as OpenTelemetry spans: [`trial_spans`], a pure function of the trial, the
//! run's facts and the trial's end time.
//!
//! The tree of a trial (one trace per trial):
//!
//! ```text
//! eval CASE            the trial: case, trial index, verdicts, state, evidence level
//! ├── chat MODEL       one per model call (gen_ai.operation.name = chat)
//! ├── execute_tool T   one per tool execution (gen_ai.operation.name = execute_tool)
//! └── ...              in the order the trace recorded them
//! ```
//!
//! Tool executions are siblings of the model calls, not their children: a tool runs after
//! the call that asked for it has returned, and a child outside its parent's time is what
//! the GenAI conventions' agent spans avoid too. Verdicts are `gen_ai.evaluation.result`
//! events on the eval span; decisions the agent reported are `gauntlet.decision` events.
//!
//! Timing comes from the trace: the trial ends when its case finished (the event's time) and
//! lasts its recorded wall time; model and tool spans follow one another from the trial's
//! start with their recorded latencies and durations (a trace records how long each call
//! took and in which order, not when each began), clamped to the trial.
//!
//! Ids are derived from the run id, the case id and the trial index (SHA-256), so the spans
//! of one trial always get the same trace id, and a backend or `gauntlet grade TRACES` can
//! find a trial from `gauntlet.run.id`, `gauntlet.case.id` and `gauntlet.trial.index`.
//!
//! Message content (prompts, answers, tool arguments and results, the graders' evidence)
//! goes into spans only with `content`, and every text that goes in passes through the run's
//! [`Redactor`] first. Usage is mapped in [`usage_attributes`] alone.

use std::borrow::Cow;
use std::time::{Duration, SystemTime};

use gauntlet_core::event::{EvidenceLevel, SideEffectMode};
use gauntlet_core::redact::Redactor;
use gauntlet_core::result::{CaseMeta, CaseStatus, Outcome, TrialResult};
use gauntlet_core::target::TargetInfo;
use gauntlet_core::trace::{LlmSpan, Message, Role, Span, ToolSpan, Usage};
use opentelemetry::trace::{
    Event, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{Array, InstrumentationScope, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::semconv as sc;

/// The longest text put in one attribute; longer text is cut (after redaction) and ends
/// with `…`.
pub const MAX_TEXT: usize = 16 * 1024;

/// What the run says about every trial: from its manifest.
#[derive(Debug, Clone, Default)]
pub struct RunFacts {
    /// The run id.
    pub run_id: String,
    /// `run`, `redteam`, ...
    pub command: String,
    /// The target.
    pub target: TargetInfo,
    /// The run's evidence level.
    pub evidence_level: EvidenceLevel,
    /// Whether side effects were real.
    pub side_effects: SideEffectMode,
    /// gauntlet's version (the instrumentation scope's).
    pub version: String,
}

impl RunFacts {
    /// The GenAI provider of the model calls, when the target says which it is. A target
    /// that runs its own agent (an HTTP app, a subprocess, a proxied agent) reports calls to
    /// whatever it uses, which gauntlet does not know: no provider is claimed for them.
    pub fn provider(&self) -> Option<&'static str> {
        match self.target.kind.as_str() {
            // The Responses API is OpenAI's too: the same provider, another endpoint.
            "openai" | "openai-responses" => Some("openai"),
            "anthropic" => Some("anthropic"),
            "fake" => Some("gauntlet.fake"),
            _ => None,
        }
    }
}

/// How each trial's spans are written.
#[derive(Debug, Clone)]
pub struct SpanOptions {
    /// Put message content in spans (prompts, answers, tool arguments and results,
    /// evidence). Off by default.
    pub content: bool,
    /// Applied to every text that goes into a span.
    pub redactor: Redactor,
}

/// The spans of one trial: the eval span first, then its children in trace order. `end` is
/// when the trial finished.
pub fn trial_spans(
    run: &RunFacts,
    case: &CaseMeta,
    case_status: CaseStatus,
    trial: &TrialResult,
    end: SystemTime,
    opts: &SpanOptions,
) -> Vec<SpanData> {
    let (trace_id, eval_id) = ids(&run.run_id, &case.id, trial.trial);
    let scope = InstrumentationScope::builder("gauntlet")
        .with_version(run.version.clone())
        .build();
    let start = end
        .checked_sub(Duration::from_millis(trial.duration_ms))
        .unwrap_or(end);
    let tree = Tree {
        trace_id,
        eval_id,
        scope: &scope,
        span: (start, end),
    };
    let (mut out, mut events) = child_spans(run, trial, &tree, opts);
    events.extend(verdict_events(trial, end, opts));
    let mut span_events = SpanEvents::default();
    span_events.events = events;
    let eval = SpanData {
        span_context: context(trace_id, eval_id),
        parent_span_id: SpanId::INVALID,
        parent_span_is_remote: false,
        span_kind: SpanKind::Internal,
        name: Cow::Owned(format!("eval {}", case.id)),
        start_time: start,
        end_time: end,
        attributes: eval_attributes(run, case, case_status, trial, opts),
        dropped_attributes_count: 0,
        events: span_events,
        links: SpanLinks::default(),
        status: eval_status(trial, opts),
        instrumentation_scope: scope,
    };
    out.insert(0, eval);
    out
}

/// Where a trial's child spans hang: its trace, its eval span, the scope, and the eval
/// span's start and end (children are clamped to it).
struct Tree<'a> {
    trace_id: TraceId,
    eval_id: SpanId,
    scope: &'a InstrumentationScope,
    span: (SystemTime, SystemTime),
}

/// The eval span's children (model calls and tool executions, one after another from the
/// trial's start) and the `gauntlet.decision` events of the decisions between them.
fn child_spans(
    run: &RunFacts,
    trial: &TrialResult,
    tree: &Tree<'_>,
    opts: &SpanOptions,
) -> (Vec<SpanData>, Vec<Event>) {
    let text = |s: &str| clip(&opts.redactor, s);
    let (start, end) = tree.span;
    let mut out = Vec::with_capacity(trial.trace.spans.len() + 1);
    let mut events = Vec::new();
    let mut cursor = start;
    let at = |from: SystemTime, ms: u64| -> SystemTime {
        let t = from + Duration::from_millis(ms);
        if t > end { end } else { t }
    };
    for span in &trial.trace.spans {
        match span {
            Span::LlmCall(l) => {
                let s = cursor;
                let e = at(s, l.latency_ms);
                cursor = e;
                out.push(child(
                    tree.trace_id,
                    tree.eval_id,
                    child_id(tree.trace_id, l.id),
                    SpanKind::Client,
                    format!(
                        "{} {}",
                        sc::OP_CHAT,
                        request_model(run, l).unwrap_or("unknown")
                    ),
                    (s, e),
                    chat_attributes(run, l, opts),
                    Status::Unset,
                    tree.scope.clone(),
                ));
            }
            Span::ToolCall(t) => {
                let s = cursor;
                let e = at(s, t.duration_ms);
                cursor = e;
                let status = match &t.error {
                    Some(err) => Status::error(text(err)),
                    None => Status::Unset,
                };
                out.push(child(
                    tree.trace_id,
                    tree.eval_id,
                    child_id(tree.trace_id, t.id),
                    SpanKind::Internal,
                    format!("{} {}", sc::OP_EXECUTE_TOOL, t.name),
                    (s, e),
                    tool_attributes(t, opts),
                    status,
                    tree.scope.clone(),
                ));
            }
            Span::Decision(d) => {
                let mut attrs = vec![KeyValue::new(sc::DECISION_BRANCH, text(&d.branch))];
                if let Some(a) = &d.agent {
                    attrs.push(KeyValue::new(sc::AGENT_NAME, text(a)));
                }
                if opts.content
                    && let Some(r) = &d.reason
                {
                    attrs.push(KeyValue::new(sc::DECISION_REASON, text(r)));
                }
                events.push(Event::new(sc::DECISION, cursor, attrs, 0));
            }
        }
    }
    (out, events)
}

/// Verdicts: one gen_ai.evaluation.result event each, at the trial's end (when grading
/// happened).
fn verdict_events(trial: &TrialResult, end: SystemTime, opts: &SpanOptions) -> Vec<Event> {
    let text = |s: &str| clip(&opts.redactor, s);
    let mut events = Vec::with_capacity(trial.verdicts.len());
    for v in &trial.verdicts {
        let label = if !v.assessed {
            "not_assessed"
        } else if v.passed {
            "pass"
        } else {
            "fail"
        };
        let mut attrs = vec![
            KeyValue::new(sc::EVALUATION_NAME, text(&v.label)),
            KeyValue::new(sc::EVALUATION_SCORE_LABEL, label),
            KeyValue::new(sc::VERDICT_CHECK, v.check.clone()),
            KeyValue::new(sc::VERDICT_DIMENSION, v.dimension.as_str()),
            KeyValue::new(sc::VERDICT_GATING, v.gating),
            KeyValue::new(sc::VERDICT_HARD_FAIL, v.hard_fail),
        ];
        if v.assessed {
            attrs.push(KeyValue::new(
                sc::EVALUATION_SCORE_VALUE,
                f64::from(v.score),
            ));
        }
        if opts.content {
            attrs.push(KeyValue::new(sc::EVALUATION_EXPLANATION, text(&v.evidence)));
        }
        events.push(Event::new(sc::EVALUATION_RESULT, end, attrs, 0));
    }
    events
}

/// The eval span's attributes: the run, the case, the trial and its verdicts (with
/// `content`, the hard failures and the turns too).
fn eval_attributes(
    run: &RunFacts,
    case: &CaseMeta,
    case_status: CaseStatus,
    trial: &TrialResult,
    opts: &SpanOptions,
) -> Vec<KeyValue> {
    let text = |s: &str| clip(&opts.redactor, s);
    let mut attrs = vec![
        KeyValue::new(sc::RUN_ID, run.run_id.clone()),
        KeyValue::new(sc::RUN_COMMAND, run.command.clone()),
        KeyValue::new(sc::TARGET, text(&run.target.label)),
        KeyValue::new(sc::EVIDENCE_LEVEL, evidence_str(run.evidence_level)),
        KeyValue::new(sc::SIDE_EFFECTS, side_effects_str(run.side_effects)),
        KeyValue::new(sc::CASE_ID, case.id.clone()),
        KeyValue::new(sc::CASE_NAME, case.name.clone()),
        KeyValue::new(sc::CASE_SUITE, case.suite.clone()),
        KeyValue::new(sc::CASE_KIND, case.kind.as_str()),
        KeyValue::new(sc::CASE_BLOCKING, case.blocking),
        KeyValue::new(sc::CASE_STATUS, case_status.as_str()),
        KeyValue::new(sc::TRIAL_INDEX, i64::from(trial.trial)),
        KeyValue::new(sc::TRIAL_OUTCOME, trial.outcome.as_str()),
        KeyValue::new(sc::TRIAL_STATUS, trial.status.as_str()),
        KeyValue::new(
            sc::CONVERSATION_ID,
            format!("{}/{}/{}", run.run_id, case.id, trial.trial),
        ),
        KeyValue::new(sc::VERDICTS_COUNT, trial.verdicts.len() as i64),
        KeyValue::new(sc::OI_SPAN_KIND, sc::OI_KIND_AGENT),
    ];
    for (key, value) in [
        (sc::CASE_PACK, &case.pack),
        (sc::CASE_OWASP, &case.owasp),
        (sc::CASE_TECHNIQUE, &case.technique),
    ] {
        if let Some(v) = value {
            attrs.push(KeyValue::new(key, v.clone()));
        }
    }
    if let Some(score) = trial.score.value() {
        attrs.push(KeyValue::new(sc::TRIAL_SCORE, score));
    }
    let failed: Vec<String> = trial
        .verdicts
        .iter()
        .filter(|v| v.counts() && !v.passed)
        .map(|v| text(&v.label))
        .collect();
    if !failed.is_empty() {
        attrs.push(KeyValue::new(sc::VERDICTS_FAILED, strings(failed)));
    }
    let unassessed: Vec<String> = trial
        .verdicts
        .iter()
        .filter(|v| v.gating && !v.assessed)
        .map(|v| text(&v.label))
        .collect();
    if !unassessed.is_empty() {
        attrs.push(KeyValue::new(
            sc::VERDICTS_NOT_ASSESSED,
            strings(unassessed),
        ));
    }
    match trial.outcome {
        Outcome::Completed => {}
        other => attrs.push(KeyValue::new(sc::ERROR_TYPE, other.as_str())),
    }
    if opts.content {
        let hard: Vec<String> = trial
            .hard_fails()
            .map(|v| text(&format!("{}: {}", v.label, v.evidence)))
            .collect();
        if !hard.is_empty() {
            attrs.push(KeyValue::new(sc::HARD_FAILS, strings(hard)));
        }
        attrs.extend(input_output(trial, opts));
        let turns: Vec<serde_json::Value> = trial
            .trace
            .turns
            .iter()
            .map(|t| json!({"user": text(&t.user), "answer": text(&t.answer)}))
            .collect();
        if !turns.is_empty() {
            attrs.push(KeyValue::new(
                sc::TURNS,
                serde_json::Value::Array(turns).to_string(),
            ));
        }
    }
    attrs
}

/// The case's input and output as OpenInference reads them, so a trace UI's span list shows
/// what was said without opening the trace: the user turns (joined by a blank line when
/// there were several) and the last answer, as plain text. Content mode only.
fn input_output(trial: &TrialResult, opts: &SpanOptions) -> Vec<KeyValue> {
    let text = |s: &str| clip(&opts.redactor, s);
    let turns = &trial.trace.turns;
    let mut attrs = Vec::with_capacity(4);
    if !turns.is_empty() {
        let input: Vec<&str> = turns.iter().map(|t| t.user.as_str()).collect();
        attrs.push(KeyValue::new(sc::OI_INPUT_VALUE, text(&input.join("\n\n"))));
        attrs.push(KeyValue::new(sc::OI_INPUT_MIME, "text/plain"));
    }
    if let Some(last) = turns.last() {
        attrs.push(KeyValue::new(sc::OI_OUTPUT_VALUE, text(&last.answer)));
        attrs.push(KeyValue::new(sc::OI_OUTPUT_MIME, "text/plain"));
    }
    attrs
}

/// The trial's state as the eval span's status.
fn eval_status(trial: &TrialResult, opts: &SpanOptions) -> Status {
    let text = |s: &str| clip(&opts.redactor, s);
    // The state in the span's status, so that a backend's error filter finds the failures:
    // FAIL and ERROR are errors, PASS is ok, the rest (CONDITIONAL, NOT_ASSESSED, BLOCKED)
    // are neither.
    match trial.status {
        CaseStatus::Pass => Status::Ok,
        CaseStatus::Fail => Status::error(match failed_summary(trial) {
            Some(s) => format!("FAIL: {s}"),
            None => "FAIL".to_owned(),
        }),
        CaseStatus::Error => Status::error(match &trial.error {
            Some(e) => format!("ERROR: {}", text(e)),
            None => "ERROR".to_owned(),
        }),
        _ => Status::Unset,
    }
}

/// The labels of the failed gating checks, for the eval span's status.
fn failed_summary(trial: &TrialResult) -> Option<String> {
    let labels: Vec<&str> = trial
        .verdicts
        .iter()
        .filter(|v| v.counts() && !v.passed)
        .map(|v| v.label.as_str())
        .collect();
    (!labels.is_empty()).then(|| labels.join(", "))
}

/// The model asked for: the target's configured model, else the one the call reported.
fn request_model<'a>(run: &'a RunFacts, l: &'a LlmSpan) -> Option<&'a str> {
    run.target.model.as_deref().or(l.model.as_deref())
}

/// The attributes of a model call.
fn chat_attributes(run: &RunFacts, l: &LlmSpan, opts: &SpanOptions) -> Vec<KeyValue> {
    let text = |s: &str| clip(&opts.redactor, s);
    let mut a = vec![
        KeyValue::new(sc::OPERATION_NAME, sc::OP_CHAT),
        KeyValue::new(sc::OI_SPAN_KIND, sc::OI_KIND_LLM),
    ];
    if let Some(p) = run.provider() {
        a.push(KeyValue::new(sc::PROVIDER_NAME, p));
        a.push(KeyValue::new(sc::SYSTEM, p));
    }
    if let Some(m) = request_model(run, l) {
        a.push(KeyValue::new(sc::REQUEST_MODEL, text(m)));
    }
    if let Some(m) = &l.model {
        a.push(KeyValue::new(sc::RESPONSE_MODEL, text(m)));
    }
    if let Some(f) = &l.finish_reason {
        a.push(KeyValue::new(
            sc::RESPONSE_FINISH_REASONS,
            strings(vec![text(f)]),
        ));
    }
    if let Some(agent) = &l.agent {
        a.push(KeyValue::new(sc::AGENT_NAME, text(agent)));
    }
    a.extend(usage_attributes(&l.usage));
    a.push(KeyValue::new(sc::ATTEMPTS, i64::from(l.attempts)));
    if opts.content {
        let (system, rest): (Vec<&Message>, Vec<&Message>) =
            l.messages_in.iter().partition(|m| m.role == Role::System);
        if !system.is_empty() {
            let parts: Vec<serde_json::Value> = system
                .iter()
                .map(|m| json!({"type": "text", "content": text(&m.content)}))
                .collect();
            a.push(KeyValue::new(
                sc::SYSTEM_INSTRUCTIONS,
                serde_json::Value::Array(parts).to_string(),
            ));
        }
        let input: Vec<serde_json::Value> =
            rest.iter().map(|m| message_json(m, None, opts)).collect();
        a.push(KeyValue::new(
            sc::INPUT_MESSAGES,
            serde_json::Value::Array(input).to_string(),
        ));
        let output = message_json(&l.message_out, l.finish_reason.as_deref(), opts);
        a.push(KeyValue::new(
            sc::OUTPUT_MESSAGES,
            serde_json::Value::Array(vec![output]).to_string(),
        ));
    }
    a
}

/// Token usage as the conventions' attributes, only when the API reported any: a call with
/// no usage reported has none written (zero would claim a count that was not observed).
/// The one place usage is read, so a richer usage type changes this function alone.
pub fn usage_attributes(usage: &Usage) -> Vec<KeyValue> {
    if usage.input_tokens == 0 && usage.output_tokens == 0 {
        return Vec::new();
    }
    vec![
        KeyValue::new(sc::USAGE_INPUT_TOKENS, usage.input_tokens as i64),
        KeyValue::new(sc::USAGE_OUTPUT_TOKENS, usage.output_tokens as i64),
    ]
}

/// A message in the conventions' JSON shape: `{"role", "parts": [...]}`, with
/// `finish_reason` on an output message.
fn message_json(m: &Message, finish: Option<&str>, opts: &SpanOptions) -> serde_json::Value {
    let text = |s: &str| clip(&opts.redactor, s);
    let mut parts = Vec::new();
    if m.role == Role::Tool {
        parts.push(json!({
            "type": "tool_call_response",
            "id": m.tool_call_id.as_deref().unwrap_or(""),
            "response": text(&m.content),
        }));
    } else if !m.content.is_empty() {
        parts.push(json!({"type": "text", "content": text(&m.content)}));
    }
    for c in &m.tool_calls {
        let mut args = c.arguments.clone();
        opts.redactor.redact_json(&mut args);
        parts.push(json!({
            "type": "tool_call",
            "id": c.id,
            "name": c.name,
            "arguments": args,
        }));
    }
    let role = match m.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let mut v = json!({"role": role, "parts": parts});
    if let Some(f) = finish {
        v["finish_reason"] = json!(text(f));
    }
    v
}

/// The attributes of a tool execution.
fn tool_attributes(t: &ToolSpan, opts: &SpanOptions) -> Vec<KeyValue> {
    let text = |s: &str| clip(&opts.redactor, s);
    let mut a = vec![
        KeyValue::new(sc::OPERATION_NAME, sc::OP_EXECUTE_TOOL),
        KeyValue::new(sc::OI_SPAN_KIND, sc::OI_KIND_TOOL),
        KeyValue::new(sc::TOOL_NAME, text(&t.name)),
        KeyValue::new(sc::TOOL_CALL_ID, text(&t.call_id)),
        KeyValue::new(sc::TOOL_TYPE, "function"),
        KeyValue::new(
            sc::TOOL_APPROVAL,
            match t.approval {
                gauntlet_core::trace::Approval::NotRequired => "not_required",
                gauntlet_core::trace::Approval::Granted => "granted",
                gauntlet_core::trace::Approval::Missing => "missing",
            },
        ),
    ];
    if let Some(agent) = &t.agent {
        a.push(KeyValue::new(sc::AGENT_NAME, text(agent)));
    }
    if let Some(se) = &t.side_effect {
        a.push(KeyValue::new(sc::TOOL_SIDE_EFFECT, json_str(&se.class)));
        a.push(KeyValue::new(
            sc::TOOL_DISPOSITION,
            json_str(&se.disposition),
        ));
    }
    if let Some(i) = &t.injected {
        a.push(KeyValue::new(sc::TOOL_INJECTED, text(i)));
    }
    if t.error.is_some() {
        a.push(KeyValue::new(sc::ERROR_TYPE, "tool_error"));
    }
    if opts.content {
        let mut args = t.arguments.clone();
        opts.redactor.redact_json(&mut args);
        a.push(KeyValue::new(
            sc::TOOL_CALL_ARGUMENTS,
            clip(&opts.redactor, &args.to_string()),
        ));
        if let Some(o) = &t.output {
            a.push(KeyValue::new(sc::TOOL_CALL_RESULT, text(o)));
        }
    }
    a
}

/// A serde enum's name (`"performed"`), without its quotes.
fn json_str<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

#[allow(clippy::too_many_arguments)]
fn child(
    trace_id: TraceId,
    parent: SpanId,
    id: SpanId,
    kind: SpanKind,
    name: String,
    (start, end): (SystemTime, SystemTime),
    attributes: Vec<KeyValue>,
    status: Status,
    scope: InstrumentationScope,
) -> SpanData {
    SpanData {
        span_context: context(trace_id, id),
        parent_span_id: parent,
        parent_span_is_remote: false,
        span_kind: kind,
        name: Cow::Owned(name),
        start_time: start,
        end_time: end,
        attributes,
        dropped_attributes_count: 0,
        events: SpanEvents::default(),
        links: SpanLinks::default(),
        status,
        instrumentation_scope: scope,
    }
}

fn context(trace_id: TraceId, span_id: SpanId) -> SpanContext {
    SpanContext::new(
        trace_id,
        span_id,
        TraceFlags::SAMPLED,
        false,
        TraceState::NONE,
    )
}

/// The trace id of a trial and the id of its eval span.
pub fn ids(run_id: &str, case_id: &str, trial: u32) -> (TraceId, SpanId) {
    let mut h = Sha256::new();
    h.update(run_id.as_bytes());
    h.update([0]);
    h.update(case_id.as_bytes());
    h.update([0]);
    h.update(trial.to_le_bytes());
    let d = h.finalize();
    let mut t = [0u8; 16];
    t.copy_from_slice(&d[..16]);
    let mut s = [0u8; 8];
    s.copy_from_slice(&d[16..24]);
    // All-zero ids are invalid in OTLP; a hash that gives one is nudged.
    if t == [0; 16] {
        t[15] = 1;
    }
    if s == [0; 8] {
        s[7] = 1;
    }
    (TraceId::from_bytes(t), SpanId::from_bytes(s))
}

/// The id of the span for trace span `n` of a trial.
fn child_id(trace_id: TraceId, n: u32) -> SpanId {
    let mut h = Sha256::new();
    h.update(trace_id.to_bytes());
    h.update(n.to_le_bytes());
    let d = h.finalize();
    let mut s = [0u8; 8];
    s.copy_from_slice(&d[..8]);
    if s == [0; 8] {
        s[7] = 1;
    }
    SpanId::from_bytes(s)
}

/// Redacts, then cuts to [`MAX_TEXT`].
fn clip(r: &Redactor, s: &str) -> String {
    let (mut out, cut) = r.clip(s, MAX_TEXT, false);
    if cut {
        out.push('…');
    }
    out
}

fn strings(v: Vec<String>) -> Value {
    Value::Array(Array::String(
        v.into_iter().map(StringValue::from).collect(),
    ))
}

fn evidence_str(e: EvidenceLevel) -> &'static str {
    match e {
        EvidenceLevel::Static => "static",
        EvidenceLevel::Offline => "offline",
        EvidenceLevel::Replay => "replay",
        EvidenceLevel::Canary => "canary",
        EvidenceLevel::Online => "online",
    }
}

fn side_effects_str(s: SideEffectMode) -> &'static str {
    match s {
        SideEffectMode::Real => "real",
        SideEffectMode::Simulated => "simulated",
        SideEffectMode::Blocked => "blocked",
    }
}

#[cfg(test)]
mod provider_tests {
    use super::*;

    fn provider_of(kind: &str) -> Option<&'static str> {
        RunFacts {
            target: TargetInfo {
                kind: kind.into(),
                ..TargetInfo::default()
            },
            ..RunFacts::default()
        }
        .provider()
    }

    #[test]
    fn both_openai_wires_name_openai_and_an_agent_s_own_names_none() {
        assert_eq!(provider_of("openai"), Some("openai"));
        assert_eq!(provider_of("openai-responses"), Some("openai"));
        assert_eq!(provider_of("anthropic"), Some("anthropic"));
        assert_eq!(provider_of("proxy"), None);
    }
}
