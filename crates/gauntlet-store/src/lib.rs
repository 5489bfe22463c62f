//! The run store: [`Store`] (an embedded SQLite database, WAL mode, at `.gauntlet/runs.db` by
//! default) and [`StoreReporter`], the event consumer that writes a run as it happens.
//!
//! Every trial is written as soon as its event arrives and committed when the runner flushes
//! its reporters, at most 25 ms later (one transaction per flush: durable against a killed
//! process, cheap at tens of thousands of trials per second). A run that was killed has its manifest and its
//! finished trials in the store, so `--resume` continues it without repeating or duplicating
//! a trial. A finished case is one row holding its whole result, trials and traces included,
//! serialized exactly as `report.json` does, so re-rendering reproduces it byte for byte.
//! With k > 1, each trial is also written as it finishes (keyed by case and trial index) and
//! those rows are folded into the case row when its last trial finishes.
//!
//! With `synchronous = NORMAL` a commit survives the process being killed; after a power loss
//! the last commits may be missing, in which case resume runs those trials again (never
//! twice in the store).
//!
//! The writer does not checkpoint the WAL as it goes: a checkpoint copies every page a
//! second time and waits on two `fsync`s, and on the reporter thread that held up the whole
//! run (over a hundred milliseconds every 16 MB). A background thread with its own
//! connection copies the WAL into the database passively (never blocking the writer) after
//! commits. While commits keep coming the WAL cannot start over on its own, so once it has
//! grown past [`WAL_RESTART_BYTES`] the writer restarts it right after a commit, when
//! almost everything is already copied (a short wait, and it gives up at once if a reader
//! is in the way, trying again at a later commit).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use gauntlet_core::event::{EventKind, ReportError, Reporter, RunEvent, RunManifest};
use gauntlet_core::result::{CaseResult, TrialResult};
use gauntlet_core::summary::Summary;
use rusqlite::{Connection, OptionalExtension, params};

/// The default location of the store, relative to the working folder.
pub const DEFAULT_STORE: &str = ".gauntlet/runs.db";

/// The schema version written to `PRAGMA user_version`. Version 2 records the event stream
/// (each event's position and elapsed time), so that a stored run replays as it was emitted.
const SCHEMA_VERSION: i64 = 2;

/// The background checkpointer runs at most once per this interval while commits arrive.
pub const CHECKPOINT_EVERY: Duration = Duration::from_millis(100);

/// WAL size past which a run's writer restarts the WAL after a commit.
pub const WAL_RESTART_BYTES: i64 = 32 << 20;

/// How long a connection waits for another one's lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a writer keeps trying to get the write lock when other runs hold it in turn,
/// before it gives up (the busy handler waits [`BUSY_TIMEOUT`] at a time).
const WRITE_PATIENCE: Duration = Duration::from_secs(120);

/// Runs a statement that needs the write lock, trying again while another connection holds
/// it, for up to [`WRITE_PATIENCE`]: several runs sharing one store take the lock in turn,
/// and a finished trial must not be lost because the busy handler's wait ran out once.
fn patiently<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let started = Instant::now();
    let mut pause = Duration::from_millis(5);
    loop {
        match f() {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && started.elapsed() < WRITE_PATIENCE =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(200));
            }
            r => return r,
        }
    }
}

/// The page size of a new store.
const PAGE_SIZE: i64 = 16 << 10;

/// WAL size at which connections other than a run's writer checkpoint as they commit.
const AUTOCHECKPOINT_BYTES: i64 = 16 << 20;

/// Errors from the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed.
    #[error("run store: {0}")]
    Sql(#[from] rusqlite::Error),
    /// A stored document did not parse.
    #[error("run store: a stored record is not valid: {0}")]
    Json(#[from] serde_json::Error),
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
    /// The store was written by a newer gauntlet.
    #[error("the run store has schema version {0}; this gauntlet reads up to {SCHEMA_VERSION}")]
    TooNew(i64),
    /// The database file is damaged.
    #[error("the run store `{}` is damaged: {detail}", path.display())]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What the check found.
        detail: String,
    },
}

impl StoreError {
    /// What the user can do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            StoreError::NoSuchRun(_) | StoreError::Ambiguous(..) => {
                "list runs with `gauntlet runs list`"
            }
            StoreError::TooNew(_) => "use the gauntlet that wrote this store, or another --store",
            StoreError::Damaged { .. }
            | StoreError::Sql(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error {
                    code: rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase,
                    ..
                },
                _,
            )) => {
                "nothing more is written into it; `gauntlet runs check` shows every problem. Move the file aside (new runs start a new store), or restore a copy; `sqlite3 FILE .recover` can save what is readable"
            }
            _ => "check --store (or `store:` in gauntlet.yaml)",
        }
    }
}

/// Stores up to this size get a full structural check whenever they are opened (about
/// 150 ms per 50 MB when cached); larger ones get the cheap checks on open and the full one
/// before a run writes into them, up to [`FULL_CHECK_BEFORE_WRITE`].
const FULL_CHECK_ON_OPEN: u64 = 64 << 20;

