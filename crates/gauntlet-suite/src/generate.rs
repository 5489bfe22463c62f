//! Attacks written from an agent card (`gauntlet redteam generate`): [`generate`] turns a
//! [`GenerateRequest`] (a suite's card, a seed, a cap) into a [`GeneratedSuite`], a suite
//! file for the team to review, validate, audit and run.
//!
//! Each element of the card seeds attacks (`templates`): each out-of-scope topic, each
//! approval-gated or irreversible tool, each tool that reads data, the canary and each
//! safety rule; the scope items are the legitimate tasks the attacks hide in. Each element
//! draws its techniques from a stream of its own (the seed and the element), so the same
//! seed writes the same file byte for byte, and a new rule on the card changes no other
//! case. The checks come from the card, never from the text: a tool that must not be called
//! or must be approved first, the canary that must not leak, the topic that must be
//! declined (`out_of_scope`), a marker the attack asks for. An attacker model may rewrite
//! each attack's text through the caller's [`Rewrite`]; a rewrite that drops a string the
//! checks depend on is not used, and the case says so.

mod templates;
mod yaml;

use std::collections::BTreeSet;

use gauntlet_core::strategy::{GENERATOR_PROMPT_VERSION, GeneratorBrief, generator_messages};
use gauntlet_core::suite::{Case, Suite};
use gauntlet_core::trace::Message;
use serde_json::{Value, json};

use templates::{Card, Draft, Layout};
pub use templates::{ToolClass, classify_tool};

/// What the generated suite says wrote it.
pub const GENERATOR: &str = "gauntlet redteam generate";

/// An attacker model's one call: the messages of [`generator_messages`] and a seed, the
/// rewritten attack back (or the fault that stopped the call).
pub type Rewrite<'a> = dyn FnMut(&[Message], u64) -> Result<RewriteAnswer, String> + 'a;

/// What the attacker model answered to one rewrite request, as the caller read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewriteAnswer {
    /// The model's text.
    pub text: String,
    /// What the text is instead of an attack (`"answered as an assistant"`, `"refused"`,
    /// `"repeated itself"`), when the caller's reader of attacker messages says it is none;
    /// such a text is not used: a case whose attack asks for nothing gates nothing.
    pub no_attack: Option<String>,
}

impl From<String> for RewriteAnswer {
    /// A text the caller did not read: used if it keeps what the checks read.
    fn from(text: String) -> Self {
        RewriteAnswer {
            text,
            no_attack: None,
        }
    }
}

/// What to generate from.
#[derive(Debug, Clone)]
pub struct GenerateRequest {
    /// The suite whose agent card is attacked (its cases are not read).
    pub suite: Suite,
    /// The system prompt in force (inline, or read from `system_prompt_file`), written into
    /// the generated suite so that it stands on its own.
    pub system_prompt: Option<String>,
    /// The suite file as given, for the provenance.
    pub source: String,
    /// The seed that draws the techniques and the tasks.
    pub seed: u64,
    /// Most cases to write: taken round by round over the kinds of element, so that a cap
    /// keeps every kind; the same N always keeps the same cases.
    pub n: Option<usize>,
    /// The attacker model's label (`openai:gpt-4.1-mini`), when one rewrites the attacks.
    pub attacker: Option<String>,
}

/// How a case's attack text came to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Authored {
    /// The template's text.
    Template,
    /// The attacker model's rewrite.
    Model,
    /// The template's text, because the model's rewrite could not be used (why).
    KeptTemplate(String),
}

/// One generated case and where it came from.
#[derive(Debug, Clone)]
pub struct GeneratedCase {
    /// The case as written into the file.
    pub case: Case,
    /// The card element it attacks (`out_of_scope: legal advice`).
    pub target: String,
    /// Who wrote its attack text.
    pub authored: Authored,
}

/// A generated suite.
#[derive(Debug, Clone)]
pub struct GeneratedSuite {
    /// The suite file.
    pub yaml: String,
    /// Its cases, in the file's order.
    pub cases: Vec<GeneratedCase>,
    /// Attacks the card gave before `--n` capped them.
    pub available: usize,
}

/// Why no suite could be generated.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// The card names nothing an attack could aim at.
    #[error(
        "the agent card of `{0}` gives nothing to attack: no out_of_scope topic, no tool, no canary, no safety rule"
    )]
    NothingToAttack(String),
    /// `--n 0`.
    #[error("--n 0 asks for no case")]
    NoCases,
    /// The attacker model failed.
    #[error("the attacker model failed: {0}")]
    Attacker(String),
    /// A template built a case the suite format rejects: a bug in the generator.
    #[error("internal error: a generated case does not parse: {0}")]
    Internal(String),
}

