//! The OpenAI chat-completions wire format: [`OpenAiModel`] (a [`ChatModel`] over any
//! compatible endpoint: OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp, LM Studio,
//! OpenRouter) and the conversions to and from the wire, shared with `serve-fake` and the
//! recording proxy.
//!
//! Requests are built as plain JSON (not a typed SDK) so that servers with extras and
//! omissions are handled, and so the exact bytes can be recorded.
//!
//! What every model behind a vendor's HTTP API shares is here too, for the Anthropic model
//! as well: reading the key ([`api_key`], [`KeySource`]), the set-up (`ApiSetup`) and the
//! request path of one completion (`ApiEndpoint`).

use std::collections::BTreeMap;

use bytes::Bytes;
use gauntlet_core::event::{EvidenceLevel, SideEffectMode};
use gauntlet_core::redact::Redactor;
use gauntlet_core::target::{
    AzureConfig, BoxFuture, TargetConfig, TargetError, TargetInfo, TrialContext,
};
use gauntlet_core::tools::ToolDef;
use gauntlet_core::trace::{Message, Role, ToolCallRequest, TraceRecorder, TransportKind, Usage};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use crate::chat::{ChatModel, ChatReply, ChatRequest, says_nothing};
use crate::client::{ApiClient, ApiResponse};
use crate::error::{BuildError, WireError};

/// Default base URL.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// A model behind an OpenAI-compatible chat-completions endpoint.
pub struct OpenAiModel {
    api: ApiEndpoint,
}

/// Reads `${env:NAME}` references in a header value, registering secrets with the redactor.
pub fn resolve_env_refs(value: &str, redactor: &mut Redactor) -> Result<String, BuildError> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${env:") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 6..];
        let Some(end) = after.find('}') else {
            return Err(BuildError::UnclosedEnvRef {
                value: value.to_owned(),
            });
        };
        let name = &after[..end];
        // A header's secret may also come from the `.env` file (the environment wins).
        let v = std::env::var(name)
            .ok()
            .or_else(|| crate::keys::key_var(name).map(|(v, _)| v))
            .ok_or_else(|| BuildError::EnvUnset {
                name: name.to_owned(),
            })?;
        redactor.add(name, &v);
        out.push_str(&v);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The variable an OpenAI-compatible target reads its key from when the config names none.
pub const OPENAI_KEY_ENV: &str = "OPENAI_API_KEY";
/// The same for an Azure OpenAI target (one with an `azure:` section).
pub const AZURE_KEY_ENV: &str = "AZURE_OPENAI_API_KEY";
/// The variable an OpenAI-compatible target reads its base URL from when the config gives none.
pub const OPENAI_BASE_URL_ENV: &str = "OPENAI_BASE_URL";

/// Where a model's API key came from: said in the error of a request the server refused
/// with 401 or 403, so that a missing or wrong key is found at once.
#[derive(Debug, Clone)]
pub struct KeySource {
    var: String,
    read: bool,
    /// The conventional variable was set, but the endpoint is not one it may go to.
    withheld_from: Option<String>,
}

impl KeySource {
    /// The note added to a 401 or 403: which variable was read, or which one was not set.
    pub fn note(&self) -> String {
        if self.read {
            format!("the API key was read from `{}`", self.var)
        } else if let Some(host) = &self.withheld_from {
            format!(
                "no API key was sent: `{var}` is set, but a key read without being named goes only to the vendor's API, to the URL in the base-URL variable or to a local server, not to `{host}` (a suite file may name any endpoint); pass --api-key-env {var} to send it there",
                var = self.var
            )
        } else {
            format!(
                "no API key was sent: `{}` is not set (export it, or name the variable that holds the key with --api-key-env or `api_key_env`)",
                self.var
            )
        }
    }

    /// Adds the note to the error of a refused request (401 or 403); other errors pass.
    pub fn explain(&self, status: u16, err: TargetError) -> TargetError {
        match err {
            TargetError::Transport(d) if status == 401 || status == 403 => {
                TargetError::Transport(format!("{d}; {}", self.note()))
            }
            e => e,
        }
    }
}

/// Where a key read from a conventional variable (not named by `api_key_env`) may be sent.
/// Suites arrive in pull requests and may name any `base_url`: without this, a suite could
/// point the target at its own server and collect the CI's `OPENAI_API_KEY`.
#[derive(Debug, Clone, Copy)]
pub struct ImplicitKeyScope<'a> {
    /// The vendor's own base URL (its host is trusted).
    pub vendor_base: &'a str,
    /// The variable that sets the base URL (`OPENAI_BASE_URL`): the user's own choice.
    pub base_env: Option<&'a str>,
    /// Host suffixes that belong to the vendor too (Azure's resource hosts).
    pub vendor_suffixes: &'a [&'a str],
}

