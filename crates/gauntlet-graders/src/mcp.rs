//! The scan of an MCP server's listing ([`scan`]): what in its tools, prompts, resources and
//! instructions can turn an agent against its user, as [`Finding`]s with a [`Severity`].
//!
//! Everything a server lists is read by the model as instructions, so a listing is untrusted
//! input like any reply. The scan reuses the detectors the oracles use: [`fold`] (so that
//! zero-width splitting, full-width letters and curly quotes do not hide a phrase),
//! [`is_invisible`] for hidden characters, and [`markup::scan`] for exfiltration URLs. A
//! second listing of the same server (the client lists twice) shows a rug pull: a tool
//! whose description or schema changed after it was first seen.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use gauntlet_core::mcp::{McpListing, McpToolInfo};
use regex::Regex;
use serde::Serialize;
use serde_json::Value;

use crate::markup::{self, MarkupOptions};
use crate::text::{fold, is_invisible};

/// How bad a finding is. Ordered: `low < medium < high < critical`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth a look.
    Low,
    /// A weakness an attacker can use with another one.
    Medium,
    /// An attack on the agent, or a tool that can do harm unchecked.
    High,
    /// Hidden content or a change after approval: built to deceive.
    Critical,
}

impl Severity {
    /// Every severity, lowest first.
    pub const ALL: [Severity; 4] = [
        Severity::Low,
        Severity::Medium,
        Severity::High,
        Severity::Critical,
    ];

    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }

    /// Parses a lowercase name.
    pub fn parse(s: &str) -> Option<Severity> {
        Severity::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// Instructions aimed at the model: "ignore previous instructions", "do not tell the
    /// user", calls of other tools, files to read, data to send.
    HiddenInstruction,
    /// Unicode tag characters: text the user never sees and the model reads.
    UnicodeTags,
    /// Zero-width or bidirectional control characters.
    InvisibleText,
    /// A markdown image or link (or HTML) that carries data to an outside host.
    ExfiltrationUrl,
    /// A description that names another tool (of this server or a common one), or tells
    /// the model to use it instead of another.
    ToolShadowing,
    /// A tool's description or schema changed between two listings.
    RugPull,
    /// Arguments that take anything: a free-form object, or an unconstrained string named
    /// like a command, a path, a URL or a query.
    BroadSchema,
    /// A tool whose name says it deletes, sends, pays or runs things, without
    /// `destructiveHint: true` (or with `readOnlyHint: true`).
    DestructiveWithoutApproval,
}

impl FindingKind {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::HiddenInstruction => "hidden_instruction",
            FindingKind::UnicodeTags => "unicode_tags",
            FindingKind::InvisibleText => "invisible_text",
            FindingKind::ExfiltrationUrl => "exfiltration_url",
            FindingKind::ToolShadowing => "tool_shadowing",
            FindingKind::RugPull => "rug_pull",
            FindingKind::BroadSchema => "broad_schema",
            FindingKind::DestructiveWithoutApproval => "destructive_without_approval",
        }
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// What it is.
    pub kind: FindingKind,
    /// How bad.
    pub severity: Severity,
    /// What it is in: `tool`, `prompt`, `resource` or `server`.
    pub item: &'static str,
    /// The item's name (a resource's URI).
    pub name: String,
    /// What was found, in a sentence.
    pub message: String,
    /// The text that shows it: invisible characters written as `\u{...}`, at most 160
    /// characters.
    pub evidence: String,
}

