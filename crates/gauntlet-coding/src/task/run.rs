//! `gauntlet impact task`: coding tasks on a Python or Rust repository with targeted test context
//! ([`run`] builds a [`TaskRunReport`]). The repository's tests are run once on a pristine
//! copy (the regression baseline) and mapped by coverage ([`ImpactMap`]); then per
//! task a fresh agent process works in a fresh copy of the repository, told the tests its
//! `touches` affect (given mode) or nothing but the prompt (hidden mode). Afterwards gauntlet
//! re-runs every existing test and the task's acceptance tests itself, each test file in a
//! fresh copy of the workspace whose test files are overwritten from the pristine sources,
//! and checks the agent's evidence against what it observed. The folder of the task file
//! (tests, graders, the pristine repository) is hashed around each task: any write fails
//! the run. Verdicts are folded by the parent module. A Rust repository's tests
//! run under `cargo test --offline` ([`crate::impact::cargo`]): its acceptance tests are placed as
//! integration tests `tests/NAME.rs`, and each grading run is one cargo invocation.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use gauntlet_core::redact::Redactor;
use serde_json::json;

use super::file::LoadedTasks;
use super::{
    EVIDENCE_FILE, Evidence, ObservedTest, TaskBreach, TaskMode, TaskReport, TaskRunReport,
    check_evidence, completion, regressions,
};
use crate::Error;
use crate::agent::{AgentRun, CodingAgent, write_trace};
use crate::impact::cargo::{AGENT_RUNNER, CargoRun, run_cargo};
use crate::impact::python::{RUNNER, write_runner};
use crate::impact::{ImpactMap, Lang, detect, run_test_command};
use crate::text::{clip, slug};
use crate::trajectory::{TestState, Verdict};
use crate::tree::{changed, copy_tree, hash_tree, same_bytes};

/// Largest evidence file read.
const MAX_EVIDENCE: u64 = 1 << 20;

/// Where gauntlet puts a copy of its test runner in the agent's workspace (the agent's own
/// tool; grading never uses it).
const WORKSPACE_RUNNER: &str = ".gauntlet/pyrunner.py";

/// One test file to run, with the test ids known for it (from the baseline), so that a file
/// that cannot be run still yields an outcome for each of them.
struct TestFile {
    rel: String,
    known: Vec<String>,
}

/// Runs the test files, each in a fresh copy of `dir` (`scratch` is used for the copy), under
/// the exec target's process handling: environment allow-list, own process group, `limit`.
async fn run_files(
    python_runner: &Path,
    dir: &Path,
    scratch: &Path,
    files: &[TestFile],
    limit: Duration,
    redactor: &mut Redactor,
) -> Result<Vec<ObservedTest>, Error> {
    let mut out = Vec::new();
    for f in files {
        let _ = std::fs::remove_dir_all(scratch);
        copy_tree(dir, scratch)?;
        let every =
            |state: TestState, detail: String| ObservedTest::every(&f.known, &f.rel, state, detail);
        let command = vec![
            "python3".into(),
            python_runner.display().to_string(),
            scratch.display().to_string(),
            f.rel.clone(),
        ];
        let r = match run_test_command(command, BTreeMap::new(), scratch, limit, redactor).await {
            Ok(r) => r,
            Err(why) => {
                out.extend(every(TestState::NotAssessed, why));
                continue;
            }
        };
        let parsed = r
            .stdout
            .lines()
            .rev()
            .find(|l| l.starts_with('{'))
            .and_then(|l| serde_json::from_str::<RunnerOut>(l).ok());
        let Some(parsed) = parsed else {
            // The runner always prints its result; code under test that exits the
            // interpreter or crashes it is the failure.
            out.extend(every(
                TestState::Fail,
                format!(
                    "the test process ended without a result: {}",
                    clip(&r.stderr)
                ),
            ));
            continue;
        };
        if let Some(e) = parsed.error {
            out.extend(every(TestState::Fail, clip(&e)));
            continue;
        }
        if parsed.tests.is_empty() {
            out.extend(every(TestState::NotAssessed, "no tests found".into()));
            continue;
        }
        let mut seen = BTreeSet::new();
        for t in parsed.tests {
            let id = format!("{}::{}", f.rel, t.name);
            seen.insert(id.clone());
            let (state, detail) = match t.outcome.as_str() {
                "passed" => (TestState::Pass, None),
                "skipped" => (
                    TestState::NotAssessed,
                    Some(format!("skipped: {}", t.detail)),
                ),
                _ => (TestState::Fail, Some(clip(&t.detail))),
            };
            out.push(ObservedTest { id, state, detail });
        }
        out.extend(ObservedTest::not_found(&f.known, &seen));
    }
    Ok(out)
}

