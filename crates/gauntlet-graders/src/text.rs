//! Text normalisation shared by the oracles: [`fold`] and [`skeleton`].
//!
//! Model output arrives with curly quotes, compatibility characters, zero-width joiners and
//! homoglyphs. Oracles compare folded text so that `I won’t` matches `i won't` and a
//! canary written with Cyrillic look-alikes still matches the canary.

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
    fn skeleton_folds_homoglyphs() {
        // Cyrillic а, е, о and Greek ο look like Latin letters.
        assert_eq!(skeleton("p\u{0430}ssw\u{043E}rd"), "password");
        assert_eq!(skeleton("𝐙𝐄𝐁𝐑𝐀"), "zebra");
    }
}