/// Scans a listing, and a second listing of the same server for changes. Findings are
/// sorted by severity (worst first), then item and kind.
pub fn scan(first: &McpListing, second: Option<&McpListing>) -> Vec<Finding> {
    let mut out = Vec::new();
    let names = ToolNames::new(&first.tools);
    if let Some(text) = &first.instructions {
        text_findings(&mut out, "server", "instructions", text);
    }
    for t in &first.tools {
        for text in tool_texts(t) {
            text_findings(&mut out, "tool", &t.name, &text);
        }
        shadowing(&mut out, t, &names);
        broad_schema(&mut out, &t.name, &t.input_schema, "");
        destructive(&mut out, t);
    }
    for p in &first.prompts {
        let mut texts: Vec<&str> = p.description.as_deref().into_iter().collect();
        texts.extend(p.arguments.iter().filter_map(|a| a.description.as_deref()));
        for text in texts {
            text_findings(&mut out, "prompt", &p.name, text);
        }
    }
    for r in &first.resources {
        for text in [Some(r.name.as_str()), r.description.as_deref()]
            .into_iter()
            .flatten()
        {
            text_findings(&mut out, "resource", &r.uri, text);
        }
    }
    if let Some(second) = second {
        rug_pull(&mut out, first, second);
    }
    // One finding per kind, item and evidence: a phrase in two texts of a tool counts once.
    let mut seen = BTreeSet::new();
    out.retain(|f| seen.insert((f.kind, f.item, f.name.clone(), f.evidence.clone())));
    out.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.item.cmp(b.item))
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.kind.cmp(&b.kind))
    });
    out
}

/// The texts of a tool the model reads: title, description, and every description in its
/// argument schema (poison hides there too).
fn tool_texts(t: &McpToolInfo) -> Vec<String> {
    let mut texts: Vec<String> = [t.title.as_deref(), t.description.as_deref()]
        .into_iter()
        .flatten()
        .map(str::to_owned)
        .collect();
    if let Some(a) = &t.annotations
        && let Some(title) = &a.title
    {
        texts.push(title.clone());
    }
    schema_texts(&t.input_schema, &mut texts);
    texts
}

fn schema_texts(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            for (k, v) in o {
                match (k.as_str(), v) {
                    ("description" | "title", Value::String(s)) => out.push(s.clone()),
                    ("default" | "examples" | "enum" | "const", _) => collect_strings(v, out),
                    _ => schema_texts(v, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| schema_texts(v, out)),
        _ => {}
    }
}

fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(o) => o.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

/// Phrases that address the model rather than describe a tool, on folded text.
static INSTRUCTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(ignore|disregard|forget|override) (all |any |the |your |every )*(previous|prior|above|earlier|other|system|original) (instructions?|directions|rules|prompts?|guidelines|messages?)",
        r"|(do not|don't|never) (tell|inform|mention|reveal|show|alert|notify|say)[^.]{0,20}\b(the )?user",
        r"|without (telling|informing|notifying|alerting|asking) the user",
        r"|the user (must|should|need) not (know|see|be told|notice)",
        r"|keep (this|it) (secret|hidden|confidential) from",
        r"|\bsecretly\b|<important>|</important>|<system>|\[system\]|system (note|override|instruction|prompt)|new instructions",
        r"|before (using|calling|running|invoking) this tool,? (you )?(must |should |always |first )*(call|read|run|invoke|fetch|send|use|open)",
        r"|(you must|always|first) (call|invoke|run|use) (the )?[`'\x22]?[a-z0-9_.-]+[`'\x22]? tool",
        r"|(call|invoke) (the )?[`'\x22]?[a-z0-9_.-]+[`'\x22]? tool (first|before|after|instead|with)",
        r"|(read|open|cat|load|include|attach) (the )?(contents? of |file )*(~/|/etc/|\.ssh|\.env\b|\.aws|id_rsa|.*credentials|.*mcp\.json|.*private key)",
        r"|(send|forward|upload|post|exfiltrate|leak|copy) (it|them|this|(the |all |any |its |their )?(data|contents?|conversation|chat|history|results?|file|keys?|tokens?|secrets?|messages?)( history| contents?| log)?) to ",
        r"|(pass|put|include) (its|the|their|all) (contents?|content|keys?|tokens?) (in|as|into) (the )?[`'\x22]?[a-z0-9_]+",
    ))
    .expect("valid regex")
});

