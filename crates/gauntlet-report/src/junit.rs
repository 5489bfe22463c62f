//! `junit.xml`: [`JunitReport`], one test case per gauntlet case, for CI systems.
//!
//! The file is valid against both schemas CI systems read: the Jenkins xUnit plugin's
//! `junit-10.xsd` and Apache Ant's `JUnit.xsd`, the strictest (`crates/gauntlet/tests/
//! junit_schema.rs` checks both). Ant's schema shapes it: `<testsuites>` has no attributes,
//! each `<testsuite>` has `package`, `id`, `timestamp` and `hostname`, its `<properties>`
//! come first, then the test cases, then its `<system-out>` and `<system-err>`; a test case
//! holds at most one `<failure>`, `<error>` or `<skipped>` and nothing else.
//!
//! A test case is named so that a new successful attack shows as a red test carrying its
//! category and technique: `LLM01/direct-override/<id>`, in the class
//! `gauntlet.<suite>.<OWASP category>` (`gauntlet.<suite>` without one), so CI groups
//! attacks by category. FAIL is a `<failure>` whose message lists every failing check, hard
//! ones first; ERROR (error or timeout) an `<error>`; a case stopped by a content filter, not
//! assessed, or quarantined is `<skipped>`. Each case's status, kind, score and category are
//! suite `<properties>` (`<case id>.status`, ...), since neither schema has properties on a
//! test case; the prompt and the answer of every case that did not pass, escaped and cut,
//! are in the suite's `<system-out>`, with the CONDITIONAL notes.
//!
//! JUnit puts counts on the `<testsuite>` element before its test cases, so the parts of a
//! suite are streamed to scratch files and assembled when the run finishes.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gauntlet_core::event::{EventKind, ReportError, Reporter, RunEvent};
use gauntlet_core::matrix::{Columns, SEPARATOR};
use gauntlet_core::result::{CaseResult, CaseStatus};
use quick_xml::escape::escape;

use crate::mask::{CanaryMask, DisclosureFinder};
use crate::text::{AtomicFile, failed_checks, failure_reason, score_text};

/// Most characters of a prompt or an answer quoted in `<system-out>`.
const QUOTE_CHARS: usize = 1000;

/// One scratch file of a suite's part.
struct Part {
    path: PathBuf,
    out: BufWriter<File>,
}

impl Part {
    fn create(path: PathBuf) -> std::io::Result<Part> {
        let out = BufWriter::new(File::create(&path)?);
        Ok(Part { path, out })
    }

    /// Copies the part into `to` and removes the scratch file.
    fn drain(mut self, to: &mut impl Write) -> std::io::Result<()> {
        self.out.flush()?;
        drop(self.out);
        std::io::copy(&mut BufReader::new(File::open(&self.path)?), to)?;
        std::fs::remove_file(&self.path)
    }
}

struct SuiteBuf {
    /// `<property>` lines of the cases.
    props: Part,
    /// `<testcase>` elements.
    cases: Part,
    /// The `<system-out>` text, escaped.
    log: Part,
    /// `gauntlet.<suite>`, escaped once.
    classname: String,
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
    time_ms: u64,
}

/// Writes `junit.xml`.
pub struct JunitReport {
    dir: PathBuf,
    suites: BTreeMap<String, SuiteBuf>,
    run_name: String,
    run_id: String,
    /// Masks the run's canary in what is quoted.
    mask: Arc<CanaryMask>,
    /// Finds the canaries in disguise, when the caller lends a finder.
    disclosures: Option<DisclosureFinder>,
    /// When the run started, as Ant's schema wants it: `YYYY-MM-DDTHH:MM:SS`, no zone (UTC).
    timestamp: String,
    /// A matrix run's columns.
    columns: Option<Columns>,
}

impl JunitReport {
    /// Opens the report in `dir`.
    pub fn create(dir: &Path) -> std::io::Result<JunitReport> {
        Ok(JunitReport {
            dir: dir.to_path_buf(),
            suites: BTreeMap::new(),
            run_name: "gauntlet".into(),
            run_id: String::new(),
            mask: Arc::default(),
            disclosures: None,
            timestamp: "1970-01-01T00:00:00".into(),
            columns: None,
        })
    }

