//! `summary.md`: [`MarkdownReport`], a summary that fits a pull-request comment or a CI step
//! summary: the state and why, counts, the table by category, the findings (bounded), and
//! for the first few findings the failing trial's trace and verdicts in a folded block.
//!
//! The page quotes suite and model text where Markdown is live; every such text goes
//! through [`crate::md`], so it renders as the words it is: no mentions, images, links or
//! raw control bytes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gauntlet_core::event::{EventKind, ReportError, Reporter, RunEvent, RunManifest};
use gauntlet_core::result::{CaseResult, CaseStatus};
use gauntlet_core::score::Status;
use gauntlet_core::summary::Summary;

use crate::mask::{CanaryMask, DisclosureFinder};
use crate::md;
use crate::text::{
    AtomicFile, ScoreStyle, case_security_line, failed_checks, failure_reason, score_parts,
    score_text, security_lines,
};

/// How many non-passing cases are listed; the rest are counted.
pub const MAX_FINDINGS: usize = 50;

/// How many findings get their trace shown, and how many lines of it.
pub const MAX_TRACES: usize = 10;
const MAX_TRACE_LINES: usize = 60;

struct Finding {
    name: String,
    quarantined: bool,
    status: CaseStatus,
    score: String,
    why: String,
    trace: Option<String>,
}

/// A finding row of the summary page.
pub struct FindingRow {
    /// The case's display name.
    pub name: String,
    /// Its status.
    pub status: String,
    /// Its score.
    pub score: String,
    /// Why it did not pass.
    pub why: String,
    /// The failing trial's case, trace and verdicts, when shown.
    pub trace: Option<String>,
}

/// Writes `summary.md`.
pub struct MarkdownReport {
    dir: PathBuf,
    manifest: Option<RunManifest>,
    findings: Vec<Finding>,
    more: usize,
    /// Masks the run's canary in what is quoted (the page becomes a pull-request comment).
    mask: Arc<CanaryMask>,
    /// Finds the canaries in disguise, when the caller lends a finder.
    disclosures: Option<DisclosureFinder>,
}

/// Failures first, then passing cases with a failed check; by name within each.
fn finding_order(passed: bool, name: &str) -> (bool, &str) {
    (passed, name)
}

impl MarkdownReport {
    /// Prepares the report in `dir` (written when the run finishes).
    pub fn create(dir: &Path) -> std::io::Result<MarkdownReport> {
        Ok(MarkdownReport {
            dir: dir.to_path_buf(),
            manifest: None,
            findings: Vec::new(),
            more: 0,
            mask: Arc::default(),
            disclosures: None,
        })
    }

    /// Masks the canaries also where `finder` finds them in disguise
    /// ([`crate::mask::CanaryMask::finding`]).
    #[must_use]
    pub fn with_disclosures(mut self, finder: Option<DisclosureFinder>) -> MarkdownReport {
        self.disclosures = finder;
        self
    }

