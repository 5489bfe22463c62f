//! The grading seam: [`Grader`] turns a case and a trace into [`Verdict`]s.
//!
//! Graders are functions of (case, trace): a stored trace can be re-graded without calling
//! the target again. A `script:` check's program is started through [`ScriptHost`], the
//! seam a grader is lent by whoever may start processes.

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
    /// The suite's folder, where `script:` checks run; `None` for a suite that is no file.
    pub suite_dir: Option<&'a std::path::Path>,
}

/// Grades trials.
pub trait Grader: Send + Sync {
    /// All verdicts for one trial.
    fn grade<'a>(&'a self, ctx: GradeContext<'a>) -> BoxFuture<'a, Vec<Verdict>>;
}

/// One run of a `script:` check's program, as the grader asks for it: what to start, where,
/// with which variables, for how long, and the JSON document to write on its stdin.
#[derive(Debug, Clone, Copy)]
pub struct ScriptRun<'a> {
    /// The program and its arguments; a program with a `/` is relative to `dir`.
    pub argv: &'a [String],
    /// The suite's folder: the program's working directory, and where relative programs
    /// are found. `None` for a suite that is no file (the current directory).
    pub dir: Option<&'a std::path::Path>,
    /// Variables passed through by name, besides `PATH`; nothing else of the environment.
    pub env: &'a [String],
    /// The time limit in milliseconds.
    pub timeout_ms: u64,
    /// The document written on stdin.
    pub input: &'a [u8],
}

/// How a script's process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptEnd {
    /// It exited with this code.
    Exited(i32),
    /// A signal ended it (a crash, or killed from outside).
    Signalled,
    /// It ran past its time limit and was killed.
    TimedOut,
    /// It wrote more than the host keeps on stdout and was killed.
    TooLarge,
    /// It could not be started (no such program, no permission): the reason.
    NotStarted(String),
}

/// What a script's process did: how it ended, its stdout (whole, under the host's cap) and
/// the start of its stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptOutput {
    /// How it ended.
    pub end: ScriptEnd,
    /// Its stdout.
    pub stdout: Vec<u8>,
    /// The start of its stderr (the rest is read and dropped).
    pub stderr: String,
}

/// Runs the programs of `script:` checks. The grading crate decides what an answer means;
/// starting processes is the caller's (the runner's), behind this seam, so that graders stay
/// functions of (case, trace) and a grader without a host reports scripts as not assessed.
pub trait ScriptHost: Send + Sync {
    /// Runs one script to its end, its time limit or its output cap.
    fn run<'a>(&'a self, run: ScriptRun<'a>) -> BoxFuture<'a, ScriptOutput>;
}
