//! `report.html`: [`HtmlReport`], one self-contained page that a person opens from a CI
//! artifact, and the other pages built from the same templates (the comparison in
//! [`compare`], the viewer's pages in [`view`]).
//!
//! The report is a reporter like the others: it streams. Each finished case becomes a row
//! and a details record, packed into compressed chunks ([`data`]) that wait in a scratch file
//! next to the report; counters feed the header and the charts ([`charts`]). When the run
//! finishes, the page is rendered once through the template engine ([`page`]) with the chunks
//! copied in as they are read back, so memory stays flat and the page of a 50,000-case run is
//! a few tens of megabytes that open in a browser in about a second.
//!
//! Model output is hostile. It reaches the page in two ways only: through the template
//! engine's HTML escaping (reasons and findings in the header), and inside the compressed
//! chunks, which the page's script turns into text nodes. The page carries a Content Security
//! Policy that allows its own script and stylesheet by hash and nothing else: no other script,
//! no inline handler, no request of any kind.

pub mod charts;
pub mod compare;
pub mod data;
pub mod grid;
pub mod page;
pub mod view;
pub mod why;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use gauntlet_core::compare::{CaseDigest, compare};
use gauntlet_core::event::{EventKind, ReportError, Reporter, RunEvent, RunManifest};
use gauntlet_core::result::{CaseResult, CaseStatus};
use gauntlet_core::summary::Summary;
use minijinja::Value;
use serde::Serialize;

use self::charts::{Chart, Charts, RubricRow};
use self::compare::{CaseLinks, ChangeList, change_list, counts_line, mcnemar_line, metrics};
use self::data::{Change, Chunk, Chunker, Row, Spool, SpoolReader};
use self::page::{Nav, PageKind};
use crate::text::{AtomicFile, failure_reason, trim_num};

/// The file name in the output folder.
pub const FILE_NAME: &str = "report.html";

/// Warnings listed in the header; the rest are counted.
const MAX_WARNINGS: usize = 100;
/// Values offered by each filter; a run with more distinct values is searched by text.
const MAX_FACET_VALUES: usize = 500;

/// A stored run the report compares this one with (`--baseline`).
#[derive(Debug, Clone)]
pub struct HtmlBaseline {
    /// The name it was asked for by.
    pub name: String,
    /// Its run id.
    pub run_id: String,
    /// Its summary, when it finished.
    pub summary: Option<Summary>,
    /// Its cases, digested.
    pub cases: Vec<CaseDigest>,
}

struct Baseline {
    info: HtmlBaseline,
    index: HashMap<String, usize>,
    ours: Vec<CaseDigest>,
}

impl Baseline {
    /// The baseline's side of a case, and how the case changed.
    fn pair(&self, ours: &CaseDigest) -> (Option<&CaseDigest>, Change) {
        let Some(theirs) = self.index.get(&ours.id).map(|i| &self.info.cases[*i]) else {
            return (None, Change::New);
        };
        // The pairing rules of `gauntlet_core::compare::compare`: an error, a block, a skip
        // or a quarantine on either side is not evidence either way.
        let comparable = |d: &CaseDigest| {
            !d.quarantined
                && matches!(
                    d.status,
                    CaseStatus::Pass | CaseStatus::Fail | CaseStatus::Conditional
                )
        };
        let change = if !comparable(theirs) || !comparable(ours) {
            Change::NotComparable
        } else {
            match (
                theirs.status == CaseStatus::Pass,
                ours.status == CaseStatus::Pass,
            ) {
                (true, true) => Change::Pass,
                (true, false) => Change::NewFailure,
                (false, true) => Change::Fixed,
                (false, false) => Change::StillFailing,
            }
        };
        (Some(theirs), change)
    }
}

/// Distinct values seen, for the filter menus.
#[derive(Debug, Default)]
struct Facets {
    status: BTreeSet<&'static str>,
    owasp: BTreeSet<String>,
    technique: BTreeSet<String>,
    pack: BTreeSet<String>,
    tag: BTreeSet<String>,
    kind: BTreeSet<&'static str>,
}