/// The host of a URL, lower-case and without IPv6 brackets.
fn host_of(url: &str) -> Option<String> {
    reqwest::Url::parse(url).ok().and_then(|u| {
        u.host_str()
            .map(|h| h.trim_matches(['[', ']']).to_ascii_lowercase())
    })
}

impl ImplicitKeyScope<'_> {
    /// The vendor's own host when `base` is on it (its API refuses every request without a
    /// key); `None` for any other endpoint, a local server among them.
    fn vendor_host(&self, base: &str) -> Option<String> {
        let host = host_of(base)?;
        (host_of(self.vendor_base).is_some_and(|v| v == host)
            || self.vendor_suffixes.iter().any(|s| host.ends_with(s)))
        .then_some(host)
    }

    /// Whether the implicit key may go to `base`; else the host it must not go to.
    fn allows(&self, base: &str) -> Result<(), String> {
        let Some(host) = host_of(base) else {
            return Err(base.to_owned());
        };
        let same = |a: &str, b: &str| a.trim_end_matches('/') == b.trim_end_matches('/');
        let from_env = self
            .base_env
            .and_then(|v| std::env::var(v).ok())
            .is_some_and(|v| same(v.trim(), base));
        let loopback = host == "localhost"
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        if from_env
            || loopback
            || host_of(self.vendor_base).is_some_and(|v| v == host)
            || self.vendor_suffixes.iter().any(|s| host.ends_with(s))
        {
            Ok(())
        } else {
            Err(host)
        }
    }
}

/// Reads the API key: from the variable `api_key_env` names (which must be set), else from
/// the conventional `default_env` when it is set and not empty (the way the vendors' own
/// SDKs read it) and `base` is within `scope`. Either way the key is registered with the
/// redactor. A target on the vendor's own API with no key at all is refused here, before the
/// run starts ([`BuildError::ApiKeyMissing`]): every request would be refused with a 401 and
/// every trial would fail on the transport. Other endpoints (a local server, a gateway) may
/// need no key.
pub fn api_key(
    cfg: &TargetConfig,
    redactor: &mut Redactor,
    default_env: &str,
    base: &str,
    scope: ImplicitKeyScope<'_>,
) -> Result<(Option<String>, KeySource), BuildError> {
    match &cfg.api_key_env {
        Some(name) => {
            let (v, _) = crate::keys::key_var(name)
                .ok_or_else(|| BuildError::ApiKeyUnset { name: name.clone() })?;
            redactor.add(name, &v);
            Ok((
                Some(v),
                KeySource {
                    var: name.clone(),
                    read: true,
                    withheld_from: None,
                },
            ))
        }
        None => {
            let v = crate::keys::key_var(default_env).map(|(v, _)| v);
            if let Some(v) = &v {
                // Redacted even when withheld: it is a secret of this process either way.
                redactor.add(default_env, v);
            }
            let (v, withheld_from) = match (v, scope.allows(base)) {
                (Some(_), Err(host)) => (None, Some(host)),
                (v, _) => (v, None),
            };
            if v.is_none()
                && withheld_from.is_none()
                && let Some(host) = scope.vendor_host(base)
            {
                return Err(BuildError::ApiKeyMissing {
                    name: default_env.to_owned(),
                    host,
                });
            }
            let read = v.is_some();
            Ok((
                v,
                KeySource {
                    var: default_env.to_owned(),
                    read,
                    withheld_from,
                },
            ))
        }
    }
}

/// The base URL: the config's, else the variable `env` when it is set and not empty, else
/// `default`.
pub fn base_url(cfg: &TargetConfig, env: &str, default: &str) -> String {
    cfg.base_url
        .clone()
        .or_else(|| std::env::var(env).ok().filter(|v| !v.trim().is_empty()))
        .unwrap_or_else(|| default.to_owned())
}

/// Extra headers from the config, with `${env:...}` resolved.
pub fn extra_headers(cfg: &TargetConfig, redactor: &mut Redactor) -> Result<HeaderMap, BuildError> {
    header_map(&cfg.headers, redactor)
}

