//! The response cache seam: [`ResponseCache`], one store of model answers shared by every
//! caller that asks a model something: judges (their answers, on by default), attacker
//! models (on by default), embeddings endpoints (`similar:` checks, on by default) and the
//! agent under test (`--cache`, opt-in). Callers derive the
//! [`CacheKey`] from everything that changes an answer; the store only keeps values by key.
//!
//! The implementations: [`MemoryCache`] here (one process), the SQLite file next to the run
//! store (`gauntlet-store`'s `CacheDb`, `.gauntlet/cache.db`), and the judge cache's JSON
//! lines file (`--judge-cache FILE`). What goes in is a reply that was received in full:
//! errors, faults, rate limits and filtered replies are never stored, so a cache can never
//! turn a failure into a repeatable answer. Keys are digests: neither a key nor a value
//! holds a credential (headers are never part of either).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Who asked: each scope is counted apart, and a key of one scope never answers another.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CacheScope {
    /// The agent under test (`--cache`).
    Agent,
    /// A model judge.
    Judge,
    /// An attacker model that writes the attacks.
    Attacker,
    /// An embeddings endpoint (`similar:` checks): one vector per text.
    Embedding,
}

impl CacheScope {
    /// Every scope, in order.
    pub const ALL: [CacheScope; 4] = [
        CacheScope::Agent,
        CacheScope::Judge,
        CacheScope::Attacker,
        CacheScope::Embedding,
    ];

    /// `agent`, `judge`, `attacker`.
    pub fn as_str(self) -> &'static str {
        match self {
            CacheScope::Agent => "agent",
            CacheScope::Judge => "judge",
            CacheScope::Attacker => "attacker",
            CacheScope::Embedding => "embedding",
        }
    }

    /// The scope named `s`.
    pub fn parse(s: &str) -> Option<CacheScope> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// The key of one cached answer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    /// Who asked.
    pub scope: CacheScope,
    /// SHA-256 (hex) over everything that changes the answer: target kind, model, base URL
    /// (without credentials), the exact request body, the trial (or sample) index.
    pub digest: String,
    /// The target kind, kept in clear for `gauntlet cache stats`.
    pub kind: String,
    /// The model asked for, kept in clear for `gauntlet cache stats`.
    pub model: String,
}

/// A store of model answers.
pub trait ResponseCache: Send + Sync {
    /// The answer stored under `key`; counts a hit or a miss.
    fn get(&self, key: &CacheKey) -> Option<serde_json::Value>;

    /// Stores an answer received in full. A store that cannot write loses only the entry.
    fn put(&self, key: &CacheKey, value: &serde_json::Value);

    /// Hits and misses counted by this handle since it was opened.
    fn session(&self) -> CacheCounts;

    /// Judge answers found keyed the way keys were made before judges were bound to what
    /// answers them: never served (the store removes them, or skips them), counted so that a
    /// run can say so once.
    fn legacy_entries(&self) -> u64 {
        0
    }
}

/// Hits and misses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CacheCounts {
    /// Answers served from the cache.
    pub hits: u64,
    /// Questions the cache could not answer (and that went to the model).
    pub misses: u64,
}

/// Counts hits and misses for an implementation.
#[derive(Debug, Default)]
pub struct Counter {
    hits: AtomicU64,
    misses: AtomicU64,
}

impl Counter {
    /// Counts one lookup.
    pub fn count(&self, hit: bool) {
        if hit {
            self.hits.fetch_add(1, Ordering::Relaxed);
        } else {
            self.misses.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Starts counting again (the cache was cleared).
    pub fn reset(&self) {
        self.hits.store(0, Ordering::Relaxed);
        self.misses.store(0, Ordering::Relaxed);
    }

    /// The counts so far.
    pub fn get(&self) -> CacheCounts {
        CacheCounts {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
        }
    }
}

/// Entries kept in memory before the map is cleared, so a huge generated suite stays flat.
const MEMORY_LIMIT: usize = 100_000;

/// A cache for this process only.
#[derive(Debug, Default)]
pub struct MemoryCache {
    map: Mutex<HashMap<(CacheScope, String), serde_json::Value>>,
    counter: Counter,
}

impl MemoryCache {
    /// An empty cache.
    pub fn new() -> MemoryCache {
        MemoryCache::default()
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.map.lock().expect("memory cache lock").len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl ResponseCache for MemoryCache {
    fn get(&self, key: &CacheKey) -> Option<serde_json::Value> {
        let v = self
            .map
            .lock()
            .expect("memory cache lock")
            .get(&(key.scope, key.digest.clone()))
            .cloned();
        self.counter.count(v.is_some());
        v
    }

    fn put(&self, key: &CacheKey, value: &serde_json::Value) {
        let mut m = self.map.lock().expect("memory cache lock");
        if m.len() >= MEMORY_LIMIT {
            m.clear();
        }
        m.insert((key.scope, key.digest.clone()), value.clone());
    }

    fn session(&self) -> CacheCounts {
        self.counter.get()
    }
}

/// Length-prefixed parts of a key, so that `("ab", "c")` and `("a", "bc")` differ; the
/// caller hashes the bytes.
#[derive(Debug, Default, Clone)]
pub struct KeyParts(Vec<u8>);

impl KeyParts {
    /// No part yet.
    pub fn new() -> KeyParts {
        KeyParts::default()
    }

    /// Adds a part.
    pub fn part(mut self, bytes: impl AsRef<[u8]>) -> KeyParts {
        let b = bytes.as_ref();
        self.0.extend_from_slice(&(b.len() as u64).to_le_bytes());
        self.0.extend_from_slice(b);
        self
    }

    /// The bytes to hash.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(scope: CacheScope, d: &str) -> CacheKey {
        CacheKey {
            scope,
            digest: d.into(),
            kind: "openai".into(),
            model: "m".into(),
        }
    }

    #[test]
    fn a_memory_cache_counts_hits_and_misses_and_keeps_scopes_apart() {
        let c = MemoryCache::new();
        assert_eq!(c.get(&key(CacheScope::Judge, "a")), None);
        c.put(&key(CacheScope::Judge, "a"), &serde_json::json!("x"));
        assert_eq!(
            c.get(&key(CacheScope::Judge, "a")),
            Some(serde_json::json!("x"))
        );
        assert_eq!(c.get(&key(CacheScope::Agent, "a")), None);
        assert_eq!(c.session(), CacheCounts { hits: 1, misses: 2 });
    }

    #[test]
    fn key_parts_are_length_prefixed() {
        let a = KeyParts::new().part("ab").part("c");
        let b = KeyParts::new().part("a").part("bc");
        assert_ne!(a.bytes(), b.bytes());
    }
}