fn add_capped(set: &mut BTreeSet<String>, v: &str) {
    if set.len() < MAX_FACET_VALUES && !set.contains(v) {
        set.insert(v.to_owned());
    }
}

impl Facets {
    fn add(&mut self, r: &CaseResult) {
        self.status.insert(r.status.as_str());
        self.kind.insert(r.case.kind.as_str());
        add_capped(&mut self.owasp, r.case.owasp.as_deref().unwrap_or("(none)"));
        add_capped(
            &mut self.pack,
            r.case.pack.as_deref().unwrap_or("(no pack)"),
        );
        if let Some(t) = &r.case.technique {
            add_capped(&mut self.technique, t);
        }
        for t in &r.case.tags {
            add_capped(&mut self.tag, t);
        }
    }
}

enum Dest {
    Dir(PathBuf),
    Memory,
}

/// Writes `report.html` (or renders the page to memory, for the viewer).
pub struct HtmlReport {
    dest: Dest,
    spool: Option<Spool>,
    chunker: Chunker,
    manifest: Option<RunManifest>,
    warnings: Vec<String>,
    warnings_more: usize,
    charts: Charts,
    facets: Facets,
    cases: usize,
    baseline: Option<Baseline>,
    /// A matrix run's answers side by side.
    grid: Option<grid::Grid>,
    nav: Option<Nav>,
    page: Option<Vec<u8>>,
}

impl HtmlReport {
    /// Opens the report in `dir` (the page is written when the run finishes).
    pub fn create(dir: &Path) -> std::io::Result<HtmlReport> {
        let spool = Spool::file(dir, FILE_NAME)?;
        Ok(HtmlReport::new(Dest::Dir(dir.to_path_buf()), spool))
    }

    /// A report rendered to memory; [`HtmlReport::take_page`] gives it once the run finished.
    pub fn in_memory() -> HtmlReport {
        HtmlReport::new(Dest::Memory, Spool::Memory(Vec::new()))
    }

    fn new(dest: Dest, spool: Spool) -> HtmlReport {
        HtmlReport {
            dest,
            spool: Some(spool),
            chunker: Chunker::default(),
            manifest: None,
            warnings: Vec::new(),
            warnings_more: 0,
            charts: Charts::default(),
            facets: Facets::default(),
            cases: 0,
            baseline: None,
            grid: None,
            nav: None,
            page: None,
        }
    }

