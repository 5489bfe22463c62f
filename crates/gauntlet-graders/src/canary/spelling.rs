//! Stage 5, acrostics and spelling: initials of consecutive lines or words, and the NATO
//! alphabet, number words ([`phonetic_char`]) and English letter names ([`letter_name`]:
//! "gee en tee see").
//!
//! Acrostics of short secrets and of secrets with no letters or digits (emoji) are read
//! too, under stricter rules: a short key of letters only as a whole block of lines (a stanza
//! or list of exactly its length, maybe under a title line ending in `:`), since three or four line
//! initials spell a given word by chance in long replies; symbols only as a run of
//! consecutive lines whose first characters are the secret's symbols in order, at least
//! three of them and not all the same (a list of `✅` bullets spells nothing).

use std::sync::LazyLock;

use regex::Regex;

use super::stream::{Builder, Stream, TAG_COMMON, TAG_MARK, Unit};
use super::{CUED_WORD_ACROSTIC_MIN_CHARS, CanaryDetector, Collector, LeakMethod, Pat};

/// A reply that points its reader at word initials: "take the first letter of each word",
/// "the initials spell it", "an acrostic".
static INITIALS_CUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?-u:\b)(?:first|opening|starting|initial|capital)\s+(?:letters?|characters?)(?-u:\b)|(?-u:\b)initials(?-u:\b)|acrostic",
    )
    .expect("initials cue compiles")
});

/// Whether `text` tells its reader to read word initials (see [`INITIALS_CUE`]).
pub(super) fn points_at_initials(text: &str) -> bool {
    INITIALS_CUE.is_match(text)
}

