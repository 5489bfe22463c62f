//! Merging the shards of a sharded run ([`merge`]), from the store or from their
//! report.json files, into one run: a [`MergeRequest`] in, a [`Merged`] out. The checks and
//! the fold are `gauntlet_core::merge`'s; this module reads the shards, streams their cases
//! through it, and hands the merged stream to the same reporters as a run (the caller's
//! view, the report writers, the store) through one [`Delivery`], so that the merged run is
//! stored, replayed and compared like any other.
//!
//! Each shard is held to its suites: they are planned again ([`planned::planned_ids`]) and
//! every case they plan for a shard must be in its report, once, and no other.

use std::path::{Path, PathBuf};

use gauntlet_core::event::{EventKind, Reporter, RunEvent, RunManifest};
use gauntlet_core::merge::{MergeError, ShardMerge, ShardPart};
use gauntlet_core::result::CaseResult;
use gauntlet_core::summary::Summary;
use gauntlet_runner::Delivery;
use gauntlet_store::{Store, StoreError};

use crate::error::{EngineError, store_err};
use crate::run::report_writers;
use crate::setup::new_run_id;

mod planned;

/// A merge of shards.
pub struct MergeRequest {
    /// Stored runs (a shard, or the id the shards share); used when `reports` is empty.
    pub runs: Vec<String>,
    /// Shards' report.json files.
    pub reports: Vec<PathBuf>,
    /// `--run-id`, else the id the shards share, else a fresh one.
    pub run_id: Option<String>,
    /// The report folder, unless `--no-reports`.
    pub out: Option<PathBuf>,
    /// The store the shards are read from and the merged run written to (`None`: merging
    /// report files with `--no-store`).
    pub store: Option<Store>,
    /// The terminal view, the first reporter.
    pub view: Option<Box<dyn Reporter>>,
}

/// What a merge did.
pub struct Merged {
    /// The merged run's id.
    pub run_id: String,
    /// How many shards went in.
    pub shards: usize,
    /// Whether the merged run was stored.
    pub stored: bool,
    /// The merged summary.
    pub summary: Summary,
    /// Errors of reporters that could not record the merged run: when any, its state must
    /// not be shown.
    pub reporter_errors: Vec<String>,
}

/// Where one shard is read from.
enum Source {
    /// A run in the store.
    Stored(String),
    /// A report.json file.
    File(PathBuf),
}

fn merge_err(e: MergeError) -> EngineError {
    EngineError::usage(e.to_string(), e.hint())
}

/// Milliseconds since the epoch of an RFC 3339 time (0 if it does not read).
fn epoch_ms(at: &str) -> i64 {
    at.parse::<jiff::Timestamp>()
        .map_or(0, |t| t.as_millisecond())
}