/// How a repository's tests are run.
enum Runner {
    /// The shipped tracer-runner, one test file per copy.
    Python {
        _dir: tempfile::TempDir,
        runner: PathBuf,
    },
    /// `cargo test`, with one target folder for the whole run.
    Rust {
        target: tempfile::TempDir,
        modules: BTreeMap<String, String>,
    },
}

impl Runner {
    /// The repository's own tests in `dir` (`known`: every baseline id, for Rust).
    async fn existing(
        &self,
        dir: &Path,
        scratch: &Path,
        files: &[TestFile],
        known: &[String],
        limit: Duration,
        redactor: &mut Redactor,
    ) -> Result<Vec<ObservedTest>, Error> {
        match self {
            Runner::Python { runner, .. } => {
                run_files(runner, dir, scratch, files, limit, redactor).await
            }
            Runner::Rust { target, modules } => {
                let run = CargoRun {
                    dir,
                    tests: files.iter().filter_map(|f| test_stem(&f.rel)).collect(),
                    units: true,
                    known: known.to_vec(),
                    fallback: "cargo test".into(),
                };
                run_cargo(&run, scratch, target.path(), modules, limit, redactor).await
            }
        }
    }

    /// The acceptance test files in `dir`, each run on its own.
    async fn acceptance(
        &self,
        dir: &Path,
        scratch: &Path,
        files: &[TestFile],
        limit: Duration,
        redactor: &mut Redactor,
    ) -> Result<Vec<ObservedTest>, Error> {
        match self {
            Runner::Python { runner, .. } => {
                run_files(runner, dir, scratch, files, limit, redactor).await
            }
            Runner::Rust { target, modules } => {
                let mut out = Vec::new();
                for f in files {
                    let run = CargoRun {
                        dir,
                        tests: test_stem(&f.rel).into_iter().collect(),
                        units: false,
                        known: Vec::new(),
                        fallback: f.rel.clone(),
                    };
                    out.extend(
                        run_cargo(&run, scratch, target.path(), modules, limit, redactor).await?,
                    );
                }
                Ok(out)
            }
        }
    }
}

#[derive(serde::Deserialize)]
struct RunnerOut {
    tests: Vec<RunnerTest>,
    error: Option<String>,
}

#[derive(serde::Deserialize)]
struct RunnerTest {
    name: String,
    outcome: String,
    #[serde(default)]
    detail: String,
}

/// The agent's evidence: `None` when it wrote none, `Err` when it is not evidence.
fn read_evidence(ws: &Path) -> Option<Result<Evidence, String>> {
    let p = ws.join(EVIDENCE_FILE);
    let meta = std::fs::symlink_metadata(&p).ok()?;
    if !meta.is_file() || meta.len() > MAX_EVIDENCE {
        return Some(Err(format!(
            "{EVIDENCE_FILE} is not a regular file of at most 1 MiB"
        )));
    }
    Some(
        std::fs::read(&p)
            .map_err(|e| format!("cannot read {EVIDENCE_FILE}: {e}"))
            .and_then(|b| {
                serde_json::from_slice::<Evidence>(&b).map_err(|e| {
                    format!(
                        "{EVIDENCE_FILE} is not evidence ({e}); write {{\"tests\": [{{\"id\": \"FILE::NAME\", \"outcome\": \"passed\"}}]}}"
                    )
                })
            }),
    )
}

/// Where an acceptance test `t` (relative to the task file) lies in the workspace.
fn placed(lang: Lang, t: &str) -> String {
    match lang {
        Lang::Python => t.to_owned(),
        Lang::Rust => format!("tests/{}", t.rsplit('/').next().unwrap_or(t)),
    }
}

