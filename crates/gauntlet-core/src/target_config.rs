//! How a suite, a config file or the command line names the agent under test:
//! [`TargetConfig`] (the `KIND:ARG` short form or the full map), its [`TargetKind`] and the
//! settings of each kind. Suite model only: the seam traits that play a target are in
//! [`crate::target`], above the trace.

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The kind of target.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// Built-in deterministic personas: `safe`, `vulnerable`, `scripted`.
    Fake,
    /// An OpenAI-compatible chat completions endpoint (also Azure OpenAI, vLLM, Ollama,
    /// llama.cpp, LM Studio, OpenRouter).
    Openai,
    /// The OpenAI Responses API (`POST /v1/responses`), the wire of `client.responses.create`
    /// and the OpenAI Agents SDK. Written `openai-responses` (`openai_responses` is accepted).
    #[serde(rename = "openai-responses", alias = "openai_responses")]
    OpenaiResponses,
    /// The Anthropic Messages API.
    Anthropic,
    /// An application behind its own HTTP API (templated request, JSON-path extraction).
    Http,
    /// A subprocess speaking JSON lines on stdin and stdout.
    Exec,
    /// An unmodified agent launched as a subprocess, whose model calls go through gauntlet's
    /// recording proxy (user turns and answers are JSON strings, one per line).
    Proxy,
}

impl TargetKind {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Fake => "fake",
            TargetKind::Openai => "openai",
            TargetKind::OpenaiResponses => "openai-responses",
            TargetKind::Anthropic => "anthropic",
            TargetKind::Http => "http",
            TargetKind::Exec => "exec",
            TargetKind::Proxy => "proxy",
        }
    }
}

/// A target, as declared in a suite file, a config file or on the command line.
///
/// The short string form is `KIND:ARG`: `fake:safe`, `fake:vulnerable`, `fake:scripted`,
/// `openai:MODEL`, `openai-responses:MODEL`, `anthropic:MODEL`, `exec:COMMAND LINE`,
/// `proxy:COMMAND LINE`, `http:URL`.
/// A bare word names a target from the config file.
#[derive(Debug, Clone, Default, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
#[schemars(transform = crate::de::allow_string_shorthand)]
pub struct TargetConfig {
    /// The adapter. Absent only in a reference to a named target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<TargetKind>,
    /// A named target from the config file (the short form `NAME`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// For `fake`: `safe`, `vulnerable` or `scripted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persona: Option<String>,
    /// Model id sent to the API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Base URL of the API, such as `http://127.0.0.1:8080/v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Name of the environment variable holding the API key. Keys never go in files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Sampling seed, where the API takes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// Most tokens in one reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Ask for a JSON object reply (`json_object`) or plain text (`text`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<String>,
    /// Azure OpenAI deployment settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub azure: Option<AzureConfig>,
    /// Extra request headers. A value `${env:NAME}` is read from the environment and redacted.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Extra fields merged into every request body (for server-specific options).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_body: Option<serde_json::Value>,
    /// Time limit of one request in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_timeout_ms: Option<u64>,
    /// Most bytes of one reply body (default 4 MiB). A reply that runs past it ends the trial
    /// as an error that keeps the reply's first bytes; nothing past the limit is held in
    /// memory. For `proxy` targets, the limit of each upstream reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_reply_bytes: Option<u64>,
    /// Retry policy for infrastructure failures (never for graded answers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetryConfig>,
    /// Most requests in flight at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<usize>,
    /// Client-side rate limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<RateLimitConfig>,
    /// For `http` targets: the request template and where the answer is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpTargetConfig>,
    /// For `exec` targets: the command to launch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<ExecTargetConfig>,
    /// For `proxy` targets: the command to launch and the model API it calls through
    /// gauntlet's recording proxy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<ProxyTargetConfig>,
    /// The folder relative paths in an `exec` or `proxy` command are resolved against: the
    /// folder of the suite or config file that declares the target (set by the loader, never
    /// written). Absent for a target given on the command line, which resolves against the
    /// current directory.
    #[serde(skip)]
    #[schemars(skip)]
    pub base_dir: Option<std::path::PathBuf>,
}

