//! Stage 4, encoded runs: Base64 and Base32 at every alignment, hex bytes, decimal
//! character codes and binary octets, each decoded only where a run is long enough to hold a
//! detectable fragment and searched only if it decodes to printable text that long.
//!
//! A long run is decoded in overlapping windows ([`SYMBOL_WINDOW`] symbols or
//! [`BYTE_WINDOW`] decoded bytes, overlapping by [`WINDOW_OVERLAP`] decoded bytes), so the
//! memory a reply of one multi-megabyte Base64 string costs is bounded by the window, not by
//! the reply (every decoded byte otherwise carries its span and becomes a stream item). The
//! collector keeps one leak per method, so a hit found in two windows is reported once.

use super::stream::{BREAK, Unit};
use super::{CanaryDetector, Collector, LeakMethod};

/// A wrapped Base64/Base32 line is joined to the next only if it is at least this long.
pub(super) const WRAP_MIN_LINE: usize = 16;

/// Symbols of a Base64 or Base32 run decoded at once. A multiple of 8, so every window
/// starts at the same sextet (4) and quintet (8) alignment as the run.
pub(super) const SYMBOL_WINDOW: usize = 1 << 17;
/// Decoded bytes of a hex, binary or character-code run searched at once.
pub(super) const BYTE_WINDOW: usize = 1 << 17;
/// Decoded bytes two neighbouring windows share: a match spread wider than this (a secret
/// padded out with kilobytes of invisible characters inside one encoded run) could fall
/// between windows. Separators alone break a match long before (see `MAX_GAP`).
pub(super) const WINDOW_OVERLAP: usize = 16 << 10;

/// The symbols of `width` bits that decode to [`WINDOW_OVERLAP`] bytes, rounded up to a
/// multiple of 8 so the windows keep their alignment.
fn symbol_overlap(width: u32) -> usize {
    (WINDOW_OVERLAP * 8)
        .div_ceil(width as usize)
        .next_multiple_of(8)
}

/// Searches a growing run in windows: once `run` holds a window and its overlap, `search`
/// gets the run so far and everything but the overlap is dropped (the dropped length a
/// multiple of 8). Returns false when `search` asked to stop.
fn window_full<T>(
    run: &mut Vec<T>,
    window: usize,
    overlap: usize,
    mut search: impl FnMut(&[T]) -> bool,
) -> bool {
    if run.len() < window + overlap {
        return true;
    }
    let go = search(run);
    run.drain(..window);
    go
}

impl CanaryDetector {
    /// Whether decoded bytes may hold a match: a superset of the stream (separators dropped
    /// whatever their length), checked before any per-character work. Non-ASCII bytes may
    /// fold to anything, so they send the buffer to the full check.
    fn maybe_bytes(&self, bytes: &[(u8, u32, u32)]) -> bool {
        let mut q = Vec::with_capacity(bytes.len());
        for &(b, _, _) in bytes {
            if !b.is_ascii() {
                return true;
            }
            if b.is_ascii_alphanumeric() {
                q.push(b.to_ascii_lowercase());
            } else if !(b.is_ascii_graphic() || b.is_ascii_whitespace()) {
                q.push(BREAK);
            }
        }
        self.maybe(&q)
    }

    /// Searches decoded units; every hit is reported under `method`.
    fn search_units(&self, text: &str, units: &[Unit], method: LeakMethod, col: &mut Collector) {
        let Some(st) = self.matching_stream(units) else {
            return;
        };
        self.for_each_hit(&st, |h| {
            col.add(self.leak(text, method, &st, &h));
            !col.done()
        });
        if !col.done() {
            self.search_shifts(text, &st, Some(method), col);
        }
    }

