//! What a trial did: [`Trace`], built with a [`TraceRecorder`].
//!
//! A trace holds exactly three kinds of span (an LLM call, a tool call, a decision point),
//! plus side-effect records and transport events (attempts, retries, rate limits, filter
//! blocks). Graders read traces; nothing else about a trial is needed to re-grade it.
//!
//! The calls a model judge made to grade the trial are kept apart, in [`Trace::judge`]
//! ([`JudgeSpan`]): they are the grader's work, not the agent's, so no check reads them and
//! their tokens never count as the agent's. Re-grading replaces them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A chat message, in a provider-neutral shape.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Message {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: Role,
    /// The text.
    #[serde(default)]
    pub content: String,
    /// Tool calls requested by an assistant message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallRequest>,
    /// For a tool message: the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For a tool message: the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Who speaks.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Instructions from the application.
    System,
    /// The user.
    User,
    /// The model or agent.
    Assistant,
    /// A tool result.
    Tool,
}

impl Message {
    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Self::plain(Role::System, text)
    }
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::plain(Role::User, text)
    }
    /// An assistant message without tool calls.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::plain(Role::Assistant, text)
    }
    /// A tool result.
    pub fn tool_result(call_id: &str, name: &str, text: impl Into<String>) -> Self {
        Self {
            role: Role::Tool,
            content: text.into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.to_owned()),
            name: Some(name.to_owned()),
        }
    }
    fn plain(role: Role, text: impl Into<String>) -> Self {
        Self {
            role,
            content: text.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
        }
    }
}

/// A tool call the model asked for.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct ToolCallRequest {
    /// The call id (provider-assigned, or made up by gauntlet).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments. When the model sent text that is not JSON, this is a JSON string
    /// holding that text, and `malformed` is set.
    pub arguments: serde_json::Value,
    /// The arguments were not valid JSON.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub malformed: bool,
}

/// Token counts reported by the API (OpenAI's `usage.prompt_tokens` and
/// `completion_tokens`, Anthropic's `usage.input_tokens` and `output_tokens`, streamed or
/// not). They map to OpenTelemetry's `gen_ai.usage.input_tokens` and `output_tokens`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
}

impl Usage {
    /// Input and output tokens together.
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

/// Whether a tool call needed approval and what happened to it.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    /// No approval needed.
    #[default]
    NotRequired,
    /// Approval needed and given (the case lists the tool under `approvals`).
    Granted,
    /// Approval needed and not given: the call was blocked.
    Missing,
}

/// One span of a trace.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Span {
    /// One model call.
    LlmCall(LlmSpan),
    /// One tool call.
    ToolCall(ToolSpan),
    /// A decision the agent reported: which branch and why.
    Decision(DecisionSpan),
}

/// A model call.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct LlmSpan {
    /// Span id, unique within the trace.
    pub id: u32,
    /// Enclosing span, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
    /// The agent that made the call (multi-agent systems).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Model id reported by the API (or configured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Messages sent: all of them, or, when `continues` is set, only those after the
    /// conversation of the call it continues.
    pub messages_in: Vec<Message>,
    /// The earlier model call this one continues: `messages_in` then holds only the
    /// messages after that call's conversation (its messages in, in full, and its reply), so
    /// a long tool loop stores each message once instead of the whole conversation at every
    /// call. [`Trace::conversation`] puts a call's messages back together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continues: Option<u32>,
    /// The message received.
    pub message_out: Message,
    /// Token usage.
    #[serde(default)]
    pub usage: Usage,
    /// Wall time of the call, retries included, in milliseconds.
    pub latency_ms: u64,
    /// Why generation stopped (`stop`, `length`, `tool_calls`, `content_filter`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    /// Attempts made (1 when the first succeeded, and then absent; 0 for an answer from the
    /// cache).
    #[serde(default = "one_attempt", skip_serializing_if = "is_one_attempt")]
    pub attempts: u32,
    /// The reply came from the response cache (`--cache`): no request was made, and the
    /// trial is a replay of an earlier observation, not a fresh one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
}

fn one_attempt() -> u32 {
    1
}

// serde's skip_serializing_if passes a reference.
#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_one_attempt(n: &u32) -> bool {
    *n == 1
}

