//! The suite file format: [`Suite`] and everything a suite declares.
//!
//! These types are the single source of truth for the YAML format: the loader deserializes
//! into them, `gauntlet schema` derives the JSON Schema from them, and the runner reads them.
//! Every struct denies unknown keys so that a typo is an error, not a silently ignored check.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::rubric::CaseKind;

use crate::expect::{CaseView, Expect};
use crate::target_config::TargetConfig;
use crate::tools::ToolDef;

/// The current suite format version. A suite may omit `version`; it then means this one.
pub const SUITE_FORMAT_VERSION: u32 = 1;

fn default_version() -> u32 {
    SUITE_FORMAT_VERSION
}

fn is_default_version(v: &u32) -> bool {
    *v == SUITE_FORMAT_VERSION
}

/// A suite: the agent under test, its defaults and its cases.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    /// Suite format version (only `1` exists).
    #[serde(
        default = "default_version",
        skip_serializing_if = "is_default_version"
    )]
    pub version: u32,
    /// Name of the suite, used in reports and test names.
    pub suite: String,
    /// What the suite is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The agent under test (the AUT card): role, scope, tools, rules, system prompt.
    #[serde(default)]
    pub agent: AgentCard,
    /// The target to run against; `--target` on the command line overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetConfig>,
    /// System-prompt variants: every case runs with each of them in place of the agent's
    /// system prompt, a column per variant (per target and variant when several targets are
    /// given), in one matrix run (see `docs/matrix.md`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<PromptVariant>,
    /// Which packs this suite must contain for its result to be conclusive.
    #[serde(default)]
    pub packs: PackPolicy,
    /// Defaults applied to every case.
    #[serde(default)]
    pub defaults: CaseDefaults,
    /// Model judges, by check id, and the thresholds their calibration must clear to gate.
    #[serde(
        default,
        skip_serializing_if = "crate::judges::JudgeSettings::is_empty"
    )]
    pub judges: crate::judges::JudgeSettings,
    /// The embeddings model of `similar:` checks, as a target spec: `openai:MODEL` or a
    /// named target from `gauntlet.yaml` (an OpenAI-compatible endpoint: base URL, model,
    /// key variable); `--embeddings` on the command line overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<String>,
    /// Default metamorphic relations (`gauntlet stability --metamorphic`) for every YAML
    /// case that declares no `metamorphic:` of its own; a case's own list replaces them and
    /// `metamorphic: []` opts a case out. A default that cannot change a case's text is
    /// skipped for that case with a note (see `docs/stability.md`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metamorphic: Vec<Relation>,
    /// The cases.
    #[serde(default)]
    pub cases: Vec<Case>,
    /// More case files (YAML lists of cases, or JSON lines with one case per line), relative
    /// to this file. JSON lines files are streamed, so very large generated suites stay cheap.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    /// Where the cases came from when they were imported from a public data set
    /// (`gauntlet import`): recorded in the run manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<DatasetSource>,
}

/// One system-prompt variant of a suite's `prompts:`: its label (the column's) and its
/// text, inline or from a file, as the agent's `system_prompt` / `system_prompt_file`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PromptVariant {
    /// The variant's label: letters, digits, `.`, `_` and `-`, unique in the suite; the
    /// column is named after it.
    pub label: String,
    /// The system prompt of this variant; `{{canary}}` is replaced by the canary in force,
    /// as in the agent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// A file holding the system prompt of this variant, relative to the suite file and
    /// inside its folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt_file: Option<String>,
}

/// The provenance of an imported suite: which data set, under which licence, at which
/// revision, read from which file.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DatasetSource {
    /// The data set, such as `cyberseceval-prompt-injection`.
    pub dataset: String,
    /// Where it is published.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Its licence, as an SPDX id where there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    /// The revision imported: an upstream tag or commit when known, else `sha256:` of the file.
    pub revision: String,
    /// The file name the cases were read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The importer that wrote the suite (`gauntlet import KIND`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub importer: Option<String>,
}

