//! [`Disguise`]: one canary's disclosures in disguise (spelled out, encoded, reversed, in
//! part), found by the [`Disclosures`] the writers are lent and masked in place.
//!
//! A finder may report a stretch that holds a mask already put in, and reads the mask's own
//! text as well as the reply's; so while a text is searched, what was found is replaced by a
//! placeholder of private-use characters that no finder reads as a secret, and the labels go
//! in once nothing more is found. A text that holds such characters itself gets the labels
//! straight away, and a bounded number of rounds.

use std::ops::Range;
use std::sync::Arc;

use gauntlet_core::result::CaseResult;
use serde_json::Value;

use super::Disclosures;

/// Which results a canary can be in: every one (the run's canary), a suite's, or one case's
/// (and its benign twin's, and its matrix columns').
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Scope {
    Run,
    Suite(String),
    Case { suite: String, id: String },
}

impl Scope {
    /// Where the mask's index files it: `("", "")`, `(suite, "")` or `(suite, case id)`.
    pub(super) fn key(&self) -> (String, String) {
        match self {
            Scope::Run => (String::new(), String::new()),
            Scope::Suite(s) => (s.clone(), String::new()),
            Scope::Case { suite, id } => (suite.clone(), id.clone()),
        }
    }

    fn covers(&self, r: &CaseResult) -> bool {
        match self {
            Scope::Run => true,
            Scope::Suite(s) => *s == r.case.suite,
            Scope::Case { suite, id } => {
                *suite == r.case.suite
                    && r.case.id.strip_prefix(id.as_str()).is_some_and(|rest| {
                        rest.is_empty() || rest.starts_with('~') || rest.starts_with(' ')
                    })
            }
        }
    }
}

/// One canary's finder, the results it reads and the canary's mask (`GNTC…(19 chars)`).
#[derive(Debug, Clone)]
pub(super) struct Disguise {
    pub(super) scopes: Vec<Scope>,
    pub(super) finder: Arc<dyn Disclosures>,
    pub(super) label: String,
    pub(super) canary: String,
}

impl Disguise {
    /// Whether `r` can hold this canary: reading only those keeps the cost of a run whose
    /// cases each plant their own canary linear in its results.
    pub(super) fn covers(&self, r: &CaseResult) -> bool {
        self.scopes.iter().any(|s| s.covers(r))
    }
}

/// Searches after a round that found something: each round masks every copy the finder
/// reports, so more are needed only for disguises a finder reports one at a time.
const ROUNDS: usize = 32;
/// Rounds for a text that holds private-use characters of its own, where labels go in
/// straight away and a finder that misreads a label would otherwise find it every round.
const DIRECT_ROUNDS: usize = 8;

const OPEN: char = '\u{E000}';
const CLOSE: char = '\u{E001}';
/// The placeholder's digits, `0` to `f`.
const DIGIT: u32 = 0xE010;

fn is_placeholder_char(c: char) -> bool {
    ('\u{E000}'..='\u{E01F}').contains(&c)
}

/// How much of a text is searched for disguises: the files that quote a result show at most
/// the first 4,000 characters of any text (summary.md 160 a cell, junit.xml 1,000 a quote,
/// results.sarif 4,000 of a prompt), and a finder that reports one copy a call would read a
/// 2 MB reply dozens of times for nothing. The plain canary is masked in the whole text.
const SEARCHED: usize = 65_536;

/// Replaces each disclosure the `disguises` find in `s` (its first [`SEARCHED`] bytes) with
/// its label, searching again what was masked until nothing more is found; whether any was
/// found.
pub(super) fn mask_text(disguises: &[&Disguise], s: &mut String) -> bool {
    if disguises.is_empty() {
        return false;
    }
    if s.len() > SEARCHED {
        let cut = s.floor_char_boundary(SEARCHED);
        let mut head = s[..cut].to_owned();
        if !mask_text(disguises, &mut head) {
            return false;
        }
        head.push_str(&s[cut..]);
        *s = head;
        return true;
    }
    let direct = s.chars().any(is_placeholder_char);
    let mut labels: Vec<String> = Vec::new();
    let mut changed = false;
    for _ in 0..if direct { DIRECT_ROUNDS } else { ROUNDS } {
        let found = find_all(disguises, s);
        if found.is_empty() {
            break;
        }
        for (r, label) in found.into_iter().rev() {
            let with = if direct {
                label
            } else {
                labels.push(label);
                placeholder(labels.len() - 1)
            };
            s.replace_range(r, &with);
        }
        changed = true;
    }
    if !labels.is_empty() {
        *s = put_labels(s, &labels);
    }
    changed
}

