//! The terminal: [`TerminalReporter`] prints case lines as a run goes, and
//! [`print_summary`] the table by category and the summary once the run is recorded, to
//! stdout; a progress bar goes to stderr on a TTY only. Colour follows
//! `anstream` (off when stdout is not a terminal, off with `NO_COLOR`), and never carries
//! meaning alone: every coloured word is also spelled out. Names, reasons and evidence quote
//! suites and models, so they are printed through [`shown`]: a model's own colour or
//! cursor sequences come out as visible escapes.

use std::io::Write;
use std::sync::Arc;

use anstyle::{AnsiColor, Style};
use gauntlet_core::event::{EventKind, ReportError, Reporter, RunEvent};
use gauntlet_core::result::{CaseResult, CaseStatus};
use gauntlet_core::score::Status;
use gauntlet_core::summary::Summary;
use gauntlet_core::verdict::Verdict;
use gauntlet_report::mask::{CanaryMask, Quoted};
use gauntlet_report::text::{
    ScoreStyle, case_security_line, clip, failed_checks, failure_reason, harm_lines, score_parts,
    score_text, security_lines,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use gauntlet_engine::{Notice, RunOutcome};

use crate::error::CliError;
use crate::out::shown;

/// Which case lines to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verbosity {
    /// None; only the summary.
    Quiet,
    /// Non-passing cases; passing ones too when the run is small.
    Normal,
    /// Every case with its verdicts.
    Verbose,
}

/// Runs with at most this many cases show passing cases too at normal verbosity.
const SMALL_RUN: usize = 100;

pub struct TerminalReporter {
    out: crate::out::Printer,
    verbosity: Verbosity,
    planned: usize,
    bar: Option<ProgressBar>,
    name_width: usize,
    /// The run's canaries, masked in what the case lines quote as in summary.md and JUnit:
    /// a CI log is read by others too.
    mask: Option<Arc<CanaryMask>>,
}

const fn style(c: AnsiColor) -> Style {
    Style::new().fg_color(Some(anstyle::Color::Ansi(c))).bold()
}
const GREEN: Style = style(AnsiColor::Green);
const RED: Style = style(AnsiColor::Red);
const YELLOW: Style = style(AnsiColor::Yellow);
const MAGENTA: Style = style(AnsiColor::Magenta);
const CYAN: Style = style(AnsiColor::Cyan);
const BOLD: Style = Style::new().bold();
const DIM: Style = Style::new().dimmed();

fn case_style(s: CaseStatus) -> Style {
    match s {
        CaseStatus::Pass => GREEN,
        CaseStatus::Fail => RED,
        CaseStatus::Conditional => YELLOW,
        CaseStatus::Error | CaseStatus::NotAssessed => MAGENTA,
        CaseStatus::Blocked | CaseStatus::Skipped => CYAN,
    }
}

fn status_style(s: Status) -> Style {
    match s {
        Status::Pass => GREEN,
        Status::Fail => RED,
        Status::Conditional => YELLOW,
        Status::Inconclusive => MAGENTA,
    }
}

impl TerminalReporter {
    pub fn new(verbosity: Verbosity) -> Self {
        TerminalReporter {
            out: crate::out::Printer::stdout(),
            verbosity,
            planned: 0,
            bar: None,
            name_width: 50,
            mask: None,
        }
    }

    fn show(&self, r: &CaseResult) -> bool {
        match self.verbosity {
            Verbosity::Quiet => false,
            Verbosity::Verbose => true,
            // A passing case with a failed check is a finding (summary.md and JUnit list it
            // too), so it is shown however large the run.
            Verbosity::Normal => {
                r.status != CaseStatus::Pass
                    || self.planned <= SMALL_RUN
                    || !failed_checks(r).is_empty()
            }
        }
    }

