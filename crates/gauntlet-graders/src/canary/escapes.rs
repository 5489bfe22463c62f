//! Stage 3, escapes decoded in place: URL encoding, HTML entities, `\uXXXX`-style code
//! points, `\xHH` and octal bytes, in windows around the escapes found
//! ([`escape_starts`], [`escape_units`]). A hit counts only if an escape lies inside it.
//! And markup tags read as separators between the secret's characters (`search_tagged`).

use super::encoded::{byte_units, hexv};
use super::stream::{
    TAG_HEX, TAG_HTML, TAG_MARK, TAG_OCT, TAG_UESC, TAG_URL, Unit, ceil_boundary, floor_boundary,
};
use super::{CanaryDetector, Collector, LeakMethod, MAX_GAP};

impl CanaryDetector {
    /// Stage 3: escapes decoded in place.
    pub(super) fn search_escapes(&self, text: &str, col: &mut Collector) {
        let starts = escape_starts(text.as_bytes());
        if starts.is_empty() {
            return;
        }
        // Decode only around the escapes: a hit must contain one, and reaches at most the
        // key's length in characters and gaps beyond it. Clusters become one window each,
        // with a break between windows.
        let margin = (self.key.len() * (MAX_GAP + 1)).max(32);
        let mut units: Vec<Unit> = Vec::new();
        let mut k = 0;
        while k < starts.len() {
            let first = starts[k];
            let mut last = first;
            k += 1;
            while k < starts.len() && starts[k] <= last + 2 * margin {
                last = starts[k];
                k += 1;
            }
            let a = floor_boundary(text, first.saturating_sub(margin));
            let z = ceil_boundary(text, (last + ESCAPE_MAX_LEN + margin).min(text.len()));
            if !units.is_empty() {
                units.push(Unit {
                    c: '\u{FFFD}',
                    start: a as u32,
                    end: a as u32,
                    tag: 0,
                });
            }
            escape_units(text, a..z, &mut units);
        }
        self.add_hits(text, &units, col, |st, h| {
            let tags = st.tags(h.s, h.e);
            if tags & TAG_URL != 0 {
                Some(LeakMethod::UrlEncoded)
            } else if tags & TAG_HTML != 0 {
                Some(LeakMethod::HtmlEntity)
            } else if tags & TAG_UESC != 0 {
                Some(LeakMethod::UnicodeEscape)
            } else if tags & TAG_HEX != 0 {
                Some(LeakMethod::Hex)
            } else if tags & TAG_OCT != 0 {
                Some(LeakMethod::CharCodes)
            } else {
                None // no escape inside: the plain stages own it
            }
        });
    }

    /// Stage 3b: the secret's characters wrapped in markup tags one by one
    /// (`<b>G</b><b>N</b>...`, `G<br/>N<br/>T`): each tag is read as a separator. A hit counts
    /// only if a tag stands between two of its characters ([`LeakMethod::Separated`]); the
    /// secret whole inside one tag is the literal stage's. Read in windows of
    /// [`TAGGED_WINDOW`] bytes overlapping by [`TAGGED_OVERLAP`], so that a 2 MB page of
    /// markup costs the units of one window, not of the page.
    pub(super) fn search_tagged(&self, text: &str, col: &mut Collector) {
        let mut units: Vec<Unit> = Vec::new();
        let mut from = 0;
        while from < text.len() && !col.full {
            let to = ceil_boundary(text, (from + TAGGED_WINDOW).min(text.len()));
            units.clear();
            if tagged_units(text, from, to, &mut units) >= 2 {
                self.add_hits(text, &units, col, |st, h| {
                    (st.count_tag(h.s + 1, h.e, TAG_MARK) > 0).then_some(LeakMethod::Separated)
                });
            }
            if to == text.len() {
                break;
            }
            // Windows are far longer than their overlap, so this always moves on.
            from = floor_boundary(text, to - TAGGED_OVERLAP);
        }
    }
}

/// Bytes of a reply [`CanaryDetector::search_tagged`] reads at once ...
const TAGGED_WINDOW: usize = 64 << 10;
/// ... and the bytes two windows share: a secret of 64 characters each wrapped in a
/// 60-byte tag pair fits.
const TAGGED_OVERLAP: usize = 4 << 10;