fn text_findings(out: &mut Vec<Finding>, item: &'static str, name: &str, text: &str) {
    let folded = fold(text);
    // One finding per text, quoting the first phrase: a poisoned description often has
    // several, and each would say the same.
    let phrases: Vec<regex::Match<'_>> = INSTRUCTION.find_iter(&folded).collect();
    if let Some(m) = phrases.first() {
        out.push(Finding {
            kind: FindingKind::HiddenInstruction,
            severity: Severity::High,
            item,
            name: name.to_owned(),
            message: format!(
                "addresses the model with instructions instead of describing the item ({} phrase(s))",
                phrases.len()
            ),
            evidence: around(&folded, m.start(), m.end()),
        });
    }
    // Tag characters spell ASCII the user never sees: decode it and show it.
    let tags: String = text
        .chars()
        .filter_map(|c| {
            let c = c as u32;
            (0xE0020..=0xE007E)
                .contains(&c)
                .then(|| char::from_u32(c - 0xE0000))?
        })
        .collect();
    if text
        .chars()
        .any(|c| ('\u{E0000}'..='\u{E007F}').contains(&c))
    {
        out.push(Finding {
            kind: FindingKind::UnicodeTags,
            severity: Severity::Critical,
            item,
            name: name.to_owned(),
            message: "holds Unicode tag characters: text the model reads and the user does not see"
                .into(),
            evidence: format!("hidden text: {}", clip(&tags, 140)),
        });
        let hidden = fold(&tags);
        if let Some(m) = INSTRUCTION.find(&hidden) {
            out.push(Finding {
                kind: FindingKind::HiddenInstruction,
                severity: Severity::Critical,
                item,
                name: name.to_owned(),
                message: "hides instructions to the model in Unicode tag characters".into(),
                evidence: around(&hidden, m.start(), m.end()),
            });
        }
    }
    let invisible: Vec<(usize, char)> = text
        .char_indices()
        .filter(|(_, c)| is_invisible(*c) && !('\u{E0000}'..='\u{E007F}').contains(c))
        .collect();
    if let Some(&(at, _)) = invisible.first() {
        out.push(Finding {
            kind: FindingKind::InvisibleText,
            severity: Severity::High,
            item,
            name: name.to_owned(),
            message: format!(
                "holds {} zero-width or bidirectional control character(s), which hide text from people",
                invisible.len()
            ),
            evidence: visible(&text[text.floor_char_boundary(at.saturating_sub(40))..], 160),
        });
    }
    for f in markup::scan(text, &MarkupOptions::default()) {
        out.push(Finding {
            kind: FindingKind::ExfiltrationUrl,
            severity: Severity::Critical,
            item,
            name: name.to_owned(),
            message: format!(
                "holds markup that sends data out or runs script ({})",
                f.kind.as_str()
            ),
            evidence: visible(&f.excerpt, 160),
        });
    }
}

/// Tool names agents commonly have from other servers: a description that names one is
/// reaching beyond its own tool.
const COMMON_TOOLS: &[&str] = &[
    "send_email",
    "send_message",
    "read_file",
    "write_file",
    "delete_file",
    "list_files",
    "list_directory",
    "execute_command",
    "run_command",
    "run_shell",
    "shell_exec",
    "bash",
    "http_request",
    "web_search",
    "web_fetch",
    "browser_navigate",
    "create_issue",
    "transfer_funds",
    "make_payment",
];

static OVERRIDE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"instead of (the |using )?[`'\x22]?[a-z0-9_.-]+",
        r"|(overrides?|replaces?|supersedes?|takes precedence over|shadows?) (the |any |all )?[`'\x22]?[a-z0-9_.-]+",
        r"|(do not|don't|never) (use|call|invoke) (the |any )?[`'\x22]?[a-z0-9_.-]+",
        r"|(when|whenever|if) (the user|you) (asks?|wants?|needs?) to [a-z ]{1,40}, (use|call) this",
        r"|in place of (the )?[`'\x22]?[a-z0-9_.-]+",
    ))
    .expect("valid regex")
});

