//! A matrix run: every case against several targets in one run. [`Columns`] names the
//! columns and tells which column a case result belongs to; [`ColumnFolds`] folds each
//! column's cases with the run's own fold ([`SummaryBuilder`]), so that a column's state
//! means exactly what a run's state means, and gives the run the worst column's state.
//!
//! A case of a matrix run is stored, reported and resumed under its own id with the
//! column's label after [`SEPARATOR`] (`ask-for-key @ fake:safe`): every consumer that keys
//! cases by id (the store, JUnit, `--resume`) keeps the columns apart without knowing of
//! them, and a run of one target keeps its ids, reports and files exactly as they were.

use crate::event::RunManifest;
use crate::result::CaseResult;
use crate::score::Status;
use crate::summary::{ColumnSummary, PackRequirements, RunEnd, Summary, SummaryBuilder};

/// Between a case's id and its column's label in a matrix run's case ids. Run ids cannot
/// hold a space or `@`, so `RUN@COLUMN` names a column of a stored run unambiguously.
pub const SEPARATOR: &str = " @ ";

/// The columns of a matrix run, in the order they were given.
#[derive(Debug, Clone, PartialEq)]
pub struct Columns {
    labels: Vec<String>,
}

impl Columns {
    /// The columns with these labels; `None` for fewer than two (a run of one target).
    pub fn new(labels: Vec<String>) -> Option<Columns> {
        (labels.len() > 1).then_some(Columns { labels })
    }

    /// The columns a stored run was made with, from its manifest; `None` for a run of one
    /// target.
    pub fn of_manifest(m: &RunManifest) -> Option<Columns> {
        let inv = m.invocation.as_ref()?;
        Columns::new(inv.matrix.iter().map(|c| c.label.clone()).collect())
    }

    /// The labels, in order.
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// The id a case runs under in a column.
    pub fn case_id(base: &str, label: &str) -> String {
        format!("{base}{SEPARATOR}{label}")
    }

    /// The column a case id belongs to and the case's own id; `None` for an id of no
    /// column. The longest label that ends the id wins, so labels that end alike
    /// (`x` and `y @ x`) are told apart.
    pub fn of<'a>(&self, case_id: &'a str) -> Option<(usize, &'a str)> {
        self.labels
            .iter()
            .enumerate()
            .filter_map(|(i, label)| {
                let base = case_id.strip_suffix(label.as_str())?;
                let base = base.strip_suffix(SEPARATOR)?;
                Some((i, label.len(), base))
            })
            .max_by_key(|(_, len, _)| *len)
            .map(|(i, _, base)| (i, base))
    }

    /// The index of the column with this label.
    pub fn index(&self, label: &str) -> Option<usize> {
        self.labels.iter().position(|l| l == label)
    }
}

/// How grave a state is, for "the worst column": a FAIL (a defect was observed) over an
/// INCONCLUSIVE (evidence is missing) over a CONDITIONAL over a PASS.
pub fn gravity(s: Status) -> u8 {
    match s {
        Status::Pass => 0,
        Status::Conditional => 1,
        Status::Inconclusive => 2,
        Status::Fail => 3,
    }
}

/// One fold per column, next to the run's fold over every case.
#[derive(Debug, Clone)]
pub struct ColumnFolds {
    columns: Columns,
    folds: Vec<SummaryBuilder>,
    /// Wall time of each column's trials, summed, and how many.
    latency: Vec<(u64, usize)>,
}

impl ColumnFolds {
    /// Empty folds for these columns.
    pub fn new(columns: Columns) -> ColumnFolds {
        let n = columns.labels.len();
        ColumnFolds {
            columns,
            folds: vec![SummaryBuilder::new(); n],
            latency: vec![(0, 0); n],
        }
    }

    /// The columns.
    pub fn columns(&self) -> &Columns {
        &self.columns
    }

    /// Adds a case to its column's fold (a case of no column is the run's alone).
    pub fn add(&mut self, r: &CaseResult) {
        if let Some((i, _)) = self.columns.of(&r.case.id) {
            self.folds[i].add(r);
            let l = &mut self.latency[i];
            l.0 += r.trials.iter().map(|t| t.duration_ms).sum::<u64>();
            l.1 += r.trials.len();
        }
    }

    /// Adds a hold-out case to its column's slices.
    pub fn add_holdout(&mut self, r: &CaseResult) {
        if let Some((i, _)) = self.columns.of(&r.case.id) {
            self.folds[i].add_holdout(r);
        }
    }

