//! `similar:` checks: [`Embeddings`], the run's embeddings endpoint (an `Embedder` the
//! caller lends) behind the response cache, and [`assess`], the cosine similarity between an
//! answer's embedding and each reference's, passing at the check's minimum.
//!
//! A vector is cached by the endpoint and model that made it and the exact text
//! ([`Embeddings::key`], scope `embedding` of the one response cache), so a reference is
//! embedded once per endpoint and model, and a run again over the same answers asks nothing.
//! Only vectors received in full are kept: a failed call, an answer that was not
//! embeddings, is never cached and never a pass. The check is a quality band, not a
//! security gate: a similarity says how close two texts lie for one model, not that the
//! answer is right.

use std::sync::Arc;

use gauntlet_core::cache::{CacheKey, CacheScope, KeyParts, ResponseCache};
use gauntlet_core::grader::{EmbedError, Embedder};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::agent::Finding;

/// The first part of every key: bumped when what a key covers changes.
pub const KEY_VERSION: &str = "embedding-key/1";

/// An embeddings endpoint with its cache.
pub struct Embeddings {
    embedder: Arc<dyn Embedder>,
    cache: Option<Arc<dyn ResponseCache>>,
}

/// Vectors for some texts, and how many came from the cache.
#[derive(Debug, Clone, PartialEq)]
pub struct Vectors {
    /// One vector per text, in order.
    pub vectors: Vec<Vec<f32>>,
    /// How many of them the cache held.
    pub cached: usize,
}

impl Embeddings {
    /// The endpoint, with a cache (`None`: every text is asked for).
    pub fn new(embedder: Arc<dyn Embedder>, cache: Option<Arc<dyn ResponseCache>>) -> Self {
        Embeddings { embedder, cache }
    }

    /// Where the vectors come from and which model makes them.
    pub fn identity(&self) -> String {
        self.embedder.identity()
    }

    /// The key of a text's vector: SHA-256 over the key version, the endpoint and model,
    /// and the text.
    pub fn key(&self, text: &str) -> CacheKey {
        let who = self.embedder.identity();
        let parts = KeyParts::new().part(KEY_VERSION).part(&who).part(text);
        let mut words = who.split(' ');
        CacheKey {
            scope: CacheScope::Embedding,
            digest: crate::judge::template::hex(&Sha256::digest(parts.bytes())),
            kind: words.next().unwrap_or("").to_owned(),
            model: words.next_back().unwrap_or("").to_owned(),
        }
    }

    /// The vectors of `texts`: from the cache where it has them, the rest in one request.
    pub async fn vectors(&self, texts: &[&str]) -> Result<Vectors, EmbedError> {
        let keys: Vec<CacheKey> = texts.iter().map(|t| self.key(t)).collect();
        let mut found: Vec<Option<Vec<f32>>> = keys
            .iter()
            .map(|k| {
                let v = self.cache.as_ref()?.get(k)?;
                serde_json::from_value::<Vec<f32>>(v)
                    .ok()
                    .filter(|v| !v.is_empty())
            })
            .collect();
        let cached = found.iter().filter(|v| v.is_some()).count();
        let missing: Vec<usize> = (0..texts.len()).filter(|&i| found[i].is_none()).collect();
        if !missing.is_empty() {
            let ask: Vec<String> = missing.iter().map(|&i| texts[i].to_owned()).collect();
            let got = self.embedder.embed(&ask).await?;
            if got.len() != ask.len() {
                return Err(EmbedError::Protocol(format!(
                    "{} vector(s) for {} text(s)",
                    got.len(),
                    ask.len()
                )));
            }
            for (&i, v) in missing.iter().zip(got) {
                if let Some(c) = &self.cache {
                    c.put(&keys[i], &json!(v));
                }
                found[i] = Some(v);
            }
        }
        Ok(Vectors {
            vectors: found.into_iter().flatten().collect(),
            cached,
        })
    }
}

