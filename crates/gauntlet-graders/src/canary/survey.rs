//! The survey: [`Survey`], what one pass over a reply learns besides its bytes-only
//! stream, so that a stage runs only where its input could hold a detectable fragment.

use super::encoded::WRAP_MIN_LINE;
use super::spelling::count_spelling_word;
use super::stream::{
    Builder, FOLD_TABLE_END, K_ASCII, K_NONE, K_OTHER, K_SEP, K_SLOW, Unit, fold_entry, wide_byte,
};
use super::{CUED_WORD_ACROSTIC_MIN_CHARS, CanaryDetector};

/// What one pass over a reply learns, besides its quick stream, so that
/// [`CanaryDetector::scan`] runs a stage only where it could fire. Every gate is a superset
/// test: a stage is skipped only when its input provably cannot hold a detectable fragment.
#[derive(Debug, Default)]
pub(super) struct Survey {
    /// The reply's stream bytes (no items).
    pub(super) quick: Vec<u8>,
    /// Folded initials of whitespace-separated words (only for word-acrostic keys): the
    /// word-acrostic stream's bytes. Their spans are found again by
    /// [`CanaryDetector::initial_spans`] only when the automaton matches them (keeping a
    /// span per word here cost 12 bytes a word, 4 MB for a 2 MB reply of prose).
    pub(super) initials: Vec<u8>,
    /// Which bytes of `quick` follow visible separators (a bitset, see
    /// [`Builder::with_seps`]): the token boundaries the pieces gate needs.
    pub(super) seps: Vec<u64>,
    /// Starts of one-line Base64-alphabet runs long enough to matter (Base32 runs are
    /// inside them).
    pub(super) b64_starts: Vec<u32>,
    /// `%`, `&`, `\` or `+` occur (the escape syntax itself is checked later).
    pub(super) escape_chars: bool,
    /// Most bytes in consecutive words that are whole hex groups (`4e`, `0x4e`, `\x4e`).
    pub(super) hex_bytes: usize,
    /// Standalone numbers of at most three digits in 32..=126 (possible character codes).
    pub(super) codes: usize,
    /// Standalone numbers in 1..=26 (possible places of letters in the alphabet).
    pub(super) positions: usize,
    /// Longest run of `0` and `1`.
    pub(super) bit_run: usize,
    /// Words that can take part in a phonetic spelling (see [`count_spelling_word`]).
    pub(super) spelling: usize,
    /// Number of newlines.
    pub(super) lines: usize,
    /// Words of one letter or digit (possible members of a letter list).
    pub(super) singles: usize,
    hex_acc: usize,
    prev_single: bool,
}

impl Survey {
    /// Accounts for the ASCII letters-and-digits word `b[s..e]`; `all` holds the class bits
    /// ([`C_HEX`], [`C_DIGIT`]) that all of its bytes have.
    fn word(&mut self, b: &[u8], s: usize, e: usize, all: u8) {
        let w = &b[s..e];
        let len = w.len();
        let hex_all = |x: &[u8]| !x.is_empty() && x.iter().all(u8::is_ascii_hexdigit);
        let bytes = if all & C_HEX != 0 {
            if len.is_multiple_of(2) { len / 2 } else { 0 }
        } else if !matches!(w[0], b'0' | b'x') {
            0
        } else if w[0] == b'0' && len > 2 && (w[1] | 0x20) == b'x' && hex_all(&w[2..]) {
            (len - 2).div_ceil(2)
        } else if w[0] == b'x' && len == 3 && s > 0 && b[s - 1] == b'\\' && hex_all(&w[1..]) {
            1
        } else {
            0
        };
        if bytes == 0 {
            self.hex_acc = 0;
        } else {
            self.hex_acc += bytes;
            self.hex_bytes = self.hex_bytes.max(self.hex_acc);
        }
        if all & C_DIGIT != 0 && len <= 3 {
            let v = w.iter().fold(0u32, |a, &d| a * 10 + u32::from(d - b'0'));
            self.codes += usize::from((32..=126).contains(&v));
            self.positions += usize::from((1..=26).contains(&v));
        }
        self.spelling += usize::from(count_spelling_word(w, self.prev_single));
        self.prev_single = len == 1;
        self.singles += usize::from(len == 1);
    }
}

