//! The report's charts: [`Charts`] folds case results into bounded counters as they stream
//! past, and lays them out as plain geometry ([`Chart`]) that the template draws as inline
//! SVG. No chart holds per-case data, so a 50,000-case run costs the same few kilobytes.

use std::collections::BTreeMap;

use gauntlet_core::result::{CaseResult, CaseStatus, Score};
use gauntlet_core::verdict::Dimension;
use serde::Serialize;

use crate::text::trim_num;

/// Distinct tags counted; more are folded into the text filter only.
const MAX_TAGS: usize = 1000;
/// Rows of a bar chart before the rest are summed into one.
const MAX_ROWS: usize = 12;

/// Outcome counts of one group of cases.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pass: usize,
    fail: usize,
    conditional: usize,
    error: usize,
    blocked: usize,
    quarantined: usize,
    skipped: usize,
    not_assessed: usize,
}

impl Tally {
    fn add(&mut self, r: &CaseResult) {
        if r.quarantined {
            self.quarantined += 1;
            return;
        }
        match r.status {
            CaseStatus::Pass => self.pass += 1,
            CaseStatus::Fail => self.fail += 1,
            CaseStatus::Conditional => self.conditional += 1,
            CaseStatus::Error => self.error += 1,
            CaseStatus::Blocked => self.blocked += 1,
            CaseStatus::Skipped => self.skipped += 1,
            CaseStatus::NotAssessed => self.not_assessed += 1,
        }
    }

    fn total(&self) -> usize {
        self.pass
            + self.fail
            + self.conditional
            + self.error
            + self.blocked
            + self.quarantined
            + self.skipped
            + self.not_assessed
    }

    fn merge(&mut self, o: &Tally) {
        self.pass += o.pass;
        self.fail += o.fail;
        self.conditional += o.conditional;
        self.error += o.error;
        self.blocked += o.blocked;
        self.quarantined += o.quarantined;
        self.skipped += o.skipped;
        self.not_assessed += o.not_assessed;
    }

    fn parts(&self) -> [(&'static str, &'static str, usize); 8] {
        [
            ("fail", "FAIL", self.fail),
            ("error", "ERROR", self.error),
            ("not_assessed", "NOT_ASSESSED", self.not_assessed),
            ("conditional", "CONDITIONAL", self.conditional),
            ("blocked", "BLOCKED", self.blocked),
            ("quarantined", "quarantined", self.quarantined),
            ("skipped", "SKIPPED", self.skipped),
            ("pass", "PASS", self.pass),
        ]
    }
}

/// Latency bins (upper bounds in ms; the last is open).
const LATENCY_BOUNDS: [u64; 9] = [10, 30, 100, 300, 1_000, 3_000, 10_000, 30_000, 100_000];
const LATENCY_LABELS: [&str; 10] = [
    "<10ms", "10-30ms", "30-100ms", "0.1-0.3s", "0.3-1s", "1-3s", "3-10s", "10-30s", "30-100s",
    ">100s",
];
/// Token bins per trial (upper bounds; the last is open).
const TOKEN_BOUNDS: [u64; 7] = [10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];
const TOKEN_LABELS: [&str; 8] = [
    "<10", "10-100", "100-1k", "1k-10k", "10k-100k", "100k-1M", "1M-10M", ">10M",
];

fn bin(bounds: &[u64], v: u64) -> usize {
    bounds.iter().position(|b| v < *b).unwrap_or(bounds.len())
}

/// The counters behind every chart and the rubric averages.
#[derive(Debug, Clone, Default)]
pub struct Charts {
    by_owasp: BTreeMap<String, Tally>,
    by_pack: BTreeMap<String, Tally>,
    by_tag: BTreeMap<String, Tally>,
    tags_dropped: bool,
    task_bins: [usize; 9],
    refusal_bins: [usize; 4],
    latency_bins: [usize; 10],
    token_bins: [usize; 8],
    tokens_in: u64,
    tokens_out: u64,
    rubric: [(f64, usize); 6],
}