    fn line(&mut self, r: &CaseResult) -> std::io::Result<()> {
        let st = case_style(r.status);
        let secs = r.duration_ms() as f64 / 1000.0;
        let score = score_text(r);
        let mut text = format!(
            "{st}{:>12}{st:#} {DIM}[{secs:>8.3}s]{DIM:#} {:<w$} {score:>9}",
            r.status.as_str(),
            shown(&r.case.name),
            w = self.name_width
        );
        if r.trials.len() > 1 {
            text.push_str(&format!(
                "  {}/{} trials passed",
                r.passed_trials,
                r.trials.len()
            ));
            // A trial a check could not assess did not fail: say how many there were.
            let unassessed = r
                .trials
                .iter()
                .filter(|t| t.status == CaseStatus::NotAssessed)
                .count();
            if unassessed > 0 {
                text.push_str(&format!(", {unassessed} not assessed"));
            }
        }
        // A check that failed while the case still passed (a soft check of a quality case):
        // counted on the case line, and named under it as a failure's reasons are.
        let failed_in_pass = match r.status {
            CaseStatus::Pass => failed_checks(r),
            _ => Vec::new(),
        };
        if !failed_in_pass.is_empty() {
            let n = failed_in_pass.len();
            text.push_str(&format!(
                "  {YELLOW}({n} check{} failed){YELLOW:#}",
                if n == 1 { "" } else { "s" }
            ));
        }
        // A security case names its verdicts apart: the attack, the refusal policy, the task.
        if (r.status != CaseStatus::Pass || self.verbosity == Verbosity::Verbose)
            && let Some(line) = r.security.as_ref().and_then(case_security_line)
        {
            text.push_str(&format!("\n{:>14}{DIM}{line}{DIM:#}", ""));
        }
        if self.verbosity != Verbosity::Verbose {
            let why = if r.status == CaseStatus::Pass {
                failed_in_pass.into_iter().take(3).collect()
            } else {
                reasons(r, 3)
            };
            for why in why {
                text.push_str(&format!(
                    "\n{:>14}{DIM}{}{DIM:#}",
                    "",
                    shown(&clip(&why, 160))
                ));
            }
        }
        if self.verbosity == Verbosity::Verbose {
            for t in &r.trials {
                for v in &t.verdicts {
                    text.push_str(&format!("\n{:>14}{}", "", verdict_line(v)));
                }
            }
        }
        text.push('\n');
        let out = &mut self.out;
        match &self.bar {
            Some(b) => b.suspend(|| out.write_all(text.as_bytes())),
            None => out.write_all(text.as_bytes()),
        }
    }
}

/// One verdict as `-v` shows it: `ok`, `FAIL` with its score, or `n/a` for a check that
/// could not decide, which has no score (a 0/3 beside it would read as a failure; report.json
/// and summary.md count it as not assessed too).
fn verdict_line(v: &Verdict) -> String {
    let (mark, score) = if !v.assessed {
        ("n/a ", " not assessed".to_owned())
    } else if v.passed {
        ("ok  ", format!(" {}/3", v.score))
    } else {
        ("FAIL", format!(" {}/3", v.score))
    };
    format!(
        "{mark} {} [{}{score}{}{}] {}",
        shown(&v.label),
        v.dimension,
        if v.hard_fail { " hard" } else { "" },
        if v.gating { "" } else { " triage" },
        shown(&clip(&v.evidence, 140))
    )
}

