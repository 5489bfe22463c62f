//! `gauntlet backlog validate|report`: the backlog benchmark's frozen contract and its ledger
//! (read by `gauntlet_coding::backlog::file`), folded into a `BacklogReport`
//! (`gauntlet_coding::backlog`) and shown on the terminal, as JSON or as Markdown.

use std::io::Write;

use gauntlet_coding::backlog::file::{LoadedContract, load_contract, load_ledger, load_report};
use gauntlet_coding::backlog::{ArmReport, BacklogReport, PerAccepted, Rate, RowState};
use gauntlet_report::md;

use crate::cli::{BacklogArgs, BacklogCommand};
use crate::error::CliError;
use crate::out::Printer;

pub fn backlog(args: BacklogArgs) -> Result<i32, CliError> {
    match args.command {
        BacklogCommand::Validate { contract, ledger } => {
            let c = load_contract(&contract).map_err(CliError::Diagnostics)?;
            let mut out = Printer::stdout();
            let k = &c.contract;
            writeln!(
                out,
                "ok: {} (backlog `{}`, {} task{}, {} arm{}, {} trial{} each)",
                c.origin,
                k.name,
                k.tasks.len(),
                plural(k.tasks.len()),
                k.arms.len(),
                plural(k.arms.len()),
                k.trials,
                plural(k.trials as usize)
            )?;
            writeln!(
                out,
                "contract hash: {}\n  every ledger row records it in `contract` (its first 12 hex digits are enough: {})",
                c.hash,
                c.short_hash()
            )?;
            if let Some(l) = ledger {
                let rows = load_ledger(&l, &c).map_err(CliError::Diagnostics)?;
                let count = |s: RowState| rows.iter().filter(|r| r.state == s).count();
                let states: Vec<String> = RowState::ALL
                    .iter()
                    .map(|s| format!("{} {}", count(*s), s.as_str()))
                    .collect();
                writeln!(
                    out,
                    "ok: {} ({} row{}: {})",
                    l.display(),
                    rows.len(),
                    plural(rows.len()),
                    states.join(", ")
                )?;
            }
            Ok(0)
        }
        BacklogCommand::Report {
            ledger,
            contract,
            json,
            markdown,
        } => {
            let (c, r) = load_report(&contract, &ledger).map_err(CliError::Diagnostics)?;
            let mut out = Printer::stdout();
            if json {
                out.json(&r)?;
            } else if markdown {
                write!(out, "{}", markdown_report(&r, &c))?;
            } else {
                write!(out, "{}", terminal_report(&r, &c))?;
            }
            Ok(0)
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn pct(v: f64) -> String {
    format!("{:.0}%", v * 100.0)
}

fn rate(r: &Option<Rate>, why: &str) -> String {
    match r {
        Some(r) => format!(
            "{}/{} = {} [{}, {}]",
            r.x,
            r.n,
            pct(r.rate),
            pct(r.low),
            pct(r.high)
        ),
        None => format!("undefined ({why})"),
    }
}

fn per(p: &PerAccepted, unit: &str) -> String {
    match (p.per_accepted, &p.undefined) {
        (Some(v), _) => format!("{v:.1}{unit}"),
        (None, Some(why)) => format!("undefined ({why})"),
        (None, None) => "undefined".into(),
    }
}

fn money(p: &PerAccepted) -> String {
    match (p.per_accepted, &p.undefined) {
        (Some(v), _) => format!("{v:.2} USD"),
        (None, Some(why)) => format!("undefined ({why})"),
        (None, None) => "undefined".into(),
    }
}

fn states(a: &ArmReport) -> String {
    let n = |s: RowState| a.states.get(s.as_str()).copied().unwrap_or(0);
    format!(
        "{} accepted, {} failed, {} abandoned, {} censored, {} not started{}",
        n(RowState::Accepted),
        n(RowState::Failed),
        n(RowState::Abandoned),
        n(RowState::Censored),
        n(RowState::NotStarted),
        if a.unrecorded > 0 {
            format!(", {} with no row yet", a.unrecorded)
        } else {
            String::new()
        }
    )
}

fn comparison_line(r: &BacklogReport) -> Vec<String> {
    r.comparisons
        .iter()
        .map(|c| {
            let diff = c.final_rate_diff.map_or("undefined".into(), |d| {
                format!("{:+.0} points", d * 100.0)
            });
            let p = c
                .mcnemar_p
                .map_or("no paired slot".into(), |p| format!("exact McNemar p = {p:.3}"));
            let cost = c
                .cost_per_accepted_diff
                .map_or("undefined".into(), |d| format!("{d:+.2} USD"));
            format!(
                "{} vs {}: final rate {diff}; {} slot(s) resolved in both: {} accepted only by {}, {} only by {}, {p}; cost per accepted task {cost}",
                c.arm, c.control, c.paired, c.control_only, c.control, c.arm_only, c.arm
            )
        })
        .collect()
}

fn terminal_report(r: &BacklogReport, c: &LoadedContract) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "Backlog benchmark `{}` (contract {}, {} task{} x {} trial{}, {:.0}% Wilson intervals)\n",
        r.name,
        c.short_hash(),
        r.tasks,
        plural(r.tasks),
        r.trials,
        plural(r.trials as usize),
        r.confidence * 100.0
    ));
    s.push_str(&format!("Accepted when: {}\n", r.acceptance.join("; ")));
    for a in &r.arms {
        s.push_str(&format!(
            "\n{}{}: {}\n",
            a.arm,
            if a.control { " (control)" } else { "" },
            a.description
        ));
        s.push_str(&format!("  rows            {}\n", states(a)));
        s.push_str(&format!(
            "  final rate      {}\n",
            rate(&a.final_rate, "no resolved row")
        ));
        s.push_str(&format!(
            "  to date         {}\n",
            rate(&a.to_date, "nothing planned")
        ));
        s.push_str(&format!(
            "  per accepted    review {} · rework {} · cost {}\n",
            per(&a.review_minutes, " min"),
            per(&a.rework_minutes, " min"),
            money(&a.cost_usd)
        ));
    }
    let cmp = comparison_line(r);
    if !cmp.is_empty() {
        s.push('\n');
        for l in cmp {
            s.push_str(&l);
            s.push('\n');
        }
    }
    s.push_str(&format!("\nCensoring: {}.\n", r.censoring));
    s
}

