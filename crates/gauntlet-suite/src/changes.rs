//! Change-aware plans: which cases to run for the files a change touched. The main type is
//! [`ChangePlan`], built by [`plan_changes`] from the loaded suites, the changed files and a
//! [`Profile`].
//!
//! A changed file gets its kind ([`FileChange`]) from what the suites reference first (a
//! suite or case file, a system prompt file, a judge template, a calibration record next to
//! a suite, a retrieved document), then from globs (the config's `change_globs`, else
//! built-in ones). Each kind then selects cases by the regression protocol's rerun scope
//! (a prompt change re-runs smoke and regression, a tool change adds the security pack, and
//! so on), within the suites it affects: a file a suite references affects that suite (a
//! document, only the cases that retrieve it), a file matched by a glob affects every suite.
//!
//! The profile sets the floor: `pr` runs smoke and the critical security cases (tagged
//! `critical`) plus what the changes select; `nightly` runs every case with k trials, the
//! red-team corpus and the judges; `release` adds the hold-out cases. A hold-out case is
//! only ever counted here, never named, as in every report.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use gauntlet_core::regression::FileChange;
use gauntlet_core::suite::Case;
use serde::Serialize;

use crate::load::LoadedSuite;

/// What a plan is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// A pull request: smoke, critical security, and what the changes select.
    Pr,
    /// Every night: every case with k trials, adversarial packs, judges.
    Nightly,
    /// A release: the nightly set and the hold-out cases.
    Release,
}

impl Profile {
    /// The name used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Pr => "pr",
            Profile::Nightly => "nightly",
            Profile::Release => "release",
        }
    }
}

/// A changed file as the plan sees it.
#[derive(Debug, Clone)]
pub struct ChangedFile {
    /// As shown: relative to the repository root (git) or as given.
    pub shown: String,
    /// Where it is, to compare with the files the suites reference.
    pub path: PathBuf,
}

/// One changed file and what it is.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FileVerdict {
    /// The file.
    pub file: String,
    /// Its kinds of change (a file can be several: a suite's own prompt file that a glob
    /// also matches is a prompt change once).
    pub kinds: Vec<FileChange>,
    /// Why, in words.
    pub why: String,
    /// The suites it affects.
    pub suites: Vec<String>,
}

/// A case the plan runs, and why.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PlannedRun {
    /// The case id.
    pub id: String,
    /// Why it is in the plan (`smoke`, `prompt change: regression`, ...).
    pub reasons: Vec<String>,
}

/// What runs of one suite.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SuitePlan {
    /// The suite's name.
    pub suite: String,
    /// Its file.
    pub file: String,
    /// Cases in the suite that are not hold-outs.
    pub cases: usize,
    /// The cases to run (not hold-outs), in suite order.
    pub selected: Vec<PlannedRun>,
    /// Hold-out cases in the suite (counted, never named).
    pub holdout: usize,
    /// Whether the plan runs the hold-out cases (`release`).
    pub holdout_included: bool,
}

/// The plan.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ChangePlan {
    /// The profile.
    pub profile: Profile,
    /// The changed files and what they are.
    pub changed: Vec<FileVerdict>,
    /// Changed files no rule classifies (listed so that nothing is skipped unseen).
    pub unclassified: Vec<String>,
    /// The kinds of change found.
    pub kinds: Vec<FileChange>,
    /// Per suite.
    pub suites: Vec<SuitePlan>,
    /// What else the profile asks for (calibration, the red-team corpus, k trials).
    pub also: Vec<String>,
    /// Facts worth knowing about the selection (no case tagged `critical`, say).
    pub notes: Vec<String>,
}