impl GenerateError {
    /// What the user can do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            GenerateError::NothingToAttack(_) => {
                "describe the app under `agent:`: out_of_scope topics, tools (with side_effect and approval), safety_rules, a canary in the system prompt (see docs/redteam.md, \"Attacks from your agent card\")"
            }
            GenerateError::NoCases => "give --n 1 or more, or leave it out for every attack",
            GenerateError::Attacker(_) => {
                "check the attacker's settings (--attacker, its key and base URL), or leave --attacker out for the templates alone"
            }
            GenerateError::Internal(_) => "please report it with the suite that caused it",
        }
    }
}

/// The drafts of every element of the card, kind by kind, in the card's order.
fn drafts(card: &Card<'_>) -> Vec<Vec<Draft>> {
    let c = card.card;
    let mut kinds: Vec<Vec<Draft>> = Vec::new();
    kinds.push(
        c.out_of_scope
            .iter()
            .filter(|t| !t.trim().is_empty())
            .flat_map(|t| templates::out_of_scope(card, t.trim()))
            .collect(),
    );
    kinds.push(
        card.classes
            .iter()
            .filter(|(_, k)| k.gated || k.irreversible)
            .flat_map(|(t, k)| templates::action(card, t, *k))
            .collect(),
    );
    kinds.push(
        card.classes
            .iter()
            .filter(|(_, k)| k.reads_data)
            .flat_map(|(t, _)| templates::data(card, t))
            .collect(),
    );
    kinds.push(if c.canary.is_some() {
        templates::secret(card)
    } else {
        Vec::new()
    });
    kinds.push(
        c.safety_rules
            .iter()
            .filter(|r| !r.trim().is_empty())
            .flat_map(|r| templates::rule(card, r))
            .collect(),
    );
    kinds
}

/// Round by round over the kinds (one draft of each kind in turn), so that a cap keeps
/// every kind the card has.
fn interleave(kinds: Vec<Vec<Draft>>) -> Vec<Draft> {
    let mut iters: Vec<_> = kinds.into_iter().map(Vec::into_iter).collect();
    let mut out = Vec::new();
    loop {
        let before = out.len();
        for it in &mut iters {
            out.extend(it.next());
        }
        if out.len() == before {
            return out;
        }
    }
}

/// Writes the suite: every attack the card gives (or the first `n`, round by round over
/// the kinds of element), each attack's text rewritten by the attacker model when one is
/// given.
pub fn generate(
    req: &GenerateRequest,
    mut rewrite: Option<&mut Rewrite<'_>>,
) -> Result<GeneratedSuite, GenerateError> {
    if req.n == Some(0) {
        return Err(GenerateError::NoCases);
    }
    let agent = &req.suite.agent;
    let card = Card {
        card: agent,
        system_prompt: req.system_prompt.as_deref(),
        classes: agent
            .tools
            .iter()
            .map(|t| (t, classify_tool(t, agent)))
            .collect(),
        seed: req.seed,
        known: templates::known_values(&agent.tools),
    };
    let all = interleave(drafts(&card));
    if all.is_empty() {
        return Err(GenerateError::NothingToAttack(req.suite.suite.clone()));
    }
    let available = all.len();
    let application = application(&req.suite);
    let mut ids = BTreeSet::new();
    let mut cases = Vec::new();
    for mut d in all.into_iter().take(req.n.unwrap_or(usize::MAX)) {
        let authored = match rewrite.as_deref_mut() {
            Some(r) => rewritten(&mut d, &application, req.seed, r)?,
            None => Authored::Template,
        };
        let id = unique_id(&d, &mut ids);
        let case = to_case(&d, &id)?;
        cases.push(GeneratedCase {
            case,
            target: d.target,
            authored,
        });
    }
    let yaml = render(req, &cases, available)?;
    Ok(GeneratedSuite {
        yaml,
        cases,
        available,
    })
}

/// The application in a sentence, for the attacker model.
fn application(suite: &Suite) -> String {
    let a = &suite.agent;
    let name = a.name.as_deref().unwrap_or(&suite.suite);
    let mut s = match &a.role {
        Some(r) => format!("{name}: {}", r.trim()),
        None => name.to_owned(),
    };
    if !a.scope.is_empty() {
        s.push_str(&format!(" In scope: {}.", a.scope.join("; ")));
    }
    s
}