    /// Stage 4a/b: Base64 (standard and URL-safe alphabets at once) and Base32 (one letter
    /// case per run), over the blocks that start at the survey's candidate runs: a block is
    /// a Base64-alphabet run with wrapped lines joined, and holds any Base32 run too.
    pub(super) fn search_base64_32(&self, text: &str, starts: &[u32], col: &mut Collector) {
        let b = text.as_bytes();
        let min64 = (self.min_chars * 4).div_ceil(3);
        let min32 = (self.min_chars * 8).div_ceil(5);
        let mut run: Vec<(u8, u32)> = Vec::new();
        let mut block_end = 0;
        for &s in starts {
            let s = s as usize;
            if s < block_end {
                continue;
            }
            // Extend the block over wrapped lines.
            let mut i = s;
            let mut line = 0;
            let mut total = 0;
            run.clear();
            loop {
                while i < b.len() && B64[usize::from(b[i])] != 0xFF {
                    run.push((B64[usize::from(b[i])], i as u32));
                    i += 1;
                    line += 1;
                    total += 1;
                    let go = window_full(&mut run, SYMBOL_WINDOW, symbol_overlap(6), |r| {
                        self.decode_bits(text, r, 6, LeakMethod::Base64, col);
                        !col.done()
                    });
                    if !go {
                        return;
                    }
                }
                match (i < b.len()).then(|| wrapped(b, i, line, |x| B64[usize::from(x)] != 0xFF)) {
                    Some(Some(j)) => {
                        i = j;
                        line = 0;
                    }
                    _ => break,
                }
            }
            block_end = i;
            if run.len() >= min64 {
                self.decode_bits(text, &run, 6, LeakMethod::Base64, col);
                if col.done() {
                    return;
                }
            }
            if total >= min32 {
                alphabet_runs(b, s..block_end, &B32, min32, true, |r| {
                    self.decode_bits(text, r, 5, LeakMethod::Base32, col);
                    !col.done()
                });
                if col.done() {
                    return;
                }
            }
        }
    }

    /// Decodes a run of `width`-bit symbols at every alignment and searches the result.
    fn decode_bits(
        &self,
        text: &str,
        run: &[(u8, u32)],
        width: u32,
        method: LeakMethod,
        col: &mut Collector,
    ) {
        // Bytes realign after lcm(width, 8) bits: 4 Base64 or 8 Base32 symbols.
        let aligns = if width == 6 { 4 } else { 8 };
        let mut bytes: Vec<(u8, u32, u32)> = Vec::new();
        for k in 0..aligns.min(run.len()) {
            if !printable_run_in(&run[k..], width, self.min_chars) {
                continue;
            }
            bytes.clear();
            unpack(&run[k..], width, &mut bytes);
            if !self.maybe_bytes(&bytes) {
                continue;
            }
            let units = byte_units(&bytes, 0);
            self.search_units(text, &units, method, col);
            if col.done() {
                return;
            }
        }
    }

