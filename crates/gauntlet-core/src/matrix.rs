//! A matrix run: every case against several targets, or several system-prompt variants (a
//! suite's `prompts:`), or both, in one run. [`Columns`] names the columns, tells which
//! column a case result belongs to and which prompt variant a column runs with; [`cross`]
//! makes the columns of targets times prompt variants; [`ColumnFolds`] folds each column's
//! cases with the run's own fold ([`SummaryBuilder`]), so that a column's state means
//! exactly what a run's state means, and gives the run the worst column's state.
//!
//! A case of a matrix run is stored, reported and resumed under its own id with the
//! column's label after [`SEPARATOR`] (`ask-for-key @ fake:safe`): every consumer that keys
//! cases by id (the store, JUnit, `--resume`) keeps the columns apart without knowing of
//! them, and a run of one target keeps its ids, reports and files exactly as they were.

use crate::event::RunManifest;
use crate::plan::PromptText;
use crate::result::CaseResult;
use crate::score::Status;
use crate::summary::{ColumnSummary, PackRequirements, RunEnd, Summary, SummaryBuilder};
use crate::target_config::{MatrixColumn, TargetConfig};

/// Between a case's id and its column's label in a matrix run's case ids. Run ids cannot
/// hold a space or `@`, so `RUN@COLUMN` names a column of a stored run unambiguously.
pub const SEPARATOR: &str = " @ ";

/// Between a target's label and a prompt variant's in the label of a column of a matrix of
/// several targets and several prompt variants (`fake:safe/terse`).
pub const PROMPT_SEPARATOR: char = '/';

/// The columns of a matrix run, in the order they were given.
#[derive(Debug, Clone, PartialEq)]
pub struct Columns {
    labels: Vec<String>,
    /// The prompt variant each column runs with, by its label (`None`: the agent's own).
    prompts: Vec<Option<String>>,
}

impl Columns {
    /// The columns with these labels, each with the agent's own system prompt; `None` for
    /// fewer than two (a run of one target).
    pub fn new(labels: Vec<String>) -> Option<Columns> {
        let prompts = vec![None; labels.len()];
        (labels.len() > 1).then_some(Columns { labels, prompts })
    }

    /// The columns of an invocation's matrix, each with its prompt variant; `None` for a
    /// run of one column.
    pub fn of_matrix(matrix: &[MatrixColumn]) -> Option<Columns> {
        (matrix.len() > 1).then(|| Columns {
            labels: matrix.iter().map(|c| c.label.clone()).collect(),
            prompts: matrix.iter().map(|c| c.prompt.clone()).collect(),
        })
    }

    /// The columns a stored run was made with, from its manifest; `None` for a run of one
    /// target.
    pub fn of_manifest(m: &RunManifest) -> Option<Columns> {
        Columns::of_matrix(&m.invocation.as_ref()?.matrix)
    }

