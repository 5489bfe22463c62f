//! OpenTelemetry export: [`OtelReporter`] sends each trial of a run as spans that follow the
//! OpenTelemetry GenAI semantic conventions, over OTLP/HTTP (protobuf), to a collector or a
//! tracing backend.
//!
//! It is a [`Reporter`] of the run's event stream like the report writers and the store:
//! each `case_finished` event becomes one trace per trial ([`spans::trial_spans`]), buffered
//! and handed at each flush to an export thread of its own, so a slow or dead endpoint never
//! holds up the other reporters. Export failures are counted ([`ExportHandle::summary`]),
//! never returned as the reporter's error: telemetry that did not arrive does not change a
//! run's result. After three failed exports in a row the endpoint is given up for the run;
//! at the end the reporter waits at most the export timeout for what is left
//! ([`OtelConfig::timeout`]), so an unreachable endpoint never hangs the exit.
//!
//! [`OtelConfig::resolve`] reads the endpoint, headers, timeout and service name from the
//! `--otel-endpoint` flag and the standard `OTEL_EXPORTER_OTLP_*` / `OTEL_SERVICE_NAME`
//! variables; header values are secrets ([`OtelConfig::secrets`]) for the run's redactor.

pub mod semconv;
pub mod spans;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant, SystemTime};

use gauntlet_core::event::{EventKind, ReportError, Reporter, RunEvent};
use gauntlet_core::redact::Redactor;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};

pub use spans::{RunFacts, SpanOptions};

/// The export timeout when no variable sets one (the OTLP exporter's default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Spans in one export request (the batch span processor's default).
pub const BATCH_SPANS: usize = 512;

/// Spans held while the export thread is busy; past this they are dropped (and counted).
pub const MAX_PENDING: usize = 50_000;

/// Failed exports in a row after which the endpoint is given up for the run.
pub const GIVE_UP_AFTER: u32 = 3;

/// Batches waiting for the export thread.
const QUEUE_BATCHES: usize = 16;

/// A setting that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum OtelError {
    /// The endpoint is not an http(s) URL.
    #[error("{source_name} is not an http:// or https:// URL: {reason}")]
    Endpoint {
        /// Where it came from (`--otel-endpoint` or a variable).
        source_name: String,
        /// What is wrong.
        reason: String,
    },
    /// A protocol other than OTLP/HTTP protobuf was asked for.
    #[error("{name}={value}: only http/protobuf is supported")]
    Protocol {
        /// The variable.
        name: String,
        /// Its value.
        value: String,
    },
    /// A header entry is not `key=value`.
    #[error("{name}: entry {index} is not key=value")]
    Headers {
        /// The variable.
        name: String,
        /// Which entry, from 1 (the entry itself may hold a secret).
        index: usize,
    },
    /// A timeout is not a number of milliseconds.
    #[error("{name}={value}: not a number of milliseconds")]
    Timeout {
        /// The variable.
        name: String,
        /// Its value.
        value: String,
    },
    /// The exporter could not be built.
    #[error("the OTLP exporter could not be built: {0}")]
    Build(String),
}

impl OtelError {
    /// What to do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            OtelError::Endpoint { .. } => {
                "give the collector's OTLP/HTTP base URL, e.g. http://127.0.0.1:4318 (gauntlet adds /v1/traces)"
            }
            OtelError::Protocol { .. } => {
                "unset the variable or set it to http/protobuf, and point the endpoint at the OTLP/HTTP port (4318), not gRPC (4317)"
            }
            OtelError::Headers { .. } => {
                "write headers as key=value pairs separated by commas, values percent-encoded: api-key=abc,x-team=qa"
            }
            OtelError::Timeout { .. } => "give the timeout in milliseconds, e.g. 10000",
            OtelError::Build(_) => "check the endpoint and the OTEL_EXPORTER_OTLP_* variables",
        }
    }
}

