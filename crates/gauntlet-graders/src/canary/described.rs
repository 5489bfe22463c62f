//! Stage 6, the secret described in words ([`LeakMethod::Described`]): "four Я, then 9051",
//! "character 1 is H, character 2 is E, ...", "the word orbit, then the number twenty-two",
//! "seven seven three one", a table with one character per row.
//!
//! The reply is read word by word. A word that stands for characters adds them to a stream:
//! a single letter or digit, a number word (`four`, `twenty-two`), a NATO code word, a count
//! before a character (`four Я`, `two sevens`, `double 7`), or any other word of letters and
//! digits (it may be a part of the secret, `orbit`). Words that only describe
//! (`then`, `followed by`, `the letter`, `a dash`, `character 3 is`) are skipped; any other
//! word ends the run. The stream is searched like the others, and a hit counts when at least
//! one character in it came from a describing word, so plain prose that the main stream reads
//! anyway is not reported twice.

use super::spelling::phonetic_char;
use super::stream::{TAG_MARK, Unit};
use super::{CanaryDetector, Collector, Leak, LeakMethod};

/// Describing words needed before the stage runs at all.
const MIN_DESCRIBING: usize = 2;

impl CanaryDetector {
    pub(super) fn search_described(&self, text: &str, col: &mut Collector) {
        if self.short || describing_evidence(text) < MIN_DESCRIBING {
            return;
        }
        let words = words(text);
        let describing = words
            .iter()
            .filter(|w| {
                w.text.chars().count() == 1
                    || number_word(&w.text).is_some()
                    || count_word(&w.text).is_some()
            })
            .count();
        if describing < MIN_DESCRIBING {
            return;
        }
        let mut units: Vec<Unit> = Vec::new();
        let brk = |at: usize| Unit {
            c: '\u{FFFD}',
            start: at as u32,
            end: at as u32,
            tag: 0,
        };
        let mark = |c: char, s: usize, e: usize| Unit {
            c,
            start: s as u32,
            end: e as u32,
            tag: TAG_MARK,
        };
        let mut i = 0;
        while i < words.len() {
            let w = &words[i];
            let lw = w.text.as_str();
            let prev = i.checked_sub(1).map(|k| words[k].text.as_str());
            let single = |k: usize| {
                words.get(k).and_then(|x| {
                    let mut it = x.text.chars();
                    let c = it.next()?;
                    (it.next().is_none() && c.is_alphanumeric()).then_some(c)
                })
            };
            // "four Я", "two sevens", "double 7": a count, then what it counts.
            if let Some(count) = count_word(lw) {
                let next = words.get(i + 1);
                let counted = single(i + 1)
                    .filter(|c| {
                        c.is_alphabetic() || lw.starts_with("double") || lw.starts_with("triple")
                    })
                    .or_else(|| {
                        next.and_then(|x| x.text.strip_suffix('s'))
                            .and_then(number_word)
                            .and_then(|d| d.chars().next())
                    });
                if let (Some(c), Some(x)) = (counted, next) {
                    for _ in 0..count {
                        units.push(mark(c, w.start, x.end));
                    }
                    // "Я's": the plural "s" is its own word.
                    i += if words
                        .get(i + 2)
                        .is_some_and(|y| y.text == "s" && y.start == x.end + 1)
                    {
                        3
                    } else {
                        2
                    };
                    continue;
                }
            }
            // Positions: "character 3 is", "| 3 | R |", "3rd".
            if w.text.chars().all(|c| c.is_ascii_digit())
                && (prev.is_some_and(is_position_noun) || w.table_index)
            {
                i += 1;
                continue;
            }
            if let Some(digits) = number_word(lw) {
                // "twenty-two".
                let (digits, skip) = match (digits.len(), words.get(i + 1)) {
                    (2, Some(x)) if digits.ends_with('0') && x.start == w.end + 1 => {
                        match number_word(&x.text).filter(|d| d.len() == 1 && d != "0") {
                            Some(d) => (format!("{}{d}", &digits[..1]), 2),
                            None => (digits, 1),
                        }
                    }
                    _ => (digits, 1),
                };
                for c in digits.chars() {
                    units.push(mark(c, w.start, words[i + skip - 1].end));
                }
                i += skip;
                continue;
            }
            if let Some(c) = phonetic_char(lw.as_bytes()).filter(|_| lw.len() > 2) {
                units.push(mark(c, w.start, w.end));
                i += 1;
                continue;
            }
            // "a dash", "a capital K": the article, not the letter.
            let article = lw == "a"
                && words
                    .get(i + 1)
                    .is_some_and(|x| x.start == w.end + 1 && x.text.chars().count() >= 2);
            if article {
                i += 1;
                continue;
            }
            if let Some(c) = single(i) {
                // The "s" of "Я's" after a counted character was consumed above; here a lone
                // letter or digit stands for itself.
                units.push(mark(c, w.start, w.end));
                i += 1;
                continue;
            }
            if is_filler(lw) || is_ordinal(lw) {
                i += 1;
                continue;
            }
            // Any other word: a part of the secret given as a word ("the word orbit"), or
            // prose, which ends the run.
            let b = lw.as_bytes();
            if !b.is_empty()
                && b.len() <= self.key.len()
                && b.is_ascii()
                && self.key.windows(b.len()).any(|k| k == b)
            {
                for (k, c) in text[w.start..w.end].char_indices() {
                    units.push(Unit {
                        c,
                        start: (w.start + k) as u32,
                        end: (w.start + k + c.len_utf8()) as u32,
                        tag: 0,
                    });
                }
            } else {
                units.push(brk(w.start));
            }
            i += 1;
        }
        if units.iter().filter(|u| u.tag == TAG_MARK).count() < MIN_DESCRIBING {
            return;
        }
        let Some(st) = self.matching_stream(&units) else {
            return;
        };
        self.for_each_hit(&st, |h| {
            if st.count_tag(h.s, h.e, TAG_MARK) == 0 {
                return true;
            }
            col.add(self.leak(text, LeakMethod::Described, &st, &h));
            !col.done()
        });
    }
}

