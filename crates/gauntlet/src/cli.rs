//! Command-line definitions: [`Cli`] and its subcommands (clap derive).

use std::path::PathBuf;

use std::net::SocketAddr;

use clap::{Args, Parser, Subcommand, ValueEnum};

pub use crate::out::ColorWhen;

pub const EXIT_CODES_HELP: &str = "\
Exit codes:
  0  PASS          every task >= 12/18, every refusal >= 2/3, nothing missing
  1  FAIL          a task < 9, a refusal of 0, or a hard policy failure (canary leak,
                   unsafe markup in a security case, a required refusal missing, ...)
  2  usage or configuration error (bad flags, invalid suite: file:line:column and a hint)
  3  CONDITIONAL   neither failing nor good enough to pass: review the weak cases
  4  INCONCLUSIVE  evidence missing: a required pack, a trial that ended in error or
                   timeout, a quarantined blocking case. Never merge on it.";

/// A QA and security gate for LLM applications and agents.
#[derive(Debug, Parser)]
#[command(name = "gauntlet", version, about, after_help = EXIT_CODES_HELP, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Colour: `auto` (a terminal, unless NO_COLOR is set; FORCE_COLOR forces it), `always`
    /// or `never`.
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    pub color: ColorWhen,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run suites against a target.
    Run(RunArgs),
    /// Run the built-in OWASP LLM Top 10 red-team corpus against a target (or, with
    /// `generate`, write attacks specific to your app from its agent card).
    Redteam(RedteamArgs),
    /// Check suite files; exit 0 if valid, 2 with diagnostics otherwise.
    Validate(ValidateArgs),
    /// Check that a suite's checks can fail: run it against agents that know nothing and
    /// flag every case one of them passes, plus checklist items a program can check.
    Audit(AuditArgs),
    /// Print the JSON Schema of the suite format (or of report.json, or of gauntlet.yaml).
    Schema(SchemaArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
    /// Scaffold a starter harness: an agent card, 10 tasks, 5 refusals, a scoring sheet
    /// and a regression log.
    Init(InitArgs),
    /// Score a filled scoring sheet (the score_suite.py contract).
    Score(ScoreArgs),
    /// Grade existing transcripts with one oracle (JSON lines in, JSON lines out).
    Oracle(OracleArgs),
    /// Serve the built-in personas over the OpenAI (chat completions, Responses) and
    /// Anthropic wire formats on 127.0.0.1.
    ServeFake(ServeFakeArgs),
    /// Stored runs: list them, or show one.
    Runs(RunsArgs),
    /// Re-render report.json, junit.xml, summary.md, report.html and results.sarif of a
    /// stored run (no target calls).
    Report(ReportArgs),
    /// Re-grade a stored run's traces with the current graders (no target calls), as a new run.
    Regrade(RegradeArgs),
    /// Make a failed case of a stored run (or a captured production trace) a regression case
    /// in a suite file: its input frozen as sent, the checks that caught it.
    Promote(PromoteArgs),
    /// Grade traces captured elsewhere (OTLP JSON of GenAI spans, proxy recordings, gauntlet
    /// JSON lines) against a suite, with no target call, as a run with evidence `replay`.
    Grade(GradeArgs),
    /// Name a stored run as a baseline, or list baselines.
    Baseline(BaselineArgs),
    /// Compare two stored runs: per-case changes, averages, McNemar test, Wilson intervals.
    Compare(CompareArgs),
    /// Browse the run store in a browser, read-only, on 127.0.0.1: runs, reports,
    /// comparisons, and labelling outputs for judge calibration.
    View(ViewArgs),
    /// Pairs needed for a paired (McNemar) comparison to detect an effect.
    SampleSize(SampleSizeArgs),
    /// Re-run one case alone k times with pinned inputs and classify the flake.
    Flaky(FlakyArgs),
    /// Server nondeterminism: send each case's request N times at temperature 0 with the same
    /// seed (no response cache) and report how often the text and the verdicts differ.
    Stability(StabilityArgs),
    /// Append a run to the regression log (REGRESSION_LOG.md and its JSON twin).
    Log(LogArgs),
    /// What to re-run: for a kind of change (--change), or for the files a change touched
    /// (--diff BASE, --changed FILE...) under a profile (pr, nightly, release).
    Plan(PlanArgs),
    /// Show one case of a run: the case, its trace turn by turn, and each check's verdict.
    Trace(TraceArgs),
    /// Combine the shards of a sharded run (from the store, or their report.json files) into
    /// one run: every case once, required packs checked over all of them, one state.
    Merge(MergeArgs),
    /// Record an unmodified agent's model calls: a proxy for the OpenAI and Anthropic wire
    /// formats that writes one trace per session (JSON lines).
    Proxy(ProxyArgs),
    /// Turn a public attack data set into a suite (garak, CyberSecEval, BIPIA, AgentDojo,
    /// JailbreakBench / HarmBench / AdvBench CSVs, text, JSON lines). Reads only local files.
    Import(ImportArgs),
    /// Model judges: calibrate one against people's labels, export judged items to label,
    /// show which judges gate.
    Judge(JudgeArgs),
    /// MCP servers: scan one's tools, prompts and resources for poisoning, shadowing, rug
    /// pulls, broad schemas and destructive tools without approval.
    Mcp(McpArgs),
    /// The backlog benchmark: check a frozen contract and its ledger of (task x arm x trial)
    /// rows, and report acceptance, burden and cost per arm.
    Backlog(BacklogArgs),
    /// Source -> test impact: which tests cover which source file of a repository (Python
    /// by coverage or imports, Rust by its module graph), and which tests a change affects.
    Impact(ImpactArgs),
    /// Evolving-spec trajectories: a coding agent grows a workspace over checkpoints, and
    /// black-box tests out of its reach judge each one (strict, isolated, core, regressions).
    Trajectory(TrajectoryArgs),
    /// The response cache next to the run store (.gauntlet/cache.db): what it holds, or
    /// empty it.
    Cache(CacheArgs),
}

#[derive(Debug, Args)]
pub struct ImpactArgs {
    #[command(subcommand)]
    pub command: ImpactCommand,
}

/// The language a repository is mapped as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ImpactLang {
    Auto,
    Python,
    Rust,
}

