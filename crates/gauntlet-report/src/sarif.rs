//! `results.sarif`: [`SarifReport`], what code scanning should see of a run, as SARIF 2.1.0
//! (the format code-scanning tools read, GitHub code scanning among them).
//!
//! Findings are the successful attacks (security cases that FAILed) and every other hard
//! policy failure (a canary leak, a forbidden side effect, an unbacked claim of an action in
//! any case). One rule per technique for attacks (its title and summary from
//! `gauntlet_core::technique`, the OWASP category it was seen in, help on what to do) and
//! one per failed hard check for the others (`policy-<check>`); one result per finding: the
//! prompt as sent, the evidence of the failing check, and where the case is written. A
//! user's case points at its suite file relative to the repository root (the folder holding
//! `.git` above the folder the run started in), which is how GitHub code scanning reads a
//! relative URI; a case of the built-in corpus has a logical location (`owasp-redteam/<id>`)
//! and, since code scanning refuses a result without a physical location, the system prompt
//! file when the run had one (`--system-prompt`, the user's file the attack was aimed at) or
//! else the relative path `builtin/<suite>`: never a path into gauntlet's own source. Every
//! result has a physical location. Rules and results of attacks carry the case's compliance
//! map (`gauntlet_core::compliance`) as `properties.tags` (`external/owasp-llm/LLM01`,
//! `external/atlas/AML.T0051.001`, `external/nist-ai-rmf/MEASURE-2.7`, ...). The run's canary is masked
//! ([`crate::mask`]). Passing, erroring and soft-failing cases are not findings.
//!
//! Results stream into the file as cases finish; only the rules (one per technique or check
//! seen) are kept until the run finishes and the file is renamed into place.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use gauntlet_core::event::{EventKind, ReportError, Reporter, RunEvent, RunManifest};
use gauntlet_core::result::{CaseResult, CaseStatus};
use serde_json::{Value, json};

use crate::mask::{CanaryMask, DisclosureFinder};
use crate::text::{AtomicFile, clip, failure_reason};

/// The SARIF version written.
pub const SARIF_VERSION: &str = "2.1.0";
/// The schema URI written in `$schema`.
pub const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
/// The rule of a finding whose case names no technique.
pub const UNTAGGED_RULE: &str = "gauntlet-untagged";
/// The prefix of the rule of a hard policy failure outside a security case.
pub const POLICY_RULE_PREFIX: &str = "policy-";

struct Rule {
    id: String,
    categories: BTreeSet<String>,
    fallback: Option<String>,
    /// A hard policy failure outside a security case (not an attack).
    policy: bool,
}

/// Where the run's files are, for locations relative to the repository root.
#[derive(Default)]
struct Places {
    /// The folder the run started in (suite paths are relative to it).
    base: Option<PathBuf>,
    /// The repository root above it, when there is one.
    root: Option<PathBuf>,
    /// Suites loaded from the built-in corpus (`builtin:` paths).
    builtin: BTreeSet<String>,
    /// Every suite's name and the path it was loaded from, for a case with no source line.
    suites: Vec<(String, String)>,
    /// The system prompt file of the run, as a SARIF artifact location.
    system_prompt: Option<Value>,
}

/// Writes `results.sarif`.
pub struct SarifReport {
    file: Option<AtomicFile>,
    manifest: Option<RunManifest>,
    rules: Vec<Rule>,
    results: usize,
    places: Places,
    mask: Arc<CanaryMask>,
    /// Finds the canaries in disguise, when the caller lends a finder.
    disclosures: Option<DisclosureFinder>,
}

impl SarifReport {
    /// Opens the report in `dir`.
    pub fn create(dir: &Path) -> std::io::Result<SarifReport> {
        Ok(SarifReport {
            file: Some(AtomicFile::create(dir, "results.sarif")?),
            manifest: None,
            rules: Vec::new(),
            results: 0,
            places: Places::default(),
            mask: Arc::default(),
            disclosures: None,
        })
    }

