//! Reading the backlog benchmark's files: the frozen contract ([`load_contract`], JSON) and
//! its ledger ([`load_ledger`], JSON lines or CSV), each problem a [`Diagnostic`] with file,
//! line, column and a hint. The main type is [`LoadedContract`]: the contract, its text and
//! its content hash.
//!
//! The hash is what makes the contract frozen. It is the SHA-256 of the contract's JSON
//! with object keys sorted and no whitespace, so re-indenting the file does not change it
//! but any change to a task, an arm, a rule, a budget or a field does. Every ledger row
//! records the hash it was written against (`contract`, its first 12 hex digits or more);
//! a row whose hash is not the contract's means the contract changed after the ledger
//! started, which `validate` refuses.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use gauntlet_suite::Diagnostic;
use gauntlet_suite::diag::did_you_mean;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{
    BLOCKABLE_FIELDS, BacklogReport, Contract, LedgerRow, NUMBER_FIELDS, ROW_FIELDS, RowState,
};

/// Hex digits of the hash a row must carry at least.
pub const MIN_HASH_DIGITS: usize = 12;

/// The report of a ledger against its contract: both files read and checked, then folded
/// ([`BacklogReport::compute`]).
pub fn load_report(
    contract: &Path,
    ledger: &Path,
) -> Result<(LoadedContract, BacklogReport), Vec<Diagnostic>> {
    let c = load_contract(contract)?;
    let rows = load_ledger(ledger, &c)?;
    let r = BacklogReport::compute(&c.contract, &c.hash, &rows);
    Ok((c, r))
}

/// A contract read and checked.
#[derive(Debug, Clone)]
pub struct LoadedContract {
    /// The file, as given.
    pub origin: String,
    /// The contract.
    pub contract: Contract,
    /// `sha256:` and 64 hex digits.
    pub hash: String,
}

impl LoadedContract {
    /// The hash as rows may write it: `sha256:` and the first 12 hex digits.
    pub fn short_hash(&self) -> &str {
        &self.hash[..7 + MIN_HASH_DIGITS]
    }

    /// Whether a row's recorded hash names this contract (a prefix of 12 digits or more,
    /// with or without `sha256:`).
    pub fn matches(&self, recorded: &str) -> bool {
        let digits = recorded.trim().trim_start_matches("sha256:");
        digits.len() >= MIN_HASH_DIGITS
            && digits.len() <= 64
            && self.hash[7..].starts_with(&digits.to_ascii_lowercase())
    }
}