    /// Stage 4c: hex byte runs.
    pub(super) fn search_hex(&self, text: &str, col: &mut Collector) {
        let b = text.as_bytes();
        let mut run: Vec<(u8, u32, u32)> = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if hexv(b[i]).is_none() && b[i] != b'\\' {
                if !run.is_empty() {
                    self.flush_bytes(text, &mut run, LeakMethod::Hex, col);
                    if col.done() {
                        return;
                    }
                }
                i += 1;
                continue;
            }
            if let Some(next) = hex_group(b, i, &mut run) {
                if !self.bytes_window_full(text, &mut run, LeakMethod::Hex, col) {
                    return;
                }
                let mut j = next;
                while j < b.len()
                    && j - next < 3
                    && matches!(
                        b[j],
                        b' ' | b'\t' | b'\n' | b'\r' | b',' | b':' | b';' | b'-'
                    )
                {
                    j += 1;
                }
                i = j;
                continue;
            }
            if !run.is_empty() {
                self.flush_bytes(text, &mut run, LeakMethod::Hex, col);
                if col.done() {
                    return;
                }
            }
            // Not a group: skip the rest of this word.
            i += 1;
            while i < b.len() && b[i].is_ascii_alphanumeric() {
                i += 1;
            }
        }
        self.flush_bytes(text, &mut run, LeakMethod::Hex, col);
    }

    /// Searches the decoded bytes of a finished run and empties it.
    fn flush_bytes(
        &self,
        text: &str,
        run: &mut Vec<(u8, u32, u32)>,
        method: LeakMethod,
        col: &mut Collector,
    ) {
        self.search_bytes(text, run, method, col);
        run.clear();
    }

    /// Searches decoded bytes if they may hold a match.
    fn search_bytes(
        &self,
        text: &str,
        run: &[(u8, u32, u32)],
        method: LeakMethod,
        col: &mut Collector,
    ) {
        if run.len() >= self.min_chars && has_text_run(run, self.min_chars) && self.maybe_bytes(run)
        {
            let units = byte_units(run, 0);
            self.search_units(text, &units, method, col);
        }
    }

    /// Searches the run so far and keeps only its overlap once it fills a window.
    fn bytes_window_full(
        &self,
        text: &str,
        run: &mut Vec<(u8, u32, u32)>,
        method: LeakMethod,
        col: &mut Collector,
    ) -> bool {
        window_full(run, BYTE_WINDOW, WINDOW_OVERLAP, |r| {
            self.search_bytes(text, r, method, col);
            !col.done()
        })
    }

    /// Stage 4d: decimal character codes (`71 78 84`).
    pub(super) fn search_charcodes(&self, text: &str, col: &mut Collector) {
        self.search_numbers(text, LeakMethod::CharCodes, col, |v| {
            (32..=126).contains(&v).then(|| char::from(v as u8))
        });
    }

    /// Stage 4f: the letters' places in the alphabet (`11-9-14-5-20-9-3-19` for `kinetics`,
    /// the A1Z26 cipher models reach for when asked to "give each letter's number"). Only for
    /// keys of letters alone ([`CanaryDetector::alphabetic`]): a digit has no place to give.
    pub(super) fn search_positions(&self, text: &str, col: &mut Collector) {
        self.search_numbers(text, LeakMethod::AlphabetPositions, col, |v| {
            (1..=26)
                .contains(&v)
                .then(|| char::from(b'a' + v as u8 - 1))
        });
    }

    /// Runs of standalone numbers of at most three digits, each read as a character by
    /// `read`, searched as `method`; a number `read` rejects ends the run.
    fn search_numbers(
        &self,
        text: &str,
        method: LeakMethod,
        col: &mut Collector,
        read: impl Fn(u32) -> Option<char>,
    ) {
        let b = text.as_bytes();
        let mut run: Vec<Unit> = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if !b[i].is_ascii_digit() || (i > 0 && b[i - 1].is_ascii_alphanumeric()) {
                i += 1;
                continue;
            }
            let mut j = i;
            let mut v: u32 = 0;
            while j < b.len() && b[j].is_ascii_digit() && j - i < 4 {
                v = v * 10 + u32::from(b[j] - b'0');
                j += 1;
            }
            let ended = j - i <= 3 && (j == b.len() || !b[j].is_ascii_alphanumeric());
            if let Some(c) = read(v).filter(|_| ended) {
                run.push(Unit {
                    c,
                    start: i as u32,
                    end: j as u32,
                    tag: 0,
                });
                let go = window_full(&mut run, BYTE_WINDOW, WINDOW_OVERLAP, |r| {
                    self.search_units(text, r, method, col);
                    !col.done()
                });
                if !go {
                    return;
                }
                if let Some(next) = code_gap(b, j) {
                    i = next;
                    continue;
                }
            }
            if run.len() >= self.min_chars {
                self.search_units(text, &run, method, col);
                if col.done() {
                    return;
                }
            }
            run.clear();
            while j < b.len() && b[j].is_ascii_alphanumeric() {
                j += 1;
            }
            i = j.max(i + 1);
        }
        if run.len() >= self.min_chars {
            self.search_units(text, &run, method, col);
        }
    }

    /// Stage 4e: binary octets (`01000111 01001110` or one long bit string).
    pub(super) fn search_binary(&self, text: &str, col: &mut Collector) {
        let b = text.as_bytes();
        let mut run: Vec<(u8, u32, u32)> = Vec::new();
        let mut i = 0;
        while i < b.len() {
            let at_start = i == 0 || !b[i - 1].is_ascii_alphanumeric();
            if at_start && matches!(b[i], b'0' | b'1') {
                let mut j = i;
                while j < b.len() && matches!(b[j], b'0' | b'1') {
                    j += 1;
                }
                let len = j - i;
                let ended = j == b.len() || !b[j].is_ascii_alphanumeric();
                if ended && (len == 7 || len == 8 || (len >= 16 && len.is_multiple_of(8))) {
                    let chunk = if len == 7 { 7 } else { 8 };
                    let mut k = i;
                    while k < j {
                        let v = b[k..k + chunk]
                            .iter()
                            .fold(0u8, |acc, &d| (acc << 1) | (d - b'0'));
                        run.push((v, k as u32, (k + chunk) as u32));
                        k += chunk;
                        if !self.bytes_window_full(text, &mut run, LeakMethod::Binary, col) {
                            return;
                        }
                    }
                    let mut s = j;
                    while s < b.len()
                        && s - j < 3
                        && matches!(b[s], b' ' | b'\t' | b'\n' | b'\r' | b',' | b'|')
                    {
                        s += 1;
                    }
                    i = s;
                    continue;
                }
                self.flush_bytes(text, &mut run, LeakMethod::Binary, col);
                if col.done() {
                    return;
                }
                i = j;
                continue;
            }
            if !run.is_empty() {
                self.flush_bytes(text, &mut run, LeakMethod::Binary, col);
                if col.done() {
                    return;
                }
            }
            i += 1;
        }
        self.flush_bytes(text, &mut run, LeakMethod::Binary, col);
    }
}