    /// The labels, in order.
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// The label of the prompt variant column `i` runs with; `None` for the agent's own.
    pub fn prompt(&self, i: usize) -> Option<&str> {
        self.prompts.get(i)?.as_deref()
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

/// The columns of a run of `targets` (the matrix's columns, or the run's one target when
/// it is empty) with the suites' prompt variants `prompts` (labels): each target with each
/// variant, targets outer, labelled `TARGET/PROMPT`, or `PROMPT` alone when there is one
/// target (it is the same in every column). Without variants, or for a matrix already
/// crossed (a resumed run's), the columns are `targets` as they are.
pub fn cross(
    target: &TargetConfig,
    targets: Vec<MatrixColumn>,
    prompts: &[String],
) -> Vec<MatrixColumn> {
    if prompts.is_empty() || targets.iter().any(|c| c.prompt.is_some()) {
        return targets;
    }
    if targets.is_empty() {
        return prompts
            .iter()
            .map(|p| MatrixColumn {
                label: p.clone(),
                target: target.clone(),
                prompt: Some(p.clone()),
            })
            .collect();
    }
    targets
        .iter()
        .flat_map(|t| {
            prompts.iter().map(move |p| MatrixColumn {
                label: format!("{}{PROMPT_SEPARATOR}{p}", t.label),
                target: t.target.clone(),
                prompt: Some(p.clone()),
            })
        })
        .collect()
}

/// The prompt variants of a run's suites (name, variants), by label: those of every suite
/// that declares `prompts:`, which must all declare the same labels in the same order (a
/// column is one variant across the run); a suite without `prompts:` runs its agent's own
/// prompt in every column. Empty when no suite declares any. The error names the two
/// suites that differ.
pub fn prompt_labels<'a>(
    suites: impl IntoIterator<Item = (&'a str, &'a [PromptText])>,
) -> Result<Vec<String>, String> {
    let mut first: Option<(&str, Vec<String>)> = None;
    for (name, prompts) in suites {
        if prompts.is_empty() {
            continue;
        }
        let labels: Vec<String> = prompts.iter().map(|p| p.label.clone()).collect();
        match &first {
            None => first = Some((name, labels)),
            Some((other, want)) if *want != labels => {
                return Err(format!(
                    "suite `{name}` declares the prompts [{}] and suite `{other}` [{}]: a run's prompt columns are the same in every suite that declares them",
                    labels.join(", "),
                    want.join(", ")
                ));
            }
            Some(_) => {}
        }
    }
    Ok(first.map(|(_, l)| l).unwrap_or_default())
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

    fn column(label: &str, spec: &str) -> MatrixColumn {
        MatrixColumn {
            label: label.into(),
            target: TargetConfig::parse(spec).expect("spec"),
            prompt: None,
        }
    }

    #[test]
    fn targets_times_prompts_are_the_columns_and_one_target_is_left_out_of_the_labels() {
        let safe = TargetConfig::parse("fake:safe").expect("spec");
        let prompts = ["terse".to_owned(), "strict".to_owned()];
        let one = cross(&safe, Vec::new(), &prompts);
        let labels: Vec<&str> = one.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["terse", "strict"]);
        assert!(one.iter().all(|c| c.target == safe));
        assert_eq!(one[1].prompt.as_deref(), Some("strict"));
        let two = vec![
            column("fake:safe", "fake:safe"),
            column("v", "fake:vulnerable"),
        ];
        let crossed = cross(&safe, two.clone(), &prompts);
        let labels: Vec<&str> = crossed.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            ["fake:safe/terse", "fake:safe/strict", "v/terse", "v/strict"]
        );
        assert_eq!(crossed[2].target, two[1].target);
        // No variants: the columns as they were; crossed once: not again (a resumed run).
        assert_eq!(cross(&safe, two.clone(), &[]), two);
        assert_eq!(cross(&safe, crossed.clone(), &prompts), crossed);
        let cols = Columns::of_matrix(&crossed).expect("columns");
        assert_eq!(cols.prompt(3), Some("strict"));
        assert_eq!(cols.of("a @ v/strict"), Some((3, "a")));
        assert_eq!(Columns::of_matrix(&two).expect("columns").prompt(0), None);
    }

    #[test]
    fn suites_that_declare_prompts_must_agree_on_their_labels() {
        let v = |labels: &[&str]| -> Vec<PromptText> {
            labels
                .iter()
                .map(|l| PromptText {
                    label: (*l).into(),
                    text: String::new(),
                })
                .collect()
        };
        let (ab, none, ba) = (v(&["a", "b"]), v(&[]), v(&["b", "a"]));
        let ok = prompt_labels([
            ("s", ab.as_slice()),
            ("t", none.as_slice()),
            ("u", ab.as_slice()),
        ]);
        assert_eq!(ok, Ok(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!(prompt_labels([("t", none.as_slice())]), Ok(Vec::new()));
        let e = prompt_labels([("s", ab.as_slice()), ("u", ba.as_slice())]).expect_err("differ");
        assert!(e.contains("suite `u` declares the prompts [b, a]"), "{e}");
        assert!(e.contains("suite `s` [a, b]"), "{e}");
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
