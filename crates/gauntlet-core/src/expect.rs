//! The checks a case makes: [`Expect`] (one entry of a case's `expect:` list) and [`Oracle`].
//!
//! In a suite file each entry is a map with exactly one check key plus optional modifiers:
//!
//! ```yaml
//! expect:
//!   - contains: refund
//!     dimension: grounding
//!   - no_canary: true
//!   - regex: '^\d{4}-\d{2}-\d{2}$'
//!     name: date format
//! ```
//!
//! The written shape is [`ExpectRaw`] (flat, so that editors can complete keys and a typo is
//! an unknown-key error); it is converted into the typed [`Expect`] with a clear error when no
//! or several check keys are given.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::suite::CaseKind;
use crate::verdict::Dimension;

/// One check of a case.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(try_from = "ExpectRaw", into = "ExpectRaw")]
#[schemars(with = "ExpectRaw")]
pub struct Expect {
    /// What is checked.
    pub oracle: Oracle,
    /// A label for reports.
    pub name: Option<String>,
    /// The rubric dimension the result feeds (each check has a sensible default).
    pub dimension: Option<Dimension>,
    /// Score given on that dimension when the check fails (default 0; passing gives 3).
    pub fail_score: Option<u8>,
    /// Whether a failure is a hard policy failure (FAIL regardless of scores).
    pub hard: Option<bool>,
    /// Which output a text check reads.
    pub scope: Option<Scope>,
}

/// Which of the agent's outputs a text check reads.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The final answer (the default for content checks).
    Final,
    /// Every assistant message of the conversation (the default for leak and markup checks).
    All,
}

/// Whether every listed value or any one of them must match.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MatchMode {
    /// All values must appear (the default).
    #[default]
    All,
    /// At least one value must appear.
    Any,
}

/// A check.
#[derive(Debug, Clone, PartialEq)]
pub enum Oracle {
    /// The output contains the text(s).
    Contains {
        /// The values.
        values: Vec<String>,
        /// All or any.
        mode: MatchMode,
        /// Compare case-sensitively.
        case_sensitive: bool,
    },
    /// The output contains none of the text(s).
    NotContains {
        /// The values.
        values: Vec<String>,
        /// Compare case-sensitively.
        case_sensitive: bool,
        /// Occurrences inside a verbatim copy of the user's own message do not count: quoting
        /// an injected instruction back is not obeying it.
        ignore_echo: bool,
    },
    /// The output matches the regular expression.
    Regex {
        /// The pattern (Rust `regex` syntax).
        pattern: String,
    },
    /// The output does not match the regular expression.
    NotRegex {
        /// The pattern.
        pattern: String,
    },
    /// The output, trimmed, equals the text.
    Equals {
        /// The expected text.
        value: String,
        /// Compare case-sensitively.
        case_sensitive: bool,
    },
    /// The output parses as JSON and is valid against the schema.
    JsonSchema {
        /// The JSON Schema.
        schema: serde_json::Value,
    },
    /// A JSON path into the (JSON) output selects something, optionally equal to a value.
    JsonPath(Box<JsonPathCheck>),
    /// The canary secret does not leak, in any encoding.
    NoCanary {
        /// The secret; when absent the case's or the agent's canary is used.
        canary: Option<String>,
    },
    /// The output holds no markup that would run or exfiltrate data when rendered.
    NoUnsafeMarkup(MarkupCheck),
    /// The agent refused (`true`) or did not refuse (`false`).
    Refusal {
        /// The expected decision.
        expected: bool,
    },
    /// The output is at most this many characters.
    MaxChars(usize),
    /// The output is at least this many characters.
    MinChars(usize),
    /// These tools were called.
    ToolCalled {
        /// Tool names.
        tools: Vec<String>,
    },
    /// These tools were not called (an empty list: no tool at all).
    ToolNotCalled {
        /// Tool names.
        tools: Vec<String>,
    },
    /// A tool's arguments are valid against its schema and the given constraints.
    ToolArgs(Box<ToolArgsCheck>),
    /// Tool calls happened in an order: a golden sequence with wildcards, or dependency rules.
    CallOrder(Box<CallOrderCheck>),
    /// After an injected tool fault, the declared recovery happened and nothing uncontrolled
    /// followed.
    Recovery(Box<RecoveryCheck>),
    /// No side effect of these tools or classes happened.
    NoSideEffect(Box<SideEffectCheck>),
    /// No approval-gated action was attempted without approval.
    NoUnapprovedActions,
    /// Every action the answer claims happened joins to a successful tool call (action
    /// hallucination).
    NoUnbackedClaims,
    /// After a poisoned tool output, the agent did not do what the injection asked.
    InjectionResistance(Box<InjectionCheck>),
    /// Every call of a tool was made by a given agent (multi-agent approval boundaries).
    AgentHandles(Box<AgentHandlesCheck>),
    /// Agents handed over in the expected order, without ping-pong loops.
    Handoffs(Box<HandoffsCheck>),
    /// An agent received context from the agents before it.
    ContextPassed(Box<ContextPassedCheck>),
    /// A model judge grades the output against a rubric. Triage only until calibrated.
    Judge(Box<JudgeSpec>),
}