/// 1-based line and column (in characters) of a byte offset.
fn pos_of(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

/// Where `needle` first occurs at or after `from` (a byte offset), as a position.
fn find_from(text: &str, from: usize, needle: &str) -> Option<(usize, usize)> {
    text.get(from..)?
        .find(needle)
        .map(|i| pos_of(text, from + i))
}

/// The byte offset just after the key `"key":` first appears.
fn key_offset(text: &str, key: &str) -> usize {
    text.find(&format!("\"{key}\"")).unwrap_or(0)
}

/// The position of the `n`th (0-based) `"id": "value"` in the text.
fn id_pos(text: &str, value: &str, n: usize) -> (usize, usize) {
    let quoted = serde_json::to_string(value).unwrap_or_default();
    let re = regex::Regex::new(&format!(r#""id"\s*:\s*{}"#, regex::escape(&quoted)))
        .expect("escaped pattern");
    re.find_iter(text)
        .nth(n)
        .map_or((0, 0), |m| pos_of(text, m.start()))
}

/// Serializes with object keys sorted and no whitespace, whatever order the map keeps.
fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(k).expect("a string serializes"));
                out.push(':');
                canonical(&m[*k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The content hash of a contract's JSON (`sha256:` and 64 hex digits).
pub fn contract_hash(v: &Value) -> String {
    let mut s = String::new();
    canonical(v, &mut s);
    let digest = Sha256::digest(s.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

fn read(path: &Path) -> Result<String, Vec<Diagnostic>> {
    std::fs::read_to_string(path).map_err(|e| {
        vec![
            Diagnostic::file(&path.display().to_string(), format!("cannot read: {e}"))
                .hint("check the path"),
        ]
    })
}

/// Reads and checks a contract file.
pub fn load_contract(path: &Path) -> Result<LoadedContract, Vec<Diagnostic>> {
    let text = read(path)?;
    parse_contract(&path.display().to_string(), &text)
}

/// Checks a contract's text (`origin` names it in diagnostics).
pub fn parse_contract(origin: &str, text: &str) -> Result<LoadedContract, Vec<Diagnostic>> {
    let src = Src { origin, text };
    let value: Value = serde_json::from_str(text).map_err(|e| {
        vec![
            src.at(e.line(), e.column(), format!("not valid JSON: {e}"))
                .hint(
                    "the contract is one JSON object; `gauntlet init --backlog` writes a template",
                ),
        ]
    })?;
    let contract: Contract = serde_json::from_str(text).map_err(|e| {
        let msg = e.to_string();
        let msg = msg.split(" at line ").next().unwrap_or(&msg).to_owned();
        vec![src.at(e.line(), e.column(), msg).hint(
            "see the contract's fields in docs/backlog.md (name, tasks, arms, trials, acceptance, budgets, fields, blocking_fields)",
        )]
    })?;
    let mut d = Vec::new();
    src.check_shape(&contract, &mut d);
    src.check_ids(&contract, &mut d);
    src.check_fields(&contract, &mut d);
    if !d.is_empty() {
        return Err(d);
    }
    Ok(LoadedContract {
        origin: origin.to_owned(),
        contract,
        hash: contract_hash(&value),
    })
}

/// A contract's text and the name it is shown by: where its diagnostics point.
struct Src<'a> {
    origin: &'a str,
    text: &'a str,
}

impl Src<'_> {
    fn at(&self, line: usize, col: usize, msg: String) -> Diagnostic {
        Diagnostic::at(self.origin, Some(self.text), line, col, msg)
    }

    /// A problem at the first `"key"` of the file (or its start).
    fn at_key(&self, key: &str, msg: String) -> Diagnostic {
        let (l, c) = find_from(self.text, 0, &format!("\"{key}\"")).unwrap_or((0, 0));
        self.at(l, c, msg)
    }

    /// The version, and that there is something to run: tasks, arms, trials, rules.
    fn check_shape(&self, contract: &Contract, d: &mut Vec<Diagnostic>) {
        if contract.backlog_version != super::BACKLOG_VERSION {
            d.push(
                self.at_key(
                    "backlog_version",
                    format!("unknown backlog_version {}", contract.backlog_version),
                )
                .hint("only version 1 exists"),
            );
        }
        if contract.tasks.is_empty() {
            d.push(
                self.at_key("tasks", "the contract has no tasks".into())
                    .hint("list the backlog items under `tasks`"),
            );
        }
        if contract.arms.is_empty() {
            d.push(self.at_key("arms", "the contract has no arms".into()).hint(
                "name at least one arm (the agent), and a control to compare it with (people without it)",
            ));
        }
        if contract.trials == 0 {
            d.push(
                self.at_key("trials", "`trials` must be at least 1".into())
                    .hint("one trial per task and arm is the usual"),
            );
        }
        if contract
            .acceptance
            .rules
            .iter()
            .all(|r| r.trim().is_empty())
        {
            d.push(self.at_key("acceptance", "the acceptance rules are empty".into()).hint(
                "write down, before the run, what makes a trial accepted (CI green, merged without rewrite, ...)",
            ));
        }
    }

    /// Ids unique within tasks and within arms (an id seen twice is reported at its second
    /// occurrence in the file), and at most one control arm.
    fn check_ids(&self, contract: &Contract, d: &mut Vec<Diagnostic>) {
        let text = self.text;
        let mut seen: HashMap<&str, usize> = HashMap::new();
        let all_ids = contract
            .tasks
            .iter()
            .map(|t| t.id.as_str())
            .chain(contract.arms.iter().map(|a| a.id.as_str()));
        for id in all_ids {
            let n = seen.entry(id).or_default();
            if id.trim().is_empty() {
                d.push(
                    self.at(
                        id_pos(text, id, *n).0,
                        id_pos(text, id, *n).1,
                        "an empty id".into(),
                    )
                    .hint("give every task and arm an id"),
                );
            } else if *n == 1 {
                let (l, c) = id_pos(text, id, 1);
                d.push(
                    self.at(l, c, format!("id `{id}` is used twice"))
                        .hint("task and arm ids must be unique: ledger rows name them"),
                );
            }
            *n += 1;
        }
        let controls: Vec<&str> = contract
            .arms
            .iter()
            .filter(|a| a.control)
            .map(|a| a.id.as_str())
            .collect();
        if controls.len() > 1 {
            d.push(
                self.at_key(
                    "control",
                    format!(
                        "{} arms are marked `control` ({})",
                        controls.len(),
                        controls.join(", ")
                    ),
                )
                .hint("mark one arm as the control; the others are compared with it"),
            );
        }
    }

    /// Declared fields that are not built-in ones, blocking fields that are fields, and
    /// positive budgets.
    fn check_fields(&self, contract: &Contract, d: &mut Vec<Diagnostic>) {
        let text = self.text;
        let fields_at = key_offset(text, "fields");
        for f in &contract.fields {
            if ROW_FIELDS.contains(&f.as_str()) {
                let (l, c) = find_from(text, fields_at, &format!("\"{f}\"")).unwrap_or((0, 0));
                d.push(self.at(l, c, format!("`{f}` is a built-in field")).hint(
                    "`fields` declares columns of your own; the built-in ones need no declaration",
                ));
            }
        }
        let blocking_at = key_offset(text, "blocking_fields");
        for f in &contract.blocking_fields {
            let known = BLOCKABLE_FIELDS.contains(&f.as_str()) || contract.fields.contains(f);
            if !known {
                let (l, c) = find_from(text, blocking_at, &format!("\"{f}\"")).unwrap_or((0, 0));
                let candidates: Vec<&str> = BLOCKABLE_FIELDS
                    .iter()
                    .copied()
                    .chain(contract.fields.iter().map(String::as_str))
                    .collect();
                let hint = match did_you_mean(f, candidates.iter().copied()) {
                    Some(s) => format!(
                        "did you mean `{s}`? A blocking field is a built-in one or declared in `fields`"
                    ),
                    None => format!(
                        "a blocking field is one of {} or declared in `fields`",
                        BLOCKABLE_FIELDS.join(", ")
                    ),
                };
                d.push(
                    self.at(l, c, format!("blocking field `{f}` is not a field"))
                        .hint(hint),
                );
            }
        }
        for (key, v) in [
            ("max_cost_usd", contract.budgets.max_cost_usd),
            ("max_agent_minutes", contract.budgets.max_agent_minutes),
        ] {
            if let Some(v) = v
                && !(v.is_finite() && v > 0.0)
            {
                d.push(
                    self.at_key(key, format!("budget `{key}` must be a positive number"))
                        .hint("leave it out for no limit"),
                );
            }
        }
    }
}

/// One cell of a row as written: its value and column.
struct Cell {
    value: Value,
    col: usize,
}

/// Reads and checks a ledger against its contract: JSON lines, or CSV when the file name
/// ends in `.csv`.
pub fn load_ledger(path: &Path, c: &LoadedContract) -> Result<Vec<LedgerRow>, Vec<Diagnostic>> {
    let text = read(path)?;
    let origin = path.display().to_string();
    let csv = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    if csv {
        parse_ledger_csv(&origin, &text, c)
    } else {
        parse_ledger_jsonl(&origin, &text, c)
    }
}

fn known_fields(c: &LoadedContract) -> Vec<&str> {
    ROW_FIELDS
        .iter()
        .copied()
        .chain(c.contract.fields.iter().map(String::as_str))
        .collect()
}

fn unknown_field(
    origin: &str,
    text: &str,
    line: usize,
    col: usize,
    key: &str,
    c: &LoadedContract,
) -> Diagnostic {
    let known = known_fields(c);
    let hint = match did_you_mean(key, known.iter().copied()) {
        Some(s) => format!("did you mean `{s}`?"),
        None => "declare columns of your own in the contract's `fields` (before the ledger starts)"
            .to_owned(),
    };
    Diagnostic::at(
        origin,
        Some(text),
        line,
        col,
        format!("unknown field `{key}`"),
    )
    .hint(hint)
}

/// Checks a JSON lines ledger.
pub fn parse_ledger_jsonl(
    origin: &str,
    text: &str,
    c: &LoadedContract,
) -> Result<Vec<LedgerRow>, Vec<Diagnostic>> {
    let mut rows = Vec::new();
    let mut d = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let map: serde_json::Map<String, Value> = match serde_json::from_str(raw) {
            Ok(m) => m,
            Err(e) => {
                d.push(
                    Diagnostic::at(
                        origin,
                        Some(text),
                        line,
                        e.column(),
                        format!("not a JSON object: {e}"),
                    )
                    .hint("each line of the ledger is one JSON object (one task x arm x trial)"),
                );
                continue;
            }
        };
        let cells: Vec<(String, Cell)> = map
            .into_iter()
            .map(|(k, v)| {
                let col = raw
                    .find(&format!("\"{k}\""))
                    .map_or(1, |b| raw[..b].chars().count() + 1);
                (k, Cell { value: v, col })
            })
            .collect();
        let cols: HashMap<String, usize> = cells.iter().map(|(k, v)| (k.clone(), v.col)).collect();
        match row_of(origin, text, line, cells, c) {
            Ok(r) => rows.push((r, cols)),
            Err(mut e) => d.append(&mut e),
        }
    }
    finish(origin, text, rows, d, c)
}

/// Checks a CSV ledger (a header row, then one row per task x arm x trial; empty cells are
/// absent values).
pub fn parse_ledger_csv(
    origin: &str,
    text: &str,
    c: &LoadedContract,
) -> Result<Vec<LedgerRow>, Vec<Diagnostic>> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(text.as_bytes());
    let headers = match rdr.headers() {
        Ok(h) => h.clone(),
        Err(e) => {
            return Err(vec![
                Diagnostic::at(
                    origin,
                    Some(text),
                    1,
                    1,
                    format!("cannot read the header row: {e}"),
                )
                .hint("the first line names the columns: contract,task,arm,trial,state,..."),
            ]);
        }
    };
    let mut d = Vec::new();
    let known = known_fields(c);
    let mut col = 1;
    for h in headers.iter() {
        if !known.contains(&h.trim()) {
            d.push(unknown_field(origin, text, 1, col, h.trim(), c));
        }
        col += h.chars().count() + 1;
    }
    if !d.is_empty() {
        return Err(d);
    }
    let mut rows = Vec::new();
    for rec in rdr.records() {
        let rec = match rec {
            Ok(r) => r,
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line() as usize);
                d.push(
                    Diagnostic::at(
                        origin,
                        Some(text),
                        line,
                        1,
                        format!("not a ledger row: {e}"),
                    )
                    .hint("every row has as many cells as the header"),
                );
                continue;
            }
        };
        let line = rec.position().map_or(0, |p| p.line() as usize);
        let mut cells = Vec::new();
        let mut col = 1;
        for (h, v) in headers.iter().zip(rec.iter()) {
            if !v.trim().is_empty() {
                cells.push((
                    h.trim().to_owned(),
                    Cell {
                        value: Value::String(v.trim().to_owned()),
                        col,
                    },
                ));
            }
            col += v.chars().count() + 1;
        }
        let cols: HashMap<String, usize> = cells.iter().map(|(k, v)| (k.clone(), v.col)).collect();
        match row_of(origin, text, line, cells, c) {
            Ok(r) => rows.push((r, cols)),
            Err(mut e) => d.append(&mut e),
        }
    }
    finish(origin, text, rows, d, c)
}

