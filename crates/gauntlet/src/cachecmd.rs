//! `gauntlet cache stats|clear`, and where a run finds its response cache
//! ([`cache_path`], [`open_response_cache`]): the `cache.db` beside an SQLite run store, or
//! `.gauntlet/cache.db` in the working folder when runs go to PostgreSQL (the cache is a
//! local optimisation: each machine keeps its own, and nothing about a run depends on it).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gauntlet_core::cache::CacheScope;
use gauntlet_store::StoreLocation;
use gauntlet_store::cache::CacheDb;

use crate::cli::{CacheArgs, CacheCommand};
use crate::error::CliError;
use crate::out::Printer;
use crate::setup::store_location;

/// The cache file that goes with a run store.
pub fn cache_path(store: Option<&StoreLocation>) -> PathBuf {
    let default_dir = Path::new(gauntlet_store::DEFAULT_STORE)
        .parent()
        .unwrap_or(Path::new(".gauntlet"))
        .to_owned();
    CacheDb::path_beside(store.and_then(StoreLocation::path), &default_dir)
}

/// Opens the response cache of a run.
pub fn open_response_cache(store: Option<&StoreLocation>) -> Result<Arc<CacheDb>, CliError> {
    let path = cache_path(store);
    CacheDb::open(&path).map(Arc::new).map_err(|e| {
        CliError::usage(
            e.to_string(),
            "the cache sits next to the run store; pass --no-cache to run without it",
        )
    })
}

/// `gauntlet cache stats|clear`.
pub fn cache(args: CacheArgs) -> Result<i32, CliError> {
    let loc = store_location(args.store.store.as_deref(), args.config.as_deref())?;
    let path = cache_path(Some(&loc));
    let mut out = Printer::stdout();
    if !path.exists() {
        match args.command {
            CacheCommand::Stats { json: true } => {
                writeln!(
                    out,
                    "{}",
                    serde_json::json!({"path": path.display().to_string(), "exists": false})
                )?;
            }
            _ => writeln!(
                out,
                "no response cache at {} (nothing cached yet)",
                path.display()
            )?,
        }
        return Ok(0);
    }
    let db = open_response_cache(Some(&loc))?;
    let err = |e: gauntlet_store::cache::CacheDbError| {
        CliError::usage(
            e.to_string(),
            "check that the file is an intact cache, or delete it",
        )
    };
    match args.command {
        CacheCommand::Stats { json } => {
            let s = db.stats().map_err(err)?;
            if json {
                writeln!(
                    out,
                    "{}",
                    serde_json::to_string_pretty(&s).expect("stats serialize")
                )?;
                return Ok(0);
            }
            writeln!(
                out,
                "response cache {} ({} bytes on disk)",
                s.path, s.file_bytes
            )?;
            writeln!(
                out,
                "  {:<9} {:>8} {:>12} {:>8} {:>8}",
                "scope", "entries", "bytes", "hits", "misses"
            )?;
            for sc in &s.scopes {
                writeln!(
                    out,
                    "  {:<9} {:>8} {:>12} {:>8} {:>8}",
                    sc.scope, sc.entries, sc.bytes, sc.hits, sc.misses
                )?;
            }
        }
        CacheCommand::Clear { scope } => {
            let scope = scope
                .map(|s| {
                    CacheScope::parse(&s).ok_or_else(|| {
                        CliError::usage(
                            format!("unknown cache scope `{s}`"),
                            "scopes: agent, judge, attacker",
                        )
                    })
                })
                .transpose()?;
            let n = db.clear(scope).map_err(err)?;
            writeln!(
                out,
                "deleted {n} cached answer(s){} from {}",
                scope.map_or(String::new(), |s| format!(" of scope {}", s.as_str())),
                path.display()
            )?;
        }
    }
    Ok(0)
}
