//! `gauntlet audit SUITE`: are the suite's checks able to fail? Runs every case against the
//! trivial agents of [`TrivialAgent`] (an empty answer, an echo, refuse-everything,
//! comply-with-everything, call-every-tool) and flags every case one of them passes, then
//! adds the checklist items a program can check without an agent
//! ([`gauntlet_suite::audit::lint`]); the work is `gauntlet_engine::audit`, this module
//! turns the flags into its request and prints its report. Exit codes follow the state
//! model: 0 clean, 1 a weak case, 3 warnings only, 2 a bad suite.

use std::io::Write;

use gauntlet_engine::audit::{AuditRequest, audit as run_audit};
use gauntlet_suite::audit::Severity;

use crate::cli::AuditArgs;
use crate::error::CliError;
use crate::out::Printer;

pub fn audit(args: AuditArgs) -> Result<i32, CliError> {
    let report = run_audit(&AuditRequest {
        suites: args
            .suites
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        canary: args.canary,
        allow_paths: args.allow_path,
        embeddings: args.embeddings,
        config: args.config,
    })?;
    let mut out = Printer::stdout();
    writeln!(
        out,
        "audit of {} case(s) against {} trivial agents ({})",
        report.cases,
        report.agents.len(),
        report.agents.join(", ")
    )?;
    for f in &report.findings {
        let mark = match f.severity {
            Severity::Weak => "WEAK",
            Severity::Warning => "warning",
        };
        writeln!(out, "{mark:>8} {}: {}: {}", f.case, f.item, f.detail)?;
    }
    let weak = report.weak();
    let warnings = report.findings.len() - weak;
    let flagged = report.flagged();
    let (status, code) = report.status();
    writeln!(
        out,
        "{flagged} case(s) flagged: {weak} weak, {warnings} warning(s); {} case(s) clean. Status {status} (exit {code})",
        report.cases - flagged
    )?;
    Ok(code)
}