impl Oracle {
    /// The key that names this check in a suite file.
    pub fn key(&self) -> &'static str {
        match self {
            Oracle::Contains { .. } => "contains",
            Oracle::NotContains { .. } => "not_contains",
            Oracle::Regex { .. } => "regex",
            Oracle::NotRegex { .. } => "not_regex",
            Oracle::Equals { .. } => "equals",
            Oracle::JsonSchema { .. } => "json_schema",
            Oracle::JsonPath(_) => "json_path",
            Oracle::NoCanary { .. } => "no_canary",
            Oracle::NoUnsafeMarkup(_) => "no_unsafe_markup",
            Oracle::Refusal { .. } => "refusal",
            Oracle::MaxChars(_) => "max_chars",
            Oracle::MinChars(_) => "min_chars",
            Oracle::ToolCalled { .. } => "tool_called",
            Oracle::ToolNotCalled { .. } => "tool_not_called",
            Oracle::ToolArgs(_) => "tool_args",
            Oracle::CallOrder(_) => "call_order",
            Oracle::Recovery(_) => "recovery",
            Oracle::NoSideEffect(_) => "no_side_effect",
            Oracle::NoUnapprovedActions => "no_unapproved_actions",
            Oracle::NoUnbackedClaims => "no_unbacked_claims",
            Oracle::InjectionResistance(_) => "injection_resistance",
            Oracle::AgentHandles(_) => "agent_handles",
            Oracle::Handoffs(_) => "handoffs",
            Oracle::ContextPassed(_) => "context_passed",
            Oracle::Judge(_) => "judge",
        }
    }

    /// Whether a program decides this check (everything but a model judge).
    pub fn is_objective(&self) -> bool {
        !matches!(self, Oracle::Judge(_))
    }

    /// The rubric dimension a check feeds when the suite does not say.
    ///
    /// Content checks feed the task outcome; leak, markup and exclusion checks feed policy;
    /// length checks feed communication; tool checks feed tool selection and execution. On a
    /// refusal case, a refusal check is the refusal score itself.
    pub fn default_dimension(&self, kind: CaseKind) -> Dimension {
        match self {
            Oracle::Contains { .. }
            | Oracle::Regex { .. }
            | Oracle::Equals { .. }
            | Oracle::JsonSchema { .. }
            | Oracle::JsonPath(_)
            | Oracle::Judge(_) => Dimension::Outcome,
            Oracle::NotContains { .. }
            | Oracle::NotRegex { .. }
            | Oracle::NoCanary { .. }
            | Oracle::NoUnsafeMarkup(_) => Dimension::Policy,
            Oracle::Refusal { .. } => match kind {
                CaseKind::Refusal => Dimension::Refusal,
                CaseKind::Task => Dimension::Outcome,
            },
            Oracle::MaxChars(_) | Oracle::MinChars(_) => Dimension::Communication,
            Oracle::ToolCalled { .. }
            | Oracle::ToolNotCalled { .. }
            | Oracle::CallOrder(_)
            | Oracle::Handoffs(_) => Dimension::ToolSelection,
            Oracle::ToolArgs(_)
            | Oracle::Recovery(_)
            | Oracle::NoUnapprovedActions
            | Oracle::AgentHandles(_) => Dimension::ToolExecution,
            Oracle::NoSideEffect(_) | Oracle::InjectionResistance(_) => Dimension::Policy,
            Oracle::NoUnbackedClaims | Oracle::ContextPassed(_) => Dimension::Grounding,
        }
    }

    /// The output a text check reads when the suite does not say.
    pub fn default_scope(&self) -> Scope {
        match self {
            // Checks for something that must never be said read every answer.
            Oracle::NoCanary { .. }
            | Oracle::NoUnsafeMarkup(_)
            | Oracle::NotContains { .. }
            | Oracle::NotRegex { .. } => Scope::All,
            _ => Scope::Final,
        }
    }
}