/// Azure OpenAI settings.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AzureConfig {
    /// The deployment name (used in the URL instead of a model id).
    pub deployment: String,
    /// The `api-version` query parameter.
    pub api_version: String,
}

/// Retries for infrastructure failures: connect errors and resets, 429 (honouring
/// `Retry-After`) and 5xx. Exponential backoff with jitter.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RetryConfig {
    /// Most attempts per request, the first included. Default 4.
    #[serde(default = "default_attempts")]
    pub max_attempts: u32,
    /// First backoff delay in milliseconds. Default 250.
    #[serde(default = "default_base_delay")]
    pub base_delay_ms: u64,
    /// Longest backoff delay in milliseconds. Default 20000. (`Retry-After` is honoured as
    /// the server asks, up to five minutes.)
    #[serde(default = "default_max_delay")]
    pub max_delay_ms: u64,
}

fn default_attempts() -> u32 {
    4
}
fn default_base_delay() -> u64 {
    250
}
fn default_max_delay() -> u64 {
    20_000
}

impl Default for RetryConfig {
    fn default() -> Self {
        Self {
            max_attempts: default_attempts(),
            base_delay_ms: default_base_delay(),
            max_delay_ms: default_max_delay(),
        }
    }
}

/// Client-side rate limits.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RateLimitConfig {
    /// Requests per minute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_minute: Option<u32>,
    /// Tokens per minute (prompt and completion, as reported by the API).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_per_minute: Option<u32>,
}

/// An application behind its own HTTP API.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HttpTargetConfig {
    /// HTTP method. Default POST.
    #[serde(default = "default_method")]
    pub method: String,
    /// The URL; may use `{{ vars.NAME }}`.
    pub url: String,
    /// Request headers; values may use `${env:NAME}` (redacted) and template variables.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The JSON body. String values are templates: `{{ input }}`, `{{ vars.NAME }}`,
    /// `{{ history }}` (the conversation as JSON), `{{ session_id }}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<serde_json::Value>,
    /// JSON path to the answer text in the response.
    pub answer_path: String,
    /// JSON path to a list of tool calls the app made (each with `name` and `arguments`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls_path: Option<String>,
}

fn default_method() -> String {
    "POST".to_owned()
}

/// A subprocess agent.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ExecTargetConfig {
    /// The program and its arguments.
    pub command: Vec<String>,
    /// Extra environment variables. Nothing else of gauntlet's environment reaches the agent
    /// but `PATH` and what `pass_env` names; values `${env:NAME}` are read from gauntlet's
    /// environment and redacted as secrets.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Names of variables passed from gauntlet's environment as they are, when set (`TMPDIR`,
    /// `SSL_CERT_FILE`, `HTTPS_PROXY`). For settings, not secrets: their values are not
    /// redacted, so names that look like credentials are refused; pass a key through `env`
    /// as `${env:NAME}` instead.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_env: Vec<String>,
    /// Frozen clock value handed to the agent (RFC 3339). Default 2025-01-01T00:00:00Z.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frozen_time: Option<String>,
}

/// An unmodified agent run as a subprocess, whose model calls are recorded by pointing its
/// model base URL at gauntlet's recording proxy (see `docs/proxy.md`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProxyTargetConfig {
    /// The program and its arguments. It reads user turns on stdin and writes answers on
    /// stdout, one JSON string per line.
    pub command: Vec<String>,
    /// Base URL of the real model API the proxy forwards to, such as
    /// `https://api.openai.com/v1` (OpenAI requests go to `{upstream}/chat/completions`,
    /// Anthropic requests to `{upstream}/v1/messages`). The target's `base_url` (`--base-url`),
    /// when set, is used instead.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub upstream: String,
    /// Extra environment variables for the agent, as for `exec` (values `${env:NAME}` are read
    /// from gauntlet's environment and redacted). The base-URL variables that point the agent
    /// at the proxy are set after these and win.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Names of variables passed from gauntlet's environment as they are, as for `exec`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pass_env: Vec<String>,
    /// Frozen clock value handed to the agent in `GAUNTLET_FROZEN_TIME` (RFC 3339). Default
    /// 2025-01-01T00:00:00Z.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frozen_time: Option<String>,
}

