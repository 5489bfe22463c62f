//! `gauntlet impact map|affected|task`: builds the [`ImpactMap`] of a repository
//! (`gauntlet_coding::impact`) and prints it, or the tests a set of changed files affects,
//! or runs a task file against a coding agent (`gauntlet_coding::task::run`) and prints its
//! report ([`TaskRunReport`]: completion and regression rates apart), on the terminal or as
//! JSON.

use std::io::Write;
use std::path::Path;

use gauntlet_coding::impact::{self, ImpactMap, Lang};
use gauntlet_coding::task::file::load_tasks;
use gauntlet_coding::task::run::{agent_of, run_tasks};
use gauntlet_coding::task::{EvidenceCheck, RunOutcome, TaskMode, TaskReport, TaskRunReport};
use gauntlet_coding::text::{clip, detail_suffix};
use gauntlet_coding::trajectory::TestState;
use gauntlet_core::redact::Redactor;

use crate::cli::{ImpactArgs, ImpactCommand, ImpactLang, ImpactTaskMode};
use crate::error::CliError;
use crate::out::{Printer, shown};

pub fn impact(args: ImpactArgs) -> Result<i32, CliError> {
    match args.command {
        ImpactCommand::Map {
            repo,
            lang,
            no_coverage,
            json,
        } => {
            let m = build(&repo, lang, !no_coverage)?;
            let mut out = Printer::stdout();
            if json {
                out.json(&m)?;
                return Ok(0);
            }
            writeln!(
                out,
                "{} tests, {} source files covered ({})",
                m.tests.len(),
                m.sources.len(),
                m.lang
            )?;
            for (src, links) in &m.sources {
                writeln!(out, "{}", shown(src))?;
                for l in links {
                    writeln!(out, "  {} [{}]", shown(&l.test), l.method.as_str())?;
                }
            }
            print_skipped(&mut out, &m)?;
            Ok(0)
        }
        ImpactCommand::Affected {
            repo,
            lang,
            changed,
            diff,
            no_coverage,
            json,
        } => {
            let changed = match diff {
                Some(base) => impact::git_changed(&repo, &base)?,
                None => changed,
            };
            let m = build(&repo, lang, !no_coverage)?;
            let a = m.affected(&changed);
            let mut out = Printer::stdout();
            if json {
                let v = serde_json::json!({
                    "changed": changed,
                    "tests": a.tests,
                    "uncovered": a.uncovered,
                    "skipped": m.skipped,
                });
                out.json(&v)?;
                return Ok(0);
            }
            for t in a.tests.keys() {
                writeln!(out, "{}", shown(t))?;
            }
            for u in &a.uncovered {
                writeln!(
                    out,
                    "no test covers {} (its change is not assessed by any test)",
                    shown(u)
                )?;
            }
            print_skipped(&mut out, &m)?;
            Ok(0)
        }
        ImpactCommand::Task {
            file,
            mode,
            agent,
            coding,
            out,
            json,
        } => task(&file, mode, agent, &coding, out, json),
    }
}

fn task(
    file: &Path,
    mode: Option<ImpactTaskMode>,
    agent: Option<String>,
    coding: &crate::cli::CodingLoopArgs,
    out: Option<std::path::PathBuf>,
    json: bool,
) -> Result<i32, CliError> {
    let loaded = load_tasks(file).map_err(CliError::Diagnostics)?;
    // `--agent` is resolved against the working directory, the file's `agent` against the
    // file's folder.
    let choice = agent_of(&loaded, agent.as_deref())?;
    let mut redactor = Redactor::default();
    let agent_target = crate::agents::coding_agent(
        &choice.spec,
        "agent",
        choice.base.as_deref(),
        &mut redactor,
        choice.extra,
        coding,
    )?;
    let mode = mode.map(|m| match m {
        ImpactTaskMode::Given => TaskMode::Given,
        ImpactTaskMode::Hidden => TaskMode::Hidden,
    });
    let rt = crate::setup::runtime()?;
    let report = rt.block_on(run_tasks(
        &loaded,
        mode,
        &agent_target,
        &choice.spec,
        out.as_deref(),
        &mut redactor,
    ))?;
    let mut p = Printer::stdout();
    if json {
        p.json(&report)?;
    } else {
        write!(p, "{}", task_table(&report))?;
        if let Some(o) = &out {
            writeln!(p, "report: {}", o.join("tasks.json").display())?;
        }
    }
    Ok(match report.outcome() {
        RunOutcome::Fail => 1,
        RunOutcome::NotAssessed => 3,
        RunOutcome::Pass => 0,
    })
}

fn state_word(s: TestState) -> &'static str {
    match s {
        TestState::Pass => "PASS",
        TestState::Fail => "FAIL",
        TestState::NotAssessed => "NOT_ASSESSED",
    }
}

