//! Compliance maps: which entries of public frameworks a security case stands for. A
//! [`Framework`] (the OWASP Top 10 for LLM Applications 2025, the OWASP Top 10 for Agentic
//! Applications 2026, MITRE ATLAS, the NIST AI RMF 1.0 and the EU AI Act) has a catalog of
//! the entries gauntlet maps ([`Entry`]); [`map`] turns a case's OWASP category and technique
//! into its references ([`Ref`]), by two tables of data: one row per OWASP category (what
//! every case of the category stands for) and one row per technique (what the technique
//! adds). Reports fold the references into coverage tables, SARIF carries them as tags and
//! `--framework` selects cases by them ([`Selector`]).
//!
//! The mapping reads only the category and the technique, so a suite of your own that names
//! them is mapped the same way as the built-in corpus; a case with no category has none.
//! Sources and versions are in `docs/redteam.md` ("Compliance maps").

use std::fmt;

/// A framework a case can be mapped to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Framework {
    /// OWASP Top 10 for LLM Applications, 2025 (`LLM01` ... `LLM10`).
    OwaspLlm,
    /// OWASP Top 10 for Agentic Applications, 2026 edition (`ASI01` ... `ASI10`).
    OwaspAgentic,
    /// MITRE ATLAS techniques (`AML.T0051`, `AML.T0051.001`, ...).
    Atlas,
    /// NIST AI RMF 1.0 (NIST AI 100-1) subcategories (`MEASURE 2.7`, ...).
    NistAiRmf,
    /// The EU AI Act, Regulation (EU) 2024/1689, by article (`Art. 15`, ...).
    EuAiAct,
}

/// One entry of a framework's catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The id as the framework writes it.
    pub id: &'static str,
    /// Its title.
    pub title: &'static str,
}

const fn e(id: &'static str, title: &'static str) -> Entry {
    Entry { id, title }
}

/// The OWASP Top 10 for LLM Applications 2025.
const OWASP_LLM: &[Entry] = &[
    e("LLM01", "Prompt Injection"),
    e("LLM02", "Sensitive Information Disclosure"),
    e("LLM03", "Supply Chain"),
    e("LLM04", "Data and Model Poisoning"),
    e("LLM05", "Improper Output Handling"),
    e("LLM06", "Excessive Agency"),
    e("LLM07", "System Prompt Leakage"),
    e("LLM08", "Vector and Embedding Weaknesses"),
    e("LLM09", "Misinformation"),
    e("LLM10", "Unbounded Consumption"),
];

/// The OWASP Top 10 for Agentic Applications 2026.
const OWASP_AGENTIC: &[Entry] = &[
    e("ASI01", "Agent Goal Hijack"),
    e("ASI02", "Tool Misuse and Exploitation"),
    e("ASI03", "Identity and Privilege Abuse"),
    e("ASI04", "Agentic Supply Chain Vulnerabilities"),
    e("ASI05", "Unexpected Code Execution"),
    e("ASI06", "Memory and Context Poisoning"),
    e("ASI07", "Insecure Inter-Agent Communication"),
    e("ASI08", "Cascading Failures"),
    e("ASI09", "Human-Agent Trust Exploitation"),
    e("ASI10", "Rogue Agents"),
];

