//! The grading seam: [`Grader`] turns a case and a trace into [`Verdict`]s.
//!
//! Graders are functions of (case, trace): a stored trace can be re-graded without calling
//! the target again. A `script:` check's program is started through [`ScriptHost`], the
//! seam a grader is lent by whoever may start processes; a `similar:` check's embeddings come
//! through [`Embedder`], the seam a grader is lent by whoever may call a model.

use crate::expect::Oracle;
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

    /// The most model-judge calls one grading of one exchange of `case` makes: what a tree of
    /// attacks' call budget must still hold before it sends a prompt, so that a limit of N
    /// calls allows N and never more. By default one per judge entry of the case; a grader
    /// that knows its judges says when one asks more than once (a pairwise judge asks in
    /// both orders) or not at all (no model to ask).
    fn judge_calls_per_exchange(&self, case: &Case) -> u32 {
        case.expect
            .iter()
            .filter(|e| matches!(e.oracle, Oracle::Judge(_)))
            .count() as u32
    }
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

/// Turns texts into embedding vectors for `similar:` checks: an OpenAI-compatible embeddings
/// endpoint behind this seam, lent to the grader by whoever may call a model, so that the
/// grading crate stays free of HTTP and a grader without one reports `similar:` as not
/// assessed.
pub trait Embedder: Send + Sync {
    /// Where the vectors come from and which model makes them (`openai
    /// http://127.0.0.1:8080/v1 text-embedding-3-small`): what a cached vector is bound to.
    /// Never a secret.
    fn identity(&self) -> String;

    /// One vector per text, in order. Infrastructure failures are retried inside; an `Err`
    /// is what is left after the retries.
    fn embed<'a>(&'a self, texts: &'a [String])
    -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>>;
}

/// Why an embeddings endpoint gave no vectors: a `similar:` check is then not assessed,
/// never a pass.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmbedError {
    /// No answer arrived: the connection failed, or the endpoint failed after the retries.
    #[error("the embeddings endpoint could not be reached: {0}")]
    Transport(String),
    /// No answer within the time limit.
    #[error("the embeddings endpoint did not answer in time: {0}")]
    Timeout(String),
    /// The endpoint answered with an error status.
    #[error("the embeddings endpoint refused the request: {0}")]
    Refused(String),
    /// The endpoint answered, but not with embeddings (bad JSON, missing vectors, a vector
    /// count or length that does not fit).
    #[error("the embeddings endpoint's answer is not embeddings: {0}")]
    Protocol(String),
}

impl EmbedError {
    /// The class of the failure, as verdicts and reports name it: `transport`, `timeout`,
    /// `refused`, `protocol`.
    pub fn class(&self) -> &'static str {
        match self {
            EmbedError::Transport(_) => "transport",
            EmbedError::Timeout(_) => "timeout",
            EmbedError::Refused(_) => "refused",
            EmbedError::Protocol(_) => "protocol",
        }
    }
}
