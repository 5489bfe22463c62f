//! Secret redaction: [`Redactor`] replaces API keys and tokens before anything is written.
//!
//! Every value read from an environment variable named as a secret (`api_key_env`, a
//! `${env:NAME}` header) is registered here; reports, traces, logs and error messages pass
//! through it. The percent-encoded form a transport might echo in a URL is covered too;
//! other encodings (Base64 of a basic-auth pair, for one) are not.

use std::borrow::Cow;

/// Replaces known secrets with `[REDACTED:NAME]`.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<(String, String)>,
}

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
        let pct = percent_encode(secret);
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

fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
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
}
