//! The regression protocol: [`ChangeType`] (what kind of change a run tests), what to re-run
//! for each ([`ChangeType::rerun_scope`]), and a first root-cause [`Hypothesis`] for a new
//! failure, read from the kinds of check that failed (never from the wording of their
//! evidence, which a named check or a reworded message would change).

use crate::compare::CaseChange;

/// A kind of change to the agent or its harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeType {
    /// A prompt or system prompt.
    Prompt,
    /// A tool, its schema or its implementation.
    Tool,
    /// The model or its version.
    Model,
    /// A judge or grader.
    Judge,
    /// Retrieval or knowledge.
    Retrieval,
    /// A multi-agent workflow.
    Workflow,
}

/// What a changed file is, for a change-aware plan (`gauntlet plan --diff`): the regression
/// protocol's kinds of change, plus the app's own code and the suite files themselves.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum FileChange {
    /// A prompt or system prompt file.
    Prompt,
    /// A tool, its schema, its fixtures or its implementation.
    Tool,
    /// Model configuration (which model, its settings, the targets file).
    Model,
    /// A judge prompt or calibration record.
    Judge,
    /// Retrieval or knowledge: documents, index, embedding configuration.
    Retrieval,
    /// Multi-agent workflow code or configuration.
    Workflow,
    /// The agent's own code.
    AgentCode,
    /// A suite file or a file of cases.
    Suite,
}

impl FileChange {
    /// Every kind, in the order plans list them.
    pub const ALL: [FileChange; 8] = [
        FileChange::Suite,
        FileChange::Prompt,
        FileChange::Tool,
        FileChange::Model,
        FileChange::Judge,
        FileChange::Retrieval,
        FileChange::Workflow,
        FileChange::AgentCode,
    ];

    /// The snake_case name used in files and output.
    pub fn as_str(self) -> &'static str {
        match self {
            FileChange::Prompt => "prompt",
            FileChange::Tool => "tool",
            FileChange::Model => "model",
            FileChange::Judge => "judge",
            FileChange::Retrieval => "retrieval",
            FileChange::Workflow => "workflow",
            FileChange::AgentCode => "agent_code",
            FileChange::Suite => "suite",
        }
    }

    /// The globs a file of this kind matches when the config names none (`*` crosses
    /// folders; matched against the path from the repository root and the file name).
    pub fn default_globs(self) -> &'static [&'static str] {
        match self {
            FileChange::Prompt => &["*prompt*", "*.prompt", "*.j2", "*.jinja"],
            FileChange::Tool => &["*tool*", "*fixture*", "*mock*", "*openapi*"],
            FileChange::Model => &[
                "gauntlet.yaml",
                "*model*.yaml",
                "*model*.yml",
                "*model*.json",
                "*llm*.yaml",
                "*.env.example",
            ],
            FileChange::Judge => &["*judge*", "*.calibration.json", "*grader*", "*rubric*"],
            FileChange::Retrieval => &[
                "*retriev*",
                "*embedding*",
                "*vector*",
                "*index*.yaml",
                "*knowledge*",
                "*rag*",
            ],
            FileChange::Workflow => &[
                "*workflow*",
                "*handoff*",
                "*orchestrat*",
                "*multi-agent*",
                "*multi_agent*",
            ],
            FileChange::AgentCode => &[
                "*.py", "*.ts", "*.js", "*.mjs", "*.rs", "*.go", "*.java", "*.kt", "*.rb", "*.cs",
                "*.php",
            ],
            FileChange::Suite => &[],
        }
    }
}

/// Where a regression most likely comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CauseClass {
    /// The prompt (or the retrieval that feeds it).
    Prompt,
    /// A tool or the workflow around it.
    Tool,
    /// The model.
    Model,
    /// The grader or judge.
    Grader,
}

impl CauseClass {
    /// The lowercase name used in the regression log.
    pub fn as_str(self) -> &'static str {
        match self {
            CauseClass::Prompt => "prompt",
            CauseClass::Tool => "tool",
            CauseClass::Model => "model",
            CauseClass::Grader => "grader",
        }
    }
}

