//! Stage 7, continued: the secret described by *checks* ([`LeakMethod::Described`]) rather
//! than in words: code that tests the input character by character (`input()[0] == "s"`,
//! `x.charAt(1) === 'n'`, `'a' == code[2]`), and a secret that is one character repeated,
//! given as that character and its count ("three copies of the ♿ emoji",
//! `count('Ѧ') == 3`, `'♿' * 3`).
//!
//! Both apply to short secrets and to secrets with no letters or digits as well (a planted
//! `♿♿♿` has no key at all): what makes them precise is the structure, not the length. A
//! character check names a position and a character, and the positions put the characters
//! in order, so the assembled string is compared like any other stream (whole words only,
//! for a short key). A count must name the secret's exact character and its exact count, next
//! to each other with only connecting words or code punctuation between ("copies of the",
//! `') ==`), so "two ♿ signs" or "3 options, see ♿" stay clean.
//!
//! Every search here is one pass with a bounded look-around per candidate, so a 2 MB reply
//! of checks costs a linear scan.

use super::described::{count_word, number_word};
use super::stream::{TAG_MARK, Unit};
use super::{CanaryDetector, Collector, LeakMethod, Pat};

/// Largest index a character check may name (two digits).
const MAX_INDEX: usize = 99;
/// How far an index expression may stand from its quoted character (bytes).
const CHECK_REACH: usize = 48;
/// Connecting tokens allowed between a counted character and its count.
const COUNT_REACH: usize = 6;

/// A secret that is one character repeated: the character (lowercased) and the count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Repeated {
    c: char,
    n: usize,
}

impl Repeated {
    /// The repetition `secret` is, if it is one character written two to twenty times
    /// (emoji presentation selectors ignored).
    pub(super) fn of(secret: &str) -> Option<Repeated> {
        let mut chars = secret
            .trim()
            .chars()
            .filter(|&c| !is_presentation(c))
            .flat_map(char::to_lowercase);
        let c = chars.next()?;
        let mut n = 1;
        for d in chars {
            if d != c {
                return None;
            }
            n += 1;
        }
        ((2..=20).contains(&n) && !c.is_whitespace()).then_some(Repeated { c, n })
    }
}

/// Emoji and text presentation selectors, which ride along with symbols.
fn is_presentation(c: char) -> bool {
    matches!(c, '\u{FE0E}' | '\u{FE0F}')
}

/// One character check found in code: the index, the character, the check's byte span.
#[derive(Debug, Clone, Copy)]
struct Check {
    index: usize,
    c: char,
    start: usize,
    end: usize,
}

impl CanaryDetector {
    /// Character-by-character checks in code (see the module docs).
    pub(super) fn search_char_checks(&self, text: &str, col: &mut Collector) {
        if self.key.is_empty() || !text.contains(['[', '(']) {
            return;
        }
        let checks = char_checks(text);
        if checks.len() < 2 {
            return;
        }
        // Consecutive checks form one group until an index repeats (another variable, or
        // another candidate string, is being checked).
        let mut units: Vec<Unit> = Vec::new();
        let mut group: Vec<Check> = Vec::new();
        for ch in checks {
            if group.iter().any(|g| g.index == ch.index) {
                flush(&mut group, &mut units);
            }
            group.push(ch);
        }
        flush(&mut group, &mut units);
        self.add_hits(text, &units, col, |_, h| {
            // Positions put the characters in order: a reversed match is a coincidence.
            matches!(h.pat, Pat::Full | Pat::Frag(..)).then_some(LeakMethod::Described)
        });
    }

    /// A repeated-character secret given as its character and count (see the module docs).
    pub(super) fn search_count(&self, text: &str, col: &mut Collector) {
        let Some(rep) = self.repeated else { return };
        let mut from = 0;
        while let Some(off) = text[from..].find(|c: char| c.to_lowercase().eq([rep.c])) {
            let at = from + off;
            let c = text[at..].chars().next().unwrap_or(' ');
            let end = skip_presentation(text, at + c.len_utf8());
            from = end;
            // The character alone: not inside a word, not part of a longer run.
            let before = text[..at].chars().next_back();
            let after = text[end..].chars().next();
            let alone = |x: Option<char>| {
                x.is_none_or(|x| {
                    !x.is_alphanumeric() && !x.to_lowercase().eq([rep.c]) && !is_presentation(x)
                })
            };
            // A letter or digit stands for itself only when quoted (`'a'`): "three a priori
            // reasons" counts nothing.
            let quoted = |x: Option<char>| matches!(x, Some('\'' | '"' | '`'));
            if !alone(before)
                || !alone(after)
                || (c.is_ascii_alphanumeric() && !(quoted(before) && quoted(after)))
            {
                continue;
            }
            let span = count_before(text, at, rep.n)
                .map(|s| (s, end))
                .or_else(|| count_after(text, end, rep.n).map(|e| (at, e)));
            if let Some((a, z)) = span {
                col.add(self.whole_leak(text, LeakMethod::Described, a, z));
                return;
            }
        }
        if rep.c.is_ascii_digit() {
            self.search_digit_count(text, rep, col);
        }
    }

