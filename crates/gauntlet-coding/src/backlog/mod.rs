//! The backlog benchmark: is an agent worth it on a team's real tasks? A [`Contract`] frozen
//! before the run (tasks, arms, acceptance rules, budgets, blocking fields), a ledger of
//! [`LedgerRow`]s (one per task, arm and trial, in one of the [`RowState`]s), and the pure
//! fold of the two into a [`BacklogReport`]: acceptance rates with Wilson intervals, observed
//! to date and final, review and rework burden and cost per accepted task, and each arm
//! against the control arm.
//!
//! Reading the files (with positions in every error) is [`file`]'s job;
//! this module only holds the data and the arithmetic, so that the terminal, JSON and
//! Markdown views cannot disagree.
//!
//! Two rules keep the numbers honest. A rate or a per-accepted-task figure with nothing to
//! divide by is `None` ("undefined"), never zero. And rows whose outcome is not known yet
//! (`censored`, `not_started`, or a planned slot with no row at all) are kept out of the
//! denominator of the final rate and counted on their own, so the report always says how
//! much of the backlog the final rate rests on.

pub mod file;

use std::collections::{BTreeMap, HashMap};

use gauntlet_core::stats::{mcnemar_exact, wilson};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The contract format version (only `1` exists).
pub const BACKLOG_VERSION: u32 = 1;

/// The confidence of every interval in the report (95 %).
pub const ALPHA: f64 = 0.05;

fn one() -> u32 {
    1
}

/// The frozen contract of a backlog benchmark, written before the first trial runs.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Contract {
    /// The contract format version (only `1` exists).
    pub backlog_version: u32,
    /// The benchmark's name.
    pub name: String,
    /// What is being decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// When the contract was frozen (informational; the hash is what is checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frozen_at: Option<String>,
    /// When the ledger closes: rows still open then are recorded as `censored`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cutoff: Option<String>,
    /// The tasks, each a real backlog item.
    pub tasks: Vec<BacklogTask>,
    /// The arms compared on every task (an agent, another agent, people without one).
    pub arms: Vec<Arm>,
    /// Trials per task and arm (default 1).
    #[serde(default = "one")]
    pub trials: u32,
    /// When a trial counts as accepted.
    pub acceptance: Acceptance,
    /// Limits per trial: an accepted row over one is an error in the ledger.
    #[serde(default)]
    pub budgets: Budgets,
    /// Columns of your own that ledger rows may carry (`reviewer`, `pr_url`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<String>,
    /// Fields every resolved row (accepted, failed, abandoned) must fill: built-in ones
    /// (`review_minutes`, `rework_minutes`, `cost_usd`, `agent_minutes`, `note`) or declared
    /// in `fields`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocking_fields: Vec<String>,
}

impl Contract {
    /// The control arm: the one marked `control`, else the first.
    pub fn control(&self) -> Option<&Arm> {
        self.arms
            .iter()
            .find(|a| a.control)
            .or_else(|| self.arms.first())
    }
}

/// One backlog item.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BacklogTask {
    /// Its id (the ticket number, say).
    pub id: String,
    /// What it asks for.
    pub title: String,
    /// Where it is tracked (a ticket URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Labels (bug, feature, migration, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
}

/// One way of doing the tasks.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Arm {
    /// Its id, as ledger rows name it.
    pub id: String,
    /// What it is (agent and model version, or the team without an agent).
    pub description: String,
    /// The arm the others are compared with (default: the first arm).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub control: bool,
}

/// When a trial counts as accepted.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Acceptance {
    /// The rules a reviewer applies, in words (CI green, merged without rewrite, ...).
    pub rules: Vec<String>,
    /// Who decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<String>,
}

/// Limits per trial.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Budgets {
    /// Most money one trial may cost (`cost_usd`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
    /// Most minutes the agent (or person) may work on one trial (`agent_minutes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_agent_minutes: Option<f64>,
}

/// Where a ledger row stands.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum RowState {
    /// Met the acceptance rules.
    Accepted,
    /// Finished and was rejected.
    Failed,
    /// Planned, never started.
    NotStarted,
    /// Started and given up.
    Abandoned,
    /// Still open when the ledger closed: its outcome is unknown.
    Censored,
}

impl RowState {
    /// Every state, in the order reports list them.
    pub const ALL: [RowState; 5] = [
        RowState::Accepted,
        RowState::Failed,
        RowState::Abandoned,
        RowState::Censored,
        RowState::NotStarted,
    ];