/// The notes under the table for one task: why it is not done, what broke, what was edited.
fn task_notes(t: &TaskReport) -> String {
    let mut s = String::new();
    let line = |s: &mut String, text: String| {
        s.push_str(&format!("  {}: {}\n", shown(&t.id), shown(&text)));
    };
    if let Some(note) = t.agent.note() {
        line(&mut s, clip(&note));
    }
    for u in &t.uncovered {
        line(
            &mut s,
            format!("no test covers {u} (its change is not assessed by any existing test)"),
        );
    }
    for a in t
        .acceptance_tests
        .iter()
        .filter(|a| a.state != TestState::Pass)
    {
        line(
            &mut s,
            format!(
                "acceptance {}: {}{}",
                a.id,
                state_word(a.state),
                detail_suffix(a.detail.as_deref())
            ),
        );
    }
    match &t.evidence {
        EvidenceCheck::Matches => {}
        EvidenceCheck::Missing { reason } => line(&mut s, format!("no evidence: {reason}")),
        EvidenceCheck::Incomplete { missing } => line(
            &mut s,
            format!("incomplete evidence: no result for {}", missing.join(", ")),
        ),
        EvidenceCheck::False { contradicted } => {
            for c in contradicted {
                line(
                    &mut s,
                    format!(
                        "FALSE EVIDENCE: claimed {} {}, gauntlet observed {}",
                        c.id,
                        c.claimed,
                        state_word(c.observed)
                    ),
                );
            }
        }
    }
    for r in &t.regressions {
        line(
            &mut s,
            format!(
                "REGRESSION {} ({}){}",
                r.id,
                if r.affected {
                    "affected"
                } else {
                    "not predicted by the map"
                },
                detail_suffix(r.detail.as_deref())
            ),
        );
    }
    for n in &t.not_assessed {
        line(&mut s, format!("{n}: passed before, could not run after"));
    }
    if !t.edited_tests.is_empty() {
        line(
            &mut s,
            format!(
                "edited test files (graded with the pristine copies instead): {}",
                t.edited_tests.join(", ")
            ),
        );
    }
    if !t.unverified_claims.is_empty() {
        line(
            &mut s,
            format!(
                "claims on tests gauntlet did not run (not counted): {}",
                t.unverified_claims.join(", ")
            ),
        );
    }
    s
}

fn task_table(r: &TaskRunReport) -> String {
    let mut s = format!(
        "impact tasks `{}` ({}), mode {}, agent {}\nbaseline: {} repository test(s) passing before any task\n",
        shown(&r.name),
        shown(&r.file),
        r.mode.as_str(),
        shown(&r.agent),
        r.baseline_passing
    );
    s.push_str(&format!(
        "{:<16} {:<12} {:>8} {:<13} {:<14} {:<13} {:>11}\n",
        "task", "agent", "affected", "acceptance", "evidence", "completion", "regressions"
    ));
    for t in &r.tasks {
        s.push_str(&format!(
            "{:<16} {:<12} {:>8} {:<13} {:<14} {:<13} {:>11}\n",
            shown(&t.id),
            t.agent.word(),
            t.affected.len(),
            t.acceptance.as_str(),
            t.evidence.describe(),
            t.completion.as_str(),
            t.regressions.len()
        ));
    }
    for t in r.tasks.len()..r.declared {
        s.push_str(&format!("task {} NOT_ASSESSED (not run)\n", t + 1));
    }
    for t in &r.tasks {
        s.push_str(&task_notes(t));
    }
    for n in &r.not_analysed {
        s.push_str(&format!("not analysed: {}\n", shown(n)));
    }
    if let Some(b) = &r.integrity {
        s.push_str(&format!(
            "INTEGRITY: the tests, graders or pristine repository changed during task {}: {}; the run failed there\n",
            shown(&b.task),
            shown(&b.changed.join(", "))
        ));
    }
    s.push_str(&format!(
        "completion: {} tasks done (acceptance tests pass and the evidence matches)\n",
        r.completion_rate().describe()
    ));
    s.push_str(&format!(
        "regression: {} tasks broke previously passing tests\n",
        r.regression_rate().describe()
    ));
    s.push_str(&format!(
        "result: {}\n",
        match r.outcome() {
            RunOutcome::Pass => "PASS",
            RunOutcome::Fail => "FAIL",
            RunOutcome::NotAssessed => "NOT_ASSESSED",
        }
    ));
    s
}

fn print_skipped(out: &mut Printer, m: &ImpactMap) -> Result<(), CliError> {
    for s in &m.skipped {
        writeln!(
            out,
            "not analysed: {}: {}",
            shown(&s.path),
            shown(&s.reason)
        )?;
    }
    Ok(())
}

fn build(repo: &Path, lang: ImpactLang, coverage: bool) -> Result<ImpactMap, CliError> {
    let lang = match lang {
        ImpactLang::Python => Some(Lang::Python),
        ImpactLang::Rust => Some(Lang::Rust),
        ImpactLang::Auto => None,
    };
    Ok(impact::build_for(repo, lang, coverage)?)
}
