//! A run's OpenTelemetry export (`--otel-endpoint`, `--otel-content`, the standard
//! `OTEL_EXPORTER_OTLP_*` variables): its settings ([`prepare`]), its reporter
//! ([`Export::reporter`]) and the line said about it after the run ([`ExportReport::notice`]).
//! The exporter itself is `gauntlet-otel`, behind the `otel` cargo feature; a build without
//! it refuses the flag and says that the variables are ignored.

use gauntlet_core::event::Reporter;
use gauntlet_core::redact::Redactor;

use crate::error::{EngineError, Notice};

/// What the command line asked for.
#[derive(Debug, Clone, Default)]
pub struct OtelFlags {
    /// `--otel-endpoint URL`.
    pub endpoint: Option<String>,
    /// `--otel-content` (or `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`).
    pub content: bool,
}

/// Whether the GenAI instrumentations' content variable is set to a true value.
fn content_env() -> bool {
    std::env::var("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
        .is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "1" | "yes"))
}

/// An export the run will make.
pub struct Export {
    #[cfg(feature = "otel")]
    cfg: gauntlet_otel::OtelConfig,
}

/// Reads the export settings; registers their secrets (header values) with the run's
/// redactor. `None`: nothing to export.
#[cfg(feature = "otel")]
pub fn prepare(
    flags: &OtelFlags,
    redactor: &mut Redactor,
    notices: &mut dyn FnMut(Notice),
) -> Result<Option<Export>, EngineError> {
    let env = |name: &str| std::env::var(name).ok();
    let cfg = gauntlet_otel::OtelConfig::resolve(
        flags.endpoint.as_deref(),
        flags.content || content_env(),
        &env,
    )
    .map_err(|e| EngineError::usage(e.to_string(), e.hint()))?;
    if cfg.is_none() && flags.content {
        notices(Notice::Warning(
            "--otel-content does nothing without an endpoint (--otel-endpoint or OTEL_EXPORTER_OTLP_ENDPOINT)".into(),
        ));
    }
    Ok(cfg.map(|cfg| {
        for (name, secret) in cfg.secrets() {
            redactor.add(&name, &secret);
        }
        Export { cfg }
    }))
}

/// Without the `otel` feature: the flag is an error, the variables are ignored (said once).
#[cfg(not(feature = "otel"))]
pub fn prepare(
    flags: &OtelFlags,
    _redactor: &mut Redactor,
    notices: &mut dyn FnMut(Notice),
) -> Result<Option<Export>, EngineError> {
    let _ = content_env;
    if flags.endpoint.is_some() || flags.content {
        return Err(EngineError::usage(
            "--otel-endpoint and --otel-content: this gauntlet was built without OpenTelemetry export",
            "build it with the `otel` feature (on by default): cargo install --path crates/gauntlet --features otel",
        ));
    }
    if [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ]
    .iter()
    .any(|v| std::env::var(v).is_ok_and(|s| !s.trim().is_empty()))
    {
        notices(Notice::Warning(
            "OTEL_EXPORTER_OTLP_ENDPOINT is set, but this gauntlet was built without OpenTelemetry export: no spans are sent".into(),
        ));
    }
    Ok(None)
}

impl Export {
    /// The reporter, to be the last of the run's (its final wait comes after the others'
    /// work). `skip` are the trials a resumed run takes from the store.
    #[cfg(feature = "otel")]
    pub fn reporter(
        &self,
        redactor: Redactor,
        skip: Vec<(String, u32)>,
    ) -> Result<(Box<dyn Reporter>, ExportReport), EngineError> {
        let (r, handle) = gauntlet_otel::OtelReporter::start(&self.cfg, redactor, crate::VERSION)
            .map_err(|e| EngineError::usage(e.to_string(), e.hint()))?;
        Ok((Box::new(r.skip_trials(skip)), ExportReport { handle }))
    }

    /// Never called: without the feature no `Export` is made.
    #[cfg(not(feature = "otel"))]
    pub fn reporter(
        &self,
        _redactor: Redactor,
        _skip: Vec<(String, u32)>,
    ) -> Result<(Box<dyn Reporter>, ExportReport), EngineError> {
        Err(EngineError::plain(
            "this gauntlet was built without OpenTelemetry export",
        ))
    }
}

/// What the export did, read after the run.
pub struct ExportReport {
    #[cfg(feature = "otel")]
    handle: gauntlet_otel::ExportHandle,
}

impl ExportReport {
    /// One line for the user: how many spans went where (a note), or how many did not
    /// arrive and why (a warning). Never changes the run's result.
    #[cfg(feature = "otel")]
    pub fn notice(&self) -> Notice {
        let s = self.handle.summary();
        if s.undelivered() == 0 {
            return Notice::Note(format!(
                "OpenTelemetry: {} span(s) of {} trial(s) exported to {}",
                s.spans, s.trials, s.endpoint
            ));
        }
        let why = match (&s.first_error, s.unfinished) {
            (Some(e), _) => format!(": {e}"),
            (None, true) => ": the export was still running when its time ran out".to_owned(),
            (None, false) => String::new(),
        };
        let given_up = if s.gave_up {
            format!(" (given up after {} failed requests)", s.failed_requests)
        } else if s.failed_requests > 0 {
            format!(" ({} failed request(s))", s.failed_requests)
        } else {
            String::new()
        };
        Notice::Warning(format!(
            "OpenTelemetry export to {} failed: {} of {} span(s) not delivered{given_up}{why}; the run's result does not depend on it",
            s.endpoint,
            s.undelivered(),
            s.spans
        ))
    }

    /// Never called: without the feature no `ExportReport` is made.
    #[cfg(not(feature = "otel"))]
    pub fn notice(&self) -> Notice {
        Notice::Note(String::new())
    }
}