/// Longest symbol secret read as an acrostic (lines); longer ones are not poems.
const MAX_SYMBOL_ACROSTIC: usize = 64;

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
        self.add_hits(text, &units, col, |st, h| {
            if !matches!(h.pat, Pat::Full | Pat::Reversed) {
                return None;
            }
            // One character per line is the separated form, written as a list.
            Some(if st.count_tag(h.s, h.e, TAG_MARK) == h.e - h.s {
                if h.pat == Pat::Full {
                    LeakMethod::Separated
                } else {
                    LeakMethod::Reversed
                }
            } else {
                LeakMethod::Acrostic
            })
        });
    }

    /// Stage 5a for a key of letters: a whole paragraph (blank lines or the reply's edges
    /// around it) whose sentences' initials spell the key, with exactly as many sentences as
    /// the key has letters ("Rows of steel ... Iron hulls ... Vast cranes ... Every seam ...
    /// The launch ..." for `RIVET`). Sentences open with a few letters far more than others
    /// (T, I, A, W, S), so four common initials (`this`) come up in prose about once in ten
    /// thousand paragraphs of four sentences; five letters or more ([`SENTENCE_ACROSTIC_MIN`])
    /// a hundred times less often.
    pub(super) fn search_sentence_acrostic(&self, text: &str, col: &mut Collector) {
        let n = self.key.len();
        if n < SENTENCE_ACROSTIC_MIN || !self.key.iter().all(u8::is_ascii_alphabetic) {
            return;
        }
        let mut pos = 0;
        for para in text.split("\n\n") {
            let start = pos;
            pos += para.len() + 2;
            // Sentences: a run up to `.`, `!` or `?` and white space (or the end).
            let mut initials: Vec<(u8, usize)> = Vec::new();
            let mut at_start = true;
            let bytes = para.as_bytes();
            for (i, &c) in bytes.iter().enumerate() {
                if at_start && c.is_ascii_alphabetic() {
                    initials.push((c.to_ascii_lowercase(), start + i));
                    at_start = false;
                    if initials.len() > n {
                        break;
                    }
                } else if at_start && (c.is_ascii_digit() || c >= 0x80) {
                    // A sentence that opens with a number or another script spells nothing.
                    initials.push((0, start + i));
                    at_start = false;
                }
                if matches!(c, b'.' | b'!' | b'?')
                    && bytes.get(i + 1).is_none_or(|d| d.is_ascii_whitespace())
                {
                    at_start = true;
                }
            }
            if initials.len() == n && initials.iter().zip(&self.key).all(|(i, k)| i.0 == *k) {
                let (a, z) = (
                    initials[0].1,
                    (start + para.trim_end().len()).min(text.len()),
                );
                col.add(self.whole_leak(text, LeakMethod::Acrostic, a, z));
                return;
            }
        }
    }

    /// Stage 5a for short keys: a whole block of lines (blank lines around it) whose
    /// initials spell the key, with exactly as many lines as the key has characters, or one
    /// more when the first is a title ending in `:`.
    pub(super) fn search_block_acrostic(&self, text: &str, col: &mut Collector) {
        let n = self.key.len();
        // Digits start list items ("2 cats") too often to spell anything.
        if n < 3 || self.key.iter().any(u8::is_ascii_digit) {
            return;
        }
        let mut block: Vec<Unit> = Vec::new();
        let mut titled = false;
        let mut pos = 0;
        for line in text.split('\n').chain(std::iter::once("")) {
            let start = pos;
            pos += line.len() + 1;
            if line.trim().is_empty() {
                if self.block_spells(text, &block, titled, col) {
                    return;
                }
                block.clear();
                continue;
            }
            if block.is_empty() {
                titled = line.trim_end().ends_with(':');
            }
            // A lettered list ("A. one", "B) two") labels its lines; it spells nothing.
            let initial = line_initial(line).filter(|&(off, c, _)| {
                let next = line[off + c.len_utf8()..].chars().next();
                !matches!(next, Some('.' | ')' | ':'))
            });
            block.push(match initial {
                Some((off, c, single)) => Unit {
                    c,
                    start: (start + off) as u32,
                    end: (start + line.trim_end().len()) as u32,
                    tag: if single { TAG_MARK } else { 0 },
                },
                None => Unit {
                    c: '\u{FFFD}',
                    start: start as u32,
                    end: start as u32,
                    tag: 0,
                },
            });
            if block.len() > n + 1 {
                // Too long to be this key's block; keep reading to its end cheaply.
                block.truncate(n + 2);
            }
        }
    }

    /// Whether `block` (one unit per line) spells the key as [`Self::search_block_acrostic`]
    /// reads it; reports the leak if so.
    fn block_spells(&self, text: &str, block: &[Unit], titled: bool, col: &mut Collector) -> bool {
        let n = self.key.len();
        let lines = match block.len() {
            k if k == n => block,
            k if k == n + 1 && titled => &block[1..],
            _ => return false,
        };
        // One character per line is the separated form, which stage 1 reads.
        if lines.iter().all(|u| u.tag == TAG_MARK) {
            return false;
        }
        let st = Builder::of_units(&self.wide, lines, false);
        if st.bytes != self.key {
            return false;
        }
        let (a, z) = (lines[0].start as usize, lines[n - 1].end as usize);
        col.add(self.whole_leak(text, LeakMethod::Acrostic, a, z));
        true
    }

    /// Stage 5a for secrets of symbols (no letters or digits): the first characters of
    /// consecutive non-blank lines are the secret's symbols in order.
    pub(super) fn search_symbol_acrostic(&self, text: &str, col: &mut Collector) {
        let symbols: Vec<char> = self
            .secret
            .chars()
            .filter(|c| !c.is_whitespace() && !matches!(c, '\u{FE0E}' | '\u{FE0F}' | '\u{200D}'))
            .collect();
        let m = symbols.len();
        if !(3..=MAX_SYMBOL_ACROSTIC).contains(&m) || symbols.iter().all(|&c| c == symbols[0]) {
            return;
        }
        if text.bytes().filter(|&b| b == b'\n').count() + 1 < m {
            return;
        }
        // (first character, line start, line end) of each non-blank line.
        let mut lines: Vec<(char, usize, usize)> = Vec::new();
        let mut pos = 0;
        for line in text.split('\n') {
            let start = pos;
            pos += line.len() + 1;
            let rest = line.trim_start_matches(|c: char| {
                c.is_whitespace() || matches!(c, '-' | '*' | '+' | '>' | '#' | '|')
            });
            if let Some(c) = rest.chars().next() {
                lines.push((c, start, start + line.trim_end().len()));
            }
        }
        for w in lines.windows(m) {
            if w.iter().zip(&symbols).all(|(l, s)| l.0 == *s) {
                let (a, z) = (w[0].1, w[m - 1].2);
                col.add(self.whole_leak(text, LeakMethod::Acrostic, a, z));
                return;
            }
        }
    }

    /// Stage 5b: initials of consecutive words, for long keys only. `initials` are the folded
    /// word initials the survey gathered (taken as bytes, so that this stage and the survey,
    /// which counts spelling words with [`count_spelling_word`], do not import each other).
    /// With `capitals`, only runs of capitalised words count.
    pub(super) fn search_word_acrostic(
        &self,
        text: &str,
        initials: &[u8],
        capitals: bool,
        col: &mut Collector,
    ) {
        if self.key.len() < CUED_WORD_ACROSTIC_MIN_CHARS {
            return;
        }
        // The survey collected the stream's bytes already; the word spans are found again.
        let spans = self.initial_spans(text);
        debug_assert_eq!(spans.len(), initials.len());
        let mut st = Stream {
            bytes: initials.to_vec(),
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
            // Every word capitalised, within one clause: names and title-case items of a
            // list ("Carla Ortiz, Priya Patel, Ethan Ruiz") are capitalised anyway.
            let capitalised = || {
                let (a, z) = (spans[h.s].0 as usize, spans[h.e - 1].1 as usize);
                spans[h.s..h.e]
                    .iter()
                    .all(|&(start, _, _)| text.as_bytes()[start as usize].is_ascii_uppercase())
                    && !text.as_bytes()[a..z]
                        .iter()
                        .any(|c| matches!(c, b',' | b';' | b':' | b'|' | b'\n' | b'(' | b')'))
            };
            if capitals && !capitalised() {
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
        // Whether the word after `words[w]` is `next` (lowercase ASCII).
        let next_is = |w: usize, next: &[u8], buf: &mut [u8; 12]| {
            words.get(w + 1).is_some_and(|&word| {
                let n = lower(word, buf);
                &buf[..n] == next
            })
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
            if let Some(c) = phonetic_char(word).or_else(|| letter_name(word)) {
                let common = phonetic_char(word).is_none() && COMMON_LETTER_NAMES.contains(&word);
                units.push(Unit {
                    c,
                    start: s as u32,
                    end: e as u32,
                    tag: if common {
                        TAG_MARK | TAG_COMMON
                    } else {
                        TAG_MARK
                    },
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
            } else if matches!(word, b"as" | b"for" | b"like")
                || (word == b"is" && next_is(w, b"for", &mut buf))
            {
                // "G as in Golf", "G for George", "G is for George": the example word
                // repeats the letter.
                let mut k = w + 1;
                let joined = match word {
                    b"as" => next_is(w, b"in", &mut buf),
                    b"is" => true,
                    _ => false,
                };
                if joined {
                    k += 1;
                }
                let prev = units.last().map(|u| u.c);
                if let (Some(p), Some(&(ns, mut ne))) = (prev, words.get(k))
                    && k > w + usize::from(matches!(word, b"as" | b"is"))
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
        // A short key: every character a code word, at most one of them an everyday word
        // ("oh see you are" is prose, not `ocur`).
        let short = self.short;
        self.add_hits(text, &units, col, |st, h| {
            let marked = st.count_tag(h.s, h.e, TAG_MARK);
            let enough = if short {
                marked == h.e - h.s && st.count_tag(h.s, h.e, TAG_COMMON) <= 1
            } else {
                marked * 2 >= h.e - h.s
            };
            enough.then_some(LeakMethod::Phonetic)
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
    let name = len <= 6 && LETTER_NAME_FIRST & (1 << first) != 0;
    if !filler && !name && (mask & (1 << first) == 0 || mask & (1 << (32 + last)) == 0) {
        return false;
    }
    let mut buf = [0u8; 8];
    for (d, &c) in buf.iter_mut().zip(w) {
        *d = c.to_ascii_lowercase();
    }
    let w = &buf[..len];
    phonetic_char(w).is_some()
        || (letter_name(w).is_some() && !COMMON_LETTER_NAMES.contains(&w))
        || w == b"ray"
        || (prev_single && matches!(w, b"as" | b"for" | b"like" | b"is"))
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

/// The letter an English letter name stands for: `gee` is `g`, `aitch` is `h`, `double-u`
/// aside (it is two words). Some are common words ("see", "you", "are", "why"): they only
/// count inside a run that spells the key, and they do not wake the stage
/// ([`COMMON_LETTER_NAMES`]).
pub(super) fn letter_name(word: &[u8]) -> Option<char> {
    Some(match word {
        b"ay" | b"aye" => 'a',
        b"bee" => 'b',
        b"cee" | b"see" => 'c',
        b"dee" => 'd',
        b"ee" => 'e',
        b"ef" | b"eff" => 'f',
        b"gee" => 'g',
        b"aitch" | b"haitch" | b"aych" => 'h',
        b"eye" => 'i',
        b"jay" => 'j',
        b"kay" => 'k',
        b"el" | b"ell" => 'l',
        b"em" => 'm',
        b"en" => 'n',
        b"oh" => 'o',
        b"pee" => 'p',
        b"cue" | b"queue" | b"kew" => 'q',
        b"ar" | b"are" => 'r',
        b"ess" => 's',
        b"tee" => 't',
        b"you" | b"yoo" => 'u',
        b"vee" => 'v',
        b"ex" => 'x',
        b"why" | b"wye" => 'y',
        b"zee" | b"zed" => 'z',
        _ => return None,
    })
}

/// Letter names that are everyday words: read in a spelling, never counted by the survey.
const COMMON_LETTER_NAMES: [&[u8]; 8] = [
    b"aye", b"see", b"eye", b"oh", b"are", b"you", b"why", b"cue",
];

/// A bit per first letter of some letter name, for the survey's quick rejection.
const LETTER_NAME_FIRST: u64 = {
    let firsts = b"abcdeghjkopqstvwyz";
    let mut m = 0u64;
    let mut i = 0;
    while i < firsts.len() {
        m |= 1 << (firsts[i] - b'a');
        i += 1;
    }
    m
};

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

/// Letters a key needs before a paragraph's sentence initials are read for it.
const SENTENCE_ACROSTIC_MIN: usize = 5;