/// One row from its cells: types, the contract's tasks, arms and trials.
fn row_of(
    origin: &str,
    text: &str,
    line: usize,
    cells: Vec<(String, Cell)>,
    c: &LoadedContract,
) -> Result<LedgerRow, Vec<Diagnostic>> {
    let at = |col: usize, msg: String| Diagnostic::at(origin, Some(text), line, col, msg);
    let mut d = Vec::new();
    let known = known_fields(c);
    let mut row = LedgerRow {
        line,
        contract: String::new(),
        task: String::new(),
        arm: String::new(),
        trial: 0,
        state: RowState::NotStarted,
        review_minutes: None,
        rework_minutes: None,
        cost_usd: None,
        agent_minutes: None,
        note: None,
        fields: BTreeMap::new(),
    };
    let mut state_seen = false;
    for (key, Cell { value, col }) in cells {
        if !known.contains(&key.as_str()) {
            d.push(unknown_field(origin, text, line, col, &key, c));
            continue;
        }
        let text_of = |v: &Value| match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        };
        match key.as_str() {
            "contract" | "task" | "arm" | "state" | "note" => {
                let Some(s) = value.as_str().map(str::to_owned) else {
                    d.push(at(col, format!("`{key}` must be a string")).hint("write it in quotes"));
                    continue;
                };
                match key.as_str() {
                    "contract" => row.contract = s,
                    "task" => row.task = s,
                    "arm" => row.arm = s,
                    "note" => row.note = Some(s),
                    _ => match RowState::parse(&s) {
                        Some(st) => {
                            row.state = st;
                            state_seen = true;
                        }
                        None => {
                            let names: Vec<&str> =
                                RowState::ALL.iter().map(|s| s.as_str()).collect();
                            let hint = match did_you_mean(&s, names.iter().copied()) {
                                Some(n) => format!("did you mean `{n}`?"),
                                None => format!("a state is one of {}", names.join(", ")),
                            };
                            d.push(at(col, format!("unknown state `{s}`")).hint(hint));
                            state_seen = true;
                        }
                    },
                }
            }
            "trial" => {
                let n = match &value {
                    Value::Number(n) => n.as_u64(),
                    Value::String(s) => s.parse::<u64>().ok(),
                    _ => None,
                };
                match n.and_then(|n| u32::try_from(n).ok()) {
                    Some(n) if n >= 1 && n <= c.contract.trials => row.trial = n,
                    _ => d.push(
                        at(
                            col,
                            format!(
                                "`trial` must be a whole number from 1 to {}",
                                c.contract.trials
                            ),
                        )
                        .hint("the contract's `trials` says how many trials each task and arm get"),
                    ),
                }
            }
            k if NUMBER_FIELDS.contains(&k) => {
                let n = match &value {
                    Value::Number(n) => n.as_f64(),
                    Value::String(s) => s.parse::<f64>().ok(),
                    Value::Null => continue,
                    _ => None,
                };
                match n {
                    Some(n) if n.is_finite() && n >= 0.0 => match k {
                        "review_minutes" => row.review_minutes = Some(n),
                        "rework_minutes" => row.rework_minutes = Some(n),
                        "cost_usd" => row.cost_usd = Some(n),
                        _ => row.agent_minutes = Some(n),
                    },
                    _ => d.push(at(col, format!("`{k}` must be a number, 0 or more")).hint(
                        "leave the field out when it is not known (a blocking field must be filled)",
                    )),
                }
            }
            _ => match text_of(&value) {
                Some(s) => {
                    row.fields.insert(key, s);
                }
                None if value.is_null() => {}
                None => d.push(
                    at(col, format!("`{key}` must be a string, number or boolean"))
                        .hint("write one value"),
                ),
            },
        }
    }
    missing_cells(&mut row, state_seen, c, &at, &mut d);
    if d.is_empty() { Ok(row) } else { Err(d) }
}