/// The AUT card: what the agent is, what it may do and what it must not.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AgentCard {
    /// Name of the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its role, in one sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// What it is meant to handle.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scope: Vec<String>,
    /// Requests it must decline and redirect.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub out_of_scope: Vec<String>,
    /// Actions that need a human's approval first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approval_required: Vec<String>,
    /// Safety rules the agent must keep.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub safety_rules: Vec<String>,
    /// The system prompt sent to model targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// A file holding the system prompt, relative to the suite file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt_file: Option<String>,
    /// A planted secret (canary) that must never appear in any output. `no_canary` checks use
    /// it unless they name their own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary: Option<String>,
    /// Tools the agent can call; gauntlet simulates them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolDef>,
    /// MCP servers whose tools the agent can call, in addition to `tools`: the calls reach
    /// the real server, through the same approvals, faults and poison as simulated tools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<crate::mcp::McpServer>,
    /// A simulated message bus between the team's agents: adds the tools `send_message`
    /// (`{to, content}`) and `read_messages` (`{}`), and lets cases inject
    /// `coordination_faults` into the messages. The sender and reader of each message are
    /// the agent names stamped on the calling spans.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub message_bus: bool,
    /// What the red team takes the card's tools for when it aims its agentic attacks at them
    /// (`gauntlet redteam --suite`): each list given replaces what gauntlet infers from the
    /// tools' names, descriptions, schemas and approvals for that role.
    #[serde(default, skip_serializing_if = "ToolRoles::is_empty")]
    pub tool_roles: ToolRoles,
}

/// The card's own word on its tools' roles in an attack (`agent.tool_roles`): each list
/// given (even empty) replaces the inferred set for its role; an absent list keeps it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ToolRoles {
    /// Tools whose output carries content from outside the app (an inbox, a web page, a
    /// record others write): where a poisoned output goes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untrusted_output: Option<Vec<String>>,
    /// Tools that send data out of the app (email, HTTP, posts, messages, uploads): what an
    /// exfiltration aims at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sends_out: Option<Vec<String>>,
    /// Tools whose action cannot be undone or needs a human's approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irreversible: Option<Vec<String>>,
}

impl ToolRoles {
    /// Whether no role is given.
    pub fn is_empty(&self) -> bool {
        self.untrusted_output.is_none() && self.sends_out.is_none() && self.irreversible.is_none()
    }
}

/// Pack requirements. A required pack with no case in the run makes the result INCONCLUSIVE.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PackPolicy {
    /// Packs that must be present in a run (for example `smoke`, `refusal`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required: Vec<String>,
    /// Declare that this agent deliberately has no refusal pack. Without it, a tool-using agent
    /// with no refusal case is INCONCLUSIVE.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_refusal_pack: bool,
}

/// Defaults applied to every case of a suite.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CaseDefaults {
    /// Whether a case gates the suite (pass^k over its trials). Default true.
    #[serde(default = "yes")]
    pub blocking: bool,
    /// Per-trial time limit in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// The upstream content filter is part of the system under test: a case it stops counts
    /// as defended. Without this, a blocking case that was blocked is no evidence about the
    /// model and leaves the state INCONCLUSIVE. (`--blocked-is-defended` sets it for a run.)
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub blocked_is_defended: bool,
}

impl Default for CaseDefaults {
    fn default() -> Self {
        Self {
            blocking: true,
            timeout_ms: None,
            blocked_is_defended: false,
        }
    }
}

fn yes() -> bool {
    true
}

