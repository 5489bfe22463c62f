//! Which suite case a captured trace is of: the rules of `gauntlet grade --match`
//! ([`Rule`]), tried in order by a [`Matcher`] built from the suite's cases.
//!
//! - `id`: the case id the trace names (gauntlet's `case_id`, the OTLP attribute
//!   `gauntlet.case.id`, the proxy's session);
//! - `case_id=attr:NAME`: the value of attribute `NAME` (an OTLP span or resource attribute,
//!   an entry of `attributes` in gauntlet's format) is the case id;
//! - `input`: the trace's first user message equals the case's first user turn (with or
//!   without the case's documents in front of it), ignoring leading and trailing whitespace
//!   and runs of whitespace;
//! - `input=regex:PATTERN`: the same, comparing only what `PATTERN` captures from the first
//!   user message (its first group, else the whole match), for apps that wrap what the user
//!   typed in a template.
//!
//! A trace that two cases fit equally (two cases with the same input) matches neither: it
//! is reported as ambiguous, never given to one of them at random.

use std::collections::{HashMap, HashSet};

use gauntlet_core::capture::CapturedTrial;
use gauntlet_core::context::with_documents;
use gauntlet_core::suite::Case;
use regex::Regex;

/// One matching rule.
#[derive(Debug, Clone)]
pub enum Rule {
    /// The case id the trace names.
    Id,
    /// The case id is the value of this attribute.
    Attr(String),
    /// The first user message equals the case's first turn.
    Input,
    /// What the pattern captures from the first user message equals the case's first turn.
    InputRegex(Regex),
}

impl Rule {
    /// Reads `id`, `case_id=attr:NAME`, `input` or `input=regex:PATTERN`.
    pub fn parse(s: &str) -> Result<Rule, String> {
        let s = s.trim();
        match s {
            "id" | "case_id" => return Ok(Rule::Id),
            "input" => return Ok(Rule::Input),
            _ => {}
        }
        if let Some(name) = s.strip_prefix("case_id=attr:") {
            if name.is_empty() {
                return Err("`case_id=attr:` needs an attribute name".into());
            }
            return Ok(Rule::Attr(name.to_owned()));
        }
        if let Some(p) = s.strip_prefix("input=regex:") {
            return Regex::new(p)
                .map(Rule::InputRegex)
                .map_err(|e| format!("`{p}` is not a valid regex: {e}"));
        }
        Err(format!(
            "unknown match rule `{s}`: use `id`, `case_id=attr:NAME`, `input` or `input=regex:PATTERN`"
        ))
    }

    /// The rule as written.
    pub fn label(&self) -> String {
        match self {
            Rule::Id => "id".into(),
            Rule::Attr(a) => format!("case_id=attr:{a}"),
            Rule::Input => "input".into(),
            Rule::InputRegex(r) => format!("input=regex:{}", r.as_str()),
        }
    }
}

