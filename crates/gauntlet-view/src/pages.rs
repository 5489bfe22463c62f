//! The pages that show the store: the runs list, a run's report replayed from its events
//! into the writer of `report.html` (kept rendered for the last few runs, `CACHED_PAGES`),
//! and two runs compared (`gauntlet_store::compare::compare_runs`, rendered as
//! `gauntlet compare --html` writes it).

use std::sync::Arc;

use axum::extract::{Path as UrlPath, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use gauntlet_report::html::HtmlReport;
use gauntlet_report::html::compare::{CaseLinks, fragment_value};
use gauntlet_report::html::page::PageKind;
use gauntlet_report::html::view::{RunItem, RunsPage, render_runs};
use serde::Deserialize;

use crate::{App, CACHED_PAGES, blocking, html, message, nav, store_failure};

pub(crate) async fn runs_page(State(app): State<Arc<App>>) -> Response {
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
pub(crate) async fn report_page(
    State(app): State<Arc<App>>,
    UrlPath(run): UrlPath<String>,
) -> Response {
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
pub(crate) struct CompareQuery {
    a: String,
    b: String,
}

pub(crate) async fn compare_page(
    State(app): State<Arc<App>>,
    Query(q): Query<CompareQuery>,
) -> Response {
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