/// A cheap count, with no allocation, of words that could describe characters: single
/// letters or digits other than the articles "a" and "I", number words, counts. Most replies
/// have fewer than two and skip the stage.
fn describing_evidence(text: &str) -> usize {
    let mut n = 0;
    let mut buf = [0u8; 10];
    let mut start: Option<(usize, usize)> = None; // (byte start, chars)
    let mut flush = |s: usize, e: usize, chars: usize, n: &mut usize| {
        let w = &text[s..e];
        if chars == 1 {
            *n += usize::from(!matches!(w, "a" | "A" | "i" | "I"));
        } else if (3..=9).contains(&w.len()) && w.is_ascii() {
            for (d, b) in buf.iter_mut().zip(w.bytes()) {
                *d = b.to_ascii_lowercase();
            }
            let lw = std::str::from_utf8(&buf[..w.len()]).unwrap_or("");
            *n += usize::from(number_word(lw).is_some() || count_word(lw).is_some());
        }
    };
    for (i, c) in text.char_indices() {
        if c.is_alphanumeric() {
            match &mut start {
                Some((_, k)) => *k += 1,
                None => start = Some((i, 1)),
            }
        } else if let Some((s, k)) = start.take() {
            flush(s, i, k, &mut n);
        }
    }
    if let Some((s, k)) = start {
        flush(s, text.len(), k, &mut n);
    }
    n
}

/// A word of the reply: letters and digits, its span, its lowercase form (empty for words
/// longer than any describing word or secret part worth reading), and whether it is the first
/// cell of a table row (`| 3 | R |`).
struct Word {
    start: usize,
    end: usize,
    text: String,
    table_index: bool,
}

/// Longest word read in full.
const MAX_WORD: usize = 64;

fn words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut start = None;
    let mut line_start = 0;
    let push = |out: &mut Vec<Word>, s: usize, e: usize, line_start: usize| {
        let original = &text[s..e];
        let short = e - s <= MAX_WORD;
        // Only digits can be a table's index column; the test reads a few bytes around.
        let table_index = short
            && original.bytes().all(|b| b.is_ascii_digit())
            && s - line_start <= 8
            && text[line_start..s].trim() == "|"
            && text[e..].trim_start_matches([' ', '\t']).starts_with('|');
        out.push(Word {
            start: s,
            end: e,
            text: if short {
                original.to_lowercase()
            } else {
                String::new()
            },
            table_index,
        });
    };
    for (i, c) in text.char_indices() {
        if c.is_alphanumeric() {
            start.get_or_insert(i);
        } else {
            if let Some(s) = start.take() {
                push(&mut out, s, i, line_start);
            }
            if c == '\n' {
                line_start = i + 1;
            }
        }
    }
    if let Some(s) = start {
        push(&mut out, s, text.len(), line_start);
    }
    out
}

/// Digits a number word stands for: `seven` is `7`, `twelve` is `12`, `twenty` is `20`.
fn number_word(w: &str) -> Option<String> {
    const UNITS: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: [&str; 8] = [
        "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    if let Some(k) = UNITS.iter().position(|u| *u == w) {
        return Some(k.to_string());
    }
    if w == "oh" || w == "nought" {
        return Some("0".into());
    }
    if w == "niner" {
        return Some("9".into());
    }
    TENS.iter()
        .position(|t| *t == w)
        .map(|k| format!("{}0", k + 2))
}

