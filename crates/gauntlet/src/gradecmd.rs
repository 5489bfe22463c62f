//! `gauntlet grade TRACES... --suite SUITE` ([`grade`]): grades traces captured elsewhere
//! (OTLP JSON exports of GenAI spans, the recording proxy's JSON lines, gauntlet's JSON-lines
//! trace format) against a suite's cases, with no target call, as a normal run in the store
//! with evidence `replay` (or `online`).
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
use gauntlet_core::event::{EvidenceLevel, Invocation, Reporter, SideEffectMode};
use gauntlet_core::grader::{GradeContext, Grader};
use gauntlet_core::result::{Outcome, Score, TrialResult};
use gauntlet_core::target::{BoxFuture, TargetInfo};
use gauntlet_core::trace::{Span, Trace};
use gauntlet_core::verdict::{Dimension, Verdict};
use gauntlet_graders::OracleGrader;
use gauntlet_runner::{CaseJob, PlanItem, RunConfig, Runner};
use gauntlet_suite::capture::matching::{Matcher, Rule};
use gauntlet_suite::capture::{Format, ReadTrace, read_file};
use gauntlet_suite::filter::Selection;
use gauntlet_suite::{Diagnostic, ManifestFacts, Plan, PlanSettings};
use serde::{Deserialize, Serialize};

use crate::cli::GradeArgs;
use crate::error::CliError;
use crate::out::{Printer, shown};
use crate::printer::{TerminalReporter, Verbosity, print_summary};
use crate::setup::{current_dir, load_all, new_run_id, open_store, runtime, store_err};
use gauntlet_engine::run::report_writers;