/// The ATLAS techniques the corpus maps to, sorted by id (titles as ATLAS names them now).
const ATLAS: &[Entry] = &[
    e("AML.T0029", "Denial of AI Service"),
    e("AML.T0034", "Cost Harvesting"),
    e("AML.T0048", "External Harms"),
    e("AML.T0048.003", "External Harms: User Harm"),
    e("AML.T0050", "Command and Scripting Interpreter"),
    e("AML.T0051", "LLM Prompt Injection"),
    e("AML.T0051.000", "LLM Prompt Injection: Direct"),
    e("AML.T0051.001", "LLM Prompt Injection: Indirect"),
    e(
        "AML.T0052.000",
        "Phishing: Spearphishing via Social Engineering LLM",
    ),
    e("AML.T0053", "AI Agent Tool Invocation"),
    e("AML.T0054", "LLM Jailbreak"),
    e("AML.T0056", "Extract LLM System Prompt"),
    e("AML.T0057", "LLM Data Leakage"),
    e("AML.T0067", "LLM Trusted Output Components Manipulation"),
    e("AML.T0068", "LLM Prompt Obfuscation"),
    e("AML.T0070", "RAG Poisoning"),
    e("AML.T0077", "LLM Response Rendering"),
    e("AML.T0080", "AI Agent Context Poisoning"),
    e("AML.T0080.000", "AI Agent Context Poisoning: Memory"),
    e("AML.T0080.001", "AI Agent Context Poisoning: Thread"),
    e("AML.T0086", "Exfiltration via AI Agent Tool Invocation"),
    e("AML.T0099", "AI Agent Tool Data Poisoning"),
];

/// The NIST AI RMF 1.0 subcategories the corpus maps to.
const NIST: &[Entry] = &[
    e(
        "MAP 3.5",
        "Processes for human oversight are defined, assessed, and documented",
    ),
    e(
        "MEASURE 2.5",
        "The AI system is demonstrated to be valid and reliable",
    ),
    e(
        "MEASURE 2.6",
        "The AI system is evaluated regularly for safety risks",
    ),
    e(
        "MEASURE 2.7",
        "AI system security and resilience are evaluated and documented",
    ),
    e(
        "MEASURE 2.10",
        "Privacy risk of the AI system is examined and documented",
    ),
];

/// The EU AI Act articles the corpus maps to.
const EU: &[Entry] = &[
    e("Art. 14", "Human oversight"),
    e("Art. 15", "Accuracy, robustness and cybersecurity"),
];

impl Framework {
    /// Every framework, in the order reports list them.
    pub const ALL: [Framework; 5] = [
        Framework::OwaspLlm,
        Framework::OwaspAgentic,
        Framework::Atlas,
        Framework::NistAiRmf,
        Framework::EuAiAct,
    ];

    /// The name as `--framework`, tags and reports write it.
    pub fn key(self) -> &'static str {
        match self {
            Framework::OwaspLlm => "owasp-llm",
            Framework::OwaspAgentic => "owasp-agentic",
            Framework::Atlas => "atlas",
            Framework::NistAiRmf => "nist-ai-rmf",
            Framework::EuAiAct => "eu-ai-act",
        }
    }

    /// The framework's name and version.
    pub fn title(self) -> &'static str {
        match self {
            Framework::OwaspLlm => "OWASP Top 10 for LLM Applications 2025",
            Framework::OwaspAgentic => "OWASP Top 10 for Agentic Applications 2026",
            Framework::Atlas => "MITRE ATLAS",
            Framework::NistAiRmf => "NIST AI RMF 1.0 (AI 100-1)",
            Framework::EuAiAct => "EU AI Act (Regulation (EU) 2024/1689)",
        }
    }

    /// The framework named `name` (its key, or a common short name), if any.
    pub fn parse(name: &str) -> Option<Framework> {
        match name.trim().to_ascii_lowercase().as_str() {
            "owasp-llm" | "owasp" | "llm" => Some(Framework::OwaspLlm),
            "owasp-agentic" | "agentic" | "asi" => Some(Framework::OwaspAgentic),
            "atlas" | "mitre-atlas" => Some(Framework::Atlas),
            "nist-ai-rmf" | "nist" | "ai-rmf" => Some(Framework::NistAiRmf),
            "eu-ai-act" | "eu" | "ai-act" => Some(Framework::EuAiAct),
            _ => None,
        }
    }

    /// The entries gauntlet maps to (the whole list for the two OWASP ones).
    pub fn entries(self) -> &'static [Entry] {
        match self {
            Framework::OwaspLlm => OWASP_LLM,
            Framework::OwaspAgentic => OWASP_AGENTIC,
            Framework::Atlas => ATLAS,
            Framework::NistAiRmf => NIST,
            Framework::EuAiAct => EU,
        }
    }

    /// The catalog entry written `id` in any of the accepted spellings (`MEASURE-2.7`,
    /// `measure 2.7`; `Art.15`, `article 15`; case-insensitive).
    pub fn entry(self, id: &str) -> Option<&'static Entry> {
        let want = normalise(id);
        self.entries().iter().find(|e| normalise(e.id) == want)
    }
}

