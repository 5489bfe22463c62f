//! Comparing runs: `baseline set|list`, `compare A B` (per-case changes, McNemar, Wilson
//! intervals; `--html FILE` writes the comparison page) and the comparison printed after a
//! run with `--baseline`.

use std::io::Write;

use gauntlet_core::compare::{CaseDigest, Comparison, compare};
use gauntlet_core::event::RunManifest;
use gauntlet_core::summary::Summary;
use gauntlet_report::html::HtmlBaseline;
use gauntlet_report::html::compare::{CaseLinks, CompareInput, RunSide, render_compare};
use gauntlet_report::text::{failure_reason, trim_num};
use gauntlet_store::Store;

use crate::cli::{BaselineArgs, BaselineCommand, CompareArgs};
use crate::error::CliError;
use crate::out::Printer;
use crate::setup::{open_existing_store, open_store, store_err};

pub fn baseline(args: BaselineArgs) -> Result<i32, CliError> {
    let mut store = open_store(args.store.store.as_deref(), None)?;
    let mut out = Printer::stdout();
    match args.command {
        BaselineCommand::Set { run, name } => {
            let id = store.resolve(&run).map_err(store_err)?;
            if store.summary(&id).map_err(store_err)?.is_none() {
                return Err(CliError::usage(
                    format!("run {id} did not finish"),
                    "a baseline must be a finished run; resume it first",
                ));
            }
            store.set_baseline(&name, &id).map_err(store_err)?;
            writeln!(out, "baseline `{name}` is now run {id}")?;
        }
        BaselineCommand::List => {
            for (name, run, at) in store.baselines().map_err(store_err)? {
                writeln!(out, "{name:<16} {run}  (set {at})")?;
            }
        }
    }
    Ok(0)
}

/// Digests of a run's cases, and its summary.
pub fn digests(
    store: &mut Store,
    run: &str,
) -> Result<(Vec<CaseDigest>, Option<Summary>), CliError> {
    let mut out = Vec::new();
    store
        .for_each_case(run, |c| {
            let reason = failure_reason(&c);
            out.push(CaseDigest::of(&c, reason));
            Ok(())
        })
        .map_err(store_err)?;
    let summary = store.summary(run).map_err(store_err)?.map(|(s, _)| s);
    Ok((out, summary))
}

/// Compares two stored runs.
pub fn comparison(store: &mut Store, a: &str, b: &str) -> Result<Comparison, CliError> {
    let (da, sa) = digests(store, a)?;
    let (db, sb) = digests(store, b)?;
    let mut c = compare(a, &da, sa.as_ref(), b, &db, sb.as_ref());
    let ma = store.manifest(a).map_err(store_err)?;
    let mb = store.manifest(b).map_err(store_err)?;
    note_judge_changes(&mut c, (&ma, sa.as_ref()), (&mb, sb.as_ref()));
    Ok(c)
}

/// Says in the comparison when the judges differ between the runs: a score that moved may
/// be the judge's, not the agent's. Every way of comparing runs goes through here.
pub fn note_judge_changes(
    c: &mut Comparison,
    (ma, sa): (&RunManifest, Option<&Summary>),
    (mb, sb): (&RunManifest, Option<&Summary>),
) {
    let models = |s: Option<&Summary>| {
        s.and_then(|s| s.judge.as_ref())
            .map(|j| j.models.clone())
            .unwrap_or_default()
    };
    c.judge_changes =
        gauntlet_core::calibration::judge_changes(&ma.judges, &mb.judges, &models(sa), &models(sb));
    if c.judge_changes.is_empty() && ma.judges.is_empty() && ma.judge != mb.judge {
        // Runs from before judges were recorded one by one: the manifest's line is all there is.
        c.judge_changes.push(format!(
            "judge {} -> {}",
            ma.judge.as_deref().unwrap_or("none"),
            mb.judge.as_deref().unwrap_or("none")
        ));
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or("-".into(), trim_num)
}

fn delta(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => format!("{:+.2}", b - a),
        _ => String::new(),
    }
}