const C_ALNUM: u8 = 1;
const C_SEP: u8 = 2;
const C_DIGIT: u8 = 4;
const C_HEX: u8 = 8;
const C_B64: u8 = 16;
const C_ESC: u8 = 32;
const C_WS: u8 = 64;
const C_BIT: u8 = 128;

/// Per-ASCII-byte classes for the survey pass.
static ASCII_CLASS: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut c = 0;
    while c < 128 {
        let b = c as u8;
        let mut k = 0;
        if b.is_ascii_alphanumeric() {
            k |= C_ALNUM;
        } else if b.is_ascii_whitespace() || b.is_ascii_punctuation() {
            k |= C_SEP;
        }
        if b.is_ascii_digit() {
            k |= C_DIGIT;
        }
        if b.is_ascii_hexdigit() {
            k |= C_HEX;
        }
        if b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_') {
            k |= C_B64;
        }
        if matches!(b, b'%' | b'&' | b'\\' | b'+') {
            k |= C_ESC;
        }
        if b.is_ascii_whitespace() {
            k |= C_WS;
        }
        if b == b'0' || b == b'1' {
            k |= C_BIT;
        }
        t[c] = k;
        c += 1;
    }
    t
};

impl CanaryDetector {
    /// One pass over a reply: its bytes-only stream (as [`Builder::of_str`] without items)
    /// and the [`Survey`] that gates the later stages. ASCII takes a fast path, and the
    /// per-byte counters live in locals (this loop is most of the cost of a clean reply).
    pub(super) fn survey(&self, text: &str) -> Survey {
        let b = text.as_bytes();
        let mut qb = Builder::new(&self.wide, b.len(), false).with_seps();
        let mut sv = Survey::default();
        let want_initials = self.key.len() >= CUED_WORD_ACROSTIC_MIN_CHARS;
        if want_initials {
            sv.initials.reserve(b.len() / 8);
        }
        let b64_min = (self.min_chars * 4).div_ceil(3).min(WRAP_MIN_LINE);
        let (mut bits, mut bit_max, mut b64, mut lines, mut esc) = (0usize, 0, 0usize, 0, 0u8);
        // The current ASCII letters-and-digits word: start, and the class bits all its bytes
        // share (hex digit, decimal digit).
        let (mut w_start, mut w_all) = (usize::MAX, 0u8);
        // The current whitespace-separated word, for initials: whether in one, whether its
        // initial is still to come.
        let (mut in_word, mut need_initial) = (false, false);
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c.is_ascii() {
                let k = ASCII_CLASS[usize::from(c)];
                let alnum = k & C_ALNUM != 0;
                if alnum {
                    qb.quick_item(c.to_ascii_lowercase());
                    if w_start == usize::MAX {
                        (w_start, w_all) = (i, C_HEX | C_DIGIT);
                    }
                    w_all &= k;
                } else {
                    if w_start != usize::MAX {
                        sv.word(b, w_start, i, w_all);
                        w_start = usize::MAX;
                    }
                    if k & C_SEP != 0 {
                        qb.sep(0);
                    } else {
                        qb.broken = true;
                    }
                    lines += usize::from(c == b'\n');
                    esc |= k;
                }
                if k & C_BIT != 0 {
                    bits += 1;
                } else {
                    bit_max = bit_max.max(bits);
                    bits = 0;
                }
                if k & C_B64 != 0 {
                    b64 += 1;
                } else {
                    if b64 >= b64_min {
                        sv.b64_starts.push((i - b64) as u32);
                    }
                    b64 = 0;
                }
                if want_initials {
                    if k & C_WS != 0 {
                        in_word = false;
                    } else {
                        if !in_word {
                            (in_word, need_initial) = (true, true);
                        }
                        if alnum && need_initial {
                            sv.initials.push(c.to_ascii_lowercase());
                            need_initial = false;
                        }
                    }
                }
                i += 1;
            } else {
                if w_start != usize::MAX {
                    sv.word(b, w_start, i, w_all);
                    w_start = usize::MAX;
                }
                if b64 >= b64_min {
                    sv.b64_starts.push((i - b64) as u32);
                }
                bit_max = bit_max.max(bits);
                (bits, b64) = (0, 0);
                let ch = text[i..].chars().next().unwrap_or('\u{FFFD}');
                let len = ch.len_utf8();
                qb.unit(Unit {
                    c: ch,
                    start: i as u32,
                    end: (i + len) as u32,
                    tag: 0,
                });
                if want_initials {
                    let kind = if (ch as u32) < FOLD_TABLE_END {
                        fold_entry(ch as u32)[0]
                    } else {
                        K_SLOW
                    };
                    if kind == K_SEP && ch.is_whitespace() {
                        in_word = false;
                    } else {
                        if !in_word {
                            (in_word, need_initial) = (true, true);
                        }
                        if need_initial && wide_alnum(kind, ch) {
                            self.fold_into(ch, &mut sv.initials);
                            need_initial = false;
                        }
                    }
                }
                i += len;
            }
        }
        if w_start != usize::MAX {
            sv.word(b, w_start, b.len(), w_all);
        }
        if b64 >= b64_min {
            sv.b64_starts.push((b.len() - b64) as u32);
        }
        sv.bit_run = bit_max.max(bits);
        sv.lines = lines;
        sv.escape_chars = esc & C_ESC != 0;
        sv.seps = qb.seps.take().unwrap_or_default();
        sv.quick = qb.st.bytes;
        sv
    }

    /// For each byte of the survey's `initials` of `text`, the span of its word and whether
    /// the initial is the word's only letter or digit: the same walk as the survey's, run
    /// again only when the automaton matched the initials.
    pub(super) fn initial_spans(&self, text: &str) -> Vec<(u32, u32, bool)> {
        let b = text.as_bytes();
        let mut out: Vec<(u32, u32, bool)> = Vec::new();
        let mut scratch = Vec::new();
        // The current word: whether in one, whether its initial is still to come, its first
        // entry in `out`, its letters and digits.
        let (mut in_word, mut need_initial) = (false, false);
        let (mut first, mut alnum_n) = (0usize, 0usize);
        let close = |out: &mut Vec<(u32, u32, bool)>, first: usize, end: usize, n: usize| {
            for w in &mut out[first..] {
                (w.1, w.2) = (end as u32, n == 1);
            }
        };
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            let (ws, alnum, len) = if c.is_ascii() {
                let k = ASCII_CLASS[usize::from(c)];
                (k & C_WS != 0, k & C_ALNUM != 0, 1)
            } else {
                let ch = text[i..].chars().next().unwrap_or('\u{FFFD}');
                let kind = if (ch as u32) < FOLD_TABLE_END {
                    fold_entry(ch as u32)[0]
                } else {
                    K_SLOW
                };
                let ws = kind == K_SEP && ch.is_whitespace();
                (ws, !ws && wide_alnum(kind, ch), ch.len_utf8())
            };
            if ws {
                if in_word {
                    close(&mut out, first, i, alnum_n);
                }
                in_word = false;
            } else {
                if !in_word {
                    (in_word, need_initial) = (true, true);
                    (first, alnum_n) = (out.len(), 0);
                }
                if alnum {
                    alnum_n += 1;
                    if need_initial {
                        let spans = if c.is_ascii() {
                            1
                        } else {
                            scratch.clear();
                            let ch = text[i..].chars().next().unwrap_or('\u{FFFD}');
                            self.fold_into(ch, &mut scratch);
                            scratch.len()
                        };
                        out.extend(std::iter::repeat_n((i as u32, 0, false), spans));
                        need_initial = false;
                    }
                }
            }
            i += len;
        }
        if in_word {
            close(&mut out, first, b.len(), alnum_n);
        }
        out
    }

    /// Pushes the stream bytes `c` folds to (as [`Builder`] would).
    fn fold_into(&self, c: char, out: &mut Vec<u8>) {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase() as u8);
            return;
        }
        let mut push = |x: char| {
            if x.is_ascii_alphanumeric() {
                out.push(x.to_ascii_lowercase() as u8);
            } else if x.is_alphanumeric() {
                out.extend(x.to_lowercase().map(|l| wide_byte(&self.wide, l)));
            }
        };
        match decancer::cure_char(c, decancer::Options::default()) {
            decancer::Translation::Character(x) => push(x),
            decancer::Translation::String(s) => s.chars().for_each(push),
            decancer::Translation::None => {}
        }
    }
}

/// Whether a non-ASCII character of fold class `kind` counts as a letter or digit of a word.
fn wide_alnum(kind: u8, ch: char) -> bool {
    match kind {
        K_ASCII | K_OTHER | K_NONE => true,
        K_SLOW => ch.is_alphanumeric(),
        _ => false,
    }
}
