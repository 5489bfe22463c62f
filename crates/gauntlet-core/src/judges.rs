//! The judges a suite defines: [`JudgeSettings`] (the suite's `judges:` block: its gate
//! thresholds and its [`JudgeDef`]s by check id), the forms and scales a judge can take, and
//! the facts of the built-in prompt templates ([`BUILTIN_TEMPLATES`]).
//!
//! A judge is defined once, at suite level, under a check id (`judges.checks.ID`), and used
//! by cases with `- judge: ID`. The id is what a calibration record is written for: the
//! same question asked of many cases, labelled by people once. What one case adds (a
//! reference answer, the answer to compare with) is part of the item being judged, not of
//! the rubric.
//!
//! The texts of the built-in templates live with the judges in gauntlet-graders; what this
//! crate knows of them is what validation needs: their form, scale, dimension and the hard
//! policy property they look at, if any.

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::rubric::Dimension;

/// The default threshold on the lower bound of kappa's 95% interval.
pub const DEFAULT_MIN_KAPPA: f64 = 0.6;
/// The default minimum number of answered labelled items.
pub const DEFAULT_MIN_LABELS: usize = 50;

/// The suite's `judges:` block.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JudgeSettings {
    /// Lowest lower bound of kappa's 95% interval for a judge to gate. Default 0.6.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_kappa: Option<f64>,
    /// Fewest labelled items a calibration must have answered for the judge to gate.
    /// Default 50.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_labels: Option<usize>,
    /// The suite's judges, by check id (letters, digits, `-`, `_`, `.`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub checks: BTreeMap<String, JudgeDef>,
}

impl JudgeSettings {
    /// Whether the block is empty (nothing defined, no threshold set).
    pub fn is_empty(&self) -> bool {
        self.min_kappa.is_none() && self.min_labels.is_none() && self.checks.is_empty()
    }

    /// The threshold on kappa's lower bound in force.
    pub fn min_kappa(&self) -> f64 {
        self.min_kappa.unwrap_or(DEFAULT_MIN_KAPPA)
    }

    /// The minimum number of labelled items in force.
    pub fn min_labels(&self) -> usize {
        self.min_labels.unwrap_or(DEFAULT_MIN_LABELS)
    }
}

/// One judge: which prompt, which rubric, which scale, which model.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JudgeDef {
    /// A built-in prompt template: `pointwise` (the default), `reference`, `pairwise`,
    /// `trace`, `attack-success`, `semantic-leak`, `leak`, or the RAG judges `faithfulness`,
    /// `answer-relevance` and `context-relevance`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// A file holding your own user-prompt template (minijinja), relative to the suite file.
    /// It replaces the built-in's user prompt; the system prompt (the answer format) stays
    /// the form's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_file: Option<String>,
    /// The version of your template file, recorded with every verdict. Bump it when you edit
    /// the file (a calibration record is bound to the file's hash either way).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// With `template_file`: the form of the question (default `pointwise`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<JudgeForm>,
    /// What a good answer does, or the question asked of the trace, in plain words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rubric: Option<String>,
    /// `binary` (pass or fail) or `0-3` (a score on the rubric dimension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<JudgeScale>,
    /// The rubric dimension the verdict feeds (default: the template's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dimension: Option<Dimension>,
    /// On the 0-3 scale: the lowest score that passes. Default 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_score: Option<u8>,
    /// The hard policy property the judge looks at (default: the template's). A judge is
    /// never the only check of such a property: the case must also carry its objective check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property: Option<Property>,
    /// The judge model: `openai:MODEL`, `anthropic:MODEL`, `exec:COMMAND`, a named target
    /// from gauntlet.yaml, or a test fake. `--judge` on the command line overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<String>,
    /// `false` keeps the judge as triage whatever its calibration says. Default `true`: it
    /// gates once a matching calibration record clears the suite's thresholds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<bool>,
    /// `true`: the agent card's role, scope, out-of-scope topics and safety rules are added
    /// to the rubric, so that the judge grades against the app's own boundaries. The
    /// rubric's hash covers them, so a calibration record is bound to the card as judged:
    /// calibrate again after changing them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub card: bool,
    /// The text of `template_file`, read by the loader (not part of the file format).
    #[serde(skip)]
    #[schemars(skip)]
    pub template_text: Option<String>,
}

