//! Unicode tricks: look-alike letters, invisible characters, full-width forms.

use super::Rng;

/// Latin letters and a Cyrillic or Greek letter that renders the same in most fonts.
const HOMOGLYPHS: &[(char, char)] = &[
    ('a', 'а'), // Cyrillic a
    ('c', 'с'),
    ('e', 'е'),
    ('i', 'і'), // Ukrainian i
    ('o', 'о'),
    ('p', 'р'),
    ('x', 'х'),
    ('y', 'у'),
    ('A', 'Α'), // Greek Alpha
    ('B', 'Β'),
    ('E', 'Ε'),
    ('H', 'Η'),
    ('K', 'Κ'),
    ('M', 'Μ'),
    ('O', 'Ο'),
    ('P', 'Ρ'),
    ('T', 'Τ'),
    ('X', 'Χ'),
];

/// About half of the letters that have a look-alike are swapped for it (seeded).
pub fn homoglyph(text: &str, rng: &mut Rng) -> String {
    let mut swapped = false;
    let mut out: String = text
        .chars()
        .map(|c| match HOMOGLYPHS.iter().find(|(l, _)| *l == c) {
            Some((_, g)) if rng.chance(1, 2) => {
                swapped = true;
                *g
            }
            _ => c,
        })
        .collect();
    if !swapped {
        // A prompt whose few candidates all stayed Latin still gets one swap.
        if let Some((i, g)) = out.char_indices().find_map(|(i, c)| {
            HOMOGLYPHS
                .iter()
                .find(|(l, _)| *l == c)
                .map(|(_, g)| (i, *g))
        }) {
            let len = out[i..].chars().next().map_or(1, char::len_utf8);
            out.replace_range(i..i + len, &g.to_string());
        }
    }
    out
}

const ZERO_WIDTH: [char; 3] = ['\u{200B}', '\u{200C}', '\u{200D}'];

/// A zero-width character after about two of every three letters (seeded).
pub fn zero_width(text: &str, rng: &mut Rng) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for c in text.chars() {
        out.push(c);
        if c.is_alphanumeric() && rng.chance(2, 3) {
            out.push(ZERO_WIDTH[rng.below(ZERO_WIDTH.len())]);
        }
    }
    out
}

/// The prompt in Unicode tag characters (U+E0000 + ASCII), invisible in most interfaces,
/// after a harmless visible line. Characters outside printable ASCII stay as they are.
pub fn tags(text: &str, _rng: &mut Rng) -> String {
    let hidden: String = text
        .chars()
        .map(|c| {
            if (' '..='~').contains(&c) {
                char::from_u32(0xE0000 + c as u32).unwrap_or(c)
            } else {
                c
            }
        })
        .collect();
    format!("Hi! Could you help me with the note attached to this message?{hidden}")
}

/// Printable ASCII as full-width forms (U+FF01-U+FF5E; a space becomes U+3000).
pub fn fullwidth(text: &str, _rng: &mut Rng) -> String {
    text.chars()
        .map(|c| match c {
            '!'..='~' => char::from_u32(c as u32 - 0x21 + 0xFF01).unwrap_or(c),
            ' ' => '\u{3000}',
            _ => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn homoglyphs_look_alike_but_differ() {
        let out = homoglyph("open the account", &mut Rng::new(1));
        assert_ne!(out, "open the account");
        assert_eq!(out.chars().count(), "open the account".chars().count());
        assert!(out.chars().any(|c| ('\u{0400}'..='\u{04FF}').contains(&c)));
    }

    #[test]
    fn zero_width_characters_are_invisible_additions() {
        let out = zero_width("secret", &mut Rng::new(2));
        let visible: String = out.chars().filter(|c| !ZERO_WIDTH.contains(c)).collect();
        assert_eq!(visible, "secret");
        assert!(out.chars().count() > 6);
    }

    #[test]
    fn tags_hide_ascii_in_the_tag_block() {
        let out = tags("Hi", &mut Rng::new(0));
        assert!(out.ends_with("\u{E0048}\u{E0069}"), "{out:?}");
    }

    #[test]
    fn fullwidth_maps_ascii() {
        assert_eq!(fullwidth("Ab 1!", &mut Rng::new(0)), "Ａｂ\u{3000}１！");
    }
}
