//! Simulated tools: [`SimTools`], the [`ToolHost`] that answers an agent's tool calls from the
//! suite's fixtures, enforces approvals, injects the case's faults and poisoned outputs, and
//! records every call and the side effect it would have had.
//!
//! Nothing real ever runs: an irreversible call is recorded as `simulated` when it went
//! through and `blocked` when approval was missing or a fault stopped it.

use std::collections::HashMap;
use std::time::Instant;

use gauntlet_core::glob;
use gauntlet_core::suite::Case;
use gauntlet_core::target::ToolHost;
use gauntlet_core::tools::{
    FaultKind, MALFORMED_OUTPUT, SideEffectClass, ToolDef, ToolFault, partial_value, poison_output,
    summarize_args,
};
use gauntlet_core::trace::{
    Approval, Disposition, Message, SideEffect, ToolCallRequest, ToolSpanInput, TraceRecorder,
};
use serde_json::Value;

/// Answers tool calls for one trial.
pub struct SimTools<'a> {
    tools: &'a [ToolDef],
    faults: &'a [ToolFault],
    approvals: &'a [String],
    used: HashMap<usize, u32>,
}

impl<'a> SimTools<'a> {
    /// Tools of a suite, with the faults and approvals of one case.
    pub fn new(tools: &'a [ToolDef], case: &'a Case) -> Self {
        SimTools {
            tools,
            faults: &case.tool_faults,
            approvals: &case.approvals,
            used: HashMap::new(),
        }
    }

    /// The fault (and poison) that applies to this call, counting uses against `times`.
    fn take_fault(&mut self, tool: &str) -> (Option<FaultKind>, Option<&'a str>) {
        let mut fault = None;
        let mut poison = None;
        for (i, f) in self.faults.iter().enumerate() {
            if f.tool != tool {
                continue;
            }
            let used = self.used.entry(i).or_default();
            if f.times.is_some_and(|t| *used >= t) {
                continue;
            }
            *used += 1;
            fault = fault.or(f.fault);
            poison = poison.or(f.poison.as_deref());
        }
        (fault, poison)
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

fn render(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
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
        let (fault, poison) = self.take_fault(&def.name);
        let mut injected = Vec::new();
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
        let base = fixture_for(def, &call.arguments)
            .or(def.default.as_ref())
            .cloned();
        let (output, error) = match fault {
            Some(k) => {
                injected.push(format!("fault:{}", k.as_str()));
                match (k, k.error_text()) {
                    (_, Some(e)) => (None, Some(e.to_owned())),
                    (FaultKind::Malformed, None) => (Some(MALFORMED_OUTPUT.to_owned()), None),
                    (_, None) => (base.as_ref().map(|b| render(&partial_value(b))), None),
                }
            }
            None => match &base {
                Some(v) => (Some(render(v)), None),
                None => (
                    None,
                    Some(format!(
                        "error: no fixture of `{}` matches these arguments",
                        def.name
                    )),
                ),
            },
        };
        let output = match (output, poison) {
            (Some(out), Some(p)) => {
                injected.push("poison".into());
                Some(poison_output(&out, p))
            }
            (o, _) => o,
        };
        let performed = error.is_none() && !matches!(fault, Some(FaultKind::Malformed));
        span.side_effect = effect(if performed {
            Disposition::Simulated
        } else {
            Disposition::Blocked
        });
        span.duration_ms = started.elapsed().as_millis() as u64;
        let text = output.clone().or_else(|| error.clone()).unwrap_or_default();
        span.output = output;
        span.error = error;
        let injected = (!injected.is_empty()).then(|| injected.join(","));
        rec.tool_call_injected(span, injected);
        Message::tool_result(&call.id, &call.name, text)
    }
}