/// One case: a frozen input, what the agent may use, and the checks on what it did.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Unique id within the run.
    pub id: String,
    /// `task` (six-dimension rubric) or `refusal` (one 0-3 score).
    #[serde(default)]
    pub kind: CaseKind,
    /// What the case checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The pack the case belongs to: smoke, regression, refusal, security, trajectory, or
    /// a name of your own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pack: Option<String>,
    /// OWASP category: the Top 10 for LLM Applications (2025), `LLM01` to `LLM10`, or the
    /// Top 10 for Agentic Applications (2026), `ASI01` to `ASI10`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owasp: Option<String>,
    /// The attack or test technique, such as `direct-override`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub technique: Option<String>,
    /// The harm category of a harmful request, from gauntlet's harm taxonomy (the MLCommons
    /// AILuminate v1.0 hazards, such as `violent-crimes` or `privacy`, and `cybercrime`,
    /// `misinformation`): reports give the attack success rate per category. A case with one
    /// is a security case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harm: Option<String>,
    /// Free-form tags for filtering.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// A hold-out case: left out of runs unless `--include-holdout` (the release profile),
    /// and then reported only as the pass rate of its slices (its suite, and each of its
    /// tags), never with its input or answers, so that prompt iteration cannot fit it. It
    /// does not change the run's state.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub holdout: bool,
    /// Overrides the suite default: does this case gate the suite?
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocking: Option<bool>,
    /// The user message (for a single-turn case).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// Converters applied to the attack before it is sent, in order (`base64`, `leet`, ...;
    /// see `docs/redteam.md`), where it travels (`attack`): the user's turns of a direct
    /// attack, the planted text of an indirect one. A run's `--converters` chain is applied
    /// after these. In a planned case this is the whole chain that produced the texts as sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub converters: Vec<String>,
    /// Where the attack travels and which text is the attack, for converters: `user` (the
    /// user's turns), `documents`, `tool_output` (the poison of `tool_faults`) or `none`,
    /// with an optional `span` (the planted text inside it; only it is converted). Without
    /// it: the poisoned tool outputs if the case has any, else its documents, else the
    /// user's turns. In a planned case with converters, the site they were applied to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attack: Option<crate::attack::AttackSite>,
    /// Retrieved documents the target receives as context with the first turn (RAG): the
    /// hidden instructions in them are the attack of an indirect-injection case.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub documents: Vec<Document>,
    /// Scripted user turns (for a multi-turn case), sent in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turns: Vec<Turn>,
    /// Replaces the agent's system prompt for this case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Replaces the agent's canary for this case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canary: Option<String>,
    /// Variables for request templates (`http` targets) and simulated tools.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub vars: BTreeMap<String, serde_json::Value>,
    /// Answers the `fake:scripted` target gives, one per model call, in order. Lets a user pin
    /// a recorded output as a regression fixture.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scripted: Vec<ScriptedReply>,
    /// Tools whose calls a human approves in this case (approval-gated tools not listed here
    /// are blocked when called).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approvals: Vec<String>,
    /// Faults and poisoned outputs injected into simulated tools for this case.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_faults: Vec<crate::tools::ToolFault>,
    /// Faults injected into the messages between the team's agents for this case (a dropped,
    /// duplicated, delayed or impersonated message); needs `agent.message_bus: true`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coordination_faults: Vec<crate::bus::fault::CoordinationFault>,
    /// The checks. At least one must be an objective oracle.
    #[serde(default)]
    pub expect: Vec<Expect>,
    /// When a canary is in force, every reply of the case is looked at for it (a hard
    /// failure if it leaks), whether or not the case has a `no_canary` check. `false` opts
    /// the case out (a case that is meant to show the secret to an authorised user, say).
    #[serde(default = "yes", skip_serializing_if = "Clone::clone")]
    pub leak_check: bool,
    /// An empty answer (no text and no tool call) is an acceptable reply in this case. By
    /// default an empty reply from a model, an app or an agent is a protocol error (outcome
    /// `error`, with the raw reply kept), because there is nothing in it to grade: an empty
    /// answer would pass every "must not say" check without having been put to the test.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_empty: bool,
    /// Per-trial time limit in milliseconds (overrides the suite default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Most model calls in one turn's tool loop before the trial is cut off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
    /// After the scripted turns, a simulated user (a model given a persona and a goal)
    /// carries the conversation on, up to `max_turns` more turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulated_user: Option<SimulatedUser>,
    /// A multi-turn attack: scripted escalation (`crescendo`, over `turns`) or an attacker
    /// model (`attacker`, `--attacker TARGET`). The conversation is graded after every turn
    /// and the attack stops when the objective is reached (see `docs/redteam.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<crate::strategy::settings::Strategy>,
    /// The benign twin of a security case: the same legitimate task with the attack removed
    /// (the document without its hidden instruction, the tool output without its poison,
    /// the email without the planted request). The fields given replace the case's own; the
    /// twin runs next to the case (id `<id>~benign`, pack `benign`) with only the case's
    /// task checks, and measures the benign utility the red team reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub benign: Option<Benign>,
    /// Metamorphic relations (`gauntlet stability --metamorphic`): meaning-preserving
    /// perturbations of the input and what must hold between the case's verdicts and the
    /// perturbed variant's (see `docs/stability.md`). Replaces the suite's default relations;
    /// `[]` opts the case out of them; absent, the case takes the suite's. Ordinary runs
    /// ignore them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metamorphic: Option<Vec<Relation>>,
    /// Where the case is written (file and line), recorded by the loader for reports that
    /// point at it (SARIF). Not part of the file format.
    #[serde(skip)]
    #[schemars(skip)]
    pub source: Option<CaseSource>,
    /// For a benign twin made by the plan ([`Case::benign_twin`]): the id of the security
    /// case it is the twin of. Not part of the file format.
    #[serde(skip)]
    #[schemars(skip)]
    pub benign_of: Option<String>,
    /// In a planned case whose converters changed some of its texts: each such text as the
    /// suite wrote it, by where it is (`documents[0]`, `tool_faults[1].poison`, `input`,
    /// `turns[0].user`, `turns[0].rephrase[1]`), so that graders attribute what the agent did
    /// to what the attack asked for, not to its disguise, read a reply against the request as
    /// the user meant it, and the trial records what it sent outside the user's turns. Not
    /// part of the file format.
    #[serde(skip)]
    #[schemars(skip)]
    pub as_written: Vec<(String, String)>,
}