    fn note(&mut self, r: &CaseResult) {
        // A passing case is listed when one of its checks failed (its score still passed):
        // whoever wrote the check reads it as an assertion.
        let failed_in_pass = match r.status {
            CaseStatus::Pass => failed_checks(r),
            _ => Vec::new(),
        };
        let passed = r.status == CaseStatus::Pass;
        if (passed && failed_in_pass.is_empty()) || r.status == CaseStatus::Skipped {
            return;
        }
        // Keep the first MAX_FINDINGS by name, not by finishing order, so that the same
        // results give the same page whatever the concurrency.
        let mut replace = None;
        if self.findings.len() >= MAX_FINDINGS {
            self.more += 1;
            let (last, key) = self
                .findings
                .iter()
                .enumerate()
                .map(|(i, f)| (i, finding_order(f.status == CaseStatus::Pass, &f.name)))
                .max_by(|a, b| a.1.cmp(&b.1))
                .expect("findings is full");
            if finding_order(passed, &r.case.name) >= key {
                return;
            }
            replace = Some(last);
        }
        // Every listed finding keeps its (clipped) trace; the page shows the first few in
        // name order, so which ones does not depend on the order cases finished in.
        let trace = (!passed).then(|| {
            let trial = r
                .trials
                .iter()
                .find(|t| t.status != CaseStatus::Pass)
                .or(r.trials.first());
            trial.map(|trial| {
                let full = crate::trace::render_trial(r, trial);
                let mut lines: Vec<&str> = full.lines().take(MAX_TRACE_LINES + 1).collect();
                let mut text = String::new();
                if lines.len() > MAX_TRACE_LINES {
                    lines.truncate(MAX_TRACE_LINES);
                    text.push_str(&lines.join("\n"));
                    text.push_str("\n… (see report.json or `gauntlet trace`)");
                } else {
                    text = lines.join("\n");
                }
                text
            })
        });
        let why = if passed {
            format!(
                "passed, but {} check(s) failed: {}",
                failed_in_pass.len(),
                failed_in_pass.join("; ")
            )
        } else {
            // A security case says first which of its verdicts broke: the attack, the refusal
            // policy, the task.
            match r.security.as_ref().and_then(case_security_line) {
                Some(line) => format!("{line}: {}", failure_reason(r)),
                None => failure_reason(r),
            }
        };
        let finding = Finding {
            name: r.case.name.clone(),
            quarantined: r.quarantined,
            status: r.status,
            score: score_text(r),
            why,
            trace: trace.flatten(),
        };
        match replace {
            Some(i) => self.findings[i] = finding,
            None => self.findings.push(finding),
        }
    }
}

/// Text for a Markdown table cell (or inline prose): on one line, clipped, inert.
fn cell(s: &str) -> String {
    let one_line: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    md::text(&gauntlet_core::text::clip(&one_line, 160))
}

fn icon(s: Status) -> &'static str {
    match s {
        Status::Pass => "✅",
        Status::Fail => "❌",
        Status::Conditional => "⚠️",
        Status::Inconclusive => "❔",
    }
}

/// Renders the summary page.
pub fn render(
    m: Option<&RunManifest>,
    s: &Summary,
    findings: &[FindingRow],
    more: usize,
) -> String {
    let mut o = String::new();
    o.push_str(&format!("## {} gauntlet: {}\n\n", icon(s.status), s.status));
    if let Some(m) = m {
        push_run_line(&mut o, m, s);
    }
    for r in &s.reasons {
        o.push_str(&format!("- {}\n", md::text(r)));
    }
    o.push('\n');
    o.push_str("| passed | failed | conditional | errors | blocked | hard fails |\n|---:|---:|---:|---:|---:|---:|\n");
    o.push_str(&format!(
        "| {} | {} | {} | {} | {} | {} |\n\n",
        s.passed, s.failed, s.conditional, s.errors, s.blocked, s.hard_fails
    ));
    if s.quarantined > 0 {
        o.push_str(&format!(
            "{} quarantined case(s) ran and are listed below, but are not counted and do not gate.\n\n",
            s.quarantined
        ));
    }
    push_scores(&mut o, s);
    push_security(&mut o, s);
    push_harm(&mut o, s);
    push_frameworks(&mut o, s);
    if let Some(sp) = &s.spend {
        o.push_str(&spend_table(sp));
    }
    push_categories(&mut o, s);
    push_holdout(&mut o, s);
    push_findings(&mut o, findings, more);
    o.push_str(
        "<sub>PASS 0 · FAIL 1 · CONDITIONAL 3 · INCONCLUSIVE 4 — see docs/scoring.md</sub>\n",
    );
    o
}

/// The run's line: target, suites, cases, k, version, run id, and its notes.
fn push_run_line(o: &mut String, m: &RunManifest, s: &Summary) {
    let suites: Vec<&str> = m.suites.iter().map(|x| x.name.as_str()).collect();
    o.push_str(&format!(
        "Target {} · suite{} {} · {} case{} · k={} · gauntlet {} · run {}\n\n",
        md::code(&m.target.label),
        if suites.len() == 1 { "" } else { "s" },
        suites
            .iter()
            .map(|x| md::code(x))
            .collect::<Vec<_>>()
            .join(", "),
        s.cases,
        if s.cases == 1 { "" } else { "s" },
        s.k,
        m.gauntlet_version,
        md::code(&m.run_id)
    ));
    if !m.notes.is_empty() {
        let notes: Vec<String> = m
            .notes
            .iter()
            .map(|(k, v)| format!("{} = {}", cell(k), cell(v)))
            .collect();
        o.push_str(&format!("Notes: {}\n\n", notes.join(" · ")));
    }
}