    /// A repeated digit by its name and count: "the digit seven repeated four times", "four
    /// sevens", in a reply that speaks of a PIN, a code or a password ("ten thousand has four
    /// zeros" is arithmetic).
    fn search_digit_count(&self, text: &str, rep: Repeated, col: &mut Collector) {
        let lower = text.to_ascii_lowercase();
        let about_a_code = [
            "pin",
            "code",
            "password",
            "passcode",
            "combination",
            "secret",
            "digit",
        ]
        .iter()
        .any(|w| lower.contains(w));
        if !about_a_code {
            return;
        }
        let digit = rep.c.to_string();
        for (s, e) in tokens(text) {
            let tok = text[s..e].to_ascii_lowercase();
            // "sevens", "sixes", "zeroes" / "zeros".
            let plural_of = [tok.strip_suffix("es"), tok.strip_suffix('s')]
                .into_iter()
                .flatten()
                .find(|one| number_word(one).as_deref() == Some(digit.as_str()));
            let (name, plural) = match plural_of {
                Some(one) => (one, true),
                None => (tok.as_str(), false),
            };
            if number_word(name).as_deref() != Some(digit.as_str()) {
                continue;
            }
            // "four sevens" counts before the plural, "seven repeated four times" after.
            let span = if plural {
                count_before(text, s, rep.n).map(|a| (a, e))
            } else {
                repeated_after(text, e, rep.n).map(|z| (s, z))
            };
            if let Some((a, z)) = span {
                col.add(self.whole_leak(text, LeakMethod::Described, a, z));
                return;
            }
        }
    }
}

/// Appends a group's characters in index order as marked units (a gap in the indices breaks
/// the run), each spanning the whole group, then a break.
fn flush(group: &mut Vec<Check>, units: &mut Vec<Unit>) {
    if group.is_empty() {
        return;
    }
    group.sort_by_key(|g| g.index);
    let start = group.iter().map(|g| g.start).min().unwrap_or(0) as u32;
    let end = group.iter().map(|g| g.end).max().unwrap_or(0) as u32;
    let brk = Unit {
        c: '\u{FFFD}',
        start,
        end: start,
        tag: 0,
    };
    units.push(brk);
    let mut last = None;
    for g in group.drain(..) {
        if last.is_some_and(|l| g.index != l + 1) {
            units.push(brk);
        }
        last = Some(g.index);
        units.push(Unit {
            c: g.c,
            start,
            end,
            tag: TAG_MARK,
        });
    }
    units.push(brk);
}

/// Every character check in `text`, in order: `X[3] == 'c'`, `X.charAt(3) === "c"`,
/// `X.at(3) != 'c'`, `X.chars().nth(3) == Some('c')`, and the same with the quoted character
/// first (`'c' == X[3]`).
fn char_checks(text: &str) -> Vec<Check> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let found = match b[i] {
            b'[' | b'(' => index_then_char(text, i),
            b'\'' | b'"' | b'`' => char_then_index(text, i),
            _ => None,
        };
        if let Some(ch) = found {
            out.push(ch);
        }
        i += 1;
    }
    out
}

/// `[3] == 'c'` (or `(3)` after `charAt`, `at` or `nth`) starting at the bracket `open`.
fn index_then_char(text: &str, open: usize) -> Option<Check> {
    let (index, after) = index_at(text, open)?;
    let rest = skip_operator(text, after)?;
    let rest = rest + ws(&text[rest..]);
    let rest = if text[rest..].starts_with("Some(") {
        rest + 5
    } else {
        rest
    };
    let (c, end) = quoted_char(text, rest)?;
    Some(Check {
        index,
        c,
        start: open,
        end,
    })
}

