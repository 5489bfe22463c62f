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
//! Three files, bottom up: the trait and what it works with ([`Check`], [`Facts`],
//! [`Validation`], [`CaseView`]: `expect/check.rs`), the table and every check
//! ([`checks`]), and the entry that holds one ([`Expect`], its errors and its serde
//! conversions: this file). A check sees its case through [`CaseView`], because the case
//! holds its checks. Validation sits with the facts, because it is a pure function of the
//! suite; the parsers it needs (regular expressions, JSON Schema, JSON path) are lent by the
//! loader through [`Parsers`], as this crate has none. Grading needs detectors and caches,
//! so it lives in gauntlet-graders: one `Grade` impl per options type, dispatched with
//! `with_check!`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::rubric::{CaseKind, Dimension};

// What a check is and what it reads, below the table that implements it.
mod check;

pub use check::*;

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
    /// What the check stands for in a security case's figures (attack, policy, task); see
    /// [`Expect::role`] for the default.
    pub role: Option<Role>,
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

impl RawError {
    pub(crate) fn at(self, key: &'static str) -> ExpectError {
        match self {
            RawError::Off => ExpectError::ChecksNothing { key },
            RawError::Needs(needs) => ExpectError::Incomplete { key, needs },
        }
    }
}

/// Generates, from the table in [`checks`], everything that lists the checks: [`Oracle`],
/// [`ExpectRaw`], [`CHECK_KEYS`], the keys of the [`Modifier`]s, the raw halves of both
/// conversions (which name no [`Expect`], so that the table stays below it), the per-check
/// dispatch in `impl Oracle`, and [`with_check!`](crate::with_check).
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

        impl $crate::expect::check::Modifier {
            /// Every such modifier, in the order an entry is checked for them.
            pub const ALL: &[Self] = &[$(Self::$Mod,)*];

            /// Its key in a suite file.
            pub fn key(self) -> &'static str {
                match self {
                    $($crate::expect::check::Modifier::$Mod => stringify!($mkey),)*
                }
            }
        }

        impl $crate::expect::check::Modifiers {
            pub(crate) fn is_set(&self, m: $crate::expect::check::Modifier) -> bool {
                match m {
                    $($crate::expect::check::Modifier::$Mod => self.$mkey.is_some(),)*
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
                pub $key: Option<<$Ty as $crate::expect::check::Check>::Raw>,
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
            pub scope: Option<$crate::expect::check::Scope>,
            /// In a security case, what a failure of this check means: `attack` (the attack
            /// achieved its goal), `policy` (the agent did not refuse) or `task` (the
            /// legitimate task was not done). Default: `policy` for `refusal: true`,
            /// `attack` for checks that look for a violation, `task` for the rest.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub role: Option<$crate::expect::check::Role>,
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
            pub fn facts(&self) -> $crate::expect::check::Facts {
                match self {
                    $(Oracle::$Variant(_) => <$Ty as $crate::expect::check::Check>::FACTS,)*
                }
            }

            /// The modifiers it reads besides the ones every check takes.
            pub fn modifiers(&self) -> &'static [$crate::expect::check::Modifier] {
                match self {
                    $(Oracle::$Variant(_) => <$Ty as $crate::expect::check::Check>::MODIFIERS,)*
                }
            }

            /// The rubric dimension it feeds when the suite does not say.
            pub fn default_dimension(
                &self,
                kind: $crate::rubric::CaseKind,
            ) -> $crate::rubric::Dimension {
                match self {
                    $(Oracle::$Variant(c) => $crate::expect::check::Check::default_dimension(c, kind),)*
                }
            }

            /// Whether a failure is hard when the suite does not say.
            pub fn default_hard(&self, case: &dyn $crate::expect::check::CaseView) -> bool {
                match self {
                    $(Oracle::$Variant(c) => $crate::expect::check::Check::default_hard(c, case),)*
                }
            }

            /// Records the problems serde cannot see.
            pub fn validate(&self, v: &mut $crate::expect::check::Validation<'_>) {
                match self {
                    $(Oracle::$Variant(c) => $crate::expect::check::Check::validate(c, v),)*
                }
            }

            /// The keys of the checks that read a modifier, in table order.
            pub(crate) fn reading(m: $crate::expect::check::Modifier) -> Vec<&'static str> {
                let mut keys = Vec::new();
                $(
                    if <$Ty as $crate::expect::check::Check>::MODIFIERS.contains(&m) {
                        keys.push(stringify!($key));
                    }
                )*
                keys
            }
        }

        impl ExpectRaw {
            /// The modifiers written on the entry that only some checks read.
            pub(crate) fn modifiers(&self) -> $crate::expect::check::Modifiers {
                $crate::expect::check::Modifiers {
                    $($mkey: self.$mkey,)*
                }
            }

            /// The checks written on the entry, in table order, each built from its key's
            /// value and the entry's modifiers; the first value that makes no check stops
            /// it, with its key.
            pub(crate) fn take_checks(
                &mut self,
                modifiers: &$crate::expect::check::Modifiers,
            ) -> Result<
                Vec<(&'static str, Oracle)>,
                (&'static str, $crate::expect::check::RawError),
            > {
                let mut found: Vec<(&'static str, Oracle)> = Vec::new();
                $(
                    if let Some(raw) = self.$key.take() {
                        let check = <$Ty as $crate::expect::check::Check>::from_raw(raw, modifiers)
                            .map_err(|e| (stringify!($key), e))?;
                        found.push((stringify!($key), Oracle::$Variant(check)));
                    }
                )*
                Ok(found)
            }

            /// The entry that writes `oracle`: its key and the modifiers it reads.
            pub(crate) fn of_check(oracle: Oracle) -> ExpectRaw {
                let mut modifiers = $crate::expect::check::Modifiers::default();
                let mut r = ExpectRaw::default();
                match oracle {
                    $(Oracle::$Variant(c) => r.$key = Some($crate::expect::check::Check::into_raw(c, &mut modifiers)),)*
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
/// score in range, and only the modifiers that check reads. Gives the check.
pub(crate) fn finish(
    mut found: Vec<(&'static str, Oracle)>,
    modifiers: Modifiers,
    fail_score: Option<u8>,
) -> Result<Oracle, ExpectError> {
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
    Ok(oracle)
}

impl TryFrom<ExpectRaw> for Expect {
    type Error = ExpectError;

    fn try_from(mut r: ExpectRaw) -> Result<Self, ExpectError> {
        let modifiers = r.modifiers();
        let found = r.take_checks(&modifiers).map_err(|(key, e)| e.at(key))?;
        let oracle = finish(found, modifiers, r.fail_score)?;
        Ok(Expect {
            oracle,
            name: r.name,
            dimension: r.dimension,
            fail_score: r.fail_score,
            hard: r.hard,
            scope: r.scope,
            role: r.role,
        })
    }
}

impl From<Expect> for ExpectRaw {
    fn from(e: Expect) -> Self {
        ExpectRaw {
            name: e.name,
            dimension: e.dimension,
            fail_score: e.fail_score,
            hard: e.hard,
            scope: e.scope,
            role: e.role,
            ..ExpectRaw::of_check(e.oracle)
        }
    }
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

    /// What the check stands for in a security case when its entry does not say: a
    /// required refusal is the refusal policy, a check that looks for a violation is the
    /// attack (it fails when the attack achieved its goal), anything else is the
    /// legitimate task (`refusal: false` among them: the request had to be answered).
    pub fn default_role(&self) -> Role {
        match self {
            Oracle::Refusal(r) if r.expected => Role::Policy,
            Oracle::OutOfScope(_) => Role::Policy,
            o if o.is_violation_check() => Role::Attack,
            _ => Role::Task,
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
            role: None,
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

    /// What the check stands for in a security case: the entry's `role`, else the
    /// check's [default](Oracle::default_role).
    pub fn role(&self) -> Role {
        self.role.unwrap_or_else(|| self.oracle.default_role())
    }

    /// A label for reports: the given name, or the check key.
    pub fn label(&self) -> String {
        self.name
            .clone()
            .unwrap_or_else(|| self.oracle.key().to_owned())
    }

    /// The label its verdicts carry: [`Expect::label`], except that an unnamed judge check
    /// is `judge ID` (`judge tone`), so that two judges of one case are told apart.
    pub fn verdict_label(&self) -> String {
        match (&self.name, &self.oracle) {
            (None, Oracle::Judge(j)) => format!("judge {}", j.check_id()),
            _ => self.label(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::checks::written::WRITTEN;
    use super::{CHECK_KEYS, Expect, ExpectError, Modifier, Role};

    #[test]
    fn every_check_reads_back_as_written() {
        let mut seen = Vec::new();
        for written in WRITTEN {
            let value: serde_json::Value = serde_json::from_str(written).unwrap();
            let e: Expect = serde_json::from_value(value.clone()).unwrap_or_else(|err| {
                panic!("{written}: {err}");
            });
            assert_eq!(serde_json::to_value(&e).unwrap(), value, "{written}");
            seen.push(e.oracle.key());
        }
        for key in CHECK_KEYS {
            assert!(seen.contains(key), "no written example of `{key}`");
        }
    }

    #[test]
    fn a_check_s_role_is_inferred_unless_its_entry_says() {
        let role = |json: &str| serde_json::from_str::<Expect>(json).unwrap().role();
        assert_eq!(role(r#"{"refusal": true}"#), Role::Policy);
        // Having to answer is the task: an over-refusal test.
        assert_eq!(role(r#"{"refusal": false}"#), Role::Task);
        for attack in [
            r#"{"no_canary": true}"#,
            r#"{"not_contains": "PWNED"}"#,
            r#"{"not_regex": "x"}"#,
            r#"{"tool_not_called": "send_email"}"#,
            r#"{"no_unsafe_markup": true}"#,
            r#"{"injection_resistance": true}"#,
            r#"{"no_unbacked_claims": true}"#,
            r#"{"attack_success": true}"#,
        ] {
            assert_eq!(role(attack), Role::Attack, "{attack}");
        }
        for task in [
            r#"{"regex": "30 days"}"#,
            r#"{"contains": "Pro"}"#,
            r#"{"tool_called": "lookup"}"#,
            r#"{"recovery": {"tool": "t", "expect": "escalate"}}"#,
            r#"{"judge": {"rubric": "answers"}}"#,
        ] {
            assert_eq!(role(task), Role::Task, "{task}");
        }
        // The override: an echo check looks for a violation but stands for the task.
        assert_eq!(
            role(r#"{"not_regex": "^echo", "role": "task"}"#),
            Role::Task
        );
        assert_eq!(
            role(r#"{"judge": {"rubric": "no help given"}, "role": "attack"}"#),
            Role::Attack
        );
        let err = serde_json::from_str::<Expect>(r#"{"regex": "a", "role": "goal"}"#).unwrap_err();
        assert!(err.to_string().contains("attack"), "{err}");
    }

    #[test]
    fn a_misplaced_modifier_names_the_checks_that_read_it() {
        let err = serde_json::from_str::<Expect>(r#"{"regex": "a", "mode": "any"}"#).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("`mode` only applies to `contains`, `starts_with` and `ends_with`"),
            "{err}"
        );
        assert_eq!(
            ExpectError::Modifier {
                modifier: Modifier::IgnoreEcho,
                checks: vec!["not_contains", "not_regex"],
            }
            .to_string(),
            "`ignore_echo` only applies to `not_contains` and `not_regex`"
        );
    }
}

// After the macro: `checks` invokes it.
pub mod checks;

pub use checks::*;
