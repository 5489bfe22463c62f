//! The judge cache: [`JudgeCache`] keeps every answer a judge gave, keyed by the judge's
//! whole binding (its endpoint, model, sampling settings, the values of the settings that
//! change its answers with secret ones hashed, the model its configuration pins), the exact
//! prompt and the sample index, so the same question is never paid for twice: not within a
//! run, and not across runs. It is the judges' view of the one response cache
//! (`gauntlet_core::cache::ResponseCache`, scope `judge`): the binary backs it with the cache
//! file next to the run store (`.gauntlet/cache.db`, on by default), or with a JSON lines
//! file (`--judge-cache FILE`, [`JsonlCache`]), or memory.
//!
//! What is cached is what the judge said, malformed answers included: asking again after a
//! bad answer would be retrying a verdict. Transport failures are not answers and are not
//! cached. The sample index keeps deliberate repeats apart (calibration's self-consistency
//! asks the same item twice and must get two answers).
//!
//! A cached answer is served only for the model that answers now ([`JudgeCache::lookup`]):
//! a judge's first questions in a process go to the judge, and once a live answer has said
//! which model answers, only cached answers that report the same model id are served. A
//! program that switched models behind the same configuration is never served the old
//! model's answers. Keys carry a version ([`KEY_VERSION`]); entries keyed the old way never
//! match, and the stores say how many they found ([`JudgeCache::legacy`]).

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

/// The first part of every key: bumped when what a key covers changes, so that an entry
/// keyed the old way is never served. 2: the judge's binding (setting values, hashed
/// secrets, pinned model) is in the key.
pub const KEY_VERSION: &str = "judge-key/2";

/// Answers of judges, by question.
pub struct JudgeCache {
    store: Option<Arc<dyn ResponseCache>>,
    /// The model id each judge (by [`identity_digest`]) reported in its latest live answer
    /// of this process; absent until it has answered live.
    live: Mutex<HashMap<String, Option<String>>>,
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
        Self::shared(Arc::new(MemoryCache::new()))
    }

    /// No cache: every question is asked (`gauntlet flaky` needs fresh answers to see a
    /// judge's instability).
    pub fn disabled() -> Self {
        JudgeCache {
            store: None,
            live: Mutex::default(),
        }
    }

    /// Judges' answers kept in a shared response cache (the cache file next to the store).
    pub fn shared(store: Arc<dyn ResponseCache>) -> Self {
        JudgeCache {
            store: Some(store),
            live: Mutex::default(),
        }
    }

    /// A cache kept in a JSON lines file (`--judge-cache FILE`).
    pub fn open(path: &Path) -> Result<Self, CacheError> {
        Ok(Self::shared(Arc::new(JsonlCache::open(path)?)))
    }

    /// Hits and misses of this run's lookups.
    pub fn session(&self) -> CacheCounts {
        self.store.as_ref().map(|s| s.session()).unwrap_or_default()
    }

    /// Judge answers the store found keyed the old way (before [`KEY_VERSION`]): they are
    /// never served.
    pub fn legacy(&self) -> u64 {
        self.store.as_ref().map_or(0, |s| s.legacy_entries())
    }

    /// The key of a question: SHA-256 over the key version, the judge's binding and the
    /// request. Secrets enter it only as the hashes in the binding, and the key keeps only
    /// the digest and the configured model in clear.
    pub fn key(who: &JudgeIdentity, req: &JudgeRequest) -> CacheKey {
        let mut h = Sha256::new();
        h.update(KeyParts::new().part(KEY_VERSION).bytes());
        h.update(identity_parts(who).bytes());
        let mut parts = KeyParts::new().part(&req.system).part(&req.user);
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

    /// A cached answer `who` may be served: only once the judge has answered live in this
    /// process, and only when the cached answer reports the model id its latest live answer
    /// reported. Before that, the question goes to the judge, so that what answers now is
    /// known before an old answer stands for it.
    pub fn lookup(&self, who: &JudgeIdentity, key: &CacheKey) -> Option<JudgeReply> {
        let now = self
            .live
            .lock()
            .expect("judge cache lock")
            .get(&identity_digest(who))
            .cloned()?;
        self.get(key).filter(|r| r.model == now)
    }

    /// Keeps an answer the judge gave now, and notes the model id it reported.
    pub fn answered(&self, who: &JudgeIdentity, key: &CacheKey, reply: &JudgeReply) {
        self.live
            .lock()
            .expect("judge cache lock")
            .insert(identity_digest(who), reply.model.clone());
        self.put(key, reply);
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

/// The parts of a judge's binding, length-prefixed: everything of its identity.
fn identity_parts(who: &JudgeIdentity) -> KeyParts {
    let mut p = KeyParts::new()
        .part(&who.endpoint)
        .part(&who.configured_model)
        .part(&who.params)
        .part(who.pinned_model.as_deref().unwrap_or(""))
        .part([u8::from(who.pinned_model.is_some())]);
    for (k, v) in &who.settings {
        p = p.part(k).part(v);
    }
    p
}

/// SHA-256 (hex) of a judge's binding: the same for two judges exactly when a record or a
/// cached answer of one may stand for the other.
pub fn identity_digest(who: &JudgeIdentity) -> String {
    super::template::hex(&Sha256::digest(identity_parts(who).bytes()))
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Line {
    /// The key version the line was written under; absent in lines written before keys
    /// carried one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    v: Option<String>,
    key: String,
    reply: serde_json::Value,
}

/// A response cache in a JSON lines file: read when opened, appended to as answers arrive.
/// Lines that do not parse (a write cut short) are skipped.
pub struct JsonlCache {
    map: Mutex<HashMap<String, serde_json::Value>>,
    file: Mutex<std::fs::File>,
    counter: Counter,
    /// Lines written under an older key version: skipped.
    legacy: u64,
}

impl JsonlCache {
    /// Opens (or creates) the file.
    pub fn open(path: &Path) -> Result<Self, CacheError> {
        let err = |source| CacheError {
            path: path.display().to_string(),
            source,
        };
        let mut map = HashMap::new();
        let mut legacy = 0;
        if path.exists() {
            let f = std::fs::File::open(path).map_err(err)?;
            for line in std::io::BufReader::new(f).lines() {
                let line = line.map_err(err)?;
                match serde_json::from_str::<Line>(&line) {
                    Ok(l) if l.v.as_deref() == Some(KEY_VERSION) => {
                        map.insert(l.key, l.reply);
                    }
                    Ok(_) => legacy += 1,
                    Err(_) => {}
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
            legacy,
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
            v: Some(KEY_VERSION.to_owned()),
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

    fn legacy_entries(&self) -> u64 {
        self.legacy
    }
}