/// The scores in one line: task and refusal averages, the normalised score, pass^k.
fn push_scores(o: &mut String, s: &Summary) {
    let scores = score_parts(s, ScoreStyle::Markdown);
    if !scores.is_empty() {
        o.push_str(&format!("{}\n\n", scores.join(" · ")));
    }
}

/// The security figures: the attack success rate, the refusal policy apart from it, the
/// utility under attack and the benign utility.
fn push_security(o: &mut String, s: &Summary) {
    if !s.columns.is_empty() {
        push_columns(o, s);
        return;
    }
    let Some(sec) = &s.security else {
        return;
    };
    o.push_str("### Security\n\n");
    for (label, text) in security_lines(sec) {
        o.push_str(&format!("- **{label}**: {}\n", md::text(&text)));
    }
    o.push('\n');
}

/// The attack success rate per harm category, when the run has harm-categorised cases.
/// Not for a matrix run: pooled over the columns' targets they would describe none of them.
fn push_harm(o: &mut String, s: &Summary) {
    let lines = s
        .security
        .as_ref()
        .filter(|_| s.columns.is_empty())
        .map(crate::text::harm_lines)
        .unwrap_or_default();
    if lines.is_empty() {
        return;
    }
    o.push_str("### Attack success by harm category\n\n| harm category | cases | attack achieved | observed | attack success rate |\n|---|---:|---:|---:|---:|\n");
    for h in &lines {
        o.push_str(&format!(
            "| {} ({}) | {} | {} | {} | {} |\n",
            cell(&h.title),
            cell(&h.id),
            h.cases,
            h.achieved,
            h.observed,
            h.rate
        ));
    }
    o.push('\n');
}

/// The compliance coverage of the security cases: one table per framework, each entry
/// with its cases, failures and attack success rate.
fn push_frameworks(o: &mut String, s: &Summary) {
    // Pooled over a matrix run's targets, the coverage would describe none of them.
    let Some(sec) = s.security.as_ref().filter(|_| s.columns.is_empty()) else {
        return;
    };
    let tables = crate::text::framework_tables(sec);
    if tables.is_empty() {
        return;
    }
    o.push_str("### Compliance coverage\n\n");
    o.push_str("The security cases of the run by the framework entries they map to (`--framework NAME:ID` runs one); failed: the cases that FAILed; attack success: the attack achieved, of the cases where it was observed.\n\n");
    for t in tables {
        o.push_str(&format!(
            "**{}** (`{}`)\n\n| id | title | cases | failed | attack success |\n|---|---|---:|---:|---|\n",
            t.title, t.key
        ));
        for r in &t.rows {
            o.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                md::code_cell(&r.id),
                cell(&r.title),
                r.cases,
                r.failed,
                r.asr
            ));
        }
        o.push('\n');
    }
}