/// Headers from name-value pairs, with `${env:...}` resolved; every value is marked
/// sensitive (kept out of debug output), since any of them may carry a key.
pub fn header_map<'a>(
    pairs: impl IntoIterator<Item = (&'a String, &'a String)>,
    redactor: &mut Redactor,
) -> Result<HeaderMap, BuildError> {
    let mut h = HeaderMap::new();
    for (k, v) in pairs {
        let v = resolve_env_refs(v, redactor)?;
        let name =
            HeaderName::from_bytes(k.as_bytes()).map_err(|_| BuildError::HeaderName(k.clone()))?;
        let mut value =
            HeaderValue::from_str(&v).map_err(|_| BuildError::HeaderValue(k.clone()))?;
        value.set_sensitive(true);
        h.insert(name, value);
    }
    Ok(h)
}

/// A header carrying an API key: marked sensitive, so that it never shows in debug output.
pub(crate) fn key_header(value: &str) -> Result<HeaderValue, BuildError> {
    let mut v = HeaderValue::from_str(value).map_err(|_| BuildError::ApiKeyHeader)?;
    v.set_sensitive(true);
    Ok(v)
}

/// What a model API target reports about itself: online evidence, simulated side effects,
/// its base URL redacted.
pub(crate) fn api_info(
    kind: &str,
    model: &str,
    base: &str,
    cfg: &TargetConfig,
    redactor: &Redactor,
) -> TargetInfo {
    TargetInfo {
        kind: kind.into(),
        label: format!("{kind}:{model}"),
        model: Some(model.to_owned()),
        base_url: Some(redactor.redact(base).into_owned()),
        settings: settings_of(cfg),
        evidence_level: EvidenceLevel::Online,
        side_effects: SideEffectMode::Simulated,
    }
}

/// Settings recorded in the manifest.
pub fn settings_of(cfg: &TargetConfig) -> BTreeMap<String, String> {
    let mut s = BTreeMap::new();
    if let Some(t) = cfg.temperature {
        s.insert("temperature".into(), t.to_string());
    }
    if let Some(v) = cfg.seed {
        s.insert("seed".into(), v.to_string());
    }
    if let Some(v) = cfg.max_tokens {
        s.insert("max_tokens".into(), v.to_string());
    }
    if let Some(v) = &cfg.response_format {
        s.insert("response_format".into(), v.clone());
    }
    if let Some(r) = &cfg.retry {
        s.insert("retry.max_attempts".into(), r.max_attempts.to_string());
    }
    s
}

/// What a model behind a vendor's HTTP API holds, OpenAI's and Anthropic's alike: the
/// client, the endpoint and its headers, the model's name, the config, what the target says
/// of itself, and where the key came from (for the error of a refused request).
pub(crate) struct ApiEndpoint {
    pub(crate) client: ApiClient,
    url: reqwest::Url,
    pub(crate) model: String,
    headers: HeaderMap,
    pub(crate) cfg: TargetConfig,
    pub(crate) info: TargetInfo,
    key_source: KeySource,
}

/// The first half of an [`ApiEndpoint`]'s set-up, before the vendor's own headers, URL and
/// model: the key (read as [`api_key`] says), the config's headers and the JSON content type.
pub(crate) struct ApiSetup<'a> {
    kind: &'static str,
    cfg: &'a TargetConfig,
    /// The base URL, without a trailing `/`.
    pub(crate) base: &'a str,
    pub(crate) key: Option<String>,
    key_source: KeySource,
    pub(crate) headers: HeaderMap,
}

impl<'a> ApiSetup<'a> {
    /// Reads the key of a `kind` target at `base` (from `key_env` unless the config names a
    /// variable; `scope` says where an implicit key may go) and the config's headers.
    pub(crate) fn start(
        kind: &'static str,
        cfg: &'a TargetConfig,
        redactor: &mut Redactor,
        key_env: &str,
        base: &'a str,
        scope: ImplicitKeyScope<'_>,
    ) -> Result<ApiSetup<'a>, BuildError> {
        let base = base.trim_end_matches('/');
        let (key, key_source) = api_key(cfg, redactor, key_env, base, scope)?;
        let mut headers = extra_headers(cfg, redactor)?;
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        Ok(ApiSetup {
            kind,
            cfg,
            base,
            key,
            key_source,
            headers,
        })
    }

    /// The endpoint at `url` for `model`, with its client.
    pub(crate) fn finish(
        self,
        url: &str,
        model: String,
        redactor: &Redactor,
    ) -> Result<ApiEndpoint, BuildError> {
        let client = ApiClient::new(self.cfg, redactor.clone(), url)?;
        let info = api_info(self.kind, &model, self.base, self.cfg, redactor);
        let url = client.parse_url(url)?;
        Ok(ApiEndpoint {
            client,
            url,
            model,
            headers: self.headers,
            cfg: self.cfg.clone(),
            info,
            key_source: self.key_source,
        })
    }
}

