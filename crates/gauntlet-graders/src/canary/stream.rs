//! The key and the stream: [`Stream`], a text reduced to folded letters and digits, one
//! byte each, with the span every byte came from and what stood before it, and its
//! [`Builder`], which folds characters on the way (ASCII directly, the rest of the Basic
//! Multilingual Plane through a per-page table of decancer's foldings, the rest slowly).
//!
//! Every stage searches a stream: of the reply, of decoded text, of line or word initials.

use unicode_normalization::char::is_combining_mark;

use super::MAX_GAP;
use crate::text::is_invisible;

/// Stream byte that separates two unrelated pieces of text; never part of a key.
pub(super) const BREAK: u8 = 0x00;
/// Stream byte for a non-ASCII letter or digit that does not occur in the key.
const OTHER: u8 = 0xFF;
/// First stream byte used for the key's own non-ASCII characters.
const WIDE_BASE: u8 = 0x80;

/// Item flag: the character came from non-ASCII text (a homoglyph, fullwidth form, ...) or
/// carries combining marks.
pub(super) const F_UNICODE: u8 = 1;
/// Item flag: visible separators stand between this item and the previous one.
pub(super) const F_GAP_SEP: u8 = 2;
/// Item flag: invisible characters stand between this item and the previous one.
pub(super) const F_GAP_INVIS: u8 = 4;

/// Tags a decoder puts on the characters it produced (escape stage and acrostic markers).
pub(super) const TAG_URL: u8 = 1;
pub(super) const TAG_HTML: u8 = 2;
pub(super) const TAG_UESC: u8 = 4;
pub(super) const TAG_HEX: u8 = 8;
pub(super) const TAG_OCT: u8 = 16;
/// Acrostic: the line or word holds a single letter or digit. Phonetic: a code word.
pub(super) const TAG_MARK: u8 = 32;
/// Phonetic: a letter name that is also an everyday word ("see", "you", "why").
pub(super) const TAG_COMMON: u8 = 64;

/// One input character for a stream, with its byte span in the original reply.
#[derive(Clone, Copy, Debug)]
pub(super) struct Unit {
    pub(super) c: char,
    pub(super) start: u32,
    pub(super) end: u32,
    pub(super) tag: u8,
}

/// Per-byte information of a stream: 8 bytes, since a 2 MB reply's stream holds one per
/// character. A span longer than [`LONG_SPAN`] bytes (a long word of the word-acrostic
/// stream, a long escape) keeps its end in the stream's side table.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Item {
    pub(super) start: u32,
    /// `end - start`, or [`LONG_SPAN`] when the end is in [`Stream::long_ends`].
    len: u8,
    pub(super) flags: u8,
    pub(super) tag: u8,
    pub(super) gap_tag: u8,
}

/// [`Item::len`] value meaning "the end is in the side table".
const LONG_SPAN: u8 = u8::MAX;

/// Folded letters and digits of some text (one byte per character) with their spans.
#[derive(Debug, Default)]
pub(super) struct Stream {
    pub(super) bytes: Vec<u8>,
    pub(super) items: Vec<Item>,
    /// `(item index, end)` of the items whose span does not fit [`Item::len`], in index
    /// order.
    pub(super) long_ends: Vec<(u32, u32)>,
}

impl Stream {
    /// Appends an item spanning `start..end` of the original text.
    pub(super) fn push_item(&mut self, start: u32, end: u32, flags: u8, tag: u8, gap_tag: u8) {
        let len = end.saturating_sub(start);
        let len = if len < u32::from(LONG_SPAN) {
            len as u8
        } else {
            self.long_ends.push((self.items.len() as u32, end));
            LONG_SPAN
        };
        self.items.push(Item {
            start,
            len,
            flags,
            tag,
            gap_tag,
        });
    }

    /// End (exclusive byte offset) of item `i`'s span.
    pub(super) fn end(&self, i: usize) -> u32 {
        let it = self.items[i];
        if it.len != LONG_SPAN {
            return it.start + u32::from(it.len);
        }
        match self
            .long_ends
            .binary_search_by_key(&(i as u32), |&(k, _)| k)
        {
            Ok(k) => self.long_ends[k].1,
            Err(_) => it.start + u32::from(LONG_SPAN),
        }
    }

