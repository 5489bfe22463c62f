//! Running trajectories ([`run_all`], one [`TrajectoryReport`] each): for each checkpoint a
//! fresh coding agent ([`CodingAgent`]: an exec process with the exec target's handling, or
//! a model in the built-in coding loop) gets the workspace and the spec change; then every
//! test so far runs in a fresh copy of the workspace, outside the agent's reach. The
//! trajectory's folder (tests, graders, the file) is hashed before and after each agent
//! step: any change fails the run (harness integrity). Verdicts and signals are folded by
//! the parent module.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use gauntlet_core::redact::Redactor;
use gauntlet_core::target::ExecTargetConfig;
use gauntlet_targets::exec::{ExecTarget, FolderEnd};
use serde_json::json;

use super::file::LoadedTrajectory;
use super::{
    CheckpointReport, IntegrityBreach, SOURCE_EXTENSIONS, Signals, TestOutcome, TestState,
    TrajectoryReport, Verdict, code_mass, phase_of, regressions,
};
use crate::Error;
use crate::agent::{AgentRun, CodingAgent, write_trace};
use crate::text::{clip, slug};
use crate::tree::{changed, copy_tree, hash_tree};

/// Runs each trajectory against `agent` (`agent_shown` is how reports name it). With `out`
/// each run is kept there (in a numbered subfolder when there are several) with its
/// `trajectory.json` and the loop's traces; without, it runs in a temporary folder that is
/// removed afterwards.
pub async fn run_all(
    loaded: &[LoadedTrajectory],
    agent: &CodingAgent,
    agent_shown: &str,
    out: Option<&Path>,
    redactor: &mut Redactor,
) -> Result<Vec<TrajectoryReport>, Error> {
    let mut reports = Vec::new();
    for (i, t) in loaded.iter().enumerate() {
        let dir = match out {
            Some(o) if loaded.len() > 1 => {
                o.join(format!("{}-{}", i + 1, slug(&t.trajectory.name)))
            }
            Some(o) => o.to_path_buf(),
            None => std::env::temp_dir().join(format!(
                "gauntlet-trajectory-{}-{}",
                std::process::id(),
                i + 1
            )),
        };
        let report = run_one(t, agent, agent_shown, &dir, out.is_some(), redactor).await?;
        if out.is_none() {
            let _ = std::fs::remove_dir_all(&dir);
        } else {
            let path = dir.join("trajectory.json");
            std::fs::write(
                &path,
                serde_json::to_vec_pretty(&report).expect("report serializes"),
            )?;
        }
        reports.push(report);
    }
    Ok(reports)
}

/// The folders of one trajectory's run.
struct Folders {
    /// The trajectory's folder, hashed around each agent step.
    harness: PathBuf,
    /// The run's own folder (skipped by the hashing when it lies inside).
    out: PathBuf,
    /// The agent's workspace, kept across checkpoints.
    workspace: PathBuf,
}

impl Folders {
    /// The folders of `t` run under `out`, with the starting workspace in place.
    fn prepare(t: &LoadedTrajectory, out: &Path) -> Result<Folders, Error> {
        let harness = std::fs::canonicalize(&t.dir)?;
        std::fs::create_dir_all(out)?;
        let out = std::fs::canonicalize(out)?;
        let workspace = out.join("workspace");
        if harness.starts_with(&out) || out.starts_with(&harness) {
            return Err(Error::usage(
                "--out overlaps the trajectory's folder",
                "the agent's workspace must lie outside the tests: write the run to another folder",
            ));
        }
        let _ = std::fs::remove_dir_all(&workspace);
        match t.seed_dir() {
            Some(seed) => copy_tree(&seed, &workspace)?,
            None => std::fs::create_dir_all(&workspace)?,
        }
        Ok(Folders {
            harness,
            out,
            workspace,
        })
    }
}

/// A test of some checkpoint: the checkpoint it belongs to, the test, and its command.
type TestTarget = (
    String,
    super::TestDef,
    Result<ExecTarget, gauntlet_targets::AgentError>,
);