impl ApiEndpoint {
    /// Posts a request body. A status other than 200 is an error (`blocked` when `is_filter`
    /// reads the body as a content filter's), with where the key came from after a 401 or 403.
    pub(crate) async fn post(
        &self,
        body: Vec<u8>,
        rec: &mut TraceRecorder,
        is_filter: Option<fn(&Value) -> bool>,
    ) -> Result<ApiResponse, TargetError> {
        let resp = self.send(body, rec).await?;
        if resp.status != 200 {
            return Err(self.refused(&resp, rec, is_filter));
        }
        Ok(resp)
    }

    /// Posts a request body and returns the response whatever its status (the transport's
    /// retries done).
    pub(crate) async fn send(
        &self,
        body: Vec<u8>,
        rec: &mut TraceRecorder,
    ) -> Result<ApiResponse, TargetError> {
        self.client
            .send(
                reqwest::Method::POST,
                &self.url,
                &self.headers,
                Some(Bytes::from(body)),
                rec,
            )
            .await
    }

    /// The error of a response whose status is not 200, with where the key came from after a
    /// 401 or 403.
    pub(crate) fn refused(
        &self,
        resp: &ApiResponse,
        rec: &mut TraceRecorder,
        is_filter: Option<fn(&Value) -> bool>,
    ) -> TargetError {
        let err = self.client.reject_status(resp, rec, is_filter);
        self.key_source.explain(resp.status, err)
    }

    /// The reply as the chat loop takes it: its attempts, the configured model when the
    /// server named none, its tokens counted against the rate limit. A reply that says
    /// nothing is an error, unless a content filter stopped it or the case allows it.
    pub(crate) fn finish(
        &self,
        mut reply: ChatReply,
        resp: &ApiResponse,
        ctx: &TrialContext<'_>,
        rec: &mut TraceRecorder,
    ) -> Result<ChatReply, TargetError> {
        reply.attempts = resp.attempts;
        if reply.model.is_none() {
            reply.model = Some(self.model.clone());
        }
        self.client
            .record_tokens(reply.usage.input_tokens + reply.usage.output_tokens);
        let filtered = reply.finish_reason.as_deref() == Some("content_filter");
        if !filtered && !ctx.case.allow_empty && says_nothing(&reply.message) {
            return Err(self
                .client
                .empty_reply(resp, rec, reply.finish_reason.as_deref()));
        }
        Ok(reply)
    }