/// The comparison as text.
/// Token and cost deltas between the runs, for the agent, the judges and in all: a cost
/// one run cannot price is shown as unknown, and so is its delta.
fn spend_rows(c: &Comparison) -> String {
    use gauntlet_core::cost::{RunSpend, Spend};
    if c.spend_a.is_none() && c.spend_b.is_none() {
        return String::new();
    }
    let empty = RunSpend::default();
    let (a, b) = (
        c.spend_a.as_ref().unwrap_or(&empty),
        c.spend_b.as_ref().unwrap_or(&empty),
    );
    let judges = |r: &RunSpend| {
        let mut t = Spend::default();
        for j in r.judges.values() {
            t.add(j);
        }
        t
    };
    let money = |v: Option<f64>| v.map_or_else(|| "unknown".to_owned(), |v| format!("{v:.6}"));
    let mut o = String::new();
    for (label, x, y) in [
        ("agent", a.agent.clone(), b.agent.clone()),
        ("judges", judges(a), judges(b)),
        ("total", a.total.clone(), b.total.clone()),
    ] {
        o.push_str(&format!(
            "{:<22} {:>14} {:>14} {:>+10}\n",
            format!("{label} tokens"),
            x.tokens(),
            y.tokens(),
            y.tokens() as i64 - x.tokens() as i64
        ));
        let delta = match (x.cost_usd, y.cost_usd) {
            (Some(p), Some(q)) => format!("{:+.6}", q - p),
            _ => "unknown".to_owned(),
        };
        o.push_str(&format!(
            "{:<22} {:>14} {:>14} {:>10}\n",
            format!("{label} cost USD"),
            money(x.cost_usd),
            money(y.cost_usd),
            delta
        ));
    }
    o
}

pub fn render_comparison(c: &Comparison) -> String {
    let mut o = String::new();
    o.push_str(&format!("compare {} (A) -> {} (B)\n\n", c.run_a, c.run_b));
    if !c.judge_changes.is_empty() {
        o.push_str("judge changed between the runs: a score that moved may be the judge's, not the agent's\n");
        for ch in &c.judge_changes {
            o.push_str(&format!("  {ch}\n"));
        }
        o.push('\n');
    }
    o.push_str(&format!(
        "{:<22} {:>14} {:>14} {:>10}\n",
        "", "A", "B", "change"
    ));
    o.push_str(&format!(
        "{:<22} {:>14} {:>14}\n",
        "status", c.status_a, c.status_b
    ));
    o.push_str(&format!(
        "{:<22} {:>14} {:>14} {:>10}\n",
        "task average /18",
        opt(c.task_avg_a),
        opt(c.task_avg_b),
        delta(c.task_avg_a, c.task_avg_b)
    ));
    o.push_str(&format!(
        "{:<22} {:>14} {:>14} {:>10}\n",
        "refusal average /3",
        opt(c.refusal_avg_a),
        opt(c.refusal_avg_b),
        delta(c.refusal_avg_a, c.refusal_avg_b)
    ));
    o.push_str(&format!(
        "{:<22} {:>14} {:>14} {:>+10}\n",
        "hard fails",
        c.hard_fails_a,
        c.hard_fails_b,
        c.hard_fails_b as i64 - c.hard_fails_a as i64
    ));
    o.push_str(&format!(
        "{:<22} {:>14.1} {:>14.1} {:>+10.1}\n",
        "mean latency ms",
        c.latency_ms_a,
        c.latency_ms_b,
        c.latency_ms_b - c.latency_ms_a
    ));
    o.push_str(&format!(
        "{:<22} {:>14} {:>14} {:>+10}\n",
        "tokens",
        c.tokens_a,
        c.tokens_b,
        c.tokens_b as i64 - c.tokens_a as i64
    ));
    o.push_str(&spend_rows(c));
    let rate = |r: &gauntlet_core::compare::Rate| {
        format!("{}/{} {:.0}%", r.passed, r.total, r.rate * 100.0)
    };
    o.push_str(&format!(
        "{:<22} {:>14} {:>14}\n",
        "pass rate (paired)",
        rate(&c.pass_rate_a),
        rate(&c.pass_rate_b)
    ));
    o.push_str(&format!(
        "{:<22} {:>14} {:>14}\n\n",
        "  95% Wilson",
        format!("{:.2}-{:.2}", c.pass_rate_a.low, c.pass_rate_a.high),
        format!("{:.2}-{:.2}", c.pass_rate_b.low, c.pass_rate_b.high)
    ));
    o.push_str(&format!(
        "McNemar (exact, two-sided): {} passed only in A, {} only in B, p = {:.4}{}\n",
        c.discordant_a_only,
        c.discordant_b_only,
        c.mcnemar_p,
        if c.mcnemar_p < 0.05 {
            " (a significant change at 0.05)"
        } else {
            " (no significant change at 0.05; see `gauntlet sample-size` for the pairs an effect needs)"
        }
    ));
    o.push_str(&format!(
        "{} new failure(s), {} fixed, {} still failing, {} unchanged passes, {} not comparable\n",
        c.new_failures.len(),
        c.fixed.len(),
        c.still_failing.len(),
        c.unchanged_pass,
        c.not_comparable.len()
    ));
    for (title, list) in [("new failures", &c.new_failures), ("fixed", &c.fixed)] {
        if !list.is_empty() {
            o.push_str(&format!("\n{title}:\n"));
            for ch in list.iter().take(50) {
                o.push_str(&format!(
                    "  {} {} -> {} {}\n",
                    ch.name,
                    ch.before.as_str(),
                    ch.after.as_str(),
                    if ch.reason.is_empty() {
                        String::new()
                    } else {
                        format!("({})", gauntlet_report::text::clip(&ch.reason, 120))
                    }
                ));
            }
        }
    }
    if !c.only_in_a.is_empty() || !c.only_in_b.is_empty() {
        o.push_str(&format!(
            "\n{} case(s) only in A, {} only in B\n",
            c.only_in_a.len(),
            c.only_in_b.len()
        ));
    }
    o
}

