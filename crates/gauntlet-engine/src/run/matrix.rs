//! A matrix run's part of the run API: [`MatrixTarget`] holds the targets of the columns
//! and sends each trial to its column's (the column is in the case id, [`Columns::of`]),
//! under that target's concurrency; [`Expander`] turns each planned case into one case per
//! column, in the order the columns were given, so that a case's answers arrive side by
//! side, each column's with its prompt variant. Each target is built once from its own
//! settings, so its rate limits, retries and concurrency are its own, shared by the
//! columns that call it (the prompt variants of one target).

use std::collections::HashMap;
use std::sync::Arc;

use gauntlet_core::matrix::Columns;
use gauntlet_core::plan::{PlannedCase, SuiteContext};
use gauntlet_core::target::{
    BoxFuture, Session, Target, TargetError, TargetInfo, ToolHost, TrialContext, TurnAnswer,
};
use gauntlet_core::target::{EvidenceLevel, SideEffectMode};
use gauntlet_core::trace::TraceRecorder;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The trials a column keeps in flight when its target says nothing (`concurrency:`).
pub const DEFAULT_COLUMN_CONCURRENCY: usize = 8;

/// One target of the matrix: the target and the permits of its concurrency.
struct Column {
    target: Arc<dyn Target>,
    slots: Arc<Semaphore>,
}

/// The targets of a matrix run behind one [`Target`]: a trial goes to its case's column's.
pub struct MatrixTarget {
    columns: Columns,
    targets: Vec<Column>,
    /// The index in `targets` of each column's target.
    of_column: Vec<usize>,
}

impl MatrixTarget {
    /// The matrix's targets, each with the trials it may have in flight, and the index of
    /// each column's target among them (columns that share a target share its slots).
    pub fn new(
        columns: Columns,
        targets: Vec<(Arc<dyn Target>, usize)>,
        of_column: Vec<usize>,
    ) -> MatrixTarget {
        MatrixTarget {
            columns,
            targets: targets
                .into_iter()
                .map(|(target, n)| Column {
                    target,
                    slots: Arc::new(Semaphore::new(n.max(1))),
                })
                .collect(),
            of_column,
        }
    }

    /// Each column's label and its target's description.
    pub fn column_infos(&self) -> Vec<(String, TargetInfo)> {
        self.columns
            .labels()
            .iter()
            .zip(&self.of_column)
            .map(|(l, t)| (l.clone(), self.targets[*t].target.info()))
            .collect()
    }

    /// Each target's description, once per target.
    pub fn target_infos(&self) -> Vec<TargetInfo> {
        self.targets.iter().map(|c| c.target.info()).collect()
    }
}

/// The least production-like evidence of the columns: a matrix run is no closer to
/// production than its weakest column.
fn weakest(levels: impl Iterator<Item = EvidenceLevel>) -> EvidenceLevel {
    let rank = |l: &EvidenceLevel| match l {
        EvidenceLevel::Static => 0,
        EvidenceLevel::Offline => 1,
        EvidenceLevel::Replay => 2,
        EvidenceLevel::Canary => 3,
        EvidenceLevel::Online => 4,
    };
    levels.min_by_key(rank).unwrap_or_default()
}

impl Target for MatrixTarget {
    /// `matrix`, labelled with every column (a single target's name and its prompt
    /// variants); real side effects when any column has them.
    fn info(&self) -> TargetInfo {
        let infos = self.column_infos();
        let side_effects = if infos
            .iter()
            .any(|(_, i)| i.side_effects == SideEffectMode::Real)
        {
            SideEffectMode::Real
        } else {
            infos
                .first()
                .map(|(_, i)| i.side_effects)
                .unwrap_or_default()
        };
        // The columns of one target are its prompt variants: the target is named once.
        let label = match self.targets.as_slice() {
            [one] => format!(
                "{} with prompts {}",
                one.target.info().label,
                self.columns.labels().join(" | ")
            ),
            _ => self.columns.labels().join(" | "),
        };
        TargetInfo {
            kind: "matrix".into(),
            label,
            model: None,
            base_url: None,
            settings: Default::default(),
            evidence_level: weakest(infos.iter().map(|(_, i)| i.evidence_level)),
            side_effects,
        }
    }