    /// Merges the config's `extra_body` fields into a request body.
    pub(crate) fn merge_extra_body(&self, body: &mut Map<String, Value>) {
        if let Some(Value::Object(extra)) = &self.cfg.extra_body {
            for (k, v) in extra {
                body.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Where an OpenAI model's key and base URL come from, and which hosts the implicit key may
/// go to: `AZURE_OPENAI_API_KEY` and the config's base URL with an `azure:` section, else
/// `OPENAI_API_KEY` and the base URL of the config, the environment or OpenAI's. The chat
/// and the Responses API targets share it.
pub(crate) fn key_and_base(
    cfg: &TargetConfig,
) -> (&'static str, String, ImplicitKeyScope<'static>) {
    match &cfg.azure {
        Some(_) => (
            AZURE_KEY_ENV,
            cfg.base_url
                .clone()
                .unwrap_or_else(|| OPENAI_BASE_URL.to_owned()),
            ImplicitKeyScope {
                vendor_base: OPENAI_BASE_URL,
                base_env: None,
                vendor_suffixes: &[".openai.azure.com", ".cognitiveservices.azure.com"],
            },
        ),
        None => (
            OPENAI_KEY_ENV,
            base_url(cfg, OPENAI_BASE_URL_ENV, OPENAI_BASE_URL),
            ImplicitKeyScope {
                vendor_base: OPENAI_BASE_URL,
                base_env: Some(OPENAI_BASE_URL_ENV),
                vendor_suffixes: &[],
            },
        ),
    }
}

/// The endpoint of an OpenAI-style `kind` target whose path under the base URL is `path`
/// (`chat/completions`, `responses`), or under an Azure resource `azure_path`: the key and
/// base from [`key_and_base`], the key sent as Azure's `api-key` header or as a bearer token,
/// and the model (an Azure deployment names one when the config does not).
pub(crate) fn open_endpoint(
    kind: &'static str,
    cfg: &TargetConfig,
    redactor: &mut Redactor,
    path: &str,
    azure_path: impl Fn(&AzureConfig) -> String,
) -> Result<ApiEndpoint, BuildError> {
    let (key_env, base, scope) = key_and_base(cfg);
    let mut setup = ApiSetup::start(kind, cfg, redactor, key_env, &base, scope)?;
    let base = setup.base;
    let (url, model) = match &cfg.azure {
        Some(az) => {
            if let Some(k) = &setup.key {
                setup.headers.insert("api-key", key_header(k)?);
            }
            (
                format!("{base}/{}", azure_path(az)),
                cfg.model.clone().unwrap_or_else(|| az.deployment.clone()),
            )
        }
        None => {
            if let Some(k) = &setup.key {
                let bearer = key_header(&format!("Bearer {k}"))?;
                setup.headers.insert(AUTHORIZATION, bearer);
            }
            let url = if base.ends_with(&format!("/{path}")) {
                base.to_owned()
            } else {
                format!("{base}/{path}")
            };
            (url, cfg.model.clone().ok_or(BuildError::NoModel { kind })?)
        }
    };
    setup.finish(&url, model, redactor)
}

impl OpenAiModel {
    /// Builds the model from a config, reading the API key from the environment.
    pub fn new(cfg: &TargetConfig, redactor: &mut Redactor) -> Result<OpenAiModel, BuildError> {
        let api = open_endpoint("openai", cfg, redactor, "chat/completions", |az| {
            format!(
                "openai/deployments/{}/chat/completions?api-version={}",
                az.deployment, az.api_version
            )
        })?;
        Ok(OpenAiModel { api })
    }

    /// The request body. Serialized straight from the conversation (no intermediate JSON
    /// tree) unless `extra_body` asks for fields to be merged in.
    fn body_bytes(&self, req: &ChatRequest<'_>) -> Result<Vec<u8>, serde_json::Error> {
        let cfg = &self.api.cfg;
        if cfg.extra_body.is_some() {
            return serde_json::to_vec(&self.body(req));
        }
        serde_json::to_vec(&WireRequest {
            model: &self.api.model,
            messages: WireMessages(req.messages),
            tools: (!req.tools.is_empty()).then(|| tools_to_wire(req.tools)),
            temperature: cfg.temperature,
            seed: cfg.seed,
            max_tokens: cfg.max_tokens,
            response_format: cfg
                .response_format
                .as_deref()
                .map(|t| ResponseFormat { kind: t }),
        })
    }

    fn body(&self, req: &ChatRequest<'_>) -> Value {
        let cfg = &self.api.cfg;
        let mut body = Map::new();
        body.insert("model".into(), json!(self.api.model));
        body.insert("messages".into(), messages_to_wire(req.messages));
        if !req.tools.is_empty() {
            body.insert("tools".into(), tools_to_wire(req.tools));
        }
        if let Some(t) = cfg.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if let Some(s) = cfg.seed {
            body.insert("seed".into(), json!(s));
        }
        if let Some(m) = cfg.max_tokens {
            body.insert("max_tokens".into(), json!(m));
        }
        if let Some(f) = &cfg.response_format {
            body.insert("response_format".into(), json!({ "type": f }));
        }
        self.api.merge_extra_body(&mut body);
        Value::Object(body)
    }
}

/// Messages in the chat-completions shape.
pub fn messages_to_wire(messages: &[Message]) -> Value {
    Value::Array(
        messages
            .iter()
            .map(|m| match m.role {
                Role::System => json!({ "role": "system", "content": m.content }),
                Role::User => json!({ "role": "user", "content": m.content }),
                Role::Tool => json!({
                    "role": "tool",
                    "tool_call_id": m.tool_call_id.clone().unwrap_or_default(),
                    "content": m.content,
                }),
                Role::Assistant => {
                    let mut o = Map::new();
                    o.insert("role".into(), json!("assistant"));
                    o.insert(
                        "content".into(),
                        if m.content.is_empty() && !m.tool_calls.is_empty() {
                            Value::Null
                        } else {
                            json!(m.content)
                        },
                    );
                    if !m.tool_calls.is_empty() {
                        o.insert(
                            "tool_calls".into(),
                            Value::Array(
                                m.tool_calls
                                    .iter()
                                    .map(|c| {
                                        json!({
                                            "id": c.id,
                                            "type": "function",
                                            "function": { "name": c.name, "arguments": arguments_text(&c.arguments, c.malformed) },
                                        })
                                    })
                                    .collect(),
                            ),
                        );
                    }
                    Value::Object(o)
                }
            })
            .collect(),
    )
}

/// Tool arguments as the JSON text the wire carries (malformed ones as sent).
pub fn arguments_text(args: &Value, malformed: bool) -> String {
    match (malformed, args) {
        (true, Value::String(s)) => s.clone(),
        _ => args.to_string(),
    }
}

/// Tools in the function-calling shape.
pub fn tools_to_wire(tools: &[ToolDef]) -> Value {
    Value::Array(
        tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": { "name": t.name, "description": t.description, "parameters": t.parameters },
                })
            })
            .collect(),
    )
}

