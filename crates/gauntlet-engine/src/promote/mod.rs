//! A finding made a regression case (`gauntlet promote`): [`promote`] takes a
//! [`PromoteRequest`] (a stored run's case, or a captured production trace and the suite
//! that defines its case) and returns [`Promoted`]: the case written into a suite file with
//! its input frozen as it was sent (the user turns of the failing trial; the documents, tool
//! faults, scripted answers and settings of the case as its suite defines them), the checks
//! that caught it as the suite writes them, and tags that say where it came from.
//!
//! The file is a new suite next to the original (its header as written, so the agent, tools
//! and canary are the same), or an existing suite file the case is appended to. An append
//! only adds lines at the end of the file, and is kept only when the file read back holds
//! every case it held before, unchanged, plus the new one; otherwise the case goes into a
//! new file beside it, and the result says why. Whatever is written validates first.

mod yaml;

use std::path::{Path, PathBuf};

use gauntlet_core::expect::{Expect, NoCanaryCheck, Oracle};
use gauntlet_core::grader::{GradeContext, Grader};
use gauntlet_core::result::Outcome;
use gauntlet_core::suite::Case;
use gauntlet_core::trace::Trace;
use gauntlet_core::verdict::Verdict;
use gauntlet_graders::OracleGrader;
use gauntlet_store::Store;
use gauntlet_suite::capture::{Format, read_file};
use gauntlet_suite::{LoadOptions, LoadedSuite, load_str};
use serde_json::Value;

use crate::error::{EngineError, store_err};
use crate::setup::{load_all, resolve_suite_paths, runtime};

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
    let inv = manifest.invocation.ok_or_else(|| {
        EngineError::usage(
            format!("run {id} has no recorded invocation"),
            "promote from a run of this version",
        )
    })?;
    let mut allowed = crate::run::resume::allowed_paths(&inv);
    allowed.extend(allow.iter().cloned());
    let suites = load_all(
        &resolve_suite_paths(&inv, store.location())?,
        inv.canary.as_deref(),
        inv.system_prompt_file.as_deref(),
        None,
        &allowed,
    )?;
    let (suite, found) = find_case(suites, Some(&result.case.suite), case)?;
    Ok(Finding {
        suite,
        case: found,
        trace: trial.trace,
        verdicts: trial.verdicts,
        tag: format!("from-run:{id}"),
        from: format!("run {id}"),
    })
}

/// The case in the suites (of the named suite, when known). Cases streamed from a JSON
/// lines include are not held in memory and are not found.
fn find_case(
    suites: Vec<LoadedSuite>,
    suite: Option<&str>,
    case: &str,
) -> Result<(LoadedSuite, Case), EngineError> {
    for s in suites {
        if suite.is_some_and(|n| n != s.suite.suite) {
            continue;
        }
        if let Some(c) = s.suite.cases.iter().find(|c| c.id == case).cloned() {
            return Ok((s, c));
        }
    }
    Err(EngineError::usage(
        format!("no case `{case}` in the suite's files"),
        "the case must be defined in the suite file or a YAML include (not a JSON lines include)",
    ))
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

/// The regression case as JSON, the labels of the checks it carries, and the failed
/// verdicts it does not carry.
fn regression_case(
    f: &Finding,
    id: &str,
) -> Result<(Value, Vec<String>, Vec<String>), EngineError> {
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
    let first = f
        .verdicts
        .iter()
        .find(|v| failed(v))
        .map_or(String::new(), |v| v.evidence.clone());
    obj.insert("id".into(), Value::from(id));
    obj.insert(
        "description".into(),
        Value::from(format!(
            "Regression from {}: {}",
            f.from,
            gauntlet_core::text::clip(&first, 200)
        )),
    );
    let mut tags: Vec<String> = f.case.tags.clone();
    tags.extend(["regression".to_owned(), f.tag.clone()]);
    obj.insert("tags".into(), Value::from(tags));
    obj.insert("blocking".into(), Value::from(true));
    obj.insert(
        "expect".into(),
        serde_json::to_value(&expect).map_err(|e| EngineError::plain(e.to_string()))?,
    );
    Ok((value, checks, left_out))
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

/// Loads suite text as the file at `path` would be loaded.
fn check(path: &Path, text: &str, allow: &[PathBuf]) -> Result<LoadedSuite, EngineError> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let opts = LoadOptions {
        allow_paths: allow,
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

fn write(f: Finding, out: Option<&Path>, allow: &[PathBuf]) -> Result<Promoted, EngineError> {
    let original_path = PathBuf::from(&f.suite.origin);
    if !original_path.is_file() {
        return Err(EngineError::usage(
            format!(
                "the suite `{}` is no file to copy the agent's settings from",
                f.suite.origin
            ),
            "promote cases of suite files",
        ));
    }
    let wanted = out.map(Path::to_path_buf).unwrap_or_else(|| {
        let stem = original_path
            .file_stem()
            .map_or("suite".into(), |s| s.to_string_lossy().into_owned());
        original_path.with_file_name(format!("{stem}.regressions.yaml"))
    });
    let existing = wanted.is_file().then(|| read(&wanted)).transpose()?;
    let before = existing.as_deref().map(|t| check(&wanted, t, allow));
    let mut taken: Vec<&str> = f.suite.suite.cases.iter().map(|c| c.id.as_str()).collect();
    if let Some(Ok(b)) = &before {
        taken.extend(b.suite.cases.iter().map(|c| c.id.as_str()));
    }
    let id = free_id(&f.case.id, &taken);
    let (case, checks, left_out) = regression_case(&f, &id)?;
    let original = read(&original_path)?;
    let fresh = |path: &Path| -> Result<(), EngineError> {
        let text = yaml::new_suite(
            &original,
            &format!("{}-regressions", f.suite.suite.suite),
            &yaml::case_item(&case, 2),
        );
        check(path, &text, allow)?;
        std::fs::write(path, text)
            .map_err(|e| EngineError::plain(format!("failed to write `{}`: {e}", path.display())))
    };
    let (path, placement) = match (existing, before) {
        (None, _) => {
            fresh(&wanted)?;
            (wanted, Placement::Created)
        }
        (Some(text), Some(Ok(b))) => match yaml::appended(&text, &case)
            .map(|t| (check(&wanted, &t, allow), t))
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
