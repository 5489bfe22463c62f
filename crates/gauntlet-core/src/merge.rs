//! Merging the shards of a sharded run: [`ShardMerge`] checks that the shards make up one
//! run (every shard of one count exactly once, the same suites, target and settings, each
//! finished) and folds their cases into one summary through the same fold as a live run
//! ([`SummaryBuilder`]), with the packs checked over the union and the shards' ends
//! combined ([`RunEnd::combine`]).
//!
//! A shard's report is untrusted input: each case is counted as its verdicts decide it
//! ([`CaseResult::rederived`]), not as its recorded status says, and when the caller could
//! plan the shard again from its suites ([`ShardPart::planned`]), every planned case must be
//! there, once, and no other.
//!
//! The merge reads no files and writes none: the caller streams each shard's cases and
//! warnings through it and hands the events it makes to the reporters.

use std::collections::{HashMap, HashSet};

use crate::event::{RunManifest, ShardOf};
use crate::result::CaseResult;
use crate::score::Stop;
use crate::summary::{PackRequirements, RunEnd, Summary, SummaryBuilder};

/// One shard as it was recorded.
#[derive(Debug, Clone)]
pub struct ShardPart {
    /// Where it came from, to name it in errors (a run id, a report file).
    pub source: String,
    /// Its manifest.
    pub manifest: RunManifest,
    /// Its summary, when it finished.
    pub summary: Option<Summary>,
    /// When it started and finished, in milliseconds since the epoch (finished: 0 when it
    /// did not).
    pub started_ms: i64,
    /// When it finished.
    pub finished_ms: i64,
    /// When it finished, as recorded.
    pub finished_at: Option<String>,
    /// The ids of the cases its suites plan for it, planned again from the suites as they
    /// are now (`None`: they could not be, and its own count is all there is to check).
    pub planned: Option<HashSet<String>>,
}

/// A case as the merge counts it.
#[derive(Debug)]
pub struct Taken {
    /// The case, its status and score decided again from its verdicts.
    pub result: CaseResult,
    /// Set when the recorded status said otherwise: a warning for the merged run.
    pub corrected: Option<String>,
}

/// Why shards do not merge.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("no shard to merge")]
    Empty,
    /// A source is not a shard.
    #[error("{0} is not a shard (it was not run with --shard i/n)")]
    NotAShard(String),
    /// Shards of different counts.
    #[error("{0} is shard {1} but {2} is shard {3}: shards of one run share their count")]
    Counts(String, String, String, String),
    /// A shard given twice.
    #[error("shard {0} is given twice: {1} and {2}")]
    Duplicate(String, String, String),
    /// Shards missing.
    #[error("shard(s) {0} of {1} missing: only {2} were given")]
    Missing(String, u32, String),
    /// A shard that did not finish.
    #[error("shard {0} ({1}) did not finish")]
    Unfinished(String, String),
    /// Shards of different runs.
    #[error("{0} and {1} are not shards of one run: their {2} differ")]
    Mismatch(String, String, &'static str),
    /// A case in two shards.
    #[error("case `{0}` is in shard {1} and in shard {2}")]
    DuplicateCase(String, String, String),
    /// A shard's cases are not all there.
    #[error("shard {0} ({1}) holds {2} case(s) but its summary counts {3}")]
    Incomplete(String, String, usize, usize),
    /// A case the shard's suites do not plan for it.
    #[error("case `{0}` in shard {1} ({2}) is not one its suites plan for that shard")]
    Unplanned(String, String, String),
    /// Planned cases a finished shard does not hold.
    #[error("shard {0} ({1}) lacks {2} case(s) its suites plan for it: {3}")]
    CasesMissing(String, String, usize, String),
}

impl MergeError {
    /// What the user can do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            MergeError::Unfinished(..) => "resume it (gauntlet run --resume RUN), then merge again",
            MergeError::Missing(..) => {
                "run the missing shards (same suites and flags, --shard i/n), or pass them too"
            }
            MergeError::Duplicate(..) | MergeError::DuplicateCase(..) => {
                "pass each shard once; a shard run twice is kept only once, as the run it was"
            }
            MergeError::Unplanned(..)
            | MergeError::CasesMissing(..)
            | MergeError::Incomplete(..) => {
                "merge the reports the shards wrote, unedited, next to the suites they ran; run a shard again if its report was lost or changed"
            }
            _ => {
                "pass the shards of one sharded run: the same suites and flags with --shard 1/n ... n/n"
            }
        }
    }
}