/// A tool call.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct ToolSpan {
    /// Span id.
    pub id: u32,
    /// Enclosing span (the model call that asked for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
    /// The agent that made the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The call id.
    pub call_id: String,
    /// The tool.
    pub name: String,
    /// Arguments as sent.
    pub arguments: serde_json::Value,
    /// What the tool answered, when it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// The error the tool returned, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Duration in milliseconds.
    pub duration_ms: u64,
    /// Approval status.
    #[serde(default)]
    pub approval: Approval,
    /// The side effect the call had or would have had.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_effect: Option<SideEffect>,
    /// An injected fault or poison applied to this call, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub injected: Option<String>,
}

/// A decision point.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct DecisionSpan {
    /// Span id.
    pub id: u32,
    /// Enclosing span.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
    /// The agent that decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The branch taken.
    pub branch: String,
    /// Why, as the agent reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A side effect: what a tool call changed, or would have changed.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct SideEffect {
    /// The tool.
    pub tool: String,
    /// Class of effect.
    pub class: crate::tools::SideEffectClass,
    /// What happened to it.
    pub disposition: Disposition,
    /// A short description (the call's arguments, summarised).
    pub description: String,
}

/// What happened to a side effect.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Disposition {
    /// Performed (in a sandbox ledger or for real).
    Performed,
    /// Simulated: the mock answered as if it happened.
    Simulated,
    /// Blocked by the harness (missing approval, injected fault).
    Blocked,
}

/// A transport event: attempts, retries, rate limits, filter blocks.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct TransportEvent {
    /// Milliseconds since the trial started.
    pub at_ms: u64,
    /// What happened.
    pub kind: TransportKind,
    /// HTTP status, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Details (redacted).
    pub detail: String,
}

/// Kinds of transport event.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    /// A request attempt failed and will be retried.
    Retry,
    /// The server asked us to slow down (429).
    RateLimited,
    /// The request failed for good.
    Failed,
    /// A content filter stopped the request or the answer.
    FilterBlock,
    /// The request or the trial ran out of time.
    Timeout,
    /// The client waited for its own rate limiter.
    Throttled,
    /// A reply was cut by the token limit.
    Truncated,
}

/// Everything a trial did.
///
/// Written without `turns` when they follow from the spans (see [`Trace::derived_turns`]):
/// a chat agent's turns repeat each user message and answer its model calls already hold,
/// a fifth of a plain trial's JSON. Reading a trace without `turns` derives them again, so
/// the written form is lossless; turns that differ from the spans are always written.
#[derive(Debug, Clone, Default, JsonSchema, PartialEq)]
pub struct Trace {
    /// LLM calls, tool calls and decision points, in order.
    #[serde(default)]
    pub spans: Vec<Span>,
    /// Transport events.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transport: Vec<TransportEvent>,
    /// The user turns sent and the agent's answer to each; absent when they follow from the
    /// spans (each turn one model call whose last message in is the user's, or a tool loop
    /// started by one: the user's message and the last call's answer).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<TurnRecord>,
    /// The calls model judges made to grade this trial (not the agent's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judge: Vec<JudgeSpan>,
    /// What a multi-turn strategy or a model-driven converter did, in order: every call of
    /// an attacker or rewriter model, the score after each turn, each decision.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub strategy: Vec<StrategyEvent>,
    /// The texts converters changed outside the user's turns (a retrieved document, a tool's
    /// poison), as the trial sent them: where the attack of an indirect case travelled.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub converted: Vec<ConvertedText>,
}

/// A text a converter changed outside the user's turns, as the trial sent it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct ConvertedText {
    /// Where it travelled: `documents[0]`, `tool_faults[1].poison`.
    pub site: String,
    /// The text as sent (a poison as the tool's output carried it).
    pub text: String,
}

/// One step of a strategy (or of a model-driven converter), as recorded.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StrategyEvent {
    /// A call of an attacker or rewriter model.
    HelperCall(HelperCall),
    /// The conversation graded after a turn.
    Score(TurnScore),
    /// What the strategy did next, and why.
    Decision(StrategyDecision),
    /// One node of a tree of attacks.
    TreeNode(TreeNode),
}

