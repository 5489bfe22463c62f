//! The text of a promoted case, and of the file it goes into: a case as a block-list item
//! in block-style YAML (written by serde-saphyr and read back before it is used; a case
//! that would not read back as the same value is written with its values as JSON, which
//! YAML reads as it is), a new suite file made from the original one (its header, comments
//! and all, without its cases and includes), and an append to an existing suite file that
//! touches nothing above its end.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

/// The keys of a case in the order a person writes them; others follow in their own order,
/// and its checks come last.
const KEY_ORDER: &[&str] = &[
    "id",
    "description",
    "kind",
    "pack",
    "owasp",
    "technique",
    "harm",
    "tags",
    "blocking",
    "input",
    "turns",
    "documents",
    "tool_faults",
];

/// One case as a block-list item at `indent` (the spaces before its `-`).
pub fn case_item(case: &Value, indent: usize) -> String {
    let Some(obj) = case.as_object() else {
        return String::new();
    };
    let mut keys: Vec<&str> = KEY_ORDER
        .iter()
        .copied()
        .filter(|k| obj.contains_key(*k))
        .collect();
    keys.extend(
        obj.keys()
            .map(String::as_str)
            .filter(|k| !KEY_ORDER.contains(k) && *k != "expect"),
    );
    keys.extend(obj.contains_key("expect").then_some("expect"));
    block_item(obj, &keys, indent).unwrap_or_else(|| json_item(obj, &keys, indent))
}

/// A case's keys in a chosen order, serialized as one mapping.
struct Ordered<'a> {
    obj: &'a Map<String, Value>,
    keys: &'a [&'a str],
}

impl Serialize for Ordered<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.keys.len()))?;
        for k in self.keys {
            m.serialize_entry(k, &self.obj[*k])?;
        }
        m.end()
    }
}

/// Block-style YAML of `value`: texts of several lines as literal blocks (`|`), long ones
/// on one line (a folded block would read back with its line breaks only as the YAML rules
/// of folding say), lists and mappings indented.
pub fn block<T: Serialize>(value: &T) -> Option<String> {
    let opts = serde_saphyr::ser_options! {
        indent_step: 2,
        compact_list_indent: false,
        folded_wrap_chars: usize::MAX,
    };
    serde_saphyr::to_string_with_options(value, opts).ok()
}

/// The case in block style, or `None` when the text would not read back as the same value.
fn block_item(obj: &Map<String, Value>, keys: &[&str], indent: usize) -> Option<String> {
    let text = block(&[Ordered { obj, keys }])?;
    let back: Vec<Value> = serde_saphyr::from_str(&text).ok()?;
    if back != [Value::Object(obj.clone())] {
        return None;
    }
    let pad = " ".repeat(indent);
    let mut out = String::new();
    for line in text.lines() {
        // An empty line stays empty: spaces there would be text in a literal block.
        if !line.is_empty() {
            out.push_str(&pad);
        }
        out.push_str(line);
        out.push('\n');
    }
    Some(out)
}

/// The case with each value written as JSON, which YAML reads as it is.
fn json_item(obj: &Map<String, Value>, keys: &[&str], indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut out = String::new();
    for (i, key) in keys.iter().enumerate() {
        let lead = if i == 0 {
            format!("{pad}- ")
        } else {
            format!("{pad}  ")
        };
        match (&obj[*key], *key) {
            (Value::Array(items), "expect" | "turns" | "documents") if !items.is_empty() => {
                out.push_str(&format!("{lead}{key}:\n"));
                for item in items {
                    out.push_str(&format!("{pad}    - {item}\n"));
                }
            }
            (value, _) => out.push_str(&format!("{lead}{key}: {value}\n")),
        }
    }
    out
}

/// A top-level key of a YAML file and the lines its block spans (`start..end`).
#[derive(Debug, PartialEq, Eq)]
struct Block {
    key: String,
    start: usize,
    end: usize,
}

/// The top-level keys of block-style YAML text: a line that starts with neither a space, a
/// `#` nor a `-` and has a `:` starts a block, which runs to the next one.
fn blocks(lines: &[&str]) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let top = !line.is_empty()
            && !line.starts_with([' ', '\t', '#', '-'])
            && !line.starts_with("...");
        if let Some(key) = line.split_once(':').map(|(k, _)| k.trim()).filter(|_| top) {
            if let Some(last) = out.last_mut() {
                last.end = i;
            }
            out.push(Block {
                key: key.trim_matches(['"', '\'']).to_owned(),
                start: i,
                end: lines.len(),
            });
        }
    }
    out
}

