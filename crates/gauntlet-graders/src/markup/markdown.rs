//! Markdown: inline links and images and reference definitions, read as CommonMark reads
//! them ([`scan_inline_links`], [`scan_references`]), their destinations unescaped and
//! classified.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

use super::html::classify_decoded;
use super::url::{Hosts, Target};
use super::{Hit, MarkupKind};

/// Inline links and images `[text](dest "title")` / `![alt](dest)`, with CommonMark's
/// balanced-parenthesis destinations, backslash escapes and entity decoding.
pub(super) fn scan_inline_links(text: &str, hosts: &Hosts, hits: &mut Vec<Hit>) {
    let bytes = text.as_bytes();
    let opens = bracket_pairs(bytes);
    let mut last_end = 0;
    let mut from = 0;
    while let Some(p) = text[from..].find("](") {
        let close = from + p;
        from = close + 2;
        if close < last_end {
            continue;
        }
        let Ok(k) = opens.binary_search_by_key(&close, |&(c, _)| c) else {
            continue;
        };
        let open = opens[k].1;
        let Some((dest, end)) = link_destination(text, close + 2) else {
            continue;
        };
        last_end = end;
        let image = open > 0 && bytes[open - 1] == b'!' && !(open > 1 && bytes[open - 2] == b'\\');
        let start = if image { open - 1 } else { open };
        markdown_target(dest, image, start, end, hosts, hits, None);
    }
}

/// Matches `[` to `]` (skipping backslash-escaped ones, resetting at blank lines): close
/// position to open position.
fn bracket_pairs(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut stack: Vec<usize> = Vec::new();
    // Pushed in order of the closing bracket, so sorted for binary search.
    let mut pairs = Vec::new();
    let mut i = 0;
    let mut line_blank = true;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => {
                i += 2;
                line_blank = false;
                continue;
            }
            b'[' => stack.push(i),
            b']' => {
                if let Some(o) = stack.pop() {
                    pairs.push((i, o));
                }
            }
            b'\n' => {
                if line_blank {
                    stack.clear();
                }
                line_blank = true;
                i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' => {
                i += 1;
                continue;
            }
            _ => {}
        }
        line_blank = false;
        i += 1;
    }
    pairs
}

/// Parses `dest "title")` starting just after `(`; returns the raw destination and the index
/// after the closing `)`. `None` when it is not a link (CommonMark then shows it as text).
fn link_destination(text: &str, at: usize) -> Option<(&str, usize)> {
    let b = text.as_bytes();
    let mut i = at;
    let skip_ws = |mut i: usize| {
        let mut newlines = 0;
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
            if b[i] == b'\n' {
                newlines += 1;
                if newlines > 1 {
                    break;
                }
            }
            i += 1;
        }
        i
    };
    i = skip_ws(i);
    let (dest, mut j) = if i < b.len() && b[i] == b'<' {
        let rel = b[i + 1..]
            .iter()
            .position(|&c| matches!(c, b'>' | b'\n' | b'<'))?;
        if b[i + 1 + rel] != b'>' {
            return None;
        }
        (&text[i + 1..i + 1 + rel], i + rel + 2)
    } else {
        let s = i;
        let mut depth = 0usize;
        while i < b.len() {
            let c = b[i];
            if c <= b' ' || c == 0x7F {
                break;
            }
            if c == b'\\' && i + 1 < b.len() && b[i + 1].is_ascii_punctuation() {
                i += 2;
                continue;
            }
            if c == b'(' {
                depth += 1;
            } else if c == b')' {
                if depth == 0 {
                    break;
                }
                depth -= 1;
            }
            i += 1;
        }
        (&text[s..i], i)
    };
    let dest_end = j;
    j = skip_ws(j);
    // A title needs whitespace between it and the destination.
    if j > dest_end && j < b.len() && matches!(b[j], b'"' | b'\'' | b'(') {
        let q = if b[j] == b'(' { b')' } else { b[j] };
        let rel = b[j + 1..].iter().position(|&c| c == q)?;
        j = skip_ws(j + 1 + rel + 1);
    }
    (j < b.len() && b[j] == b')').then_some((dest, j + 1))
}

/// Judges a markdown destination for an image (auto-loads) or a link (needs a click).
fn markdown_target(
    dest: &str,
    image: bool,
    start: usize,
    end: usize,
    hosts: &Hosts,
    hits: &mut Vec<Hit>,
    also_at: Option<usize>,
) {
    let (target, encoded) = classify_decoded(&markdown_unescape(dest));
    let kind = match target {
        Target::Script => MarkupKind::JavascriptUrl,
        Target::ActiveData => MarkupKind::DataUrl,
        Target::Remote(r) if hosts.denies(&r.host) => MarkupKind::DeniedHost,
        Target::Remote(r) if !hosts.allows(&r.host) => {
            if image && r.image_carries_data() {
                MarkupKind::MarkdownImageExfil
            } else if !image && r.link_carries_data() {
                MarkupKind::MarkdownLinkExfil
            } else {
                return;
            }
        }
        _ => return,
    };
    hits.push(Hit {
        kind,
        start,
        end,
        encoded,
        also_at,
    });
}

/// CommonMark backslash escapes: `\` before ASCII punctuation is dropped.
fn markdown_unescape(s: &str) -> Cow<'_, str> {
    if !s.contains('\\') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&n) = chars.peek()
            && n.is_ascii_punctuation()
        {
            out.push(n);
            chars.next();
            continue;
        }
        out.push(c);
    }
    Cow::Owned(out)
}

/// Reference definitions `[label]: url` and the images and links that use them:
/// `![alt][label]`, `![label][]`, `![label]`.
pub(super) fn scan_references(text: &str, hosts: &Hosts, hits: &mut Vec<Hit>) {
    static DEFINITION: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?m)^[ \t]{0,3}(?:>[ \t]?)*\[((?:[^\[\]\\\n]|\\.)+)\]:[ \t]*\n?[ \t]*(<[^<>\n]*>|[^\s<>]\S*)")
            .expect("valid regex")
    });
    static USAGE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(!?)\[((?:[^\[\]\\\n]|\\.)*)\](?:\[((?:[^\[\]\\\n]|\\.)*)\])?")
            .expect("valid regex")
    });
    let mut defs: HashMap<String, (usize, usize, &str)> = HashMap::new();
    for c in DEFINITION.captures_iter(text) {
        let m = c.get(0).expect("group 0");
        let url = c.get(2).expect("group 2").as_str();
        let url = url
            .strip_prefix('<')
            .and_then(|u| u.strip_suffix('>'))
            .unwrap_or(url);
        // The first definition of a label wins, as in CommonMark.
        defs.entry(normalize_label(&c[1]))
            .or_insert((m.start(), m.end(), url));
    }
    if defs.is_empty() {
        return;
    }
    let bytes = text.as_bytes();
    for c in USAGE.captures_iter(text) {
        let m = c.get(0).expect("group 0");
        let next = bytes.get(m.end()).copied();
        let full = c.get(3).is_some();
        if !full && matches!(next, Some(b'(' | b':')) {
            continue; // an inline link (handled elsewhere) or a definition
        }
        let label = match c.get(3) {
            Some(l) if !l.as_str().is_empty() => l.as_str(),
            _ => c.get(2).expect("group 2").as_str(),
        };
        let Some(&(ds, de, url)) = defs.get(&normalize_label(label)) else {
            continue;
        };
        let image = !c[1].is_empty();
        markdown_target(url, image, ds, de, hosts, hits, Some(m.start()));
    }
}

fn normalize_label(l: &str) -> String {
    l.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}
