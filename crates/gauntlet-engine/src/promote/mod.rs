//! A finding made a regression case (`gauntlet promote`): [`promote`] takes a
//! [`PromoteRequest`] (a stored run's case, or a captured production trace and the suite
//! that defines its case) and returns [`Promoted`]: the case written into a suite file with
//! its input frozen as it was sent (the user turns of the failing trial; the documents, tool
//! faults, scripted answers and settings of the case as its suite defines them), the checks
//! that caught it as the suite writes them, and tags that say where it came from.
//!
//! The case is found wherever its suite defines it: inline, in a YAML include, streamed
//! from a JSON lines include (one case in memory at a time), or as the benign twin of a
//! security case (written as the plain task case it is, without the attack).
//!
//! The file is a new suite next to the original (its header as written, so the agent, tools
//! and canary are the same; for a built-in suite, its header as a suite file declares it,
//! `builtin`), or an existing suite file the case is appended to. An append
//! only adds lines at the end of the file, and is kept only when the file read back holds
//! every case it held before, unchanged, plus the new one; otherwise the case goes into a
//! new file beside it, and the result says why. Whatever is written validates first, and a
//! canary the run was given with `--canary` is written nowhere in it.

mod builtin;
mod yaml;

use std::path::{Path, PathBuf};

use gauntlet_core::expect::{Expect, NoCanaryCheck, Oracle};
use gauntlet_core::grader::{GradeContext, Grader};
use gauntlet_core::result::Outcome;
use gauntlet_core::suite::{BENIGN_PACK, BENIGN_SUFFIX, Case};
use gauntlet_core::trace::Trace;
use gauntlet_core::verdict::Verdict;
use gauntlet_graders::OracleGrader;
use gauntlet_store::Store;
use gauntlet_suite::capture::{Format, read_file};
use gauntlet_suite::{LoadOptions, LoadedSuite, load_str};
use serde_json::Value;

use crate::error::{EngineError, store_err};
use crate::setup::{load_all, runtime};

use builtin::RunInputs;

/// Where the finding comes from.
#[derive(Debug, Clone)]
pub enum PromoteSource {
    /// A stored run: an id, a prefix, `latest` or a baseline name.
    Run(String),
    /// A file of captured traces (OTLP JSON, proxy recordings, gauntlet JSON lines) and the
    /// suite that defines the case.
    Trace {
        /// The captured traces.
        file: PathBuf,
        /// The suite file.
        suite: PathBuf,
    },
}

/// A finding to promote.
#[derive(Debug, Clone)]
pub struct PromoteRequest {
    /// Where it comes from.
    pub source: PromoteSource,
    /// The case's id.
    pub case: String,
    /// The suite file to write or append to (default: `STEM.regressions.yaml` beside the
    /// original suite).
    pub out: Option<PathBuf>,
    /// Folders outside the suite's own that its files may come from (`--allow-path`).
    pub allow_paths: Vec<PathBuf>,
}

/// How the case reached its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// A new suite file was written.
    Created,
    /// It was appended to the existing file.
    Appended,
    /// The file asked for could not take it without a risk of losing something; a new file
    /// was written beside it.
    Beside {
        /// The file asked for.
        wanted: PathBuf,
        /// Why it was not appended to.
        why: String,
    },
}

/// What [`promote`] wrote.
#[derive(Debug, Clone)]
pub struct Promoted {
    /// The new case's id.
    pub id: String,
    /// Where the finding came from, in words (`run ID`, `trace FILE:LINE`).
    pub from: String,
    /// The file written.
    pub path: PathBuf,
    /// How.
    pub placement: Placement,
    /// The labels of the checks it carries (those that failed).
    pub checks: Vec<String>,
    /// The case is the benign twin of this security case, written as a plain task case.
    pub twin_of: Option<String>,
    /// The run's canary came from `--canary` and is not in the file: give it again to run it.
    pub needs_canary: bool,
    /// The user turns frozen.
    pub turns: usize,
    /// Failed verdicts that are no check of the case's (an attacker that wrote no attack),
    /// with their evidence: not carried.
    pub left_out: Vec<String>,
}