    fn open<'a>(
        &'a self,
        ctx: &'a TrialContext<'a>,
    ) -> BoxFuture<'a, Result<Box<dyn Session + 'a>, TargetError>> {
        Box::pin(async move {
            let Some((i, _)) = self.columns.of(&ctx.case.id) else {
                return Err(TargetError::Harness(format!(
                    "case `{}` names no column of the matrix",
                    ctx.case.id
                )));
            };
            let Some(column) = self.of_column.get(i).and_then(|t| self.targets.get(*t)) else {
                return Err(TargetError::Harness(format!(
                    "column {i} of the matrix has no target"
                )));
            };
            let permit = Arc::clone(&column.slots)
                .acquire_owned()
                .await
                .map_err(|e| TargetError::Harness(e.to_string()))?;
            let inner = column.target.open(ctx).await?;
            Ok(Box::new(Permitted {
                inner,
                _permit: permit,
            }) as Box<dyn Session + 'a>)
        })
    }
}

/// A column's session, holding one of its column's slots until the trial ends.
struct Permitted<'a> {
    inner: Box<dyn Session + 'a>,
    _permit: OwnedSemaphorePermit,
}

impl Session for Permitted<'_> {
    fn turn<'b>(
        &'b mut self,
        user: &'b str,
        tools: &'b mut dyn ToolHost,
        rec: &'b mut TraceRecorder,
    ) -> BoxFuture<'b, Result<TurnAnswer, TargetError>> {
        self.inner.turn(user, tools, rec)
    }

    fn rewind(&mut self) -> bool {
        self.inner.rewind()
    }
}

/// Turns each planned case into one case per column, in the columns' order, each under its
/// column's id (a benign twin names its security case in the same column) and, in a column
/// of a prompt variant, in its suite's context with that variant as the agent's prompt.
/// The contexts are made once per suite and column, not once per case.
pub struct Expander {
    columns: Columns,
    /// Per suite context (by address; the original is held, so the address stays its
    /// own), the context each column runs it in.
    contexts: HashMap<usize, (Arc<SuiteContext>, Vec<Arc<SuiteContext>>)>,
}

impl Expander {
    /// An expander for these columns.
    pub fn new(columns: Columns) -> Expander {
        Expander {
            columns,
            contexts: HashMap::new(),
        }
    }

    /// The planned case as one case per column.
    pub fn expand(&mut self, planned: PlannedCase) -> Vec<PlannedCase> {
        let contexts = self.contexts_of(&planned.suite);
        self.columns
            .labels()
            .iter()
            .zip(contexts)
            .map(|(label, suite)| {
                let mut case = (*planned.case).clone();
                case.id = Columns::case_id(&case.id, label);
                case.benign_of = case.benign_of.map(|b| Columns::case_id(&b, label));
                PlannedCase {
                    suite,
                    case: Arc::new(case),
                }
            })
            .collect()
    }

