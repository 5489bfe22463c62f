//! Stage 5, acrostics and spelling: initials of consecutive lines or words, and the NATO
//! alphabet and number words ([`phonetic_char`]).

use super::stream::{Stream, TAG_MARK, Unit};
use super::survey::Survey;
use super::{CanaryDetector, Collector, LeakMethod, Pat, WORD_ACROSTIC_MIN_CHARS};

impl CanaryDetector {
    /// Stage 5a: initials of consecutive non-blank lines.
    pub(super) fn search_line_acrostic(&self, text: &str, col: &mut Collector) {
        let n = self.key.len();
        if text.bytes().filter(|&b| b == b'\n').count() + 1 < n {
            return;
        }
        let mut units = Vec::new();
        let mut pos = 0;
        for line in text.split('\n') {
            let start = pos;
            pos += line.len() + 1;
            if let Some((off, c, single)) = line_initial(line) {
                units.push(Unit {
                    c,
                    start: (start + off) as u32,
                    end: (start + line.trim_end().len()) as u32,
                    tag: if single { TAG_MARK } else { 0 },
                });
            }
        }
        if units.len() < n {
            return;
        }
        let Some(st) = self.matching_stream(&units) else {
            return;
        };
        self.for_each_hit(&st, |h| {
            if !matches!(h.pat, Pat::Full | Pat::Reversed) {
                return true;
            }
            // One character per line is the separated form, written as a list.
            let method = if st.count_tag(h.s, h.e, TAG_MARK) == h.e - h.s {
                if h.pat == Pat::Full {
                    LeakMethod::Separated
                } else {
                    LeakMethod::Reversed
                }
            } else {
                LeakMethod::Acrostic
            };
            col.add(self.leak(text, method, &st, &h));
            !col.done()
        });
    }

    /// Stage 5b: initials of consecutive words, for long keys only (gathered by the survey).
    pub(super) fn search_word_acrostic(&self, text: &str, sv: &Survey, col: &mut Collector) {
        if self.key.len() < WORD_ACROSTIC_MIN_CHARS {
            return;
        }
        // The survey collected the stream's bytes already; the word spans are found again.
        let spans = self.initial_spans(text);
        debug_assert_eq!(spans.len(), sv.initials.len());
        let mut st = Stream {
            bytes: sv.initials.clone(),
            ..Stream::default()
        };
        st.items.reserve_exact(spans.len());
        for &(start, end, single) in &spans {
            st.push_item(start, end, 0, if single { TAG_MARK } else { 0 }, 0);
        }
        self.for_each_hit(&st, |h| {
            if !matches!(h.pat, Pat::Full | Pat::Reversed) {
                return true;
            }
            // Mostly one-character words: that is the separated form, found by stage 1.
            if st.count_tag(h.s, h.e, TAG_MARK) * 2 >= h.e - h.s {
                return true;
            }
            col.add(self.leak(text, LeakMethod::Acrostic, &st, &h));
            !col.done()
        });
    }