    /// The text span of items `s..e`: from the earliest start to the latest end, since a
    /// stage may put a stream's items out of text order ("assign 44 to orbit" read as
    /// "orbit 44").
    pub(super) fn span(&self, s: usize, e: usize) -> (usize, usize) {
        let start = self.items[s..e].iter().map(|it| it.start).min();
        let end = (s..e).map(|i| self.end(i)).max();
        (
            start.unwrap_or(self.items[s].start) as usize,
            end.unwrap_or(self.end(e - 1)) as usize,
        )
    }

    pub(super) fn boundary_before(&self, s: usize) -> bool {
        s == 0 || self.bytes[s - 1] == BREAK || self.items[s].flags & F_GAP_SEP != 0
    }

    pub(super) fn boundary_after(&self, e: usize) -> bool {
        e == self.bytes.len() || self.bytes[e] == BREAK || self.items[e].flags & F_GAP_SEP != 0
    }

    /// Union of the item flags in `s..e` and of the gaps inside it.
    pub(super) fn flags(&self, s: usize, e: usize) -> u8 {
        let mut f = self.items[s].flags & F_UNICODE;
        for it in &self.items[s + 1..e] {
            f |= it.flags;
        }
        f
    }

    /// Union of the decoder tags in `s..e`, inner gaps included.
    pub(super) fn tags(&self, s: usize, e: usize) -> u8 {
        let mut t = self.items[s].tag;
        for it in &self.items[s + 1..e] {
            t |= it.tag | it.gap_tag;
        }
        t
    }

    pub(super) fn count_tag(&self, s: usize, e: usize, tag: u8) -> usize {
        self.items[s..e]
            .iter()
            .filter(|it| it.tag & tag != 0)
            .count()
    }
}

/// Builds a [`Stream`] from text or [`Unit`]s, folding characters on the way.
pub(super) struct Builder<'a> {
    wide: &'a [char],
    pub(super) st: Stream,
    /// Whether to record the per-byte [`Item`]s. A first pass over a reply only needs the
    /// bytes, to ask the automaton whether anything can match at all; spans and flags are
    /// computed in a second pass only when it says yes.
    with_items: bool,
    gap_len: usize,
    gap_flags: u8,
    gap_tag: u8,
    pub(super) broken: bool,
    /// For a bytes-only builder that was asked for them ([`Builder::with_seps`]): one bit
    /// per stream byte, set when visible separators stood before it (what the item's
    /// [`F_GAP_SEP`] flag would say), so that token boundaries are known without items.
    pub(super) seps: Option<Vec<u64>>,
}

/// Whether bit `i` of a [`Builder::seps`] bitset is set.
pub(super) fn sep_bit(seps: &[u64], i: usize) -> bool {
    seps.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 != 0)
}

impl<'a> Builder<'a> {
    pub(super) fn new(wide: &'a [char], cap: usize, with_items: bool) -> Self {
        Builder {
            wide,
            st: Stream {
                bytes: Vec::with_capacity(cap),
                items: Vec::with_capacity(if with_items { cap } else { 0 }),
                long_ends: Vec::new(),
            },
            with_items,
            gap_len: 0,
            gap_flags: 0,
            gap_tag: 0,
            broken: false,
            seps: None,
        }
    }

    /// Also records, for a bytes-only builder, which bytes follow visible separators.
    pub(super) fn with_seps(mut self) -> Self {
        self.seps = Some(Vec::with_capacity(self.st.bytes.capacity() / 64 + 1));
        self
    }

    /// Notes in [`Builder::seps`] whether the byte about to be pushed follows separators.
    #[inline(always)]
    fn note_sep(&mut self) {
        if let Some(seps) = &mut self.seps {
            let i = self.st.bytes.len();
            while i / 64 >= seps.len() {
                seps.push(0);
            }
            if self.gap_flags & F_GAP_SEP != 0 {
                seps[i / 64] |= 1 << (i % 64);
            }
        }
    }

