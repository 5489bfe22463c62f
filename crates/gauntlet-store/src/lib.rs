//! The run store: [`Store`], one interface over two backends, and [`StoreReporter`], the
//! event consumer that writes a run as it happens.
//!
//! Where a store is comes as a [`StoreLocation`]: a file path for the embedded SQLite store
//! (`.gauntlet/runs.db` by default; [`sqlite`]), or a `postgres://` URL for a team store on a
//! PostgreSQL server (`pg`, behind the `postgres` cargo feature: its client is a large share
//! of a cold build that most users never need; a build without it refuses such a URL with
//! [`StoreError::NoPostgres`], which says how to get it). Every query is written once, here,
//! against the [`Db`] seam; each backend module owns only what is its own (opening, the
//! schema, damage checks, the SQLite writer's WAL upkeep).
//!
//! Every trial is written as soon as its event arrives and committed when the runner flushes
//! its reporters, at most 25 ms later (one transaction per flush: durable against a killed
//! process, cheap at tens of thousands of trials per second). A run that was killed has its
//! manifest and its finished trials in the store, so `--resume` continues it without
//! repeating or duplicating a trial. A finished case is one row holding its whole result,
//! trials and traces included, serialized exactly as `report.json` does, so re-rendering
//! reproduces it byte for byte. With k > 1, each trial is also written as it finishes (keyed
//! by case and trial index) and those rows are folded into the case row when its last trial
//! finishes. Each run has one writer, and every key of its stream starts with its run id, so
//! any number of runs (the shards of one sharded run among them) write one store at once.

pub mod cache;
pub mod compare;
pub mod db;
#[cfg(feature = "postgres")]
pub mod pg;
pub mod sqlite;
#[cfg(feature = "postgres")]
#[doc(hidden)]
pub mod testing;

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use gauntlet_core::event::{EventKind, ReportError, Reporter, RunEvent, RunManifest};
use gauntlet_core::result::{CaseResult, TrialResult};
use gauntlet_core::summary::Summary;

pub use crate::db::{Db, Dialect, Row, Value};
#[cfg(feature = "postgres")]
pub use crate::pg::PgLocation;
pub use crate::sqlite::{CHECKPOINT_EVERY, WAL_RESTART_BYTES};

/// The default location of the store, relative to the working folder.
pub const DEFAULT_STORE: &str = ".gauntlet/runs.db";

/// The schema version (SQLite's `PRAGMA user_version`, PostgreSQL's `gauntlet_schema`).
/// Version 2 records the event stream (each event's position and elapsed time), so that a
/// stored run replays as it was emitted.
pub const SCHEMA_VERSION: i64 = 2;

/// Errors from the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed.
    #[error("run store: {0}")]
    Sql(#[from] rusqlite::Error),
    /// PostgreSQL failed.
    #[cfg(feature = "postgres")]
    #[error("run store: {}", pg_message(.0))]
    Postgres(#[from] postgres::Error),
    /// A `postgres://` store was asked of a build without the `postgres` feature.
    #[error(
        "run store: this gauntlet was built without PostgreSQL support, so it cannot open a `postgres://` store"
    )]
    NoPostgres,
    /// A stored document did not parse.
    #[error("run store: a stored record is not valid: {0}")]
    Json(#[from] serde_json::Error),
    /// A stored row is not what the store writes.
    #[error("run store: a stored record is not valid: {0}")]
    Record(String),
    /// The location names no store this gauntlet can open.
    #[error("run store location: {0}")]
    Location(String),
    /// Creating the folder failed.
    #[error("run store: failed to create `{path}`: {source}")]
    Io {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// No run matches.
    #[error("no run matches `{0}`")]
    NoSuchRun(String),
    /// Several runs match a prefix.
    #[error("`{0}` matches several runs: {1}")]
    Ambiguous(String, String),
    /// A new run's id is taken.
    #[error("run {0} is already in the store")]
    RunExists(String),
    /// The store was written by a newer gauntlet.
    #[error("the run store has schema version {0}; this gauntlet reads up to {SCHEMA_VERSION}")]
    TooNew(i64),
    /// The database is damaged.
    #[error("the run store `{path}` is damaged: {detail}")]
    Damaged {
        /// The store, as it may be shown.
        path: String,
        /// What the check found.
        detail: String,
    },
}

/// A PostgreSQL error with the server's message or the cause of a failed connection.
#[cfg(feature = "postgres")]
fn pg_message(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("PostgreSQL: {}: {}", db.severity(), db.message());
    }
    match std::error::Error::source(e) {
        Some(cause) => format!("PostgreSQL: {e}: {cause}"),
        None => format!("PostgreSQL: {e}"),
    }
}

impl StoreError {
    /// What the user can do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            StoreError::NoSuchRun(_) | StoreError::Ambiguous(..) => {
                "list runs with `gauntlet runs list`"
            }
            StoreError::RunExists(_) => {
                "give the run another --run-id, or continue it with `gauntlet run --resume RUN`"
            }
            StoreError::TooNew(_) => "use the gauntlet that wrote this store, or another --store",
            StoreError::Damaged { .. } => {
                "nothing more is written into it; `gauntlet runs check` shows every problem. Move the file aside (new runs start a new store), or restore a copy; `sqlite3 FILE .recover` can save what is readable"
            }
            StoreError::Sql(e) if sqlite::is_corrupt(e) => {
                "nothing more is written into it; `gauntlet runs check` shows every problem. Move the file aside (new runs start a new store), or restore a copy; `sqlite3 FILE .recover` can save what is readable"
            }
            StoreError::NoPostgres => NO_POSTGRES_HINT,
            // Not reached, or not let in (SQLSTATE class 28), or no such database (3D000).
            #[cfg(feature = "postgres")]
            StoreError::Postgres(e)
                if e.as_db_error().is_none_or(|d| {
                    let code = d.code().code();
                    code.starts_with("28") || code == "3D000"
                }) =>
            {
                "check the server is up and the URL (or PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE)"
            }
            StoreError::Location(_) => {
                "--store (or `store:` in gauntlet.yaml) takes a file path or postgres://USER@HOST:PORT/DATABASE"
            }
            _ => "check --store (or `store:` in gauntlet.yaml)",
        }
    }
}

/// How to get a gauntlet that opens `postgres://` stores ([`StoreError::NoPostgres`]).
pub const NO_POSTGRES_HINT: &str = "build gauntlet with the `postgres` feature: `cargo install --locked --path crates/gauntlet --features postgres` (or `cargo build --release --features postgres`); the release binaries and the container image have it. Without it, use an SQLite file (the default `.gauntlet/runs.db`)";

