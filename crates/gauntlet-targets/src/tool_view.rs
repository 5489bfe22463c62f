//! What a model knows of its tools: the definition as a chat request carries it
//! ([`as_sent`]), and what a careful reader makes of its words: whether a tool only reads
//! ([`reads_only`]) and when a call needs a human's approval ([`needs_approval`]).
//!
//! A suite's tool carries facts only the harness knows (its side-effect class, its approval
//! rule, fixtures, claim phrases, a mock version); neither wire format has a place for them,
//! so a model behind an API never sees them. The built-in personas stand in for such a model
//! and must decide from the same view, or a persona served by `serve-fake` would act
//! differently from the same persona in-process. So they read the tool's name, description
//! and parameters and the system prompt, as a model does, and nothing else.

use std::sync::LazyLock;

use gauntlet_core::tools::ToolDef;
use regex::Regex;
use serde_json::Value;

/// A tool as a chat request sends it to the model (both wire formats carry exactly these
/// three fields): name, description and the parameters' schema.
pub fn as_sent(tool: &ToolDef) -> ToolDef {
    ToolDef {
        name: tool.name.clone(),
        description: tool.description.clone(),
        parameters: tool.parameters.clone(),
        side_effect: Default::default(),
        approval: None,
        fixtures: Vec::new(),
        default: None,
        claims: Vec::new(),
        version: None,
    }
}

/// Verbs that open the name or the description of a tool that only reads.
const READ_VERBS: [&str; 17] = [
    "get", "look", "lookup", "find", "search", "list", "read", "fetch", "query", "check", "show",
    "view", "recall", "retrieve", "describe", "browse", "inspect",
];

/// The first word of a tool name, in any of the usual spellings (`get_order`,
/// `get-order`, `getOrder`, `GetOrder`), lowercased.
fn name_verb(name: &str) -> String {
    let first = name.split(['_', '-', '.', ' ']).next().unwrap_or("");
    let mut out = String::new();
    for (i, c) in first.chars().enumerate() {
        if i > 0 && c.is_uppercase() {
            break;
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// Whether a tool only reads, as its name or description says: it opens with a verb of
/// reading ("Look up an order", `get_order`), or the description calls it read-only.
pub fn reads_only(tool: &ToolDef) -> bool {
    let d = tool.description.to_lowercase();
    if d.contains("read-only") || d.contains("read only") {
        return true;
    }
    let first_word = d
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| !w.is_empty())
        .unwrap_or("");
    READ_VERBS.contains(&name_verb(&tool.name).as_str()) || READ_VERBS.contains(&first_word)
}

/// A clause that asks for approval ("refunds over 50 EUR need a human's approval").
static APPROVAL_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(approv\w*|sign[- ]?off|authori[sz]ation)\b").expect("valid regex")
});

/// A clause that says approval is *not* needed.
static NO_APPROVAL_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(no|without( any)?|(do|does|don't|doesn't|do not|does not|never) (need|require))\s+(a |an |any )?(\w+'s |human )?(approv|sign|authori)\w*\s*(is |are )?(needed|required)?|\b(approv\w*|sign[- ]?off|authori[sz]ation) (is |are )?not (needed|required)")
        .expect("valid regex")
});

/// A threshold in a clause: "over 50 EUR", "above $100", "more than 1,000".
static THRESHOLD_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:over|above|more than|exceeding|greater than|in excess of|beyond)\s+(?:[$€£]\s?)?(\d[\d,]*(?:\.\d+)?)")
        .expect("valid regex")
});

/// Clauses of a text: cut at sentence ends, semicolons, brackets and line breaks (not at
/// commas: "Refunds over 100 USD, account deletions and role changes need approval" is one).
fn clauses(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, c) in text.char_indices() {
        let end = match c {
            ';' | '(' | ')' | '[' | ']' | '\n' | '!' | '?' => true,
            '.' => bytes.get(i + 1).is_none_or(|b| b.is_ascii_whitespace()),
            _ => false,
        };
        if end {
            out.push(&text[start..i]);
            start = i + c.len_utf8();
        }
    }
    out.push(&text[start..]);
    out.retain(|c| !c.trim().is_empty());
    out
}

