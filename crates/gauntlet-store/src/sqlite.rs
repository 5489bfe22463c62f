//! The SQLite backend: [`SqliteDb`], an embedded database file in WAL mode (at
//! `.gauntlet/runs.db` by default), with its schema, its damage checks and the background
//! checkpointer of a run's writer.
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

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use rusqlite::types::{ToSql, ToSqlOutput, ValueRef};

use crate::db::{Db, Dialect, Row, RowResult, Value};
use crate::{SCHEMA_VERSION, StoreError};

/// The background checkpointer runs at most once per this interval while commits arrive.
pub const CHECKPOINT_EVERY: Duration = Duration::from_millis(100);

/// WAL size past which a run's writer restarts the WAL after a commit.
pub const WAL_RESTART_BYTES: i64 = 32 << 20;

/// How long a connection waits for another one's lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a writer keeps trying to get the write lock when other runs hold it in turn,
/// before it gives up (the busy handler waits [`BUSY_TIMEOUT`] at a time).
const WRITE_PATIENCE: Duration = Duration::from_secs(120);

/// The page size of a new store.
const PAGE_SIZE: i64 = 16 << 10;

/// WAL size at which connections other than a run's writer checkpoint as they commit.
const AUTOCHECKPOINT_BYTES: i64 = 16 << 20;

/// Prepared statements each connection keeps (a run's writer uses about ten).
const STATEMENT_CACHE: usize = 32;

/// The page cache of a run's writer, in KiB. It appends: each commit touches the right edge
/// of a handful of B-trees (a few dozen pages), so SQLite's default of 2,000 KiB only grows
/// with the run and holds pages it never reads again (a 50,000-case run's peak memory grew
/// by about that much).
const WRITER_CACHE_KIB: i64 = 512;

/// Stores up to this size get a full structural check whenever they are opened (about
/// 150 ms per 50 MB when cached); larger ones get the cheap checks on open and the full one
/// before a run writes into them, up to [`FULL_CHECK_BEFORE_WRITE`].
const FULL_CHECK_ON_OPEN: u64 = 64 << 20;

/// Stores up to this size are checked whole before a run writes into them.
const FULL_CHECK_BEFORE_WRITE: u64 = 256 << 20;

/// Turns off SQLite's bulk page-cache allocation for the whole process: by default every
/// connection allocates room for 20 pages the first time it reads its database (330 KB with
/// the store's 16 KiB pages), and a run holds four (the writer, its checkpointer, the
/// integrity check's and the run's own), three of which read a few pages. Without it, each
/// page is allocated when its connection's cache first needs it, up to the connection's
/// `cache_size`, so only the writer grows to its 512 KiB. With the summary's fold that keeps
/// no score per case, a 50,000-case run's peak memory fell by about 2 MB
/// (docs/performance.md).
///
/// SQLite takes the setting only before it starts: call this first in `main`, before any
/// connection opens. Returns whether SQLite took it (it does nothing once SQLite started).
#[allow(unsafe_code)]
pub fn no_bulk_page_cache() -> bool {
    // SAFETY: `sqlite3_config` must not run while another thread uses SQLite; called first
    // in `main`, before any thread of ours starts. SQLITE_CONFIG_PAGECACHE takes a buffer
    // pointer and two ints; a null buffer with 0 pages means no initial bulk allocation.
    let rc = unsafe {
        rusqlite::ffi::sqlite3_config(
            rusqlite::ffi::SQLITE_CONFIG_PAGECACHE,
            std::ptr::null_mut::<std::ffi::c_void>(),
            0 as std::ffi::c_int,
            0 as std::ffi::c_int,
        )
    };
    rc == rusqlite::ffi::SQLITE_OK
}

/// Runs a statement that needs the write lock, trying again while another connection holds
/// it, for up to [`WRITE_PATIENCE`]: several runs sharing one store take the lock in turn,
/// and a finished trial must not be lost because the busy handler's wait ran out once.
pub(crate) fn patiently<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
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

/// Whether an error says the file is not a database or is malformed.
pub(crate) fn is_corrupt(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error {
                code: rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase,
                ..
            },
            _,
        )
    )
}