/// Stores up to this size are checked whole before a run writes into them.
const FULL_CHECK_BEFORE_WRITE: u64 = 256 << 20;

/// The cheap checks: the file's header (magic, page size, a size that is a whole number of
/// pages; not the page count, which a checkpoint of another connection may be changing),
/// and the structure of the small
/// tables every command reads (runs, baselines, events).
fn check_cheaply(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    use std::io::Read;
    let damaged = |detail: String| StoreError::Damaged {
        path: path.to_path_buf(),
        detail,
    };
    let mut header = [0u8; 100];
    let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if len == 0 {
        return Ok(());
    }
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut header))
        .map_err(|e| damaged(format!("its header cannot be read ({e})")))?;
    if &header[..16] != b"SQLite format 3\0" {
        return Err(damaged("it is not an SQLite database (bad header)".into()));
    }
    let page = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65536u64,
        p => u64::from(p),
    };
    if !(512..=65536).contains(&page) || !page.is_power_of_two() {
        return Err(damaged(format!("its header gives a page size of {page}")));
    }
    if !len.is_multiple_of(page) {
        return Err(damaged(format!(
            "its size ({len} bytes) is not a whole number of {page}-byte pages"
        )));
    }
    for table in ["runs", "baselines", "events"] {
        quick_check(conn, Some(table)).map_err(damaged)?;
    }
    Ok(())
}

/// `PRAGMA quick_check` (of one table, or all): the first problems found, if any.
fn quick_check(conn: &Connection, table: Option<&str>) -> Result<(), String> {
    let sql = match table {
        Some(t) => format!("PRAGMA quick_check({t})"),
        None => "PRAGMA quick_check(20)".to_owned(),
    };
    let rows: Result<Vec<String>, rusqlite::Error> = conn
        .prepare(&sql)
        .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect());
    match rows {
        Ok(r) if r.len() == 1 && r[0] == "ok" => Ok(()),
        Ok(r) => Err(r.join("; ")),
        Err(e) => Err(e.to_string()),
    }
}

/// The full structural check, if the file is at most `limit` bytes.
fn check_whole(conn: &Connection, path: &Path, limit: u64) -> Result<(), StoreError> {
    let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if len > limit {
        return Ok(());
    }
    quick_check(conn, None).map_err(|detail| StoreError::Damaged {
        path: path.to_path_buf(),
        detail,
    })
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
    /// The command (`run`, `redteam`, `regrade`, `flaky`).
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

/// An open store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

fn open_conn(path: &Path) -> Result<Connection, StoreError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;

    // A new store gets 16 KB pages (ignored for an existing one). A run's case rows (about
    // 2 KB each) go through the WAL and then into the database a page per system call each
    // way: with SQLite's default 4 KB pages a 50,000-case run made 82,000 pwrite and 27,000
    // pread calls, with 16 KB pages 23,000 and 7,000 (`strace -c`). Larger pages cut calls
    // further but every commit rewrites its partly filled pages whole, which for a slow run
    // (a case per commit) means writing 64 KB of WAL per 2 KB row at 16 KB and 256 KB at 64.
    conn.pragma_update(None, "page_size", PAGE_SIZE)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // Connections other than a run's writer checkpoint themselves once the WAL holds 16 MB
    // (SQLite counts pages; its default of 1,000 is 4 MB at 4 KB).
    let page: i64 = conn.pragma_query_value(None, "page_size", |r| r.get(0))?;
    conn.pragma_update(
        None,
        "wal_autocheckpoint",
        (AUTOCHECKPOINT_BYTES / page).max(1),
    )?;
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::TooNew(version));
    }
    if version < SCHEMA_VERSION {
        migrate(&conn)?;
    }
    Ok(conn)
}

/// SQLite's "not a database" and "malformed" errors as [`StoreError::Damaged`].
fn corrupt_as_damaged(e: StoreError, path: &Path) -> StoreError {
    match &e {
        StoreError::Sql(rusqlite::Error::SqliteFailure(f, msg))
            if matches!(
                f.code,
                rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase
            ) =>
        {
            StoreError::Damaged {
                path: path.to_path_buf(),
                detail: msg.clone().unwrap_or_else(|| f.to_string()),
            }
        }
        _ => e,
    }
}

