//! Coding tasks graded with targeted test context (`gauntlet impact task`): the file format
//! ([`TaskFile`]: a repository, an agent, tasks each with a prompt, the source files it
//! touches and its acceptance tests, in `given` or `hidden` [`TaskMode`]), the agent's
//! evidence ([`Evidence`]) and its check against what gauntlet observed ([`check_evidence`]),
//! the per-task record ([`TaskReport`]) and the fold of a run ([`TaskRunReport`]: completion
//! and regression rates kept apart). The file is read by [`file`]; [`run`] runs the agent and
//! the tests and folds their outcomes here.
//!
//! A task counts as done only when its acceptance tests pass *and* the agent gave evidence
//! that matches what gauntlet observed when it re-ran the tests itself. Regressions (tests
//! that passed before the task and fail after it) are counted apart: a task can be done and
//! regressing.

pub mod file;
pub mod run;

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::trajectory::{AgentEnd, TestState, Verdict};

/// Where the agent writes its evidence, relative to its workspace.
pub const EVIDENCE_FILE: &str = ".gauntlet/evidence.json";

/// Whether the agent is given the tests.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum TaskMode {
    /// Production regression control: the agent is told the affected tests and gets the
    /// acceptance tests in its workspace (re-copied from the pristine source for grading).
    #[default]
    Given,
    /// Benchmark: the agent sees neither; the acceptance tests are copied in only after it
    /// finished, for grading.
    Hidden,
}

impl TaskMode {
    /// The word for tables.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskMode::Given => "given",
            TaskMode::Hidden => "hidden",
        }
    }
}

/// A task file.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TaskFile {
    /// Name shown in reports.
    pub name: String,
    /// The repository (a folder next to this file), copied into a fresh workspace per task.
    pub repo: String,
    /// The coding agent as `exec:COMMAND` (relative paths against this file's folder);
    /// `--agent` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// `given` (default) or `hidden`; `--mode` overrides it.
    #[serde(default)]
    pub mode: TaskMode,
    /// Seconds the agent gets per task (default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_timeout_secs: Option<u64>,
    /// Seconds each test file gets (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_timeout_secs: Option<u64>,
    /// The tasks, in order.
    pub tasks: Vec<TaskDef>,
}

/// One task.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TaskDef {
    /// Unique id.
    pub id: String,
    /// What the agent is asked to do.
    pub prompt: String,
    /// The repository's source files the task targets (repository-relative): their
    /// affected tests come from the impact map.
    #[serde(default)]
    pub touches: Vec<String>,
    /// The task's own acceptance test files (relative to this file's folder, outside the
    /// repository), placed at the same relative path in the workspace.
    pub tests: Vec<String>,
}

/// What the agent claims it ran (`.gauntlet/evidence.json`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Evidence {
    /// One entry per test run.
    pub tests: Vec<Claim>,
}

/// One claimed test result.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Claim {
    /// The test id (`FILE::NAME`, as the impact map names tests).
    pub id: String,
    /// `passed`, or anything else for a test that did not pass (`failed`, `error`,
    /// `skipped`).
    pub outcome: String,
}

impl Claim {
    /// Whether it claims a pass.
    pub fn passed(&self) -> bool {
        self.outcome == "passed"
    }
}

/// How the evidence compared with what gauntlet observed.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum EvidenceCheck {
    /// Every required test is claimed, and every claim gauntlet could check matches.
    Matches,
    /// No evidence file, or one that could not be read as evidence.
    Missing {
        /// Why.
        reason: String,
    },
    /// Required tests were not claimed.
    Incomplete {
        /// The required tests the evidence does not name.
        missing: Vec<String>,
    },
    /// A claim contradicts what gauntlet observed.
    False {
        /// The contradicted claims.
        contradicted: Vec<Contradiction>,
    },
}

impl EvidenceCheck {
    /// The words for tables.
    pub fn describe(&self) -> String {
        match self {
            EvidenceCheck::Matches => "matches".into(),
            EvidenceCheck::Missing { .. } => "missing".into(),
            EvidenceCheck::Incomplete { missing } => format!("incomplete ({})", missing.len()),
            EvidenceCheck::False { contradicted } => format!("FALSE ({})", contradicted.len()),
        }
    }
}

/// A claim that gauntlet's own run contradicts.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Contradiction {
    /// The test.
    pub id: String,
    /// What the agent claimed.
    pub claimed: String,
    /// What gauntlet observed.
    pub observed: TestState,
}

