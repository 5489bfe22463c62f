//! Label files: people's verdicts on judged items, read by `gauntlet judge calibrate`
//! ([`parse_labels`] into a [`LabelSet`]) and written, unlabelled, by `gauntlet judge sample`
//! ([`write_items`]).
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

use std::collections::{BTreeMap, HashMap};

use gauntlet_core::judges::JudgeScale;

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
                        .map(|(h, v)| (h.to_owned(), v.to_owned()))
                        .collect(),
                });
            }
        }
    }
    Ok(rows)
}

/// Reads a label file's rows for `check` on `scale`. A row whose `check_id` is empty belongs
/// to every check (a file written for one check).
pub fn parse_labels(
    text: &str,
    format: LabelFormat,
    check: &str,
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
        if !check_id.trim().is_empty() && check_id.trim() != check {
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
                let _ = w.write_record([
                    it.case_id.as_str(),
                    it.check_id.as_str(),
                    it.input.as_str(),
                    it.output.as_str(),
                    it.reference.as_deref().unwrap_or(""),
                    "",
                ]);
            }
            String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_and_jsonl_read_alike() {
        let csv = "case_id,check_id,input,output,reference,label,extra\n\
                   c1,tone,hi,\"hello, there\",,pass,x\n\
                   c2,tone,hi,go away,,fail,y\n\
                   c3,other,hi,meh,,pass,z\n\
                   c4,,hi,ok,,,w\n";
        let a = parse_labels(csv, LabelFormat::Csv, "tone", JudgeScale::Binary).unwrap();
        assert_eq!(a.rows, 4);
        assert_eq!(a.items.len(), 2);
        assert_eq!(a.items[0].output, "hello, there");
        assert_eq!(a.items[0].label, 1);
        assert_eq!(a.items[0].fields["extra"], "x");
        assert_eq!(a.other_checks, 1);
        assert_eq!(a.unlabelled, vec![5]);
        let jsonl = "{\"case_id\":\"c1\",\"check_id\":\"tone\",\"input\":\"hi\",\"output\":\"hello, there\",\"label\":1,\"extra\":\"x\"}\n\
                     {\"case_id\":\"c2\",\"check_id\":\"tone\",\"input\":\"hi\",\"output\":\"go away\",\"label\":\"fail\",\"extra\":\"y\"}\n";
        let b = parse_labels(jsonl, LabelFormat::Jsonl, "tone", JudgeScale::Binary).unwrap();
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
        let s = parse_labels(&rows, LabelFormat::Jsonl, "t", JudgeScale::Binary).unwrap();
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
    fn bad_rows_name_their_line() {
        let err = parse_labels(
            "{\"input\":\"q\",\"output\":\"x\",\"label\":\"maybe\"}",
            LabelFormat::Jsonl,
            "t",
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
            let s = parse_labels(&text, f, "tone", JudgeScale::Binary).unwrap();
            assert_eq!(
                (s.rows, s.items.len(), s.unlabelled.len()),
                (1, 0, 1),
                "{f:?}"
            );
            let filled = text
                .replace(",\n", ",pass\n")
                .replace("\"label\":\"\"", "\"label\":\"pass\"");
            let s = parse_labels(&filled, f, "tone", JudgeScale::Binary).unwrap();
            assert_eq!(s.items[0].input, "hi;\n\"there\"", "{f:?}: {filled}");
        }
    }
}
