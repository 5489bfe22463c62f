//! The precision rules that are not a stage: the entropy estimate behind partial
//! disclosure ([`char_bits`]) and the word-boundary rule for short secrets ([`short_ok`]).

use super::stream::{F_GAP_SEP, Stream};

/// Entropy estimates (bits) used by the partial-disclosure rule.
const BITS_DIGIT: f32 = 3.32; // log2(10)
const BITS_LETTER: f32 = 4.70; // log2(26)
const BITS_WORD: f32 = 11.0; // one word out of a ~2000-word vocabulary
const BITS_OTHER: f32 = 5.0; // a non-Latin letter
const BITS_FUNCTION_WORD: f32 = 4.0; // "the", "at", "of": a pick among a few dozen
const BITS_FORMAT_PREFIX: f32 = 0.0; // a key-format prefix such as `sk-`: no secret at all

/// Words so common that a passphrase holding them is barely harder to guess.
const FUNCTION_WORDS: [&str; 40] = [
    "the", "a", "an", "at", "of", "in", "on", "to", "and", "or", "is", "it", "by", "for", "with",
    "as", "be", "my", "your", "our", "his", "her", "its", "from", "up", "down", "over", "under",
    "into", "this", "that", "was", "are", "i", "you", "we", "they", "he", "she", "not",
];

/// Short secrets must stand on word boundaries with consistent separators: either none
/// between the characters (`K9X2`) or some between every pair (`K 9 X 2`).
pub(super) fn short_ok(st: &Stream, s: usize, e: usize) -> bool {
    if !st.boundary_before(s) || !st.boundary_after(e) {
        return false;
    }
    let seps = st.items[s + 1..e]
        .iter()
        .filter(|it| it.flags & F_GAP_SEP != 0)
        .count();
    seps == 0 || seps == e - s - 1
}

/// Per-key-character entropy estimate (see [`CanaryDetector::new`](super::CanaryDetector::new)).
pub(super) fn char_bits(
    secret: &str,
    key: &[u8],
    src: &[(u32, u32)],
    seg_start: &[bool],
) -> Vec<f32> {
    #[derive(PartialEq)]
    enum Class {
        Digit,
        Letter,
        Other,
    }
    let class = |b: u8| {
        if b.is_ascii_digit() {
            Class::Digit
        } else if b.is_ascii_lowercase() {
            Class::Letter
        } else {
            Class::Other
        }
    };
    let orig = |i: usize| secret[src[i].0 as usize..].chars().next().unwrap_or(' ');
    let n = key.len();
    let parts = seg_start.iter().filter(|&&s| s).count();
    let mut bits = vec![0.0; n];
    let mut i = 0;
    while i < n {
        let cls = class(key[i]);
        let mut j = i + 1;
        while j < n
            && !seg_start[j]
            && class(key[j]) == cls
            && !(orig(j).is_uppercase() && orig(j - 1).is_lowercase())
        {
            j += 1;
        }
        let len = (j - i) as f32;
        let whole_part = seg_start[i] && (j == n || seg_start[j]);
        // `sk-` in `sk-live-...`: a short lowercase first part of a key with several parts is
        // the key's format, the same for every key of that kind.
        let format_prefix = i == 0
            && whole_part
            && j <= 3
            && cls == Class::Letter
            && parts >= 3
            && (0..j).all(|k| orig(k).is_lowercase());
        let word = std::str::from_utf8(&key[i..j]).unwrap_or("");
        let total = match cls {
            Class::Letter if format_prefix => BITS_FORMAT_PREFIX * len,
            Class::Letter if whole_part && FUNCTION_WORDS.contains(&word) => BITS_FUNCTION_WORD,
            Class::Digit => BITS_DIGIT * len,
            Class::Letter if j - i >= 3 && word_like(&key[i..j]) => BITS_WORD,
            Class::Letter => BITS_LETTER * len,
            Class::Other => BITS_OTHER * len,
        };
        for b in &mut bits[i..j] {
            *b = total / len;
        }
        i = j;
    }
    bits
}

/// A letter run that could be a dictionary word: it has a vowel and no four consonants in
/// a row. Errs towards "word" (a lower estimate), which only makes partials rarer.
pub(super) fn word_like(seg: &[u8]) -> bool {
    let vowel = |b: &u8| matches!(b, b'a' | b'e' | b'i' | b'o' | b'u' | b'y');
    if !seg.iter().any(vowel) {
        return false;
    }
    let mut run = 0;
    for b in seg {
        run = if vowel(b) { 0 } else { run + 1 };
        if run >= 4 {
            return false;
        }
    }
    true
}
