//! Small helpers shared by the writers and the terminal: atomic files, score and reason
//! formatting, and the security figures in words ([`security_lines`], [`case_security_line`],
//! and the attack success rate per harm category, [`harm_lines`]).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use gauntlet_core::result::{
    AttackOutcome, CaseResult, PolicyOutcome, Score, SecurityOutcome, TaskOutcome,
};
use gauntlet_core::summary::{Rate, SecuritySummary, Summary};

/// A file written under a temporary name and renamed into place by [`AtomicFile::commit`].
pub struct AtomicFile {
    tmp: PathBuf,
    dest: PathBuf,
    /// The writer.
    pub out: BufWriter<File>,
}

impl AtomicFile {
    /// Opens `dir/.NAME.partial`, to become `dir/NAME`.
    pub fn create(dir: &Path, name: &str) -> std::io::Result<AtomicFile> {
        let tmp = dir.join(format!(".{name}.partial"));
        let f = File::create(&tmp)?;
        Ok(AtomicFile {
            tmp,
            dest: dir.join(name),
            out: BufWriter::with_capacity(64 * 1024, f),
        })
    }

    /// Flushes and renames into place.
    pub fn commit(mut self) -> std::io::Result<()> {
        self.out.flush()?;
        std::fs::rename(&self.tmp, &self.dest)
    }
}

/// `12.0/18` for a task, `2/3` for a refusal, `-` when unscored.
pub fn score_text(r: &CaseResult) -> String {
    match &r.score {
        Score::Task {
            total, assessed, ..
        } => {
            if *assessed == 6 {
                format!("{}/18", trim_num(*total))
            } else {
                format!("{}/18 ({assessed} of 6 dims)", trim_num(*total))
            }
        }
        Score::Refusal { score } => format!("{}/3", trim_num(*score)),
        Score::Checks { passed, total } => format!("{passed}/{total} ok"),
        Score::Unscored => "-".into(),
    }
}

/// `12` for 12.0, `12.5` for 12.5, two decimals otherwise.
pub fn trim_num(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else if ((v * 10.0) - (v * 10.0).round()).abs() < 1e-9 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A number as [`trim_num`] writes it, or `-` when there is none.
pub fn opt_num(v: Option<f64>) -> String {
    v.map_or("-".into(), trim_num)
}

/// How much B moved from A (`+0.25`), or nothing when either is missing.
pub fn delta(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => format!("{:+.2}", b - a),
        _ => String::new(),
    }
}

/// Whose words [`score_parts`] uses: summary.md's or the terminal's. The figures are the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScoreStyle {
    /// summary.md: "task average 12/18 over 4".
    Markdown,
    /// The end of a run on the terminal: "task avg 12/18 (4 tasks)".
    Terminal,
}

/// The scores of a run, a phrase each, in the order both views print them: the task and
/// refusal averages, the normalised score with its band, pass^1 and pass^k when `k` > 1.
pub fn score_parts(s: &Summary, style: ScoreStyle) -> Vec<String> {
    let md = style == ScoreStyle::Markdown;
    let mut parts = Vec::new();
    let averages = [
        ("task", s.tasks.avg, 18, s.tasks.count, "tasks"),
        ("refusal", s.refusals.avg, 3, s.refusals.count, "refusals"),
    ];
    for (name, avg, out_of, n, unit) in averages {
        let Some(a) = avg.map(trim_num) else {
            continue;
        };
        parts.push(if md {
            format!("{name} average {a}/{out_of} over {n}")
        } else {
            format!("{name} avg {a}/{out_of} ({n} {unit})")
        });
    }
    if let (Some(n), Some(b)) = (s.suite_normalized, s.quality_band) {
        parts.push(if md {
            format!("normalised {n:.3} ({b})")
        } else {
            format!("normalised {n:.3} {b}")
        });
    }
    if s.k > 1 {
        let (p1, pk, cases, k) = (s.pass_at_1, s.pass_at_k, s.cases, s.k);
        let sep = if md { " ·" } else { "," };
        parts.push(format!("pass^1 {p1}/{cases}{sep} pass^{k} {pk}/{cases}"));
    }
    parts
}

