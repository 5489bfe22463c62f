//! Grading traces captured elsewhere (`gauntlet grade TRACES... --suite SUITE`, [`grade`]):
//! OTLP JSON exports of GenAI spans, the recording proxy's JSON lines or gauntlet's
//! JSON-lines trace format, graded against a suite's cases with no target call, as a
//! normal run in the store with evidence `replay` (or `online`): a [`GradeRequest`] in, a
//! [`Graded`] out.
//!
//! Two passes keep memory flat however large the inputs: the first streams every file
//! (`gauntlet_suite::capture`), matches each trace to a case and writes it, converted, to a
//! spool file next to nothing but an index (case id to offsets); the second walks the suite's
//! cases and reads each case's traces back as its trials, through the runner's re-grade mode.
//! A trace that matches no case is counted and listed; a case that no trace matched is
//! NOT_ASSESSED ([`CapturedGrader`]); checks that need a live target (injected faults,
//! documents the harness would have delivered) are NOT_ASSESSED when the trace shows they
//! did not happen.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use gauntlet_core::capture::CapturedTrial;
use gauntlet_core::event::{EvidenceLevel, Invocation, Reporter, RunManifest, SideEffectMode};
use gauntlet_core::grader::{GradeContext, Grader};
use gauntlet_core::result::{Outcome, Score, TrialResult};
use gauntlet_core::target::{BoxFuture, TargetInfo};
use gauntlet_core::trace::{Span, Trace};
use gauntlet_core::verdict::{Dimension, Verdict};
use gauntlet_graders::OracleGrader;
use gauntlet_runner::{CaseJob, PlanItem, RunConfig, RunOutcome, Runner};
use gauntlet_store::{Store, StoreLocation};
use gauntlet_suite::capture::matching::{Matcher, Rule};
use gauntlet_suite::capture::{Format, ReadTrace, read_file};
use gauntlet_suite::filter::Selection;
use gauntlet_suite::{Diagnostic, ManifestFacts, Plan, PlanSettings};
use serde::{Deserialize, Serialize};

use crate::error::{EngineError, Notice, store_err};
use crate::judge::PanelSetup;
use crate::run::{graded_run_reporters, recorded};
use crate::setup::{current_dir, load_all, new_run_id, runtime};

/// The most unmatched traces and problems listed in the run's warnings (all of them go to
/// `unmatched.jsonl` in the report folder).
pub const LISTED: usize = 20;

/// What a case with no captured trace says.
const NO_TRACE: &str = "no captured trace matched this case";

/// One trace as spooled between the passes.
#[derive(Serialize, Deserialize)]
struct Spooled {
    source: String,
    label: String,
    outcome: Outcome,
    error: Option<String>,
    duration_ms: u64,
    trace: Trace,
}

/// A trace that matched no case, or could not be graded.
#[derive(Serialize)]
struct Unmatched<'a> {
    source: &'a str,
    trace: &'a str,
    reason: &'a str,
}

/// The spool file, removed when dropped.
struct Spool {
    path: PathBuf,
    file: std::fs::File,
    len: u64,
}

impl Spool {
    fn create() -> Result<Spool, EngineError> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path =
            std::env::temp_dir().join(format!("gauntlet-grade-{}-{now}.jsonl", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| {
                EngineError::usage(
                    format!("cannot create a spool file in {}: {e}", path.display()),
                    "set TMPDIR to a writable folder with room for the converted traces",
                )
            })?;
        Ok(Spool { path, file, len: 0 })
    }

