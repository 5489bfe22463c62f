//! A run's OpenTelemetry export (`--otel-endpoint`, `--otel-content`, the standard
//! `OTEL_EXPORTER_OTLP_*` variables): its settings ([`prepare`]), its reporter
//! ([`Export::reporter`]) and the line said about it after the run ([`ExportReport::print`]).
//! The exporter itself is `gauntlet-otel`, behind the `otel` cargo feature; a build without
//! it refuses the flag and says that the variables are ignored.

use gauntlet_core::event::Reporter;
use gauntlet_core::redact::Redactor;

use crate::error::CliError;
use crate::out;

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
pub fn prepare(flags: &OtelFlags, redactor: &mut Redactor) -> Result<Option<Export>, CliError> {
    let env = |name: &str| std::env::var(name).ok();
    let cfg = gauntlet_otel::OtelConfig::resolve(
        flags.endpoint.as_deref(),
        flags.content || content_env(),
        &env,
    )
    .map_err(|e| CliError::usage(e.to_string(), e.hint()))?;
    if cfg.is_none() && flags.content {
        out::warn(
            "--otel-content does nothing without an endpoint (--otel-endpoint or OTEL_EXPORTER_OTLP_ENDPOINT)",
        );
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
pub fn prepare(flags: &OtelFlags, _redactor: &mut Redactor) -> Result<Option<Export>, CliError> {
    let _ = content_env;
    if flags.endpoint.is_some() || flags.content {
        return Err(CliError::usage(
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
        out::warn(
            "OTEL_EXPORTER_OTLP_ENDPOINT is set, but this gauntlet was built without OpenTelemetry export: no spans are sent",
        );
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
    ) -> Result<(Box<dyn Reporter>, ExportReport), CliError> {
        let (r, handle) =
            gauntlet_otel::OtelReporter::start(&self.cfg, redactor, env!("CARGO_PKG_VERSION"))
                .map_err(|e| CliError::usage(e.to_string(), e.hint()))?;
        Ok((Box::new(r.skip_trials(skip)), ExportReport { handle }))
    }

    /// Never called: without the feature no `Export` is made.
    #[cfg(not(feature = "otel"))]
    pub fn reporter(
        &self,
        _redactor: Redactor,
        _skip: Vec<(String, u32)>,
    ) -> Result<(Box<dyn Reporter>, ExportReport), CliError> {
        Err(CliError::plain(
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
    /// One line on stderr: how many spans went where, or how many did not arrive and why.
    /// Never changes the run's result.
    #[cfg(feature = "otel")]
    pub fn print(&self) {
        let s = self.handle.summary();
        if s.undelivered() == 0 {
            out::note(&format!(
                "OpenTelemetry: {} span(s) of {} trial(s) exported to {}",
                s.spans, s.trials, s.endpoint
            ));
            return;
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
        out::warn(&format!(
            "OpenTelemetry export to {} failed: {} of {} span(s) not delivered{given_up}{why}; the run's result does not depend on it",
            s.endpoint,
            s.undelivered(),
            s.spans
        ));
    }

    /// Never called: without the feature no `ExportReport` is made.
    #[cfg(not(feature = "otel"))]
    pub fn print(&self) {}
}