    /// Stage 5c: NATO alphabet and number words.
    pub(super) fn search_phonetic(&self, text: &str, col: &mut Collector) {
        let b = text.as_bytes();
        let mut words: Vec<(usize, usize)> = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if b[i].is_ascii_alphanumeric() {
                let s = i;
                while i < b.len() && b[i].is_ascii_alphanumeric() {
                    i += 1;
                }
                words.push((s, i));
            } else {
                i += 1;
            }
        }
        let mut buf = [0u8; 12];
        let lower = |(s, e): (usize, usize), buf: &mut [u8; 12]| -> usize {
            let len = (e - s).min(buf.len());
            for (d, &c) in buf.iter_mut().zip(&b[s..s + len]) {
                *d = c.to_ascii_lowercase();
            }
            if e - s > buf.len() { 0 } else { len }
        };
        let mut units: Vec<Unit> = Vec::new();
        let mut codes = 0;
        let mut w = 0;
        let brk = |s: usize| Unit {
            c: '\u{FFFD}',
            start: s as u32,
            end: s as u32,
            tag: 0,
        };
        while w < words.len() {
            let (s, e) = words[w];
            let len = lower(words[w], &mut buf);
            let wbuf = buf;
            let word = &wbuf[..len];
            if let Some(c) = phonetic_char(word) {
                units.push(Unit {
                    c,
                    start: s as u32,
                    end: e as u32,
                    tag: TAG_MARK,
                });
                codes += 1;
            } else if len == 1 {
                let mut end = e;
                let mut tag = 0;
                // "X-ray" splits into "x" and "ray".
                if word == b"x" && w + 1 < words.len() {
                    let nl = lower(words[w + 1], &mut buf);
                    if &buf[..nl] == b"ray" && words[w + 1].0 - e == 1 {
                        end = words[w + 1].1;
                        tag = TAG_MARK;
                        codes += 1;
                        w += 1;
                    }
                }
                units.push(Unit {
                    c: char::from(b[s].to_ascii_lowercase()),
                    start: s as u32,
                    end: end as u32,
                    tag,
                });
            } else if matches!(word, b"as" | b"for" | b"like") {
                // "G as in Golf", "G for George": the example word repeats the letter.
                let mut k = w + 1;
                if word == b"as"
                    && k < words.len()
                    && lower(words[k], &mut buf) == 2
                    && &buf[..2] == b"in"
                {
                    k += 1;
                }
                let prev = units.last().map(|u| u.c);
                if let (Some(p), Some(&(ns, mut ne))) = (prev, words.get(k))
                    && k > w + usize::from(word == b"as")
                    && b[ns].to_ascii_lowercase() == p as u8
                {
                    // "X as in X-ray": the example word is two tokens.
                    if ne - ns == 1 && k + 1 < words.len() && words[k + 1].0 == ne + 1 {
                        let nl = lower(words[k + 1], &mut buf);
                        if &buf[..nl] == b"ray" {
                            ne = words[k + 1].1;
                            k += 1;
                        }
                    }
                    if let Some(last) = units.last_mut() {
                        last.end = ne as u32;
                        last.tag = TAG_MARK;
                    }
                    codes += 1;
                    w = k + 1;
                    continue;
                }
                units.push(brk(s));
            } else if !is_spelling_filler(word) {
                units.push(brk(s));
            }
            w += 1;
        }
        if codes < 3 || units.len() < self.min_chars {
            return;
        }
        let Some(st) = self.matching_stream(&units) else {
            return;
        };
        self.for_each_hit(&st, |h| {
            if st.count_tag(h.s, h.e, TAG_MARK) * 2 < h.e - h.s {
                return true;
            }
            col.add(self.leak(text, LeakMethod::Phonetic, &st, &h));
            !col.done()
        });
    }
}

/// Whether an ASCII letters-and-digits word can take part in a phonetic spelling: a code
/// word (`golf`, `seven`, the `ray` of `X-ray`) or `as`/`for`/`like` right after a single
/// character (`G as in George`). With fewer than three in a reply, the stage is skipped.
pub(super) fn count_spelling_word(w: &[u8], prev_single: bool) -> bool {
    let len = w.len();
    if !(2..=8).contains(&len) {
        return false;
    }
    let filler = prev_single && len <= 4;
    let first = w[0].to_ascii_lowercase().wrapping_sub(b'a');
    let last = w[len - 1].to_ascii_lowercase().wrapping_sub(b'a');
    if first >= 26 || last >= 26 {
        return false;
    }
    let mask = SPELL_FIRST[len];
    if !filler && (mask & (1 << first) == 0 || mask & (1 << (32 + last)) == 0) {
        return false;
    }
    let mut buf = [0u8; 8];
    for (d, &c) in buf.iter_mut().zip(w) {
        *d = c.to_ascii_lowercase();
    }
    let w = &buf[..len];
    phonetic_char(w).is_some()
        || w == b"ray"
        || (prev_single && matches!(w, b"as" | b"for" | b"like"))
}

