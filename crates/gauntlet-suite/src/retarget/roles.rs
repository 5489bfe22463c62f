//! What a card's tools are to an attacker: [`classify_tools`] reads each tool's name,
//! description, parameter schema, side-effect class and approvals (and the card's
//! `approval_required` phrases) and returns a [`ToolRole`] per tool: whether its output can
//! carry a poisoned instruction, whether it sends data out of the app, whether its action is
//! irreversible. `agent.tool_roles` overrides each role. Deterministic: the same card gives
//! the same roles, in card order, each with the reason it was given.

use gauntlet_core::suite::AgentCard;
use gauntlet_core::tools::{ApprovalRule, SideEffectClass, ToolDef};
use serde::Serialize;

/// One tool's roles, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolRole {
    /// The tool's name.
    pub tool: String,
    /// Its output carries content from outside the app: a poisoned output goes there.
    pub untrusted_output: bool,
    /// It sends data out of the app: an exfiltration aims at it.
    pub sends_out: bool,
    /// Its action cannot be undone or needs a human's approval.
    pub irreversible: bool,
    /// Its output is plainly third-party content (an inbox, a web page, a document, another
    /// agent's reply), preferred as the carrier of a poisoned output over a record lookup.
    pub external: bool,
    /// Why, in a few words per role given.
    pub why: Vec<String>,
}

/// First words of a tool's name that make it a reader.
const READ_VERBS: &[&str] = &[
    "get", "read", "list", "fetch", "search", "lookup", "look", "find", "recall", "query", "view",
    "browse", "retrieve", "load", "open", "check", "show", "ask", "describe", "scan", "run",
];
/// Words of a tool's name that make it a sender (verbs), wherever they stand.
const SEND_VERBS: &[&str] = &[
    "send",
    "post",
    "publish",
    "notify",
    "upload",
    "forward",
    "share",
    "reply",
    "tweet",
    "submit",
    "export",
    "transmit",
    "broadcast",
    "dispatch",
    "write",
    "email",
    "mail",
    "message",
    "sms",
    "webhook",
    "http",
    "slack",
];
/// Parameters that name where data goes.
const DESTINATIONS: &[&str] = &[
    "to",
    "recipient",
    "recipients",
    "cc",
    "bcc",
    "email",
    "address",
    "url",
    "uri",
    "endpoint",
    "webhook",
    "channel",
    "destination",
    "phone",
];
/// Words that mark a reader's output as third-party content.
const EXTERNAL: &[&str] = &[
    "inbox",
    "email",
    "emails",
    "mail",
    "message",
    "messages",
    "web",
    "page",
    "url",
    "browse",
    "search",
    "fetch",
    "document",
    "documents",
    "doc",
    "docs",
    "file",
    "files",
    "ticket",
    "tickets",
    "comment",
    "comments",
    "review",
    "reviews",
    "feed",
    "news",
    "issue",
    "issues",
    "chat",
    "agent",
    "website",
    "rss",
];
/// First words of a tool's name that mark a destructive action.
const DESTRUCTIVE: &[&str] = &[
    "delete",
    "remove",
    "drop",
    "destroy",
    "purge",
    "wipe",
    "pay",
    "transfer",
    "refund",
    "charge",
    "cancel",
    "revoke",
    "terminate",
    "execute",
    "exec",
    "deploy",
];

/// The words of a name (`sendEmail`, `send-email`, `send_email` -> send, email), lowercase.
pub(crate) fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The names of the tool's parameters, lowercase.
pub(crate) fn param_names(tool: &ToolDef) -> Vec<String> {
    tool.parameters
        .get("properties")
        .and_then(serde_json::Value::as_object)
        .map(|o| o.keys().map(|k| k.to_lowercase()).collect())
        .unwrap_or_default()
}

