//! `gauntlet trajectory run FILE... --agent exec:CMD|model:SPEC`: evolving-spec trajectories
//! for coding agents. The files are read and run by `gauntlet_coding::trajectory`
//! (`run::run_all`: a fresh coding agent per checkpoint, the tests in copies of the
//! workspace, the harness folder hashed around each agent step); this module prints each
//! `TrajectoryReport` as a table, the phases across them, or JSON, and picks the exit code.

use std::collections::BTreeMap;
use std::io::Write;

use gauntlet_coding::text::{clip, detail_suffix};
use gauntlet_coding::trajectory::file::{LoadedTrajectory, load_trajectory};
use gauntlet_coding::trajectory::run::run_all;
use gauntlet_coding::trajectory::{RunOutcome, TestState, TrajectoryReport, phases};
use gauntlet_core::redact::Redactor;
use serde_json::json;

use crate::cli::{TrajectoryArgs, TrajectoryCommand};
use crate::error::CliError;
use crate::out::Printer;

pub fn trajectory(args: TrajectoryArgs) -> Result<i32, CliError> {
    let TrajectoryCommand::Run {
        files,
        agent,
        coding,
        out,
        json,
    } = args.command;
    let mut redactor = Redactor::default();
    let agent_target = crate::agents::coding_agent(
        &agent,
        "--agent",
        None,
        &mut redactor,
        BTreeMap::new(),
        &coding,
    )?;
    let loaded: Vec<LoadedTrajectory> = files
        .iter()
        .map(|f| load_trajectory(f))
        .collect::<Result<_, _>>()
        .map_err(CliError::Diagnostics)?;
    let rt = crate::setup::runtime()?;
    let reports = rt.block_on(run_all(
        &loaded,
        &agent_target,
        &agent,
        out.as_deref(),
        &mut redactor,
    ))?;
    let mut p = Printer::stdout();
    if json {
        let v = json!({"trajectories": reports, "phases": phases(&reports)});
        p.json(&v)?;
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