/// The characters of `text[from..to]` as units, each markup tag as one space, the first
/// letter or digit after a tag marked [`TAG_MARK`]; returns the number of tags. A tag that
/// starts before `to` is read whole.
fn tagged_units(text: &str, from: usize, to: usize, units: &mut Vec<Unit>) -> usize {
    let b = text.as_bytes();
    let mut tags = 0;
    let mut after_tag = false;
    let mut i = from;
    while i < to {
        if let Some(end) = (b[i] == b'<').then(|| tag_end(b, i)).flatten() {
            units.push(Unit {
                c: ' ',
                start: i as u32,
                end: end as u32,
                tag: 0,
            });
            tags += 1;
            after_tag = true;
            i = end;
            continue;
        }
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        let alnum = c.is_alphanumeric();
        units.push(Unit {
            c,
            start: i as u32,
            end: (i + c.len_utf8()) as u32,
            tag: if after_tag && alnum { TAG_MARK } else { 0 },
        });
        after_tag &= !alnum;
        i += c.len_utf8();
    }
    tags
}

/// Where the markup tag starting at `b[i]` (`<` then a letter or `/`) ends (one past its
/// `>`), if it is one: at most [`TAG_MAX_LEN`] bytes, on one line, with no `<` inside.
fn tag_end(b: &[u8], i: usize) -> Option<usize> {
    let first = *b.get(i + 1)?;
    if !(first.is_ascii_alphabetic() || first == b'/') {
        return None;
    }
    let stop = (i + TAG_MAX_LEN).min(b.len());
    let close = b[i + 1..stop]
        .iter()
        .position(|&c| matches!(c, b'>' | b'<' | b'\n'))?;
    (b[i + 1 + close] == b'>').then_some(i + close + 2)
}

/// Longest markup tag [`tag_end`] reads (`<span class="...">`).
const TAG_MAX_LEN: usize = 100;

/// Longest escape [`escape_units`] decodes (`&` + a 32-character entity name + `;`).
const ESCAPE_MAX_LEN: usize = 34;

/// Where escape syntax that [`escape_units`] decodes may start.
fn escape_starts(b: &[u8]) -> Vec<usize> {
    let hex2 = |i: usize| i + 2 < b.len() && hexv(b[i + 1]).is_some() && hexv(b[i + 2]).is_some();
    let mut out = Vec::new();
    for (i, &c) in b.iter().enumerate() {
        let hit = match c {
            b'%' => hex2(i),
            b'&' => {
                i + 2 < b.len()
                    && (b[i + 1] == b'#' || b[i + 1].is_ascii_alphabetic())
                    && b[i + 1..b.len().min(i + ESCAPE_MAX_LEN)].contains(&b';')
            }
            b'\\' => i + 1 < b.len() && matches!(b[i + 1], b'u' | b'U' | b'x' | b'0'..=b'7'),
            b'+' => {
                i > 0
                    && matches!(b[i - 1], b'u' | b'U')
                    && i + 4 < b.len()
                    && b[i + 1..i + 5].iter().all(|&h| hexv(h).is_some())
            }
            _ => false,
        };
        if hit {
            out.push(if c == b'+' { i - 1 } else { i });
        }
    }
    out
}

/// `text[range]` with escapes decoded in place, appended to `out`: every character keeps its
/// original span and decoded ones are tagged with their escape kind.
fn escape_units(text: &str, range: std::ops::Range<usize>, out: &mut Vec<Unit>) {
    let b = &text.as_bytes()[..range.end];
    // Consecutive byte escapes (%XX, \xHH, octal) form UTF-8 sequences together.
    let mut pending: Vec<(u8, u32, u32)> = Vec::new();
    let mut pending_tag = 0;
    let flush = |pending: &mut Vec<(u8, u32, u32)>, tag: u8, out: &mut Vec<Unit>| {
        if !pending.is_empty() {
            out.extend(byte_units(pending, tag));
            pending.clear();
        }
    };
    let hex_at = |i: usize, n: usize| -> Option<u32> {
        if i + n > b.len() {
            return None;
        }
        b[i..i + n]
            .iter()
            .try_fold(0u32, |acc, &h| Some((acc << 4) | u32::from(hexv(h)?)))
    };
    let mut i = range.start;
    while i < b.len() {
        // Byte escapes.
        let byte_esc = match b[i] {
            b'%' => hex_at(i + 1, 2).map(|v| (v as u8, 3, TAG_URL)),
            b'\\' if i + 1 < b.len() && b[i + 1] == b'x' => {
                hex_at(i + 2, 2).map(|v| (v as u8, 4, TAG_HEX))
            }
            b'\\'
                if i + 3 < b.len()
                    && matches!(b[i + 1], b'0'..=b'3')
                    && matches!(b[i + 2], b'0'..=b'7')
                    && matches!(b[i + 3], b'0'..=b'7') =>
            {
                let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
                Some((v, 4, TAG_OCT))
            }
            _ => None,
        };
        if let Some((v, len, tag)) = byte_esc {
            if tag != pending_tag {
                flush(&mut pending, pending_tag, out);
                pending_tag = tag;
            }
            pending.push((v, i as u32, (i + len) as u32));
            i += len;
            continue;
        }
        flush(&mut pending, pending_tag, out);

        // Code point escapes.
        let cp = code_point_escape(text, i, &hex_at);
        if let Some((c, len, tag)) = cp {
            out.push(Unit {
                c,
                start: i as u32,
                end: (i + len) as u32,
                tag,
            });
            i += len;
            continue;
        }
        if b[i] == b'&'
            && let Some(semi) = b[i + 1..b.len().min(i + 34)]
                .iter()
                .position(|&c| c == b';')
        {
            let end = i + 1 + semi + 1;
            let name = &b[i + 1..end - 1];
            if !name.is_empty() && name.iter().all(u8::is_ascii_alphanumeric) {
                let entity = &text[i..end];
                let decoded = html_escape::decode_html_entities(entity);
                if decoded != entity {
                    for c in decoded.chars() {
                        out.push(Unit {
                            c,
                            start: i as u32,
                            end: end as u32,
                            tag: TAG_HTML,
                        });
                    }
                    i = end;
                    continue;
                }
            }
        }
        let c = text[i..].chars().next().unwrap_or('\u{FFFD}');
        out.push(Unit {
            c,
            start: i as u32,
            end: (i + c.len_utf8()) as u32,
            tag: 0,
        });
        i += c.len_utf8();
    }
    flush(&mut pending, pending_tag, out);
}

