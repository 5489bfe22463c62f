//! Commands about suite files that run nothing: `validate` (diagnostics with file, line,
//! column and a hint) and `schema` (the JSON Schema of the suite format or of report.json).

use std::io::Write;

use crate::cli::{SchemaArgs, ValidateArgs};
use crate::error::CliError;
use crate::out::Printer;

pub fn validate(args: ValidateArgs) -> Result<i32, CliError> {
    let opts = gauntlet_suite::LoadOptions {
        run_canary: args.canary.as_deref(),
        allow_paths: &args.allow_path,
        ..Default::default()
    };
    let mut diags = Vec::new();
    let mut ok = Vec::new();
    for p in &args.suites {
        match gauntlet_suite::load_file(p, &opts) {
            Ok(s) => ok.push(s),
            Err(mut d) => diags.append(&mut d),
        }
    }
    diags.extend(gauntlet_suite::load::check_unique_ids(&ok));
    // A suite with no case is valid YAML but tests nothing; `run` would refuse it anyway.
    for s in ok.iter().filter(|s| s.case_count == 0) {
        diags.push(
            gauntlet_suite::Diagnostic::file(&s.origin, "the suite has no cases").hint(
                "add at least one case under `cases:` (or `include:` a file of cases); `gauntlet init` writes a starter suite",
            ),
        );
    }
    if !diags.is_empty() {
        return Err(CliError::Diagnostics(diags));
    }
    let min_cases = match args.holdout_min_cases {
        Some(n) => Some(n),
        None => {
            let path = args
                .config
                .clone()
                .unwrap_or_else(|| std::path::PathBuf::from("gauntlet.yaml"));
            if path.exists() || args.config.is_some() {
                gauntlet_suite::load::load_config(&path)
                    .map_err(CliError::Diagnostics)?
                    .holdout_min_cases
            } else {
                None
            }
        }
    };
    let mut out = Printer::stdout();
    for s in &ok {
        let held = if s.holdout_count > 0 {
            format!(", {} hold-out", s.holdout_count)
        } else {
            String::new()
        };
        writeln!(
            out,
            "ok: {} (suite `{}`, {} case{}{held})",
            s.origin,
            s.suite.suite,
            s.case_count,
            if s.case_count == 1 { "" } else { "s" }
        )?;
    }
    // A suite large enough for prompt iteration to fit it wants a slice kept back.
    if let Some(n) = min_cases {
        for s in ok
            .iter()
            .filter(|s| s.holdout_count == 0 && s.case_count > n)
        {
            crate::out::warn(&format!(
                "{}: suite `{}` has {} cases and no hold-out slice; mark a share of them `holdout: true` (they then run only with --include-holdout and are reported as pass rates per slice), so that prompt iteration cannot overfit every case (threshold {n}, from {})",
                s.origin,
                s.suite.suite,
                s.case_count,
                if args.holdout_min_cases.is_some() {
                    "--holdout-min-cases"
                } else {
                    "holdout_min_cases in the config file"
                }
            ));
        }
    }
    Ok(0)
}

/// Where the published schemas live: the files in the repository's `schema/` folder, which
/// a test keeps equal to what this command prints.
const SCHEMA_BASE: &str = "https://raw.githubusercontent.com/gauntlet-dev/gauntlet/main/schema";

pub fn schema(args: SchemaArgs) -> Result<i32, CliError> {
    let (mut v, file) = if args.report {
        (
            serde_json::to_value(schemars::schema_for!(gauntlet_report::json::ReportDocument))
                .expect("schema serializes"),
            "report.schema.json",
        )
    } else if args.trace {
        (
            serde_json::to_value(schemars::schema_for!(gauntlet_core::capture::CapturedTrace))
                .expect("schema serializes"),
            "trace.schema.json",
        )
    } else if args.config {
        (
            serde_json::to_value(schemars::schema_for!(gauntlet_core::config::Config))
                .expect("schema serializes"),
            "config.schema.json",
        )
    } else {
        (gauntlet_core::suite_json_schema(), "suite.schema.json")
    };
    // An `$id` names the schema for editors and validators.
    if let serde_json::Value::Object(map) = &mut v {
        map.insert("$id".into(), format!("{SCHEMA_BASE}/{file}").into());
    }
    Printer::stdout().json(&v)?;
    Ok(0)
}

/// `gauntlet completions SHELL`: the completion script on stdout.
pub fn completions(args: crate::cli::CompletionsArgs) -> Result<i32, CliError> {
    use clap::CommandFactory;
    let mut cmd = crate::cli::Cli::command();
    let mut out = Printer::stdout();
    clap_complete::generate(args.shell, &mut cmd, "gauntlet", &mut out);
    out.flush()?;
    Ok(0)
}