    /// The name used in ledgers.
    pub fn as_str(self) -> &'static str {
        match self {
            RowState::Accepted => "accepted",
            RowState::Failed => "failed",
            RowState::NotStarted => "not_started",
            RowState::Abandoned => "abandoned",
            RowState::Censored => "censored",
        }
    }

    /// The state of a ledger name.
    pub fn parse(s: &str) -> Option<RowState> {
        RowState::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// Whether the outcome is known (it goes into the final rate's denominator).
    pub fn is_resolved(self) -> bool {
        matches!(
            self,
            RowState::Accepted | RowState::Failed | RowState::Abandoned
        )
    }
}

/// The built-in numeric fields of a row, by name.
pub const NUMBER_FIELDS: [&str; 4] = [
    "review_minutes",
    "rework_minutes",
    "cost_usd",
    "agent_minutes",
];

/// Every built-in field of a row.
pub const ROW_FIELDS: [&str; 10] = [
    "contract",
    "task",
    "arm",
    "trial",
    "state",
    "review_minutes",
    "rework_minutes",
    "cost_usd",
    "agent_minutes",
    "note",
];

/// Fields a contract's `blocking_fields` may name among the built-in ones.
pub const BLOCKABLE_FIELDS: [&str; 5] = [
    "review_minutes",
    "rework_minutes",
    "cost_usd",
    "agent_minutes",
    "note",
];

/// One (task x arm x trial) row of the ledger.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct LedgerRow {
    /// The line it was read from (1-based).
    pub line: usize,
    /// The contract hash the row was recorded against.
    pub contract: String,
    /// The task id.
    pub task: String,
    /// The arm id.
    pub arm: String,
    /// The trial, from 1.
    pub trial: u32,
    /// Where it stands.
    pub state: RowState,
    /// Minutes people spent reviewing it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_minutes: Option<f64>,
    /// Minutes people spent reworking it (before or after acceptance).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rework_minutes: Option<f64>,
    /// What the trial cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Minutes the agent (or person) worked on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_minutes: Option<f64>,
    /// A note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The contract's own fields, as written.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, String>,
}

impl LedgerRow {
    /// A built-in numeric field by name.
    pub fn number(&self, name: &str) -> Option<f64> {
        match name {
            "review_minutes" => self.review_minutes,
            "rework_minutes" => self.rework_minutes,
            "cost_usd" => self.cost_usd,
            "agent_minutes" => self.agent_minutes,
            _ => None,
        }
    }

    /// Whether a field (built-in or the contract's own) has a value.
    pub fn has(&self, name: &str) -> bool {
        match name {
            "note" => self.note.as_deref().is_some_and(|n| !n.trim().is_empty()),
            n if NUMBER_FIELDS.contains(&n) => self.number(n).is_some(),
            n => self.fields.get(n).is_some_and(|v| !v.trim().is_empty()),
        }
    }
}

/// A proportion with its Wilson interval.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Rate {
    /// Successes.
    pub x: u64,
    /// Out of.
    pub n: u64,
    /// x / n.
    pub rate: f64,
    /// The interval's low end (95 %).
    pub low: f64,
    /// The interval's high end (95 %).
    pub high: f64,
}

impl Rate {
    /// `x` out of `n`, or `None` (undefined) when `n` is 0.
    pub fn of(x: u64, n: u64) -> Option<Rate> {
        (n > 0).then(|| {
            let (low, high) = wilson(x, n, ALPHA);
            Rate {
                x,
                n,
                rate: x as f64 / n as f64,
                low,
                high,
            }
        })
    }
}

/// A per-accepted-task figure: the total over the arm's rows and, when it is defined, the
/// total divided by the accepted count.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct PerAccepted {
    /// The sum over the rows that carry the field (`None` when a resolved row lacks it, so
    /// the sum is not known).
    pub total: Option<f64>,
    /// `total / accepted`; `None` (undefined, not zero) when nothing was accepted or the
    /// total is not known.
    pub per_accepted: Option<f64>,
    /// Resolved rows (accepted, failed, abandoned) that do not carry the field.
    pub missing: usize,
    /// Why `per_accepted` is undefined, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undefined: Option<String>,
}

