//! `results.sarif`: [`SarifReport`], the successful attacks of a run as SARIF 2.1.0, the
//! format code-scanning tools read (GitHub code scanning among them).
//!
//! One rule per technique (its title and summary from `gauntlet_core::technique`, the OWASP
//! category it was seen in, and help on what to do about it), and one result per security
//! case that FAILed: the prompt as sent, the evidence of the failing check, and a location
//! pointing at the case in its suite file (the line of its `id`; built-in cases point at
//! their corpus file in gauntlet's repository). Passing, erroring and non-security cases are
//! not findings and do not appear.
//!
//! Results stream into the file as cases finish; only the rules (one per technique seen)
//! are kept until the run finishes and the file is renamed into place.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;

use gauntlet_core::event::{EventKind, ReportError, Reporter, RunEvent, RunManifest};
use gauntlet_core::result::{CaseResult, CaseStatus};
use serde_json::{Value, json};

use crate::text::{AtomicFile, clip, failure_reason};

/// The SARIF version written.
pub const SARIF_VERSION: &str = "2.1.0";
/// The schema URI written in `$schema`.
pub const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
/// The rule of a finding whose case names no technique.
pub const UNTAGGED_RULE: &str = "gauntlet-untagged";

struct Rule {
    id: String,
    categories: BTreeSet<String>,
    fallback: Option<String>,
}

/// Writes `results.sarif`.
pub struct SarifReport {
    file: Option<AtomicFile>,
    manifest: Option<RunManifest>,
    rules: Vec<Rule>,
    results: usize,
}

impl SarifReport {
    /// Opens the report in `dir`.
    pub fn create(dir: &Path) -> std::io::Result<SarifReport> {
        Ok(SarifReport {
            file: Some(AtomicFile::create(dir, "results.sarif")?),
            manifest: None,
            rules: Vec::new(),
            results: 0,
        })
    }

    fn rule_index(&mut self, r: &CaseResult) -> (usize, String) {
        let id = r
            .case
            .technique
            .clone()
            .unwrap_or_else(|| UNTAGGED_RULE.to_owned());
        let i = match self.rules.iter().position(|x| x.id == id) {
            Some(i) => i,
            None => {
                self.rules.push(Rule {
                    id: id.clone(),
                    categories: BTreeSet::new(),
                    fallback: r.case.description.clone(),
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

/// Whether a case result is a successful attack.
pub fn is_finding(r: &CaseResult) -> bool {
    r.case.security && r.status == CaseStatus::Fail
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

fn result_json(r: &CaseResult, rule_index: usize, rule_id: &str) -> Value {
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
    let mut res = json!({
        "ruleId": rule_id,
        "ruleIndex": rule_index,
        "level": "error",
        "kind": "fail",
        "message": {
            "text": format!(
                "The attack succeeded ({category}, {rule_id}): {} The evidence: {evidence}",
                r.case.description.as_deref().unwrap_or(&r.case.name),
            )
        },
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
    if let Some(src) = &r.case.source {
        let mut loc =
            json!({ "physicalLocation": { "artifactLocation": artifact_location(&src.file) } });
        if src.line > 0 {
            loc["physicalLocation"]["region"] = json!({ "startLine": src.line });
        }
        res["locations"] = json!([loc]);
    }
    res
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

fn rule_json(rule: &Rule) -> Value {
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

impl Reporter for SarifReport {
    fn on_event(&mut self, ev: &RunEvent) -> Result<(), ReportError> {
        if self.file.is_none() {
            return Ok(());
        }
        match &ev.kind {
            EventKind::RunStarted { manifest } => {
                self.manifest = Some((**manifest).clone());
                let out = &mut self.file.as_mut().expect("open").out;
                write!(
                    out,
                    "{{\"$schema\":\"{SARIF_SCHEMA}\",\"version\":\"{SARIF_VERSION}\",\"runs\":[{{\"results\":["
                )?;
            }
            EventKind::CaseFinished { result } if is_finding(result) => {
                let (i, id) = self.rule_index(result);
                let v = result_json(result, i, &id);
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
