//! A matrix run's part of the run API: [`MatrixTarget`] holds one target per column and
//! sends each trial to its column's (the column is in the case id, [`Columns::of`]), under
//! that column's own concurrency; [`expand`] turns each planned case into one case per
//! column, in the order the columns were given, so that a case's answers arrive side by
//! side. Each column's target is built from its own settings, so its rate limits and
//! retries are its own.

use std::sync::Arc;

use gauntlet_core::matrix::Columns;
use gauntlet_core::plan::PlannedCase;
use gauntlet_core::target::{
    BoxFuture, Session, Target, TargetError, TargetInfo, ToolHost, TrialContext, TurnAnswer,
};
use gauntlet_core::target::{EvidenceLevel, SideEffectMode};
use gauntlet_core::trace::TraceRecorder;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The trials a column keeps in flight when its target says nothing (`concurrency:`).
pub const DEFAULT_COLUMN_CONCURRENCY: usize = 8;

/// One column: its target and the permits of its concurrency.
struct Column {
    target: Arc<dyn Target>,
    slots: Arc<Semaphore>,
}

/// The targets of a matrix run behind one [`Target`]: a trial goes to its case's column.
pub struct MatrixTarget {
    columns: Columns,
    targets: Vec<Column>,
}

impl MatrixTarget {
    /// The columns' targets, in the columns' order, each with the trials it may have in
    /// flight.
    pub fn new(columns: Columns, targets: Vec<(Arc<dyn Target>, usize)>) -> MatrixTarget {
        MatrixTarget {
            columns,
            targets: targets
                .into_iter()
                .map(|(target, n)| Column {
                    target,
                    slots: Arc::new(Semaphore::new(n.max(1))),
                })
                .collect(),
        }
    }

    /// Each column's label and its target's description.
    pub fn column_infos(&self) -> Vec<(String, TargetInfo)> {
        self.columns
            .labels()
            .iter()
            .zip(&self.targets)
            .map(|(l, c)| (l.clone(), c.target.info()))
            .collect()
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
    /// `matrix`, labelled with every column; real side effects when any column has them.
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
        TargetInfo {
            kind: "matrix".into(),
            label: self.columns.labels().join(" | "),
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
            let column = &self.targets[i];
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

/// A planned case as one case per column, each under its column's id (a benign twin names
/// its security case in the same column).
pub fn expand(planned: PlannedCase, columns: &Columns) -> Vec<PlannedCase> {
    columns
        .labels()
        .iter()
        .map(|label| {
            let mut case = (*planned.case).clone();
            case.id = Columns::case_id(&case.id, label);
            case.benign_of = case.benign_of.map(|b| Columns::case_id(&b, label));
            PlannedCase {
                suite: Arc::clone(&planned.suite),
                case: Arc::new(case),
            }
        })
        .collect()
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
        let ids: Vec<String> = expand(planned, &cols)
            .into_iter()
            .map(|p| p.case.id.clone())
            .collect();
        assert_eq!(ids, ["a @ fake:safe", "a @ served"]);
        assert_eq!(
            weakest([EvidenceLevel::Online, EvidenceLevel::Offline].into_iter()),
            EvidenceLevel::Offline
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
        let unknown = case("a @ three");
        let cu = ctx(&unknown);
        let r = rt.block_on(m.open(&cu));
        assert!(matches!(r, Err(TargetError::Harness(_))));
    }
}