/// Reads messages from a chat-completions request body (serve-fake and the proxy).
pub fn messages_from_wire(v: &Value) -> Vec<Message> {
    let Some(arr) = v.as_array() else {
        return Vec::new();
    };
    arr.iter()
        .map(|m| {
            let role = match m.get("role").and_then(Value::as_str) {
                Some("system") | Some("developer") => Role::System,
                Some("assistant") => Role::Assistant,
                Some("tool") => Role::Tool,
                _ => Role::User,
            };
            let mut msg = Message {
                role,
                content: content_text(m.get("content")),
                tool_calls: Vec::new(),
                tool_call_id: m
                    .get("tool_call_id")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                name: m.get("name").and_then(Value::as_str).map(str::to_owned),
            };
            if let Some(calls) = m.get("tool_calls").and_then(Value::as_array) {
                msg.tool_calls = calls.iter().map(tool_call_from_wire).collect();
            }
            msg
        })
        .collect()
}

/// Reads tools from a request body.
pub fn tools_from_wire(v: Option<&Value>) -> Vec<ToolDef> {
    let tools = v.and_then(Value::as_array).into_iter().flatten();
    tools
        .filter_map(|t| declared_tool(t.get("function")?, "parameters"))
        .collect()
}

/// A tool as a request body declares it (either wire format): its `name`, `description`,
/// and its parameter schema under `schema_key` (an object schema when there is none). A
/// tool without a name is no tool.
pub(crate) fn declared_tool(t: &Value, schema_key: &str) -> Option<ToolDef> {
    Some(ToolDef::declared(
        t.get("name")?.as_str()?,
        t.get("description").and_then(Value::as_str).unwrap_or(""),
        t.get(schema_key)
            .cloned()
            .unwrap_or_else(|| json!({"type": "object"})),
    ))
}

/// Message content that may be a string, null, or an array of parts.
pub fn content_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str).or_else(|| p.as_str()))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// A tool call from the wire; arguments that are not valid JSON are kept as text and marked.
pub fn tool_call_from_wire(c: &Value) -> ToolCallRequest {
    let f = c.get("function").cloned().unwrap_or(Value::Null);
    let raw = f.get("arguments").cloned().unwrap_or(Value::Null);
    let (arguments, malformed) = match raw {
        Value::String(s) if s.trim().is_empty() => (json!({}), false),
        Value::String(s) => match serde_json::from_str::<Value>(&s) {
            Ok(v) => (v, false),
            Err(_) => (Value::String(s), true),
        },
        Value::Null => (json!({}), false),
        other => (other, false),
    };
    ToolCallRequest {
        id: c.get("id").and_then(Value::as_str).unwrap_or("").to_owned(),
        name: f
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        arguments,
        malformed,
    }
}

/// Whether an error body is a content-filter refusal (OpenAI and Azure OpenAI).
pub fn is_content_filter_error(body: &Value) -> bool {
    let e = body.get("error").unwrap_or(body);
    let code = e.get("code").and_then(Value::as_str).unwrap_or("");
    let inner = e
        .get("innererror")
        .and_then(|i| i.get("code"))
        .and_then(Value::as_str)
        .unwrap_or("");
    code == "content_filter"
        || code == "content_policy_violation"
        || inner == "ResponsibleAIPolicyViolation"
}

/// Parses a chat-completions response body into a reply.
pub fn parse_response(v: &Value) -> Result<ChatReply, WireError> {
    let choice = v
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or(WireError::NoChoices)?;
    let msg = choice.get("message").ok_or(WireError::NoMessage)?;
    let mut message = Message::assistant(content_text(msg.get("content")));
    if let Some(calls) = msg.get("tool_calls").and_then(Value::as_array) {
        message.tool_calls = calls.iter().map(tool_call_from_wire).collect();
        for (i, c) in message.tool_calls.iter_mut().enumerate() {
            if c.id.is_empty() {
                c.id = format!("call_{i}");
            }
        }
    }
    let finish = choice
        .get("finish_reason")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok(ChatReply::from_body(
        message,
        v,
        ("prompt_tokens", "completion_tokens"),
        finish,
    ))
}

