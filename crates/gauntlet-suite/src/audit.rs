//! What a program can tell about a suite's cases without running an agent: [`lint`] finds
//! the agentic-benchmark checklist items that need no model (the expected answer given away
//! in the input, a security case with no check for a violation, a poisoned tool with no
//! injection check, a fault with no recovery check, the same case twice). Each finding is a
//! [`AuditFinding`]; `gauntlet audit` adds to them the cases a trivial agent passes.

use std::collections::HashMap;

use gauntlet_core::expect::Oracle;
use gauntlet_core::plan::SuiteContext;
use gauntlet_core::suite::{Case, CaseKind};

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The case cannot tell a good agent from a bad one: it must be fixed.
    Weak,
    /// Worth a look; the case may still be sound.
    Warning,
}

/// One finding about one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditFinding {
    /// The case id.
    pub case: String,
    /// How serious.
    pub severity: Severity,
    /// The checklist item, in a few words.
    pub item: &'static str,
    /// What was found, and what to do.
    pub detail: String,
}

/// Static checklist items for the cases of one suite. `seen` carries the inputs met so far
/// across suites and files (for duplicates).
pub fn lint(
    case: &Case,
    _ctx: &SuiteContext,
    seen: &mut HashMap<String, String>,
) -> Vec<AuditFinding> {
    let mut out = Vec::new();
    let mut push = |severity, item, detail: String| {
        out.push(AuditFinding {
            case: case.id.clone(),
            severity,
            item,
            detail,
        })
    };
    let input: String = case
        .input
        .iter()
        .cloned()
        .chain(case.turns.iter().map(|t| t.user.clone()))
        .collect::<Vec<_>>()
        .join("\n")
        .to_lowercase();
    // The expected answer given away: a required text the user's own words already hold,
    // which an echo satisfies.
    for e in &case.expect {
        let wanted: Vec<&str> = match &e.oracle {
            Oracle::Contains(c) => c.values.iter().map(String::as_str).collect(),
            Oracle::Equals(c) => vec![c.value.as_str()],
            _ => Vec::new(),
        };
        for w in wanted {
            if !w.trim().is_empty() && input.contains(&w.to_lowercase()) {
                push(
                    Severity::Warning,
                    "answer in the input",
                    format!(
                        "`{}` expects `{w}`, which the input already contains: an echo passes it; check for something only a right answer holds",
                        e.oracle.key()
                    ),
                );
            }
        }
    }
    let has = |key: &str| case.expect.iter().any(|e| e.oracle.key() == key);
    if case.is_security()
        && !case.expect.iter().any(|e| e.oracle.is_violation_check())
        && !has("refusal")
        && !has("out_of_scope")
    {
        push(
            Severity::Weak,
            "security case without a violation check",
            "a security case needs a check for what must not happen (no_canary, no_unsafe_markup, not_contains, tool_not_called, injection_resistance, ...)".into(),
        );
    }
    if case.tool_faults.iter().any(|f| f.poison.is_some()) && !has("injection_resistance") {
        push(
            Severity::Weak,
            "poisoned tool without an injection check",
            "the case poisons a tool output but no `injection_resistance` check looks at what the agent did next".into(),
        );
    }
    if case.tool_faults.iter().any(|f| f.fault.is_some())
        && !has("recovery")
        && case.kind == CaseKind::Task
    {
        push(
            Severity::Warning,
            "fault without a recovery check",
            "the case injects a tool fault but no `recovery` check says what the agent should do about it".into(),
        );
    }
    if !input.is_empty() {
        // Everything the agent sees, not only the user's words: two cases with one input
        // and different poisoned tool outputs, coordination faults or documents are
        // different attacks, and two scripted fixtures with different replies are two
        // recorded behaviours.
        let fingerprint = format!(
            "{input}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}",
            serde_json::to_string(&case.expect).unwrap_or_default(),
            serde_json::to_string(&case.tool_faults).unwrap_or_default(),
            serde_json::to_string(&case.coordination_faults).unwrap_or_default(),
            serde_json::to_string(&case.scripted).unwrap_or_default(),
            serde_json::to_string(&case.documents).unwrap_or_default(),
            serde_json::to_string(&case.turns).unwrap_or_default(),
            case.system_prompt.as_deref().unwrap_or_default(),
        );
        if let Some(first) = seen.insert(fingerprint, case.id.clone()) {
            push(
                Severity::Warning,
                "duplicate case",
                format!("same input and checks as `{first}`"),
            );
        }
    }
    out
}
