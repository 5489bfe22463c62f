//! The HTTP client every network target shares: [`ApiClient`] (bounded retries of
//! infrastructure failures, every attempt recorded) and [`RateLimiter`] (requests and tokens
//! per minute).
//!
//! What is retried, and only that: connection errors and resets, request timeouts, HTTP 429
//! (waiting as long as `Retry-After` says, capped), and HTTP 5xx. Backoff is exponential with
//! full jitter. A response that arrived and parsed is never retried, whatever it says: a
//! graded answer is evidence, and retrying it until it passes would hide exactly the flakes
//! a gate exists to find.

use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, SystemTime};

use tokio::time::Instant;

use bytes::Bytes;
use gauntlet_core::redact::Redactor;
use gauntlet_core::target::{RateLimitConfig, RetryConfig, TargetConfig, TargetError};
use gauntlet_core::trace::{TraceRecorder, TransportKind};
use reqwest::header::HeaderMap;

use crate::error::BuildError;
pub(crate) use crate::error::error_chain;

/// Default time limit of one request.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// The longest `Retry-After` honoured; a longer wait ends the request as an error.
pub const RETRY_AFTER_CEILING: Duration = Duration::from_secs(300);

/// Most bytes of one reply body unless the target sets `max_reply_bytes`: far above any
/// real completion, far below what an endless body would cost.
pub const DEFAULT_MAX_REPLY_BYTES: u64 = 4 << 20;

/// How much of a response body is kept in errors and traces.
pub(crate) const BODY_CLIP: usize = 2048;

static CRYPTO: Once = Once::new();