fn canon(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

fn has_check(c: &Case, key: &str) -> bool {
    c.expect.iter().any(|e| e.oracle.key() == key)
}

fn is_security(c: &Case) -> bool {
    c.is_security()
        || c.kind == gauntlet_core::suite::CaseKind::Refusal
        || matches!(c.pack.as_deref(), Some("refusal" | "security"))
}

fn in_pack(c: &Case, p: &str) -> bool {
    c.pack.as_deref() == Some(p)
}

fn tagged(c: &Case, t: &str) -> bool {
    c.tags.iter().any(|x| x == t)
}

/// The cases a kind of change selects in a suite it affects, each with its reason.
fn scope(kind: FileChange, c: &Case) -> Option<&'static str> {
    let smoke = in_pack(c, "smoke");
    let regression = in_pack(c, "regression");
    match kind {
        FileChange::Prompt if smoke || regression => Some("prompt change: smoke and regression"),
        FileChange::Tool | FileChange::AgentCode if smoke || regression || is_security(c) => {
            Some(if kind == FileChange::Tool {
                "tool change: smoke, regression and security"
            } else {
                "agent code change: smoke, regression and security"
            })
        }
        FileChange::Model
            if smoke
                || regression
                || c.kind == gauntlet_core::suite::CaseKind::Refusal
                || in_pack(c, "refusal") =>
        {
            Some("model change: smoke, refusal and regression")
        }
        FileChange::Judge if smoke || has_check(c, "judge") => {
            Some("judge change: smoke and the cases it judges")
        }
        FileChange::Retrieval
            if regression || tagged(c, "grounding") || !c.documents.is_empty() =>
        {
            Some("retrieval change: regression and grounding")
        }
        FileChange::Workflow
            if regression
                || tagged(c, "handoff")
                || tagged(c, "coordination")
                || has_check(c, "handoffs")
                || has_check(c, "agent_handles") =>
        {
            Some("workflow change: handoffs, coordination and regression")
        }
        _ => None,
    }
}

/// What one suite references, by canonical path.
struct Refs {
    suite_files: BTreeMap<PathBuf, String>,
    prompt: BTreeSet<PathBuf>,
    judge: BTreeSet<PathBuf>,
    documents: BTreeMap<PathBuf, BTreeSet<String>>,
    dir: PathBuf,
    stem: String,
}

impl Refs {
    fn of(s: &LoadedSuite) -> Refs {
        let origin = PathBuf::from(&s.origin);
        let dir = origin
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let mut suite_files = BTreeMap::new();
        suite_files.insert(canon(&origin), s.origin.clone());
        for inc in &s.suite.include {
            suite_files.insert(canon(&dir.join(inc)), inc.clone());
        }
        let prompt = s
            .suite
            .agent
            .system_prompt_file
            .iter()
            .map(|f| canon(&dir.join(f)))
            .collect();
        let judge = s
            .suite
            .judges
            .checks
            .values()
            .filter_map(|j| j.template_file.as_ref())
            .map(|f| canon(&dir.join(f)))
            .collect();
        let mut documents: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
        for c in &s.suite.cases {
            for d in &c.documents {
                if let Some(f) = &d.file {
                    documents
                        .entry(canon(&dir.join(f)))
                        .or_default()
                        .insert(c.id.clone());
                }
            }
        }
        let stem = origin
            .file_stem()
            .map(|x| x.to_string_lossy().into_owned())
            .unwrap_or_default();
        Refs {
            suite_files,
            prompt,
            judge,
            documents,
            dir: canon(&dir),
            stem,
        }
    }

    /// Whether `p` is a judge calibration record of this suite (`STEM.*.calibration.json`
    /// next to the suite file).
    fn is_calibration(&self, p: &Path) -> bool {
        p.parent() == Some(self.dir.as_path())
            && p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.starts_with(&format!("{}.", self.stem)) && n.ends_with(".calibration.json")
            })
    }
}

/// What the changed files select, per suite: kinds of change that affect the whole suite,
/// and cases selected by name with their reasons.
struct Affected {
    whole: Vec<BTreeSet<FileChange>>,
    by_case: Vec<BTreeMap<String, BTreeSet<String>>>,
}

/// One changed file, classified: its kinds, why, and the suites (by index) it affects.
#[derive(Default)]
struct Classified {
    kinds: BTreeSet<FileChange>,
    why: Vec<String>,
    affected: BTreeSet<usize>,
}