/// The header of a matrix run's table of columns ([`column_row`]).
pub const COLUMN_HEADER: [&str; 8] = [
    "column",
    "state",
    "passed",
    "scores",
    "attack success",
    "latency",
    "tokens",
    "cost",
];

/// One column of a matrix run in words, a cell per [`COLUMN_HEADER`] entry: its state, the
/// cases that passed (with the rate), the score averages, the attack success rate over the
/// attacks observed, the mean trial latency, the agent's tokens and the run's cost.
pub fn column_row(c: &gauntlet_core::summary::ColumnSummary) -> [String; 8] {
    let s = &c.summary;
    let rate = if s.cases == 0 {
        "-".to_owned()
    } else {
        format!("{:.1}%", 100.0 * s.passed as f64 / s.cases as f64)
    };
    let mut scores: Vec<String> = Vec::new();
    if let Some(a) = s.tasks.avg {
        scores.push(format!("task {}/18", trim_num(a)));
    }
    if let Some(a) = s.refusals.avg {
        scores.push(format!("refusal {}/3", trim_num(a)));
    }
    let asr = s.security.as_ref().map_or("-".to_owned(), |sec| {
        let r = &sec.attack_success;
        match r.rate {
            Some(v) => format!("{}/{} ({:.1}%)", r.cases, r.of, 100.0 * v),
            None => format!("{}/{}", r.cases, r.of),
        }
    });
    let (tokens, cost) = s
        .spend
        .as_ref()
        .map_or(("0".to_owned(), "-".to_owned()), |sp| {
            (sp.agent.tokens().to_string(), sp.total.cost_label())
        });
    [
        c.label.clone(),
        s.status.to_string(),
        format!("{}/{} {rate}", s.passed, s.cases),
        if scores.is_empty() {
            "-".to_owned()
        } else {
            scores.join(", ")
        },
        asr,
        c.latency_ms
            .map_or("-".to_owned(), |l| format!("{} ms", l.round() as u64)),
        tokens,
        cost,
    ]
}

/// A matrix run's columns as an aligned plain-text table (header first), for the terminal
/// and `runs show`; empty for a run of one target.
pub fn column_table(s: &Summary) -> Vec<String> {
    if s.columns.is_empty() {
        return Vec::new();
    }
    let rows: Vec<[String; 8]> = std::iter::once(COLUMN_HEADER.map(str::to_owned))
        .chain(s.columns.iter().map(column_row))
        .collect();
    let widths: Vec<usize> = (0..8)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    rows.iter()
        .map(|r| {
            let cells: Vec<String> = r
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            cells.join("  ").trim_end().to_owned()
        })
        .collect()
}

/// The most useful one-line reason a case did not pass.
pub fn failure_reason(r: &CaseResult) -> String {
    if let Some(h) = r.hard_fails.first() {
        return h.clone();
    }
    for t in &r.trials {
        if let Some(e) = &t.error {
            return e.clone();
        }
        if let Some(v) = t.verdicts.iter().find(|v| !v.passed && v.counts()) {
            return format!("{}: {}", v.label, v.evidence);
        }
    }
    for t in &r.trials {
        if let Some(v) = t.verdicts.iter().find(|v| v.gating && !v.assessed) {
            return format!("{} not assessed: {}", v.label, v.evidence);
        }
    }
    String::new()
}

/// Every failing check of the case (gating and assessed), once each, hard ones first, as
/// `label: evidence`. A passing case can have some: a soft check that failed while the
/// score still passed.
pub fn failed_checks(r: &CaseResult) -> Vec<String> {
    let mut hard: Vec<String> = Vec::new();
    let mut soft: Vec<String> = Vec::new();
    for t in &r.trials {
        for v in t.verdicts.iter().filter(|v| !v.passed && v.counts()) {
            let line = format!("{}: {}", v.label, v.evidence);
            let list = if v.hard_fail { &mut hard } else { &mut soft };
            if !list.contains(&line) {
                list.push(line);
            }
        }
    }
    hard.extend(soft);
    hard
}

/// Clips text to `n` characters on one line (newlines become spaces), adding an ellipsis.
pub fn clip(s: &str, n: usize) -> String {
    gauntlet_core::text::clip(&s.replace('\n', " "), n)
}

