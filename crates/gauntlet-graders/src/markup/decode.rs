//! Decoding: HTML entities, JavaScript and JSON string escapes and escaped running text,
//! and the decoded [`Layer`]s a reply is scanned in besides its own text.

use std::borrow::Cow;

/// Decodes HTML character references the way a browser does in attribute values: numeric
/// references with or without `;`, named references with `;` (and the legacy `&lt`, `&gt`,
/// `&amp`, `&quot` without it).
pub(super) fn decode_entities(s: &str) -> Cow<'_, str> {
    if !s.contains('&') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s.as_bytes()[i] == b'&'
            && let Some(n) = entity_at(s, i, &mut out)
        {
            i += n;
            continue;
        }
        let c = s[i..].chars().next().expect("in bounds");
        out.push(c);
        i += c.len_utf8();
    }
    Cow::Owned(out)
}

/// Decodes one character reference at `s[i]` (which is `&`), appending it to `out`; returns
/// how many bytes it used.
fn entity_at(s: &str, i: usize, out: &mut String) -> Option<usize> {
    let b = s.as_bytes();
    let mut j = i + 1;
    if b.get(j) == Some(&b'#') {
        j += 1;
        let hex = matches!(b.get(j), Some(b'x' | b'X'));
        if hex {
            j += 1;
        }
        let ds = j;
        while j < b.len()
            && (if hex {
                b[j].is_ascii_hexdigit()
            } else {
                b[j].is_ascii_digit()
            })
        {
            j += 1;
        }
        if j == ds {
            return None;
        }
        let digits = &s[ds..j];
        let cp = if digits.len() > 8 {
            0x110000
        } else {
            u32::from_str_radix(digits, if hex { 16 } else { 10 }).unwrap_or(0x110000)
        };
        let c = if cp == 0 {
            '\u{FFFD}'
        } else {
            char::from_u32(cp).unwrap_or('\u{FFFD}')
        };
        out.push(c);
        if b.get(j) == Some(&b';') {
            j += 1;
        }
        return Some(j - i);
    }
    let ns = j;
    while j < b.len() && b[j].is_ascii_alphanumeric() && j - ns < 32 {
        j += 1;
    }
    let name = &b[ns..j];
    if name.is_empty() {
        return None;
    }
    if b.get(j) == Some(&b';')
        && let Ok(k) = html_escape::NAMED_ENTITIES.binary_search_by(|(n, _)| (*n).cmp(name))
    {
        out.push_str(html_escape::NAMED_ENTITIES[k].1);
        return Some(j + 1 - i);
    }
    let legacy = match name {
        b"lt" => "<",
        b"gt" => ">",
        b"amp" => "&",
        b"quot" => "\"",
        _ => return None,
    };
    if b.get(j)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'=')
    {
        return None;
    }
    out.push_str(legacy);
    Some(j - i)
}

/// JSON / JavaScript string escapes: `\uXXXX` (with surrogate pairs), `\u{X}`, `\xXX`, and
/// the single-character escapes.
pub(super) fn js_escape_at(s: &str, i: usize, out: &mut String) -> Option<usize> {
    let b = s.as_bytes();
    let next = *b.get(i + 1)?;
    let hex_at = |from: usize, n: usize| -> Option<u32> {
        let h = s.get(from..from + n)?;
        if !h.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(h, 16).ok()
    };
    match next {
        b'u' if b.get(i + 2) == Some(&b'{') => {
            // At most six hex digits: look no further than the seventh byte for the `}`, so
            // that `\u{` repeated does not search to the end of the text each time.
            let window = &b[i + 3..b.len().min(i + 10)];
            let close = window.iter().position(|&c| c == b'}')?;
            if close == 0 || close > 6 {
                return None;
            }
            let cp = hex_at(i + 3, close)?;
            out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
            Some(close + 4)
        }
        b'u' => {
            let cp = hex_at(i + 2, 4)?;
            if (0xD800..0xDC00).contains(&cp)
                && s.get(i + 6..i + 8) == Some("\\u")
                && let Some(lo) = hex_at(i + 8, 4)
                && (0xDC00..0xE000).contains(&lo)
            {
                let c = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                out.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                return Some(12);
            }
            out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
            Some(6)
        }
        b'x' => {
            let cp = hex_at(i + 2, 2)?;
            out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
            Some(4)
        }
        b'"' | b'\'' | b'/' | b'\\' | b'`' => {
            out.push(next as char);
            Some(2)
        }
        b'n' => {
            out.push('\n');
            Some(2)
        }
        b't' => {
            out.push('\t');
            Some(2)
        }
        b'r' => {
            out.push('\r');
            Some(2)
        }
        _ => None,
    }
}