/// SQLite's "not a database" and "malformed" errors as [`StoreError::Damaged`].
fn corrupt_as_damaged(e: StoreError, path: &Path) -> StoreError {
    match e {
        StoreError::Sql(rusqlite::Error::SqliteFailure(f, msg))
            if matches!(
                f.code,
                rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase
            ) =>
        {
            StoreError::Damaged {
                path: path.display().to_string(),
                detail: msg.unwrap_or_else(|| f.to_string()),
            }
        }
        other => other,
    }
}

/// The cheap checks: the file's header (magic, page size, a size that is a whole number of
/// pages; not the page count, which a checkpoint of another connection may be changing),
/// and the structure of the small tables every command reads (runs, baselines, events).
fn check_cheaply(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    use std::io::Read;
    let damaged = |detail: String| StoreError::Damaged {
        path: path.display().to_string(),
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
        path: path.display().to_string(),
        detail,
    })
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
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);

    // A new store gets 16 KB pages (ignored for an existing one). A run's case rows (about
    // 2 KB each) go through the WAL and then into the database a page per system call each
    // way: with SQLite's default 4 KB pages a 50,000-case run made 82,000 pwrite and 27,000
    // pread calls, with 16 KB pages 23,000 and 7,000 (`strace -c`). Larger pages cut calls
    // further but every commit rewrites its partly filled pages whole, which for a slow run
    // (a case per commit) means writing 64 KB of WAL per 2 KB row at 16 KB and 256 KB at 64.
    conn.pragma_update(None, "page_size", PAGE_SIZE)?;
    // Turning a new file into a WAL database upgrades a read transaction to a write one,
    // which SQLite refuses at once, without its busy handler, while another connection holds
    // a lock: runs started together on a new store would otherwise fail here.
    patiently(|| conn.pragma_update(None, "journal_mode", "WAL"))?;
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

/// A connection to an SQLite store.
pub struct SqliteDb {
    /// A run's writer keeps the WAL in check (declared first: its thread stops before the
    /// connection closes).
    wal: Option<WalKeeper>,
    conn: Connection,
    path: PathBuf,
}

/// The WAL upkeep of a run's writer: the background checkpointer and the restart threshold.
struct WalKeeper {
    checkpointer: Checkpointer,
    /// WAL size (pages) past which a commit is followed by a WAL restart.
    restart_pages: i64,
}

impl SqliteDb {
    /// Opens (or creates) the store at `path`, checked on the way in (cheaply, and whole
    /// when it is small): a damaged file is an error, so that nothing reads wrong results
    /// from it or writes new runs into it.
    pub fn open(path: &Path) -> Result<SqliteDb, StoreError> {
        let db = SqliteDb::open_unchecked(path)?;
        check_cheaply(&db.conn, path)?;
        check_whole(&db.conn, path, FULL_CHECK_ON_OPEN)?;
        Ok(db)
    }

    /// Opens the store without checking it (for `gauntlet runs check`, which reports every
    /// problem instead of stopping at the first).
    pub fn open_unchecked(path: &Path) -> Result<SqliteDb, StoreError> {
        Ok(SqliteDb {
            wal: None,
            conn: open_conn(path).map_err(|e| corrupt_as_damaged(e, path))?,
            path: path.to_path_buf(),
        })
    }

    /// A connection for a run's writer: checked whole first when the store is too large to
    /// be checked on every open; it never checkpoints as it commits, a background thread
    /// does.
    pub fn writer(path: &Path) -> Result<SqliteDb, StoreError> {
        SqliteDb::writer_tuned(path, CHECKPOINT_EVERY, WAL_RESTART_BYTES)
    }

    pub(crate) fn writer_tuned(
        path: &Path,
        every: Duration,
        restart_bytes: i64,
    ) -> Result<SqliteDb, StoreError> {
        let conn = open_conn(path)?;
        let len = std::fs::metadata(path).map_or(0, |m| m.len());
        if len > FULL_CHECK_ON_OPEN {
            check_whole(&conn, path, FULL_CHECK_BEFORE_WRITE)?;
        }
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        conn.pragma_update(None, "cache_size", -WRITER_CACHE_KIB)?;
        let page: i64 = conn.pragma_query_value(None, "page_size", |r| r.get(0))?;
        Ok(SqliteDb {
            wal: Some(WalKeeper {
                checkpointer: Checkpointer::start(path, every)?,
                restart_pages: (restart_bytes / page).max(1),
            }),
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Copies the little the background checkpoint has not, and lets the next commit write
    /// the WAL from its start. A reader in the way (or the background checkpoint itself)
    /// makes it give up within a few milliseconds; a later commit tries again.
    fn restart_wal(conn: &Connection, c: &Checkpointer) -> rusqlite::Result<()> {
        conn.busy_timeout(Duration::from_millis(5))?;
        let restarted = checkpoint(conn, "RESTART");
        conn.busy_timeout(BUSY_TIMEOUT)?;
        if let Ok((false, _)) = restarted {
            c.wal_pages.store(0, Ordering::Relaxed);
        }
        Ok(())
    }
}

impl ToSql for Value<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match *self {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(i) => ToSqlOutput::Borrowed(ValueRef::Integer(i)),
            Value::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
        })
    }
}