/// What was found: the case as its suite defines it, the failing trial, where it came from.
struct Finding {
    suite: LoadedSuite,
    case: Case,
    trace: Trace,
    verdicts: Vec<Verdict>,
    /// The tag naming the source (`from-run:ID`, `from-trace:FILE`).
    tag: String,
    from: String,
    /// What the run had from its command line (its canary, its system prompt file).
    run: RunInputs,
}

/// Writes the regression case a finding makes.
pub fn promote(store: Option<&mut Store>, req: &PromoteRequest) -> Result<Promoted, EngineError> {
    let finding = match &req.source {
        PromoteSource::Run(run) => {
            let store = store.ok_or_else(|| EngineError::plain("no store to read the run from"))?;
            from_run(store, run, &req.case, &req.allow_paths)?
        }
        PromoteSource::Trace { file, suite } => {
            from_trace(file, suite, &req.case, &req.allow_paths)?
        }
    };
    write(finding, req.out.as_deref(), &req.allow_paths)
}

fn failed(v: &Verdict) -> bool {
    !v.passed && v.assessed
}

/// The case of a stored run, its first trial a check failed, and the case in the suite the
/// run read.
fn from_run(
    store: &mut Store,
    run: &str,
    case: &str,
    allow: &[PathBuf],
) -> Result<Finding, EngineError> {
    let id = store.resolve(run).map_err(store_err)?;
    let result = store.case(&id, case).map_err(store_err)?.ok_or_else(|| {
        EngineError::usage(
            format!("run {id} has no case `{case}`"),
            format!("`gauntlet runs show {id}` lists its cases"),
        )
    })?;
    let trial = result
        .trials
        .into_iter()
        .find(|t| t.verdicts.iter().any(failed))
        .ok_or_else(|| {
            EngineError::usage(
                format!(
                    "no check failed in case `{case}` of run {id} ({})",
                    result.status.as_str()
                ),
                "promote a case a check caught (FAIL, or a failed check in a passing case)",
            )
        })?;
    let manifest = store.manifest(&id).map_err(store_err)?;
    let inv = manifest.invocation.clone().ok_or_else(|| {
        EngineError::usage(
            format!("run {id} has no recorded invocation"),
            "promote from a run of this version",
        )
    })?;
    let mut allowed = crate::run::resume::allowed_paths(&inv);
    allowed.extend(allow.iter().cloned());
    let suites = crate::setup::load_recorded(&inv, &manifest, store.location(), None, &allowed)?;
    let (suite, found) = find_case(suites, Some(&result.case.suite), case)?;
    let base = inv.base_dir.as_deref().map(Path::new);
    let run = RunInputs {
        // The run records the canary in force; only one the suite does not write is secret.
        canary: inv
            .canary
            .clone()
            .filter(|c| suite.suite.agent.canary.as_deref() != Some(c.as_str())),
        system_prompt_file: inv.system_prompt_file.as_deref().map(|p| {
            base.filter(|_| Path::new(p).is_relative())
                .map_or_else(|| PathBuf::from(p), |b| b.join(p))
        }),
    };
    Ok(Finding {
        suite,
        case: found,
        trace: trial.trace,
        verdicts: trial.verdicts,
        tag: format!("from-run:{id}"),
        from: format!("run {id}"),
        run,
    })
}

/// The case in the suites (of the named suite, when known).
fn find_case(
    suites: Vec<LoadedSuite>,
    suite: Option<&str>,
    case: &str,
) -> Result<(LoadedSuite, Case), EngineError> {
    for s in suites {
        if suite.is_some_and(|n| n != s.suite.suite) {
            continue;
        }
        if let Some(c) = lookup(&s, case)? {
            return Ok((s, c));
        }
    }
    Err(EngineError::usage(
        format!("no case `{case}` in the suite's files"),
        "check the case id: `gauntlet run SUITE --list` lists the cases as a run takes them",
    ))
}

