//! Code regions: fenced blocks and inline code spans ([`code_regions`]), whose markup a
//! markdown renderer shows as text, and the segments of text outside them.

use std::collections::HashMap;

/// Byte ranges of fenced code blocks and inline code spans, sorted and disjoint.
pub(super) fn code_regions(text: &str) -> Vec<(usize, usize)> {
    if !text.contains('`') && !text.contains("~~~") {
        return Vec::new();
    }
    let fences = fenced_blocks(text);
    let mut regions = Vec::new();
    let mut prev = 0;
    for &(a, b) in &fences {
        code_spans(text, prev, a, &mut regions);
        regions.push((a, b));
        prev = b;
    }
    code_spans(text, prev, text.len(), &mut regions);
    regions
}

/// Fenced code blocks: a line of 3+ backticks or tildes (after any indentation, block quote
/// markers and list markers) up to a closing line of the same character at least as long, or
/// to the end of the text.
fn fenced_blocks(text: &str) -> Vec<(usize, usize)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, u8, usize)> = None;
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        let line_start = pos;
        pos += line.len();
        let body = strip_containers(line, open.is_none());
        let run_char = body.as_bytes().first().copied();
        let run = |c: u8| body.bytes().take_while(|&b| b == c).count();
        match open {
            None => {
                if let Some(c @ (b'`' | b'~')) = run_char {
                    let n = run(c);
                    if n >= 3 && !(c == b'`' && body[n..].contains('`')) {
                        open = Some((line_start, c, n));
                    }
                }
            }
            Some((start, c, n)) => {
                if run_char == Some(c) {
                    let m = run(c);
                    if m >= n && body[m..].trim().is_empty() {
                        blocks.push((start, pos));
                        open = None;
                    }
                }
            }
        }
    }
    if let Some((start, _, _)) = open {
        blocks.push((start, text.len()));
    }
    blocks
}

/// Strips indentation and block-quote markers (and, for an opening fence, list markers).
fn strip_containers(line: &str, list_markers: bool) -> &str {
    let mut s = line;
    loop {
        let t = s.trim_start_matches([' ', '\t']);
        if let Some(r) = t.strip_prefix('>') {
            s = r;
            continue;
        }
        if list_markers {
            if let Some(r) = t
                .strip_prefix(['-', '*', '+'])
                .filter(|r| r.starts_with([' ', '\t']))
            {
                s = r;
                continue;
            }
            let digits = t.bytes().take_while(u8::is_ascii_digit).count();
            if (1..=9).contains(&digits)
                && let Some(r) = t[digits..]
                    .strip_prefix(['.', ')'])
                    .filter(|r| r.starts_with([' ', '\t']))
            {
                s = r;
                continue;
            }
        }
        return t;
    }
}

/// CommonMark code spans in `text[from..to]`: a backtick run closed by the next run of the
/// same length in the same paragraph. An opening run preceded by a backslash loses its first
/// backtick.
fn code_spans(text: &str, from: usize, to: usize, regions: &mut Vec<(usize, usize)>) {
    let b = &text.as_bytes()[..to];
    let Some(first) = b[from..].iter().position(|&c| c == b'`') else {
        return;
    };
    // (start, len, escaped, paragraph)
    let mut runs: Vec<(usize, usize, bool, usize)> = Vec::new();
    let mut para = 0;
    let mut i = from + first;
    let mut line_blank = false;
    // Count paragraphs only from the first backtick on; earlier blank lines do not matter.
    while i < to {
        match b[i] {
            b'`' => {
                let s = i;
                while i < to && b[i] == b'`' {
                    i += 1;
                }
                let backslashes = b[..s].iter().rev().take_while(|&&c| c == b'\\').count();
                runs.push((s, i - s, backslashes % 2 == 1, para));
                line_blank = false;
                continue;
            }
            b'\n' => {
                if line_blank {
                    para += 1;
                }
                line_blank = true;
            }
            b' ' | b'\t' | b'\r' => {}
            _ => line_blank = false,
        }
        i += 1;
    }
    let mut by_len: HashMap<usize, Vec<usize>> = HashMap::new();
    for (k, r) in runs.iter().enumerate() {
        by_len.entry(r.1).or_default().push(k);
    }
    let mut k = 0;
    while k < runs.len() {
        let (s, len, escaped, p) = runs[k];
        let (open_start, open_len) = if escaped { (s + 1, len - 1) } else { (s, len) };
        if open_len > 0
            && let Some(list) = by_len.get(&open_len)
        {
            let idx = list.partition_point(|&x| x <= k);
            if let Some(&m) = list.get(idx)
                && runs[m].3 == p
            {
                regions.push((open_start, runs[m].0 + runs[m].1));
                k = m + 1;
                continue;
            }
        }
        k += 1;
    }
}

pub(super) fn in_regions(regions: &[(usize, usize)], pos: usize) -> bool {
    let i = regions.partition_point(|&(_, e)| e <= pos);
    regions.get(i).is_some_and(|&(s, _)| s <= pos)
}

/// The whole text as consecutive ranges split at code-region boundaries.
pub(super) fn segments(len: usize, code: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(code.len() * 2 + 1);
    let mut prev = 0;
    for &(a, b) in code {
        if a > prev {
            out.push((prev, a));
        }
        out.push((a, b));
        prev = b;
    }
    if prev < len {
        out.push((prev, len));
    }
    out
}