    /// Masks the canaries also where `finder` finds them in disguise
    /// ([`crate::mask::CanaryMask::finding`]).
    #[must_use]
    pub fn with_disclosures(mut self, finder: Option<DisclosureFinder>) -> JunitReport {
        self.disclosures = finder;
        self
    }

    fn suite(&mut self, name: &str) -> std::io::Result<&mut SuiteBuf> {
        if !self.suites.contains_key(name) {
            let n = self.suites.len();
            let part =
                |what: &str| Part::create(self.dir.join(format!(".junit-{n}-{what}.partial")));
            let buf = SuiteBuf {
                props: part("props")?,
                cases: part("cases")?,
                log: part("out")?,
                classname: xml_text(&format!("gauntlet.{name}")).into_owned(),
                tests: 0,
                failures: 0,
                errors: 0,
                skipped: 0,
                time_ms: 0,
            };
            self.suites.insert(name.to_owned(), buf);
        }
        Ok(self.suites.get_mut(name).expect("just inserted"))
    }
}

/// `YYYY-MM-DDTHH:MM:SS` from an RFC 3339 UTC time (the manifest's), as Ant's schema wants
/// it (no fraction, no zone); the epoch when the text is not one.
fn ant_timestamp(rfc3339: &str) -> String {
    let head = rfc3339.get(..19).unwrap_or("");
    let shape = "dddd-dd-ddTdd:dd:dd";
    let fits = head.len() == 19
        && head.chars().zip(shape.chars()).all(|(c, s)| match s {
            'd' => c.is_ascii_digit(),
            s => c == s,
        });
    if fits {
        head.to_owned()
    } else {
        "1970-01-01T00:00:00".to_owned()
    }
}

/// Whether XML 1.0 can hold the character at all, even escaped (model output may contain
/// ones it cannot).
fn xml_allowed(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || (c >= ' ' && c != '\u{FFFE}' && c != '\u{FFFF}')
}

/// Escapes text for XML and removes what it cannot hold, borrowing when there is nothing to
/// remove or escape (the usual case: this runs several times for every case of a run).
fn xml_text(s: &str) -> Cow<'_, str> {
    if s.chars().all(xml_allowed) {
        escape(s)
    } else {
        let clean: String = s.chars().filter(|&c| xml_allowed(c)).collect();
        Cow::Owned(escape(clean.as_str()).into_owned())
    }
}

/// The case's properties, at suite level under the case id.
fn write_props(out: &mut impl Write, r: &CaseResult) -> std::io::Result<()> {
    let id = xml_text(&r.case.id);
    let mut prop = |k: &str, v: &str| {
        writeln!(
            out,
            "      <property name=\"{id}.{k}\" value=\"{}\"/>",
            xml_text(v)
        )
    };
    prop("status", r.status.as_str())?;
    prop("kind", r.case.kind.as_str())?;
    prop("score", &score_text(r))?;
    prop("blocking", if r.case.blocking { "true" } else { "false" })?;
    if let Some(c) = &r.case.owasp {
        prop("owasp", c)?;
    }
    if let Some(t) = &r.case.technique {
        prop("technique", t)?;
    }
    if let Some(p) = &r.case.pack {
        prop("pack", p)?;
    }
    if r.trials.len() > 1 {
        prop(
            "trials_passed",
            &format!("{}/{}", r.passed_trials, r.trials.len()),
        )?;
    }
    if !r.spend.is_empty() {
        let t = r.spend.total();
        prop("tokens", &t.tokens().to_string())?;
        prop(
            "cost_usd",
            &t.cost_usd
                .map_or_else(|| "unknown".to_owned(), |c| format!("{c:.6}")),
        )?;
    }
    let replayed = r.trials.iter().filter(|t| t.replayed()).count();
    if replayed > 0 {
        prop("replayed_trials", &replayed.to_string())?;
    }
    Ok(())
}