/// Where a store is.
#[derive(Debug, Clone)]
pub enum StoreLocation {
    /// An SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL database.
    #[cfg(feature = "postgres")]
    Postgres(Box<PgLocation>),
}

impl StoreLocation {
    /// A `postgres://` (or `postgresql://`) URL, else a file path.
    pub fn parse(spec: &str) -> Result<StoreLocation, StoreError> {
        if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
            #[cfg(feature = "postgres")]
            return Ok(StoreLocation::Postgres(Box::new(PgLocation::parse(spec)?)));
            #[cfg(not(feature = "postgres"))]
            return Err(StoreError::NoPostgres);
        } else {
            Ok(StoreLocation::Sqlite(PathBuf::from(spec)))
        }
    }

    /// Whether a store may be there already: an SQLite file exists; a server is asked when
    /// it is opened.
    pub fn exists(&self) -> bool {
        match self {
            StoreLocation::Sqlite(p) => p.exists(),
            #[cfg(feature = "postgres")]
            StoreLocation::Postgres(_) => true,
        }
    }

    /// The file, for an SQLite store.
    pub fn path(&self) -> Option<&Path> {
        match self {
            StoreLocation::Sqlite(p) => Some(p),
            #[cfg(feature = "postgres")]
            StoreLocation::Postgres(_) => None,
        }
    }

    /// Secrets the location holds, by name, for the run's redactor.
    pub fn secrets(&self) -> Vec<(String, String)> {
        match self {
            StoreLocation::Sqlite(_) => Vec::new(),
            #[cfg(feature = "postgres")]
            StoreLocation::Postgres(p) => p.secrets(),
        }
    }

    fn open_db(&self, checked: bool) -> Result<Box<dyn Db>, StoreError> {
        Ok(match self {
            StoreLocation::Sqlite(p) if checked => Box::new(sqlite::SqliteDb::open(p)?),
            StoreLocation::Sqlite(p) => Box::new(sqlite::SqliteDb::open_unchecked(p)?),
            #[cfg(feature = "postgres")]
            StoreLocation::Postgres(p) => Box::new(pg::PgDb::connect(p)?),
        })
    }
}

/// The location as it may be shown (never with a password).
impl fmt::Display for StoreLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreLocation::Sqlite(p) => write!(f, "{}", p.display()),
            #[cfg(feature = "postgres")]
            StoreLocation::Postgres(p) => f.write_str(p.shown()),
        }
    }
}

impl From<&Path> for StoreLocation {
    fn from(p: &Path) -> Self {
        StoreLocation::Sqlite(p.to_path_buf())
    }
}

impl From<&PathBuf> for StoreLocation {
    fn from(p: &PathBuf) -> Self {
        StoreLocation::Sqlite(p.clone())
    }
}

impl From<PathBuf> for StoreLocation {
    fn from(p: PathBuf) -> Self {
        StoreLocation::Sqlite(p)
    }
}

impl From<&StoreLocation> for StoreLocation {
    fn from(l: &StoreLocation) -> Self {
        l.clone()
    }
}

/// One row of `gauntlet runs list`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunRow {
    /// The run id.
    pub run_id: String,
    /// When it started.
    pub started_at: String,
    /// When it finished (None: interrupted or still running).
    pub finished_at: Option<String>,
    /// The command (`run`, `redteam`, `regrade`, `flaky`; a merge keeps its shards').
    pub command: String,
    /// The target label.
    pub target: String,
    /// The state, once finished.
    pub status: Option<String>,
    /// Cases planned.
    pub planned: i64,
    /// Cases stored.
    pub cases: i64,
}

/// What `prune` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PruneReport {
    /// Runs removed, newest first.
    pub removed: Vec<String>,
    /// Store size before (0 where the backend cannot tell).
    pub bytes_before: u64,
    /// Store size after compaction.
    pub bytes_after: u64,
}

/// An open store.
pub struct Store {
    db: Box<dyn Db>,
    location: StoreLocation,
}

/// The tables a run's rows are in.
const RUN_TABLES: [&str; 5] = ["cases", "trials", "warnings", "events", "runs"];

impl Store {
    /// Opens (or creates) the store at `location`.
    ///
    /// An SQLite store is checked on the way in (cheaply, and whole when it is small): a
    /// damaged file is an error, so that nothing reads wrong results from it or writes new
    /// runs into it.
    pub fn open(location: impl Into<StoreLocation>) -> Result<Store, StoreError> {
        let location = location.into();
        Ok(Store {
            db: location.open_db(true)?,
            location,
        })
    }

    /// Opens the store without checking it (for `gauntlet runs check`, which reports every
    /// problem instead of stopping at the first).
    pub fn open_unchecked(location: impl Into<StoreLocation>) -> Result<Store, StoreError> {
        let location = location.into();
        Ok(Store {
            db: location.open_db(false)?,
            location,
        })
    }

    /// Another connection to the same store (to read on another thread).
    pub fn reopen(&self) -> Result<Store, StoreError> {
        Store::open_unchecked(&self.location)
    }

    /// Where the store is.
    pub fn location(&self) -> &StoreLocation {
        &self.location
    }

    /// The full check behind `gauntlet runs check`: every problem found (up to 100), or none.
    pub fn check(&mut self) -> Result<Vec<String>, StoreError> {
        let mut problems = self.db.check()?;
        if problems.is_empty() {
            // Every stored record must read back.
            let mut bad = |what: String| {
                if problems.len() < 100 {
                    problems.push(what);
                }
            };
            self.db.query(
                "SELECT run_id, manifest, summary FROM runs ORDER BY run_id",
                &[],
                &mut |r| {
                    let id = r.string(0)?;
                    if let Err(e) = serde_json::from_str::<RunManifest>(r.text(1)?.unwrap_or("")) {
                        bad(format!("run {id}: its manifest does not read: {e}"));
                    }
                    if let Some(s) = r.text(2)?
                        && let Err(e) = serde_json::from_str::<Summary>(s)
                    {
                        bad(format!("run {id}: its summary does not read: {e}"));
                    }
                    Ok(())
                },
            )?;
        }
        Ok(problems)
    }

    /// A reporter that writes a new run's events into this store (on its own connection, so
    /// it can live on the reporter thread). Its run id must not be in the store yet.
    pub fn reporter(&self) -> Result<StoreReporter, StoreError> {
        self.writer(false)
    }