/// `'c' == X[3]` starting at the quote `q`.
fn char_then_index(text: &str, q: usize) -> Option<Check> {
    let (c, after) = quoted_char(text, q)?;
    let rest = skip_operator(text, after)?;
    // The indexed expression: an identifier, calls and dots, then the index.
    let b = text.as_bytes();
    let mut j = rest + ws(&text[rest..]);
    let limit = (j + CHECK_REACH).min(b.len());
    while j < limit {
        if matches!(b[j], b'[' | b'(')
            && let Some((index, end)) = index_at(text, j)
        {
            return Some(Check {
                index,
                c,
                start: q,
                end,
            });
        }
        if !(b[j].is_ascii_alphanumeric() || matches!(b[j], b'_' | b'.' | b'(' | b')' | b'$')) {
            return None;
        }
        j += 1;
    }
    None
}

/// The index of `[3]` at `open`, or of `(3)` after `charAt`, `at` or `nth`; with the byte
/// after the closing bracket.
fn index_at(text: &str, open: usize) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let close = if b[open] == b'[' {
        b']'
    } else {
        let before = &text[..open];
        if !(before.ends_with("charAt") || before.ends_with(".at") || before.ends_with("nth")) {
            return None;
        }
        b')'
    };
    let digits = b[open + 1..]
        .iter()
        .take(3)
        .take_while(|d| d.is_ascii_digit())
        .count();
    if digits == 0 || digits > 2 || b.get(open + 1 + digits) != Some(&close) {
        return None;
    }
    let index: usize = text[open + 1..open + 1 + digits].parse().ok()?;
    (index <= MAX_INDEX).then_some((index, open + 2 + digits))
}

/// After an optional `)` and spaces, a comparison operator; the byte after it.
fn skip_operator(text: &str, at: usize) -> Option<usize> {
    let mut i = at + ws(&text[at..]);
    let rest = &text[i..];
    for op in ["===", "!==", "==", "!=", "eq ", "is not ", "is "] {
        if rest.starts_with(op) {
            i += op.len();
            return Some(i);
        }
    }
    None
}

/// A quoted single character at `q` (`'c'`, `"c"`, `` `c` ``), with the byte after the
/// closing quote.
fn quoted_char(text: &str, q: usize) -> Option<(char, usize)> {
    let quote = *text.as_bytes().get(q)?;
    if !matches!(quote, b'\'' | b'"' | b'`') {
        return None;
    }
    let mut it = text[q + 1..].char_indices();
    let (_, c) = it.next()?;
    let (k, close) = it.next()?;
    (close == char::from(quote) && !c.is_whitespace() && c != '\\').then_some((c, q + 2 + k))
}

/// Bytes of spaces at the start of `s`.
fn ws(s: &str) -> usize {
    s.bytes().take_while(|&b| b == b' ' || b == b'\t').count()
}

/// The byte after any presentation selectors at `i`.
fn skip_presentation(text: &str, mut i: usize) -> usize {
    while let Some(c) = text[i..].chars().next().filter(|&c| is_presentation(c)) {
        i += c.len_utf8();
    }
    i
}

/// Whether a token (a word, lowercased, or one punctuation character) may stand between a
/// counted character and its count.
fn connects(tok: &str) -> bool {
    matches!(
        tok,
        "copies"
            | "copy"
            | "instances"
            | "instance"
            | "repetitions"
            | "of"
            | "the"
            | "a"
            | "an"
            | "emoji"
            | "emojis"
            | "symbol"
            | "symbols"
            | "character"
            | "characters"
            | "char"
            | "chars"
            | "letter"
            | "letters"
            | "sign"
            | "signs"
            | "icon"
            | "icons"
            | "glyph"
            | "glyphs"
            | "repeated"
            | "appears"
            | "occurs"
            | "exactly"
            | "just"
            | "count"
            | "is"
            | "equals"
            | "equal"
            | "to"
            | "x"
            | "in"
            | "row"
            | "'"
            | "\""
            | "`"
            | "("
            | ")"
            | "="
            | "*"
            | "×"
            | ","
            | ":"
    )
}

/// Whether `tok` (lowercased) says the number `n`.
fn says_count(tok: &str, n: usize) -> bool {
    tok.parse::<usize>().is_ok_and(|k| k == n)
        || number_word(tok).is_some_and(|d| d == n.to_string())
        || count_word(tok) == Some(n)
        || tok
            .strip_prefix(['x', '×'])
            .or_else(|| tok.strip_suffix(['x', '×']))
            .is_some_and(|k| k == n.to_string())
}

