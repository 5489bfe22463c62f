//! The judge cache: [`JudgeCache`] keeps every answer a judge gave, keyed by the judge (its
//! endpoint, model and sampling settings), the exact prompt and the sample index, so the same
//! question is never paid for twice: not within a run, and not across runs when the cache
//! has a file (`--judge-cache FILE`: re-grading a stored run then calls no judge at all).
//!
//! What is cached is what the judge said, malformed answers included: asking again after a
//! bad answer would be retrying a verdict. Transport failures are not answers and are not
//! cached. The sample index keeps deliberate repeats apart (calibration's self-consistency
//! asks the same item twice and must get two answers).

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use super::{JudgeIdentity, JudgeReply, JudgeRequest};

/// Entries kept in memory before the map is cleared, so a huge generated suite stays flat.
const MEMORY_LIMIT: usize = 100_000;

/// Answers of judges, by question.
pub struct JudgeCache {
    enabled: bool,
    map: Mutex<HashMap<String, JudgeReply>>,
    file: Option<Mutex<std::fs::File>>,
}

/// Why the cache file could not be used.
#[derive(Debug, thiserror::Error)]
#[error("failed to open the judge cache `{path}`")]
pub struct CacheError {
    path: String,
    #[source]
    source: std::io::Error,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Line {
    key: String,
    reply: JudgeReply,
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
            enabled: true,
            map: Mutex::new(HashMap::new()),
            file: None,
        }
    }

    /// No cache: every question is asked (`gauntlet flaky` needs fresh answers to see a
    /// judge's instability).
    pub fn disabled() -> Self {
        JudgeCache {
            enabled: false,
            ..Self::memory()
        }
    }

    /// A cache kept in a JSON lines file: read now, appended to as answers arrive. Lines
    /// that do not parse (a write cut short) are skipped.
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
        Ok(JudgeCache {
            enabled: true,
            map: Mutex::new(map),
            file: Some(Mutex::new(file)),
        })
    }

    /// The key of a question: SHA-256 over the judge and the request.
    pub fn key(who: &JudgeIdentity, req: &JudgeRequest) -> String {
        let mut h = Sha256::new();
        for part in [
            who.endpoint.as_str(),
            who.configured_model.as_str(),
            who.params.as_str(),
            req.system.as_str(),
            req.user.as_str(),
        ] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        h.update(req.sample.to_le_bytes());
        h.update([u8::from(req.swapped)]);
        // Fake judges answer from the item's fields, which the prompt does not show.
        for (k, v) in &req.fields {
            h.update((k.len() as u64).to_le_bytes());
            h.update(k.as_bytes());
            h.update((v.len() as u64).to_le_bytes());
            h.update(v.as_bytes());
        }
        super::template::hex(&h.finalize())
    }

    /// A cached answer.
    pub fn get(&self, key: &str) -> Option<JudgeReply> {
        if !self.enabled {
            return None;
        }
        self.map.lock().expect("judge cache lock").get(key).cloned()
    }

    /// Keeps an answer. A failed write to the file loses only the cache entry.
    pub fn put(&self, key: &str, reply: &JudgeReply) {
        if !self.enabled {
            return;
        }
        {
            let mut m = self.map.lock().expect("judge cache lock");
            if m.len() >= MEMORY_LIMIT {
                m.clear();
            }
            m.insert(key.to_owned(), reply.clone());
        }
        if let Some(f) = &self.file
            && let Ok(line) = serde_json::to_string(&Line {
                key: key.to_owned(),
                reply: reply.clone(),
            })
        {
            let mut f = f.lock().expect("judge cache file lock");
            let _ = writeln!(f, "{line}");
        }
    }
}