    /// A reporter that continues a stored run (`--resume`): its row and its cases are kept,
    /// its manifest is replaced.
    pub fn resume_reporter(&self) -> Result<StoreReporter, StoreError> {
        self.writer(true)
    }

    fn writer(&self, resume: bool) -> Result<StoreReporter, StoreError> {
        let db: Box<dyn Db> = match &self.location {
            StoreLocation::Sqlite(p) => Box::new(sqlite::SqliteDb::writer(p)?),
            #[cfg(feature = "postgres")]
            StoreLocation::Postgres(p) => Box::new(pg::PgDb::connect(p)?),
        };
        Ok(StoreReporter::new(db, resume))
    }

    #[cfg(test)]
    fn reporter_tuned(
        &self,
        every: std::time::Duration,
        restart_bytes: i64,
    ) -> Result<StoreReporter, StoreError> {
        let p = self.location.path().expect("an SQLite store");
        let db = sqlite::SqliteDb::writer_tuned(p, every, restart_bytes)?;
        Ok(StoreReporter::new(Box::new(db), false))
    }

    /// Runs, newest first.
    pub fn runs(&mut self, limit: usize) -> Result<Vec<RunRow>, StoreError> {
        self.db.all(
            "SELECT r.run_id, r.started_at, r.finished_at, r.command, r.target, r.status, r.planned,
                    (SELECT COUNT(*) FROM cases c WHERE c.run_id = r.run_id)
             FROM runs r ORDER BY r.started_at DESC, r.run_id DESC LIMIT ?1",
            &[Value::Int(limit.min(i64::MAX as usize) as i64)],
            |r| {
                Ok(RunRow {
                    run_id: r.string(0)?,
                    started_at: r.string(1)?,
                    finished_at: r.text(2)?.map(str::to_owned),
                    command: r.string(3)?,
                    target: r.string(4)?,
                    status: r.text(5)?.map(str::to_owned),
                    planned: r.count(6)?,
                    cases: r.count(7)?,
                })
            },
        )
    }

    /// Whether a run with exactly this id is stored.
    pub fn exists(&mut self, run: &str) -> Result<bool, StoreError> {
        Ok(self
            .db
            .first(
                "SELECT 1 FROM runs WHERE run_id = ?1",
                &[run.into()],
                |_| Ok(()),
            )?
            .is_some())
    }

    /// Ids of the runs whose id starts with `prefix` (exactly, case and all), in order.
    pub fn runs_starting_with(&mut self, prefix: &str) -> Result<Vec<String>, StoreError> {
        self.db.all(
            "SELECT run_id FROM runs
             WHERE substr(run_id, 1, length(CAST(?1 AS TEXT))) = CAST(?1 AS TEXT) ORDER BY run_id",
            &[prefix.into()],
            |r| r.string(0),
        )
    }

    /// Resolves a run reference: a full id, a unique prefix (of any case), `latest`, or a
    /// baseline name.
    pub fn resolve(&mut self, spec: &str) -> Result<String, StoreError> {
        if spec == "latest" {
            return self
                .db
                .first(
                    "SELECT run_id FROM runs ORDER BY started_at DESC, run_id DESC LIMIT 1",
                    &[],
                    |r| r.string(0),
                )?
                .ok_or_else(|| StoreError::NoSuchRun(spec.into()));
        }
        if self.exists(spec)? {
            return Ok(spec.to_owned());
        }
        if let Some(id) = self.baseline(spec)? {
            return Ok(id);
        }
        let ids = self.db.all(
            "SELECT run_id FROM runs
             WHERE lower(substr(run_id, 1, length(CAST(?1 AS TEXT)))) = lower(CAST(?1 AS TEXT))
             ORDER BY run_id LIMIT 6",
            &[spec.into()],
            |r| r.string(0),
        )?;
        match ids.len() {
            0 => Err(StoreError::NoSuchRun(spec.into())),
            1 => Ok(ids.into_iter().next().expect("one")),
            _ => Err(StoreError::Ambiguous(spec.into(), ids.join(", "))),
        }
    }

    /// The manifest of a run.
    pub fn manifest(&mut self, run: &str) -> Result<RunManifest, StoreError> {
        let text = self
            .db
            .first(
                "SELECT manifest FROM runs WHERE run_id = ?1",
                &[run.into()],
                |r| r.string(0),
            )?
            .ok_or_else(|| StoreError::NoSuchRun(run.into()))?;
        Ok(serde_json::from_str(&text)?)
    }

    /// The summary of a finished run, and when it finished.
    pub fn summary(&mut self, run: &str) -> Result<Option<(Summary, String)>, StoreError> {
        let row = self.db.first(
            "SELECT summary, finished_at FROM runs WHERE run_id = ?1",
            &[run.into()],
            |r| Ok((r.text(0)?.map(str::to_owned), r.text(1)?.map(str::to_owned))),
        )?;
        match row {
            Some((Some(s), Some(at))) => Ok(Some((serde_json::from_str(&s)?, at))),
            Some(_) => Ok(None),
            None => Err(StoreError::NoSuchRun(run.into())),
        }
    }

    /// Every stored trial of a run, by case id (for resume): the trials of finished cases
    /// and the trials of cases still in progress.
    pub fn trials(&mut self, run: &str) -> Result<HashMap<String, Vec<TrialResult>>, StoreError> {
        let mut out: HashMap<String, Vec<TrialResult>> = HashMap::new();
        self.for_each_case(run, |c| {
            out.insert(c.case.id.clone(), c.trials);
            Ok(())
        })?;
        self.db.query(
            "SELECT case_id, data FROM trials WHERE run_id = ?1 ORDER BY case_id, trial",
            &[run.into()],
            &mut |r| {
                let t: TrialResult = serde_json::from_str(r.text(1)?.unwrap_or(""))?;
                let list = out.entry(r.string(0)?).or_default();
                if !list.iter().any(|x| x.trial == t.trial) {
                    list.push(t);
                }
                Ok(())
            },
        )?;
        Ok(out)
    }

    /// Calls `f` with each case result of a run (trials included) in the order they finished,
    /// one at a time, so that re-rendering a large run stays small.
    pub fn for_each_case(
        &mut self,
        run: &str,
        mut f: impl FnMut(CaseResult) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.db.query(
            "SELECT data FROM cases WHERE run_id = ?1 ORDER BY seq",
            &[run.into()],
            &mut |r| f(serde_json::from_str(r.text(0)?.unwrap_or(""))?),
        )
    }