impl fmt::Display for Framework {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// An id in the form that compares: lower case, no spaces, hyphens or underscores, and
/// `article`/`art.` as `art`.
fn normalise(id: &str) -> String {
    let s: String = id
        .to_ascii_lowercase()
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '_'))
        .collect();
    let s = s.replace("article", "art");
    match s.strip_prefix("art.") {
        Some(rest) => format!("art{rest}"),
        None => s,
    }
}

/// One reference: a case stands for this entry of this framework. References sort by
/// framework, then in the framework's catalog order (`MEASURE 2.5` before `MEASURE 2.10`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ref {
    /// The framework.
    pub framework: Framework,
    /// The entry's id, as the framework writes it.
    pub id: &'static str,
}

impl Ord for Ref {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let pos = |r: &Ref| {
            r.framework
                .entries()
                .iter()
                .position(|e| e.id == r.id)
                .unwrap_or(usize::MAX)
        };
        (self.framework, pos(self), self.id).cmp(&(other.framework, pos(other), other.id))
    }
}

impl PartialOrd for Ref {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ref {
    /// The entry's title.
    pub fn title(&self) -> &'static str {
        self.framework.entry(self.id).map_or("", |e| e.title)
    }

    /// The id without spaces, as tags and `--framework` write it (`MEASURE-2.7`, `Art.15`).
    pub fn slug(&self) -> String {
        self.id.replace(". ", ".").replace(' ', "-")
    }

    /// The SARIF tag, after the convention of CodeQL's `external/cwe/cwe-079`:
    /// `external/atlas/AML.T0051.001`.
    pub fn tag(&self) -> String {
        format!("external/{}/{}", self.framework.key(), self.slug())
    }
}

impl fmt::Display for Ref {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.framework.key(), self.slug())
    }
}

/// What a category or a technique stands for, beyond the category itself.
struct Row {
    /// OWASP LLM Top 10 ids.
    llm: &'static [&'static str],
    /// OWASP Agentic Top 10 ids.
    asi: &'static [&'static str],
    /// ATLAS technique ids.
    atlas: &'static [&'static str],
    /// NIST AI RMF subcategories.
    nist: &'static [&'static str],
    /// EU AI Act articles.
    eu: &'static [&'static str],
}

const fn row(
    llm: &'static [&'static str],
    asi: &'static [&'static str],
    atlas: &'static [&'static str],
    nist: &'static [&'static str],
    eu: &'static [&'static str],
) -> Row {
    Row {
        llm,
        asi,
        atlas,
        nist,
        eu,
    }
}

/// Every attack is a test of security and resilience (NIST MEASURE 2.7) and of the
/// robustness and cybersecurity the EU AI Act asks of a high-risk system (Art. 15).
const SEC: &[&str] = &["MEASURE 2.7"];
const ART15: &[&str] = &["Art. 15"];