/// Every disclosure in `s`, overlapping ones made one (two readings of one stretch), widened
/// to whole placeholders, by offset, each with its label.
fn find_all(disguises: &[&Disguise], s: &str) -> Vec<(Range<usize>, String)> {
    let view = escapes_blanked(s);
    let mut found: Vec<(Range<usize>, String)> = Vec::new();
    for d in disguises {
        let texts = std::iter::once(s).chain(view.as_deref());
        for (r, how) in texts.flat_map(|t| d.finder.find(t)) {
            if r.start < r.end && s.is_char_boundary(r.start) && s.is_char_boundary(r.end) {
                found.push((widen(s, r), format!("[REDACTED:canary {}, {how}]", d.label)));
            }
        }
    }
    found.sort_by_key(|(r, _)| r.start);
    let mut merged: Vec<(Range<usize>, String)> = Vec::new();
    for (r, label) in found {
        match merged.last_mut() {
            Some((m, _)) if r.start < m.end => m.end = m.end.max(r.end),
            _ => merged.push((r, label)),
        }
    }
    merged
}

/// `r` widened so that it cuts no placeholder in two (a placeholder is a few characters).
fn widen(s: &str, mut r: Range<usize>) -> Range<usize> {
    while let Some(c) = s[..r.start].chars().next_back().filter(|&c| {
        is_placeholder_char(c) && c != CLOSE && s[r.start..].starts_with(is_placeholder_char)
    }) {
        r.start -= c.len_utf8();
    }
    while let Some(c) = s[r.end..].chars().next().filter(|&c| {
        is_placeholder_char(c) && c != OPEN && s[..r.end].ends_with(is_placeholder_char)
    }) {
        r.end += c.len_utf8();
    }
    r
}

/// The placeholder of label `i`: `OPEN`, its hex digits, `CLOSE`.
fn placeholder(i: usize) -> String {
    let mut out = String::from(OPEN);
    for d in format!("{i:x}").chars() {
        let v = d.to_digit(16).unwrap_or(0);
        out.push(char::from_u32(DIGIT + v).unwrap_or(OPEN));
    }
    out.push(CLOSE);
    out
}

/// `s` with each placeholder replaced by its label.
fn put_labels(s: &str, labels: &[String]) -> String {
    let mut out = String::with_capacity(s.len() + labels.len() * 40);
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != OPEN {
            out.push(c);
            continue;
        }
        let mut i = 0usize;
        for d in chars.by_ref() {
            if d == CLOSE {
                break;
            }
            i = i * 16 + (u32::from(d) - DIGIT) as usize;
        }
        out.push_str(labels.get(i).map_or("[REDACTED:canary]", String::as_str));
    }
    out
}

/// Masks, across the strings an object or array holds directly, a disclosure split between
/// them (`{"a": "GNTC", "b": "7Q4X", ...}`), which no one of them shows and a line that prints
/// them together does: each string value the disclosure touches is masked whole. Keys are
/// read between the values, as a line prints them, and never changed here: a struct's field
/// names must stay (a key holding a disclosure itself is masked where keys are). Small values
/// only (a tool call's arguments), so that a long reply is not read twice.
pub(super) fn mask_split(disguises: &[&Disguise], v: &mut Value) -> bool {
    const EACH: usize = 4096;
    const TOTAL: usize = 65_536;
    // The texts in order (an object's key before its value), and whether each is a key.
    let texts: Vec<(String, bool)> = match &*v {
        Value::Array(a) => a
            .iter()
            .filter_map(|x| x.as_str().map(|t| (t.to_owned(), false)))
            .collect(),
        Value::Object(o) => o
            .iter()
            .flat_map(|(k, x)| {
                std::iter::once((k.clone(), true)).chain(x.as_str().map(|t| (t.to_owned(), false)))
            })
            .collect(),
        _ => return false,
    };
    if disguises.is_empty()
        || texts.len() < 2
        || texts.iter().any(|(t, _)| t.len() > EACH)
        || texts.iter().map(|(t, _)| t.len() + 1).sum::<usize>() > TOTAL
    {
        return false;
    }
    // Read as a line prints them (keys and values in turn) and as the values alone.
    let mut hit = vec![false; texts.len()];
    let mut label = String::new();
    for values_only in [false, true] {
        let mut joined = String::new();
        let mut spans: Vec<(usize, Range<usize>)> = Vec::new();
        for (i, (t, key)) in texts.iter().enumerate() {
            if values_only && *key {
                continue;
            }
            if !joined.is_empty() {
                joined.push('\n');
            }
            spans.push((i, joined.len()..joined.len() + t.len()));
            joined.push_str(t);
        }
        for d in disguises {
            for (r, how) in d.finder.find(&joined) {
                for (i, s) in &spans {
                    if s.start < r.end && r.start < s.end && !texts[*i].1 {
                        hit[*i] = true;
                        label = format!("[REDACTED:canary {}, {how}]", d.label);
                    }
                }
            }
        }
    }
    if !hit.contains(&true) {
        return false;
    }
    let mut hits = hit.into_iter();
    match v {
        Value::Array(a) => {
            for x in a.iter_mut().filter(|x| x.is_string()) {
                if hits.next() == Some(true) {
                    *x = Value::String(label.clone());
                }
            }
        }
        Value::Object(o) => {
            for x in o.values_mut() {
                // The key's turn comes first, never hit.
                hits.next();
                if x.is_string() && hits.next() == Some(true) {
                    *x = Value::String(label.clone());
                }
            }
        }
        _ => {}
    }
    true
}

