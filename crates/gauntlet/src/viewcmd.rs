//! `gauntlet view`: the run store in a browser. [`view`] serves, on 127.0.0.1 only, the runs
//! list, any run's report (the same page as `report.html`, replayed from the store), two runs
//! compared, and a labelling mode that shows one sampled output at a time with its case and
//! appends a person's label to the labels file (`gauntlet_graders::judge::labels`).
//!
//! The store is only read. Requests must name the viewer's own address as their host (so a
//! web page cannot reach the viewer through DNS rebinding), a label is recorded only with the
//! token of the page that showed it (so another site cannot post one), and every page carries
//! the same Content Security Policy as the report files, sent as a header too.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::{Path as UrlPath, Query, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use gauntlet_core::expect::Oracle;
use gauntlet_core::result::{CaseResult, Outcome};
use gauntlet_graders::judge::labels::{Label, LabelRecord, append_record, read_records};
use gauntlet_report::html::HtmlReport;
use gauntlet_report::html::compare::{CaseLinks, fragment_value};
use gauntlet_report::html::page::{Nav, PageKind, csp};
use gauntlet_report::html::view::{
    LabelItem, LabelPage, RunItem, RunsPage, render_label, render_message, render_runs,
};
use gauntlet_store::Store;
use serde::Deserialize;

use crate::cli::ViewArgs;
use crate::error::CliError;
use crate::out::Printer;
use crate::setup::{open_existing_store, runtime};

/// Report pages kept rendered (a run's page is the same until the run changes).
const CACHED_PAGES: usize = 4;

struct App {
    store: Mutex<Store>,
    store_shown: String,
    labels: PathBuf,
    limit: usize,
    token: String,
    hosts: Vec<String>,
    pages: Mutex<Vec<(String, Arc<Vec<u8>>)>>,
    samples: Mutex<HashMap<String, Arc<RunSamples>>>,
    references: Mutex<HashMap<String, Arc<References>>>,
    skipped: Mutex<HashSet<(String, String, String, u32)>>,
}

/// What the labelling mode can sample from one run: per check kind, every (case, trial) that
/// completed and has a verdict of that kind, in a fixed shuffled order.
struct RunSamples {
    checks: Vec<(String, usize)>,
    by_check: HashMap<String, Vec<(String, u32)>>,
}

/// For one run: each case's checks as the suite writes them, by (case id, check label).
type References = HashMap<(String, String), String>;

fn random_token() -> String {
    // Two independently seeded hashers: 128 bits the page must echo back.
    let mut s = String::new();
    for i in 0..2u64 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(i ^ std::process::id() as u64);
        s.push_str(&format!("{:016x}", h.finish()));
    }
    s
}

pub fn view(args: ViewArgs) -> Result<i32, CliError> {
    let store = open_existing_store(args.store.store.as_deref())?;
    let store_shown = store.location().to_string();
    let rt = runtime()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
            .await
            .map_err(|e| {
                CliError::usage(
                    format!("failed to listen on 127.0.0.1:{}: {e}", args.port),
                    "pick another port with --port (0 picks a free one)",
                )
            })?;
        let addr = listener
            .local_addr()
            .map_err(|e| CliError::plain(format!("failed to read the address: {e}")))?;
        let app = Arc::new(App {
            store: Mutex::new(store),
            store_shown,
            labels: args.labels.clone(),
            limit: args.limit,
            token: random_token(),
            hosts: vec![
                format!("127.0.0.1:{}", addr.port()),
                format!("localhost:{}", addr.port()),
            ],
            pages: Mutex::new(Vec::new()),
            samples: Mutex::new(HashMap::new()),
            references: Mutex::new(HashMap::new()),
            skipped: Mutex::new(HashSet::new()),
        });
        let shown = Arc::clone(&app);
        let router = Router::new()
            .route("/", get(runs_page))
            .route("/runs/{run}", get(report_page))
            .route("/compare", get(compare_page))
            .route("/label", get(label_page).post(record_label))
            .fallback(not_found)
            .layer(middleware::from_fn_with_state(Arc::clone(&app), guard))
            .with_state(app);
        let app = shown;
        let mut out = Printer::stdout();
        writeln!(
            out,
            "gauntlet view: http://{addr}/ (store {}, read-only; labels to {}; Ctrl-C to stop)",
            app.store_shown,
            args.labels.display()
        )?;
        out.flush()?;
        axum::serve(listener, router)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .map_err(|e| CliError::plain(format!("the viewer stopped: {e}")))?;
        Ok(0)
    })
}

