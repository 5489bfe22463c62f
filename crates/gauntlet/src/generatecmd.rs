//! `gauntlet redteam generate --suite SUITE -o FILE`: the flags become a
//! `gauntlet_engine::generate::GenerateRequest`, the engine writes the suite from the card,
//! and this command saves it and prints what it holds (cases per card element, who wrote
//! the text) and what to run next.

use std::collections::BTreeMap;
use std::io::Write;

use gauntlet_engine::generate::{Authored, GenerateRequest, generate as run_generate};
use gauntlet_engine::setup::resolve_spec;

use crate::cli::GenerateArgs;
use crate::error::CliError;

pub fn generate(args: GenerateArgs) -> Result<i32, CliError> {
    if args.out.exists() && !args.force {
        return Err(CliError::usage(
            format!("`{}` already exists", args.out.display()),
            "pass --force to overwrite it, or another -o FILE",
        ));
    }
    let attacker = args
        .attacker
        .as_deref()
        .map(|s| resolve_spec(s, args.config.as_deref()))
        .transpose()?;
    let g = run_generate(&GenerateRequest {
        suite: args.suite.display().to_string(),
        seed: args.seed,
        n: args.n,
        attacker,
        allow_paths: args.allow_path.clone(),
    })?;
    std::fs::write(&args.out, &g.yaml).map_err(|e| {
        CliError::usage(
            format!("failed to write `{}`: {e}", args.out.display()),
            "pass -o with a writable path",
        )
    })?;
    let mut by_target: BTreeMap<&str, usize> = BTreeMap::new();
    for c in &g.cases {
        *by_target.entry(c.target.as_str()).or_default() += 1;
    }
    let model = g
        .cases
        .iter()
        .filter(|c| c.authored == Authored::Model)
        .count();
    let kept = g
        .cases
        .iter()
        .filter(|c| matches!(c.authored, Authored::KeptTemplate(_)))
        .count();
    let mut out = crate::out::Printer::stdout();
    let _ = writeln!(
        out,
        "Wrote {} attack(s) of {} from the agent card of {} into {} (seed {})",
        g.cases.len(),
        g.available,
        args.suite.display(),
        args.out.display(),
        args.seed
    );
    for (target, n) in &by_target {
        let _ = writeln!(out, "  {n} × {}", crate::out::shown(target));
    }
    if args.attacker.is_some() {
        let _ = writeln!(
            out,
            "  text: {model} rewritten by the attacker, {kept} kept from the templates (the rewrite was no attack or dropped what a check reads; each case's comment says which), {} unchanged",
            g.cases.len() - model - kept
        );
    }
    let _ = writeln!(
        out,
        "Review it, then: gauntlet validate {0} && gauntlet audit {0} && gauntlet run {0} -t TARGET",
        args.out.display()
    );
    Ok(0)
}
