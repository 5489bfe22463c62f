//! `gauntlet import KIND FILE -o DIR`: a public attack data set in, a suite out (`DIR/suite.yaml`
//! including `DIR/cases.jsonl`), with the data set's source, licence and revision recorded.
//! Reads local files only.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use gauntlet_suite::import::{Kind, Options, import as run_import};

use crate::error::CliError;

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The format: garak, cyberseceval, bipia, agentdojo, behaviors, text, jsonl.
    pub kind: String,
    /// The file to read.
    pub file: PathBuf,
    /// The folder to write suite.yaml and cases.jsonl into.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: PathBuf,
    /// The suite's name (default: from the data set and the file).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The licence to record (default: the data set's own, or a LICENSE file next to FILE).
    #[arg(long, value_name = "SPDX")]
    pub license: Option<String>,
    /// The upstream revision to record, such as a tag or commit (default: sha256 of FILE).
    #[arg(long, value_name = "REV")]
    pub revision: Option<String>,
    /// BIPIA: the context file (email, table or code test.jsonl) the attacks ride in.
    #[arg(long, value_name = "FILE")]
    pub context: Option<PathBuf>,
    /// Write at most N cases.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

pub fn import(args: ImportArgs) -> Result<i32, CliError> {
    let kind = Kind::parse(&args.kind).ok_or_else(|| {
        CliError::usage(
            format!("unknown import kind `{}`", args.kind),
            format!(
                "kinds: {}",
                Kind::ALL
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })?;
    let imported = run_import(&Options {
        kind,
        file: args.file.clone(),
        name: args.name,
        license: args.license,
        revision: args.revision,
        context: args.context,
        limit: args.limit,
    })
    .map_err(|e| CliError::usage(e.to_string(), e.hint()))?;
    imported.write_to(&args.out).map_err(|e| {
        CliError::usage(
            format!(
                "failed to write the suite into `{}`: {e}",
                args.out.display()
            ),
            "pass -o with a writable folder",
        )
    })?;
    let s = &imported.source;
    let mut out = crate::out::Printer::stdout();
    let _ = writeln!(
        out,
        "Imported {} case(s) from {} into {}",
        imported.cases.len(),
        args.file.display(),
        args.out.join("suite.yaml").display()
    );
    let _ = writeln!(
        out,
        "  source {} · licence {} · revision {}",
        s.dataset,
        s.license.as_deref().unwrap_or("unknown"),
        s.revision
    );
    for (why, n) in &imported.skipped {
        let _ = writeln!(out, "  left out {n}: {why}");
    }
    Ok(0)
}