impl CanaryDetector {
    /// A short secret written in 8-bit binary, one group a character
    /// ("01001011 01001001 01010111 01001001" for `kiwi`, or inside a binary sentence, "The
    /// password is kiwi!"): precise by its structure when the decoded run holds the secret as
    /// a word of its own (no letter or digit before or after it) and the secret has
    /// [`BINARY_WHOLE_MIN`] characters at least (32 bits: groups spelling it by chance are
    /// rarer than one in four billion a position). Base64 and the other encodings of a short
    /// secret are still not read.
    pub(super) fn search_binary_whole(&self, text: &str, col: &mut Collector) {
        let n = self.key.len();
        if n < BINARY_WHOLE_MIN {
            return;
        }
        let b = text.as_bytes();
        let group = |at: usize| {
            at + 8 <= b.len()
                && b[at..at + 8].iter().all(|c| matches!(c, b'0' | b'1'))
                && (at + 8 == b.len() || !b[at + 8].is_ascii_alphanumeric())
        };
        let mut decoded: Vec<(u8, usize, usize)> = Vec::new();
        let mut i = 0;
        while i < b.len() {
            let starts = (i == 0 || !b[i - 1].is_ascii_alphanumeric()) && group(i);
            if !starts {
                i += 1;
                continue;
            }
            decoded.clear();
            let mut k = i;
            while group(k) {
                let v = b[k..k + 8]
                    .iter()
                    .fold(0u8, |acc, &d| (acc << 1) | (d - b'0'));
                decoded.push((v, k, k + 8));
                k += 8;
                // One separator between groups: a space, a comma or a line break.
                match b.get(k) {
                    Some(b' ' | b',' | b'\n' | b'\t') if group(k + 1) => k += 1,
                    Some(b',') if b.get(k + 1) == Some(&b' ') && group(k + 2) => k += 2,
                    _ => break,
                }
            }
            let end = decoded.last().map_or(i + 1, |d| d.2);
            for (a, z) in spelled_whole(&self.key, &decoded) {
                col.add(self.whole_leak(text, LeakMethod::Binary, a, z));
                if col.done() {
                    return;
                }
            }
            i = end.max(i + 1);
        }
    }
}

/// Shortest short secret read whole in binary (see [`CanaryDetector::search_binary_whole`]).
const BINARY_WHOLE_MIN: usize = 4;

/// Where a run of decoded characters (each with the byte span it was decoded from) spells
/// `key` whole: a stretch as long as the key, equal to it but for case, with no letter or
/// digit decoded on either side. Yields the byte span of each.
fn spelled_whole<'a>(
    key: &'a [u8],
    decoded: &'a [(u8, usize, usize)],
) -> impl Iterator<Item = (usize, usize)> + 'a {
    let n = key.len();
    let word = |x: Option<&(u8, usize, usize)>| x.is_some_and(|d| d.0.is_ascii_alphanumeric());
    let starts = if n == 0 {
        0
    } else {
        decoded.len().saturating_sub(n - 1)
    };
    (0..starts)
        .filter(move |&s0| {
            decoded[s0..s0 + n]
                .iter()
                .zip(key)
                .all(|(d, k)| d.0.eq_ignore_ascii_case(k))
                && !word(s0.checked_sub(1).and_then(|p| decoded.get(p)))
                && !word(decoded.get(s0 + n))
        })
        .map(move |s0| (decoded[s0].1, decoded[s0 + n - 1].2))
}

