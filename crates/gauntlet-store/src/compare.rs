//! Comparing stored runs: [`ComparedRuns`], two runs read from the store and compared by
//! `gauntlet_core::compare` (with a note when their judges differ), the digests of a run's
//! cases, the run a baseline name stands for, and the per-check drift of two graded batches
//! (`gauntlet_core::drift`). `gauntlet compare`, `log`, `view` and a run with `--baseline`
//! all read runs through here, so they compare alike; rendering stays with the reporters.
//!
//! A case's one-line reason is the caller's [`Reason`]: it is a piece of report text
//! (`gauntlet_report::text::failure_reason`), and this crate depends on the data model only.

use std::collections::BTreeMap;

use gauntlet_core::compare::{CaseDigest, Comparison, compare};
use gauntlet_core::drift::{DriftReport, Tally, drift, tally};
use gauntlet_core::event::RunManifest;
use gauntlet_core::result::CaseResult;
use gauntlet_core::summary::Summary;

use crate::{Store, StoreError};

/// The one-line reason a case did not pass, as the comparison shows it.
pub type Reason = fn(&CaseResult) -> String;

/// Why runs could not be compared.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// The store failed or has no such run.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A `--baseline NAME` names neither a baseline nor a run.
    #[error("no baseline named `{0}`")]
    NoBaseline(String),
    /// `RUN@COLUMN` names a column the run does not have.
    #[error("run {run} has no column `{column}` (its columns: {columns})")]
    NoColumn {
        /// The run.
        run: String,
        /// The column asked for.
        column: String,
        /// The run's columns, or "none: it ran one target".
        columns: String,
    },
}

/// One side of a comparison as read from the store.
#[derive(Debug, Clone)]
pub struct RunRead {
    /// The run id.
    pub run_id: String,
    /// Its manifest.
    pub manifest: RunManifest,
    /// Its summary, when it finished.
    pub summary: Option<Summary>,
    /// Its cases, digested.
    pub cases: Vec<CaseDigest>,
}

/// Two stored runs and their comparison: everything the text, JSON and HTML views need.
#[derive(Debug, Clone)]
pub struct ComparedRuns {
    /// The comparison of A with B, judge changes noted.
    pub comparison: Comparison,
    /// Run A, the earlier one.
    pub a: RunRead,
    /// Run B.
    pub b: RunRead,
}

/// Digests of a run's cases, and its summary.
pub fn digests(
    store: &mut Store,
    run: &str,
    reason: Reason,
) -> Result<(Vec<CaseDigest>, Option<Summary>), StoreError> {
    let mut out = Vec::new();
    store.for_each_case(run, |c| {
        out.push(CaseDigest::of(&c, reason(&c)));
        Ok(())
    })?;
    let summary = store.summary(run)?.map(|(s, _)| s);
    Ok((out, summary))
}

/// Reads two resolved runs and compares them.
pub fn compare_runs(
    store: &mut Store,
    a: &str,
    b: &str,
    reason: Reason,
) -> Result<ComparedRuns, StoreError> {
    let (da, sa) = digests(store, a, reason)?;
    let (db, sb) = digests(store, b, reason)?;
    let mut c = compare(a, &da, sa.as_ref(), b, &db, sb.as_ref());
    let ma = store.manifest(a)?;
    let mb = store.manifest(b)?;
    note_judge_changes(&mut c, (&ma, sa.as_ref()), (&mb, sb.as_ref()));
    Ok(ComparedRuns {
        comparison: c,
        a: RunRead {
            run_id: a.to_owned(),
            manifest: ma,
            summary: sa,
            cases: da,
        },
        b: RunRead {
            run_id: b.to_owned(),
            manifest: mb,
            summary: sb,
            cases: db,
        },
    })
}

/// One side of a comparison: a stored run, or one column of a matrix run (`RUN@COLUMN`).
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    /// The run's id, resolved.
    pub run: &'a str,
    /// The column of a matrix run, if one.
    pub column: Option<&'a str>,
}