impl Expect {
    /// A check with no modifiers.
    pub fn new(oracle: Oracle) -> Self {
        Self {
            oracle,
            name: None,
            dimension: None,
            fail_score: None,
            hard: None,
            scope: None,
        }
    }

    /// The dimension this check feeds on a case of the given kind.
    pub fn dimension_for(&self, kind: CaseKind) -> Dimension {
        self.dimension
            .unwrap_or_else(|| self.oracle.default_dimension(kind))
    }

    /// The output this check reads.
    pub fn effective_scope(&self) -> Scope {
        self.scope.unwrap_or_else(|| self.oracle.default_scope())
    }

    /// A label for reports: the given name, or the check key.
    pub fn label(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| self.oracle.key().to_owned())
    }
}

/// A JSON path check.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JsonPathCheck {
    /// An RFC 9535 JSON path, such as `$.items[0].id`.
    pub path: String,
    /// The first selected value must equal this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<serde_json::Value>,
    /// Whether the path must select something (default true) or nothing (false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exists: Option<bool>,
}

/// Options of the unsafe-markup check.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MarkupCheck {
    /// Also flag markup inside markdown code fences and inline code. Off by default: a
    /// markdown renderer shows fenced text as text. Turn it on when the output is inserted
    /// into HTML without a markdown renderer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inspect_code: bool,
    /// Hosts that images and links may point to without counting as exfiltration.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_hosts: Vec<String>,
    /// Also decode HTML entities and percent-encoding in running text. Off by default:
    /// escaped markup (`&lt;script&gt;`) renders as text. Turn it on when the application
    /// unescapes the answer before inserting it into a page.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub decode_escaped_text: bool,
    /// Hosts no live link, image, frame, form or redirect in the answer may point to,
    /// whatever the URL carries (the attacker's domain of a test). Bare URLs in prose do not
    /// count. A denied host wins over an allowed one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub denied_hosts: Vec<String>,
}

/// A tool-arguments check.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ToolArgsCheck {
    /// The tool whose calls are checked.
    pub tool: String,
    /// Check the arguments against the tool's declared JSON Schema (default true).
    #[serde(default = "crate::serde_true")]
    pub schema_valid: bool,
    /// Argument values that must be equal (top-level keys of the arguments object).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub equals: serde_json::Map<String, serde_json::Value>,
    /// Argument values (as text) that must match these regular expressions.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub matches: std::collections::BTreeMap<String, String>,
    /// Numeric arguments that must not exceed these bounds.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub max: std::collections::BTreeMap<String, f64>,
}

/// Call order: `sequence` is a golden list of tool names where `*` matches any number of
/// calls and `?` exactly one; `before` lists pairs `[a, b]`: every call of `b` comes after
/// some call of `a`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CallOrderCheck {
    /// The golden sequence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sequence: Vec<String>,
    /// Dependency rules.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<(String, String)>,
}

/// What the agent should do after a tool fault.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryMode {
    /// Call the tool again, within `max_retries`.
    Retry,
    /// Tell the user and offer a human or a later attempt.
    Escalate,
    /// Carry on with what it has, saying what is missing.
    Degrade,
}

/// Recovery under an injected fault.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RecoveryCheck {
    /// The faulted tool.
    pub tool: String,
    /// The expected behaviour.
    pub expect: RecoveryMode,
    /// Most retries allowed (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
}

/// Forbidden side effects: of these tools, or of these classes.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SideEffectCheck {
    /// Tools whose side effects are forbidden.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Classes of side effect that are forbidden (`write`, `irreversible`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<crate::tools::SideEffectClass>,
}

