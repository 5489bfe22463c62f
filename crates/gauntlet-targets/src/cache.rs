//! The response cache at the model-call seam: [`CachedModel`] wraps any [`ChatModel`] and
//! answers a call it has seen before from a [`ResponseCache`], without a request.
//!
//! The key ([`call_key`]) is a SHA-256 over the target kind, the model, the base URL, the
//! exact request body the model would send (messages, tools, temperature, seed, max tokens,
//! extra fields: [`ChatModel::wire_body`]) and the trial index, so that changing any of them
//! asks the model again, and so do the k trials of one case (each is its own sample). Headers
//! are not part of the key, and the key is stored only as its digest, so no API key is ever
//! in the cache. Only a reply received in full is stored: a transport error, a rate limit, an
//! empty reply (all errors here) and a reply stopped by a content filter are not.
//!
//! A reply from the cache comes back with `cached: true` and no attempt; the chat loop marks
//! its span, so the trial's evidence becomes `replay`. Used for the agent under test with
//! `--cache` ([`build_cached_target`]) and for attacker models ([`build_cached_chat_model`]);
//! judges key their answers on the judge and its prompt through the same store (the
//! graders' `JudgeCache`). Exec agents, HTTP apps and the proxy run their own loop and are
//! never cached ([`BuildError::NotCacheable`]).

use std::sync::Arc;

use gauntlet_core::cache::{CacheKey, CacheScope, KeyParts, ResponseCache};
use gauntlet_core::redact::Redactor;
use gauntlet_core::target::{
    BoxFuture, Target, TargetConfig, TargetError, TargetInfo, TargetKind, TrialContext,
};
use gauntlet_core::trace::{Message, TraceRecorder, Usage};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::BuildError;
use crate::chat::{ChatModel, ChatReply, ChatRequest, ChatTarget};

/// What is stored for one call: the reply as the model gave it.
#[derive(Serialize, Deserialize)]
struct Stored {
    message: Message,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    usage: Usage,
    #[serde(default)]
    finish_reason: Option<String>,
    #[serde(default)]
    agent: Option<String>,
}

/// The key of one model call: `None` when the model sends no request.
pub fn call_key(scope: CacheScope, info: &TargetInfo, body: &[u8], trial: u32) -> CacheKey {
    let model = info.model.clone().unwrap_or_else(|| info.label.clone());
    let parts = KeyParts::new()
        .part(scope.as_str())
        .part(&info.kind)
        .part(&model)
        .part(info.base_url.as_deref().unwrap_or(""))
        .part(body)
        .part(trial.to_le_bytes());
    CacheKey {
        scope,
        digest: hex(&Sha256::digest(parts.bytes())),
        kind: info.kind.clone(),
        model,
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// A chat model whose calls are answered from a cache when they were made before.
pub struct CachedModel {
    inner: Arc<dyn ChatModel>,
    cache: Arc<dyn ResponseCache>,
    scope: CacheScope,
    info: TargetInfo,
}

impl CachedModel {
    /// Wraps `inner`; its calls are cached in `cache` under `scope`.
    pub fn new(
        inner: Arc<dyn ChatModel>,
        cache: Arc<dyn ResponseCache>,
        scope: CacheScope,
    ) -> CachedModel {
        let info = inner.info();
        CachedModel {
            inner,
            cache,
            scope,
            info,
        }
    }
}

impl ChatModel for CachedModel {
    fn info(&self) -> TargetInfo {
        self.info.clone()
    }

    fn wire_body(&self, req: &ChatRequest<'_>) -> Option<Vec<u8>> {
        self.inner.wire_body(req)
    }

    fn complete<'a>(
        &'a self,
        ctx: &'a TrialContext<'a>,
        req: ChatRequest<'a>,
        rec: &'a mut TraceRecorder,
    ) -> BoxFuture<'a, Result<ChatReply, TargetError>> {
        Box::pin(async move {
            let Some(body) = self.inner.wire_body(&req) else {
                return self.inner.complete(ctx, req, rec).await;
            };
            let key = call_key(self.scope, &self.info, &body, ctx.trial);
            if let Some(s) = self
                .cache
                .get(&key)
                .and_then(|v| serde_json::from_value::<Stored>(v).ok())
            {
                return Ok(ChatReply {
                    message: s.message,
                    model: s.model,
                    usage: s.usage,
                    finish_reason: s.finish_reason,
                    attempts: 0,
                    agent: s.agent,
                    cached: true,
                });
            }
            let reply = self.inner.complete(ctx, req, rec).await?;
            // A filter's stop is a fault of the moment, not an answer to replay.
            if reply.finish_reason.as_deref() != Some("content_filter")
                && let Ok(v) = serde_json::to_value(Stored {
                    message: reply.message.clone(),
                    model: reply.model.clone(),
                    usage: reply.usage,
                    finish_reason: reply.finish_reason.clone(),
                    agent: reply.agent.clone(),
                })
            {
                self.cache.put(&key, &v);
            }
            Ok(reply)
        })
    }
}

