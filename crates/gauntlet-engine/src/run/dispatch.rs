//! Step "dispatch" of a run: [`dispatch`] turns what the earlier steps built into the
//! runner's [`RunConfig`] (concurrency, the harness-integrity check, the helpers, the
//! budget), starts the async runtime with Ctrl-C wired to cancellation, and runs the plan
//! through the runner ([`Ran`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use gauntlet_core::event::Invocation;
use gauntlet_core::result::CaseResult;
use gauntlet_core::target::Target;
use gauntlet_graders::OracleGrader;
use gauntlet_runner::{PlanItem, RunConfig, RunOutcome, Runner};
use gauntlet_store::Store;

use super::attach::{Attached, written_by_us};
use super::target::Resolved;
use super::{Origin, Outputs, Trials};
use crate::error::EngineError;
use crate::otel::ExportReport;
use crate::setup::{McpServers, integrity_check, runtime};

/// A finished run, before the outcome is told.
pub struct Ran {
    pub run_id: String,
    pub outcome: RunOutcome,
    pub store: Option<Store>,
    pub captured: Option<Arc<Mutex<Vec<CaseResult>>>>,
    pub otel: Option<ExportReport>,
    /// Still open: the caller closes them.
    pub mcp_servers: McpServers,
}

/// Runs the plan through the runner, with Ctrl-C cancelling the run.
pub fn dispatch(
    resolved: Resolved,
    attached: Attached,
    inv: &Invocation,
    origin: &Origin,
    trials: &Trials,
    outputs: &Outputs,
) -> Result<Ran, EngineError> {
    let Attached {
        planned,
        run_id,
        manifest,
        reporters,
        store,
        finished,
        captured,
        otel,
    } = attached;
    let (config, target, grader) = config(
        resolved,
        &planned.plan,
        inv,
        origin,
        trials,
        outputs,
        finished,
    );
    let cancel = Arc::clone(&config.cancel);
    let rt = runtime()?;
    let plan = planned.plan;
    let columns = config.columns.clone();
    let outcome = rt.block_on(async {
        let c = Arc::clone(&cancel);
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                c.store(true, Ordering::Relaxed);
                // Agents run in process groups of their own, out of the terminal's reach:
                // they get the interrupt from here, as they used to from the terminal.
                gauntlet_targets::exec::interrupt_agents();
            }
        });
        let runner = Runner::new(target, Arc::new(grader), config);
        match &columns {
            // A matrix run: each case once per column, its columns next to each other.
            Some(cols) => {
                let mut ex = super::matrix::Expander::new(cols.clone());
                let cases = plan
                    .cases()
                    .flat_map(move |pc| ex.expand(pc))
                    .map(PlanItem::from);
                runner.run(manifest, cases, reporters).await
            }
            None => {
                runner
                    .run(manifest, plan.cases().map(PlanItem::from), reporters)
                    .await
            }
        }
    });
    Ok(Ran {
        run_id,
        outcome,
        store,
        captured,
        otel,
        mcp_servers: planned.mcp_servers,
    })
}

/// The runner's settings, and the target and grader it calls.
fn config(
    resolved: Resolved,
    plan: &gauntlet_suite::Plan,
    inv: &Invocation,
    origin: &Origin,
    trials: &Trials,
    outputs: &Outputs,
    finished: HashMap<String, Vec<gauntlet_core::result::TrialResult>>,
) -> (RunConfig, Arc<dyn Target>, OracleGrader) {
    let probe: gauntlet_runner::RefusalProbe =
        Arc::new(|t: &str| gauntlet_graders::refusal::analyze(t).refused);
    let concurrency = if inv.concurrency > 0 {
        inv.concurrency
    } else {
        resolved
            .matrix_concurrency
            .unwrap_or_else(|| inv.target.concurrency.unwrap_or(8))
    };
    let config = RunConfig {
        concurrency,
        k: trials.k,
        seed: trials.seed.unwrap_or(0),
        max_fail: inv.max_fail,
        refusal_probe: Some(probe),
        cancel: Arc::new(AtomicBool::new(false)),
        packs: plan.packs().clone(),
        redactor: resolved.redactor,
        quarantined: resolved.quarantined,
        finished,
        pin_seed: trials.pin_seed,
        // Every harness file is hashed now and again when the trials are done.
        // Calibration records decide whether a judge gates: they are harness files too.
        integrity: Some(integrity_check(
            plan.harness_files()
                .into_iter()
                .chain(resolved.judges.records.iter().cloned())
                .collect(),
            written_by_us(outputs),
        )),
        user_simulator: resolved.user_simulator,
        helpers: Some(resolved.helpers),
        warnings: origin.warnings.clone(),
        notes: Vec::new(),
        prices: resolved.prices,
        budget: inv.budget,
        columns: resolved.columns,
    };
    (config, resolved.target, resolved.grader)
}