/// Injection resistance options.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct InjectionCheck {
    /// A secret that must not move into tool arguments (default: the case's canary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary: Option<String>,
}

/// Every call of `tool` was made by `agent`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AgentHandlesCheck {
    /// The tool.
    pub tool: String,
    /// The agent allowed to call it.
    pub agent: String,
    /// Whether the tool must be called at all (default `true`: "the right agent handled the
    /// step"). `false` makes the check a boundary: only `agent` may call the tool, if anyone
    /// does (an approval boundary between agents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

/// Handoffs between agents.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HandoffsCheck {
    /// Agents that must handle the conversation, in this order (others may come between).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sequence: Vec<String>,
    /// Most returns to the agent before last (A to B to A) allowed. Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ping_pong: Option<u32>,
}

/// Context passed to an agent.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ContextPassedCheck {
    /// The receiving agent.
    pub to: String,
    /// Texts its first model call must have received.
    pub contains: Vec<String>,
}

/// A model-judge check, graded by the run's `--judge` model. Its verdicts are triage: they are
/// reported, and never change the state.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JudgeSpec {
    /// What a good answer does, in plain words.
    pub rubric: String,
    /// Lowest judge score (0-3) that counts as a pass. Default 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_score: Option<u8>,
}

/// Either one value or a list, as written in a suite file.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum OneOrMany {
    /// A single value.
    One(String),
    /// Several values.
    Many(Vec<String>),
}

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = OneOrMany;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or a list of strings")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<OneOrMany, E> {
                Ok(OneOrMany::One(v.to_owned()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<OneOrMany, A::Error> {
                let mut out = Vec::new();
                while let Some(s) = seq.next_element::<String>()? {
                    out.push(s);
                }
                Ok(OneOrMany::Many(out))
            }
        }
        d.deserialize_any(V)
    }
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }

    fn from_vec(mut v: Vec<String>) -> Self {
        if v.len() == 1 {
            OneOrMany::One(v.remove(0))
        } else {
            OneOrMany::Many(v)
        }
    }
}

/// `true`, or a value: used by checks that take an optional argument (`no_canary: true` or
/// `no_canary: SECRET`).
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum FlagOr<T> {
    /// `true` (on, with defaults) or `false` (rejected: remove the check instead).
    Flag(bool),
    /// An explicit value.
    Value(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for FlagOr<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Buffer through serde_json::Value: these payloads are tiny, and it lets us give one
        // clear error instead of serde's "did not match any variant".
        let v = serde_json::Value::deserialize(d)?;
        match v {
            serde_json::Value::Bool(b) => Ok(FlagOr::Flag(b)),
            other => T::deserialize(other)
                .map(FlagOr::Value)
                .map_err(serde::de::Error::custom),
        }
    }
}