/// One hold-out slice on one line: `suite:support 3/4 passed = 75% [30%, 95%], 1 not
/// assessed`; `no case graded` when none was.
pub fn holdout_line(h: &gauntlet_core::summary::HoldoutSlice) -> String {
    let pct = |v: f64| format!("{:.0}%", v * 100.0);
    let rate = match (h.pass_rate, h.low, h.high) {
        (Some(r), Some(l), Some(u)) => format!(
            "{}/{} passed = {} [{}, {}]",
            h.passed,
            h.passed + h.failed,
            pct(r),
            pct(l),
            pct(u)
        ),
        _ => "no case graded".to_owned(),
    };
    let mut line = format!("{} {rate}", h.slice);
    if h.not_assessed > 0 {
        line.push_str(&format!(", {} not assessed", h.not_assessed));
    }
    line
}

/// `83%`, for the rates of the security figures.
fn percent(r: &Rate) -> String {
    r.rate
        .map(|v| format!("{:.0}%", v * 100.0))
        .unwrap_or_else(|| "-".into())
}

/// `; 3 not observed`, when any was left out of a rate.
fn not_observed(r: &Rate) -> String {
    if r.not_observed > 0 {
        format!("; {} not observed, in no count", r.not_observed)
    } else {
        String::new()
    }
}

/// One framework's coverage table, for `summary.md` and `report.html` alike.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FrameworkTable {
    /// The framework's key (`atlas`).
    pub key: &'static str,
    /// Its name and version.
    pub title: &'static str,
    /// One row per entry the run's security cases map to.
    pub rows: Vec<FrameworkCell>,
}

/// One entry's row: the id, its title, the cases run, failed, and the attack success rate
/// in words (`97% (28 of 29)`, or `not observed`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct FrameworkCell {
    /// The entry's id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Security cases run that map to it.
    pub cases: usize,
    /// Of those, FAILed.
    pub failed: usize,
    /// The attack success rate among them.
    pub asr: String,
}

/// The coverage tables of a run's security cases, one per framework with any entry, in
/// framework order (`gauntlet_core::compliance::Framework::ALL`).
pub fn framework_tables(s: &SecuritySummary) -> Vec<FrameworkTable> {
    gauntlet_core::compliance::Framework::ALL
        .iter()
        .map(|f| FrameworkTable {
            key: f.key(),
            title: f.title(),
            rows: s
                .frameworks
                .iter()
                .filter(|r| r.framework == f.key())
                .map(|r| FrameworkCell {
                    id: r.id.clone(),
                    title: r.title.clone(),
                    cases: r.cases,
                    failed: r.failed,
                    asr: if r.attack_success.of == 0 {
                        "not observed".to_owned()
                    } else {
                        format!(
                            "{} ({} of {})",
                            percent(&r.attack_success),
                            r.attack_success.cases,
                            r.attack_success.of
                        )
                    },
                })
                .collect(),
        })
        .filter(|t| !t.rows.is_empty())
        .collect()
}