/// The names a description may not speak of: the server's other tools (longer than two
/// characters) in listing order, then [`COMMON_TOOLS`], found in one pass over a text
/// whatever their number (a server may list thousands of tools).
struct ToolNames {
    /// Lowercase, each once, in the order they are preferred when several are named.
    names: Vec<String>,
    finder: Option<aho_corasick::AhoCorasick>,
}

/// Longer names are no tool's names a description could plausibly speak of, and would let
/// a hostile server make the overlapping search slow.
const NAME_MAX: usize = 128;

/// Matches looked at in one description: enough for any real text; a hostile one stops here.
const MATCHES_MAX: usize = 100_000;

impl ToolNames {
    fn new(tools: &[McpToolInfo]) -> ToolNames {
        let mut seen = std::collections::HashSet::new();
        let names: Vec<String> = tools
            .iter()
            .map(|t| t.name.to_lowercase())
            .filter(|n| n.len() > 2)
            .chain(COMMON_TOOLS.iter().map(|n| (*n).to_owned()))
            .filter(|n| n.len() <= NAME_MAX && seen.insert(n.clone()))
            .collect();
        let finder = aho_corasick::AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::Standard)
            .build(&names)
            .ok();
        ToolNames { names, finder }
    }

    /// The preferred name other than `own` that `folded` speaks of as a word (not inside
    /// a longer name: no letter, digit or underscore on either side), with where.
    fn named_in(&self, folded: &str, own: &str) -> Option<(usize, usize, &str)> {
        let word = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
        let bytes = folded.as_bytes();
        let mut best: Option<(usize, usize, usize)> = None;
        for m in self
            .finder
            .as_ref()?
            .find_overlapping_iter(folded)
            .take(MATCHES_MAX)
        {
            let i = m.pattern().as_usize();
            if best.is_some_and(|(b, ..)| b <= i) || self.names[i] == own {
                continue;
            }
            let before = m.start().checked_sub(1).and_then(|k| bytes.get(k));
            if !word(before) && !word(bytes.get(m.end())) {
                best = Some((i, m.start(), m.end()));
            }
        }
        best.map(|(i, start, end)| (start, end, self.names[i].as_str()))
    }
}

fn shadowing(out: &mut Vec<Finding>, t: &McpToolInfo, names: &ToolNames) {
    let Some(desc) = &t.description else {
        return;
    };
    let folded = fold(desc);
    let own = t.name.to_lowercase();
    let named = names.named_in(&folded, &own);
    let overriding = OVERRIDE.find(&folded);
    if let Some((start, end, other)) = named {
        let (severity, message) = if overriding.is_some() {
            (
                Severity::High,
                format!(
                    "names the tool `{other}` and tells the model to use this one in its place"
                ),
            )
        } else {
            (
                Severity::Medium,
                format!(
                    "names another tool, `{other}`: a description should speak of its own tool only"
                ),
            )
        };
        out.push(Finding {
            kind: FindingKind::ToolShadowing,
            severity,
            item: "tool",
            name: t.name.clone(),
            message,
            evidence: around(&folded, start, end),
        });
    } else if let Some(m) = overriding {
        out.push(Finding {
            kind: FindingKind::ToolShadowing,
            severity: Severity::High,
            item: "tool",
            name: t.name.clone(),
            message: "tells the model to use this tool in place of another".into(),
            evidence: around(&folded, m.start(), m.end()),
        });
    }
}

/// Argument names that, as free strings, let a caller run or reach anything.
const RISKY_ARGS: &[(&str, Severity)] = &[
    ("command", Severity::High),
    ("cmd", Severity::High),
    ("shell", Severity::High),
    ("script", Severity::High),
    ("code", Severity::High),
    ("exec", Severity::High),
    ("sql", Severity::High),
    ("statement", Severity::High),
    ("expression", Severity::High),
    ("eval", Severity::High),
    ("path", Severity::Medium),
    ("file", Severity::Medium),
    ("filename", Severity::Medium),
    ("filepath", Severity::Medium),
    ("file_path", Severity::Medium),
    ("dir", Severity::Medium),
    ("directory", Severity::Medium),
    ("url", Severity::Medium),
    ("uri", Severity::Medium),
    ("endpoint", Severity::Medium),
    ("host", Severity::Medium),
    ("query", Severity::Medium),
];

