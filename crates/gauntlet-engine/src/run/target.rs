//! Step "resolve the target" of a run: [`resolve`] builds what the run calls into a
//! [`Resolved`]: the target (with a shard's share of its rate limit, behind the response
//! cache with `--cache`), the judge panel and the grader (with the embeddings of `similar:`
//! checks), the simulated user, the helper models ([`helpers`]), the prices and the
//! budget's check, the quarantine, the redactor that holds every secret read on the way.

use std::sync::Arc;

use gauntlet_core::cache::ResponseCache;
use gauntlet_core::calibration::JudgeRef;
use gauntlet_core::cost::{Budget, PriceTable};
use gauntlet_core::event::Invocation;
use gauntlet_core::matrix::Columns;
use gauntlet_core::redact::Redactor;
use gauntlet_core::strategy::HelperModel;
use gauntlet_core::target::{Target, TargetConfig, TargetInfo, UserSimulator};
use gauntlet_graders::OracleGrader;
use gauntlet_store::StoreLocation;
use gauntlet_suite::filter::Selection;
use gauntlet_suite::load::LoadedSuite;

use super::matrix::MatrixTarget;
use super::{Models, Outputs, Trials};
use crate::error::{EngineError, Notice};
use crate::judge::PanelSetup;

/// What a run calls, built before it is planned.
pub struct Resolved {
    /// Every secret read so far (store, export headers, API keys).
    pub redactor: Redactor,
    /// The OpenTelemetry export, when there is an endpoint.
    pub otel: Option<crate::otel::Export>,
    /// The manifest note on a shard's share of the rate limit.
    pub rate_note: Option<String>,
    pub prices: Arc<PriceTable>,
    pub target: Arc<dyn Target>,
    /// A matrix run's columns (`target` is then a `MatrixTarget`).
    pub columns: Option<Columns>,
    /// A matrix run's trials in flight when `-j` does not say: the sum of the columns'.
    pub matrix_concurrency: Option<usize>,
    pub judges: PanelSetup,
    pub grader: OracleGrader,
    pub quarantined: std::collections::HashSet<String>,
    pub user_simulator: Option<Arc<dyn UserSimulator>>,
    pub helpers: Arc<gauntlet_runner::Helpers>,
    /// The response cache's file, opened when first asked (none with `--no-store` or
    /// `--no-cache`): after the run, it says whether it could not be opened.
    pub file_cache: Option<Arc<crate::cache::LazyCache>>,
}

/// Builds the target, judges, helpers and the rest of what the run calls; warnings go to
/// `notices` in the order they arise.
pub fn resolve(
    suites: &[LoadedSuite],
    inv: &Invocation,
    select: &Selection,
    trials: &Trials,
    models: &Models,
    outputs: &Outputs,
    notices: &mut dyn FnMut(Notice),
) -> Result<Resolved, EngineError> {
    let mut redactor = Redactor::new();
    for (name, secret) in outputs.store.iter().flat_map(StoreLocation::secrets) {
        redactor.add(&name, &secret);
    }
    let otel = match &outputs.otel {
        Some(flags) => crate::otel::prepare(flags, &mut redactor, notices)?,
        None => None,
    };
    let prices = Arc::new(crate::setup::prices(models.config.as_deref())?);
    let (response_cache, file_cache) = response_cache(models, outputs.store.as_ref());
    let built = targets(
        inv,
        select,
        trials,
        response_cache.as_ref(),
        &mut redactor,
        notices,
    )?;
    let target = built.target;
    let judges = crate::judge::judge_panel(
        suites,
        models.judge.as_deref(),
        models.config.as_deref(),
        crate::judge::open_cache(
            models.judge_cache.as_deref(),
            models.fresh_judges || models.no_cache,
            response_cache.clone(),
        )?,
        Some(&target.info()),
        &mut redactor,
    )?;
    for info in &built.infos {
        check_budget(&inv.budget, &prices, info, &judges.refs, notices)?;
    }
    for w in &judges.warnings {
        notices(Notice::Warning(w.clone()));
    }
    let embeddings = crate::embeddings::embeddings(
        suites,
        models.embeddings.as_deref(),
        models.config.as_deref(),
        response_cache.clone(),
        &mut redactor,
    )?;
    let grader = judges.oracle_grader(embeddings);
    let quarantined = crate::setup::quarantine(trials.quarantine.as_deref())?;
    let user_simulator: Option<Arc<dyn UserSimulator>> = match &models.user_model {
        Some(u) => Some(Arc::new(
            crate::judge::ModelUser::new(u, &mut redactor).map_err(|e| {
                EngineError::usage(
                    e,
                    "--user-model takes a model target: fake:user, openai:MODEL, anthropic:MODEL",
                )
            })?,
        )),
        None => None,
    };
    let helpers = helpers(
        inv,
        trials.seed.unwrap_or(0),
        &mut redactor,
        response_cache.clone(),
    )?;
    Ok(Resolved {
        redactor,
        otel,
        rate_note: built.rate_note,
        prices,
        target,
        columns: built.columns,
        matrix_concurrency: built.concurrency,
        judges,
        grader,
        quarantined,
        user_simulator,
        helpers,
        file_cache,
    })
}