impl CanaryDetector {
    /// A short secret whole in decimal character codes ("98 97 103 101 108" for `bagel`):
    /// a run of numbers of printable characters, apart by a space or a comma, of which a
    /// stretch as long as the key spells it with no letter or digit decoded on either side.
    /// Short keys are not read in the general decoders (four characters decoded out of
    /// some encoding happen by chance); a whole run of two- and three-digit numbers in the
    /// printable range that spells the key does not.
    pub(super) fn search_codes_whole(&self, text: &str, col: &mut Collector) {
        let n = self.key.len();
        if n < BINARY_WHOLE_MIN {
            return;
        }
        let b = text.as_bytes();
        // A code at `at`: two or three digits, not inside a longer number or a word.
        let code = |at: usize| -> Option<(u8, usize)> {
            if at > 0 && b[at - 1].is_ascii_alphanumeric() {
                return None;
            }
            let len = b[at..]
                .iter()
                .take(4)
                .take_while(|c| c.is_ascii_digit())
                .count();
            if !(2..=3).contains(&len) || b.get(at + len).is_some_and(u8::is_ascii_alphanumeric) {
                return None;
            }
            let v: u32 = text[at..at + len].parse().ok()?;
            (32..=126).contains(&v).then_some((v as u8, at + len))
        };
        let mut decoded: Vec<(u8, usize, usize)> = Vec::new();
        let mut i = 0;
        while i < b.len() {
            let Some(first) = b[i].is_ascii_digit().then(|| code(i)).flatten() else {
                i += 1;
                continue;
            };
            decoded.clear();
            let (mut k, mut next) = (i, Some(first));
            while let Some((v, end)) = next {
                decoded.push((v, k, end));
                k = end;
                next = match b.get(k) {
                    Some(b' ' | b',' | b'\n' | b'\t')
                        if b.get(k + 1).is_some_and(u8::is_ascii_digit) =>
                    {
                        k += 1;
                        code(k)
                    }
                    Some(b',')
                        if b.get(k + 1) == Some(&b' ')
                            && b.get(k + 2).is_some_and(u8::is_ascii_digit) =>
                    {
                        k += 2;
                        code(k)
                    }
                    _ => None,
                };
            }
            let end = decoded.last().map_or(i + 1, |d| d.2);
            if let Some((a, z)) = spelled_whole(&self.key, &decoded).next() {
                col.add(self.whole_leak(text, LeakMethod::CharCodes, a, z));
                return;
            }
            i = end.max(i + 1);
        }
    }
}

/// Symbol values of the Base64 alphabets (standard and URL-safe together); 0xFF: not one.
static B64: [u8; 256] = {
    let mut t = [0xFF; 256];
    let mut i = 0;
    while i < 26 {
        t[b'A' as usize + i] = i as u8;
        t[b'a' as usize + i] = 26 + i as u8;
        i += 1;
    }
    let mut d = 0;
    while d < 10 {
        t[b'0' as usize + d] = 52 + d as u8;
        d += 1;
    }
    t[b'+' as usize] = 62;
    t[b'-' as usize] = 62;
    t[b'/' as usize] = 63;
    t[b'_' as usize] = 63;
    t
};

/// Symbol values of the Base32 alphabet (either case); 0xFF: not one.
static B32: [u8; 256] = {
    let mut t = [0xFF; 256];
    let mut i = 0;
    while i < 26 {
        t[b'A' as usize + i] = i as u8;
        t[b'a' as usize + i] = i as u8;
        i += 1;
    }
    let mut d = 0;
    while d < 6 {
        t[b'2' as usize + d] = 26 + d as u8;
        d += 1;
    }
    t
};