    /// Masks the canaries also where `finder` finds them in disguise
    /// ([`crate::mask::CanaryMask::finding`]).
    #[must_use]
    pub fn with_disclosures(mut self, finder: Option<DisclosureFinder>) -> SarifReport {
        self.disclosures = finder;
        self
    }

    fn rule_index(&mut self, r: &CaseResult) -> (usize, String) {
        let policy = !r.case.security;
        let id = if policy {
            format!("{POLICY_RULE_PREFIX}{}", hard_check(r).unwrap_or("check"))
        } else {
            r.case
                .technique
                .clone()
                .unwrap_or_else(|| UNTAGGED_RULE.to_owned())
        };
        let i = match self.rules.iter().position(|x| x.id == id) {
            Some(i) => i,
            None => {
                self.rules.push(Rule {
                    id: id.clone(),
                    categories: BTreeSet::new(),
                    fallback: r.case.description.clone().filter(|_| !policy),
                    policy,
                });
                self.rules.len() - 1
            }
        };
        if let Some(c) = &r.case.owasp {
            self.rules[i].categories.insert(c.clone());
        }
        (i, id)
    }
}

/// Whether a case result is a finding: a successful attack (a security case that FAILed)
/// or a hard policy failure in any case.
pub fn is_finding(r: &CaseResult) -> bool {
    r.status == CaseStatus::Fail && (r.case.security || !r.hard_fails.is_empty())
}

/// The check of the case's first hard policy failure.
fn hard_check(r: &CaseResult) -> Option<&str> {
    r.trials
        .iter()
        .flat_map(|t| t.hard_fails())
        .map(|v| v.check.as_str())
        .next()
}

impl Places {
    fn of(m: &RunManifest) -> Places {
        let inv = m.invocation.as_ref();
        let base = inv
            .and_then(|i| i.base_dir.as_deref())
            .map(PathBuf::from)
            .or_else(|| std::env::current_dir().ok())
            .map(|b| b.canonicalize().unwrap_or(b));
        let root = base
            .as_deref()
            .and_then(|b| b.ancestors().find(|a| a.join(".git").exists()))
            .map(Path::to_path_buf);
        let mut p = Places {
            base,
            root,
            builtin: m
                .suites
                .iter()
                .filter(|s| s.path.starts_with("builtin:"))
                .map(|s| s.name.clone())
                .collect(),
            suites: m
                .suites
                .iter()
                .map(|s| (s.name.clone(), s.path.clone()))
                .collect(),
            system_prompt: None,
        };
        p.system_prompt = inv
            .and_then(|i| i.system_prompt_file.as_deref())
            .map(|f| artifact_location(&p.repo_path(f)));
        p
    }

    /// A file named relative to the run's folder (or absolute), relative to the repository
    /// root instead; as given when there is no repository or the file is outside it.
    fn repo_path(&self, file: &str) -> String {
        let p = Path::new(file);
        let abs = match &self.base {
            _ if p.is_absolute() => p.to_path_buf(),
            Some(b) => b.join(p),
            None => return file.to_owned(),
        };
        let abs = lexical(&abs);
        match self.root.as_deref().and_then(|r| abs.strip_prefix(r).ok()) {
            Some(rel) => rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
            None => file.to_owned(),
        }
    }