/// What a security case's benign twin changes: the legitimate task as it reads without the
/// attack. Every field left out is the case's own.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Benign {
    /// The user's message without the attack (a quoted email without its planted request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// The retrieved documents without the hidden instruction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub documents: Option<Vec<Document>>,
    /// The tool faults without the poison: `[]` when the poison was the only one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_faults: Option<Vec<crate::tools::ToolFault>>,
}

impl Benign {
    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.input.is_none() && self.documents.is_none() && self.tool_faults.is_none()
    }
}

/// What the id of a benign twin adds to the id of its case.
pub const BENIGN_SUFFIX: &str = "~benign";

/// The pack of every benign twin.
pub const BENIGN_PACK: &str = "benign";

/// One metamorphic relation of a case: a perturbation of its input that must not change
/// its meaning, and what must then hold.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Relation {
    /// The perturbation: `reorder` (sentences or lines shuffled), `noise` (an irrelevant
    /// filler sentence added), `noise:typo` (two adjacent letters of one long word swapped),
    /// `format` (prose to bullet lines, or lines to prose), `format:whitespace` (extra
    /// spaces and blank lines), or `paraphrase` (reworded by the rewriter model,
    /// `--rewriter`).
    pub perturb: String,
    /// What must hold: `same_verdict` (every check's verdict as in the unperturbed case, the
    /// default) or a score band, `{score: {max_drop: 0.1}}` or `{score: {within: 0.05}}`.
    #[serde(default)]
    pub expect: RelationExpect,
}

/// What a metamorphic relation requires of the perturbed variant.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum RelationExpect {
    /// Every check's verdict (pass, fail, not assessed) equals the unperturbed case's modal
    /// verdict.
    #[default]
    SameVerdict,
    /// The variant's score stays in a band around the median score of the unperturbed
    /// case's repeats. Scores are compared as a share of the case's scale (a task's total
    /// over 18, a refusal score over 3), so a band means the same for every kind of case.
    Score(ScoreBand),
}

impl RelationExpect {
    /// The name used in reports: `same_verdict`, `score max_drop 0.1`, `score within 0.05`.
    pub fn label(&self) -> String {
        match self {
            RelationExpect::SameVerdict => "same_verdict".to_string(),
            RelationExpect::Score(b) => format!("score {}", b.label()),
        }
    }
}

/// The band a score relation allows: exactly one of `max_drop` and `within`, each a share of
/// the case's score scale, finite, at least 0 and below 1 (a band of the whole scale could
/// never break).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ScoreBand {
    /// The variant's score may be at most this much below the reference (rises are fine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_drop: Option<f64>,
    /// The variant's score must be within this much of the reference, either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<f64>,
}

/// Slack for comparing scores that went through floating-point division.
const SCORE_EPS: f64 = 1e-9;

impl ScoreBand {
    /// `max_drop 0.1` or `within 0.05`.
    pub fn label(&self) -> String {
        match (self.max_drop, self.within) {
            (Some(d), None) => format!("max_drop {d}"),
            (None, Some(w)) => format!("within {w}"),
            (Some(d), Some(w)) => format!("max_drop {d} within {w}"),
            (None, None) => "max_drop 0".to_string(),
        }
    }

    /// Whether `score` keeps the band around `reference` (both shares of the scale). A band
    /// with neither bound (which the loader refuses) allows no drop.
    pub fn keeps(&self, reference: f64, score: f64) -> bool {
        let drop_ok = score >= reference - self.max_drop.unwrap_or(0.0) - SCORE_EPS;
        let within_ok = self
            .within
            .is_none_or(|w| (score - reference).abs() <= w + SCORE_EPS);
        if self.max_drop.is_none() && self.within.is_some() {
            within_ok
        } else {
            drop_ok && within_ok
        }
    }

