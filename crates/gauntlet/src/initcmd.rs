//! `gauntlet init [DIR]`: writes the starter harness (agent card, 10 tasks, 5 refusals, a
//! scoring sheet and a regression log), or with `--backlog` the backlog benchmark's
//! template. Existing files are never overwritten without `--force`, and nothing is written
//! if any would be.

use std::io::Write;

use gauntlet_suite::builtin::{BACKLOG_FILES, STARTER_FILES};

use crate::cli::InitArgs;
use crate::error::CliError;

pub fn init(args: InitArgs) -> Result<i32, CliError> {
    let dir = &args.dir;
    let files = if args.backlog {
        BACKLOG_FILES
    } else {
        STARTER_FILES
    };
    if !args.force {
        let existing: Vec<String> = files
            .iter()
            .map(|(name, _)| dir.join(name))
            .filter(|p| p.exists())
            .map(|p| p.display().to_string())
            .collect();
        if !existing.is_empty() {
            return Err(CliError::usage(
                format!("would overwrite {}", existing.join(", ")),
                "choose another folder (gauntlet init DIR) or pass --force",
            ));
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| {
        CliError::usage(
            format!("failed to create `{}`: {e}", dir.display()),
            "pick a writable folder",
        )
    })?;
    for (name, text) in files {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| {
            CliError::usage(
                format!("failed to write `{}`: {e}", p.display()),
                "pick a writable folder",
            )
        })?;
    }
    let mut out = crate::out::Printer::stdout();
    let shown = dir.display();
    let (what, next) = if args.backlog {
        (
            "a backlog benchmark template",
            format!(
                "\nNext: edit and commit the contract (it is frozen from then on), then\n  gauntlet backlog validate {shown}/contract.json                 # prints the hash every row records\n  gauntlet backlog validate {shown}/contract.json --ledger {shown}/ledger.csv\n  gauntlet backlog report {shown}/ledger.csv --contract {shown}/contract.json"
            ),
        )
    } else {
        (
            "a starter harness",
            format!(
                "\nNext:\n  gauntlet validate {shown}/suite.yaml\n  gauntlet run {shown}/suite.yaml            # passes as shipped (fake:scripted)\n  gauntlet run {shown}/suite.yaml --target openai:gpt-4o-mini   # key from OPENAI_API_KEY\n  gauntlet run {shown}/suite.yaml --target openai:MODEL --base-url http://127.0.0.1:8080/v1   # a local server"
            ),
        )
    };
    writeln!(out, "Created {what} in {shown}:")?;
    for (name, _) in files {
        writeln!(out, "  {shown}/{name}")?;
    }
    writeln!(out, "{next}")?;
    Ok(0)
}