/// Checks `evidence` (None: no file; Err: unreadable) against the tests gauntlet observed.
/// False beats incomplete: a contradicted claim is reported even when others are missing.
/// A claim on a test gauntlet did not run is returned apart (unverified), never trusted.
/// A test gauntlet could not assess is not a contradiction either way.
pub fn check_evidence(
    evidence: Option<Result<&Evidence, String>>,
    required: &BTreeSet<String>,
    observed: &BTreeMap<String, TestState>,
) -> (EvidenceCheck, Vec<String>) {
    let ev = match evidence {
        None => {
            return (
                EvidenceCheck::Missing {
                    reason: format!("the agent wrote no {EVIDENCE_FILE}"),
                },
                Vec::new(),
            );
        }
        Some(Err(reason)) => return (EvidenceCheck::Missing { reason }, Vec::new()),
        Some(Ok(ev)) => ev,
    };
    let mut contradicted = Vec::new();
    let mut unverified = Vec::new();
    let mut claimed = BTreeSet::new();
    for c in &ev.tests {
        claimed.insert(c.id.as_str());
        match observed.get(&c.id) {
            None => unverified.push(c.id.clone()),
            Some(TestState::NotAssessed) => {}
            Some(&o) => {
                if c.passed() != (o == TestState::Pass) {
                    contradicted.push(Contradiction {
                        id: c.id.clone(),
                        claimed: c.outcome.clone(),
                        observed: o,
                    });
                }
            }
        }
    }
    unverified.sort();
    unverified.dedup();
    if !contradicted.is_empty() {
        return (EvidenceCheck::False { contradicted }, unverified);
    }
    let missing: Vec<String> = required
        .iter()
        .filter(|r| !claimed.contains(r.as_str()))
        .cloned()
        .collect();
    if !missing.is_empty() {
        return (EvidenceCheck::Incomplete { missing }, unverified);
    }
    (EvidenceCheck::Matches, unverified)
}

/// One test's outcome as gauntlet observed it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct ObservedTest {
    /// `FILE::NAME`, or the file alone when it could not be run at all.
    pub id: String,
    /// What it gave.
    pub state: TestState,
    /// Why it failed or could not run (clipped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl ObservedTest {
    /// Every test a run was to give results for, with one outcome: what a run that gave none
    /// (it could not start, ran out of time, did not compile) says of each. `known` are the
    /// tests' ids; none known, the run is named by `fallback` (the file, or `cargo test`).
    pub(crate) fn every(
        known: &[String],
        fallback: &str,
        state: TestState,
        detail: String,
    ) -> Vec<ObservedTest> {
        let ids = if known.is_empty() {
            vec![fallback.to_owned()]
        } else {
            known.to_vec()
        };
        ids.into_iter()
            .map(|id| ObservedTest {
                id,
                state,
                detail: Some(detail.clone()),
            })
            .collect()
    }

    /// The `known` tests a run's results do not name (`seen`): a test that went away fails.
    pub(crate) fn not_found<'a>(
        known: &'a [String],
        seen: &'a BTreeSet<String>,
    ) -> impl Iterator<Item = ObservedTest> + 'a {
        known
            .iter()
            .filter(|k| !seen.contains(*k))
            .map(|k| ObservedTest {
                id: k.clone(),
                state: TestState::Fail,
                detail: Some("the test was not found any more".into()),
            })
    }
}

/// Whether a task counts as done.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Completion {
    /// Acceptance tests pass and the evidence matches.
    Done,
    /// Acceptance failed, or the evidence is missing, incomplete or false.
    NotDone,
    /// Nothing says not done, but the acceptance tests could not all run.
    NotAssessed,
}

impl Completion {
    /// The word for tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Completion::Done => "DONE",
            Completion::NotDone => "NOT_DONE",
            Completion::NotAssessed => "NOT_ASSESSED",
        }
    }
}

/// Folds a task's acceptance verdict and evidence check into its completion, with the
/// reasons it is not done (in the order a reader needs them).
pub fn completion(acceptance: Verdict, evidence: &EvidenceCheck) -> (Completion, Vec<String>) {
    let mut reasons = Vec::new();
    match evidence {
        EvidenceCheck::False { .. } => reasons.push("false evidence".to_owned()),
        EvidenceCheck::Missing { .. } => reasons.push("no evidence".to_owned()),
        EvidenceCheck::Incomplete { .. } => reasons.push("incomplete evidence".to_owned()),
        EvidenceCheck::Matches => {}
    }
    match acceptance {
        Verdict::Fail => reasons.push("acceptance tests failed".to_owned()),
        Verdict::NotAssessed => reasons.push("acceptance tests not assessed".to_owned()),
        Verdict::Pass => {}
    }
    let c = if reasons.is_empty() {
        Completion::Done
    } else if acceptance == Verdict::NotAssessed && matches!(evidence, EvidenceCheck::Matches) {
        Completion::NotAssessed
    } else {
        Completion::NotDone
    };
    (c, reasons)
}

