//! Secret redaction: [`Redactor`] replaces API keys and tokens before anything is written.
//!
//! Every value read from an environment variable named as a secret (`api_key_env`, a
//! `${env:NAME}` header) is registered here; reports, traces, logs and error messages pass
//! through it. The percent-encoded form a transport might echo in a URL is covered too;
//! other encodings (Base64 of a basic-auth pair, for one) are not.
//!
//! Text that is cut to fit (an error body, a stderr line, a quote) goes through
//! [`Redactor::clip`], which redacts before it cuts: a secret that straddled the cut would
//! otherwise survive as its head, which no later redaction can recognise. Whatever head of a
//! secret still ends a cut text (the text reached us already cut, say) is redacted too.

use std::borrow::Cow;

/// Replaces known secrets with `[REDACTED:NAME]`.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<(String, String)>,
}

/// The shortest head of a secret that [`Redactor::clip`] redacts at the end of a cut text.
/// Shorter heads are left: three characters identify nothing, and redacting them would
/// mangle ordinary text that happens to end like a key starts (`sk-`).
pub const MIN_SECRET_HEAD: usize = 4;

impl Redactor {
    /// A redactor that knows no secrets.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a secret under a name (the environment variable it came from). Values
    /// shorter than 4 characters are ignored: redacting them would shred ordinary text.
    pub fn add(&mut self, name: &str, secret: &str) {
        if secret.len() < 4 || self.secrets.iter().any(|(s, _)| s == secret) {
            return;
        }
        let label = format!("[REDACTED:{name}]");
        let mut forms = vec![secret.to_owned()];
        let pct = crate::text::percent_encode(secret);
        if pct != secret {
            forms.push(pct);
        }
        for f in forms {
            self.secrets.push((f, label.clone()));
        }
        // Longest first, so a secret that contains another is replaced whole.
        self.secrets.sort_by_key(|s| std::cmp::Reverse(s.0.len()));
    }

    /// Whether any secret is registered.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// The length in bytes of the longest form of a registered secret (0 when none is): how
    /// much more than its limit a reader must keep so that a secret straddling the limit is
    /// still whole when it is redacted.
    pub fn longest(&self) -> usize {
        self.secrets.first().map_or(0, |(s, _)| s.len())
    }

    /// `text` made safe to show in at most `max` bytes: every secret redacted first, then
    /// cut on a character boundary (after a redaction label the limit falls inside), then any head of a
    /// secret ([`MIN_SECRET_HEAD`] characters or more) left at the end of the cut replaced
    /// by that secret's label. `already_cut` says that `text` is itself the start of a longer
    /// text (a reader stopped at its limit), so that its end is treated as a cut as well.
    ///
    /// Returns the text and whether it ends at a cut (the caller marks the cut its own way,
    /// `…` or `… (N bytes)`). The result may exceed `max` by a label's length, when a label
    /// was kept whole or a head had to be replaced.
    pub fn clip(&self, text: &str, max: usize, already_cut: bool) -> (String, bool) {
        let redacted = self.redact(text);
        let cut = redacted.len() > max;
        if !cut && !already_cut {
            return (redacted.into_owned(), false);
        }
        let mut end = if cut {
            redacted.floor_char_boundary(max)
        } else {
            redacted.len()
        };
        // A label the limit falls inside is kept whole: half a label reads as garbage, and
        // the whole one says that a secret was there.
        if cut {
            for (_, label) in &self.secrets {
                let from = redacted.floor_char_boundary(end.saturating_sub(label.len() - 1));
                if let Some(i) = redacted[from..].find(label.as_str()).map(|i| from + i)
                    && i < end
                    && i + label.len() > end
                {
                    end = i + label.len();
                }
            }
        }
        let mut out = redacted[..end].to_owned();
        self.redact_cut_end(&mut out);
        (out, true)
    }

    /// Replaces a head of a registered secret ([`MIN_SECRET_HEAD`] characters or more) that
    /// ends `text` with the secret's label: at the end of a cut, the rest of the secret was
    /// cut off, and its head must not survive. Only for the end of a cut text; anywhere
    /// else a key's first characters are ordinary text.
    pub fn redact_cut_end(&self, text: &mut String) {
        let mut best: Option<(usize, &str)> = None;
        for (secret, label) in &self.secrets {
            // The longest head first, so that the whole fragment goes.
            for (k, _) in secret.char_indices().rev() {
                if k == 0 {
                    break;
                }
                if secret[..k].chars().count() < MIN_SECRET_HEAD {
                    break;
                }
                if text.ends_with(&secret[..k]) {
                    if best.is_none_or(|(b, _)| k > b) {
                        best = Some((k, label));
                    }
                    break;
                }
            }
        }
        if let Some((k, label)) = best {
            let at = text.len() - k;
            text.truncate(at);
            text.push_str(label);
        }
    }