fn markdown_report(r: &BacklogReport, c: &LoadedContract) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "# Backlog benchmark {}\n\nContract {}, {} task(s) x {} trial(s); intervals are {:.0}% Wilson.\n\nAccepted when: {}\n\n",
        md::code(&r.name),
        md::code(c.short_hash()),
        r.tasks,
        r.trials,
        r.confidence * 100.0,
        md::text(&r.acceptance.join("; "))
    ));
    s.push_str("| arm | rows | final rate | to date | review min / accepted | rework min / accepted | cost / accepted |\n|---|---|---|---|---|---|---|\n");
    for a in &r.arms {
        s.push_str(&format!(
            "| {}{} | {} | {} | {} | {} | {} | {} |\n",
            md::code_cell(&a.arm),
            if a.control { " (control)" } else { "" },
            states(a),
            rate(&a.final_rate, "no resolved row"),
            rate(&a.to_date, "nothing planned"),
            md::text(&per(&a.review_minutes, "")),
            md::text(&per(&a.rework_minutes, "")),
            md::text(&money(&a.cost_usd))
        ));
    }
    let cmp = comparison_line(r);
    if !cmp.is_empty() {
        s.push_str("\n## Arms compared\n\n");
        for l in cmp {
            s.push_str(&format!("- {}\n", md::text(&l)));
        }
    }
    s.push_str(&format!("\nCensoring: {}.\n", md::text(&r.censoring)));
    s
}
