//! Comparing runs: `baseline set|list`, `compare A B` (per-case changes, McNemar, Wilson
//! intervals; `--html FILE` writes the comparison page; `--drift` compares per-check pass
//! rates) and the comparison printed after a run with `--baseline`. The runs are read and
//! compared by `gauntlet_store::compare`, rendered by `gauntlet_report`; this module turns
//! flags into those calls and prints.

use std::io::Write;

use gauntlet_report::compare_text::{drift_markdown, drift_text, render_comparison};
use gauntlet_report::html::compare::{CaseLinks, CompareInput, RunSide, render_compare};
use gauntlet_report::text::failure_reason;
use gauntlet_store::Store;
use gauntlet_store::compare::{self, ComparedRuns};

use crate::cli::{BaselineArgs, BaselineCommand, CompareArgs};
use crate::error::CliError;
use crate::out::{Printer, shown};
use crate::setup::{open_existing_store, open_store, store_err};

pub fn baseline(args: BaselineArgs) -> Result<i32, CliError> {
    let mut store = open_store(args.store.store.as_deref(), None)?;
    let mut out = Printer::stdout();
    match args.command {
        BaselineCommand::Set { run, name } => {
            let id = store.resolve(&run).map_err(store_err)?;
            if store.summary(&id).map_err(store_err)?.is_none() {
                return Err(CliError::usage(
                    format!("run {id} did not finish"),
                    "a baseline must be a finished run; resume it first",
                ));
            }
            store.set_baseline(&name, &id).map_err(store_err)?;
            writeln!(out, "baseline `{name}` is now run {id}")?;
        }
        BaselineCommand::List => {
            for (name, run, at) in store.baselines().map_err(store_err)? {
                writeln!(out, "{name:<16} {run}  (set {at})")?;
            }
        }
    }
    Ok(0)
}

pub fn compare_cmd(args: CompareArgs) -> Result<i32, CliError> {
    let mut store = open_existing_store(args.store.store.as_deref())?;
    // `RUN@COLUMN` is a column of a matrix run (a run id never holds `@`).
    let (run_a, col_a) = split_column(&args.run_a);
    let (run_b, col_b) = split_column(&args.run_b);
    let a = store.resolve(run_a).map_err(store_err)?;
    let b = store.resolve(run_b).map_err(store_err)?;
    if args.drift {
        if col_a.is_some() || col_b.is_some() {
            return Err(CliError::usage(
                "--drift compares two runs, not columns",
                "compare columns without --drift: gauntlet compare RUN@A RUN@B",
            ));
        }
        return compare_drift(&mut store, &a, &b, &args);
    }
    let side = |run, column| compare::Side { run, column };
    let runs = compare::compare_sides(&mut store, side(&a, col_a), side(&b, col_b), failure_reason)
        .map_err(gauntlet_engine::baseline::compare_error)?;
    if let Some(path) = &args.html {
        let page = render_page(&runs, CaseLinks::default())?;
        write_file(path, &page).map_err(|e| {
            CliError::usage(
                format!("failed to write `{}`: {e}", path.display()),
                "pass --html with a file in a writable folder",
            )
        })?;
    }
    let c = &runs.comparison;
    let mut out = Printer::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(c).expect("serializes"))?;
    } else {
        write!(out, "{}", render_comparison(c))?;
    }
    Ok(0)
}

/// A run reference and the column after its `@`, if any.
fn split_column(spec: &str) -> (&str, Option<&str>) {
    match spec.split_once('@') {
        Some((run, column)) => (run, Some(column)),
        None => (spec, None),
    }
}

/// `compare A B --drift`: the per-check drift of two resolved runs, as a terminal table,
/// JSON (`--json`) or Markdown (`--markdown FILE`); `--fail-on-drift` exits 1 when a check
/// drifted, for a nightly or canary gate.
fn compare_drift(store: &mut Store, a: &str, b: &str, args: &CompareArgs) -> Result<i32, CliError> {
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        return Err(CliError::usage(
            format!("--alpha {} is not between 0 and 1", args.alpha),
            "the usual level is 0.05",
        ));
    }
    let r = compare::drift_runs(store, a, b, args.alpha).map_err(store_err)?;
    if let Some(path) = &args.markdown {
        std::fs::write(path, drift_markdown(&r)).map_err(|e| {
            CliError::usage(
                format!("failed to write `{}`: {e}", path.display()),
                "pass --markdown with a file in a writable folder",
            )
        })?;
    }
    let mut out = Printer::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&r).expect("serializes"))?;
    } else {
        write!(out, "{}", shown(&drift_text(&r)))?;
    }
    Ok(if args.fail_on_drift && r.drifted > 0 {
        1
    } else {
        0
    })
}

/// Writes a whole file under a temporary name, then renames it into place.
fn write_file(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| std::io::Error::other("not a file name"))?;
    let mut f = gauntlet_report::text::AtomicFile::create(dir, name)?;
    f.out.write_all(bytes)?;
    f.commit()
}

/// The comparison page of two runs, as bytes.
fn render_page(runs: &ComparedRuns, links: CaseLinks) -> Result<Vec<u8>, CliError> {
    let mut page = Vec::new();
    render_compare(
        &CompareInput {
            comparison: &runs.comparison,
            a: RunSide {
                manifest: Some(&runs.a.manifest),
                summary: runs.a.summary.as_ref(),
            },
            b: RunSide {
                manifest: Some(&runs.b.manifest),
                summary: runs.b.summary.as_ref(),
            },
            a_cases: &runs.a.cases,
            links,
        },
        None,
        &mut page,
    )
    .map_err(|e| CliError::plain(format!("failed to render the comparison page: {e}")))?;
    Ok(page)
}