/// Every failing check of the case, once each, hard ones first (`label: evidence`, joined
/// by `; `); the usual one-line reason when no check failed (an error, a gate not assessed).
fn failing_checks(r: &CaseResult) -> String {
    let lines = failed_checks(r);
    if lines.is_empty() {
        return failure_reason(r);
    }
    lines.join("; ")
}

/// The prompt and the answer of the first trial that did not pass (else the first), cut,
/// for `<system-out>`.
fn exchange(r: &CaseResult) -> String {
    let Some(t) = r
        .trials
        .iter()
        .find(|t| t.status != CaseStatus::Pass)
        .or(r.trials.first())
    else {
        return String::new();
    };
    let mut s = String::new();
    for (i, turn) in t.trace.turns.iter().enumerate() {
        let n = if t.trace.turns.len() > 1 {
            format!(" {}", i + 1)
        } else {
            String::new()
        };
        s.push_str(&format!(
            "  prompt{n}: {}\n  answer{n}: {}\n",
            gauntlet_core::text::clip(&turn.user, QUOTE_CHARS),
            gauntlet_core::text::clip(&turn.answer, QUOTE_CHARS)
        ));
    }
    s
}

fn write_case(s: &mut SuiteBuf, r: &CaseResult) -> std::io::Result<()> {
    let secs = r.duration_ms() as f64 / 1000.0;
    s.tests += 1;
    s.time_ms += r.duration_ms();
    write_props(&mut s.props.out, r)?;
    let class = match &r.case.owasp {
        Some(c) => Cow::Owned(format!("{}.{}", s.classname, xml_text(c))),
        None => Cow::Borrowed(s.classname.as_str()),
    };
    let out = &mut s.cases.out;
    write!(
        out,
        "    <testcase name=\"{}\" classname=\"{class}\" time=\"{secs:.3}\"",
        xml_text(&r.case.name),
    )?;
    if r.status == CaseStatus::Pass {
        out.write_all(b"/>\n")?;
        // A check that failed in a case that passed on its score is still shown: whoever
        // wrote it reads it as an assertion. Ant's schema allows nothing inside a passing
        // test case, so it goes to the suite's properties and output.
        let failed = failed_checks(r);
        if !failed.is_empty() {
            let text = failed.join("; ");
            writeln!(
                s.props.out,
                "      <property name=\"{}.failed_checks\" value=\"{}\"/>",
                xml_text(&r.case.id),
                xml_text(&text)
            )?;
            write!(
                s.log.out,
                "{}",
                xml_text(&format!(
                    "{} PASS ({}) with {} failed check(s): {text}\n",
                    r.case.name,
                    score_text(r),
                    failed.len()
                ))
            )?;
        }
        return Ok(());
    }
    out.write_all(b">\n")?;
    let reason = failing_checks(r);
    let detail = case_detail(r);
    let exchange = exchange(r);
    let log = &mut s.log.out;
    if r.quarantined {
        // A quarantined case runs and is reported, but does not gate: a red test here
        // would fail CI on a case the team has set aside (with an owner and an expiry).
        s.skipped += 1;
        writeln!(
            out,
            "      <skipped message=\"quarantined, does not gate: {} {}\">{}</skipped>",
            r.status.as_str(),
            xml_text(&reason),
            xml_text(&detail)
        )?;
    } else {
        match r.status {
            CaseStatus::Fail => {
                s.failures += 1;
                let ty = if r.hard_fails.is_empty() {
                    "score"
                } else {
                    "hard_policy_failure"
                };
                writeln!(
                    out,
                    "      <failure type=\"{ty}\" message=\"{}\">{}</failure>",
                    xml_text(&reason),
                    xml_text(&format!("{detail}{exchange}"))
                )?;
            }
            CaseStatus::Error => {
                s.errors += 1;
                let ty = r
                    .trials
                    .iter()
                    .find(|t| t.status == CaseStatus::Error)
                    .map(|t| t.outcome.as_str())
                    .unwrap_or("error");
                writeln!(
                    out,
                    "      <error type=\"{ty}\" message=\"{}\">{}</error>",
                    xml_text(&reason),
                    xml_text(&format!("{detail}{exchange}"))
                )?;
            }
            CaseStatus::Blocked | CaseStatus::Skipped | CaseStatus::NotAssessed => {
                s.skipped += 1;
                let msg = match r.status {
                    CaseStatus::Blocked => {
                        "stopped by an upstream content filter (platform defence)".to_owned()
                    }
                    CaseStatus::NotAssessed => format!("not assessed: {}", xml_text(&reason)),
                    _ => "not run".to_owned(),
                };
                writeln!(out, "      <skipped message=\"{msg}\"/>")?;
            }
            CaseStatus::Conditional | CaseStatus::Pass => {}
        }
    }
    out.write_all(b"    </testcase>\n")?;
    // The suite's log: what the case was asked and answered, and why it did not pass.
    let head = if r.status == CaseStatus::Conditional {
        format!("CONDITIONAL ({}): {reason}", score_text(r))
    } else if r.quarantined {
        format!("{} (quarantined): {reason}", r.status.as_str())
    } else {
        format!("{}: {reason}", r.status.as_str())
    };
    write!(
        log,
        "{}",
        xml_text(&format!("{} {head}\n{exchange}", r.case.name))
    )?;
    Ok(())
}