    /// Opens a finished run again so that `--resume` re-runs the trials that ended in `error`
    /// or `timeout` (a target that went away mid-run, say), and keeps every other trial.
    ///
    /// The re-run trials are removed; returns one message per reopened trial, saying the
    /// fault it had ended in, for the resumed run to record as warnings (so the earlier fault
    /// stays on record next to whatever the new attempt gives). None reopened changes nothing.
    pub fn reopen_failed_trials(&mut self, run: &str) -> Result<Vec<String>, StoreError> {
        use gauntlet_core::result::Outcome;
        let faulted = |t: &TrialResult| matches!(t.outcome, Outcome::Error | Outcome::Timeout);
        let mut cases: Vec<CaseResult> = Vec::new();
        self.for_each_case(run, |c| {
            if c.trials.iter().any(faulted) {
                cases.push(c);
            }
            Ok(())
        })?;
        let loose: Vec<TrialResult> = self.db.all(
            "SELECT data FROM trials WHERE run_id = ?1 AND outcome IN ('error', 'timeout')",
            &[run.into()],
            |r| Ok(serde_json::from_str(r.text(0)?.unwrap_or(""))?),
        )?;
        let mut reopened = Vec::new();
        let mut record = |t: &TrialResult| {
            reopened.push(format!(
                "resume: re-ran {} trial {}, which had ended in {}: {}",
                t.case_id,
                t.trial,
                t.outcome.as_str(),
                t.error.as_deref().unwrap_or("(no message)")
            ));
        };
        for c in &cases {
            c.trials.iter().filter(|t| faulted(t)).for_each(&mut record);
        }
        for t in &loose {
            if !cases.iter().any(|c| c.case.id == t.case_id) {
                record(t);
            }
        }
        if reopened.is_empty() {
            return Ok(reopened);
        }
        self.db.in_transaction(|db| {
            for c in &cases {
                // The case row goes; its good trials go back to the trial table, where resume
                // picks up the trials of unfinished cases.
                db.execute(
                    "DELETE FROM cases WHERE run_id = ?1 AND case_id = ?2",
                    &[run.into(), (&c.case.id).into()],
                )?;
                for t in c.trials.iter().filter(|t| !faulted(t)) {
                    insert_trial(db, run, t)?;
                }
            }
            db.execute(
                "DELETE FROM trials WHERE run_id = ?1 AND outcome IN ('error', 'timeout')",
                &[run.into()],
            )?;
            db.execute(
                "UPDATE runs SET finished_at = NULL, status = NULL, summary = NULL WHERE run_id = ?1",
                &[run.into()],
            )?;
            Ok(())
        })?;
        Ok(reopened)
    }

    /// Replays a stored run's events into `f` as they were emitted: in their original order
    /// (warnings where they came, trials before their case) with their elapsed times. An
    /// interrupted run has no `run_finished` event. Runs stored before the stream was
    /// recorded replay with every warning first and elapsed times of 0.
    pub fn replay(
        &mut self,
        run: &str,
        mut f: impl FnMut(RunEvent) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let manifest = self.manifest(run)?;
        let recorded = self
            .db
            .first(
                "SELECT EXISTS (SELECT 1 FROM events WHERE run_id = ?1)
                    AND NOT EXISTS (SELECT 1 FROM cases WHERE run_id = ?1 AND ev_seq IS NULL)",
                &[run.into()],
                |r| r.flag(0),
            )?
            .unwrap_or(false);
        if !recorded {
            return self.replay_tables(run, manifest, f);
        }
        // A trial of a finished case is inside its case's row, which the stream reaches only
        // later: it is looked up on a second connection while the stream is read.
        let mut lookup: Option<Box<dyn Db>> = None;
        let location = &self.location;
        let mut manifest = Some(manifest);
        let mut finished_at_ms = None;
        // A trial of a case still unfinished is in the trial table, joined in.
        self.db.query(
            "SELECT e.ev_seq, e.elapsed_ms, e.kind, e.case_id, e.trial, e.message, t.data
             FROM events e LEFT JOIN trials t
               ON t.run_id = e.run_id AND t.case_id = e.case_id AND t.trial = e.trial
             WHERE e.run_id = ?1
             UNION ALL
             SELECT ev_seq, elapsed_ms, 'case_finished', case_id, NULL, NULL, data
             FROM cases WHERE run_id = ?1
             ORDER BY 1",
            &[run.into()],
            &mut |row| {
                let elapsed = row.int(1)?.unwrap_or(0).max(0) as u64;
                match row.text(2)?.unwrap_or("") {
                    // A resumed run starts again; the stream shows one start, with the
                    // manifest as it is now.
                    "run_started" => {
                        if let Some(m) = manifest.take() {
                            f(RunEvent::new(
                                elapsed,
                                EventKind::RunStarted {
                                    manifest: Box::new(m),
                                },
                            ))?;
                        }
                    }
                    "warning" => f(RunEvent::new(
                        elapsed,
                        EventKind::Warning {
                            message: row.text(5)?.unwrap_or("").to_owned(),
                        },
                    ))?,
                    "trial_finished" => {
                        let trial = match row.text(6)? {
                            Some(data) => Some(serde_json::from_str::<TrialResult>(data)?),
                            None => {
                                let case = row.string(3)?;
                                let index = row.count(4)?;
                                let db = match &mut lookup {
                                    Some(db) => db,
                                    None => lookup.insert(location.open_db(false)?),
                                };
                                stored_case(&mut **db, run, &case)?.and_then(|c| {
                                    c.trials.into_iter().find(|t| i64::from(t.trial) == index)
                                })
                            }
                        };
                        if let Some(t) = trial {
                            f(RunEvent::new(
                                elapsed,
                                EventKind::TrialFinished { trial: Box::new(t) },
                            ))?;
                        }
                    }
                    "case_finished" => f(RunEvent::new(
                        elapsed,
                        EventKind::CaseFinished {
                            result: Box::new(serde_json::from_str(row.text(6)?.unwrap_or(""))?),
                        },
                    ))?,
                    // Only the last finish counts (a resume of a finished run finishes again).
                    "run_finished" => finished_at_ms = Some(elapsed),
                    _ => {}
                }
                Ok(())
            },
        )?;
        if let (Some(elapsed), Some((summary, finished_at))) = (finished_at_ms, self.summary(run)?)
        {
            f(RunEvent::new(
                elapsed,
                EventKind::RunFinished {
                    summary: Box::new(summary),
                    finished_at,
                },
            ))?;
        }
        Ok(())
    }