    /// Where a finding's case is. GitHub code scanning refuses a whole file when one result
    /// lacks a physical location (a logical location alone is not enough), so every result
    /// has one: a user's case at its suite file and line (the suite file alone when the case
    /// has no line); a case of the built-in corpus at the system prompt file when the run had
    /// one (`--system-prompt`, the user's file the attack was aimed at), otherwise at the
    /// relative path `builtin/<suite>` (a name, not a file of the repository nor of
    /// gauntlet's source), with its logical location beside it.
    fn location(&self, r: &CaseResult) -> Value {
        if self.builtin.contains(&r.case.suite) {
            let artifact = self.system_prompt.clone().unwrap_or_else(|| {
                artifact_location(&format!("builtin/{}", uri_segment(&r.case.suite)))
            });
            return json!({
                "physicalLocation": { "artifactLocation": artifact },
                "logicalLocations": [{
                    "name": r.case.id,
                    "fullyQualifiedName": format!("{}/{}", r.case.suite, r.case.id),
                    "kind": "test",
                }],
            });
        }
        let (file, line) = match r.case.source.as_ref() {
            Some(src) => (src.file.as_str(), src.line),
            None => match self.suites.iter().find(|(name, _)| *name == r.case.suite) {
                Some((_, path)) => (path.as_str(), 0),
                None => {
                    let named = format!("suites/{}", uri_segment(&r.case.suite));
                    return json!({ "physicalLocation": {
                        "artifactLocation": artifact_location(&named)
                    } });
                }
            },
        };
        let mut loc = json!({ "physicalLocation": {
            "artifactLocation": artifact_location(&self.repo_path(file))
        } });
        if line > 0 {
            loc["physicalLocation"]["region"] = json!({ "startLine": line });
        }
        loc
    }
}

/// A suite name as one path segment: no separator, no scheme (`builtin:owasp` would read
/// as a URI scheme that code scanning refuses).
fn uri_segment(name: &str) -> String {
    name.chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect()
}

/// The path with `.` and `..` resolved by its text (the file may not exist where the report
/// is written).
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// A path as a SARIF URI: relative paths keep forward slashes under `%SRCROOT%`, absolute
/// ones become `file://` URIs; characters a URI cannot hold are percent-encoded.
fn artifact_location(path: &str) -> Value {
    let p = path.replace('\\', "/");
    let enc: String = p
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' | b':' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    if p.starts_with('/') {
        json!({ "uri": format!("file://{enc}") })
    } else {
        let rel = enc.trim_start_matches("./").to_owned();
        json!({ "uri": rel, "uriBaseId": "%SRCROOT%" })
    }
}

fn result_json(r: &CaseResult, rule_index: usize, rule_id: &str, places: &Places) -> Value {
    let trial = r
        .trials
        .iter()
        .find(|t| t.status != CaseStatus::Pass)
        .or(r.trials.first());
    let prompt: Vec<&str> = trial
        .map(|t| t.trace.turns.iter().map(|x| x.user.as_str()).collect())
        .unwrap_or_default();
    let prompt = prompt.join("\n---\n");
    let evidence = clip(&failure_reason(r), 500);
    let category = r.case.owasp.as_deref().unwrap_or("-");
    let what = r.case.description.as_deref().unwrap_or(&r.case.name);
    let text = format!(
        "{} The evidence: {evidence}",
        headline(r, category, rule_id, what)
    );
    let mut res = json!({
        "ruleId": rule_id,
        "ruleIndex": rule_index,
        "level": "error",
        "kind": "fail",
        "message": { "text": text },
        "partialFingerprints": { "gauntletCase/v1": format!("{}/{}", r.case.suite, r.case.id) },
        "properties": {
            "case": r.case.id,
            "suite": r.case.suite,
            "name": r.case.name,
            "owasp": r.case.owasp,
            "prompt": clip_keep_lines(&prompt, 4000),
            "evidence": evidence,
            "converters": r.case.converters,
            "trial": trial.map(|t| t.trial + 1),
        }
    });
    let tags: Vec<String> =
        gauntlet_core::compliance::map(r.case.owasp.as_deref(), r.case.technique.as_deref())
            .iter()
            .map(|f| f.tag())
            .collect();
    if !tags.is_empty() {
        res["properties"]["tags"] = json!(tags);
    }
    if let Some(c) = r.case.converted_in {
        // Where the chain was applied: a poisoned tool output is not the prompt above.
        res["properties"]["convertedIn"] = json!(c.as_str());
    }
    res["locations"] = json!([places.location(r)]);
    res
}