/// What every case of an OWASP category stands for.
const CATEGORY_MAP: &[(&str, Row)] = &[
    ("LLM01", row(&[], &[], &["AML.T0051"], SEC, ART15)),
    (
        "LLM02",
        row(
            &[],
            &[],
            &["AML.T0057"],
            &["MEASURE 2.7", "MEASURE 2.10"],
            ART15,
        ),
    ),
    (
        "LLM05",
        row(&[], &[], &["AML.T0051.000", "AML.T0048.003"], SEC, ART15),
    ),
    (
        "LLM06",
        row(
            &[],
            &[],
            &["AML.T0051.000", "AML.T0053"],
            &["MEASURE 2.7", "MAP 3.5"],
            &["Art. 14", "Art. 15"],
        ),
    ),
    (
        "LLM07",
        row(&[], &[], &["AML.T0051.000", "AML.T0056"], SEC, ART15),
    ),
    (
        "LLM09",
        row(&[], &[], &["AML.T0048.003"], &["MEASURE 2.5"], ART15),
    ),
    (
        "LLM10",
        row(
            &[],
            &[],
            &["AML.T0029", "AML.T0034"],
            &["MEASURE 2.7", "MEASURE 2.6"],
            ART15,
        ),
    ),
    (
        "ASI01",
        row(
            &["LLM01", "LLM06"],
            &[],
            &["AML.T0051.001", "AML.T0053"],
            SEC,
            ART15,
        ),
    ),
    ("ASI02", row(&["LLM06"], &[], &["AML.T0053"], SEC, ART15)),
    (
        "ASI03",
        row(
            &["LLM06"],
            &[],
            &["AML.T0051.000", "AML.T0053"],
            &["MEASURE 2.7", "MAP 3.5"],
            &["Art. 14", "Art. 15"],
        ),
    ),
    (
        "ASI05",
        row(
            &["LLM05", "LLM06"],
            &[],
            &["AML.T0050", "AML.T0053"],
            SEC,
            ART15,
        ),
    ),
    ("ASI06", row(&["LLM01"], &[], &["AML.T0080"], SEC, ART15)),
    (
        "ASI07",
        row(
            &["LLM01", "LLM06"],
            &[],
            &["AML.T0051.001", "AML.T0053"],
            SEC,
            ART15,
        ),
    ),
    (
        "ASI09",
        row(
            &["LLM09"],
            &[],
            &["AML.T0048.003"],
            &["MEASURE 2.7", "MEASURE 2.6"],
            ART15,
        ),
    ),
];

const NONE: &[&str] = &[];
const DIRECT: &[&str] = &["AML.T0051.000"];
const JAILBREAK: &[&str] = &["AML.T0051.000", "AML.T0054"];
const OBFUSCATED: &[&str] = &["AML.T0051.000", "AML.T0068"];
const INDIRECT: &[&str] = &["AML.T0051.001"];
const RAG: &[&str] = &["AML.T0051.001", "AML.T0070"];
const TOOL_DATA: &[&str] = &["AML.T0051.001", "AML.T0099"];
const RENDER: &[&str] = &["AML.T0077"];
const EXFIL_TOOL: &[&str] = &["AML.T0086"];
const OVERSIGHT_NIST: &[&str] = &["MAP 3.5"];
const OVERSIGHT_EU: &[&str] = &["Art. 14"];
const PRIVACY: &[&str] = &["MEASURE 2.10"];
const PHISHING: &[&str] = &["AML.T0052.000"];

/// A technique that adds only ATLAS ids.
const fn atlas(ids: &'static [&'static str]) -> Row {
    row(NONE, NONE, ids, NONE, NONE)
}

