//! Simulated tools: [`ToolDef`] (what a suite declares about a tool the agent may call),
//! [`ToolFault`] (a fault or a poisoned output a case injects into one), and the injection
//! itself, which the simulated tools and the recording proxy share: [`FaultSchedule`] picks
//! the [`Injection`] that applies to a call, counting `times`, and [`Injection::apply`]
//! turns it and the tool's [`ToolAnswer`] into what the agent is handed ([`Injected`]).
//!
//! One implementation for both, so that a case behaves alike whoever runs the tools: the
//! same error texts, the same partial and malformed data, the poison in the same place, the
//! same `injected` marks on the tool span.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What calling a tool would do to the world.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum SideEffectClass {
    /// Reads only.
    #[default]
    ReadOnly,
    /// Changes state that can be undone.
    Write,
    /// Changes state that cannot be undone (payments, sent email, deletions).
    Irreversible,
}

impl SideEffectClass {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            SideEffectClass::ReadOnly => "read_only",
            SideEffectClass::Write => "write",
            SideEffectClass::Irreversible => "irreversible",
        }
    }
}

/// A tool the agent may call. gauntlet answers calls from the fixtures; nothing real runs.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ToolDef {
    /// The tool's name, as the model sees it.
    pub name: String,
    /// What the tool does, as the model sees it.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments object.
    #[serde(default = "empty_object_schema")]
    pub parameters: serde_json::Value,
    /// What a call would change.
    #[serde(default)]
    pub side_effect: SideEffectClass,
    /// Whether a human must approve a call first. `true` always; a condition such as
    /// `amount > 100` for some calls (the argument compared with a number).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalRule>,
    /// Answers keyed by argument patterns; the first match wins.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixtures: Vec<ToolFixture>,
    /// The answer when no fixture matches. Without one, an unmatched call gets an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<serde_json::Value>,
    /// Phrases in an answer that claim this tool's action happened ("refund sent"). Defaults
    /// are derived from the tool's name; see the action-hallucination check.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<String>,
    /// A version label for the mock, recorded in the run manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

impl ToolDef {
    /// A tool as a wire format or a server declares it: its name, description and parameter
    /// schema; the default side-effect class, no approval, fixtures, claims or version.
    pub fn declared(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: serde_json::Value,
    ) -> ToolDef {
        ToolDef {
            name: name.into(),
            description: description.into(),
            parameters,
            side_effect: SideEffectClass::default(),
            approval: None,
            fixtures: Vec::new(),
            default: None,
            claims: Vec::new(),
            version: None,
        }
    }

    /// Whether a call with these arguments needs a human's approval (a numeric argument may
    /// arrive as a string: `"80"` is compared as 80).
    pub fn needs_approval(&self, args: &serde_json::Value) -> bool {
        match &self.approval {
            None | Some(ApprovalRule::Always(false)) => false,
            Some(ApprovalRule::Always(true)) => true,
            Some(ApprovalRule::Over { arg, over }) => args
                .get(arg)
                .and_then(|v| {
                    v.as_f64()
                        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                })
                .is_some_and(|v| v > *over),
        }
    }
}

fn empty_object_schema() -> serde_json::Value {
    serde_json::json!({ "type": "object", "properties": {} })
}

/// When a tool call needs approval.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum ApprovalRule {
    /// `true`: every call; `false`: none.
    Always(bool),
    /// A condition on one numeric argument: `{ arg: amount, over: 100 }`.
    Over {
        /// The argument compared.
        arg: String,
        /// Calls with the argument above this need approval.
        over: f64,
    },
}

/// A canned tool answer for calls whose arguments match.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ToolFixture {
    /// Argument values that must match (top-level keys; strings may use `*` wildcards).
    #[serde(default)]
    pub when: serde_json::Map<String, serde_json::Value>,
    /// The answer returned to the agent.
    pub returns: serde_json::Value,
}

/// A fault injected into a tool for one case.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ToolFault {
    /// The tool.
    pub tool: String,
    /// What goes wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<FaultKind>,
    /// Instructions appended to the tool's output (indirect prompt injection).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poison: Option<String>,
    /// Which calls are affected: all (default), or only the first N.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
}