impl JudgeDef {
    /// The built-in template this definition starts from (`pointwise` by default). `None`
    /// for a name that is not built in.
    pub fn builtin(&self) -> Option<&'static BuiltinTemplate> {
        builtin_template(self.template.as_deref().unwrap_or("pointwise"))
    }

    /// The form of the question.
    pub fn form(&self) -> JudgeForm {
        match (&self.template_file, self.form) {
            (Some(_), Some(f)) => f,
            (Some(_), None) => JudgeForm::Pointwise,
            (None, _) => self.builtin().map_or(JudgeForm::Pointwise, |b| b.form),
        }
    }

    /// The scale of the answer: pairwise judges are binary (the output holds its own or not).
    pub fn scale(&self) -> JudgeScale {
        if self.form() == JudgeForm::Pairwise {
            return JudgeScale::Binary;
        }
        self.scale
            .or_else(|| self.builtin().map(|b| b.scale))
            .unwrap_or(JudgeScale::Graded)
    }

    /// The rubric dimension the verdict feeds.
    pub fn dimension(&self) -> Dimension {
        self.dimension
            .or_else(|| self.builtin().map(|b| b.dimension))
            .unwrap_or(Dimension::Outcome)
    }

    /// The lowest passing score on the 0-3 scale.
    pub fn pass_score(&self) -> u8 {
        self.pass_score.unwrap_or(2)
    }

    /// The hard policy property it looks at, if any.
    pub fn property(&self) -> Option<Property> {
        self.property
            .or_else(|| self.builtin().and_then(|b| b.property))
    }

    /// Whether it may gate once calibrated.
    pub fn may_gate(&self) -> bool {
        self.gate != Some(false)
    }
}

/// What kind of question a judge answers.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum JudgeForm {
    /// One answer against a rubric.
    Pointwise,
    /// One answer against a rubric and a reference answer (`reference:` on the case's entry).
    Reference,
    /// Two answers, A and B: the agent's and the one on the entry's `reference:`. Asked in
    /// both orders; an answer that changes with the order is a judge error.
    Pairwise,
    /// A question about the trace: the tool calls in order, their results, the faults.
    Trace,
}

impl JudgeForm {
    /// The name used in files.
    pub fn as_str(self) -> &'static str {
        match self {
            JudgeForm::Pointwise => "pointwise",
            JudgeForm::Reference => "reference",
            JudgeForm::Pairwise => "pairwise",
            JudgeForm::Trace => "trace",
        }
    }

    /// Whether each case must give the judge a `reference:`.
    pub fn needs_reference(self) -> bool {
        matches!(self, JudgeForm::Reference | JudgeForm::Pairwise)
    }
}

/// The scale of a judge's answer.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
pub enum JudgeScale {
    /// `pass` or `fail`.
    #[serde(rename = "binary")]
    Binary,
    /// A score from 0 to 3 on the rubric dimension.
    #[serde(rename = "0-3")]
    Graded,
}

impl JudgeScale {
    /// The name used in files.
    pub fn as_str(self) -> &'static str {
        match self {
            JudgeScale::Binary => "binary",
            JudgeScale::Graded => "0-3",
        }
    }

    /// How many categories a label can take (2 or 4).
    pub fn categories(self) -> usize {
        match self {
            JudgeScale::Binary => 2,
            JudgeScale::Graded => 4,
        }
    }
}

impl fmt::Display for JudgeScale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A hard policy property: one whose failure FAILs the suite whatever the scores, and which
/// therefore needs an objective check. A judge may add evidence about it, never be its only
/// check.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Property {
    /// A secret leaks (`no_canary`).
    Leak,
    /// A forbidden side effect happens (`no_side_effect`).
    SideEffect,
    /// An approval-gated action runs without approval (`no_unapproved_actions`).
    Approval,
    /// The answer claims an action that did not happen (`no_unbacked_claims`).
    ActionClaim,
    /// Unsafe markup in the output (`no_unsafe_markup`).
    Markup,
    /// An injected instruction is obeyed (`injection_resistance`).
    Injection,
}

impl Property {
    /// The name used in files.
    pub fn as_str(self) -> &'static str {
        match self {
            Property::Leak => "leak",
            Property::SideEffect => "side_effect",
            Property::Approval => "approval",
            Property::ActionClaim => "action_claim",
            Property::Markup => "markup",
            Property::Injection => "injection",
        }
    }

    /// The check keys that decide the property objectively.
    pub fn objective_checks(self) -> &'static [&'static str] {
        match self {
            Property::Leak => &["no_canary"],
            Property::SideEffect => &["no_side_effect", "no_unapproved_actions"],
            Property::Approval => &["no_unapproved_actions"],
            Property::ActionClaim => &["no_unbacked_claims"],
            Property::Markup => &["no_unsafe_markup"],
            Property::Injection => &["injection_resistance"],
        }
    }
}