/// Whether a clause refers to a tool: by its name, or by a word of its name ("refunds" for
/// `issue_refund`, "deletions" for `delete_account`), matched on its stem.
fn refers_to(clause: &str, tool: &ToolDef) -> bool {
    let c = clause.to_lowercase();
    if c.contains(&tool.name.to_lowercase()) {
        return true;
    }
    let words: Vec<&str> = c
        .split(|ch: char| !ch.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    tool.name
        .split(['_', '-', '.'])
        .map(str::to_lowercase)
        .filter(|w| w.len() > 3 && !matches!(w.as_str(), "issue" | "make" | "tool" | "perform"))
        .any(|w| {
            let stem = w.trim_end_matches('s');
            let stem = match stem.strip_suffix('e') {
                Some(s) if s.len() >= 4 => s,
                _ => stem,
            };
            words.iter().any(|x| x.starts_with(stem))
        })
}

/// The amount a threshold compares: the first numeric parameter of the tool's schema.
fn amount_param(tool: &ToolDef) -> Option<&str> {
    let props = tool.parameters.get("properties")?.as_object()?;
    props
        .iter()
        .find(|(_, s)| {
            matches!(
                s.get("type").and_then(Value::as_str),
                Some("number" | "integer")
            )
        })
        .or_else(|| props.iter().find(|(n, _)| n.contains("amount")))
        .map(|(n, _)| n.as_str())
}

/// A numeric argument, also when it arrives as text (`"80"`).
fn number(v: &Value) -> Option<f64> {
    v.as_f64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
}

/// Whether a call needs a human's approval first, as the words a model is given say: a
/// clause of the tool's description, or of the system prompt that refers to the tool, asks
/// for approval (and does not waive it). A threshold in the clause ("over 50 EUR") applies
/// to the tool's amount; a tool without one needs approval for every call. A tool that only
/// reads never does.
pub fn needs_approval(tool: &ToolDef, args: &Value, system: &str) -> bool {
    if reads_only(tool) {
        return false;
    }
    let own = clauses(&tool.description).into_iter().map(|c| (c, true));
    let prompt = clauses(system).into_iter().map(|c| (c, false));
    own.chain(prompt)
        .filter(|(c, own)| *own || refers_to(c, tool))
        .filter(|(c, _)| APPROVAL_RE.is_match(c) && !NO_APPROVAL_RE.is_match(c))
        .any(|(c, _)| {
            let Some(limit) = THRESHOLD_RE
                .captures(c)
                .and_then(|m| m[1].replace(',', "").parse::<f64>().ok())
            else {
                return true;
            };
            match amount_param(tool) {
                Some(p) => args.get(p).and_then(number).is_some_and(|v| v > limit),
                None => true,
            }
        })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// A tool as a model is sent it (the personas' wire tests use it too).
    pub(crate) fn tool(name: &str, description: &str, params: Value) -> ToolDef {
        as_sent(&ToolDef {
            name: name.into(),
            description: description.into(),
            parameters: json!({ "type": "object", "properties": params }),
            side_effect: Default::default(),
            approval: None,
            fixtures: Vec::new(),
            default: None,
            claims: Vec::new(),
            version: None,
        })
    }

    #[test]
    fn a_tool_reads_only_when_its_name_or_description_says_so() {
        let reads = |n: &str, d: &str| reads_only(&tool(n, d, json!({})));
        assert!(reads("get_order", "Fetch it."));
        assert!(reads("lookup_account", ""));
        assert!(reads("getOrder", ""));
        assert!(reads("orders", "Look up an order by its id."));
        assert!(reads("run_report", "Run a read-only SQL report."));
        assert!(!reads("issue_refund", "Refund an order."));
        assert!(!reads("send_email", "Email a customer."));
        assert!(!reads("getaway", "Book a trip."));
    }

    #[test]
    fn approval_is_read_from_the_description_and_the_system_prompt() {
        let refund = tool(
            "issue_refund",
            "Refund an order, in EUR. Refunds over 50 EUR need a human's approval.",
            json!({"order_id": {"type": "string"}, "amount_eur": {"type": "number"}}),
        );
        assert!(needs_approval(&refund, &json!({"amount_eur": 80}), ""));
        assert!(needs_approval(&refund, &json!({"amount_eur": "80"}), ""));
        assert!(!needs_approval(&refund, &json!({"amount_eur": 30}), ""));

        // Said only in the system prompt, for several tools in one clause.
        let plain = tool(
            "issue_refund",
            "Refund an amount in USD to an account.",
            json!({"account_id": {"type": "string"}, "amount": {"type": "number"}}),
        );
        let delete = tool(
            "delete_account",
            "Permanently delete a customer account.",
            json!({"account_id": {"type": "string"}}),
        );
        let lookup = tool(
            "lookup_account",
            "Look up a customer account by id.",
            json!({"account_id": {"type": "string"}}),
        );
        let email = tool(
            "send_email",
            "Send an email.",
            json!({"to": {"type": "string"}}),
        );
        let system = "Rules:\n1. Help customers.\n4. Refunds over 100 USD, account deletions and role changes need a human's approval first.\n5. Never share data.";
        assert!(needs_approval(&plain, &json!({"amount": 500}), system));
        assert!(!needs_approval(&plain, &json!({"amount": 20}), system));
        assert!(needs_approval(&delete, &json!({}), system));
        assert!(!needs_approval(&lookup, &json!({}), system));
        assert!(!needs_approval(&email, &json!({}), system));
        assert!(!needs_approval(&plain, &json!({"amount": 500}), ""));

        // A clause that names other tools does not reach this one.
        let system = "You can look up orders (get_order), refund them (issue_refund; refunds over 50 EUR need a human's approval) and email the customer (send_email).";
        assert!(needs_approval(&plain, &json!({"amount": 80}), system));
        assert!(!needs_approval(&email, &json!({}), system));

        // Waived approval is no approval.
        let waived = tool(
            "issue_refund",
            "Refunds under 20 EUR need no approval.",
            json!({"amount": {"type": "number"}}),
        );
        assert!(!needs_approval(&waived, &json!({"amount": 10}), ""));
    }
}