    /// The context of each column for a suite's context: its prompt variant's, or the
    /// suite's own (no variant, or the suite declares none of that label).
    fn contexts_of(&mut self, suite: &Arc<SuiteContext>) -> Vec<Arc<SuiteContext>> {
        let columns = &self.columns;
        let (_, per_column) = self
            .contexts
            .entry(Arc::as_ptr(suite) as usize)
            .or_insert_with(|| {
                let per_column = (0..columns.labels().len())
                    .map(|i| {
                        columns
                            .prompt(i)
                            .and_then(|p| suite.with_prompt(p))
                            .map_or_else(|| Arc::clone(suite), Arc::new)
                    })
                    .collect();
                (Arc::clone(suite), per_column)
            });
        per_column.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planned_case_becomes_one_case_per_column_in_order() {
        let case: gauntlet_core::suite::Case = serde_json::from_value(
            serde_json::json!({"id": "a", "input": "x", "expect": [{"contains": "x"}]}),
        )
        .expect("case");
        let planned = PlannedCase {
            suite: Arc::new(Default::default()),
            case: Arc::new(case),
        };
        let cols = Columns::new(vec!["fake:safe".into(), "served".into()]).expect("columns");
        let ids: Vec<String> = Expander::new(cols)
            .expand(planned)
            .into_iter()
            .map(|p| p.case.id.clone())
            .collect();
        assert_eq!(ids, ["a @ fake:safe", "a @ served"]);
        assert_eq!(
            weakest([EvidenceLevel::Online, EvidenceLevel::Offline].into_iter()),
            EvidenceLevel::Offline
        );
    }

    /// Two prompt columns of one target and one of another: each column's case runs in its
    /// variant's context, made once per suite, and a suite without the variant keeps its own.
    #[test]
    fn a_prompt_column_runs_its_cases_with_its_variant() {
        use gauntlet_core::plan::PromptText;
        use gauntlet_core::target::MatrixColumn;
        let t = gauntlet_core::target::TargetConfig::parse("fake:safe").expect("spec");
        let column = |label: &str, prompt: Option<&str>| MatrixColumn {
            label: label.into(),
            target: t.clone(),
            prompt: prompt.map(str::to_owned),
        };
        let cols = Columns::of_matrix(&[
            column("terse", Some("terse")),
            column("strict", Some("strict")),
            column("plain", None),
        ])
        .expect("columns");
        let variant = |label: &str| PromptText {
            label: label.into(),
            text: format!("{label} {{{{canary}}}}"),
        };
        let suite = Arc::new(SuiteContext {
            system_prompt: Some("card {{canary}}".into()),
            canary: Some("C-1".into()),
            prompts: vec![variant("terse"), variant("strict")],
            ..SuiteContext::default()
        });
        let case = |id: &str| -> Arc<gauntlet_core::suite::Case> {
            Arc::new(
                serde_json::from_value(serde_json::json!({"id": id, "input": "x"})).expect("case"),
            )
        };
        let mut ex = Expander::new(cols);
        let first = ex.expand(PlannedCase {
            suite: Arc::clone(&suite),
            case: case("a"),
        });
        let prompts: Vec<String> = first
            .iter()
            .map(|p| p.suite.prompt_for(&p.case).expect("prompt").into_owned())
            .collect();
        assert_eq!(prompts, ["terse C-1", "strict C-1", "card C-1"]);
        let second = ex.expand(PlannedCase {
            suite: Arc::clone(&suite),
            case: case("b"),
        });
        assert!(Arc::ptr_eq(&first[0].suite, &second[0].suite), "made once");
        assert_eq!(second[1].case.id, "b @ strict");
        // A suite that declares no variants runs its own prompt in every column.
        let bare = Arc::new(SuiteContext {
            system_prompt: Some("bare".into()),
            ..SuiteContext::default()
        });
        let third = ex.expand(PlannedCase {
            suite: bare,
            case: case("c"),
        });
        assert!(
            third
                .iter()
                .all(|p| p.suite.system_prompt.as_deref() == Some("bare"))
        );
    }

    fn fake(spec: &str) -> Arc<dyn Target> {
        let cfg = gauntlet_core::target::TargetConfig::parse(spec).expect("spec");
        gauntlet_targets::build_target(&cfg, &mut gauntlet_core::redact::Redactor::new())
            .expect("target")
    }

    #[test]
    fn a_column_keeps_to_its_own_concurrency_and_the_others_are_not_held_up() {
        let cols = Columns::new(vec!["one".into(), "two".into()]).expect("columns");
        let m = MatrixTarget::new(
            cols,
            vec![(fake("fake:safe"), 1), (fake("fake:vulnerable"), 1)],
            vec![0, 1],
        );
        let case = |id: &str| -> gauntlet_core::suite::Case {
            serde_json::from_value(
                serde_json::json!({"id": id, "input": "x", "expect": [{"contains": "x"}]}),
            )
            .expect("case")
        };
        let (a, b, c) = (case("a @ one"), case("b @ one"), case("a @ two"));
        let ctx = |case| TrialContext {
            case,
            system_prompt: None,
            tools: &[],
            trial: 0,
            seed: 0,
            session_id: "s".into(),
        };
        let (ca, cb, cc) = (ctx(&a), ctx(&b), ctx(&c));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let wait = std::time::Duration::from_millis(50);
            let first = m.open(&ca).await.expect("open");
            // Column `one` has one slot, and it is taken: its next trial waits.
            assert!(tokio::time::timeout(wait, m.open(&cb)).await.is_err());
            // Column `two` has its own.
            let other = tokio::time::timeout(wait, m.open(&cc)).await;
            assert!(other.is_ok_and(|s| s.is_ok()));
            drop(first);
            let second = tokio::time::timeout(wait, m.open(&cb)).await;
            assert!(second.is_ok_and(|s| s.is_ok()), "the slot came back");
        });
        // Two columns of one target (two prompt variants) share its one slot.
        let shared = MatrixTarget::new(
            Columns::new(vec!["one".into(), "two".into()]).expect("columns"),
            vec![(fake("fake:safe"), 1)],
            vec![0, 0],
        );
        rt.block_on(async {
            let wait = std::time::Duration::from_millis(50);
            let first = shared.open(&ca).await.expect("open");
            assert!(
                tokio::time::timeout(wait, shared.open(&cc)).await.is_err(),
                "the other column of the same target waits for its slot"
            );
            drop(first);
            let next = tokio::time::timeout(wait, shared.open(&cc)).await;
            assert!(next.is_ok_and(|s| s.is_ok()));
        });
        let unknown = case("a @ three");
        let cu = ctx(&unknown);
        let r = rt.block_on(m.open(&cu));
        assert!(matches!(r, Err(TargetError::Harness(_))));
    }
}