/// Builds the plan. `globs` replaces the built-in globs of the kinds it names.
pub fn plan_changes(
    suites: &[LoadedSuite],
    changed: &[ChangedFile],
    globs: &BTreeMap<FileChange, Vec<String>>,
    profile: Profile,
) -> ChangePlan {
    let refs: Vec<Refs> = suites.iter().map(Refs::of).collect();
    let mut sel = Affected {
        whole: vec![BTreeSet::new(); suites.len()],
        by_case: vec![BTreeMap::new(); suites.len()],
    };
    let mut verdicts = Vec::new();
    let mut unclassified = Vec::new();
    let mut kinds_found = BTreeSet::new();
    for f in changed {
        let mut c = classify_referenced(&canon(&f.path), suites, &refs, &mut sel);
        if c.kinds.is_empty() {
            classify_by_glob(f, globs, &mut c);
            // A glob match affects every suite: nothing says which one uses the file.
            if !c.kinds.is_empty() {
                for (i, w) in sel.whole.iter_mut().enumerate() {
                    w.extend(c.kinds.iter().copied());
                    c.affected.insert(i);
                }
            }
        }
        if c.kinds.is_empty() {
            unclassified.push(f.shown.clone());
            continue;
        }
        kinds_found.extend(c.kinds.iter().copied());
        verdicts.push(FileVerdict {
            file: f.shown.clone(),
            kinds: c.kinds.into_iter().collect(),
            why: c.why.join("; "),
            suites: c
                .affected
                .iter()
                .map(|i| suites[*i].suite.suite.clone())
                .collect(),
        });
    }

    let mut notes = Vec::new();
    let mut any_critical = false;
    let mut plans = Vec::new();
    for (i, s) in suites.iter().enumerate() {
        plans.push(suite_plan(i, s, profile, &sel, &mut any_critical));
        // Cases streamed from JSON lines are not in memory; a whole-suite selection says so.
        if !s.streamed.is_empty() {
            notes.push(format!(
                "suite `{}` streams cases from JSON lines: those are not listed here; run the suite with the printed filter, or whole",
                s.suite.suite
            ));
        }
    }
    if profile == Profile::Pr && !any_critical {
        notes.push("no security case is tagged `critical`: tag the ones a pull request must never break, and the PR profile runs them every time".into());
    }
    let also = profile_advice(suites, &plans, &kinds_found, profile, &mut notes);
    ChangePlan {
        profile,
        changed: verdicts,
        unclassified,
        kinds: kinds_found.into_iter().collect(),
        suites: plans,
        also,
        notes,
    }
}

/// Classifies a changed file (`p`, canonical) by what the suites reference: a suite or case
/// file, a system prompt file, a judge template or calibration record, a retrieved document.
/// Records what it selects in `sel`.
fn classify_referenced(
    p: &Path,
    suites: &[LoadedSuite],
    refs: &[Refs],
    sel: &mut Affected,
) -> Classified {
    let mut c = Classified::default();
    for (i, r) in refs.iter().enumerate() {
        let name = &suites[i].suite.suite;
        if let Some(rel) = r.suite_files.get(p) {
            c.kinds.insert(FileChange::Suite);
            c.affected.insert(i);
            let own = PathBuf::from(&suites[i].origin);
            if canon(&own) == p {
                c.why.push(format!("the file of suite `{name}`"));
                // The suite file holds the agent card, tools and defaults as well as
                // cases: every case of the suite may be affected.
                sel.whole[i].insert(FileChange::Suite);
            } else {
                c.why
                    .push(format!("cases included by suite `{name}` ({rel})"));
                for case in &suites[i].suite.cases {
                    let from = case.source.as_ref().map(|s| canon(Path::new(&s.file)));
                    if from.as_deref() == Some(p) {
                        sel.by_case[i]
                            .entry(case.id.clone())
                            .or_default()
                            .insert("its case file changed".into());
                    }
                }
                // Streamed (JSON lines) cases are not in memory: the whole suite.
                if suites[i].streamed.iter().any(|s| canon(s) == p) {
                    sel.whole[i].insert(FileChange::Suite);
                }
            }
        }
        if r.prompt.contains(p) {
            c.kinds.insert(FileChange::Prompt);
            c.affected.insert(i);
            sel.whole[i].insert(FileChange::Prompt);
            c.why
                .push(format!("the system prompt file of suite `{name}`"));
        }
        let calibration = r.is_calibration(p);
        if r.judge.contains(p) || calibration {
            c.kinds.insert(FileChange::Judge);
            c.affected.insert(i);
            sel.whole[i].insert(FileChange::Judge);
            c.why.push(format!(
                "a judge {} of suite `{name}`",
                if calibration {
                    "calibration record"
                } else {
                    "prompt template"
                }
            ));
        }
        if let Some(ids) = r.documents.get(p) {
            c.kinds.insert(FileChange::Retrieval);
            c.affected.insert(i);
            c.why.push(format!(
                "a document retrieved by {} case(s) of suite `{name}`",
                ids.len()
            ));
            for id in ids {
                sel.by_case[i]
                    .entry(id.clone())
                    .or_default()
                    .insert("retrieval change: a document it retrieves changed".into());
            }
        }
    }
    c
}

