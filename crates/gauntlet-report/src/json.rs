//! `report.json`: [`JsonReport`], the complete record of a run in one versioned document.
//!
//! Layout (schema version [`REPORT_SCHEMA_VERSION`]; the JSON Schema is printed by
//! `gauntlet schema --report`):
//!
//! ```text
//! { "schema_version": 1, "kind": "gauntlet.report",
//!   "manifest": RunManifest,
//!   "cases": [CaseResult, ...],          // in the order they finished, trials and traces included
//!   "warnings": [string, ...],
//!   "summary": Summary, "finished_at": RFC 3339 }
//! ```
//!
//! Cases are written as they finish, so the file grows while memory does not.

use std::io::Write;
use std::path::Path;

use gauntlet_core::event::{EventKind, REPORT_SCHEMA_VERSION, ReportError, Reporter, RunEvent};
use serde::{Deserialize, Serialize};

use crate::text::AtomicFile;

/// Writes `report.json`.
pub struct JsonReport {
    file: Option<AtomicFile>,
    first_case: bool,
    warnings: Vec<String>,
}

impl JsonReport {
    /// Opens the report in `dir`.
    pub fn create(dir: &Path) -> std::io::Result<JsonReport> {
        Ok(JsonReport {
            file: Some(AtomicFile::create(dir, "report.json")?),
            first_case: true,
            warnings: Vec::new(),
        })
    }
}

impl Reporter for JsonReport {
    fn on_event(&mut self, ev: &RunEvent) -> Result<(), ReportError> {
        let Some(f) = self.file.as_mut() else {
            return Ok(());
        };
        let out = &mut f.out;
        match &ev.kind {
            EventKind::RunStarted { manifest } => {
                write!(
                    out,
                    "{{\"schema_version\":{REPORT_SCHEMA_VERSION},\"kind\":\"gauntlet.report\",\"manifest\":"
                )?;
                serde_json::to_writer(&mut *out, manifest)?;
                out.write_all(b",\"cases\":[\n")?;
            }
            EventKind::CaseFinished { .. } => {
                if !self.first_case {
                    out.write_all(b",\n")?;
                }
                self.first_case = false;
                if let Some(json) = ev.case_json() {
                    out.write_all(json?.as_bytes())?;
                }
            }
            EventKind::Warning { message } => {
                if self.warnings.len() < 1000 {
                    self.warnings.push(message.clone());
                }
            }
            EventKind::TrialFinished { .. } => {}
            EventKind::RunFinished {
                summary,
                finished_at,
            } => {
                out.write_all(b"\n],\"warnings\":")?;
                serde_json::to_writer(&mut *out, &self.warnings)?;
                out.write_all(b",\"summary\":")?;
                serde_json::to_writer(&mut *out, summary)?;
                out.write_all(b",\"finished_at\":")?;
                serde_json::to_writer(&mut *out, finished_at)?;
                out.write_all(b"}\n")?;
                if let Some(f) = self.file.take() {
                    f.commit()?;
                }
            }
        }
        Ok(())
    }
}

/// `report.json` read back whole (for tools and tests; the writer never holds it in memory).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReportDocument {
    /// Format version.
    pub schema_version: u32,
    /// Always `gauntlet.report`.
    pub kind: String,
    /// Facts about the run.
    pub manifest: gauntlet_core::event::RunManifest,
    /// Every case, with its trials and traces.
    pub cases: Vec<gauntlet_core::result::CaseResult>,
    /// Warnings raised during the run.
    pub warnings: Vec<String>,
    /// The result.
    pub summary: gauntlet_core::summary::Summary,
    /// When the run finished.
    pub finished_at: String,
}

impl ReportDocument {
    /// The events that produced this document, for re-rendering other formats from it.
    pub fn into_events(self) -> Vec<RunEvent> {
        let mut evs = vec![RunEvent::new(
            0,
            EventKind::RunStarted {
                manifest: Box::new(self.manifest),
            },
        )];
        for w in self.warnings {
            evs.push(RunEvent::new(0, EventKind::Warning { message: w }));
        }
        for c in self.cases {
            evs.push(RunEvent::new(
                0,
                EventKind::CaseFinished {
                    result: Box::new(c),
                },
            ));
        }
        evs.push(RunEvent::new(
            self.summary.duration_ms,
            EventKind::RunFinished {
                summary: Box::new(self.summary),
                finished_at: self.finished_at,
            },
        ));
        evs
    }
}