/// The case `id` of a suite: inline or from a YAML include, else streamed from its JSON
/// lines includes one case at a time (a large file is never held whole), or the benign
/// twin (`ID~benign`) of one of them.
fn lookup(s: &LoadedSuite, id: &str) -> Result<Option<Case>, EngineError> {
    let base = id.strip_suffix(BENIGN_SUFFIX);
    let hit = |c: &Case| -> Option<Case> {
        if c.id == id {
            Some(c.clone())
        } else if base == Some(c.id.as_str()) {
            c.benign_twin()
        } else {
            None
        }
    };
    if let Some(c) = s.suite.cases.iter().find_map(hit) {
        return Ok(Some(c));
    }
    for path in &s.streamed {
        let cases = gauntlet_suite::load::stream_jsonl(path)
            .map_err(|e| EngineError::plain(format!("failed to read `{}`: {e}", path.display())))?;
        for c in cases {
            let c = c.map_err(|e| EngineError::plain(e.to_string()))?;
            if let Some(found) = hit(&c) {
                return Ok(Some(found));
            }
        }
    }
    Ok(None)
}

/// The case's trace in a file of captured traces (by its case id, else by its first user
/// turn), graded against the suite's checks as `gauntlet grade` would.
fn from_trace(
    file: &Path,
    suite: &Path,
    case: &str,
    allow: &[PathBuf],
) -> Result<Finding, EngineError> {
    let suites = load_all(&[suite.display().to_string()], None, None, None, allow)?;
    let (loaded, found) = find_case(suites, None, case)?;
    let first = gauntlet_suite::capture::matching::first_turn(&found)
        .map(gauntlet_suite::capture::matching::normalize);
    let mut hit = None;
    let mut diags = Vec::new();
    read_file(
        file,
        Format::Auto,
        &[],
        &mut |t| {
            let by_id = t.trial.case_id.as_deref() == Some(case);
            let by_input = first.is_some()
                && t.trial
                    .first_user()
                    .map(gauntlet_suite::capture::matching::normalize)
                    == first;
            if hit.is_none() && (by_id || (t.trial.case_id.is_none() && by_input)) {
                hit = Some(t);
            }
        },
        &mut |d| diags.push(d),
    )
    .map_err(|d| EngineError::Diagnostics(vec![d]))?;
    let Some(t) = hit else {
        if !diags.is_empty() {
            return Err(EngineError::Diagnostics(diags));
        }
        return Err(EngineError::usage(
            format!("no trace of case `{case}` in {}", file.display()),
            "a trace names its case (`case_id`) or starts with the case's first user turn",
        ));
    };
    let verdicts = grade(&loaded, &found, &t.trial.trace, t.trial.outcome)?;
    if !verdicts.iter().any(failed) {
        return Err(EngineError::usage(
            format!(
                "the trace at {} passes every check of case `{case}`",
                t.source
            ),
            "promote a trace a check catches",
        ));
    }
    let name = file.file_name().map_or_else(
        || file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    Ok(Finding {
        suite: loaded,
        case: found,
        trace: t.trial.trace,
        verdicts,
        tag: format!("from-trace:{name}"),
        from: format!("trace {}", t.source),
        run: RunInputs::default(),
    })
}

/// The verdicts of the suite's checks on a captured trace (scripts included; judges are
/// left out: none is configured here).
fn grade(
    s: &LoadedSuite,
    case: &Case,
    trace: &Trace,
    outcome: Outcome,
) -> Result<Vec<Verdict>, EngineError> {
    let grader = OracleGrader::new().with_scripts(std::sync::Arc::new(
        gauntlet_runner::ProcessScripts::default(),
    ));
    let canary = case.canary.as_deref().or(s.suite.agent.canary.as_deref());
    let ctx = GradeContext {
        case,
        trace,
        outcome,
        canary,
        system_prompt: s.system_prompt.as_deref(),
        tools: &s.suite.agent.tools,
        suite_dir: s.dir.as_deref(),
    };
    Ok(runtime()?.block_on(grader.grade(ctx)))
}

/// The checks a finding's failed verdicts name, as the case writes them, and the failed
/// verdicts that are no check of the case's.
fn caught_by(f: &Finding) -> Result<(Vec<Expect>, Vec<String>), EngineError> {
    let mut expect: Vec<Expect> = Vec::new();
    let mut left_out = Vec::new();
    for v in f.verdicts.iter().filter(|v| failed(v)) {
        let entry = f
            .case
            .expect
            .iter()
            .find(|e| e.oracle.key() == v.check && e.label() == v.label)
            .cloned()
            .or_else(|| {
                // The leak check every reply gets when a canary is in force.
                (v.check == "no_canary")
                    .then(|| Expect::new(Oracle::NoCanary(NoCanaryCheck { canary: None })))
            });
        match entry {
            Some(e) if !expect.contains(&e) => expect.push(e),
            Some(_) => {}
            None => left_out.push(format!("{}: {}", v.label, v.evidence)),
        }
    }
    if expect.is_empty() {
        return Err(EngineError::usage(
            format!(
                "no check of case `{}` caught it: {}",
                f.case.id,
                left_out.join("; ")
            ),
            "promote a case one of its own checks failed",
        ));
    }
    if f.case.benign_of.is_some() {
        // A benign twin is a plain task case: its checks stand for nothing but themselves.
        for e in &mut expect {
            e.role = None;
        }
    }
    Ok((expect, left_out))
}

/// The regression case as JSON, the labels of the checks it carries, and the failed
/// verdicts it does not carry.
fn regression_case(
    f: &Finding,
    id: &str,
) -> Result<(Value, Vec<String>, Vec<String>), EngineError> {
    let (expect, left_out) = caught_by(f)?;
    let checks = expect.iter().map(Expect::label).collect();
    let mut value = serde_json::to_value(&f.case).map_err(|e| EngineError::plain(e.to_string()))?;
    let obj = value.as_object_mut().expect("a case is an object");
    // Frozen as sent: converters, attackers and simulated users already did their work.
    for key in [
        "converters",
        "attack",
        "strategy",
        "simulated_user",
        "benign",
        "metamorphic",
        "holdout",
    ] {
        obj.remove(key);
    }
    if f.case.benign_of.is_some() && f.case.pack.as_deref() == Some(BENIGN_PACK) {
        obj.remove("pack");
    }
    let users: Vec<&str> = f.trace.turns.iter().map(|t| t.user.as_str()).collect();
    match users.as_slice() {
        [] => {}
        [one] => {
            obj.remove("turns");
            obj.insert("input".into(), Value::from(*one));
        }
        many => {
            obj.remove("input");
            obj.insert("turns".into(), Value::from(many.to_vec()));
        }
    }
    obj.insert("id".into(), Value::from(id));
    obj.insert("description".into(), Value::from(description(f)));
    let mut tags: Vec<String> = f.case.tags.clone();
    tags.extend(["regression".to_owned(), f.tag.clone()]);
    if let Some(base) = &f.case.benign_of {
        tags.push(format!("benign-twin-of:{base}"));
    }
    obj.insert("tags".into(), Value::from(tags));
    obj.insert("blocking".into(), Value::from(true));
    obj.insert(
        "expect".into(),
        serde_json::to_value(&expect).map_err(|e| EngineError::plain(e.to_string()))?,
    );
    refuse_run_canary(f, &value)?;
    Ok((value, checks, left_out))
}

/// Where the case came from and the first failed check's evidence; without the evidence
/// when it shows the run's `--canary` in any encoding.
fn description(f: &Finding) -> String {
    let first = f.verdicts.iter().find(|v| failed(v));
    let evidence = first.map_or("", |v| v.evidence.as_str());
    let leaks = f.run.canary.as_deref().is_some_and(|c| {
        gauntlet_graders::canary::CanaryDetector::new(c)
            .first_leak(evidence)
            .is_some()
    });
    if leaks {
        let label = first.map_or("", |v| v.label.as_str());
        return format!(
            "Regression from {}: {label} failed (its evidence shows the run's canary, left out)",
            f.from
        );
    }
    format!(
        "Regression from {}: {}",
        f.from,
        gauntlet_core::text::clip(evidence, 200)
    )
}

/// Refuses a case whose frozen input holds the canary the run was given with `--canary`
/// (an attacker model that wrote a leaked secret into its next turn): it may be a real
/// secret, and a suite file is committed.
fn refuse_run_canary(f: &Finding, case: &Value) -> Result<(), EngineError> {
    let Some(canary) = f.run.canary.as_deref() else {
        return Ok(());
    };
    if gauntlet_graders::canary::CanaryDetector::new(canary)
        .first_leak(&case.to_string())
        .is_some()
    {
        return Err(EngineError::usage(
            format!(
                "the frozen case `{}` holds the run's --canary, which is written in no file",
                f.case.id
            ),
            "promote it from a run with a canary that is no secret (the suite's own `canary:`)",
        ));
    }
    Ok(())
}

/// Reads a suite file's text for the regression file.
fn read(path: &Path) -> Result<String, EngineError> {
    std::fs::read_to_string(path).map_err(|e| {
        EngineError::usage(
            format!("failed to read `{}`: {e}", path.display()),
            "check the path",
        )
    })
}

/// How a written file is loaded to check it: the folders it may read from, and the canary
/// the run was given (`--canary`), which its `no_canary` checks rely on.
#[derive(Clone, Copy)]
struct Check<'a> {
    allow: &'a [PathBuf],
    canary: Option<&'a str>,
}