/// The integration test target of `tests/NAME.rs` (`None` for files below `tests/`).
fn test_stem(rel: &str) -> Option<String> {
    let name = rel.strip_prefix("tests/")?.strip_suffix(".rs")?;
    (!name.contains('/')).then(|| name.to_owned())
}

/// How the agent is told to run tests.
fn runner_text(lang: Lang) -> String {
    match lang {
        Lang::Python => format!(
            "`python3 {WORKSPACE_RUNNER} . FILE` runs a test file and prints its results."
        ),
        Lang::Rust => "`cargo test --offline` runs the tests (`--test NAME` runs tests/NAME.rs, `--lib` the unit tests); a test's id is `FILE::PATH::NAME`: `tests/x.rs::name` for an integration test, `src/a.rs::tests::name` for the unit test `a::tests::name` of src/a.rs.".into(),
    }
}

/// The text handed to the agent: the task's prompt, then the test context of its mode.
fn prompt_text(
    prompt: &str,
    mode: TaskMode,
    affected: &[String],
    acceptance: &[String],
    lang: Lang,
) -> String {
    let mut s = prompt.trim().to_owned();
    s.push_str("\n\n");
    if mode == TaskMode::Given {
        if affected.is_empty() {
            s.push_str("No existing test covers the files this task touches.\n");
        } else {
            s.push_str("Existing tests affected by this change (keep them passing):\n");
            for a in affected {
                s.push_str(&format!("- {a}\n"));
            }
        }
        s.push_str("Acceptance tests of this task (make them pass; edits to them are ignored):\n");
        for a in acceptance {
            s.push_str(&format!("- {a}\n"));
        }
    }
    s.push_str(&format!(
        "Before you finish, run the tests your change affects{} and write their results to {EVIDENCE_FILE} as {{\"tests\": [{{\"id\": \"FILE::NAME\", \"outcome\": \"passed\"}}]}} (outcome: passed, failed, error or skipped). {} Without evidence the task does not count as done.\n",
        if mode == TaskMode::Given {
            " and the acceptance tests"
        } else {
            ""
        },
        runner_text(lang)
    ));
    s
}

/// The user message of the built-in loop: the prompt an exec agent reads, plus what the
/// loop cannot do (it has no shell, so its evidence can only say what it expects).
fn loop_prompt(text: &str) -> String {
    format!(
        "{text}\nYou cannot run commands here: write {EVIDENCE_FILE} with write_file, and claim only what you are sure of; gauntlet runs the tests itself and checks every claim.\n"
    )
}

/// The coding agent a task run uses: its spec, the folder its relative paths are resolved
/// against, and the variables it gets besides its own.
pub struct AgentChoice {
    /// `exec:COMMAND` or `model:SPEC`, as given (reports name the agent so).
    pub spec: String,
    /// `None`: the working directory (`--agent`); the task file's folder for its `agent`.
    pub base: Option<PathBuf>,
    /// The toolchain's variables when the repository is a Rust crate (its agent runs cargo
    /// too), else none.
    pub extra: BTreeMap<String, String>,
}

/// The agent of a task run: `flag` (`--agent`) when given, else the file's `agent`.
pub fn agent_of(loaded: &LoadedTasks, flag: Option<&str>) -> Result<AgentChoice, Error> {
    let (spec, base) = match (flag, &loaded.file.agent) {
        (Some(a), _) => (a.to_owned(), None),
        (None, Some(a)) => (a.clone(), Some(loaded.dir.clone())),
        (None, None) => {
            return Err(Error::usage(
                "no agent: the task file has no `agent` and --agent was not given",
                "pass --agent exec:COMMAND, or set `agent: exec:COMMAND` in the file",
            ));
        }
    };
    let extra = if loaded.repo_dir().join("Cargo.toml").is_file() {
        crate::impact::cargo::toolchain_env()
    } else {
        Default::default()
    };
    Ok(AgentChoice { spec, base, extra })
}