/// `&#NN;`, `&#xHH;`, `\uXXXX` (with surrogate pairs), `\u{X..}`, `\UXXXXXXXX`, `U+XXXX`.
fn code_point_escape(
    text: &str,
    i: usize,
    hex_at: &impl Fn(usize, usize) -> Option<u32>,
) -> Option<(char, usize, u8)> {
    let b = text.as_bytes();
    let at = |k: usize| b.get(k).copied().unwrap_or(0);
    match (at(i), at(i + 1)) {
        (b'&', b'#') => {
            let is_hex = matches!(at(i + 2), b'x' | b'X');
            let d0 = if is_hex { i + 3 } else { i + 2 };
            let mut j = d0;
            let mut v: u32 = 0;
            while j < b.len() && j - d0 < 7 {
                let d = if is_hex {
                    hexv(b[j]).map(u32::from)
                } else {
                    b[j].is_ascii_digit().then(|| u32::from(b[j] - b'0'))
                };
                let Some(d) = d else { break };
                v = v * if is_hex { 16 } else { 10 } + d;
                j += 1;
            }
            if j == d0 {
                return None;
            }
            if at(j) == b';' {
                j += 1;
            }
            Some((char::from_u32(v).unwrap_or('\u{FFFD}'), j - i, TAG_HTML))
        }
        (b'\\', b'u') if at(i + 2) == b'{' => {
            let close = b[i + 3..b.len().min(i + 11)]
                .iter()
                .position(|&c| c == b'}')?;
            let v = hex_at(i + 3, close)?;
            Some((char::from_u32(v)?, close + 4, TAG_UESC))
        }
        (b'\\', b'u') => {
            let v = hex_at(i + 2, 4)?;
            if (0xD800..0xDC00).contains(&v)
                && at(i + 6) == b'\\'
                && at(i + 7) == b'u'
                && let Some(lo) = hex_at(i + 8, 4).filter(|lo| (0xDC00..0xE000).contains(lo))
            {
                let c = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
                return Some((char::from_u32(c).unwrap_or('\u{FFFD}'), 12, TAG_UESC));
            }
            Some((char::from_u32(v).unwrap_or('\u{FFFD}'), 6, TAG_UESC))
        }
        (b'\\', b'U') => {
            let v = hex_at(i + 2, 8)?;
            Some((char::from_u32(v).unwrap_or('\u{FFFD}'), 10, TAG_UESC))
        }
        (b'U' | b'u', b'+') if i == 0 || !b[i - 1].is_ascii_alphanumeric() => {
            let d0 = i + 2;
            let mut j = d0;
            while j < b.len() && j - d0 < 6 && hexv(b[j]).is_some() {
                j += 1;
            }
            if j - d0 < 4 || at(j).is_ascii_alphanumeric() {
                return None;
            }
            let v = hex_at(d0, j - d0)?;
            Some((char::from_u32(v)?, j - i, TAG_UESC))
        }
        _ => None,
    }
}
