//! The embeddings endpoint of `similar:` checks: [`embeddings`] resolves which one a command
//! uses (`--embeddings SPEC`, else the suites' `embeddings:`, which must agree) and builds
//! it (`gauntlet_targets::embeddings::OpenAiEmbedder`) behind the response cache, as the
//! graders' [`Embeddings`]. Its key is read from the environment as any OpenAI target's is,
//! and registered with the run's redactor.

use std::path::Path;
use std::sync::Arc;

use gauntlet_core::cache::ResponseCache;
use gauntlet_core::redact::Redactor;
use gauntlet_graders::embedding::Embeddings;
use gauntlet_suite::load::LoadedSuite;
use gauntlet_targets::embeddings::OpenAiEmbedder;

use crate::error::EngineError;
use crate::setup::resolve_spec;

const HINT: &str = "the embeddings model is an OpenAI-compatible endpoint: openai:MODEL (base URL from OPENAI_BASE_URL, key from OPENAI_API_KEY) or a name from gauntlet.yaml with kind: openai, base_url, model and api_key_env";

/// The spec a command's `similar:` checks use: the flag, else the one the suites declare.
pub fn spec<'a>(
    suites: &'a [LoadedSuite],
    flag: Option<&'a str>,
) -> Result<Option<&'a str>, EngineError> {
    if flag.is_some() {
        return Ok(flag);
    }
    let mut declared = suites.iter().filter_map(|s| s.suite.embeddings.as_deref());
    let first = declared.next();
    if let Some(f) = first
        && declared.any(|d| d != f)
    {
        return Err(EngineError::usage(
            "the suites of this run name different embeddings models",
            "name the same `embeddings:` in each suite, or choose one with --embeddings",
        ));
    }
    Ok(first)
}

/// The embeddings of a command's `similar:` checks, or `None` when neither the flag nor a
/// suite names a model (the checks are then not assessed). `cache` keeps the vectors (the
/// run's response cache; `None` with `--no-cache`).
pub fn embeddings(
    suites: &[LoadedSuite],
    flag: Option<&str>,
    config: Option<&Path>,
    cache: Option<Arc<dyn ResponseCache>>,
    redactor: &mut Redactor,
) -> Result<Option<Arc<Embeddings>>, EngineError> {
    let Some(spec) = spec(suites, flag)? else {
        return Ok(None);
    };
    let cfg = resolve_spec(spec, config)?;
    let embedder = OpenAiEmbedder::new(&cfg, redactor).map_err(|e| {
        let e = e.redacted(redactor);
        EngineError::usage(
            format!("failed to set up the embeddings model `{spec}`: {e}"),
            e.hint().unwrap_or(HINT),
        )
    })?;
    Ok(Some(Arc::new(Embeddings::new(Arc::new(embedder), cache))))
}