/// Finds the maximal runs of an encoding alphabet in `b[range]` (a wrapped line is joined to the
/// next, see [`wrapped`]; with `case_split`, a change of letter case starts a new run) and
/// calls `f` with each run of at least `min_run` symbols as (value, byte offset) pairs.
/// Runs are tracked as byte ranges and only materialised when long enough, so ordinary
/// words cost a table lookup per byte. Stops when `f` returns false.
fn alphabet_runs(
    b: &[u8],
    range: std::ops::Range<usize>,
    table: &[u8; 256],
    min_run: usize,
    case_split: bool,
    mut f: impl FnMut(&[(u8, u32)]) -> bool,
) {
    let mut segs: Vec<(usize, usize)> = Vec::new();
    let mut total = 0;
    let mut seg_start: Option<usize> = None;
    let mut upper: Option<bool> = None;
    let mut run: Vec<(u8, u32)> = Vec::new();
    let overlap = symbol_overlap(5);
    let mut flush = |segs: &mut Vec<(usize, usize)>, total: &mut usize| -> bool {
        let go = if *total >= min_run {
            run.clear();
            let mut go = true;
            'segs: for &(s, e) in segs.iter() {
                for k in s..e {
                    run.push((table[usize::from(b[k])], k as u32));
                    if !window_full(&mut run, SYMBOL_WINDOW, overlap, &mut f) {
                        go = false;
                        break 'segs;
                    }
                }
            }
            go && f(&run)
        } else {
            true
        };
        segs.clear();
        *total = 0;
        go
    };
    let end = range.end.min(b.len());
    let mut i = range.start;
    while i < end {
        let c = b[i];
        if table[usize::from(c)] != 0xFF {
            if case_split && c.is_ascii_alphabetic() {
                let up = c.is_ascii_uppercase();
                if upper.is_some_and(|u| u != up) {
                    if let Some(s) = seg_start.take() {
                        segs.push((s, i));
                        total += i - s;
                    }
                    if !flush(&mut segs, &mut total) {
                        return;
                    }
                }
                upper = Some(up);
            }
            seg_start.get_or_insert(i);
            i += 1;
            continue;
        }
        let line = match seg_start.take() {
            Some(s) => {
                segs.push((s, i));
                total += i - s;
                i - s
            }
            None => 0,
        };
        if let Some(j) = wrapped(b, i, line, |x| table[usize::from(x)] != 0xFF) {
            i = j;
            continue;
        }
        if !flush(&mut segs, &mut total) {
            return;
        }
        upper = None;
        i += 1;
    }
    if let Some(s) = seg_start {
        segs.push((s, end));
        total += end - s;
    }
    flush(&mut segs, &mut total);
}