async fn run_one(
    t: &LoadedTrajectory,
    agent: &CodingAgent,
    agent_shown: &str,
    out: &Path,
    keep_traces: bool,
    redactor: &mut Redactor,
) -> Result<TrajectoryReport, Error> {
    let tr = &t.trajectory;
    let f = Folders::prepare(t, out)?;
    let agent_limit = Duration::from_secs(tr.agent_timeout_secs.unwrap_or(300));
    let test_limit = Duration::from_secs(tr.test_timeout_secs.unwrap_or(60));
    let tests = test_targets(t, &f.harness, redactor);
    let mut report = TrajectoryReport {
        name: tr.name.clone(),
        file: t.origin.clone(),
        agent: agent_shown.to_owned(),
        declared: tr.checkpoints.len(),
        checkpoints: Vec::new(),
        integrity: None,
    };
    let n = tr.checkpoints.len();
    let mut previous: Vec<TestOutcome> = Vec::new();
    for (i, cp) in tr.checkpoints.iter().enumerate() {
        let before = hash_tree(&f.harness, &f.out)?;
        let run = agent_step(t, i, agent, &f, agent_limit).await;
        let after = hash_tree(&f.harness, &f.out)?;
        let trace = match &run.trace {
            Some(trace) if keep_traces => {
                let name = format!("{}.trace.json", slug(&cp.id));
                write_trace(&f.out.join(&name), trace, redactor)?;
                Some(name)
            }
            _ => None,
        };
        if before != after {
            report.integrity = Some(IntegrityBreach {
                checkpoint: cp.id.clone(),
                changed: changed(&before, &after),
            });
            break;
        }
        let now = tests_so_far(t, i, &tests, &f, test_limit).await?;
        let mut cpr = checkpoint_report(&cp.id, i + 1, n, &run, &previous, &now, &f.workspace);
        cpr.trace = trace;
        report.checkpoints.push(cpr);
        previous = now;
    }
    Ok(report)
}

/// Each test as its own exec command, resolved against the trajectory's folder, so its
/// files are found there and never copied into the agent's workspace.
fn test_targets(t: &LoadedTrajectory, harness: &Path, redactor: &mut Redactor) -> Vec<TestTarget> {
    let mut tests = Vec::new();
    for cp in &t.trajectory.checkpoints {
        for test in &cp.tests {
            let cfg = ExecTargetConfig {
                command: test.run.clone(),
                env: BTreeMap::new(),
                pass_env: Vec::new(),
                frozen_time: None,
            };
            let target = ExecTarget::new_in(&cfg, Some(harness), redactor);
            tests.push((cp.id.clone(), test.clone(), target));
        }
    }
    tests
}

/// The user message of the built-in loop at one checkpoint: what the exec agent reads on
/// stdin, as text.
fn checkpoint_prompt(tr: &str, id: &str, index: usize, n: usize, spec: &str) -> String {
    format!(
        "Trajectory `{tr}`, checkpoint {id} ({index} of {n}). The workspace holds the code of the earlier checkpoints{}. Make this change:\n\n{}\n",
        if index == 1 {
            " (none yet: this is the first)"
        } else {
            ""
        },
        spec.trim()
    )
}

/// The agent's step at checkpoint `i` (from 0) in the workspace.
async fn agent_step(
    t: &LoadedTrajectory,
    i: usize,
    agent: &CodingAgent,
    f: &Folders,
    limit: Duration,
) -> AgentRun {
    let tr = &t.trajectory;
    let cp = &tr.checkpoints[i];
    let msg = json!({
        "type": "checkpoint",
        "protocol": 1,
        "checkpoint": cp.id,
        "index": i + 1,
        "workspace": f.workspace.display().to_string(),
        "spec": cp.spec,
    });
    let mut line = serde_json::to_vec(&msg).expect("serializes");
    line.push(b'\n');
    let vars = [
        ("GAUNTLET_WORKSPACE", f.workspace.display().to_string()),
        ("GAUNTLET_CHECKPOINT", cp.id.clone()),
        ("GAUNTLET_CHECKPOINT_INDEX", (i + 1).to_string()),
    ];
    let prompt = checkpoint_prompt(&tr.name, &cp.id, i + 1, tr.checkpoints.len(), &cp.spec);
    agent
        .run_in(&f.workspace, &line, &vars, &prompt, &cp.id, limit)
        .await
}