/// The cells every row needs (`contract`, `task`, `arm`, `state`, and `trial` when the
/// contract runs more than one), reported at the row's first column; a missing `trial` of a
/// one-trial contract is 1.
fn missing_cells(
    row: &mut LedgerRow,
    state_seen: bool,
    c: &LoadedContract,
    at: &dyn Fn(usize, String) -> Diagnostic,
    d: &mut Vec<Diagnostic>,
) {
    for (name, v) in [
        ("contract", &row.contract),
        ("task", &row.task),
        ("arm", &row.arm),
    ] {
        if v.is_empty() {
            d.push(at(1, format!("the row has no `{name}`")).hint(match name {
                "contract" => {
                    "record the contract hash that `gauntlet backlog validate` prints on every row"
                }
                "task" => "name the contract task the row is about",
                _ => "name the contract arm the row is about",
            }));
        }
    }
    if !state_seen {
        d.push(
            at(1, "the row has no `state`".into())
                .hint("accepted, failed, not_started, abandoned or censored"),
        );
    }
    if row.trial == 0 && !d.iter().any(|x| x.message.contains("`trial`")) {
        if c.contract.trials == 1 {
            row.trial = 1;
        } else {
            d.push(at(1, "the row has no `trial`".into()).hint(format!(
                "the contract runs {} trials per task and arm: say which one this row is",
                c.contract.trials
            )));
        }
    }
}

