//! Where a run finds its response cache ([`cache_path`], [`open_response_cache`]): the
//! `cache.db` beside an SQLite run store, or `.gauntlet/cache.db` in the working folder when
//! runs go to PostgreSQL (the cache is a local optimisation: each machine keeps its own, and
//! nothing about a run depends on it).

use std::path::{Path, PathBuf};
use std::sync::Arc;

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

/// Opens the response cache of a run.
pub fn open_response_cache(store: Option<&StoreLocation>) -> Result<Arc<CacheDb>, EngineError> {
    let path = cache_path(store);
    CacheDb::open(&path).map(Arc::new).map_err(|e| {
        EngineError::usage(
            e.to_string(),
            "the cache sits next to the run store; pass --no-cache to run without it",
        )
    })
}
