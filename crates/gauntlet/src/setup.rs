//! The binary's side of the shared set-up: the run API's set-up functions
//! (`gauntlet_engine::setup`) as the commands call them, their errors as [`CliError`]s, and
//! where the run store is ([`store_location`]), whose secrets are kept out of every error
//! printed from then on; `gauntlet stability` around the comparison and the table of each of
//! its two views ([`repeat_command`]).

use std::io::Write;
use std::path::Path;

pub use gauntlet_engine::setup::{
    BUILTIN_OWASP, TargetOverrides, case_target, current_dir, load_all, prices, resolve_spec,
    runtime,
};
use gauntlet_store::{Store, StoreLocation};

use crate::cli::ExecOpts;
use crate::error::CliError;
use crate::out::Printer;
use crate::printer::{TerminalReporter, Verbosity};

/// Where the store is: the flag (or `GAUNTLET_STORE`), else `store:` in the config file,
/// else the default. A location's secrets (a PostgreSQL password) are redacted from every
/// error printed from here on.
pub fn store_location(
    flag: Option<&str>,
    config: Option<&Path>,
) -> Result<StoreLocation, CliError> {
    let location = gauntlet_engine::setup::store_location(flag, config)?;
    for (name, secret) in location.secrets() {
        crate::error::redact_secret(&name, &secret);
    }
    Ok(location)
}

/// Opens (or creates) the store a run writes to.
pub fn open_store(flag: Option<&str>, config: Option<&Path>) -> Result<Store, CliError> {
    let location = store_location(flag, config)?;
    Store::open(location).map_err(store_err)
}

/// Opens a store that must exist already (commands that read runs).
pub fn open_existing_store(flag: Option<&str>) -> Result<Store, CliError> {
    let location = store_location(flag, None)?;
    Ok(gauntlet_engine::setup::open_existing_store(location)?)
}

/// A store error as a usage error with a hint.
pub fn store_err(e: gauntlet_store::StoreError) -> CliError {
    gauntlet_engine::store_err(e).into()
}

/// The terminal view a command hands to the run API with its request: a line per case as it
/// finishes, none with `--quiet`.
pub fn terminal_view(quiet: bool) -> Box<dyn gauntlet_core::event::Reporter> {
    let verbosity = if quiet {
        Verbosity::Quiet
    } else {
        Verbosity::Normal
    };
    Box::new(TerminalReporter::new(verbosity))
}

/// Resolves the run's target from the suites and the run's flags.
pub fn resolve_target(
    suites: &[gauntlet_suite::load::LoadedSuite],
    opts: &ExecOpts,
    default: Option<gauntlet_core::target::TargetConfig>,
) -> Result<gauntlet_core::target::TargetConfig, CliError> {
    let overrides = TargetOverrides {
        target: opts.target.first().cloned(),
        config: opts.config.clone(),
        base_url: opts.base_url.clone(),
        api_key_env: opts.api_key_env.clone(),
        temperature: opts.temperature,
        max_tokens: opts.max_tokens,
        seed: opts.seed,
    };
    Ok(gauntlet_engine::setup::resolve_target(
        suites, &overrides, default,
    )?)
}

/// The columns of a matrix run (`-t` given more than once), each target resolved as a run's
/// one target is (`--base-url` and the sampling flags apply to every column); empty for a
/// run of one target. A target given twice is refused: its columns could not be told apart.
pub fn resolve_matrix(
    suites: &[gauntlet_suite::load::LoadedSuite],
    opts: &ExecOpts,
) -> Result<Vec<gauntlet_core::target::MatrixColumn>, CliError> {
    if opts.target.len() < 2 {
        return Ok(Vec::new());
    }
    let mut columns: Vec<gauntlet_core::target::MatrixColumn> = Vec::new();
    for spec in &opts.target {
        let label = spec.trim();
        if label.is_empty() || columns.iter().any(|c| c.label == label) {
            return Err(CliError::usage(
                format!(
                    "-t `{spec}` is given twice (or empty): its columns could not be told apart"
                ),
                "give each target once: -t fake:safe -t fake:vulnerable",
            ));
        }
        let one = ExecOpts {
            target: vec![label.to_owned()],
            ..opts.clone()
        };
        columns.push(gauntlet_core::target::MatrixColumn {
            label: label.to_owned(),
            target: resolve_target(suites, &one, None)?,
            prompt: None,
        });
    }
    Ok(columns)
}