/// `s` with each backslash escape of a control character or a quote (`\n`, `\t`, `\r`,
/// `\"`, and those escaped again, `\\n`) replaced by as many spaces, so that byte offsets
/// still hold; `None` when it has none.
fn escapes_blanked(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        let run = bytes[i..].iter().take_while(|&&b| b == b'\\').count();
        let end = i + run;
        if end < bytes.len() && matches!(bytes[end], b'n' | b't' | b'r' | b'"') {
            let o = out.get_or_insert_with(|| bytes.to_vec());
            o[i..=end].fill(b' ');
            i = end + 1;
        } else {
            i = end;
        }
    }
    // Only ASCII bytes were replaced by ASCII bytes: still UTF-8.
    out.map(|o| String::from_utf8(o).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Finds `0` (its first copy only, as a stage that reads a reply whole reports one).
    #[derive(Debug)]
    struct First(&'static str);

    impl Disclosures for First {
        fn find(&self, text: &str) -> Vec<(Range<usize>, &'static str)> {
            text.find(self.0)
                .map(|i| (i..i + self.0.len(), "spelled"))
                .into_iter()
                .collect()
        }
    }

    fn first(secret: &'static str, scopes: Vec<Scope>) -> Disguise {
        Disguise {
            scopes,
            finder: Arc::new(First(secret)),
            label: "GNTC…(16 chars)".into(),
            canary: "GNTC-7Q4X-M2RK-91ZB".into(),
        }
    }

    #[test]
    fn every_copy_is_masked_though_the_finder_reports_one_a_call() {
        let d = first("G N T C 7 Q 4 X", vec![Scope::Run]);
        let mut s = "G N T C 7 Q 4 X; ".repeat(20);
        assert!(mask_text(&[&d], &mut s));
        assert_eq!(
            s.matches("[REDACTED:canary GNTC…(16 chars), spelled]")
                .count(),
            20,
            "{s}"
        );
        assert!(!s.contains("G N T C"), "{s}");
    }

    #[test]
    fn a_quote_of_a_quote_is_read_with_its_escapes_blanked() {
        assert_eq!(
            escapes_blanked(r"G\nN\\nT\\\nC\tx\\y").as_deref(),
            Some(r"G  N   T    C  x\\y")
        );
        assert_eq!(escapes_blanked("plain"), None);
        let d = first("G  N   T    C", vec![Scope::Run]);
        let mut s = r#"did not refuse: "{\"code\": \"G\nN\\nT\\\nC\"}""#.to_owned();
        assert!(mask_text(&[&d], &mut s));
        assert!(
            s.contains("[REDACTED:canary GNTC…(16 chars), spelled]"),
            "{s}"
        );
    }

    #[test]
    fn a_disclosure_split_between_the_fields_of_one_object_masks_each_field() {
        let d = first("GNTC\n7Q4X\nM2RK", vec![Scope::Run]);
        let mut v = serde_json::json!({"a": "GNTC", "b": "7Q4X", "c": "M2RK", "d": "hello"});
        assert!(mask_split(&[&d], &mut v));
        let text = v.to_string();
        for part in ["GNTC\"", "7Q4X", "M2RK"] {
            assert!(!text.contains(part), "{text}");
        }
        assert_eq!(v["d"], "hello");
        // Read with the keys between the values, as a line prints them; keys stay.
        let mut v = serde_json::json!({"GNTC": "7Q4X\nM2RK"});
        assert!(mask_split(&[&d], &mut v));
        assert_eq!(
            v,
            serde_json::json!({"GNTC": "[REDACTED:canary GNTC…(16 chars), spelled]"})
        );
        // Nothing split: nothing changes.
        let mut v = serde_json::json!({"a": "GNTC", "b": "later"});
        assert!(!mask_split(&[&d], &mut v));
    }

    #[test]
    fn a_case_s_canary_is_looked_for_in_that_case_s_results_only() {
        let scope = Scope::Case {
            suite: "s".into(),
            id: "c1".into(),
        };
        let mut r = crate::testing::result("s", "FAIL", false, true, "x");
        r.case.id = "c1".into();
        assert!(scope.covers(&r));
        for (id, covered) in [
            ("c1~benign", true),
            ("c1 @ gpt", true),
            ("c10", false),
            ("c2", false),
        ] {
            r.case.id = id.into();
            assert_eq!(scope.covers(&r), covered, "{id}");
        }
        r.case.id = "c1".into();
        r.case.suite = "other".into();
        assert!(!scope.covers(&r));
        assert!(Scope::Run.covers(&r));
        assert!(Scope::Suite("other".into()).covers(&r));
    }
}