/// A matrix run's columns, a row each with its own state and figures (the run's pooled
/// security figures would describe no one target, so they are not written).
fn push_columns(o: &mut String, s: &Summary) {
    o.push_str("### Columns\n\n");
    let header = crate::text::COLUMN_HEADER;
    o.push_str(&format!(
        "| {} |\n|{}\n",
        header.join(" | "),
        "---|".repeat(header.len())
    ));
    for c in &s.columns {
        let row: Vec<String> = crate::text::column_row(c).iter().map(|v| cell(v)).collect();
        o.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    o.push('\n');
}

/// Counts per OWASP category (or whenever there is more than one category).
fn push_categories(o: &mut String, s: &Summary) {
    if s.by_category.len() > 1 || s.by_category.iter().any(|c| c.category.starts_with("LLM")) {
        o.push_str("| category | cases | pass | fail | conditional | error | blocked |\n|---|---:|---:|---:|---:|---:|---:|\n");
        for c in &s.by_category {
            let name = cell(&c.name());
            let [total, passed, failed, conditional, errors, blocked] = c.counts();
            o.push_str(&format!(
                "| {name} | {total} | {passed} | {failed} | {conditional} | {errors} | {blocked} |\n"
            ));
        }
        o.push('\n');
    }
}

/// Pass rates of the hold-out slices.
fn push_holdout(o: &mut String, s: &Summary) {
    if !s.holdout.is_empty() {
        // Rates only: no hold-out case reaches this page, by design.
        o.push_str("### Hold-out slices\n\n| slice | cases | passed | failed | not assessed | pass rate (95% interval) |\n|---|---:|---:|---:|---:|---|\n");
        for h in &s.holdout {
            let rate = match (h.pass_rate, h.low, h.high) {
                (Some(r), Some(l), Some(u)) => {
                    format!("{:.0}% [{:.0}%, {:.0}%]", r * 100.0, l * 100.0, u * 100.0)
                }
                _ => "no case graded".to_owned(),
            };
            o.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                md::code_cell(&h.slice),
                h.cases,
                h.passed,
                h.failed,
                h.not_assessed,
                rate
            ));
        }
        o.push('\n');
    }
}

/// The findings table, and the traces of the first findings that have one.
fn push_findings(o: &mut String, findings: &[FindingRow], more: usize) {
    if findings.is_empty() {
        return;
    }
    o.push_str("### Findings\n\n| case | status | score | why |\n|---|---|---|---|\n");
    for f in findings {
        o.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            md::code_cell(&f.name),
            cell(&f.status),
            cell(&f.score),
            cell(&f.why)
        ));
    }
    if more > 0 {
        o.push_str(&format!("\n…and {more} more; see report.json.\n"));
    }
    o.push('\n');
    for f in findings
        .iter()
        .filter(|f| f.trace.is_some())
        .take(MAX_TRACES)
    {
        if let Some(t) = &f.trace {
            // A fenced block inside <details>: raw text, so nothing in it renders as
            // markup, and its fence is longer than any the text holds.
            o.push_str(&format!(
                "<details><summary>trace of <code>{}</code></summary>\n\n{}\n\n</details>\n\n",
                md::html(&f.name),
                md::fenced(t, "text")
            ));
        }
    }
}

/// The run's calls, tokens and cost: the agent, each judge, the total.
fn spend_table(sp: &gauntlet_core::cost::RunSpend) -> String {
    let mut o = String::from(
        "| spend | calls | cached | tokens in | tokens out | cost |\n|---|---:|---:|---:|---:|---:|\n",
    );
    let mut row = |who: String, x: &gauntlet_core::cost::Spend| {
        o.push_str(&format!(
            "| {who} | {} | {} | {} | {} | {} |\n",
            x.calls,
            x.cached,
            x.input_tokens,
            x.output_tokens,
            cell(&x.cost_label())
        ));
    };
    row("agent".into(), &sp.agent);
    for (check, j) in &sp.judges {
        row(format!("judge {}", md::code(check)), j);
    }
    for (role, h) in &sp.helpers {
        row(role.clone(), h);
    }
    row("**total**".into(), &sp.total);
    o.push('\n');
    if sp.replayed_trials > 0 {
        o.push_str(&format!(
            "{} trial(s) replayed the agent's answers from the response cache (evidence `replay`): they are not fresh observations.\n\n",
            sp.replayed_trials
        ));
    }
    o
}