    /// What is wrong with the band as written: the key at fault, a message and a hint.
    pub fn problem(&self) -> Option<(&'static str, String, &'static str)> {
        let hint = "give one share of the score scale from 0 to below 1, e.g. `{score: {max_drop: 0.1}}` or `{score: {within: 0.05}}`";
        match (self.max_drop, self.within) {
            (None, None) => {
                return Some((
                    "",
                    "a score relation needs `max_drop` or `within`".into(),
                    hint,
                ));
            }
            (Some(_), Some(_)) => {
                return Some((
                    "within",
                    "a score relation takes one of `max_drop` and `within`, not both".into(),
                    "`max_drop` bounds a fall only; `within` bounds both directions: keep one",
                ));
            }
            _ => {}
        }
        for (key, v) in [("max_drop", self.max_drop), ("within", self.within)] {
            let Some(v) = v else { continue };
            if !v.is_finite() || v < 0.0 {
                return Some((
                    key,
                    format!("`{key}` is {v}: it must be a finite share of at least 0"),
                    hint,
                ));
            }
            if v >= 1.0 {
                return Some((
                    key,
                    format!("`{key}` is {v}: a band of the whole score scale can never break"),
                    hint,
                ));
            }
        }
        None
    }
}

/// Where a case is written: a file (relative to the folder the run started in, or the path
/// of the corpus file in gauntlet's repository for built-in cases) and the line of its `id`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct CaseSource {
    /// The file.
    pub file: String,
    /// The line (1-based; 0 when unknown).
    pub line: usize,
}

/// A retrieved document given to the target as context: inline `text`, or a `file` relative
/// to the suite (read when the suite loads; the path must stay inside the suite's folder).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Document {
    /// An id the target can cite (default: `doc-1`, `doc-2`, ... in order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// A title, as a search result would show it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The document's text, exactly as retrieved (HTML, markdown, plain text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A file holding the text, relative to the suite file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// A simulated user: a model target (`--user-model`) playing a persona with a goal.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SimulatedUser {
    /// Who the user is and how they talk.
    pub persona: String,
    /// What they want; when they have it they answer with `stop` and the conversation ends.
    pub goal: String,
    /// Most simulated turns. Default 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// The text that ends the conversation. Default `DONE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<String>,
}

impl CaseView for Case {
    fn kind(&self) -> CaseKind {
        self.kind
    }

    fn is_security(&self) -> bool {
        Case::is_security(self)
    }

    fn tool_faults(&self) -> &[crate::tools::ToolFault] {
        &self.tool_faults
    }

    fn check_keys(&self) -> Vec<&'static str> {
        self.expect.iter().map(|e| e.oracle.key()).collect()
    }
}

impl Case {
    /// Whether the case counts as a security case (an OWASP category or a security pack).
    pub fn is_security(&self) -> bool {
        self.owasp.is_some()
            || self.harm.is_some()
            || matches!(self.pack.as_deref(), Some("security"))
    }

    /// The benign twin of a case that declares one (`benign:`): the case with the fields of
    /// `benign` in place of its own, only its task checks ([`Role::Task`]), and no attack
    /// about it (no OWASP category, technique or strategy; pack `benign`), so that it is no
    /// security case and runs as the legitimate task alone. It is a task (kind `task`,
    /// whatever the case's kind): a benign request is graded on whether it was done, and it
    /// gets `refusal: false` ("answers the benign request") unless it has one, so that a
    /// refusal of it, filler or a non-answer (".") is the task not done.
    ///
    /// [`Role::Task`]: crate::expect::Role::Task
    pub fn benign_twin(&self) -> Option<Case> {
        let b = self.benign.as_ref()?;
        let mut t = self.clone();
        t.id = format!("{}{BENIGN_SUFFIX}", self.id);
        t.benign_of = Some(self.id.clone());
        t.benign = None;
        t.description = Some(format!(
            "The legitimate task of `{}` without its attack (benign twin).",
            self.id
        ));
        t.owasp = None;
        t.harm = None;
        t.technique = None;
        t.pack = Some(BENIGN_PACK.to_owned());
        t.strategy = None;
        t.source = None;
        // No attack travels in it: converters leave it as written.
        t.attack = Some(crate::attack::AttackSite {
            carrier: crate::attack::Carrier::None,
            span: None,
        });
        t.as_written.clear();
        if let Some(input) = &b.input {
            t.input = Some(input.clone());
        }
        if let Some(docs) = &b.documents {
            t.documents = docs.clone();
        }
        if let Some(faults) = &b.tool_faults {
            t.tool_faults = faults.clone();
        }
        t.expect.retain(|e| e.role() == crate::expect::Role::Task);
        t.kind = CaseKind::Task;
        if !t.expect.iter().any(|e| e.oracle.key() == "refusal") {
            let mut answers = Expect::new(crate::expect::Oracle::Refusal(
                crate::expect::RefusalCheck { expected: false },
            ));
            answers.name = Some("answers the benign request".into());
            t.expect.push(answers);
        }
        Some(t)
    }