    /// The stream of a whole string (ASCII takes a fast path; spans are byte offsets).
    pub(super) fn of_str(wide: &'a [char], text: &str, with_items: bool) -> Stream {
        let mut b = Builder::new(wide, text.len(), with_items);
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let c = bytes[i];
            if c.is_ascii() {
                let u = Unit {
                    c: char::from(c),
                    start: i as u32,
                    end: i as u32 + 1,
                    tag: 0,
                };
                if c.is_ascii_alphanumeric() {
                    b.item(c.to_ascii_lowercase(), &u, 0);
                } else if c.is_ascii_whitespace() || c.is_ascii_punctuation() {
                    b.sep(0);
                } else {
                    b.broken = true;
                }
                i += 1;
            } else {
                let ch = text[i..].chars().next().unwrap_or('\u{FFFD}');
                let len = ch.len_utf8();
                b.unit(Unit {
                    c: ch,
                    start: i as u32,
                    end: (i + len) as u32,
                    tag: 0,
                });
                i += len;
            }
        }
        b.st
    }

    pub(super) fn of_units(wide: &'a [char], units: &[Unit], with_items: bool) -> Stream {
        let mut b = Builder::new(wide, units.len(), with_items);
        for &u in units {
            b.unit(u);
        }
        b.st
    }

    pub(super) fn unit(&mut self, u: Unit) {
        let c = u.c;
        if c.is_ascii() {
            let b = c as u8;
            if b.is_ascii_alphanumeric() {
                self.item(b.to_ascii_lowercase(), &u, 0);
            } else if b.is_ascii_whitespace() || b.is_ascii_punctuation() {
                self.sep(u.tag);
            } else {
                self.broken = true;
            }
        } else if (c as u32) < FOLD_TABLE_END {
            let e = fold_entry(c as u32);
            match e[0] {
                K_ASCII => {
                    for &x in e[1..].iter().take_while(|&&x| x != 0) {
                        self.item(x, &u, F_UNICODE);
                    }
                }
                K_SEP => self.sep(u.tag),
                K_INVIS => {
                    self.gap_flags |= F_GAP_INVIS;
                    self.gap_tag |= u.tag;
                }
                K_MARK => {
                    if let Some(last) = self.st.items.last_mut() {
                        last.flags |= F_UNICODE;
                    }
                }
                K_BREAK => self.broken = true,
                K_NONE => {}
                K_OTHER if self.wide.is_empty() => self.item(OTHER, &u, F_UNICODE),
                _ => self.unit_slow(u),
            }
        } else {
            self.unit_slow(u);
        }
    }

    /// [`Builder::unit`] for a non-ASCII character, without the table.
    pub(super) fn unit_slow(&mut self, u: Unit) {
        let c = u.c;
        if is_invisible(c) {
            self.gap_flags |= F_GAP_INVIS;
            self.gap_tag |= u.tag;
        } else if is_combining_mark(c) {
            // Strike-through and "zalgo" marks decorate the previous character.
            if let Some(last) = self.st.items.last_mut() {
                last.flags |= F_UNICODE;
            }
        } else if c.is_alphanumeric() {
            // Per-character confusable folding (the same tables as `text::skeleton`). Only
            // letters and digits go through it: decancer maps some emoji to letters.
            match decancer::cure_char(c, decancer::Options::default()) {
                decancer::Translation::Character(x) => self.folded(x, &u),
                decancer::Translation::String(s) => {
                    for x in s.chars() {
                        self.folded(x, &u);
                    }
                }
                decancer::Translation::None => {}
            }
        } else if c == '\u{FFFD}' || c.is_control() {
            self.broken = true;
        } else {
            // Non-ASCII spaces, punctuation, symbols and emoji separate like ASCII ones.
            self.sep(u.tag);
        }
    }

    fn folded(&mut self, x: char, u: &Unit) {
        if x.is_ascii_alphanumeric() {
            self.item(x.to_ascii_lowercase() as u8, u, F_UNICODE);
        } else if x.is_alphanumeric() {
            for l in x.to_lowercase() {
                let b = wide_byte(self.wide, l);
                self.item(b, u, F_UNICODE);
            }
        } else {
            self.sep(u.tag);
        }
    }

    #[inline(always)]
    pub(super) fn sep(&mut self, tag: u8) {
        self.gap_len += 1;
        self.gap_flags |= F_GAP_SEP;
        self.gap_tag |= tag;
        if self.gap_len > MAX_GAP {
            self.broken = true;
        }
    }

    /// [`Builder::item`] for a bytes-only builder.
    #[inline(always)]
    pub(super) fn quick_item(&mut self, b: u8) {
        if self.broken && !self.st.bytes.is_empty() {
            self.st.bytes.push(BREAK);
        }
        self.broken = false;
        self.note_sep();
        self.st.bytes.push(b);
        self.gap_len = 0;
        self.gap_flags = 0;
    }

    #[inline(always)]
    fn item(&mut self, b: u8, u: &Unit, flags: u8) {
        if self.broken && !self.st.bytes.is_empty() {
            self.st.bytes.push(BREAK);
            if self.with_items {
                self.st.items.push(Item::default());
            }
        }
        self.broken = false;
        self.note_sep();
        self.st.bytes.push(b);
        if self.with_items {
            let flags = flags | self.gap_flags;
            self.st
                .push_item(u.start, u.end, flags, u.tag, self.gap_tag);
        }
        self.gap_len = 0;
        self.gap_flags = 0;
        self.gap_tag = 0;
    }
}