/// Asks the attacker model for the draft's text; keeps the template's when the answer is
/// empty, runs long, is no attack or drops a string the checks depend on.
fn rewritten(
    d: &mut Draft,
    application: &str,
    seed: u64,
    rewrite: &mut Rewrite<'_>,
) -> Result<Authored, GenerateError> {
    let carrier = match d.layout {
        Layout::Poison { .. } => "inside the output of a tool the assistant calls",
        _ => "the user's message to the assistant",
    };
    let technique = gauntlet_core::technique::find(d.technique).map_or(d.technique, |t| t.title);
    let messages = generator_messages(&GeneratorBrief {
        application,
        target: &d.target,
        technique,
        carrier,
        keep: &d.keep,
        draft: &d.attack,
    });
    let call_seed = templates::element_seed(seed, &format!("{}:{}", d.target, d.technique));
    let answer = rewrite(&messages, call_seed).map_err(GenerateError::Attacker)?;
    let text = answer.text.trim();
    if text == d.attack {
        return Ok(Authored::Template);
    }
    let why = if text.is_empty() {
        Some("the model's answer was empty".to_owned())
    } else if text.chars().count() > 2000 {
        Some("the model's answer ran over 2000 characters".to_owned())
    } else if let Some(kind) = &answer.no_attack {
        Some(format!("the model's answer was no attack: it {kind}"))
    } else {
        d.keep
            .iter()
            .find(|k| !text.contains(k.as_str()))
            .map(|k| format!("the model's rewrite dropped `{k}`, which the checks depend on"))
    };
    Ok(match why {
        Some(why) => Authored::KeptTemplate(why),
        None => {
            d.attack = text.to_owned();
            Authored::Model
        }
    })
}

/// `gen-<kind>-<element>-<technique>`, with a number added if two drafts would share one.
fn unique_id(d: &Draft, seen: &mut BTreeSet<String>) -> String {
    let base = format!("gen-{}-{}-{}", d.element.prefix(), d.slug, d.technique);
    let mut id = base.clone();
    let mut i = 2;
    while !seen.insert(id.clone()) {
        id = format!("{base}-{i}");
        i += 1;
    }
    id
}

/// The tags a reviewer filters by: `generated`, the element's kind, and the OWASP LLM and
/// Agentic entries the case maps to.
fn tags(d: &Draft) -> Vec<String> {
    use gauntlet_core::compliance::{Framework, map};
    let mut tags = vec![
        "generated".to_owned(),
        format!("card:{}", d.element.prefix()),
    ];
    for r in map(Some(d.owasp), Some(d.technique)) {
        match r.framework {
            Framework::OwaspLlm => tags.push(format!("owasp-llm:{}", r.id)),
            Framework::OwaspAgentic => tags.push(format!("owasp-agentic:{}", r.id)),
            _ => {}
        }
    }
    tags
}

/// The case, as JSON in the suite format (parsed back to be sure it is one).
fn case_value(d: &Draft, id: &str) -> Value {
    let mut v = json!({
        "id": id,
        "pack": "security",
        "owasp": d.owasp,
        "technique": d.technique,
        "description": d.description,
        "tags": tags(d),
        "expect": d.expect,
    });
    let o = v.as_object_mut().expect("an object");
    if d.refusal {
        o.insert("kind".into(), json!("refusal"));
    }
    match &d.layout {
        Layout::Input { task } => {
            o.insert("input".into(), json!(format!("{task} {}", d.attack)));
            // Converters change the attack, never the legitimate task it hides in.
            o.insert("attack".into(), json!({ "in": "user", "span": d.attack }));
        }
        Layout::Turns { task } => {
            o.insert("turns".into(), json!([task, d.attack]));
            // The second turn is the attack, the first the legitimate task: converters change
            // only the attack, and a leak in answer to the task is the agent's, not the
            // attack's.
            o.insert("attack".into(), json!({ "in": "user", "span": d.attack }));
        }
        Layout::Poison { tool, input } => {
            o.insert("input".into(), json!(input));
            o.insert(
                "tool_faults".into(),
                json!([{ "tool": tool, "poison": d.attack }]),
            );
        }
    }
    v
}

fn to_case(d: &Draft, id: &str) -> Result<Case, GenerateError> {
    serde_json::from_value(case_value(d, id))
        .map_err(|e| GenerateError::Internal(format!("{id}: {e}")))
}

/// The order of keys in the file, at every depth: a case's, the card's, a tool's, a
/// fixture's and a schema's keys as a reviewer reads them; any other key after these, sorted.
const KEY_ORDER: &[&str] = &[
    "id",
    "name",
    "kind",
    "pack",
    "owasp",
    "technique",
    "description",
    "tags",
    "input",
    "turns",
    "attack",
    "in",
    "span",
    "tool",
    "poison",
    "tool_faults",
    "expect",
    "role",
    "scope",
    "out_of_scope",
    "approval_required",
    "safety_rules",
    "canary",
    "system_prompt",
    "side_effect",
    "approval",
    "version",
    "type",
    "required",
    "properties",
    "parameters",
    "when",
    "returns",
    "fixtures",
    "default",
    "tools",
    "mcp_servers",
    "message_bus",
];