/// A test that passed before the task and does not pass after it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Regression {
    /// The test.
    pub id: String,
    /// Whether the impact map named it as affected by the task's `touches` (false: the map
    /// did not predict it).
    pub affected: bool,
    /// Its failure (clipped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The regressions of a task: tests passing in `before` that fail in `after` (a test that
/// could not run after is listed apart by the caller, never as a pass).
pub fn regressions(
    before: &BTreeMap<String, TestState>,
    after: &[ObservedTest],
    affected: &BTreeSet<String>,
) -> Vec<Regression> {
    after
        .iter()
        .filter(|t| t.state == TestState::Fail && before.get(&t.id) == Some(&TestState::Pass))
        .map(|t| Regression {
            id: t.id.clone(),
            affected: affected.contains(&t.id),
            detail: t.detail.clone(),
        })
        .collect()
}

/// One task's record.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct TaskReport {
    /// The task's id.
    pub id: String,
    /// How the agent ended.
    pub agent: AgentEnd,
    /// The affected tests of `touches` (from the impact map).
    pub affected: Vec<String>,
    /// Touched files no test covers (their change is assessed by no existing test).
    pub uncovered: Vec<String>,
    /// The acceptance tests, as gauntlet ran them on pristine copies.
    pub acceptance_tests: Vec<ObservedTest>,
    /// Their verdict.
    pub acceptance: Verdict,
    /// The evidence check.
    pub evidence: EvidenceCheck,
    /// Claimed tests gauntlet did not run (not trusted, not counted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unverified_claims: Vec<String>,
    /// Done or not.
    pub completion: Completion,
    /// Why not done.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// Previously passing tests that broke.
    pub regressions: Vec<Regression>,
    /// Previously passing tests that could not run after the task.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_assessed: Vec<String>,
    /// Test files the agent edited in its workspace: ignored for grading (pristine copies
    /// were used), reported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edited_tests: Vec<String>,
    /// Wall time of the agent, milliseconds.
    pub agent_ms: u64,
    /// Model calls of the built-in coding loop (absent for an exec agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_calls: Option<u32>,
    /// Tokens of those calls, summed (absent for an exec agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<gauntlet_core::trace::Usage>,
    /// Their cost from the price table; absent when unknown (an exec agent, a model
    /// without a price): never 0 for unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The trace of the built-in coding loop's calls, a file in the task's folder under
    /// `--out` (`N-ID/trace.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

/// A count out of a total.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Rate {
    /// How many.
    pub count: usize,
    /// Out of.
    pub total: usize,
}

impl Rate {
    /// `count/total (pp%)`, `-` for a total of 0.
    pub fn describe(self) -> String {
        if self.total == 0 {
            return format!("{}/0 (-)", self.count);
        }
        format!(
            "{}/{} ({:.0}%)",
            self.count,
            self.total,
            100.0 * self.count as f64 / self.total as f64
        )
    }
}

/// A whole `impact task` run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct TaskRunReport {
    /// The file's name.
    pub name: String,
    /// The file, as given.
    pub file: String,
    /// The mode it ran in.
    pub mode: TaskMode,
    /// The agent, as given.
    pub agent: String,
    /// Tasks the file declares.
    pub declared: usize,
    /// Repository tests that passed before any task (the regression baseline).
    pub baseline_passing: usize,
    /// Files the impact map could not analyse (`path: reason`): affected tests through
    /// them may be missing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_analysed: Vec<String>,
    /// The tasks that ran.
    pub tasks: Vec<TaskReport>,
    /// Set when a write to the tests, graders or the pristine repository was seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrity: Option<TaskBreach>,
}

/// A write to the tests, graders or the pristine repository, seen around one task.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct TaskBreach {
    /// The task during which it happened (its agent or its code under test).
    pub task: String,
    /// The files written, added or removed (relative to the task file's folder), first
    /// ones only.
    pub changed: Vec<String>,
}

/// The run's outcome, for the exit code.
pub use crate::trajectory::RunOutcome;

impl TaskRunReport {
    /// Tasks done, out of the tasks declared (a task not run is not done).
    pub fn completion_rate(&self) -> Rate {
        Rate {
            count: self
                .tasks
                .iter()
                .filter(|t| t.completion == Completion::Done)
                .count(),
            total: self.declared,
        }
    }