/// Whether a target kind's calls can be cached, or why not.
pub fn cacheable(kind: Option<TargetKind>) -> Result<(), BuildError> {
    match kind {
        Some(
            TargetKind::Openai
            | TargetKind::OpenaiResponses
            | TargetKind::Anthropic
            | TargetKind::Fake,
        )
        | None => Ok(()),
        Some(k) => Err(BuildError::NotCacheable(k.as_str())),
    }
}

/// A chat model whose calls go through `cache` (an attacker model, say): `openai`,
/// `anthropic` or `fake` (a fake sends no request and is passed through).
pub fn build_cached_chat_model(
    cfg: &TargetConfig,
    redactor: &mut Redactor,
    cache: Arc<dyn ResponseCache>,
    scope: CacheScope,
) -> Result<Arc<dyn ChatModel>, BuildError> {
    let inner = crate::build_chat_model(cfg, redactor)?;
    Ok(Arc::new(CachedModel::new(inner, cache, scope)))
}

/// The agent under test with its model calls cached (`--cache`). Exec agents, HTTP apps
/// and the proxy are refused: they run their own loop, and what they did cannot be replayed
/// from a model's answers.
pub fn build_cached_target(
    cfg: &TargetConfig,
    redactor: &mut Redactor,
    cache: Arc<dyn ResponseCache>,
) -> Result<Arc<dyn Target>, BuildError> {
    cacheable(cfg.kind)?;
    let model = build_cached_chat_model(cfg, redactor, cache, CacheScope::Agent)?;
    Ok(Arc::new(ChatTarget::new(model)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(model: &str, url: &str) -> TargetInfo {
        TargetInfo {
            kind: "openai".into(),
            label: format!("openai:{model}"),
            model: Some(model.into()),
            base_url: Some(url.into()),
            ..TargetInfo::default()
        }
    }

    #[test]
    fn every_part_of_the_key_changes_it() {
        let base = call_key(CacheScope::Agent, &info("m", "http://a"), b"{}", 0);
        assert_eq!(
            base,
            call_key(CacheScope::Agent, &info("m", "http://a"), b"{}", 0)
        );
        for other in [
            call_key(CacheScope::Agent, &info("n", "http://a"), b"{}", 0),
            call_key(CacheScope::Agent, &info("m", "http://b"), b"{}", 0),
            call_key(CacheScope::Agent, &info("m", "http://a"), b"{ }", 0),
            call_key(CacheScope::Agent, &info("m", "http://a"), b"{}", 1),
            call_key(CacheScope::Attacker, &info("m", "http://a"), b"{}", 0),
        ] {
            assert_ne!(base.digest, other.digest);
        }
    }

    #[test]
    fn exec_agents_http_apps_and_the_proxy_are_never_cached() {
        for k in [TargetKind::Exec, TargetKind::Http, TargetKind::Proxy] {
            assert!(matches!(
                cacheable(Some(k)),
                Err(BuildError::NotCacheable(_))
            ));
        }
        assert!(cacheable(Some(TargetKind::Openai)).is_ok());
    }
}
