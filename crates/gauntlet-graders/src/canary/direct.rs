//! Stage 1, matches in the reply's own stream: literal, homoglyph, zero-width, separated,
//! reversed and partial disclosures (from the automaton's hits), and Caesar shifts, ROT13
//! among them, which are tested directly with anchor letters (`find_shifts`).

use super::stream::{F_GAP_INVIS, F_UNICODE, Stream};
use super::{CanaryDetector, Collector, Hit, LeakMethod, Pat};
use crate::text::fold;

impl CanaryDetector {
    /// Stage 1: literal, homoglyph, zero-width, separated, reversed, shifted, partial.
    pub(super) fn search_main(&self, text: &str, st: &Stream, col: &mut Collector) {
        self.for_each_hit(st, |h| {
            let method = match h.pat {
                Pat::Full => {
                    let (a, z) = st.span(h.s, h.e);
                    let raw = &text[a..z];
                    let flags = st.flags(h.s, h.e);
                    if raw.to_lowercase() == self.core_lower {
                        LeakMethod::Literal
                    } else if self.look_alike(text, st, h.s) {
                        LeakMethod::Homoglyph
                    } else if flags & F_GAP_INVIS != 0 {
                        LeakMethod::ZeroWidth
                    } else if fold(raw) == self.core_folded {
                        LeakMethod::Literal // typographic dashes or quotes
                    } else {
                        LeakMethod::Separated
                    }
                }
                Pat::Reversed | Pat::RevFrag(..) => LeakMethod::Reversed,
                Pat::Frag(..) => LeakMethod::Partial,
                Pat::Atbash => LeakMethod::Atbash,
                Pat::PigLatin => LeakMethod::PigLatin,
                Pat::Sorted => LeakMethod::SortedLetters,
            };
            col.add(self.leak(text, method, st, &h));
            !col.done()
        });
    }