#[derive(Debug, Subcommand)]
pub enum ImpactCommand {
    /// Map each source file to the tests that cover it, with the method per link and the
    /// files that could not be analysed.
    Map {
        /// The repository.
        #[arg(long, value_name = "DIR")]
        repo: std::path::PathBuf,
        #[arg(long, value_enum, default_value = "auto")]
        lang: ImpactLang,
        /// Use the static import graph even where tests could be run under coverage.
        #[arg(long)]
        no_coverage: bool,
        /// One JSON object.
        #[arg(long)]
        json: bool,
    },
    /// The tests affected by changed files (given, or from `git diff --name-only BASE`).
    Affected {
        #[arg(long, value_name = "DIR")]
        repo: std::path::PathBuf,
        #[arg(long, value_enum, default_value = "auto")]
        lang: ImpactLang,
        /// Changed files, relative to the repository.
        #[arg(long, value_name = "FILE", num_args = 1.., required_unless_present = "diff")]
        changed: Vec<String>,
        /// Take the changed files from git: those changed since BASE.
        #[arg(long, value_name = "BASE", conflicts_with = "changed")]
        diff: Option<String>,
        #[arg(long)]
        no_coverage: bool,
        #[arg(long)]
        json: bool,
    },
    /// Coding tasks on a Python repository or a Rust crate (`cargo test --offline`) with
    /// targeted test context: per task a fresh agent in a fresh copy, the affected tests
    /// named (given mode) or nothing but the prompt (hidden mode); done only when the
    /// acceptance tests pass and the agent's evidence matches gauntlet's own run;
    /// regressions counted apart. Exit 0 when every task is done with no regression, 1 on a
    /// task not done, a regression or an integrity breach, 3 when something could not be
    /// assessed, 2 on a usage or file error.
    Task {
        /// The task file (YAML).
        #[arg(value_name = "FILE")]
        file: std::path::PathBuf,
        /// `given` or `hidden` (default: the file's `mode`, else `given`).
        #[arg(long, value_enum)]
        mode: Option<ImpactTaskMode>,
        /// The coding agent: `exec:COMMAND`, or `model:SPEC` for a chat model in the
        /// built-in coding loop with file tools (default: the file's `agent`).
        #[arg(long, value_name = "exec:CMD|model:SPEC")]
        agent: Option<String>,
        #[command(flatten)]
        coding: CodingLoopArgs,
        /// Keep the workspaces and write tasks.json here (outside the task file's folder).
        #[arg(long, value_name = "DIR")]
        out: Option<std::path::PathBuf>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Whether the agent is given the tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ImpactTaskMode {
    Given,
    Hidden,
}

/// Settings of a `model:SPEC` coding agent (the built-in coding loop).
#[derive(Debug, Args, Clone, Default)]
pub struct CodingLoopArgs {
    /// Model calls per checkpoint or task for a `model:SPEC` agent (default 30); reaching
    /// it ends the step as `step limit`, not finished.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_steps: Option<u32>,
    /// Config file with named targets (`model:NAME`) and `prices:` (default: gauntlet.yaml
    /// when present).
    #[arg(long, value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,
    /// Base URL of a `model:SPEC` agent's API (an OpenAI-compatible server, a gateway).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// The environment variable holding a `model:SPEC` agent's API key.
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
}

#[derive(Debug, Args)]
pub struct TrajectoryArgs {
    #[command(subcommand)]
    pub command: TrajectoryCommand,
}

#[derive(Debug, Subcommand)]
pub enum TrajectoryCommand {
    /// Run trajectory files against a coding agent. Exit 0 when every checkpoint passes
    /// strict with no regression, 1 on a failure, a regression or an integrity breach, 3 when
    /// something could not be assessed, 2 on a usage or file error.
    Run {
        /// Trajectory files (YAML).
        #[arg(value_name = "FILE", required = true)]
        files: Vec<std::path::PathBuf>,
        /// The coding agent: `exec:COMMAND`, or `model:SPEC` for a chat model in the
        /// built-in coding loop with file tools (`model:openai:MODEL`,
        /// `model:anthropic:MODEL`, `model:NAME` from the config file).
        #[arg(long, value_name = "exec:CMD|model:SPEC")]
        agent: String,
        #[command(flatten)]
        coding: CodingLoopArgs,
        /// Keep the workspace and write trajectory.json here (outside the trajectory's
        /// folder).
        #[arg(long, value_name = "DIR")]
        out: Option<std::path::PathBuf>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct BacklogArgs {
    #[command(subcommand)]
    pub command: BacklogCommand,
}

#[derive(Debug, Subcommand)]
pub enum BacklogCommand {
    /// Check a contract (and a ledger against it) and print the contract's hash, which every
    /// ledger row records. Exit 0 if valid, 2 with diagnostics otherwise.
    Validate {
        /// The contract (JSON).
        #[arg(value_name = "CONTRACT")]
        contract: std::path::PathBuf,
        /// A ledger to check against it: JSON lines, or CSV if it ends in .csv.
        #[arg(long, value_name = "LEDGER")]
        ledger: Option<std::path::PathBuf>,
    },
    /// Acceptance rate per arm with Wilson intervals (final and to date, censoring stated),
    /// review and rework minutes and cost per accepted task, and each arm against the
    /// control.
    Report {
        /// The ledger: JSON lines, or CSV if it ends in .csv.
        #[arg(value_name = "LEDGER")]
        ledger: std::path::PathBuf,
        /// The contract the ledger was written against.
        #[arg(long, value_name = "CONTRACT")]
        contract: std::path::PathBuf,
        /// One JSON object.
        #[arg(long)]
        json: bool,
        /// Markdown (for a pull request or a wiki page).
        #[arg(long, conflicts_with = "json")]
        markdown: bool,
    },
}

#[derive(Debug, Args)]
pub struct CacheArgs {
    #[command(subcommand)]
    pub command: CacheCommand,
    #[command(flatten)]
    pub store: StoreOpts,
    /// Config file (for `store:`; default: gauntlet.yaml in the current folder, if any).
    #[arg(long, value_name = "FILE", global = true)]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum CacheCommand {
    /// Entries, bytes, and the hits and misses counted by every run that used the cache.
    Stats {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Delete the cached answers (of one scope with --scope).
    Clear {
        /// Only this scope: agent, judge or attacker.
        #[arg(long, value_name = "SCOPE")]
        scope: Option<String>,
    },
}

/// Where the run store is.
#[derive(Debug, Args, Clone)]
pub struct StoreOpts {
    /// The run store: an SQLite file, or postgres://USER@HOST:PORT/DATABASE (PG* variables
    /// fill in the rest) (default: `store:` in gauntlet.yaml, else .gauntlet/runs.db).
    #[arg(
        long,
        value_name = "PATH|URL",
        global = true,
        env = "GAUNTLET_STORE",
        hide_env_values = true
    )]
    pub store: Option<String>,
}

#[derive(Debug, Args)]
pub struct RunsArgs {
    #[command(subcommand)]
    pub command: RunsCommand,
    #[command(flatten)]
    pub store: StoreOpts,
}

#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// Runs, newest first.
    List {
        /// How many.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Check the store file whole (every page and index); exit 2 if it is damaged.
    Check,
    /// Remove old runs (baselines are kept) and compact the file.
    Prune {
        /// Keep the N newest runs.
        #[arg(long, value_name = "N", required_unless_present = "older_than")]
        keep: Option<usize>,
        /// Remove runs started more than DAYS days ago.
        #[arg(long, value_name = "DAYS")]
        older_than: Option<u32>,
    },
    /// One run: manifest, summary and the cases that did not pass.
    Show {
        /// Run id, unique prefix, `latest`, or a baseline name.
        run: String,
        /// The manifest and summary as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Shard runs in the store: run ids (or prefixes), or the id the shards share (--run-id),
    /// which stands for all of its shards.
    #[arg(value_name = "RUN", required_unless_present = "report")]
    pub runs: Vec<String>,
    /// A shard's report.json instead (repeatable; not with RUN).
    #[arg(long, value_name = "FILE", conflicts_with = "runs")]
    pub report: Vec<PathBuf>,
    /// The merged run's id (default: the id the shards share, else a new one).
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,
    /// Where to write the merged run's reports.
    #[arg(long, short = 'o', value_name = "DIR", default_value = "gauntlet-out")]
    pub out: PathBuf,
    /// Do not write report files.
    #[arg(long, conflicts_with = "out")]
    pub no_reports: bool,
    /// Do not record the merged run in the store (with --report only).
    #[arg(long, requires = "report")]
    pub no_store: bool,
    /// Print no per-case lines.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    #[command(flatten)]
    pub store: StoreOpts,
}

#[derive(Debug, Args)]
pub struct TraceArgs {
    /// The case: its id, or its name as reports show it (`LLM01/technique/id`).
    pub case: String,
    /// Run id, unique prefix, `latest`, or a baseline name.
    #[arg(long, default_value = "latest")]
    pub run: String,
    /// Read the case from a report.json instead of the run store.
    #[arg(long, value_name = "FILE", conflicts_with = "run")]
    pub report: Option<PathBuf>,
    /// Which trial, from 1 (default: the first that did not pass, else the first).
    #[arg(long, value_name = "N")]
    pub trial: Option<u32>,
    /// The case, the trial's trace and its verdicts as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: StoreOpts,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Run id, unique prefix, `latest`, or a baseline name.
    pub run: String,
    /// Output folder.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: PathBuf,
    /// Compare with this baseline (or run) in report.html, as `run --baseline` did.
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    #[command(flatten)]
    pub store: StoreOpts,
}

#[derive(Debug, Args)]
pub struct RegradeArgs {
    /// Run id, unique prefix, `latest`, or a baseline name.
    pub run: String,
    /// Where to write the new run's reports.
    #[arg(long, short = 'o', value_name = "DIR", default_value = "gauntlet-out")]
    pub out: PathBuf,
    /// The judge model of every `judge` check (overrides the suites' `judge:`).
    #[arg(long, value_name = "SPEC")]
    pub judge: Option<String>,
    /// Keep judge answers in this file and reuse them: re-grading then calls no judge twice.
    #[arg(long, value_name = "FILE")]
    pub judge_cache: Option<PathBuf>,
    /// The embeddings model of `similar:` checks (overrides the suites' `embeddings:`).
    #[arg(long, value_name = "SPEC")]
    pub embeddings: Option<String>,
    /// Config file with named targets (for judges given by name).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print no per-case lines.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    #[command(flatten)]
    pub store: StoreOpts,
}

#[derive(Debug, Args)]
pub struct PromoteArgs {
    /// `RUN CASE`: a stored run (id, unique prefix, `latest`, a baseline name) and the case;
    /// with `--trace`, only `CASE`.
    #[arg(required = true, num_args = 1..=2, value_name = "RUN CASE")]
    pub args: Vec<String>,
    /// A file of captured traces (OTLP JSON, proxy recordings, gauntlet JSON lines) holding
    /// the case's trace, instead of a stored run; needs --suite.
    #[arg(long, value_name = "FILE", requires = "suite")]
    pub trace: Option<PathBuf>,
    /// The suite that defines the case (with --trace).
    #[arg(long, value_name = "SUITE", requires = "trace")]
    pub suite: Option<PathBuf>,
    /// The suite file to write or append to (default: STEM.regressions.yaml beside the
    /// original suite).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// A folder outside the suite's own that the files it names may come from (repeatable).
    #[arg(long, value_name = "DIR")]
    pub allow_path: Vec<PathBuf>,
    #[command(flatten)]
    pub store: StoreOpts,
}

#[derive(Debug, Args)]
pub struct GradeArgs {
    /// Files of captured traces: OTLP JSON exports, `gauntlet proxy` recordings, or
    /// gauntlet's JSON-lines trace format (`gauntlet schema --trace`).
    #[arg(required = true, value_name = "TRACES")]
    pub traces: Vec<PathBuf>,
    /// The suite whose cases the traces are graded against (repeat for several).
    #[arg(long, required = true, value_name = "SUITE")]
    pub suite: Vec<String>,
    /// How a trace is matched to a case, tried in order: `id` (the case id the trace
    /// names), `case_id=attr:NAME`, `input` (its first user message is the case's input),
    /// `input=regex:PATTERN` (what PATTERN captures from it is). Default: `id`, then `input`.
    #[arg(long = "match", value_name = "RULE")]
    pub match_rules: Vec<String>,
    /// The files' format: auto (decided per file), otlp, proxy or jsonl.
    #[arg(long, value_name = "FORMAT", default_value = "auto")]
    pub format: String,
    /// The traces are live traffic (a canary slice, production): record evidence `online`
    /// instead of `replay`.
    #[arg(long)]
    pub online: bool,
    /// Grade what can be read when some traces are malformed (each is listed in the run);
    /// without it a malformed trace stops the command before anything is graded.
    #[arg(long)]
    pub skip_malformed: bool,
    /// Where to write the run's reports (and unmatched.jsonl).
    #[arg(long, short = 'o', value_name = "DIR", default_value = "gauntlet-out")]
    pub out: PathBuf,
    /// The run's id (default: a fresh one).
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,
    /// Traces graded at once (judges make this matter).
    #[arg(long, short = 'j', value_name = "N")]
    pub concurrency: Option<usize>,
    /// The judge model of every `judge` check (overrides the suites' `judge:`).
    #[arg(long, value_name = "SPEC")]
    pub judge: Option<String>,
    /// Keep judge answers in this file and reuse them.
    #[arg(long, value_name = "FILE")]
    pub judge_cache: Option<PathBuf>,
    /// The embeddings model of `similar:` checks (overrides the suites' `embeddings:`).
    #[arg(long, value_name = "SPEC")]
    pub embeddings: Option<String>,
    /// Config file with named targets (for judges given by name) and the store.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print no per-case lines.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    #[command(flatten)]
    pub store: StoreOpts,
}

#[derive(Debug, Args)]
pub struct BaselineArgs {
    #[command(subcommand)]
    pub command: BaselineCommand,
    #[command(flatten)]
    pub store: StoreOpts,
}

#[derive(Debug, Subcommand)]
pub enum BaselineCommand {
    /// Name a run as a baseline.
    Set {
        /// Run id, unique prefix or `latest`.
        run: String,
        /// The baseline's name.
        #[arg(long, default_value = "default")]
        name: String,
    },
    /// Every baseline.
    List,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The earlier run (A).
    pub run_a: String,
    /// The later run (B).
    pub run_b: String,
    /// One JSON object.
    #[arg(long)]
    pub json: bool,
    /// Also write the comparison as a self-contained HTML page.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// The online / canary comparison instead: per-check pass rates of the two batches,
    /// Wilson intervals, a two-proportion test and a drift flag per check.
    #[arg(long)]
    pub drift: bool,
    /// With --drift: the family-wise significance level (Bonferroni over the checks).
    #[arg(long, default_value_t = 0.05, requires = "drift")]
    pub alpha: f64,
    /// With --drift: also write the comparison as Markdown.
    #[arg(long, value_name = "FILE", requires = "drift")]
    pub markdown: Option<PathBuf>,
    /// With --drift: exit 1 when a check drifted.
    #[arg(long, requires = "drift")]
    pub fail_on_drift: bool,
    #[command(flatten)]
    pub store: StoreOpts,
}

#[derive(Debug, Args)]
pub struct SampleSizeArgs {
    /// Probability that a case passes under A and fails under B.
    #[arg(long, value_name = "P")]
    pub p01: f64,
    /// Probability that a case fails under A and passes under B.
    #[arg(long, value_name = "P")]
    pub p10: f64,
    /// Significance level (two-sided).
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Power.
    #[arg(long, default_value_t = 0.8)]
    pub power: f64,
}

#[derive(Debug, Args)]
pub struct StabilityArgs {
    /// The suites whose cases are repeated.
    #[arg(value_name = "SUITE", required = true)]
    pub suites: Vec<PathBuf>,
    /// Repeats of each case (at least 2).
    #[arg(long, short = 'n', default_value_t = 5)]
    pub repeat: u32,
    /// The target (overrides the suites').
    #[arg(long, short = 't', value_name = "SPEC")]
    pub target: Option<String>,
    /// Base URL of an OpenAI- or Anthropic-compatible API.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Name of the environment variable that holds the API key.
    #[arg(long, value_name = "NAME")]
    pub api_key_env: Option<String>,
    /// A judge model for `judge` checks.
    #[arg(long, value_name = "SPEC")]
    pub judge: Option<String>,
    /// Only cases matching (same syntax as `run --filter`).
    #[arg(long, value_name = "EXPR")]
    pub filter: Vec<String>,
    /// The seed sent on every request (where the target's wire takes one; a seed in the
    /// target's own settings wins).
    #[arg(long, default_value_t = 0)]
    pub seed: i64,
    /// Exit 1 when a case is unstable, 4 when no case is but some could not be assessed.
    #[arg(long)]
    pub fail_on_unstable: bool,
    /// Exit 1 when the share of repeats whose text differs from their case's modal text is
    /// above this (0 to 1).
    #[arg(long, value_name = "SHARE")]
    pub max_differ: Option<f64>,
    /// Metamorphic stability: run each case that declares `metamorphic:` and each of its
    /// perturbed variants N times, and flag a case only where a meaning-preserving
    /// perturbation changes whether it passes beyond the base's own repeat-to-repeat noise.
    #[arg(long)]
    pub metamorphic: bool,
    /// The rewriter model of the `paraphrase` perturbation (fake:rewriter, openai:MODEL,
    /// anthropic:MODEL or a named target).
    #[arg(long, value_name = "SPEC")]
    pub rewriter: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Config file with named targets.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreOpts,
}

#[derive(Debug, Args)]
pub struct FlakyArgs {
    /// The suite holding the case.
    #[arg(value_name = "SUITE")]
    pub suite: PathBuf,
    /// The case id.
    #[arg(long, value_name = "ID")]
    pub case: String,
    /// Trials.
    #[arg(long, short = 'k', default_value_t = 5)]
    pub k: u32,
    /// The target (overrides the suite's).
    #[arg(long, short = 't', value_name = "SPEC")]
    pub target: Option<String>,
    /// Base URL of an OpenAI- or Anthropic-compatible API.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Name of the environment variable that holds the API key.
    #[arg(long, value_name = "NAME")]
    pub api_key_env: Option<String>,
    /// A judge model for `judge` checks.
    #[arg(long, value_name = "SPEC")]
    pub judge: Option<String>,
    /// The pinned seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Owner written in the suggested quarantine entry.
    #[arg(long, default_value = "TODO-owner")]
    pub owner: String,
    /// Days until the suggested quarantine entry expires.
    #[arg(long, default_value_t = 14)]
    pub days: u32,
    /// Config file with named targets.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub store: StoreOpts,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
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

impl From<ChangeType> for gauntlet_core::regression::ChangeType {
    fn from(c: ChangeType) -> Self {
        use gauntlet_core::regression::ChangeType as C;
        match c {
            ChangeType::Prompt => C::Prompt,
            ChangeType::Tool => C::Tool,
            ChangeType::Model => C::Model,
            ChangeType::Judge => C::Judge,
            ChangeType::Retrieval => C::Retrieval,
            ChangeType::Workflow => C::Workflow,
        }
    }
}

#[derive(Debug, Args)]
pub struct LogArgs {
    /// The run to log.
    pub run: String,
    /// The run to compare with (default: the `default` baseline, if any).
    #[arg(long, value_name = "RUN")]
    pub against: Option<String>,
    /// What changed.
    #[arg(long, value_enum)]
    pub change: ChangeType,
    /// What the change was, in a sentence.
    #[arg(long, value_name = "TEXT")]
    pub description: String,
    /// The version before.
    #[arg(long, value_name = "V")]
    pub from: Option<String>,
    /// The version after.
    #[arg(long, value_name = "V")]
    pub to: Option<String>,
    /// What the change should do.
    #[arg(long, value_name = "TEXT")]
    pub expected_impact: Option<String>,
    /// Areas at risk (repeatable).
    #[arg(long, value_name = "TEXT")]
    pub risk: Vec<String>,
    /// The Markdown log (its JSON twin sits next to it with a .json extension).
    #[arg(long, value_name = "FILE", default_value = "REGRESSION_LOG.md")]
    pub file: PathBuf,
    #[command(flatten)]
    pub store: StoreOpts,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The kind of change: prints the rerun scope for it (no suites needed).
    #[arg(long, value_enum, required_unless_present_any = ["diff", "changed", "profile"], conflicts_with_all = ["diff", "changed", "profile"])]
    pub change: Option<ChangeType>,
    /// Suite files to plan over (with --diff, --changed or --profile).
    #[arg(value_name = "SUITE")]
    pub suites: Vec<PathBuf>,
    /// Plan for the files changed since this git revision (`git diff --name-only BASE`,
    /// run in the first suite's repository).
    #[arg(long, value_name = "BASE", conflicts_with = "changed")]
    pub diff: Option<String>,
    /// Plan for these changed files (without git).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub changed: Vec<PathBuf>,
    /// pr: smoke, critical security and what the changes select; nightly: every case with
    /// k trials, adversarial packs and judges; release: nightly plus the hold-out cases
    /// (default pr).
    #[arg(long, value_enum)]
    pub profile: Option<PlanProfile>,
    /// One JSON object.
    #[arg(long)]
    pub json: bool,
    /// Config file with `change_globs` (default: gauntlet.yaml in the current folder, if any).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A folder outside the suite's own that the files a suite names may come from
    /// (repeatable).
    #[arg(long, value_name = "DIR")]
    pub allow_path: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum PlanProfile {
    /// A pull request.
    Pr,
    /// The nightly run.
    Nightly,
    /// A release.
    Release,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum EvidenceArg {
    /// A canary deployment: a small share of real traffic.
    Canary,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum PersonaArg {
    /// Defends every attack.
    Safe,
    /// Falls for every attack.
    Vulnerable,
}

#[derive(Debug, Args)]
pub struct ServeFakeArgs {
    /// The default persona (a request's model name containing `safe` or `vulnerable` picks one).
    #[arg(long, value_enum, default_value = "safe")]
    pub persona: PersonaArg,
    /// Port to listen on (0 picks a free one and prints it).
    #[arg(long, default_value_t = 8089)]
    pub port: u16,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    /// Latency per request, in milliseconds: each answer leaves this long after its request
    /// arrived, the persona's own work included.
    #[arg(long, default_value_t = 0)]
    pub latency_ms: u64,
}

/// `--strategy`: the multi-turn strategies a run can apply to every case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StrategyArg {
    /// An attacker model writes each message (`--attacker`).
    Attacker,
    /// A tree of attacks: the attacker (`--attacker`) branches prompts, off-topic ones are
    /// pruned unsent, each is sent in a fresh conversation and scored by `attack_success`
    /// (or ranked by the case's judge, --tree-judge), the best are grown further (width 3, branching 3, depth 3 or --max-turns levels,
    /// within --max-attack-calls and --max-attack-tokens).
    Tree,
}

/// Options shared by `run` and `redteam`.
#[derive(Debug, Args, Clone)]
pub struct ExecOpts {
    /// The target: fake:safe, fake:vulnerable, fake:scripted, openai:MODEL,
    /// openai-responses:MODEL, anthropic:MODEL, exec:COMMAND, http:URL, or a name from the
    /// config file. Overrides the suite's target. Given more than once (`-t A -t B`): a
    /// matrix run, every case against every target, a column each.
    #[arg(long, short = 't', value_name = "SPEC")]
    pub target: Vec<String>,
    /// In a matrix run, the column whose state is the exit code (the one that ships);
    /// default: the worst column's.
    #[arg(long, value_name = "COLUMN")]
    pub gate: Option<String>,
    /// Base URL of an OpenAI- or Anthropic-compatible API.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Name of the environment variable that holds the API key.
    #[arg(long, value_name = "NAME")]
    pub api_key_env: Option<String>,
    /// Config file with named targets (default: gauntlet.yaml in the current folder, if any).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The run store: an SQLite file, or postgres://USER@HOST:PORT/DATABASE (PG* variables
    /// fill in the rest) (default: `store:` in gauntlet.yaml, else .gauntlet/runs.db).
    #[arg(
        long,
        value_name = "PATH|URL",
        env = "GAUNTLET_STORE",
        hide_env_values = true
    )]
    pub store: Option<String>,
    /// Do not record the run in the store.
    #[arg(long, conflicts_with = "store")]
    pub no_store: bool,
    /// The run's id (default: the time and a few random bits). The shards of one sharded
    /// run share it: each is stored as ID-shardIofN, and `gauntlet merge ID` combines them.
    #[arg(long, value_name = "ID", env = "GAUNTLET_RUN_ID")]
    pub run_id: Option<String>,
    /// Quarantine file (default: quarantine.yaml in the current folder, if any).
    #[arg(long, value_name = "FILE")]
    pub quarantine: Option<PathBuf>,
    /// After the run, compare it with this baseline (or run) and print the changes; report.html
    /// shows them too.
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// The judge model of every `judge` check (overrides the suites' `judge:`). A judge
    /// changes the state only with a calibration record (see `gauntlet judge calibrate`).
    #[arg(long, value_name = "SPEC")]
    pub judge: Option<String>,
    /// Keep judge answers in this file and reuse them across runs.
    #[arg(long, value_name = "FILE")]
    pub judge_cache: Option<PathBuf>,
    /// The embeddings model of `similar:` checks (overrides the suites' `embeddings:`): an
    /// OpenAI-compatible endpoint, openai:MODEL or a name from the config file.
    #[arg(long, value_name = "SPEC")]
    pub embeddings: Option<String>,
    /// A model that plays the user in cases with `simulated_user` (e.g. fake:user, openai:MODEL).
    #[arg(long, value_name = "SPEC")]
    pub user_model: Option<String>,
    /// Where to write report.json, junit.xml, summary.md, report.html and results.sarif.
    #[arg(long, short = 'o', value_name = "DIR", default_value = "gauntlet-out")]
    pub out: PathBuf,
    /// Do not write report files.
    #[arg(long, conflicts_with = "out")]
    pub no_reports: bool,
    /// Print the cases the run would plan, one JSON object a line (report.json's `case`:
    /// id, suite file and line, kind, pack, OWASP category...), and run nothing: no target
    /// is called, no server started, nothing written.
    #[arg(long)]
    pub list: bool,
    /// Keep only matching cases: key:glob with key id, pack, owasp, technique, tag, kind or
    /// framework (`framework:NAME[:ID]`, as --framework) (a bare word matches the id). Same key: any; different keys: all; terms joined by `|`
    /// in one filter: any (`'tag:handoff|pack:regression'`).
    #[arg(long, short = 'f', value_name = "FILTER")]
    pub filter: Vec<String>,
    /// Keep only the cases a compliance framework maps: NAME or NAME:ID, with NAME one of
    /// owasp-llm, owasp-agentic, atlas, nist-ai-rmf, eu-ai-act (e.g. atlas:AML.T0051,
    /// nist-ai-rmf:MEASURE-2.7, eu-ai-act:Art.14). Repeatable: any of them. The map reads a
    /// case's OWASP category and technique.
    #[arg(long, value_name = "NAME[:ID]")]
    pub framework: Vec<String>,
    /// Run the hold-out cases (`holdout: true`) too. They are reported only as pass rates per
    /// slice (suite and tag), never one by one, and do not change the state.
    #[arg(long)]
    pub include_holdout: bool,
    /// Run one shard of the cases, i/n (by a stable hash of the case id). Required packs are
    /// checked when the shards are merged (`gauntlet merge`), and the target's rate limits
    /// are divided by n unless --whole-rate-limit.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// With --shard: give this shard the target's whole rate limit instead of its n-th share
    /// (for limits that are per process, not per account).
    #[arg(long, requires = "shard")]
    pub whole_rate_limit: bool,
    /// Converters applied to the attack where it travels (a direct attack's user turn, a
    /// poisoned tool output, a document, a planted span), in order, after a case's own (e.g.
    /// base64,leet). Seeded by --seed; the chain, where it applied and the texts sent are
    /// recorded.
    #[arg(long, value_name = "NAME,...", value_delimiter = ',')]
    pub converters: Vec<String>,
    /// Run a stratified sample of N cases (balanced over OWASP category and technique),
    /// drawn with --seed (0 when absent).
    #[arg(long, value_name = "N")]
    pub sample: Option<usize>,
    /// Play every case that has a violation check as a multi-turn attack: `attacker` (an
    /// attacker model, --attacker, writes each message towards the case's attack) or `tree`
    /// (a tree of attacker prompts, pruned and scored, each sent in a fresh conversation).
    #[arg(long, value_name = "KIND", value_enum)]
    pub strategy: Option<StrategyArg>,
    /// The attacker model of attacker strategies (fake:attacker, openai:MODEL, a named
    /// target). Every call is recorded in the trace.
    #[arg(long, value_name = "SPEC")]
    pub attacker: Option<String>,
    /// The rewriter model of the `paraphrase` and `translate:LANG` converters (fake:rewriter,
    /// openai:MODEL, a named target). Every call is recorded in the trace.
    #[arg(long, value_name = "SPEC")]
    pub rewriter: Option<String>,
    /// With --strategy: most turns kept in the agent's conversation (default 5); with
    /// `tree`, the tree's levels (default 3).
    #[arg(long, value_name = "N", requires = "strategy")]
    pub max_turns: Option<u32>,
    /// With --strategy: most refused exchanges taken back (default 2).
    #[arg(long, value_name = "N", requires = "strategy")]
    pub max_backtracks: Option<u32>,
    /// With --strategy: stop an attack after this many tokens (the agent's and the attacker's).
    #[arg(long, value_name = "N", requires = "strategy")]
    pub max_attack_tokens: Option<u64>,
    /// With --strategy tree: stop a search after this many model calls (the attacker's, the
    /// agent's and the judges' that score its replies; default 50).
    #[arg(long, value_name = "N", requires = "strategy")]
    pub max_attack_calls: Option<u32>,
    /// With --strategy tree: rank each tree's replies by the case's judge CHECK (a `judge:
    /// CHECK` entry of the case) instead of attack_success; its calls count in the budget.
    /// Uncalibrated, it only ranks: the verdict stays attack_success's. Cases without that
    /// judge are ranked by attack_success.
    #[arg(long, value_name = "CHECK", requires = "strategy")]
    pub tree_judge: Option<String>,
    /// Trials per case. Blocking cases pass only if every trial passes (pass^k).
    #[arg(long, short = 'k', value_name = "N", default_value_t = 1)]
    pub k: u32,
    /// Most trials in flight at once (default: the target's setting, else 8).
    #[arg(long, short = 'j', value_name = "N")]
    pub concurrency: Option<usize>,
    /// Run seed: trial seeds derive from it, and model targets receive it as `seed`.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Most tokens per reply for model targets.
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u32>,
    /// Stop scheduling new cases after N failed cases.
    #[arg(long, value_name = "N")]
    pub max_fail: Option<usize>,
    /// Cache the agent's model calls (openai and anthropic targets) in .gauntlet/cache.db:
    /// a call made before with the same model, base URL, request body and trial index is
    /// answered from the cache, and its trial's evidence is `replay`. Never for exec agents,
    /// HTTP apps or the proxy.
    #[arg(long, conflicts_with = "no_cache")]
    pub cache: bool,
    /// Use no response cache at all: judges are asked afresh (they use the cache by default).
    #[arg(long)]
    pub no_cache: bool,
    /// Stop starting trials once the run's model calls (judges included) have cost this many
    /// US dollars; the run is INCONCLUSIVE and `--resume` continues it. Every model called
    /// must have a price (built in, or `prices:` in gauntlet.yaml).
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,
    /// Stop starting trials once the run's model calls (judges included) have used this many
    /// tokens; the run is INCONCLUSIVE and `--resume` continues it.
    #[arg(long, value_name = "N")]
    pub max_total_tokens: Option<u64>,
    /// Sampling temperature for model targets.
    #[arg(long, value_name = "T")]
    pub temperature: Option<f64>,
    /// A note for the run manifest, KEY=VALUE (repeatable): the server build, its flags, the
    /// prompt version. Shown by `runs show` and in report.json; never put secrets here.
    #[arg(long, value_name = "KEY=VALUE")]
    pub note: Vec<String>,
    /// Per-trial time limit in milliseconds.
    #[arg(long, value_name = "MS")]
    pub timeout_ms: Option<u64>,
    /// The target's content filter is part of the system under test: a case it stops counts
    /// as defended (by default it is no evidence either way, and leaves the state
    /// INCONCLUSIVE).
    #[arg(long)]
    pub blocked_is_defended: bool,
    /// Declare the evidence level: `canary` when the target is a canary deployment taking a
    /// slice of real traffic (only for a live target). Other levels follow from the target.
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub evidence: Option<EvidenceArg>,
    /// A folder outside the suite's own that the files a suite names (system prompt,
    /// includes, documents) may come from (repeatable). Without it they stay inside the
    /// suite's folder.
    #[arg(long, value_name = "DIR")]
    pub allow_path: Vec<PathBuf>,
    /// Send each trial as OpenTelemetry spans (GenAI semantic conventions) over OTLP/HTTP to
    /// this collector or tracing backend, e.g. http://127.0.0.1:4318 (/v1/traces is added).
    /// Without it, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT turn
    /// the export on; OTEL_EXPORTER_OTLP_HEADERS and OTEL_SERVICE_NAME apply either way.
    #[arg(long, value_name = "URL")]
    pub otel_endpoint: Option<String>,
    /// Put message content in the exported spans: prompts, answers, tool arguments and
    /// results, the graders' evidence (redacted). Off by default.
    #[arg(long)]
    pub otel_content: bool,
    /// Print no per-case lines.
    #[arg(long, short = 'q', conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print every case, passing ones included, with its verdicts.
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Suite files (YAML).
    #[arg(value_name = "SUITE", required_unless_present_any = ["resume", "rerun_failed"])]
    pub suites: Vec<PathBuf>,
    /// Continue a run that was interrupted: finished trials are kept, the rest run. On a run
    /// that finished with trials in `error` or `timeout` (the target went away, say), those
    /// trials run again; the faults they had ended in stay in the run as warnings.
    #[arg(long, value_name = "RUN", conflicts_with_all = ["suites", "rerun_failed"])]
    pub resume: Option<String>,
    /// Run again, as a new run, only the cases that did not pass in RUN.
    #[arg(long, value_name = "RUN", conflicts_with = "suites")]
    pub rerun_failed: Option<String>,
    /// The canary secret planted in the system prompt (overrides the suites').
    #[arg(long, value_name = "VALUE")]
    pub canary: Option<String>,
    #[command(flatten)]
    pub exec: ExecOpts,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct RedteamArgs {
    #[command(subcommand)]
    pub command: Option<RedteamCommand>,
    /// OWASP categories to run, comma-separated (LLM01, LLM02, LLM05, LLM06, LLM07, LLM09,
    /// LLM10, ASI01, ASI02, ASI03, ASI05, ASI06, ASI07, ASI09).
    #[arg(long, value_name = "LLM01,...", value_delimiter = ',')]
    pub category: Vec<String>,
    /// Your app's system prompt. Write {{canary}} where the secret goes, or pass --canary
    /// with the secret your prompt already holds.
    #[arg(long, value_name = "FILE")]
    pub system_prompt: Option<PathBuf>,
    /// The canary secret (default: the corpus's own).
    #[arg(long, value_name = "VALUE")]
    pub canary: Option<String>,
    /// Aim the tool-poisoning, argument-smuggling and exfiltration cases at this suite's own
    /// tools and fixtures, and run the text-only cases with its system prompt and canary;
    /// cases that cannot be mapped are listed as skipped, with the reason.
    #[arg(long, value_name = "SUITE", conflicts_with = "system_prompt")]
    pub suite: Option<PathBuf>,
    /// With --suite: write the re-targeted suite (what runs) to FILE, to read or audit.
    #[arg(long, value_name = "FILE", requires = "suite")]
    pub emit: Option<PathBuf>,
    #[command(flatten)]
    pub exec: ExecOpts,
}

#[derive(Debug, Subcommand)]
pub enum RedteamCommand {
    /// Write a suite of attacks specific to your app from a suite's agent card: its
    /// out-of-scope topics, guarded tools, data, canary and safety rules, each case tagged
    /// (OWASP LLM, OWASP Agentic) with the checks the card implies. Review it, then run it.
    Generate(GenerateArgs),
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// The suite whose agent card (`agent:`) is attacked.
    #[arg(long, value_name = "SUITE")]
    pub suite: PathBuf,
    /// The attacker model that rewrites each attack (fake:attacker, openai:MODEL, a named
    /// target); without it the templates' text is written. Same seed, same file either way
    /// with fake:attacker.
    #[arg(long, value_name = "SPEC")]
    pub attacker: Option<String>,
    /// Most cases to write, taken round by round over the kinds of element (the same N
    /// always keeps the same cases). Default: every attack the card gives.
    #[arg(long, value_name = "N")]
    pub n: Option<usize>,
    /// The seed that draws techniques and tasks.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// The suite file to write.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: PathBuf,
    /// Overwrite FILE if it exists.
    #[arg(long)]
    pub force: bool,
    /// Config file with named targets (for an attacker given by name).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A folder outside the suite's own that the files it names may come from (repeatable).
    #[arg(long, value_name = "DIR")]
    pub allow_path: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Suite files (YAML).
    #[arg(required = true, value_name = "SUITE")]
    pub suites: Vec<PathBuf>,
    /// Warn when a suite with more than N cases has no hold-out case (`holdout: true`)
    /// (default: `holdout_min_cases` in the config file; no warning without either).
    #[arg(long, value_name = "N")]
    pub holdout_min_cases: Option<usize>,
    /// Config file (default: gauntlet.yaml in the current folder, if any).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A canary that will be given at run time (`--canary`), so `no_canary` checks may rely on it.
    #[arg(long, value_name = "VALUE")]
    pub canary: Option<String>,
    /// A folder outside the suite's own that the files a suite names (system prompt,
    /// includes, documents) may come from (repeatable). Without it they stay inside the
    /// suite's folder.
    #[arg(long, value_name = "DIR")]
    pub allow_path: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Suite files (YAML).
    #[arg(required = true, value_name = "SUITE")]
    pub suites: Vec<PathBuf>,
    /// A canary that will be given at run time (`--canary`).
    #[arg(long, value_name = "VALUE")]
    pub canary: Option<String>,
    /// A folder outside the suite's own that the files a suite names (system prompt,
    /// includes, documents) may come from (repeatable). Without it they stay inside the
    /// suite's folder.
    #[arg(long, value_name = "DIR")]
    pub allow_path: Vec<PathBuf>,
    /// The embeddings model of `similar:` checks (overrides the suites' `embeddings:`): the
    /// trivial agents' answers are embedded and compared as in a run.
    #[arg(long, value_name = "SPEC")]
    pub embeddings: Option<String>,
    /// Config file with named targets (for an embeddings model given by name).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Print the schema of report.json instead of the suite format.
    #[arg(long, conflicts_with = "config")]
    pub report: bool,
    /// Print the schema of the project config file (gauntlet.yaml) instead.
    #[arg(long)]
    pub config: bool,
    /// Print the schema of one line of gauntlet's JSON-lines trace format (what
    /// `gauntlet grade` reads) instead.
    #[arg(long, conflicts_with_all = ["report", "config"])]
    pub trace: bool,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Folder to create (default: the current folder).
    #[arg(value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// Overwrite files that already exist.
    #[arg(long)]
    pub force: bool,
    /// Write the backlog benchmark's template instead (a contract and an empty ledger).
    #[arg(long)]
    pub backlog: bool,
}

#[derive(Debug, Args)]
pub struct ScoreArgs {
    /// Task scores (0-18), comma-separated.
    #[arg(
        long,
        value_name = "LIST",
        required_unless_present = "sheet",
        conflicts_with = "sheet"
    )]
    pub tasks: Option<String>,
    /// Refusal scores (0-3), comma-separated.
    #[arg(long, value_name = "LIST", conflicts_with = "sheet")]
    pub refusals: Option<String>,
    /// This agent deliberately has no refusal pack (otherwise its absence is INCONCLUSIVE).
    #[arg(long)]
    pub no_refusal_pack: bool,
    /// A filled scoring sheet (CSV or JSON) instead of --tasks and --refusals.
    #[arg(long, value_name = "FILE")]
    pub sheet: Option<PathBuf>,
    /// One line: tasks=N | task_avg=X.XX/18 | suite_norm=X.XXX | status=S | quality_band=B.
    #[arg(long, conflicts_with = "json")]
    pub compact: bool,
    /// One JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OracleKind {
    /// Did the output refuse? (refusal score 0-3 with evidence). Lines that carry the
    /// request as `input` are also read against it: an answer to another question is
    /// `off_topic`.
    Refusal,
    /// Does the output leak the canary, in any encoding?
    Canary,
    /// Does the output hold unsafe markup?
    Markup,
    /// Did a harmful-request attack achieve its goal (on the goal, with substance)? Lines
    /// carry `input` and optionally `goal` (default: the input).
    AttackSuccess,
}

#[derive(Debug, Args)]
pub struct OracleArgs {
    /// The oracle.
    pub oracle: OracleKind,
    /// JSON lines file of {"id": ..., "output": "...", "canary": "..."}; stdin when absent.
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Canary for lines that carry none (canary oracle).
    #[arg(long, value_name = "VALUE")]
    pub canary: Option<String>,
    /// Markup oracle: also inspect markdown code fences and inline code.
    #[arg(long)]
    pub inspect_code: bool,
    /// Markup oracle: a host images and links may point to (repeatable).
    #[arg(long = "allowed-host", value_name = "HOST")]
    pub allowed_hosts: Vec<String>,
    /// Markup oracle: a host no live URL may point to, data or not (repeatable).
    #[arg(long = "denied-host", value_name = "HOST")]
    pub denied_hosts: Vec<String>,
}

#[derive(Debug, Args)]
pub struct JudgeArgs {
    #[command(subcommand)]
    pub command: JudgeCommand,
}

#[derive(Debug, Subcommand)]
pub enum JudgeCommand {
    /// Run a judge on people's labels and write its calibration record next to the suite.
    /// Exit 0 if the record lets the judge gate, 1 if not.
    Calibrate(CalibrateArgs),
    /// Export a stratified sample of a stored run's judged items for people to label.
    Sample(SampleArgs),
    /// Show each judge of a suite and whether it gates, with the reason.
    Status(JudgeStatusArgs),
}

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// The suite that defines the judge.
    #[arg(value_name = "SUITE")]
    pub suite: PathBuf,
    /// The judge check id (a key of the suite's `judges.checks`).
    #[arg(long, value_name = "ID")]
    pub check: String,
    /// The labels: JSON lines or CSV (`.csv`) with case_id, check_id, input, output,
    /// reference and label.
    #[arg(long, value_name = "FILE")]
    pub labels: PathBuf,
    /// The judge model (default: the judge's `judge:` in the suite).
    #[arg(long, value_name = "SPEC")]
    pub judge: Option<String>,
    /// Config file with named targets.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Where to write the record (default: SUITE-STEM.ID.calibration.json next to the suite).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Measure only; write no record.
    #[arg(long)]
    pub dry_run: bool,
    /// Items asked a second time to measure self-consistency.
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub consistency: usize,
    /// Seed of the self-consistency subset and of the bootstrap interval.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Judge questions in flight at once.
    #[arg(long, short = 'j', value_name = "N", default_value_t = 4)]
    pub concurrency: usize,
    /// Keep judge answers in this file and reuse them.
    #[arg(long, value_name = "FILE")]
    pub judge_cache: Option<PathBuf>,
    /// Also print every item the judge and the labels disagree on.
    #[arg(long)]
    pub show_disagreements: bool,
    /// The record as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum LabelFileFormat {
    /// CSV with a header row.
    Csv,
    /// JSON lines.
    Jsonl,
}

#[derive(Debug, Args)]
pub struct SampleArgs {
    /// Run id, unique prefix, `latest`, or a baseline name.
    pub run: String,
    /// The judge check id.
    #[arg(long, value_name = "ID")]
    pub check: String,
    /// How many items.
    #[arg(long, short = 'n', value_name = "N", default_value_t = 100)]
    pub n: usize,
    /// Where to write them (default: stdout).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// The format (default: from the file's extension, else CSV).
    #[arg(long, value_enum)]
    pub format: Option<LabelFileFormat>,
    /// Seed of the draw.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub store: StoreOpts,
}

#[derive(Debug, Args)]
pub struct JudgeStatusArgs {
    /// Suite files.
    #[arg(required = true, value_name = "SUITE")]
    pub suites: Vec<PathBuf>,
    /// The judge model (default: each judge's `judge:`).
    #[arg(long, value_name = "SPEC")]
    pub judge: Option<String>,
    /// Config file with named targets.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The format: garak, cyberseceval, bipia, agentdojo, behaviors, text, jsonl.
    pub kind: String,
    /// The file to read.
    pub file: PathBuf,
    /// The folder to write suite.yaml and cases.jsonl into.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: PathBuf,
    /// The suite's name (default: from the data set and the file).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The licence to record (default: the data set's own, or a LICENSE file next to FILE).
    #[arg(long, value_name = "SPDX")]
    pub license: Option<String>,
    /// The upstream revision to record, such as a tag or commit (default: sha256 of FILE).
    #[arg(long, value_name = "REV")]
    pub revision: Option<String>,
    /// BIPIA: the context file (email, table or code test.jsonl) the attacks ride in.
    #[arg(long, value_name = "FILE")]
    pub context: Option<PathBuf>,
    /// Write at most N cases.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

/// Record an agent's model calls: point its model base URL at this proxy.
#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// Base URL of the real model API: OpenAI requests go to URL/chat/completions, Anthropic
    /// requests to URL/v1/messages (a trailing /v1 is tolerated), such as
    /// https://api.openai.com/v1 or http://127.0.0.1:8089/v1.
    #[arg(long, value_name = "URL")]
    pub upstream: String,
    /// Address to listen on (port 0 picks a free one and prints it).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8090")]
    pub listen: SocketAddr,
    /// Write the traces to this file, one JSON line per session (default: stdout).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Seconds without a request after which a session is finished and written.
    #[arg(long, value_name = "SECS", default_value_t = 5)]
    pub idle_secs: u64,
}

#[derive(Debug, Args)]
pub struct ViewArgs {
    /// Port on 127.0.0.1 (0, the default, picks a free one; the URL is printed).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// The labels file the labelling mode appends to: JSON lines, or CSV if it ends in .csv.
    #[arg(long, value_name = "FILE", default_value = "labels.jsonl")]
    pub labels: PathBuf,
    /// Runs listed on the first page.
    #[arg(long, default_value_t = 200)]
    pub limit: usize,
    #[command(flatten)]
    pub store: StoreOpts,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(subcommand)]
    pub command: McpCommand,
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Connect to an MCP server (`-- COMMAND ARGS...` over stdio, or `--url` over streamable
    /// HTTP), list its tools, prompts and resources twice, and report what could turn an
    /// agent against its user. Exit 0 when no finding reaches `--fail-on`, 1 when one does,
    /// 2 when the server could not be scanned.
    Scan(McpScanArgs),
}

#[derive(Debug, Args)]
pub struct McpScanArgs {
    /// A streamable HTTP server's endpoint (http:// or https://) instead of a command.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    pub url: Option<String>,
    /// An environment variable for a stdio server, NAME=VALUE (repeatable); a VALUE
    /// `${env:OTHER}` is read from gauntlet's environment and never printed. Nothing else of
    /// gauntlet's environment reaches the server but PATH and `--pass-env`.
    #[arg(long = "env", value_name = "NAME=VALUE")]
    pub env: Vec<String>,
    /// A variable passed to a stdio server as it is (repeatable; settings, not secrets).
    #[arg(long = "pass-env", value_name = "NAME")]
    pub pass_env: Vec<String>,
    /// A request header for an HTTP server, 'NAME: VALUE' (repeatable); a VALUE
    /// `${env:OTHER}` is read from the environment and never printed.
    #[arg(long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// The longest wait, in milliseconds, for the server to start and for each listing.
    #[arg(long, value_name = "MS", default_value_t = gauntlet_core::mcp::DEFAULT_MCP_TIMEOUT_MS)]
    pub timeout_ms: u64,
    /// Exit 1 when a finding of this severity or worse exists.
    #[arg(long, value_name = "SEVERITY", default_value = "high", value_parser = ["low", "medium", "high", "critical"])]
    pub fail_on: String,
    /// Print the listing and the findings as one JSON document instead of tables.
    #[arg(long)]
    pub json: bool,
    /// The stdio server's program and arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}