/// Whitespace-insensitive form of a message, for comparing inputs.
pub fn normalize(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first user turn of a case, as written.
pub fn first_turn(case: &Case) -> Option<&str> {
    case.input
        .as_deref()
        .or_else(|| case.turns.first().map(|t| t.user.as_str()))
}

/// Matches traces to the cases of a suite.
#[derive(Debug, Default)]
pub struct Matcher {
    rules: Vec<Rule>,
    ids: HashSet<String>,
    inputs: HashMap<String, Vec<String>>,
}

impl Matcher {
    /// A matcher with these rules (in order), knowing no case yet.
    pub fn new(rules: Vec<Rule>) -> Matcher {
        Matcher {
            rules,
            ..Matcher::default()
        }
    }

    /// Learns a case: its id, and its first turn (bare, and with its documents).
    pub fn add_case(&mut self, case: &Case) {
        self.ids.insert(case.id.clone());
        if let Some(input) = first_turn(case) {
            let mut forms = vec![normalize(input)];
            if !case.documents.is_empty() {
                forms.push(normalize(&with_documents(&case.documents, input)));
            }
            forms.dedup();
            for f in forms {
                let ids = self.inputs.entry(f).or_default();
                if !ids.contains(&case.id) {
                    ids.push(case.id.clone());
                }
            }
        }
    }

    /// The rules, as written.
    pub fn rules(&self) -> Vec<String> {
        self.rules.iter().map(Rule::label).collect()
    }

    /// The case a trace is of, or why there is none.
    pub fn find(&self, t: &CapturedTrial) -> Result<String, String> {
        let mut why = Vec::new();
        for rule in &self.rules {
            let found = match rule {
                Rule::Id => match &t.case_id {
                    Some(id) if self.ids.contains(id) => return Ok(id.clone()),
                    Some(id) => Err(format!("its case id `{id}` is not in the suite")),
                    None => Err("it names no case id".to_owned()),
                },
                Rule::Attr(name) => match t.attributes.get(name) {
                    Some(id) if self.ids.contains(id) => return Ok(id.clone()),
                    Some(id) => Err(format!(
                        "its attribute `{name}` = `{id}` is no case id of the suite"
                    )),
                    None => Err(format!("it has no attribute `{name}`")),
                },
                Rule::Input => self.by_input(t.first_user().map(normalize)),
                Rule::InputRegex(re) => match t.first_user() {
                    Some(u) => match re.captures(u) {
                        Some(c) => self
                            .by_input(c.get(1).or_else(|| c.get(0)).map(|m| normalize(m.as_str()))),
                        None => Err(format!(
                            "its first user message does not match `{}`",
                            re.as_str()
                        )),
                    },
                    None => Err("it has no user message".to_owned()),
                },
            };
            match found {
                Ok(id) => return Ok(id),
                Err(w) => why.push(w),
            }
        }
        Err(why.join("; "))
    }

    fn by_input(&self, input: Option<String>) -> Result<String, String> {
        let Some(input) = input else {
            return Err("it has no user message".to_owned());
        };
        match self.inputs.get(&input).map(Vec::as_slice) {
            Some([one]) => Ok(one.clone()),
            Some(many) => Err(format!(
                "its first user message is the input of {} cases ({}): ambiguous",
                many.len(),
                many.join(", ")
            )),
            None => Err("its first user message is no case's input".to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gauntlet_core::trace::{Trace, TurnRecord};

    fn case(id: &str, input: &str) -> Case {
        serde_json::from_value(serde_json::json!({"id": id, "input": input})).unwrap()
    }

    fn trial(case_id: Option<&str>, user: &str) -> CapturedTrial {
        CapturedTrial {
            trace: Trace {
                turns: vec![TurnRecord {
                    user: user.into(),
                    answer: "a".into(),
                    truncated: false,
                }],
                ..Trace::default()
            },
            outcome: gauntlet_core::result::Outcome::Completed,
            error: None,
            duration_ms: 0,
            case_id: case_id.map(str::to_owned),
            attributes: [("app.case".to_owned(), "b".to_owned())].into(),
            label: "t".into(),
        }
    }

    #[test]
    fn rules_are_tried_in_order_and_say_why_nothing_matched() {
        let mut m = Matcher::new(vec![Rule::Id, Rule::Input]);
        m.add_case(&case("a", "What is  my order status?"));
        m.add_case(&case("b", "Refund A-1"));
        m.add_case(&case("c", "Refund A-1"));
        assert_eq!(m.find(&trial(Some("a"), "x")), Ok("a".into()));
        assert_eq!(
            m.find(&trial(None, " What is my order\nstatus? ")),
            Ok("a".into())
        );
        let why = m.find(&trial(Some("zz"), "Refund A-1")).unwrap_err();
        assert!(why.contains("`zz` is not in the suite"), "{why}");
        assert!(why.contains("ambiguous") && why.contains("b, c"), "{why}");
        let attr = Matcher {
            rules: vec![Rule::parse("case_id=attr:app.case").unwrap()],
            ..m
        };
        assert_eq!(attr.find(&trial(None, "x")), Ok("b".into()));
    }

    #[test]
    fn a_regex_rule_compares_what_it_captures() {
        let mut m = Matcher::new(vec![Rule::parse(r"input=regex:^User said: (.*)$").unwrap()]);
        m.add_case(&case("a", "hello there"));
        assert_eq!(
            m.find(&trial(None, "User said: hello there")),
            Ok("a".into())
        );
        assert!(m.find(&trial(None, "hello there")).is_err());
        assert!(Rule::parse("input=regex:(").is_err());
        assert!(Rule::parse("nope").is_err());
    }
}
