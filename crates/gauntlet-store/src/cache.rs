//! The response cache on disk: [`CacheDb`], an SQLite file (`cache.db`, next to an SQLite
//! run store; in `.gauntlet/` of the working folder when runs go to PostgreSQL) behind the
//! core's [`ResponseCache`] seam, and what `gauntlet cache stats|clear` read and change.
//!
//! Entries are keyed by the caller's digest and scope (agent, judge, attacker); the kind and
//! model are kept beside them for the statistics. Hits and misses are counted in memory and
//! added to the file's counters when the handle is dropped, so a lookup costs one read.
//! The cache is an optimisation: a write that fails (the file busy for too long, the disk
//! full) loses only that entry, and a file that cannot be opened is an error at the start.
//!
//! The file's format is its SQLite `user_version` ([`CACHE_VERSION`]). A file of an older
//! version is brought up to date when opened: judge answers keyed before judges were bound
//! to what answers them (version 2) could never be served again, so they are removed, and
//! their number is kept for the run to say so once ([`ResponseCache::legacy_entries`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use gauntlet_core::cache::{CacheCounts, CacheKey, CacheScope, Counter, ResponseCache};
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

/// The cache file's name.
pub const CACHE_FILE: &str = "cache.db";

/// The file's format, in its `user_version`: 2 since judge answers are keyed by the judge's
/// whole binding (the values of its settings, hashed secrets, its pinned model).
pub const CACHE_VERSION: i64 = 2;

/// Why the cache file could not be used.
#[derive(Debug, thiserror::Error)]
#[error("failed to open the response cache `{path}`: {source}")]
pub struct CacheDbError {
    path: String,
    #[source]
    source: rusqlite::Error,
}

/// The response cache in an SQLite file.
pub struct CacheDb {
    path: PathBuf,
    conn: Mutex<Connection>,
    counters: BTreeMap<CacheScope, Counter>,
    /// Judge answers of an older key format removed when the file was opened.
    legacy: u64,
}

/// What one scope of the cache holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ScopeStats {
    /// `agent`, `judge` or `attacker`.
    pub scope: String,
    /// Entries stored.
    pub entries: u64,
    /// Bytes of the stored answers.
    pub bytes: u64,
    /// Lookups answered, over every run that used the file.
    pub hits: u64,
    /// Lookups not answered (each went to the model).
    pub misses: u64,
}

/// What the cache file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    /// The file.
    pub path: String,
    /// Its size on disk.
    pub file_bytes: u64,
    /// By scope.
    pub scopes: Vec<ScopeStats>,
}

impl CacheDb {
    /// Where the cache lives for a store at `store_file` (an SQLite store), or in `dir`.
    pub fn path_beside(store_file: Option<&Path>, dir: &Path) -> PathBuf {
        match store_file.and_then(Path::parent) {
            Some(p) if !p.as_os_str().is_empty() => p.join(CACHE_FILE),
            _ => dir.join(CACHE_FILE),
        }
    }