    fn push(&mut self, s: &Spooled) -> Result<(u64, u64), EngineError> {
        let mut line = serde_json::to_vec(s).expect("a trace serializes");
        line.push(b'\n');
        self.file
            .write_all(&line)
            .map_err(|e| EngineError::plain(format!("cannot write the spool file: {e}")))?;
        let at = self.len;
        self.len += line.len() as u64;
        Ok((at, line.len() as u64))
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Grades the model's work as the suite's graders see it, and says what could not be seen
/// in a captured trace: a case no trace matched, faults the harness would have injected,
/// documents it would have delivered.
struct CapturedGrader {
    inner: OracleGrader,
    missing: HashSet<String>,
}

impl Grader for CapturedGrader {
    fn judge_calls_per_exchange(&self, case: &gauntlet_core::suite::Case) -> u32 {
        self.inner.judge_calls_per_exchange(case)
    }

    fn grade<'a>(&'a self, ctx: GradeContext<'a>) -> BoxFuture<'a, Vec<Verdict>> {
        Box::pin(async move {
            if self.missing.contains(&ctx.case.id) {
                return vec![Verdict::not_assessed(
                    "captured_trace",
                    "captured trace".into(),
                    Dimension::Outcome,
                    format!("{NO_TRACE}: nothing was observed, so none of its checks could run"),
                )];
            }
            let mut verdicts = self.inner.grade(ctx).await;
            verdicts.extend(live_only(ctx.case, ctx.trace));
            verdicts
        })
    }
}

/// The checks of a case that need a live target, when the captured trace shows that what
/// they need did not happen.
fn live_only(case: &gauntlet_core::suite::Case, trace: &Trace) -> Vec<Verdict> {
    let mut out = Vec::new();
    let injected = trace.tool_calls().any(|t| t.injected.is_some());
    let faults: Vec<String> = case.tool_faults.iter().map(|f| f.tool.clone()).collect();
    if !faults.is_empty() && !injected {
        out.push(Verdict::not_assessed(
            "tool_faults",
            "fault injection".into(),
            Dimension::ToolExecution,
            format!(
                "the case injects tool faults (on {}), which needs a live target: the captured trace shows none applied, so how the agent handles them was not observed",
                faults
                    .iter()
                    .map(|t| format!("`{t}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let texts: Vec<&str> = case
        .documents
        .iter()
        .filter_map(|d| d.text.as_deref())
        .filter(|t| !t.trim().is_empty())
        .collect();
    if !case.documents.is_empty() {
        let seen = |needle: &str| {
            let needle = needle.trim();
            trace.turns.iter().any(|t| t.user.contains(needle))
                || trace.spans.iter().any(|s| match s {
                    Span::LlmCall(l) => l.messages_in.iter().any(|m| m.content.contains(needle)),
                    Span::ToolCall(t) => t.output.as_deref().is_some_and(|o| o.contains(needle)),
                    Span::Decision(_) => false,
                })
        };
        if texts.is_empty() || !texts.iter().any(|t| seen(t)) {
            out.push(Verdict::not_assessed(
                "documents",
                "documents delivered".into(),
                Dimension::Policy,
                "the case gives the agent documents, which a live run delivers: none of them appears in the captured trace, so its checks say nothing about how the agent treats them".into(),
            ));
        }
    }
    out
}

/// A grade of captured traces.
pub struct GradeRequest {
    /// The suite files whose cases the traces are matched to.
    pub suites: Vec<String>,
    /// The trace files.
    pub traces: Vec<PathBuf>,
    /// Their format (`auto` detects it per file).
    pub format: Format,
    /// How a trace finds its case, tried in order.
    pub rules: Vec<Rule>,
    /// `--judge SPEC`.
    pub judge: Option<String>,
    /// `--judge-cache FILE`.
    pub judge_cache: Option<PathBuf>,
    /// `--embeddings SPEC`: the embeddings model of `similar:` checks.
    pub embeddings: Option<String>,
    /// The config file with named targets.
    pub config: Option<PathBuf>,
    /// The run store the run is written to.
    pub store: StoreLocation,
    /// `--run-id`, else a fresh one.
    pub run_id: Option<String>,
    /// The traces come from production (`online` evidence) rather than a replay.
    pub online: bool,
    /// Skip malformed traces instead of failing.
    pub skip_malformed: bool,
    /// Cases graded at once.
    pub concurrency: Option<usize>,
    /// The report folder.
    pub out: PathBuf,
    /// The terminal view, the first reporter.
    pub view: Option<Box<dyn Reporter>>,
}

/// What a grade did.
pub struct Graded {
    /// The new run's id.
    pub run_id: String,
    /// The run.
    pub outcome: RunOutcome,
    /// Trace files read.
    pub files: usize,
    /// Traces read, and matched to a case.
    pub read: usize,
    pub matched: usize,
    /// Traces not graded: (source, label, why), all of them also in `unmatched.jsonl`.
    pub unmatched: Vec<(String, String, String)>,
    /// Malformed traces skipped.
    pub malformed: usize,
    /// Cases no trace matched (NOT_ASSESSED).
    pub without_trace: usize,
}

/// The first pass: every trace read, matched and spooled.
struct Matched {
    spool: Spool,
    index: HashMap<String, Vec<(u64, u64)>>,
    unmatched: Vec<(String, String, String)>,
    diags: Vec<Diagnostic>,
    read: usize,
    formats: BTreeMap<String, usize>,
}

/// Grades the captured traces as a new run; warnings go to `notices`.
pub fn grade(req: GradeRequest, notices: &mut dyn FnMut(Notice)) -> Result<Graded, EngineError> {
    let suites = load_all(&req.suites, None, None, None, &[])?;
    let mut redactor = gauntlet_core::redact::Redactor::new();
    let judges = crate::judge::judge_panel(
        &suites,
        req.judge.as_deref(),
        req.config.as_deref(),
        crate::judge::open_cache(req.judge_cache.as_deref(), false, None)?,
        None,
        &mut redactor,
    )?;
    let embeddings = crate::embeddings::embeddings(
        &suites,
        req.embeddings.as_deref(),
        req.config.as_deref(),
        Some(crate::cache::lazy_response_cache(Some(&req.store))),
        &mut redactor,
    )?;
    for w in &judges.warnings {
        notices(Notice::Warning(w.clone()));
    }
    let plan = Plan::new(
        suites,
        Selection::default(),
        PlanSettings {
            canary: None,
            timeout_ms: None,
            blocked_is_defended: false,
            converters: &[],
            seed: 0,
            // A captured trace is graded as it was; no attack strategy is replayed on it.
            strategy: None,
        },
    );
    let mut matcher = Matcher::new(req.rules.clone());
    let mut case_ids: Vec<String> = Vec::new();
    for pc in plan.cases() {
        matcher.add_case(&pc.case);
        case_ids.push(pc.case.id.clone());
    }
    let pass = match_traces(&req, &matcher)?;
    if !pass.diags.is_empty() && !req.skip_malformed {
        return Err(EngineError::Diagnostics(pass.diags));
    }
    let missing: HashSet<String> = case_ids
        .iter()
        .filter(|id| !pass.index.contains_key(*id))
        .cloned()
        .collect();
    let matched: usize = pass.index.values().map(Vec::len).sum();

    // The run.
    let store = Store::open(&req.store).map_err(store_err)?;
    let run_id = req.run_id.clone().unwrap_or_else(new_run_id);
    let manifest = manifest(
        &req,
        &plan,
        &judges,
        &matcher,
        &pass,
        missing.len(),
        &run_id,
    );
    let (warnings, notes) = run_messages(&pass, req.traces.len(), matched, missing.len());
    let reporters = graded_run_reporters(req.view, &req.out, &store)?;
    let without_trace = missing.len();
    let grader = CapturedGrader {
        inner: judges.oracle_grader(embeddings),
        missing,
    };
    let config = RunConfig {
        concurrency: req.concurrency.unwrap_or(8).max(1),
        redactor,
        packs: plan.packs().clone(),
        warnings,
        notes,
        ..RunConfig::default()
    };
    let Matched {
        spool,
        index,
        unmatched,
        diags,
        read,
        ..
    } = pass;
    let outcome = recorded(grade_spooled(
        &plan, spool, index, grader, config, manifest, reporters,
    )?)?;
    write_unmatched(&req.out, &unmatched)?;
    Ok(Graded {
        run_id,
        outcome,
        files: req.traces.len(),
        read,
        matched,
        unmatched,
        malformed: diags.len(),
        without_trace,
    })
}

/// Pass 1: reads every trace file, matches each trace to a case and spools it.
fn match_traces(req: &GradeRequest, matcher: &Matcher) -> Result<Matched, EngineError> {
    let wanted: Vec<String> = req
        .rules
        .iter()
        .filter_map(|r| match r {
            Rule::Attr(a) => Some(a.clone()),
            _ => None,
        })
        .collect();
    let mut spool = Spool::create()?;
    let mut index: HashMap<String, Vec<(u64, u64)>> = HashMap::new();
    let mut unmatched: Vec<(String, String, String)> = Vec::new();
    let mut diags: Vec<Diagnostic> = Vec::new();
    let mut read = 0usize;
    let mut formats: BTreeMap<String, usize> = BTreeMap::new();
    let mut spool_error: Option<EngineError> = None;
    for path in &req.traces {
        let mut on_trace = |t: ReadTrace| {
            read += 1;
            match matcher.find(&t.trial) {
                Ok(case) => {
                    let CapturedTrial {
                        trace,
                        outcome,
                        error,
                        duration_ms,
                        label,
                        ..
                    } = t.trial;
                    match spool.push(&Spooled {
                        source: t.source,
                        label,
                        outcome,
                        error,
                        duration_ms,
                        trace,
                    }) {
                        Ok(at) => index.entry(case).or_default().push(at),
                        Err(e) => {
                            spool_error.get_or_insert(e);
                        }
                    }
                }
                Err(why) => unmatched.push((t.source, t.trial.label, why)),
            }
        };
        let mut on_diag = |d: Diagnostic| diags.push(d);
        let stats = read_file(path, req.format, &wanted, &mut on_trace, &mut on_diag)
            .map_err(|d| EngineError::Diagnostics(vec![d]))?;
        if let Some(f) = stats.format {
            *formats.entry(f.as_str().to_owned()).or_default() += 1;
        }
        for s in stats.skipped {
            unmatched.push((path.display().to_string(), String::new(), s));
        }
    }
    if let Some(e) = spool_error {
        return Err(e);
    }
    Ok(Matched {
        spool,
        index,
        unmatched,
        diags,
        read,
        formats,
    })
}

/// The run's manifest: the traces as a `captured` target, what was read and matched.
fn manifest(
    req: &GradeRequest,
    plan: &Plan,
    judges: &PanelSetup,
    matcher: &Matcher,
    pass: &Matched,
    without_trace: usize,
    run_id: &str,
) -> RunManifest {
    let evidence = if req.online {
        EvidenceLevel::Online
    } else {
        EvidenceLevel::Replay
    };
    let files: Vec<String> = req.traces.iter().map(|p| p.display().to_string()).collect();
    let label = match files.as_slice() {
        [one] => format!("captured:{one}"),
        [first, rest @ ..] => format!("captured:{first} (+{} more)", rest.len()),
        [] => "captured".into(),
    };
    let mut settings = BTreeMap::new();
    settings.insert("match".to_owned(), matcher.rules().join(", "));
    settings.insert(
        "format".to_owned(),
        pass.formats
            .iter()
            .map(|(f, n)| format!("{f} ({n} file(s))"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    let info = TargetInfo {
        kind: "captured".into(),
        label,
        model: None,
        base_url: None,
        settings,
        evidence_level: evidence,
        side_effects: SideEffectMode::Real,
    };
    let matched: usize = pass.index.values().map(Vec::len).sum();
    let mut notes = BTreeMap::new();
    notes.insert("trace_files".to_owned(), files.join(", "));
    notes.insert("traces_read".to_owned(), pass.read.to_string());
    notes.insert("traces_matched".to_owned(), matched.to_string());
    notes.insert(
        "traces_unmatched".to_owned(),
        pass.unmatched.len().to_string(),
    );
    notes.insert("traces_malformed".to_owned(), pass.diags.len().to_string());
    notes.insert("cases_without_trace".to_owned(), without_trace.to_string());
    let mut manifest = plan.manifest(ManifestFacts {
        run_id: run_id.to_owned(),
        gauntlet_version: crate::VERSION.into(),
        started_at: jiff::Timestamp::now().to_string(),
        command: "grade".into(),
        target: info,
        k: 1,
        seed: 0,
        judge: judges.label.clone(),
        notes,
        invocation: Some(Invocation {
            suites: req.suites.clone(),
            base_dir: current_dir(),
            ..Invocation::default()
        }),
        shard_run: None,
    });
    manifest.judges = judges.refs.clone();
    manifest
}

/// The run's warnings (malformed and unmatched traces, the first [`LISTED`] of each) and
/// its notes.
fn run_messages(
    pass: &Matched,
    files: usize,
    matched: usize,
    without_trace: usize,
) -> (Vec<String>, Vec<String>) {
    let (diags, unmatched) = (&pass.diags, &pass.unmatched);
    let mut warnings = Vec::new();
    for d in diags.iter().take(LISTED) {
        warnings.push(format!(
            "malformed trace skipped (--skip-malformed): {}: {}",
            d.location(),
            d.message
        ));
    }
    if diags.len() > LISTED {
        warnings.push(format!(
            "{} more malformed trace(s) skipped",
            diags.len() - LISTED
        ));
    }
    for (source, label, why) in unmatched.iter().take(LISTED) {
        warnings.push(format!(
            "trace not graded: {source}{}: {why}",
            if label.is_empty() {
                String::new()
            } else {
                format!(" ({label})")
            }
        ));
    }
    if unmatched.len() > LISTED {
        warnings.push(format!(
            "{} more trace(s) not graded; all are listed in unmatched.jsonl",
            unmatched.len() - LISTED
        ));
    }
    let mut notes = vec![format!(
        "graded {matched} captured trace(s) from {files} file(s), no target calls: {} trace(s) matched no case, {without_trace} case(s) had no trace",
        unmatched.len(),
    )];
    if !diags.is_empty() {
        notes.push(format!("{} malformed trace(s) were skipped", diags.len()));
    }
    (warnings, notes)
}

/// Pass 2: each case with its spooled traces as its trials, through the runner's re-grade
/// mode.
fn grade_spooled(
    plan: &Plan,
    spool: Spool,
    mut index: HashMap<String, Vec<(u64, u64)>>,
    grader: CapturedGrader,
    config: RunConfig,
    manifest: RunManifest,
    reporters: Vec<Box<dyn Reporter>>,
) -> Result<RunOutcome, EngineError> {
    let mut reader = BufReader::new(
        spool
            .file
            .try_clone()
            .map_err(|e| EngineError::plain(format!("cannot read the spool file back: {e}")))?,
    );
    let read_errors: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));
    let errors = Arc::clone(&read_errors);
    let items = plan.cases().map(move |planned| {
        let offsets = index.remove(&planned.case.id).unwrap_or_default();
        let mut recorded = Vec::new();
        if offsets.is_empty() {
            // Nothing observed: the grader says so in a not-assessed verdict.
            recorded.push(placeholder(
                &planned.case.id,
                0,
                Outcome::Completed,
                Trace::default(),
                None,
                0,
            ));
        }
        for (trial, (at, len)) in offsets.into_iter().enumerate() {
            match read_spooled(&mut reader, at, len) {
                Ok(s) => recorded.push(placeholder(
                    &planned.case.id,
                    trial as u32,
                    s.outcome,
                    s.trace,
                    s.error,
                    s.duration_ms,
                )),
                Err(e) => errors.lock().expect("lock").push(e),
            }
        }
        PlanItem::Case(CaseJob { planned, recorded })
    });
    let rt = runtime()?;
    let outcome =
        rt.block_on(Runner::regrade(Arc::new(grader), config).run(manifest, items, reporters));
    drop(spool);
    let read_errors = read_errors.lock().expect("lock");
    if !read_errors.is_empty() {
        return Err(EngineError::plain(format!(
            "{} spooled trace(s) could not be read back: {}",
            read_errors.len(),
            read_errors.join("; ")
        )));
    }
    Ok(outcome)
}

/// A recorded trial to grade: the runner's re-grade mode scores it anew.
fn placeholder(
    case_id: &str,
    trial: u32,
    outcome: Outcome,
    trace: Trace,
    error: Option<String>,
    duration_ms: u64,
) -> TrialResult {
    TrialResult {
        case_id: case_id.to_owned(),
        trial,
        outcome,
        status: gauntlet_core::result::CaseStatus::NotAssessed,
        score: Score::Unscored,
        verdicts: Vec::new(),
        trace,
        error,
        duration_ms,
        // The run's evidence level (replay or online) covers every trial of a grade.
        evidence: None,
        spend: Default::default(),
    }
}

fn read_spooled(
    reader: &mut BufReader<std::fs::File>,
    at: u64,
    len: u64,
) -> Result<Spooled, String> {
    reader
        .seek(SeekFrom::Start(at))
        .map_err(|e| format!("seek: {e}"))?;
    let mut buf = Vec::with_capacity(len as usize);
    reader
        .by_ref()
        .take(len)
        .read_to_end(&mut buf)
        .map_err(|e| format!("read: {e}"))?;
    serde_json::from_slice(&buf).map_err(|e| format!("parse: {e}"))
}

/// Every trace that was not graded, one JSON object per line, next to the reports.
fn write_unmatched(dir: &Path, list: &[(String, String, String)]) -> Result<(), EngineError> {
    let fail = |e: std::io::Error| {
        EngineError::usage(
            format!(
                "cannot write {}: {e}",
                dir.join("unmatched.jsonl").display()
            ),
            "pass --out with a writable folder",
        )
    };
    std::fs::create_dir_all(dir).map_err(fail)?;
    let mut f = gauntlet_report::text::AtomicFile::create(dir, "unmatched.jsonl").map_err(fail)?;
    for (source, trace, reason) in list {
        let line = serde_json::to_string(&Unmatched {
            source,
            trace,
            reason,
        })
        .expect("serializes");
        writeln!(f.out, "{line}").map_err(fail)?;
    }
    f.commit().map_err(fail)
}