/// Where and how to export.
#[derive(Debug, Clone)]
pub struct OtelConfig {
    /// The traces URL requests go to (`.../v1/traces`).
    pub endpoint: String,
    /// Where the endpoint came from (`--otel-endpoint` or the variable's name).
    pub endpoint_source: String,
    /// Headers sent with every request (`OTEL_EXPORTER_OTLP_TRACES_HEADERS`, else
    /// `OTEL_EXPORTER_OTLP_HEADERS`).
    pub headers: Vec<(String, String)>,
    /// The variable the headers came from.
    pub headers_source: Option<String>,
    /// `service.name` of the resource (`OTEL_SERVICE_NAME`, else `gauntlet`).
    pub service_name: String,
    /// Extra resource attributes (`OTEL_RESOURCE_ATTRIBUTES`).
    pub resource_attributes: Vec<(String, String)>,
    /// One export request's time limit, retries included, and the longest the end of the
    /// run waits for the last spans (`OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, else
    /// `OTEL_EXPORTER_OTLP_TIMEOUT`, else [`DEFAULT_TIMEOUT`]).
    pub timeout: Duration,
    /// Message content in spans (`--otel-content`).
    pub content: bool,
}

impl OtelConfig {
    /// The export settings from the flag and the environment (`env` looks a variable up;
    /// empty values count as unset). `None` when no endpoint is set anywhere: nothing is
    /// exported.
    ///
    /// The endpoint is `--otel-endpoint`, else `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as
    /// it is), else `OTEL_EXPORTER_OTLP_ENDPOINT`. The flag and `OTEL_EXPORTER_OTLP_ENDPOINT`
    /// are base URLs: `/v1/traces` is added, unless the URL already ends with it.
    pub fn resolve(
        flag: Option<&str>,
        content: bool,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<OtelConfig>, OtelError> {
        let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let (raw, source, base) = if let Some(f) = flag.filter(|f| !f.trim().is_empty()) {
            (f.to_owned(), "--otel-endpoint".to_owned(), true)
        } else if let Some(v) = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            (v, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT".to_owned(), false)
        } else if let Some(v) = var("OTEL_EXPORTER_OTLP_ENDPOINT") {
            (v, "OTEL_EXPORTER_OTLP_ENDPOINT".to_owned(), true)
        } else {
            return Ok(None);
        };
        let endpoint = traces_url(raw.trim(), base).map_err(|reason| OtelError::Endpoint {
            source_name: source.clone(),
            reason,
        })?;
        for name in [
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            "OTEL_EXPORTER_OTLP_PROTOCOL",
        ] {
            if let Some(v) = var(name) {
                if v.trim() != "http/protobuf" {
                    return Err(OtelError::Protocol {
                        name: name.to_owned(),
                        value: v,
                    });
                }
                break;
            }
        }
        let (headers, headers_source) = match [
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
            "OTEL_EXPORTER_OTLP_HEADERS",
        ]
        .into_iter()
        .find_map(|n| var(n).map(|v| (n, v)))
        {
            Some((name, v)) => (
                parse_pairs(&v).map_err(|index| OtelError::Headers {
                    name: name.to_owned(),
                    index,
                })?,
                Some(name.to_owned()),
            ),
            None => (Vec::new(), None),
        };
        let timeout = match [
            "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
            "OTEL_EXPORTER_OTLP_TIMEOUT",
        ]
        .into_iter()
        .find_map(|n| var(n).map(|v| (n, v)))
        {
            Some((name, v)) => match v.trim().parse::<u64>() {
                Ok(ms) if ms > 0 => Duration::from_millis(ms),
                _ => {
                    return Err(OtelError::Timeout {
                        name: name.to_owned(),
                        value: v,
                    });
                }
            },
            None => DEFAULT_TIMEOUT,
        };
        let resource_attributes = var("OTEL_RESOURCE_ATTRIBUTES")
            .map(|v| parse_pairs(&v).unwrap_or_default())
            .unwrap_or_default();
        Ok(Some(OtelConfig {
            endpoint,
            endpoint_source: source,
            headers,
            headers_source,
            service_name: var("OTEL_SERVICE_NAME").unwrap_or_else(|| "gauntlet".to_owned()),
            resource_attributes,
            timeout,
            content,
        }))
    }

    /// The values to redact: every header value (API keys and tokens travel there), and a
    /// password in the endpoint URL.
    pub fn secrets(&self) -> Vec<(String, String)> {
        let name = self
            .headers_source
            .clone()
            .unwrap_or_else(|| "OTEL_EXPORTER_OTLP_HEADERS".into());
        let mut out: Vec<(String, String)> = self
            .headers
            .iter()
            .map(|(_, v)| (name.clone(), v.clone()))
            .collect();
        if let Ok(u) = reqwest::Url::parse(&self.endpoint)
            && let Some(p) = u.password()
        {
            out.push((self.endpoint_source.clone(), p.to_owned()));
            if let Ok(d) = percent_encoding::percent_decode_str(p).decode_utf8() {
                out.push((self.endpoint_source.clone(), d.into_owned()));
            }
        }
        out
    }

    /// The endpoint without credentials, for messages.
    pub fn endpoint_display(&self) -> String {
        match reqwest::Url::parse(&self.endpoint) {
            Ok(mut u) => {
                let _ = u.set_password(None);
                let _ = u.set_username("");
                u.to_string()
            }
            Err(_) => self.endpoint.clone(),
        }
    }
}

/// The traces URL of an endpoint: `base` URLs get `/v1/traces` unless they end with it.
fn traces_url(raw: &str, base: bool) -> Result<String, String> {
    let u = reqwest::Url::parse(raw).map_err(|e| e.to_string())?;
    if u.scheme() != "http" && u.scheme() != "https" {
        return Err(format!("the scheme is `{}`", u.scheme()));
    }
    if u.host_str().is_none_or(str::is_empty) {
        return Err("there is no host".into());
    }
    if !base || u.path().trim_end_matches('/').ends_with("/v1/traces") {
        return Ok(u.to_string());
    }
    let mut s = u.to_string();
    // `Url` always writes a path; a query on a base URL is kept after the added path.
    let query = u.query().map(|q| format!("?{q}"));
    if let Some(q) = &query {
        s.truncate(s.len() - q.len());
    }
    let s = format!(
        "{}/v1/traces{}",
        s.trim_end_matches('/'),
        query.unwrap_or_default()
    );
    Ok(s)
}

/// `key=value,key=value` with percent-encoded values (the OTLP exporter's header format).
/// Returns the 1-based index of the first entry that is not a pair.
fn parse_pairs(s: &str) -> Result<Vec<(String, String)>, usize> {
    let mut out = Vec::new();
    for (i, entry) in s.split(',').enumerate() {
        if entry.trim().is_empty() {
            continue;
        }
        let Some((k, v)) = entry.split_once('=') else {
            return Err(i + 1);
        };
        let k = k.trim();
        if k.is_empty() {
            return Err(i + 1);
        }
        let v = percent_encoding::percent_decode_str(v.trim())
            .decode_utf8_lossy()
            .into_owned();
        out.push((k.to_owned(), v));
    }
    Ok(out)
}

/// What the export did, for the end of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportSummary {
    /// The traces URL, without credentials.
    pub endpoint: String,
    /// Trials exported (one trace each).
    pub trials: u64,
    /// Spans made.
    pub spans: u64,
    /// Spans the endpoint accepted.
    pub exported: u64,
    /// Export requests that failed.
    pub failed_requests: u64,
    /// The first failure, redacted.
    pub first_error: Option<String>,
    /// The endpoint was given up after [`GIVE_UP_AFTER`] failures in a row.
    pub gave_up: bool,
    /// The end of the run stopped waiting for spans still being sent.
    pub unfinished: bool,
}

