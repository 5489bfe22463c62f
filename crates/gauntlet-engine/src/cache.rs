//! Where a run finds its response cache ([`cache_path`], [`open_response_cache`]): the
//! `cache.db` beside an SQLite run store, or `.gauntlet/cache.db` in the working folder when
//! runs go to PostgreSQL (the cache is a local optimisation: each machine keeps its own, and
//! nothing about a run depends on it). A run's cache is [`LazyCache`]: the file is opened
//! (and made, the first time) when something first asks it, so that a run with no judge, no
//! helper model and no `--cache` never touches it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use gauntlet_core::cache::{CacheCounts, CacheKey, Counter, ResponseCache};
use gauntlet_store::StoreLocation;
use gauntlet_store::cache::CacheDb;

use crate::error::EngineError;

/// The cache file that goes with a run store.
pub fn cache_path(store: Option<&StoreLocation>) -> PathBuf {
    let default_dir = Path::new(gauntlet_store::DEFAULT_STORE)
        .parent()
        .unwrap_or(Path::new(".gauntlet"))
        .to_owned();
    CacheDb::path_beside(store.and_then(StoreLocation::path), &default_dir)
}

/// Opens the response cache file now (`gauntlet cache`, which reads it).
pub fn open_response_cache(store: Option<&StoreLocation>) -> Result<Arc<CacheDb>, EngineError> {
    let path = cache_path(store);
    CacheDb::open(&path).map(Arc::new).map_err(|e| {
        EngineError::usage(
            e.to_string(),
            "the cache sits next to the run store; pass --no-cache to run without it",
        )
    })
}

/// The response cache of a run, opened when first asked ([`LazyCache`]).
pub fn lazy_response_cache(store: Option<&StoreLocation>) -> Arc<LazyCache> {
    Arc::new(LazyCache::new(cache_path(store)))
}

/// A response cache opened when first asked. Opening costs a file, its schema and a few
/// syncs (tens of milliseconds on a new store), which a run that asks nothing should not
/// pay. A file that cannot be opened then is a cache that holds nothing: every question
/// goes to the model, as with `--no-cache`, and [`LazyCache::open_error`] says why.
pub struct LazyCache {
    path: PathBuf,
    db: OnceLock<Result<Arc<CacheDb>, String>>,
    /// Questions asked while the file could not be opened (all misses).
    unopened: Counter,
}

impl LazyCache {
    /// The cache of the file at `path`, not opened yet.
    pub fn new(path: PathBuf) -> LazyCache {
        LazyCache {
            path,
            db: OnceLock::new(),
            unopened: Counter::default(),
        }
    }

    fn db(&self) -> Option<&Arc<CacheDb>> {
        self.db
            .get_or_init(|| {
                CacheDb::open(&self.path)
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .ok()
    }

    /// Whether the file was opened (something asked).
    pub fn opened(&self) -> bool {
        matches!(self.db.get(), Some(Ok(_)))
    }

    /// Why the file could not be opened when it was first asked, if it could not.
    pub fn open_error(&self) -> Option<&str> {
        match self.db.get() {
            Some(Err(e)) => Some(e),
            _ => None,
        }
    }
}

impl ResponseCache for LazyCache {
    fn get(&self, key: &CacheKey) -> Option<serde_json::Value> {
        match self.db() {
            Some(db) => db.get(key),
            None => {
                self.unopened.count(false);
                None
            }
        }
    }

    fn put(&self, key: &CacheKey, value: &serde_json::Value) {
        if let Some(db) = self.db() {
            db.put(key, value);
        }
    }

    fn session(&self) -> CacheCounts {
        let mut c = self.unopened.get();
        if let Some(Ok(db)) = self.db.get() {
            let d = db.session();
            c.hits += d.hits;
            c.misses += d.misses;
        }
        c
    }

    fn legacy_entries(&self) -> u64 {
        self.db().map_or(0, |db| db.legacy_entries())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(text: &str) -> CacheKey {
        CacheKey {
            scope: gauntlet_core::cache::CacheScope::Agent,
            digest: format!("{text:0>64}"),
            kind: "openai".into(),
            model: "m".into(),
        }
    }

    #[test]
    fn the_file_is_made_only_when_asked_and_then_serves_what_it_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.db");
        let c = LazyCache::new(path.clone());
        assert_eq!(c.session(), CacheCounts::default());
        assert!(!path.exists() && !c.opened(), "nothing asked, nothing made");
        assert_eq!(c.get(&key("a")), None);
        assert!(path.exists() && c.opened());
        c.put(&key("a"), &serde_json::json!("answer"));
        drop(c);
        let again = LazyCache::new(path);
        assert_eq!(again.get(&key("a")), Some(serde_json::json!("answer")));
        assert_eq!(again.session(), CacheCounts { hits: 1, misses: 0 });
    }

    #[test]
    fn a_file_that_cannot_be_opened_is_an_empty_cache_that_says_why() {
        let dir = tempfile::tempdir().unwrap();
        // A folder where the file should be.
        let path = dir.path().join("cache.db");
        std::fs::create_dir(&path).unwrap();
        let c = LazyCache::new(path);
        c.put(&key("a"), &serde_json::json!("answer"));
        assert_eq!(c.get(&key("a")), None);
        assert_eq!(c.session(), CacheCounts { hits: 0, misses: 1 });
        assert!(c.open_error().is_some());
    }
}