/// The run's target (a [`MatrixTarget`] over its columns' for a matrix run), with what the
/// rest of the set-up needs to know of it.
struct Built {
    target: Arc<dyn Target>,
    /// The description of each target called (each column's, for a matrix run).
    infos: Vec<TargetInfo>,
    columns: Option<Columns>,
    concurrency: Option<usize>,
    rate_note: Option<String>,
}

/// Builds the target, or each column's for a matrix run: every target with its own
/// settings, so its rate limit (a shard's share of it), retries and concurrency are its own;
/// columns that call the same target (its prompt variants) share one, limits and all.
fn targets(
    inv: &Invocation,
    select: &Selection,
    trials: &Trials,
    cache: Option<&Arc<dyn ResponseCache>>,
    redactor: &mut Redactor,
    notices: &mut dyn FnMut(Notice),
) -> Result<Built, EngineError> {
    let Some(columns) = Columns::of_matrix(&inv.matrix) else {
        let (cfg, rate_note) = rate_share(&inv.target, select, trials.whole_rate_limit);
        let target = build_target(inv, &cfg, cache, redactor, notices)?;
        return Ok(Built {
            infos: vec![target.info()],
            target,
            columns: None,
            concurrency: None,
            rate_note,
        });
    };
    let mut configs: Vec<&TargetConfig> = Vec::new();
    let mut built = Vec::new();
    let mut of_column = Vec::new();
    let mut notes = Vec::new();
    for column in &inv.matrix {
        if let Some(i) = configs.iter().position(|c| **c == column.target) {
            of_column.push(i);
            continue;
        }
        let (cfg, note) = rate_share(&column.target, select, trials.whole_rate_limit);
        notes.extend(note.map(|n| format!("{}: {n}", column.label)));
        let n = cfg
            .concurrency
            .unwrap_or(super::matrix::DEFAULT_COLUMN_CONCURRENCY);
        of_column.push(built.len());
        configs.push(&column.target);
        built.push((build_target(inv, &cfg, cache, redactor, notices)?, n));
    }
    let concurrency = built.iter().map(|(_, n)| *n).sum();
    let matrix = MatrixTarget::new(columns.clone(), built, of_column);
    Ok(Built {
        infos: matrix.target_infos(),
        target: Arc::new(matrix),
        columns: Some(columns),
        concurrency: Some(concurrency),
        rate_note: (!notes.is_empty()).then(|| notes.join("; ")),
    })
}

