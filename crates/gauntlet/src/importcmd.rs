//! `gauntlet import KIND FILE -o DIR`: a public attack data set in, a suite out (`DIR/suite.yaml`
//! including `DIR/cases.jsonl`), with the data set's source, licence and revision recorded.
//! Reads local files only.

use std::io::Write;

use gauntlet_suite::import::{Kind, Options, import as run_import};

use crate::cli::ImportArgs;
use crate::error::CliError;

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
    for (label, n) in &imported.unmapped {
        let _ = writeln!(out, "  no harm category for {n}: category `{label}`");
    }
    Ok(0)
}