/// One arm's results.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct ArmReport {
    /// The arm id.
    pub arm: String,
    /// What it is.
    pub description: String,
    /// Whether it is the control arm.
    pub control: bool,
    /// Planned slots: tasks x trials.
    pub planned: u64,
    /// Rows in the ledger for this arm.
    pub recorded: u64,
    /// Rows by state (`accepted`, `failed`, `abandoned`, `censored`, `not_started`).
    pub states: BTreeMap<String, u64>,
    /// Planned slots with no row at all (counted with `not_started`).
    pub unrecorded: u64,
    /// Accepted out of every planned slot, whatever its state: what has been observed so
    /// far, and a lower bound on what the final rate can reach.
    pub to_date: Option<Rate>,
    /// Accepted out of the resolved rows (accepted + failed + abandoned); censored,
    /// not-started and unrecorded slots are not in the denominator. `None` when nothing is
    /// resolved.
    #[serde(rename = "final")]
    pub final_rate: Option<Rate>,
    /// Slots left out of the final rate's denominator: censored + not started + unrecorded.
    pub excluded: u64,
    /// Review minutes.
    pub review_minutes: PerAccepted,
    /// Rework minutes.
    pub rework_minutes: PerAccepted,
    /// Cost in USD.
    pub cost_usd: PerAccepted,
}

/// An arm against the control arm.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct ArmComparison {
    /// The arm.
    pub arm: String,
    /// The control arm.
    pub control: String,
    /// Final rate of the arm minus the control's (`None` when either is undefined).
    pub final_rate_diff: Option<f64>,
    /// (task, trial) slots resolved in both arms: the paired sample.
    pub paired: u64,
    /// Paired slots accepted under the control only.
    pub control_only: u64,
    /// Paired slots accepted under the arm only.
    pub arm_only: u64,
    /// The exact McNemar p-value over the paired slots (`None` with no pair).
    pub mcnemar_p: Option<f64>,
    /// Cost per accepted task of the arm minus the control's (`None` when either is
    /// undefined).
    pub cost_per_accepted_diff: Option<f64>,
}

/// The whole report.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct BacklogReport {
    /// The benchmark's name.
    pub name: String,
    /// The contract hash every row was checked against.
    pub contract: String,
    /// Tasks in the contract.
    pub tasks: usize,
    /// Trials per task and arm.
    pub trials: u32,
    /// The interval confidence.
    pub confidence: f64,
    /// The acceptance rules.
    pub acceptance: Vec<String>,
    /// Per arm, in contract order.
    pub arms: Vec<ArmReport>,
    /// Every other arm against the control.
    pub comparisons: Vec<ArmComparison>,
    /// What the final rates leave out, in words.
    pub censoring: String,
}

fn per_accepted(rows: &[&LedgerRow], field: &str, accepted: u64) -> PerAccepted {
    let missing = rows
        .iter()
        .filter(|r| r.state.is_resolved() && r.number(field).is_none())
        .count();
    let sum: f64 = rows.iter().filter_map(|r| r.number(field)).sum();
    let total = (missing == 0).then_some(sum);
    let (per, undefined) = match total {
        None => (
            None,
            Some(format!(
                "`{field}` is missing on {missing} resolved row(s); make it a blocking field"
            )),
        ),
        Some(_) if accepted == 0 => (None, Some("nothing was accepted".to_owned())),
        Some(t) => (Some(t / accepted as f64), None),
    };
    PerAccepted {
        total,
        per_accepted: per,
        missing,
        undefined,
    }
}