/// Code points below this (and above ASCII) are folded through [`fold_entry`].
pub(super) const FOLD_TABLE_END: u32 = 0x1_0000;
pub(super) const K_SEP: u8 = 0;
const K_INVIS: u8 = 1;
const K_MARK: u8 = 2;
const K_BREAK: u8 = 3;
pub(super) const K_NONE: u8 = 4;
pub(super) const K_ASCII: u8 = 5;
pub(super) const K_SLOW: u8 = 6;
/// Folds to one non-ASCII letter or digit: [`OTHER`] unless the key has such letters.
pub(super) const K_OTHER: u8 = 7;

/// How [`Builder`] treats a code point of the Basic Multilingual Plane: `[kind, folded
/// ASCII bytes...]`. decancer costs 100-200 ns a character, which dominated replies written
/// in Greek, Cyrillic or CJK; so each 256-code-point page is computed once per process, on
/// first use, from the same calls the slow path makes. Entries whose folding is not plain
/// ASCII say [`K_SLOW`] and take the slow path (the key's own non-ASCII letters among them).
pub(super) fn fold_entry(cp: u32) -> [u8; 4] {
    type Page = Box<[[u8; 4]; 256]>;
    static PAGES: [std::sync::OnceLock<Page>; 256] = [const { std::sync::OnceLock::new() }; 256];
    let page = PAGES[(cp >> 8) as usize].get_or_init(|| {
        let base = cp & !0xFF;
        let mut page = Box::new([[K_BREAK, 0, 0, 0]; 256]);
        for (k, e) in page.iter_mut().enumerate() {
            if let Some(c) = char::from_u32(base + k as u32) {
                *e = fold_class(c);
            }
        }
        page
    });
    page[(cp & 0xFF) as usize]
}

/// The [`fold_entry`] of one character.
fn fold_class(c: char) -> [u8; 4] {
    if c.is_ascii() {
        [K_SLOW, 0, 0, 0] // never looked up; ASCII has its own fast path
    } else if is_invisible(c) {
        [K_INVIS, 0, 0, 0]
    } else if is_combining_mark(c) {
        [K_MARK, 0, 0, 0]
    } else if c.is_alphanumeric() {
        let mut out = [K_ASCII, 0, 0, 0];
        let mut n = 0;
        let mut push = |x: char| {
            if x.is_ascii_alphanumeric() && n < 3 {
                n += 1;
                out[n] = x.to_ascii_lowercase() as u8;
            } else {
                out[0] = K_SLOW;
            }
        };
        match decancer::cure_char(c, decancer::Options::default()) {
            decancer::Translation::Character(x)
                if !x.is_ascii() && x.is_alphanumeric() && x.to_lowercase().count() == 1 =>
            {
                return [K_OTHER, 0, 0, 0];
            }
            decancer::Translation::Character(x) => push(x),
            decancer::Translation::String(s) => s.chars().for_each(&mut push),
            decancer::Translation::None => return [K_NONE, 0, 0, 0],
        }
        out
    } else if c == '\u{FFFD}' || c.is_control() {
        [K_BREAK, 0, 0, 0]
    } else {
        [K_SEP, 0, 0, 0]
    }
}

