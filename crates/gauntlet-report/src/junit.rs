//! `junit.xml`: [`JunitReport`], one test case per gauntlet case, for CI systems.
//!
//! A test case is named so that a new successful attack shows as a red test carrying its
//! category and technique: `LLM01/direct-override/<id>`. FAIL is a `<failure>`, ERROR (error
//! or timeout) an `<error>`, a task stopped by a content filter is `<skipped>`; CONDITIONAL
//! passes with a note in `<system-out>`. Scores, status and category are `<properties>`.
//!
//! JUnit puts counts on the `<testsuite>` element before its test cases, so test cases are
//! streamed to a scratch file per suite and assembled when the run finishes.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use gauntlet_core::event::{EventKind, ReportError, Reporter, RunEvent};
use gauntlet_core::result::{CaseResult, CaseStatus};
use quick_xml::escape::escape;

use crate::text::{AtomicFile, failure_reason, score_text};

struct SuiteBuf {
    path: PathBuf,
    out: BufWriter<File>,
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
}

impl JunitReport {
    /// Opens the report in `dir`.
    pub fn create(dir: &Path) -> std::io::Result<JunitReport> {
        Ok(JunitReport {
            dir: dir.to_path_buf(),
            suites: BTreeMap::new(),
            run_name: "gauntlet".into(),
        })
    }

    fn suite(&mut self, name: &str) -> std::io::Result<&mut SuiteBuf> {
        if !self.suites.contains_key(name) {
            let path = self
                .dir
                .join(format!(".junit-{}.partial", self.suites.len()));
            let out = BufWriter::new(File::create(&path)?);
            self.suites.insert(
                name.to_owned(),
                SuiteBuf {
                    path,
                    out,
                    classname: xml_text(&format!("gauntlet.{name}")).into_owned(),
                    tests: 0,
                    failures: 0,
                    errors: 0,
                    skipped: 0,
                    time_ms: 0,
                },
            );
        }
        Ok(self.suites.get_mut(name).expect("just inserted"))
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

fn write_case(s: &mut SuiteBuf, r: &CaseResult) -> std::io::Result<()> {
    let secs = r.duration_ms() as f64 / 1000.0;
    s.tests += 1;
    s.time_ms += r.duration_ms();
    let out = &mut s.out;
    write!(
        out,
        "    <testcase name=\"{}\" classname=\"{}\" time=\"{secs:.3}\">\n      <properties>\n",
        xml_text(&r.case.name),
        s.classname
    )?;
    let mut prop = |k: &str, v: &str| {
        writeln!(
            out,
            "        <property name=\"{k}\" value=\"{}\"/>",
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
    out.write_all(b"      </properties>\n")?;
    if r.status == CaseStatus::Pass {
        out.write_all(b"    </testcase>\n")?;
        return Ok(());
    }
    let reason = failure_reason(r);
    let detail = case_detail(r);
    if r.quarantined {
        // A quarantined case runs and is reported, but does not gate: a red test here
        // would fail CI on a case the team has set aside (with an owner and an expiry).
        s.skipped += 1;
        writeln!(
            out,
            "      <skipped message=\"quarantined, does not gate: {} {}\"/>",
            r.status.as_str(),
            xml_text(&reason)
        )?;
        writeln!(out, "      <system-out>{}</system-out>", xml_text(&detail))?;
        out.write_all(b"    </testcase>\n")?;
        return Ok(());
    }
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
                xml_text(&detail)
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
                xml_text(&detail)
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
        CaseStatus::Conditional => {
            writeln!(
                out,
                "      <system-out>CONDITIONAL ({}): {}</system-out>",
                xml_text(&score_text(r)),
                xml_text(&reason)
            )?;
        }
        CaseStatus::Pass => {}
    }
    out.write_all(b"    </testcase>\n")?;
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
            }
            EventKind::CaseFinished { result } => {
                let s = self.suite(&result.case.suite)?;
                write_case(s, result)?;
            }
            EventKind::RunFinished { summary, .. } => {
                let mut f = AtomicFile::create(&self.dir, "junit.xml")?;
                let (mut t, mut fl, mut er, mut sk) = (0, 0, 0, 0);
                for s in self.suites.values() {
                    t += s.tests;
                    fl += s.failures;
                    er += s.errors;
                    sk += s.skipped;
                }
                writeln!(f.out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")?;
                writeln!(
                    f.out,
                    "<testsuites name=\"{}\" tests=\"{t}\" failures=\"{fl}\" errors=\"{er}\" skipped=\"{sk}\" time=\"{:.3}\">",
                    xml_text(&self.run_name),
                    summary.duration_ms as f64 / 1000.0
                )?;
                for (name, mut s) in std::mem::take(&mut self.suites) {
                    s.out.flush()?;
                    drop(s.out);
                    writeln!(
                        f.out,
                        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
                        xml_text(&name),
                        s.tests,
                        s.failures,
                        s.errors,
                        s.skipped,
                        s.time_ms as f64 / 1000.0
                    )?;
                    std::io::copy(&mut BufReader::new(File::open(&s.path)?), &mut f.out)?;
                    std::fs::remove_file(&s.path)?;
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
        s.out.flush().expect("flush");
        std::fs::read_to_string(&s.path).expect("read")
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
            !pass.contains("<failure") && !pass.contains("<system-out"),
            "{pass}"
        );
        assert!(
            pass.contains(r#"<property name="status" value="PASS"/>"#),
            "{pass}"
        );
        assert!(pass.trim_end().ends_with("</testcase>"), "{pass}");
    }

    #[test]
    fn a_quarantined_failure_is_skipped_not_failed() {
        let q = written(&case("FAIL", true));
        assert!(
            q.contains(r#"<skipped message="quarantined, does not gate: FAIL contains: no `x` in &quot;a&quot;"/>"#),
            "{q}"
        );
        assert!(!q.contains("<failure"), "{q}");
        // A quarantined case that passes is an ordinary pass.
        let qp = written(&case("PASS", true));
        assert!(!qp.contains("<skipped") && !qp.contains("<failure"), "{qp}");
    }
}
