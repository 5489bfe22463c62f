//! The block YAML a generated suite is written in: [`write_value`] renders a JSON value as
//! indented mappings and lists, strings double-quoted as JSON writes them (which YAML reads
//! back the same) or, when they run over several plain lines, as literal blocks, and the
//! keys of every mapping in the order a reviewer expects ([`ordered`]).

use serde_json::{Map, Value};

/// Keys that modify another key of their mapping (a check's modifiers): written after it.
const TRAILING: &[&str] = &[
    "hard",
    "dimension",
    "fail_score",
    "scope",
    "role",
    "mode",
    "ignore_echo",
    "case_sensitive",
];

/// A mapping's keys: those of `order` first, in that order, then the rest sorted, and a
/// check's modifiers after the check in an entry that has one.
pub(crate) fn ordered<'a>(map: &'a Map<String, Value>, order: &[&str]) -> Vec<&'a str> {
    let mut keys: Vec<&str> = order
        .iter()
        .filter_map(|k| map.get_key_value(*k).map(|(k, _)| k.as_str()))
        .collect();
    let mut rest: Vec<&str> = map
        .keys()
        .map(String::as_str)
        .filter(|k| !order.contains(k))
        .collect();
    rest.sort_unstable();
    keys.extend(rest);
    // In a check entry (one key that is no modifier), the modifiers go last.
    let checks = keys.iter().filter(|k| !TRAILING.contains(k)).count();
    if checks == 1 {
        keys.sort_by_key(|k| TRAILING.contains(k));
    }
    keys
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::Object(m) if m.is_empty() => Some("{}".into()),
        Value::Array(a) if a.is_empty() => Some("[]".into()),
        Value::Object(_) | Value::Array(_) => None,
        Value::String(s) => Some(serde_json::to_string(s).unwrap_or_default()),
        other => Some(other.to_string()),
    }
}

/// A string of several lines as a literal block (` |` or ` |-` and the lines at `indent`),
/// when YAML reads it back the same: printable text, no line starting with a space, no
/// trailing space, at most one final newline. `None` for anything else (it is quoted).
fn literal(s: &str, indent: usize) -> Option<String> {
    let body = s.strip_suffix('\n').unwrap_or(s);
    let plain = body.contains('\n')
        && !body.is_empty()
        && !body.ends_with('\n')
        && body
            .chars()
            .all(|c| c == '\n' || (!c.is_control() && c != '\u{feff}'))
        && body
            .lines()
            .all(|l| !l.starts_with([' ', '\t']) && !l.ends_with([' ', '\t']));
    if !plain {
        return None;
    }
    let pad = " ".repeat(indent);
    let mut out = String::from(if s.ends_with('\n') { " |\n" } else { " |-\n" });
    for l in body.lines() {
        if !l.is_empty() {
            out.push_str(&pad);
            out.push_str(l);
        }
        out.push('\n');
    }
    Some(out)
}

fn key(k: &str) -> String {
    let plain = k
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        k.to_owned()
    } else {
        serde_json::to_string(k).unwrap_or_default()
    }
}

/// Writes `v` at `indent` spaces: a mapping as `key: value` lines (in `order`), a list as
/// `- item` lines. The caller has written what precedes it on the line, if anything.
pub(crate) fn write_value(v: &Value, indent: usize, order: &[&str], out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) if !m.is_empty() => {
            for k in ordered(m, order) {
                out.push_str(&pad);
                write_entry(k, &m[k], indent, order, out);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for item in a {
                out.push_str(&pad);
                out.push_str("- ");
                write_item(item, indent + 2, order, out);
            }
        }
        other => {
            out.push_str(&pad);
            out.push_str(&scalar(other).unwrap_or_default());
            out.push('\n');
        }
    }
}

/// `key: value`, the value on the same line when it is a scalar.
fn write_entry(k: &str, v: &Value, indent: usize, order: &[&str], out: &mut String) {
    out.push_str(&key(k));
    out.push(':');
    if let Some(block) = v.as_str().and_then(|s| literal(s, indent + 2)) {
        out.push_str(&block);
        return;
    }
    match scalar(v) {
        Some(s) => {
            out.push(' ');
            out.push_str(&s);
            out.push('\n');
        }
        None => {
            out.push('\n');
            let child = if v.is_array() { indent } else { indent + 2 };
            write_value(v, child, order, out);
        }
    }
}

/// A list item after its `- `: a mapping's first key on the dash's line, the rest below it.
fn write_item(v: &Value, indent: usize, order: &[&str], out: &mut String) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            let pad = " ".repeat(indent);
            for (i, k) in ordered(m, order).into_iter().enumerate() {
                if i > 0 {
                    out.push_str(&pad);
                }
                write_entry(k, &m[k], indent, order, out);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            write_value(v, indent, order, out);
        }
        other => {
            out.push_str(&scalar(other).unwrap_or_default());
            out.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What is written reads back as the value it was written from.
    #[test]
    fn block_yaml_reads_back_as_written() {
        let v = json!({
            "id": "a", "input": "line one\nline \"two\": #x",
            "system_prompt": "You are X.\n\n- a rule: {{canary}}\n# not a comment\n",
            "poison": "two\nlines without a newline at the end",
            "odd": "  leading space\nsecond",
            "expect": [{"tool_not_called": "send_email", "hard": true}, {"refusal": true}],
            "tool": {"name": "t", "description": "d"},
            "tool_faults": [{"tool": "get_order", "poison": "- not a list"}],
            "nested": {"list": [[1, 2], []], "map": {}, "n": null, "weird key": 1.5},
        });
        let mut out = String::new();
        write_value(&v, 0, &["id", "input", "name"], &mut out);
        assert!(
            out.starts_with("id: \"a\"\ninput: |-\n  line one\n"),
            "{out}"
        );
        assert!(
            out.contains("system_prompt: |\n  You are X.\n\n  - a rule"),
            "{out}"
        );
        assert!(out.contains("odd: \"  leading"), "{out}");
        assert!(
            out.contains("- tool_not_called: \"send_email\"\n  hard: true\n"),
            "{out}"
        );
        assert!(
            out.contains("tool:\n  name: \"t\"\n  description:"),
            "{out}"
        );
        let back: Value = serde_saphyr::from_str(&out).expect(&out);
        assert_eq!(back, v, "{out}");
    }
}