/// Rate limits are per target, whichever process calls it: each shard takes its share
/// (unless `--whole-rate-limit`). Returns the target's settings and the manifest's note.
fn rate_share(
    target: &TargetConfig,
    select: &Selection,
    whole_rate_limit: bool,
) -> (TargetConfig, Option<String>) {
    let mut target_cfg = target.clone();
    let mut rate_note = None;
    if let Some(sh) = select.shard.filter(|sh| sh.total > 1 && !whole_rate_limit)
        && let Some(rl) = &mut target_cfg.rate_limit
    {
        let share = |v: &mut Option<u32>, unit: &str| {
            v.map(|whole| {
                let part = (whole / sh.total).max(1);
                *v = Some(part);
                format!("{part} of {whole} {unit}")
            })
        };
        let parts: Vec<String> = [
            share(&mut rl.requests_per_minute, "requests/min"),
            share(&mut rl.tokens_per_minute, "tokens/min"),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !parts.is_empty() {
            rate_note = Some(format!("{} (shard {sh})", parts.join(", ")));
        }
    }
    (target_cfg, rate_note)
}

/// One response cache for the run: judges use it unless `--no-cache`, the agent only with
/// `--cache`. Flake triage asks everything afresh. Without a run store (`--no-store`)
/// nothing is kept on disk: the cache lasts the run. The file, when there is one, is also
/// returned as itself, to be asked after the run whether it could be opened.
fn response_cache(
    models: &Models,
    store: Option<&StoreLocation>,
) -> (
    Option<Arc<dyn ResponseCache>>,
    Option<Arc<crate::cache::LazyCache>>,
) {
    if models.no_cache || models.fresh_judges {
        (None, None)
    } else if store.is_none() {
        (
            Some(Arc::new(gauntlet_core::cache::MemoryCache::new())),
            None,
        )
    } else {
        let file = crate::cache::lazy_response_cache(store);
        (
            Some(Arc::clone(&file) as Arc<dyn ResponseCache>),
            Some(file),
        )
    }
}

/// The agent under test, behind the response cache with `--cache`.
fn build_target(
    inv: &Invocation,
    target_cfg: &TargetConfig,
    response_cache: Option<&Arc<dyn ResponseCache>>,
    redactor: &mut Redactor,
    notices: &mut dyn FnMut(Notice),
) -> Result<Arc<dyn Target>, EngineError> {
    let build_err = |e: gauntlet_targets::BuildError| {
        EngineError::usage(
            e.to_string(),
            e.hint()
                .unwrap_or("check the target settings and the environment variables it names"),
        )
    };
    if !inv.cache {
        return gauntlet_targets::build_target(target_cfg, redactor).map_err(build_err);
    }
    let Some(cache) = response_cache else {
        return Err(EngineError::usage(
            "--cache needs the response cache, and --no-cache turns it off",
            "pass one of them",
        ));
    };
    gauntlet_targets::cache::cacheable(target_cfg.kind).map_err(|e| {
        EngineError::usage(
            format!("--cache: {e}"),
            "cache only model targets (openai:, anthropic:); run exec agents, HTTP apps and the proxy without --cache",
        )
    })?;
    if target_cfg.kind == Some(gauntlet_core::target::TargetKind::Fake) {
        notices(Notice::Warning(
            "--cache: a fake target sends no request, so nothing of it is cached".into(),
        ));
    }
    gauntlet_targets::cache::build_cached_target(target_cfg, redactor, cache.clone())
        .map_err(build_err)
}

/// A cost budget needs a price for every model the run is configured to call: with an
/// unknown price the budget could never be reached.
fn check_budget(
    budget: &Budget,
    prices: &PriceTable,
    target: &TargetInfo,
    judges: &[JudgeRef],
    notices: &mut dyn FnMut(Notice),
) -> Result<(), EngineError> {
    if budget.max_cost_usd.is_none() {
        return Ok(());
    }
    let mut models: Vec<String> = Vec::new();
    if let Some(m) = &target.model {
        models.push(m.clone());
    } else if matches!(target.kind.as_str(), "exec" | "http" | "proxy") {
        // Such a target reports its model calls (or not) as it goes; unpriced ones make
        // the cost unknown, and the budget then counts the priced part.
        notices(Notice::Warning(format!(
            "--max-cost: the `{}` target names no model up front; calls it reports with a model that has no price are not counted against the budget",
            target.kind
        )));
    }
    models.extend(judges.iter().map(|j| j.configured_model.clone()));
    if let Some(m) = models.iter().find(|m| prices.price(m).is_none()) {
        return Err(EngineError::usage(
            format!("--max-cost: the model `{m}` has no price, so its cost is unknown"),
            format!(
                "add it to gauntlet.yaml: `prices: {{{m}: {{input_per_mtok: ..., output_per_mtok: ...}}}}`, or budget tokens with --max-total-tokens"
            ),
        ));
    }
    Ok(())
}

/// The helper models and run-time converters of a run, when it may need them.
pub fn helpers(
    inv: &Invocation,
    seed: u64,
    redactor: &mut Redactor,
    cache: Option<Arc<dyn ResponseCache>>,
) -> Result<Arc<gauntlet_runner::Helpers>, EngineError> {
    let build = |cfg: &Option<TargetConfig>,
                 redactor: &mut Redactor,
                 flag: &str|
     -> Result<Option<Arc<dyn HelperModel>>, EngineError> {
        match cfg {
            None => Ok(None),
            Some(c) => crate::judge::ChatHelper::new(c, redactor, cache.clone())
                .map(|h| Some(Arc::new(h) as Arc<dyn HelperModel>))
                .map_err(|e| {
                    EngineError::usage(
                        e,
                        format!("{flag} takes a model target: fake:..., openai:MODEL, anthropic:MODEL or a named one"),
                    )
                }),
        }
    };
    Ok(Arc::new(gauntlet_runner::Helpers {
        attacker: build(&inv.attacker, redactor, "--attacker")?,
        rewriter: build(&inv.rewriter, redactor, "--rewriter")?,
        pure: Arc::new(|name: &str, text: &str, seed: u64| {
            gauntlet_suite::converters::find(name).map(|c| {
                let mut rng = gauntlet_suite::converters::Rng::new(seed);
                (c.apply)(text, &mut rng)
            })
        }),
        step_seed: gauntlet_suite::converters::turn_seed,
        run_seed: seed,
    }))
}
