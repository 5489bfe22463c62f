//! `gauntlet compare A B --drift`: the online / canary comparison of two graded batches
//! (or a batch and a baseline run), per check ([`gauntlet_core::drift::DriftReport`]), as a
//! terminal table, JSON (`--json`) or Markdown (`--markdown FILE`); `--fail-on-drift` exits
//! 1 when a check drifted, for a nightly or canary gate.

use std::io::Write;

use gauntlet_core::drift::{DriftReport, drift, tally};
use gauntlet_store::Store;

use crate::cli::CompareArgs;
use crate::error::CliError;
use crate::out::{Printer, shown};
use crate::setup::store_err;

fn tallies(
    store: &mut Store,
    run: &str,
) -> Result<std::collections::BTreeMap<String, gauntlet_core::drift::Tally>, CliError> {
    let mut cases = Vec::new();
    store
        .for_each_case(run, |c| {
            cases.push(c);
            Ok(())
        })
        .map_err(store_err)?;
    Ok(tally(&cases))
}

/// Runs the drift comparison of two resolved runs.
pub fn compare_drift(
    store: &mut Store,
    a: &str,
    b: &str,
    args: &CompareArgs,
) -> Result<i32, CliError> {
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        return Err(CliError::usage(
            format!("--alpha {} is not between 0 and 1", args.alpha),
            "the usual level is 0.05",
        ));
    }
    let ta = tallies(store, a)?;
    let tb = tallies(store, b)?;
    let r = drift(a, &ta, b, &tb, args.alpha);
    if let Some(path) = &args.markdown {
        std::fs::write(path, markdown(&r)).map_err(|e| {
            CliError::usage(
                format!("failed to write `{}`: {e}", path.display()),
                "pass --markdown with a file in a writable folder",
            )
        })?;
    }
    let mut out = Printer::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&r).expect("serializes"))?;
    } else {
        write!(out, "{}", shown(&text(&r)))?;
    }
    Ok(if args.fail_on_drift && r.drifted > 0 {
        1
    } else {
        0
    })
}

fn rate(s: &gauntlet_core::drift::SideRate) -> String {
    format!(
        "{}/{} {:.0}% [{:.2}-{:.2}]",
        s.passed,
        s.total,
        s.rate * 100.0,
        s.low,
        s.high
    )
}

/// The report as a terminal table.
pub fn text(r: &DriftReport) -> String {
    let mut o = format!(
        "drift {} (A) -> {} (B): per-check pass rates, 95% Wilson intervals, two-sided two-proportion test (pooled z; Fisher's exact when an expected count is below 5), drift when p < {:.4} (alpha {} / {} checks, Bonferroni)\n\n",
        r.run_a,
        r.run_b,
        r.threshold,
        r.alpha,
        (r.alpha / r.threshold).round()
    );
    o.push_str(&format!(
        "{:<24} {:>24} {:>24} {:>8} {:>7} {:>10}  drift\n",
        "check", "A", "B", "change", "test", "p"
    ));
    for c in &r.checks {
        o.push_str(&format!(
            "{:<24} {:>24} {:>24} {:>+7.1}% {:>7} {:>10.4}  {}\n",
            c.check,
            rate(&c.a),
            rate(&c.b),
            c.delta * 100.0,
            c.test,
            c.p,
            if c.drift {
                if c.delta < 0.0 {
                    "DRIFT (worse)"
                } else {
                    "DRIFT (better)"
                }
            } else {
                "-"
            }
        ));
    }
    o.push_str(&format!("\n{} check(s) drifted\n", r.drifted));
    o
}

/// The report as Markdown.
pub fn markdown(r: &DriftReport) -> String {
    let mut o = format!(
        "# Drift: `{}` -> `{}`\n\nPer-check pass rates with 95% Wilson intervals; two-sided two-proportion test (pooled z, or Fisher's exact when an expected count is below 5); drift when p < {:.4} (alpha {} with Bonferroni over the checks compared).\n\n| check | A | B | change | test | p | drift |\n|---|---|---|---|---|---|---|\n",
        r.run_a, r.run_b, r.threshold, r.alpha
    );
    for c in &r.checks {
        o.push_str(&format!(
            "| `{}` | {} | {} | {:+.1}% | {} | {:.4} | {} |\n",
            c.check.replace('|', "\\|"),
            rate(&c.a),
            rate(&c.b),
            c.delta * 100.0,
            c.test,
            c.p,
            if c.drift { "**drift**" } else { "" }
        ));
    }
    o.push_str(&format!("\n{} check(s) drifted.\n", r.drifted));
    o
}