/// Prints the end of a run: the table by category, the security figures (the attack success
/// rate first), the summary line, the state with its reasons and where the reports are. The
/// binary prints it once every reporter (the run
/// store among them) has recorded the run, so that no state is shown that was not stored.
pub fn print_summary(s: &Summary, reports_dir: Option<&str>) -> std::io::Result<()> {
    {
        let mut out = crate::out::Printer::stdout();
        let o = &mut out;
        print_categories(o, s)?;
        writeln!(o, "{DIM}{}{DIM:#}", "─".repeat(80))?;
        // With security cases, the headline is the attack success rate; the refusal policy
        // and the utilities follow it, and the counts of cases come after.
        // A matrix run's security figures are its columns' (in the table below): pooled
        // over different targets they would describe none of them.
        if let Some(sec) = s.security.as_ref().filter(|_| s.columns.is_empty()) {
            print_security(o, sec)?;
            print_harm(o, sec)?;
        }
        writeln!(
            o,
            "{BOLD}{:>12}{BOLD:#} [{:>8.3}s] {} case{}: {GREEN}{} passed{GREEN:#}, {RED}{} failed{RED:#}, {YELLOW}{} conditional{YELLOW:#}, {MAGENTA}{} errors{MAGENTA:#}, {CYAN}{} blocked{CYAN:#}{}",
            "Summary",
            s.duration_ms as f64 / 1000.0,
            s.cases,
            if s.cases == 1 { "" } else { "s" },
            s.passed,
            s.failed,
            s.conditional,
            s.errors,
            s.blocked,
            {
                let mut more = String::new();
                if !s.columns.is_empty() {
                    more.push_str(&format!(" ({} columns together)", s.columns.len()));
                }
                if s.not_assessed > 0 {
                    more.push_str(&format!(", {} not assessed", s.not_assessed));
                }
                if s.quarantined > 0 {
                    more.push_str(&format!(", {} quarantined", s.quarantined));
                }
                more
            }
        )?;
        let mut scores = score_parts(s, ScoreStyle::Terminal);
        if s.hard_fails > 0 {
            scores.push(format!("{} hard policy failure(s)", s.hard_fails));
        }
        if !scores.is_empty() {
            writeln!(o, "{:>12} {}", "", scores.join(" · "))?;
        }
        if let Some(j) = &s.judge {
            // Counted apart: the judge's calls and tokens are the grader's cost, not the agent's.
            writeln!(
                o,
                "{BOLD}{:>12}{BOLD:#} {} call{} ({} cached, {} without a verdict), {} tokens, {} verdict{} gating, {} triage",
                "Judges",
                j.calls,
                if j.calls == 1 { "" } else { "s" },
                j.cached,
                j.errors,
                j.input_tokens + j.output_tokens,
                j.gating,
                if j.gating == 1 { "" } else { "s" },
                j.triage
            )?;
        }
        // Hold-out slices: rates only, never a case (the cases never reached this printer).
        for (i, h) in s.holdout.iter().enumerate() {
            writeln!(
                o,
                "{BOLD}{:>12}{BOLD:#} {}",
                if i == 0 { "Hold-out" } else { "" },
                shown(&gauntlet_report::text::holdout_line(h))
            )?;
        }
        if let Some(sp) = &s.spend {
            // The agent's and the judges' spend apart, then what the run cost in all.
            writeln!(o, "{BOLD}{:>12}{BOLD:#} agent {}", "Spend", sp.agent.line())?;
            for (check, j) in &sp.judges {
                writeln!(o, "{:>12} judge {check}: {}", "", j.line())?;
            }
            // Attacker and rewriter calls cost like the agent's: a red team's bill has them.
            for (role, h) in &sp.helpers {
                writeln!(o, "{:>12} {role} {}", "", h.line())?;
            }
            writeln!(o, "{:>12} total {}", "", sp.total.cost_label())?;
            if sp.replayed_trials > 0 {
                writeln!(
                    o,
                    "{:>12} {} trial(s) replayed from the response cache (evidence replay, not a fresh observation)",
                    "", sp.replayed_trials
                )?;
            }
        }
        // A matrix run: a row per column, each with the state its own fold decided.
        for (i, line) in gauntlet_report::text::column_table(s).iter().enumerate() {
            let head = if i == 0 { "Columns" } else { "" };
            writeln!(o, "{BOLD}{head:>12}{BOLD:#} {}", shown(line))?;
        }
        let st = status_style(s.status);
        writeln!(
            o,
            "{BOLD}{:>12}{BOLD:#} {st}{}{st:#} (exit {})",
            "Status",
            s.status,
            s.status.exit_code()
        )?;
        for r in &s.reasons {
            writeln!(o, "{:>14}{}", "- ", shown(r))?;
        }
        if let Some(d) = reports_dir {
            // Every run writes every format; the line names them from the same list.
            let files: Vec<&str> = gauntlet_report::Format::ALL
                .iter()
                .map(|f| f.file_name())
                .collect();
            writeln!(o, "{:>12} {d}/{}", "Reports", files.join(", "))?;
        }
        o.flush()
    }
}

