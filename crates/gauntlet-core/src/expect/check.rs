//! [`Check`], the trait every check implements, and what it works with: its [`Facts`]
//! (default dimension, scope and hardness), the [`Modifier`]s it may read, the
//! [`Validation`] it records problems in, the [`CaseView`] it reads its case through, and the
//! written forms it is built from ([`OneOrMany`], [`FlagOr`]).
//!
//! This is the bottom of the checks: the table in [`checks`](super::checks) implements the
//! trait, and [`Expect`](super::Expect) holds what the table generates. Nothing here names
//! the case type or an entry, so that the case can hold its checks without the two files
//! importing each other.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::judges::JudgeSettings;
use crate::rubric::{CaseKind, Dimension};
use crate::tools::{ToolDef, ToolFault};

/// Which of the agent's outputs a text check reads.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The final answer (the default for content checks).
    Final,
    /// Every assistant message of the conversation (the default for leak and markup checks).
    All,
}

/// What a check of a security case stands for in the figures a red team reports: the attack
/// achieved its goal, the refusal policy was broken, or the legitimate task was not done.
/// A check's role is inferred ([`Oracle::default_role`](super::Oracle::default_role)) unless
/// its entry says `role:`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// It fails when the attack did what it asked: a leak, a forbidden call, the planted text
    /// said, unsafe markup emitted, harm delivered. The default of every violation check.
    Attack,
    /// The refusal policy: it fails when the agent did not refuse. The default of
    /// `refusal: true`. Not refusing is not the attack achieving its goal: a reply that
    /// complies harmlessly breaks the policy and delivers nothing.
    Policy,
    /// The legitimate task the attack hides in: it fails when the task was not done. The
    /// default of every other check (`regex`, `contains`, `tool_called`, `recovery`,
    /// `judge`, `refusal: false`...).
    Task,
}

impl Role {
    /// The lowercase name, as written in a suite file.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Attack => "attack",
            Role::Policy => "policy",
            Role::Task => "task",
        }
    }
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

/// One kind of check, implemented by its options type (the payload of its
/// [`Oracle`](super::Oracle) variant). Everything about a check except how it is graded is
/// here.
pub trait Check: Sized {
    /// The value of the check's key as written (`contains: TEXT` holds a [`OneOrMany`]).
    type Raw;

    /// Its defaults and how the runner treats it.
    const FACTS: Facts;

    /// The modifiers it reads, besides the ones every check takes. Any other one set on the
    /// entry is an error.
    const MODIFIERS: &'static [Modifier] = &[];

    /// The check, from the value of its key and the entry's modifiers.
    fn from_raw(raw: Self::Raw, modifiers: &Modifiers) -> Result<Self, RawError>;

    /// The value of its key; sets the modifiers that carry the rest.
    fn into_raw(self, modifiers: &mut Modifiers) -> Self::Raw;

    /// The rubric dimension it feeds when the suite does not say. [`Facts::dimension`]
    /// unless the check's options or the kind of case change it.
    fn default_dimension(&self, kind: CaseKind) -> Dimension {
        let _ = kind;
        Self::FACTS.dimension
    }

    /// Whether a failure is hard when the suite does not say. [`Facts::hard`] unless the
    /// check's options change it.
    fn default_hard(&self, case: &dyn CaseView) -> bool {
        Self::FACTS.hard.applies(case)
    }

    /// Records what serde cannot see (a pattern that does not compile, a tool that is not
    /// declared) in `v`. Nothing by default.
    fn validate(&self, v: &mut Validation<'_>) {
        let _ = v;
    }
}

/// Large options stay behind a box in [`Oracle`](super::Oracle), so that every case does not
/// pay for the largest check.
impl<T: Check> Check for Box<T> {
    type Raw = T::Raw;
    const FACTS: Facts = T::FACTS;
    const MODIFIERS: &'static [Modifier] = T::MODIFIERS;

    fn from_raw(raw: Self::Raw, modifiers: &Modifiers) -> Result<Self, RawError> {
        T::from_raw(raw, modifiers).map(Box::new)
    }

    fn into_raw(self, modifiers: &mut Modifiers) -> Self::Raw {
        (*self).into_raw(modifiers)
    }

    fn default_dimension(&self, kind: CaseKind) -> Dimension {
        (**self).default_dimension(kind)
    }

    fn default_hard(&self, case: &dyn CaseView) -> bool {
        (**self).default_hard(case)
    }

    fn validate(&self, v: &mut Validation<'_>) {
        (**self).validate(v)
    }
}

/// What a check is by default, and how the runner treats it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    /// The rubric dimension it feeds.
    pub dimension: Dimension,
    /// The output it reads.
    pub scope: Scope,
    /// Whether a failure is hard.
    pub hard: Hard,
    /// Whether a program decides it (everything but a model judge).
    pub objective: bool,
    /// Whether it only looks for violations (a leak, a forbidden call), so that it is safe to
    /// run on what an incomplete trial did say: a timeout must never turn into a "missing
    /// refusal", but a leak before the timeout is still a leak.
    pub violation: bool,
}

