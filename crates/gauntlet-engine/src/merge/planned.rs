//! Planning a shard again: [`planned_ids`] loads the suites a shard ran, as its recorded
//! invocation found them, under its filters, sample and shard, and returns the ids of the
//! cases they plan for it. The merge then holds the shard's report to that list, so that a
//! report with a case taken out (and its summary edited to match) cannot merge to PASS.

use std::collections::HashSet;
use std::path::PathBuf;

use gauntlet_core::event::RunManifest;
use gauntlet_store::StoreLocation;
use gauntlet_suite::{Plan, PlanSettings};

use crate::error::EngineError;
use crate::run::resume::recorded_suites;

/// The ids of the cases a shard's suites plan for it, or why they cannot be planned again
/// (a note for the merged run; its own count is then all there is to check). An error when
/// the suites are not where the run found them or changed since: the shard's cases cannot
/// be held to them.
pub(super) fn planned_ids(
    manifest: &RunManifest,
    source: &str,
    store: Option<&StoreLocation>,
) -> Result<Result<HashSet<String>, String>, EngineError> {
    let Some(inv) = &manifest.invocation else {
        return Ok(Err(format!(
            "{source} records no invocation (an older gauntlet): its cases are checked against its own count only"
        )));
    };
    if let Some(from) = manifest.notes.get("rerun_failed_from") {
        return Ok(Err(format!(
            "{source} re-ran the failures of run {from}: its cases are checked against its own count only"
        )));
    }
    let none = StoreLocation::Sqlite(PathBuf::new());
    let (mut suites, mut select) = recorded_suites(
        inv,
        manifest,
        store.unwrap_or(&none),
        |path| {
            EngineError::usage(
                format!(
                    "`{path}` changed since {source} ran (sha256 differs): its cases cannot be checked against it"
                ),
                "merge where the suites are as the shards ran them (the same commit)",
            )
        },
    )?;
    if let Some(n) = inv.sample {
        gauntlet_suite::sample::apply(&mut suites, &mut select, n, manifest.seed).map_err(|e| {
            EngineError::usage(
                format!("failed to read the cases {source} sampled: {e}"),
                "check the included files",
            )
        })?;
    }
    let plan = Plan::new(
        suites,
        select,
        PlanSettings {
            canary: inv.canary.as_deref(),
            converters: &inv.converters,
            seed: manifest.seed,
            strategy: inv.strategy.as_ref(),
            ..PlanSettings::default()
        },
    );
    Ok(Ok(plan.cases().map(|pc| pc.case.id.clone()).collect()))
}
