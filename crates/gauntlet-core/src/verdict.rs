//! What a grader concludes: [`Verdict`], and the rubric [`Dimension`] it feeds (declared in
//! [`crate::rubric`], below the checks that name it).
//!
//! A verdict is a pass, a fail, or *not assessed*: the check could not decide (a model judge
//! that answered outside its format, or could not be reached). A verdict that was not
//! assessed is never a pass and never a fail; when it gates, its case is INCONCLUSIVE.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::rubric::Dimension;

use crate::expect::Role;

/// One grader's conclusion about one trial.
///
/// Written without `label` when the label is the check's name (most checks have no label of
/// their own); reading a verdict without one takes the check's name again.
#[derive(Debug, Clone, JsonSchema, PartialEq)]
pub struct Verdict {
    /// The check that produced it (`contains`, `no_canary`, ...).
    pub check: String,
    /// The label shown in reports; absent when it is the check's name.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub label: String,
    /// The dimension it feeds.
    pub dimension: Dimension,
    /// Whether the check passed.
    pub passed: bool,
    /// The score on the dimension, 0-3.
    pub score: u8,
    /// A failure that is a hard policy failure (FAIL whatever the scores).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hard_fail: bool,
    /// A failure that says the trial did nothing at all (a non-answer: ".", filler, an echo
    /// of the request): the trial's score is 0 whatever the other checks found, so that a
    /// "." that happened to call the right tool is no CONDITIONAL. It is the task not done,
    /// not a policy broken: it FAILs its case without counting as a hard policy failure.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub void: bool,
    /// Whether the verdict may change the state. False for uncalibrated model judges, whose
    /// verdicts are triage only.
    #[serde(
        default = "crate::de::serde_true",
        skip_serializing_if = "Clone::clone"
    )]
    pub gating: bool,
    /// Whether the check could be exercised and decide. A check that could not (the poisoned
    /// tool output never reached the agent, the expected text was only an echo of the input,
    /// a calibrated judge answered outside its format) is neither a pass nor a fail: it is
    /// not assessed, feeds no score, and a blocking case with such a check is inconclusive.
    #[serde(
        default = "crate::de::serde_true",
        skip_serializing_if = "Clone::clone"
    )]
    pub assessed: bool,
    /// What the check stands for in a security case (attack, policy, task), for the figures
    /// a red team reports; absent on verdicts that are no check of the case (a strategy's,
    /// a captured trace's), which stand for none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    /// What the grader saw, in words.
    pub evidence: String,
    /// Structured evidence (matched spans, decoded forms, schema errors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
    /// Model-judge calls made for this verdict, on their way into the trial's trace
    /// ([`crate::trace::Trace::judge`]), where [`crate::result::TrialResult::new`] moves them.
    #[serde(skip)]
    #[schemars(skip)]
    pub judge_calls: Vec<crate::trace::JudgeSpan>,
}

impl Serialize for Verdict {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let label = self.label != self.check;
        let n = 5
            + usize::from(label)
            + usize::from(self.hard_fail)
            + usize::from(self.void)
            + usize::from(!self.gating)
            + usize::from(!self.assessed)
            + usize::from(self.role.is_some())
            + usize::from(self.details.is_some());
        let mut st = s.serialize_struct("Verdict", n)?;
        st.serialize_field("check", &self.check)?;
        if label {
            st.serialize_field("label", &self.label)?;
        }
        st.serialize_field("dimension", &self.dimension)?;
        st.serialize_field("passed", &self.passed)?;
        st.serialize_field("score", &self.score)?;
        if self.hard_fail {
            st.serialize_field("hard_fail", &true)?;
        }
        if self.void {
            st.serialize_field("void", &true)?;
        }
        if !self.gating {
            st.serialize_field("gating", &false)?;
        }
        if !self.assessed {
            st.serialize_field("assessed", &false)?;
        }
        if let Some(r) = &self.role {
            st.serialize_field("role", r)?;
        }
        st.serialize_field("evidence", &self.evidence)?;
        if let Some(d) = &self.details {
            st.serialize_field("details", d)?;
        }
        st.end()
    }
}

/// The written form of a [`Verdict`], `label` optional.
#[derive(Deserialize)]
struct VerdictWire {
    check: String,
    #[serde(default)]
    label: Option<String>,
    dimension: Dimension,
    passed: bool,
    score: u8,
    #[serde(default)]
    hard_fail: bool,
    #[serde(default)]
    void: bool,
    #[serde(default = "crate::de::serde_true")]
    gating: bool,
    #[serde(default = "crate::de::serde_true")]
    assessed: bool,
    #[serde(default)]
    role: Option<Role>,
    evidence: String,
    #[serde(default)]
    details: Option<serde_json::Value>,
}

impl<'de> Deserialize<'de> for Verdict {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = VerdictWire::deserialize(d)?;
        Ok(Verdict {
            label: w.label.unwrap_or_else(|| w.check.clone()),
            check: w.check,
            dimension: w.dimension,
            passed: w.passed,
            score: w.score,
            hard_fail: w.hard_fail,
            void: w.void,
            gating: w.gating,
            assessed: w.assessed,
            role: w.role,
            evidence: w.evidence,
            details: w.details,
            judge_calls: Vec::new(),
        })
    }
}

impl Verdict {
    /// A passing verdict with score 3.
    pub fn pass(check: &str, label: String, dimension: Dimension, evidence: String) -> Self {
        Self {
            passed: true,
            score: 3,
            ..Self::fail(check, label, dimension, 0, evidence)
        }
    }

    /// A check that could not be exercised: not a pass, not a fail, no score. The evidence
    /// says why.
    pub fn not_assessed(
        check: &str,
        label: String,
        dimension: Dimension,
        evidence: String,
    ) -> Self {
        Self {
            assessed: false,
            ..Self::fail(check, label, dimension, 0, evidence)
        }
    }

    /// A failing verdict with the given score.
    pub fn fail(
        check: &str,
        label: String,
        dimension: Dimension,
        score: u8,
        evidence: String,
    ) -> Self {
        Self {
            check: check.to_owned(),
            label,
            dimension,
            passed: false,
            score,
            hard_fail: false,
            void: false,
            gating: true,
            assessed: true,
            role: None,
            evidence,
            details: None,
            judge_calls: Vec::new(),
        }
    }

    /// Marks a failure as a hard policy failure.
    pub fn hard(mut self, hard: bool) -> Self {
        self.hard_fail = hard && !self.passed && self.assessed;
        self
    }

    /// Marks a failure as a non-answer: the trial's score is 0 (see [`Verdict::void`]).
    pub fn voids(mut self, void: bool) -> Self {
        self.void = void && !self.passed && self.assessed;
        self
    }

    /// Whether this verdict voids its trial's score: counted, and a non-answer.
    pub fn voided(&self) -> bool {
        self.counts() && self.void
    }

    /// Whether this verdict may change a score or a state: gating, and assessed.
    pub fn counts(&self) -> bool {
        self.gating && self.assessed
    }

    /// Sets the role of the check that produced it.
    pub fn with_role(mut self, role: Role) -> Self {
        self.role = Some(role);
        self
    }

    /// Attaches structured evidence.
    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details);
        self
    }
}
