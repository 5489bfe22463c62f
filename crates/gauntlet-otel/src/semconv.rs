//! The attribute, span and event names gauntlet writes: the OpenTelemetry GenAI semantic
//! conventions where they name a thing, `gauntlet.*` for what only gauntlet knows.
//!
//! Kept in one place so that a reader of the exported spans (`gauntlet grade TRACES`, a
//! backend's query) and the docs' mapping table have one list to agree with.

/// `gen_ai.operation.name`: `chat` for a model call, `execute_tool` for a tool execution.
pub const OPERATION_NAME: &str = "gen_ai.operation.name";
/// The operation of a model call.
pub const OP_CHAT: &str = "chat";
/// The operation of a tool execution.
pub const OP_EXECUTE_TOOL: &str = "execute_tool";
/// The provider (current name of the attribute).
pub const PROVIDER_NAME: &str = "gen_ai.provider.name";
/// The provider (the name before semantic conventions 1.37, still read by many backends).
pub const SYSTEM: &str = "gen_ai.system";
/// The model asked for.
pub const REQUEST_MODEL: &str = "gen_ai.request.model";
/// The model that answered, as the API reported it.
pub const RESPONSE_MODEL: &str = "gen_ai.response.model";
/// Why generation stopped, one per choice.
pub const RESPONSE_FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
/// Prompt tokens.
pub const USAGE_INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
/// Completion tokens.
pub const USAGE_OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
/// The agent that made the call (multi-agent systems).
pub const AGENT_NAME: &str = "gen_ai.agent.name";
/// The conversation: gauntlet's trial, `RUN/CASE/TRIAL`.
pub const CONVERSATION_ID: &str = "gen_ai.conversation.id";
/// The messages sent, as the conventions' JSON (content opt-in only).
pub const INPUT_MESSAGES: &str = "gen_ai.input.messages";
/// The message received, as the conventions' JSON (content opt-in only).
pub const OUTPUT_MESSAGES: &str = "gen_ai.output.messages";
/// The system prompt, as the conventions' JSON parts (content opt-in only).
pub const SYSTEM_INSTRUCTIONS: &str = "gen_ai.system_instructions";
/// The tool's name.
pub const TOOL_NAME: &str = "gen_ai.tool.name";
/// The tool call's id.
pub const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
/// `function`: every tool gauntlet sees is a function tool.
pub const TOOL_TYPE: &str = "gen_ai.tool.type";
/// The tool call's arguments, JSON (content opt-in only).
pub const TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
/// What the tool answered (content opt-in only).
pub const TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";
/// The class of an error (`tool_error`, `timeout`, `error`, `blocked`).
pub const ERROR_TYPE: &str = "error.type";

/// The event that carries one verdict.
pub const EVALUATION_RESULT: &str = "gen_ai.evaluation.result";
/// The check that produced the verdict.
pub const EVALUATION_NAME: &str = "gen_ai.evaluation.name";
/// The verdict's score on its dimension, 0-3.
pub const EVALUATION_SCORE_VALUE: &str = "gen_ai.evaluation.score.value";
/// `pass`, `fail` or `not_assessed`.
pub const EVALUATION_SCORE_LABEL: &str = "gen_ai.evaluation.score.label";
/// The grader's evidence (content opt-in only: it may quote the answer).
pub const EVALUATION_EXPLANATION: &str = "gen_ai.evaluation.explanation";