impl Charts {
    /// Folds one case in.
    pub fn add(&mut self, r: &CaseResult) {
        let key = r.case.owasp.clone().unwrap_or_else(|| "(none)".into());
        self.by_owasp.entry(key).or_default().add(r);
        let key = r.case.pack.clone().unwrap_or_else(|| "(no pack)".into());
        self.by_pack.entry(key).or_default().add(r);
        for t in &r.case.tags {
            if let Some(tally) = self.by_tag.get_mut(t) {
                tally.add(r);
            } else if self.by_tag.len() < MAX_TAGS {
                self.by_tag.entry(t.clone()).or_default().add(r);
            } else {
                self.tags_dropped = true;
            }
        }
        match &r.score {
            Score::Task {
                total, dimensions, ..
            } => {
                self.task_bins[((total / 2.0).floor() as usize).min(8)] += 1;
                for (acc, d) in self.rubric.iter_mut().zip(dimensions) {
                    if let Some(d) = d {
                        acc.0 += d;
                        acc.1 += 1;
                    }
                }
            }
            Score::Refusal { score } => self.refusal_bins[(score.floor() as usize).min(3)] += 1,
            Score::Checks { .. } | Score::Unscored => {}
        }
        for t in &r.trials {
            self.latency_bins[bin(&LATENCY_BOUNDS, t.duration_ms)] += 1;
            let (mut i, mut o) = (0, 0);
            for l in t.trace.llm_calls() {
                i += l.usage.input_tokens;
                o += l.usage.output_tokens;
            }
            if i + o > 0 {
                self.token_bins[bin(&TOKEN_BOUNDS, i + o)] += 1;
            }
            self.tokens_in += i;
            self.tokens_out += o;
        }
    }

    /// The mean score of each task dimension that any case assessed.
    pub fn rubric(&self) -> Vec<RubricRow> {
        Dimension::TASK
            .iter()
            .zip(self.rubric)
            .map(|(d, (sum, n))| RubricRow {
                name: d.as_str(),
                title: d.title(),
                avg: (n > 0).then(|| format!("{:.2}", sum / n as f64)),
                cases: n,
            })
            .collect()
    }

    /// Tokens in and out over every trial.
    pub fn tokens(&self) -> (u64, u64) {
        (self.tokens_in, self.tokens_out)
    }

    /// The charts worth drawing, in page order.
    pub fn layout(&self) -> Vec<Chart> {
        let mut out = Vec::new();
        if self.by_owasp.keys().any(|k| k != "(none)") {
            out.push(stacked(
                "owasp",
                "Outcomes by OWASP category",
                &self.by_owasp,
                None,
            ));
        }
        out.push(stacked("pack", "Outcomes by pack", &self.by_pack, None));
        if !self.by_tag.is_empty() {
            let note = self
                .tags_dropped
                .then(|| format!("the first {MAX_TAGS} distinct tags are counted"));
            out.push(stacked("tag", "Outcomes by tag", &self.by_tag, note));
        }
        if self.task_bins.iter().sum::<usize>() > 0 {
            let labels: Vec<String> = (0..9).map(|i| format!("{}-{}", i * 2, i * 2 + 2)).collect();
            out.push(histogram(
                "task-scores",
                "Task scores (of 18)",
                &labels,
                &self.task_bins,
                Some("FAIL below 9, PASS at 12".into()),
            ));
        }
        if self.refusal_bins.iter().sum::<usize>() > 0 {
            let labels: Vec<String> = ["0", "1", "2", "3"].map(String::from).to_vec();
            out.push(histogram(
                "refusal-scores",
                "Refusal scores (of 3)",
                &labels,
                &self.refusal_bins,
                Some("FAIL below 1, PASS at 2".into()),
            ));
        }
        let labels: Vec<String> = LATENCY_LABELS.map(String::from).to_vec();
        out.push(histogram(
            "latency",
            "Trial latency",
            &labels,
            &self.latency_bins,
            None,
        ));
        if self.tokens_in + self.tokens_out > 0 {
            let labels: Vec<String> = TOKEN_LABELS.map(String::from).to_vec();
            out.push(histogram(
                "tokens",
                "Tokens per trial",
                &labels,
                &self.token_bins,
                Some(format!(
                    "{} in, {} out over the run; cost is not recorded by the target",
                    self.tokens_in, self.tokens_out
                )),
            ));
        }
        out
    }
}

/// A task dimension's average.
#[derive(Debug, Clone, Serialize)]
pub struct RubricRow {
    /// File name of the dimension.
    pub name: &'static str,
    /// The rubric's title.
    pub title: &'static str,
    /// Mean over the cases that assessed it, 0-3.
    pub avg: Option<String>,
    /// Cases that assessed it.
    pub cases: usize,
}

/// One chart, laid out: either stacked rows or histogram bars.
#[derive(Debug, Clone, Serialize)]
pub struct Chart {
    /// Element id suffix.
    pub id: &'static str,
    /// Heading.
    pub title: &'static str,
    /// A line under the heading.
    pub note: Option<String>,
    /// `stacked` or `histogram`.
    pub kind: &'static str,
    /// View box height.
    pub height: u32,
    /// Stacked rows.
    pub rows: Vec<StackRow>,
    /// Histogram bars.
    pub bars: Vec<Bar>,
    /// A text alternative, for screen readers.
    pub alt: String,
}