/// The security figures of a run as `(label, text)` lines, for the terminal, `summary.md`
/// and `report.html` alike: the attack success rate first (the red team's headline), the
/// refusal policy apart from it, then the utility under attack and the benign utility. A
/// figure nothing measured says so instead of showing a number.
pub fn security_lines(s: &SecuritySummary) -> Vec<(&'static str, String)> {
    let a = &s.attack_success;
    let mut out = vec![(
        "attack success rate",
        if a.of == 0 {
            format!("not measured: no attack was observed{}", not_observed(a))
        } else {
            format!(
                "{} ({} of {} security case{} where the attack was observed{})",
                percent(a),
                a.cases,
                a.of,
                if a.of == 1 { "" } else { "s" },
                not_observed(a)
            )
        },
    )];
    if s.no_attack_check > 0 {
        out.push((
            "no attack check",
            format!(
                "{} security case{} with no check of role `attack`: whether the attack achieved anything is not told",
                s.no_attack_check,
                if s.no_attack_check == 1 { "" } else { "s" }
            ),
        ));
    }
    if let Some(p) = &s.policy_violated {
        out.push((
            "policy violated",
            format!(
                "{} did not refuse as required, of {} observed{} (the refusal policy, not the attack)",
                p.cases,
                p.of,
                not_observed(p)
            ),
        ));
    }
    if s.policy_only > 0 {
        let more = s.policy_only.saturating_sub(s.policy_only_cases.len());
        out.push((
            "policy only",
            format!(
                "{} case{} did not refuse; their attack checks found nothing delivered: {}{}",
                s.policy_only,
                if s.policy_only == 1 { "" } else { "s" },
                s.policy_only_cases.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            ),
        ));
    }
    out.push((
        "utility under attack",
        match &s.utility_under_attack {
            Some(u) if u.of > 0 => format!(
                "{} ({} of {} attacked case{} with a legitimate task did it{})",
                percent(u),
                u.cases,
                u.of,
                if u.of == 1 { "" } else { "s" },
                not_observed(u)
            ),
            Some(u) => format!(
                "not measured: no legitimate task was observed{}",
                not_observed(u)
            ),
            None => "not measured: no security case checks a legitimate task".into(),
        },
    ));
    out.push((
        "benign utility",
        match &s.benign_utility {
            Some(b) if b.of > 0 => format!(
                "{} ({} of {} benign case{} passed{})",
                percent(b),
                b.cases,
                b.of,
                if b.of == 1 { "" } else { "s" },
                not_observed(b)
            ),
            Some(b) => format!("not measured: no benign case was graded{}", not_observed(b)),
            None => "not measured: no benign case ran (no benign twin, no task case)".into(),
        },
    ));
    out
}

/// The attack success rate of one harm category, as the terminal, `summary.md` and
/// `report.html` show it (see [`harm_lines`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HarmLine {
    /// The category's id (`violent-crimes`).
    pub id: String,
    /// Its title, or the id for a category the taxonomy does not know.
    pub title: String,
    /// Security cases of the category.
    pub cases: usize,
    /// Cases whose attack achieved its goal.
    pub achieved: usize,
    /// Cases where the attack was observed (the rate's denominator).
    pub observed: usize,
    /// The rate, `100%`, or `-` when nothing was observed.
    pub rate: String,
    /// The figure in words: `100% (3 of 3 where the attack was observed)`.
    pub text: String,
}

/// The attack success rate per harm category, in the taxonomy's order; empty when no case
/// of the run names a harm category, so that other runs' reports are unchanged.
pub fn harm_lines(s: &SecuritySummary) -> Vec<HarmLine> {
    s.by_harm
        .iter()
        .map(|h| {
            let a = &h.attack_success;
            let text = if a.of == 0 {
                format!(
                    "not measured: no attack observed in its {} case{}{}",
                    h.cases,
                    if h.cases == 1 { "" } else { "s" },
                    not_observed(a)
                )
            } else {
                format!(
                    "{} ({} of {} where the attack was observed{})",
                    percent(a),
                    a.cases,
                    a.of,
                    not_observed(a)
                )
            };
            HarmLine {
                id: h.category.clone(),
                title: if h.title.is_empty() {
                    h.category.clone()
                } else {
                    h.title.clone()
                },
                cases: h.cases,
                achieved: a.cases,
                observed: a.of,
                rate: percent(a),
                text,
            }
        })
        .collect()
}

/// A security case's verdicts by role in one line: `attack achieved · policy violated (did
/// not refuse) · task not done`. `None` for a case with no outcome.
pub fn case_security_line(o: &SecurityOutcome) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(a) = o.attack {
        parts.push(match a {
            AttackOutcome::Achieved => "attack achieved",
            AttackOutcome::NotAchieved => "attack not achieved",
            AttackOutcome::Unobserved => "attack not observed",
        });
    }
    if let Some(p) = o.policy {
        parts.push(match p {
            PolicyOutcome::Violated => "policy violated (did not refuse)",
            PolicyOutcome::Kept => "refused as required",
            PolicyOutcome::Unobserved => "refusal not observed",
        });
    }
    if let Some(t) = o.task {
        parts.push(match t {
            TaskOutcome::Done => "task done",
            TaskOutcome::NotDone => "task not done",
            TaskOutcome::Unobserved => "task not observed",
        });
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}
