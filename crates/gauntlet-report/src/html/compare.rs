//! The comparison page (`gauntlet compare A B --html FILE`, the viewer's `/compare`):
//! [`render_compare`] lays out a [`Comparison`] with both runs' facts, the McNemar line, and
//! per case A beside B. The same change tables appear in `report.html` under `--baseline`.

use std::collections::HashMap;
use std::io::Write;

use gauntlet_core::compare::{CaseChange, CaseDigest, Comparison};
use gauntlet_core::event::RunManifest;
use gauntlet_core::result::CaseStatus;
use gauntlet_core::summary::Summary;
use minijinja::Value;
use serde::Serialize;

use super::page::{self, Nav, PageKind};
use crate::text::{clip, delta, opt_num};

/// Rows of one change table before the rest are only counted.
pub const MAX_CHANGE_ROWS: usize = 1000;
/// Ids listed for the cases only one run has, or that are not comparable.
const MAX_IDS: usize = 200;

/// The McNemar line, worded as `gauntlet compare` prints it.
pub fn mcnemar_line(c: &Comparison) -> String {
    format!(
        "McNemar (exact, two-sided): {} passed only in A, {} only in B, p = {:.4}{}",
        c.discordant_a_only,
        c.discordant_b_only,
        c.mcnemar_p,
        if c.mcnemar_p < 0.05 {
            " (a significant change at 0.05)"
        } else {
            " (no significant change at 0.05)"
        }
    )
}

/// The counts line under it.
pub fn counts_line(c: &Comparison) -> String {
    format!(
        "{} new failure(s), {} fixed, {} still failing, {} unchanged passes, {} not comparable",
        c.new_failures.len(),
        c.fixed.len(),
        c.still_failing.len(),
        c.unchanged_pass,
        c.not_comparable.len()
    )
}

/// A against B, one row per measure: (measure, A, B, change).
pub fn metrics(c: &Comparison) -> Vec<(String, String, String, String)> {
    let rate = |r: &gauntlet_core::compare::Rate| {
        format!(
            "{}/{} ({:.0}%, 95% Wilson {:.2}-{:.2})",
            r.passed,
            r.total,
            r.rate * 100.0,
            r.low,
            r.high
        )
    };
    vec![
        (
            "state".into(),
            c.status_a.clone(),
            c.status_b.clone(),
            String::new(),
        ),
        (
            "task average /18".into(),
            opt_num(c.task_avg_a),
            opt_num(c.task_avg_b),
            delta(c.task_avg_a, c.task_avg_b),
        ),
        (
            "refusal average /3".into(),
            opt_num(c.refusal_avg_a),
            opt_num(c.refusal_avg_b),
            delta(c.refusal_avg_a, c.refusal_avg_b),
        ),
        (
            "cases with a hard failure".into(),
            c.hard_fails_a.to_string(),
            c.hard_fails_b.to_string(),
            format!("{:+}", c.hard_fails_b as i64 - c.hard_fails_a as i64),
        ),
        (
            "mean trial latency".into(),
            format!("{:.1} ms", c.latency_ms_a),
            format!("{:.1} ms", c.latency_ms_b),
            format!("{:+.1} ms", c.latency_ms_b - c.latency_ms_a),
        ),
        (
            "tokens".into(),
            c.tokens_a.to_string(),
            c.tokens_b.to_string(),
            format!("{:+}", c.tokens_b as i64 - c.tokens_a as i64),
        ),
        (
            "pass rate, paired cases".into(),
            rate(&c.pass_rate_a),
            rate(&c.pass_rate_b),
            String::new(),
        ),
    ]
}

/// Percent-encodes a case id for a link's fragment (everything but unreserved characters).
pub fn fragment_value(s: &str) -> String {
    gauntlet_core::text::percent_encode(s)
}

/// One case of a change table: A beside B.
#[derive(Debug, Clone, Serialize)]
pub struct ChangeRow {
    id: String,
    name: String,
    before: &'static str,
    after: &'static str,
    score_a: String,
    score_b: String,
    checks: String,
    reason_a: String,
    reason_b: String,
    link_a: Option<String>,
    link_b: Option<String>,
}