pub fn merge(req: MergeRequest) -> Result<Merged, EngineError> {
    let from_files = !req.reports.is_empty();
    let mut store = req.store;
    let mut sources = Vec::new();
    let mut parts = Vec::new();
    if from_files {
        for path in &req.reports {
            let head = read_report(path, None)?;
            let (Some(manifest), summary) = (head.manifest, head.summary) else {
                return Err(not_a_report(path, "it has no manifest"));
            };
            parts.push(ShardPart {
                source: path.display().to_string(),
                started_ms: epoch_ms(&manifest.started_at),
                finished_ms: head.finished_at.as_deref().map_or(0, epoch_ms),
                finished_at: head.finished_at,
                manifest,
                summary,
                planned: None,
            });
            sources.push(Source::File(path.clone()));
        }
    } else {
        let store = store.as_mut().expect("a store");
        for spec in &req.runs {
            for id in shard_runs(store, spec)? {
                let manifest = store.manifest(&id).map_err(store_err)?;
                let finished = store.summary(&id).map_err(store_err)?;
                parts.push(ShardPart {
                    source: id.clone(),
                    started_ms: epoch_ms(&manifest.started_at),
                    finished_ms: finished.as_ref().map_or(0, |(_, at)| epoch_ms(at)),
                    finished_at: finished.as_ref().map(|(_, at)| at.clone()),
                    summary: finished.map(|(s, _)| s),
                    manifest,
                    planned: None,
                });
                sources.push(Source::Stored(id));
            }
        }
    }
    // The merged run takes the id its shards share, unless told otherwise.
    let shared: Option<String> = parts
        .first()
        .and_then(|p| p.manifest.shard.as_ref()?.run.clone())
        .filter(|g| {
            parts
                .iter()
                .all(|p| p.manifest.shard.as_ref().and_then(|s| s.run.as_ref()) == Some(g))
        });
    let run_id = req.run_id.clone().or(shared).unwrap_or_else(new_run_id);
    let mut notes = Vec::new();
    for p in &mut parts {
        match planned::planned_ids(&p.manifest, &p.source, store.as_ref().map(Store::location))? {
            Ok(ids) => p.planned = Some(ids),
            Err(note) => notes.push(note),
        }
    }
    // Sources are matched to parts by position; the merge sorts them by shard.
    let keyed: Vec<(String, Source)> = parts
        .iter()
        .map(|p| p.source.clone())
        .zip(sources)
        .collect();
    let mut merge = ShardMerge::new(parts, run_id.clone()).map_err(merge_err)?;
    if let Some(st) = store.as_mut() {
        make_room(st, &run_id)?;
    }

    let mut reporters: Vec<Box<dyn Reporter>> = Vec::new();
    reporters.extend(req.view);
    if let Some(out) = &req.out {
        reporters.extend(report_writers(out, None)?);
    }
    if let Some(st) = &store {
        reporters.push(Box::new(st.reporter().map_err(store_err)?));
    }
    let mut delivery = Delivery::start(reporters);
    delivery.push(RunEvent::new(
        0,
        EventKind::RunStarted {
            manifest: Box::new(merge.manifest().clone()),
        },
    ));
    for message in notes {
        delivery.push(RunEvent::new(0, EventKind::Warning { message }));
    }
    let streamed = stream_shards(&mut merge, &keyed, store.as_mut(), &mut delivery);
    let finished = streamed.and_then(|()| merge.finish().map_err(merge_err));
    let (summary, finished_at) = match finished {
        Ok(x) => x,
        Err(e) => {
            // Nothing half-merged stays behind: the reports never complete, and the run
            // is taken out of the store again.
            delivery.finish();
            if let Some(st) = store.as_mut() {
                let _ = st.remove_run(&run_id);
            }
            return Err(e);
        }
    };
    delivery.push(RunEvent::new(
        summary.duration_ms,
        EventKind::RunFinished {
            summary: Box::new(summary.clone()),
            finished_at,
        },
    ));
    let reporter_errors = delivery.finish();
    Ok(Merged {
        run_id,
        shards: keyed.len(),
        stored: store.is_some(),
        summary,
        reporter_errors,
    })
}

/// The shard runs a reference stands for: a run itself, or every run stored as a shard of
/// the id it shares (`ID-shardIofN`).
fn shard_runs(store: &mut Store, spec: &str) -> Result<Vec<String>, EngineError> {
    if store.exists(spec).map_err(store_err)? {
        let m = store.manifest(spec).map_err(store_err)?;
        if m.shard.is_some() {
            return Ok(vec![spec.to_owned()]);
        }
    }
    let shards = store
        .runs_starting_with(&format!("{spec}-shard"))
        .map_err(store_err)?;
    if !shards.is_empty() {
        return Ok(shards);
    }
    Ok(vec![store.resolve(spec).map_err(store_err)?])
}

/// A merged run is written under its id once; merging the same shards again (a retried CI
/// step) replaces the earlier merge, anything else under that id is left alone.
fn make_room(store: &mut Store, run_id: &str) -> Result<(), EngineError> {
    if !store.exists(run_id).map_err(store_err)? {
        return Ok(());
    }
    let earlier = store.manifest(run_id).map_err(store_err)?;
    if earlier.notes.contains_key("merged_from") {
        return store.remove_run(run_id).map_err(store_err);
    }
    Err(EngineError::usage(
        format!("run {run_id} is already in the store and is not a merge"),
        "pass --run-id with another id for the merged run",
    ))
}