/// One node of a tree of attacks: an attacker prompt, where it grew from, and what became of
/// it (pruned before it was sent, or sent in a fresh conversation and its reply scored).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct TreeNode {
    /// The node's number, 1-based, in the order the attacker wrote the prompts.
    pub id: u32,
    /// The node it grew from (`None`: the first level).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
    /// The level, 1-based.
    pub depth: u32,
    /// Which of its parent's branches, 1-based.
    pub branch: u32,
    /// The attacker's prompt, as written (before the case's converters).
    pub prompt: String,
    /// The exchange in the trace's turns (0-based) that sent it; `None` when it was pruned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
    /// The start of the agent's reply (the whole reply is the turn's answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_excerpt: Option<String>,
    /// The reply's score, 1 (refused) to 10 (the objective reached).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<u8>,
    /// What the score says, in words (`refused`, `no substance`, `achieved`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// The reply reached the objective: the search stops here.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub achieved: bool,
    /// Why the node was not grown further: off the objective (not sent), or not among the
    /// best of its level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pruned: Option<String>,
    /// The strategy's ranking judge on this reply (`strategy.judge`): what it said, whether
    /// it gates, or why it gave no score (the objective reading scored the node then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<NodeJudge>,
    /// Every judge call made to score this reply (the ranking judge's and the case's other
    /// judges'): each counts against the search's budget.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judge_calls: Vec<JudgeSpan>,
}

/// What a tree's ranking judge made of one reply.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct NodeJudge {
    /// The judge check id.
    pub check: String,
    /// What it answered (`pass`, `fail`, `2/3`); `None` when it gave no verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub said: Option<String>,
    /// `gating` (calibrated and bound to what answered: its failure reaches the objective),
    /// or `triage: WHY` (it ranks the node, and decides nothing).
    pub gate: String,
    /// Why it gave no verdict (a failed call, a time-out, an answer outside the format, no
    /// model): the node was scored by the objective reading instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    /// The node's score came from the judge (`false`: from the objective reading).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ranked: bool,
}

/// One call of a helper model (an attacker or a rewriter), exactly as made.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct HelperCall {
    /// Attacker or rewriter.
    pub role: crate::strategy::settings::HelperRole,
    /// The exchange it was for (0-based, exchanges taken back included).
    pub turn: u32,
    /// For a rewriter: the converter step (`paraphrase`, `translate:fr`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub converter: Option<String>,
    /// Where the model is.
    pub endpoint: String,
    /// The prompt's name and version.
    pub prompt: String,
    /// The seed sent with the call.
    pub seed: u64,
    /// The model id the answer reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The messages sent.
    pub messages_in: Vec<Message>,
    /// The answer, exactly as received (empty when there was none).
    pub answer: String,
    /// Tokens.
    #[serde(default)]
    pub usage: Usage,
    /// Wall time in milliseconds.
    pub latency_ms: u64,
    /// Attempts.
    pub attempts: u32,
    /// The answer was replayed from the response cache (no request was made): the attack
    /// message is the one written for the same request before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
    /// Why the call gave nothing usable (a transport failure, an empty answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The conversation so far, graded after one exchange by the case's checks that can tell
/// whether the objective was reached (violation checks and judges).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct TurnScore {
    /// The exchange (0-based, exchanges taken back included).
    pub turn: u32,
    /// A gating check failed: the objective was reached.
    pub reached: bool,
    /// The answer was a refusal.
    pub refused: bool,
    /// The checks that failed (gating or not), with their evidence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
    /// The checks that could not decide.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_assessed: Vec<String>,
    /// Judge calls made for this score.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judge: Vec<JudgeSpan>,
}

/// What a strategy decided after an exchange.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct StrategyDecision {
    /// The exchange (0-based).
    pub turn: u32,
    /// The decision.
    pub action: StrategyAction,
    /// Why, in words.
    pub detail: String,
}

/// A strategy's decisions.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum StrategyAction {
    /// Keep the exchange and go on.
    Continue,
    /// The agent refused: the exchange was taken back from its conversation. It stays in
    /// the trace's turns and is graded like the others: what the agent said was said.
    Backtrack,
    /// The agent refused, but the exchange stays (no backtrack left, or the target cannot
    /// take one back).
    Keep,
    /// The objective was reached: the attack stops.
    Reached,
    /// The turns ran out without the objective being reached.
    MaxTurns,
    /// The budget ran out (tokens; for a tree, calls too).
    Budget,
    /// A level of a tree was ranked: its best nodes are grown further.
    Level,
    /// The attacker or the rewriter failed: the trial is an error.
    Fault,
}