/// A change table, capped.
#[derive(Debug, Clone, Serialize)]
pub struct ChangeList {
    total: usize,
    rows: Vec<ChangeRow>,
    more: usize,
}

/// Where the case links of a change table point: the reports of A and B (a URL to which
/// `#case=ID` is appended), each when there is one.
#[derive(Debug, Clone, Default)]
pub struct CaseLinks {
    /// The report of run A.
    pub a: Option<String>,
    /// The report of run B.
    pub b: Option<String>,
}

/// A change table from the comparison's list, with A's side looked up in its digests.
pub fn change_list(
    list: &[CaseChange],
    a: &HashMap<&str, &CaseDigest>,
    links: &CaseLinks,
) -> ChangeList {
    let link = |base: &Option<String>, id: &str| {
        base.as_ref()
            .map(|b| format!("{b}#case={}", fragment_value(id)))
    };
    let rows = list
        .iter()
        .take(MAX_CHANGE_ROWS)
        .map(|ch| ChangeRow {
            id: ch.id.clone(),
            name: ch.name.clone(),
            before: ch.before.as_str(),
            after: ch.after.as_str(),
            score_a: opt_num(ch.score_before),
            score_b: opt_num(ch.score_after),
            checks: ch.failed_checks.join(", "),
            reason_a: a
                .get(ch.id.as_str())
                .map(|d| clip(&d.reason, 400))
                .unwrap_or_default(),
            reason_b: clip(&ch.reason, 400),
            link_a: link(&links.a, &ch.id),
            link_b: link(&links.b, &ch.id),
        })
        .collect();
    ChangeList {
        total: list.len(),
        rows,
        more: list.len().saturating_sub(MAX_CHANGE_ROWS),
    }
}

/// One run of a comparison.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunSide<'a> {
    /// Its manifest.
    pub manifest: Option<&'a RunManifest>,
    /// Its summary, when it finished.
    pub summary: Option<&'a Summary>,
}

/// Everything the comparison page shows.
pub struct CompareInput<'a> {
    /// The comparison.
    pub comparison: &'a Comparison,
    /// Run A.
    pub a: RunSide<'a>,
    /// Run B.
    pub b: RunSide<'a>,
    /// A's case digests (for A's side of each row).
    pub a_cases: &'a [CaseDigest],
    /// Where case links point.
    pub links: CaseLinks,
}

#[derive(Serialize)]
struct Side {
    key: &'static str,
    id: String,
    status: String,
    facts: Vec<(String, String)>,
    link: Option<String>,
}

fn side(key: &'static str, id: &str, s: RunSide<'_>, status: &str, link: Option<String>) -> Side {
    let mut facts = Vec::new();
    if let Some(m) = s.manifest {
        facts.push(("target".into(), m.target.label.clone()));
        if let Some(model) = &m.target.model {
            facts.push(("model".into(), model.clone()));
        }
        let suites: Vec<String> = m.suites.iter().map(|s| s.name.clone()).collect();
        facts.push(("suite".into(), suites.join(", ")));
        facts.push(("command".into(), m.command.clone()));
        facts.push(("started".into(), m.started_at.clone()));
        facts.push((
            "trials per case, seed".into(),
            format!("{}, {}", m.k, m.seed),
        ));
        facts.push(("gauntlet".into(), m.gauntlet_version.clone()));
    }
    if let Some(sum) = s.summary {
        facts.push((
            "cases".into(),
            format!(
                "{} ({} passed, {} failed, {} conditional, {} errors)",
                sum.cases, sum.passed, sum.failed, sum.conditional, sum.errors
            ),
        ));
    }
    Side {
        key,
        id: id.to_owned(),
        status: status.to_owned(),
        facts,
        link,
    }
}

#[derive(Serialize)]
struct Ids {
    total: usize,
    ids: Vec<String>,
    more: usize,
}

impl Ids {
    fn of(list: &[String]) -> Ids {
        Ids {
            total: list.len(),
            ids: list.iter().take(MAX_IDS).cloned().collect(),
            more: list.len().saturating_sub(MAX_IDS),
        }
    }
}