/// The columns of a run with the suites' system-prompt variants (`prompts:`): each target
/// (the matrix's, or the run's one) with each variant; the columns as they are when no
/// suite declares variants. Refused when two suites declare different ones.
pub fn prompt_columns(
    suites: &[gauntlet_suite::load::LoadedSuite],
    target: &gauntlet_core::target::TargetConfig,
    matrix: Vec<gauntlet_core::target::MatrixColumn>,
) -> Result<Vec<gauntlet_core::target::MatrixColumn>, CliError> {
    let labels = gauntlet_core::matrix::prompt_labels(
        suites
            .iter()
            .map(|s| (s.suite.suite.as_str(), s.prompts.as_slice())),
    )
    .map_err(|e| {
        CliError::usage(
            e,
            "give the suites the same `prompts:` labels, or run them apart",
        )
    })?;
    Ok(gauntlet_core::matrix::cross(target, matrix, &labels))
}

/// The repeats of `gauntlet stability` (plain or `--metamorphic`), with the run's ending
/// printed as any run's is (no summary: the command prints its own report).
fn repeat_run(
    args: &crate::cli::StabilityArgs,
) -> Result<gauntlet_engine::stability::Repeated, CliError> {
    let store = store_location(args.store.store.as_deref(), args.config.as_deref())?;
    let req = gauntlet_engine::stability::RepeatRequest {
        paths: args
            .suites
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        filters: args.filter.clone(),
        repeat: args.repeat,
        seed: args.seed,
        target: TargetOverrides {
            target: args.target.clone(),
            config: args.config.clone(),
            base_url: args.base_url.clone(),
            api_key_env: args.api_key_env.clone(),
            ..TargetOverrides::default()
        },
        rewriter: args.rewriter.clone(),
        judge: args.judge.clone(),
        store,
        metamorphic: args.metamorphic,
    };
    let repeated = gauntlet_engine::stability::repeat(req, &mut crate::printer::show_notice)?;
    crate::printer::print_outcome(&repeated.outcome, false)?;
    Ok(repeated)
}

/// `gauntlet stability`, plain or `--metamorphic`: checks the flags, runs the repeats, lets
/// the view's `assess` compare them (its report and the exit code) and prints them, with
/// `--json` as one document (the target, the notes, the report, the exit code, and the
/// `mode` of `--metamorphic`), else as a heading (the target, the repeats, the run's notes)
/// over the view's own `table`.
pub fn repeat_command<R: serde::Serialize>(
    args: &crate::cli::StabilityArgs,
    assess: impl FnOnce(&gauntlet_engine::stability::Repeated) -> Result<(R, i32), CliError>,
    table: impl FnOnce(&mut Printer, &R) -> Result<(), CliError>,
) -> Result<i32, CliError> {
    gauntlet_engine::stability::check_args(args.repeat, args.max_differ, args.metamorphic)?;
    let repeated = repeat_run(args)?;
    let (report, code) = assess(&repeated)?;
    let mut out = Printer::stdout();
    if args.json {
        let mode = args.metamorphic.then_some("metamorphic");
        let doc = gauntlet_engine::stability::json_doc(
            mode,
            &repeated.target,
            &repeated.notes,
            &report,
            code,
        );
        out.json(&doc)?;
        return Ok(code);
    }
    let repeats = if args.metamorphic {
        "repeats of each case and of each perturbed variant"
    } else {
        "repeats per case"
    };
    writeln!(
        out,
        "target {}, {} {repeats}, response cache bypassed",
        repeated.target, args.repeat
    )?;
    for n in &repeated.notes {
        writeln!(out, "note: {n}")?;
    }
    writeln!(out)?;
    table(&mut out, &report)?;
    Ok(code)
}

/// Reads `.env` in the folder gauntlet runs in and hands its keys to the targets
/// (`gauntlet_targets::keys`; the environment wins, the process environment is not changed),
/// with a warning for each line that could not be read and none for a missing file. Values
/// under a secret's kind of name are registered as secrets, so no error printed later shows
/// one.
pub fn load_dotenv() {
    let Ok(dir) = std::env::current_dir() else {
        return;
    };
    match gauntlet_targets::keys::DotEnv::read(&dir) {
        Ok(None) => {}
        Ok(Some(env)) => {
            for skipped in &env.skipped {
                crate::out::warn(&format!(
                    "{}: {skipped}; the other lines were read",
                    gauntlet_targets::keys::FILE_NAME
                ));
            }
            // A file also holds settings (`DEBUG=1`): only values under a secret's kind of
            // name are redacted, or ordinary words would be shredded in every error.
            for name in env
                .names()
                .filter(|n| gauntlet_targets::exec::looks_like_a_secret(n))
            {
                if let Some((value, _)) = gauntlet_targets::keys::key_var_of(&env, name) {
                    crate::error::redact_secret(name, &value);
                }
            }
            gauntlet_targets::keys::install(env);
        }
        Err(e) => crate::out::warn(&format!(
            "{} could not be read ({e}); keys are read from the environment only",
            gauntlet_targets::keys::FILE_NAME
        )),
    }
}