    /// Replays a run stored before the stream was recorded: the manifest, every warning,
    /// the cases in the order they finished, the summary.
    fn replay_tables(
        &mut self,
        run: &str,
        manifest: RunManifest,
        mut f: impl FnMut(RunEvent) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        f(RunEvent::new(
            0,
            EventKind::RunStarted {
                manifest: Box::new(manifest),
            },
        ))?;
        let warnings = self.db.all(
            "SELECT message FROM warnings WHERE run_id = ?1 ORDER BY seq",
            &[run.into()],
            |r| r.string(0),
        )?;
        for w in warnings {
            f(RunEvent::new(0, EventKind::Warning { message: w }))?;
        }
        self.for_each_case(run, |c| {
            f(RunEvent::new(
                0,
                EventKind::CaseFinished {
                    result: Box::new(c),
                },
            ))
        })?;
        if let Some((summary, finished_at)) = self.summary(run)? {
            f(RunEvent::new(
                summary.duration_ms,
                EventKind::RunFinished {
                    summary: Box::new(summary),
                    finished_at,
                },
            ))?;
        }
        Ok(())
    }

    /// The warnings of a run, in the order they came.
    pub fn warnings(&mut self, run: &str) -> Result<Vec<String>, StoreError> {
        // Runs stored before the stream was recorded kept their warnings in a table of
        // their own.
        self.db.all(
            "SELECT message FROM (
                SELECT 0 AS part, seq AS pos, message FROM warnings WHERE run_id = ?1
                UNION ALL
                SELECT 1, ev_seq, message FROM events WHERE run_id = ?1 AND kind = 'warning') w
             ORDER BY part, pos",
            &[run.into()],
            |r| r.string(0),
        )
    }

    /// One stored case of a run, by id.
    pub fn case(&mut self, run: &str, case: &str) -> Result<Option<CaseResult>, StoreError> {
        stored_case(&mut *self.db, run, case)
    }

    /// Ids of a run's quarantined cases.
    pub fn quarantined_cases(&mut self, run: &str) -> Result<Vec<String>, StoreError> {
        let sql = match self.db.dialect() {
            Dialect::Sqlite => {
                "SELECT case_id FROM cases WHERE run_id = ?1 AND json_extract(data, '$.quarantined') = 1"
            }
            Dialect::Postgres => {
                "SELECT case_id FROM cases WHERE run_id = ?1 AND CAST(data AS json) ->> 'quarantined' = 'true'"
            }
        };
        self.db.all(sql, &[run.into()], |r| r.string(0))
    }

    /// Ids of a run's stored cases, in the order they finished.
    pub fn case_ids(&mut self, run: &str) -> Result<Vec<String>, StoreError> {
        self.db.all(
            "SELECT case_id FROM cases WHERE run_id = ?1 ORDER BY seq",
            &[run.into()],
            |r| r.string(0),
        )
    }

    /// Removes one run, whole (its baselines stay named; they resolve to nothing).
    pub fn remove_run(&mut self, run: &str) -> Result<(), StoreError> {
        self.db.in_transaction(|db| remove(db, run))
    }

    /// Removes runs: all but the `keep` newest, and (or) those started before `before`
    /// (RFC 3339). Baselines are kept, and so is an unfinished run started within the last
    /// hour (it may still be running). The store is compacted afterwards.
    pub fn prune(
        &mut self,
        keep: Option<usize>,
        before: Option<&str>,
    ) -> Result<PruneReport, StoreError> {
        let bytes_before = self.db.size();
        let recent = jiff::Timestamp::now()
            .checked_sub(jiff::SignedDuration::from_hours(1))
            .map(|t| t.to_string())
            .unwrap_or_default();
        let mut doomed: Vec<String> = Vec::new();
        let mut i = 0;
        self.db.query(
            "SELECT r.run_id, r.started_at, r.finished_at IS NULL,
                    EXISTS (SELECT 1 FROM baselines b WHERE b.run_id = r.run_id)
             FROM runs r ORDER BY r.started_at DESC, r.run_id DESC",
            &[],
            &mut |r| {
                let (id, started, unfinished, baseline) =
                    (r.string(0)?, r.string(1)?, r.flag(2)?, r.flag(3)?);
                let position = i;
                i += 1;
                if baseline || (unfinished && started.as_str() >= recent.as_str()) {
                    return Ok(());
                }
                let beyond_keep = keep.is_some_and(|k| position >= k);
                let too_old = before.is_some_and(|b| started.as_str() < b);
                if beyond_keep || too_old {
                    doomed.push(id);
                }
                Ok(())
            },
        )?;
        self.db.in_transaction(|db| {
            for id in &doomed {
                remove(db, id)?;
            }
            Ok(())
        })?;
        if !doomed.is_empty() {
            self.db.compact()?;
        }
        Ok(PruneReport {
            removed: doomed,
            bytes_before,
            bytes_after: self.db.size(),
        })
    }

    /// Names a run as a baseline (replacing an earlier run under that name).
    pub fn set_baseline(&mut self, name: &str, run: &str) -> Result<(), StoreError> {
        let now = jiff::Timestamp::now().to_string();
        self.db.execute(
            "INSERT INTO baselines (name, run_id, set_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (name) DO UPDATE SET run_id = excluded.run_id, set_at = excluded.set_at",
            &[name.into(), run.into(), now.as_str().into()],
        )?;
        Ok(())
    }

    /// The run a baseline names.
    pub fn baseline(&mut self, name: &str) -> Result<Option<String>, StoreError> {
        self.db.first(
            "SELECT run_id FROM baselines WHERE name = ?1",
            &[name.into()],
            |r| r.string(0),
        )
    }

    /// Every baseline: (name, run id, set at).
    pub fn baselines(&mut self) -> Result<Vec<(String, String, String)>, StoreError> {
        self.db.all(
            "SELECT name, run_id, set_at FROM baselines ORDER BY name",
            &[],
            |r| Ok((r.string(0)?, r.string(1)?, r.string(2)?)),
        )
    }
}

/// One stored case of a run.
fn stored_case(db: &mut dyn Db, run: &str, case: &str) -> Result<Option<CaseResult>, StoreError> {
    let data = db.first(
        "SELECT data FROM cases WHERE run_id = ?1 AND case_id = ?2",
        &[run.into(), case.into()],
        |r| r.string(0),
    )?;
    Ok(data.map(|d| serde_json::from_str(&d)).transpose()?)
}