/// The written form of an `expect:` entry: exactly one check key plus modifiers.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectRaw {
    /// The output contains this text (or all of these; see `mode`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<OneOrMany>,
    /// The output contains none of these texts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_contains: Option<OneOrMany>,
    /// The output matches this regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    /// The output does not match this regular expression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_regex: Option<String>,
    /// The output, trimmed, equals this text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<String>,
    /// The output is JSON valid against this JSON Schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_schema: Option<serde_json::Value>,
    /// A JSON path into the output selects something (optionally equal to a value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_path: Option<JsonPathCheck>,
    /// The canary secret does not leak: `true` (use the case's or agent's canary) or the secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_canary: Option<FlagOr<String>>,
    /// No script, event handler, dangerous URL or exfiltrating image: `true` or options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_unsafe_markup: Option<FlagOr<MarkupCheck>>,
    /// The agent refused (`true`) or did not refuse (`false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<bool>,
    /// At most this many characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<usize>,
    /// At least this many characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_chars: Option<usize>,
    /// These tools were called.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_called: Option<OneOrMany>,
    /// These tools were not called (`[]`: no tool at all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_not_called: Option<OneOrMany>,
    /// A tool's arguments are valid and meet constraints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_args: Option<ToolArgsCheck>,
    /// Tool calls in order: `{sequence: [lookup, "*", refund]}` or `{before: [[lookup, refund]]}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_order: Option<CallOrderCheck>,
    /// Recovery after an injected fault: `{tool, expect: retry|escalate|degrade, max_retries}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<RecoveryCheck>,
    /// No side effect of these tools or classes: `{tools: [...], classes: [irreversible]}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_side_effect: Option<SideEffectCheck>,
    /// No approval-gated action attempted without approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_unapproved_actions: Option<bool>,
    /// Every claimed action joins to a successful tool call (no action hallucination).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_unbacked_claims: Option<bool>,
    /// After a poisoned tool output, no injected instruction obeyed: `true` or `{canary}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub injection_resistance: Option<FlagOr<InjectionCheck>>,
    /// Every call of a tool made by one agent: `{tool, agent}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_handles: Option<AgentHandlesCheck>,
    /// Handoffs in order, without ping-pong: `{sequence: [triage, billing], max_ping_pong: 1}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoffs: Option<HandoffsCheck>,
    /// An agent received context: `{to: billing, contains: [A-1001]}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_passed: Option<ContextPassedCheck>,
    /// A model judge grades the output (triage only: never changes the state).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeSpec>,

    /// A label for reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The rubric dimension this check feeds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dimension: Option<Dimension>,
    /// Score on that dimension when the check fails (0-3; default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_score: Option<u8>,
    /// A failure is a hard policy failure (the suite FAILs whatever the scores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hard: Option<bool>,
    /// Which output a text check reads: `final` or `all` assistant messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// Compare text case-sensitively (contains, not_contains, equals). Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_sensitive: Option<bool>,
    /// For `contains` with a list: `all` (default) or `any`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<MatchMode>,
    /// For `not_contains`: occurrences inside a verbatim copy of the user's message (the
    /// answer quoting an injected instruction back) do not count. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_echo: Option<bool>,
}

/// The check keys, in the order they are documented.
pub const CHECK_KEYS: &[&str] = &[
    "contains",
    "not_contains",
    "regex",
    "not_regex",
    "equals",
    "json_schema",
    "json_path",
    "no_canary",
    "no_unsafe_markup",
    "refusal",
    "max_chars",
    "min_chars",
    "tool_called",
    "tool_not_called",
    "tool_args",
    "call_order",
    "recovery",
    "no_side_effect",
    "no_unapproved_actions",
    "no_unbacked_claims",
    "injection_resistance",
    "agent_handles",
    "handoffs",
    "context_passed",
    "judge",
];

impl TryFrom<ExpectRaw> for Expect {
    type Error = String;

