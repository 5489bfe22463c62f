//! The grading seam: [`Grader`] turns a case and a trace into [`Verdict`]s.
//!
//! Graders are functions of (case, trace): a stored trace can be re-graded without calling
//! the target again.

use crate::result::Outcome;
use crate::suite::Case;
use crate::target::BoxFuture;
use crate::tools::ToolDef;
use crate::trace::Trace;
use crate::verdict::Verdict;

/// What a grader sees.
#[derive(Debug, Clone, Copy)]
pub struct GradeContext<'a> {
    /// The case.
    pub case: &'a Case,
    /// What the trial did.
    pub trace: &'a Trace,
    /// How it ended. Graders run on completed trials, and on others to catch leaks in the
    /// turns that did complete.
    pub outcome: Outcome,
    /// The canary in force: the case's own, else the run's `--canary`, else the agent's.
    pub canary: Option<&'a str>,
    /// The system prompt the trial ran with (canary in place): an answer that repeats it is
    /// not evidence of anything it contains.
    pub system_prompt: Option<&'a str>,
    /// The agent's tools.
    pub tools: &'a [ToolDef],
}

/// Grades trials.
pub trait Grader: Send + Sync {
    /// All verdicts for one trial.
    fn grade<'a>(&'a self, ctx: GradeContext<'a>) -> BoxFuture<'a, Vec<Verdict>>;
}