/// What a technique adds to its category's row, sorted by technique. A technique of an LLM
/// category that acts through tools names the agentic entry it is an instance of.
const TECHNIQUE_MAP: &[(&str, Row)] = &[
    (
        "account-enumeration",
        row(NONE, NONE, DIRECT, PRIVACY, NONE),
    ),
    ("approval-bypass", row(NONE, &["ASI03"], NONE, NONE, NONE)),
    (
        "approval-threshold-splitting",
        row(NONE, &["ASI02"], NONE, NONE, NONE),
    ),
    (
        "argument-injection",
        row(&["LLM05"], NONE, DIRECT, NONE, NONE),
    ),
    ("argument-range-abuse", atlas(DIRECT)),
    ("argument-smuggling", atlas(DIRECT)),
    ("authority-impersonation", atlas(JAILBREAK)),
    ("authority-impersonation-draft", atlas(PHISHING)),
    (
        "bulk-destructive-action",
        row(NONE, &["ASI02"], NONE, NONE, NONE),
    ),
    ("code-eval-request", atlas(DIRECT)),
    ("context-summary-poisoning", atlas(&["AML.T0080.001"])),
    (
        "credential-solicitation",
        row(NONE, NONE, PHISHING, PRIVACY, NONE),
    ),
    ("crescendo-backtracking", atlas(JAILBREAK)),
    ("crescendo-instructions", atlas(JAILBREAK)),
    ("crescendo-markup", atlas(JAILBREAK)),
    ("crescendo-secret", atlas(JAILBREAK)),
    ("crescendo-tool-misuse", atlas(JAILBREAK)),
    ("data-uri-link", atlas(RENDER)),
    (
        "delegation-escalation",
        row(NONE, NONE, NONE, OVERSIGHT_NIST, OVERSIGHT_EU),
    ),
    ("delimiter-confusion", atlas(DIRECT)),
    ("direct-override", atlas(DIRECT)),
    ("document-goal-hijack", atlas(RAG)),
    ("encoded-instruction", atlas(OBFUSCATED)),
    (
        "exfiltration-via-tool-arguments",
        row(&["LLM02"], NONE, EXFIL_TOOL, NONE, NONE),
    ),
    ("fake-system-message", atlas(DIRECT)),
    ("fake-urgency-notice", atlas(PHISHING)),
    ("false-assurance", atlas(&["AML.T0067"])),
    ("false-history-injection", atlas(&["AML.T0080.001"])),
    ("false-memory-claim", atlas(&["AML.T0080.000"])),
    ("false-premise-confirmation", atlas(DIRECT)),
    (
        "forged-approval-chain",
        row(NONE, NONE, NONE, OVERSIGHT_NIST, OVERSIGHT_EU),
    ),
    ("form-credential-harvest", atlas(RENDER)),
    ("hypothetical-framing", atlas(JAILBREAK)),
    ("image-beacon", atlas(RENDER)),
    ("inbox-content-hijack", atlas(TOOL_DATA)),
    ("indirect-injection-quoted-content", atlas(INDIRECT)),
    ("many-shot-priming", atlas(JAILBREAK)),
    ("markdown-image-exfiltration", atlas(RENDER)),
    ("markdown-link-exfiltration", atlas(RENDER)),
    ("mass-action", row(NONE, &["ASI02"], NONE, NONE, NONE)),
    ("memory-write-poisoning", atlas(&["AML.T0080.000"])),
    (
        "misleading-approval-request",
        row(NONE, NONE, &["AML.T0067"], OVERSIGHT_NIST, OVERSIGHT_EU),
    ),
    ("multi-turn-escalation", atlas(JAILBREAK)),
    ("multi-turn-rule-planting", atlas(&["AML.T0080.001"])),
    (
        "off-policy-harmful-request",
        row(NONE, NONE, JAILBREAK, &["MEASURE 2.6"], NONE),
    ),
    (
        "outbound-message-abuse",
        row(NONE, &["ASI02"], NONE, NONE, NONE),
    ),
    ("payload-splitting", atlas(OBFUSCATED)),
    ("phishing-message-draft", atlas(PHISHING)),
    ("pii-harvest", row(NONE, NONE, DIRECT, PRIVACY, NONE)),
    ("poisoned-agent-response", atlas(TOOL_DATA)),
    ("poisoned-knowledge-document", atlas(RAG)),
    (
        "poisoned-memory-recall",
        atlas(&["AML.T0080.000", "AML.T0099"]),
    ),
    ("prefix-injection", atlas(JAILBREAK)),
    (
        "privilege-escalation",
        row(NONE, &["ASI03"], NONE, NONE, NONE),
    ),
    ("privileged-mode-claim", atlas(JAILBREAK)),
    ("rag-css-hidden", atlas(RAG)),
    ("rag-document-metadata", atlas(RAG)),
    ("rag-hidden-styled-text", atlas(RAG)),
    ("rag-html-comment", atlas(RAG)),
    ("rag-markdown-alt-text", atlas(RAG)),
    ("rag-poisoned-secondary-source", atlas(RAG)),
    (
        "rag-tool-instruction",
        row(
            NONE,
            &["ASI01"],
            &["AML.T0051.001", "AML.T0070", "AML.T0053"],
            NONE,
            NONE,
        ),
    ),
    (
        "rag-unicode-tags",
        atlas(&["AML.T0051.001", "AML.T0070", "AML.T0068"]),
    ),
    (
        "rag-zero-width",
        atlas(&["AML.T0051.001", "AML.T0070", "AML.T0068"]),
    ),
    ("refusal-suppression", atlas(JAILBREAK)),
    ("role-play", atlas(JAILBREAK)),
    ("scope-expansion", row(NONE, &["ASI02"], NONE, NONE, NONE)),
    (
        "simulated-tool-abuse",
        row(NONE, &["ASI02"], NONE, NONE, NONE),
    ),
    ("spoofed-agent-message", atlas(DIRECT)),
    ("spreadsheet-formula-injection", atlas(INDIRECT)),
    (
        "standing-permission-claim",
        row(NONE, &["ASI03"], NONE, NONE, NONE),
    ),
    ("structured-data-injection", atlas(INDIRECT)),
    ("third-party-pii", row(NONE, NONE, DIRECT, PRIVACY, NONE)),
    (
        "tool-chaining-exfiltration",
        row(&["LLM02"], NONE, EXFIL_TOOL, NONE, NONE),
    ),
    (
        "tool-failure-success-claim",
        row(NONE, &["ASI09"], &["AML.T0067"], NONE, NONE),
    ),
    (
        "tool-loop-abuse",
        row(&["LLM10"], NONE, &["AML.T0034"], NONE, NONE),
    ),
    (
        "tool-output-argument-injection",
        row(&["LLM01"], NONE, TOOL_DATA, NONE, NONE),
    ),
    (
        "tool-output-command-injection",
        row(&["LLM01"], NONE, TOOL_DATA, NONE, NONE),
    ),
    (
        "tool-output-exfiltration",
        atlas(&["AML.T0051.001", "AML.T0099", "AML.T0086"]),
    ),
    ("tool-output-task-redirect", atlas(TOOL_DATA)),
    ("translation-smuggling", atlas(OBFUSCATED)),
    ("unsafe-reassurance", atlas(&["AML.T0067"])),
    (
        "unverified-ownership",
        row(NONE, &["ASI03"], NONE, NONE, NONE),
    ),
    ("urgency-pressure", row(NONE, &["ASI02"], NONE, NONE, NONE)),
    ("virtualization", atlas(JAILBREAK)),
    ("wildcard-arguments", atlas(DIRECT)),
];