/// Keeps trial `t` of run `run` in the trial table (a trial already there stays as it is).
fn insert_trial(db: &mut dyn Db, run: &str, t: &TrialResult) -> Result<(), StoreError> {
    let data = serde_json::to_string(t)?;
    db.execute(
        "INSERT INTO trials (run_id, case_id, trial, status, outcome, data)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (run_id, case_id, trial) DO NOTHING",
        &[
            run.into(),
            (&t.case_id).into(),
            t.trial.into(),
            t.status.as_str().into(),
            t.outcome.as_str().into(),
            data.as_str().into(),
        ],
    )?;
    Ok(())
}

/// Deletes every row of a run (inside the caller's transaction).
fn remove(db: &mut dyn Db, run: &str) -> Result<(), StoreError> {
    for table in RUN_TABLES {
        db.execute(
            &format!("DELETE FROM {table} WHERE run_id = ?1"),
            &[run.into()],
        )?;
    }
    Ok(())
}

/// Writes a run into the store as its events arrive.
pub struct StoreReporter {
    db: Box<dyn Db>,
    run_id: Option<String>,
    /// Position of the next case row among the run's cases.
    seq: i64,
    /// Position of the next event in the run's stream (cases and other events alike).
    ev_seq: i64,
    in_tx: bool,
    /// Trials are written one by one (k > 1) until their case finishes.
    per_trial: bool,
    /// The run is being continued: its row exists and is kept.
    resume: bool,
}

impl StoreReporter {
    fn new(db: Box<dyn Db>, resume: bool) -> StoreReporter {
        StoreReporter {
            db,
            run_id: None,
            seq: 0,
            ev_seq: 0,
            in_tx: false,
            per_trial: false,
            resume,
        }
    }

    fn put_trial(&mut self, t: &TrialResult) -> Result<(), StoreError> {
        let run = self.run_id.as_deref().unwrap_or("");
        insert_trial(&mut *self.db, run, t)
    }

    /// Records an event that is not a case in the stream (a case's place is in its row).
    fn put_event(
        &mut self,
        ev: &RunEvent,
        kind: &str,
        case_trial: Option<(&str, u32)>,
        message: Option<&str>,
    ) -> Result<(), StoreError> {
        let run = self.run_id.as_deref().unwrap_or("");
        self.db.execute(
            "INSERT INTO events (run_id, ev_seq, elapsed_ms, kind, case_id, trial, message)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            &[
                run.into(),
                self.ev_seq.into(),
                Value::Int(ev.elapsed_ms as i64),
                kind.into(),
                case_trial.map(|(c, _)| c).into(),
                case_trial.map(|(_, t)| t).into(),
                message.into(),
            ],
        )?;
        self.ev_seq += 1;
        Ok(())
    }

    fn start(&mut self, manifest: &RunManifest) -> Result<(), StoreError> {
        self.run_id = Some(manifest.run_id.clone());
        self.per_trial = manifest.k > 1;
        let json = serde_json::to_string(manifest)?;
        let row = [
            Value::from(&manifest.run_id),
            Value::from(&manifest.started_at),
            Value::from(&manifest.command),
            Value::from(&manifest.target.label),
            Value::Int(manifest.planned_cases as i64),
            Value::from(json.as_str()),
        ];
        if self.resume {
            // A resumed run keeps its row and its cases; its manifest gains the resume notes.
            self.db.execute(
                "INSERT INTO runs (run_id, started_at, command, target, planned, manifest)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (run_id) DO UPDATE SET finished_at = NULL, status = NULL, summary = NULL,
                     manifest = excluded.manifest",
                &row,
            )?;
        } else {
            // Two writers starting the same run (a shard started twice) meet here: one of
            // them inserts, the other is told.
            let n = self.db.execute(
                "INSERT INTO runs (run_id, started_at, command, target, planned, manifest)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (run_id) DO NOTHING",
                &row,
            )?;
            if n == 0 {
                return Err(StoreError::RunExists(manifest.run_id.clone()));
            }
        }
        let run = [Value::from(&manifest.run_id)];
        self.seq = self
            .db
            .first(
                "SELECT COALESCE(MAX(seq) + 1, 0) FROM cases WHERE run_id = ?1",
                &run,
                |r| r.count(0),
            )?
            .unwrap_or(0);
        self.ev_seq = self
            .db
            .first(
                "SELECT COALESCE(MAX(s), -1) + 1 FROM (
                    SELECT MAX(ev_seq) AS s FROM cases WHERE run_id = ?1
                    UNION ALL
                    SELECT MAX(ev_seq) FROM events WHERE run_id = ?1) m",
                &run,
                |r| r.count(0),
            )?
            .unwrap_or(0);
        Ok(())
    }
}