/// One call of a model judge, made to grade a trial (or a labelled item).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct JudgeSpan {
    /// Span id, unique among the trace's judge calls.
    pub id: u32,
    /// The judge check id (`judge` for an inline judge).
    pub check: String,
    /// Where the judge was called.
    pub endpoint: String,
    /// The model asked for.
    pub configured_model: String,
    /// The model id the answer reported, when it reported one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The prompt template, `name@version`.
    pub template: String,
    /// The prompt: system and user messages.
    pub messages_in: Vec<Message>,
    /// The judge's answer, exactly as received.
    pub answer: String,
    /// Token usage.
    #[serde(default)]
    pub usage: Usage,
    /// Wall time of the call, retries included, in milliseconds (0 for a cached answer).
    pub latency_ms: u64,
    /// Attempts made (infrastructure retries; a verdict is never asked again).
    pub attempts: u32,
    /// The answer came from the judge cache.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
    /// Pairwise judges: the answers were shown in swapped order (the agent's as B).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub swapped: bool,
    /// Why the call gave no usable verdict (transport failure, malformed answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One user turn and the answer to it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct TurnRecord {
    /// What the user said.
    pub user: String,
    /// What the agent answered (empty when the turn ended without an answer).
    pub answer: String,
    /// The answer was cut by the token limit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

impl Trace {
    /// The agent's final answer: the answer to the last turn.
    pub fn final_answer(&self) -> &str {
        self.turns.last().map(|t| t.answer.as_str()).unwrap_or("")
    }

    /// Every answer the agent gave, in order.
    pub fn answers(&self) -> impl Iterator<Item = &str> {
        self.turns.iter().map(|t| t.answer.as_str())
    }

    /// Tool-call spans, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolSpan> {
        self.spans.iter().filter_map(|s| match s {
            Span::ToolCall(t) => Some(t),
            _ => None,
        })
    }

    /// Judge calls, in order.
    pub fn judge_calls(&self) -> impl Iterator<Item = &JudgeSpan> {
        self.judge.iter()
    }

    /// Whether any of the agent's model calls was answered from the response cache: the
    /// trial then replays an earlier observation (evidence `replay`).
    pub fn replayed(&self) -> bool {
        self.llm_calls().any(|l| l.cached)
    }

    /// LLM-call spans, in order.
    pub fn llm_calls(&self) -> impl Iterator<Item = &LlmSpan> {
        self.spans.iter().filter_map(|s| match s {
            Span::LlmCall(l) => Some(l),
            _ => None,
        })
    }

    /// Every judge call of the trial: the final grading's, then those a strategy made while
    /// it ran (scoring each exchange of an attacker loop or a crescendo, each reply of a
    /// tree), in order.
    pub fn all_judge_calls(&self) -> impl Iterator<Item = &JudgeSpan> {
        let during = self.strategy.iter().flat_map(|e| match e {
            StrategyEvent::Score(t) => t.judge.as_slice(),
            StrategyEvent::TreeNode(n) => n.judge_calls.as_slice(),
            _ => &[],
        });
        self.judge.iter().chain(during)
    }
}

