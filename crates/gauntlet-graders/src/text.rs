//! Text helpers shared by the oracles and detectors: normalisation ([`fold`] and
//! [`skeleton`]) and the excerpts and quotes that evidence is written with.
//!
//! Model output arrives with curly quotes, compatibility characters, zero-width joiners and
//! homoglyphs. Oracles compare folded text so that `I won’t` matches `i won't` and a
//! canary written with Cyrillic look-alikes still matches the canary.
//!
//! Evidence quotes the reply it judges. The excerpt helpers differ on purpose, and their
//! outputs are stored in reports, so they are kept as they were: a canary leak's excerpt is
//! cut with a `…` that counts towards its 120 characters (`excerpt_with_ellipsis`); a
//! markup finding's is the first 120 characters, unmarked (`excerpt`); a check's verdict
//! quotes the answer with `describe` or around a phrase with `excerpt_around`.

use gauntlet_core::text::clip;
use unicode_normalization::UnicodeNormalization;

/// Characters that render as nothing (or only steer layout) and are used to hide text from
/// naive matching: zero-width spaces and joiners, word joiner, BOM, soft hyphen, and the
/// bidirectional controls (including the RTL override).
pub fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}'
        | '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{206F}'
        | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}'
        | '\u{E0000}'..='\u{E007F}')
}

/// Maps typographic punctuation to its ASCII form.
fn ascii_punct(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '\u{02BC}'
        | '\u{FF07}' | '\u{0060}' | '\u{00B4}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{00AB}'
        | '\u{00BB}' | '\u{FF02}' => '"',
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{FF0D}' => '-',
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        '\u{2026}' => '.',
        other => other,
    }
}

/// Folds text for matching: NFKC, invisible characters removed, typographic punctuation
/// mapped to ASCII, lowercased. Offsets do not survive folding; report excerpts from the
/// original text.
pub fn fold(s: &str) -> String {
    // Most model output is ASCII, where NFKC and the mappings below change nothing but case.
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(s.len());
    for c in s.nfkc() {
        if is_invisible(c) {
            continue;
        }
        let c = ascii_punct(c);
        for l in c.to_lowercase() {
            out.push(l);
        }
    }
    out
}

/// A confusable skeleton: [`fold`] plus homoglyph folding (Cyrillic `а` to `a`, fullwidth
/// and mathematical letters to ASCII, accents dropped). Use it to compare short secrets;
/// it is too lossy for prose (it erases scripts other than Latin).
pub fn skeleton(s: &str) -> String {
    let folded = fold(s);
    match decancer::cure(
        &folded,
        decancer::Options::default().retain_capitalization(),
    ) {
        Ok(cured) => cured.to_string().to_lowercase(),
        Err(_) => folded,
    }
}

/// Longest excerpt of a reply quoted in a canary leak or a markup finding, in characters.
pub(crate) const EXCERPT_MAX_CHARS: usize = 120;

/// The first `n` characters of `s`, with no mark where it was cut.
pub(crate) fn prefix(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// `text[start..end]` widened to character boundaries (the rest of the text when the span is
/// empty) and cut to its first [`EXCERPT_MAX_CHARS`] characters, unmarked.
pub(crate) fn excerpt(text: &str, start: usize, end: usize) -> String {
    let mut s = start.min(text.len());
    while !text.is_char_boundary(s) {
        s -= 1;
    }
    let mut e = end.clamp(s, text.len());
    while !text.is_char_boundary(e) {
        e += 1;
    }
    if e == s {
        e = text.len();
    }
    prefix(&text[s..e], EXCERPT_MAX_CHARS)
}

/// `text[a..z]` (on character boundaries) in at most [`EXCERPT_MAX_CHARS`] characters, the
/// last of them `…` when it was cut.
pub(crate) fn excerpt_with_ellipsis(text: &str, a: usize, z: usize) -> String {
    let s = &text[a..z.max(a)];
    if s.chars().count() <= EXCERPT_MAX_CHARS {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(EXCERPT_MAX_CHARS - 1).collect();
    out.push('…');
    out
}

/// An answer quoted for a verdict: its trimmed text, debug-quoted and clipped to 100
/// characters, or "the answer is empty".
pub(crate) fn describe(text: &str) -> String {
    if text.trim().is_empty() {
        "the answer is empty".into()
    } else {
        format!("{:?}", clip(text.trim(), 100))
    }
}

/// The answer quoted around the first case-insensitive occurrence of `needle` (30 bytes
/// either side); [`describe`] when it is absent, or when lowercasing changes the text's
/// length and the offset would not carry over.
pub(crate) fn excerpt_around(text: &str, needle: &str) -> String {
    let lower = text.to_lowercase();
    match lower.find(&needle.to_lowercase()) {
        Some(i) if lower.len() == text.len() => {
            let start = text.floor_char_boundary(i.saturating_sub(30));
            let end = text.ceil_char_boundary((i + needle.len() + 30).min(text.len()));
            format!("{:?}", &text[start..end])
        }
        _ => describe(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_quotes_width_and_invisibles() {
        assert_eq!(fold("I won’t"), "i won't");
        assert_eq!(fold("ＳＥＣＲＥＴ"), "secret");
        assert_eq!(fold("se\u{200B}cr\u{202E}et"), "secret");
        assert_eq!(fold("a\u{00A0}b—c"), "a b-c");
    }

    #[test]
    fn the_two_excerpts_cut_differently() {
        let long = "x".repeat(200);
        // A canary leak's excerpt counts its ellipsis in the 120 characters...
        let marked = excerpt_with_ellipsis(&long, 0, 200);
        assert_eq!(marked.chars().count(), EXCERPT_MAX_CHARS);
        assert!(marked.ends_with('…'));
        assert_eq!(excerpt_with_ellipsis(&long, 0, 120), "x".repeat(120));
        // ...a markup finding's is the first 120 characters, unmarked, on boundaries.
        assert_eq!(excerpt(&long, 0, 200), "x".repeat(120));
        assert_eq!(excerpt("aéb", 2, 2), "é");
        assert_eq!(excerpt("aéb", 0, 2), "aé");
        assert_eq!(excerpt("ab", 1, 1), "b");
    }

    #[test]
    fn verdict_quotes() {
        assert_eq!(describe("  "), "the answer is empty");
        assert_eq!(describe(" hi "), "\"hi\"");
        let text = format!("{}needle{}", "a".repeat(40), "b".repeat(40));
        assert_eq!(
            excerpt_around(&text, "NEEDLE"),
            format!("\"{}needle{}\"", "a".repeat(30), "b".repeat(30))
        );
        assert_eq!(excerpt_around("nothing here", "needle"), "\"nothing here\"");
    }

    #[test]
    fn skeleton_folds_homoglyphs() {
        // Cyrillic а, е, о and Greek ο look like Latin letters.
        assert_eq!(skeleton("p\u{0430}ssw\u{043E}rd"), "password");
        assert_eq!(skeleton("𝐙𝐄𝐁𝐑𝐀"), "zebra");
    }
}
