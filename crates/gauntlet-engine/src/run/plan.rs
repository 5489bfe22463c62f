//! Step "plan" of a run: [`plan`] samples the cases (`--sample`), builds the suites'
//! [`Plan`], refuses a run with nothing to do, connects the suites' MCP servers, and
//! gathers the manifest notes that describe how the run was set up ([`Planned`]).

use std::collections::BTreeMap;

use gauntlet_core::event::Invocation;
use gauntlet_suite::filter::Selection;
use gauntlet_suite::load::LoadedSuite;
use gauntlet_suite::{Plan, PlanSettings};

use super::Trials;
use super::target::Resolved;
use crate::error::{EngineError, Notice};
use crate::setup::McpServers;

/// The run's plan, with its MCP servers connected.
pub struct Planned {
    pub plan: Plan,
    /// Open for the run; closed when it ends.
    pub mcp_servers: McpServers,
    /// Notes the set-up adds to the manifest (after the command's own).
    pub notes: BTreeMap<String, String>,
}

/// Plans the cases of `suites` under `select`.
pub fn plan(
    suites: Vec<LoadedSuite>,
    select: Selection,
    inv: &Invocation,
    trials: &Trials,
    resolved: &mut Resolved,
    notices: &mut dyn FnMut(Notice),
) -> Result<Planned, EngineError> {
    let mut plan = build(suites, select, inv, trials)?;
    plan.redact_prompts(&resolved.redactor);
    if let (Some(file), Some(c)) = (&inv.system_prompt_file, &inv.canary)
        && plan.contexts().any(|ctx| {
            ctx.system_prompt.as_deref().is_some_and(|p| {
                !p.contains(c.as_str()) && !p.contains(gauntlet_core::plan::CANARY_PLACEHOLDER)
            })
        })
    {
        notices(Notice::Warning(format!(
            "the canary does not appear in {file}: leak checks cannot fire unless the prompt holds it"
        )));
    }
    check_not_empty(&plan, notices)?;
    // The suites' MCP servers start now, once for the run, and close when it ends.
    let mcp_servers = crate::setup::connect_mcp(&mut plan, &mut resolved.redactor)?;
    let notes = setup_notes(inv, resolved, &mcp_servers);
    Ok(Planned {
        plan,
        mcp_servers,
        notes,
    })
}

/// The suites' plan under `select`, as the invocation sets it up: `--sample` applied, then
/// converters, a strategy and the canary.
pub(super) fn build(
    mut suites: Vec<LoadedSuite>,
    mut select: Selection,
    inv: &Invocation,
    trials: &Trials,
) -> Result<Plan, EngineError> {
    let seed = trials.seed.unwrap_or(0);
    if let Some(n) = inv.sample {
        gauntlet_suite::sample::apply(&mut suites, &mut select, n, seed).map_err(|e| {
            EngineError::usage(
                format!("failed to read the cases to sample: {e}"),
                "check the included files",
            )
        })?;
    }
    Ok(Plan::new(
        suites,
        select,
        PlanSettings {
            canary: inv.canary.as_deref(),
            timeout_ms: inv.timeout_ms,
            blocked_is_defended: inv.blocked_is_defended,
            converters: &inv.converters,
            seed,
            strategy: inv.strategy.as_ref(),
        },
    ))
}

/// A run with no case is refused, except a shard's empty share, which is recorded.
fn check_not_empty(plan: &Plan, notices: &mut dyn FnMut(Notice)) -> Result<(), EngineError> {
    if plan.planned() > 0 {
        return Ok(());
    }
    // A shard may hold none of a small suite's cases: that is its whole share of the
    // run, recorded (so that the merge finds every shard) and nothing to fail on.
    match plan.selection().shard {
        Some(sh) => {
            notices(Notice::Note(format!(
                "shard {sh} holds none of the {} case(s): its empty result is recorded for `gauntlet merge`",
                plan.suite_refs().iter().map(|r| r.cases).sum::<usize>()
            )));
            Ok(())
        }
        None if plan.suite_refs().iter().all(|r| r.cases == 0) => Err(EngineError::usage(
            "no case to run: the suite has no cases",
            "add at least one case under `cases:` (or `include:` a file of cases)",
        )),
        None => Err(EngineError::usage(
            "no case to run: the filters left nothing",
            "check --filter (keys: id, pack, owasp, technique, tag, kind)",
        )),
    }
}

/// The manifest notes on how the run was set up.
fn setup_notes(
    inv: &Invocation,
    resolved: &Resolved,
    mcp_servers: &McpServers,
) -> BTreeMap<String, String> {
    let mut notes = BTreeMap::new();
    if !mcp_servers.is_empty() {
        // Their calls are real: the manifest says so next to the simulated side-effect mode.
        notes.insert("mcp_servers".into(), mcp_servers.len().to_string());
    }
    if let Some(f) = &inv.system_prompt_file {
        notes.insert("system_prompt_file".into(), f.clone());
    }
    if !resolved.quarantined.is_empty() {
        notes.insert("quarantined".into(), resolved.quarantined.len().to_string());
    }
    if let Some(n) = &resolved.rate_note {
        notes.insert("rate_limit_share".into(), n.clone());
    }
    if inv.cache {
        notes.insert(
            "cache".into(),
            "the agent's model calls go through the response cache: a trial answered from it has evidence `replay`".into(),
        );
    }
    notes
}