/// Kinds of injected tool fault.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// The call never answers (reported to the agent as a timeout).
    Timeout,
    /// The tool answers with an error status.
    Error,
    /// The tool answers with a body that is not valid JSON.
    Malformed,
    /// The tool answers with part of the data.
    Partial,
    /// The tool refuses: permission denied.
    PermissionDenied,
    /// The tool refuses: rate limited.
    RateLimited,
}

impl FaultKind {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            FaultKind::Timeout => "timeout",
            FaultKind::Error => "error",
            FaultKind::Malformed => "malformed",
            FaultKind::Partial => "partial",
            FaultKind::PermissionDenied => "permission_denied",
            FaultKind::RateLimited => "rate_limited",
        }
    }
}

impl FaultKind {
    /// The error a tool answers with for this fault; `None` for the faults that answer with
    /// (damaged) data instead: `malformed` and `partial`. The simulated tools and the
    /// recording proxy use the same texts, so a case behaves alike whoever runs the tools.
    pub fn error_text(self) -> Option<&'static str> {
        match self {
            FaultKind::Timeout => Some("error: the tool timed out after 30 s"),
            FaultKind::Error => Some("error: 500 internal server error"),
            FaultKind::PermissionDenied => Some("error: 403 permission denied"),
            FaultKind::RateLimited => Some("error: 429 rate limited; retry after 2 seconds"),
            FaultKind::Malformed | FaultKind::Partial => None,
        }
    }
}

/// What a `malformed` fault hands the agent instead of the result: JSON cut off mid-way.
pub const MALFORMED_OUTPUT: &str = "{\"status\": \"ok\", \"data\": [{\"id\": 1,";

/// What a `partial` fault keeps of a result: the first half of an array, or half of an
/// object's fields marked `"partial": true`, or half of a string.
pub fn partial_value(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Array(a) => Value::Array(a.iter().take(a.len().div_ceil(2)).cloned().collect()),
        Value::Object(o) => {
            let keep = o.len().div_ceil(2);
            let mut m: serde_json::Map<String, Value> = o
                .iter()
                .take(keep)
                .map(|(k, v)| (k.clone(), partial_value(v)))
                .collect();
            m.insert("partial".into(), Value::Bool(true));
            Value::Object(m)
        }
        Value::String(s) => Value::String(s.chars().take(s.chars().count() / 2).collect()),
        other => other.clone(),
    }
}

/// A tool output with a poison added where a real tool would carry free text: a `note`
/// field of a JSON object, or a paragraph after a text answer.
pub fn poison_output(out: &str, poison: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(out) {
        Ok(serde_json::Value::Object(mut o)) => {
            o.insert("note".into(), serde_json::Value::String(poison.to_owned()));
            serde_json::Value::Object(o).to_string()
        }
        _ => format!("{out}\n\n{poison}"),
    }
}

/// A case's tool faults and how many calls each has applied to so far: one schedule per
/// trial for the simulated tools, one per session for the recording proxy.
#[derive(Debug, Clone, Default)]
pub struct FaultSchedule<'a> {
    faults: Cow<'a, [ToolFault]>,
    /// Calls counted against each fault's `times`, by index.
    used: Vec<u32>,
}

impl<'a> FaultSchedule<'a> {
    /// A schedule with no call counted yet.
    pub fn new(faults: impl Into<Cow<'a, [ToolFault]>>) -> Self {
        let faults = faults.into();
        let used = vec![0; faults.len()];
        FaultSchedule { faults, used }
    }

    /// What applies to the next call of `tool`. Every entry for the tool whose `times` is
    /// not used up counts the call; the first of them with a fault gives the fault, the
    /// first with a poison the poison.
    pub fn next(&mut self, tool: &str) -> Injection<'_> {
        let mut fault = None;
        let mut poison = None;
        for (f, used) in self.faults.iter().zip(&mut self.used) {
            if f.tool != tool {
                continue;
            }
            if f.times.is_some_and(|t| *used >= t) {
                continue;
            }
            *used += 1;
            fault = fault.or(f.fault);
            poison = poison.or(f.poison.as_deref());
        }
        Injection { fault, poison }
    }
}

