//! The checks a case makes: [`Expect`] (one entry of a case's `expect:` list), [`Oracle`] (the
//! check itself) and [`Check`], the trait behind every check.
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
//!
//! # A check is one declaration
//!
//! Each check is one line of the table in [`checks`] (`contains => Contains(ContainsCheck)`,
//! with the doc comment suite authors see in the JSON Schema) and its options type's
//! `impl Check` next to it: the written form, the facts (default dimension, scope and
//! hardness, whether it is objective, whether it looks only for violations) and the semantic
//! validation. From the table the `checks!` macro below generates [`Oracle`], the check's
//! field of [`ExpectRaw`], [`CHECK_KEYS`], both conversions, the per-check dispatch of the
//! facts, and [`with_check!`](crate::with_check), which other crates use to add behaviour per
//! check without a `match` of their own.
//!
//! Validation sits here, with the facts, because it is a pure function of the suite; the
//! parsers it needs (regular expressions, JSON Schema, JSON path) are lent by the loader
//! through [`Parsers`], as this crate has none. Grading needs detectors and caches, so it lives
//! in gauntlet-graders: one `Grade` impl per options type, dispatched with `with_check!`.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::suite::{Case, CaseKind};
use crate::tools::ToolDef;
use crate::rubric::Dimension;

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

/// One kind of check, implemented by its options type (the payload of its [`Oracle`]
/// variant). Everything about a check except how it is graded is here.
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
    fn default_hard(&self, case: &Case) -> bool {
        Self::FACTS.hard.applies(case)
    }

    /// Records what serde cannot see (a pattern that does not compile, a tool that is not
    /// declared) in `v`. Nothing by default.
    fn validate(&self, v: &mut Validation<'_>) {
        let _ = v;
    }
}

/// Large options stay behind a box in [`Oracle`], so that every case does not pay for the
/// largest check.
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

    fn default_hard(&self, case: &Case) -> bool {
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
    pub fn applies(self, case: &Case) -> bool {
        match self {
            Hard::Never => false,
            Hard::Always => true,
            Hard::InSecurityCase => case.is_security(),
        }
    }
}

/// Why the value of a check's key makes no check. [`ExpectError`] adds the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawError {
    /// The key is `false`, which checks nothing.
    Off,
    /// A required part is missing; the text names what is needed (`` `sequence` or `before` ``).
    Needs(&'static str),
}

impl RawError {
    pub(crate) fn at(self, key: &'static str) -> ExpectError {
        match self {
            RawError::Off => ExpectError::ChecksNothing { key },
            RawError::Needs(needs) => ExpectError::Incomplete { key, needs },
        }
    }
}

/// Why an `expect:` entry is not a check. serde shows the message with the entry's position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpectError {
    /// No check key.
    #[error("an expect entry needs one check key, one of: {}", CHECK_KEYS.join(", "))]
    NoCheck,
    /// More than one check key.
    #[error(
        "an expect entry holds exactly one check, found {}; split them into separate `- ` entries",
        quoted(.0, " and ")
    )]
    SeveralChecks(Vec<&'static str>),
    /// `key: false`.
    #[error("`{key}: false` checks nothing; remove the entry instead")]
    ChecksNothing {
        /// The check key.
        key: &'static str,
    },
    /// A required part of the check is missing.
    #[error("`{key}` needs {needs}")]
    Incomplete {
        /// The check key.
        key: &'static str,
        /// What it needs.
        needs: &'static str,
    },
    /// `fail_score` above 3.
    #[error("fail_score must be 0-3, got {0}")]
    FailScore(u8),
    /// A modifier on a check that does not read it.
    #[error("`{}` only applies to {}", .modifier.key(), quoted_list(.checks))]
    Modifier {
        /// The modifier.
        modifier: Modifier,
        /// The checks that read it.
        checks: Vec<&'static str>,
    },
}

fn quoted(keys: &[&str], sep: &str) -> String {
    keys.iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(sep)
}

/// `` `a` ``, `` `a` and `b` ``, `` `a`, `b` and `c` ``.
fn quoted_list(keys: &[&str]) -> String {
    match keys {
        [] => String::new(),
        [one] => format!("`{one}`"),
        [init @ .., last] => format!("{} and `{last}`", quoted(init, ", ")),
    }
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
}

/// What [`Check::validate`] sees of the case, and where it records problems.
pub struct Validation<'a> {
    case: &'a Case,
    tools: &'a [ToolDef],
    canary_known: bool,
    parsers: &'a dyn Parsers,
    judges: Option<&'a crate::judges::JudgeSettings>,
    message_bus: bool,
    problems: Vec<CheckProblem>,
}

impl<'a> Validation<'a> {
    /// Validation of the checks of `case`, in a suite whose agent declares `tools`;
    /// `canary_known` says whether the case, the agent or the run sets a canary.
    pub fn new(
        case: &'a Case,
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

    /// The suite's judges, for `judge` checks that name one.
    pub fn with_judges(mut self, judges: &'a crate::judges::JudgeSettings) -> Self {
        self.judges = Some(judges);
        self
    }

    /// The suite's judges, when the loader lent them.
    pub fn judges(&self) -> Option<&'a crate::judges::JudgeSettings> {
        self.judges
    }