impl ExportSummary {
    /// Spans that did not reach the endpoint.
    pub fn undelivered(&self) -> u64 {
        self.spans.saturating_sub(self.exported)
    }
}

#[derive(Debug, Default)]
struct Stats {
    trials: AtomicU64,
    spans: AtomicU64,
    exported: AtomicU64,
    failed_requests: AtomicU64,
    first_error: Mutex<Option<String>>,
    gave_up: AtomicBool,
    unfinished: AtomicBool,
}

impl Stats {
    fn fail(&self, error: String) {
        self.failed_requests.fetch_add(1, Ordering::Relaxed);
        let mut first = self.first_error.lock().unwrap_or_else(|e| e.into_inner());
        if first.is_none() {
            *first = Some(error);
        }
    }
}

/// Reads what the export did, from the binary, after the run.
#[derive(Debug, Clone)]
pub struct ExportHandle {
    stats: Arc<Stats>,
    endpoint: String,
}

impl ExportHandle {
    /// The counts so far (final once the run's delivery has finished).
    pub fn summary(&self) -> ExportSummary {
        let s = &self.stats;
        ExportSummary {
            endpoint: self.endpoint.clone(),
            trials: s.trials.load(Ordering::Relaxed),
            spans: s.spans.load(Ordering::Relaxed),
            exported: s.exported.load(Ordering::Relaxed),
            failed_requests: s.failed_requests.load(Ordering::Relaxed),
            first_error: s
                .first_error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            gave_up: s.gave_up.load(Ordering::Relaxed),
            unfinished: s.unfinished.load(Ordering::Relaxed),
        }
    }
}