/// Refuses requests addressed to another host, and adds the headers every page carries.
async fn guard(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !app.hosts.iter().any(|h| h == host) {
        return (
            StatusCode::MISDIRECTED_REQUEST,
            "gauntlet view answers only requests addressed to its own 127.0.0.1 address\n",
        )
            .into_response();
    }
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    for (k, v) in [
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CACHE_CONTROL, "no-store"),
        (header::X_FRAME_OPTIONS, "DENY"),
    ] {
        h.insert(k, HeaderValue::from_static(v));
    }
    h.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    h.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    resp
}

fn html(kind: PageKind, status: StatusCode, body: Vec<u8>) -> Response {
    let policy = format!("{}; frame-ancestors 'none'", csp(kind));
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    if let Ok(v) = HeaderValue::from_str(&policy) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    r
}

fn nav(label: Option<String>) -> Nav {
    Nav {
        runs: "/".into(),
        label,
    }
}

fn message(status: StatusCode, title: &str, text: &str) -> Response {
    match render_message(title, text, &nav(None)) {
        Ok(s) => html(PageKind::Static, status, s.into_bytes()),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// A page that ends a request early (boxed: a response is large).
type Fail = Box<Response>;

/// Runs blocking store work off the async threads; an error becomes a message page.
async fn blocking(
    app: &Arc<App>,
    f: impl FnOnce(&App) -> Result<Response, Fail> + Send + 'static,
) -> Response {
    let app = Arc::clone(app);
    match tokio::task::spawn_blocking(move || f(&app)).await {
        Ok(Ok(r)) => r,
        Ok(Err(r)) => *r,
        Err(e) => message(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Something went wrong",
            &e.to_string(),
        ),
    }
}

fn store_failure(e: impl std::fmt::Display) -> Fail {
    Box::new(message(
        StatusCode::NOT_FOUND,
        "Not found",
        &format!("The run store says: {e}"),
    ))
}

async fn not_found() -> Response {
    message(
        StatusCode::NOT_FOUND,
        "Not found",
        "No page here. The runs list is at /.",
    )
}

async fn runs_page(State(app): State<Arc<App>>) -> Response {
    blocking(&app, |app| {
        let rows = app
            .store
            .lock()
            .expect("store lock")
            .runs(app.limit + 1)
            .map_err(store_failure)?;
        let more = rows.len() > app.limit;
        let runs = rows
            .into_iter()
            .take(app.limit)
            .map(|r| RunItem {
                report: format!("/runs/{}", fragment_value(&r.run_id)),
                label: format!("/label?run={}", fragment_value(&r.run_id)),
                id: r.run_id,
                started: r.started_at,
                command: r.command,
                target: r.target,
                finished: r.finished_at.is_some(),
                status: r.status.unwrap_or_else(|| "unfinished".into()),
                cases: r.cases,
                planned: r.planned,
            })
            .collect();
        let page = RunsPage {
            store: app.store_shown.clone(),
            labels: app.labels.display().to_string(),
            runs,
            more,
        };
        render_runs(&page, &nav(None))
            .map(|s| html(PageKind::Forms, StatusCode::OK, s.into_bytes()))
            .map_err(|e| store_failure(e.to_string()))
    })
    .await
}

/// A stored run's report: its event stream replayed into the same writer as `report.html`.
async fn report_page(State(app): State<Arc<App>>, UrlPath(run): UrlPath<String>) -> Response {
    blocking(&app, move |app| {
        let mut store = app.store.lock().expect("store lock");
        let id = store.resolve(&run).map_err(store_failure)?;
        let Some((_, finished_at)) = store.summary(&id).map_err(store_failure)? else {
            return Ok(message(
                StatusCode::OK,
                &format!("Run {id} did not finish"),
                &format!(
                    "Only finished runs have a report. Continue it with `gauntlet run --resume {id}`."
                ),
            ));
        };
        let key = format!("{id} {finished_at}");
        if let Some((_, page)) = app
            .pages
            .lock()
            .expect("pages lock")
            .iter()
            .find(|(k, _)| *k == key)
        {
            return Ok(html(PageKind::Report, StatusCode::OK, page.to_vec()));
        }
        let mut report = HtmlReport::in_memory().with_nav(nav(Some(format!(
            "/label?run={}",
            fragment_value(&id)
        ))));
        use gauntlet_core::event::Reporter as _;
        let mut failed = None;
        store
            .replay(&id, |ev| {
                if failed.is_none()
                    && let Err(e) = report.on_event(&ev)
                {
                    failed = Some(e.to_string());
                }
                Ok(())
            })
            .map_err(store_failure)?;
        if let Some(e) = failed {
            return Err(store_failure(e));
        }
        let page = Arc::new(report.take_page().unwrap_or_default());
        let mut pages = app.pages.lock().expect("pages lock");
        pages.retain(|(k, _)| !k.starts_with(&format!("{id} ")));
        pages.push((key, Arc::clone(&page)));
        if pages.len() > CACHED_PAGES {
            pages.remove(0);
        }
        Ok(html(PageKind::Report, StatusCode::OK, page.to_vec()))
    })
    .await
}

#[derive(Deserialize)]
struct CompareQuery {
    a: String,
    b: String,
}

async fn compare_page(State(app): State<Arc<App>>, Query(q): Query<CompareQuery>) -> Response {
    blocking(&app, move |app| {
        let mut store = app.store.lock().expect("store lock");
        let a = store.resolve(&q.a).map_err(store_failure)?;
        let b = store.resolve(&q.b).map_err(store_failure)?;
        let runs = gauntlet_store::compare::compare_runs(
            &mut store,
            &a,
            &b,
            gauntlet_report::text::failure_reason,
        )
        .map_err(store_failure)?;
        let links = CaseLinks {
            a: Some(format!("/runs/{}", fragment_value(&a))),
            b: Some(format!("/runs/{}", fragment_value(&b))),
        };
        let mut body = Vec::new();
        gauntlet_report::html::compare::render_compare(
            &gauntlet_report::html::compare::CompareInput {
                comparison: &runs.comparison,
                a: gauntlet_report::html::compare::RunSide {
                    manifest: Some(&runs.a.manifest),
                    summary: runs.a.summary.as_ref(),
                },
                b: gauntlet_report::html::compare::RunSide {
                    manifest: Some(&runs.b.manifest),
                    summary: runs.b.summary.as_ref(),
                },
                a_cases: &runs.a.cases,
                links,
            },
            Some(&nav(None)),
            &mut body,
        )
        .map_err(|e| store_failure(e.to_string()))?;
        Ok(html(PageKind::Static, StatusCode::OK, body))
    })
    .await
}

fn order_key(run: &str, case: &str, trial: u32) -> u64 {
    // FNV-1a: a fixed order that looks shuffled, the same on every start.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in run
        .bytes()
        .chain([0])
        .chain(case.bytes())
        .chain(trial.to_le_bytes())
    {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn samples(app: &App, store: &mut Store, run: &str) -> Result<Arc<RunSamples>, Fail> {
    if let Some(s) = app.samples.lock().expect("lock").get(run) {
        return Ok(Arc::clone(s));
    }
    let mut counts: HashMap<String, usize> = HashMap::new();
    let mut by_check: HashMap<String, Vec<(String, u32)>> = HashMap::new();
    store
        .for_each_case(run, |c| {
            for t in &c.trials {
                if t.outcome != Outcome::Completed {
                    continue;
                }
                let mut seen = HashSet::new();
                for v in &t.verdicts {
                    if seen.insert(v.check.as_str()) {
                        *counts.entry(v.check.clone()).or_default() += 1;
                        by_check
                            .entry(v.check.clone())
                            .or_default()
                            .push((c.case.id.clone(), t.trial));
                    }
                }
            }
            Ok(())
        })
        .map_err(store_failure)?;
    for list in by_check.values_mut() {
        list.sort_by_key(|(case, trial)| order_key(run, case, *trial));
    }
    let mut checks: Vec<(String, usize)> = counts.into_iter().collect();
    checks.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let s = Arc::new(RunSamples { checks, by_check });
    app.samples
        .lock()
        .expect("lock")
        .insert(run.to_owned(), Arc::clone(&s));
    Ok(s)
}

/// Each case's checks as written in the suites the run recorded, or none when the suites
/// cannot be read any more.
fn references(app: &App, store: &mut Store, run: &str) -> Arc<References> {
    if let Some(r) = app.references.lock().expect("lock").get(run) {
        return Arc::clone(r);
    }
    let mut refs = References::new();
    let loaded = store
        .manifest(run)
        .ok()
        .and_then(|m| m.invocation)
        .and_then(|inv| {
            let paths = crate::setup::resolve_suite_paths(&inv, store.location()).ok()?;
            let suites = crate::setup::load_all(
                &paths,
                inv.canary.as_deref(),
                inv.system_prompt_file.as_deref(),
                None,
                &inv.allow_paths
                    .iter()
                    .map(std::path::PathBuf::from)
                    .collect::<Vec<_>>(),
            )
            .ok()?;
            Some(gauntlet_suite::Plan::new(
                suites,
                gauntlet_suite::filter::Selection::default(),
                gauntlet_suite::PlanSettings {
                    canary: inv.canary.as_deref(),
                    timeout_ms: inv.timeout_ms,
                    blocked_is_defended: inv.blocked_is_defended,
                    converters: &inv.converters,
                    seed: 0,
                    strategy: inv.strategy.as_ref(),
                },
            ))
        });
    if let Some(plan) = loaded {
        for planned in plan.all_cases() {
            for e in &planned.case.expect {
                let text = match &e.oracle {
                    Oracle::Judge(j) => j
                        .rubric
                        .clone()
                        .unwrap_or_else(|| serde_json::to_string(e).unwrap_or_default()),
                    _ => serde_json::to_string(e).unwrap_or_default(),
                };
                refs.insert((planned.case.id.clone(), e.label()), text);
            }
        }
    }
    let refs = Arc::new(refs);
    app.references
        .lock()
        .expect("lock")
        .insert(run.to_owned(), Arc::clone(&refs));
    refs
}

/// The input and output of a trial as the labels file records them.
fn conversation(c: &CaseResult, trial: u32) -> (String, String) {
    let Some(t) = c.trials.iter().find(|t| t.trial == trial) else {
        return (String::new(), String::new());
    };
    let turns = &t.trace.turns;
    let Some((last, earlier)) = turns.split_last() else {
        return (String::new(), String::new());
    };
    let mut input = String::new();
    for e in earlier {
        input.push_str(&format!("USER: {}\nASSISTANT: {}\n\n", e.user, e.answer));
    }
    if earlier.is_empty() {
        input.push_str(&last.user);
    } else {
        input.push_str(&format!("USER: {}", last.user));
    }
    (input, last.answer.clone())
}

#[derive(Deserialize)]
struct LabelQuery {
    run: String,
    check: Option<String>,
    note: Option<String>,
}

fn done_set(app: &App, run: &str, check: &str) -> Result<HashSet<(String, u32)>, Fail> {
    let records = read_records(&app.labels).map_err(|e| {
        Box::new(message(
            StatusCode::INTERNAL_SERVER_ERROR,
            "The labels file cannot be read",
            &e.to_string(),
        ))
    })?;
    let mut done: HashSet<(String, u32)> = records
        .into_iter()
        .filter(|r| r.run_id.as_deref() == Some(run) && r.check_id == check)
        .filter_map(|r| r.trial.map(|t| (r.case_id, t)))
        .collect();
    for (r, ch, case, trial) in app.skipped.lock().expect("lock").iter() {
        if r == run && ch == check {
            done.insert((case.clone(), *trial));
        }
    }
    Ok(done)
}

async fn label_page(State(app): State<Arc<App>>, Query(q): Query<LabelQuery>) -> Response {
    blocking(&app, move |app| {
        let mut store = app.store.lock().expect("store lock");
        let run = store.resolve(&q.run).map_err(store_failure)?;
        let s = samples(app, &mut store, &run)?;
        let check = q
            .check
            .filter(|c| s.by_check.contains_key(c))
            .or_else(|| s.by_check.contains_key("judge").then(|| "judge".to_owned()))
            .or_else(|| s.checks.first().map(|c| c.0.clone()))
            .unwrap_or_default();
        let list = s.by_check.get(&check).cloned().unwrap_or_default();
        let done = done_set(app, &run, &check)?;
        let labelled = read_records(&app.labels)
            .unwrap_or_default()
            .iter()
            .filter(|r| r.run_id.as_deref() == Some(run.as_str()) && r.check_id == check)
            .count();
        let next = list.iter().find(|k| !done.contains(*k));
        let item = match next {
            None => None,
            Some((case_id, trial)) => {
                let c = store
                    .case(&run, case_id)
                    .map_err(store_failure)?
                    .ok_or_else(|| store_failure(format!("case {case_id} is gone")))?;
                let (input, output) = conversation(&c, *trial);
                let label = c
                    .trials
                    .iter()
                    .find(|t| t.trial == *trial)
                    .and_then(|t| t.verdicts.iter().find(|v| v.check == check))
                    .map(|v| v.label.clone())
                    .unwrap_or_else(|| check.clone());
                let refs = references(app, &mut store, &run);
                let reference = refs
                    .get(&(case_id.clone(), label.clone()))
                    .cloned()
                    .unwrap_or_default();
                Some(LabelItem {
                    case_id: case_id.clone(),
                    case_name: c.case.name.clone(),
                    trial: *trial,
                    check_label: label,
                    input,
                    output,
                    reference_note: if reference.is_empty() {
                        "The suite this run came from cannot be read, so the check's reference is unknown.".into()
                    } else {
                        String::new()
                    },
                    reference,
                })
            }
        };
        let page = LabelPage {
            left: list.len().saturating_sub(done.len()),
            run: run.clone(),
            check,
            checks: s.checks.clone(),
            labelled,
            item,
            token: app.token.clone(),
            labels: app.labels.display().to_string(),
            message: q.note,
        };
        render_label(&page, &nav(None))
            .map(|s| html(PageKind::Forms, StatusCode::OK, s.into_bytes()))
            .map_err(|e| store_failure(e.to_string()))
    })
    .await
}

#[derive(Deserialize)]
struct LabelForm {
    token: String,
    run: String,
    check: String,
    case: String,
    trial: u32,
    label: String,
}

async fn record_label(
    State(app): State<Arc<App>>,
    axum::Form(f): axum::Form<LabelForm>,
) -> Response {
    if f.token != app.token {
        return message(
            StatusCode::FORBIDDEN,
            "Label not recorded",
            "This form did not come from this viewer. Reload the labelling page and try again.",
        );
    }
    blocking(&app, move |app| {
        let mut store = app.store.lock().expect("store lock");
        let run = store.resolve(&f.run).map_err(store_failure)?;
        let back = |note: &str| {
            Redirect::to(&format!(
                "/label?run={}&check={}&note={}",
                fragment_value(&run),
                fragment_value(&f.check),
                fragment_value(note)
            ))
            .into_response()
        };
        let label = match f.label.as_str() {
            "pass" => Label::Pass,
            "fail" => Label::Fail,
            _ => {
                app.skipped.lock().expect("lock").insert((
                    run.clone(),
                    f.check.clone(),
                    f.case.clone(),
                    f.trial,
                ));
                return Ok(back(&format!(
                    "skipped {} (until the viewer restarts)",
                    f.case
                )));
            }
        };
        let c = store
            .case(&run, &f.case)
            .map_err(store_failure)?
            .ok_or_else(|| store_failure(format!("no case {} in run {run}", f.case)))?;
        let verdict_label = c
            .trials
            .iter()
            .find(|t| t.trial == f.trial)
            .and_then(|t| t.verdicts.iter().find(|v| v.check == f.check))
            .map(|v| v.label.clone())
            .ok_or_else(|| {
                store_failure(format!(
                    "trial {} of {} has no {} verdict",
                    f.trial, f.case, f.check
                ))
            })?;
        let (input, output) = conversation(&c, f.trial);
        let reference = references(app, &mut store, &run)
            .get(&(f.case.clone(), verdict_label.clone()))
            .cloned()
            .unwrap_or_default();
        let rec = LabelRecord {
            input,
            output,
            reference,
            label,
            case_id: f.case.clone(),
            check_id: f.check.clone(),
            run_id: Some(run.clone()),
            trial: Some(f.trial),
            check_label: (verdict_label != f.check).then_some(verdict_label),
            labeled_at: Some(jiff::Timestamp::now().to_string()),
        };
        append_record(&app.labels, &rec).map_err(|e| {
            Box::new(message(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Label not recorded",
                &format!("failed to write `{}`: {e}", app.labels.display()),
            ))
        })?;
        let word = match label {
            Label::Pass => "pass",
            Label::Fail => "fail",
        };
        Ok(back(&format!("recorded {} as {word}", f.case)))
    })
    .await
}