/// The shards of one run, being folded into it.
pub struct ShardMerge {
    parts: Vec<ShardPart>,
    manifest: RunManifest,
    packs: PackRequirements,
    fold: SummaryBuilder,
    /// Which shard (by position) each case came from.
    seen: HashMap<String, usize>,
    /// Cases taken from each shard.
    taken: Vec<usize>,
    started_ms: i64,
}

fn shard_of(p: &ShardPart) -> Result<&ShardOf, MergeError> {
    p.manifest
        .shard
        .as_ref()
        .ok_or_else(|| MergeError::NotAShard(p.source.clone()))
}

fn label(p: &ShardPart) -> String {
    p.manifest
        .shard
        .as_ref()
        .map_or_else(|| "?".into(), ShardOf::label)
}

/// The filters of a shard without its shard.
fn filters_of(m: &RunManifest) -> Vec<&str> {
    m.filters
        .iter()
        .map(String::as_str)
        .filter(|f| !f.starts_with("shard "))
        .collect()
}

impl ShardMerge {
    /// Checks that `parts` are the shards of one run, each once, each finished, and starts
    /// the merged run `run_id`.
    pub fn new(mut parts: Vec<ShardPart>, run_id: String) -> Result<ShardMerge, MergeError> {
        let first = parts.first().ok_or(MergeError::Empty)?;
        let total = shard_of(first)?.total;
        for p in &parts {
            let s = shard_of(p)?;
            if s.total != total {
                return Err(MergeError::Counts(
                    first.source.clone(),
                    label(first),
                    p.source.clone(),
                    s.label(),
                ));
            }
        }
        parts.sort_by_key(|p| p.manifest.shard.as_ref().map_or(0, |s| s.index));
        for w in parts.windows(2) {
            if label(&w[0]) == label(&w[1]) {
                return Err(MergeError::Duplicate(
                    label(&w[0]),
                    w[0].source.clone(),
                    w[1].source.clone(),
                ));
            }
        }
        let have: Vec<u32> = parts
            .iter()
            .filter_map(|p| p.manifest.shard.as_ref().map(|s| s.index))
            .collect();
        let missing: Vec<String> = (1..=total)
            .filter(|i| !have.contains(i))
            .map(|i| i.to_string())
            .collect();
        if !missing.is_empty() {
            let given: Vec<String> = parts.iter().map(label).collect();
            return Err(MergeError::Missing(
                missing.join(", "),
                total,
                given.join(", "),
            ));
        }
        let base = &parts[0];
        for p in &parts {
            if p.summary.is_none() {
                return Err(MergeError::Unfinished(label(p), p.source.clone()));
            }
            let (a, b) = (&base.manifest, &p.manifest);
            let suites = |m: &RunManifest| -> Vec<(String, String)> {
                m.suites
                    .iter()
                    .map(|s| (s.name.clone(), s.sha256.clone()))
                    .collect()
            };
            let differs: Option<&'static str> = if suites(a) != suites(b) {
                Some("suites (names or contents)")
            } else if a.target.label != b.target.label {
                Some("targets")
            } else if a.k != b.k {
                Some("trials per case (k)")
            } else if a.seed != b.seed {
                Some("seeds")
            } else if a.command != b.command {
                Some("commands")
            } else if filters_of(a) != filters_of(b) {
                Some("filters")
            } else if a.packs != b.packs {
                Some("required packs")
            } else {
                None
            };
            if let Some(what) = differs {
                return Err(MergeError::Mismatch(
                    base.source.clone(),
                    p.source.clone(),
                    what,
                ));
            }
        }
        let started_ms = parts.iter().map(|p| p.started_ms).min().unwrap_or(0);
        let earliest = parts.iter().min_by_key(|p| p.started_ms).unwrap_or(base);
        let mut manifest = base.manifest.clone();
        manifest.run_id = run_id;
        manifest.started_at = earliest.manifest.started_at.clone();
        manifest.planned_cases = parts.iter().map(|p| p.manifest.planned_cases).sum();
        manifest.filters.retain(|f| !f.starts_with("shard "));
        manifest.shard = None;
        if let Some(inv) = &mut manifest.invocation {
            inv.shard = None;
        }
        manifest.notes.remove("resumed");
        manifest.notes.remove("resumed_faulted_trials");
        manifest
            .notes
            .insert("merged_shards".into(), total.to_string());
        manifest.notes.insert(
            "merged_from".into(),
            parts
                .iter()
                .map(|p| p.source.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        );
        let mut packs = manifest.packs.clone().unwrap_or_default();
        packs.deferred = false;
        let n = parts.len();
        Ok(ShardMerge {
            parts,
            manifest,
            packs,
            fold: SummaryBuilder::new(),
            seen: HashMap::new(),
            taken: vec![0; n],
            started_ms,
        })
    }