/// Classifies a file no suite references by the globs of each kind (`globs`, else the
/// built-in ones), matched against its shown path and its file name.
fn classify_by_glob(
    f: &ChangedFile,
    globs: &BTreeMap<FileChange, Vec<String>>,
    c: &mut Classified,
) {
    let file_name = Path::new(&f.shown)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for kind in FileChange::ALL {
        let list: Vec<String> = match globs.get(&kind) {
            Some(g) => g.clone(),
            None => kind
                .default_globs()
                .iter()
                .map(|g| (*g).to_owned())
                .collect(),
        };
        let hit = list
            .iter()
            .find(|g| gauntlet_core::glob(g, &f.shown) || gauntlet_core::glob(g, &file_name));
        if let Some(g) = hit {
            c.kinds.insert(kind);
            c.why.push(format!("matches `{g}` ({})", kind.as_str()));
        }
    }
}

/// The cases of suite `i` the profile and the changes select, each with its reasons.
/// Sets `any_critical` when a critical security case is among them.
fn suite_plan(
    i: usize,
    s: &LoadedSuite,
    profile: Profile,
    sel: &Affected,
    any_critical: &mut bool,
) -> SuitePlan {
    let mut selected = Vec::new();
    let mut cases = 0;
    let mut holdout = 0;
    for c in &s.suite.cases {
        if c.holdout {
            holdout += 1;
            continue;
        }
        cases += 1;
        let mut reasons: Vec<String> = Vec::new();
        match profile {
            Profile::Pr => {
                if in_pack(c, "smoke") {
                    reasons.push("smoke".into());
                }
                if is_security(c) && tagged(c, "critical") {
                    *any_critical = true;
                    reasons.push("critical security".into());
                }
                if sel.whole[i].contains(&FileChange::Suite) {
                    reasons.push("suite change: its suite file changed".into());
                }
                for k in &sel.whole[i] {
                    if let Some(r) = scope(*k, c) {
                        reasons.push(r.into());
                    }
                }
                if let Some(r) = sel.by_case[i].get(&c.id) {
                    reasons.extend(r.iter().cloned());
                }
            }
            Profile::Nightly | Profile::Release => reasons.push("full regression".into()),
        }
        reasons.dedup();
        if !reasons.is_empty() {
            selected.push(PlannedRun {
                id: c.id.clone(),
                reasons,
            });
        }
    }
    SuitePlan {
        suite: s.suite.suite.clone(),
        file: s.origin.clone(),
        cases,
        selected,
        holdout,
        holdout_included: profile == Profile::Release,
    }
}

/// What else the profile and the kinds of change ask for (calibration, k trials, the
/// red-team corpus, judges, hold-outs); facts worth knowing go to `notes`.
fn profile_advice(
    suites: &[LoadedSuite],
    plans: &[SuitePlan],
    kinds_found: &BTreeSet<FileChange>,
    profile: Profile,
    notes: &mut Vec<String>,
) -> Vec<String> {
    let mut also = Vec::new();
    if kinds_found.contains(&FileChange::Judge) {
        also.push("a judge changed: re-run its calibration (`gauntlet judge calibrate SUITE --check ID --labels FILE`) before it gates again".into());
    }
    match profile {
        Profile::Pr => {}
        Profile::Nightly | Profile::Release => {
            also.push(
                "pass^k: run with `-k 5`, so a blocking case passes only if every trial does"
                    .into(),
            );
            also.push("adversarial packs: `gauntlet redteam --target SPEC` (the built-in OWASP corpus) as well as the suites' security cases".into());
            if suites.iter().any(|s| !s.suite.judges.checks.is_empty()) {
                also.push("judges: pass `--judge SPEC` (or keep the suites' `judge:`), and check `gauntlet judge status SUITE` for which ones gate".into());
            }
        }
    }
    if profile == Profile::Release {
        let held: usize = plans.iter().map(|p| p.holdout).sum();
        if held == 0 {
            notes.push("no suite has hold-out cases: mark a slice `holdout: true` so that a release is measured on cases prompt iteration never saw".into());
        } else {
            also.push(format!(
                "hold-outs: {held} hold-out case(s) run with `--include-holdout`, reported only as pass rates per slice"
            ));
        }
    }
    also
}

impl ChangePlan {
    /// The `--filter` expression that selects the plan's cases (one term, `|`-joined ids),
    /// or `None` when the plan takes every case (nightly, release) or none.
    pub fn filter(&self) -> Option<String> {
        if self.profile != Profile::Pr {
            return None;
        }
        let ids: Vec<String> = self
            .suites
            .iter()
            .flat_map(|s| s.selected.iter().map(|c| format!("id:{}", c.id)))
            .collect();
        (!ids.is_empty()).then(|| ids.join("|"))
    }

    /// The cases selected, over every suite.
    pub fn selected(&self) -> usize {
        self.suites.iter().map(|s| s.selected.len()).sum()
    }
}
