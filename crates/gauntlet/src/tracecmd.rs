//! `gauntlet trace`: one case of a run (from the store, or from a report.json) shown as the
//! case, its trace turn by turn, and each check's verdict, side by side.

use std::io::Write;
use std::path::Path;

use gauntlet_core::result::{CaseResult, CaseStatus};

use crate::cli::TraceArgs;
use crate::error::CliError;

/// Finds the case by id, or by its display name (`LLM01/technique/id`, `pack/id`).
fn matches(r: &CaseResult, want: &str) -> bool {
    r.case.id == want || r.case.name == want
}

fn from_report(path: &Path, want: &str) -> Result<(Option<CaseResult>, Vec<String>), CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        CliError::usage(
            format!("cannot read `{}`: {e}", path.display()),
            "pass the report.json a run wrote (see --out)",
        )
    })?;
    let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        CliError::usage(
            format!("`{}` is not JSON: {e}", path.display()),
            "pass the report.json a run wrote (see --out)",
        )
    })?;
    let mut ids = Vec::new();
    for c in doc["cases"].as_array().into_iter().flatten() {
        let r: CaseResult = serde_json::from_value(c.clone()).map_err(|e| {
            CliError::usage(
                format!("`{}` is not a gauntlet report: {e}", path.display()),
                "pass the report.json a run wrote (see --out)",
            )
        })?;
        if matches(&r, want) {
            return Ok((Some(r), ids));
        }
        ids.push(r.case.id);
    }
    Ok((None, ids))
}

fn from_store(args: &TraceArgs, want: &str) -> Result<(Option<CaseResult>, Vec<String>), CliError> {
    let mut store = crate::setup::open_existing_store(args.store.store.as_deref())?;
    let run = store.resolve(&args.run).map_err(crate::setup::store_err)?;
    let mut found = None;
    let mut ids = Vec::new();
    store
        .for_each_case(&run, |r| {
            if found.is_none() {
                if matches(&r, want) {
                    found = Some(r);
                } else {
                    ids.push(r.case.id);
                }
            }
            Ok(())
        })
        .map_err(crate::setup::store_err)?;
    Ok((found, ids))
}

/// Runs `gauntlet trace`.
pub fn trace(args: TraceArgs) -> Result<i32, CliError> {
    let (found, ids) = match &args.report {
        Some(p) => from_report(p, &args.case)?,
        None => from_store(&args, &args.case)?,
    };
    let Some(r) = found else {
        let mut some: Vec<&str> = ids.iter().map(String::as_str).take(8).collect();
        some.sort_unstable();
        return Err(CliError::usage(
            format!("no case `{}` in this run", args.case),
            if some.is_empty() {
                "the run has no finished cases".to_owned()
            } else {
                format!(
                    "cases include {}{}",
                    some.join(", "),
                    if ids.len() > some.len() { ", …" } else { "" }
                )
            },
        ));
    };
    let trial = match args.trial {
        Some(n) => r.trials.iter().find(|t| t.trial + 1 == n).ok_or_else(|| {
            CliError::usage(
                format!("case `{}` has no trial {n}", r.case.id),
                format!("trials are numbered 1 to {}", r.trials.len()),
            )
        })?,
        None => r
            .trials
            .iter()
            .find(|t| t.status != CaseStatus::Pass)
            .or(r.trials.first())
            .ok_or_else(|| {
                CliError::usage(
                    format!("case `{}` has no trials", r.case.id),
                    "the run stored this case without any trial result",
                )
            })?,
    };
    let mut out = crate::out::Printer::stdout();
    if args.json {
        let v = serde_json::json!({ "case": r.case, "status": r.status, "trial": trial });
        out.json(&v)?;
    } else {
        write!(out, "{}", gauntlet_report::trace::render_trial(&r, trial))?;
    }
    Ok(0)
}
