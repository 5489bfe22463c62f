//! Evolving-spec trajectories: the file format ([`Trajectory`]: checkpoints C1..Cn, each a
//! spec change for a coding agent and its own black-box tests), the per-checkpoint record
//! ([`CheckpointReport`]), the fold of a whole run ([`TrajectoryReport`]), the structural
//! erosion measure ([`code_mass`]) and the phases that trajectories of different lengths
//! share ([`Phase`], [`phase_of`], [`phases`]). The file is read by [`file`]; [`run`] runs the
//! agent and the tests and hands their outcomes here.
//!
//! Correctness and signals are kept apart on purpose. Strict, isolated, core and regression
//! correctness come from tests only; erosion, verbosity, cost and duration are trajectory
//! signals, shown beside the verdicts and never folded into them. A test that could not run
//! (its command missing, a time-out) is NOT_ASSESSED, and a checkpoint with such a test can
//! not be counted as passing.

pub mod file;
pub mod run;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A trajectory file.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Trajectory {
    /// Name shown in reports.
    pub name: String,
    /// A folder (relative to the trajectory file) copied as the starting workspace; empty
    /// when not set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Seconds the agent gets per checkpoint (default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_timeout_secs: Option<u64>,
    /// Seconds each test command gets (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_timeout_secs: Option<u64>,
    /// The checkpoints, in order.
    pub checkpoints: Vec<Checkpoint>,
}

/// One checkpoint: the spec change the agent is given and the tests that judge it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    /// Unique id (`C1`).
    pub id: String,
    /// The spec change, handed to the agent as it is.
    pub spec: String,
    /// The checkpoint's own black-box tests.
    pub tests: Vec<TestDef>,
}

/// A black-box test: a command run in a copy of the workspace; exit status 0 passes.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TestDef {
    /// Unique id across the trajectory.
    pub id: String,
    /// The program and its arguments (no shell). An argument naming a file in the
    /// trajectory's folder is made absolute.
    pub run: Vec<String>,
    /// Part of the core: reported as core correctness.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub core: bool,
    /// A hold-out test: nothing the agent is given describes it (no test is ever shown to
    /// the agent; hold-outs are also not named by any spec), counted on their own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub holdout: bool,
}

/// What one test run gave.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TestState {
    /// Exit status 0.
    Pass,
    /// Ran and exited non-zero (or was killed by a signal of its own).
    Fail,
    /// Could not run: not started, or cut off by its time limit. Never a pass.
    NotAssessed,
}

/// A verdict over a set of tests.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every test passed.
    Pass,
    /// At least one test failed.
    Fail,
    /// None failed, but at least one could not run (or there were none).
    NotAssessed,
}

impl Verdict {
    /// Fail if any failed, else not assessed if any could not run or the set is empty.
    pub fn of<'a>(states: impl IntoIterator<Item = &'a TestState>) -> Verdict {
        let mut any = false;
        let mut unassessed = false;
        for s in states {
            any = true;
            match s {
                TestState::Fail => return Verdict::Fail,
                TestState::NotAssessed => unassessed = true,
                TestState::Pass => {}
            }
        }
        if !any || unassessed {
            Verdict::NotAssessed
        } else {
            Verdict::Pass
        }
    }

    /// The word for tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::NotAssessed => "NOT_ASSESSED",
        }
    }
}

/// One test's outcome at one checkpoint.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct TestOutcome {
    /// The test's id.
    pub id: String,
    /// The checkpoint that introduced it.
    pub from: String,
    /// Core test.
    pub core: bool,
    /// Hold-out test.
    pub holdout: bool,
    /// What it gave.
    pub state: TestState,
    /// Why it could not run, or the tail of its output when it failed (redacted, clipped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// How the agent's process ended at one checkpoint.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum AgentEnd {
    /// Exited with this status.
    Exited {
        /// The exit status.
        code: i32,
    },
    /// Killed by a signal (no exit status).
    Killed,
    /// Cut off by the time limit; its process group was killed.
    TimedOut,
    /// Could not be started.
    NotStarted {
        /// Why.
        reason: String,
    },
    /// The built-in coding loop's model answered without asking for a tool: it says it is
    /// done.
    Finished {
        /// Model calls made.
        steps: u32,
    },
    /// The built-in coding loop's model was still calling tools at the step limit.
    StepLimit {
        /// Model calls made (the limit).
        steps: u32,
    },
    /// A model call of the built-in coding loop failed, or the model replied with nothing
    /// (a protocol error): never counted as finished.
    ModelError {
        /// `blocked`, `timeout`, `transport`, `protocol` or `harness`.
        class: String,
        /// What went wrong (redacted).
        detail: String,
    },
}