/// Loads suite text as the file at `path` would be loaded.
fn check(path: &Path, text: &str, c: Check<'_>) -> Result<LoadedSuite, EngineError> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let opts = LoadOptions {
        allow_paths: c.allow,
        run_canary: c.canary,
        ..LoadOptions::default()
    };
    load_str(&path.display().to_string(), text, dir, &opts).map_err(EngineError::Diagnostics)
}

/// An id no case of `taken` has: `CASE-regression`, then `-2`, `-3`...
fn free_id(base: &str, taken: &[&str]) -> String {
    let mut id = format!("{base}-regression");
    let mut n = 2;
    while taken.contains(&id.as_str()) {
        id = format!("{base}-regression-{n}");
        n += 1;
    }
    id
}

/// The file the case goes to, and the text of the suite whose header a new file takes: the
/// suite file as written, or a built-in suite's header as a file declares it.
fn destination(f: &Finding, out: Option<&Path>) -> Result<(PathBuf, String), EngineError> {
    let original_path = PathBuf::from(&f.suite.origin);
    if original_path.is_file() {
        let wanted = out.map(Path::to_path_buf).unwrap_or_else(|| {
            let stem = original_path
                .file_stem()
                .map_or("suite".into(), |s| s.to_string_lossy().into_owned());
            original_path.with_file_name(format!("{stem}.regressions.yaml"))
        });
        let text = read(&original_path)?;
        // A suite written in flow style (JSON, as `redteam --suite --emit` writes it) has no
        // block-style header to copy line by line: its settings are written out instead.
        if !yaml::block_style(&text) {
            let header = builtin::header(&f.suite, &wanted, &f.run)?;
            return Ok((wanted, header));
        }
        return Ok((wanted, text));
    }
    let retargeted = f.suite.origin.ends_with(crate::setup::RETARGETED_SUFFIX);
    if !f.suite.origin.starts_with("builtin:") && !retargeted {
        return Err(EngineError::usage(
            format!(
                "the suite `{}` is no file to copy the agent's settings from",
                f.suite.origin
            ),
            "promote cases of suite files, or of the built-in suites",
        ));
    }
    let wanted = out.map_or_else(|| builtin::default_path(&f.suite), Path::to_path_buf);
    let header = builtin::header(&f.suite, &wanted, &f.run)?;
    Ok((wanted, header))
}