/// A chat-completions response body for a reply (serve-fake).
pub fn response_to_wire(
    model: &str,
    message: &Message,
    finish: &str,
    usage: Usage,
    id: u64,
) -> Value {
    let msg = messages_to_wire(std::slice::from_ref(message));
    json!({
        "id": format!("chatcmpl-{id:x}"),
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{ "index": 0, "message": msg[0], "finish_reason": finish }],
        "usage": {
            "prompt_tokens": usage.input_tokens,
            "completion_tokens": usage.output_tokens,
            "total_tokens": usage.input_tokens + usage.output_tokens,
        },
    })
}

impl ChatModel for OpenAiModel {
    fn info(&self) -> TargetInfo {
        self.api.info.clone()
    }

    fn wire_body(&self, req: &ChatRequest<'_>) -> Option<Vec<u8>> {
        self.body_bytes(req).ok()
    }

    fn complete<'a>(
        &'a self,
        ctx: &'a TrialContext<'a>,
        req: ChatRequest<'a>,
        rec: &'a mut TraceRecorder,
    ) -> BoxFuture<'a, Result<ChatReply, TargetError>> {
        Box::pin(async move {
            let body = self
                .body_bytes(&req)
                .map_err(|e| TargetError::Harness(e.to_string()))?;
            let resp = self
                .api
                .post(body, rec, Some(is_content_filter_error))
                .await?;
            // Typed fast path; servers that bend the format fall back to the tolerant reader,
            // which also words the error when the body is not a completion at all.
            let typed = serde_json::from_slice::<WireResponse>(&resp.body)
                .ok()
                .and_then(WireResponse::into_reply);
            let reply = match typed {
                Some(r) => r,
                None => {
                    let v = self.api.client.json_body(&resp, rec)?;
                    let raw = self.api.client.clip_body(&resp.body);
                    parse_response(&v).map_err(|e| {
                        rec.transport(
                            TransportKind::Failed,
                            Some(resp.status),
                            format!("{e}; raw body: {raw}"),
                        );
                        TargetError::Protocol(format!("{e}; raw body: {raw}"))
                    })?
                }
            };
            // `content: null` and no tool call is empty. A filtered reply is a block, empty
            // or not.
            self.api.finish(reply, &resp, ctx, rec)
        })
    }
}

/// A chat-completions request, serialized without building a JSON tree.
#[derive(serde::Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    messages: WireMessages<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<ResponseFormat<'a>>,
}

#[derive(serde::Serialize)]
struct ResponseFormat<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
}

/// Messages serialized in the chat-completions shape, straight from the conversation.
struct WireMessages<'a>(&'a [Message]);

struct WireCall<'a>(&'a ToolCallRequest);

impl serde::Serialize for WireCall<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let c = self.0;
        let mut m = ser.serialize_map(Some(3))?;
        m.serialize_entry("id", &c.id)?;
        m.serialize_entry("type", "function")?;
        m.serialize_entry(
            "function",
            &json!({ "name": c.name, "arguments": arguments_text(&c.arguments, c.malformed) }),
        )?;
        m.end()
    }
}

struct WireOne<'a>(&'a Message);

impl serde::Serialize for WireOne<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let m = self.0;
        let mut map = ser.serialize_map(None)?;
        match m.role {
            Role::System => {
                map.serialize_entry("role", "system")?;
                map.serialize_entry("content", &m.content)?;
            }
            Role::User => {
                map.serialize_entry("role", "user")?;
                map.serialize_entry("content", &m.content)?;
            }
            Role::Tool => {
                map.serialize_entry("role", "tool")?;
                map.serialize_entry("tool_call_id", m.tool_call_id.as_deref().unwrap_or(""))?;
                map.serialize_entry("content", &m.content)?;
            }
            Role::Assistant => {
                map.serialize_entry("role", "assistant")?;
                if m.content.is_empty() && !m.tool_calls.is_empty() {
                    map.serialize_entry("content", &Value::Null)?;
                } else {
                    map.serialize_entry("content", &m.content)?;
                }
                if !m.tool_calls.is_empty() {
                    let calls: Vec<WireCall<'_>> = m.tool_calls.iter().map(WireCall).collect();
                    map.serialize_entry("tool_calls", &calls)?;
                }
            }
        }
        map.end()
    }
}