/// Reads one side: a run's cases and summary, or a column's cases under their own ids
/// (so that the same case pairs across columns) and the column's own summary.
fn read_side(store: &mut Store, side: Side<'_>, reason: Reason) -> Result<RunRead, CompareError> {
    let (cases, summary) = digests(store, side.run, reason)?;
    let manifest = store.manifest(side.run)?;
    let Some(column) = side.column else {
        return Ok(RunRead {
            run_id: side.run.to_owned(),
            manifest,
            summary,
            cases,
        });
    };
    let columns = gauntlet_core::matrix::Columns::of_manifest(&manifest);
    let no_column = || CompareError::NoColumn {
        run: side.run.to_owned(),
        column: column.to_owned(),
        columns: columns
            .as_ref()
            .map_or("none: it ran one target".to_owned(), |c| {
                c.labels().join(", ")
            }),
    };
    let index = columns
        .as_ref()
        .and_then(|c| c.index(column))
        .ok_or_else(no_column)?;
    let cols = columns.as_ref().expect("a column was found");
    let own = |text: &str| {
        text.strip_suffix(column)
            .and_then(|t| t.strip_suffix(gauntlet_core::matrix::SEPARATOR))
            .map(str::to_owned)
    };
    let cases = cases
        .into_iter()
        .filter_map(|mut d| {
            let (i, base) = cols.of(&d.id)?;
            if i != index {
                return None;
            }
            let base = base.to_owned();
            d.name = own(&d.name).unwrap_or_else(|| d.name.clone());
            d.id = base;
            Some(d)
        })
        .collect();
    let summary = summary.and_then(|s| s.columns.into_iter().find(|c| c.label == column));
    Ok(RunRead {
        run_id: format!("{}@{column}", side.run),
        manifest,
        summary: summary.map(|c| c.summary),
        cases,
    })
}

/// Compares two sides, each a stored run or a column of one (two columns of one matrix
/// run are paired case by case, as two runs are).
pub fn compare_sides(
    store: &mut Store,
    a: Side<'_>,
    b: Side<'_>,
    reason: Reason,
) -> Result<ComparedRuns, CompareError> {
    let a = read_side(store, a, reason)?;
    let b = read_side(store, b, reason)?;
    let mut c = compare(
        &a.run_id,
        &a.cases,
        a.summary.as_ref(),
        &b.run_id,
        &b.cases,
        b.summary.as_ref(),
    );
    note_judge_changes(
        &mut c,
        (&a.manifest, a.summary.as_ref()),
        (&b.manifest, b.summary.as_ref()),
    );
    Ok(ComparedRuns {
        comparison: c,
        a,
        b,
    })
}

/// Compares two stored runs: the comparison alone.
pub fn comparison(
    store: &mut Store,
    a: &str,
    b: &str,
    reason: Reason,
) -> Result<Comparison, StoreError> {
    compare_runs(store, a, b, reason).map(|r| r.comparison)
}

/// Says in the comparison when the judges differ between the runs: a score that moved may
/// be the judge's, not the agent's. Every way of comparing runs goes through here.
pub fn note_judge_changes(
    c: &mut Comparison,
    (ma, sa): (&RunManifest, Option<&Summary>),
    (mb, sb): (&RunManifest, Option<&Summary>),
) {
    let models = |s: Option<&Summary>| {
        s.and_then(|s| s.judge.as_ref())
            .map(|j| j.models.clone())
            .unwrap_or_default()
    };
    c.judge_changes =
        gauntlet_core::calibration::judge_changes(&ma.judges, &mb.judges, &models(sa), &models(sb));
    if c.judge_changes.is_empty() && ma.judges.is_empty() && ma.judge != mb.judge {
        // Runs from before judges were recorded one by one: the manifest's line is all there is.
        c.judge_changes.push(format!(
            "judge {} -> {}",
            ma.judge.as_deref().unwrap_or("none"),
            mb.judge.as_deref().unwrap_or("none")
        ));
    }
}

/// The run a `--baseline NAME` names: a baseline, else any run reference.
pub fn resolve_baseline(store: &mut Store, name: &str) -> Result<String, CompareError> {
    match store.baseline(name)? {
        Some(b) => Ok(b),
        None => store
            .resolve(name)
            .map_err(|_| CompareError::NoBaseline(name.to_owned())),
    }
}

/// A baseline's run as a report compares a run with it: its id, case digests and summary.
#[derive(Debug, Clone)]
pub struct BaselineRun {
    /// The run the name resolved to.
    pub run_id: String,
    /// Its summary, when it finished.
    pub summary: Option<Summary>,
    /// Its cases, digested.
    pub cases: Vec<CaseDigest>,
}

/// Reads the run a baseline name stands for.
pub fn baseline_run(
    store: &mut Store,
    name: &str,
    reason: Reason,
) -> Result<BaselineRun, CompareError> {
    let run_id = resolve_baseline(store, name)?;
    let (cases, summary) = digests(store, &run_id, reason)?;
    Ok(BaselineRun {
        run_id,
        summary,
        cases,
    })
}