/// Runs a task file ([`run`]) in `mode`, else the file's own. With `out` the workspaces are
/// kept there and the report is written to `tasks.json`; without, the run uses a temporary
/// folder that is removed afterwards.
pub async fn run_tasks(
    loaded: &LoadedTasks,
    mode: Option<TaskMode>,
    agent: &CodingAgent,
    agent_shown: &str,
    out: Option<&Path>,
    redactor: &mut Redactor,
) -> Result<TaskRunReport, Error> {
    let mode = mode.unwrap_or(loaded.file.mode);
    let dir = match out {
        Some(o) => o.to_path_buf(),
        None => std::env::temp_dir().join(format!("gauntlet-tasks-{}", std::process::id())),
    };
    let result = run(
        loaded,
        mode,
        agent,
        agent_shown,
        &dir,
        out.is_some(),
        redactor,
    )
    .await;
    if out.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let report = result?;
    if let Some(o) = out {
        std::fs::write(
            o.join("tasks.json"),
            serde_json::to_vec_pretty(&report).expect("report serializes"),
        )?;
    }
    Ok(report)
}

/// What the baseline run of the pristine repository established.
struct Baseline {
    /// The repository's map (from the pristine copy).
    map: ImpactMap,
    /// Every test's state before any task.
    before: BTreeMap<String, TestState>,
    /// The repository's test files, with the test ids the baseline found in each.
    existing: Vec<TestFile>,
    /// Every test id of the baseline.
    known_all: Vec<String>,
}

/// What every task of one run shares.
struct Setting {
    /// The task file's folder, hashed around each task.
    harness: PathBuf,
    /// The run's own folder.
    out: PathBuf,
    /// The pristine repository.
    repo: PathBuf,
    lang: Lang,
    mode: TaskMode,
    runner: Runner,
    /// Where each test run's fresh copy is made.
    scratch: PathBuf,
    agent_limit: Duration,
    test_limit: Duration,
    keep_traces: bool,
}

/// Runs every task of `loaded` in `mode` against `agent`, under `out` (outside the task
/// file's folder).
pub async fn run(
    loaded: &LoadedTasks,
    mode: TaskMode,
    agent: &CodingAgent,
    agent_shown: &str,
    out: &Path,
    keep_traces: bool,
    redactor: &mut Redactor,
) -> Result<TaskRunReport, Error> {
    let f = &loaded.file;
    let s = setting(loaded, mode, out, keep_traces)?;
    let base = baseline(&s, redactor).await?;
    let mut report = TaskRunReport {
        name: f.name.clone(),
        file: loaded.origin.clone(),
        mode,
        agent: agent_shown.to_owned(),
        declared: f.tasks.len(),
        baseline_passing: base
            .before
            .values()
            .filter(|s| **s == TestState::Pass)
            .count(),
        not_analysed: base
            .map
            .skipped
            .iter()
            .map(|s| format!("{}: {}", s.path, s.reason))
            .collect(),
        tasks: Vec::new(),
        integrity: None,
    };
    for (i, task) in f.tasks.iter().enumerate() {
        let hashed_before = hash_tree(&s.harness, &s.out)?;
        let task_report = run_task(&s, &base, i, task, agent, redactor).await?;
        let hashed_after = hash_tree(&s.harness, &s.out)?;
        report.tasks.push(task_report);
        if hashed_before != hashed_after {
            report.integrity = Some(TaskBreach {
                task: task.id.clone(),
                changed: changed(&hashed_before, &hashed_after),
            });
            break;
        }
    }
    Ok(report)
}

