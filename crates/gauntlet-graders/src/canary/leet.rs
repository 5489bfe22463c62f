//! Stage 2, leetspeak: the key and the stream compared under [`leet`], which merges the
//! characters leetspeak swaps (`0/o`, `1/i/l`, `3/e`, ...).

use super::stream::Stream;
use super::{CanaryDetector, Collector, Hit, LeakMethod, Pat};

impl CanaryDetector {
    /// Whether a leetspeak form of the key may be in the quick stream of a reply.
    pub(super) fn leet_maybe(&self, bytes: &[u8]) -> bool {
        let mut found = false;
        self.find_leet(bytes, |_| {
            found = true;
            false
        });
        found
    }

    /// Calls `f(start)` wherever `bytes` equals the key under the [`leet`] mapping but not
    /// plainly; stops when `f` returns false. The key's first and last characters anchor a
    /// cheap test before the full comparison.
    fn find_leet(&self, bytes: &[u8], mut f: impl FnMut(usize) -> bool) {
        let lk = &self.leet_key;
        let n = lk.len();
        if n == 0 || bytes.len() < n {
            return;
        }
        let (l0, l1) = (lk[0], lk[n - 1]);
        let m = bytes.len() - n + 1;
        let (xs, ys) = (&bytes[..m], &bytes[n - 1..n - 1 + m]);
        for i in 0..m {
            if LEET[usize::from(xs[i])] != l0 || LEET[usize::from(ys[i])] != l1 {
                continue;
            }
            let window = &bytes[i..i + n];
            if window
                .iter()
                .zip(lk)
                .all(|(&b, &l)| LEET[usize::from(b)] == l)
                && window != &self.key[..]
                && !f(i)
            {
                return;
            }
        }
    }

    /// Stage 2: leetspeak, look-alike digits and letters merged on both sides.
    pub(super) fn search_leet(&self, text: &str, st: &Stream, col: &mut Collector) {
        let n = self.key.len();
        self.find_leet(&st.bytes, |s| {
            let h = Hit {
                pat: Pat::Full,
                s,
                e: s + n,
                ks: 0,
                ke: n,
            };
            col.add(self.leak(text, LeakMethod::Leetspeak, st, &h));
            false
        });
    }
}

/// [`leet`] as a table.
static LEET: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = leet(i as u8);
        i += 1;
    }
    t
};

/// Merges characters that leetspeak swaps (applied to key and stream alike).
pub(super) const fn leet(b: u8) -> u8 {
    match b {
        b'0' => b'o',
        b'1' | b'i' => b'l',
        b'2' => b'z',
        b'3' => b'e',
        b'4' => b'a',
        b'5' => b's',
        b'6' | b'9' => b'g',
        b'7' => b't',
        b'8' => b'b',
        other => other,
    }
}