impl Reporter for StoreReporter {
    fn on_event(&mut self, ev: &RunEvent) -> Result<(), ReportError> {
        if !self.in_tx {
            self.db.begin()?;
            self.in_tx = true;
        }
        match &ev.kind {
            EventKind::RunStarted { manifest } => {
                self.start(manifest)?;
                self.put_event(ev, "run_started", None, None)?;
            }
            EventKind::TrialFinished { trial } => {
                self.put_trial(trial)?;
                self.put_event(
                    ev,
                    "trial_finished",
                    Some((&trial.case_id, trial.trial)),
                    None,
                )?;
            }
            EventKind::CaseFinished { result } => {
                // Rows already present (a resumed run re-announcing finished cases) keep
                // their original position.
                let run = self.run_id.as_deref().unwrap_or("");
                let n = self.db.execute(
                    "INSERT INTO cases (run_id, seq, case_id, status, data, ev_seq, elapsed_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                     ON CONFLICT (run_id, case_id) DO NOTHING",
                    &[
                        run.into(),
                        self.seq.into(),
                        (&result.case.id).into(),
                        result.status.as_str().into(),
                        ev.case_json().expect("a case event")?.into(),
                        self.ev_seq.into(),
                        Value::Int(ev.elapsed_ms as i64),
                    ],
                )?;
                self.seq += n as i64;
                self.ev_seq += n as i64;
                if self.per_trial {
                    self.db.execute(
                        "DELETE FROM trials WHERE run_id = ?1 AND case_id = ?2",
                        &[run.into(), (&result.case.id).into()],
                    )?;
                }
            }
            EventKind::Warning { message } => {
                self.put_event(ev, "warning", None, Some(message))?;
            }
            EventKind::RunFinished {
                summary,
                finished_at,
            } => {
                let json = serde_json::to_string(summary)?;
                let run = self.run_id.as_deref().unwrap_or("");
                self.db.execute(
                    "UPDATE runs SET finished_at = ?2, status = ?3, summary = ?4 WHERE run_id = ?1",
                    &[
                        run.into(),
                        finished_at.into(),
                        summary.status.as_str().into(),
                        json.as_str().into(),
                    ],
                )?;
                self.put_event(ev, "run_finished", None, None)?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), ReportError> {
        if self.in_tx {
            self.db.commit()?;
            self.in_tx = false;
        }
        Ok(())
    }
}

impl Drop for StoreReporter {
    fn drop(&mut self) {
        // Commit whatever arrived after the last batch boundary (normal end of a run).
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rusqlite::{Connection, params};

    use super::*;

    const MANIFEST: &str = r#"{"schema_version": 1, "run_id": "20261130T030632Z-4798", "gauntlet_version": "0.1.0",
        "started_at": "2026-11-30T03:06:32Z", "command": "run",
        "suites": [{"name": "s", "path": "suite.yaml", "sha256": "00", "cases": 1}],
        "target": {"kind": "fake", "label": "fake:safe"}, "k": 1, "seed": 0, "planned_cases": 3000,
        "evidence_level": "online", "side_effects": "simulated", "dataset_revision": "-"}"#;

    /// A passing case whose stored row is about 2 KB, like a real one.
    fn case_event(i: usize) -> RunEvent {
        let answer = format!("answer {i}: {}", "all good here. ".repeat(120));
        let case = serde_json::json!({
            "case": {"id": format!("case-{i:05}"), "suite": "s", "kind": "task", "blocking": true,
                     "security": false, "name": format!("case-{i:05}")},
            "status": "PASS", "score": {"kind": "unscored"}, "passed_trials": 1,
            "trials": [{"case_id": format!("case-{i:05}"), "trial": 0, "outcome": "completed",
                        "status": "PASS", "score": {"kind": "unscored"}, "verdicts": [],
                        "trace": {"spans": [], "turns": [{"user": "hi", "answer": answer}]},
                        "duration_ms": 1}]
        });
        let result: CaseResult = serde_json::from_value(case).expect("a case result");
        RunEvent::new(
            0,
            EventKind::CaseFinished {
                result: Box::new(result),
            },
        )
    }

    fn size(p: &Path) -> u64 {
        std::fs::metadata(p).map_or(0, |m| m.len())
    }

    #[test]
    fn each_error_says_what_to_do() {
        assert!(
            StoreError::NoSuchRun("x".into())
                .hint()
                .contains("runs list")
        );
        assert!(
            StoreError::Ambiguous("2026".into(), "a, b".into())
                .hint()
                .contains("runs list")
        );
        assert!(
            StoreError::TooNew(99)
                .hint()
                .contains("gauntlet that wrote")
        );
    }

    #[test]
    fn the_wal_is_copied_in_the_background_and_stays_bounded() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("runs.db");
        let wal = dir.path().join("runs.db-wal");
        let store = Store::open(&db).expect("open");
        // Restart past 256 KB (16 pages); checkpoint at most every 5 ms, while commits
        // come faster than that, so that the WAL never starts over on its own.
        let mut rep = store
            .reporter_tuned(Duration::from_millis(5), 256 << 10)
            .expect("reporter");
        let manifest: RunManifest = serde_json::from_str(MANIFEST).expect("manifest");
        rep.on_event(&RunEvent::new(
            0,
            EventKind::RunStarted {
                manifest: Box::new(manifest),
            },
        ))
        .expect("start");
        let db_before = size(&db);
        let mut wal_max = 0;
        for i in 0..3000 {
            rep.on_event(&case_event(i)).expect("case");
            if i % 20 == 19 {
                rep.flush().expect("commit");
                wal_max = wal_max.max(size(&wal));
            }
        }
        rep.flush().expect("commit");
        std::thread::sleep(Duration::from_millis(50));
        // About 6 MB were written. The writer itself never checkpoints (autocheckpoint is
        // off on its connection), so the database file only grows if the background thread
        // copies the WAL into it while the writer is still open...
        let db_during = size(&db);
        assert!(
            db_during > db_before + (2 << 20),
            "database file {db_before} -> {db_during} bytes while the writer was open"
        );
        // ...and the WAL only stays small if it is restarted.
        assert!(
            wal_max < 4 << 20,
            "the WAL grew to {wal_max} bytes (6 MB written, restart past 256 KB)"
        );
        drop(rep);
        let raw = Connection::open(&db).expect("open");
        let n: i64 = raw
            .query_row("SELECT COUNT(*) FROM cases", [], |r| r.get(0))
            .expect("count");
        assert_eq!(n, 3000, "every case row is stored");
        let page: i64 = raw
            .pragma_query_value(None, "page_size", |r| r.get(0))
            .expect("page size");
        assert_eq!(page, 16 << 10, "a new store has 16 KB pages");
        drop(store);
    }

    #[test]
    fn a_stored_run_replays_as_the_stream_it_was() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(dir.path().join("runs.db")).expect("open");
        let mut manifest: RunManifest = serde_json::from_str(MANIFEST).expect("manifest");
        manifest.k = 2;
        let summary: Summary = serde_json::from_value(serde_json::json!({
            "status": "PASS", "reasons": [], "cases": 2, "trials": 4, "passed": 2, "failed": 0,
            "conditional": 0, "errors": 0, "blocked": 0, "quarantined": 0, "hard_fails": 0,
            "tasks": {"count": 0, "fail_count": 0, "conditional_count": 0},
            "refusals": {"count": 0, "fail_count": 0, "conditional_count": 0},
            "pass_at_1": 2, "pass_at_k": 2, "k": 2, "by_category": [], "duration_ms": 90
        }))
        .expect("summary");
        let warning = |at, m: &str| RunEvent::new(at, EventKind::Warning { message: m.into() });
        let case = |i, at| {
            let mut ev = case_event(i);
            ev.elapsed_ms = at;
            ev
        };
        let trial = |i: usize, at| {
            let EventKind::CaseFinished { result } = case_event(i).kind else {
                unreachable!()
            };
            RunEvent::new(
                at,
                EventKind::TrialFinished {
                    trial: Box::new(result.trials[0].clone()),
                },
            )
        };
        // Warnings between cases, trials before their case, elapsed times all different.
        let stream = vec![
            RunEvent::new(
                3,
                EventKind::RunStarted {
                    manifest: Box::new(manifest),
                },
            ),
            warning(5, "first"),
            trial(0, 10),
            case(0, 11),
            warning(20, "between"),
            trial(1, 30),
            case(1, 31),
            warning(40, "last"),
            RunEvent::new(
                95,
                EventKind::RunFinished {
                    summary: Box::new(summary),
                    finished_at: "2026-11-30T03:06:33Z".into(),
                },
            ),
        ];
        let mut rep = store.reporter().expect("reporter");
        for ev in &stream {
            rep.on_event(ev).expect("event");
        }
        drop(rep);
        let mut replayed = Vec::new();
        store
            .replay("20261130T030632Z-4798", |ev| {
                replayed.push(ev);
                Ok(())
            })
            .expect("replay");
        assert_eq!(replayed, stream);
        assert_eq!(
            store.warnings("20261130T030632Z-4798").expect("warnings"),
            ["first", "between", "last"]
        );
    }