fn lookup<'a>(table: &'a [(&str, Row)], key: &str) -> Option<&'a Row> {
    table.iter().find(|(k, _)| *k == key).map(|(_, r)| r)
}

/// The references of a case with this OWASP category and technique: the category itself,
/// its category's row and its technique's, without repeats, in framework order and each
/// framework's catalog order. A category that is no OWASP id maps nothing.
pub fn map(owasp: Option<&str>, technique: Option<&str>) -> Vec<Ref> {
    let Some(cat) = owasp else {
        return Vec::new();
    };
    let own = if cat.starts_with("ASI") {
        Framework::OwaspAgentic
    } else {
        Framework::OwaspLlm
    };
    let Some(own_entry) = own.entry(cat) else {
        return Vec::new();
    };
    let mut out = vec![Ref {
        framework: own,
        id: own_entry.id,
    }];
    let rows = [
        lookup(CATEGORY_MAP, cat),
        technique.and_then(|t| lookup(TECHNIQUE_MAP, t)),
    ];
    for r in rows.into_iter().flatten() {
        for (framework, ids) in [
            (Framework::OwaspLlm, r.llm),
            (Framework::OwaspAgentic, r.asi),
            (Framework::Atlas, r.atlas),
            (Framework::NistAiRmf, r.nist),
            (Framework::EuAiAct, r.eu),
        ] {
            for id in ids {
                // The tables hold catalog ids only (a test holds them to it).
                if let Some(e) = framework.entry(id) {
                    out.push(Ref {
                        framework,
                        id: e.id,
                    });
                }
            }
        }
    }
    out.sort();
    out.dedup();
    // A sub-technique replaces its parent: a case mapped to `AML.T0051.001` through its
    // technique is not also counted under `AML.T0051` through its category (a selector of
    // the parent still takes it, see `Selector::selects`).
    let parents: Vec<&'static str> = out
        .iter()
        .filter_map(|r| {
            r.id.rsplit_once('.')
                .map(|(p, _)| p)
                .filter(|_| r.framework == Framework::Atlas)
        })
        .collect();
    out.retain(|r| r.framework != Framework::Atlas || !parents.contains(&r.id));
    out
}