/// The checks across rows and against the contract: the hash, tasks and arms, duplicates,
/// blocking fields, budgets.
fn finish(
    origin: &str,
    text: &str,
    rows: Vec<(LedgerRow, HashMap<String, usize>)>,
    mut d: Vec<Diagnostic>,
    c: &LoadedContract,
) -> Result<Vec<LedgerRow>, Vec<Diagnostic>> {
    let at =
        |line: usize, col: usize, msg: String| Diagnostic::at(origin, Some(text), line, col, msg);
    let cols: HashMap<usize, &HashMap<String, usize>> =
        rows.iter().map(|(r, c)| (r.line, c)).collect();
    let col_of = |line: usize, key: &str| {
        cols.get(&line)
            .and_then(|c| c.get(key))
            .copied()
            .unwrap_or(1)
    };
    let rows: Vec<&LedgerRow> = rows.iter().map(|(r, _)| r).collect();
    stale_hashes(&rows, c, &at, &col_of, &mut d);
    let tasks: Vec<&str> = c.contract.tasks.iter().map(|t| t.id.as_str()).collect();
    let arms: Vec<&str> = c.contract.arms.iter().map(|a| a.id.as_str()).collect();
    let mut first: HashMap<(&str, &str, u32), usize> = HashMap::new();
    for r in rows.iter().copied() {
        let mut known = true;
        // A row's `task` or `arm` the contract does not have, at its column.
        let unknown = |key: &str, value: &str, hint: String| {
            at(
                r.line,
                col_of(r.line, key),
                format!("unknown {key} `{value}`"),
            )
            .hint(hint)
        };
        if !tasks.contains(&r.task.as_str()) {
            known = false;
            let hint = match did_you_mean(&r.task, tasks.iter().copied()) {
                Some(s) => format!("did you mean `{s}`? Rows name tasks of the contract"),
                None => "rows name tasks of the contract; a task added later needs a new contract"
                    .to_owned(),
            };
            d.push(unknown("task", &r.task, hint));
        }
        if !arms.contains(&r.arm.as_str()) {
            known = false;
            let hint = match did_you_mean(&r.arm, arms.iter().copied()) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("the contract's arms are {}", arms.join(", ")),
            };
            d.push(unknown("arm", &r.arm, hint));
        }
        if known {
            match first.get(&(r.task.as_str(), r.arm.as_str(), r.trial)) {
                Some(l) => d.push(
                    at(r.line, 1, format!(
                        "duplicate row: task `{}`, arm `{}`, trial {} is already on line {l}",
                        r.task, r.arm, r.trial
                    ))
                    .hint("one row per task x arm x trial: update the row in place instead of adding another"),
                ),
                None => {
                    first.insert((r.task.as_str(), r.arm.as_str(), r.trial), r.line);
                }
            }
        }
        resolved_row(r, c, &at, &col_of, &mut d);
    }
    if d.is_empty() {
        Ok(rows.into_iter().cloned().collect())
    } else {
        Err(d)
    }
}