    /// The text with every registered secret replaced.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.secrets.is_empty() || !self.secrets.iter().any(|(s, _)| text.contains(s.as_str())) {
            return Cow::Borrowed(text);
        }
        let mut out = text.to_owned();
        for (s, label) in &self.secrets {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), label);
            }
        }
        Cow::Owned(out)
    }

    /// Redacts every string inside a JSON value, in place.
    pub fn redact_json(&self, v: &mut serde_json::Value) {
        if self.secrets.is_empty() {
            return;
        }
        match v {
            serde_json::Value::String(s) => {
                if let Cow::Owned(r) = self.redact(s) {
                    *s = r;
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| self.redact_json(x)),
            serde_json::Value::Object(o) => o.values_mut().for_each(|x| self.redact_json(x)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_plain_and_percent_encoded_forms() {
        let mut r = Redactor::new();
        r.add("OPENAI_API_KEY", "sk-test/abc+123");
        assert_eq!(
            r.redact("auth: Bearer sk-test/abc+123"),
            "auth: Bearer [REDACTED:OPENAI_API_KEY]"
        );
        assert_eq!(
            r.redact("url?key=sk-test%2Fabc%2B123"),
            "url?key=[REDACTED:OPENAI_API_KEY]"
        );
        assert!(matches!(r.redact("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn clip_redacts_before_it_cuts() {
        let mut r = Redactor::new();
        r.add("KEY", "sk-0123456789abcdef");
        let text = format!("{}sk-0123456789abcdef tail", "x".repeat(10));
        // The limit falls inside the key: the key is redacted whole, and its label is kept
        // whole rather than cut through.
        assert_eq!(
            r.clip(&text, 15, false),
            ("xxxxxxxxxx[REDACTED:KEY]".into(), true)
        );
        assert_eq!(
            r.clip(&text, 100, false),
            ("xxxxxxxxxx[REDACTED:KEY] tail".into(), false)
        );
        assert_eq!(
            r.clip(&text, 24, false),
            ("xxxxxxxxxx[REDACTED:KEY]".into(), true)
        );
    }

    #[test]
    fn the_head_of_a_secret_at_a_cut_is_redacted() {
        let mut r = Redactor::new();
        r.add("KEY", "sk-0123456789abcdef");
        // The text came already cut, inside the key.
        assert_eq!(
            r.clip("error: sk-01234", 100, true),
            ("error: [REDACTED:KEY]".into(), true)
        );
        // Three characters are not a head worth redacting; four are.
        assert_eq!(r.clip("a sk-", 100, true).0, "a sk-");
        assert_eq!(r.clip("a sk-0", 100, true).0, "a [REDACTED:KEY]");
        // A text that was not cut keeps its end.
        assert_eq!(r.clip("a sk-0123", 100, false).0, "a sk-0123");
        // Percent-encoded heads too.
        let mut r = Redactor::new();
        r.add("KEY", "sk/0123456789");
        assert_eq!(r.clip("url?k=sk%2F01", 100, true).0, "url?k=[REDACTED:KEY]");
    }

    #[test]
    fn ignores_tiny_values() {
        let mut r = Redactor::new();
        r.add("X", "ab");
        assert!(r.is_empty());
    }

    #[test]
    fn redacts_json_strings() {
        let mut r = Redactor::new();
        r.add("K", "secret-value");
        let mut v = serde_json::json!({"a": ["x secret-value y"], "b": 1});
        r.redact_json(&mut v);
        assert_eq!(v, serde_json::json!({"a": ["x [REDACTED:K] y"], "b": 1}));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Whether any 8 consecutive characters of `key` occur in `out`.
        fn shows_part_of(out: &str, key: &str) -> bool {
            let k: Vec<char> = key.chars().collect();
            k.windows(8)
                .any(|w| out.contains(&w.iter().collect::<String>()))
        }

        proptest! {
            #![proptest_config(ProptestConfig {
                failure_persistence: None,
                ..ProptestConfig::default()
            })]

            /// A key at every offset around the limit, in text cut at the limit or given
            /// already cut there, never survives, not even 8 of its characters in a row.
            #[test]
            fn no_part_of_a_key_survives_a_cut(
                key in "[A-Za-z0-9_-]{12,48}",
                filler in "[ a-z.,é\n]{0,80}",
                max in 8usize..120,
                shift in 0usize..200,
            ) {
                let key = format!("sk-{key}");
                let mut r = Redactor::new();
                r.add("KEY", &key);
                // The key starts anywhere from well before the limit to just after it.
                let start = (max + key.len()).saturating_sub(shift);
                let mut text: String = filler.chars().cycle().take(start).collect();
                if filler.is_empty() {
                    text = "x".repeat(start);
                }
                text.push_str(&key);
                text.push_str(" and more text after the key");
                let (out, _) = r.clip(&text, max, false);
                prop_assert!(!shows_part_of(&out, &key), "{out:?}");
                // The same text as a reader that stopped inside the key would hand it over.
                for stop in [start + 4, start + key.len() / 2, start + key.len() - 1] {
                    let at = text.floor_char_boundary(stop);
                    let (out, cut) = r.clip(&text[..at], max, true);
                    prop_assert!(cut);
                    prop_assert!(!shows_part_of(&out, &key), "{out:?}");
                }
            }
        }
    }
}