impl BacklogReport {
    /// Folds a validated ledger into the report. Rows are expected to have passed the
    /// ledger checks (known tasks and arms, no duplicates).
    pub fn compute(contract: &Contract, hash: &str, rows: &[LedgerRow]) -> BacklogReport {
        let planned = contract.tasks.len() as u64 * u64::from(contract.trials.max(1));
        let mut arms = Vec::new();
        let mut outcome: HashMap<(&str, &str, u32), RowState> = HashMap::new();
        for r in rows {
            outcome.insert((&r.arm, &r.task, r.trial), r.state);
        }
        let control = contract.control().map(|a| a.id.clone());
        let (mut excluded_all, mut censored_all, mut not_started_all) = (0, 0, 0);
        for arm in &contract.arms {
            let mine: Vec<&LedgerRow> = rows.iter().filter(|r| r.arm == arm.id).collect();
            let mut states: BTreeMap<String, u64> = RowState::ALL
                .iter()
                .map(|s| (s.as_str().to_owned(), 0))
                .collect();
            for r in &mine {
                *states.entry(r.state.as_str().to_owned()).or_default() += 1;
            }
            let count = |s: RowState| states[s.as_str()];
            let accepted = count(RowState::Accepted);
            let resolved = accepted + count(RowState::Failed) + count(RowState::Abandoned);
            let recorded = mine.len() as u64;
            let unrecorded = planned.saturating_sub(recorded);
            let excluded = count(RowState::Censored) + count(RowState::NotStarted) + unrecorded;
            excluded_all += excluded;
            censored_all += count(RowState::Censored);
            not_started_all += count(RowState::NotStarted) + unrecorded;
            arms.push(ArmReport {
                arm: arm.id.clone(),
                description: arm.description.clone(),
                control: control.as_deref() == Some(arm.id.as_str()),
                planned,
                recorded,
                states,
                unrecorded,
                to_date: Rate::of(accepted, planned),
                final_rate: Rate::of(accepted, resolved),
                excluded,
                review_minutes: per_accepted(&mine, "review_minutes", accepted),
                rework_minutes: per_accepted(&mine, "rework_minutes", accepted),
                cost_usd: per_accepted(&mine, "cost_usd", accepted),
            });
        }
        let mut comparisons = Vec::new();
        if let Some(c) = &control {
            let base = arms.iter().find(|a| &a.arm == c).cloned();
            for a in arms.iter().filter(|a| &a.arm != c) {
                let (mut paired, mut control_only, mut arm_only) = (0, 0, 0);
                for t in &contract.tasks {
                    for trial in 1..=contract.trials.max(1) {
                        let x = outcome.get(&(c.as_str(), t.id.as_str(), trial));
                        let y = outcome.get(&(a.arm.as_str(), t.id.as_str(), trial));
                        if let (Some(x), Some(y)) = (x, y)
                            && x.is_resolved()
                            && y.is_resolved()
                        {
                            paired += 1;
                            let xa = *x == RowState::Accepted;
                            let ya = *y == RowState::Accepted;
                            control_only += u64::from(xa && !ya);
                            arm_only += u64::from(ya && !xa);
                        }
                    }
                }
                let diff = |f: fn(&ArmReport) -> Option<f64>| {
                    base.as_ref().and_then(|b| Some(f(a)? - f(b)?))
                };
                comparisons.push(ArmComparison {
                    arm: a.arm.clone(),
                    control: c.clone(),
                    final_rate_diff: diff(|r| r.final_rate.map(|f| f.rate)),
                    paired,
                    control_only,
                    arm_only,
                    mcnemar_p: (paired > 0).then(|| mcnemar_exact(control_only, arm_only)),
                    cost_per_accepted_diff: diff(|r| r.cost_usd.per_accepted),
                });
            }
        }
        let censoring = if excluded_all == 0 {
            "every planned slot is resolved: the final rates rest on the whole backlog".to_owned()
        } else {
            format!(
                "{excluded_all} of {} planned slot(s) are not in the final rates' denominators: {censored_all} censored (open at the cutoff, outcome unknown) and {not_started_all} not started (rows marked not_started, or no row yet); the to-date rates count them as not accepted",
                planned * contract.arms.len() as u64
            )
        };
        BacklogReport {
            name: contract.name.clone(),
            contract: hash.to_owned(),
            tasks: contract.tasks.len(),
            trials: contract.trials.max(1),
            confidence: 1.0 - ALPHA,
            acceptance: contract.acceptance.rules.clone(),
            arms,
            comparisons,
            censoring,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contract(tasks: usize, trials: u32) -> Contract {
        Contract {
            backlog_version: 1,
            name: "t".into(),
            description: None,
            frozen_at: None,
            cutoff: None,
            tasks: (1..=tasks)
                .map(|i| BacklogTask {
                    id: format!("T{i}"),
                    title: "x".into(),
                    source: None,
                    labels: vec![],
                })
                .collect(),
            arms: vec![
                Arm {
                    id: "human".into(),
                    description: "h".into(),
                    control: true,
                },
                Arm {
                    id: "agent".into(),
                    description: "a".into(),
                    control: false,
                },
            ],
            trials,
            acceptance: Acceptance {
                rules: vec!["merged".into()],
                reviewer: None,
            },
            budgets: Budgets::default(),
            fields: vec![],
            blocking_fields: vec![],
        }
    }

    fn row(task: &str, arm: &str, state: RowState, cost: Option<f64>) -> LedgerRow {
        LedgerRow {
            line: 1,
            contract: "h".into(),
            task: task.into(),
            arm: arm.into(),
            trial: 1,
            state,
            review_minutes: Some(10.0),
            rework_minutes: Some(5.0),
            cost_usd: cost,
            agent_minutes: None,
            note: None,
            fields: BTreeMap::new(),
        }
    }

    #[test]
    fn cost_per_accepted_is_undefined_not_zero_when_nothing_was_accepted() {
        let c = contract(2, 1);
        let rows = vec![
            row("T1", "agent", RowState::Failed, Some(3.0)),
            row("T2", "agent", RowState::Abandoned, Some(1.0)),
        ];
        let r = BacklogReport::compute(&c, "h", &rows);
        let a = &r.arms[1];
        assert_eq!(a.cost_usd.total, Some(4.0));
        assert_eq!(a.cost_usd.per_accepted, None);
        assert_eq!(
            a.cost_usd.undefined.as_deref(),
            Some("nothing was accepted")
        );
        assert_eq!(a.review_minutes.per_accepted, None);
        assert_eq!(a.final_rate.unwrap().rate, 0.0);
        // The control arm has no row at all: every rate is undefined or zero of planned.
        let h = &r.arms[0];
        assert!(h.final_rate.is_none());
        assert_eq!(h.to_date.unwrap().x, 0);
        assert_eq!(h.unrecorded, 2);
    }

    #[test]
    fn censored_and_not_started_rows_leave_the_final_denominator() {
        let c = contract(4, 1);
        let rows = vec![
            row("T1", "agent", RowState::Accepted, Some(2.0)),
            row("T2", "agent", RowState::Failed, Some(2.0)),
            LedgerRow {
                review_minutes: Some(4.0),
                rework_minutes: None,
                ..row("T3", "agent", RowState::Censored, None)
            },
            LedgerRow {
                review_minutes: None,
                rework_minutes: None,
                ..row("T4", "agent", RowState::NotStarted, None)
            },
        ];
        let r = BacklogReport::compute(&c, "h", &rows);
        let a = &r.arms[1];
        let f = a.final_rate.unwrap();
        assert_eq!((f.x, f.n), (1, 2));
        let d = a.to_date.unwrap();
        assert_eq!((d.x, d.n), (1, 4));
        assert_eq!(a.excluded, 2);
        // The cost is known for every resolved row; censored rows need none.
        assert_eq!(a.cost_usd.per_accepted, Some(4.0));
        // Review time spent on a row still open is burden too; open rows need not record it.
        assert_eq!(a.review_minutes.per_accepted, Some(24.0));
        assert_eq!(a.rework_minutes.per_accepted, Some(10.0));
        assert!(r.censoring.contains("1 censored"), "{}", r.censoring);
        assert!(f.low < 0.5 && f.high > 0.5);
    }

    #[test]
    fn a_missing_cost_on_a_resolved_row_makes_the_total_unknown() {
        let c = contract(2, 1);
        let rows = vec![
            row("T1", "agent", RowState::Accepted, Some(2.0)),
            row("T2", "agent", RowState::Failed, None),
        ];
        let r = BacklogReport::compute(&c, "h", &rows);
        let a = &r.arms[1];
        assert_eq!(a.cost_usd.total, None);
        assert_eq!(a.cost_usd.per_accepted, None);
        assert_eq!(a.cost_usd.missing, 1);
    }

    #[test]
    fn arms_are_compared_on_slots_resolved_in_both() {
        let c = contract(3, 1);
        let rows = vec![
            row("T1", "human", RowState::Accepted, Some(0.0)),
            row("T2", "human", RowState::Failed, Some(0.0)),
            row("T3", "human", RowState::Censored, None),
            row("T1", "agent", RowState::Failed, Some(1.0)),
            row("T2", "agent", RowState::Accepted, Some(1.0)),
            row("T3", "agent", RowState::Accepted, Some(1.0)),
        ];
        let r = BacklogReport::compute(&c, "h", &rows);
        let cmp = &r.comparisons[0];
        assert_eq!(cmp.arm, "agent");
        assert_eq!(cmp.control, "human");
        assert_eq!(cmp.paired, 2);
        assert_eq!((cmp.control_only, cmp.arm_only), (1, 1));
        assert_eq!(cmp.mcnemar_p, Some(1.0));
        // agent 2/3 resolved, human 1/2.
        let d = cmp.final_rate_diff.unwrap();
        assert!((d - (2.0 / 3.0 - 0.5)).abs() < 1e-12);
    }
}