/// A new suite file from the original's text: its header as written, named `name`, without
/// its cases, includes and pack requirements (they stay with the original: this file holds
/// regressions only, and must not be inconclusive for lack of a pack), then `cases:` with
/// `item`.
pub fn new_suite(original: &str, name: &str, item: &str) -> String {
    let lines: Vec<&str> = original.lines().collect();
    let mut out = String::new();
    let mut next = 0;
    for b in blocks(&lines) {
        for line in &lines[next..b.start] {
            out.push_str(line);
            out.push('\n');
        }
        next = b.end;
        match b.key.as_str() {
            "cases" | "include" | "packs" => {}
            "suite" => out.push_str(&format!("suite: {}\n", Value::from(name))),
            _ => {
                for line in &lines[b.start..b.end] {
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
    }
    for line in &lines[next..] {
        out.push_str(line);
        out.push('\n');
    }
    format!(
        "{}\n# Regressions only: the original suite's pack requirements stay with it.\npacks: {{no_refusal_pack: true}}\ncases:\n{item}",
        out.trim_end()
    )
}

/// Whether `text` is a block-style YAML mapping whose top-level `suite:` key starts a line
/// (what the line-based editing here needs), not a flow-style (JSON) document.
pub fn block_style(text: &str) -> bool {
    let lines: Vec<&str> = text.lines().collect();
    blocks(&lines).iter().any(|b| b.key == "suite")
}

/// `existing` with a case appended to its `cases:` list, when that can be done by adding
/// lines at its end: the list is block style and is the file's last top-level key (or the
/// file has no cases yet). `None` otherwise.
pub fn appended(existing: &str, case: &Value) -> Option<String> {
    let lines: Vec<&str> = existing.lines().collect();
    let all = blocks(&lines);
    let mut text = existing.trim_end().to_owned();
    text.push('\n');
    match all.iter().find(|b| b.key == "cases") {
        None => {
            text.push_str("cases:\n");
            text.push_str(&case_item(case, 2));
            Some(text)
        }
        Some(b) if all.last() == Some(b) => {
            let head = lines[b.start].split_once(':')?.1.trim();
            if !head.is_empty() && !head.starts_with('#') {
                return None; // `cases: []` or a flow list
            }
            let indent = lines[b.start + 1..b.end]
                .iter()
                .find(|l| l.trim_start().starts_with("- "))
                .map_or(2, |l| l.len() - l.trim_start().len());
            text.push_str(&case_item(case, indent));
            Some(text)
        }
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_case_is_written_as_a_block_item_in_a_persons_key_order() {
        let case = json!({"expect": [{"contains": "x"}], "id": "a-regress", "input": "say \"x\"\nthen stop\n", "tags": ["regression", "from-run:20261205T013317Z-4510"]});
        assert_eq!(
            case_item(&case, 2),
            "  - id: a-regress\n    tags:\n      - regression\n      - from-run:20261205T013317Z-4510\n    input: |\n      say \"x\"\n      then stop\n    expect:\n      - contains: x\n"
        );
    }

    /// Texts a YAML writer can get wrong: each reads back exactly, as a case of a suite.
    #[test]
    fn awkward_texts_read_back_as_they_were() {
        let awkward = [
            "",
            " leading space",
            "trailing space ",
            "yes",
            "no",
            "on",
            "null",
            "~",
            "123",
            "1e3",
            "0x1F",
            "- dash",
            "# hash",
            "key: value",
            "a #comment",
            "[flow]",
            "{map}",
            "'quoted'",
            "\"double\"",
            "tab\there",
            "two\nlines",
            "two\nlines\n",
            "ends\n\n\n",
            "\n starts with a newline",
            "  indented\n  block",
            "back\\slash",
            "bell\u{7}",
            "zero\u{200b}width",
            "emoji \u{1F600}",
            "crlf\r\nline",
            "---",
            "...",
            "@at",
            "`tick`",
            "%percent",
            "&anchor",
            "*alias",
            "!tag",
            "|pipe",
            ">gt",
            "long line of text that goes on and on well past eighty characters without a single break anywhere",
        ];
        for text in awkward {
            let case = json!({"id": "a", "input": text, "expect": [{"contains": text}], "vars": {"n": 1.5, "m": -3, "t": true}});
            let item = case_item(&case, 2);
            let back: serde_json::Value = serde_saphyr::from_str(&format!("cases:\n{item}"))
                .unwrap_or_else(|e| panic!("{text:?}: {e}\n{item}"));
            assert_eq!(back["cases"][0], case, "{text:?} written as\n{item}");
        }
    }

    #[test]
    fn values_as_json_read_back_as_they_were() {
        let case = json!({"id": "a", "input": "two\nlines", "expect": [{"contains": "x"}]});
        let obj = case.as_object().unwrap();
        let item = json_item(obj, &["id", "input", "expect"], 2);
        assert_eq!(
            item,
            "  - id: \"a\"\n    input: \"two\\nlines\"\n    expect:\n      - {\"contains\":\"x\"}\n"
        );
        let back: serde_json::Value = serde_saphyr::from_str(&format!("cases:\n{item}")).unwrap();
        assert_eq!(back["cases"][0], case);
    }

    #[test]
    fn a_new_suite_keeps_the_header_and_drops_the_cases_and_includes() {
        let original = "# the shop's suite\nsuite: shop\ninclude: [more.yaml]\npacks:\n  required: [smoke]\nagent:\n  system_prompt: Be nice.\ncases:\n  - id: a\n    input: x\n# trailing note\ndefaults: {blocking: true}\n";
        let item = "  - id: \"b\"\n";
        assert_eq!(
            new_suite(original, "shop-regressions", item),
            "# the shop's suite\nsuite: \"shop-regressions\"\nagent:\n  system_prompt: Be nice.\ndefaults: {blocking: true}\n# Regressions only: the original suite's pack requirements stay with it.\npacks: {no_refusal_pack: true}\ncases:\n  - id: \"b\"\n"
        );
    }

    #[test]
    fn an_append_adds_lines_at_the_end_only_when_cases_come_last_in_block_style() {
        let case = json!({"id": "b"});
        let last = "suite: s\n# keep me\ncases:\n    - id: a\n      input: x\n";
        assert_eq!(
            appended(last, &case).as_deref(),
            Some("suite: s\n# keep me\ncases:\n    - id: a\n      input: x\n    - id: b\n")
        );
        assert_eq!(
            appended("suite: s\n", &case).as_deref(),
            Some("suite: s\ncases:\n  - id: b\n")
        );
        assert_eq!(appended("suite: s\ncases: []\n", &case), None);
        assert_eq!(
            appended("suite: s\ncases:\n  - id: a\nagent: {}\n", &case),
            None
        );
    }
}