/// Streams every shard's warnings and cases, in shard order, through the merge into the
/// delivery.
fn stream_shards(
    merge: &mut ShardMerge,
    keyed: &[(String, Source)],
    mut store: Option<&mut Store>,
    delivery: &mut Delivery,
) -> Result<(), EngineError> {
    for part in 0..merge.parts().len() {
        let name = merge.parts()[part].source.clone();
        let source = &keyed
            .iter()
            .find(|(n, _)| *n == name)
            .expect("every part has its source")
            .1;
        let offset = merge.offset_ms(part);
        let mut failed: Option<MergeError> = None;
        let mut take = |ev: RunEvent, merge: &mut ShardMerge| -> Result<(), StoreError> {
            let at = ev.elapsed_ms + offset;
            match ev.kind {
                EventKind::Warning { message } => delivery.push(RunEvent::new(
                    at,
                    EventKind::Warning {
                        message: merge.warning(part, &message),
                    },
                )),
                EventKind::CaseFinished { result } => {
                    let taken = match merge.add(part, &result) {
                        Ok(taken) => taken,
                        Err(e) => {
                            failed = Some(e);
                            // Stops the read; the merge error is what is reported.
                            return Err(StoreError::Record(String::new()));
                        }
                    };
                    if let Some(message) = taken.corrected {
                        delivery.push(RunEvent::new(
                            at,
                            EventKind::Warning {
                                message: merge.warning(part, &message),
                            },
                        ));
                    }
                    delivery.push(RunEvent::new(
                        at,
                        EventKind::CaseFinished {
                            result: Box::new(taken.result),
                        },
                    ));
                }
                // The merged stream has one start and one end; its cases carry their trials.
                _ => {}
            }
            Ok(())
        };
        let read = match source {
            Source::Stored(id) => store
                .as_deref_mut()
                .expect("a store")
                .replay(id, |ev| take(ev, merge))
                .map_err(store_err),
            Source::File(path) => {
                let warnings = read_report(path, None)?.warnings;
                let mut result = Ok(());
                for w in warnings {
                    if let Err(e) = take(RunEvent::new(0, EventKind::Warning { message: w }), merge)
                    {
                        result = Err(e);
                        break;
                    }
                }
                match result {
                    Ok(()) => read_report(
                        path,
                        Some(&mut |c: CaseResult| {
                            take(
                                RunEvent::new(
                                    0,
                                    EventKind::CaseFinished {
                                        result: Box::new(c),
                                    },
                                ),
                                merge,
                            )
                            .map_err(|e| e.to_string())
                        }),
                    )
                    .map(|_| ()),
                    Err(e) => Err(store_err(e)),
                }
            }
        };
        if let Some(e) = failed {
            return Err(merge_err(e));
        }
        read?;
    }
    Ok(())
}

/// What a report.json holds besides its cases.
#[derive(Default)]
struct ReportHead {
    manifest: Option<RunManifest>,
    summary: Option<Summary>,
    finished_at: Option<String>,
    warnings: Vec<String>,
}

type CaseSink<'a> = &'a mut dyn FnMut(CaseResult) -> Result<(), String>;

fn not_a_report(path: &Path, why: impl std::fmt::Display) -> EngineError {
    EngineError::usage(
        format!("`{}` is not a gauntlet report.json: {why}", path.display()),
        "pass the report.json each shard wrote (see --out)",
    )
}

/// Reads a report.json as it streams: its manifest, summary and warnings, and each case
/// handed to `cases` as it is read (skipped without one), so that a large report is never
/// held whole.
fn read_report(path: &Path, cases: Option<CaseSink<'_>>) -> Result<ReportHead, EngineError> {
    use serde::Deserializer;
    let file = std::fs::File::open(path).map_err(|e| {
        EngineError::usage(
            format!("cannot read `{}`: {e}", path.display()),
            "pass the report.json each shard wrote (see --out)",
        )
    })?;
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::new(file));
    de.deserialize_map(report::Head(cases))
        .map_err(|e| not_a_report(path, e))
}

mod report {
    //! The streaming visitors behind `read_report`.

    use serde::de::{DeserializeSeed, Error, IgnoredAny, MapAccess, SeqAccess, Visitor};

    use super::{CaseSink, ReportHead};
    use gauntlet_core::result::CaseResult;

    pub(super) struct Head<'a>(pub(super) Option<CaseSink<'a>>);

    impl<'de> Visitor<'de> for Head<'_> {
        type Value = ReportHead;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a gauntlet report")
        }

        fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<ReportHead, A::Error> {
            let mut head = ReportHead::default();
            while let Some(key) = map.next_key::<String>()? {
                match key.as_str() {
                    "manifest" => head.manifest = Some(map.next_value()?),
                    "summary" => head.summary = map.next_value()?,
                    "finished_at" => head.finished_at = map.next_value()?,
                    "warnings" => head.warnings = map.next_value()?,
                    "cases" => map.next_value_seed(Cases(self.0.as_deref_mut()))?,
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(head)
        }
    }

    struct Cases<'a, 'b>(Option<&'a mut (dyn FnMut(CaseResult) -> Result<(), String> + 'b)>);

    impl<'de> DeserializeSeed<'de> for Cases<'_, '_> {
        type Value = ();

        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_seq(self)
        }
    }

    impl<'de> Visitor<'de> for Cases<'_, '_> {
        type Value = ();

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a list of cases")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            match self.0 {
                Some(sink) => {
                    while let Some(c) = seq.next_element::<CaseResult>()? {
                        sink(c).map_err(A::Error::custom)?;
                    }
                }
                None => while seq.next_element::<IgnoredAny>()?.is_some() {},
            }
            Ok(())
        }
    }
}