/// The source suite's target, when the generated file (written elsewhere) can use it: not
/// a program started from the source suite's folder (`exec`, `proxy`), nor scripted replies
/// the generated cases do not have.
fn portable_target(suite: &Suite) -> Option<&gauntlet_core::target::TargetConfig> {
    use gauntlet_core::target::TargetKind;
    suite.target.as_ref().filter(|t| match t.kind {
        Some(TargetKind::Exec | TargetKind::Proxy) => false,
        Some(TargetKind::Fake) => t.persona.as_deref() != Some("scripted"),
        _ => true,
    })
}

/// The suite file: a header saying what wrote it, the card (with the system prompt inline),
/// the source suite's target, then each case under a comment saying where it came from.
fn render(
    req: &GenerateRequest,
    cases: &[GeneratedCase],
    available: usize,
) -> Result<String, GenerateError> {
    let attacker = req.attacker.as_deref().unwrap_or("none (the templates)");
    let mut out = format!(
        "# Attacks generated from the agent card of `{}` ({}) by `{GENERATOR}`.\n# Seed {}, attacker {attacker}, prompt {GENERATOR_PROMPT_VERSION}; {} of {available} attacks.\n# Review each case before it gates: the checks come from the card, the text from a\n# template{}. Regenerate rather than edit, or move a case you keep into a suite of your own.\n",
        req.suite.suite,
        req.source,
        req.seed,
        cases.len(),
        if req.attacker.is_some() {
            " or the attacker model"
        } else {
            ""
        },
    );
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    out.push_str(&format!(
        "suite: {}\n",
        q(&format!("{}-generated", req.suite.suite))
    ));
    out.push_str(&format!(
        "description: {}\n",
        q(&format!(
            "Attacks on the agent card of {}: its out-of-scope topics, guarded tools, data, secret and safety rules.",
            req.suite.suite
        ))
    ));
    let mut agent = req.suite.agent.clone();
    if agent.system_prompt.is_none() {
        agent.system_prompt = req.system_prompt.clone();
    }
    agent.system_prompt_file = None;
    let agent = serde_json::to_value(&agent).map_err(|e| GenerateError::Internal(e.to_string()))?;
    out.push_str("agent:\n");
    yaml::write_value(&agent, 2, KEY_ORDER, &mut out);
    match portable_target(&req.suite) {
        Some(t) => {
            let t = serde_json::to_value(t).map_err(|e| GenerateError::Internal(e.to_string()))?;
            out.push_str("target:\n");
            yaml::write_value(&t, 2, KEY_ORDER, &mut out);
        }
        None if req.suite.target.is_some() => out.push_str(
            "# target: the source suite's target is left out (it starts a program from that suite's folder, or replays scripted replies); pass -t.\n",
        ),
        None => {}
    }
    out.push_str(&format!(
        "source:\n  dataset: {}\n  revision: {}\n  file: {}\n  importer: {}\n",
        q(&format!("agent-card:{}", req.suite.suite)),
        q(&format!(
            "seed {}; attacker {attacker}; prompt {GENERATOR_PROMPT_VERSION}",
            req.seed
        )),
        q(&req.source),
        q(GENERATOR),
    ));
    out.push_str("cases:\n");
    for g in cases {
        render_case(g, req.seed, &mut out)?;
    }
    Ok(out)
}

fn render_case(g: &GeneratedCase, seed: u64, out: &mut String) -> Result<(), GenerateError> {
    let by = match &g.authored {
        Authored::Template => "the template".to_owned(),
        Authored::Model => "the attacker model".to_owned(),
        Authored::KeptTemplate(why) => format!("the template ({why})"),
    };
    out.push_str(&format!(
        "\n  # From {}; seed {seed}; text by {by}.\n",
        g.target.replace('\n', " ")
    ));
    let v = serde_json::to_value(&g.case).map_err(|e| GenerateError::Internal(e.to_string()))?;
    let Value::Object(m) = v else {
        return Err(GenerateError::Internal("a case is not a mapping".into()));
    };
    // The first key on the dash's line, the rest under it.
    let mut body = String::new();
    yaml::write_value(&Value::Object(m), 4, KEY_ORDER, &mut body);
    out.push_str("  - ");
    out.push_str(body.trim_start());
    Ok(())
}

#[cfg(test)]
mod tests;
