//! Two runs compared, as text: [`render_comparison`] (the table `gauntlet compare` and a run
//! with `--baseline` print) and the per-check drift of `compare --drift` as a terminal table
//! ([`drift_text`]) and Markdown ([`drift_markdown`]). The data comes from
//! `gauntlet_core::compare::Comparison` and `gauntlet_core::drift::DriftReport`.

use gauntlet_core::compare::Comparison;
use gauntlet_core::drift::DriftReport;

use crate::text::{delta, opt_num};

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

/// The comparison as text, as `gauntlet compare` and a run with `--baseline` print it.
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
        opt_num(c.task_avg_a),
        opt_num(c.task_avg_b),
        delta(c.task_avg_a, c.task_avg_b)
    ));
    o.push_str(&format!(
        "{:<22} {:>14} {:>14} {:>10}\n",
        "refusal average /3",
        opt_num(c.refusal_avg_a),
        opt_num(c.refusal_avg_b),
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
                        format!("({})", crate::text::clip(&ch.reason, 120))
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

fn side_rate(s: &gauntlet_core::drift::SideRate) -> String {
    format!(
        "{}/{} {:.0}% [{:.2}-{:.2}]",
        s.passed,
        s.total,
        s.rate * 100.0,
        s.low,
        s.high
    )
}

/// The drift report as a terminal table.
pub fn drift_text(r: &DriftReport) -> String {
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
            side_rate(&c.a),
            side_rate(&c.b),
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

/// The drift report as Markdown.
pub fn drift_markdown(r: &DriftReport) -> String {
    let mut o = format!(
        "# Drift: `{}` -> `{}`\n\nPer-check pass rates with 95% Wilson intervals; two-sided two-proportion test (pooled z, or Fisher's exact when an expected count is below 5); drift when p < {:.4} (alpha {} with Bonferroni over the checks compared).\n\n| check | A | B | change | test | p | drift |\n|---|---|---|---|---|---|---|\n",
        r.run_a, r.run_b, r.threshold, r.alpha
    );
    for c in &r.checks {
        o.push_str(&format!(
            "| `{}` | {} | {} | {:+.1}% | {} | {:.4} | {} |\n",
            c.check.replace('|', "\\|"),
            side_rate(&c.a),
            side_rate(&c.b),
            c.delta * 100.0,
            c.test,
            c.p,
            if c.drift { "**drift**" } else { "" }
        ));
    }
    o.push_str(&format!("\n{} check(s) drifted.\n", r.drifted));
    o
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn two_empty_runs_read_as_no_change() {
        let c = gauntlet_core::compare::compare("r1", &[], None, "r2", &[], None);
        let t = render_comparison(&c);
        assert!(t.starts_with("compare r1 (A) -> r2 (B)\n\n"), "{t}");
        assert!(
            t.contains("0 new failure(s), 0 fixed, 0 still failing, 0 unchanged passes"),
            "{t}"
        );
        assert!(!t.contains("judge changed"), "{t}");
        let r = gauntlet_core::drift::drift("r1", &BTreeMap::new(), "r2", &BTreeMap::new(), 0.05);
        assert!(drift_text(&r).ends_with("\n0 check(s) drifted\n"));
        assert!(drift_markdown(&r).starts_with("# Drift: `r1` -> `r2`\n"));
    }
}
