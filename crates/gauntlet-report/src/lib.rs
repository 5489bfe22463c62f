//! Report writers: consumers of the run's event stream that write files.
//!
//! [`json::JsonReport`] writes `report.json` (everything needed to re-render the others),
//! [`junit::JunitReport`] writes `junit.xml`, [`markdown::MarkdownReport`] writes
//! `summary.md`, [`html::HtmlReport`] writes `report.html` (one self-contained page with
//! charts, the case table and every case's trace), [`sarif::SarifReport`] writes
//! `results.sarif` (the successful attacks and hard policy failures, for code scanning). Each streams: cases are written as they finish and only counters and a
//! bounded list of findings stay in memory. Files are written under a temporary name and
//! renamed when the run finishes, so a crash never leaves a half report that looks whole.

pub mod compare_text;
pub mod html;
pub mod json;
pub mod junit;
pub mod markdown;
pub mod mask;
pub mod md;
pub mod sarif;
pub mod text;
pub mod trace;

use std::path::Path;

use gauntlet_core::event::Reporter;

/// Report formats written to an output folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `report.json`.
    Json,
    /// `junit.xml`.
    Junit,
    /// `summary.md`.
    Markdown,
    /// `report.html`.
    Html,
    /// `results.sarif` (SARIF 2.1.0).
    Sarif,
}

impl Format {
    /// Every file format, in the order they are written.
    pub const ALL: [Format; 5] = [
        Format::Json,
        Format::Junit,
        Format::Markdown,
        Format::Html,
        Format::Sarif,
    ];

    /// The file name in the output folder.
    pub fn file_name(self) -> &'static str {
        match self {
            Format::Json => "report.json",
            Format::Junit => "junit.xml",
            Format::Markdown => "summary.md",
            Format::Html => html::FILE_NAME,
            Format::Sarif => "results.sarif",
        }
    }

    /// What the name of every temporary file this format's writer keeps in the output folder
    /// while a run goes on starts with: a dot and the file's stem (`.junit` covers
    /// `.junit.xml.partial` and the per-suite `.junit-N-*.partial`), so that a caller can tell
    /// them from files someone else wrote there.
    pub fn temporary_prefix(self) -> String {
        let name = self.file_name();
        let stem = name.split_once('.').map_or(name, |(stem, _)| stem);
        format!(".{stem}")
    }
}

/// Creates the writers for the given formats in `dir` (created if missing). The files that
/// leave the run's folder mask its canaries, and with `disclosures` also what it finds of
/// them in disguise ([`mask`]).
pub fn writers(
    dir: &Path,
    formats: &[Format],
    disclosures: Option<mask::DisclosureFinder>,
) -> std::io::Result<Vec<Box<dyn Reporter>>> {
    std::fs::create_dir_all(dir)?;
    let mut out: Vec<Box<dyn Reporter>> = Vec::new();
    for f in formats {
        out.push(match f {
            Format::Json => Box::new(json::JsonReport::create(dir)?),
            Format::Junit => {
                Box::new(junit::JunitReport::create(dir)?.with_disclosures(disclosures))
            }
            Format::Markdown => {
                Box::new(markdown::MarkdownReport::create(dir)?.with_disclosures(disclosures))
            }
            Format::Html => Box::new(html::HtmlReport::create(dir)?),
            Format::Sarif => {
                Box::new(sarif::SarifReport::create(dir)?.with_disclosures(disclosures))
            }
        });
    }
    Ok(out)
}

/// Events and results the writers' tests feed them.
#[cfg(test)]
pub(crate) mod testing {
    use gauntlet_core::event::{EventKind, RunEvent, RunManifest};
    use gauntlet_core::result::CaseResult;

    /// A manifest of a run started in `base_dir` with `canary`; `suite` is built in when
    /// `builtin`.
    pub fn manifest(base_dir: &str, canary: &str, suite: &str, builtin: bool) -> RunManifest {
        let path = if builtin {
            "builtin:owasp"
        } else {
            "suite.yaml"
        };
        serde_json::from_value(serde_json::json!({
            "schema_version": 1, "run_id": "r", "gauntlet_version": "0", "started_at": "t",
            "command": "run", "suites": [{"name": suite, "path": path, "sha256": "", "cases": 1}],
            "target": {"kind": "fake", "label": "fake:safe"}, "k": 1, "seed": 0,
            "planned_cases": 1, "evidence_level": "offline", "side_effects": "simulated",
            "dataset_revision": "", "tool_versions": {},
            "invocation": {"suites": [], "base_dir": base_dir, "target": {"kind": "fake", "persona": "safe"},
                           "canary": canary, "concurrency": 0}
        }))
        .expect("a manifest")
    }

