//! `gauntlet trajectory run FILE... --agent exec:CMD|model:SPEC`: evolving-spec trajectories
//! for coding agents. For each checkpoint a fresh coding agent (`crate::codingagent`: an exec
//! process with the exec target's handling, or a model in the built-in coding loop) gets the
//! workspace and the spec change; then every test so far runs in a fresh copy of the
//! workspace, outside the agent's reach. The trajectory's folder (tests, graders, the file)
//! is hashed before and after each agent step: any change fails the run (harness integrity).
//! Verdicts and signals are folded by `gauntlet_core::trajectory` (`TrajectoryReport`).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use gauntlet_core::redact::Redactor;
use gauntlet_core::target::ExecTargetConfig;
use gauntlet_core::trajectory::{
    CheckpointReport, IntegrityBreach, RunOutcome, SOURCE_EXTENSIONS, Signals, TestOutcome,
    TestState, TrajectoryReport, Verdict, code_mass, phase_of, phases, regressions,
};
use gauntlet_suite::trajectory::{LoadedTrajectory, load_trajectory};
use gauntlet_targets::exec::{ExecTarget, FolderEnd};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::cli::{TrajectoryArgs, TrajectoryCommand};
use crate::codingagent::{CodingAgent, LoopOpts, coding_agent_with};
use crate::error::CliError;
use crate::out::Printer;

/// Files hashed for the integrity check, at most (a bigger tree is refused).
const MAX_HARNESS_FILES: usize = 20_000;

pub fn trajectory(args: TrajectoryArgs) -> Result<i32, CliError> {
    let TrajectoryCommand::Run {
        files,
        agent,
        coding,
        out,
        json,
    } = args.command;
    let mut redactor = Redactor::default();
    let agent_target = coding_agent_with(
        &agent,
        "--agent",
        None,
        &mut redactor,
        BTreeMap::new(),
        &loop_opts(&coding),
    )?;
    let loaded: Vec<LoadedTrajectory> = files
        .iter()
        .map(|f| load_trajectory(f))
        .collect::<Result<_, _>>()
        .map_err(CliError::Diagnostics)?;
    let rt = crate::setup::runtime()?;
    let mut reports = Vec::new();
    for (i, t) in loaded.iter().enumerate() {
        let dir = match &out {
            Some(o) if loaded.len() > 1 => {
                o.join(format!("{}-{}", i + 1, slug(&t.trajectory.name)))
            }
            Some(o) => o.clone(),
            None => std::env::temp_dir().join(format!(
                "gauntlet-trajectory-{}-{}",
                std::process::id(),
                i + 1
            )),
        };
        let report = rt.block_on(run_one(
            t,
            &agent_target,
            &agent,
            &dir,
            out.is_some(),
            &mut redactor,
        ))?;
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
    let mut p = Printer::stdout();
    if json {
        let v = json!({"trajectories": reports, "phases": phases(&reports)});
        writeln!(
            p,
            "{}",
            serde_json::to_string_pretty(&v).expect("serializes")
        )?;
    } else {
        for r in &reports {
            write!(p, "{}", table(r))?;
        }
        write!(p, "{}", phase_table(&reports))?;
        if let Some(o) = &out {
            writeln!(p, "report: {}", o.display())?;
        }
    }
    let outcomes: Vec<RunOutcome> = reports.iter().map(TrajectoryReport::outcome).collect();
    Ok(if outcomes.contains(&RunOutcome::Fail) {
        1
    } else if outcomes.contains(&RunOutcome::NotAssessed) {
        3
    } else {
        0
    })
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(40)
        .collect()
}

/// Copies a folder's files (symlinks are not followed, they are skipped).
pub(crate) fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let ty = e.file_type()?;
        let dest = to.join(e.file_name());
        if ty.is_dir() {
            copy_tree(&e.path(), &dest)?;
        } else if ty.is_file() {
            std::fs::copy(e.path(), dest)?;
        }
    }
    Ok(())
}

/// Every file under `dir` (relative path) and the SHA-256 of its bytes (a symlink: of its
/// target's name), skipping `skip` (the run's own output when it lies inside).
pub(crate) fn hash_tree(dir: &Path, skip: &Path) -> std::io::Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)? {
            let e = e?;
            let path = e.path();
            if path.starts_with(skip) || e.file_name() == "__pycache__" {
                continue;
            }
            let ty = e.file_type()?;
            let rel = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .display()
                .to_string();
            if ty.is_dir() {
                stack.push(path);
            } else {
                let bytes = if ty.is_symlink() {
                    std::fs::read_link(&path)?
                        .into_os_string()
                        .into_encoded_bytes()
                } else {
                    std::fs::read(&path)?
                };
                out.insert(
                    rel,
                    Sha256::digest(&bytes)
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect::<String>(),
                );
                if out.len() > MAX_HARNESS_FILES {
                    return Err(std::io::Error::other(format!(
                        "more than {MAX_HARNESS_FILES} files in the folder of the tests and graders"
                    )));
                }
            }
        }
    }
    Ok(out)
}