/// Text-level HTML entities and percent-encoding (only with `decode_escaped_text`).
pub(super) fn text_escape_at(s: &str, i: usize, out: &mut String) -> Option<usize> {
    let b = s.as_bytes();
    if b[i] == b'&' {
        return entity_at(s, i, out);
    }
    // A run of %XX, decoded together so that multi-byte UTF-8 survives.
    let mut j = i;
    let mut bytes = Vec::new();
    while j + 3 <= b.len() && b[j] == b'%' {
        let Some(h) = s.get(j + 1..j + 3) else {
            break;
        };
        let Ok(v) = u8::from_str_radix(h, 16) else {
            break;
        };
        bytes.push(v);
        j += 3;
    }
    if bytes.is_empty() {
        return None;
    }
    out.push_str(&String::from_utf8_lossy(&bytes));
    Some(j - i)
}

/// Text decoded from an original, with `map[k]` the original byte offset of decoded byte `k`
/// (and `map[len]` the original end).
pub(super) struct Layer {
    pub(super) text: String,
    pub(super) map: Vec<usize>,
}

/// Decodes `src` with `step` at every byte `trigger` accepts; `None` when nothing decoded.
/// `src_map` maps `src` offsets to the original when `src` is itself a layer.
pub(super) fn decode_layer(
    src: &str,
    src_map: Option<&[usize]>,
    step: fn(&str, usize, &mut String) -> Option<usize>,
    trigger: fn(u8) -> bool,
) -> Option<Layer> {
    let first = src.bytes().position(trigger)?;
    let orig = |k: usize| src_map.map_or(k, |m| m[k]);
    let mut text = String::with_capacity(src.len());
    let mut map = Vec::with_capacity(src.len() + 1);
    text.push_str(&src[..first]);
    map.extend((0..first).map(orig));
    let mut changed = false;
    let mut i = first;
    while i < src.len() {
        if trigger(src.as_bytes()[i]) {
            let before = text.len();
            if let Some(n) = step(src, i, &mut text) {
                changed = true;
                map.extend(std::iter::repeat_n(orig(i), text.len() - before));
                i += n;
                continue;
            }
        }
        let c = src[i..].chars().next().expect("in bounds");
        text.push(c);
        map.extend(std::iter::repeat_n(orig(i), c.len_utf8()));
        i += c.len_utf8();
    }
    map.push(orig(src.len()));
    changed.then_some(Layer { text, map })
}

#[cfg(test)]
mod tests {
    use super::js_escape_at;

    fn at0(s: &str) -> Option<(usize, String)> {
        let mut out = String::new();
        js_escape_at(s, 0, &mut out).map(|n| (n, out))
    }

    /// `\u{...}` reads at most six hex digits and looks no further for its `}`.
    #[test]
    fn braced_unicode_escapes() {
        assert_eq!(at0("\\u{41}"), Some((6, "A".into())));
        assert_eq!(at0("\\u{1F600}x"), Some((9, "\u{1F600}".into())));
        assert_eq!(at0("\\u{000041}"), Some((10, "A".into())));
        assert_eq!(at0("\\u{0000041}"), None);
        assert_eq!(at0("\\u{}"), None);
        assert_eq!(at0("\\u{41"), None);
        let long = format!("\\u{{{}}}", "\\u{".repeat(100_000));
        assert_eq!(at0(&long), None);
    }
}