impl<'de> Deserialize<'de> for TargetConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Map {
            #[serde(default)]
            kind: Option<TargetKind>,
            #[serde(default)]
            name: Option<String>,
            #[serde(default)]
            persona: Option<String>,
            #[serde(default)]
            model: Option<String>,
            #[serde(default)]
            base_url: Option<String>,
            #[serde(default)]
            api_key_env: Option<String>,
            #[serde(default)]
            temperature: Option<f64>,
            #[serde(default)]
            seed: Option<i64>,
            #[serde(default)]
            max_tokens: Option<u32>,
            #[serde(default)]
            response_format: Option<String>,
            #[serde(default)]
            azure: Option<AzureConfig>,
            #[serde(default)]
            headers: BTreeMap<String, String>,
            #[serde(default)]
            extra_body: Option<serde_json::Value>,
            #[serde(default)]
            request_timeout_ms: Option<u64>,
            #[serde(default)]
            max_reply_bytes: Option<u64>,
            #[serde(default)]
            retry: Option<RetryConfig>,
            #[serde(default)]
            concurrency: Option<usize>,
            #[serde(default)]
            rate_limit: Option<RateLimitConfig>,
            #[serde(default)]
            http: Option<HttpTargetConfig>,
            #[serde(default)]
            exec: Option<ExecTargetConfig>,
            #[serde(default)]
            proxy: Option<ProxyTargetConfig>,
        }
        let parsed = crate::de::string_or_map(
            d,
            "a target such as `fake:safe` or `openai:MODEL`, or a map with `kind`",
            |s: String| TargetConfig::parse(&s),
            |m: Map| {
                Ok(TargetConfig {
                    kind: m.kind,
                    name: m.name,
                    persona: m.persona,
                    model: m.model,
                    base_url: m.base_url,
                    api_key_env: m.api_key_env,
                    temperature: m.temperature,
                    seed: m.seed,
                    max_tokens: m.max_tokens,
                    response_format: m.response_format,
                    azure: m.azure,
                    headers: m.headers,
                    extra_body: m.extra_body,
                    request_timeout_ms: m.request_timeout_ms,
                    max_reply_bytes: m.max_reply_bytes,
                    retry: m.retry,
                    concurrency: m.concurrency,
                    rate_limit: m.rate_limit,
                    http: m.http,
                    exec: m.exec,
                    proxy: m.proxy,
                    base_dir: None,
                })
            },
        )?;
        parsed.map_err(serde::de::Error::custom)
    }
}

/// The personas of the built-in fake target.
///
/// `flaky-harness`, `flaky-agent` and `flaky-judge` are seeded flaky variants used to show
/// (and test) flake triage: the first fails alternate trials at the transport level, the
/// second alternates between the safe and the vulnerable behaviour, the third is a judge
/// whose scores alternate. `judge` is a judge that always gives full marks. `attacker` and
/// `rewriter` are scripted helper models for attack strategies and model-driven converters;
/// `silent` answers nothing (a helper that fails); `parrot` is an attacker that never
/// attacks (it echoes its instructions or offers help, as very small models do). `brittle`
/// is the safe persona reading only the first sentence (or line) of the user's last
/// message: its answers depend on the wording and order of a request, never on the repeat,
/// which is what metamorphic stability has to catch. `literal` is the safe persona that
/// decodes nothing: it declines a request it cannot read and does the legitimate task with
/// what it can read, the defended model a converter must not hide the task from.
pub const FAKE_PERSONAS: &[&str] = &[
    "safe",
    "vulnerable",
    "scripted",
    "flaky-harness",
    "flaky-agent",
    "flaky-judge",
    "judge",
    "user",
    "attacker",
    "rewriter",
    "silent",
    "parrot",
    "brittle",
    "literal",
];