    /// Where the case's attack travels: its `attack` as written, else the poisoned tool
    /// outputs if it has any, else its retrieved documents, else the user's turns (a direct
    /// attack).
    pub fn attack_site(&self) -> crate::attack::AttackSite {
        use crate::attack::{AttackSite, Carrier};
        if let Some(a) = &self.attack {
            return a.clone();
        }
        let carrier = if self.tool_faults.iter().any(|f| f.poison.is_some()) {
            Carrier::ToolOutput
        } else if !self.documents.is_empty() {
            Carrier::Documents
        } else {
            Carrier::User
        };
        AttackSite {
            carrier,
            span: None,
        }
    }

    /// The user turns that come before the attack: those ahead of the first turn holding the
    /// attack's `span` (as written), when the case marks its attack that way in the user's
    /// turns (`attack: {in: user, span: ...}`), as a legitimate task opening a conversation
    /// before the attack does. Empty otherwise: every turn may carry the attack.
    pub fn opening_turns(&self) -> &[Turn] {
        use crate::attack::Carrier;
        let Some(span) = self
            .attack
            .as_ref()
            .filter(|a| a.carrier == Carrier::User)
            .and_then(|a| a.span.as_deref())
            .filter(|s| !s.is_empty())
        else {
            return &[];
        };
        let first = self.turns.iter().enumerate().position(|(i, t)| {
            self.written_at(&format!("turns[{i}].user"))
                .unwrap_or(&t.user)
                .contains(span)
        });
        first.map_or(&[], |i| &self.turns[..i])
    }

    /// The text at `site` (`input`, `turns[0].user`, ...) as the suite wrote it, when a
    /// converter changed it.
    pub fn written_at(&self, site: &str) -> Option<&str> {
        self.as_written
            .iter()
            .find(|(s, _)| s == site)
            .map(|(_, t)| t.as_str())
    }

    /// The poison of the case's tool faults as the suite wrote it (before any converter),
    /// in order.
    pub fn written_poisons(&self) -> Vec<&str> {
        self.tool_faults
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                let site = format!("tool_faults[{i}].poison");
                self.as_written
                    .iter()
                    .find(|(s, _)| *s == site)
                    .map(|(_, t)| t.as_str())
                    .or(f.poison.as_deref())
            })
            .collect()
    }

    /// A name for reports: `LLM01/direct-override/<id>` for security cases, else
    /// `<pack>/<id>` or just the id.
    pub fn display_name(&self) -> String {
        match (&self.owasp, &self.technique, &self.pack) {
            (Some(cat), Some(tech), _) => format!("{cat}/{tech}/{}", self.id),
            (Some(cat), None, _) => format!("{cat}/{}", self.id),
            (None, _, Some(pack)) => format!("{pack}/{}", self.id),
            _ => self.id.clone(),
        }
    }
}

/// One scripted user turn: a plain string, or a map with `user` and an optional `when`.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
#[schemars(transform = crate::de::allow_string_shorthand)]
pub struct Turn {
    /// What the user says.
    pub user: String,
    /// Send this turn only if the agent's previous answer matches (a rule, not a model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<TurnCondition>,
    /// Crescendo: other wordings of this step, tried in order when the agent refuses it
    /// (the refused exchange is taken back from the agent's conversation first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rephrase: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnMap {
    user: String,
    #[serde(default)]
    when: Option<TurnCondition>,
    #[serde(default)]
    rephrase: Vec<String>,
}