    /// The shards, in shard order (positions are indices into this).
    pub fn parts(&self) -> &[ShardPart] {
        &self.parts
    }

    /// The merged run's manifest.
    pub fn manifest(&self) -> &RunManifest {
        &self.manifest
    }

    /// How much later than the merged run a shard started: its events' elapsed times are
    /// shifted by this.
    pub fn offset_ms(&self, part: usize) -> u64 {
        (self.parts[part].started_ms - self.started_ms).max(0) as u64
    }

    /// A shard's warning as the merged run records it.
    pub fn warning(&self, part: usize, message: &str) -> String {
        format!("shard {}: {message}", label(&self.parts[part]))
    }

    /// Folds one case of shard `part`, as its verdicts decide it.
    pub fn add(&mut self, part: usize, case: &CaseResult) -> Result<Taken, MergeError> {
        let id = &case.case.id;
        if let Some(&other) = self.seen.get(id) {
            return Err(MergeError::DuplicateCase(
                id.clone(),
                label(&self.parts[other]),
                label(&self.parts[part]),
            ));
        }
        let p = &self.parts[part];
        if p.planned.as_ref().is_some_and(|ids| !ids.contains(id)) {
            return Err(MergeError::Unplanned(
                id.clone(),
                label(p),
                p.source.clone(),
            ));
        }
        let result = case.rederived();
        let corrected = (result.status != case.status).then(|| {
            format!(
                "case `{id}` was recorded {} but its verdicts say {}: counted {}",
                case.status.as_str(),
                result.status.as_str(),
                result.status.as_str()
            )
        });
        self.seen.insert(id.clone(), part);
        self.taken[part] += 1;
        self.fold.add(&result);
        Ok(Taken { result, corrected })
    }