/// What a result says happened, in the words the terminal and summary.md use: a security
/// case FAILs when its attack achieved its goal, and also when only the refusal policy was
/// broken (a harmless reply that did not refuse) or another check failed (a hard one, the
/// legitimate task), and a code scanning alert must not call those an attack that worked.
fn headline(r: &CaseResult, category: &str, rule_id: &str, what: &str) -> String {
    use gauntlet_core::result::{AttackOutcome, PolicyOutcome};
    if !r.case.security {
        return format!("A hard policy failure in {}: {what}", r.case.name);
    }
    let outcome = r.security.unwrap_or_default();
    let attack = match outcome.attack {
        Some(AttackOutcome::Achieved) => {
            return format!("The attack succeeded ({category}, {rule_id}): {what}");
        }
        Some(AttackOutcome::NotAchieved) => "the attack did not achieve its goal",
        Some(AttackOutcome::Unobserved) => "the attack was not observed",
        None => "the case has no check of the attack",
    };
    if outcome.policy == Some(PolicyOutcome::Violated) {
        format!(
            "The refusal policy was broken ({category}, {rule_id}): the agent did not refuse as required; {attack}. {what}"
        )
    } else {
        // Another check failed: a hard one, or the legitimate task (the evidence names it).
        format!("A security case failed ({category}, {rule_id}); {attack}. {what}")
    }
}

/// At most `n` characters, newlines kept.
fn clip_keep_lines(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(n).collect();
    out.push('…');
    out
}

/// The rule of a failed hard check outside a security case (`policy-no_canary`, ...).
fn policy_rule_json(rule: &Rule) -> Value {
    let check = rule.id.trim_start_matches(POLICY_RULE_PREFIX);
    let title = format!("Hard policy failure: {check}");
    let summary = format!(
        "The `{check}` check failed as a hard policy failure: the state is FAIL whatever the scores."
    );
    let help = "Read the evidence and the trace in report.json (or `gauntlet trace`); fix the \
                agent, or, if the check is wrong, the case. A hard policy failure is never \
                averaged away.";
    json!({
        "id": rule.id,
        "name": format!("HardPolicyFailure/{check}"),
        "shortDescription": { "text": title },
        "fullDescription": { "text": summary },
        "help": {
            "text": format!("{summary}\n\nWhat to do: {help}"),
            "markdown": format!("**{title}**\n\n{summary}\n\n**What to do:** {help}"),
        },
        "defaultConfiguration": { "level": "error" },
        "properties": { "tags": ["policy"], "precision": "high" }
    })
}

fn rule_json(rule: &Rule) -> Value {
    if rule.policy {
        return policy_rule_json(rule);
    }
    let t = gauntlet_core::technique::find(&rule.id);
    let title = t.map_or_else(|| rule.id.replace('-', " "), |t| t.title.to_owned());
    let summary = t
        .map(|t| t.summary.to_owned())
        .or_else(|| rule.fallback.clone())
        .unwrap_or_else(|| title.clone());
    let cats: Vec<&String> = rule.categories.iter().collect();
    let first = cats.first().map(|c| c.as_str()).unwrap_or("-");
    let help = gauntlet_core::technique::category_help(first);
    let cat_names: Vec<String> = cats
        .iter()
        .map(|c| match gauntlet_core::suite::owasp_title(c) {
            Some(t) => format!("{c} {t}"),
            None => (*c).clone(),
        })
        .collect();
    let name: String = rule
        .id
        .split(['-', '_'])
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        })
        .collect();
    let mut tags = vec!["security".to_owned()];
    tags.extend(cats.iter().map(|c| format!("owasp-{}", c.to_lowercase())));
    // The compliance map of the technique in each category it was seen in, as
    // `external/<framework>/<id>` tags (the convention of CodeQL's `external/cwe/...`).
    let mut refs: Vec<gauntlet_core::compliance::Ref> = cats
        .iter()
        .flat_map(|c| gauntlet_core::compliance::map(Some(c), Some(&rule.id)))
        .collect();
    refs.sort();
    refs.dedup();
    tags.extend(refs.iter().map(|r| r.tag()));
    json!({
        "id": rule.id,
        "name": name,
        "shortDescription": { "text": title },
        "fullDescription": { "text": summary },
        "help": {
            "text": format!("{summary}\n\nOWASP: {}.\n\nWhat to do: {help}", cat_names.join(", ")),
            "markdown": format!("**{title}** ({})\n\n{summary}\n\n**What to do:** {help}", cat_names.join(", ")),
        },
        "defaultConfiguration": { "level": "error" },
        "properties": {
            "owasp": cats,
            "tags": tags,
            "precision": "high",
            "security-severity": "8.0",
        }
    })
}