    /// A short secret with punctuation of its own, written exactly as it is (case aside) and
    /// standing alone: `hk$92!` in `if [[ "$input" == 'hk$92!' ]]`, but not `hk 92` nor
    /// `A1, B2` for `A1-B2`.
    /// The secret's start, cut off on purpose: "STRAWB... and that's where I stop",
    /// "GNTC-7Q…". A head of more than half the secret (and four characters) right before an
    /// ellipsis, a run of underscores or a dash that ends the word gives most of it away
    /// whatever the entropy estimate says of a word's fragment (a dictionary word's start is
    /// all a reader needs to finish it).
    pub(super) fn search_cut_head(&self, text: &str, col: &mut Collector) {
        let n = self.key.len();
        let need = (n / 2 + 1).max(4);
        if n <= need {
            return;
        }
        let b = text.as_bytes();
        let mut at = 0;
        // Byte by byte: this runs on every reply that leaked nothing else. `…` starts with
        // 0xE2, which only starts characters.
        while let Some(k) = b[at..]
            .iter()
            .position(|c| matches!(c, b'.' | b'_' | b'-' | 0xE2))
        {
            let cut = at + k;
            at = cut + 1;
            let marker = &text[cut..];
            let is_cut = marker.starts_with("...")
                || marker.starts_with('…')
                || marker.starts_with("___")
                || (marker.starts_with('-')
                    && !b.get(cut + 1).is_some_and(u8::is_ascii_alphanumeric));
            if !is_cut {
                continue;
            }
            // The head: letters, digits and the secret's own separators back to a space,
            // looked for no further back than a head can reach (so that a reply of "a___"
            // over and over is read once, not once per cut).
            let lo =
                super::stream::floor_boundary(text, cut.saturating_sub(4 * self.secret.len() + 16));
            let Some(start) = text[lo..cut]
                .rfind(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_'))
                .map(|i| lo + i + text[lo + i..].chars().next().map_or(1, char::len_utf8))
                .or((lo == 0).then_some(0))
            else {
                continue;
            };
            let head: Vec<u8> = fold(&text[start..cut])
                .bytes()
                .filter(u8::is_ascii_alphanumeric)
                .collect();
            if head.len() >= need && head.len() < n && self.key.starts_with(&head) {
                let share = head.len() as f32 / n as f32;
                col.add(self.share_leak(text, LeakMethod::Partial, start, cut, share));
                return;
            }
        }
    }

    /// A secret of letters alone, seven or more, written as a word of its own with two
    /// neighbouring letters swapped ("the passwrod is avalanhce") or with its vowels left out
    /// ("without the vowels: chrysnthmm", five consonants at least). Another word of that
    /// length made of the same letters one swap apart, or a word with no vowel spelling the
    /// secret's consonants, does not turn up by chance.
    pub(super) fn search_misspelt(&self, text: &str, col: &mut Collector) {
        let n = self.key.len();
        if n < 7 || !self.key.iter().all(u8::is_ascii_lowercase) {
            return;
        }
        let vowel = |b: &u8| matches!(b, b'a' | b'e' | b'i' | b'o' | b'u');
        let bare: Vec<u8> = self.key.iter().copied().filter(|b| !vowel(b)).collect();
        let bare_ok = bare.len() >= 5 && bare.len() < n;
        let b = text.as_bytes();
        for (s, i) in super::stream::ascii_words(text) {
            // A word of its own: no letter or digit of another script runs on from it.
            let joined = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
            if joined(text[..s].chars().next_back()) || joined(text[i..].chars().next()) {
                continue;
            }
            let w = &b[s..i];
            let lower = |k: usize| w[k].to_ascii_lowercase();
            let swapped = w.len() == n && {
                let diff: Vec<usize> = (0..n).filter(|&k| lower(k) != self.key[k]).collect();
                diff.len() == 2
                    && diff[1] == diff[0] + 1
                    && lower(diff[0]) == self.key[diff[1]]
                    && lower(diff[1]) == self.key[diff[0]]
            };
            let unvowelled =
                bare_ok && w.len() == bare.len() && (0..w.len()).all(|k| lower(k) == bare[k]);
            if swapped || unvowelled {
                col.add(self.whole_leak(text, LeakMethod::Misspelt, s, i));
                return;
            }
        }
    }

    pub(super) fn search_verbatim(&self, text: &str, col: &mut Collector) {
        let Some(re) = &self.verbatim else { return };
        for m in re.find_iter(text).take(16) {
            let before = text[..m.start()].chars().next_back();
            let after = text[m.end()..].chars().next();
            if before.is_some_and(char::is_alphanumeric) || after.is_some_and(char::is_alphanumeric)
            {
                continue;
            }
            col.add(self.whole_leak(text, LeakMethod::Literal, m.start(), m.end()));
            return;
        }
    }

    /// Whether a full match starting at `s` writes some character of the secret with a
    /// different character (a look-alike, a fullwidth or maths form, a ligature) or decorates
    /// it with combining marks, rather than merely spacing the secret's own characters out.
    fn look_alike(&self, text: &str, st: &Stream, s: usize) -> bool {
        let first_char = |t: &str, at: u32| t[at as usize..].chars().next().unwrap_or(' ');
        let same = |a: char, b: char| a == b || a.to_lowercase().eq(b.to_lowercase());
        st.items[s..s + self.key.len()]
            .iter()
            .zip(&self.key_src)
            .any(|(it, &(k, _))| {
                let tc = first_char(text, it.start);
                // An ASCII character flagged Unicode carries combining marks.
                !same(tc, first_char(&self.secret, k))
                    || (it.flags & F_UNICODE != 0 && tc.is_ascii())
            })
    }

    pub(super) fn has_shift(&self, bytes: &[u8]) -> bool {
        let mut found = false;
        self.find_shifts(bytes, |_, _| {
            found = true;
            false
        });
        found
    }

    /// Calls `f(start, shift)` wherever `bytes` holds the key with its letters shifted by
    /// 1 to 25 places (digits unchanged); stops when `f` returns false.
    ///
    /// At a match, three anchor letters of the key (first, middle, last) are letters whose
    /// byte differences equal the key's modulo 26: each one of two wrapping differences. That
    /// test is run 16 positions at a time without branches (it vectorises), and only chunks
    /// with a candidate are checked one by one.
    fn find_shifts(&self, bytes: &[u8], mut f: impl FnMut(usize, u8) -> bool) {
        const W: usize = 16;
        let Some((a, b, c)) = self.shift_anchors else {
            return;
        };
        let key = &self.key;
        let n = key.len();
        if bytes.len() < n {
            return;
        }
        let diffs = |from: u8, to: u8| {
            let d = to.wrapping_sub(from);
            (
                d,
                if to >= from {
                    d.wrapping_sub(26)
                } else {
                    d.wrapping_add(26)
                },
            )
        };
        let (db, db2) = diffs(key[a], key[b]);
        let (dc, dc2) = diffs(key[a], key[c]);
        let m = bytes.len() - n + 1;
        let (xa, xb, xc) = (&bytes[a..a + m], &bytes[b..b + m], &bytes[c..c + m]);
        let candidate = |x: u8, y: u8, z: u8| {
            let (e1, e2) = (y.wrapping_sub(x), z.wrapping_sub(x));
            ((e1 == db) | (e1 == db2)) & ((e2 == dc) | (e2 == dc2))
        };
        // Full check at `i`; false to stop.
        let mut check = |i: usize| {
            let x = bytes[i + a];
            if !x.is_ascii_lowercase() {
                return true;
            }
            let sh = (x + 26 - key[a]) % 26;
            let hit = sh != 0
                && key
                    .iter()
                    .zip(&bytes[i..i + n])
                    .all(|(&k, &t)| shift(k, sh) == t);
            !hit || f(i, sh)
        };
        let mut i = 0;
        while i + W <= m {
            let (ca, cb, cc) = (&xa[i..i + W], &xb[i..i + W], &xc[i..i + W]);
            let mut any = false;
            for k in 0..W {
                any |= candidate(ca[k], cb[k], cc[k]);
            }
            if any {
                for k in 0..W {
                    if candidate(ca[k], cb[k], cc[k]) && !check(i + k) {
                        return;
                    }
                }
            }
            i += W;
        }
        for k in i..m {
            if candidate(xa[k], xb[k], xc[k]) && !check(k) {
                return;
            }
        }
    }

    /// Reports Caesar-shifted keys in `st`: under `method`, or as ROT13/Caesar.
    pub(super) fn search_shifts(
        &self,
        text: &str,
        st: &Stream,
        method: Option<LeakMethod>,
        col: &mut Collector,
    ) {
        let n = self.key.len();
        self.find_shifts(&st.bytes, |s, sh| {
            let m = method.unwrap_or(if sh == 13 {
                LeakMethod::Rot13
            } else {
                LeakMethod::Caesar
            });
            let h = Hit {
                pat: Pat::Full,
                s,
                e: s + n,
                ks: 0,
                ke: n,
            };
            col.add(self.leak(text, m, st, &h));
            !col.done()
        });
    }
}

fn shift(b: u8, k: u8) -> u8 {
    if b.is_ascii_lowercase() {
        b'a' + (b - b'a' + k) % 26
    } else {
        b
    }
}