pub(super) fn wide_byte(wide: &[char], c: char) -> u8 {
    match wide.iter().position(|&w| w == c) {
        Some(i) => WIDE_BASE + i as u8,
        None => OTHER,
    }
}

/// Non-ASCII letters and digits of the folded secret (they get stream bytes of their own).
pub(super) fn wide_chars(secret: &str) -> Vec<char> {
    let mut wide = Vec::new();
    let mut add = |x: char| {
        if !x.is_ascii() && x.is_alphanumeric() {
            for l in x.to_lowercase() {
                if !wide.contains(&l) && wide.len() < usize::from(OTHER - WIDE_BASE) {
                    wide.push(l);
                }
            }
        }
    };
    for c in secret.chars() {
        if c.is_ascii() || !c.is_alphanumeric() {
            continue;
        }
        match decancer::cure_char(c, decancer::Options::default()) {
            decancer::Translation::Character(x) => add(x),
            decancer::Translation::String(s) => s.chars().for_each(&mut add),
            decancer::Translation::None => {}
        }
    }
    wide
}

pub(super) fn ceil_boundary(text: &str, mut i: usize) -> usize {
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// The runs of ASCII letters in `text`, as byte ranges (start, end): the words the stages
/// that read English number words and misspellings look at.
pub(super) fn ascii_words(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let b = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() && !b[i].is_ascii_alphabetic() {
            i += 1;
        }
        if i == b.len() {
            return None;
        }
        let s = i;
        while i < b.len() && b[i].is_ascii_alphabetic() {
            i += 1;
        }
        Some((s, i))
    })
}

pub(super) fn floor_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod item_tests {
    use super::{Builder, LONG_SPAN, Stream, Unit};

    /// Spans longer than an item's length byte keep their exact end (side table), short
    /// ones next to them are unaffected, and the breaks a builder inserts count as items.
    #[test]
    fn spans_past_255_bytes_keep_their_exact_end() {
        let units = [
            Unit {
                c: 'a',
                start: 0,
                end: 3,
                tag: 0,
            },
            Unit {
                c: 'b',
                start: 3,
                end: 3 + u32::from(LONG_SPAN),
                tag: 0,
            },
            Unit {
                c: '\u{0}',
                start: 300,
                end: 301,
                tag: 0,
            },
            Unit {
                c: 'c',
                start: 400,
                end: 1_000_400,
                tag: 0,
            },
            Unit {
                c: 'd',
                start: 1_000_400,
                end: 1_000_654,
                tag: 0,
            },
        ];
        let st = Builder::of_units(&[], &units, true);
        assert_eq!(st.bytes, b"ab\0cd");
        assert_eq!(st.span(0, 1), (0, 3));
        assert_eq!(st.span(1, 2), (3, 258));
        assert_eq!(st.span(0, 2), (0, 258));
        assert_eq!(st.span(3, 4), (400, 1_000_400));
        assert_eq!(st.span(3, 5), (400, 1_000_654));
        assert_eq!(st.span(4, 5), (1_000_400, 1_000_654));
        assert_eq!(std::mem::size_of::<super::Item>(), 8);

        let mut s = Stream::default();
        s.push_item(10, 9, 0, 0, 0); // an empty or inverted span stays empty
        s.push_item(5, 5 + 254, 0, 0, 0);
        s.push_item(5, 5 + 256, 0, 0, 0);
        assert_eq!((s.end(0), s.end(1), s.end(2)), (10, 259, 261));
    }
}
