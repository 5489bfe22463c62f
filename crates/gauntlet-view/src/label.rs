//! The labelling mode: [`RunSamples`] (what can be sampled from a run, per check kind, in a
//! fixed shuffled order), each check's reference as the run's suites write it, the page that
//! shows the next unlabelled output, and the form that appends a person's label to the
//! labels file (`gauntlet_graders::judge::labels::append_record`).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use gauntlet_core::expect::Oracle;
use gauntlet_core::result::{CaseResult, Outcome};
use gauntlet_graders::judge::labels::{Label, LabelRecord, append_record, read_records};
use gauntlet_report::html::compare::fragment_value;
use gauntlet_report::html::page::PageKind;
use gauntlet_report::html::view::{LabelItem, LabelPage, render_label};
use gauntlet_store::Store;
use serde::Deserialize;

use crate::{App, Fail, blocking, html, message, nav, store_failure};

/// What the labelling mode can sample from one run: per check kind, every (case, trial) that
/// completed and has a verdict of that kind, in a fixed shuffled order.
pub(crate) struct RunSamples {
    checks: Vec<(String, usize)>,
    by_check: HashMap<String, Vec<(String, u32)>>,
}

/// For one run: each case's checks as the suite writes them, by (case id, check label).
pub(crate) type References = HashMap<(String, String), String>;

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
    // A judge the suite defines under `judges.checks` keeps its rubric there.
    let mut rubrics: HashMap<(String, String), String> = HashMap::new();
    let loaded = store.manifest(run).ok().and_then(|manifest| {
        let inv = manifest.invocation.as_ref()?;
        let suites = (app.suites)(inv, &manifest, store.location())?;
        for s in &suites {
            for (id, def) in &s.suite.judges.checks {
                if let Some(r) = &def.rubric {
                    rubrics.insert((s.suite.suite.clone(), id.clone()), r.clone());
                }
            }
        }
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
                        .or_else(|| {
                            let id = j.check.clone()?;
                            rubrics.get(&(planned.suite.name.clone(), id)).cloned()
                        })
                        .unwrap_or_else(|| serde_json::to_string(e).unwrap_or_default()),
                    _ => serde_json::to_string(e).unwrap_or_default(),
                };
                // Keyed as the verdicts are labelled (`judge tone` for `judge: tone`).
                refs.insert((planned.case.id.clone(), e.verdict_label()), text);
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
pub(crate) struct LabelQuery {
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

pub(crate) async fn label_page(
    State(app): State<Arc<App>>,
    Query(q): Query<LabelQuery>,
) -> Response {
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
pub(crate) struct LabelForm {
    token: String,
    run: String,
    check: String,
    case: String,
    trial: u32,
    label: String,
}

pub(crate) async fn record_label(
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