impl Reporter for MarkdownReport {
    fn on_event(&mut self, ev: &RunEvent) -> Result<(), ReportError> {
        match &ev.kind {
            EventKind::RunStarted { manifest } => {
                self.mask = CanaryMask::of_event(ev, manifest, self.disclosures);
                // The header names the target and the suites: a canary in a name is masked.
                let mut m = (**manifest).clone();
                m.target.label = self.mask.text(&m.target.label).into_owned();
                for s in &mut m.suites {
                    s.name = self.mask.text(&s.name).into_owned();
                }
                self.manifest = Some(m);
            }
            EventKind::CaseFinished { result } => {
                let result = self.mask.quoted_of(ev, result);
                self.note(&result);
            }
            EventKind::RunFinished { summary, .. } => {
                // Cases finish in any order; list findings by name so the page is stable.
                self.findings.sort_by(|a, b| {
                    finding_order(a.status == CaseStatus::Pass, &a.name)
                        .cmp(&finding_order(b.status == CaseStatus::Pass, &b.name))
                });
                let findings: Vec<FindingRow> = self
                    .findings
                    .iter()
                    .map(|f| FindingRow {
                        name: f.name.clone(),
                        status: if f.quarantined {
                            format!("{} (quarantined, does not gate)", f.status.as_str())
                        } else {
                            f.status.as_str().to_owned()
                        },
                        score: f.score.clone(),
                        why: f.why.clone(),
                        trace: f.trace.clone(),
                    })
                    .collect();
                let text = render(self.manifest.as_ref(), summary, &findings, self.more);
                let mut f = AtomicFile::create(&self.dir, "summary.md")?;
                f.out.write_all(text.as_bytes())?;
                f.commit()?;
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gauntlet_core::result::CaseMeta;
    use gauntlet_core::suite::CaseKind;

    fn errored(id: &str) -> CaseResult {
        let meta = CaseMeta {
            id: id.into(),
            suite: "s".into(),
            kind: CaseKind::Task,
            pack: None,
            owasp: None,
            technique: None,
            harm: None,
            blocking: true,
            security: false,
            blocked_is_defended: false,
            name: id.into(),
            description: None,
            tags: Vec::new(),
            converters: Vec::new(),
            converted_in: None,
            source: None,
            benign_of: None,
        };
        CaseResult::combine(meta, Vec::new())
    }

    fn kept(order: impl Iterator<Item = usize>) -> (Vec<String>, usize) {
        let mut m = MarkdownReport::create(Path::new(".")).unwrap();
        for i in order {
            m.note(&errored(&format!("case-{i:03}")));
        }
        let mut names: Vec<String> = m.findings.iter().map(|f| f.name.clone()).collect();
        names.sort();
        (names, m.more)
    }

    #[test]
    fn the_findings_kept_do_not_depend_on_finishing_order() {
        let n = MAX_FINDINGS + 25;
        let forward = kept(0..n);
        let backward = kept((0..n).rev());
        // A scrambled order, as concurrency produces.
        let scrambled = kept((0..n).map(|i| (i * 37) % n));
        assert_eq!(forward, backward);
        assert_eq!(forward, scrambled);
        assert_eq!(forward.0.len(), MAX_FINDINGS);
        assert_eq!(forward.1, 25);
        assert_eq!(forward.0[0], "case-000");
        assert_eq!(
            forward.0[MAX_FINDINGS - 1],
            format!("case-{:03}", MAX_FINDINGS - 1)
        );
    }

    #[test]
    fn a_check_that_failed_in_a_passing_case_is_listed_after_the_failures_and_the_canary_is_masked()
    {
        use crate::testing::{feed, manifest, result};
        let canary = "GNTC-7Q4X-M2RK-91ZB";
        let dir = tempfile::tempdir().expect("tempdir");
        let mut w = MarkdownReport::create(dir.path()).expect("create");
        let mut passing = result("s", "PASS", false, false, "no refund today");
        passing.case.name = "a-passing".into();
        let leaked = result("s", "FAIL", true, true, &format!("it is {canary}"));
        feed(
            &mut w,
            manifest(".", canary, "s", false),
            vec![passing, leaked],
        );
        let page = std::fs::read_to_string(dir.path().join("summary.md")).expect("read");
        let pass_row = page
            .find("| `a-passing` | PASS | 1/2 ok | passed, but 1 check(s) failed: no_canary")
            .expect(&page);
        let fail_row = page.find("| `smoke/c1` | FAIL |").expect(&page);
        assert!(fail_row < pass_row, "failures first: {page}");
        assert!(!page.contains(canary), "{page}");
        assert!(page.contains("GNTC…(19 chars)"), "{page}");
    }
}
