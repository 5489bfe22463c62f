//! `gauntlet cache stats|clear`: the response cache a run finds through
//! `gauntlet_engine::cache` (the `cache.db` beside an SQLite run store, or
//! `.gauntlet/cache.db` in the working folder when runs go to PostgreSQL).

use std::io::Write;

use gauntlet_core::cache::CacheScope;
use gauntlet_engine::cache::{cache_path, open_response_cache};

use crate::cli::{CacheArgs, CacheCommand};
use crate::error::CliError;
use crate::out::{self, Printer};
use crate::setup::store_location;

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
    let legacy = gauntlet_core::cache::ResponseCache::legacy_entries(&*db);
    if legacy > 0 {
        out::note(&format!(
            "removed {legacy} judge answer(s) cached before judges were bound to what answers them (they could not be used again)"
        ));
    }
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
