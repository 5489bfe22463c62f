//! The judge cache: [`JudgeCache`] keeps every answer a judge gave, keyed by the judge (its
//! endpoint, model and sampling settings), the exact prompt and the sample index, so the same
//! question is never paid for twice: not within a run, and not across runs. It is the judges'
//! view of the one response cache (`gauntlet_core::cache::ResponseCache`, scope `judge`):
//! the binary backs it with the cache file next to the run store (`.gauntlet/cache.db`, on by
//! default), or with a JSON lines file (`--judge-cache FILE`, [`JsonlCache`]), or memory.
//!
//! What is cached is what the judge said, malformed answers included: asking again after a
//! bad answer would be retrying a verdict. Transport failures are not answers and are not
//! cached. The sample index keeps deliberate repeats apart (calibration's self-consistency
//! asks the same item twice and must get two answers).

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use gauntlet_core::cache::{
    CacheCounts, CacheKey, CacheScope, Counter, KeyParts, MemoryCache, ResponseCache,
};
use sha2::{Digest, Sha256};

use super::{JudgeIdentity, JudgeReply, JudgeRequest};

/// Entries a JSON lines cache keeps in memory before the map is cleared.
const MEMORY_LIMIT: usize = 100_000;

/// Answers of judges, by question.
pub struct JudgeCache {
    store: Option<Arc<dyn ResponseCache>>,
}

/// Why the cache file could not be used.
#[derive(Debug, thiserror::Error)]
#[error("failed to open the judge cache `{path}`")]
pub struct CacheError {
    path: String,
    #[source]
    source: std::io::Error,
}

impl Default for JudgeCache {
    fn default() -> Self {
        Self::memory()
    }
}

impl JudgeCache {
    /// A cache for this process only.
    pub fn memory() -> Self {
        JudgeCache {
            store: Some(Arc::new(MemoryCache::new())),
        }
    }

    /// No cache: every question is asked (`gauntlet flaky` needs fresh answers to see a
    /// judge's instability).
    pub fn disabled() -> Self {
        JudgeCache { store: None }
    }

    /// Judges' answers kept in a shared response cache (the cache file next to the store).
    pub fn shared(store: Arc<dyn ResponseCache>) -> Self {
        JudgeCache { store: Some(store) }
    }

    /// A cache kept in a JSON lines file (`--judge-cache FILE`).
    pub fn open(path: &Path) -> Result<Self, CacheError> {
        Ok(Self::shared(Arc::new(JsonlCache::open(path)?)))
    }

    /// Hits and misses of this run's lookups.
    pub fn session(&self) -> CacheCounts {
        self.store.as_ref().map(|s| s.session()).unwrap_or_default()
    }

    /// The key of a question: SHA-256 over the judge and the request.
    pub fn key(who: &JudgeIdentity, req: &JudgeRequest) -> CacheKey {
        let mut parts = KeyParts::new()
            .part(&who.endpoint)
            .part(&who.configured_model)
            .part(&who.params)
            .part(&req.system)
            .part(&req.user);
        let mut h = Sha256::new();
        h.update(parts.bytes());
        h.update(req.sample.to_le_bytes());
        h.update([u8::from(req.swapped)]);
        // Fake judges answer from the item's fields, which the prompt does not show.
        for (k, v) in &req.fields {
            parts = KeyParts::new().part(k).part(v);
            h.update(parts.bytes());
        }
        CacheKey {
            scope: CacheScope::Judge,
            digest: super::template::hex(&h.finalize()),
            kind: who.endpoint.split(' ').next().unwrap_or("").to_owned(),
            model: who.configured_model.clone(),
        }
    }

    /// A cached answer.
    pub fn get(&self, key: &CacheKey) -> Option<JudgeReply> {
        let v = self.store.as_ref()?.get(key)?;
        serde_json::from_value(v).ok()
    }

    /// Keeps an answer. A failed write loses only the cache entry.
    pub fn put(&self, key: &CacheKey, reply: &JudgeReply) {
        if let (Some(s), Ok(v)) = (&self.store, serde_json::to_value(reply)) {
            s.put(key, &v);
        }
    }
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Line {
    key: String,
    reply: serde_json::Value,
}

/// A response cache in a JSON lines file: read when opened, appended to as answers arrive.
/// Lines that do not parse (a write cut short) are skipped.
pub struct JsonlCache {
    map: Mutex<HashMap<String, serde_json::Value>>,
    file: Mutex<std::fs::File>,
    counter: Counter,
}

impl JsonlCache {
    /// Opens (or creates) the file.
    pub fn open(path: &Path) -> Result<Self, CacheError> {
        let err = |source| CacheError {
            path: path.display().to_string(),
            source,
        };
        let mut map = HashMap::new();
        if path.exists() {
            let f = std::fs::File::open(path).map_err(err)?;
            for line in std::io::BufReader::new(f).lines() {
                let line = line.map_err(err)?;
                if let Ok(l) = serde_json::from_str::<Line>(&line) {
                    map.insert(l.key, l.reply);
                }
            }
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(err)?;
        Ok(JsonlCache {
            map: Mutex::new(map),
            file: Mutex::new(file),
            counter: Counter::default(),
        })
    }
}

impl ResponseCache for JsonlCache {
    fn get(&self, key: &CacheKey) -> Option<serde_json::Value> {
        let v = self
            .map
            .lock()
            .expect("judge cache lock")
            .get(&key.digest)
            .cloned();
        self.counter.count(v.is_some());
        v
    }

    fn put(&self, key: &CacheKey, value: &serde_json::Value) {
        {
            let mut m = self.map.lock().expect("judge cache lock");
            if m.len() >= MEMORY_LIMIT {
                m.clear();
            }
            m.insert(key.digest.clone(), value.clone());
        }
        if let Ok(line) = serde_json::to_string(&Line {
            key: key.digest.clone(),
            reply: value.clone(),
        }) {
            let mut f = self.file.lock().expect("judge cache file lock");
            let _ = writeln!(f, "{line}");
        }
    }

    fn session(&self) -> CacheCounts {
        self.counter.get()
    }
}