/// Why a `KIND:ARG` target spec names no target. Each message ends with what to write
/// instead, because a suite file's `target:` shows only the message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetSpecError {
    /// Nothing was given.
    #[error("empty target; try `fake:safe` or `openai:MODEL`")]
    Empty,
    /// Neither `KIND:ARG` nor a name.
    #[error("`{0}` is not a target; write KIND:ARG such as `fake:safe` or `openai:gpt-4o-mini`")]
    NotATarget(String),
    /// `fake:` with a persona that does not exist.
    #[error("unknown fake persona `{0}`; choose one of: {personas}", personas = FAKE_PERSONAS.join(", "))]
    UnknownPersona(String),
    /// `openai:` or `anthropic:` without a model.
    #[error("`{0}:` needs a model id, as in `{0}:MODEL`")]
    NoModel(String),
    /// `exec:` without a command.
    #[error("`exec:` needs a command, as in `exec:python3 agent.py`")]
    NoExecCommand,
    /// `proxy:` without a command.
    #[error(
        "`proxy:` needs a command, as in `proxy:python3 agent.py` (with --base-url for the model API)"
    )]
    NoProxyCommand,
    /// A kind that does not exist.
    #[error(
        "unknown target kind `{0}`; choose one of: fake, openai, openai-responses, anthropic, http, exec, proxy"
    )]
    UnknownKind(String),
}

impl TargetConfig {
    /// Parses the short form `KIND:ARG` (or a bare target name).
    pub fn parse(spec: &str) -> Result<TargetConfig, TargetSpecError> {
        let spec = spec.trim();
        if spec.is_empty() {
            return Err(TargetSpecError::Empty);
        }
        let Some((kind, arg)) = spec.split_once(':') else {
            if spec
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
            {
                return Ok(TargetConfig {
                    name: Some(spec.to_owned()),
                    ..Default::default()
                });
            }
            return Err(TargetSpecError::NotATarget(spec.to_owned()));
        };
        let arg = arg.trim();
        let mut t = TargetConfig::default();
        match kind.trim() {
            "fake" => {
                if !FAKE_PERSONAS.contains(&arg) {
                    return Err(TargetSpecError::UnknownPersona(arg.to_owned()));
                }
                t.kind = Some(TargetKind::Fake);
                t.persona = Some(arg.to_owned());
            }
            "openai" | "openai-responses" | "anthropic" => {
                if arg.is_empty() {
                    return Err(TargetSpecError::NoModel(kind.to_owned()));
                }
                t.kind = Some(match kind.trim() {
                    "openai" => TargetKind::Openai,
                    "openai-responses" => TargetKind::OpenaiResponses,
                    _ => TargetKind::Anthropic,
                });
                t.model = Some(arg.to_owned());
            }
            "exec" => {
                let command: Vec<String> = arg.split_whitespace().map(str::to_owned).collect();
                if command.is_empty() {
                    return Err(TargetSpecError::NoExecCommand);
                }
                t.kind = Some(TargetKind::Exec);
                t.exec = Some(ExecTargetConfig {
                    command,
                    env: BTreeMap::new(),
                    pass_env: Vec::new(),
                    frozen_time: None,
                });
            }
            "proxy" => {
                let command: Vec<String> = arg.split_whitespace().map(str::to_owned).collect();
                if command.is_empty() {
                    return Err(TargetSpecError::NoProxyCommand);
                }
                t.kind = Some(TargetKind::Proxy);
                t.proxy = Some(ProxyTargetConfig {
                    command,
                    upstream: String::new(),
                    env: BTreeMap::new(),
                    pass_env: Vec::new(),
                    frozen_time: None,
                });
            }
            "http" | "https" => {
                // `http:URL` keeps the URL whole, scheme included when given as `http:https://..`.
                let url = if kind == "https" {
                    format!("https:{arg}")
                } else if arg.starts_with("//") {
                    format!("http:{arg}")
                } else {
                    arg.to_owned()
                };
                t.kind = Some(TargetKind::Http);
                t.http = Some(HttpTargetConfig {
                    method: default_method(),
                    url,
                    headers: BTreeMap::new(),
                    body: Some(serde_json::json!({ "input": "{{ input }}" })),
                    answer_path: "$.output".into(),
                    tool_calls_path: None,
                });
            }
            other => return Err(TargetSpecError::UnknownKind(other.to_owned())),
        }
        Ok(t)
    }

