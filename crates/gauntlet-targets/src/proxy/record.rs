//! Recording and injection, per session: [`SessionState`]'s handling of each model reply (an
//! LLM span; the tool calls it asks for become pending) and of the tool results in the next
//! request (tool spans, paired by call id, with the case's faults and poisons applied in
//! transit and the rewritten text kept for every later request).

use std::time::Instant;

use gauntlet_core::tools::{SideEffectClass, ToolAnswer, summarize_args};
use gauntlet_core::trace::{
    Approval, Disposition, SideEffect, ToolCallRequest, ToolSpanInput, TransportKind,
};
use serde_json::Value;

use super::session::{PendingCall, Rewrite, SessionState};
use super::{NO_RESULT, Wire};
use crate::chat::ChatReply;
use crate::openai;

impl SessionState {
    fn side_effect(&self, call: &ToolCallRequest, disposition: Disposition) -> Option<SideEffect> {
        let def = self.tools.iter().find(|t| t.name == call.name)?;
        (def.side_effect != SideEffectClass::ReadOnly).then(|| SideEffect {
            tool: def.name.clone(),
            class: def.side_effect,
            disposition,
            description: summarize_args(&call.arguments),
        })
    }

    /// A tool result arrived for `id`: if it answers a pending call, record the tool span
    /// (applying the session's faults), and say what the model should see instead, if
    /// anything.
    fn result_arrived(&mut self, id: &str, content: &str, flagged_error: bool) {
        let Some(at) = self.pending.iter().position(|p| p.call.id == id) else {
            return;
        };
        let p = self.pending.remove(at);
        let real_error = flagged_error || starts_with_error(content);
        let answer = if real_error {
            ToolAnswer::Error(content)
        } else {
            ToolAnswer::Text(content)
        };
        let injected = self.faults.next(&p.call.name).apply(answer);
        let marks = injected.marks();
        // The agent's tool ran: its effect happened whatever the model is told afterwards.
        let disposition = if real_error {
            Disposition::Blocked
        } else {
            Disposition::Performed
        };
        let span = ToolSpanInput {
            call_id: p.call.id.clone(),
            name: p.call.name.clone(),
            arguments: p.call.arguments.clone(),
            output: (!real_error).then(|| content.to_owned()),
            error: injected.error.clone(),
            duration_ms: p.asked_at.elapsed().as_millis() as u64,
            approval: Approval::NotRequired,
            side_effect: self.side_effect(&p.call, disposition),
        };
        // The model sees the injected text from now on; the span keeps the real result.
        if marks.is_some() {
            self.rewritten.insert(
                id.to_owned(),
                Rewrite {
                    text: injected.text().to_owned(),
                    error: injected.fault_error(),
                },
            );
        }
        self.rec.set_agent(p.agent);
        self.rec.tool_call_injected(span, marks);
        self.rec.set_agent(None);
    }

    /// Reads the tool results in a request: records the ones that answer pending calls, and
    /// rewrites the ones injected in transit. Returns whether the request changed.
    pub(super) fn take_tool_results(&mut self, wire: Wire, req: &mut Value) -> bool {
        if wire == Wire::Responses {
            return self.take_function_outputs(req);
        }
        let Some(messages) = req.get_mut("messages").and_then(Value::as_array_mut) else {
            return false;
        };
        let mut changed = false;
        match wire {
            Wire::OpenAi => {
                for m in messages {
                    if m.get("role").and_then(Value::as_str) != Some("tool") {
                        continue;
                    }
                    let Some(id) = m
                        .get("tool_call_id")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                    else {
                        continue;
                    };
                    let text = openai::content_text(m.get("content"));
                    self.result_arrived(&id, &text, false);
                    if let Some(r) = self.rewritten.get(&id) {
                        m["content"] = Value::String(r.text.clone());
                        changed = true;
                    }
                }
            }
            Wire::Responses => {}
            Wire::Anthropic => {
                for m in messages {
                    if m.get("role").and_then(Value::as_str) != Some("user") {
                        continue;
                    }
                    let Some(blocks) = m.get_mut("content").and_then(Value::as_array_mut) else {
                        continue;
                    };
                    for b in blocks {
                        if b.get("type").and_then(Value::as_str) != Some("tool_result") {
                            continue;
                        }
                        let Some(id) = b
                            .get("tool_use_id")
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                        else {
                            continue;
                        };
                        let text = block_text(b.get("content"));
                        let flagged = b.get("is_error").and_then(Value::as_bool) == Some(true);
                        self.result_arrived(&id, &text, flagged);
                        if let Some(r) = self.rewritten.get(&id) {
                            b["content"] = Value::String(r.text.clone());
                            if r.error {
                                b["is_error"] = Value::Bool(true);
                            }
                            changed = true;
                        }
                    }
                }
            }
        }
        changed
    }