/// The run id.
pub const RUN_ID: &str = "gauntlet.run.id";
/// The command that started the run (`run`, `redteam`).
pub const RUN_COMMAND: &str = "gauntlet.run.command";
/// The target's label (`openai:gpt-4o-mini`).
pub const TARGET: &str = "gauntlet.target";
/// How close to production the evidence is (`offline`, `online`, ...).
pub const EVIDENCE_LEVEL: &str = "gauntlet.evidence_level";
/// Whether side effects were real or simulated.
pub const SIDE_EFFECTS: &str = "gauntlet.side_effects";
/// The case id.
pub const CASE_ID: &str = "gauntlet.case.id";
/// The case's display name.
pub const CASE_NAME: &str = "gauntlet.case.name";
/// The suite of the case.
pub const CASE_SUITE: &str = "gauntlet.case.suite";
/// `task` or `refusal`.
pub const CASE_KIND: &str = "gauntlet.case.kind";
/// The case's pack.
pub const CASE_PACK: &str = "gauntlet.case.pack";
/// The case's OWASP category.
pub const CASE_OWASP: &str = "gauntlet.case.owasp";
/// The case's technique.
pub const CASE_TECHNIQUE: &str = "gauntlet.case.technique";
/// Whether the case gates the suite.
pub const CASE_BLOCKING: &str = "gauntlet.case.blocking";
/// The case's state over all its trials (`PASS`, `FAIL`, ...).
pub const CASE_STATUS: &str = "gauntlet.case.status";
/// The trial index, from 0.
pub const TRIAL_INDEX: &str = "gauntlet.trial.index";
/// How the trial ended (`completed`, `blocked`, `error`, `timeout`).
pub const TRIAL_OUTCOME: &str = "gauntlet.trial.outcome";
/// The trial's state (`PASS`, `FAIL`, `NOT_ASSESSED`, ...).
pub const TRIAL_STATUS: &str = "gauntlet.trial.status";
/// The trial's score (task total out of 18, refusal 0-3), when it has one.
pub const TRIAL_SCORE: &str = "gauntlet.trial.score";
/// The labels of the gating checks that failed.
pub const VERDICTS_FAILED: &str = "gauntlet.verdicts.failed";
/// The labels of the gating checks that could not be exercised.
pub const VERDICTS_NOT_ASSESSED: &str = "gauntlet.verdicts.not_assessed";
/// How many verdicts the trial has.
pub const VERDICTS_COUNT: &str = "gauntlet.verdicts.count";
/// Hard policy failures, `label: evidence` (content opt-in only).
pub const HARD_FAILS: &str = "gauntlet.hard_fails";
/// The user turns and answers (content opt-in only), JSON.
pub const TURNS: &str = "gauntlet.turns";
/// Attempts a model call took (infrastructure retries).
pub const ATTEMPTS: &str = "gauntlet.attempts";
/// A tool call's approval (`not_required`, `granted`, `missing`).
pub const TOOL_APPROVAL: &str = "gauntlet.tool.approval";
/// The class of a tool call's side effect.
pub const TOOL_SIDE_EFFECT: &str = "gauntlet.tool.side_effect";
/// What happened to the side effect (`performed`, `simulated`, `blocked`).
pub const TOOL_DISPOSITION: &str = "gauntlet.tool.disposition";
/// The fault or poison injected into a tool call.
pub const TOOL_INJECTED: &str = "gauntlet.tool.injected";
/// The verdict's dimension (on a `gen_ai.evaluation.result` event).
pub const VERDICT_DIMENSION: &str = "gauntlet.verdict.dimension";
/// The verdict's check key (on a `gen_ai.evaluation.result` event).
pub const VERDICT_CHECK: &str = "gauntlet.verdict.check";
/// Whether the verdict may change the state.
pub const VERDICT_GATING: &str = "gauntlet.verdict.gating";
/// Whether the verdict is a hard policy failure.
pub const VERDICT_HARD_FAIL: &str = "gauntlet.verdict.hard_fail";
/// The event of a decision the agent reported.
pub const DECISION: &str = "gauntlet.decision";
/// The branch it took.
pub const DECISION_BRANCH: &str = "gauntlet.decision.branch";
/// Why, as the agent said (content opt-in only).
pub const DECISION_REASON: &str = "gauntlet.decision.reason";

/// OpenInference's span kind (`AGENT`, `LLM`, `TOOL`): trace UIs built on OpenInference
/// (Arize Phoenix) list and filter spans by it, and show a span without it as `unknown`.
pub const OI_SPAN_KIND: &str = "openinference.span.kind";
/// The span kind of a trial's eval span: the agent's run on the case.
pub const OI_KIND_AGENT: &str = "AGENT";
/// The span kind of a model call.
pub const OI_KIND_LLM: &str = "LLM";
/// The span kind of a tool execution.
pub const OI_KIND_TOOL: &str = "TOOL";
/// OpenInference's input of a span, shown in a UI's span list (content opt-in only).
pub const OI_INPUT_VALUE: &str = "input.value";
/// The media type of `input.value`.
pub const OI_INPUT_MIME: &str = "input.mime_type";
/// OpenInference's output of a span (content opt-in only).
pub const OI_OUTPUT_VALUE: &str = "output.value";
/// The media type of `output.value`.
pub const OI_OUTPUT_MIME: &str = "output.mime_type";