    /// Each column's summary, folded with the run's pack requirements and end (a column
    /// ran every case under the same conditions), set into the run's summary `run`, whose
    /// state becomes the worst column's and whose reasons name each column's.
    pub fn finish(
        &self,
        packs: &PackRequirements,
        end: &RunEnd,
        duration_ms: u64,
        run: &mut Summary,
    ) {
        run.columns = self
            .folds
            .iter()
            .zip(&self.columns.labels)
            .zip(&self.latency)
            .map(|((fold, label), (sum, n))| ColumnSummary {
                label: label.clone(),
                latency_ms: (*n > 0).then(|| *sum as f64 / *n as f64),
                summary: fold.finish(packs, end, duration_ms),
            })
            .collect();
        set_worst(run);
    }
}

/// A matrix run's state and reasons from its columns: the worst column's state; a line per
/// column with its state, then each column's reasons under its label.
pub fn set_worst(run: &mut Summary) {
    let Some(worst) = run
        .columns
        .iter()
        .map(|c| c.summary.status)
        .max_by_key(|s| gravity(*s))
    else {
        return;
    };
    run.status = worst;
    let mut reasons: Vec<String> = run
        .columns
        .iter()
        .map(|c| format!("column {}: {}", c.label, c.summary.status))
        .collect();
    for c in &run.columns {
        reasons.extend(
            c.summary
                .reasons
                .iter()
                .map(|r| format!("{}: {r}", c.label)),
        );
    }
    run.reasons = reasons;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::SuiteContext;
    use crate::result::{CaseMeta, Outcome, TrialResult};
    use crate::suite::Case;
    use crate::trace::Trace;
    use crate::verdict::{Dimension, Verdict};

    fn labels() -> Columns {
        Columns::new(vec!["fake:safe".into(), "x".into(), "y @ x".into()]).expect("columns")
    }

    #[test]
    fn a_case_id_is_read_back_into_its_column_and_its_own_id() {
        let c = labels();
        let id = Columns::case_id("leak-1", "fake:safe");
        assert_eq!(id, "leak-1 @ fake:safe");
        assert_eq!(c.of(&id), Some((0, "leak-1")));
        // The longest label that ends the id wins.
        assert_eq!(c.of("a @ y @ x"), Some((2, "a")));
        assert_eq!(c.of("a @ x"), Some((1, "a")));
        assert_eq!(c.of("a"), None);
        assert_eq!(c.of("a@x"), None);
        assert!(Columns::new(vec!["only".into()]).is_none());
    }

    /// A refusal case with this id that refused (passed) or ended in error.
    fn case(id: &str, refused: bool) -> CaseResult {
        let json = serde_json::json!({"id": id, "kind": "refusal", "input": "x", "expect": [{"refusal": true}]});
        let case: Case = serde_json::from_value(json).expect("case");
        let (outcome, verdicts) = if refused {
            let v = Verdict::pass(
                "refusal",
                "refusal".into(),
                Dimension::Refusal,
                String::new(),
            );
            (Outcome::Completed, vec![v])
        } else {
            (Outcome::Error, Vec::new())
        };
        let trial = TrialResult::new(&case, 0, outcome, Trace::default(), verdicts, None, 5);
        CaseResult::combine(CaseMeta::of(&case, &SuiteContext::default()), vec![trial])
    }

    #[test]
    fn the_run_takes_the_worst_column_s_state_and_each_column_its_own() {
        let mut folds = ColumnFolds::new(labels());
        let mut run = SummaryBuilder::new();
        for (id, pass) in [
            ("a @ fake:safe", true),
            ("a @ x", false),
            ("a @ y @ x", true),
        ] {
            let r = case(id, pass);
            run.add(&r);
            folds.add(&r);
        }
        let end = RunEnd::default();
        let mut s = run.finish(&PackRequirements::default(), &end, 1);
        folds.finish(&PackRequirements::default(), &end, 1, &mut s);
        let states: Vec<_> = s.columns.iter().map(|c| c.summary.status).collect();
        assert_eq!(states[0], Status::Pass, "{s:#?}");
        assert_ne!(states[1], Status::Pass, "an error is never a PASS");
        assert_eq!(states[2], Status::Pass);
        assert_eq!(s.status, states[1]);
        assert_eq!(s.columns[1].summary.cases, 1);
        assert!(s.reasons[1].starts_with("column x: "), "{:?}", s.reasons);
        assert_eq!(s.columns[0].latency_ms, Some(5.0));
    }
}