pub fn compare_cmd(args: CompareArgs) -> Result<i32, CliError> {
    let mut store = open_existing_store(args.store.store.as_deref())?;
    let a = store.resolve(&args.run_a).map_err(store_err)?;
    let b = store.resolve(&args.run_b).map_err(store_err)?;
    if args.drift {
        return crate::driftcmd::compare_drift(&mut store, &a, &b, &args);
    }
    let (da, sa) = digests(&mut store, &a)?;
    let (db, sb) = digests(&mut store, &b)?;
    let mut c = compare(&a, &da, sa.as_ref(), &b, &db, sb.as_ref());
    let (ma, mb) = (
        store.manifest(&a).map_err(store_err)?,
        store.manifest(&b).map_err(store_err)?,
    );
    note_judge_changes(&mut c, (&ma, sa.as_ref()), (&mb, sb.as_ref()));
    if let Some(path) = &args.html {
        let page = compare_page(
            &c,
            (&ma, sa.as_ref()),
            (&mb, sb.as_ref()),
            &da,
            CaseLinks::default(),
        )?;
        write_file(path, &page).map_err(|e| {
            CliError::usage(
                format!("failed to write `{}`: {e}", path.display()),
                "pass --html with a file in a writable folder",
            )
        })?;
    }
    let mut out = Printer::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&c).expect("serializes"))?;
    } else {
        write!(out, "{}", render_comparison(&c))?;
    }
    Ok(0)
}

/// Writes a whole file under a temporary name, then renames it into place.
fn write_file(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| std::io::Error::other("not a file name"))?;
    let mut f = gauntlet_report::text::AtomicFile::create(dir, name)?;
    f.out.write_all(bytes)?;
    f.commit()
}

/// The comparison page of two runs, as bytes.
pub fn compare_page(
    c: &Comparison,
    a: (&gauntlet_core::event::RunManifest, Option<&Summary>),
    b: (&gauntlet_core::event::RunManifest, Option<&Summary>),
    a_cases: &[CaseDigest],
    links: CaseLinks,
) -> Result<Vec<u8>, CliError> {
    let mut page = Vec::new();
    render_compare(
        &CompareInput {
            comparison: c,
            a: RunSide {
                manifest: Some(a.0),
                summary: a.1,
            },
            b: RunSide {
                manifest: Some(b.0),
                summary: b.1,
            },
            a_cases,
            links,
        },
        None,
        &mut page,
    )
    .map_err(|e| CliError::plain(format!("failed to render the comparison page: {e}")))?;
    Ok(page)
}

/// The run a `--baseline NAME` names: a baseline, else any run reference.
pub fn resolve_baseline(store: &mut Store, name: &str) -> Result<String, CliError> {
    match store.baseline(name).map_err(store_err)? {
        Some(b) => Ok(b),
        None => store.resolve(name).map_err(|_| {
            CliError::usage(
                format!("no baseline named `{name}`"),
                "set one with `gauntlet baseline set RUN --name NAME`",
            )
        }),
    }
}

/// The baseline `report.html` compares a run with.
pub fn html_baseline(store: &mut Store, name: &str) -> Result<HtmlBaseline, CliError> {
    let run_id = resolve_baseline(store, name)?;
    let (cases, summary) = digests(store, &run_id)?;
    Ok(HtmlBaseline {
        name: name.to_owned(),
        run_id,
        summary,
        cases,
    })
}

/// After a run with `--baseline NAME`: prints the comparison with the baseline.
pub fn print_baseline_comparison(store: &mut Store, name: &str, run: &str) -> Result<(), CliError> {
    let base = resolve_baseline(store, name)?;
    let c = comparison(store, &base, run)?;
    let mut out = Printer::stdout();
    write!(out, "\n{}", render_comparison(&c))?;
    Ok(())
}