/// The run's folders (refused when `out` overlaps the task file's folder), the language of
/// its repository and the runner of its tests.
fn setting(
    loaded: &LoadedTasks,
    mode: TaskMode,
    out: &Path,
    keep_traces: bool,
) -> Result<Setting, Error> {
    let f = &loaded.file;
    let harness = std::fs::canonicalize(&loaded.dir)?;
    let existed = out.exists();
    std::fs::create_dir_all(out)?;
    let out = std::fs::canonicalize(out)?;
    if harness.starts_with(&out) || out.starts_with(&harness) {
        if !existed {
            let _ = std::fs::remove_dir(&out);
        }
        return Err(Error::usage(
            "--out overlaps the task file's folder",
            "the agent's workspace must lie outside the tests and the pristine repository: write the run to another folder",
        ));
    }
    let repo = harness.join(&f.repo);
    let Some(lang) = detect(&repo) else {
        return Err(Error::usage(
            format!(
                "{} is neither a Python nor a Rust repository",
                repo.display()
            ),
            "`impact task` runs Python repositories (.py files) and Rust crates (Cargo.toml at the root)",
        ));
    };
    let runner = match lang {
        Lang::Python => {
            let (dir, p) = write_runner().map_err(Error::plain)?;
            Runner::Python {
                _dir: dir,
                runner: p,
            }
        }
        Lang::Rust => Runner::Rust {
            target: tempfile::Builder::new()
                .prefix("gauntlet-cargo-")
                .tempdir()?,
            modules: crate::impact::rust::modules(&repo),
        },
    };
    Ok(Setting {
        scratch: out.join("test-copy"),
        harness,
        out,
        repo,
        lang,
        mode,
        runner,
        agent_limit: Duration::from_secs(f.agent_timeout_secs.unwrap_or(300)),
        test_limit: Duration::from_secs(f.test_timeout_secs.unwrap_or(60)),
        keep_traces,
    })
}

/// The baseline: the pristine repository, mapped and its tests run once.
async fn baseline(s: &Setting, redactor: &mut Redactor) -> Result<Baseline, Error> {
    let baseline_dir = s.out.join("baseline");
    let _ = std::fs::remove_dir_all(&baseline_dir);
    copy_tree(&s.repo, &baseline_dir)?;
    let map = crate::impact::build(&baseline_dir, s.lang, true).map_err(Error::plain)?;
    let mut by_file: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (id, file) in &map.tests {
        let e = by_file.entry(file.clone()).or_default();
        if id.contains("::") {
            e.push(id.clone());
        }
    }
    let existing: Vec<TestFile> = by_file
        .into_iter()
        .map(|(rel, known)| TestFile { rel, known })
        .collect();
    let baseline = s
        .runner
        .existing(
            &baseline_dir,
            &s.scratch,
            &existing,
            &[],
            s.test_limit,
            redactor,
        )
        .await?;
    let _ = std::fs::remove_dir_all(&baseline_dir);
    let before: BTreeMap<String, TestState> =
        baseline.iter().map(|t| (t.id.clone(), t.state)).collect();
    // Known ids come from the baseline run now (a file mapped by imports gets its tests).
    let existing: Vec<TestFile> = existing
        .into_iter()
        .map(|mut tf| {
            let prefix = format!("{}::", tf.rel);
            tf.known = before
                .keys()
                .filter(|k| k.starts_with(&prefix))
                .cloned()
                .collect();
            tf
        })
        .collect();
    let known_all: Vec<String> = before.keys().cloned().collect();
    Ok(Baseline {
        map,
        before,
        existing,
        known_all,
    })
}

/// The tests the task's `touches` affect: an affected test file mapped by imports names the
/// whole file, so it stands for the file's tests.
fn affected_tests(
    aff: &crate::impact::Affected,
    before: &BTreeMap<String, TestState>,
) -> BTreeSet<String> {
    let mut affected: BTreeSet<String> = BTreeSet::new();
    for id in aff.tests.keys() {
        if id.contains("::") {
            affected.insert(id.clone());
        } else {
            let prefix = format!("{id}::");
            let tests: Vec<&String> = before.keys().filter(|k| k.starts_with(&prefix)).collect();
            if tests.is_empty() {
                affected.insert(id.clone());
            }
            affected.extend(tests.into_iter().cloned());
        }
    }
    affected
}

