//! A run held against a named baseline: the baseline's data for `report.html`'s comparison
//! ([`html_baseline`]) and the text comparison said after a run with `--baseline`
//! ([`baseline_comparison`]). `run`, `redteam` and `report RUN` share them; `compare` reads
//! runs through the same `gauntlet_store::compare`.

use gauntlet_report::compare_text::render_comparison;
use gauntlet_report::html::HtmlBaseline;
use gauntlet_report::text::failure_reason;
use gauntlet_store::Store;
use gauntlet_store::compare::{self, CompareError};

use crate::error::{EngineError, store_err};

/// A comparison that could not be made, as a usage error with a hint.
pub fn compare_error(e: CompareError) -> EngineError {
    match e {
        CompareError::Store(e) => store_err(e),
        CompareError::NoBaseline(name) => EngineError::usage(
            format!("no baseline named `{name}`"),
            "set one with `gauntlet baseline set RUN --name NAME`",
        ),
        e @ CompareError::NoColumn { .. } => EngineError::usage(
            e.to_string(),
            "name a column as `gauntlet runs show RUN` lists it",
        ),
    }
}

/// The baseline `report.html` compares a run with.
pub fn html_baseline(store: &mut Store, name: &str) -> Result<HtmlBaseline, EngineError> {
    let base = compare::baseline_run(store, name, failure_reason).map_err(compare_error)?;
    Ok(HtmlBaseline {
        name: name.to_owned(),
        run_id: base.run_id,
        summary: base.summary,
        cases: base.cases,
    })
}

/// The comparison of run `run` with the baseline `name`, as the text printed after a run.
pub fn baseline_comparison(
    store: &mut Store,
    name: &str,
    run: &str,
) -> Result<String, EngineError> {
    let base = compare::resolve_baseline(store, name).map_err(compare_error)?;
    let c = compare::comparison(store, &base, run, failure_reason).map_err(store_err)?;
    Ok(render_comparison(&c))
}
