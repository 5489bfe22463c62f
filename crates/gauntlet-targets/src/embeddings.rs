//! Embeddings for `similar:` checks: [`OpenAiEmbedder`], the graders' `Embedder` seam over
//! any OpenAI-compatible embeddings endpoint (`POST {base}/embeddings`, Azure's deployment
//! path too), with the key, headers, retries and redaction every OpenAI model has; and
//! [`fake_embedding`], the deterministic vectors `serve-fake` answers with.
//!
//! The fake is a test fixture, not a model: a hashed bag of words and of the characters
//! three at a time inside each word, signed and normalised. Texts that share words (a
//! paraphrase, a reworded sentence) come out closer than texts that share none, which is
//! all a test of the `similar:` check's plumbing needs; it knows nothing of meaning
//! (synonyms score as unrelated).

use gauntlet_core::grader::{EmbedError, Embedder};
use gauntlet_core::redact::Redactor;
use gauntlet_core::target::{BoxFuture, TargetConfig, TargetError, TargetKind};
use gauntlet_core::trace::TraceRecorder;
use reqwest::header::AUTHORIZATION;
use serde::Deserialize;

use crate::error::BuildError;
use crate::openai::{ApiEndpoint, ApiSetup, key_and_base, key_header};

/// Dimensions of [`fake_embedding`]'s vectors.
pub const FAKE_DIMENSIONS: usize = 1024;

/// An OpenAI-compatible embeddings endpoint.
pub struct OpenAiEmbedder {
    api: ApiEndpoint,
    identity: String,
}

impl OpenAiEmbedder {
    /// Builds the embedder from an `openai` target config: its base URL (the config's, else
    /// `OPENAI_BASE_URL`, else OpenAI's), its model, its key variable (`api_key_env`, else
    /// `OPENAI_API_KEY`), its headers. Secrets it reads go to `redactor`.
    pub fn new(cfg: &TargetConfig, redactor: &mut Redactor) -> Result<OpenAiEmbedder, BuildError> {
        match cfg.kind {
            Some(TargetKind::Openai) => {}
            Some(k) => return Err(BuildError::NoEmbeddings(k.as_str())),
            None => return Err(BuildError::NoModelKind),
        }
        let (key_env, base, scope) = key_and_base(cfg);
        let mut setup = ApiSetup::start("openai", cfg, redactor, key_env, &base, scope)?;
        let base = setup.base;
        let (url, model) = match &cfg.azure {
            Some(az) => {
                if let Some(k) = &setup.key {
                    setup.headers.insert("api-key", key_header(k)?);
                }
                (
                    format!(
                        "{base}/openai/deployments/{}/embeddings?api-version={}",
                        az.deployment, az.api_version
                    ),
                    cfg.model.clone().unwrap_or_else(|| az.deployment.clone()),
                )
            }
            None => {
                if let Some(k) = &setup.key {
                    let bearer = key_header(&format!("Bearer {k}"))?;
                    setup.headers.insert(AUTHORIZATION, bearer);
                }
                (
                    format!("{base}/embeddings"),
                    cfg.model
                        .clone()
                        .ok_or(BuildError::NoModel { kind: "openai" })?,
                )
            }
        };
        let api = setup.finish(&url, model, redactor)?;
        let identity = format!(
            "openai {} {}",
            api.info.base_url.as_deref().unwrap_or(""),
            api.model
        );
        Ok(OpenAiEmbedder { api, identity })
    }
}

impl Embedder for OpenAiEmbedder {
    fn identity(&self) -> String {
        self.identity.clone()
    }

    fn embed<'a>(
        &'a self,
        texts: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, EmbedError>> {
        Box::pin(async move {
            let body = serde_json::to_vec(&serde_json::json!({
                "model": self.api.model,
                "input": texts,
            }))
            .map_err(|e| EmbedError::Protocol(e.to_string()))?;
            // The call is not a trial of the agent: its spans are dropped; what went wrong
            // is in the error.
            let mut rec = TraceRecorder::new();
            let resp = self.api.send(body, &mut rec).await.map_err(classify)?;
            if resp.status != 200 {
                let detail = match self.api.refused(&resp, &mut rec, None) {
                    TargetError::Transport(s) | TargetError::Blocked(s) => s,
                    other => other.to_string(),
                };
                // The transport retried these; what is left is the endpoint failing.
                return Err(if resp.status == 429 || resp.status >= 500 {
                    EmbedError::Transport(detail)
                } else {
                    EmbedError::Refused(detail)
                });
            }
            parse_embeddings(&resp.body, texts.len()).map_err(|e| {
                EmbedError::Protocol(format!(
                    "{e}; raw body: {}",
                    self.api.client.clip_body(&resp.body)
                ))
            })
        })
    }
}

fn classify(e: TargetError) -> EmbedError {
    match e {
        TargetError::Timeout(s) => EmbedError::Timeout(s),
        TargetError::Protocol(s) => EmbedError::Protocol(s),
        TargetError::Blocked(s) => EmbedError::Refused(s),
        TargetError::Transport(s) | TargetError::Harness(s) => EmbedError::Transport(s),
    }
}