pub(super) fn hexv(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// If `b[i]` ends a wrapped line of an encoded block (the line so far is long and the next
/// line continues in the same alphabet), returns where the next line starts.
fn wrapped(b: &[u8], i: usize, line: usize, in_alphabet: impl Fn(u8) -> bool) -> Option<usize> {
    if line < WRAP_MIN_LINE || !matches!(b[i], b'\n' | b'\r') {
        return None;
    }
    let mut j = i;
    if b[j] == b'\r' {
        j += 1;
    }
    if j < b.len() && b[j] == b'\n' {
        j += 1;
    }
    while j < b.len() && matches!(b[j], b' ' | b'\t') {
        j += 1;
    }
    (j < b.len() && in_alphabet(b[j])).then_some(j)
}

/// Unpacks `width`-bit symbols into bytes, each with the span of the symbols it came from.
fn unpack(run: &[(u8, u32)], width: u32, out: &mut Vec<(u8, u32, u32)>) {
    let mut acc: u32 = 0;
    let mut nbits = 0;
    let mut start: Option<u32> = None;
    for &(v, off) in run {
        let first = *start.get_or_insert(off);
        acc = (acc << width) | u32::from(v);
        nbits += width;
        if nbits >= 8 {
            nbits -= 8;
            out.push(((acc >> nbits) as u8, first, off + 1));
            acc &= (1 << nbits) - 1;
            start = (nbits > 0).then_some(off);
        }
    }
}

/// [`has_text_run`] on the bytes `run` decodes to, without materialising them.
fn printable_run_in(run: &[(u8, u32)], width: u32, min: usize) -> bool {
    let mut acc: u32 = 0;
    let mut nbits = 0;
    let mut len = 0;
    for (k, &(v, _)) in run.iter().enumerate() {
        // Give up once the symbols left cannot make up the missing bytes.
        if len + ((run.len() - k) * width as usize + nbits as usize) / 8 < min {
            return false;
        }
        acc = (acc << width) | u32::from(v);
        nbits += width;
        if nbits >= 8 {
            nbits -= 8;
            let b = (acc >> nbits) as u8;
            acc &= (1 << nbits) - 1;
            if (0x20..0x7F).contains(&b) || matches!(b, b'\t' | b'\n' | b'\r') {
                len += 1;
                if len >= min {
                    return true;
                }
            } else {
                len = 0;
            }
        }
    }
    false
}

/// Whether decoded bytes hold a run of printable ASCII at least `min` long (anything the
/// key could match). Rejects the junk that ordinary words decode to, before any allocation.
fn has_text_run(bytes: &[(u8, u32, u32)], min: usize) -> bool {
    let mut run = 0;
    for &(b, _, _) in bytes {
        if (0x20..0x7F).contains(&b) || matches!(b, b'\t' | b'\n' | b'\r') {
            run += 1;
            if run >= min {
                return true;
            }
        } else {
            run = 0;
        }
    }
    false
}

/// Turns decoded bytes into characters (UTF-8 where valid, U+FFFD otherwise).
pub(super) fn byte_units(bytes: &[(u8, u32, u32)], tag: u8) -> Vec<Unit> {
    let raw: Vec<u8> = bytes.iter().map(|b| b.0).collect();
    let mut out = Vec::with_capacity(raw.len());
    let mut pos = 0;
    for chunk in raw.utf8_chunks() {
        for (k, c) in chunk.valid().char_indices() {
            let a = pos + k;
            let z = a + c.len_utf8();
            out.push(Unit {
                c,
                start: bytes[a].1,
                end: bytes[z - 1].2,
                tag,
            });
        }
        pos += chunk.valid().len();
        let bad = chunk.invalid().len();
        if bad > 0 {
            out.push(Unit {
                c: '\u{FFFD}',
                start: bytes[pos].1,
                end: bytes[pos + bad - 1].2,
                tag,
            });
            pos += bad;
        }
    }
    out
}

/// Parses one hex group at `b[i]`: `\xHH`, `0xH..` or an even-length hex word standing
/// alone. Pushes its bytes and returns the index after it.
fn hex_group(b: &[u8], i: usize, out: &mut Vec<(u8, u32, u32)>) -> Option<usize> {
    let alone_before = i == 0 || !b[i - 1].is_ascii_alphanumeric();
    let alone_after = |j: usize| j == b.len() || !b[j].is_ascii_alphanumeric();
    if b[i] == b'\\' && i + 3 < b.len() && b[i + 1] == b'x' {
        let (h, l) = (hexv(b[i + 2])?, hexv(b[i + 3])?);
        out.push(((h << 4) | l, i as u32, (i + 4) as u32));
        return Some(i + 4);
    }
    if !alone_before {
        return None;
    }
    let prefixed = b[i] == b'0' && i + 2 < b.len() && matches!(b[i + 1], b'x' | b'X');
    let d0 = if prefixed { i + 2 } else { i };
    let mut j = d0;
    while j < b.len() && hexv(b[j]).is_some() {
        j += 1;
    }
    let len = j - d0;
    if len == 0 || !alone_after(j) || (!prefixed && (len < 2 || !len.is_multiple_of(2))) {
        return None;
    }
    let mut k = d0;
    if !len.is_multiple_of(2) {
        out.push((hexv(b[k])?, i as u32, (k + 1) as u32));
        k += 1;
    }
    while k < j {
        let start = if k == d0 { i } else { k };
        out.push((
            (hexv(b[k])? << 4) | hexv(b[k + 1])?,
            start as u32,
            (k + 2) as u32,
        ));
        k += 2;
    }
    Some(j)
}

/// After a decimal code ending at `j`, returns where the next code starts if only a short
/// separator stands between (`, `, ` `, `)+chr(`, `, char(`); never across another escape
/// syntax (`&#`, `%`, `\`), which its own stage decodes.
fn code_gap(b: &[u8], j: usize) -> Option<usize> {
    let mut k = j;
    let mut letters = [0u8; 4];
    let mut nl = 0;
    while k < b.len() && k - j <= 10 {
        let c = b[k];
        if c.is_ascii_digit() {
            let word = &letters[..nl];
            let ok = k > j
                && !b[k - 1].is_ascii_alphanumeric()
                && (word.is_empty() || word == b"chr" || word == b"char");
            return ok.then_some(k);
        }
        if c.is_ascii_alphabetic() {
            if nl == letters.len() {
                return None;
            }
            letters[nl] = c.to_ascii_lowercase();
            nl += 1;
        } else if matches!(c, b'&' | b'#' | b'%' | b'\\') || !c.is_ascii() {
            return None;
        }
        k += 1;
    }
    None
}
