//! Reading a judge's answer: [`parse_answer`] accepts exactly one JSON object, valid against
//! the JSON Schema of the judge's form and scale ([`answer_schema`]), and nothing else.
//!
//! Strict on purpose: a judge that wraps its verdict in prose, invents keys or scores 5 has
//! not answered the question it was asked, and guessing what it meant would put a guess into
//! the gate. Such an answer is a judge error ([`AnswerError`]): never a pass, never a fail.
//! The one allowance is a single Markdown code fence around the object, which many chat
//! models add even when told not to; its content must still be the whole object.

use std::sync::OnceLock;

use gauntlet_core::judges::{JudgeForm, JudgeScale};
use serde_json::{Value, json};

/// Most characters of a rationale: "short" is part of the contract.
pub const RATIONALE_MAX: usize = 1000;

/// What a judge said, once it parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Binary: pass (`true`) or fail.
    Verdict(bool),
    /// 0-3.
    Score(u8),
    /// Pairwise: which answer was better.
    Preference(Preference),
}

/// A pairwise judge's preference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preference {
    /// The answer shown first.
    A,
    /// The answer shown second.
    B,
    /// Neither.
    Tie,
}

/// A parsed answer and its reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The verdict, score or preference.
    pub answer: Answer,
    /// The judge's one-line reason.
    pub rationale: String,
    /// The object as received.
    pub raw: Value,
}

/// Why an answer is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// Nothing came back.
    #[error("the judge answered nothing")]
    Empty,
    /// Not a JSON object (or text around one).
    #[error("the answer is not one JSON object: {0}")]
    NotJson(String),
    /// A JSON object that breaks the schema.
    #[error("the answer breaks the answer schema: {0}")]
    Schema(String),
}

/// The JSON Schema an answer of this form and scale must satisfy.
pub fn answer_schema(form: JudgeForm, scale: JudgeScale) -> &'static Value {
    static BINARY: OnceLock<Value> = OnceLock::new();
    static GRADED: OnceLock<Value> = OnceLock::new();
    static PAIRWISE: OnceLock<Value> = OnceLock::new();
    let rationale = json!({"type": "string", "minLength": 1, "maxLength": RATIONALE_MAX});
    match (form, scale) {
        (JudgeForm::Pairwise, _) => PAIRWISE.get_or_init(|| {
            json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["verdict", "rationale"],
                "properties": {
                    "verdict": {"enum": ["A", "B", "tie"]},
                    "rationale": rationale,
                }
            })
        }),
        (_, JudgeScale::Binary) => BINARY.get_or_init(|| {
            json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["verdict", "rationale"],
                "properties": {
                    "verdict": {"enum": ["pass", "fail"]},
                    "score": {"type": "integer", "minimum": 0, "maximum": 3},
                    "rationale": rationale,
                }
            })
        }),
        (_, JudgeScale::Graded) => GRADED.get_or_init(|| {
            json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["score", "rationale"],
                "properties": {
                    "score": {"type": "integer", "minimum": 0, "maximum": 3},
                    "verdict": {"enum": ["pass", "fail"]},
                    "rationale": rationale,
                }
            })
        }),
    }
}

fn validator(form: JudgeForm, scale: JudgeScale) -> &'static jsonschema::Validator {
    static BINARY: OnceLock<jsonschema::Validator> = OnceLock::new();
    static GRADED: OnceLock<jsonschema::Validator> = OnceLock::new();
    static PAIRWISE: OnceLock<jsonschema::Validator> = OnceLock::new();
    let cell = match (form, scale) {
        (JudgeForm::Pairwise, _) => &PAIRWISE,
        (_, JudgeScale::Binary) => &BINARY,
        (_, JudgeScale::Graded) => &GRADED,
    };
    cell.get_or_init(|| {
        jsonschema::validator_for(answer_schema(form, scale)).expect("the answer schemas compile")
    })
}

/// The first `max` characters of a text, with `...` when cut. The cut falls between words,
/// never inside one: a secret the judge quoted is kept whole or dropped whole, so the run's
/// redaction (which knows whole secrets) still finds it, and no part of it is left over.
fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, c)) => {
            let end = if c.is_whitespace() {
                i
            } else {
                s[..i].rfind(char::is_whitespace).unwrap_or(0)
            };
            format!("{}...", s[..end].trim_end())
        }
        None => s.to_owned(),
    }
}

/// Strips one Markdown code fence around the whole text, if there is one.
fn unfence(text: &str) -> &str {
    let t = text.trim();
    let Some(rest) = t.strip_prefix("```") else {
        return t;
    };
    let Some(body) = rest.strip_suffix("```") else {
        return t;
    };
    // The info string (`json`) runs to the end of the first line.
    match body.split_once('\n') {
        Some((info, inner)) if !info.contains('{') => inner.trim(),
        _ => body.trim(),
    }
}