fn broad_schema(out: &mut Vec<Finding>, tool: &str, schema: &Value, at: &str) {
    let Some(o) = schema.as_object() else {
        return;
    };
    let is_object = o.get("type").and_then(Value::as_str) == Some("object")
        || (o.get("type").is_none() && at.is_empty());
    if is_object {
        let props = o.get("properties").and_then(Value::as_object);
        let extra = o.get("additionalProperties");
        let open = match extra {
            Some(Value::Bool(b)) => *b,
            Some(Value::Object(s)) => s.is_empty(),
            Some(_) => false,
            // Without `additionalProperties`, an object that declares no properties takes
            // anything (`properties: {}` is how a tool says it takes no arguments).
            None => !o.contains_key("properties") && !o.contains_key("patternProperties"),
        };
        if open {
            let place = if at.is_empty() {
                "the arguments object".to_owned()
            } else {
                format!("`{at}`")
            };
            out.push(Finding {
                kind: FindingKind::BroadSchema,
                severity: Severity::Medium,
                item: "tool",
                name: tool.to_owned(),
                message: format!("{place} is a free-form object: any keys and values are accepted"),
                evidence: visible(&Value::Object(o.clone()).to_string(), 160),
            });
        }
        if let Some(props) = props {
            for (k, v) in props {
                let path = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                string_arg(out, tool, k, v, &path);
                broad_schema(out, tool, v, &path);
            }
        }
    }
    if let Some(items) = o.get("items") {
        broad_schema(out, tool, items, &format!("{at}[]"));
    }
}

fn string_arg(out: &mut Vec<Finding>, tool: &str, key: &str, v: &Value, path: &str) {
    let Some(o) = v.as_object() else {
        return;
    };
    let is_string = match o.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
        None => true,
        _ => false,
    };
    let constrained = ["enum", "const", "pattern"]
        .iter()
        .any(|k| o.contains_key(*k));
    if !is_string || constrained {
        return;
    }
    let key = key.to_lowercase();
    let hit = RISKY_ARGS.iter().find(|(n, _)| {
        key == *n || key.ends_with(&format!("_{n}")) || key.starts_with(&format!("{n}_"))
    });
    if let Some((n, severity)) = hit {
        out.push(Finding {
            kind: FindingKind::BroadSchema,
            severity: *severity,
            item: "tool",
            name: tool.to_owned(),
            message: format!(
                "`{path}` is a free string taken as a {n}, with no `enum`, `const` or `pattern` to bound it"
            ),
            evidence: visible(&Value::Object(o.clone()).to_string(), 160),
        });
    }
}

/// Words in a tool's name that say a call changes or sends something it cannot take back.
const DESTRUCTIVE: &[&str] = &[
    "delete",
    "del",
    "remove",
    "rm",
    "drop",
    "truncate",
    "destroy",
    "wipe",
    "erase",
    "purge",
    "kill",
    "terminate",
    "shutdown",
    "transfer",
    "send",
    "pay",
    "payment",
    "refund",
    "withdraw",
    "exec",
    "execute",
    "run",
    "shell",
    "overwrite",
    "reset",
    "revoke",
    "deploy",
    "publish",
    "format",
    "unlink",
    "rmdir",
];

/// A name's words: `deleteUserFiles`, `delete-user` and `delete_user` all give `delete`.
fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