fn needs_approval(tool: &ToolDef, card: &AgentCard, name_words: &[String]) -> Option<String> {
    match &tool.approval {
        Some(ApprovalRule::Always(true)) => return Some("approval: true".into()),
        Some(ApprovalRule::Over { arg, over }) => {
            return Some(format!("approval over {arg} {over}"));
        }
        _ => {}
    }
    // `approval_required: [refunds over 50 EUR]` names `issue_refund` by its word "refund";
    // a reader (`lookup_account`) is not named by "account deletion".
    if name_words
        .first()
        .is_some_and(|w| READ_VERBS.contains(&w.as_str()))
    {
        return None;
    }
    card.approval_required.iter().find_map(|phrase| {
        let p = words(phrase);
        name_words
            .iter()
            .filter(|w| w.len() > 3 && !READ_VERBS.contains(&w.as_str()))
            .find(|w| {
                p.iter()
                    .any(|pw| pw.trim_end_matches('s') == w.trim_end_matches('s'))
            })
            .map(|w| format!("approval_required names `{w}`"))
    })
}

fn classify_one(tool: &ToolDef, card: &AgentCard) -> ToolRole {
    let name = words(&tool.name);
    let first = name.first().map(String::as_str).unwrap_or("");
    let params = param_names(tool);
    let mut why = Vec::new();
    let reader_first = READ_VERBS.contains(&first);
    let send_word = name
        .iter()
        .find(|w| SEND_VERBS.contains(&w.as_str()))
        .filter(|_| !reader_first);
    let destination = params.iter().find(|p| DESTINATIONS.contains(&p.as_str()));
    let changes = tool.side_effect != SideEffectClass::ReadOnly;
    let sends_out = if let Some(w) = send_word {
        why.push(format!("sends out: `{w}` in its name"));
        true
    } else if let (true, Some(p)) = (changes, destination) {
        why.push(format!("sends out: changes state and takes `{p}`"));
        true
    } else {
        false
    };
    let mut irreversible = false;
    if tool.side_effect == SideEffectClass::Irreversible {
        why.push("irreversible: side_effect irreversible".into());
        irreversible = true;
    } else if let Some(r) = needs_approval(tool, card, &name) {
        why.push(format!("irreversible: {r}"));
        irreversible = true;
    } else if DESTRUCTIVE.contains(&first) {
        why.push(format!("irreversible: `{first}` in its name"));
        irreversible = true;
    }
    let untrusted_output = !sends_out && !changes && !irreversible;
    let external = untrusted_output
        && name
            .iter()
            .chain(words(&tool.description).iter().take(8))
            .any(|w| EXTERNAL.contains(&w.as_str()));
    if untrusted_output {
        why.push(if external {
            "untrusted output: reads third-party content".into()
        } else {
            "untrusted output: reads only".into()
        });
    }
    ToolRole {
        tool: tool.name.clone(),
        untrusted_output,
        sends_out,
        irreversible,
        external,
        why,
    }
}

/// Applies one `agent.tool_roles` list: a given list decides the role for every tool.
fn apply_override(
    roles: &mut [ToolRole],
    list: Option<&Vec<String>>,
    role: &str,
    set: fn(&mut ToolRole, bool),
) {
    let Some(list) = list else { return };
    for r in roles.iter_mut() {
        let on = list.contains(&r.tool);
        set(r, on);
        r.why.retain(|w| !w.starts_with(role));
        if on {
            r.why.push(format!("{role}: agent.tool_roles"));
        }
    }
}

/// The roles of the card's tools, in card order: inferred, then `agent.tool_roles` applied.
///
/// The rules, in order: a tool whose name holds a sending word (`send`, `post`, `email`,
/// `message`, `http`, `upload`, `write`, ...) not after a reading verb (`get_messages` reads),
/// or that changes state and takes a destination (`to`, `recipient`, `url`, `channel`, ...),
/// sends out. A tool with `side_effect: irreversible`, an approval rule, a name the card's
/// `approval_required` phrases name, or a destructive first word (`delete`, `pay`,
/// `transfer`, ...) is irreversible. A tool that is neither and reads only returns untrusted
/// output; it is external when its name or description speaks of third-party content
/// (inbox, web page, document, ticket, another agent).
pub fn classify_tools(card: &AgentCard) -> Vec<ToolRole> {
    card.tools
        .iter()
        .map(|t| classify_tool_role(t, card))
        .collect()
}