/// One task: its workspace, the agent's run, the grading and the task's record.
async fn run_task(
    s: &Setting,
    base: &Baseline,
    i: usize,
    task: &super::TaskDef,
    agent: &CodingAgent,
    redactor: &mut Redactor,
) -> Result<TaskReport, Error> {
    let task_dir = s.out.join(format!("{}-{}", i + 1, slug(&task.id)));
    let ws = task_dir.join("workspace");
    let _ = std::fs::remove_dir_all(&task_dir);
    copy_tree(&s.repo, &ws)?;
    let _ = std::fs::remove_dir_all(ws.join(".gauntlet"));
    std::fs::create_dir_all(ws.join(".gauntlet"))?;
    if s.lang == Lang::Python {
        std::fs::write(ws.join(WORKSPACE_RUNNER), RUNNER)?;
    }
    let placed_tests: Vec<String> = task.tests.iter().map(|t| placed(s.lang, t)).collect();
    let aff = base.map.affected(&task.touches);
    let affected = affected_tests(&aff, &base.before);
    let affected_list: Vec<String> = affected.iter().cloned().collect();
    if s.mode == TaskMode::Given {
        for (t, rel) in task.tests.iter().zip(&placed_tests) {
            let dest = ws.join(rel);
            if let Some(p) = dest.parent() {
                std::fs::create_dir_all(p)?;
            }
            std::fs::copy(s.harness.join(t), dest)?;
        }
    }
    let run = agent_step(s, i, task, &ws, &affected_list, &placed_tests, agent).await;
    let trace = match &run.trace {
        Some(trace) if s.keep_traces => {
            write_trace(&task_dir.join("trace.json"), trace, redactor)?;
            Some(format!(
                "{}/trace.json",
                task_dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            ))
        }
        _ => None,
    };
    let graded = grade(s, base, task, &task_dir, &ws, &placed_tests, redactor).await?;
    let mut report = task_report(task, base, &affected, aff.uncovered, graded, &run, s.mode);
    report.trace = trace;
    Ok(report)
}

/// The agent's run on one task in its workspace `ws`.
async fn agent_step(
    s: &Setting,
    i: usize,
    task: &super::TaskDef,
    ws: &Path,
    affected: &[String],
    placed_tests: &[String],
    agent: &CodingAgent,
) -> AgentRun {
    let text = prompt_text(&task.prompt, s.mode, affected, placed_tests, s.lang);
    let mut msg = json!({
        "type": "task",
        "protocol": 1,
        "task": task.id,
        "index": i + 1,
        "mode": s.mode.as_str(),
        "workspace": ws.display().to_string(),
        "spec": task.prompt,
        "prompt": text,
        "touches": task.touches,
        "evidence": EVIDENCE_FILE,
        "lang": match s.lang { Lang::Python => "python", Lang::Rust => "rust" },
        "runner": match s.lang {
            Lang::Python => json!(["python3", WORKSPACE_RUNNER, "."]),
            Lang::Rust => json!(AGENT_RUNNER),
        },
    });
    if s.mode == TaskMode::Given {
        msg["affected_tests"] = json!(affected);
        msg["acceptance_tests"] = json!(placed_tests);
    }
    let mut line = serde_json::to_vec(&msg).expect("serializes");
    line.push(b'\n');
    let vars = [
        ("GAUNTLET_WORKSPACE", ws.display().to_string()),
        ("GAUNTLET_TASK", task.id.clone()),
        (
            "GAUNTLET_EVIDENCE",
            ws.join(EVIDENCE_FILE).display().to_string(),
        ),
    ];
    agent
        .run_in(
            ws,
            &line,
            &vars,
            &loop_prompt(&text),
            &task.id,
            s.agent_limit,
        )
        .await
}

/// What gauntlet observed when it graded a task's workspace.
struct Graded {
    /// The agent's evidence, as it left it.
    evidence: Option<Result<Evidence, String>>,
    /// The repository's own tests after the task.
    after: Vec<ObservedTest>,
    /// The task's acceptance tests.
    acceptance_tests: Vec<ObservedTest>,
    /// Test files the agent edited (graded with the pristine copies instead).
    edited_tests: Vec<String>,
}