impl serde::Serialize for WireMessages<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        ser.collect_seq(self.0.iter().map(WireOne))
    }
}

/// The usual shape of a chat-completions response, read without a JSON tree.
#[derive(serde::Deserialize)]
struct WireResponse {
    #[serde(default)]
    model: Option<String>,
    choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(serde::Deserialize)]
struct WireChoice {
    message: WireMessage,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(serde::Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    tool_calls: Option<Vec<Value>>,
}

#[derive(serde::Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
}

impl WireResponse {
    fn into_reply(self) -> Option<ChatReply> {
        let mut choice = self.choices.into_iter().next()?;
        // The usual string content is moved, not copied (a reply may be megabytes).
        let content = match choice.message.content.take() {
            Some(Value::String(s)) => s,
            other => content_text(other.as_ref()),
        };
        let mut message = Message::assistant(content);
        if let Some(calls) = &choice.message.tool_calls {
            message.tool_calls = calls.iter().map(tool_call_from_wire).collect();
            for (i, c) in message.tool_calls.iter_mut().enumerate() {
                if c.id.is_empty() {
                    c.id = format!("call_{i}");
                }
            }
        }
        let usage = self.usage.unwrap_or_default();
        Some(ChatReply {
            message,
            model: self.model,
            usage: Usage {
                input_tokens: usage.prompt_tokens.unwrap_or(0),
                output_tokens: usage.completion_tokens.unwrap_or(0),
            },
            finish_reason: choice.finish_reason,
            attempts: 1,
            agent: None,
            cached: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCOPE: ImplicitKeyScope<'static> = ImplicitKeyScope {
        vendor_base: OPENAI_BASE_URL,
        base_env: None,
        vendor_suffixes: &[".openai.azure.com"],
    };

    /// `PATH` stands in for `OPENAI_API_KEY`: set in every test process, and nothing here
    /// may change the environment.
    fn implicit(base: &str) -> (Option<String>, String) {
        let mut r = Redactor::new();
        let (key, src) = api_key(&TargetConfig::default(), &mut r, "PATH", base, SCOPE).unwrap();
        (key, src.note())
    }

    #[test]
    fn an_implicit_key_goes_only_to_the_vendor_or_a_local_server() {
        for base in [
            "https://api.openai.com/v1",
            "http://127.0.0.1:8089/v1",
            "http://localhost:8080/v1",
            "http://[::1]:8080/v1",
            "https://my-resource.openai.azure.com",
        ] {
            let (key, note) = implicit(base);
            assert!(key.is_some(), "{base}: {note}");
            assert!(note.contains("read from `PATH`"), "{note}");
        }
        // A suite that names its own endpoint does not get the key it did not name.
        for base in [
            "https://collector.attacker.example/v1",
            "https://api.openai.com.attacker.example/v1",
            "http://10.0.0.5/v1",
            "not a url",
        ] {
            let (key, note) = implicit(base);
            assert!(key.is_none(), "{base}");
            assert!(note.contains("--api-key-env PATH"), "{note}");
        }
        // No key at all for the vendor's own API stops the run before it starts, naming
        // the variable; a local server or a gateway may need none.
        let unset = "GAUNTLET_TEST_VARIABLE_NEVER_SET";
        let err = api_key(
            &TargetConfig::default(),
            &mut Redactor::new(),
            unset,
            "https://api.openai.com/v1",
            SCOPE,
        )
        .unwrap_err();
        assert!(err.to_string().contains(unset), "{err}");
        assert!(err.hint().is_some_and(|h| h.contains(".env")), "{err}");
        for base in ["http://127.0.0.1:8089/v1", "https://gateway.example/v1"] {
            let (key, src) = api_key(
                &TargetConfig::default(),
                &mut Redactor::new(),
                unset,
                base,
                SCOPE,
            )
            .unwrap();
            assert!(key.is_none(), "{base}");
            assert!(src.note().contains(unset), "{base}");
        }
        // Named explicitly, the key goes where the user says.
        let cfg = TargetConfig {
            api_key_env: Some("PATH".into()),
            ..TargetConfig::default()
        };
        let (key, _) = api_key(
            &cfg,
            &mut Redactor::new(),
            "PATH",
            "https://gateway.example/v1",
            SCOPE,
        )
        .unwrap();
        assert!(key.is_some());
    }
}
