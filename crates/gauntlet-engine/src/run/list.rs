//! What `gauntlet run --list` prints: [`list`] plans a request's cases as its run would
//! (sampling, converters, a strategy, benign twins, the columns of a matrix) and returns what
//! report.json will say of each ([`CaseMeta`]: id, suite file and line, kind, pack, OWASP
//! category), without building a target, starting an MCP server or running a trial. A test
//! runner that makes an item of each case (the Python package's pytest plugin) collects
//! from it, and runs only when the items run.

use gauntlet_core::matrix::Columns;
use gauntlet_core::result::CaseMeta;

use super::RunRequest;
use crate::error::EngineError;

/// The cases the request would run, in the order it would start them.
pub fn list(req: RunRequest) -> Result<Vec<CaseMeta>, EngineError> {
    let RunRequest {
        suites,
        select,
        invocation: inv,
        trials,
        ..
    } = req;
    let plan = super::plan::build(suites, select, &inv, &trials)?;
    // Prompt columns included: the matrix of the invocation is the one the run would use.
    let mut ex = Columns::of_matrix(&inv.matrix).map(super::matrix::Expander::new);
    Ok(plan
        .cases()
        .flat_map(|pc| match &mut ex {
            Some(ex) => ex.expand(pc),
            None => vec![pc],
        })
        .map(|pc| CaseMeta::of(&pc.case, &pc.suite))
        .collect())
}