impl Facts {
    /// An objective check on `dimension` that reads the final answer, is never hard by
    /// default and does not run on incomplete trials.
    pub const fn new(dimension: Dimension) -> Facts {
        Facts {
            dimension,
            scope: Scope::Final,
            hard: Hard::Never,
            objective: true,
            violation: false,
        }
    }

    /// Reads every answer: for checks of something that must never be said.
    pub const fn reads_every_answer(mut self) -> Facts {
        self.scope = Scope::All;
        self
    }

    /// Sets when a failure is hard.
    pub const fn hard(mut self, hard: Hard) -> Facts {
        self.hard = hard;
        self
    }

    /// Marks a check that only looks for violations.
    pub const fn violation(mut self) -> Facts {
        self.violation = true;
        self
    }

    /// Marks a check a model decides.
    pub const fn judged(mut self) -> Facts {
        self.objective = false;
        self
    }
}

/// When a failing check is a hard policy failure, unless the entry says `hard:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hard {
    /// Never.
    Never,
    /// Always.
    Always,
    /// In a security case (one with `owasp:` or `pack: security`).
    InSecurityCase,
}

impl Hard {
    /// Whether a failure is hard in this case.
    pub fn applies(self, case: &dyn CaseView) -> bool {
        match self {
            Hard::Never => false,
            Hard::Always => true,
            Hard::InSecurityCase => case.is_security(),
        }
    }
}

/// Why the value of a check's key makes no check. [`ExpectError`](super::ExpectError) adds
/// the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawError {
    /// The key is `false`, which checks nothing.
    Off,
    /// A required part is missing; the text names what is needed (`` `sequence` or `before` ``).
    Needs(&'static str),
}

/// A problem with one check that serde cannot see; the loader places it at the check's key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckProblem {
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

/// Text in a language this crate cannot parse.
#[derive(Debug, Clone, Copy)]
pub enum Syntax<'a> {
    /// A regular expression (Rust `regex` syntax).
    Regex(&'a str),
    /// A JSON Schema.
    JsonSchema(&'a serde_json::Value),
    /// An RFC 9535 JSON path.
    JsonPath(&'a str),
}

/// Why a pattern, schema or path does not parse, in one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SyntaxError(pub String);

/// The parsers [`Check::validate`] needs, lent by the loader (this crate has none).
pub trait Parsers {
    /// Parses the text.
    fn parse(&self, text: Syntax<'_>) -> Result<(), SyntaxError>;

    /// The candidate closest to a misspelt word, if one is close enough to be a typo (for
    /// "did you mean" hints). None by default.
    fn closest<'a>(&self, word: &str, candidates: &[&'a str]) -> Option<&'a str> {
        let _ = (word, candidates);
        None
    }

    /// What is wrong with the files a `script:` check's command names (a program that is
    /// not in the suite's folder or on `PATH`, a script argument that does not exist or lies
    /// outside the folder). The loader knows the folder; nothing by default.
    fn script(&self, argv: &[String]) -> Vec<CheckProblem> {
        let _ = argv;
        Vec::new()
    }
}

/// What [`Check::validate`] sees of the case, and where it records problems.
pub struct Validation<'a> {
    case: &'a dyn CaseView,
    tools: &'a [ToolDef],
    canary_known: bool,
    parsers: &'a dyn Parsers,
    judges: Option<&'a JudgeSettings>,
    message_bus: bool,
    out_of_scope: &'a [String],
    problems: Vec<CheckProblem>,
}

impl<'a> Validation<'a> {
    /// Validation of the checks of `case`, in a suite whose agent declares `tools`;
    /// `canary_known` says whether the case, the agent or the run sets a canary.
    pub fn new(
        case: &'a dyn CaseView,
        tools: &'a [ToolDef],
        canary_known: bool,
        parsers: &'a dyn Parsers,
    ) -> Self {
        Validation {
            case,
            tools,
            canary_known,
            parsers,
            judges: None,
            message_bus: false,
            out_of_scope: &[],
            problems: Vec::new(),
        }
    }

    /// Whether the suite's message bus is on (`agent.message_bus`).
    pub fn with_message_bus(mut self, on: bool) -> Self {
        self.message_bus = on;
        self
    }

    /// Whether the suite's message bus is on, for the checks that read its messages.
    pub fn message_bus(&self) -> bool {
        self.message_bus
    }

    /// The agent card's `out_of_scope` topics, for the checks that name one.
    pub fn with_out_of_scope(mut self, topics: &'a [String]) -> Self {
        self.out_of_scope = topics;
        self
    }