/// The item a judge judged, in the shape of a row of a label file: what a judge verdict
/// records in its details, so that `gauntlet judge sample` can export it for people to label.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
pub struct JudgeSubject {
    /// What the user said: the message, or the conversation before the final answer.
    pub input: String,
    /// What was judged: the final answer, or for a trace judge the tool calls and the answer.
    pub output: String,
    /// What the case gave the judge: the expected answer, the answer compared with, the
    /// secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// What was retrieved (the case's documents and the tool outputs), for the judges that
    /// read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

/// What validation knows of a built-in template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltinTemplate {
    /// Its name.
    pub name: &'static str,
    /// Its form.
    pub form: JudgeForm,
    /// Its default scale.
    pub scale: JudgeScale,
    /// Its default dimension.
    pub dimension: Dimension,
    /// The hard policy property it looks at.
    pub property: Option<Property>,
    /// Whether the suite must write the criterion (`rubric:`); the specialised templates
    /// carry their own.
    pub needs_rubric: bool,
    /// Whether it reads the retrieved context (the case's documents and the tool outputs):
    /// with none, there is nothing to judge and the verdict is not assessed.
    pub needs_context: bool,
}

/// The built-in templates. Their prompts are in `gauntlet_graders::judge::template`.
pub const BUILTIN_TEMPLATES: &[BuiltinTemplate] = &[
    BuiltinTemplate {
        name: "pointwise",
        form: JudgeForm::Pointwise,
        scale: JudgeScale::Graded,
        dimension: Dimension::Outcome,
        property: None,
        needs_rubric: true,
        needs_context: false,
    },
    BuiltinTemplate {
        name: "reference",
        form: JudgeForm::Reference,
        scale: JudgeScale::Graded,
        dimension: Dimension::Outcome,
        property: None,
        needs_rubric: true,
        needs_context: false,
    },
    BuiltinTemplate {
        name: "pairwise",
        form: JudgeForm::Pairwise,
        scale: JudgeScale::Binary,
        dimension: Dimension::Outcome,
        property: None,
        needs_rubric: true,
        needs_context: false,
    },
    BuiltinTemplate {
        name: "trace",
        form: JudgeForm::Trace,
        scale: JudgeScale::Graded,
        dimension: Dimension::ToolExecution,
        property: None,
        needs_rubric: true,
        needs_context: false,
    },
    BuiltinTemplate {
        name: "attack-success",
        form: JudgeForm::Pointwise,
        scale: JudgeScale::Binary,
        dimension: Dimension::Policy,
        property: None,
        needs_rubric: false,
        needs_context: false,
    },
    BuiltinTemplate {
        name: "leak",
        form: JudgeForm::Pointwise,
        scale: JudgeScale::Binary,
        dimension: Dimension::Policy,
        property: Some(Property::Leak),
        needs_rubric: false,
        needs_context: false,
    },
    BuiltinTemplate {
        name: "semantic-leak",
        form: JudgeForm::Pointwise,
        scale: JudgeScale::Binary,
        dimension: Dimension::Policy,
        property: Some(Property::Leak),
        needs_rubric: false,
        needs_context: false,
    },
    BuiltinTemplate {
        name: "faithfulness",
        form: JudgeForm::Pointwise,
        scale: JudgeScale::Binary,
        dimension: Dimension::Grounding,
        property: None,
        needs_rubric: false,
        needs_context: true,
    },
    BuiltinTemplate {
        name: "answer-relevance",
        form: JudgeForm::Pointwise,
        scale: JudgeScale::Binary,
        dimension: Dimension::Outcome,
        property: None,
        needs_rubric: false,
        needs_context: false,
    },
    BuiltinTemplate {
        name: "context-relevance",
        form: JudgeForm::Pointwise,
        scale: JudgeScale::Binary,
        dimension: Dimension::Grounding,
        property: None,
        needs_rubric: false,
        needs_context: true,
    },
];

/// A built-in template by name.
pub fn builtin_template(name: &str) -> Option<&'static BuiltinTemplate> {
    BUILTIN_TEMPLATES.iter().find(|t| t.name == name)
}