impl AgentEnd {
    /// The word for tables.
    pub fn word(&self) -> String {
        match self {
            AgentEnd::Exited { code } => format!("exit {code}"),
            AgentEnd::Killed => "killed".into(),
            AgentEnd::TimedOut => "timed out".into(),
            AgentEnd::NotStarted { .. } => "not started".into(),
            AgentEnd::Finished { .. } => "finished".into(),
            AgentEnd::StepLimit { .. } => "step limit".into(),
            AgentEnd::ModelError { .. } => "model error".into(),
        }
    }

    /// Why the agent did not end normally, as a sentence for the notes under a table;
    /// `None` for an exit, a kill or a finished loop (shown in the table already).
    pub fn note(&self) -> Option<String> {
        match self {
            AgentEnd::NotStarted { reason } => Some(format!("the agent did not start: {reason}")),
            AgentEnd::StepLimit { steps } => Some(format!(
                "the model was still calling tools after {steps} model calls (step limit)"
            )),
            AgentEnd::ModelError { class, detail } => {
                Some(format!("the model failed ({class}): {detail}"))
            }
            _ => None,
        }
    }
}

/// The trajectory signals of one checkpoint: not correctness.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Signals {
    /// Complexity-weighted code mass of the workspace's source after the checkpoint
    /// ([`code_mass`]).
    pub code_mass: u64,
    /// Source lines counted in it.
    pub source_lines: u64,
    /// Bytes the agent wrote on stdout and stderr (verbosity).
    pub output_bytes: u64,
    /// Cost the agent reported (`{"type":"usage","cost_usd":..}` lines), `None` when it
    /// reported none: unknown, not zero.
    pub cost_usd: Option<f64>,
    /// Wall time of the agent's step, milliseconds.
    pub agent_ms: u64,
    /// Model calls of the built-in coding loop (absent for an exec agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_calls: Option<u32>,
    /// Tokens of those calls, summed (absent for an exec agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<gauntlet_core::trace::Usage>,
}

/// One checkpoint's record.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct CheckpointReport {
    /// The checkpoint's id.
    pub id: String,
    /// 1-based position.
    pub index: usize,
    /// Its phase ([`phase_of`]).
    pub phase: Phase,
    /// How the agent ended.
    pub agent: AgentEnd,
    /// Every test so far passes.
    pub strict: Verdict,
    /// This checkpoint's own tests pass.
    pub isolated: Verdict,
    /// The core tests so far pass (not assessed when there are none).
    pub core: Verdict,
    /// Earlier checkpoints' tests that passed at the previous checkpoint and fail now.
    pub regressions: Vec<String>,
    /// Passed / total over the hold-out tests so far.
    pub holdout_passed: usize,
    /// Hold-out tests so far.
    pub holdout_total: usize,
    /// Every test so far, in order.
    pub tests: Vec<TestOutcome>,
    /// The signals.
    pub signals: Signals,
    /// The trace of the built-in coding loop's calls at this checkpoint, a file next to
    /// the report (`C1.trace.json`); absent for an exec agent or without `--out`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

/// Why a run was stopped before its end.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct IntegrityBreach {
    /// The checkpoint during which it happened.
    pub checkpoint: String,
    /// The files written, added or removed outside the workspace (relative to the
    /// trajectory's folder), first ones only.
    pub changed: Vec<String>,
}

/// A whole trajectory run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct TrajectoryReport {
    /// The trajectory's name.
    pub name: String,
    /// The file, as given.
    pub file: String,
    /// The agent, as given.
    pub agent: String,
    /// Checkpoints the file declares.
    pub declared: usize,
    /// The checkpoints that ran, in order.
    pub checkpoints: Vec<CheckpointReport>,
    /// Set when the agent wrote to the tests or graders: the run failed there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrity: Option<IntegrityBreach>,
}

/// The outcome of a run, for the exit code.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    /// Every checkpoint strict PASS, no regression.
    Pass,
    /// A failure, a regression or an integrity breach.
    Fail,
    /// Nothing failed, but something could not be assessed.
    NotAssessed,
}

impl TrajectoryReport {
    /// Every regression of the run, as `checkpoint: test`.
    pub fn regressions(&self) -> Vec<String> {
        self.checkpoints
            .iter()
            .flat_map(|c| c.regressions.iter().map(move |t| format!("{}: {t}", c.id)))
            .collect()
    }