    /// A short description for reports: `fake:safe`, `openai:gpt-4o-mini`.
    pub fn label(&self) -> String {
        match self.kind {
            None => self.name.clone().unwrap_or_else(|| "unnamed".into()),
            Some(TargetKind::Fake) => {
                format!("fake:{}", self.persona.as_deref().unwrap_or("safe"))
            }
            Some(TargetKind::Exec) => format!(
                "exec:{}",
                self.exec
                    .as_ref()
                    .map(|e| e.command.join(" "))
                    .unwrap_or_default()
            ),
            Some(TargetKind::Proxy) => format!(
                "proxy:{}",
                self.proxy
                    .as_ref()
                    .map(|p| p.command.join(" "))
                    .unwrap_or_default()
            ),
            Some(TargetKind::Http) => format!(
                "http:{}",
                self.http.as_ref().map(|h| h.url.as_str()).unwrap_or("")
            ),
            Some(k) => format!("{}:{}", k.as_str(), self.model.as_deref().unwrap_or("?")),
        }
    }

    /// Fills fields that this config leaves unset from `base` (used to apply command-line
    /// flags and named targets).
    pub fn merged_over(mut self, base: &TargetConfig) -> TargetConfig {
        macro_rules! fill {
            ($($f:ident),*) => { $( if self.$f.is_none() { self.$f = base.$f.clone(); } )* };
        }
        fill!(
            kind,
            persona,
            model,
            base_url,
            api_key_env,
            temperature,
            seed,
            max_tokens,
            response_format,
            azure,
            extra_body,
            request_timeout_ms,
            max_reply_bytes,
            retry,
            concurrency,
            rate_limit,
            http,
            exec,
            proxy
        );
        for (k, v) in &base.headers {
            self.headers.entry(k.clone()).or_insert_with(|| v.clone());
        }
        self
    }
}

impl fmt::Display for TargetConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

/// One column of a matrix run: the target as the user named it (its label in every table,
/// report and comparison) and its settings as resolved.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct MatrixColumn {
    /// The label: the `-t` value as given (`fake:safe`, a named target).
    pub label: String,
    /// The target, resolved (names of key variables only; never the keys).
    pub target: TargetConfig,
    /// The label of the suites' system-prompt variant (`prompts:`) this column runs with in
    /// place of the agent's; none for a column of a target alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_responses_api_target_is_named_in_both_forms() {
        let t = TargetConfig::parse("openai-responses:gpt-4.1-mini").unwrap();
        assert_eq!(t.kind, Some(TargetKind::OpenaiResponses));
        assert_eq!(t.model.as_deref(), Some("gpt-4.1-mini"));
        assert_eq!(t.label(), "openai-responses:gpt-4.1-mini");
        assert_eq!(
            TargetConfig::parse("openai-responses:"),
            Err(TargetSpecError::NoModel("openai-responses".into()))
        );
        // The chat-completions target is untouched.
        let chat = TargetConfig::parse("openai:gpt-4o").unwrap();
        assert_eq!(chat.kind, Some(TargetKind::Openai));
        for kind in ["openai-responses", "openai_responses"] {
            let t: TargetConfig =
                serde_json::from_value(serde_json::json!({"kind": kind, "model": "m"})).unwrap();
            assert_eq!(t.kind, Some(TargetKind::OpenaiResponses), "{kind}");
            assert_eq!(
                serde_json::to_value(t.kind).unwrap(),
                serde_json::json!("openai-responses")
            );
        }
        let e = TargetConfig::parse("responses:m").unwrap_err();
        assert!(e.to_string().contains("openai-responses"), "{e}");
    }
}