    /// Compares the run with a baseline: a section with new failures, fixes and the McNemar
    /// line, and the baseline's status beside each case.
    pub fn with_baseline(mut self, b: HtmlBaseline) -> HtmlReport {
        let index = b
            .cases
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id.clone(), i))
            .collect();
        self.baseline = Some(Baseline {
            info: b,
            index,
            ours: Vec::new(),
        });
        self
    }

    /// Links back to the viewer's pages.
    pub fn with_nav(mut self, nav: Nav) -> HtmlReport {
        self.nav = Some(nav);
        self
    }

    /// The page rendered to memory, once the run has finished.
    pub fn take_page(&mut self) -> Option<Vec<u8>> {
        self.page.take()
    }

    fn add_case(&mut self, r: &CaseResult, json: &str) -> Result<(), ReportError> {
        self.cases += 1;
        if let Some(g) = self.grid.as_mut() {
            g.add(r);
        }
        self.charts.add(r);
        self.facets.add(r);
        let mut base_json = serde_json::Value::Null;
        let mut paired = None;
        if let Some(b) = self.baseline.as_mut() {
            let ours = CaseDigest::of(r, failure_reason(r));
            let (theirs, change) = b.pair(&ours);
            if let Some(t) = theirs {
                base_json = serde_json::json!({
                    "status": t.status.as_str(),
                    "score": t.score.map(trim_num),
                    "reason": t.reason,
                });
            }
            paired = Some((theirs.map(|t| t.status), change));
            b.ours.push(ours);
        }
        let row = serde_json::to_vec(&Row::of(r, paired))?;
        // The details go straight into the chunk: the case's JSON is copied once, not twice.
        let closed = self.chunker.push_with(&row, json.len() + 256, |details| {
            details.extend_from_slice(b"{\"why\":");
            serde_json::to_writer(&mut *details, &why::case_reasons(r))?;
            details.extend_from_slice(b",\"base\":");
            serde_json::to_writer(&mut *details, &base_json)?;
            details.extend_from_slice(b",\"r\":");
            details.extend_from_slice(json.as_bytes());
            details.push(b'}');
            Ok::<(), serde_json::Error>(())
        })?;
        if let Some(chunk) = closed {
            self.spool_chunk(&chunk)?;
        }
        Ok(())
    }

    fn spool_chunk(&mut self, c: &Chunk) -> Result<(), ReportError> {
        if let Some(s) = self.spool.as_mut() {
            s.write(c)?;
        }
        Ok(())
    }

    fn finish(&mut self, summary: &Summary, finished_at: &str) -> Result<(), ReportError> {
        if let Some(c) = self.chunker.close() {
            self.spool_chunk(&c)?;
        }
        let Some(spool) = self.spool.take() else {
            return Ok(());
        };
        let chunks = self.chunker.closed();
        let (reader, scratch) = spool.into_reader()?;
        let page = self.page_model(summary, finished_at, chunks);
        let read_error = Arc::new(Mutex::new(None));
        let extra = minijinja::context! {
            chunks => chunk_iter(reader, Arc::clone(&read_error)),
        };
        let nav = self.nav.clone();
        let rendered = match &self.dest {
            Dest::Dir(dir) => {
                let mut f = AtomicFile::create(dir, FILE_NAME)?;
                page::render(
                    "report.html",
                    PageKind::Report,
                    nav.as_ref(),
                    &page,
                    extra,
                    &mut f.out,
                )
                .map(|()| Some(f))
            }
            Dest::Memory => {
                let mut out = Vec::new();
                let r = page::render(
                    "report.html",
                    PageKind::Report,
                    nav.as_ref(),
                    &page,
                    extra,
                    &mut out,
                );
                self.page = Some(out);
                r.map(|()| None)
            }
        };
        if let Some(path) = scratch {
            let _ = std::fs::remove_file(path);
        }
        if let Some(e) = read_error.lock().expect("lock").take() {
            return Err(Box::new(e));
        }
        if let Some(f) = rendered? {
            f.commit()?;
        }
        Ok(())
    }

    fn page_model(&mut self, s: &Summary, finished_at: &str, chunks: usize) -> ReportPage {
        let m = self.manifest.clone();
        let title = m
            .as_ref()
            .map(|m| {
                let names: Vec<&str> = m.suites.iter().map(|s| s.name.as_str()).collect();
                names.join(", ")
            })
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| "run".into());
        let mut counts = vec![
            count("cases", "cases", s.cases),
            count("passed", "passed", s.passed),
            count("failed", "failed", s.failed),
            count("conditional", "conditional", s.conditional),
            count("errors", "errors", s.errors),
            count("blocked", "blocked", s.blocked),
            count("quarantined", "quarantined", s.quarantined),
            count("hard_fails", "hard failures", s.hard_fails),
            count("trials", "trials", s.trials),
        ];
        if s.k > 1 {
            counts.push(count("pass_at_1", "pass^1", s.pass_at_1));
            counts.push(count("pass_at_k", "pass^k", s.pass_at_k));
        }
        let rubric = self.charts.rubric();
        let baseline = self.baseline.as_ref().map(|b| {
            let run_b = m.as_ref().map_or("this run", |m| m.run_id.as_str());
            let c = compare(
                &b.info.run_id,
                &b.info.cases,
                b.info.summary.as_ref(),
                run_b,
                &b.ours,
                Some(s),
            );
            let a: HashMap<&str, &CaseDigest> =
                b.info.cases.iter().map(|d| (d.id.as_str(), d)).collect();
            let links = CaseLinks {
                a: None,
                b: Some(String::new()),
            };
            BaselineSection {
                name: b.info.name.clone(),
                run: b.info.run_id.clone(),
                mcnemar: mcnemar_line(&c),
                line: counts_line(&c),
                metrics: metrics(&c)
                    .into_iter()
                    .map(|(k, a, b, _)| (k, a, b))
                    .collect(),
                new_failures: change_list(&c.new_failures, &a, &links),
                fixed: change_list(&c.fixed, &a, &links),
            }
        });
        let mut columns = vec![
            ("status", "Status"),
            ("name", "Case"),
            ("kind", "Kind"),
            ("owasp", "OWASP"),
            ("technique", "Technique"),
            ("pack", "Pack"),
            ("score", "Score"),
            ("trials", "Trials"),
            ("ms", "Time"),
            ("tok", "Tokens"),
        ];
        if baseline.is_some() {
            columns.push(("base", "Baseline"));
        }
        columns.push(("why", "Why not passing"));
        ReportPage {
            title,
            status: s.status.as_str(),
            exit_code: s.status.exit_code(),
            reasons: s.reasons.clone(),
            counts,
            facts: facts(m.as_ref(), s, finished_at, self.charts.tokens()),
            rubric_any: rubric.iter().any(|r| r.cases > 0),
            rubric,
            holdout: s.holdout.iter().map(crate::text::holdout_line).collect(),
            // A matrix run's security figures are its columns' (the Columns section): pooled
            // over different targets they would describe none of them.
            security: pooled_security(s)
                .map(crate::text::security_lines)
                .unwrap_or_default(),
            harm: pooled_security(s)
                .map(crate::text::harm_lines)
                .unwrap_or_default(),
            frameworks: pooled_security(s)
                .map(crate::text::framework_tables)
                .unwrap_or_default(),
            charts: self.charts.layout(),
            warnings: std::mem::take(&mut self.warnings),
            warnings_more: self.warnings_more,
            filters: self.filters(),
            columns,
            cases: self.cases,
            baseline,
            matrix: self.grid.as_ref().map(|g| MatrixSection {
                header: crate::text::COLUMN_HEADER,
                columns: s.columns.iter().map(crate::text::column_row).collect(),
                grid: g.section(),
            }),
            run: RunFacts {
                id: m.as_ref().map(|m| m.run_id.clone()).unwrap_or_default(),
                command: m.as_ref().map(|m| m.command.clone()).unwrap_or_default(),
            },
            target: TargetFacts {
                label: m
                    .as_ref()
                    .map(|m| m.target.label.clone())
                    .unwrap_or_default(),
                model: m.as_ref().and_then(|m| m.target.model.clone()),
            },
            meta: Meta {
                cases: self.cases,
                chunks,
                k: s.k,
                baseline: self.baseline.is_some(),
                run: m.as_ref().map(|m| m.run_id.clone()).unwrap_or_default(),
            },
        }
    }

    fn filters(&self) -> Vec<Filter> {
        let f = &self.facets;
        let plain = |set: &BTreeSet<String>| set.iter().map(|v| (v.clone(), v.clone())).collect();
        let order = [
            CaseStatus::Fail,
            CaseStatus::Error,
            CaseStatus::Conditional,
            CaseStatus::Blocked,
            CaseStatus::Skipped,
            CaseStatus::Pass,
        ];
        let mut out = vec![
            Filter {
                key: "status",
                label: "Status",
                values: order
                    .iter()
                    .map(|s| s.as_str())
                    .filter(|s| f.status.contains(s))
                    .map(|s| (s.to_owned(), s.to_owned()))
                    .collect(),
            },
            Filter {
                key: "owasp",
                label: "OWASP category",
                values: plain(&f.owasp),
            },
            Filter {
                key: "technique",
                label: "Technique",
                values: plain(&f.technique),
            },
            Filter {
                key: "pack",
                label: "Pack",
                values: plain(&f.pack),
            },
            Filter {
                key: "tag",
                label: "Tag",
                values: plain(&f.tag),
            },
            Filter {
                key: "kind",
                label: "Kind",
                values: f
                    .kind
                    .iter()
                    .map(|k| (k.to_string(), k.to_string()))
                    .collect(),
            },
            Filter {
                key: "mark",
                label: "Marks",
                values: [
                    ("hard", "hard policy failure"),
                    ("flaky", "flaky (trials disagree)"),
                    ("quarantined", "quarantined"),
                    ("blocking", "blocking"),
                    ("quality", "quality (not blocking)"),
                ]
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .to_vec(),
            },
        ];
        if self.baseline.is_some() {
            out.push(Filter {
                key: "change",
                label: "Against baseline",
                values: [
                    ("new_failure", "new failure"),
                    ("fixed", "fixed"),
                    ("still_failing", "still failing"),
                    ("pass", "pass in both"),
                    ("not_comparable", "not comparable"),
                    ("new", "not in baseline"),
                ]
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .to_vec(),
            });
        }
        out.retain(|f| !f.values.is_empty());
        out
    }
}