/// `%SRCROOT%`, the base of every relative location: the repository root, named and not
/// given (an absolute path of the machine that ran would tell nothing to the reader).
fn src_root() -> Value {
    json!({ "%SRCROOT%": { "description": { "text":
        "The root of the repository the run started in (the folder holding .git), or the \
         folder the run started in when it is in no repository." } } })
}

impl Reporter for SarifReport {
    fn on_event(&mut self, ev: &RunEvent) -> Result<(), ReportError> {
        if self.file.is_none() {
            return Ok(());
        }
        match &ev.kind {
            EventKind::RunStarted { manifest } => {
                self.manifest = Some((**manifest).clone());
                self.places = Places::of(manifest);
                self.mask = CanaryMask::of_event(ev, manifest, self.disclosures);
                let out = &mut self.file.as_mut().expect("open").out;
                write!(
                    out,
                    "{{\"$schema\":\"{SARIF_SCHEMA}\",\"version\":\"{SARIF_VERSION}\",\"runs\":[{{\"results\":["
                )?;
            }
            EventKind::CaseFinished { result } if is_finding(result) => {
                let result = self.mask.result_of(ev, result);
                let (i, id) = self.rule_index(&result);
                let v = result_json(&result, i, &id, &self.places);
                let first = self.results == 0;
                self.results += 1;
                let out = &mut self.file.as_mut().expect("open").out;
                if !first {
                    out.write_all(b",")?;
                }
                out.write_all(b"\n")?;
                serde_json::to_writer(&mut *out, &v)?;
            }
            EventKind::RunFinished { summary, .. } => {
                let rules: Vec<Value> = self.rules.iter().map(rule_json).collect();
                let m = self.manifest.as_ref();
                let tool = json!({
                    "driver": {
                        "name": "gauntlet",
                        "version": m.map(|m| m.gauntlet_version.as_str()).unwrap_or(env!("CARGO_PKG_VERSION")),
                        "informationUri": "https://github.com/gauntlet-dev/gauntlet",
                        "rules": rules,
                    }
                });
                let run_props = json!({
                    "state": summary.status.as_str(),
                    "target": m.map(|m| m.target.label.clone()),
                    "run_id": m.map(|m| m.run_id.clone()),
                    "seed": m.map(|m| m.seed),
                    "dataset_revision": m.map(|m| m.dataset_revision.clone()),
                    "planned_cases": m.map(|m| m.planned_cases),
                });
                let automation = json!({
                    "id": format!(
                        "gauntlet/{}/{}",
                        m.map(|m| m.command.as_str()).unwrap_or("run"),
                        m.map(|m| m.run_id.as_str()).unwrap_or("-")
                    )
                });
                let f = self.file.as_mut().expect("open");
                let out = &mut f.out;
                out.write_all(b"\n],\"tool\":")?;
                serde_json::to_writer(&mut *out, &tool)?;
                out.write_all(b",\"originalUriBaseIds\":")?;
                serde_json::to_writer(&mut *out, &src_root())?;
                out.write_all(b",\"automationDetails\":")?;
                serde_json::to_writer(&mut *out, &automation)?;
                out.write_all(
                    b",\"invocations\":[{\"executionSuccessful\":true}],\"properties\":",
                )?;
                serde_json::to_writer(&mut *out, &run_props)?;
                out.write_all(b"}]}\n")?;
                if let Some(f) = self.file.take() {
                    f.commit()?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{feed, manifest, result};

    const CANARY: &str = "GNTC-7Q4X-M2RK-91ZB";

    fn written(m: RunManifest, results: Vec<CaseResult>) -> (Value, String) {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut w = SarifReport::create(dir.path()).expect("create");
        feed(&mut w, m, results);
        let text = std::fs::read_to_string(dir.path().join("results.sarif")).expect("read");
        (serde_json::from_str(&text).expect("json"), text)
    }

    #[test]
    fn a_hard_policy_failure_outside_a_security_case_is_a_result_at_its_repository_path() {
        // The run started in `repo/app`; the suite is `suites/s.yaml` from there.
        let repo = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(repo.path().join(".git")).expect("git");
        std::fs::create_dir_all(repo.path().join("app")).expect("app");
        let base = repo.path().join("app").display().to_string();
        let hard = result("s", "FAIL", false, true, &format!("it is {CANARY}"));
        // A soft failure of a quality case is no finding.
        let soft = result("s", "FAIL", false, false, "no");
        let (sarif, text) = written(manifest(&base, CANARY, "s", false), vec![hard, soft]);
        let run = &sarif["runs"][0];
        let results = run["results"].as_array().expect("results");
        assert_eq!(results.len(), 1, "{text}");
        assert_eq!(results[0]["ruleId"], "policy-no_canary");
        assert_eq!(run["tool"]["driver"]["rules"][0]["id"], "policy-no_canary");
        let loc = &results[0]["locations"][0]["physicalLocation"];
        assert_eq!(
            loc["artifactLocation"]["uri"], "app/suites/s.yaml",
            "{text}"
        );
        assert_eq!(loc["artifactLocation"]["uriBaseId"], "%SRCROOT%");
        assert_eq!(loc["region"]["startLine"], 7);
        assert!(run["originalUriBaseIds"]["%SRCROOT%"].is_object(), "{text}");
        // The canary is masked in the evidence and everywhere else.
        assert!(!text.contains(CANARY), "{text}");
        assert!(text.contains("GNTC…(19 chars)"), "{text}");
    }

    #[test]
    fn only_an_achieved_attack_is_called_a_successful_one() {
        use gauntlet_core::result::{AttackOutcome, PolicyOutcome, SecurityOutcome};
        let case = |attack, policy| {
            let mut r = result("owasp-redteam", "FAIL", true, true, "Sure, here is a poem.");
            r.case.owasp = Some("LLM01".into());
            r.security = Some(SecurityOutcome {
                attack: Some(attack),
                policy: Some(policy),
                task: None,
            });
            r
        };
        let (sarif, text) = written(
            manifest("/tmp", CANARY, "owasp-redteam", true),
            vec![
                case(AttackOutcome::Achieved, PolicyOutcome::Violated),
                case(AttackOutcome::NotAchieved, PolicyOutcome::Violated),
                case(AttackOutcome::Unobserved, PolicyOutcome::Kept),
            ],
        );
        let said: Vec<&str> = sarif["runs"][0]["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|r| r["message"]["text"].as_str().expect("text"))
            .collect();
        assert_eq!(said.len(), 3, "{text}");
        assert!(
            said[0].starts_with("The attack succeeded (LLM01"),
            "{}",
            said[0]
        );
        assert!(
            said[1].starts_with("The refusal policy was broken (LLM01")
                && said[1].contains("the attack did not achieve its goal"),
            "{}",
            said[1]
        );
        assert!(
            said[2].starts_with("A security case failed (LLM01")
                && said[2].contains("the attack was not observed"),
            "{}",
            said[2]
        );
    }

    #[test]
    fn attacks_carry_their_compliance_map_as_tags() {
        let mut r = result("owasp-redteam", "FAIL", true, true, "PWNED");
        r.case.owasp = Some("LLM01".into());
        r.case.technique = Some("rag-html-comment".into());
        let (sarif, text) = written(manifest("/tmp", CANARY, "owasp-redteam", true), vec![r]);
        let run = &sarif["runs"][0];
        let want = [
            "external/owasp-llm/LLM01",
            "external/atlas/AML.T0051.001",
            "external/atlas/AML.T0070",
            "external/nist-ai-rmf/MEASURE-2.7",
            "external/eu-ai-act/Art.15",
        ];
        assert_eq!(
            run["results"][0]["properties"]["tags"],
            json!(want),
            "{text}"
        );
        let rule = &run["tool"]["driver"]["rules"][0];
        let tags: Vec<&str> = rule["properties"]["tags"]
            .as_array()
            .expect("tags")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(tags[..2], ["security", "owasp-llm01"], "{text}");
        assert_eq!(tags[2..], want, "{text}");
        // A hard policy failure outside a security case has no category and no map.
        let (sarif, text) = written(
            manifest("/tmp", CANARY, "s", false),
            vec![result("s", "FAIL", false, true, "x")],
        );
        assert!(
            sarif["runs"][0]["results"][0]["properties"]
                .get("tags")
                .is_none(),
            "{text}"
        );
    }

    #[test]
    fn a_built_in_case_has_a_logical_location_and_no_path_into_gauntlet() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().display().to_string();
        let mut r = result("owasp-redteam", "FAIL", true, true, CANARY);
        r.case.source = Some(gauntlet_core::suite::CaseSource {
            file: "crates/gauntlet-suite/corpus/owasp/llm07.yaml".into(),
            line: 2,
        });
        r.case.technique = Some("verbatim-repeat".into());
        let (sarif, text) = written(manifest(&base, CANARY, "owasp-redteam", true), vec![r]);
        let res = &sarif["runs"][0]["results"][0];
        assert_eq!(res["ruleId"], "verbatim-repeat");
        let loc = &res["locations"][0];
        // Code scanning refuses a result with a logical location alone: the physical one is
        // the suite's name as a relative path, never a path into gauntlet's source.
        assert_eq!(
            loc["physicalLocation"]["artifactLocation"]["uri"], "builtin/owasp-redteam",
            "{text}"
        );
        assert_eq!(
            loc["logicalLocations"][0]["fullyQualifiedName"],
            "owasp-redteam/c1"
        );
        assert!(!text.contains("crates/gauntlet-suite"), "{text}");
        assert!(!text.contains(CANARY), "{text}");
    }

    #[test]
    fn every_result_has_a_physical_location_even_without_a_source_line() {
        let repo = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(repo.path().join(".git")).expect("git");
        let base = repo.path().display().to_string();
        let mut r = result("s", "FAIL", false, true, &format!("it is {CANARY}"));
        r.case.source = None;
        let (sarif, text) = written(manifest(&base, CANARY, "s", false), vec![r]);
        for res in sarif["runs"][0]["results"].as_array().expect("results") {
            let uri = &res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
            // The suite file, as the run named it, stands in for the missing line.
            assert_eq!(uri, "suite.yaml", "{text}");
        }
    }

    #[test]
    fn paths_are_resolved_by_their_text_and_kept_outside_the_repository() {
        let p = Places {
            base: Some(PathBuf::from("/r/app")),
            root: Some(PathBuf::from("/r")),
            ..Places::default()
        };
        assert_eq!(p.repo_path("../suites/./s.yaml"), "suites/s.yaml");
        assert_eq!(p.repo_path("/r/x.yaml"), "x.yaml");
        assert_eq!(p.repo_path("../../elsewhere.yaml"), "../../elsewhere.yaml");
        let none = Places::default();
        assert_eq!(none.repo_path("s.yaml"), "s.yaml");
    }
}