/// Grades the workspace `ws` in a copy whose test files are restored from the pristine
/// sources: the agent's evidence, every existing test, then each acceptance test file.
async fn grade(
    s: &Setting,
    base: &Baseline,
    task: &super::TaskDef,
    task_dir: &Path,
    ws: &Path,
    placed_tests: &[String],
    redactor: &mut Redactor,
) -> Result<Graded, Error> {
    let evidence = read_evidence(ws);
    // Test files edited in the workspace: reported, then replaced for grading.
    // Rust unit tests live in source files the agent edits: only `tests/` is restored.
    let mut pristine: Vec<(String, PathBuf)> = base
        .existing
        .iter()
        .filter(|tf| s.lang == Lang::Python || tf.rel.starts_with("tests/"))
        .map(|tf| (tf.rel.clone(), s.repo.join(&tf.rel)))
        .collect();
    let acceptance_pristine: Vec<(String, PathBuf)> = task
        .tests
        .iter()
        .zip(placed_tests)
        .map(|(t, rel)| (rel.clone(), s.harness.join(t)))
        .collect();
    let mut edited_tests = Vec::new();
    for (rel, src) in pristine.iter().chain(
        acceptance_pristine
            .iter()
            .filter(|_| s.mode == TaskMode::Given),
    ) {
        if !same_bytes(&ws.join(rel), src) {
            edited_tests.push(rel.clone());
        }
    }
    pristine.extend(acceptance_pristine);
    let grade = task_dir.join("grade");
    let _ = std::fs::remove_dir_all(&grade);
    // An agent that removed its workspace is graded on nothing, not a crashed run.
    std::fs::create_dir_all(ws)?;
    copy_tree(ws, &grade)?;
    let _ = std::fs::remove_dir_all(grade.join(".gauntlet"));
    for (rel, src) in &pristine {
        let dest = grade.join(rel);
        if let Some(p) = dest.parent() {
            std::fs::create_dir_all(p)?;
        }
        // A symlink the agent left there must not redirect the write.
        let _ = std::fs::remove_file(&dest);
        std::fs::copy(src, &dest)?;
    }
    let after = s
        .runner
        .existing(
            &grade,
            &s.scratch,
            &base.existing,
            &base.known_all,
            s.test_limit,
            redactor,
        )
        .await?;
    let acc_files: Vec<TestFile> = placed_tests
        .iter()
        .map(|t| TestFile {
            rel: t.clone(),
            known: Vec::new(),
        })
        .collect();
    let acceptance_tests = s
        .runner
        .acceptance(&grade, &s.scratch, &acc_files, s.test_limit, redactor)
        .await?;
    let _ = std::fs::remove_dir_all(&grade);
    Ok(Graded {
        evidence,
        after,
        acceptance_tests,
        edited_tests,
    })
}

/// The record of one task: its verdicts from what gauntlet observed, checked against the
/// agent's evidence; no trace yet.
fn task_report(
    task: &super::TaskDef,
    base: &Baseline,
    affected: &BTreeSet<String>,
    uncovered: Vec<String>,
    graded: Graded,
    run: &AgentRun,
    mode: TaskMode,
) -> TaskReport {
    let Graded {
        evidence,
        after,
        acceptance_tests,
        edited_tests,
    } = graded;
    let observed: BTreeMap<String, TestState> = after
        .iter()
        .chain(acceptance_tests.iter())
        .map(|t| (t.id.clone(), t.state))
        .collect();
    let mut required = affected.clone();
    if mode == TaskMode::Given {
        required.extend(acceptance_tests.iter().map(|t| t.id.clone()));
    }
    let (evidence_check, unverified_claims) = check_evidence(
        evidence.as_ref().map(|e| e.as_ref().map_err(Clone::clone)),
        &required,
        &observed,
    );
    let acceptance = Verdict::of(acceptance_tests.iter().map(|t| &t.state));
    let (done, reasons) = completion(acceptance, &evidence_check);
    let not_assessed = after
        .iter()
        .filter(|t| {
            t.state == TestState::NotAssessed && base.before.get(&t.id) == Some(&TestState::Pass)
        })
        .map(|t| t.id.clone())
        .collect();
    TaskReport {
        id: task.id.clone(),
        agent: run.end.clone(),
        affected: affected.iter().cloned().collect(),
        uncovered,
        acceptance_tests,
        acceptance,
        evidence: evidence_check,
        unverified_claims,
        completion: done,
        reasons,
        regressions: regressions(&base.before, &after, affected),
        not_assessed,
        edited_tests,
        agent_ms: run.elapsed.as_millis() as u64,
        model_calls: run.model_calls,
        tokens: run.tokens,
        cost_usd: run.cost_usd,
        trace: None,
    }
}