static CRYPTO: Once = Once::new();

/// The TLS provider the rest of gauntlet uses (ring), for an https endpoint.
fn install_crypto() {
    CRYPTO.call_once(|| {
        // Another part of the process may have installed it first; either is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// The reporter that exports a run's trials.
pub struct OtelReporter {
    tx: Option<SyncSender<Vec<SpanData>>>,
    done: Option<Receiver<()>>,
    stats: Arc<Stats>,
    pending: Vec<SpanData>,
    run: Option<RunFacts>,
    origin: SystemTime,
    opts: SpanOptions,
    skip: HashSet<(String, u32)>,
    timeout: Duration,
    version: String,
    finished: bool,
}

impl OtelReporter {
    /// Builds the exporter and starts its thread. `redactor` is the run's (with
    /// [`OtelConfig::secrets`] added); `version` is gauntlet's.
    pub fn start(
        cfg: &OtelConfig,
        redactor: Redactor,
        version: &str,
    ) -> Result<(OtelReporter, ExportHandle), OtelError> {
        install_crypto();
        let http = reqwest::Client::builder()
            .timeout(cfg.timeout)
            .connect_timeout(cfg.timeout.min(Duration::from_secs(5)))
            // A redirect would carry the headers (tokens) wherever it points.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(format!("gauntlet/{version}"))
            .build()
            .map_err(|e| OtelError::Build(redactor.redact(&e.to_string()).into_owned()))?;
        let headers: HashMap<String, String> = cfg.headers.iter().cloned().collect();
        let mut exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(http)
            .with_endpoint(cfg.endpoint.clone())
            .with_protocol(Protocol::HttpBinary)
            .with_timeout(cfg.timeout)
            .with_headers(headers)
            .build()
            .map_err(|e| OtelError::Build(redactor.redact(&e.to_string()).into_owned()))?;
        let mut attrs: Vec<opentelemetry::KeyValue> = vec![opentelemetry::KeyValue::new(
            "service.version",
            version.to_owned(),
        )];
        attrs.extend(
            cfg.resource_attributes
                .iter()
                .filter(|(k, _)| k != "service.name")
                .map(|(k, v)| opentelemetry::KeyValue::new(k.clone(), v.clone())),
        );
        let resource = Resource::builder_empty()
            .with_service_name(cfg.service_name.clone())
            .with_attributes(attrs)
            .build();
        exporter.set_resource(&resource);

        let stats = Arc::new(Stats::default());
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<SpanData>>(QUEUE_BATCHES);
        let (done_tx, done_rx) = std::sync::mpsc::sync_channel::<()>(1);
        let worker_stats = Arc::clone(&stats);
        let timeout = cfg.timeout;
        let worker_redactor = redactor.clone();
        std::thread::Builder::new()
            .name("gauntlet-otel".into())
            .spawn(move || {
                export_loop(exporter, &rx, &worker_stats, timeout, &worker_redactor);
                let _ = done_tx.send(());
            })
            .map_err(|e| OtelError::Build(format!("could not start the export thread: {e}")))?;
        let handle = ExportHandle {
            stats: Arc::clone(&stats),
            endpoint: cfg.endpoint_display(),
        };
        Ok((
            OtelReporter {
                tx: Some(tx),
                done: Some(done_rx),
                stats,
                pending: Vec::new(),
                run: None,
                origin: SystemTime::now(),
                opts: SpanOptions {
                    content: cfg.content,
                    redactor,
                },
                skip: HashSet::new(),
                timeout,
                version: version.to_owned(),
                finished: false,
            },
            handle,
        ))
    }

    /// Trials not to export: those a resumed run takes from the store (they were run, and
    /// exported if the run exported, before).
    pub fn skip_trials(mut self, trials: impl IntoIterator<Item = (String, u32)>) -> Self {
        self.skip.extend(trials);
        self
    }

    /// Hands the pending spans to the export thread, unless it is busy; past
    /// [`MAX_PENDING`] they are dropped (counted as undelivered).
    fn hand_over(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let Some(tx) = &self.tx else {
            self.pending.clear();
            return;
        };
        let batch = std::mem::take(&mut self.pending);
        match tx.try_send(batch) {
            Ok(()) => {}
            Err(TrySendError::Full(batch)) => {
                if batch.len() < MAX_PENDING {
                    self.pending = batch;
                }
            }
            Err(TrySendError::Disconnected(_)) => {}
        }
    }

    /// The end of the run: the last spans go, and the export thread gets at most the export
    /// timeout to send what it holds.
    fn close(&mut self) {
        let deadline = Instant::now() + self.timeout;
        if let Some(tx) = self.tx.take() {
            let mut batch = std::mem::take(&mut self.pending);
            while !batch.is_empty() {
                match tx.try_send(batch) {
                    Ok(()) | Err(TrySendError::Disconnected(_)) => break,
                    Err(TrySendError::Full(b)) => {
                        if Instant::now() >= deadline {
                            break;
                        }
                        batch = b;
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
            }
        }
        if let Some(done) = self.done.take() {
            let left = deadline.saturating_duration_since(Instant::now());
            if done.recv_timeout(left).is_err() {
                self.stats.unfinished.store(true, Ordering::Relaxed);
            }
        }
    }
}

impl Reporter for OtelReporter {
    fn on_event(&mut self, event: &RunEvent) -> Result<(), ReportError> {
        match &event.kind {
            EventKind::RunStarted { manifest } => {
                self.origin = SystemTime::now()
                    .checked_sub(Duration::from_millis(event.elapsed_ms))
                    .unwrap_or_else(SystemTime::now);
                self.run = Some(RunFacts {
                    run_id: manifest.run_id.clone(),
                    command: manifest.command.clone(),
                    target: manifest.target.clone(),
                    evidence_level: manifest.evidence_level,
                    side_effects: manifest.side_effects,
                    version: self.version.clone(),
                });
            }
            EventKind::CaseFinished { result } => {
                let Some(run) = &self.run else {
                    return Ok(());
                };
                let end = self.origin + Duration::from_millis(event.elapsed_ms);
                for t in &result.trials {
                    if self.skip.contains(&(t.case_id.clone(), t.trial)) {
                        continue;
                    }
                    let spans =
                        spans::trial_spans(run, &result.case, result.status, t, end, &self.opts);
                    self.stats.trials.fetch_add(1, Ordering::Relaxed);
                    self.stats
                        .spans
                        .fetch_add(spans.len() as u64, Ordering::Relaxed);
                    self.pending.extend(spans);
                }
                if self.pending.len() >= BATCH_SPANS {
                    self.hand_over();
                }
            }
            // The last spans go at the flush that follows, after the other reporters (the
            // store's commit included, as this reporter comes last) have taken the event.
            EventKind::RunFinished { .. } => self.finished = true,
            EventKind::TrialFinished { .. } | EventKind::Warning { .. } => {}
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), ReportError> {
        if self.finished {
            self.close();
        } else {
            self.hand_over();
        }
        Ok(())
    }
}

/// The export thread: sends batches of at most [`BATCH_SPANS`] spans, one request at a time,
/// each bounded by the timeout; gives the endpoint up after [`GIVE_UP_AFTER`] failures in a
/// row.
fn export_loop(
    exporter: opentelemetry_otlp::SpanExporter,
    rx: &Receiver<Vec<SpanData>>,
    stats: &Stats,
    timeout: Duration,
    redactor: &Redactor,
) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            stats.fail(format!("could not start the export runtime: {e}"));
            stats.gave_up.store(true, Ordering::Relaxed);
            return;
        }
    };
    let mut in_a_row = 0;
    while let Ok(mut batch) = rx.recv() {
        while !batch.is_empty() {
            if stats.gave_up.load(Ordering::Relaxed) {
                break;
            }
            let rest = batch.split_off(batch.len().min(BATCH_SPANS));
            let n = batch.len() as u64;
            // The exporter bounds its own retries by the timeout; this bounds everything.
            let result = rt.block_on(async {
                tokio::time::timeout(timeout + Duration::from_secs(1), exporter.export(batch)).await
            });
            match result {
                Ok(Ok(())) => {
                    stats.exported.fetch_add(n, Ordering::Relaxed);
                    in_a_row = 0;
                }
                Ok(Err(e)) => {
                    stats.fail(redactor.redact(&e.to_string()).into_owned());
                    in_a_row += 1;
                }
                Err(_) => {
                    stats.fail(format!("no answer within {} ms", timeout.as_millis()));
                    in_a_row += 1;
                }
            }
            if in_a_row >= GIVE_UP_AFTER {
                stats.gave_up.store(true, Ordering::Relaxed);
            }
            batch = rest;
        }
    }
    let _ = exporter.shutdown();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn no_endpoint_means_no_export() {
        assert!(
            OtelConfig::resolve(None, false, &env(&[]))
                .expect("ok")
                .is_none()
        );
        assert!(
            OtelConfig::resolve(
                Some(" "),
                false,
                &env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "")])
            )
            .expect("ok")
            .is_none()
        );
    }

    #[test]
    fn endpoints_follow_the_exporter_specification() {
        let url = |flag: Option<&str>, e: &[(&str, &str)]| {
            OtelConfig::resolve(flag, false, &env(e))
                .expect("valid")
                .expect("set")
                .endpoint
        };
        assert_eq!(
            url(Some("http://127.0.0.1:6006"), &[]),
            "http://127.0.0.1:6006/v1/traces"
        );
        assert_eq!(
            url(Some("http://127.0.0.1:6006/v1/traces"), &[]),
            "http://127.0.0.1:6006/v1/traces"
        );
        assert_eq!(
            url(
                None,
                &[(
                    "OTEL_EXPORTER_OTLP_ENDPOINT",
                    "https://otel.example.com/prefix/"
                )]
            ),
            "https://otel.example.com/prefix/v1/traces"
        );
        // The per-signal variable is used as it is, and wins over the generic one.
        assert_eq!(
            url(
                None,
                &[
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
                    ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b:4318/custom")
                ]
            ),
            "http://b:4318/custom"
        );
        // The flag wins over both.
        assert_eq!(
            url(
                Some("http://c:1"),
                &[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b:4318/custom")]
            ),
            "http://c:1/v1/traces"
        );
    }

    #[test]
    fn bad_settings_are_errors_that_name_their_source() {
        let err = |flag: Option<&str>, e: &[(&str, &str)]| {
            OtelConfig::resolve(flag, false, &env(e))
                .expect_err("invalid")
                .to_string()
        };
        assert!(err(Some("127.0.0.1:4318"), &[]).contains("--otel-endpoint"));
        assert!(err(Some("ftp://x"), &[]).contains("scheme is `ftp`"));
        assert!(
            err(None, &[("OTEL_EXPORTER_OTLP_ENDPOINT", "nope")])
                .contains("OTEL_EXPORTER_OTLP_ENDPOINT")
        );
        assert!(
            err(Some("http://x"), &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")])
                .contains("only http/protobuf")
        );
        let h = err(
            Some("http://x"),
            &[("OTEL_EXPORTER_OTLP_HEADERS", "a=1,sk-secret-token")],
        );
        assert!(h.contains("entry 2"), "{h}");
        assert!(!h.contains("sk-secret-token"), "{h}");
        assert!(
            err(Some("http://x"), &[("OTEL_EXPORTER_OTLP_TIMEOUT", "soon")])
                .contains("milliseconds")
        );
    }

    #[test]
    fn headers_are_decoded_and_their_values_are_secrets() {
        let cfg = OtelConfig::resolve(
            Some("http://user:p%40ss@x:1"),
            true,
            &env(&[
                ("OTEL_EXPORTER_OTLP_HEADERS", "ignored=1"),
                (
                    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
                    "authorization=Bearer%20tok-123456, x-team = qa",
                ),
                ("OTEL_SERVICE_NAME", "agent-evals"),
                ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "2500"),
            ]),
        )
        .expect("valid")
        .expect("set");
        assert_eq!(
            cfg.headers,
            vec![
                ("authorization".to_owned(), "Bearer tok-123456".to_owned()),
                ("x-team".to_owned(), "qa".to_owned())
            ]
        );
        assert_eq!(cfg.service_name, "agent-evals");
        assert_eq!(cfg.timeout, Duration::from_millis(2500));
        let secrets: Vec<String> = cfg.secrets().into_iter().map(|(_, v)| v).collect();
        assert!(secrets.contains(&"Bearer tok-123456".to_owned()));
        assert!(secrets.contains(&"p@ss".to_owned()));
        assert_eq!(cfg.endpoint_display(), "http://x:1/v1/traces");
    }
}