/// The tests of every checkpoint up to `i` (from 0), each in a fresh copy of the workspace.
async fn tests_so_far(
    t: &LoadedTrajectory,
    i: usize,
    tests: &[TestTarget],
    f: &Folders,
    limit: Duration,
) -> Result<Vec<TestOutcome>, Error> {
    let checkpoints = &t.trajectory.checkpoints;
    let mut now = Vec::new();
    for (from, test, target) in tests {
        let pos = checkpoints.iter().position(|c| &c.id == from).unwrap_or(0);
        if pos > i {
            continue;
        }
        let (state, detail) = match target {
            Err(e) => (TestState::NotAssessed, Some(format!("cannot run: {e}"))),
            Ok(target) => run_test(target, f, limit).await?,
        };
        now.push(TestOutcome {
            id: test.id.clone(),
            from: from.clone(),
            core: test.core,
            holdout: test.holdout,
            state,
            detail,
        });
    }
    Ok(now)
}

/// One test command in a fresh copy of the workspace.
async fn run_test(
    target: &ExecTarget,
    f: &Folders,
    limit: Duration,
) -> Result<(TestState, Option<String>), Error> {
    let copy = f.out.join("test-copy");
    let _ = std::fs::remove_dir_all(&copy);
    copy_tree(&f.workspace, &copy)?;
    let vars = [
        ("GAUNTLET_WORKSPACE", copy.display().to_string()),
        ("GAUNTLET_TESTS", f.harness.display().to_string()),
    ];
    let r = target.run_in(&copy, b"", &vars, limit).await;
    let _ = std::fs::remove_dir_all(&copy);
    Ok(match r.end {
        FolderEnd::Exited(0) => (TestState::Pass, None),
        FolderEnd::Exited(_) | FolderEnd::Killed => (
            TestState::Fail,
            Some(clip(&format!("{}\n{}", r.stdout, r.stderr))),
        ),
        FolderEnd::TimedOut => (
            TestState::NotAssessed,
            Some(format!("timed out after {}s", limit.as_secs())),
        ),
        FolderEnd::NotStarted(why) => (TestState::NotAssessed, Some(why)),
    })
}

/// The record of checkpoint `id` (number `index` of `n`): verdicts from its tests, signals
/// from the agent's run and the workspace; no trace yet.
fn checkpoint_report(
    id: &str,
    index: usize,
    n: usize,
    run: &AgentRun,
    previous: &[TestOutcome],
    now: &[TestOutcome],
    workspace: &Path,
) -> CheckpointReport {
    let (code_mass, source_lines) = workspace_mass(workspace);
    let holdouts: Vec<&TestOutcome> = now.iter().filter(|t| t.holdout).collect();
    CheckpointReport {
        id: id.to_owned(),
        index,
        phase: phase_of(index, n),
        agent: run.end.clone(),
        strict: Verdict::of(now.iter().map(|t| &t.state)),
        isolated: Verdict::of(now.iter().filter(|t| t.from == id).map(|t| &t.state)),
        core: Verdict::of(now.iter().filter(|t| t.core).map(|t| &t.state)),
        regressions: regressions(previous, now, id),
        holdout_passed: holdouts
            .iter()
            .filter(|t| t.state == TestState::Pass)
            .count(),
        holdout_total: holdouts.len(),
        tests: now.to_vec(),
        signals: Signals {
            code_mass,
            source_lines,
            output_bytes: run.output_bytes,
            cost_usd: run.cost_usd,
            agent_ms: run.elapsed.as_millis() as u64,
            model_calls: run.model_calls,
            tokens: run.tokens,
        },
        trace: None,
    }
}

/// Code mass and source lines of a workspace (files ending in a source extension).
fn workspace_mass(dir: &Path) -> (u64, u64) {
    let mut mass = (0, 0);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let Ok(ty) = e.file_type() else { continue };
            let path = e.path();
            if ty.is_dir() {
                if !e.file_name().to_string_lossy().starts_with('.') {
                    stack.push(path);
                }
            } else if ty.is_file()
                && path
                    .extension()
                    .and_then(|x| x.to_str())
                    .is_some_and(|x| SOURCE_EXTENSIONS.contains(&x))
                && let Ok(text) = std::fs::read_to_string(&path)
            {
                let (m, l) = code_mass(&text);
                mass.0 += m;
                mass.1 += l;
            }
        }
    }
    mass
}