/// The turns a trace's spans imply, borrowed: a turn starts at each model call whose last
/// message in is a user's, and its answer is the last model call's reply before the next
/// turn (`truncated` when that call stopped at the token limit). `None` when the spans do
/// not follow that shape (a call before any user message, multi-agent calls, no model call
/// at all), so the turns are written as they are.
fn turns_of(spans: &[Span]) -> Option<Vec<(&str, &str, bool)>> {
    let mut out: Vec<(&str, &str, bool)> = Vec::new();
    for span in spans {
        let Span::LlmCall(l) = span else { continue };
        if l.parent.is_some() || l.agent.is_some() {
            return None;
        }
        let reply = (
            l.message_out.content.as_str(),
            l.finish_reason.as_deref() == Some("length"),
        );
        match l.messages_in.last() {
            Some(m) if m.role == Role::User => out.push((&m.content, reply.0, reply.1)),
            _ => {
                let last = out.last_mut()?;
                (last.1, last.2) = reply;
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

impl Trace {
    /// The whole conversation model call `id` sent, in order, following the calls it
    /// continues ([`LlmSpan::continues`]) back to the first; `None` when `id` is not a model
    /// call of this trace, or a call it continues is missing or not earlier than it.
    pub fn conversation(&self, id: u32) -> Option<Vec<&Message>> {
        let call = |id: u32| {
            self.spans.iter().find_map(|s| match s {
                Span::LlmCall(l) if l.id == id => Some(l),
                _ => None,
            })
        };
        // Newest first: each continued call adds its own messages and reply before ours.
        let mut parts: Vec<&[Message]> = Vec::new();
        let mut replies: Vec<&Message> = Vec::new();
        let mut span = call(id)?;
        parts.push(&span.messages_in);
        while let Some(earlier) = span.continues {
            if earlier >= span.id {
                return None;
            }
            span = call(earlier)?;
            replies.push(&span.message_out);
            parts.push(&span.messages_in);
        }
        let mut out = Vec::new();
        for (i, part) in parts.iter().rev().enumerate() {
            out.extend(part.iter());
            if let Some(reply) = replies.iter().rev().nth(i) {
                out.push(*reply);
            }
        }
        Some(out)
    }

    /// The turns the spans imply (see [`Trace`]), when they follow the chat shape.
    pub fn derived_turns(spans: &[Span]) -> Option<Vec<TurnRecord>> {
        let turns = turns_of(spans)?;
        Some(
            turns
                .into_iter()
                .map(|(user, answer, truncated)| TurnRecord {
                    user: user.to_owned(),
                    answer: answer.to_owned(),
                    truncated,
                })
                .collect(),
        )
    }

    /// Whether `turns` are exactly what the spans imply, so the written form leaves them out.
    fn turns_follow_spans(&self) -> bool {
        turns_of(&self.spans).is_some_and(|d| {
            d.len() == self.turns.len()
                && d.iter()
                    .zip(&self.turns)
                    .all(|(d, t)| d.0 == t.user && d.1 == t.answer && d.2 == t.truncated)
        })
    }
}

impl Serialize for Trace {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let turns = !self.turns_follow_spans();
        let n = 1
            + usize::from(!self.transport.is_empty())
            + usize::from(turns)
            + usize::from(!self.judge.is_empty())
            + usize::from(!self.strategy.is_empty())
            + usize::from(!self.converted.is_empty());
        let mut st = s.serialize_struct("Trace", n)?;
        st.serialize_field("spans", &self.spans)?;
        if !self.transport.is_empty() {
            st.serialize_field("transport", &self.transport)?;
        }
        if turns {
            st.serialize_field("turns", &self.turns)?;
        }
        if !self.judge.is_empty() {
            st.serialize_field("judge", &self.judge)?;
        }
        if !self.strategy.is_empty() {
            st.serialize_field("strategy", &self.strategy)?;
        }
        if !self.converted.is_empty() {
            st.serialize_field("converted", &self.converted)?;
        }
        st.end()
    }
}

/// The written form of a [`Trace`], `turns` optional.
#[derive(Deserialize)]
struct TraceWire {
    #[serde(default)]
    spans: Vec<Span>,
    #[serde(default)]
    transport: Vec<TransportEvent>,
    #[serde(default)]
    turns: Option<Vec<TurnRecord>>,
    #[serde(default)]
    judge: Vec<JudgeSpan>,
    #[serde(default)]
    strategy: Vec<StrategyEvent>,
    #[serde(default)]
    converted: Vec<ConvertedText>,
}

impl<'de> Deserialize<'de> for Trace {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let TraceWire {
            spans,
            transport,
            turns,
            judge,
            strategy,
            converted,
        } = TraceWire::deserialize(d)?;
        let turns = turns.unwrap_or_else(|| Trace::derived_turns(&spans).unwrap_or_default());
        Ok(Trace {
            spans,
            transport,
            turns,
            judge,
            strategy,
            converted,
        })
    }
}

/// The input of a tool span, before the recorder assigns ids.
#[derive(Debug, Clone)]
pub struct ToolSpanInput {
    /// The call id.
    pub call_id: String,
    /// The tool.
    pub name: String,
    /// Arguments.
    pub arguments: serde_json::Value,
    /// Output, if the tool answered.
    pub output: Option<String>,
    /// Error, if any.
    pub error: Option<String>,
    /// Duration in milliseconds.
    pub duration_ms: u64,
    /// Approval status.
    pub approval: Approval,
    /// Side effect.
    pub side_effect: Option<SideEffect>,
}

/// Builds a [`Trace`] while a trial runs, assigning span ids and parents.
#[derive(Debug)]
pub struct TraceRecorder {
    trace: Trace,
    next_id: u32,
    current_llm: Option<u32>,
    agent: Option<String>,
    started: std::time::Instant,
}

impl Default for TraceRecorder {
    fn default() -> Self {
        Self::new()
    }
}

impl TraceRecorder {
    /// A recorder whose clock starts now.
    pub fn new() -> Self {
        Self {
            trace: Trace::default(),
            next_id: 1,
            current_llm: None,
            agent: None,
            started: std::time::Instant::now(),
        }
    }

    /// Milliseconds since the recorder was created.
    pub fn elapsed_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Sets the agent name stamped on following spans (multi-agent systems).
    pub fn set_agent(&mut self, agent: Option<String>) {
        self.agent = agent;
    }

    /// The agent name stamped on following spans: who is calling a tool now (the message
    /// bus takes the sender and the reader from it).
    pub fn agent(&self) -> Option<&str> {
        self.agent.as_deref()
    }

    fn id(&mut self) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Records a model call; following tool spans get it as their parent.
    #[allow(clippy::too_many_arguments)]
    pub fn llm_call(
        &mut self,
        model: Option<String>,
        messages_in: Vec<Message>,
        message_out: Message,
        usage: Usage,
        latency_ms: u64,
        finish_reason: Option<String>,
        attempts: u32,
    ) -> u32 {
        let id = self.id();
        self.trace.spans.push(Span::LlmCall(LlmSpan {
            id,
            parent: None,
            agent: self.agent.clone(),
            model,
            messages_in,
            continues: None,
            message_out,
            usage,
            latency_ms,
            finish_reason,
            attempts,
            cached: false,
        }));
        self.current_llm = Some(id);
        id
    }

    /// Marks the last model call as continuing the model call `earlier` (see
    /// [`LlmSpan::continues`]): its messages in are the ones after that call's conversation.
    pub fn continue_last_llm(&mut self, earlier: u32) {
        if let Some(l) = self.last_llm() {
            l.continues = Some(earlier);
        }
    }

    fn last_llm(&mut self) -> Option<&mut LlmSpan> {
        self.trace.spans.iter_mut().rev().find_map(|s| match s {
            Span::LlmCall(l) => Some(l),
            _ => None,
        })
    }

    /// Marks the last model call as answered from the response cache.
    pub fn mark_last_llm_cached(&mut self) {
        if let Some(l) = self.last_llm() {
            l.cached = true;
        }
    }

    /// Records a tool call.
    pub fn tool_call(&mut self, input: ToolSpanInput) -> u32 {
        self.tool_call_injected(input, None)
    }

    /// Records a tool call that had a fault or poison injected.
    pub fn tool_call_injected(&mut self, input: ToolSpanInput, injected: Option<String>) -> u32 {
        let id = self.id();
        self.trace.spans.push(Span::ToolCall(ToolSpan {
            id,
            parent: self.current_llm,
            agent: self.agent.clone(),
            call_id: input.call_id,
            name: input.name,
            arguments: input.arguments,
            output: input.output,
            error: input.error,
            duration_ms: input.duration_ms,
            approval: input.approval,
            side_effect: input.side_effect,
            injected,
        }));
        id
    }

    /// Records a decision point.
    pub fn decision(&mut self, branch: String, reason: Option<String>) -> u32 {
        let id = self.id();
        self.trace.spans.push(Span::Decision(DecisionSpan {
            id,
            parent: self.current_llm,
            agent: self.agent.clone(),
            branch,
            reason,
        }));
        id
    }

    /// Records a transport event.
    pub fn transport(&mut self, kind: TransportKind, status: Option<u16>, detail: String) {
        let at_ms = self.elapsed_ms();
        self.trace.transport.push(TransportEvent {
            at_ms,
            kind,
            status,
            detail,
        });
    }

    /// Records a user turn and its answer.
    pub fn turn(&mut self, user: String, answer: String, truncated: bool) {
        self.trace.turns.push(TurnRecord {
            user,
            answer,
            truncated,
        });
    }

    /// Records a text a converter changed outside the user's turns, as sent.
    pub fn converted(&mut self, site: String, text: String) {
        self.trace.converted.push(ConvertedText { site, text });
    }

    /// Records a strategy event.
    pub fn strategy(&mut self, event: StrategyEvent) {
        self.trace.strategy.push(event);
    }

    /// Changes the recorded tree node `id` (a tree search prunes a node after its level is
    /// ranked); nothing when there is none.
    pub fn update_tree_node(&mut self, id: u32, change: impl FnOnce(&mut TreeNode)) {
        let found = self.trace.strategy.iter_mut().find_map(|e| match e {
            StrategyEvent::TreeNode(n) if n.id == id => Some(n),
            _ => None,
        });
        if let Some(n) = found {
            change(n);
        }
    }

    /// The trace so far.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// The finished trace.
    pub fn finish(self) -> Trace {
        self.trace
    }
}