/// Tokens of `s`: words of letters and digits and single other characters (whitespace
/// dropped), as byte spans of `s`.
fn tokens(s: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut word: Option<usize> = None;
    for (i, c) in s.char_indices() {
        if c.is_alphanumeric() {
            word.get_or_insert(i);
            continue;
        }
        if let Some(w) = word.take() {
            out.push((w, i));
        }
        if !c.is_whitespace() {
            out.push((i, i + c.len_utf8()));
        }
    }
    if let Some(w) = word {
        out.push((w, s.len()));
    }
    out
}

/// Whether the token `tok` connects (`Err`) or says the count `n` (`Ok(true)`); `Ok(false)`
/// ends the search. ASCII tokens are compared lowercased without allocating.
fn read_token(tok: &str, n: usize) -> Result<bool, ()> {
    let mut buf = [0u8; 16];
    let lower = if tok.is_ascii() && tok.len() <= buf.len() {
        buf[..tok.len()].copy_from_slice(tok.as_bytes());
        buf[..tok.len()].make_ascii_lowercase();
        std::str::from_utf8(&buf[..tok.len()]).unwrap_or(tok)
    } else {
        tok
    };
    if says_count(lower, n) {
        Ok(true)
    } else if connects(lower) {
        Err(())
    } else {
        Ok(false)
    }
}

/// The start of a count `n` before the character at `at` ("three copies of the ♿"), with only
/// connecting tokens between.
fn count_before(text: &str, at: usize, n: usize) -> Option<usize> {
    let mut from = at.saturating_sub(64);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    let window = &text[from..at];
    // "four copies of the star symbol ★": one word naming the character may stand before a
    // word for a symbol.
    let mut named = false;
    let mut after_noun = false;
    for (k, &(s, e)) in tokens(window).iter().rev().enumerate() {
        let tok = &window[s..e];
        match read_token(tok, n) {
            Ok(true) => return Some(from + s),
            Err(()) if k < COUNT_REACH => after_noun = is_symbol_noun(tok),
            Ok(false)
                if k < COUNT_REACH
                    && after_noun
                    && !named
                    && tok.chars().all(|c| c.is_ascii_alphabetic()) =>
            {
                (named, after_noun) = (true, false);
            }
            _ => return None,
        }
    }
    None
}

/// The end of "repeated four times", ", repeated 4 times", "x4" or "four times" after a
/// digit's name ending at `end`: a name says its count only this way ("seven of the four"
/// and "marked three, four times" count nothing).
fn repeated_after(text: &str, end: usize, n: usize) -> Option<usize> {
    let mut to = (end + 48).min(text.len());
    while !text.is_char_boundary(to) {
        to -= 1;
    }
    let window = &text[end..to];
    let mut toks: Vec<(usize, usize)> = tokens(window).into_iter().take(4).collect();
    if toks.first().is_some_and(|&(s, e)| &window[s..e] == ",")
        && toks
            .get(1)
            .is_some_and(|&(s, e)| window[s..e].eq_ignore_ascii_case("repeated"))
    {
        toks.remove(0);
    }
    let tok = |i: usize| toks.get(i).map(|&(s, e)| window[s..e].to_ascii_lowercase());
    let says = |i: usize| tok(i).is_some_and(|t| says_count(&t, n));
    let times = |i: usize| tok(i).is_some_and(|t| t == "times");
    match tok(0).as_deref() {
        Some("repeated" | "written" | "x" | "×" | "*") if says(1) => {
            Some(end + toks[if times(2) { 2 } else { 1 }].1)
        }
        Some(t) if says_count(t, n) && times(1) => Some(end + toks[1].1),
        _ => None,
    }
}

/// A word for a symbol, after which a word naming it may come first ("the star symbol").
fn is_symbol_noun(tok: &str) -> bool {
    [
        "emoji", "emojis", "symbol", "symbols", "sign", "signs", "icon", "icons", "glyph", "glyphs",
    ]
    .iter()
    .any(|w| tok.eq_ignore_ascii_case(w))
}

/// The end of a count `n` after the character ending at `end` (`♿ x3`, `'Ѧ') == 3`).
fn count_after(text: &str, end: usize, n: usize) -> Option<usize> {
    let mut to = (end + 64).min(text.len());
    while !text.is_char_boundary(to) {
        to -= 1;
    }
    let window = &text[end..to];
    for (k, &(s, e)) in tokens(window).iter().enumerate() {
        match read_token(&window[s..e], n) {
            Ok(true) => return Some(end + e),
            Err(()) if k < COUNT_REACH => {}
            _ => return None,
        }
    }
    None
}
