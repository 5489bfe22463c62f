//! `gauntlet impact task`: coding tasks on a Python or Rust repository with targeted test context
//! ([`run`] builds a [`TaskRunReport`]). The repository's tests are run once on a pristine
//! copy (the regression baseline) and mapped by coverage ([`super::ImpactMap`]); then per
//! task a fresh agent process works in a fresh copy of the repository, told the tests its
//! `touches` affect (given mode) or nothing but the prompt (hidden mode). Afterwards gauntlet
//! re-runs every existing test and the task's acceptance tests itself, each test file in a
//! fresh copy of the workspace whose test files are overwritten from the pristine sources,
//! and checks the agent's evidence against what it observed. The folder of the task file
//! (tests, graders, the pristine repository) is hashed around each task: any write fails
//! the run. Verdicts are folded by `gauntlet_core::impact_task`. A Rust repository's tests
//! run under `cargo test --offline` ([`super::cargo`]): its acceptance tests are placed as
//! integration tests `tests/NAME.rs`, and each grading run is one cargo invocation.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use gauntlet_core::impact_task::{
    EVIDENCE_FILE, Evidence, ObservedTest, TaskBreach, TaskMode, TaskReport, TaskRunReport,
    check_evidence, completion, regressions,
};
use gauntlet_core::redact::Redactor;
use gauntlet_core::target::ExecTargetConfig;
use gauntlet_core::trajectory::{TestState, Verdict};
use gauntlet_suite::impact_task::LoadedTasks;
use gauntlet_targets::exec::{ExecTarget, FolderEnd};
use serde_json::json;