    /// The candidate closest to a misspelt word, for "did you mean" hints.
    pub fn closest<'b>(&self, word: &str, candidates: &[&'b str]) -> Option<&'b str> {
        self.parsers.closest(word, candidates)
    }

    /// The case the check belongs to.
    pub fn case(&self) -> &'a Case {
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

/// Generates, from the table in [`checks`], everything that lists the checks: [`Oracle`],
/// [`ExpectRaw`], [`CHECK_KEYS`], [`Modifier`] and [`Modifiers`], both conversions, the
/// per-check dispatch in `impl Oracle`, and [`with_check!`](crate::with_check).
///
/// The first token of the input is `$`, passed through so that the generated `with_check!`
/// can have metavariables of its own.
macro_rules! checks {
    (
        $d:tt
        checks {
            $(
                $(#[doc = $doc:literal])*
                $key:ident => $Variant:ident($Ty:ty),
            )*
        }
        modifiers {
            $(
                $(#[doc = $mdoc:literal])*
                $mkey:ident: $MTy:ty => $Mod:ident,
            )*
        }
    ) => {
        /// A check: one variant per check key, holding the check's options.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Oracle {
            $(
                $(#[doc = $doc])*
                $Variant($Ty),
            )*
        }

        /// The check keys, in the order they are documented.
        pub const CHECK_KEYS: &[&str] = &[$(stringify!($key),)*];

        /// A modifier that only some checks read (see [`Check::MODIFIERS`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Modifier {
            $(
                $(#[doc = $mdoc])*
                $Mod,
            )*
        }

        impl Modifier {
            /// Every such modifier, in the order an entry is checked for them.
            pub const ALL: &[Modifier] = &[$(Modifier::$Mod,)*];

            /// Its key in a suite file.
            pub fn key(self) -> &'static str {
                match self {
                    $(Modifier::$Mod => stringify!($mkey),)*
                }
            }
        }

        /// The modifiers of an entry that only some checks read, as written.
        #[derive(Debug, Clone, Copy, Default, PartialEq)]
        pub struct Modifiers {
            $(
                $(#[doc = $mdoc])*
                pub $mkey: Option<$MTy>,
            )*
        }

        impl Modifiers {
            pub(crate) fn is_set(&self, m: Modifier) -> bool {
                match m {
                    $(Modifier::$Mod => self.$mkey.is_some(),)*
                }
            }
        }

        /// The written form of an `expect:` entry: exactly one check key plus modifiers.
        #[derive(Debug, Clone, Default, ::serde::Serialize, ::serde::Deserialize, ::schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct ExpectRaw {
            $(
                $(#[doc = $doc])*
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $key: Option<<$Ty as $crate::expect::Check>::Raw>,
            )*

            /// A label for reports.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub name: Option<String>,
            /// The rubric dimension this check feeds.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub dimension: Option<$crate::rubric::Dimension>,
            /// Score on that dimension when the check fails (0-3; default 0).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub fail_score: Option<u8>,
            /// A failure is a hard policy failure (the suite FAILs whatever the scores).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub hard: Option<bool>,
            /// Which output a text check reads: `final` or `all` assistant messages.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub scope: Option<$crate::expect::Scope>,
            $(
                $(#[doc = $mdoc])*
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $mkey: Option<$MTy>,
            )*
        }

        impl Oracle {
            /// The key that names this check in a suite file.
            pub fn key(&self) -> &'static str {
                match self {
                    $(Oracle::$Variant(_) => stringify!($key),)*
                }
            }

            /// Its facts (see [`Check::FACTS`]).
            pub fn facts(&self) -> $crate::expect::Facts {
                match self {
                    $(Oracle::$Variant(_) => <$Ty as $crate::expect::Check>::FACTS,)*
                }
            }

            /// The modifiers it reads besides the ones every check takes.
            pub fn modifiers(&self) -> &'static [Modifier] {
                match self {
                    $(Oracle::$Variant(_) => <$Ty as $crate::expect::Check>::MODIFIERS,)*
                }
            }

            /// The rubric dimension it feeds when the suite does not say.
            pub fn default_dimension(
                &self,
                kind: $crate::rubric::CaseKind,
            ) -> $crate::rubric::Dimension {
                match self {
                    $(Oracle::$Variant(c) => $crate::expect::Check::default_dimension(c, kind),)*
                }
            }

            /// Whether a failure is hard when the suite does not say.
            pub fn default_hard(&self, case: &$crate::suite::Case) -> bool {
                match self {
                    $(Oracle::$Variant(c) => $crate::expect::Check::default_hard(c, case),)*
                }
            }

            /// Records the problems serde cannot see.
            pub fn validate(&self, v: &mut $crate::expect::Validation<'_>) {
                match self {
                    $(Oracle::$Variant(c) => $crate::expect::Check::validate(c, v),)*
                }
            }

            /// The keys of the checks that read a modifier, in table order.
            pub(crate) fn reading(m: Modifier) -> Vec<&'static str> {
                let mut keys = Vec::new();
                $(
                    if <$Ty as $crate::expect::Check>::MODIFIERS.contains(&m) {
                        keys.push(stringify!($key));
                    }
                )*
                keys
            }
        }

        impl TryFrom<ExpectRaw> for $crate::expect::Expect {
            type Error = $crate::expect::ExpectError;

            fn try_from(r: ExpectRaw) -> Result<Self, $crate::expect::ExpectError> {
                let modifiers = Modifiers {
                    $($mkey: r.$mkey,)*
                };
                let mut found: Vec<(&'static str, Oracle)> = Vec::new();
                $(
                    if let Some(raw) = r.$key {
                        let check = <$Ty as $crate::expect::Check>::from_raw(raw, &modifiers)
                            .map_err(|e| e.at(stringify!($key)))?;
                        found.push((stringify!($key), Oracle::$Variant(check)));
                    }
                )*
                $crate::expect::finish(found, modifiers, r.name, r.dimension, r.fail_score, r.hard, r.scope)
            }
        }

        impl From<$crate::expect::Expect> for ExpectRaw {
            fn from(e: $crate::expect::Expect) -> Self {
                let mut modifiers = Modifiers::default();
                let mut r = ExpectRaw {
                    name: e.name,
                    dimension: e.dimension,
                    fail_score: e.fail_score,
                    hard: e.hard,
                    scope: e.scope,
                    ..ExpectRaw::default()
                };
                match e.oracle {
                    $(Oracle::$Variant(c) => r.$key = Some($crate::expect::Check::into_raw(c, &mut modifiers)),)*
                }
                $(r.$mkey = modifiers.$mkey;)*
                r
            }
        }

        /// Expands to a `match` over an [`Oracle`](crate::expect::Oracle) with one arm per
        /// check, binding the check's options to `$c` in `$body`: crates that add behaviour per
        /// check (the graders implement a trait for every options type) dispatch with it, so a
        /// new check needs no arm of theirs.
        ///
        /// ```text
        /// gauntlet_core::with_check!(&expect.oracle, c => c.grade(&entry))
        /// ```
        #[macro_export]
        macro_rules! with_check {
            ($d oracle:expr, $d c:ident => $d body:expr) => {
                match $d oracle {
                    $($crate::expect::Oracle::$Variant($d c) => $d body,)*
                }
            };
        }
    };
}

/// The end of the raw-to-typed conversion, shared by every check: exactly one check key, a
/// score in range, and only the modifiers that check reads.
pub(crate) fn finish(
    mut found: Vec<(&'static str, Oracle)>,
    modifiers: Modifiers,
    name: Option<String>,
    dimension: Option<Dimension>,
    fail_score: Option<u8>,
    hard: Option<bool>,
    scope: Option<Scope>,
) -> Result<Expect, ExpectError> {
    if found.len() > 1 {
        return Err(ExpectError::SeveralChecks(
            found.iter().map(|(k, _)| *k).collect(),
        ));
    }
    let Some((_, oracle)) = found.pop() else {
        return Err(ExpectError::NoCheck);
    };
    if let Some(fs) = fail_score.filter(|fs| *fs > 3) {
        return Err(ExpectError::FailScore(fs));
    }
    if let Some(&modifier) = Modifier::ALL
        .iter()
        .find(|m| modifiers.is_set(**m) && !oracle.modifiers().contains(m))
    {
        return Err(ExpectError::Modifier {
            modifier,
            checks: Oracle::reading(modifier),
        });
    }
    Ok(Expect {
        oracle,
        name,
        dimension,
        fail_score,
        hard,
        scope,
    })
}

impl Oracle {
    /// Whether a program decides this check (everything but a model judge).
    pub fn is_objective(&self) -> bool {
        self.facts().objective
    }

    /// The output a text check reads when the suite does not say.
    pub fn default_scope(&self) -> Scope {
        self.facts().scope
    }

    /// Whether the check only looks for violations, so that it also runs on what an
    /// incomplete trial did say (see [`Facts::violation`]).
    pub fn is_violation_check(&self) -> bool {
        self.facts().violation
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

impl<T> FlagOr<T> {
    /// `true` is `None` (the check with its defaults), a value is `Some`; `false` checks
    /// nothing.
    fn on(self) -> Result<Option<T>, RawError> {
        match self {
            FlagOr::Flag(true) => Ok(None),
            FlagOr::Flag(false) => Err(RawError::Off),
            FlagOr::Value(v) => Ok(Some(v)),
        }
    }
}

/// A check written `key: true`; `false` checks nothing.
fn on(flag: bool) -> Result<(), RawError> {
    if flag { Ok(()) } else { Err(RawError::Off) }
}

// After the macro: `checks` invokes it.
pub mod checks;

pub use checks::*;