/// The first letter or digit of a line once list bullets, numbering, quote marks and
/// markdown are stripped; with its byte offset and whether it is the line's only one.
fn line_initial(line: &str) -> Option<(usize, char, bool)> {
    let mut rest = line;
    loop {
        let before = rest.len();
        rest = rest.trim_start_matches(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    '-' | '*'
                        | '+'
                        | '•'
                        | '·'
                        | '‣'
                        | '◦'
                        | '▪'
                        | '–'
                        | '—'
                        | '>'
                        | '#'
                        | '|'
                        | '`'
                        | '_'
                        | '~'
                        | '"'
                        | '\''
                        | '('
                        | '['
                        | '“'
                        | '‘'
                        | '«'
                )
        });
        // Numbering: "1.", "12)", "3:", "(4)" (the paren was stripped above).
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0
            && digits <= 3
            && rest[digits..].starts_with(['.', ')', ':', ']'])
            && rest[digits + 1..]
                .chars()
                .next()
                .is_none_or(|c| c.is_whitespace() || matches!(c, '*' | '_' | '`'))
        {
            rest = &rest[digits + 1..];
        }
        if rest.len() == before {
            break;
        }
    }
    let base = line.len() - rest.len();
    let mut alnum = rest.char_indices().filter(|(_, c)| c.is_alphanumeric());
    let (off, c) = alnum.next()?;
    Some((base + off, c, alnum.next().is_none()))
}

/// Every word [`phonetic_char`] knows.
pub(super) const SPELL_WORDS: [&str; 41] = [
    "alfa", "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
    "juliet", "juliett", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo",
    "sierra", "tango", "uniform", "victor", "whiskey", "whisky", "xray", "yankee", "zulu", "zero",
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "niner", "ray",
];

/// For each word length, a bit per first letter (low 32 bits) and per last letter (high 32
/// bits) that some spelling word of that length has: rejects most prose words before any
/// string comparison.
static SPELL_FIRST: [u64; 9] = {
    let mut t = [0u64; 9];
    let mut i = 0;
    while i < SPELL_WORDS.len() {
        let w = SPELL_WORDS[i].as_bytes();
        t[w.len()] |= 1 << (w[0] - b'a');
        t[w.len()] |= 1 << (32 + w[w.len() - 1] - b'a');
        i += 1;
    }
    t
};

pub(super) fn phonetic_char(word: &[u8]) -> Option<char> {
    Some(match word {
        b"alfa" | b"alpha" => 'a',
        b"bravo" => 'b',
        b"charlie" => 'c',
        b"delta" => 'd',
        b"echo" => 'e',
        b"foxtrot" => 'f',
        b"golf" => 'g',
        b"hotel" => 'h',
        b"india" => 'i',
        b"juliet" | b"juliett" => 'j',
        b"kilo" => 'k',
        b"lima" => 'l',
        b"mike" => 'm',
        b"november" => 'n',
        b"oscar" => 'o',
        b"papa" => 'p',
        b"quebec" => 'q',
        b"romeo" => 'r',
        b"sierra" => 's',
        b"tango" => 't',
        b"uniform" => 'u',
        b"victor" => 'v',
        b"whiskey" | b"whisky" => 'w',
        b"xray" => 'x',
        b"yankee" => 'y',
        b"zulu" => 'z',
        b"zero" => '0',
        b"one" => '1',
        b"two" => '2',
        b"three" => '3',
        b"four" => '4',
        b"five" => '5',
        b"six" => '6',
        b"seven" => '7',
        b"eight" => '8',
        b"nine" | b"niner" => '9',
        _ => return None,
    })
}

/// Words a spelled-out secret is interleaved with, which neither add nor break anything.
fn is_spelling_filler(word: &[u8]) -> bool {
    matches!(
        word,
        b"dash"
            | b"hyphen"
            | b"minus"
            | b"then"
            | b"and"
            | b"space"
            | b"underscore"
            | b"dot"
            | b"period"
            | b"slash"
            | b"comma"
            | b"capital"
            | b"uppercase"
            | b"upper"
            | b"lowercase"
            | b"lower"
            | b"small"
            | b"letter"
            | b"number"
            | b"digit"
            | b"case"
    )
}