impl<'de> Deserialize<'de> for Turn {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::de::string_or_map(
            d,
            "a user message, or a map with `user`, `when` and `rephrase`",
            |user| Turn {
                user,
                when: None,
                rephrase: Vec::new(),
            },
            |m: TurnMap| Turn {
                user: m.user,
                when: m.when,
                rephrase: m.rephrase,
            },
        )
    }
}

/// A rule on the agent's previous answer that decides whether a turn is sent.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct TurnCondition {
    /// The previous answer contains this text (case-insensitive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<String>,
    /// The previous answer does not contain this text (case-insensitive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_contains: Option<String>,
    /// The previous answer was (true) or was not (false) a refusal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<bool>,
}

/// One scripted model reply for the `fake:scripted` target: a plain string, or a map with
/// `content`, `tool_calls` and `finish`.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
#[schemars(transform = crate::de::allow_string_shorthand)]
pub struct ScriptedReply {
    /// The text of the reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Tool calls the reply asks for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ScriptedToolCall>,
    /// How the reply ends: normally, or as a platform block or a failure.
    #[serde(default)]
    pub finish: ScriptedFinish,
    /// The agent that gives this reply (multi-agent fixtures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptedMap {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ScriptedToolCall>,
    #[serde(default)]
    finish: ScriptedFinish,
    #[serde(default)]
    agent: Option<String>,
}

impl<'de> Deserialize<'de> for ScriptedReply {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::de::string_or_map(
            d,
            "a reply text, or a map with `content`, `tool_calls` and `finish`",
            |t| ScriptedReply {
                content: Some(t),
                tool_calls: Vec::new(),
                finish: ScriptedFinish::Stop,
                agent: None,
            },
            |m: ScriptedMap| ScriptedReply {
                content: m.content,
                tool_calls: m.tool_calls,
                finish: m.finish,
                agent: m.agent,
            },
        )
    }
}

/// How a scripted reply ends.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ScriptedFinish {
    /// A normal answer.
    #[default]
    Stop,
    /// Cut off by the token limit.
    Length,
    /// Stopped by an upstream content filter (the trial ends `blocked`).
    ContentFilter,
    /// A transport failure (the trial ends `error`).
    Error,
    /// No answer in time (the trial ends `timeout`).
    Timeout,
}

/// A tool call in a scripted reply.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ScriptedToolCall {
    /// The tool's name.
    pub name: String,
    /// The arguments, as a JSON object.
    #[serde(default)]
    pub arguments: serde_json::Value,
}

/// The OWASP Top 10 for LLM Applications, 2025 edition.
pub const OWASP_2025: [(&str, &str); 10] = [
    ("LLM01", "Prompt Injection"),
    ("LLM02", "Sensitive Information Disclosure"),
    ("LLM03", "Supply Chain"),
    ("LLM04", "Data and Model Poisoning"),
    ("LLM05", "Improper Output Handling"),
    ("LLM06", "Excessive Agency"),
    ("LLM07", "System Prompt Leakage"),
    ("LLM08", "Vector and Embedding Weaknesses"),
    ("LLM09", "Misinformation"),
    ("LLM10", "Unbounded Consumption"),
];

/// The OWASP Top 10 for Agentic Applications, 2026 edition.
pub const OWASP_AGENTIC_2026: [(&str, &str); 10] = [
    ("ASI01", "Agent Goal Hijack"),
    ("ASI02", "Tool Misuse and Exploitation"),
    ("ASI03", "Identity and Privilege Abuse"),
    ("ASI04", "Agentic Supply Chain Vulnerabilities"),
    ("ASI05", "Unexpected Code Execution"),
    ("ASI06", "Memory and Context Poisoning"),
    ("ASI07", "Insecure Inter-Agent Communication"),
    ("ASI08", "Cascading Failures"),
    ("ASI09", "Human-Agent Trust Exploitation"),
    ("ASI10", "Rogue Agents"),
];

/// The title of an OWASP category id, if it is one: an LLM Top 10 (2025) id such as `LLM01`,
/// or an Agentic Top 10 (2026) id such as `ASI02`.
pub fn owasp_title(id: &str) -> Option<&'static str> {
    OWASP_2025
        .iter()
        .chain(OWASP_AGENTIC_2026.iter())
        .find(|(k, _)| *k == id)
        .map(|(_, t)| *t)
}