/// One row of a stacked chart.
#[derive(Debug, Clone, Serialize)]
pub struct StackRow {
    /// The group.
    pub label: String,
    /// The group, clipped to fit the label column.
    pub short: String,
    /// Top of the row.
    pub y: f64,
    /// Where the label's baseline is.
    pub ty: f64,
    /// Cases.
    pub total: usize,
    /// "3/9 pass".
    pub text: String,
    /// The segments, left to right.
    pub segs: Vec<Seg>,
}

/// One segment of a stacked row.
#[derive(Debug, Clone, Serialize)]
pub struct Seg {
    /// CSS class suffix.
    pub cls: &'static str,
    /// Status name.
    pub name: &'static str,
    /// Count.
    pub n: usize,
    /// Left edge.
    pub x: f64,
    /// Width.
    pub w: f64,
}

/// One bar of a histogram.
#[derive(Debug, Clone, Serialize)]
pub struct Bar {
    /// The bin.
    pub label: String,
    /// Count.
    pub n: usize,
    /// Left edge.
    pub x: f64,
    /// Top.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
    /// Centre, for the labels.
    pub cx: f64,
}

const LABEL_W: f64 = 170.0;
const BAR_W: f64 = 370.0;
const ROW_H: f64 = 24.0;

fn r1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

fn stacked(
    id: &'static str,
    title: &'static str,
    groups: &BTreeMap<String, Tally>,
    note: Option<String>,
) -> Chart {
    let mut list: Vec<(String, Tally)> = groups.iter().map(|(k, v)| (k.clone(), *v)).collect();
    // Most cases first, then by name, so the chart reads the same for the same results.
    list.sort_by(|a, b| b.1.total().cmp(&a.1.total()).then(a.0.cmp(&b.0)));
    if list.len() > MAX_ROWS {
        let mut rest = Tally::default();
        let n = list.len() - (MAX_ROWS - 1);
        for (_, t) in list.drain(MAX_ROWS - 1..) {
            rest.merge(&t);
        }
        list.push((format!("{n} more"), rest));
    }
    if id == "owasp" {
        list.sort_by(|a, b| a.0.cmp(&b.0));
    }
    let mut rows = Vec::new();
    let mut alt = Vec::new();
    for (i, (label, t)) in list.iter().enumerate() {
        let y = 6.0 + i as f64 * ROW_H;
        let total = t.total();
        let mut x = LABEL_W;
        let mut segs = Vec::new();
        for (cls, name, n) in t.parts() {
            if n == 0 {
                continue;
            }
            let w = BAR_W * n as f64 / total.max(1) as f64;
            segs.push(Seg {
                cls,
                name,
                n,
                x: r1(x),
                w: r1(w),
            });
            x += w;
        }
        let text = format!("{}/{} pass", t.pass, total);
        alt.push(format!("{label}: {text}"));
        rows.push(StackRow {
            short: crate::text::clip(label, 24),
            label: label.clone(),
            y,
            ty: y + 13.0,
            total,
            text,
            segs,
        });
    }
    Chart {
        id,
        title,
        note,
        kind: "stacked",
        height: (12.0 + rows.len() as f64 * ROW_H) as u32,
        rows,
        bars: Vec::new(),
        alt: alt.join("; "),
    }
}

fn histogram(
    id: &'static str,
    title: &'static str,
    labels: &[String],
    counts: &[usize],
    note: Option<String>,
) -> Chart {
    let max = counts.iter().copied().max().unwrap_or(0).max(1);
    let (left, width, top, height) = (10.0, 600.0, 18.0, 100.0);
    let slot = width / counts.len() as f64;
    let bars = counts
        .iter()
        .zip(labels)
        .enumerate()
        .map(|(i, (n, label))| {
            let h = height * *n as f64 / max as f64;
            Bar {
                label: label.clone(),
                n: *n,
                x: r1(left + i as f64 * slot + 3.0),
                y: r1(top + height - h),
                w: r1(slot - 6.0),
                h: r1(h),
                cx: r1(left + (i as f64 + 0.5) * slot),
            }
        })
        .collect::<Vec<_>>();
    let alt = bars
        .iter()
        .map(|b| format!("{}: {}", b.label, b.n))
        .collect::<Vec<_>>()
        .join("; ");
    Chart {
        id,
        title,
        note,
        kind: "histogram",
        height: (top + height + 22.0) as u32,
        rows: Vec::new(),
        bars,
        alt,
    }
}

/// `12` for 12.0, for the header's averages.
pub fn avg_text(v: Option<f64>) -> Option<String> {
    v.map(trim_num)
}