/// Installs the TLS crypto provider once (ring: one provider, light to build).
pub(crate) fn install_crypto() {
    CRYPTO.call_once(|| {
        // Another part of the process may have installed one first; either is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Whether `url` (or a URL template) is plain HTTP: its scheme, read case-insensitively, is
/// `http`. A template whose scheme is itself templated is not.
pub(crate) fn plain_http(url: &str) -> bool {
    url.trim_start()
        .get(..7)
        .is_some_and(|s| s.eq_ignore_ascii_case("http://"))
}

/// A response that arrived.
#[derive(Debug, Clone)]
pub struct ApiResponse {
    /// HTTP status.
    pub status: u16,
    /// The body.
    pub body: Bytes,
    /// Attempts made, the successful one included.
    pub attempts: u32,
}

/// Shared HTTP client with retries, rate limits, a bound on reply size, and redaction.
#[derive(Clone)]
pub struct ApiClient {
    http: reqwest::Client,
    retry: RetryConfig,
    limiter: Option<Arc<RateLimiter>>,
    redactor: Redactor,
    max_reply: usize,
}

impl ApiClient {
    /// A client with a target's retry policy, request time limit (default
    /// [`DEFAULT_REQUEST_TIMEOUT`]) and rate limits, for requests to `url` (a URL or a URL
    /// template: only its scheme is read, see [`plain_http`]).
    pub fn new(cfg: &TargetConfig, redactor: Redactor, url: &str) -> Result<ApiClient, BuildError> {
        let retry: RetryConfig = cfg.retry.clone().unwrap_or_default();
        let timeout = cfg
            .request_timeout_ms
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_REQUEST_TIMEOUT);
        let rate: Option<&RateLimitConfig> = cfg.rate_limit.as_ref();
        install_crypto();
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .pool_max_idle_per_host(256)
            .tcp_nodelay(true)
            // A redirect is answered as the error it is for an API call, not followed: a
            // followed redirect would carry custom key headers (`x-api-key`, `api-key`) to
            // wherever it points, and it costs a policy check on every request.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("gauntlet/", env!("CARGO_PKG_VERSION")));
        // With redirects refused, a client for a plain-HTTP URL never speaks TLS: skip
        // reading and parsing the system's certificate store (every file of it, about 19
        // million instructions a client; a local server or a mock is plain HTTP).
        let http = if plain_http(url) {
            http.tls_certs_only(std::iter::empty())
        } else {
            http
        };
        let http = http.build().map_err(BuildError::HttpClient)?;
        let limiter = rate
            .filter(|r| r.requests_per_minute.is_some() || r.tokens_per_minute.is_some())
            .map(|r| Arc::new(RateLimiter::new(r)));
        Ok(ApiClient {
            http,
            retry,
            limiter,
            redactor,
            max_reply: reply_limit(cfg.max_reply_bytes),
        })
    }

    /// The redactor (for callers that build error messages).
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Redacts and clips a response body for an error message or a trace.
    pub fn clip_body(&self, body: &[u8]) -> String {
        clip_body(body, &self.redactor)
    }

    /// The error for a response whose status is not a success, recorded in the trace:
    /// `blocked` when `is_filter` recognises the body as a content-filter refusal, else a
    /// transport failure. The body is clipped and redacted.
    pub fn reject_status(
        &self,
        resp: &ApiResponse,
        rec: &mut TraceRecorder,
        is_filter: Option<fn(&serde_json::Value) -> bool>,
    ) -> TargetError {
        let detail = format!("HTTP {}: {}", resp.status, self.clip_body(&resp.body));
        if let Some(is_filter) = is_filter
            && serde_json::from_slice::<serde_json::Value>(&resp.body).is_ok_and(|v| is_filter(&v))
        {
            rec.transport(
                TransportKind::FilterBlock,
                Some(resp.status),
                detail.clone(),
            );
            return TargetError::Blocked(detail);
        }
        rec.transport(TransportKind::Failed, Some(resp.status), detail.clone());
        TargetError::Transport(detail)
    }

    /// A successful response's body as JSON; a body that is not JSON is a protocol error
    /// with the raw body (clipped, redacted) kept in the trace and the error.
    pub fn json_body(
        &self,
        resp: &ApiResponse,
        rec: &mut TraceRecorder,
    ) -> Result<serde_json::Value, TargetError> {
        serde_json::from_slice(&resp.body).map_err(|e| {
            let raw = self.clip_body(&resp.body);
            rec.transport(
                TransportKind::Failed,
                Some(resp.status),
                format!("malformed JSON ({e}); raw body: {raw}"),
            );
            TargetError::Protocol(format!(
                "the response is not valid JSON ({e}); raw body: {raw}"
            ))
        })
    }

    /// The error for a successful response that says nothing (no text, no tool call), with
    /// the raw body (clipped, redacted) kept in the trace and the error: an empty answer is
    /// not evidence of anything, and graded it would pass every "must not say" check.
    pub fn empty_reply(
        &self,
        resp: &ApiResponse,
        rec: &mut TraceRecorder,
        finish_reason: Option<&str>,
    ) -> TargetError {
        let detail = format!(
            "an empty reply: no text and no tool call (finish_reason: {}; set `allow_empty: true` on a case where that is a valid answer); raw body: {}",
            finish_reason.unwrap_or("none"),
            self.clip_body(&resp.body)
        );
        rec.transport(TransportKind::Failed, Some(resp.status), detail.clone());
        TargetError::Protocol(detail)
    }

    /// Parses a URL once, with a configuration error naming it (redacted) when invalid.
    pub fn parse_url(&self, url: &str) -> Result<reqwest::Url, BuildError> {
        reqwest::Url::parse(url).map_err(|source| BuildError::Url {
            url: self.redactor.redact(url).into_owned(),
            source,
        })
    }

    /// Tells the rate limiter how many tokens a request used.
    pub fn record_tokens(&self, tokens: u64) {
        if let Some(l) = &self.limiter {
            l.spend_tokens(tokens);
        }
    }

    /// Sends a request, retrying infrastructure failures. Returns the first response that
    /// is neither 429 nor 5xx, or the last failure once attempts run out.
    pub async fn send(
        &self,
        method: reqwest::Method,
        url: &reqwest::Url,
        headers: &HeaderMap,
        body: Option<Bytes>,
        rec: &mut TraceRecorder,
    ) -> Result<ApiResponse, TargetError> {
        let max = self.retry.max_attempts.max(1);
        let mut last: TargetError = TargetError::Transport("no attempt made".into());
        for attempt in 1..=max {
            if let Some(l) = &self.limiter {
                let waited = l.acquire().await;
                if !waited.is_zero() {
                    rec.transport(
                        TransportKind::Throttled,
                        None,
                        format!("waited {} ms for the client rate limit", waited.as_millis()),
                    );
                }
            }
            let mut req = self
                .http
                .request(method.clone(), url.clone())
                .headers(headers.clone());
            if let Some(b) = &body {
                req = req.body(b.clone());
            }
            let (delay, detail, status) = match req.send().await {
                Err(e) => {
                    let kind = if e.is_timeout() {
                        "timed out"
                    } else {
                        "failed"
                    };
                    let msg = self
                        .redactor
                        .redact(&format!("request {kind}: {}", error_chain(&e)))
                        .into_owned();
                    last = if e.is_timeout() {
                        TargetError::Timeout(msg.clone())
                    } else {
                        TargetError::Transport(msg.clone())
                    };
                    (self.backoff(attempt), msg, None)
                }
                Ok(mut resp) => {
                    let status = resp.status().as_u16();
                    let retry_after = resp
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| parse_retry_after(v, SystemTime::now()));
                    match read_capped(&mut resp, self.max_reply).await {
                        Err(BodyError::Over { head }) => {
                            // An answer that arrived, only too big: not an infrastructure
                            // failure, so not retried (a second endless body costs as much).
                            let msg = format!(
                                "reply over {} bytes (max_reply_bytes); HTTP {status}, it starts: {}",
                                self.max_reply,
                                clip_head(&head, &self.redactor)
                            );
                            rec.transport(TransportKind::Failed, Some(status), msg.clone());
                            return Err(TargetError::Protocol(msg));
                        }
                        Err(BodyError::Read(e)) => {
                            let msg = self
                                .redactor
                                .redact(&format!(
                                    "reading the response failed: {}",
                                    error_chain(&e)
                                ))
                                .into_owned();
                            last = if e.is_timeout() {
                                TargetError::Timeout(msg.clone())
                            } else {
                                TargetError::Transport(msg.clone())
                            };
                            (self.backoff(attempt), msg, Some(status))
                        }
                        Ok(body) if status == 429 || (500..600).contains(&status) => {
                            let msg = format!("HTTP {status}: {}", self.clip_body(&body));
                            last = TargetError::Transport(msg.clone());
                            // Retry-After is honoured as asked (the backoff cap does not shorten
                            // it: retrying early only earns another 429), up to a hard ceiling
                            // beyond which waiting is pointless and the attempt gives up.
                            let delay = match retry_after {
                                Some(d) if status == 429 || status == 503 => {
                                    if d > RETRY_AFTER_CEILING {
                                        rec.transport(
                                            TransportKind::Failed,
                                            Some(status),
                                            format!(
                                                "the server asked to wait {} s; giving up",
                                                d.as_secs()
                                            ),
                                        );
                                        return Err(TargetError::Transport(format!(
                                            "{msg} (the server asked to wait {} s)",
                                            d.as_secs()
                                        )));
                                    }
                                    d
                                }
                                _ => self.backoff(attempt),
                            };
                            (delay, msg, Some(status))
                        }
                        Ok(body) => {
                            return Ok(ApiResponse {
                                status,
                                body,
                                attempts: attempt,
                            });
                        }
                    }
                }
            };
            let kind = if status == Some(429) {
                TransportKind::RateLimited
            } else if attempt < max {
                TransportKind::Retry
            } else {
                TransportKind::Failed
            };
            let note = if attempt < max {
                format!(
                    "attempt {attempt}/{max}: {detail}; retrying in {} ms",
                    delay.as_millis()
                )
            } else {
                format!("attempt {attempt}/{max}: {detail}; giving up")
            };
            rec.transport(kind, status, note);
            if attempt < max {
                tokio::time::sleep(delay).await;
            }
        }
        Err(match last {
            TargetError::Transport(m) => {
                TargetError::Transport(format!("{m} (after {max} attempts)"))
            }
            TargetError::Timeout(m) => TargetError::Timeout(format!("{m} (after {max} attempts)")),
            other => other,
        })
    }

    /// Exponential backoff with full jitter: a random delay up to base × 2^(attempt-1),
    /// capped.
    fn backoff(&self, attempt: u32) -> Duration {
        let cap = self.retry.max_delay_ms;
        let exp = self
            .retry
            .base_delay_ms
            .saturating_mul(1u64 << (attempt.saturating_sub(1)).min(20));
        let ceiling = exp.min(cap);
        Duration::from_millis(ceiling / 2 + fastrand::u64(0..=ceiling / 2))
    }
}

/// The reply limit for a configured `max_reply_bytes` (at least one byte).
pub(crate) fn reply_limit(configured: Option<u64>) -> usize {
    let bytes = configured.unwrap_or(DEFAULT_MAX_REPLY_BYTES).max(1);
    usize::try_from(bytes).unwrap_or(usize::MAX)
}

/// Why a body was not read whole.
pub(crate) enum BodyError {
    /// The connection failed or timed out while reading.
    Read(reqwest::Error),
    /// The body ran past the limit; `head` holds its first bytes, up to the limit.
    Over { head: Bytes },
}

/// Reads a response body chunk by chunk with a running count, stopping at `max` bytes: an
/// endless or huge body costs at most `max` bytes of memory, whatever its `Content-Length`
/// says (or does not say, when it is chunked).
pub(crate) async fn read_capped(
    resp: &mut reqwest::Response,
    max: usize,
) -> Result<Bytes, BodyError> {
    // The declared length sizes the buffer once (no growth by copying), never past the
    // limit: a hostile header reserves no more than an honest body of the limit's size.
    let declared = resp.content_length().unwrap_or(0);
    let mut buf =
        bytes::BytesMut::with_capacity(usize::try_from(declared).map_or(max, |n| n.min(max)));
    while let Some(chunk) = resp.chunk().await.map_err(BodyError::Read)? {
        let room = max - buf.len();
        if chunk.len() > room {
            buf.extend_from_slice(&chunk[..room]);
            return Err(BodyError::Over { head: buf.freeze() });
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(buf.freeze())
}

/// A response body for an error message or a trace: secrets redacted, then at most
/// [`BODY_CLIP`] bytes (cut on a character boundary, with the whole size noted). Redacting
/// first matters: a key straddling the cut would otherwise be kept minus its last
/// characters, which no later redaction recognises. Shared with the recording proxy, so
/// that a body reads alike in both traces.
pub(crate) fn clip_body(body: &[u8], redactor: &Redactor) -> String {
    let text = String::from_utf8_lossy(body);
    match redactor.clip(&text, BODY_CLIP, false) {
        (head, true) => format!("{head}… ({} bytes)", body.len()),
        (whole, false) => whole,
    }
}

/// [`clip_body`] for the start of a body that was cut off at the reply limit: its end is a
/// cut, so the head of a secret there is redacted too (a `max_reply_bytes` below
/// [`BODY_CLIP`] would otherwise show it).
pub(crate) fn clip_head(head: &[u8], redactor: &Redactor) -> String {
    let text = String::from_utf8_lossy(head);
    let (shown, _) = redactor.clip(&text, BODY_CLIP, true);
    format!("{shown}…")
}

/// `Retry-After` as a wait: delay-seconds, or an HTTP date (RFC 9110's IMF-fixdate, and the
/// obsolete RFC 850 and asctime forms a recipient must also accept), waited for from `now`
/// until then (no wait when it is past). A date is the same request as the seconds until it,
/// so the same ceiling applies to both. Anything else is `None`, and the usual backoff is used.
fn parse_retry_after(v: &str, now: SystemTime) -> Option<Duration> {
    let v = v.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return (secs >= 0.0 && secs.is_finite()).then(|| Duration::from_secs_f64(secs));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// A token-bucket limiter for requests and tokens per minute.
///
/// Requests refill continuously at `rpm / 60` per second with a burst of a tenth of a
/// minute's allowance (at least 1), so a run spreads its requests instead of spending the
/// minute in the first second. Tokens are charged after each response (the API reports
/// them) and a request waits while the token budget is spent.
pub struct RateLimiter {
    rpm: Option<f64>,
    tpm: Option<f64>,
    state: Mutex<Bucket>,
}

struct Bucket {
    requests: f64,
    tokens: f64,
    at: Instant,
}

impl RateLimiter {
    /// A limiter for the configured rates.
    pub fn new(cfg: &RateLimitConfig) -> Self {
        let rpm = cfg.requests_per_minute.map(f64::from);
        let tpm = cfg.tokens_per_minute.map(f64::from);
        RateLimiter {
            rpm,
            tpm,
            state: Mutex::new(Bucket {
                requests: rpm.map_or(0.0, |r| (r / 10.0).max(1.0)),
                tokens: tpm.unwrap_or(0.0),
                at: Instant::now(),
            }),
        }
    }

    fn refill(&self, b: &mut Bucket) {
        let now = Instant::now();
        let dt = now.duration_since(b.at).as_secs_f64();
        b.at = now;
        if let Some(r) = self.rpm {
            b.requests = (b.requests + dt * r / 60.0).min((r / 10.0).max(1.0));
        }
        if let Some(t) = self.tpm {
            b.tokens = (b.tokens + dt * t / 60.0).min(t);
        }
    }

    /// Waits for a request slot; returns how long it waited.
    pub async fn acquire(&self) -> Duration {
        let started = Instant::now();
        loop {
            let wait = {
                let mut b = self.state.lock().expect("rate limiter lock");
                self.refill(&mut b);
                let req_ok = self.rpm.is_none() || b.requests >= 1.0;
                let tok_ok = self.tpm.is_none() || b.tokens > 0.0;
                if req_ok && tok_ok {
                    if self.rpm.is_some() {
                        b.requests -= 1.0;
                    }
                    return started.elapsed();
                }
                let req_wait = self
                    .rpm
                    .filter(|_| !req_ok)
                    .map_or(0.0, |r| (1.0 - b.requests) * 60.0 / r);
                let tok_wait = self
                    .tpm
                    .filter(|_| !tok_ok)
                    .map_or(0.0, |t| (1.0 - b.tokens) * 60.0 / t);
                Duration::from_secs_f64(req_wait.max(tok_wait).max(0.001))
            };
            tokio::time::sleep(wait).await;
        }
    }

    /// Charges tokens a response used.
    pub fn spend_tokens(&self, n: u64) {
        if self.tpm.is_some() {
            let mut b = self.state.lock().expect("rate limiter lock");
            b.tokens -= n as f64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_parses_seconds() {
        let now = SystemTime::now();
        assert_eq!(parse_retry_after("2", now), Some(Duration::from_secs(2)));
        assert_eq!(
            parse_retry_after("0.5", now),
            Some(Duration::from_millis(500))
        );
        assert_eq!(parse_retry_after("", now), None);
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
    }

    #[test]
    fn retry_after_dates_wait_until_then() {
        // 2026-10-21T07:27:00Z, one minute before the date the server names.
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_792_567_620);
        let minute = Some(Duration::from_secs(60));
        // IMF-fixdate, and the two obsolete forms RFC 9110 says a recipient must accept.
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2026 07:28:00 GMT", now),
            minute
        );
        assert_eq!(
            parse_retry_after("Wednesday, 21-Oct-26 07:28:00 GMT", now),
            minute
        );
        assert_eq!(parse_retry_after("Wed Oct 21 07:28:00 2026", now), minute);
        // A date already past asks for no wait at all.
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now),
            Some(Duration::ZERO)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_limiter_spreads_requests() {
        let l = RateLimiter::new(&RateLimitConfig {
            requests_per_minute: Some(60),
            tokens_per_minute: None,
        });
        // Burst of max(60/10, 1) = 6, then one per second.
        for _ in 0..6 {
            assert!(l.acquire().await.is_zero());
        }
        let waited = l.acquire().await;
        assert!(waited >= Duration::from_millis(900), "{waited:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn spent_tokens_make_requests_wait() {
        let l = RateLimiter::new(&RateLimitConfig {
            requests_per_minute: None,
            tokens_per_minute: Some(600),
        });
        assert!(l.acquire().await.is_zero());
        l.spend_tokens(1200);
        let waited = l.acquire().await;
        // 600 tokens over budget at 10 tokens per second: about a minute.
        assert!(waited >= Duration::from_secs(59), "{waited:?}");
    }
}
