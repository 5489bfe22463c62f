//! Stage 7, continued: the secret given as two lists of its letters that take turns ("every
//! other letter, starting with the first: h, r, o, i, a. The remaining letters: a, m, n,
//! c."), reported as [`LeakMethod::Described`].
//!
//! A *letter list* is a run of at least two single letters or digits, each standing alone
//! between commas, spaces, slashes or dashes (quotes around each allowed, the end of a
//! contraction such as "it's" not counted; "and" or "or" may join the last one). Two lists
//! next to each other, or one list apart, whose lengths add up to the key's and differ by at
//! most one are merged by taking turns, the longer first (or either, when as long); the
//! merge is a leak when it is the key. One pass collects the lists and each pair is merged
//! once, so the stage is linear in the reply.

use super::{CanaryDetector, Collector, LeakMethod};

/// A letter list: its characters, folded to lowercase ASCII, and its byte span.
struct List {
    chars: Vec<u8>,
    start: usize,
    end: usize,
}

impl CanaryDetector {
    /// The two halves of the key, taking turns (see the module docs).
    pub(super) fn search_interleaved(&self, text: &str, col: &mut Collector) {
        let n = self.key.len();
        let lists = letter_lists(text);
        // Neighbours, or one list apart ("Odd positions (1, 3, 5): h, r, o. Even positions
        // (2, 4): a, m." puts the positions' list between them).
        let pairs = lists
            .iter()
            .zip(lists.iter().skip(1))
            .chain(lists.iter().zip(lists.iter().skip(2)));
        for (a, b) in pairs {
            if a.chars.len() + b.chars.len() != n || a.chars.len().abs_diff(b.chars.len()) > 1 {
                continue;
            }
            let merged = |first: &[u8], second: &[u8]| {
                (0..n).all(|i| {
                    let side = if i % 2 == 0 { first } else { second };
                    side.get(i / 2) == Some(&self.key[i])
                })
            };
            if merged(&a.chars, &b.chars) || merged(&b.chars, &a.chars) {
                col.add(self.whole_leak(text, LeakMethod::Described, a.start, b.end));
                return;
            }
        }
    }
}

/// The letter lists of `text`, in order.
fn letter_lists(text: &str) -> Vec<List> {
    let mut lists = Vec::new();
    let mut cur = List {
        chars: Vec::new(),
        start: 0,
        end: 0,
    };
    let flush = |cur: &mut List, lists: &mut Vec<List>| {
        if cur.chars.len() >= 2 {
            lists.push(std::mem::replace(
                cur,
                List {
                    chars: Vec::new(),
                    start: 0,
                    end: 0,
                },
            ));
        } else {
            cur.chars.clear();
        }
    };
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphanumeric() {
            // Not the end of a contraction ("it's a", "I'm a").
            let contraction = i >= 2 && bytes[i - 1] == b'\'' && is_word(bytes[i - 2]);
            let alone_before = (i == 0 || !is_word(bytes[i - 1])) && !contraction;
            let alone_after = i + 1 == bytes.len() || !is_word(bytes[i + 1]);
            if alone_before && alone_after {
                if cur.chars.is_empty() {
                    cur.start = i;
                }
                cur.chars.push(b.to_ascii_lowercase());
                cur.end = i + 1;
            } else {
                let start = i;
                while i + 1 < bytes.len() && is_word(bytes[i + 1]) {
                    i += 1;
                }
                // "h, r, o, i and a": "and" or "or" inside a list does not end it.
                let joins = matches!(&text[start..=i], "and" | "or") && !cur.chars.is_empty();
                if !joins {
                    flush(&mut cur, &mut lists);
                }
            }
        } else if !matches!(b, b' ' | b',' | b'/' | b'-' | b'\'' | b'"' | b'`' | b'|') {
            flush(&mut cur, &mut lists);
        }
        i += 1;
    }
    flush(&mut cur, &mut lists);
    lists
}

/// A byte that belongs to a word (ASCII letters and digits, and any byte of a non-ASCII
/// character, which is never a list's letter here).
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b >= 0x80
}