impl ChangeType {
    /// The lowercase name used in the regression log.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeType::Prompt => "prompt",
            ChangeType::Tool => "tool",
            ChangeType::Model => "model",
            ChangeType::Judge => "judge",
            ChangeType::Retrieval => "retrieval",
            ChangeType::Workflow => "workflow",
        }
    }

    /// What the change is, in words.
    pub fn title(self) -> &'static str {
        match self {
            ChangeType::Prompt => "prompt or system prompt",
            ChangeType::Tool => "tool",
            ChangeType::Model => "model",
            ChangeType::Judge => "judge or grader",
            ChangeType::Retrieval => "retrieval or knowledge",
            ChangeType::Workflow => "multi-agent workflow",
        }
    }

    /// What to re-run: the smallest scope that covers the risk of this kind of change.
    pub fn rerun_scope(self) -> &'static [&'static str] {
        match self {
            ChangeType::Prompt => &["smoke", "affected regression cases"],
            ChangeType::Tool => &["smoke", "affected regression cases", "security pack"],
            ChangeType::Model => &["smoke", "refusal pack", "targeted regression cases"],
            ChangeType::Judge => &["smoke", "calibration set", "affected regression cases"],
            ChangeType::Retrieval => &["affected regression cases", "grounding checks"],
            ChangeType::Workflow => &[
                "handoff tests",
                "coordination faults",
                "affected regression cases",
            ],
        }
    }

    /// The class a failure gets when its checks say nothing more specific.
    fn default_class(self) -> CauseClass {
        match self {
            ChangeType::Prompt | ChangeType::Retrieval => CauseClass::Prompt,
            ChangeType::Tool | ChangeType::Workflow => CauseClass::Tool,
            ChangeType::Model => CauseClass::Model,
            ChangeType::Judge => CauseClass::Grader,
        }
    }
}

/// A first guess at why a case regressed, for the regression log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hypothesis {
    /// The guess, in a sentence.
    pub text: String,
    /// Where it points.
    pub class: CauseClass,
}

/// Checks about which tools were called, how, and in what order.
const TOOL_CHECKS: &[&str] = &[
    "tool_called",
    "tool_not_called",
    "tool_args",
    "call_order",
    "recovery",
    "no_side_effect",
    "no_unapproved_actions",
    "agent_handles",
    "handoffs",
];

/// Checks of safety behaviour: leaks, refusals, unsafe output, resisting injections.
const SAFETY_CHECKS: &[&str] = &[
    "no_canary",
    "no_email_addresses",
    "refusal",
    "no_unsafe_markup",
    "injection_resistance",
];

/// A root-cause hypothesis for a new failure, from the kinds of check that now fail (hard
/// failures first) and the kind of change under test.
pub fn hypothesis(change: &CaseChange, kind: ChangeType) -> Hypothesis {
    let clipped = clip(&change.reason, 100);
    let first = change.failed_checks.first().map(String::as_str);
    if first == Some("judge") {
        return Hypothesis {
            text: "the judge now scores this answer differently".into(),
            class: CauseClass::Grader,
        };
    }
    if first.is_some_and(|c| TOOL_CHECKS.contains(&c)) {
        return Hypothesis {
            text: format!("tool use changed: {clipped}"),
            class: CauseClass::Tool,
        };
    }
    if first.is_some_and(|c| SAFETY_CHECKS.contains(&c)) {
        return Hypothesis {
            text: format!("a safety behaviour regressed: {clipped}"),
            class: if kind == ChangeType::Model {
                CauseClass::Model
            } else {
                CauseClass::Prompt
            },
        };
    }
    Hypothesis {
        text: format!("the answer changed: {clipped}"),
        class: kind.default_class(),
    }
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        let mut out: String = s.chars().take(n).collect();
        out.push('…');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::CaseStatus;

    fn change(checks: &[&str], reason: &str) -> CaseChange {
        CaseChange {
            id: "c".into(),
            name: "c".into(),
            before: CaseStatus::Pass,
            after: CaseStatus::Fail,
            score_before: None,
            score_after: None,
            reason: reason.into(),
            failed_checks: checks.iter().map(|c| (*c).to_owned()).collect(),
        }
    }

    #[test]
    fn the_check_kind_decides_not_the_wording() {
        // A check named by the suite ("refund went out") reads like anything; its kind says
        // it is a tool check.
        let h = hypothesis(
            &change(&["tool_called"], "refund went out: never called"),
            ChangeType::Prompt,
        );
        assert_eq!(h.class, CauseClass::Tool);
        // Evidence that happens to start with "tool_" is not a tool check.
        let h = hypothesis(
            &change(&["contains"], "tool_x was mentioned"),
            ChangeType::Prompt,
        );
        assert_eq!(h.class, CauseClass::Prompt);
        assert!(h.text.starts_with("the answer changed"));
        let h = hypothesis(&change(&["no_canary"], "leak"), ChangeType::Model);
        assert_eq!(h.class, CauseClass::Model);
        let h = hypothesis(&change(&["judge"], "judge: 1/3"), ChangeType::Tool);
        assert_eq!(h.class, CauseClass::Grader);
        let h = hypothesis(&change(&[], "score fell"), ChangeType::Workflow);
        assert_eq!(h.class, CauseClass::Tool);
    }
}