/// The table by category, when there is more than one category or any OWASP one.
fn print_categories(o: &mut crate::out::Printer, s: &Summary) -> std::io::Result<()> {
    if !(s.by_category.iter().any(|c| c.category.starts_with("LLM")) || s.by_category.len() > 1) {
        return Ok(());
    }
    writeln!(o)?;
    writeln!(
        o,
        "{BOLD}{:<44} {:>6} {:>6} {:>6} {:>6} {:>6} {:>8}{BOLD:#}",
        "category", "cases", "pass", "fail", "cond", "error", "blocked"
    )?;
    for c in &s.by_category {
        let name = clip(&c.name(), 44);
        let name = shown(&name);
        let [total, passed, failed, conditional, errors, blocked] = c.counts();
        writeln!(
            o,
            "{name:<44} {total:>6} {passed:>6} {failed:>6} {conditional:>6} {errors:>6} {blocked:>8}"
        )?;
    }
    Ok(())
}

/// The security figures, the attack success rate first (see `docs/redteam.md`).
fn print_security(
    o: &mut crate::out::Printer,
    s: &gauntlet_core::summary::SecuritySummary,
) -> std::io::Result<()> {
    for (i, (label, text)) in security_lines(s).into_iter().enumerate() {
        writeln!(
            o,
            "{BOLD}{:>12}{BOLD:#} {label}: {}",
            if i == 0 { "Security" } else { "" },
            shown(&text)
        )?;
    }
    Ok(())
}

/// The attack success rate per harm category, when the run has harm-categorised cases.
fn print_harm(
    o: &mut crate::out::Printer,
    s: &gauntlet_core::summary::SecuritySummary,
) -> std::io::Result<()> {
    for (i, h) in harm_lines(s).into_iter().enumerate() {
        writeln!(
            o,
            "{BOLD}{:>12}{BOLD:#} {}: {}",
            if i == 0 { "Harm" } else { "" },
            shown(&h.id),
            shown(&h.text)
        )?;
    }
    Ok(())
}

/// Up to `n` reasons a case did not pass: errors first, then hard failures, then other
/// failing gating verdicts, each once.
fn reasons(r: &CaseResult, n: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    fn push(out: &mut Vec<String>, s: String) {
        if !s.is_empty() && !out.contains(&s) {
            out.push(s);
        }
    }
    for t in &r.trials {
        if let Some(e) = &t.error {
            push(&mut out, format!("{}: {e}", t.outcome.as_str()));
        }
    }
    for t in &r.trials {
        for v in t.verdicts.iter().filter(|v| v.gating && !v.assessed) {
            push(
                &mut out,
                format!("{} not assessed: {}", v.label, v.evidence),
            );
        }
    }
    for t in &r.trials {
        for v in t
            .verdicts
            .iter()
            .filter(|v| v.gating && !v.passed && v.hard_fail)
        {
            push(&mut out, format!("{}: {}", v.label, v.evidence));
        }
    }
    for t in &r.trials {
        for v in t
            .verdicts
            .iter()
            .filter(|v| v.counts() && !v.passed && !v.hard_fail)
        {
            push(&mut out, format!("{}: {}", v.label, v.evidence));
        }
    }
    if out.is_empty() {
        // Nothing failed outright: show what kept the score down (a weak refusal, say).
        for t in &r.trials {
            for v in t.verdicts.iter().filter(|v| v.gating && v.score < 3) {
                push(
                    &mut out,
                    format!("{} scored {}/3: {}", v.label, v.score, v.evidence),
                );
            }
        }
    }
    if out.is_empty() {
        out.push(failure_reason(r));
    }
    out.retain(|s| !s.is_empty());
    out.truncate(n);
    out
}