pub(crate) fn changed(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> Vec<String> {
    let mut v: Vec<String> = a
        .keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect();
    v.sort();
    v.dedup();
    v.truncate(20);
    v
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

/// A test's detail after its verdict on one line: ` - first | second`, or nothing.
pub(crate) fn detail_suffix(detail: Option<&str>) -> String {
    detail
        .map(|d| format!(" - {}", d.replace('\n', " | ")))
        .unwrap_or_default()
}

pub(crate) fn clip(s: &str) -> String {
    let t = s.trim();
    let start = t.char_indices().rev().nth(400).map_or(0, |(i, _)| i);
    gauntlet_core::text::escape_controls(&t[start..]).into_owned()
}

/// The loop settings of the command line.
pub(crate) fn loop_opts(a: &crate::cli::CodingLoopArgs) -> LoopOpts {
    LoopOpts {
        max_steps: a.max_steps,
        config: a.config.clone(),
        base_url: a.base_url.clone(),
        api_key_env: a.api_key_env.clone(),
    }
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

async fn run_one(
    t: &LoadedTrajectory,
    agent: &CodingAgent,
    agent_shown: &str,
    out: &Path,
    keep_traces: bool,
    redactor: &mut Redactor,
) -> Result<TrajectoryReport, CliError> {
    let tr = &t.trajectory;
    let harness = std::fs::canonicalize(&t.dir)?;
    std::fs::create_dir_all(out)?;
    let out = std::fs::canonicalize(out)?;
    let workspace = out.join("workspace");
    if harness.starts_with(&out) || out.starts_with(&harness) {
        return Err(CliError::usage(
            "--out overlaps the trajectory's folder",
            "the agent's workspace must lie outside the tests: write the run to another folder",
        ));
    }
    let _ = std::fs::remove_dir_all(&workspace);
    match t.seed_dir() {
        Some(seed) => copy_tree(&seed, &workspace)?,
        None => std::fs::create_dir_all(&workspace)?,
    }
    let agent_limit = Duration::from_secs(tr.agent_timeout_secs.unwrap_or(300));
    let test_limit = Duration::from_secs(tr.test_timeout_secs.unwrap_or(60));
    // Each test is its own exec command, resolved against the trajectory's folder, so its
    // files are found there and never copied into the agent's workspace.
    let mut tests = Vec::new();
    for cp in &tr.checkpoints {
        for test in &cp.tests {
            let cfg = ExecTargetConfig {
                command: test.run.clone(),
                env: BTreeMap::new(),
                pass_env: Vec::new(),
                frozen_time: None,
            };
            let target = ExecTarget::new_in(&cfg, Some(&harness), redactor);
            tests.push((cp.id.clone(), test.clone(), target));
        }
    }
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
        let before = hash_tree(&harness, &out)?;
        let msg = json!({
            "type": "checkpoint",
            "protocol": 1,
            "checkpoint": cp.id,
            "index": i + 1,
            "workspace": workspace.display().to_string(),
            "spec": cp.spec,
        });
        let mut line = serde_json::to_vec(&msg).expect("serializes");
        line.push(b'\n');
        let vars = [
            ("GAUNTLET_WORKSPACE", workspace.display().to_string()),
            ("GAUNTLET_CHECKPOINT", cp.id.clone()),
            ("GAUNTLET_CHECKPOINT_INDEX", (i + 1).to_string()),
        ];
        let prompt = checkpoint_prompt(&tr.name, &cp.id, i + 1, n, &cp.spec);
        let run = agent
            .run_in(&workspace, &line, &vars, &prompt, &cp.id, agent_limit)
            .await;
        let after = hash_tree(&harness, &out)?;
        let end = run.end.clone();
        let trace = match &run.trace {
            Some(trace) if keep_traces => {
                let name = format!("{}.trace.json", slug(&cp.id));
                crate::codingagent::write_trace(&out.join(&name), trace, redactor)?;
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
        // The tests of every checkpoint so far, each in a fresh copy of the workspace.
        let mut now = Vec::new();
        for (from, test, target) in tests.iter() {
            let pos = tr
                .checkpoints
                .iter()
                .position(|c| &c.id == from)
                .unwrap_or(0);
            if pos > i {
                continue;
            }
            let (state, detail) = match target {
                Err(e) => (TestState::NotAssessed, Some(format!("cannot run: {e}"))),
                Ok(target) => {
                    let copy = out.join("test-copy");
                    let _ = std::fs::remove_dir_all(&copy);
                    copy_tree(&workspace, &copy)?;
                    let vars = [
                        ("GAUNTLET_WORKSPACE", copy.display().to_string()),
                        ("GAUNTLET_TESTS", harness.display().to_string()),
                    ];
                    let r = target.run_in(&copy, b"", &vars, test_limit).await;
                    let _ = std::fs::remove_dir_all(&copy);
                    match r.end {
                        FolderEnd::Exited(0) => (TestState::Pass, None),
                        FolderEnd::Exited(_) | FolderEnd::Killed => (
                            TestState::Fail,
                            Some(clip(&format!("{}\n{}", r.stdout, r.stderr))),
                        ),
                        FolderEnd::TimedOut => (
                            TestState::NotAssessed,
                            Some(format!("timed out after {}s", test_limit.as_secs())),
                        ),
                        FolderEnd::NotStarted(why) => (TestState::NotAssessed, Some(why)),
                    }
                }
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
        let (code_mass, source_lines) = workspace_mass(&workspace);
        let holdouts: Vec<&TestOutcome> = now.iter().filter(|t| t.holdout).collect();
        let cpr = CheckpointReport {
            id: cp.id.clone(),
            index: i + 1,
            phase: phase_of(i + 1, n),
            agent: end,
            strict: Verdict::of(now.iter().map(|t| &t.state)),
            isolated: Verdict::of(now.iter().filter(|t| t.from == cp.id).map(|t| &t.state)),
            core: Verdict::of(now.iter().filter(|t| t.core).map(|t| &t.state)),
            regressions: regressions(&previous, &now, &cp.id),
            holdout_passed: holdouts
                .iter()
                .filter(|t| t.state == TestState::Pass)
                .count(),
            holdout_total: holdouts.len(),
            tests: now.clone(),
            signals: Signals {
                code_mass,
                source_lines,
                output_bytes: run.output_bytes,
                cost_usd: run.cost_usd,
                agent_ms: run.elapsed.as_millis() as u64,
                model_calls: run.model_calls,
                tokens: run.tokens,
            },
            trace,
        };
        report.checkpoints.push(cpr);
        previous = now;
    }
    Ok(report)
}

fn table(r: &TrajectoryReport) -> String {
    let mut s = format!("trajectory `{}` ({}), agent {}\n", r.name, r.file, r.agent);
    s.push_str(&format!(
        "{:<6} {:<6} {:<12} {:<12} {:<12} {:<12} {:>8} {:>8} {:>9} {:>8} {:>8}\n",
        "cp",
        "phase",
        "agent",
        "strict",
        "isolated",
        "core",
        "holdout",
        "mass",
        "output B",
        "cost $",
        "secs"
    ));
    for c in &r.checkpoints {
        s.push_str(&format!(
            "{:<6} {:<6} {:<12} {:<12} {:<12} {:<12} {:>8} {:>8} {:>9} {:>8} {:>8.1}\n",
            c.id,
            c.phase.as_str(),
            c.agent.word(),
            c.strict.as_str(),
            c.isolated.as_str(),
            c.core.as_str(),
            format!("{}/{}", c.holdout_passed, c.holdout_total),
            c.signals.code_mass,
            c.signals.output_bytes,
            c.signals.cost_usd.map_or("-".into(), |v| format!("{v:.4}")),
            c.signals.agent_ms as f64 / 1000.0,
        ));
    }
    for c in r.checkpoints.len()..r.declared {
        s.push_str(&format!(
            "{:<6} NOT_ASSESSED (not run)\n",
            format!("C{}", c + 1)
        ));
    }
    for c in &r.checkpoints {
        if let Some(note) = c.agent.note() {
            s.push_str(&format!("  {}: {}\n", c.id, clip(&note)));
        }
        for t in c.tests.iter().filter(|t| t.state != TestState::Pass) {
            s.push_str(&format!(
                "  {} {} ({}): {}{}\n",
                c.id,
                t.id,
                t.from,
                if t.state == TestState::Fail {
                    "FAIL"
                } else {
                    "NOT_ASSESSED"
                },
                detail_suffix(t.detail.as_deref())
            ));
        }
    }
    let regs = r.regressions();
    if regs.is_empty() {
        s.push_str("regressions: none\n");
    } else {
        s.push_str(&format!(
            "REGRESSION: {} earlier test(s) broke: {}\n",
            regs.len(),
            regs.join(", ")
        ));
    }
    if let Some(v) = r.completion() {
        s.push_str(&format!(
            "completion (last checkpoint's own tests): {}\n",
            v.as_str()
        ));
    }
    if let Some(b) = &r.integrity {
        s.push_str(&format!(
            "INTEGRITY: the agent changed the tests or graders during {}: {}; the run failed there\n",
            b.checkpoint,
            b.changed.join(", ")
        ));
    }
    s.push_str(&format!(
        "result: {}\n\n",
        match r.outcome() {
            RunOutcome::Pass => "PASS",
            RunOutcome::Fail => "FAIL",
            RunOutcome::NotAssessed => "NOT_ASSESSED",
        }
    ));
    s
}

fn phase_table(reports: &[TrajectoryReport]) -> String {
    let mut s = format!(
        "{:<6} {:>5} {:>7} {:>9} {:>13} {:>12} {:>10} {:>10}\n",
        "phase", "cps", "strict", "isolated", "not assessed", "regressions", "mass", "output B"
    );
    for p in phases(reports) {
        s.push_str(&format!(
            "{:<6} {:>5} {:>7} {:>9} {:>13} {:>12} {:>10} {:>10}\n",
            p.phase.as_str(),
            p.checkpoints,
            p.strict_pass,
            p.isolated_pass,
            p.not_assessed,
            p.regressions,
            p.mean_code_mass.map_or("-".into(), |v| format!("{v:.0}")),
            p.mean_output_bytes
                .map_or("-".into(), |v| format!("{v:.0}")),
        ));
    }
    s
}