#[derive(Deserialize)]
struct Wire {
    data: Vec<WireItem>,
}

#[derive(Deserialize)]
struct WireItem {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

/// Reads an embeddings response: one vector per text asked about, placed by its `index`
/// (in order when there is none), all of the same length, every number finite.
pub fn parse_embeddings(body: &[u8], asked: usize) -> Result<Vec<Vec<f32>>, String> {
    let wire: Wire =
        serde_json::from_slice(body).map_err(|e| format!("not an embeddings response ({e})"))?;
    if wire.data.len() != asked {
        return Err(format!("{} vector(s) for {asked} text(s)", wire.data.len()));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; asked];
    for (i, item) in wire.data.into_iter().enumerate() {
        let at = item.index.unwrap_or(i);
        let slot = out
            .get_mut(at)
            .ok_or_else(|| format!("index {at} for {asked} text(s)"))?;
        if slot.is_some() {
            return Err(format!("index {at} twice"));
        }
        *slot = Some(item.embedding);
    }
    let out: Vec<Vec<f32>> = out.into_iter().flatten().collect();
    let dims = out.first().map_or(0, Vec::len);
    if dims == 0 {
        return Err("an empty vector".into());
    }
    if out.iter().any(|v| v.len() != dims) {
        return Err("vectors of different lengths".into());
    }
    if out.iter().flatten().any(|x| !x.is_finite()) {
        return Err("a number that is not finite".into());
    }
    Ok(out)
}

/// `serve-fake`'s deterministic embedding of a text: each word (lower-cased, split at
/// anything that is not a letter or digit) and each run of three characters inside the word
/// with its edges marked (`^re`, `ref`, ..., `nd$`), hashed with FNV-1a into
/// [`FAKE_DIMENSIONS`] signed buckets, words weighing twice as much as their pieces; then
/// scaled to length 1. One pass over the text. A text with no word is the zero vector.
pub fn fake_embedding(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; FAKE_DIMENSIONS];
    let mut add = |h: u64, weight: f32| {
        let slot = (h % FAKE_DIMENSIONS as u64) as usize;
        v[slot] += if h >> 63 == 1 { -weight } else { weight };
    };
    let mut word: Vec<char> = Vec::new();
    let mut flush = |word: &mut Vec<char>| {
        if word.is_empty() {
            return;
        }
        add(fnv(word.iter().copied()), 1.0);
        let edged: Vec<char> = std::iter::once('^')
            .chain(word.iter().copied())
            .chain(std::iter::once('$'))
            .collect();
        for tri in edged.windows(3) {
            add(
                fnv(tri.iter().copied().chain(std::iter::once('\u{1}'))),
                0.5,
            );
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else {
            flush(&mut word);
        }
    }
    flush(&mut word);
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in &mut v {
            *x /= norm;
        }
    }
    v
}

/// FNV-1a over the characters' UTF-8 bytes.
fn fnv(chars: impl Iterator<Item = char>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut buf = [0u8; 4];
    for c in chars {
        for b in c.encode_utf8(&mut buf).bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn the_fake_puts_a_paraphrase_closer_than_unrelated_text() {
        let want = fake_embedding("Your refund of 20 EUR is on its way to your card.");
        let para = fake_embedding("The 20 EUR refund is on the way to the card.");
        let other = fake_embedding("Our shop opens at nine on weekdays.");
        let (near, far) = (cos(&want, &para), cos(&want, &other));
        assert!(
            near > 0.5 && far < 0.25,
            "paraphrase {near}, unrelated {far}"
        );
        assert_eq!(
            want,
            fake_embedding("Your refund of 20 EUR is on its way to your card.")
        );
        assert!((cos(&want, &want) - 1.0).abs() < 1e-5);
        assert!(fake_embedding(" ,.").iter().all(|x| *x == 0.0));
    }

    #[test]
    fn a_response_is_read_by_index_and_a_bad_one_is_refused() {
        let ok = br#"{"data":[{"embedding":[0,1],"index":1},{"embedding":[1,0],"index":0}]}"#;
        assert_eq!(
            parse_embeddings(ok, 2).unwrap(),
            vec![vec![1.0, 0.0], vec![0.0, 1.0]]
        );
        for (bad, asked) in [
            (&b"<html>oops</html>"[..], 1),
            (br#"{"data":[]}"#, 1),
            (
                br#"{"data":[{"embedding":[1],"index":0},{"embedding":[1,2],"index":1}]}"#,
                2,
            ),
            (
                br#"{"data":[{"embedding":[1],"index":0},{"embedding":[1],"index":0}]}"#,
                2,
            ),
            (br#"{"data":[{"embedding":[],"index":0}]}"#, 1),
            (br#"{"data":[{"embedding":[1],"index":5}]}"#, 1),
        ] {
            assert!(
                parse_embeddings(bad, asked).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