    #[test]
    fn a_version_1_store_is_migrated_and_its_runs_replay_as_before() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("runs.db");
        {
            // The schema an earlier gauntlet wrote, with one unfinished run in it.
            let c = Connection::open(&db).expect("open");
            c.execute_batch(
                "CREATE TABLE runs (run_id TEXT PRIMARY KEY, started_at TEXT NOT NULL, finished_at TEXT,
                    command TEXT NOT NULL, target TEXT NOT NULL, status TEXT, planned INTEGER NOT NULL,
                    manifest TEXT NOT NULL, summary TEXT);
                 CREATE TABLE cases (run_id TEXT NOT NULL, seq INTEGER NOT NULL, case_id TEXT NOT NULL,
                    status TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (run_id, case_id));
                 CREATE TABLE trials (run_id TEXT NOT NULL, case_id TEXT NOT NULL, trial INTEGER NOT NULL,
                    status TEXT NOT NULL, outcome TEXT NOT NULL, data TEXT NOT NULL,
                    PRIMARY KEY (run_id, case_id, trial));
                 CREATE TABLE warnings (run_id TEXT NOT NULL, seq INTEGER NOT NULL, message TEXT NOT NULL,
                    PRIMARY KEY (run_id, seq));
                 CREATE TABLE baselines (name TEXT PRIMARY KEY, run_id TEXT NOT NULL, set_at TEXT NOT NULL);
                 PRAGMA user_version = 1;",
            )
            .expect("v1 schema");
            let EventKind::CaseFinished { result } = case_event(0).kind else {
                unreachable!()
            };
            c.execute(
                "INSERT INTO runs (run_id, started_at, command, target, planned, manifest)
                 VALUES ('20261130T030632Z-4798', 't', 'run', 'fake:safe', 1, ?1)",
                params![MANIFEST],
            )
            .expect("run");
            c.execute(
                "INSERT INTO cases VALUES ('20261130T030632Z-4798', 0, 'case-00000', 'PASS', ?1)",
                params![serde_json::to_string(&result).expect("json")],
            )
            .expect("case");
            c.execute(
                "INSERT INTO warnings VALUES ('20261130T030632Z-4798', 0, 'old warning')",
                [],
            )
            .expect("warning");
        }
        let mut store = Store::open(&db).expect("open migrates");
        let version: i64 = Connection::open(&db)
            .expect("open")
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .expect("version");
        assert_eq!(version, SCHEMA_VERSION);
        let mut kinds = Vec::new();
        store
            .replay("20261130T030632Z-4798", |ev| {
                kinds.push(match ev.kind {
                    EventKind::RunStarted { .. } => "started".to_owned(),
                    EventKind::Warning { message } => message,
                    EventKind::CaseFinished { result } => result.case.id,
                    _ => "other".to_owned(),
                });
                Ok(())
            })
            .expect("replay");
        assert_eq!(kinds, ["started", "old warning", "case-00000"]);
        assert_eq!(
            store.warnings("20261130T030632Z-4798").expect("warnings"),
            ["old warning"]
        );
    }

    #[test]
    fn an_existing_store_keeps_its_page_size_and_its_runs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("runs.db");
        {
            // A store made by an earlier gauntlet: SQLite's default 4 KB pages.
            let c = Connection::open(&db).expect("open");
            c.pragma_update(None, "journal_mode", "WAL").expect("wal");
            c.execute_batch("CREATE TABLE t (x); DROP TABLE t;")
                .expect("create");
        }
        let store = Store::open(&db).expect("open");
        let mut rep = store.reporter().expect("reporter");
        let manifest: RunManifest = serde_json::from_str(MANIFEST).expect("manifest");
        rep.on_event(&RunEvent::new(
            0,
            EventKind::RunStarted {
                manifest: Box::new(manifest),
            },
        ))
        .expect("start");
        for i in 0..10 {
            rep.on_event(&case_event(i)).expect("case");
        }
        drop(rep);
        let raw = Connection::open(&db).expect("open");
        let page: i64 = raw
            .pragma_query_value(None, "page_size", |r| r.get(0))
            .expect("page size");
        assert_eq!(page, 4096);
        let n: i64 = raw
            .query_row("SELECT COUNT(*) FROM cases", [], |r| r.get(0))
            .expect("count");
        assert_eq!(n, 10);
    }

    #[test]
    fn several_connections_creating_one_store_at_once_all_open_it() {
        // Turning a brand-new file into a WAL database upgrades a read transaction to a
        // write one, which SQLite refuses at once (no busy handler) while another connection
        // holds a lock: four runs started together once lost a reader this way.
        let opened = sqlite::open_together(|path| {
            let mut store = Store::open(path).map_err(|e| e.to_string())?;
            store.runs(10).map(drop).map_err(|e| e.to_string())
        });
        assert_eq!(opened, Ok(()));
    }
}

#[cfg(all(test, not(feature = "postgres")))]
mod without_postgres {
    use super::*;

    #[test]
    fn a_postgres_url_in_a_build_without_it_says_how_to_get_it() {
        for url in ["postgres://u:s3cret@db/runs", "postgresql://db/runs"] {
            let e = StoreLocation::parse(url).expect_err("no PostgreSQL in this build");
            assert!(matches!(e, StoreError::NoPostgres), "{e:?}");
            let shown = e.to_string();
            assert!(shown.contains("without PostgreSQL support"), "{shown}");
            assert!(!shown.contains("s3cret"), "{shown}");
            assert!(e.hint().contains("--features postgres"), "{}", e.hint());
        }
        // A file path is still a store.
        assert!(StoreLocation::parse("runs.db").is_ok());
    }
}
