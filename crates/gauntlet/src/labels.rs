//! The labels file: [`LabelRecord`], one person's judgement of one output against one check.
//! `gauntlet view` writes it in its labelling mode; judge calibration reads it.
//!
//! JSON lines by default, CSV when the file name ends in `.csv`; both have the same columns,
//! in this order: `input`, `output`, `reference`, `label`, `case_id`, `check_id`, then the
//! optional `run_id`, `trial`, `check_label` and `labeled_at`. docs/labels.md is the
//! specification; readers ignore columns they do not know.

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

/// A person's judgement of an output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Label {
    /// The output meets the check.
    Pass,
    /// It does not.
    Fail,
}

/// One line of the labels file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelRecord {
    /// What the agent was given: the user's message, or for several turns the earlier
    /// turns as `USER: ...` / `ASSISTANT: ...` lines followed by the last user message.
    pub input: String,
    /// What the agent answered last.
    pub output: String,
    /// What the check compares against: a judge's rubric, or the check as written in the
    /// suite (JSON). Empty when the suite could not be read.
    pub reference: String,
    /// The judgement.
    pub label: Label,
    /// The case id.
    pub case_id: String,
    /// The check's kind as in report.json (`judge`, `refusal`, `contains`, ...).
    pub check_id: String,
    /// The run the output came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The trial, from 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<u32>,
    /// The check's name in the suite, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_label: Option<String>,
    /// When it was labelled (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labeled_at: Option<String>,
}

fn is_csv(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
}

/// Appends one record (creating the file, and a CSV file's header, when needed).
pub fn append(path: &Path, rec: &LabelRecord) -> std::io::Result<()> {
    let fresh = std::fs::metadata(path).map_or(true, |m| m.len() == 0);
    let mut file = OpenOptions::new().create(true).append(true).open(path)?;
    if is_csv(path) {
        // Every optional column is written, empty when unknown, so that rows line up.
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        if fresh {
            w.write_record(CSV_COLUMNS)?;
        }
        w.write_record([
            rec.input.as_str(),
            &rec.output,
            &rec.reference,
            match rec.label {
                Label::Pass => "pass",
                Label::Fail => "fail",
            },
            &rec.case_id,
            &rec.check_id,
            rec.run_id.as_deref().unwrap_or(""),
            &rec.trial.map(|t| t.to_string()).unwrap_or_default(),
            rec.check_label.as_deref().unwrap_or(""),
            rec.labeled_at.as_deref().unwrap_or(""),
        ])?;
        let bytes = w.into_inner().map_err(|e| e.into_error())?;
        file.write_all(&bytes)
    } else {
        let mut line = serde_json::to_vec(rec).map_err(std::io::Error::other)?;
        line.push(b'\n');
        file.write_all(&line)
    }
}

const CSV_COLUMNS: [&str; 10] = [
    "input",
    "output",
    "reference",
    "label",
    "case_id",
    "check_id",
    "run_id",
    "trial",
    "check_label",
    "labeled_at",
];

#[derive(Deserialize)]
struct CsvRow {
    input: String,
    output: String,
    reference: String,
    label: Label,
    case_id: String,
    check_id: String,
    #[serde(default)]
    run_id: Option<String>,
    #[serde(default)]
    trial: Option<String>,
    #[serde(default)]
    check_label: Option<String>,
    #[serde(default)]
    labeled_at: Option<String>,
}

fn some(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.is_empty())
}

/// Reads every record; a missing file has none. Errors name the line.
pub fn read(path: &Path) -> Result<Vec<LabelRecord>, String> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("failed to read `{}`: {e}", path.display())),
    };
    let mut out = Vec::new();
    if is_csv(path) {
        let mut r = csv::Reader::from_reader(file);
        for (i, row) in r.deserialize::<CsvRow>().enumerate() {
            let row = row.map_err(|e| format!("{}: record {}: {e}", path.display(), i + 1))?;
            out.push(LabelRecord {
                input: row.input,
                output: row.output,
                reference: row.reference,
                label: row.label,
                case_id: row.case_id,
                check_id: row.check_id,
                run_id: some(row.run_id),
                trial: some(row.trial)
                    .map(|t| {
                        t.parse().map_err(|_| {
                            format!("{}: record {}: bad trial `{t}`", path.display(), i + 1)
                        })
                    })
                    .transpose()?,
                check_label: some(row.check_label),
                labeled_at: some(row.labeled_at),
            });
        }
    } else {
        for (i, line) in BufReader::new(file).lines().enumerate() {
            let line = line.map_err(|e| format!("failed to read `{}`: {e}", path.display()))?;
            if line.trim().is_empty() {
                continue;
            }
            out.push(
                serde_json::from_str(&line)
                    .map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?,
            );
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(label: Label) -> LabelRecord {
        LabelRecord {
            input: "Refund order A-1, please.\nThanks, \"Bob\"".into(),
            output: "Done, refunded.".into(),
            reference: "{\"contains\":\"refund\"}".into(),
            label,
            case_id: "refund-small".into(),
            check_id: "contains".into(),
            run_id: Some("20260101T000000Z-abcd".into()),
            trial: Some(1),
            check_label: None,
            labeled_at: Some("2026-01-01T00:00:00Z".into()),
        }
    }

    #[test]
    fn both_formats_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["labels.jsonl", "labels.csv"] {
            let p = dir.path().join(name);
            append(&p, &rec(Label::Pass)).unwrap();
            append(&p, &rec(Label::Fail)).unwrap();
            let back = read(&p).unwrap();
            assert_eq!(back, vec![rec(Label::Pass), rec(Label::Fail)], "{name}");
        }
        let csv = std::fs::read_to_string(dir.path().join("labels.csv")).unwrap();
        assert!(csv.starts_with("input,output,reference,label,case_id,check_id,"));
        assert_eq!(csv.matches("input,output").count(), 1, "one header");
    }
}