/// A `--framework` value: a framework, and optionally one of its ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selector {
    /// The framework.
    pub framework: Framework,
    /// The entry, when one was named.
    pub entry: Option<&'static Entry>,
}

/// Why a `--framework` value selects nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// A framework gauntlet does not map to.
    #[error(
        "unknown framework `{0}`; use one of: owasp-llm, owasp-agentic, atlas, nist-ai-rmf, eu-ai-act (optionally with :ID)"
    )]
    UnknownFramework(String),
    /// An id no case of gauntlet's maps to.
    #[error("no case maps to {framework}:{id}; the ids gauntlet maps in {framework} are: {known}")]
    UnknownId {
        /// The framework.
        framework: Framework,
        /// The id as written.
        id: String,
        /// The ids it maps.
        known: String,
    },
}

impl Selector {
    /// Parses `NAME` or `NAME:ID` (`atlas`, `atlas:AML.T0051`, `nist-ai-rmf:MEASURE-2.7`).
    pub fn parse(s: &str) -> Result<Selector, SelectorError> {
        let (name, id) = match s.split_once(':') {
            Some((n, i)) => (n, Some(i.trim())),
            None => (s, None),
        };
        let framework =
            Framework::parse(name).ok_or_else(|| SelectorError::UnknownFramework(name.into()))?;
        let entry = match id.filter(|i| !i.is_empty()) {
            None => None,
            Some(id) => Some(framework.entry(id).ok_or_else(|| {
                SelectorError::UnknownId {
                    framework,
                    id: id.to_owned(),
                    known: framework
                        .entries()
                        .iter()
                        .map(|e| {
                            Ref {
                                framework,
                                id: e.id,
                            }
                            .slug()
                        })
                        .collect::<Vec<_>>()
                        .join(", "),
                }
            })?),
        };
        Ok(Selector { framework, entry })
    }

    /// Whether a reference is selected: one of the framework's, and the named entry or one of
    /// its sub-techniques (`atlas:AML.T0051` takes `AML.T0051.001`).
    pub fn selects(&self, r: &Ref) -> bool {
        r.framework == self.framework
            && self.entry.is_none_or(|e| {
                r.id == e.id
                    || r.id
                        .strip_prefix(e.id)
                        .is_some_and(|rest| rest.starts_with('.'))
            })
    }