    /// Fail on an integrity breach, a regression or a strict failure anywhere; not
    /// assessed when a checkpoint was not run or not assessed; else pass.
    pub fn outcome(&self) -> RunOutcome {
        if self.integrity.is_some()
            || self
                .checkpoints
                .iter()
                .any(|c| c.strict == Verdict::Fail || !c.regressions.is_empty())
        {
            RunOutcome::Fail
        } else if self.checkpoints.len() < self.declared
            || self.checkpoints.iter().any(|c| c.strict != Verdict::Pass)
        {
            RunOutcome::NotAssessed
        } else {
            RunOutcome::Pass
        }
    }

    /// The completion of the last checkpoint: its own tests (isolated), apart from
    /// regressions.
    pub fn completion(&self) -> Option<Verdict> {
        self.checkpoints.last().map(|c| c.isolated)
    }
}

/// The regressions at a checkpoint: tests of earlier checkpoints that passed at the
/// previous checkpoint and fail now.
pub fn regressions(previous: &[TestOutcome], now: &[TestOutcome], current: &str) -> Vec<String> {
    let before: BTreeMap<&str, TestState> =
        previous.iter().map(|t| (t.id.as_str(), t.state)).collect();
    now.iter()
        .filter(|t| t.from != current && t.state == TestState::Fail)
        .filter(|t| before.get(t.id.as_str()) == Some(&TestState::Pass))
        .map(|t| t.id.clone())
        .collect()
}

/// Where a checkpoint sits in its trajectory, so that trajectories of different lengths can
/// be compared.
#[derive(
    Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, PartialOrd, Ord,
)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The first checkpoint.
    Start,
    /// Between the first and the last, in the first third of the way.
    Early,
    /// In the second third.
    Mid,
    /// In the last third.
    Late,
    /// The last checkpoint.
    Final,
}

impl Phase {
    /// Every phase, in order.
    pub const ALL: [Phase; 5] = [
        Phase::Start,
        Phase::Early,
        Phase::Mid,
        Phase::Late,
        Phase::Final,
    ];

    /// The word for tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Start => "start",
            Phase::Early => "early",
            Phase::Mid => "mid",
            Phase::Late => "late",
            Phase::Final => "final",
        }
    }
}

/// The phase of checkpoint `index` (1-based) of `n`: the first is `start`, the last
/// `final` (a trajectory of one checkpoint is only `final`), and those between by their
/// position p = (index - 1) / (n - 1): `early` for p <= 1/3, `mid` for p <= 2/3, else
/// `late`. Five checkpoints give start, early, mid, late, final.
pub fn phase_of(index: usize, n: usize) -> Phase {
    if index >= n {
        return Phase::Final;
    }
    if index <= 1 {
        return Phase::Start;
    }
    // Compared in integers: 3 (index - 1) against (n - 1) and 2 (n - 1).
    let p3 = 3 * (index - 1);
    if p3 < n {
        Phase::Early
    } else if p3 <= 2 * (n - 1) {
        Phase::Mid
    } else {
        Phase::Late
    }
}

/// One phase over any number of trajectories.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct PhaseRow {
    /// The phase.
    pub phase: Phase,
    /// Checkpoints that fell in it.
    pub checkpoints: usize,
    /// Of those, strict PASS.
    pub strict_pass: usize,
    /// Of those, isolated PASS.
    pub isolated_pass: usize,
    /// Of those, not assessed (strict).
    pub not_assessed: usize,
    /// Regressions found in it.
    pub regressions: usize,
    /// Mean code mass.
    pub mean_code_mass: Option<f64>,
    /// Mean agent output bytes.
    pub mean_output_bytes: Option<f64>,
}

/// Folds checkpoints of any number of trajectories into the five phases.
pub fn phases(reports: &[TrajectoryReport]) -> Vec<PhaseRow> {
    Phase::ALL
        .iter()
        .map(|&phase| {
            let cs: Vec<&CheckpointReport> = reports
                .iter()
                .flat_map(|r| r.checkpoints.iter())
                .filter(|c| c.phase == phase)
                .collect();
            let mean = |f: &dyn Fn(&CheckpointReport) -> u64| {
                (!cs.is_empty())
                    .then(|| cs.iter().map(|c| f(c) as f64).sum::<f64>() / cs.len() as f64)
            };
            PhaseRow {
                phase,
                checkpoints: cs.len(),
                strict_pass: cs.iter().filter(|c| c.strict == Verdict::Pass).count(),
                isolated_pass: cs.iter().filter(|c| c.isolated == Verdict::Pass).count(),
                not_assessed: cs
                    .iter()
                    .filter(|c| c.strict == Verdict::NotAssessed)
                    .count(),
                regressions: cs.iter().map(|c| c.regressions.len()).sum(),
                mean_code_mass: mean(&|c| c.signals.code_mass),
                mean_output_bytes: mean(&|c| c.signals.output_bytes),
            }
        })
        .collect()
}