struct SqliteRow<'a, 'b>(&'a rusqlite::Row<'b>);

impl Row for SqliteRow<'_, '_> {
    fn int(&self, i: usize) -> Result<Option<i64>, StoreError> {
        Ok(self.0.get::<_, Option<i64>>(i)?)
    }

    fn text(&self, i: usize) -> Result<Option<&str>, StoreError> {
        match self.0.get_ref(i)? {
            ValueRef::Null => Ok(None),
            ValueRef::Text(b) => std::str::from_utf8(b)
                .map(Some)
                .map_err(|e| StoreError::Record(format!("column {i} is not UTF-8: {e}"))),
            other => Err(StoreError::Record(format!(
                "column {i} holds {:?}, not text",
                other.data_type()
            ))),
        }
    }

    fn flag(&self, i: usize) -> Result<bool, StoreError> {
        Ok(self.0.get::<_, i64>(i)? != 0)
    }
}

impl Db for SqliteDb {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn execute(&mut self, sql: &str, params: &[Value<'_>]) -> Result<u64, StoreError> {
        let n = self
            .conn
            .prepare_cached(sql)?
            .execute(rusqlite::params_from_iter(params))?;
        Ok(n as u64)
    }

    fn query(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
        each: &mut dyn FnMut(&dyn Row) -> RowResult,
    ) -> Result<(), StoreError> {
        let mut st = self.conn.prepare_cached(sql)?;
        let mut rows = st.query(rusqlite::params_from_iter(params))?;
        while let Some(row) = rows.next()? {
            each(&SqliteRow(row))?;
        }
        Ok(())
    }

    fn begin(&mut self) -> Result<(), StoreError> {
        // IMMEDIATE takes the write lock now, under the busy handler: a deferred transaction
        // that read first could be refused at once when it came to write.
        patiently(|| self.conn.execute_batch("BEGIN IMMEDIATE"))?;
        Ok(())
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        patiently(|| self.conn.execute_batch("COMMIT"))?;
        if let Some(w) = &self.wal {
            w.checkpointer.poke();
            if w.checkpointer.wal_pages.load(Ordering::Relaxed) > w.restart_pages {
                SqliteDb::restart_wal(&self.conn, &w.checkpointer)?;
            }
        }
        Ok(())
    }

    fn rollback(&mut self) {
        let _ = self.conn.execute_batch("ROLLBACK");
    }

    fn check(&mut self) -> Result<Vec<String>, StoreError> {
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

    fn compact(&mut self) -> Result<(), StoreError> {
        patiently(|| self.conn.execute_batch("VACUUM"))?;
        Ok(())
    }

    fn size(&mut self) -> u64 {
        std::fs::metadata(&self.path).map_or(0, |m| m.len())
    }
}

/// The background WAL checkpointer of a run's writer: a thread with its own connection,
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

/// Opens one new file from eight threads at once with `open`, forty times over (a new file
/// each time): the first failure, with its round.
#[cfg(test)]
pub(crate) fn open_together(open: fn(&Path) -> Result<(), String>) -> Result<(), String> {
    const THREADS: usize = 8;
    for round in 0..40 {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let path = dir.path().join(format!("new-{round}.db"));
        let gate = Arc::new(std::sync::Barrier::new(THREADS));
        let threads: Vec<JoinHandle<Result<(), String>>> = (0..THREADS)
            .map(|_| {
                let (path, gate) = (path.clone(), Arc::clone(&gate));
                std::thread::spawn(move || {
                    gate.wait();
                    open(&path)
                })
            })
            .collect();
        for t in threads {
            t.join()
                .map_err(|_| "a thread panicked".to_owned())?
                .map_err(|e| format!("round {round}: {e}"))?;
        }
    }
    Ok(())
}