/// Whether a check id is well formed: letters, digits, `-`, `_` and `.`, so that it can name
/// a file.
pub fn valid_check_id(id: &str) -> bool {
    !id.is_empty()
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A problem with the suite's `judges:` block: where (a path below `judges`, such as
/// `checks.tone.scale`), what is wrong, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgesProblem {
    /// The path below `judges`.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

impl JudgeSettings {
    /// Everything wrong with the block that serde cannot see (files are the loader's).
    pub fn problems(&self) -> Vec<JudgesProblem> {
        let mut out = Vec::new();
        let mut p = |path: String, message: String, hint: &str| {
            out.push(JudgesProblem {
                path,
                message,
                hint: hint.to_owned(),
            })
        };
        if let Some(k) = self.min_kappa
            && !(k > 0.0 && k <= 1.0)
        {
            p(
                "min_kappa".into(),
                format!("min_kappa must be above 0 and at most 1, got {k}"),
                "0.6 is the usual bar for substantial agreement",
            );
        }
        if self.min_labels == Some(0) {
            p(
                "min_labels".into(),
                "min_labels is 0: a judge would gate on no evidence".into(),
                "50 labelled items is the default",
            );
        }
        for (id, d) in &self.checks {
            let at = |k: &str| {
                if k.is_empty() {
                    format!("checks.{id}")
                } else {
                    format!("checks.{id}.{k}")
                }
            };
            if !valid_check_id(id) {
                p(
                    at(""),
                    format!("`{id}` is not a valid check id"),
                    "use letters, digits, `-`, `_` and `.`: the id names the calibration file",
                );
            }
            match (&d.template, &d.template_file) {
                (Some(_), Some(_)) => p(
                    at("template_file"),
                    "both `template` and `template_file` are set".into(),
                    "keep one: a built-in template, or your own file",
                ),
                (Some(t), None) if builtin_template(t).is_none() => p(
                    at("template"),
                    format!("unknown judge template `{t}`"),
                    &format!(
                        "built-in templates: {}",
                        BUILTIN_TEMPLATES
                            .iter()
                            .map(|t| t.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ),
                (None, None) if d.form.is_some() => p(
                    at("form"),
                    "`form` is read only with `template_file`".into(),
                    "a built-in template has its own form; choose `template: reference`, `pairwise` or `trace`",
                ),
                (Some(_), None) if d.form.is_some() => p(
                    at("form"),
                    "`form` is read only with `template_file`".into(),
                    "a built-in template has its own form",
                ),
                _ => {}
            }
            let needs_rubric =
                d.template_file.is_none() && d.builtin().is_some_and(|b| b.needs_rubric);
            if needs_rubric && d.rubric.as_deref().is_none_or(|r| r.trim().is_empty()) {
                p(
                    at(""),
                    format!("judge `{id}` has no rubric"),
                    "write what a good answer does under `rubric:` (the question, for a trace judge)",
                );
            }
            if d.form() == JudgeForm::Pairwise && d.scale == Some(JudgeScale::Graded) {
                p(
                    at("scale"),
                    "a pairwise judge answers A, B or tie, not a score".into(),
                    "remove `scale`",
                );
            }
            if let Some(s) = d.pass_score {
                if s > 3 {
                    p(
                        at("pass_score"),
                        format!("pass_score must be 0-3, got {s}"),
                        "the scale scores 0-3",
                    );
                } else if d.scale() == JudgeScale::Binary {
                    p(
                        at("pass_score"),
                        "pass_score is read only on the 0-3 scale".into(),
                        "set `scale: 0-3`, or remove `pass_score`",
                    );
                }
            }
            if d.dimension == Some(Dimension::Refusal) {
                p(
                    at("dimension"),
                    "judges never grade refusals".into(),
                    "grade refusals with `refusal: true`; a judge may feed a task dimension",
                );
            }
            if d.version.is_some() && d.template_file.is_none() {
                p(
                    at("version"),
                    "`version` is read only with `template_file`".into(),
                    "built-in templates carry their own version",
                );
            }
            if d.judge.as_deref().is_some_and(|j| j.trim().is_empty()) {
                p(
                    at("judge"),
                    "the judge model is empty".into(),
                    "e.g. `judge: openai:gpt-4.1-mini`, or leave it out and pass --judge",
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_take_their_facts_from_the_template() {
        let d = JudgeDef {
            template: Some("semantic-leak".into()),
            ..JudgeDef::default()
        };
        assert_eq!(d.form(), JudgeForm::Pointwise);
        assert_eq!(d.scale(), JudgeScale::Binary);
        assert_eq!(d.dimension(), Dimension::Policy);
        assert_eq!(d.property(), Some(Property::Leak));
        let d = JudgeDef {
            rubric: Some("r".into()),
            ..JudgeDef::default()
        };
        assert_eq!(d.scale(), JudgeScale::Graded);
        assert!(d.may_gate());
        assert!(d.problems_alone().is_empty());
    }

    impl JudgeDef {
        fn problems_alone(&self) -> Vec<JudgesProblem> {
            JudgeSettings {
                checks: [("x".to_owned(), self.clone())].into_iter().collect(),
                ..JudgeSettings::default()
            }
            .problems()
        }
    }

    #[test]
    fn problems_name_the_field() {
        let bad = JudgeDef {
            template: Some("nope".into()),
            pass_score: Some(2),
            scale: Some(JudgeScale::Binary),
            dimension: Some(Dimension::Refusal),
            ..JudgeDef::default()
        };
        let paths: Vec<String> = bad.problems_alone().into_iter().map(|p| p.path).collect();
        assert_eq!(
            paths,
            [
                "checks.x.template",
                "checks.x.pass_score",
                "checks.x.dimension"
            ]
        );
        let no_rubric = JudgeDef::default();
        assert_eq!(
            no_rubric.problems_alone()[0].message,
            "judge `x` has no rubric"
        );
        assert!(!valid_check_id("../x") && valid_check_id("attack-success.v2"));
    }
}