/// The most unmatched traces and problems listed in the run's warnings (all of them go to
/// `unmatched.jsonl` in the report folder).
const LISTED: usize = 20;

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
    fn create() -> Result<Spool, CliError> {
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
                CliError::usage(
                    format!("cannot create a spool file in {}: {e}", path.display()),
                    "set TMPDIR to a writable folder with room for the converted traces",
                )
            })?;
        Ok(Spool { path, file, len: 0 })
    }

    fn push(&mut self, s: &Spooled) -> Result<(u64, u64), CliError> {
        let mut line = serde_json::to_vec(s).expect("a trace serializes");
        line.push(b'\n');
        self.file
            .write_all(&line)
            .map_err(|e| CliError::plain(format!("cannot write the spool file: {e}")))?;
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

pub fn grade(args: GradeArgs) -> Result<i32, CliError> {
    let format = Format::parse(&args.format).ok_or_else(|| {
        CliError::usage(
            format!("unknown trace format `{}`", args.format),
            "--format auto, otlp, proxy or jsonl",
        )
    })?;
    let rules: Vec<Rule> = if args.match_rules.is_empty() {
        vec![Rule::Id, Rule::Input]
    } else {
        args.match_rules
            .iter()
            .map(|r| Rule::parse(r))
            .collect::<Result<_, _>>()
            .map_err(|e| {
                CliError::usage(
                    e,
                    "--match id | case_id=attr:NAME | input | input=regex:PATTERN (repeat to try several, in order)",
                )
            })?
    };
    let wanted: Vec<String> = rules
        .iter()
        .filter_map(|r| match r {
            Rule::Attr(a) => Some(a.clone()),
            _ => None,
        })
        .collect();
    let suites = load_all(&args.suite, None, None, None, &[])?;
    let mut redactor = gauntlet_core::redact::Redactor::new();
    let judges = crate::judge::judge_panel(
        &suites,
        args.judge.as_deref(),
        args.config.as_deref(),
        crate::judge::open_cache(args.judge_cache.as_deref(), false, None)?,
        None,
        &mut redactor,
    )?;
    for w in &judges.warnings {
        crate::out::warn(w);
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
    let mut matcher = Matcher::new(rules);
    let mut case_ids: Vec<String> = Vec::new();
    for pc in plan.cases() {
        matcher.add_case(&pc.case);
        case_ids.push(pc.case.id.clone());
    }

    // Pass 1: read, match, spool.
    let mut spool = Spool::create()?;
    let mut index: HashMap<String, Vec<(u64, u64)>> = HashMap::new();
    let mut unmatched: Vec<(String, String, String)> = Vec::new();
    let mut diags: Vec<Diagnostic> = Vec::new();
    let mut read = 0usize;
    let mut formats: BTreeMap<String, usize> = BTreeMap::new();
    let mut spool_error: Option<CliError> = None;
    for path in &args.traces {
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
        let stats = read_file(path, format, &wanted, &mut on_trace, &mut on_diag)
            .map_err(|d| CliError::Diagnostics(vec![d]))?;
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
    if !diags.is_empty() && !args.skip_malformed {
        return Err(CliError::Diagnostics(diags));
    }

    let missing: HashSet<String> = case_ids
        .iter()
        .filter(|id| !index.contains_key(*id))
        .cloned()
        .collect();
    let matched: usize = index.values().map(Vec::len).sum();
    let without_trace = missing.len();

    // The run.
    let store = open_store(args.store.store.as_deref(), args.config.as_deref())?;
    let evidence = if args.online {
        EvidenceLevel::Online
    } else {
        EvidenceLevel::Replay
    };
    let files: Vec<String> = args
        .traces
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let label = match files.as_slice() {
        [one] => format!("captured:{one}"),
        [first, rest @ ..] => format!("captured:{first} (+{} more)", rest.len()),
        [] => "captured".into(),
    };
    let mut settings = BTreeMap::new();
    settings.insert("match".to_owned(), matcher.rules().join(", "));
    settings.insert(
        "format".to_owned(),
        formats
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
    let mut notes = BTreeMap::new();
    notes.insert("trace_files".to_owned(), files.join(", "));
    notes.insert("traces_read".to_owned(), read.to_string());
    notes.insert("traces_matched".to_owned(), matched.to_string());
    notes.insert("traces_unmatched".to_owned(), unmatched.len().to_string());
    notes.insert("traces_malformed".to_owned(), diags.len().to_string());
    notes.insert("cases_without_trace".to_owned(), missing.len().to_string());
    let run_id = args.run_id.clone().unwrap_or_else(new_run_id);
    let mut manifest = plan.manifest(ManifestFacts {
        run_id: run_id.clone(),
        gauntlet_version: gauntlet_engine::VERSION.into(),
        started_at: jiff::Timestamp::now().to_string(),
        command: "grade".into(),
        target: info,
        k: 1,
        seed: 0,
        judge: judges.label.clone(),
        notes,
        invocation: Some(Invocation {
            suites: args.suite.clone(),
            base_dir: current_dir(),
            ..Invocation::default()
        }),
        shard_run: None,
    });
    manifest.judges = judges.refs.clone();

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
    let mut run_notes = vec![format!(
        "graded {matched} captured trace(s) from {} file(s), no target calls: {} trace(s) matched no case, {} case(s) had no trace",
        files.len(),
        unmatched.len(),
        missing.len()
    )];
    if !diags.is_empty() {
        run_notes.push(format!("{} malformed trace(s) were skipped", diags.len()));
    }

    let verbosity = if args.quiet {
        Verbosity::Quiet
    } else {
        Verbosity::Normal
    };
    let mut reporters: Vec<Box<dyn Reporter>> = vec![Box::new(TerminalReporter::new(verbosity))];
    reporters.extend(report_writers(&args.out, None)?);
    reporters.push(Box::new(store.reporter().map_err(store_err)?));

    // Pass 2: each case with its spooled traces as its trials.
    let mut reader = BufReader::new(
        spool
            .file
            .try_clone()
            .map_err(|e| CliError::plain(format!("cannot read the spool file back: {e}")))?,
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
    let grader = CapturedGrader {
        inner: OracleGrader::new().with_judges(Arc::clone(&judges.panel)),
        missing,
    };
    let packs = plan.packs().clone();
    let config = RunConfig {
        concurrency: args.concurrency.unwrap_or(8).max(1),
        redactor,
        packs,
        warnings,
        notes: run_notes,
        ..RunConfig::default()
    };
    let rt = runtime()?;
    let outcome =
        rt.block_on(Runner::regrade(Arc::new(grader), config).run(manifest, items, reporters));
    drop(spool);
    let read_errors = read_errors.lock().expect("lock");
    if !read_errors.is_empty() {
        return Err(CliError::plain(format!(
            "{} spooled trace(s) could not be read back: {}",
            read_errors.len(),
            read_errors.join("; ")
        )));
    }
    if !outcome.reporter_errors.is_empty() {
        return Err(CliError::plain(format!(
            "failed to record the run (a report or the run store): {}",
            outcome.reporter_errors.join("; ")
        )));
    }
    write_unmatched(&args.out, &unmatched)?;
    print_summary(&outcome.summary, Some(&args.out.display().to_string()))?;
    let mut out = Printer::stdout();
    writeln!(
        out,
        "graded {read} trace(s) from {} file(s) as run {run_id} (evidence {}): {matched} matched, {} not graded (unmatched or empty), {} malformed skipped; {} case(s) without a trace are NOT_ASSESSED",
        files.len(),
        if args.online { "online" } else { "replay" },
        unmatched.len(),
        diags.len(),
        without_trace,
    )?;
    for (source, label, why) in unmatched.iter().take(LISTED) {
        writeln!(
            out,
            "  not graded: {}{}: {}",
            shown(source),
            if label.is_empty() {
                String::new()
            } else {
                format!(" ({})", shown(label))
            },
            shown(why)
        )?;
    }
    if unmatched.len() > LISTED {
        writeln!(
            out,
            "  ... and {} more, listed in {}",
            unmatched.len() - LISTED,
            args.out.join("unmatched.jsonl").display()
        )?;
    }
    Ok(outcome.summary.status.exit_code())
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
fn write_unmatched(dir: &Path, list: &[(String, String, String)]) -> Result<(), CliError> {
    let fail = |e: std::io::Error| {
        CliError::usage(
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