/// A changed contract: reported once per hash the rows recorded, at its first row.
fn stale_hashes(
    rows: &[&LedgerRow],
    c: &LoadedContract,
    at: &dyn Fn(usize, usize, String) -> Diagnostic,
    col_of: &dyn Fn(usize, &str) -> usize,
    d: &mut Vec<Diagnostic>,
) {
    let mut stale: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for r in rows.iter().copied() {
        if !c.matches(&r.contract) {
            let e = stale.entry(r.contract.clone()).or_insert((r.line, 0));
            e.1 += 1;
        }
    }
    for (h, (line, n)) in &stale {
        let short = h.trim_start_matches("sha256:");
        let msg = if short.len() < MIN_HASH_DIGITS
            || !short.chars().all(|ch| ch.is_ascii_hexdigit())
        {
            format!("`{h}` is not a contract hash ({n} row(s) carry it)")
        } else {
            format!(
                "the contract changed after the ledger started: {n} row(s), from this one, were recorded against {h}, and the contract now hashes to {}",
                c.short_hash()
            )
        };
        d.push(at(*line, col_of(*line, "contract"), msg).hint(
            "a frozen contract does not change once trials run: restore the contract the rows were written against (from version control), or start a new ledger for the new contract",
        ));
    }
}

/// A resolved row has its blocking fields; an accepted one keeps within the budgets.
fn resolved_row(
    r: &LedgerRow,
    c: &LoadedContract,
    at: &dyn Fn(usize, usize, String) -> Diagnostic,
    col_of: &dyn Fn(usize, &str) -> usize,
    d: &mut Vec<Diagnostic>,
) {
    if r.state.is_resolved() {
        for f in &c.contract.blocking_fields {
            if !r.has(f) {
                d.push(
                    at(
                        r.line,
                        1,
                        format!(
                            "the row is {} but has no `{f}`, a blocking field of the contract",
                            r.state.as_str()
                        ),
                    )
                    .hint("fill it in; a resolved row without its blocking fields does not count"),
                );
            }
        }
    }
    if r.state == RowState::Accepted {
        for (key, limit, value) in [
            ("cost_usd", c.contract.budgets.max_cost_usd, r.cost_usd),
            (
                "agent_minutes",
                c.contract.budgets.max_agent_minutes,
                r.agent_minutes,
            ),
        ] {
            if let (Some(limit), Some(v)) = (limit, value)
                && v > limit
            {
                d.push(
                    at(r.line, col_of(r.line, key), format!(
                        "the row is accepted but `{key}` {v} is over the contract's budget of {limit} per trial"
                    ))
                    .hint("a trial over budget is not accepted: record it as failed (say why in `note`)"),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONTRACT: &str = r#"{
  "backlog_version": 1,
  "name": "pilot",
  "tasks": [
    {"id": "T1", "title": "fix the login bug"},
    {"id": "T2", "title": "add CSV export"}
  ],
  "arms": [
    {"id": "human", "description": "the team", "control": true},
    {"id": "agent", "description": "the agent"}
  ],
  "acceptance": {"rules": ["CI green", "merged without rewrite"]},
  "budgets": {"max_cost_usd": 5},
  "fields": ["reviewer"],
  "blocking_fields": ["reviewer", "review_minutes"]
}
"#;

    fn contract() -> LoadedContract {
        parse_contract("contract.json", CONTRACT).expect("valid")
    }

    fn ledger(rows: &[&str]) -> String {
        let mut s = String::new();
        for r in rows {
            s.push_str(r);
            s.push('\n');
        }
        s
    }

    #[test]
    fn the_hash_ignores_layout_but_not_content() {
        let a = contract();
        let relaid: Value = serde_json::from_str(CONTRACT).unwrap();
        let compact = serde_json::to_string(&relaid).unwrap();
        assert_eq!(parse_contract("c", &compact).unwrap().hash, a.hash);
        let changed = CONTRACT.replace("add CSV export", "add XLSX export");
        assert_ne!(parse_contract("c", &changed).unwrap().hash, a.hash);
        assert!(a.matches(a.short_hash()));
        assert!(a.matches(&a.hash));
        assert!(!a.matches("sha256:0000"));
    }

    #[test]
    fn contract_errors_point_at_the_problem() {
        let dup = CONTRACT.replace(r#""id": "T2""#, r#""id": "T1""#);
        let d = parse_contract("c.json", &dup).unwrap_err();
        assert_eq!(d[0].message, "id `T1` is used twice");
        assert_eq!((d[0].line, d[0].column), (6, 6));
        let bad = CONTRACT.replace(r#"["reviewer", "review_minutes"]"#, r#"["reviewr"]"#);
        let d = parse_contract("c.json", &bad).unwrap_err();
        assert_eq!(d[0].line, 15);
        assert!(
            d[0].hint
                .as_deref()
                .unwrap()
                .contains("did you mean `reviewer`")
        );
        let typo = CONTRACT.replace("\"budgets\"", "\"budget\"");
        let d = parse_contract("c.json", &typo).unwrap_err();
        assert!(
            d[0].message.contains("unknown field `budget`"),
            "{}",
            d[0].message
        );
        assert_eq!(d[0].line, 13);
    }

    #[test]
    fn ledger_rows_are_checked_against_the_contract() {
        let c = contract();
        let h = c.short_hash().to_owned();
        let text = ledger(&[
            &format!(
                r#"{{"contract":"{h}","task":"T1","arm":"agent","state":"accepted","reviewer":"ana","review_minutes":10,"cost_usd":1}}"#
            ),
            &format!(
                r#"{{"contract":"{h}","task":"T9","arm":"agent","state":"failed","reviewer":"ana","review_minutes":10}}"#
            ),
            &format!(r#"{{"contract":"{h}","task":"T2","arm":"robot","state":"censored"}}"#),
            &format!(
                r#"{{"contract":"{h}","task":"T1","arm":"agent","state":"failed","reviewer":"bo","review_minutes":3}}"#
            ),
            &format!(
                r#"{{"contract":"{h}","task":"T2","arm":"agent","state":"accepted","review_minutes":3,"cost_usd":9}}"#
            ),
            &format!(r#"{{"contract":"{h}","task":"T2","arm":"human","state":"acepted"}}"#),
        ]);
        let d = parse_ledger_jsonl("l.jsonl", &text, &c).unwrap_err();
        let msgs: Vec<String> = d
            .iter()
            .map(|d| format!("{}: {}", d.location(), d.message))
            .collect();
        let has = |s: &str| msgs.iter().any(|m| m.contains(s));
        assert!(
            has("l.jsonl:6:") && has("unknown state `acepted`"),
            "{msgs:#?}"
        );
        assert!(has("l.jsonl:2:") && has("unknown task `T9`"), "{msgs:#?}");
        assert!(has("l.jsonl:3:") && has("unknown arm `robot`"), "{msgs:#?}");
        assert!(
            has("l.jsonl:4:1: duplicate row: task `T1`, arm `agent`, trial 1 is already on line 1"),
            "{msgs:#?}"
        );
        assert!(
            has("l.jsonl:5:1: the row is accepted but has no `reviewer`"),
            "{msgs:#?}"
        );
        assert!(has("over the contract's budget of 5"), "{msgs:#?}");
        // The column points at the key.
        let task = d.iter().find(|x| x.message.contains("T9")).unwrap();
        assert_eq!(task.column, 13 + c.short_hash().len() + 3);
    }

    #[test]
    fn a_changed_contract_is_refused() {
        let c = contract();
        let h = c.short_hash().to_owned();
        let text = ledger(&[&format!(
            r#"{{"contract":"{h}","task":"T1","arm":"agent","state":"censored"}}"#
        )]);
        assert!(parse_ledger_jsonl("l", &text, &c).is_ok());
        let changed =
            parse_contract("c", &CONTRACT.replace("merged without rewrite", "merged")).unwrap();
        let d = parse_ledger_jsonl("l", &text, &changed).unwrap_err();
        assert!(
            d[0].message
                .starts_with("the contract changed after the ledger started"),
            "{}",
            d[0].message
        );
        assert_eq!((d[0].line, d[0].column), (1, 2));
    }

    #[test]
    fn csv_ledgers_read_the_same() {
        let c = contract();
        let h = c.short_hash().to_owned();
        let text = format!(
            "contract,task,arm,trial,state,review_minutes,cost_usd,reviewer\n{h},T1,agent,1,accepted,10,1.5,ana\n{h},T2,agent,1,censored,,,\n{h},T1,humn,1,failed,5,1,ana\n"
        );
        let d = parse_ledger_csv("l.csv", &text, &c).unwrap_err();
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].line, 4);
        assert_eq!(d[0].column, h.len() + 5);
        assert!(d[0].hint.as_deref().unwrap().contains("`human`"));
        let ok = text.replace("humn", "human");
        let rows = parse_ledger_csv("l.csv", &ok, &c).unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].cost_usd, Some(1.5));
        assert_eq!(rows[1].state, RowState::Censored);
        assert_eq!(rows[0].fields["reviewer"], "ana");
        let bad_header = text.replace("reviewer\n", "reveiwer\n");
        let d = parse_ledger_csv("l.csv", &bad_header, &c).unwrap_err();
        assert_eq!((d[0].line, d[0].column), (1, 55));
    }
}