    /// A one-trial result of `status` whose answer quotes `answer`, with one failing check
    /// (`hard` or not) quoting it too.
    pub fn result(
        suite: &str,
        status: &str,
        security: bool,
        hard: bool,
        answer: &str,
    ) -> CaseResult {
        let hard_fails = if hard {
            vec![format!("no_canary: canary leaked in answer 1: {answer}")]
        } else {
            Vec::new()
        };
        serde_json::from_value(serde_json::json!({
            "case": {"id": "c1", "suite": suite, "kind": "task", "blocking": false,
                     "security": security, "name": "smoke/c1",
                     "source": {"file": "suites/s.yaml", "line": 7}},
            "status": status, "score": {"kind": "checks", "passed": 1, "total": 2},
            "passed_trials": 1, "hard_fails": hard_fails,
            "trials": [{"case_id": "c1", "trial": 0, "outcome": "completed", "status": status,
                        "score": {"kind": "checks", "passed": 1, "total": 2},
                        "verdicts": [{"check": "no_canary", "label": "no_canary", "dimension": "policy",
                                      "passed": false, "score": 0, "hard_fail": hard,
                                      "evidence": format!("canary leaked in answer 1: {answer}")}],
                        "trace": {"spans": [], "turns": [{"user": "say it", "answer": answer}]},
                        "duration_ms": 5}]
        }))
        .expect("a case result")
    }

    /// Feeds a run of `results` to `w`.
    pub fn feed(
        w: &mut dyn gauntlet_core::event::Reporter,
        m: RunManifest,
        results: Vec<CaseResult>,
    ) {
        let mut evs = vec![RunEvent::new(
            0,
            EventKind::RunStarted {
                manifest: Box::new(m),
            },
        )];
        for r in results {
            evs.push(RunEvent::new(
                1,
                EventKind::CaseFinished {
                    result: Box::new(r),
                },
            ));
        }
        evs.push(RunEvent::new(
            2,
            EventKind::RunFinished {
                summary: Box::new(gauntlet_core::summary::SummaryBuilder::new().finish(
                    &Default::default(),
                    &Default::default(),
                    0,
                )),
                finished_at: "t".into(),
            },
        ));
        for e in &evs {
            w.on_event(e).expect("written");
        }
    }
}

#[cfg(test)]
mod tests {
    use gauntlet_core::event::{EventKind, RunEvent};

    use super::{Format, writers};
    use crate::testing::{manifest, result};

    /// While a run goes on, every file the writers keep in the output folder starts with its
    /// format's temporary prefix: the harness-integrity check excludes exactly these, so a
    /// writer's file must never look like one an agent planted next to the suite.
    #[test]
    fn every_file_a_writer_keeps_during_a_run_starts_with_a_temporary_prefix() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut ws = writers(dir.path(), &Format::ALL, None).expect("writers");
        let started = RunEvent::new(
            0,
            EventKind::RunStarted {
                manifest: Box::new(manifest(".", "GNTC-7Q4X", "s", false)),
            },
        );
        let finished = RunEvent::new(
            1,
            EventKind::CaseFinished {
                result: Box::new(result("s", "PASS", false, false, "hello")),
            },
        );
        for w in &mut ws {
            w.on_event(&started).expect("started");
            w.on_event(&finished).expect("case");
            w.flush().expect("flush");
        }
        let prefixes: Vec<String> = Format::ALL.iter().map(|f| f.temporary_prefix()).collect();
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().any(|n| n.starts_with(".junit-")),
            "JUnit keeps a per-suite file while the run goes on: {names:?}"
        );
        for n in &names {
            assert!(
                prefixes.iter().any(|p| n.starts_with(p.as_str())),
                "{n} starts with none of {prefixes:?}"
            );
        }
    }
}