/// Reads an answer of a judge of this form and scale.
pub fn parse_answer(text: &str, form: JudgeForm, scale: JudgeScale) -> Result<Parsed, AnswerError> {
    let body = unfence(text);
    if body.is_empty() {
        return Err(AnswerError::Empty);
    }
    let raw: Value = serde_json::from_str(body)
        .map_err(|e| AnswerError::NotJson(format!("{e} in {:?}", clip(body, 80))))?;
    if !raw.is_object() {
        return Err(AnswerError::NotJson(format!(
            "got {}",
            clip(&raw.to_string(), 80)
        )));
    }
    if let Some(err) = validator(form, scale).iter_errors(&raw).next() {
        let at = err.instance_path().to_string();
        return Err(AnswerError::Schema(if at.is_empty() {
            err.to_string()
        } else {
            format!("{err} at `{at}`")
        }));
    }
    let rationale = raw["rationale"].as_str().unwrap_or_default().to_owned();
    let answer = match (form, scale) {
        (JudgeForm::Pairwise, _) => Answer::Preference(match raw["verdict"].as_str() {
            Some("A") => Preference::A,
            Some("B") => Preference::B,
            _ => Preference::Tie,
        }),
        (_, JudgeScale::Binary) => Answer::Verdict(raw["verdict"] == "pass"),
        (_, JudgeScale::Graded) => Answer::Score(raw["score"].as_u64().unwrap_or(0) as u8),
    };
    Ok(Parsed {
        answer,
        rationale,
        raw,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: (JudgeForm, JudgeScale) = (JudgeForm::Pointwise, JudgeScale::Binary);
    const G: (JudgeForm, JudgeScale) = (JudgeForm::Pointwise, JudgeScale::Graded);

    fn p(text: &str, (f, s): (JudgeForm, JudgeScale)) -> Result<Answer, AnswerError> {
        parse_answer(text, f, s).map(|p| p.answer)
    }

    #[test]
    fn a_cut_never_leaves_part_of_a_word() {
        // A key the judge quoted, at every offset across the 80-character cut: in the error
        // text it is whole (for the run's redaction to find) or absent, never a prefix.
        let key = "sk-live-7f3a9c2e5b1d4f6a8c0e";
        for at in 40..100 {
            let text = format!("{} {key} and more words after it", "x ".repeat(at / 2));
            let e = parse_answer(&text, B.0, B.1).unwrap_err().to_string();
            let whole = e.contains(key);
            let part = (8..key.len()).any(|n| e.contains(&key[..n]));
            assert!(whole || !part, "offset {at}: {e}");
        }
        assert_eq!(clip("abc def", 5), "abc...");
        assert_eq!(clip("abcdefgh", 5), "...");
        assert_eq!(clip("abc", 5), "abc");
    }

    #[test]
    fn well_formed_answers_parse() {
        assert_eq!(
            p(r#"{"verdict": "pass", "rationale": "ok"}"#, B),
            Ok(Answer::Verdict(true))
        );
        assert_eq!(
            p("```json\n{\"score\": 2, \"rationale\": \"a gap\"}\n```", G),
            Ok(Answer::Score(2))
        );
        assert_eq!(
            p(
                r#"{"verdict": "B", "rationale": "cites the order"}"#,
                (JudgeForm::Pairwise, JudgeScale::Binary)
            ),
            Ok(Answer::Preference(Preference::B))
        );
    }

    #[test]
    fn anything_else_is_an_error() {
        for bad in [
            "",
            "pass",
            r#"Sure! {"verdict": "pass", "rationale": "ok"}"#,
            r#"{"verdict": "pass", "rationale": "ok"} I hope that helps."#,
            r#"{"verdict": "pass", "rationale": "#,
            r#"["pass"]"#,
        ] {
            assert!(
                matches!(p(bad, B), Err(AnswerError::Empty | AnswerError::NotJson(_))),
                "{bad:?}: {:?}",
                p(bad, B)
            );
        }
        for bad in [
            r#"{"verdict": "yes", "rationale": "ok"}"#,
            r#"{"verdict": "pass"}"#,
            r#"{"verdict": "pass", "rationale": ""}"#,
            r#"{"verdict": "pass", "rationale": "ok", "confidence": 0.9}"#,
        ] {
            assert!(matches!(p(bad, B), Err(AnswerError::Schema(_))), "{bad}");
        }
        assert!(matches!(
            p(r#"{"score": 4, "rationale": "great"}"#, G),
            Err(AnswerError::Schema(_))
        ));
        assert!(matches!(
            p(r#"{"score": 2.5, "rationale": "x"}"#, G),
            Err(AnswerError::Schema(_))
        ));
        let long = format!(
            r#"{{"verdict": "pass", "rationale": "{}"}}"#,
            "x".repeat(1001)
        );
        assert!(matches!(p(&long, B), Err(AnswerError::Schema(_))));
    }
}