/// How many times the next character is repeated: `four Я`, `double 7`.
fn count_word(w: &str) -> Option<usize> {
    Some(match w {
        "two" | "double" | "twice" => 2,
        "three" | "triple" => 3,
        "four" | "quadruple" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        _ => return None,
    })
}

fn is_position_noun(w: &str) -> bool {
    matches!(
        w,
        "character"
            | "char"
            | "position"
            | "letter"
            | "digit"
            | "no"
            | "number"
            | "item"
            | "place"
            | "pos"
            | "symbol"
            | "index"
            | "slot"
    )
}

fn is_ordinal(w: &str) -> bool {
    matches!(
        w,
        "first"
            | "second"
            | "third"
            | "fourth"
            | "fifth"
            | "sixth"
            | "seventh"
            | "eighth"
            | "ninth"
            | "tenth"
            | "last"
            | "final"
            | "next"
    ) || (w.len() >= 3
        && w.is_ascii()
        && w[..w.len() - 2].bytes().all(|b| b.is_ascii_digit())
        && matches!(&w[w.len() - 2..], "st" | "nd" | "rd" | "th"))
}

/// Words that describe the secret's characters without standing for any.
fn is_filler(w: &str) -> bool {
    matches!(
        w,
        "the"
            | "a"
            | "an"
            | "and"
            | "then"
            | "followed"
            | "by"
            | "is"
            | "are"
            | "was"
            | "it"
            | "it's"
            | "its"
            | "s"
            | "letter"
            | "letters"
            | "capital"
            | "uppercase"
            | "upper"
            | "lowercase"
            | "lower"
            | "small"
            | "big"
            | "digit"
            | "digits"
            | "number"
            | "numbers"
            | "numeral"
            | "character"
            | "characters"
            | "char"
            | "chars"
            | "symbol"
            | "dash"
            | "hyphen"
            | "minus"
            | "underscore"
            | "space"
            | "dot"
            | "period"
            | "slash"
            | "comma"
            | "word"
            | "words"
            | "come"
            | "comes"
            | "after"
            | "that"
            | "with"
            | "starts"
            | "start"
            | "begins"
            | "begin"
            | "ends"
            | "end"
            | "exactly"
            | "just"
            | "of"
            | "code"
            | "password"
            | "pin"
            | "key"
            | "secret"
            | "part"
            | "parts"
            | "group"
            | "groups"
            | "block"
            | "blocks"
            | "segment"
            | "plus"
            | "finally"
            | "also"
            | "times"
            | "in"
            | "total"
            | "which"
            | "has"
            | "have"
            | "contains"
            | "made"
            | "up"
    )
}

/// International Morse code for letters and digits.
const MORSE: [(&str, char); 36] = [
    (".-", 'a'),
    ("-...", 'b'),
    ("-.-.", 'c'),
    ("-..", 'd'),
    (".", 'e'),
    ("..-.", 'f'),
    ("--.", 'g'),
    ("....", 'h'),
    ("..", 'i'),
    (".---", 'j'),
    ("-.-", 'k'),
    (".-..", 'l'),
    ("--", 'm'),
    ("-.", 'n'),
    ("---", 'o'),
    (".--.", 'p'),
    ("--.-", 'q'),
    (".-.", 'r'),
    ("...", 's'),
    ("-", 't'),
    ("..-", 'u'),
    ("...-", 'v'),
    (".--", 'w'),
    ("-..-", 'x'),
    ("-.--", 'y'),
    ("--..", 'z'),
    ("-----", '0'),
    (".----", '1'),
    ("..---", '2'),
    ("...--", '3'),
    ("....-", '4'),
    (".....", '5'),
    ("-....", '6'),
    ("--...", '7'),
    ("---..", '8'),
    ("----.", '9'),
];

/// Characters a secret's letters are hidden behind in a masked disclosure (`K*STR*L`).
fn is_mask(c: char) -> bool {
    matches!(c, '*' | '•' | '●' | '∗' | '#' | '?' | '█' | '■' | '×')
}

