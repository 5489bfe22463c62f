//! `gauntlet promote RUN CASE` and `gauntlet promote --trace FILE --suite SUITE CASE`: the
//! flags as a `gauntlet_engine::promote::PromoteRequest`, and what was written printed.

use std::io::Write;

use gauntlet_engine::promote::{Placement, PromoteRequest, PromoteSource, promote as promote_case};

use crate::cli::PromoteArgs;
use crate::error::CliError;
use crate::out::Printer;
use crate::setup::open_existing_store;

pub fn promote(args: PromoteArgs) -> Result<i32, CliError> {
    let (source, case) = match (&args.trace, &args.suite, args.args.as_slice()) {
        (Some(file), Some(suite), [case]) => (
            PromoteSource::Trace {
                file: file.clone(),
                suite: suite.clone(),
            },
            case.clone(),
        ),
        (None, _, [run, case]) => (PromoteSource::Run(run.clone()), case.clone()),
        (Some(_), _, _) => {
            return Err(CliError::usage(
                "with --trace, give only the case",
                "gauntlet promote --trace FILE --suite SUITE CASE",
            ));
        }
        (None, _, _) => {
            return Err(CliError::usage(
                "give the run and the case",
                "gauntlet promote RUN CASE (or --trace FILE --suite SUITE CASE)",
            ));
        }
    };
    let mut store = match source {
        PromoteSource::Run(_) => Some(open_existing_store(args.store.store.as_deref())?),
        PromoteSource::Trace { .. } => None,
    };
    let req = PromoteRequest {
        source,
        case,
        out: args.out,
        allow_paths: args.allow_path,
    };
    let done = promote_case(store.as_mut(), &req)?;
    let mut out = Printer::stdout();
    // Said as the user would type it: relative to here when it is below here.
    let here = std::env::current_dir().unwrap_or_default();
    let path = done
        .path
        .strip_prefix(&here)
        .unwrap_or(&done.path)
        .display();
    match &done.placement {
        Placement::Created => writeln!(out, "wrote case `{}` to a new suite {path}", done.id)?,
        Placement::Appended => writeln!(out, "appended case `{}` to {path}", done.id)?,
        Placement::Beside { wanted, why } => writeln!(
            out,
            "wrote case `{}` to a new suite {path}: {} was left as it was ({why})",
            done.id,
            wanted.display()
        )?,
    }
    writeln!(
        out,
        "  from {}: {} user turn(s) frozen as sent; checks: {}",
        done.from,
        done.turns,
        done.checks.join(", ")
    )?;
    if let Some(base) = &done.twin_of {
        writeln!(
            out,
            "  the benign twin of `{base}`, written as a plain task case (its input and checks, without the attack)"
        )?;
    }
    for l in &done.left_out {
        writeln!(out, "  not carried (no check of the case): {l}")?;
    }
    if done.needs_canary {
        writeln!(
            out,
            "  the run's --canary is not written in the file: re-run it with the same --canary"
        )?;
        writeln!(out, "  re-run it: gauntlet run {path} --canary ...")?;
    } else {
        writeln!(out, "  re-run it: gauntlet run {path}")?;
    }
    Ok(0)
}
