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
    let columns = Columns::new(inv.matrix.iter().map(|c| c.label.clone()).collect());
    Ok(plan
        .cases()
        .flat_map(|pc| match &columns {
            Some(cols) => super::matrix::expand(pc, cols),
            None => vec![pc],
        })
        .map(|pc| CaseMeta::of(&pc.case, &pc.suite))
        .collect())
}