fn write(f: Finding, out: Option<&Path>, allow: &[PathBuf]) -> Result<Promoted, EngineError> {
    let (wanted, original) = destination(&f, out)?;
    let c = Check {
        allow,
        canary: f.run.canary.as_deref(),
    };
    let existing = wanted.is_file().then(|| read(&wanted)).transpose()?;
    let before = existing.as_deref().map(|t| check(&wanted, t, c));
    let mut taken: Vec<&str> = f.suite.suite.cases.iter().map(|c| c.id.as_str()).collect();
    if let Some(Ok(b)) = &before {
        taken.extend(b.suite.cases.iter().map(|c| c.id.as_str()));
    }
    // A twin's id names its case and what it is, without the `~` that marks planned twins.
    let base = match &f.case.benign_of {
        Some(of) => format!("{of}-benign"),
        None => f.case.id.clone(),
    };
    let id = free_id(&base, &taken);
    let (case, checks, left_out) = regression_case(&f, &id)?;
    let fresh = |path: &Path| -> Result<(), EngineError> {
        let text = yaml::new_suite(
            &original,
            &format!("{}-regressions", f.suite.suite.suite),
            &yaml::case_item(&case, 2),
        );
        check(path, &text, c)?;
        std::fs::write(path, text)
            .map_err(|e| EngineError::plain(format!("failed to write `{}`: {e}", path.display())))
    };
    let (path, placement) = match (existing, before) {
        (None, _) => {
            fresh(&wanted)?;
            (wanted, Placement::Created)
        }
        (Some(text), Some(Ok(b))) => match yaml::appended(&text, &case)
            .map(|t| (check(&wanted, &t, c), t))
        {
            Some((Ok(after), t)) if keeps(&b, &after) => {
                std::fs::write(&wanted, t).map_err(|e| {
                    EngineError::plain(format!("failed to write `{}`: {e}", wanted.display()))
                })?;
                (wanted, Placement::Appended)
            }
            other => {
                let why = match other {
                    None => "its `cases:` list is not the last key of the file, in block style"
                        .to_owned(),
                    Some((Err(_), _)) => {
                        "the file with the case appended does not validate".to_owned()
                    }
                    Some(_) => "the file read back would not hold its cases unchanged".to_owned(),
                };
                beside(&wanted, &id, why, &fresh)?
            }
        },
        (Some(_), _) => beside(
            &wanted,
            &id,
            "it is not a valid suite file".to_owned(),
            &fresh,
        )?,
    };
    Ok(Promoted {
        id,
        from: f.from,
        path,
        placement,
        checks,
        twin_of: f.case.benign_of.clone(),
        needs_canary: f.run.canary.is_some(),
        turns: f.trace.turns.len(),
        left_out,
    })
}

/// Every case of `before` is in `after`, unchanged and in order, and one more.
fn keeps(before: &LoadedSuite, after: &LoadedSuite) -> bool {
    after.case_count == before.case_count + 1
        && after.suite.cases.len() == before.suite.cases.len() + 1
        && after.suite.cases[..before.suite.cases.len()] == before.suite.cases[..]
}

/// Writes a new file beside `wanted`, named after the case.
fn beside(
    wanted: &Path,
    id: &str,
    why: String,
    fresh: &dyn Fn(&Path) -> Result<(), EngineError>,
) -> Result<(PathBuf, Placement), EngineError> {
    let stem = wanted
        .file_stem()
        .map_or("suite".into(), |s| s.to_string_lossy().into_owned());
    let path = wanted.with_file_name(format!("{stem}.{id}.yaml"));
    if path.exists() {
        return Err(EngineError::usage(
            format!(
                "`{}` cannot take the case ({why}), and `{}` exists",
                wanted.display(),
                path.display()
            ),
            "name another file with --out",
        ));
    }
    fresh(&path)?;
    Ok((
        path,
        Placement::Beside {
            wanted: wanted.to_path_buf(),
            why,
        },
    ))
}