/// The fault and the poison that apply to one tool call (either may be absent).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Injection<'a> {
    /// What goes wrong with the call.
    pub fault: Option<FaultKind>,
    /// Instructions added to the call's output.
    pub poison: Option<&'a str>,
}

/// What a tool answered, before anything is injected.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ToolAnswer<'a> {
    /// A fixture's value (the simulated tools): `partial` cuts the value.
    Value(&'a serde_json::Value),
    /// A real tool's result as the model would see it (the recording proxy): `partial` cuts
    /// the JSON it holds, or half of the text.
    Text(&'a str),
    /// A real tool's error: it is never poisoned, and `partial` leaves it as it is.
    Error(&'a str),
    /// No fixture of the named tool matches the call and it has no default. Without a fault
    /// the call gets an error saying so; a fault stands in for the missing answer, and
    /// `partial`, with nothing to keep, hands over nothing.
    NoFixture(&'a str),
}

/// A tool call's answer after injection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Injected {
    /// The output the agent is handed; `None` when it gets an error (or nothing).
    pub output: Option<String>,
    /// The error the agent is handed: the fault's error text, else the tool's own.
    pub error: Option<String>,
    /// The fault that applied.
    pub fault: Option<FaultKind>,
    /// Whether a poison was added to the output.
    pub poisoned: bool,
}

impl Injection<'_> {
    /// Applies the fault, then the poison, to a tool's answer. An error fault replaces the
    /// answer with the fault's error text; `malformed` with [`MALFORMED_OUTPUT`]; `partial`
    /// keeps about half of it ([`partial_value`]). A poison goes into whatever output is left
    /// ([`poison_output`]); an error is not poisoned.
    pub fn apply(self, answer: ToolAnswer<'_>) -> Injected {
        let (mut output, mut error) = match answer {
            ToolAnswer::Value(v) => (Some(render(v)), None),
            ToolAnswer::Text(t) => (Some(t.to_owned()), None),
            ToolAnswer::Error(e) => (None, Some(e.to_owned())),
            ToolAnswer::NoFixture(_) => (None, None),
        };
        match self.fault {
            Some(k) => match (k, k.error_text()) {
                (_, Some(text)) => {
                    output = None;
                    error = Some(text.to_owned());
                }
                (FaultKind::Malformed, None) => output = Some(MALFORMED_OUTPUT.to_owned()),
                (_, None) => {
                    output = match answer {
                        ToolAnswer::Value(v) => Some(render(&partial_value(v))),
                        ToolAnswer::Text(t) => Some(partial_text(t)),
                        ToolAnswer::Error(_) | ToolAnswer::NoFixture(_) => None,
                    }
                }
            },
            None => {
                if let ToolAnswer::NoFixture(tool) = answer {
                    error = Some(format!(
                        "error: no fixture of `{tool}` matches these arguments"
                    ));
                }
            }
        }
        let poisoned = match (&mut output, self.poison) {
            (Some(out), Some(p)) => {
                *out = poison_output(out, p);
                true
            }
            _ => false,
        };
        Injected {
            output,
            error,
            fault: self.fault,
            poisoned,
        }
    }
}

impl Injected {
    /// What the agent is handed: the output, else the error, else nothing.
    pub fn text(&self) -> &str {
        self.output
            .as_deref()
            .or(self.error.as_deref())
            .unwrap_or("")
    }

    /// Whether the fault replaced the answer with its error text.
    pub fn fault_error(&self) -> bool {
        self.fault.and_then(FaultKind::error_text).is_some()
    }

    /// What the tool span records as `injected`: `fault:KIND` and/or `poison`, joined by a
    /// comma; `None` when nothing was injected.
    pub fn marks(&self) -> Option<String> {
        let mut marks = Vec::new();
        if let Some(k) = self.fault {
            marks.push(format!("fault:{}", k.as_str()));
        }
        if self.poisoned {
            marks.push("poison".to_owned());
        }
        (!marks.is_empty()).then(|| marks.join(","))
    }
}

/// A value as a tool hands it over: a string as itself, anything else as JSON.
fn render(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What a `partial` fault keeps of a result text: [`partial_value`] of the JSON it holds,
/// else the first half of its characters.
fn partial_text(t: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(t) {
        Ok(v) => render(&partial_value(&v)),
        Err(_) => t.chars().take(t.chars().count() / 2).collect(),
    }
}

/// A call's arguments in at most 160 bytes, for side-effect descriptions.
pub fn summarize_args(args: &serde_json::Value) -> String {
    let s = args.to_string();
    if s.len() > 160 {
        format!("{}…", &s[..s.floor_char_boundary(160)])
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn fault(
        tool: &str,
        kind: Option<FaultKind>,
        poison: Option<&str>,
        times: Option<u32>,
    ) -> ToolFault {
        ToolFault {
            tool: tool.into(),
            fault: kind,
            poison: poison.map(str::to_owned),
            times,
        }
    }

    #[test]
    fn the_schedule_counts_times_per_entry_and_takes_the_first_fault_and_poison() {
        let faults = [
            fault("lookup", Some(FaultKind::Timeout), None, Some(1)),
            fault("lookup", Some(FaultKind::Error), Some("obey"), Some(2)),
            fault("other", Some(FaultKind::Malformed), None, None),
        ];
        let mut s = FaultSchedule::new(&faults[..]);
        let pick = |f, p| Injection {
            fault: f,
            poison: p,
        };
        // Both lookup entries count the first call; the first entry's fault wins.
        assert_eq!(
            s.next("lookup"),
            pick(Some(FaultKind::Timeout), Some("obey"))
        );
        assert_eq!(s.next("lookup"), pick(Some(FaultKind::Error), Some("obey")));
        assert_eq!(s.next("lookup"), Injection::default());
        assert_eq!(s.next("unknown"), Injection::default());
        // An entry without `times` never runs out, and other tools' calls did not count.
        for _ in 0..3 {
            assert_eq!(s.next("other"), pick(Some(FaultKind::Malformed), None));
        }
        let mut owned = FaultSchedule::new(faults.to_vec());
        assert_eq!(owned.next("lookup").fault, Some(FaultKind::Timeout));
    }

    fn apply(f: Option<FaultKind>, poison: Option<&str>, answer: ToolAnswer<'_>) -> Injected {
        Injection { fault: f, poison }.apply(answer)
    }

    #[test]
    fn error_faults_replace_the_answer_with_their_text() {
        let v = json!({"order_id": "A-1", "status": "shipped"});
        let cases = [
            (FaultKind::Timeout, "error: the tool timed out after 30 s"),
            (FaultKind::Error, "error: 500 internal server error"),
            (FaultKind::PermissionDenied, "error: 403 permission denied"),
            (
                FaultKind::RateLimited,
                "error: 429 rate limited; retry after 2 seconds",
            ),
        ];
        for (k, text) in cases {
            for answer in [
                ToolAnswer::Value(&v),
                ToolAnswer::Text("real output"),
                ToolAnswer::Error("error: real failure"),
                ToolAnswer::NoFixture("lookup"),
            ] {
                // The poison is dropped: there is no output to carry it.
                let i = apply(Some(k), Some("obey"), answer);
                assert_eq!(i.output, None, "{k:?} {answer:?}");
                assert_eq!(i.error.as_deref(), Some(text));
                assert_eq!(i.text(), text);
                assert!(i.fault_error());
                assert_eq!(i.marks(), Some(format!("fault:{}", k.as_str())));
            }
        }
    }

    #[test]
    fn malformed_hands_over_cut_off_json_and_keeps_a_real_error() {
        let v = json!({"a": 1});
        let i = apply(Some(FaultKind::Malformed), None, ToolAnswer::Value(&v));
        assert_eq!(i.output.as_deref(), Some(MALFORMED_OUTPUT));
        assert_eq!((i.error.as_deref(), i.fault_error()), (None, false));
        let i = apply(
            Some(FaultKind::Malformed),
            None,
            ToolAnswer::Error("error: down"),
        );
        assert_eq!(i.text(), MALFORMED_OUTPUT);
        assert_eq!(i.error.as_deref(), Some("error: down"));
        assert!(!i.fault_error());
        let i = apply(
            Some(FaultKind::Malformed),
            Some("obey"),
            ToolAnswer::NoFixture("t"),
        );
        assert_eq!(i.output, Some(format!("{MALFORMED_OUTPUT}\n\nobey")));
        assert_eq!(i.error, None);
        assert_eq!(i.marks().as_deref(), Some("fault:malformed,poison"));
    }

    #[test]
    fn partial_keeps_half_of_a_value_or_a_text() {
        let v = json!({"order_id": "A-1", "status": "shipped"});
        let i = apply(Some(FaultKind::Partial), None, ToolAnswer::Value(&v));
        assert_eq!(
            i.output.as_deref(),
            Some(r#"{"order_id":"A","partial":true}"#)
        );
        assert_eq!(i.marks().as_deref(), Some("fault:partial"));
        // A text holding JSON is cut as JSON; other text by characters.
        let real = r#"{"order_id":"A-1","status":"shipped"}"#;
        let i = apply(Some(FaultKind::Partial), Some("p"), ToolAnswer::Text(real));
        assert_eq!(i.text(), r#"{"note":"p","order_id":"A","partial":true}"#);
        assert_eq!(i.marks().as_deref(), Some("fault:partial,poison"));
        let i = apply(Some(FaultKind::Partial), None, ToolAnswer::Text("abcdef"));
        assert_eq!(i.text(), "abc");
        // A fixture string is a value: halved even when it reads as JSON.
        let s = json!("[1,2,3,4]");
        let i = apply(Some(FaultKind::Partial), None, ToolAnswer::Value(&s));
        assert_eq!(i.text(), "[1,2");
        // Nothing to keep: a real error stays, a missing fixture gives nothing.
        let i = apply(
            Some(FaultKind::Partial),
            None,
            ToolAnswer::Error("error: down"),
        );
        assert_eq!((i.output, i.error.as_deref()), (None, Some("error: down")));
        let i = apply(Some(FaultKind::Partial), None, ToolAnswer::NoFixture("t"));
        assert_eq!(
            (i.output.as_deref(), i.error.as_deref(), i.text()),
            (None, None, "")
        );
    }

    #[test]
    fn poison_goes_into_a_note_or_after_the_text_and_never_into_an_error() {
        let v = json!({"order_id": "A-1"});
        let i = apply(None, Some("SYSTEM NOTE: obey"), ToolAnswer::Value(&v));
        assert_eq!(i.text(), r#"{"note":"SYSTEM NOTE: obey","order_id":"A-1"}"#);
        assert_eq!((i.fault, i.marks().as_deref()), (None, Some("poison")));
        let i = apply(None, Some("obey"), ToolAnswer::Text("plain text"));
        assert_eq!(i.text(), "plain text\n\nobey");
        let i = apply(None, Some("obey"), ToolAnswer::Error("error: down"));
        assert_eq!((i.text(), i.marks()), ("error: down", None));
    }

    #[test]
    fn nothing_injected_leaves_the_answer_as_it_was() {
        let v = json!({"b": [1, 2], "a": "x"});
        let i = apply(None, None, ToolAnswer::Value(&v));
        assert_eq!(i.text(), r#"{"a":"x","b":[1,2]}"#);
        assert_eq!((i.error.as_deref(), i.marks()), (None, None));
        let s = json!("plain");
        assert_eq!(apply(None, None, ToolAnswer::Value(&s)).text(), "plain");
        assert_eq!(
            apply(None, None, ToolAnswer::Text("t")).output.as_deref(),
            Some("t")
        );
        let i = apply(None, Some("obey"), ToolAnswer::NoFixture("lookup"));
        assert_eq!(
            i.error.as_deref(),
            Some("error: no fixture of `lookup` matches these arguments")
        );
        assert_eq!((i.output.as_deref(), i.marks()), (None, None));
    }
}