/// Creates the tables of a new store, or brings an older one up to [`SCHEMA_VERSION`], in
/// one transaction (a store that is already current is not written to at all, so opening
/// it never takes the write lock).
fn migrate(conn: &Connection) -> Result<(), StoreError> {
    patiently(|| conn.execute_batch("BEGIN IMMEDIATE"))?;
    // Another process may have migrated it while this one waited for the lock.
    let now: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if now >= SCHEMA_VERSION {
        conn.execute_batch("COMMIT")?;
        return Ok(());
    }
    let result = (|| -> Result<(), rusqlite::Error> {
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS runs (
                run_id TEXT PRIMARY KEY,
                started_at TEXT NOT NULL,
                finished_at TEXT,
                command TEXT NOT NULL,
                target TEXT NOT NULL,
                status TEXT,
                planned INTEGER NOT NULL,
                manifest TEXT NOT NULL,
                summary TEXT
             );
             CREATE TABLE IF NOT EXISTS cases (
                run_id TEXT NOT NULL,
                seq INTEGER NOT NULL,
                case_id TEXT NOT NULL,
                status TEXT NOT NULL,
                data TEXT NOT NULL,
                PRIMARY KEY (run_id, case_id)
             );
             CREATE INDEX IF NOT EXISTS cases_by_seq ON cases (run_id, seq);
             CREATE TABLE IF NOT EXISTS trials (
                run_id TEXT NOT NULL,
                case_id TEXT NOT NULL,
                trial INTEGER NOT NULL,
                status TEXT NOT NULL,
                outcome TEXT NOT NULL,
                data TEXT NOT NULL,
                PRIMARY KEY (run_id, case_id, trial)
             );
             CREATE TABLE IF NOT EXISTS warnings (
                run_id TEXT NOT NULL,
                seq INTEGER NOT NULL,
                message TEXT NOT NULL,
                PRIMARY KEY (run_id, seq)
             );
             CREATE TABLE IF NOT EXISTS baselines (
                name TEXT PRIMARY KEY,
                run_id TEXT NOT NULL,
                set_at TEXT NOT NULL
             );
             CREATE TABLE IF NOT EXISTS events (
                run_id TEXT NOT NULL,
                ev_seq INTEGER NOT NULL,
                elapsed_ms INTEGER NOT NULL,
                kind TEXT NOT NULL,
                case_id TEXT,
                trial INTEGER,
                message TEXT,
                PRIMARY KEY (run_id, ev_seq)
             );",
        )?;
        // Version 1 stores: a case row gains its place in the stream and its elapsed time
        // (NULL for the runs stored before, which replay as they always did).
        let has_col: bool = conn.query_row(
            "SELECT COUNT(*) FROM pragma_table_info('cases') WHERE name = 'ev_seq'",
            [],
            |r| r.get::<_, i64>(0).map(|n| n > 0),
        )?;
        if !has_col {
            conn.execute_batch(
                "ALTER TABLE cases ADD COLUMN ev_seq INTEGER;
                 ALTER TABLE cases ADD COLUMN elapsed_ms INTEGER;",
            )?;
        }
        conn.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        Ok(())
    })();
    match result {
        Ok(()) => {
            conn.execute_batch("COMMIT")?;
            Ok(())
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e.into())
        }
    }
}

impl Store {
    /// Opens (or creates) the store at `path`.
    ///
    /// The store is checked on the way in ([`check_cheaply`], and whole when it is small): a
    /// damaged file is an error, so that nothing reads wrong results from it or writes new
    /// runs into it.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let conn = open_conn(path).map_err(|e| corrupt_as_damaged(e, path))?;
        check_cheaply(&conn, path)?;
        check_whole(&conn, path, FULL_CHECK_ON_OPEN)?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Opens the store without checking it (for `gauntlet runs check`, which reports every
    /// problem instead of stopping at the first).
    pub fn open_unchecked(path: &Path) -> Result<Store, StoreError> {
        Ok(Store {
            conn: open_conn(path).map_err(|e| corrupt_as_damaged(e, path))?,
            path: path.to_path_buf(),
        })
    }

    /// The full check behind `gauntlet runs check`: every problem `PRAGMA integrity_check`
    /// finds (up to 100), or none.
    pub fn check(&self) -> Result<Vec<String>, StoreError> {
        let rows: rusqlite::Result<Vec<String>> = self
            .conn
            .prepare("PRAGMA integrity_check(100)")
            .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect());
        match rows {
            Ok(rows) if rows.len() == 1 && rows[0] == "ok" => Ok(Vec::new()),
            Ok(rows) => Ok(rows),
            // So damaged that the check itself cannot read it.
            Err(e) => match corrupt_as_damaged(e.into(), &self.path) {
                StoreError::Damaged { detail, .. } => Ok(vec![detail]),
                other => Err(other),
            },
        }
    }

    /// Where the store lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A reporter that writes `run_id`'s events into this store (on its own connection, so it
    /// can live on the reporter thread).
    ///
    /// A store too large to be checked whole on every open is checked whole here, before a
    /// run writes into it.
    pub fn reporter(&self) -> Result<StoreReporter, StoreError> {
        let len = std::fs::metadata(&self.path).map_or(0, |m| m.len());
        if len > FULL_CHECK_ON_OPEN {
            check_whole(&self.conn, &self.path, FULL_CHECK_BEFORE_WRITE)?;
        }
        self.reporter_tuned(CHECKPOINT_EVERY, WAL_RESTART_BYTES)
    }