/// A run's per-check pass tallies.
pub fn tallies(store: &mut Store, run: &str) -> Result<BTreeMap<String, Tally>, StoreError> {
    let mut cases = Vec::new();
    store.for_each_case(run, |c| {
        cases.push(c);
        Ok(())
    })?;
    Ok(tally(&cases))
}

/// The per-check drift of two resolved runs at level `alpha` (checked by the caller).
pub fn drift_runs(
    store: &mut Store,
    a: &str,
    b: &str,
    alpha: f64,
) -> Result<DriftReport, StoreError> {
    let ta = tallies(store, a)?;
    let tb = tallies(store, b)?;
    Ok(drift(a, &ta, b, &tb, alpha))
}

#[cfg(test)]
mod tests {
    use gauntlet_core::event::{EventKind, Reporter, RunEvent};

    use super::*;

    fn manifest(run: &str, judge: &str) -> RunManifest {
        serde_json::from_value(serde_json::json!({
            "schema_version": 1, "run_id": run, "gauntlet_version": "0.1.0",
            "started_at": "2026-11-30T03:06:32Z", "command": "run",
            "suites": [{"name": "s", "path": "suite.yaml", "sha256": "00", "cases": 1}],
            "target": {"kind": "fake", "label": "fake:safe"}, "k": 1, "seed": 0,
            "planned_cases": 1, "evidence_level": "online", "side_effects": "simulated",
            "dataset_revision": "-", "judge": judge
        }))
        .expect("manifest")
    }

    fn case(status: &str, passed: bool) -> CaseResult {
        serde_json::from_value(serde_json::json!({
            "case": {"id": "c1", "suite": "s", "kind": "task", "blocking": true,
                     "security": false, "name": "c1"},
            "status": status, "score": {"kind": "unscored"}, "passed_trials": u32::from(passed),
            "trials": [{"case_id": "c1", "trial": 0, "outcome": "completed", "status": status,
                        "score": {"kind": "unscored"},
                        "verdicts": [{"check": "contains", "label": "contains", "dimension": "outcome",
                                      "passed": passed, "score": 3, "evidence": "e"}],
                        "trace": {"spans": [], "turns": [{"user": "hi", "answer": "a"}]},
                        "duration_ms": 1}]
        }))
        .expect("a case result")
    }

    fn write_run(store: &Store, run: &str, judge: &str, c: CaseResult) {
        let mut rep = store.reporter().expect("reporter");
        rep.on_event(&RunEvent::new(
            0,
            EventKind::RunStarted {
                manifest: Box::new(manifest(run, judge)),
            },
        ))
        .expect("start");
        rep.on_event(&RunEvent::new(
            1,
            EventKind::CaseFinished {
                result: Box::new(c),
            },
        ))
        .expect("case");
    }

    fn why(c: &CaseResult) -> String {
        format!("{} why", c.case.id)
    }

    #[test]
    fn two_stored_runs_compare_with_their_judges_noted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(dir.path().join("runs.db")).expect("open");
        let (a, b) = ("20261130T030632Z-aaaa", "20261130T030633Z-bbbb");
        write_run(&store, a, "fake:j1", case("PASS", true));
        write_run(&store, b, "fake:j2", case("FAIL", false));
        let runs = compare_runs(&mut store, a, b, why).expect("compare");
        assert_eq!(runs.a.run_id, a);
        assert_eq!(runs.b.manifest.run_id, b);
        assert_eq!(runs.a.cases.len(), 1);
        let c = &runs.comparison;
        assert_eq!(c.new_failures.len(), 1);
        assert_eq!(c.new_failures[0].reason, "c1 why");
        assert_eq!(c.judge_changes, ["judge fake:j1 -> fake:j2"]);
        assert_eq!(comparison(&mut store, a, b, why).expect("compare"), *c);

        let r = drift_runs(&mut store, a, b, 0.05).expect("drift");
        let checks: Vec<&str> = r.checks.iter().map(|c| c.check.as_str()).collect();
        assert_eq!(checks, ["(case)", "contains"]);

        assert!(matches!(
            resolve_baseline(&mut store, "nightly"),
            Err(CompareError::NoBaseline(n)) if n == "nightly"
        ));
        store.set_baseline("nightly", a).expect("set");
        let base = baseline_run(&mut store, "nightly", why).expect("baseline");
        assert_eq!(base.run_id, a);
        assert_eq!(base.cases.len(), 1);
        assert_eq!(resolve_baseline(&mut store, b).expect("a run id"), b);
    }
}
