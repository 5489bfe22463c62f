//! Report writers: consumers of the run's event stream that write files.
//!
//! [`json::JsonReport`] writes `report.json` (everything needed to re-render the others),
//! [`junit::JunitReport`] writes `junit.xml`, [`markdown::MarkdownReport`] writes
//! `summary.md`, [`html::HtmlReport`] writes `report.html` (one self-contained page with
//! charts, the case table and every case's trace), [`sarif::SarifReport`] writes
//! `results.sarif` (the successful attacks, for code scanning). Each streams: cases are written as they finish and only counters and a
//! bounded list of findings stay in memory. Files are written under a temporary name and
//! renamed when the run finishes, so a crash never leaves a half report that looks whole.

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
}

/// Creates the writers for the given formats in `dir` (created if missing).
pub fn writers(dir: &Path, formats: &[Format]) -> std::io::Result<Vec<Box<dyn Reporter>>> {
    std::fs::create_dir_all(dir)?;
    let mut out: Vec<Box<dyn Reporter>> = Vec::new();
    for f in formats {
        out.push(match f {
            Format::Json => Box::new(json::JsonReport::create(dir)?),
            Format::Junit => Box::new(junit::JunitReport::create(dir)?),
            Format::Markdown => Box::new(markdown::MarkdownReport::create(dir)?),
            Format::Html => Box::new(html::HtmlReport::create(dir)?),
            Format::Sarif => Box::new(sarif::SarifReport::create(dir)?),
        });
    }
    Ok(out)
}