    fn reporter_tuned(
        &self,
        every: Duration,
        restart_bytes: i64,
    ) -> Result<StoreReporter, StoreError> {
        let conn = open_conn(&self.path)?;
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        let page: i64 = conn.pragma_query_value(None, "page_size", |r| r.get(0))?;
        let restart_pages = (restart_bytes / page).max(1);
        Ok(StoreReporter {
            conn,
            run_id: None,
            seq: 0,
            ev_seq: 0,
            in_tx: false,
            per_trial: false,
            checkpointer: Some(Checkpointer::start(&self.path, every)?),
            restart_pages,
        })
    }

    /// Runs, newest first.
    pub fn runs(&self, limit: usize) -> Result<Vec<RunRow>, StoreError> {
        let mut st = self.conn.prepare(
            "SELECT r.run_id, r.started_at, r.finished_at, r.command, r.target, r.status, r.planned,
                    (SELECT COUNT(*) FROM cases c WHERE c.run_id = r.run_id)
             FROM runs r ORDER BY r.started_at DESC, r.run_id DESC LIMIT ?1",
        )?;
        let rows = st.query_map(params![limit as i64], |r| {
            Ok(RunRow {
                run_id: r.get(0)?,
                started_at: r.get(1)?,
                finished_at: r.get(2)?,
                command: r.get(3)?,
                target: r.get(4)?,
                status: r.get(5)?,
                planned: r.get(6)?,
                cases: r.get(7)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Resolves a run reference: a full id, a unique prefix, `latest`, or a baseline name.
    pub fn resolve(&self, spec: &str) -> Result<String, StoreError> {
        if spec == "latest" {
            return self
                .conn
                .query_row(
                    "SELECT run_id FROM runs ORDER BY started_at DESC, run_id DESC LIMIT 1",
                    [],
                    |r| r.get(0),
                )
                .optional()?
                .ok_or_else(|| StoreError::NoSuchRun(spec.into()));
        }
        let exact: Option<String> = self
            .conn
            .query_row(
                "SELECT run_id FROM runs WHERE run_id = ?1",
                params![spec],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(id) = exact {
            return Ok(id);
        }
        if let Some(id) = self.baseline(spec)? {
            return Ok(id);
        }
        let mut st = self.conn.prepare(
            "SELECT run_id FROM runs WHERE run_id LIKE ?1 || '%' ORDER BY run_id LIMIT 6",
        )?;
        let ids: Vec<String> = st
            .query_map(params![spec], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        match ids.len() {
            0 => Err(StoreError::NoSuchRun(spec.into())),
            1 => Ok(ids.into_iter().next().expect("one")),
            _ => Err(StoreError::Ambiguous(spec.into(), ids.join(", "))),
        }
    }

    /// The manifest of a run.
    pub fn manifest(&self, run: &str) -> Result<RunManifest, StoreError> {
        let text: String = self
            .conn
            .query_row(
                "SELECT manifest FROM runs WHERE run_id = ?1",
                params![run],
                |r| r.get(0),
            )
            .optional()?
            .ok_or_else(|| StoreError::NoSuchRun(run.into()))?;
        Ok(serde_json::from_str(&text)?)
    }

    /// The summary of a finished run.
    pub fn summary(&self, run: &str) -> Result<Option<(Summary, String)>, StoreError> {
        let row: Option<(Option<String>, Option<String>)> = self
            .conn
            .query_row(
                "SELECT summary, finished_at FROM runs WHERE run_id = ?1",
                params![run],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        match row {
            Some((Some(s), Some(at))) => Ok(Some((serde_json::from_str(&s)?, at))),
            Some(_) => Ok(None),
            None => Err(StoreError::NoSuchRun(run.into())),
        }
    }

    /// Every stored trial of a run, by case id (for resume): the trials of finished cases
    /// and the trials of cases still in progress.
    pub fn trials(&self, run: &str) -> Result<HashMap<String, Vec<TrialResult>>, StoreError> {
        let mut out: HashMap<String, Vec<TrialResult>> = HashMap::new();
        self.for_each_case(run, |c| {
            out.insert(c.case.id.clone(), c.trials);
            Ok(())
        })?;
        let mut st = self.conn.prepare(
            "SELECT case_id, data FROM trials WHERE run_id = ?1 ORDER BY case_id, trial",
        )?;
        let rows = st.query_map(params![run], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?;
        for row in rows {
            let (case, data) = row?;
            let t: TrialResult = serde_json::from_str(&data)?;
            let list = out.entry(case).or_default();
            if !list.iter().any(|x| x.trial == t.trial) {
                list.push(t);
            }
        }
        Ok(out)
    }

    /// Calls `f` with each case result of a run (trials included) in the order they finished,
    /// one at a time, so that re-rendering a large run stays small.
    pub fn for_each_case(
        &self,
        run: &str,
        mut f: impl FnMut(CaseResult) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut st = self
            .conn
            .prepare("SELECT data FROM cases WHERE run_id = ?1 ORDER BY seq")?;
        let mut rows = st.query(params![run])?;
        while let Some(row) = rows.next()? {
            let data: String = row.get(0)?;
            f(serde_json::from_str(&data)?)?;
        }
        Ok(())
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
        let mut loose: Vec<TrialResult> = Vec::new();
        {
            let mut st = self.conn.prepare(
                "SELECT data FROM trials WHERE run_id = ?1 AND outcome IN ('error', 'timeout')",
            )?;
            let rows = st.query_map(params![run], |r| r.get::<_, String>(0))?;
            for row in rows {
                loose.push(serde_json::from_str(&row?)?);
            }
        }
        let tx = self.conn.transaction()?;
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
            // The case row goes; its good trials go back to the trial table, where resume
            // picks up the trials of unfinished cases.
            tx.execute(
                "DELETE FROM cases WHERE run_id = ?1 AND case_id = ?2",
                params![run, c.case.id],
            )?;
            for t in &c.trials {
                if faulted(t) {
                    record(t);
                    tx.execute(
                        "DELETE FROM trials WHERE run_id = ?1 AND case_id = ?2 AND trial = ?3",
                        params![run, t.case_id, t.trial],
                    )?;
                } else {
                    tx.execute(
                        "INSERT INTO trials (run_id, case_id, trial, status, outcome, data)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                         ON CONFLICT (run_id, case_id, trial) DO NOTHING",
                        params![
                            run,
                            t.case_id,
                            t.trial,
                            t.status.as_str(),
                            t.outcome.as_str(),
                            serde_json::to_string(t)?
                        ],
                    )?;
                }
            }
        }
        for t in &loose {
            if !cases.iter().any(|c| c.case.id == t.case_id) {
                record(t);
            }
        }
        tx.execute(
            "DELETE FROM trials WHERE run_id = ?1 AND outcome IN ('error', 'timeout')",
            params![run],
        )?;
        if !reopened.is_empty() {
            tx.execute(
                "UPDATE runs SET finished_at = NULL, status = NULL, summary = NULL WHERE run_id = ?1",
                params![run],
            )?;
            tx.commit()?;
        }
        Ok(reopened)
    }

    /// Replays a stored run's events into `f` as they were emitted: in their original order
    /// (warnings where they came, trials before their case) with their elapsed times. An
    /// interrupted run has no `run_finished` event. Runs stored before the stream was
    /// recorded replay with every warning first and elapsed times of 0.
    pub fn replay(
        &self,
        run: &str,
        mut f: impl FnMut(RunEvent) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let manifest = self.manifest(run)?;
        let recorded: bool = self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM events WHERE run_id = ?1)
                AND NOT EXISTS (SELECT 1 FROM cases WHERE run_id = ?1 AND ev_seq IS NULL)",
            params![run],
            |r| r.get(0),
        )?;
        if !recorded {
            return self.replay_tables(run, manifest, f);
        }
        let mut st = self.conn.prepare(
            "SELECT ev_seq, elapsed_ms, kind, case_id, trial, message, NULL FROM events WHERE run_id = ?1
             UNION ALL
             SELECT ev_seq, elapsed_ms, 'case_finished', case_id, NULL, NULL, data FROM cases WHERE run_id = ?1
             ORDER BY 1",
        )?;
        let mut rows = st.query(params![run])?;
        let mut manifest = Some(manifest);
        let mut finished_at_ms = None;
        while let Some(row) = rows.next()? {
            let elapsed = row.get::<_, i64>(1)?.max(0) as u64;
            let kind: String = row.get(2)?;
            match kind.as_str() {
                // A resumed run starts again; the stream shows one start, with the manifest
                // as it is now.
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
                        message: row.get::<_, Option<String>>(5)?.unwrap_or_default(),
                    },
                ))?,
                "trial_finished" => {
                    let case: String = row.get(3)?;
                    let trial: u32 = row.get(4)?;
                    if let Some(t) = self.recorded_trial(run, &case, trial)? {
                        f(RunEvent::new(
                            elapsed,
                            EventKind::TrialFinished { trial: Box::new(t) },
                        ))?;
                    }
                }
                "case_finished" => {
                    let data: String = row.get(6)?;
                    f(RunEvent::new(
                        elapsed,
                        EventKind::CaseFinished {
                            result: Box::new(serde_json::from_str(&data)?),
                        },
                    ))?;
                }
                // Only the last finish counts (a resume of a finished run finishes again).
                "run_finished" => finished_at_ms = Some(elapsed),
                _ => {}
            }
        }
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

    /// A trial as it was recorded: from its case, or from the trial table while its case was
    /// unfinished.
    fn recorded_trial(
        &self,
        run: &str,
        case: &str,
        trial: u32,
    ) -> Result<Option<TrialResult>, StoreError> {
        if let Some(c) = self.case(run, case)? {
            return Ok(c.trials.into_iter().find(|t| t.trial == trial));
        }
        let data: Option<String> = self
            .conn
            .query_row(
                "SELECT data FROM trials WHERE run_id = ?1 AND case_id = ?2 AND trial = ?3",
                params![run, case, trial],
                |r| r.get(0),
            )
            .optional()?;
        Ok(data.map(|d| serde_json::from_str(&d)).transpose()?)
    }

    /// Replays a run stored before the stream was recorded: the manifest, every warning,
    /// the cases in the order they finished, the summary.
    fn replay_tables(
        &self,
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
        let mut st = self
            .conn
            .prepare("SELECT message FROM warnings WHERE run_id = ?1 ORDER BY seq")?;
        let warnings: Vec<String> = st
            .query_map(params![run], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
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
    pub fn warnings(&self, run: &str) -> Result<Vec<String>, StoreError> {
        // Runs stored before the stream was recorded kept their warnings in a table of
        // their own.
        let mut st = self.conn.prepare(
            "SELECT message FROM (
                SELECT 0 AS part, seq AS pos, message FROM warnings WHERE run_id = ?1
                UNION ALL
                SELECT 1, ev_seq, message FROM events WHERE run_id = ?1 AND kind = 'warning')
             ORDER BY part, pos",
        )?;
        let rows = st.query_map(params![run], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One stored case of a run, by id.
    pub fn case(&self, run: &str, case: &str) -> Result<Option<CaseResult>, StoreError> {
        let data: Option<String> = self
            .conn
            .prepare_cached("SELECT data FROM cases WHERE run_id = ?1 AND case_id = ?2")?
            .query_row(params![run, case], |r| r.get(0))
            .optional()?;
        Ok(data.map(|d| serde_json::from_str(&d)).transpose()?)
    }

    /// Ids of a run's quarantined cases.
    pub fn quarantined_cases(&self, run: &str) -> Result<Vec<String>, StoreError> {
        let mut st = self.conn.prepare(
            "SELECT case_id FROM cases WHERE run_id = ?1 AND json_extract(data, '$.quarantined') = 1",
        )?;
        let rows = st.query_map(params![run], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Ids of a run's stored cases, in the order they finished.
    pub fn case_ids(&self, run: &str) -> Result<Vec<String>, StoreError> {
        let mut st = self
            .conn
            .prepare("SELECT case_id FROM cases WHERE run_id = ?1 ORDER BY seq")?;
        let rows = st.query_map(params![run], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Removes runs: all but the `keep` newest, and (or) those started before `before`
    /// (RFC 3339). Baselines are kept, and so is an unfinished run started within the last
    /// hour (it may still be running). The file is compacted afterwards.
    pub fn prune(
        &mut self,
        keep: Option<usize>,
        before: Option<&str>,
    ) -> Result<PruneReport, StoreError> {
        let bytes_before = std::fs::metadata(&self.path).map_or(0, |m| m.len());
        let recent = jiff::Timestamp::now()
            .checked_sub(jiff::SignedDuration::from_hours(1))
            .map(|t| t.to_string())
            .unwrap_or_default();
        let mut doomed: Vec<String> = Vec::new();
        {
            let mut st = self.conn.prepare(
                "SELECT r.run_id, r.started_at, r.finished_at IS NULL,
                        EXISTS (SELECT 1 FROM baselines b WHERE b.run_id = r.run_id)
                 FROM runs r ORDER BY r.started_at DESC, r.run_id DESC",
            )?;
            let rows = st.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, bool>(2)?,
                    r.get::<_, bool>(3)?,
                ))
            })?;
            for (i, row) in rows.enumerate() {
                let (id, started, unfinished, baseline) = row?;
                if baseline || (unfinished && started.as_str() >= recent.as_str()) {
                    continue;
                }
                let beyond_keep = keep.is_some_and(|k| i >= k);
                let too_old = before.is_some_and(|b| started.as_str() < b);
                if beyond_keep || too_old {
                    doomed.push(id);
                }
            }
        }
        let tx = self.conn.transaction()?;
        for id in &doomed {
            for table in ["cases", "trials", "warnings", "events", "runs"] {
                tx.execute(
                    &format!("DELETE FROM {table} WHERE run_id = ?1"),
                    params![id],
                )?;
            }
        }
        tx.commit()?;
        if !doomed.is_empty() {
            patiently(|| self.conn.execute_batch("VACUUM"))?;
        }
        Ok(PruneReport {
            removed: doomed,
            bytes_before,
            bytes_after: std::fs::metadata(&self.path).map_or(0, |m| m.len()),
        })
    }

    /// Names a run as a baseline (replacing an earlier run under that name).
    pub fn set_baseline(&self, name: &str, run: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO baselines (name, run_id, set_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (name) DO UPDATE SET run_id = excluded.run_id, set_at = excluded.set_at",
            params![name, run, jiff::Timestamp::now().to_string()],
        )?;
        Ok(())
    }

    /// The run a baseline names.
    pub fn baseline(&self, name: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT run_id FROM baselines WHERE name = ?1",
                params![name],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Every baseline: (name, run id, set at).
    pub fn baselines(&self) -> Result<Vec<(String, String, String)>, StoreError> {
        let mut st = self
            .conn
            .prepare("SELECT name, run_id, set_at FROM baselines ORDER BY name")?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// What `prune` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PruneReport {
    /// Runs removed, newest first.
    pub removed: Vec<String>,
    /// File size before.
    pub bytes_before: u64,
    /// File size after compaction.
    pub bytes_after: u64,
}

/// Writes a run into the store as its events arrive.
pub struct StoreReporter {
    conn: Connection,
    run_id: Option<String>,
    /// Position of the next case row among the run's cases.
    seq: i64,
    /// Position of the next event in the run's stream (cases and other events alike).
    ev_seq: i64,
    in_tx: bool,
    /// Trials are written one by one (k > 1) until their case finishes.
    per_trial: bool,
    /// Copies the WAL into the database in the background.
    checkpointer: Option<Checkpointer>,
    /// WAL size (pages) past which a commit is followed by a WAL restart.
    restart_pages: i64,
}

/// The background WAL checkpointer of a [`StoreReporter`]: a thread with its own connection,
/// woken after each commit.
struct Checkpointer {
    wake: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
    /// The WAL's size in pages at the last background checkpoint.
    wal_pages: Arc<AtomicI64>,
}

impl Checkpointer {
    fn start(path: &Path, every: Duration) -> Result<Checkpointer, StoreError> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        let (wake, rx) = std::sync::mpsc::sync_channel(1);
        let wal_pages = Arc::new(AtomicI64::new(0));
        let seen = Arc::clone(&wal_pages);
        let thread = std::thread::Builder::new()
            .name("gauntlet-checkpoint".into())
            .spawn(move || checkpoint_loop(&conn, &rx, every, &seen))
            .map_err(|source| StoreError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Checkpointer {
            wake: Some(wake),
            thread: Some(thread),
            wal_pages,
        })
    }

    /// Tells the thread that a commit happened (never waits).
    fn poke(&self) {
        if let Some(w) = &self.wake {
            // Full: a wake-up is already pending, which covers this commit too.
            let _ = w.try_send(());
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        // Closing the channel stops the thread; what it has not copied yet is copied when
        // the database's last connection closes.
        self.wake = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Runs `PRAGMA wal_checkpoint(MODE)`: whether it was blocked, and the WAL's size in pages.
fn checkpoint(conn: &Connection, mode: &str) -> rusqlite::Result<(bool, i64)> {
    conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |r| {
        Ok((r.get::<_, i64>(0)? != 0, r.get(1)?))
    })
}

fn checkpoint_loop(conn: &Connection, rx: &Receiver<()>, every: Duration, wal_pages: &AtomicI64) {
    let mut last: Option<Instant> = None;
    // A failed checkpoint loses nothing (the pages stay in the WAL, and the next checkpoint
    // or the last connection's close copies them), so errors are not reported.
    while rx.recv().is_ok() {
        // At most one checkpoint per `every`: the commits that arrive meanwhile join it.
        if let Some(due) = last.map(|t| t + every) {
            loop {
                let now = Instant::now();
                if now >= due {
                    break;
                }
                match rx.recv_timeout(due - now) {
                    Ok(()) | Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            }
        }
        // PASSIVE copies what it can without ever blocking the writer.
        if let Ok((false, pages)) = checkpoint(conn, "PASSIVE") {
            wal_pages.store(pages, Ordering::Relaxed);
        }
        last = Some(Instant::now());
    }
}

impl StoreReporter {
    fn begin(&mut self) -> Result<(), rusqlite::Error> {
        if !self.in_tx {
            // IMMEDIATE takes the write lock now, under the busy handler: a deferred
            // transaction that read first could be refused at once when it came to write.
            patiently(|| self.conn.execute_batch("BEGIN IMMEDIATE"))?;
            self.in_tx = true;
        }
        Ok(())
    }

    fn run(&self) -> &str {
        self.run_id.as_deref().unwrap_or("")
    }

    /// Copies the little the background checkpoint has not, and lets the next commit write
    /// the WAL from its start. A reader in the way (or the background checkpoint itself)
    /// makes it give up within a few milliseconds; a later commit tries again.
    fn restart_wal(&self, c: &Checkpointer) -> rusqlite::Result<()> {
        self.conn.busy_timeout(Duration::from_millis(5))?;
        let restarted = checkpoint(&self.conn, "RESTART");
        self.conn.busy_timeout(BUSY_TIMEOUT)?;
        if let Ok((false, _)) = restarted {
            c.wal_pages.store(0, Ordering::Relaxed);
        }
        Ok(())
    }

    fn put_trial(&self, t: &TrialResult) -> Result<(), ReportError> {
        self.conn
            .prepare_cached(
                "INSERT INTO trials (run_id, case_id, trial, status, outcome, data)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (run_id, case_id, trial) DO NOTHING",
            )?
            .execute(params![
                self.run(),
                t.case_id,
                t.trial,
                t.status.as_str(),
                t.outcome.as_str(),
                serde_json::to_string(t)?
            ])?;
        Ok(())
    }
}

impl StoreReporter {
    /// Records an event that is not a case in the stream (a case's place is in its row).
    fn put_event(
        &mut self,
        ev: &RunEvent,
        kind: &str,
        case_trial: Option<(&str, u32)>,
        message: Option<&str>,
    ) -> Result<(), ReportError> {
        self.conn
            .prepare_cached(
                "INSERT INTO events (run_id, ev_seq, elapsed_ms, kind, case_id, trial, message)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                self.run(),
                self.ev_seq,
                ev.elapsed_ms as i64,
                kind,
                case_trial.map(|(c, _)| c),
                case_trial.map(|(_, t)| t),
                message
            ])?;
        self.ev_seq += 1;
        Ok(())
    }
}

impl Reporter for StoreReporter {
    fn on_event(&mut self, ev: &RunEvent) -> Result<(), ReportError> {
        self.begin()?;
        match &ev.kind {
            EventKind::RunStarted { manifest } => {
                self.run_id = Some(manifest.run_id.clone());
                self.per_trial = manifest.k > 1;
                // A resumed run keeps its row and its cases (its manifest gains the resume
                // notes); a new one is inserted.
                self.conn.execute(
                    "INSERT INTO runs (run_id, started_at, command, target, planned, manifest)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT (run_id) DO UPDATE SET finished_at = NULL, status = NULL, summary = NULL,
                         manifest = excluded.manifest",
                    params![
                        manifest.run_id,
                        manifest.started_at,
                        manifest.command,
                        manifest.target.label,
                        manifest.planned_cases as i64,
                        serde_json::to_string(manifest)?
                    ],
                )?;
                self.seq = self.conn.query_row(
                    "SELECT COALESCE(MAX(seq) + 1, 0) FROM cases WHERE run_id = ?1",
                    params![manifest.run_id],
                    |r| r.get(0),
                )?;
                self.ev_seq = self.conn.query_row(
                    "SELECT MAX(COALESCE((SELECT MAX(ev_seq) FROM cases WHERE run_id = ?1), -1),
                                COALESCE((SELECT MAX(ev_seq) FROM events WHERE run_id = ?1), -1)) + 1",
                    params![manifest.run_id],
                    |r| r.get(0),
                )?;
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
                let n = self
                    .conn
                    .prepare_cached(
                        "INSERT INTO cases (run_id, seq, case_id, status, data, ev_seq, elapsed_ms)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                         ON CONFLICT (run_id, case_id) DO NOTHING",
                    )?
                    .execute(params![
                        self.run(),
                        self.seq,
                        result.case.id,
                        result.status.as_str(),
                        ev.case_json().expect("a case event")?,
                        self.ev_seq,
                        ev.elapsed_ms as i64
                    ])?;
                self.seq += n as i64;
                self.ev_seq += n as i64;
                if self.per_trial {
                    self.conn
                        .prepare_cached("DELETE FROM trials WHERE run_id = ?1 AND case_id = ?2")?
                        .execute(params![self.run(), result.case.id])?;
                }
            }
            EventKind::Warning { message } => {
                self.put_event(ev, "warning", None, Some(message))?;
            }
            EventKind::RunFinished {
                summary,
                finished_at,
            } => {
                self.conn.execute(
                    "UPDATE runs SET finished_at = ?2, status = ?3, summary = ?4 WHERE run_id = ?1",
                    params![
                        self.run(),
                        finished_at,
                        summary.status.as_str(),
                        serde_json::to_string(summary)?
                    ],
                )?;
                self.put_event(ev, "run_finished", None, None)?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), ReportError> {
        if self.in_tx {
            patiently(|| self.conn.execute_batch("COMMIT"))?;
            self.in_tx = false;
            if let Some(c) = &self.checkpointer {
                c.poke();
                if c.wal_pages.load(Ordering::Relaxed) > self.restart_pages {
                    self.restart_wal(c)?;
                }
            }
        }
        Ok(())
    }
}

impl Drop for StoreReporter {
    fn drop(&mut self) {
        // Commit whatever arrived after the last batch boundary (normal end of a run), then
        // stop the checkpointer before this connection closes.
        let _ = self.flush();
        self.checkpointer = None;
    }
}

#[cfg(test)]
mod tests {
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
        let n: i64 = store
            .conn
            .query_row("SELECT COUNT(*) FROM cases", [], |r| r.get(0))
            .expect("count");
        assert_eq!(n, 3000, "every case row is stored");
        let page: i64 = store
            .conn
            .pragma_query_value(None, "page_size", |r| r.get(0))
            .expect("page size");
        assert_eq!(page, PAGE_SIZE, "a new store has 16 KB pages");
    }

    #[test]
    fn a_stored_run_replays_as_the_stream_it_was() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(&dir.path().join("runs.db")).expect("open");
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
        let store = Store::open(&db).expect("open migrates");
        let version: i64 = store
            .conn
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
        let page: i64 = store
            .conn
            .pragma_query_value(None, "page_size", |r| r.get(0))
            .expect("page size");
        assert_eq!(page, 4096);
        let n: i64 = store
            .conn
            .query_row("SELECT COUNT(*) FROM cases", [], |r| r.get(0))
            .expect("count");
        assert_eq!(n, 10);
    }
}