    /// The Responses API's tool results: `function_call_output` items of the `input`, paired
    /// by `call_id`, their `output` rewritten when injected.
    fn take_function_outputs(&mut self, req: &mut Value) -> bool {
        let Some(items) = req.get_mut("input").and_then(Value::as_array_mut) else {
            return false;
        };
        let mut changed = false;
        for item in items {
            if item.get("type").and_then(Value::as_str) != Some("function_call_output") {
                continue;
            }
            let Some(id) = item
                .get("call_id")
                .and_then(Value::as_str)
                .map(str::to_owned)
            else {
                continue;
            };
            let text = crate::responses::wire::parts_text(item.get("output"));
            self.result_arrived(&id, &text, false);
            if let Some(r) = self.rewritten.get(&id) {
                item["output"] = Value::String(r.text.clone());
                changed = true;
            }
        }
        changed
    }

    /// Remembers a Responses API call's conversation under its response's id, for a request
    /// that continues it with `previous_response_id`; other wires carry the whole history.
    pub(super) fn remember(
        &mut self,
        wire: Wire,
        response: &Value,
        messages_in: &[gauntlet_core::trace::Message],
        reply: &gauntlet_core::trace::Message,
    ) {
        if wire == Wire::Responses
            && let Some(id) = response.get("id").and_then(Value::as_str)
        {
            self.conversations.keep(id, messages_in, reply);
        }
    }

    /// Records a model call, and remembers the tool calls it asked for.
    pub(super) fn record_reply(
        &mut self,
        agent: Option<String>,
        requested_model: Option<String>,
        messages_in: Vec<gauntlet_core::trace::Message>,
        reply: ChatReply,
        latency_ms: u64,
    ) {
        self.rec.set_agent(agent.clone());
        let calls = reply.message.tool_calls.clone();
        let finish = reply.finish_reason.clone();
        self.rec.llm_call(
            reply.model.or(requested_model),
            messages_in,
            reply.message,
            reply.usage,
            latency_ms,
            reply.finish_reason,
            1,
        );
        match finish.as_deref() {
            Some("content_filter") => self.rec.transport(
                TransportKind::FilterBlock,
                None,
                "finish_reason: content_filter (passed to the agent)".into(),
            ),
            Some("length") if calls.is_empty() => self.rec.transport(
                TransportKind::Truncated,
                None,
                "the model's reply was cut by its token limit".into(),
            ),
            _ => {}
        }
        self.rec.set_agent(None);
        let now = Instant::now();
        for call in calls {
            // A reused id (another conversation in the same session) starts afresh.
            self.pending.retain(|p| p.call.id != call.id);
            self.rewritten.remove(&call.id);
            self.pending.push(PendingCall {
                call,
                agent: agent.clone(),
                asked_at: now,
            });
        }
    }

    /// Records every pending call as unanswered.
    pub(super) fn close_unanswered(&mut self) {
        for p in std::mem::take(&mut self.pending) {
            self.rec.set_agent(p.agent);
            self.rec.tool_call(ToolSpanInput {
                call_id: p.call.id.clone(),
                name: p.call.name.clone(),
                arguments: p.call.arguments.clone(),
                output: None,
                error: Some(NO_RESULT.into()),
                duration_ms: p.asked_at.elapsed().as_millis() as u64,
                approval: Approval::NotRequired,
                side_effect: None,
            });
        }
        self.rec.set_agent(None);
    }
}

fn starts_with_error(text: &str) -> bool {
    text.trim_start()
        .get(..5)
        .is_some_and(|p| p.eq_ignore_ascii_case("error"))
}

/// The text of an Anthropic `tool_result` block's content: a string, or text blocks.
fn block_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}