fn chunk_iter(mut reader: SpoolReader, error: Arc<Mutex<Option<std::io::Error>>>) -> Value {
    // The chunks are read back one at a time while the page is written, so the largest
    // report never holds more than one chunk in memory.
    Value::make_one_shot_iterator(std::iter::from_fn(move || match reader.next_chunk() {
        Ok(Some(c)) => Some(Value::from(minijinja::value::Serde(ChunkView {
            index: c.index,
            cases: c.cases,
            rows: c.rows,
            details: c.details,
        }))),
        Ok(None) => None,
        Err(e) => {
            *error.lock().expect("lock") = Some(e);
            None
        }
    }))
}

#[derive(Serialize)]
struct ChunkView {
    index: usize,
    cases: usize,
    rows: String,
    details: String,
}

#[derive(Serialize)]
struct Count {
    key: &'static str,
    label: &'static str,
    value: usize,
}

fn count(key: &'static str, label: &'static str, value: usize) -> Count {
    Count { key, label, value }
}

#[derive(Serialize)]
struct Filter {
    key: &'static str,
    label: &'static str,
    values: Vec<(String, String)>,
}

#[derive(Serialize)]
struct RunFacts {
    id: String,
    command: String,
}

#[derive(Serialize)]
struct TargetFacts {
    label: String,
    model: Option<String>,
}

