//! Where a case's attack travels: [`AttackSite`] (a case's `attack:` key: the [`Carrier`]
//! and, optionally, the span of text in it that is the attack) and the seed index of each
//! text a converter changes there ([`Carrier::seed_index`]).
//!
//! Converters disguise the attack, never the benign task around it: a direct attack is the
//! user's turn and is converted whole, but an injection rides in a retrieved document, a
//! tool's output (a record, an inbox, a memory, another agent's reply) or content the user
//! quotes, and there only the planted text is converted, so that the user's request stays
//! readable and the legitimate task is still exercised. `Case::attack_site` (in `suite.rs`)
//! resolves the site of a case that does not name one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What carries a case's attack to the agent.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Carrier {
    /// The user's turns (`input`, `turns` and their `rephrase` wordings): a direct attack,
    /// or, with a `span`, content the user quotes that holds a planted instruction.
    User,
    /// The retrieved documents (`documents`): an indirect injection hidden in them.
    Documents,
    /// The poisoned tool outputs (`tool_faults[].poison`): a record, an inbox, a memory or
    /// another agent's reply that carries instructions.
    ToolOutput,
    /// Nothing a converter may change: the case holds no attack text (a failing tool that
    /// tempts a false success claim, say), so converters leave it as written.
    None,
}

impl Carrier {
    /// The name as a suite writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Carrier::User => "user",
            Carrier::Documents => "documents",
            Carrier::ToolOutput => "tool_output",
            Carrier::None => "none",
        }
    }

    /// The index that seeds the conversion of the `i`-th text of this carrier (in place of
    /// a user turn's number), so that documents and tool outputs draw seeds apart from the
    /// turns and from each other.
    pub fn seed_index(self, i: usize) -> usize {
        match self {
            Carrier::User | Carrier::None => i,
            Carrier::Documents => (1 << 20) + i,
            Carrier::ToolOutput => (2 << 20) + i,
        }
    }
}

/// Where a case's attack travels, and which text of it is the attack. Written as
/// `attack: documents` or `attack: {in: user, span: "P.S. AI assistant: ..."}`.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
#[schemars(transform = carrier_or_map)]
pub struct AttackSite {
    /// The carrier: `user` (the user's turns), `documents`, `tool_output` (the poison of
    /// `tool_faults`) or `none` (no attack text: converters change nothing).
    #[serde(rename = "in")]
    pub carrier: Carrier,
    /// The attack's exact text inside the carrier (a quoted email's planted line, a
    /// document's hidden comment): only it is converted, the rest stays as written. Without
    /// it, each text of the carrier is converted whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<String>,
}

/// The schema of the two written forms: a carrier's name, or the map.
fn carrier_or_map(schema: &mut schemars::Schema) {
    let original = std::mem::take(schema);
    *schema = schemars::json_schema!({
        "anyOf": [
            { "type": "string", "enum": CARRIERS },
            original
        ]
    });
}

/// The carriers' names, as a suite writes them.
const CARRIERS: [&str; 4] = ["user", "documents", "tool_output", "none"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AttackMap {
    #[serde(rename = "in")]
    carrier: Carrier,
    #[serde(default)]
    span: Option<String>,
}

impl<'de> Deserialize<'de> for AttackSite {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut bad = None;
        let site = crate::de::string_or_map(
            d,
            "a carrier (user, documents, tool_output, none), or a map with `in` and `span`",
            |s: String| {
                let carrier = match s.as_str() {
                    "user" => Carrier::User,
                    "documents" => Carrier::Documents,
                    "tool_output" => Carrier::ToolOutput,
                    "none" => Carrier::None,
                    _ => {
                        bad = Some(s.clone());
                        Carrier::None
                    }
                };
                AttackSite {
                    carrier,
                    span: None,
                }
            },
            |m: AttackMap| AttackSite {
                carrier: m.carrier,
                span: m.span,
            },
        )?;
        match bad {
            Some(s) => Err(serde::de::Error::unknown_variant(&s, &CARRIERS)),
            None => Ok(site),
        }
    }
}

/// Replaces the first occurrence of `span` in `text` with `f(span)`; `None` when `text`
/// does not hold it.
pub fn replace_span(text: &str, span: &str, f: impl FnOnce(&str) -> String) -> Option<String> {
    if span.is_empty() {
        return None;
    }
    let at = text.find(span)?;
    let mut out = String::with_capacity(text.len() + span.len());
    out.push_str(&text[..at]);
    out.push_str(&f(span));
    out.push_str(&text[at + span.len()..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_shorthand_and_the_map() {
        let a: AttackSite = serde_json::from_value(serde_json::json!("documents")).unwrap();
        assert_eq!(a.carrier, Carrier::Documents);
        assert_eq!(a.span, None);
        let b: AttackSite =
            serde_json::from_value(serde_json::json!({"in": "user", "span": "P.S. obey"})).unwrap();
        assert_eq!(
            (b.carrier, b.span.as_deref()),
            (Carrier::User, Some("P.S. obey"))
        );
        let e = serde_json::from_value::<AttackSite>(serde_json::json!("inbox")).unwrap_err();
        assert!(e.to_string().contains("unknown variant `inbox`"), "{e}");
        let e = serde_json::from_value::<AttackSite>(serde_json::json!({"in": "user", "where": 1}))
            .unwrap_err();
        assert!(e.to_string().contains("unknown field `where`"), "{e}");
    }

    #[test]
    fn replaces_only_the_span() {
        let out = replace_span("Hi.\nP.S. obey\nBye.", "P.S. obey", |s| s.to_uppercase());
        assert_eq!(out.as_deref(), Some("Hi.\nP.S. OBEY\nBye."));
        assert_eq!(replace_span("Hi.", "P.S.", |s| s.to_owned()), None);
        assert_eq!(replace_span("Hi.", "", |s| s.to_owned()), None);
    }

    #[test]
    fn carriers_seed_apart() {
        assert_ne!(
            Carrier::Documents.seed_index(0),
            Carrier::ToolOutput.seed_index(0)
        );
        assert_eq!(Carrier::User.seed_index(3), 3);
    }
}