use super::cargo::{CargoRun, run_cargo};
use super::python::{RUNNER, write_runner};
use super::{Lang, detect};
use crate::codingagent::CodingAgent;
use crate::error::CliError;
use crate::trajectorycmd::{changed, clip, copy_tree, hash_tree};

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
) -> Result<Vec<ObservedTest>, CliError> {
    let mut out = Vec::new();
    for f in files {
        let _ = std::fs::remove_dir_all(scratch);
        copy_tree(dir, scratch)?;
        let every = |state: TestState, detail: String| -> Vec<ObservedTest> {
            let ids = if f.known.is_empty() {
                vec![f.rel.clone()]
            } else {
                f.known.clone()
            };
            ids.into_iter()
                .map(|id| ObservedTest {
                    id,
                    state,
                    detail: Some(detail.clone()),
                })
                .collect()
        };
        let cfg = ExecTargetConfig {
            command: vec![
                "python3".into(),
                python_runner.display().to_string(),
                scratch.display().to_string(),
                f.rel.clone(),
            ],
            env: BTreeMap::new(),
            pass_env: Vec::new(),
            frozen_time: None,
        };
        let target = match ExecTarget::new_in(&cfg, Some(scratch), redactor) {
            Ok(t) => t,
            Err(e) => {
                out.extend(every(TestState::NotAssessed, format!("cannot run: {e}")));
                continue;
            }
        };
        let vars = [("GAUNTLET_WORKSPACE", scratch.display().to_string())];
        let r = target.run_in(scratch, b"", &vars, limit).await;
        let _ = std::fs::remove_dir_all(scratch);
        match r.end {
            FolderEnd::TimedOut => {
                out.extend(every(
                    TestState::NotAssessed,
                    format!("timed out after {}s", limit.as_secs()),
                ));
                continue;
            }
            FolderEnd::NotStarted(why) => {
                out.extend(every(TestState::NotAssessed, why));
                continue;
            }
            FolderEnd::Exited(_) | FolderEnd::Killed => {}
        }
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
        for k in f.known.iter().filter(|k| !seen.contains(*k)) {
            out.push(ObservedTest {
                id: k.clone(),
                state: TestState::Fail,
                detail: Some("the test was not found any more".into()),
            });
        }
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
    ) -> Result<Vec<ObservedTest>, CliError> {
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
    ) -> Result<Vec<ObservedTest>, CliError> {
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

fn same_bytes(a: &Path, b: &Path) -> bool {
    match (std::fs::read(a), std::fs::read(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(40)
        .collect()
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
) -> Result<TaskRunReport, CliError> {
    let f = &loaded.file;
    let harness = std::fs::canonicalize(&loaded.dir)?;
    let existed = out.exists();
    std::fs::create_dir_all(out)?;
    let out = std::fs::canonicalize(out)?;
    if harness.starts_with(&out) || out.starts_with(&harness) {
        if !existed {
            let _ = std::fs::remove_dir(&out);
        }
        return Err(CliError::usage(
            "--out overlaps the task file's folder",
            "the agent's workspace must lie outside the tests and the pristine repository: write the run to another folder",
        ));
    }
    let repo = harness.join(&f.repo);
    let Some(lang) = detect(&repo) else {
        return Err(CliError::usage(
            format!(
                "{} is neither a Python nor a Rust repository",
                repo.display()
            ),
            "`impact task` runs Python repositories (.py files) and Rust crates (Cargo.toml at the root)",
        ));
    };
    let agent_limit = Duration::from_secs(f.agent_timeout_secs.unwrap_or(300));
    let test_limit = Duration::from_secs(f.test_timeout_secs.unwrap_or(60));
    let runner = match lang {
        Lang::Python => {
            let (dir, p) = write_runner().map_err(CliError::plain)?;
            Runner::Python {
                _dir: dir,
                runner: p,
            }
        }
        Lang::Rust => Runner::Rust {
            target: tempfile::Builder::new()
                .prefix("gauntlet-cargo-")
                .tempdir()?,
            modules: super::rust::modules(&repo),
        },
    };
    let scratch = out.join("test-copy");

    // The baseline: the pristine repository, mapped and its tests run once.
    let baseline_dir = out.join("baseline");
    let _ = std::fs::remove_dir_all(&baseline_dir);
    copy_tree(&repo, &baseline_dir)?;
    let map = super::build(&baseline_dir, lang, true).map_err(CliError::plain)?;
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
    let baseline = runner
        .existing(
            &baseline_dir,
            &scratch,
            &existing,
            &[],
            test_limit,
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

    let mut report = TaskRunReport {
        name: f.name.clone(),
        file: loaded.origin.clone(),
        mode,
        agent: agent_shown.to_owned(),
        declared: f.tasks.len(),
        baseline_passing: before.values().filter(|s| **s == TestState::Pass).count(),
        not_analysed: map
            .skipped
            .iter()
            .map(|s| format!("{}: {}", s.path, s.reason))
            .collect(),
        tasks: Vec::new(),
        integrity: None,
    };
    for (i, task) in f.tasks.iter().enumerate() {
        let hashed_before = hash_tree(&harness, &out)?;
        let task_dir = out.join(format!("{}-{}", i + 1, slug(&task.id)));
        let ws = task_dir.join("workspace");
        let _ = std::fs::remove_dir_all(&task_dir);
        copy_tree(&repo, &ws)?;
        let _ = std::fs::remove_dir_all(ws.join(".gauntlet"));
        std::fs::create_dir_all(ws.join(".gauntlet"))?;
        if lang == Lang::Python {
            std::fs::write(ws.join(WORKSPACE_RUNNER), RUNNER)?;
        }
        let placed_tests: Vec<String> = task.tests.iter().map(|t| placed(lang, t)).collect();

        let aff = map.affected(&task.touches);
        // An affected test file mapped by imports names the whole file: its tests.
        let mut affected: BTreeSet<String> = BTreeSet::new();
        for id in aff.tests.keys() {
            if id.contains("::") {
                affected.insert(id.clone());
            } else {
                let prefix = format!("{id}::");
                let tests: Vec<&String> =
                    before.keys().filter(|k| k.starts_with(&prefix)).collect();
                if tests.is_empty() {
                    affected.insert(id.clone());
                }
                affected.extend(tests.into_iter().cloned());
            }
        }
        let affected_list: Vec<String> = affected.iter().cloned().collect();
        if mode == TaskMode::Given {
            for (t, rel) in task.tests.iter().zip(&placed_tests) {
                let dest = ws.join(rel);
                if let Some(p) = dest.parent() {
                    std::fs::create_dir_all(p)?;
                }
                std::fs::copy(harness.join(t), dest)?;
            }
        }
        let text = prompt_text(&task.prompt, mode, &affected_list, &placed_tests, lang);
        let mut msg = json!({
            "type": "task",
            "protocol": 1,
            "task": task.id,
            "index": i + 1,
            "mode": mode.as_str(),
            "workspace": ws.display().to_string(),
            "spec": task.prompt,
            "prompt": text,
            "touches": task.touches,
            "evidence": EVIDENCE_FILE,
            "lang": match lang { Lang::Python => "python", Lang::Rust => "rust" },
            "runner": match lang {
                Lang::Python => json!(["python3", WORKSPACE_RUNNER, "."]),
                Lang::Rust => json!(super::cargo::AGENT_RUNNER),
            },
        });
        if mode == TaskMode::Given {
            msg["affected_tests"] = json!(affected_list);
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
        let run = agent
            .run_in(
                &ws,
                &line,
                &vars,
                &loop_prompt(&text),
                &task.id,
                agent_limit,
            )
            .await;
        let end = run.end.clone();
        let trace = match &run.trace {
            Some(trace) if keep_traces => {
                crate::codingagent::write_trace(&task_dir.join("trace.json"), trace, redactor)?;
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
        let evidence = read_evidence(&ws);

        // Test files edited in the workspace: reported, then replaced for grading.
        // Rust unit tests live in source files the agent edits: only `tests/` is restored.
        let mut pristine: Vec<(String, PathBuf)> = existing
            .iter()
            .filter(|tf| lang == Lang::Python || tf.rel.starts_with("tests/"))
            .map(|tf| (tf.rel.clone(), repo.join(&tf.rel)))
            .collect();
        let acceptance_pristine: Vec<(String, PathBuf)> = task
            .tests
            .iter()
            .zip(&placed_tests)
            .map(|(t, rel)| (rel.clone(), harness.join(t)))
            .collect();
        let mut edited_tests = Vec::new();
        for (rel, src) in pristine.iter().chain(
            acceptance_pristine
                .iter()
                .filter(|_| mode == TaskMode::Given),
        ) {
            if !same_bytes(&ws.join(rel), src) {
                edited_tests.push(rel.clone());
            }
        }
        pristine.extend(acceptance_pristine);
        let grade = task_dir.join("grade");
        let _ = std::fs::remove_dir_all(&grade);
        // An agent that removed its workspace is graded on nothing, not a crashed run.
        std::fs::create_dir_all(&ws)?;
        copy_tree(&ws, &grade)?;
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
        let after = runner
            .existing(
                &grade, &scratch, &existing, &known_all, test_limit, redactor,
            )
            .await?;
        let acc_files: Vec<TestFile> = placed_tests
            .iter()
            .map(|t| TestFile {
                rel: t.clone(),
                known: Vec::new(),
            })
            .collect();
        let acceptance_tests = runner
            .acceptance(&grade, &scratch, &acc_files, test_limit, redactor)
            .await?;
        let _ = std::fs::remove_dir_all(&grade);
        let hashed_after = hash_tree(&harness, &out)?;

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
                t.state == TestState::NotAssessed && before.get(&t.id) == Some(&TestState::Pass)
            })
            .map(|t| t.id.clone())
            .collect();
        report.tasks.push(TaskReport {
            id: task.id.clone(),
            agent: end,
            affected: affected_list,
            uncovered: aff.uncovered,
            acceptance_tests,
            acceptance,
            evidence: evidence_check,
            unverified_claims,
            completion: done,
            reasons,
            regressions: regressions(&before, &after, &affected),
            not_assessed,
            edited_tests,
            agent_ms: run.elapsed.as_millis() as u64,
            model_calls: run.model_calls,
            tokens: run.tokens,
            cost_usd: run.cost_usd,
            trace,
        });
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