    /// Checks that every case planned for a shard that ran to its end is there.
    fn check_planned(&self) -> Result<(), MergeError> {
        for (i, p) in self.parts.iter().enumerate() {
            let (Some(planned), Some(summary)) = (&p.planned, &p.summary) else {
                continue;
            };
            // A shard stopped early (max-fail, a budget, Ctrl-C, a crash) ran fewer cases
            // and says so; its state is not PASS whatever the cases it has.
            if summary.end.stop != Stop::Completed || summary.end.crashed > 0 {
                continue;
            }
            let mut missing: Vec<&str> = planned
                .iter()
                .filter(|id| self.seen.get(id.as_str()) != Some(&i))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                missing.sort_unstable();
                let n = missing.len();
                let mut named = missing[..n.min(3)].join(", ");
                if n > 3 {
                    named.push_str(&format!(" and {} more", n - 3));
                }
                return Err(MergeError::CasesMissing(
                    label(p),
                    p.source.clone(),
                    n,
                    named,
                ));
            }
        }
        Ok(())
    }

    /// Every shard's cases are in: the merged summary (the state decided once, over all of
    /// them) and when the last shard finished.
    pub fn finish(self) -> Result<(Summary, String), MergeError> {
        self.check_planned()?;
        for (i, p) in self.parts.iter().enumerate() {
            let counted = p.summary.as_ref().map_or(0, |s| s.cases);
            if self.taken[i] != counted {
                return Err(MergeError::Incomplete(
                    label(p),
                    p.source.clone(),
                    self.taken[i],
                    counted,
                ));
            }
        }
        let end = RunEnd::combine(
            self.parts
                .iter()
                .filter_map(|p| p.summary.as_ref().map(|s| &s.end)),
        );
        let last = self
            .parts
            .iter()
            .max_by_key(|p| p.finished_ms)
            .expect("at least one shard");
        let duration = self
            .parts
            .iter()
            .map(|p| {
                (p.started_ms - self.started_ms).max(0) as u64
                    + p.summary.as_ref().map_or(0, |s| s.duration_ms)
            })
            .max()
            .unwrap_or(0);
        // Hold-out cases are not in the shards' event streams, only in their slice counts.
        let mut fold = self.fold;
        for s in self.parts.iter().filter_map(|p| p.summary.as_ref()) {
            fold.add_holdout_slices(&s.holdout);
        }
        let summary = fold.finish(&self.packs, &end, duration);
        Ok((summary, last.finished_at.clone().unwrap_or_default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(index: u32, total: u32, cases: usize, packs: &[&str]) -> ShardPart {
        let mut manifest: RunManifest = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "run_id": format!("r-shard{index}of{total}"),
            "gauntlet_version": "0", "started_at": format!("t{index}"), "command": "run",
            "suites": [{"name": "s", "path": "s.yaml", "sha256": "ab", "cases": 4}],
            "target": {"kind": "fake", "label": "fake:safe"}, "k": 1, "seed": 0,
            "planned_cases": cases, "evidence_level": "offline", "side_effects": "simulated",
            "dataset_revision": "-", "filters": [format!("shard {index}/{total}")],
            "shard": {"index": index, "total": total, "run": "r"}
        }))
        .expect("manifest");
        manifest.packs = Some(PackRequirements {
            required: packs.iter().map(|p| (*p).to_owned()).collect(),
            ..PackRequirements::default()
        });
        let mut summary = SummaryBuilder::new().finish(
            &PackRequirements::default(),
            &RunEnd::default(),
            10 * u64::from(index),
        );
        summary.cases = cases;
        ShardPart {
            source: format!("r-shard{index}of{total}"),
            manifest,
            summary: Some(summary),
            started_ms: 1000 + i64::from(index),
            finished_ms: 2000 + i64::from(index),
            finished_at: Some(format!("f{index}")),
            planned: None,
        }
    }

    /// A case with one completed trial whose one check passed (or failed).
    fn graded(id: &str, pack: &str, passed: bool) -> CaseResult {
        use crate::plan::SuiteContext;
        use crate::result::{Outcome, TrialResult};
        use crate::rubric::Dimension;
        use crate::verdict::Verdict;
        let c: crate::suite::Case =
            serde_json::from_value(serde_json::json!({"id": id, "input": "x", "pack": pack}))
                .expect("case");
        let v = if passed {
            Verdict::pass(
                "contains",
                "contains".into(),
                Dimension::Outcome,
                "ok".into(),
            )
        } else {
            Verdict::fail(
                "contains",
                "contains".into(),
                Dimension::Outcome,
                0,
                "no".into(),
            )
        };
        let t = TrialResult::new(
            &c,
            0,
            Outcome::Completed,
            Default::default(),
            vec![v],
            None,
            1,
        );
        let ctx = SuiteContext {
            name: "s".into(),
            ..SuiteContext::default()
        };
        CaseResult::combine(crate::result::CaseMeta::of(&c, &ctx), vec![t])
    }

    fn case(id: &str, pack: &str) -> CaseResult {
        graded(id, pack, true)
    }

    #[test]
    fn missing_duplicated_and_foreign_shards_are_named() {
        let err = |parts| ShardMerge::new(parts, "r".into()).err().expect("an error");
        assert_eq!(
            err(vec![part(1, 3, 1, &[]), part(3, 3, 1, &[])]),
            MergeError::Missing("2".into(), 3, "1/3, 3/3".into())
        );
        assert_eq!(
            err(vec![
                part(2, 2, 1, &[]),
                part(1, 2, 1, &[]),
                part(2, 2, 1, &[])
            ]),
            MergeError::Duplicate("2/2".into(), "r-shard2of2".into(), "r-shard2of2".into())
        );
        assert!(matches!(
            err(vec![part(1, 2, 1, &[]), part(2, 3, 1, &[])]),
            MergeError::Counts(..)
        ));
        let mut other = part(2, 2, 1, &[]);
        other.manifest.suites[0].sha256 = "cd".into();
        assert!(matches!(
            err(vec![part(1, 2, 1, &[]), other]),
            MergeError::Mismatch(_, _, "suites (names or contents)")
        ));
        let mut open = part(2, 2, 1, &[]);
        open.summary = None;
        assert_eq!(
            err(vec![part(1, 2, 1, &[]), open]),
            MergeError::Unfinished("2/2".into(), "r-shard2of2".into())
        );
    }

    #[test]
    fn packs_are_checked_over_the_union_and_a_case_counts_once() {
        let parts = vec![
            part(1, 2, 1, &["smoke", "refusal"]),
            part(2, 2, 1, &["smoke", "refusal"]),
        ];
        let mut m = ShardMerge::new(parts.clone(), "r".into()).expect("merge");
        m.add(0, &case("a", "smoke")).expect("a");
        assert!(matches!(
            m.add(1, &case("a", "smoke")),
            Err(MergeError::DuplicateCase(..))
        ));
        m.add(1, &case("b", "refusal")).expect("b");
        let (summary, finished) = m.finish().expect("finish");
        assert!(summary.missing_packs.is_empty(), "{:?}", summary.reasons);
        assert_eq!(summary.cases, 2);
        assert_eq!(finished, "f2");
        assert_eq!(
            summary.duration_ms, 21,
            "the last shard started 1 ms later and ran 20"
        );
        // Without the refusal shard's case, the union lacks the pack.
        let mut m = ShardMerge::new(parts, "r".into()).expect("merge");
        m.add(0, &case("a", "smoke")).expect("a");
        m.add(1, &case("b", "smoke")).expect("b");
        let (summary, _) = m.finish().expect("finish");
        assert_eq!(summary.missing_packs, ["refusal"]);
        assert_eq!(summary.status, crate::score::Status::Inconclusive);
    }

    #[test]
    fn a_shard_whose_cases_are_not_all_there_is_refused() {
        let mut m = ShardMerge::new(vec![part(1, 1, 2, &[])], "r".into()).expect("merge");
        m.add(0, &case("a", "smoke")).expect("a");
        assert!(matches!(m.finish(), Err(MergeError::Incomplete(..))));
    }

    #[test]
    fn a_case_is_counted_as_its_verdicts_decide_not_as_its_status_says() {
        let mut m = ShardMerge::new(vec![part(1, 1, 2, &[])], "r".into()).expect("merge");
        let honest = m.add(0, &case("a", "smoke")).expect("a");
        assert_eq!(honest.result.status, crate::result::CaseStatus::Pass);
        assert!(honest.corrected.is_none());
        // A report edited to say PASS over a failed check.
        let mut forged = graded("b", "smoke", false);
        assert_eq!(forged.status, crate::result::CaseStatus::Fail);
        forged.status = crate::result::CaseStatus::Pass;
        forged.trials[0].status = crate::result::CaseStatus::Pass;
        forged.passed_trials = 1;
        let taken = m.add(0, &forged).expect("b");
        assert_eq!(taken.result.status, crate::result::CaseStatus::Fail);
        assert!(
            taken
                .corrected
                .as_deref()
                .is_some_and(|w| w.contains("recorded PASS")),
            "{:?}",
            taken.corrected
        );
        let (summary, _) = m.finish().expect("finish");
        assert_eq!((summary.passed, summary.failed), (1, 1));
        assert_ne!(summary.status, crate::score::Status::Pass);
    }

    #[test]
    fn a_planned_case_cannot_be_removed_and_an_unplanned_one_cannot_be_added() {
        let planned = |ids: &[&str]| Some(ids.iter().map(|i| (*i).to_owned()).collect());
        // The shard's report lost case `b` and its summary was edited to count one case.
        let mut p = part(1, 1, 1, &[]);
        p.planned = planned(&["a", "b"]);
        let mut m = ShardMerge::new(vec![p.clone()], "r".into()).expect("merge");
        m.add(0, &case("a", "smoke")).expect("a");
        assert_eq!(
            m.finish().err(),
            Some(MergeError::CasesMissing(
                "1/1".into(),
                "r-shard1of1".into(),
                1,
                "b".into()
            ))
        );
        let mut m = ShardMerge::new(vec![p.clone()], "r".into()).expect("merge");
        assert!(matches!(
            m.add(0, &case("z", "smoke")),
            Err(MergeError::Unplanned(..))
        ));
        // A shard stopped early says so, and its state is not PASS: fewer cases are expected.
        let mut stopped = p;
        if let Some(s) = stopped.summary.as_mut() {
            s.end.stop = Stop::Cancelled;
        }
        let mut m = ShardMerge::new(vec![stopped], "r".into()).expect("merge");
        m.add(0, &case("a", "smoke")).expect("a");
        let (summary, _) = m.finish().expect("finish");
        assert_ne!(summary.status, crate::score::Status::Pass);
    }
}