/// The role of one of the card's tools, as [`classify_tools`] reads it (`agent.tool_roles`
/// applied). `redteam generate` reads its tools through this too, so that the two ways of
/// aiming attacks at a suite's tools agree on what each tool is.
pub fn classify_tool_role(tool: &ToolDef, card: &AgentCard) -> ToolRole {
    let mut roles = [classify_one(tool, card)];
    let o = &card.tool_roles;
    apply_override(
        &mut roles,
        o.untrusted_output.as_ref(),
        "untrusted output",
        |r, on| {
            r.untrusted_output = on;
            r.external = on;
        },
    );
    apply_override(&mut roles, o.sends_out.as_ref(), "sends out", |r, on| {
        r.sends_out = on
    });
    apply_override(
        &mut roles,
        o.irreversible.as_ref(),
        "irreversible",
        |r, on| r.irreversible = on,
    );
    let [role] = roles;
    role
}

/// Why a human must approve the tool's calls, if one must: its `approval:` rule, or an entry
/// of the card's `approval_required` that names what it does.
pub fn approval_reason(tool: &ToolDef, card: &AgentCard) -> Option<String> {
    needs_approval(tool, card, &words(&tool.name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, desc: &str, side: SideEffectClass, params: serde_json::Value) -> ToolDef {
        ToolDef {
            side_effect: side,
            ..ToolDef::declared(name, desc, json!({"type": "object", "properties": params}))
        }
    }

    fn card(tools: Vec<ToolDef>) -> AgentCard {
        AgentCard {
            tools,
            ..AgentCard::default()
        }
    }

    fn role<'a>(roles: &'a [ToolRole], name: &str) -> &'a ToolRole {
        roles.iter().find(|r| r.tool == name).expect("tool")
    }

    #[test]
    fn words_split_snake_kebab_and_camel_case() {
        assert_eq!(words("sendEmail"), ["send", "email"]);
        assert_eq!(words("post-to_Slack"), ["post", "to", "slack"]);
        assert_eq!(words("HTTPPost"), ["httppost"]);
    }

    #[test]
    fn readers_senders_and_irreversible_tools_are_told_apart() {
        use SideEffectClass::*;
        let c = card(vec![
            tool(
                "get_messages",
                "Read the team's chat messages.",
                ReadOnly,
                json!({}),
            ),
            tool(
                "lookup_order",
                "Look an order up.",
                ReadOnly,
                json!({"id": {}}),
            ),
            tool(
                "notify",
                "Tell someone.",
                Write,
                json!({"channel": {}, "text": {}}),
            ),
            tool(
                "store_blob",
                "Save bytes.",
                Write,
                json!({"url": {}, "data": {}}),
            ),
            tool("save_note", "Save a note.", Write, json!({"note": {}})),
            tool("wipe_disk", "Erase.", Write, json!({"disk": {}})),
        ]);
        let r = classify_tools(&c);
        let m = role(&r, "get_messages");
        assert!(m.untrusted_output && m.external && !m.sends_out, "{m:?}");
        let l = role(&r, "lookup_order");
        assert!(l.untrusted_output && !l.external, "{l:?}");
        assert!(role(&r, "notify").sends_out);
        assert!(
            role(&r, "store_blob").sends_out,
            "changes state, takes a url"
        );
        let s = role(&r, "save_note");
        assert!(
            !s.sends_out && !s.untrusted_output && !s.irreversible,
            "{s:?}"
        );
        assert!(role(&r, "wipe_disk").irreversible);
    }

    #[test]
    fn approval_required_phrases_make_a_tool_irreversible() {
        let mut c = card(vec![tool(
            "issue_refund",
            "",
            SideEffectClass::Write,
            json!({}),
        )]);
        assert!(!classify_tools(&c)[0].irreversible);
        c.approval_required = vec!["refunds over 50 EUR".into()];
        let r = classify_tools(&c);
        assert!(r[0].irreversible, "{r:?}");
        assert!(r[0].why.iter().any(|w| w.contains("refund")));
    }

    #[test]
    fn tool_roles_replace_the_inferred_sets() {
        let mut c = card(vec![
            tool("fetch_page", "", SideEffectClass::ReadOnly, json!({})),
            tool("archive", "", SideEffectClass::Write, json!({"to": {}})),
        ]);
        assert!(role(&classify_tools(&c), "archive").sends_out);
        c.tool_roles.sends_out = Some(vec![]);
        c.tool_roles.untrusted_output = Some(vec!["archive".into()]);
        let r = classify_tools(&c);
        assert!(!role(&r, "archive").sends_out);
        assert!(role(&r, "archive").untrusted_output);
        assert!(!role(&r, "fetch_page").untrusted_output);
    }
}
