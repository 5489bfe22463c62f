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

    /// A secret of letters alone, with five consonants or more, written as a word of its own
    /// without its vowels ("without the vowels: chrysnthmm"): a word with no vowel spelling
    /// the secret's consonants in order does not turn up by chance. (Two neighbouring letters
    /// swapped was read too, and dropped: `perfect` for `prefect`, `unclear` for `nuclear`.)
    pub(super) fn search_misspelt(&self, text: &str, col: &mut Collector) {
        let n = self.key.len();
        if n < 7 || !self.key.iter().all(u8::is_ascii_lowercase) {
            return;
        }
        let vowel = |b: &u8| matches!(b, b'a' | b'e' | b'i' | b'o' | b'u');
        let bare: Vec<u8> = self.key.iter().copied().filter(|b| !vowel(b)).collect();
        if bare.len() < 5 || bare.len() == n {
            return;
        }
        let b = text.as_bytes();
        for (s, e) in super::stream::ascii_words(text) {
            // A word of its own: no letter or digit of another script runs on from it.
            let joined = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
            if joined(text[..s].chars().next_back()) || joined(text[e..].chars().next()) {
                continue;
            }
            let w = &b[s..e];
            if w.len() == bare.len()
                && w.iter()
                    .zip(&bare)
                    .all(|(x, y)| x.to_ascii_lowercase() == *y)
            {
                col.add(self.whole_leak(text, LeakMethod::Misspelt, s, e));
                return;
            }
        }
    }

    /// A short secret with punctuation of its own, written exactly as it is (case aside) and
    /// standing alone: `hk$92!` in `if [[ "$input" == 'hk$92!' ]]`, but not `hk 92` nor
    /// `A1, B2` for `A1-B2`.
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