    fn try_from(r: ExpectRaw) -> Result<Self, String> {
        let mut found: Vec<(&'static str, Oracle)> = Vec::new();
        let cs = r.case_sensitive.unwrap_or(false);
        if let Some(v) = r.contains {
            found.push((
                "contains",
                Oracle::Contains {
                    values: v.into_vec(),
                    mode: r.mode.unwrap_or_default(),
                    case_sensitive: cs,
                },
            ));
        }
        if let Some(v) = r.not_contains {
            found.push((
                "not_contains",
                Oracle::NotContains {
                    values: v.into_vec(),
                    case_sensitive: cs,
                    ignore_echo: r.ignore_echo.unwrap_or(false),
                },
            ));
        }
        if let Some(p) = r.regex {
            found.push(("regex", Oracle::Regex { pattern: p }));
        }
        if let Some(p) = r.not_regex {
            found.push(("not_regex", Oracle::NotRegex { pattern: p }));
        }
        if let Some(v) = r.equals {
            found.push((
                "equals",
                Oracle::Equals {
                    value: v,
                    case_sensitive: cs,
                },
            ));
        }
        if let Some(s) = r.json_schema {
            found.push(("json_schema", Oracle::JsonSchema { schema: s }));
        }
        if let Some(p) = r.json_path {
            found.push(("json_path", Oracle::JsonPath(Box::new(p))));
        }
        if let Some(c) = r.no_canary {
            let canary = match c {
                FlagOr::Flag(true) => None,
                FlagOr::Flag(false) => {
                    return Err(
                        "`no_canary: false` checks nothing; remove the entry instead".into(),
                    );
                }
                FlagOr::Value(s) => Some(s),
            };
            found.push(("no_canary", Oracle::NoCanary { canary }));
        }
        if let Some(m) = r.no_unsafe_markup {
            let opts = match m {
                FlagOr::Flag(true) => MarkupCheck::default(),
                FlagOr::Flag(false) => {
                    return Err(
                        "`no_unsafe_markup: false` checks nothing; remove the entry instead".into(),
                    );
                }
                FlagOr::Value(o) => o,
            };
            found.push(("no_unsafe_markup", Oracle::NoUnsafeMarkup(opts)));
        }
        if let Some(b) = r.refusal {
            found.push(("refusal", Oracle::Refusal { expected: b }));
        }
        if let Some(n) = r.max_chars {
            found.push(("max_chars", Oracle::MaxChars(n)));
        }
        if let Some(n) = r.min_chars {
            found.push(("min_chars", Oracle::MinChars(n)));
        }
        if let Some(t) = r.tool_called {
            found.push((
                "tool_called",
                Oracle::ToolCalled {
                    tools: t.into_vec(),
                },
            ));
        }
        if let Some(t) = r.tool_not_called {
            found.push((
                "tool_not_called",
                Oracle::ToolNotCalled {
                    tools: t.into_vec(),
                },
            ));
        }
        if let Some(a) = r.tool_args {
            found.push(("tool_args", Oracle::ToolArgs(Box::new(a))));
        }
        if let Some(c) = r.call_order {
            if c.sequence.is_empty() && c.before.is_empty() {
                return Err("`call_order` needs `sequence` or `before`".into());
            }
            found.push(("call_order", Oracle::CallOrder(Box::new(c))));
        }
        if let Some(c) = r.recovery {
            found.push(("recovery", Oracle::Recovery(Box::new(c))));
        }
        if let Some(c) = r.no_side_effect {
            if c.tools.is_empty() && c.classes.is_empty() {
                return Err("`no_side_effect` needs `tools` or `classes`".into());
            }
            found.push(("no_side_effect", Oracle::NoSideEffect(Box::new(c))));
        }
        for (key, flag, oracle) in [
            (
                "no_unapproved_actions",
                r.no_unapproved_actions,
                Oracle::NoUnapprovedActions,
            ),
            (
                "no_unbacked_claims",
                r.no_unbacked_claims,
                Oracle::NoUnbackedClaims,
            ),
        ] {
            match flag {
                Some(true) => found.push((key, oracle)),
                Some(false) => {
                    return Err(format!(
                        "`{key}: false` checks nothing; remove the entry instead"
                    ));
                }
                None => {}
            }
        }
        if let Some(c) = r.injection_resistance {
            let opts = match c {
                FlagOr::Flag(true) => InjectionCheck::default(),
                FlagOr::Flag(false) => {
                    return Err(
                        "`injection_resistance: false` checks nothing; remove the entry instead"
                            .into(),
                    );
                }
                FlagOr::Value(o) => o,
            };
            found.push((
                "injection_resistance",
                Oracle::InjectionResistance(Box::new(opts)),
            ));
        }
        if let Some(c) = r.agent_handles {
            found.push(("agent_handles", Oracle::AgentHandles(Box::new(c))));
        }
        if let Some(c) = r.handoffs {
            found.push(("handoffs", Oracle::Handoffs(Box::new(c))));
        }
        if let Some(c) = r.context_passed {
            found.push(("context_passed", Oracle::ContextPassed(Box::new(c))));
        }
        if let Some(j) = r.judge {
            found.push(("judge", Oracle::Judge(Box::new(j))));
        }
        if found.len() > 1 {
            let keys: Vec<_> = found.iter().map(|(k, _)| format!("`{k}`")).collect();
            return Err(format!(
                "an expect entry holds exactly one check, found {}; split them into separate `- ` entries",
                keys.join(" and ")
            ));
        }
        let Some((_, oracle)) = found.pop() else {
            return Err(format!(
                "an expect entry needs one check key, one of: {}",
                CHECK_KEYS.join(", ")
            ));
        };
        if let Some(fs) = r.fail_score.filter(|fs| *fs > 3) {
            return Err(format!("fail_score must be 0-3, got {fs}"));
        }
        if r.mode.is_some() && !matches!(oracle, Oracle::Contains { .. }) {
            return Err("`mode` only applies to `contains`".into());
        }
        if r.ignore_echo.is_some() && !matches!(oracle, Oracle::NotContains { .. }) {
            return Err("`ignore_echo` only applies to `not_contains`".into());
        }
        if r.case_sensitive.is_some()
            && !matches!(
                oracle,
                Oracle::Contains { .. } | Oracle::NotContains { .. } | Oracle::Equals { .. }
            )
        {
            return Err(
                "`case_sensitive` only applies to contains, not_contains and equals".into(),
            );
        }
        Ok(Expect {
            oracle,
            name: r.name,
            dimension: r.dimension,
            fail_score: r.fail_score,
            hard: r.hard,
            scope: r.scope,
        })
    }
}

impl From<Expect> for ExpectRaw {
    fn from(e: Expect) -> Self {
        let mut r = ExpectRaw {
            name: e.name,
            dimension: e.dimension,
            fail_score: e.fail_score,
            hard: e.hard,
            scope: e.scope,
            ..ExpectRaw::default()
        };
        match e.oracle {
            Oracle::Contains {
                values,
                mode,
                case_sensitive,
            } => {
                r.contains = Some(OneOrMany::from_vec(values));
                if mode != MatchMode::All {
                    r.mode = Some(mode);
                }
                if case_sensitive {
                    r.case_sensitive = Some(true);
                }
            }
            Oracle::NotContains {
                values,
                case_sensitive,
                ignore_echo,
            } => {
                r.not_contains = Some(OneOrMany::from_vec(values));
                if case_sensitive {
                    r.case_sensitive = Some(true);
                }
                if ignore_echo {
                    r.ignore_echo = Some(true);
                }
            }
            Oracle::Regex { pattern } => r.regex = Some(pattern),
            Oracle::NotRegex { pattern } => r.not_regex = Some(pattern),
            Oracle::Equals {
                value,
                case_sensitive,
            } => {
                r.equals = Some(value);
                if case_sensitive {
                    r.case_sensitive = Some(true);
                }
            }
            Oracle::JsonSchema { schema } => r.json_schema = Some(schema),
            Oracle::JsonPath(p) => r.json_path = Some(*p),
            Oracle::NoCanary { canary } => {
                r.no_canary = Some(match canary {
                    None => FlagOr::Flag(true),
                    Some(c) => FlagOr::Value(c),
                })
            }
            Oracle::NoUnsafeMarkup(m) => {
                r.no_unsafe_markup = Some(if m == MarkupCheck::default() {
                    FlagOr::Flag(true)
                } else {
                    FlagOr::Value(m)
                })
            }
            Oracle::Refusal { expected } => r.refusal = Some(expected),
            Oracle::MaxChars(n) => r.max_chars = Some(n),
            Oracle::MinChars(n) => r.min_chars = Some(n),
            Oracle::ToolCalled { tools } => r.tool_called = Some(OneOrMany::from_vec(tools)),
            Oracle::ToolNotCalled { tools } => {
                r.tool_not_called = Some(OneOrMany::Many(tools));
            }
            Oracle::ToolArgs(a) => r.tool_args = Some(*a),
            Oracle::CallOrder(c) => r.call_order = Some(*c),
            Oracle::Recovery(c) => r.recovery = Some(*c),
            Oracle::NoSideEffect(c) => r.no_side_effect = Some(*c),
            Oracle::NoUnapprovedActions => r.no_unapproved_actions = Some(true),
            Oracle::NoUnbackedClaims => r.no_unbacked_claims = Some(true),
            Oracle::InjectionResistance(c) => {
                r.injection_resistance = Some(if *c == InjectionCheck::default() {
                    FlagOr::Flag(true)
                } else {
                    FlagOr::Value(*c)
                })
            }
            Oracle::AgentHandles(c) => r.agent_handles = Some(*c),
            Oracle::Handoffs(c) => r.handoffs = Some(*c),
            Oracle::ContextPassed(c) => r.context_passed = Some(*c),
            Oracle::Judge(j) => r.judge = Some(*j),
        }
        r
    }
}
