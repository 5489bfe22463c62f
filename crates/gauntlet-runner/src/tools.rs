//! Simulated tools: [`SimTools`], the [`ToolHost`] that answers an agent's tool calls from the
//! suite's fixtures, enforces approvals, injects the case's faults and poisoned outputs, and
//! records every call and the side effect it would have had.
//!
//! Nothing real ever runs: an irreversible call is recorded as `simulated` when it went
//! through and `blocked` when approval was missing or a fault stopped it. The injection
//! itself ([`FaultSchedule`], [`ToolAnswer`]) is `gauntlet-core`'s, shared with the recording
//! proxy.

use std::time::Instant;

use gauntlet_core::glob;
use gauntlet_core::suite::Case;
use gauntlet_core::target::ToolHost;
use gauntlet_core::tools::{
    FaultKind, FaultSchedule, SideEffectClass, ToolAnswer, ToolDef, summarize_args,
};
use gauntlet_core::trace::{
    Approval, Disposition, Message, SideEffect, ToolCallRequest, ToolSpanInput, TraceRecorder,
};
use serde_json::Value;

/// Answers tool calls for one trial.
pub struct SimTools<'a> {
    tools: &'a [ToolDef],
    faults: FaultSchedule<'a>,
    approvals: &'a [String],
}

impl<'a> SimTools<'a> {
    /// Tools of a suite, with the faults and approvals of one case.
    pub fn new(tools: &'a [ToolDef], case: &'a Case) -> Self {
        SimTools {
            tools,
            faults: FaultSchedule::new(&case.tool_faults[..]),
            approvals: &case.approvals,
        }
    }
}

/// The first fixture whose `when` matches the arguments.
fn fixture_for<'t>(tool: &'t ToolDef, args: &Value) -> Option<&'t Value> {
    tool.fixtures
        .iter()
        .find(|f| {
            f.when.iter().all(|(k, want)| match (want, args.get(k)) {
                (Value::String(pat), Some(Value::String(got))) => glob(pat, got),
                (Value::String(pat), Some(other)) => glob(pat, &other.to_string()),
                (want, Some(got)) => want == got,
                (_, None) => false,
            })
        })
        .map(|f| &f.returns)
}

impl ToolHost for SimTools<'_> {
    fn call(&mut self, call: &ToolCallRequest, rec: &mut TraceRecorder) -> Message {
        let started = Instant::now();
        let mut span = ToolSpanInput {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            output: None,
            error: None,
            duration_ms: 0,
            approval: Approval::NotRequired,
            side_effect: None,
        };
        let Some(def) = self.tools.iter().find(|t| t.name == call.name) else {
            let e = format!("error: unknown tool `{}`", call.name);
            span.error = Some(e.clone());
            rec.tool_call(span);
            return Message::tool_result(&call.id, &call.name, e);
        };
        if call.malformed {
            let e = "error: the arguments are not valid JSON".to_owned();
            span.error = Some(e.clone());
            rec.tool_call(span);
            return Message::tool_result(&call.id, &call.name, e);
        }
        let effect = |disposition| {
            (def.side_effect != SideEffectClass::ReadOnly).then(|| SideEffect {
                tool: def.name.clone(),
                class: def.side_effect,
                disposition,
                description: summarize_args(&call.arguments),
            })
        };
        // Counted before the approval check: a blocked call uses up a fault's `times` too.
        let injection = self.faults.next(&def.name);
        if def.needs_approval(&call.arguments) {
            if self.approvals.iter().any(|a| a == &def.name) {
                span.approval = Approval::Granted;
            } else {
                span.approval = Approval::Missing;
                let e = format!(
                    "error: approval required: `{}` needs a human's approval for these arguments; the call was blocked and nothing was changed",
                    def.name
                );
                span.error = Some(e.clone());
                span.side_effect = effect(Disposition::Blocked);
                span.duration_ms = started.elapsed().as_millis() as u64;
                rec.tool_call(span);
                return Message::tool_result(&call.id, &call.name, e);
            }
        }
        let answer = match fixture_for(def, &call.arguments).or(def.default.as_ref()) {
            Some(v) => ToolAnswer::Value(v),
            None => ToolAnswer::NoFixture(&def.name),
        };
        let injected = injection.apply(answer);
        let performed =
            injected.error.is_none() && !matches!(injected.fault, Some(FaultKind::Malformed));
        span.side_effect = effect(if performed {
            Disposition::Simulated
        } else {
            Disposition::Blocked
        });
        span.duration_ms = started.elapsed().as_millis() as u64;
        let text = injected.text().to_owned();
        let marks = injected.marks();
        span.output = injected.output;
        span.error = injected.error;
        rec.tool_call_injected(span, marks);
        Message::tool_result(&call.id, &call.name, text)
    }
}