/// Words that open a branch or a loop, counted once each per line.
const BRANCH_WORDS: &[&str] = &[
    "if", "elif", "else", "for", "while", "match", "case", "try", "except", "catch", "and", "or",
    "switch", "loop",
];

/// The complexity-weighted code mass of one source file and its counted lines: every line
/// that is not blank and not only a comment (`#` or `//`) weighs
/// `1 + depth + branches`, where depth is its indentation in steps of four columns (a tab
/// is four) and branches counts the branch words on it ([`BRANCH_WORDS`], as whole words)
/// and the operators `&&`, `||` and `?`. A flat line weighs 1; the same line nested two
/// levels inside an `if` weighs 4. Growth of the mass faster than the spec grows is the
/// erosion signal: code getting deeper and more branched, not only longer.
pub fn code_mass(text: &str) -> (u64, u64) {
    let mut mass = 0u64;
    let mut lines = 0u64;
    for line in text.lines() {
        let body = line.trim();
        if body.is_empty() || body.starts_with('#') || body.starts_with("//") {
            continue;
        }
        let indent: u64 = line
            .chars()
            .take_while(|c| c.is_whitespace())
            .map(|c| if c == '\t' { 4 } else { 1 })
            .sum();
        let words = body
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| BRANCH_WORDS.contains(w))
            .count() as u64;
        let ops = (body.matches("&&").count()
            + body.matches("||").count()
            + body.matches('?').count()) as u64;
        mass += 1 + indent / 4 + words + ops;
        lines += 1;
    }
    (mass, lines)
}

/// File name endings counted as source by [`code_mass`] over a workspace.
pub const SOURCE_EXTENSIONS: &[&str] = &[
    "py", "rs", "js", "ts", "go", "c", "h", "cc", "cpp", "java", "rb", "kt", "swift", "sh",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_of_five_and_other_lengths() {
        let five: Vec<Phase> = (1..=5).map(|i| phase_of(i, 5)).collect();
        assert_eq!(five, Phase::ALL.to_vec());
        assert_eq!(phase_of(1, 1), Phase::Final);
        assert_eq!(phase_of(1, 2), Phase::Start);
        assert_eq!(phase_of(2, 2), Phase::Final);
        let ten: Vec<&str> = (1..=10).map(|i| phase_of(i, 10).as_str()).collect();
        assert_eq!(
            ten,
            [
                "start", "early", "early", "early", "mid", "mid", "mid", "late", "late", "final"
            ]
        );
    }

    #[test]
    fn verdicts_never_pass_what_did_not_run() {
        use TestState::*;
        assert_eq!(Verdict::of(&[Pass, Pass]), Verdict::Pass);
        assert_eq!(Verdict::of(&[Pass, NotAssessed]), Verdict::NotAssessed);
        assert_eq!(Verdict::of(&[NotAssessed, Fail]), Verdict::Fail);
        assert_eq!(Verdict::of(&[]), Verdict::NotAssessed);
    }

    #[test]
    fn code_mass_weights_nesting_and_branches() {
        assert_eq!(code_mass("x = 1\n\n# note\ny = 2\n"), (2, 2));
        let nested = "def f(a):\n    if a and b:\n        return 1\n";
        // 1 + (1 + 1 + 2) + (1 + 2)
        assert_eq!(code_mass(nested), (8, 3));
    }

    fn outcome(id: &str, from: &str, state: TestState) -> TestOutcome {
        TestOutcome {
            id: id.into(),
            from: from.into(),
            core: false,
            holdout: false,
            state,
            detail: None,
        }
    }

    #[test]
    fn a_regression_is_an_earlier_pass_that_fails_now() {
        use TestState::*;
        let prev = [outcome("a", "C1", Pass), outcome("b", "C2", Fail)];
        let now = [
            outcome("a", "C1", Fail),
            outcome("b", "C2", Fail),
            outcome("c", "C3", Fail),
        ];
        assert_eq!(regressions(&prev, &now, "C3"), ["a"]);
        let kept = [outcome("a", "C1", Pass), outcome("c", "C3", Fail)];
        assert!(regressions(&prev, &kept, "C3").is_empty());
    }
}