#[derive(Serialize)]
struct OnlyIn {
    title: &'static str,
    total: usize,
    ids: Vec<String>,
    more: usize,
}

impl OnlyIn {
    fn of(title: &'static str, list: &[String]) -> OnlyIn {
        let Ids { total, ids, more } = Ids::of(list);
        OnlyIn {
            title,
            total,
            ids,
            more,
        }
    }
}

#[derive(Serialize)]
struct ComparePage {
    a: Side,
    b: Side,
    mcnemar: String,
    line: String,
    metrics: Vec<(String, String, String, String)>,
    new_failures: ChangeList,
    fixed: ChangeList,
    still_failing: ChangeList,
    not_comparable: Ids,
    only: Vec<OnlyIn>,
}

/// Writes the comparison page.
pub fn render_compare(
    input: &CompareInput<'_>,
    nav: Option<&Nav>,
    out: &mut dyn Write,
) -> Result<(), minijinja::Error> {
    let c = input.comparison;
    let by_id: HashMap<&str, &CaseDigest> =
        input.a_cases.iter().map(|d| (d.id.as_str(), d)).collect();
    let p = ComparePage {
        a: side("a", &c.run_a, input.a, &c.status_a, input.links.a.clone()),
        b: side("b", &c.run_b, input.b, &c.status_b, input.links.b.clone()),
        mcnemar: mcnemar_line(c),
        line: counts_line(c),
        metrics: metrics(c),
        new_failures: change_list(&c.new_failures, &by_id, &input.links),
        fixed: change_list(&c.fixed, &by_id, &input.links),
        still_failing: change_list(&c.still_failing, &by_id, &input.links),
        not_comparable: Ids::of(&c.not_comparable),
        only: vec![
            OnlyIn::of("Only in A", &c.only_in_a),
            OnlyIn::of("Only in B", &c.only_in_b),
        ],
    };
    page::render(
        "compare.html",
        PageKind::Static,
        nav,
        &p,
        Value::from(()),
        out,
    )
}

/// A status as the comparison names it, for a case that has none in one run.
pub fn status_name(s: Option<CaseStatus>) -> &'static str {
    s.map_or("-", CaseStatus::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gauntlet_core::compare::compare;

    fn d(id: &str, status: CaseStatus, reason: &str) -> CaseDigest {
        CaseDigest {
            id: id.into(),
            name: format!("LLM01/x/{id}"),
            status,
            score: Some(0.0),
            hard_fail: status == CaseStatus::Fail,
            quarantined: false,
            latency_ms: 3.0,
            tokens: 7,
            reason: reason.into(),
            failed_checks: vec!["no_unsafe_markup".into()],
        }
    }

    #[test]
    fn the_comparison_page_escapes_model_text_and_pairs_a_with_b() {
        let hostile = "<img src=http://127.0.0.1:9/x onerror=alert(1)><script>alert(2)</script>";
        let a = [
            d("one", CaseStatus::Pass, ""),
            d("two", CaseStatus::Fail, "a reason in A"),
        ];
        let b = [
            d("one", CaseStatus::Fail, hostile),
            d("two", CaseStatus::Pass, ""),
        ];
        let c = compare("A", &a, None, "B", &b, None);
        let mut out = Vec::new();
        render_compare(
            &CompareInput {
                comparison: &c,
                a: RunSide::default(),
                b: RunSide::default(),
                a_cases: &a,
                links: CaseLinks {
                    a: Some("/runs/A/".into()),
                    b: Some("/runs/B/".into()),
                },
            },
            None,
            &mut out,
        )
        .unwrap();
        let html = String::from_utf8(out).unwrap();
        assert!(!html.contains("<img"), "model text must stay text");
        assert!(!html.contains("<script>alert"), "model text must stay text");
        assert!(html.contains("&lt;img src="));
        assert!(html.contains("1 passed only in A, 1 only in B"));
        assert!(html.contains("href=\"&#x2f;runs&#x2f;B&#x2f;#case=one\""));
        assert!(html.contains("a reason in A"));
        assert!(html.contains("script-src &#x27;none&#x27;"));
    }
}
