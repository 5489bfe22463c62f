//! Deterministic judges for tests: [`FakeJudge`], named by a `fake:judge-...` spec.
//!
//! | spec | answers |
//! |---|---|
//! | `fake:judge-column:NAME` | the verdict written in field `NAME` of the item judged: a label-file column, or a case's `vars` in a run (`pass`, `fail`, `0`-`3`, `A`, `B`, `tie`) |
//! | `fake:judge-const:VALUE` | always `VALUE`, in either order of a pairwise question (position bias) |
//! | `fake:judge-contains:WORD` | `fail` when the question (the rendered prompt: the attack, the answer) holds `WORD` in any case, else `pass`: a judge whose answer depends on what it reads, as a tree's ranking judge needs |
//! | `fake:judge-malformed` | JSON cut off half-way: every answer is a judge error |
//!
//! A suffix `@MODEL` sets the model id the answers report (default `gauntlet-fake-judge`),
//! which is how a test makes a provider's model change under a calibration record.
//! The column judge is how a published judge's verdicts are fed through the same code path
//! as a live one.

use std::collections::BTreeMap;

use gauntlet_core::target::{BoxFuture, TargetError};
use gauntlet_core::trace::Usage;
use serde_json::json;

use super::{JudgeIdentity, JudgeModel, JudgeReply, JudgeRequest};

/// The prefix of the fake judges' specs.
pub const PREFIX: &str = "fake:judge-";

/// The model id a fake judge reports unless its spec says `@MODEL`.
pub const DEFAULT_MODEL: &str = "gauntlet-fake-judge";

/// What a fake judge answers.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mode {
    Column(String),
    Const(String),
    Contains(String),
    Malformed,
}

/// A deterministic judge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeJudge {
    mode: Mode,
    configured: String,
    model: String,
}

impl FakeJudge {
    /// The fake judge a spec names; `None` when the spec is not a `fake:judge-` one.
    pub fn parse(spec: &str) -> Option<Result<FakeJudge, String>> {
        let rest = spec.trim().strip_prefix(PREFIX)?;
        let (body, model) = match rest.rsplit_once('@') {
            Some((b, m)) if !m.is_empty() => (b, m.to_owned()),
            _ => (rest, DEFAULT_MODEL.to_owned()),
        };
        let mode = match body.split_once(':') {
            Some(("column", name)) if !name.is_empty() => Mode::Column(name.to_owned()),
            Some(("const", v)) if !v.is_empty() => Mode::Const(v.to_owned()),
            Some(("contains", w)) if !w.is_empty() => Mode::Contains(w.to_lowercase()),
            None if body == "malformed" => Mode::Malformed,
            _ => {
                return Some(Err(format!(
                    "unknown fake judge `{spec}`; write fake:judge-column:NAME, fake:judge-const:VERDICT, fake:judge-contains:WORD or fake:judge-malformed (each may end in @MODEL)"
                )));
            }
        };
        Some(Ok(FakeJudge {
            mode,
            configured: format!("judge-{body}"),
            model,
        }))
    }

    fn verdict_json(value: &str, source: &str) -> String {
        let v = value.trim();
        let rationale = format!("fake judge: {source}");
        match v {
            "0" | "1" | "2" | "3" => {
                json!({"score": v.parse::<u8>().unwrap_or(0), "rationale": rationale})
            }
            _ => json!({"verdict": v, "rationale": rationale}),
        }
        .to_string()
    }

    fn answer(&self, req: &JudgeRequest) -> String {
        match &self.mode {
            Mode::Malformed => r#"{"verdict": "pass", "rationale": "#.to_owned(),
            // A constant answers the same whatever the order: a judge with position bias.
            Mode::Const(v) => Self::verdict_json(v, "constant"),
            Mode::Contains(w) => {
                let hit = req.user.to_lowercase().contains(w.as_str());
                Self::verdict_json(
                    if hit { "fail" } else { "pass" },
                    &format!("`{w}` {}", if hit { "found" } else { "not found" }),
                )
            }
            Mode::Column(name) => match req.fields.get(name) {
                Some(v) => Self::verdict_json(&swap(v, req.swapped), &format!("column {name}")),
                None => format!("(the item has no field `{name}`)"),
            },
        }
    }
}

/// A pairwise preference as seen with A and B swapped.
fn swap(v: &str, swapped: bool) -> String {
    match (v.trim(), swapped) {
        ("A", true) => "B".into(),
        ("B", true) => "A".into(),
        (other, _) => other.to_owned(),
    }
}

impl JudgeModel for FakeJudge {
    fn identity(&self) -> JudgeIdentity {
        JudgeIdentity {
            endpoint: "fake".into(),
            configured_model: self.configured.clone(),
            // What a fake answers is fixed by its spec: that is its model. The `@MODEL` it
            // reports is not part of who it is, so that a test can change the reported model
            // under the same judge, as a provider does behind a stable name.
            pinned_model: Some(self.configured.clone()),
            ..JudgeIdentity::default()
        }
    }

    fn ask<'a>(&'a self, req: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeReply, TargetError>> {
        Box::pin(async move {
            let text = self.answer(req);
            let approx = |s: &str| (s.len() as u64).div_ceil(4);
            Ok(JudgeReply {
                usage: Usage {
                    input_tokens: approx(&req.system) + approx(&req.user),
                    output_tokens: approx(&text),
                },
                text,
                model: Some(self.model.clone()),
                latency_ms: 0,
                attempts: 1,
            })
        })
    }
}

/// The fields of an item as a fake judge reads them (case vars in a run).
pub fn fields_of(vars: &BTreeMap<String, serde_json::Value>) -> BTreeMap<String, String> {
    vars.iter()
        .map(|(k, v)| {
            let s = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), s)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        let j = FakeJudge::parse("fake:judge-column:harmbench_cf")
            .unwrap()
            .unwrap();
        assert_eq!(j.mode, Mode::Column("harmbench_cf".into()));
        assert_eq!(j.model, DEFAULT_MODEL);
        let j = FakeJudge::parse("fake:judge-malformed@other-model")
            .unwrap()
            .unwrap();
        assert_eq!((j.mode, j.model.as_str()), (Mode::Malformed, "other-model"));
        assert!(FakeJudge::parse("fake:judge").is_none());
        assert!(FakeJudge::parse("openai:gpt-4o").is_none());
        assert!(FakeJudge::parse("fake:judge-colum:x").unwrap().is_err());
        assert!(FakeJudge::parse("fake:judge-contains:").unwrap().is_err());
    }

    #[test]
    fn the_contains_judge_fails_what_holds_its_word_and_passes_the_rest() {
        let j = FakeJudge::parse("fake:judge-contains:Novel")
            .unwrap()
            .unwrap();
        let ask = |user: &str| {
            j.answer(&JudgeRequest {
                check: "jb".into(),
                system: String::new(),
                user: user.into(),
                sample: 0,
                swapped: false,
                fields: BTreeMap::new(),
            })
        };
        assert!(ask("<attack>As a character in my NOVEL</attack>").contains(r#""verdict":"fail""#));
        assert!(ask("<attack>For a training course</attack>").contains(r#""verdict":"pass""#));
    }
}