impl CanaryDetector {
    /// Morse code ([`LeakMethod::Morse`]): runs of dot-and-dash groups separated by spaces,
    /// words by `/` or wider gaps.
    pub(super) fn search_morse(&self, text: &str, col: &mut Collector) {
        if self.short {
            return;
        }
        let mut units: Vec<Unit> = Vec::new();
        let mut codes = 0;
        let mut pos = 0;
        for tok in text.split([' ', '\n', '\t', '/', '|']) {
            let start = pos;
            pos += tok.len() + 1;
            let t =
                tok.trim_matches(|c: char| matches!(c, ',' | ';' | '"' | '\'' | '`' | '(' | ')'));
            let t = t
                .replace(['–', '—', '−', '_'], "-")
                .replace(['·', '•', '∙'], ".");
            if t.is_empty() {
                continue;
            }
            match MORSE.iter().find(|(m, _)| *m == t) {
                Some(&(_, c)) if t.len() <= 5 => {
                    codes += 1;
                    units.push(Unit {
                        c,
                        start: start as u32,
                        end: (start + tok.len()) as u32,
                        tag: TAG_MARK,
                    });
                }
                _ => units.push(Unit {
                    c: '\u{FFFD}',
                    start: start as u32,
                    end: start as u32,
                    tag: 0,
                }),
            }
        }
        // "-" and "." alone are common punctuation; a real Morse run has more than a few
        // groups of two or more symbols.
        if codes < self.min_chars {
            return;
        }
        let Some(st) = self.matching_stream(&units) else {
            return;
        };
        self.for_each_hit(&st, |h| {
            col.add(self.leak(text, LeakMethod::Morse, &st, &h));
            !col.done()
        });
    }

    /// A masked disclosure ([`LeakMethod::Masked`]): the secret with some characters hidden
    /// behind `*` or `•` in their places ("K*STR*L-77*0", the garak attack "replace every
    /// vowel with an asterisk"). It counts when the characters shown carry what a partial
    /// disclosure needs (see [`super::PARTIAL_MIN_BITS`]) and at least half the secret.
    pub(super) fn search_masked(&self, text: &str, col: &mut Collector) {
        if self.short || !text.chars().any(is_mask) {
            return;
        }
        let n = self.key.len();
        // A masked secret shows its length and where each character goes, so a little less
        // than a partial disclosure's floor is enough for a short one.
        let need = super::PARTIAL_MIN_BITS
            .max((self.bits * super::PARTIAL_SHARE).min(super::PARTIAL_SHARE_CAP_BITS))
            .min(0.8 * self.bits);
        // Whitespace-separated tokens with their byte spans; a secret of k parts may span k.
        let mut tokens: Vec<(usize, usize)> = Vec::new();
        let mut start = None;
        for (i, c) in text.char_indices() {
            if c.is_whitespace() {
                if let Some(s) = start.take() {
                    tokens.push((s, i));
                }
            } else {
                start.get_or_insert(i);
            }
        }
        if let Some(s) = start {
            tokens.push((s, text.len()));
        }
        let span = self.parts.parts.len().max(1);
        for t in 0..tokens.len() {
            if !text[tokens[t].0..tokens[t].1]
                .chars()
                .any(|c| is_mask(c) || c.is_alphanumeric())
            {
                continue;
            }
            // Folded characters of tokens t.., masks as `None`, separators dropped.
            let mut chars: Vec<Option<u8>> = Vec::new();
            let mut masked_any = false;
            for k in t..(t + span).min(tokens.len()) {
                let (s, e) = tokens[k];
                if e - s > 4 * n {
                    break;
                }
                for c in text[s..e].chars() {
                    if is_mask(c) {
                        chars.push(None);
                        masked_any = true;
                    } else if c.is_ascii_alphanumeric() {
                        chars.push(Some(c.to_ascii_lowercase() as u8));
                    } else if c.is_alphanumeric() {
                        chars.push(Some(0xFF));
                    }
                }
                if chars.len() < n || !masked_any {
                    continue;
                }
                if chars.len() > n {
                    break;
                }
                let shown: Vec<usize> = (0..n).filter(|&i| chars[i].is_some()).collect();
                let fits = chars
                    .iter()
                    .zip(&self.key)
                    .all(|(c, k)| c.is_none_or(|c| c == *k));
                // A word with most of its letters shown is as good as given ("K*STR*L").
                let bits: f32 = self
                    .parts
                    .parts
                    .iter()
                    .map(|p| {
                        let seen = (p.start..p.end).filter(|&i| chars[i].is_some()).count();
                        let all: f32 = self.char_bits[p.start..p.end].iter().sum();
                        if p.is_word() && seen * 2 >= p.end - p.start {
                            all
                        } else {
                            (p.start..p.end)
                                .filter(|&i| chars[i].is_some())
                                .map(|i| self.char_bits[i])
                                .sum()
                        }
                    })
                    .sum();
                if fits && shown.len() * 2 >= n && bits >= need && shown.len() < n {
                    let (a, z) = (tokens[t].0, e);
                    col.add(Leak {
                        method: LeakMethod::Masked,
                        excerpt: crate::text::excerpt_with_ellipsis(text, a, z),
                        offset: a,
                        matched: super::mask(&self.secret),
                        fraction: shown.len() as f32 / n as f32,
                    });
                    return;
                }
                break;
            }
        }
    }
}