fn destructive(out: &mut Vec<Finding>, t: &McpToolInfo) {
    let words = name_words(&t.name);
    let Some(verb) = words.iter().find(|w| DESTRUCTIVE.contains(&w.as_str())) else {
        return;
    };
    let a = t.annotations.clone().unwrap_or_default();
    if a.destructive_hint == Some(true) && a.read_only_hint != Some(true) {
        return;
    }
    let (severity, message) = if a.read_only_hint == Some(true) {
        (
            Severity::High,
            format!(
                "its name says it will {verb}, yet it is annotated `readOnlyHint: true`, so a client may run it without asking"
            ),
        )
    } else {
        (
            Severity::Medium,
            format!(
                "its name says it will {verb}, and it lacks `destructiveHint: true`, so a client will not ask for approval"
            ),
        )
    };
    out.push(Finding {
        kind: FindingKind::DestructiveWithoutApproval,
        severity,
        item: "tool",
        name: t.name.clone(),
        message,
        evidence: format!(
            "annotations: {}",
            t.annotations
                .as_ref()
                .and_then(|a| serde_json::to_string(a).ok())
                .unwrap_or_else(|| "none".into())
        ),
    });
}

fn rug_pull(out: &mut Vec<Finding>, first: &McpListing, second: &McpListing) {
    // By name, first listed wins: a listing of thousands of tools is compared in one pass.
    fn index(l: &McpListing) -> std::collections::HashMap<&str, &McpToolInfo> {
        let mut m = std::collections::HashMap::with_capacity(l.tools.len());
        for t in &l.tools {
            m.entry(t.name.as_str()).or_insert(t);
        }
        m
    }
    let (before, after) = (index(first), index(second));
    for t2 in &second.tools {
        let Some(t1) = before.get(t2.name.as_str()).copied() else {
            out.push(Finding {
                kind: FindingKind::RugPull,
                severity: Severity::Medium,
                item: "tool",
                name: t2.name.clone(),
                message: "appeared in the second listing only".into(),
                evidence: visible(t2.description.as_deref().unwrap_or(""), 160),
            });
            continue;
        };
        if t1.description != t2.description {
            out.push(Finding {
                kind: FindingKind::RugPull,
                severity: Severity::Critical,
                item: "tool",
                name: t2.name.clone(),
                message: "its description changed between two listings: what was approved is not what runs".into(),
                evidence: visible(
                    &format!(
                        "first: {} | then: {}",
                        t1.description.as_deref().unwrap_or(""),
                        t2.description.as_deref().unwrap_or("")
                    ),
                    160,
                ),
            });
            // What it changed into is what the model will read: scan that too.
            if let Some(d) = &t2.description {
                text_findings(out, "tool", &t2.name, d);
            }
        }
        if t1.input_schema != t2.input_schema {
            out.push(Finding {
                kind: FindingKind::RugPull,
                severity: Severity::Critical,
                item: "tool",
                name: t2.name.clone(),
                message: "its argument schema changed between two listings".into(),
                evidence: visible(&t2.input_schema.to_string(), 160),
            });
        }
    }
    for t1 in &first.tools {
        if !after.contains_key(t1.name.as_str()) {
            out.push(Finding {
                kind: FindingKind::RugPull,
                severity: Severity::Medium,
                item: "tool",
                name: t1.name.clone(),
                message: "was gone from the second listing".into(),
                evidence: String::new(),
            });
        }
    }
}

/// Up to 160 characters around a match, with invisible characters made visible.
fn around(text: &str, start: usize, end: usize) -> String {
    let from = text.floor_char_boundary(start.saturating_sub(40));
    let to = text.ceil_char_boundary((end + 60).min(text.len()));
    visible(&text[from..to], 160)
}

/// Text with invisible and control characters written as `\u{...}`, cut to `n` characters.
pub fn visible(text: &str, n: usize) -> String {
    let shown: String = text
        .chars()
        .map(|c| {
            if is_invisible(c) || c.is_control() {
                format!("\\u{{{:X}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect();
    clip(&shown, n)
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        let mut out: String = s.chars().take(n.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

#[cfg(test)]
mod tests;