    /// Whether a case with this category and technique is selected.
    pub fn matches(&self, owasp: Option<&str>, technique: Option<&str>) -> bool {
        map(owasp, technique).iter().any(|r| self.selects(r))
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.entry {
            Some(e) => write!(
                f,
                "{}",
                Ref {
                    framework: self.framework,
                    id: e.id
                }
            ),
            None => f.write_str(self.framework.key()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_in_the_tables_is_in_its_catalog_and_techniques_are_sorted() {
        for (key, r) in CATEGORY_MAP.iter().chain(TECHNIQUE_MAP) {
            for (f, ids) in [
                (Framework::OwaspLlm, r.llm),
                (Framework::OwaspAgentic, r.asi),
                (Framework::Atlas, r.atlas),
                (Framework::NistAiRmf, r.nist),
                (Framework::EuAiAct, r.eu),
            ] {
                for id in ids {
                    assert!(f.entry(id).is_some(), "{key}: {f}:{id} is in no catalog");
                }
            }
        }
        for w in TECHNIQUE_MAP.windows(2) {
            assert!(w[0].0 < w[1].0, "{} before {}", w[0].0, w[1].0);
        }
        for (t, _) in TECHNIQUE_MAP {
            assert!(
                crate::technique::find(t).is_some(),
                "{t} is no technique of the catalog"
            );
        }
        for (c, _) in CATEGORY_MAP {
            assert!(crate::suite::owasp_title(c).is_some(), "{c}");
        }
    }

    #[test]
    fn a_case_maps_to_its_category_its_row_and_its_technique() {
        let refs = map(Some("LLM01"), Some("rag-html-comment"));
        let shown: Vec<String> = refs.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "owasp-llm:LLM01",
                "atlas:AML.T0051.001",
                "atlas:AML.T0070",
                "nist-ai-rmf:MEASURE-2.7",
                "eu-ai-act:Art.15"
            ]
        );
        let agentic = map(Some("LLM06"), Some("approval-bypass"));
        assert!(agentic.contains(&Ref {
            framework: Framework::OwaspAgentic,
            id: "ASI03"
        }));
        // With no technique the category's parent technique stands.
        assert!(map(Some("LLM01"), None).contains(&Ref {
            framework: Framework::Atlas,
            id: "AML.T0051"
        }));
        assert!(map(None, Some("rag-html-comment")).is_empty());
        assert!(map(Some("X99"), None).is_empty());
        assert_eq!(
            Ref {
                framework: Framework::NistAiRmf,
                id: "MEASURE 2.7"
            }
            .tag(),
            "external/nist-ai-rmf/MEASURE-2.7"
        );
    }

    #[test]
    fn selectors_parse_every_spelling_and_select_sub_techniques() {
        let s = Selector::parse("atlas:AML.T0051").unwrap();
        assert!(s.matches(Some("LLM01"), Some("rag-html-comment")));
        assert!(!s.matches(Some("LLM10"), Some("token-flood-repeat")));
        let sub = Selector::parse("atlas:aml.t0051.001").unwrap();
        assert!(sub.matches(Some("LLM01"), Some("rag-html-comment")));
        assert!(!sub.matches(Some("LLM01"), Some("direct-override")));
        for nist in ["nist-ai-rmf:MEASURE-2.10", "nist:measure 2.10"] {
            let s = Selector::parse(nist).unwrap();
            assert!(s.matches(Some("LLM02"), Some("pii-harvest")), "{nist}");
            assert!(!s.matches(Some("LLM07"), Some("verbatim-repeat")), "{nist}");
        }
        // MEASURE 2.1 is no prefix of MEASURE 2.10: ids compare whole.
        assert!(Selector::parse("nist-ai-rmf:MEASURE-2.1").is_err());
        let eu = Selector::parse("eu-ai-act:article 14").unwrap();
        assert_eq!(eu.to_string(), "eu-ai-act:Art.14");
        assert!(eu.matches(Some("LLM06"), Some("bulk-destructive-action")));
        assert!(!eu.matches(Some("LLM07"), Some("verbatim-repeat")));
        assert!(
            Selector::parse("owasp-agentic")
                .unwrap()
                .matches(Some("LLM06"), Some("mass-action"))
        );
        assert!(matches!(
            Selector::parse("iso42001"),
            Err(SelectorError::UnknownFramework(_))
        ));
        let err = Selector::parse("atlas:AML.T0020").unwrap_err().to_string();
        assert!(err.contains("AML.T0051.001"), "{err}");
    }
}