    /// Opens (or creates) the cache file.
    pub fn open(path: &Path) -> Result<CacheDb, CacheDbError> {
        let err = |source| CacheDbError {
            path: path.display().to_string(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = std::fs::create_dir_all(dir);
        }
        let conn = Connection::open(path).map_err(err)?;
        conn.busy_timeout(Duration::from_secs(10)).map_err(err)?;
        // Several runs may create the cache at once (see the store's `open_conn`).
        crate::sqlite::patiently(|| conn.pragma_update(None, "journal_mode", "WAL"))
            .map_err(err)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(err)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS entries (
                 scope TEXT NOT NULL,
                 digest TEXT NOT NULL,
                 kind TEXT NOT NULL,
                 model TEXT NOT NULL,
                 value TEXT NOT NULL,
                 created_at TEXT NOT NULL,
                 PRIMARY KEY (scope, digest)
             );
             CREATE TABLE IF NOT EXISTS counters (
                 scope TEXT PRIMARY KEY,
                 hits INTEGER NOT NULL DEFAULT 0,
                 misses INTEGER NOT NULL DEFAULT 0
             );",
        )
        .map_err(err)?;
        let legacy = migrate(&conn).map_err(err)?;
        Ok(CacheDb {
            path: path.to_owned(),
            conn: Mutex::new(conn),
            counters: CacheScope::ALL
                .into_iter()
                .map(|s| (s, Counter::default()))
                .collect(),
            legacy,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the file holds, with the hits and misses of every run that used it (this
    /// handle's own included).
    pub fn stats(&self) -> Result<CacheStats, CacheDbError> {
        let err = |source| CacheDbError {
            path: self.path.display().to_string(),
            source,
        };
        let conn = self.conn.lock().expect("cache lock");
        let mut scopes = Vec::new();
        for scope in CacheScope::ALL {
            let (entries, bytes): (i64, i64) = conn
                .query_row(
                    "SELECT COUNT(*), COALESCE(SUM(LENGTH(value) + LENGTH(digest)), 0)
                     FROM entries WHERE scope = ?1",
                    params![scope.as_str()],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .map_err(err)?;
            let (hits, misses): (i64, i64) = conn
                .query_row(
                    "SELECT hits, misses FROM counters WHERE scope = ?1",
                    params![scope.as_str()],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .map_err(err)?
                .unwrap_or((0, 0));
            let mine = self.counters[&scope].get();
            scopes.push(ScopeStats {
                scope: scope.as_str().to_owned(),
                entries: entries as u64,
                bytes: bytes as u64,
                hits: hits as u64 + mine.hits,
                misses: misses as u64 + mine.misses,
            });
        }
        let file_bytes = ["", "-wal"]
            .iter()
            .filter_map(|s| {
                std::fs::metadata(format!("{}{s}", self.path.display()))
                    .ok()
                    .map(|m| m.len())
            })
            .sum();
        Ok(CacheStats {
            path: self.path.display().to_string(),
            file_bytes,
            scopes,
        })
    }

    /// Deletes the entries of `scope` (every scope when `None`) and their counters; returns
    /// how many entries went.
    pub fn clear(&self, scope: Option<CacheScope>) -> Result<u64, CacheDbError> {
        let err = |source| CacheDbError {
            path: self.path.display().to_string(),
            source,
        };
        let conn = self.conn.lock().expect("cache lock");
        let n = match scope {
            Some(s) => {
                conn.execute("DELETE FROM counters WHERE scope = ?1", params![s.as_str()])
                    .map_err(err)?;
                conn.execute("DELETE FROM entries WHERE scope = ?1", params![s.as_str()])
                    .map_err(err)?
            }
            None => {
                conn.execute("DELETE FROM counters", []).map_err(err)?;
                conn.execute("DELETE FROM entries", []).map_err(err)?
            }
        };
        for (s, c) in &self.counters {
            if scope.is_none_or(|want| want == *s) {
                c.reset();
            }
        }
        // Give the space back: a cleared cache should not keep its size.
        let _ = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); VACUUM;");
        Ok(n as u64)
    }
}

/// Brings a file of an older format up to [`CACHE_VERSION`], in one write transaction (two
/// processes opening an old file at once migrate it once): judge answers keyed the old way
/// are removed. Returns how many.
fn migrate(conn: &Connection) -> rusqlite::Result<u64> {
    let version = |c: &Connection| c.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0));
    if version(conn)? >= CACHE_VERSION {
        return Ok(0);
    }
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Immediate)?;
    if version(&tx)? >= CACHE_VERSION {
        return Ok(0);
    }
    let n = tx.execute("DELETE FROM entries WHERE scope = 'judge'", [])?;
    tx.pragma_update(None, "user_version", CACHE_VERSION)?;
    tx.commit()?;
    Ok(n as u64)
}

impl ResponseCache for CacheDb {
    fn get(&self, key: &CacheKey) -> Option<serde_json::Value> {
        let text: Option<String> = self
            .conn
            .lock()
            .expect("cache lock")
            .query_row(
                "SELECT value FROM entries WHERE scope = ?1 AND digest = ?2",
                params![key.scope.as_str(), key.digest],
                |r| r.get(0),
            )
            .optional()
            .ok()
            .flatten();
        let v = text.and_then(|t| serde_json::from_str(&t).ok());
        self.counters[&key.scope].count(v.is_some());
        v
    }

    fn put(&self, key: &CacheKey, value: &serde_json::Value) {
        let Ok(text) = serde_json::to_string(value) else {
            return;
        };
        let _ = self.conn.lock().expect("cache lock").execute(
            "INSERT OR REPLACE INTO entries (scope, digest, kind, model, value, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                key.scope.as_str(),
                key.digest,
                key.kind,
                key.model,
                text,
                jiff::Timestamp::now().to_string()
            ],
        );
    }

    fn session(&self) -> CacheCounts {
        let mut c = CacheCounts::default();
        for counter in self.counters.values() {
            let g = counter.get();
            c.hits += g.hits;
            c.misses += g.misses;
        }
        c
    }

    fn legacy_entries(&self) -> u64 {
        self.legacy
    }
}

impl Drop for CacheDb {
    fn drop(&mut self) {
        let Ok(conn) = self.conn.lock() else { return };
        for (scope, counter) in &self.counters {
            let c = counter.get();
            if c.hits + c.misses == 0 {
                continue;
            }
            let _ = conn.execute(
                "INSERT INTO counters (scope, hits, misses) VALUES (?1, ?2, ?3)
                 ON CONFLICT(scope) DO UPDATE SET hits = hits + ?2, misses = misses + ?3",
                params![scope.as_str(), c.hits as i64, c.misses as i64],
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_runs_creating_the_cache_at_once_all_open_it() {
        let opened = crate::sqlite::open_together(|path| {
            CacheDb::open(path).map(drop).map_err(|e| e.to_string())
        });
        assert_eq!(opened, Ok(()));
    }

    fn key(scope: CacheScope, d: &str) -> CacheKey {
        CacheKey {
            scope,
            digest: d.into(),
            kind: "openai".into(),
            model: "m".into(),
        }
    }

    #[test]
    fn entries_survive_reopening_and_stats_add_up_the_counters() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.db");
        {
            let c = CacheDb::open(&path).unwrap();
            assert_eq!(c.get(&key(CacheScope::Judge, "a")), None);
            c.put(
                &key(CacheScope::Judge, "a"),
                &serde_json::json!({"text": "x"}),
            );
            assert!(c.get(&key(CacheScope::Judge, "a")).is_some());
        }
        let c = CacheDb::open(&path).unwrap();
        assert!(c.get(&key(CacheScope::Judge, "a")).is_some());
        assert_eq!(c.get(&key(CacheScope::Agent, "a")), None);
        let s = c.stats().unwrap();
        let judge = s.scopes.iter().find(|s| s.scope == "judge").unwrap();
        assert_eq!((judge.entries, judge.hits, judge.misses), (1, 2, 1));
        assert!(judge.bytes > 0);
        let agent = s.scopes.iter().find(|s| s.scope == "agent").unwrap();
        assert_eq!((agent.entries, agent.hits, agent.misses), (0, 0, 1));
        assert_eq!(c.clear(None).unwrap(), 1);
        let s = c.stats().unwrap();
        assert!(s.scopes.iter().all(|s| s.entries == 0));
        assert_eq!(c.get(&key(CacheScope::Judge, "a")), None);
    }

    #[test]
    fn judge_answers_of_an_old_file_are_removed_once_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.db");
        // A file as the previous version wrote it: the same tables, no user_version.
        {
            let c = CacheDb::open(&path).unwrap();
            c.put(
                &key(CacheScope::Judge, "old"),
                &serde_json::json!({"text": "x"}),
            );
            c.put(
                &key(CacheScope::Agent, "a"),
                &serde_json::json!({"text": "y"}),
            );
            let conn = c.conn.lock().unwrap();
            conn.pragma_update(None, "user_version", 0).unwrap();
        }
        let c = CacheDb::open(&path).unwrap();
        assert_eq!(c.legacy_entries(), 1);
        assert_eq!(c.get(&key(CacheScope::Judge, "old")), None);
        assert!(
            c.get(&key(CacheScope::Agent, "a")).is_some(),
            "only judge answers changed their keys"
        );
        c.put(
            &key(CacheScope::Judge, "new"),
            &serde_json::json!({"text": "z"}),
        );
        drop(c);
        let c = CacheDb::open(&path).unwrap();
        assert_eq!(c.legacy_entries(), 0, "said once");
        assert!(c.get(&key(CacheScope::Judge, "new")).is_some());
    }

    #[test]
    fn the_cache_sits_beside_an_sqlite_store() {
        assert_eq!(
            CacheDb::path_beside(
                Some(Path::new("x/.gauntlet/runs.db")),
                Path::new(".gauntlet")
            ),
            PathBuf::from("x/.gauntlet/cache.db")
        );
        assert_eq!(
            CacheDb::path_beside(None, Path::new(".gauntlet")),
            PathBuf::from(".gauntlet/cache.db")
        );
    }
}