impl Reporter for TerminalReporter {
    fn on_event(&mut self, ev: &RunEvent) -> Result<(), ReportError> {
        match &ev.kind {
            EventKind::RunStarted { manifest } => {
                self.planned = manifest.planned_cases;
                let mask = CanaryMask::of_event(
                    ev,
                    manifest,
                    Some(gauntlet_engine::run::canary_disclosures),
                );
                let suites: Vec<&str> = manifest.suites.iter().map(|s| s.name.as_str()).collect();
                writeln!(
                    self.out,
                    "{BOLD}{:>12}{BOLD:#} {} case{} · {} · target {} · k={}{}",
                    "Starting",
                    manifest.planned_cases,
                    if manifest.planned_cases == 1 { "" } else { "s" },
                    shown(&mask.text(&suites.join(", "))),
                    shown(&mask.text(&manifest.target.label)),
                    manifest.k,
                    if manifest.filters.is_empty() {
                        String::new()
                    } else {
                        format!(" · {}", manifest.filters.join(" "))
                    }
                )?;
                let bar = ProgressBar::with_draw_target(
                    Some(manifest.planned_cases as u64),
                    ProgressDrawTarget::stderr(),
                );
                if !bar.is_hidden() && manifest.planned_cases > 20 {
                    bar.set_style(
                        ProgressStyle::with_template(
                            "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} cases {per_sec}",
                        )
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                    );
                    self.bar = Some(bar);
                }
                self.mask = Some(mask);
            }
            EventKind::TrialFinished { .. } => {}
            EventKind::CaseFinished { result } => {
                if let Some(b) = &self.bar {
                    b.inc(1);
                }
                if self.show(result) {
                    let shown = match &self.mask {
                        Some(m) if self.verbosity == Verbosity::Verbose => m.result_of(ev, result),
                        Some(m) => m.quoted_of(ev, result),
                        None => Quoted::Own(result),
                    };
                    self.line(&shown)?;
                }
            }
            EventKind::Warning { message } => {
                let text = format!("{YELLOW}{:>12}{YELLOW:#} {}\n", "warning", shown(message));
                let out = &mut self.out;
                match &self.bar {
                    Some(b) => b.suspend(|| out.write_all(text.as_bytes()))?,
                    None => out.write_all(text.as_bytes())?,
                }
            }
            EventKind::RunFinished { .. } => {
                if let Some(b) = self.bar.take() {
                    b.finish_and_clear();
                }
                self.out.flush()?;
            }
        }
        Ok(())
    }
}

/// Prints a warning or a note the run API handed over.
pub fn show_notice(notice: Notice) {
    match notice {
        Notice::Warning(w) => crate::out::warn(&w),
        Notice::Note(n) => crate::out::note(&n),
    }
}

/// Prints what is said after a run: when a reporter failed, its errors and no state (the
/// code is then 2); else the summary (with `summary`) and the notes of the outcome. Returns
/// the exit code.
pub fn print_outcome(outcome: &RunOutcome, summary: bool) -> Result<i32, CliError> {
    if !outcome.reporter_errors.is_empty() {
        // The state is not printed: a report or the run store did not record it.
        for e in &outcome.reporter_errors {
            CliError::plain(format!(
                "failed to record the run (a report or the run store): {e}"
            ))
            .print();
        }
        return Ok(gauntlet_core::score::EXIT_USAGE);
    }
    if summary {
        let reports_dir = outcome.reports.as_ref().map(|o| o.display().to_string());
        print_summary(&outcome.summary, reports_dir.as_deref())?;
    }
    for n in &outcome.after {
        show_notice(n.clone());
    }
    Ok(outcome.summary.status.exit_code())
}