#[derive(Serialize)]
struct Meta {
    cases: usize,
    chunks: usize,
    k: u32,
    baseline: bool,
    run: String,
}

#[derive(Serialize)]
struct BaselineSection {
    name: String,
    run: String,
    mcnemar: String,
    line: String,
    metrics: Vec<(String, String, String)>,
    new_failures: ChangeList,
    fixed: ChangeList,
}

#[derive(Serialize)]
struct ReportPage {
    title: String,
    status: &'static str,
    exit_code: i32,
    reasons: Vec<String>,
    counts: Vec<Count>,
    facts: Vec<(String, String)>,
    rubric_any: bool,
    rubric: Vec<RubricRow>,
    /// Hold-out slices, one line each: rates only.
    holdout: Vec<String>,
    /// The security figures, `(label, text)`: the attack success rate first.
    security: Vec<(&'static str, String)>,
    /// The attack success rate per harm category; empty when no case names one.
    harm: Vec<crate::text::HarmLine>,
    /// The compliance coverage of the security cases, one table per framework.
    frameworks: Vec<crate::text::FrameworkTable>,
    charts: Vec<Chart>,
    warnings: Vec<String>,
    warnings_more: usize,
    filters: Vec<Filter>,
    columns: Vec<(&'static str, &'static str)>,
    cases: usize,
    baseline: Option<BaselineSection>,
    /// A matrix run: its columns' figures and the answers side by side.
    matrix: Option<MatrixSection>,
    run: RunFacts,
    target: TargetFacts,
    meta: Meta,
}

/// The run's security figures, unless it is a matrix run (its columns have their own).
fn pooled_security(s: &Summary) -> Option<&gauntlet_core::summary::SecuritySummary> {
    s.security.as_ref().filter(|_| s.columns.is_empty())
}

/// A matrix run's section of the page.
#[derive(Serialize)]
struct MatrixSection {
    header: [&'static str; 8],
    columns: Vec<[String; 8]>,
    grid: grid::GridSection,
}

fn snake(v: impl Serialize) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// `1.2 s`, `3 min 4 s`.
pub fn duration_text(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 60_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        format!("{} min {} s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

fn facts(
    m: Option<&RunManifest>,
    s: &Summary,
    finished_at: &str,
    (tokens_in, tokens_out): (u64, u64),
) -> Vec<(String, String)> {
    let mut f: Vec<(String, String)> = Vec::new();
    let mut add = |k: &str, v: String| {
        if !v.is_empty() {
            f.push((k.to_owned(), v));
        }
    };
    if let Some(m) = m {
        add("target", m.target.label.clone());
        add("model", m.target.model.clone().unwrap_or_default());
        add("base URL", m.target.base_url.clone().unwrap_or_default());
        for suite in &m.suites {
            let short: String = suite.sha256.chars().take(12).collect();
            add(
                "suite",
                format!(
                    "{} · {} · {} cases · sha256 {short}",
                    suite.name, suite.path, suite.cases
                ),
            );
        }
        add("seed", m.seed.to_string());
        add("trials per case", m.k.to_string());
        add("gauntlet", m.gauntlet_version.clone());
        add("evidence level", snake(m.evidence_level));
        add("side effects", snake(m.side_effects));
        add("judge", m.judge.clone().unwrap_or_default());
        add("dataset revision", m.dataset_revision.clone());
        add("filters", m.filters.join(" "));
        add("started", m.started_at.clone());
    }
    add("finished", finished_at.to_owned());
    add("duration", duration_text(s.duration_ms));
    if let Some(avg) = s.tasks.avg {
        add(
            "task average",
            format!("{}/18 over {} task(s)", trim_num(avg), s.tasks.count),
        );
    }
    if let Some(avg) = s.refusals.avg {
        add(
            "refusal average",
            format!("{}/3 over {} refusal(s)", trim_num(avg), s.refusals.count),
        );
    }
    if let (Some(n), Some(b)) = (s.suite_normalized, s.quality_band) {
        add("normalised score", format!("{n:.3} ({})", snake(b)));
    }
    if !s.missing_packs.is_empty() {
        add("missing packs", s.missing_packs.join(", "));
    }
    if tokens_in + tokens_out > 0 {
        add("tokens", format!("{tokens_in} in, {tokens_out} out"));
    }
    if let Some(sp) = &s.spend {
        add("cost (agent)", sp.agent.line());
        for (check, j) in &sp.judges {
            add(&format!("cost (judge {check})"), j.line());
        }
        for (role, h) in &sp.helpers {
            add(&format!("cost ({role})"), h.line());
        }
        add("cost (total)", sp.total.cost_label());
        if sp.replayed_trials > 0 {
            add(
                "replayed trials",
                format!(
                    "{} answered from the response cache (evidence replay)",
                    sp.replayed_trials
                ),
            );
        }
    }
    if let Some(p) = m.and_then(|m| m.prices.clone()) {
        add("prices", p);
    }
    if let Some(m) = m {
        let tools: BTreeMap<&String, &String> = m.tool_versions.iter().collect();
        if !tools.is_empty() {
            add(
                "tool mocks",
                tools
                    .iter()
                    .map(|(k, v)| format!("{k} {v}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            );
        }
        for (k, v) in &m.notes {
            add(&format!("note: {k}"), v.clone());
        }
        add("run", m.run_id.clone());
    }
    f
}

impl Reporter for HtmlReport {
    fn on_event(&mut self, ev: &RunEvent) -> Result<(), ReportError> {
        if self.spool.is_none() {
            return Ok(());
        }
        match &ev.kind {
            EventKind::RunStarted { manifest } => {
                self.grid =
                    gauntlet_core::matrix::Columns::of_manifest(manifest).map(grid::Grid::new);
                self.manifest = Some((**manifest).clone());
            }
            EventKind::CaseFinished { result } => {
                if let Some(json) = ev.case_json() {
                    self.add_case(result, json?)?;
                }
            }
            EventKind::Warning { message } => {
                if self.warnings.len() < MAX_WARNINGS {
                    self.warnings.push(message.clone());
                } else {
                    self.warnings_more += 1;
                }
            }
            EventKind::TrialFinished { .. } => {}
            EventKind::RunFinished {
                summary,
                finished_at,
            } => self.finish(summary, finished_at)?,
        }
        Ok(())
    }
}