/// The cosine similarity of two vectors; `None` when their lengths differ or one is zero.
pub fn cosine(a: &[f32], b: &[f32]) -> Option<f64> {
    if a.len() != b.len() || a.is_empty() {
        return None;
    }
    let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    (na > 0.0 && nb > 0.0).then(|| (dot / (na.sqrt() * nb.sqrt())).clamp(-1.0, 1.0))
}

/// What a `similar:` check found: the verdict's finding, and its details.
#[derive(Debug, Clone, PartialEq)]
pub struct Similarity {
    /// Pass, fail or not assessed, with the evidence.
    pub finding: Finding,
    /// The figures, for the verdict's details (`None` when nothing was measured).
    pub details: Option<Value>,
}

/// Grades `answer` against the references: passes when its cosine similarity to the closest
/// one is at least `min`. An empty answer fails without a call (it says nothing, so it is
/// like nothing); an endpoint that gives no usable vectors leaves the check not assessed,
/// with the failure's class.
pub async fn assess(to: &[String], min: f64, answer: &str, emb: &Embeddings) -> Similarity {
    if answer.trim().is_empty() {
        return Similarity {
            finding: Finding::Fail("the answer is empty: it is like no reference".into()),
            details: None,
        };
    }
    let mut texts: Vec<&str> = vec![answer];
    texts.extend(to.iter().map(String::as_str));
    let got = match emb.vectors(&texts).await {
        Ok(v) => v,
        Err(e) => {
            return Similarity {
                finding: Finding::NotAssessed(format!(
                    "no similarity ({}): {e} (by {})",
                    e.class(),
                    emb.identity()
                )),
                details: Some(json!({ "embeddings": emb.identity(), "error_class": e.class() })),
            };
        }
    };
    let (answer_vec, refs) = got.vectors.split_first().expect("the answer's vector");
    let mut best: Option<(usize, f64)> = None;
    for (i, r) in refs.iter().enumerate() {
        let Some(c) = cosine(answer_vec, r) else {
            return Similarity {
                finding: Finding::NotAssessed(format!(
                    "no similarity (protocol): the embeddings endpoint gave a zero vector or vectors of different lengths (by {})",
                    emb.identity()
                )),
                details: Some(json!({ "embeddings": emb.identity(), "error_class": "protocol" })),
            };
        };
        if best.is_none_or(|(_, b)| c > b) {
            best = Some((i, c));
        }
    }
    let Some((closest, c)) = best else {
        return Similarity {
            finding: Finding::NotAssessed("no reference to compare with".into()),
            details: None,
        };
    };
    // Shown at two places, never rounded up to the minimum it missed.
    let shown = (c * 100.0).floor() / 100.0;
    let which = if to.len() > 1 {
        format!(" (reference {})", closest + 1)
    } else {
        String::new()
    };
    let finding = if c >= min {
        Finding::Pass(format!(
            "cosine similarity {shown:.2}{which} (at least {min}; by {})",
            emb.identity()
        ))
    } else {
        Finding::Fail(format!(
            "cosine similarity {shown:.2}{which}, under the minimum of {min} (by {})",
            emb.identity()
        ))
    };
    Similarity {
        finding,
        details: Some(json!({
            "cosine": c,
            "min": min,
            "closest": closest,
            "embeddings": emb.identity(),
            "cached": got.cached,
            "embedded": texts.len() - got.cached,
        })),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use gauntlet_core::cache::MemoryCache;
    use gauntlet_core::target::BoxFuture;

    use super::*;

    /// Vectors by word: a text's vector counts the words `refund`, `card`, `shop`, `opens`;
    /// `broken` makes every call fail; calls are counted.
    struct Words {
        calls: AtomicUsize,
        broken: bool,
    }

    impl Embedder for Words {
        fn identity(&self) -> String {
            "test http://127.0.0.1/v1 words".into()
        }

        fn embed<'a>(
            &'a self,
            texts: &'a [String],
        ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
            Box::pin(async move {
                self.calls.fetch_add(1, Ordering::Relaxed);
                if self.broken {
                    return Err(EmbedError::Transport("connection refused".into()));
                }
                Ok(texts
                    .iter()
                    .map(|t| {
                        ["refund", "card", "shop", "opens"]
                            .iter()
                            .map(|w| t.matches(w).count() as f32)
                            .collect()
                    })
                    .collect())
            })
        }
    }

    fn emb(broken: bool) -> (Arc<Words>, Embeddings) {
        let w = Arc::new(Words {
            calls: AtomicUsize::new(0),
            broken,
        });
        let e = Embeddings::new(w.clone(), Some(Arc::new(MemoryCache::new())));
        (w, e)
    }

    /// Polls a future that never waits (the test embedder answers at once).
    fn block<T>(f: impl std::future::Future<Output = T>) -> T {
        let mut f = std::pin::pin!(f);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match f.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(v) => v,
            std::task::Poll::Pending => panic!("the test embedder never waits"),
        }
    }

    fn to() -> Vec<String> {
        vec!["The refund is back on your card.".into()]
    }

    #[test]
    fn a_close_answer_passes_a_far_one_fails_and_an_empty_one_fails_without_a_call() {
        let (w, e) = emb(false);
        let near = block(assess(&to(), 0.8, "Your card gets the refund.", &e));
        assert!(matches!(near.finding, Finding::Pass(_)), "{near:?}");
        let far = block(assess(&to(), 0.8, "The shop opens at nine.", &e));
        let Finding::Fail(why) = &far.finding else {
            panic!("{far:?}")
        };
        assert!(
            why.contains("cosine similarity 0.00, under the minimum of 0.8"),
            "{why}"
        );
        let calls = w.calls.load(Ordering::Relaxed);
        let empty = block(assess(&to(), 0.8, "  ", &e));
        assert!(matches!(empty.finding, Finding::Fail(_)), "{empty:?}");
        assert_eq!(w.calls.load(Ordering::Relaxed), calls);
    }

    #[test]
    fn vectors_are_cached_by_text_and_a_second_asking_makes_no_call() {
        let (w, e) = emb(false);
        let first = block(assess(&to(), 0.8, "Your card gets the refund.", &e));
        assert_eq!(w.calls.load(Ordering::Relaxed), 1);
        assert_eq!(first.details.as_ref().unwrap()["cached"], 0);
        let again = block(assess(&to(), 0.8, "Your card gets the refund.", &e));
        assert_eq!(w.calls.load(Ordering::Relaxed), 1, "served from the cache");
        assert_eq!(again.details.as_ref().unwrap()["cached"], 2);
        assert_eq!(first.finding, again.finding);
        // A new answer asks for its own vector only; the reference's is cached.
        let other = block(assess(&to(), 0.8, "A refund.", &e));
        assert_eq!(other.details.as_ref().unwrap()["cached"], 1);
        assert_eq!(w.calls.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn an_endpoint_that_fails_leaves_the_check_not_assessed_with_its_class() {
        let (_, e) = emb(true);
        let s = block(assess(&to(), 0.8, "Your card gets the refund.", &e));
        let Finding::NotAssessed(why) = &s.finding else {
            panic!("{s:?}")
        };
        assert!(why.starts_with("no similarity (transport): "), "{why}");
        assert_eq!(s.details.unwrap()["error_class"], "transport");
        // Nothing was cached from the failure.
        let (_, good) = emb(false);
        assert!(good.cache.as_ref().unwrap().get(&good.key("x")).is_none());
    }

    #[test]
    fn cosine_is_undefined_for_a_zero_vector_or_different_lengths() {
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 0.0]), None);
        assert_eq!(cosine(&[1.0], &[1.0, 0.0]), None);
        assert!((cosine(&[1.0, 1.0], &[2.0, 2.0]).unwrap() - 1.0).abs() < 1e-9);
        assert!((cosine(&[1.0, 0.0], &[-1.0, 0.0]).unwrap() + 1.0).abs() < 1e-9);
    }
}