    /// Tasks that broke a previously passing test, out of the tasks that ran.
    pub fn regression_rate(&self) -> Rate {
        Rate {
            count: self
                .tasks
                .iter()
                .filter(|t| !t.regressions.is_empty())
                .count(),
            total: self.tasks.len(),
        }
    }

    /// Fail on an integrity breach, a task not done or a regression; not assessed when a
    /// task was not run or not assessed, or a baseline test could not run after one.
    pub fn outcome(&self) -> RunOutcome {
        if self.integrity.is_some()
            || self
                .tasks
                .iter()
                .any(|t| t.completion == Completion::NotDone || !t.regressions.is_empty())
        {
            RunOutcome::Fail
        } else if self.tasks.len() < self.declared
            || self
                .tasks
                .iter()
                .any(|t| t.completion == Completion::NotAssessed || !t.not_assessed.is_empty())
        {
            RunOutcome::NotAssessed
        } else {
            RunOutcome::Pass
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> BTreeSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn observed(v: &[(&str, TestState)]) -> BTreeMap<String, TestState> {
        v.iter().map(|(k, s)| (k.to_string(), *s)).collect()
    }

    fn ev(v: &[(&str, &str)]) -> Evidence {
        Evidence {
            tests: v
                .iter()
                .map(|(id, o)| Claim {
                    id: id.to_string(),
                    outcome: o.to_string(),
                })
                .collect(),
        }
    }

    #[test]
    fn evidence_must_exist_cover_the_required_tests_and_match() {
        use TestState::*;
        let req = ids(&["a", "b"]);
        let obs = observed(&[("a", Pass), ("b", Fail), ("c", NotAssessed)]);
        let (c, _) = check_evidence(None, &req, &obs);
        assert!(matches!(c, EvidenceCheck::Missing { .. }));
        let (c, _) = check_evidence(Some(Err("bad json".into())), &req, &obs);
        assert!(matches!(c, EvidenceCheck::Missing { .. }));
        let honest = ev(&[("a", "passed"), ("b", "failed"), ("c", "passed")]);
        assert_eq!(
            check_evidence(Some(Ok(&honest)), &req, &obs),
            (EvidenceCheck::Matches, vec![])
        );
        let partial = ev(&[("a", "passed"), ("zzz", "passed")]);
        let (c, unverified) = check_evidence(Some(Ok(&partial)), &req, &obs);
        assert_eq!(
            c,
            EvidenceCheck::Incomplete {
                missing: vec!["b".into()]
            }
        );
        assert_eq!(unverified, ["zzz"]);
        let lying = ev(&[("a", "passed"), ("b", "passed")]);
        let (c, _) = check_evidence(Some(Ok(&lying)), &req, &obs);
        assert_eq!(
            c,
            EvidenceCheck::False {
                contradicted: vec![Contradiction {
                    id: "b".into(),
                    claimed: "passed".into(),
                    observed: Fail
                }]
            }
        );
    }

    #[test]
    fn done_needs_both_acceptance_and_matching_evidence() {
        let m = EvidenceCheck::Matches;
        assert_eq!(completion(Verdict::Pass, &m).0, Completion::Done);
        assert_eq!(completion(Verdict::Fail, &m).0, Completion::NotDone);
        assert_eq!(
            completion(Verdict::NotAssessed, &m).0,
            Completion::NotAssessed
        );
        let missing = EvidenceCheck::Missing { reason: "x".into() };
        let (c, why) = completion(Verdict::Pass, &missing);
        assert_eq!((c, why), (Completion::NotDone, vec!["no evidence".into()]));
        let (c, _) = completion(Verdict::NotAssessed, &missing);
        assert_eq!(c, Completion::NotDone);
    }

    #[test]
    fn a_regression_is_a_baseline_pass_that_fails_after() {
        use TestState::*;
        let before = observed(&[("a", Pass), ("b", Fail), ("c", Pass)]);
        let after = vec![
            ObservedTest {
                id: "a".into(),
                state: Fail,
                detail: None,
            },
            ObservedTest {
                id: "b".into(),
                state: Fail,
                detail: None,
            },
            ObservedTest {
                id: "c".into(),
                state: NotAssessed,
                detail: None,
            },
        ];
        let r = regressions(&before, &after, &ids(&["x"]));
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].id.as_str(), r[0].affected), ("a", false));
    }

    #[test]
    fn rates_are_counted_apart() {
        let r = Rate { count: 1, total: 4 };
        assert_eq!(r.describe(), "1/4 (25%)");
        assert_eq!(Rate { count: 0, total: 0 }.describe(), "0/0 (-)");
    }
}