/// Every verdict of every trial, one per line, for the failure body.
fn case_detail(r: &CaseResult) -> String {
    let mut s = String::new();
    for t in &r.trials {
        if r.trials.len() > 1 {
            s.push_str(&format!("trial {} ({}):\n", t.trial + 1, t.status.as_str()));
        }
        if let Some(e) = &t.error {
            s.push_str(&format!("  {}: {e}\n", t.outcome.as_str()));
        }
        for v in &t.verdicts {
            s.push_str(&format!(
                "  [{}] {} ({}, {}/3{}): {}\n",
                if v.passed { "pass" } else { "FAIL" },
                v.label,
                v.dimension,
                v.score,
                if v.hard_fail { ", hard" } else { "" },
                v.evidence
            ));
        }
    }
    s
}

impl Reporter for JunitReport {
    fn on_event(&mut self, ev: &RunEvent) -> Result<(), ReportError> {
        match &ev.kind {
            EventKind::RunStarted { manifest } => {
                self.run_name = format!("gauntlet {} {}", manifest.command, manifest.target.label);
                self.run_id = manifest.run_id.clone();
                self.timestamp = ant_timestamp(&manifest.started_at);
                self.mask = CanaryMask::of_event(ev, manifest, self.disclosures);
                self.columns = Columns::of_manifest(manifest);
            }
            EventKind::CaseFinished { result } => {
                let quoted = self.mask.quoted_of(ev, result);
                let mut result: Cow<CaseResult> = Cow::Borrowed(&quoted);
                // A matrix run: a class per column (`gauntlet.SUITE[COLUMN]`), each case
                // under its own name in it.
                let suite = match self.columns.as_ref().and_then(|c| c.of(&result.case.id)) {
                    Some((i, _)) => {
                        let label = &self.columns.as_ref().expect("columns").labels()[i];
                        let own = result.case.name.strip_suffix(label.as_str());
                        if let Some(n) = own.and_then(|n| n.strip_suffix(SEPARATOR)) {
                            result.to_mut().case.name = n.to_owned();
                        }
                        format!("{}[{label}]", result.case.suite)
                    }
                    None => result.case.suite.clone(),
                };
                let s = self.suite(&suite)?;
                write_case(s, &result)?;
            }
            EventKind::RunFinished { summary, .. } => {
                let spend = summary.spend.as_ref().map(|sp| {
                    (
                        sp.total.tokens(),
                        sp.total
                            .cost_usd
                            .map_or_else(|| "unknown".to_owned(), |c| format!("{c:.6}")),
                    )
                });
                let mut f = AtomicFile::create(&self.dir, "junit.xml")?;
                writeln!(f.out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")?;
                // Ant's schema allows no attribute here; the totals are the suites' sums.
                writeln!(f.out, "<testsuites>")?;
                for (id, (name, s)) in std::mem::take(&mut self.suites).into_iter().enumerate() {
                    writeln!(
                        f.out,
                        "  <testsuite name=\"{}\" package=\"{}\" id=\"{id}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\" timestamp=\"{}\" hostname=\"localhost\">",
                        xml_text(&name),
                        s.classname,
                        s.tests,
                        s.failures,
                        s.errors,
                        s.skipped,
                        s.time_ms as f64 / 1000.0,
                        self.timestamp,
                    )?;
                    writeln!(f.out, "    <properties>")?;
                    writeln!(
                        f.out,
                        "      <property name=\"run\" value=\"{}\"/>",
                        xml_text(&self.run_name)
                    )?;
                    if !self.run_id.is_empty() {
                        writeln!(
                            f.out,
                            "      <property name=\"run_id\" value=\"{}\"/>",
                            xml_text(&self.run_id)
                        )?;
                    }
                    if let Some((tokens, cost)) = &spend {
                        writeln!(
                            f.out,
                            "      <property name=\"run_tokens\" value=\"{tokens}\"/>"
                        )?;
                        writeln!(
                            f.out,
                            "      <property name=\"run_cost_usd\" value=\"{cost}\"/>"
                        )?;
                    }
                    s.props.drain(&mut f.out)?;
                    writeln!(f.out, "    </properties>")?;
                    s.cases.drain(&mut f.out)?;
                    f.out.write_all(b"    <system-out>")?;
                    s.log.drain(&mut f.out)?;
                    f.out.write_all(b"</system-out>\n    <system-err/>\n")?;
                    writeln!(f.out, "  </testsuite>")?;
                }
                writeln!(f.out, "</testsuites>")?;
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

    #[test]
    fn xml_text_escapes_and_drops_what_xml_cannot_hold() {
        // Clean text is borrowed, not copied.
        assert!(matches!(
            xml_text("plain answer"),
            Cow::Borrowed("plain answer")
        ));
        assert_eq!(xml_text("a <b> & \"c\""), "a &lt;b&gt; &amp; &quot;c&quot;");
        // Model output can carry control characters and non-characters: they are removed,
        // tabs and newlines kept, and the rest still escaped.
        assert_eq!(
            xml_text("bell\u{7}\tok\n<\u{FFFE}x\u{0}"),
            "bell\tok\n&lt;x"
        );
    }

    fn case(status: &str, quarantined: bool) -> CaseResult {
        serde_json::from_value(serde_json::json!({
            "case": {"id": "c<1>", "suite": "s", "kind": "task", "blocking": true,
                     "security": false, "name": "c<1>"},
            "status": status, "score": {"kind": "unscored"}, "passed_trials": 0,
            "quarantined": quarantined,
            "trials": [{"case_id": "c<1>", "trial": 0, "outcome": "completed", "status": status,
                        "score": {"kind": "unscored"},
                        "verdicts": [{"check": "contains", "label": "contains", "dimension": "outcome",
                                      "passed": false, "score": 0, "evidence": "no `x\u{1}` in \"a\""}],
                        "trace": {"spans": [], "turns": []}, "duration_ms": 1500}]
        }))
        .expect("a case result")
    }

    fn written(r: &CaseResult) -> String {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut rep = JunitReport::create(dir.path()).expect("create");
        let s = rep.suite("s").expect("suite");
        write_case(s, r).expect("write");
        let mut text = String::new();
        for part in [&mut s.props, &mut s.cases, &mut s.log] {
            part.out.flush().expect("flush");
            text.push_str(&std::fs::read_to_string(&part.path).expect("read"));
        }
        text
    }

    #[test]
    fn a_failure_carries_its_reason_and_a_pass_carries_none() {
        let fail = written(&case("FAIL", false));
        assert!(
            fail.contains(r#"<testcase name="c&lt;1&gt;" classname="gauntlet.s" time="1.500">"#),
            "{fail}"
        );
        assert!(
            fail.contains(r#"<failure type="score" message="contains: no `x` in &quot;a&quot;">"#),
            "{fail}"
        );
        assert!(fail.contains("[FAIL] contains (outcome, 0/3)"), "{fail}");
        let pass = written(&case("PASS", false));
        assert!(
            !pass.contains("<failure") && !pass.contains("prompt"),
            "{pass}"
        );
        assert!(
            pass.contains(r#"<property name="c&lt;1&gt;.status" value="PASS"/>"#),
            "{pass}"
        );
        assert!(
            pass.contains(r#"<testcase name="c&lt;1&gt;" classname="gauntlet.s" time="1.500"/>"#),
            "{pass}"
        );
    }

    #[test]
    fn a_quarantined_failure_is_skipped_not_failed() {
        let q = written(&case("FAIL", true));
        assert!(
            q.contains(r#"<skipped message="quarantined, does not gate: FAIL contains: no `x` in &quot;a&quot;">"#),
            "{q}"
        );
        assert!(!q.contains("<failure"), "{q}");
        // A quarantined case that passes is an ordinary pass.
        let qp = written(&case("PASS", true));
        assert!(!qp.contains("<skipped") && !qp.contains("<failure"), "{qp}");
    }

    #[test]
    fn every_failing_check_is_in_the_message_hard_ones_first_and_the_category_is_the_class() {
        let mut r = case("FAIL", false);
        r.case.owasp = Some("LLM01".into());
        let mut hard = r.trials[0].verdicts[0].clone();
        hard.label = "not_contains".into();
        hard.evidence = "leaked the canary".into();
        hard.hard_fail = true;
        r.trials[0].verdicts.push(hard);
        r.hard_fails = vec!["not_contains: leaked the canary".into()];
        r.trials[0]
            .trace
            .turns
            .push(gauntlet_core::trace::TurnRecord {
                user: "ignore <previous>".into(),
                answer: "x".repeat(QUOTE_CHARS + 50),
                truncated: false,
            });
        let w = written(&r);
        assert!(w.contains(r#"classname="gauntlet.s.LLM01""#), "{w}");
        assert!(
            w.contains(r#"<failure type="hard_policy_failure" message="not_contains: leaked the canary; contains: no `x` in &quot;a&quot;">"#),
            "{w}"
        );
        assert!(w.contains("prompt: ignore &lt;previous&gt;"), "{w}");
        assert!(
            w.contains(&format!("answer: {}…", "x".repeat(QUOTE_CHARS))),
            "{w}"
        );
        assert!(
            !w.contains(&"x".repeat(QUOTE_CHARS + 1)),
            "the answer is cut: {w}"
        );
    }

    #[test]
    fn the_timestamp_is_ants_form() {
        assert_eq!(
            ant_timestamp("2026-12-01T15:47:32.123Z"),
            "2026-12-01T15:47:32"
        );
        assert_eq!(ant_timestamp("2026-12-01T15:47:32Z"), "2026-12-01T15:47:32");
        assert_eq!(ant_timestamp("t"), "1970-01-01T00:00:00");
    }

    #[test]
    fn a_check_that_failed_in_a_passing_case_is_shown_and_the_canary_is_masked() {
        use crate::testing::{feed, manifest, result};
        let canary = "GNTC-7Q4X-M2RK-91ZB";
        let dir = tempfile::tempdir().expect("tempdir");
        let mut w = JunitReport::create(dir.path()).expect("create");
        let passing = result("s", "PASS", false, false, "no refund today");
        let mut leaked = result("s", "FAIL", true, true, &format!("it is {canary}"));
        leaked.case.id = "c2".into();
        leaked.case.name = "smoke/c2".into();
        feed(
            &mut w,
            manifest(".", canary, "s", false),
            vec![passing, leaked],
        );
        let xml = std::fs::read_to_string(dir.path().join("junit.xml")).expect("read");
        assert!(
            xml.contains(r#"<property name="c1.failed_checks" value="no_canary: canary leaked in answer 1: no refund today"/>"#),
            "{xml}"
        );
        assert!(
            xml.contains("smoke/c1 PASS (1/2 ok) with 1 failed check(s): no_canary"),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<testcase name="smoke/c1" classname="gauntlet.s" time="0.005"/>"#),
            "{xml}"
        );
        assert!(!xml.contains(canary), "{xml}");
        assert!(xml.contains("GNTC…(19 chars)"), "{xml}");
    }
}