    /// The agent card's `out_of_scope` topics, when the loader lent them.
    pub fn out_of_scope(&self) -> &'a [String] {
        self.out_of_scope
    }

    /// The suite's judges, for `judge` checks that name one.
    pub fn with_judges(mut self, judges: &'a JudgeSettings) -> Self {
        self.judges = Some(judges);
        self
    }

    /// The suite's judges, when the loader lent them.
    pub fn judges(&self) -> Option<&'a JudgeSettings> {
        self.judges
    }

    /// The candidate closest to a misspelt word, for "did you mean" hints.
    pub fn closest<'b>(&self, word: &str, candidates: &[&'b str]) -> Option<&'b str> {
        self.parsers.closest(word, candidates)
    }

    /// The case the check belongs to.
    pub fn case(&self) -> &'a dyn CaseView {
        self.case
    }

    /// Whether a canary is set for the case (by the case, the agent or the run).
    pub fn canary_known(&self) -> bool {
        self.canary_known
    }

    /// Records a problem.
    pub fn problem(&mut self, message: impl Into<String>, hint: impl Into<String>) {
        self.problems.push(CheckProblem {
            message: message.into(),
            hint: hint.into(),
        });
    }

    /// Parses a pattern, schema or path.
    pub fn parse(&self, text: Syntax<'_>) -> Result<(), SyntaxError> {
        self.parsers.parse(text)
    }

    /// Records what is wrong with the files a script's command names.
    pub fn script(&mut self, argv: &[String]) {
        let found = self.parsers.script(argv);
        self.problems.extend(found);
    }

    /// Whether the agent declares a tool of this name (any name is accepted when it declares
    /// none); records the problem, with a suggestion, when it does not.
    pub fn tool(&mut self, name: &str) -> bool {
        if self.tools.is_empty() || self.tools.iter().any(|t| t.name == name) {
            return true;
        }
        let declared: Vec<&str> = self.tools.iter().map(|t| t.name.as_str()).collect();
        let hint = match self.parsers.closest(name, &declared) {
            Some(c) => format!("did you mean `{c}`?"),
            None => format!("declared tools: {}", declared.join(", ")),
        };
        self.problem(
            format!("no tool named `{name}` is declared in agent.tools"),
            hint,
        );
        false
    }

    /// The problems recorded.
    pub fn into_problems(self) -> Vec<CheckProblem> {
        self.problems
    }
}

/// What a check reads of the case it belongs to. [`Case`](crate::suite::Case) implements it:
/// the case holds its checks, so a check sees the case through this view rather than by name.
pub trait CaseView {
    /// Which rubric scores the case.
    fn kind(&self) -> CaseKind;

    /// Whether it is a security case (one with `owasp:` or `pack: security`).
    fn is_security(&self) -> bool;

    /// The tool faults the case injects.
    fn tool_faults(&self) -> &[ToolFault];

    /// The keys of the case's checks, in order.
    fn check_keys(&self) -> Vec<&'static str>;
}

/// A modifier that only some checks read (see [`Check::MODIFIERS`]). Its key, its
/// documentation and the checks that read it are in the table of
/// [`checks`](super::checks), whose generated `key` and `ALL` fail to compile when this list
/// and the table's disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modifier {
    /// `mode`: all or any of a list.
    Mode,
    /// `ignore_echo`: quoted echoes of the user's message do not count.
    IgnoreEcho,
    /// `case_sensitive`: compare text case-sensitively.
    CaseSensitive,
}

/// The modifiers of an entry that only some checks read, as written (one field per
/// [`Modifier`]; the table's conversions name every field, so a mismatch does not compile).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Modifiers {
    /// `mode`: all (default) or any of a list.
    pub mode: Option<MatchMode>,
    /// `ignore_echo`: quoted echoes of the user's message do not count. Default false.
    pub ignore_echo: Option<bool>,
    /// `case_sensitive`: compare text case-sensitively. Default false.
    pub case_sensitive: Option<bool>,
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
    pub(super) fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }

    pub(super) fn from_vec(mut v: Vec<String>) -> Self {
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

impl<T> FlagOr<T> {
    /// `true` is `None` (the check with its defaults), a value is `Some`; `false` checks
    /// nothing.
    pub(super) fn on(self) -> Result<Option<T>, RawError> {
        match self {
            FlagOr::Flag(true) => Ok(None),
            FlagOr::Flag(false) => Err(RawError::Off),
            FlagOr::Value(v) => Ok(Some(v)),
        }
    }
}

impl<T: Default + PartialEq> FlagOr<T> {
    /// The check as written: `true` is its defaults; `false` checks nothing.
    pub(super) fn or_default(self) -> Result<T, RawError> {
        Ok(self.on()?.unwrap_or_default())
    }

    /// How a check is written back: `true` for its defaults, else its options.
    pub(super) fn written(value: T) -> FlagOr<T> {
        if value == T::default() {
            FlagOr::Flag(true)
        } else {
            FlagOr::Value(value)
        }
    }
}

/// A check written `key: true`; `false` checks nothing.
pub(super) fn on(flag: bool) -> Result<(), RawError> {
    if flag { Ok(()) } else { Err(RawError::Off) }
}
