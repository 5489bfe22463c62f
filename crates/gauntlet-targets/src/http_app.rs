//! The `http` target: [`HttpAppTarget`], for an application behind its own API.
//!
//! Each user turn becomes one request built from a template: the method, URL, headers and a
//! JSON body whose string values are MiniJinja templates over `input` (this turn's message),
//! `history` (earlier turns as `[{role, content}]`), `vars` (the case's variables),
//! `session_id`, `case_id`, `turn`, `system_prompt` and `documents` (the case's retrieved
//! documents as `[{id, title, text}]`). A string that is exactly one
//! expression (`"{{ history }}"`) is replaced by the expression's JSON value, so lists and
//! objects can be passed whole. The answer is read from the response with a JSON path, and
//! optionally the tool calls the app reports (a list of `{name, arguments}`), which are
//! recorded as tool spans so trace checks apply to apps that run their own tools.
//!
//! A content-filter error that still carries an answer (or tool calls) at those paths is
//! recorded before the trial becomes `blocked`, so a flagged leak is graded; an answer that
//! is empty or `null` with no tool call is a protocol error unless the case sets
//! `allow_empty`.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use gauntlet_core::event::{EvidenceLevel, SideEffectMode};
use gauntlet_core::redact::Redactor;
use gauntlet_core::target::{
    BoxFuture, HttpTargetConfig, Session, Target, TargetConfig, TargetError, TargetInfo, ToolHost,
    TrialContext, TurnAnswer,
};
use gauntlet_core::trace::{
    Approval, Message, Role, ToolSpanInput, TraceRecorder, TransportKind, Usage,
};
use minijinja::Environment;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::{Value, json};
use serde_json_path::JsonPath;

use crate::client::ApiClient;
use crate::error::BuildError;
use crate::openai::{header_map, is_content_filter_error, settings_of};

/// An application behind its own HTTP API.
pub struct HttpAppTarget {
    inner: Arc<Inner>,
}

struct Inner {
    client: ApiClient,
    cfg: HttpTargetConfig,
    method: reqwest::Method,
    headers: HeaderMap,
    answer: JsonPath,
    tool_calls: Option<JsonPath>,
    env: Environment<'static>,
    info: TargetInfo,
}

impl HttpAppTarget {
    /// Builds the target; `${env:NAME}` header values are read now and redacted everywhere.
    pub fn new(cfg: &TargetConfig, redactor: &mut Redactor) -> Result<HttpAppTarget, BuildError> {
        let h = cfg.http.clone().ok_or(BuildError::MissingSection {
            kind: "http",
            wants: "an `http:` section",
        })?;
        let method = reqwest::Method::from_bytes(h.method.to_ascii_uppercase().as_bytes())
            .map_err(|_| BuildError::HttpMethod(h.method.clone()))?;
        let mut headers = header_map(cfg.headers.iter().chain(h.headers.iter()), redactor)?;
        // JSON unless the app's headers say otherwise.
        headers
            .entry(CONTENT_TYPE)
            .or_insert(HeaderValue::from_static("application/json"));
        let answer = JsonPath::parse(&h.answer_path).map_err(|source| BuildError::JsonPath {
            field: "answer_path",
            source,
        })?;
        let tool_calls = h
            .tool_calls_path
            .as_deref()
            .map(JsonPath::parse)
            .transpose()
            .map_err(|source| BuildError::JsonPath {
                field: "tool_calls_path",
                source,
            })?;
        let client = ApiClient::new(cfg, redactor.clone(), &h.url)?;
        let mut env = Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        // Validate the templates now, so a typo is a configuration error, not a run of errors.
        if let Some(b) = &h.body {
            check_templates(&env, b)?;
        }
        env.template_from_str(&h.url)
            .map_err(BuildError::UrlTemplate)?;
        let info = TargetInfo {
            kind: "http".into(),
            label: format!("http:{}", redactor.redact(&h.url)),
            model: None,
            base_url: Some(redactor.redact(&h.url).into_owned()),
            settings: settings_of(cfg),
            // The app runs its own tools: whatever those do, happens.
            evidence_level: EvidenceLevel::Online,
            side_effects: SideEffectMode::Real,
        };
        Ok(HttpAppTarget {
            inner: Arc::new(Inner {
                client,
                cfg: h,
                method,
                headers,
                answer,
                tool_calls,
                env,
                info,
            }),
        })
    }
}

fn check_templates(env: &Environment<'_>, v: &Value) -> Result<(), BuildError> {
    match v {
        Value::String(s) => {
            env.template_from_str(s)
                .map(|_| ())
                .map_err(|source| BuildError::Template {
                    template: s.clone(),
                    source,
                })
        }
        Value::Array(a) => a.iter().try_for_each(|x| check_templates(env, x)),
        Value::Object(o) => o.values().try_for_each(|x| check_templates(env, x)),
        _ => Ok(()),
    }
}

/// A request template that failed to render: which one, and why.
#[derive(Debug, thiserror::Error)]
enum RenderError {
    #[error("template `{template}`: {source}")]
    Template {
        template: String,
        source: minijinja::Error,
    },
    #[error("template `{template}`: {source}")]
    Json {
        template: String,
        source: serde_json::Error,
    },
}

/// Renders a JSON template: strings are templates; a string that is exactly one
/// `{{ expression }}` becomes the expression's JSON value.
fn render(env: &Environment<'_>, v: &Value, ctx: &minijinja::Value) -> Result<Value, RenderError> {
    Ok(match v {
        Value::String(s) => {
            let template = |source| RenderError::Template {
                template: s.clone(),
                source,
            };
            let t = s.trim();
            let single = t.starts_with("{{") && t.ends_with("}}") && t[2..].find("{{").is_none();
            if single {
                let expr = env
                    .compile_expression(&t[2..t.len() - 2])
                    .map_err(template)?;
                let out = expr.eval(ctx).map_err(template)?;
                serde_json::to_value(&out).map_err(|source| RenderError::Json {
                    template: s.clone(),
                    source,
                })?
            } else {
                Value::String(env.render_str(s, ctx).map_err(template)?)
            }
        }
        Value::Array(a) => Value::Array(
            a.iter()
                .map(|x| render(env, x, ctx))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| Ok((k.clone(), render(env, x, ctx)?)))
                .collect::<Result<_, RenderError>>()?,
        ),
        other => other.clone(),
    })
}

/// What one response said: the answer at `answer_path` (`None` when the path selects
/// nothing; a JSON `null` is an empty answer), the assistant message as the trace shows it,
/// and the tool calls the app reports at `tool_calls_path`.
struct AppReply {
    answer: Option<String>,
    out: Message,
    spans: Vec<ToolSpanInput>,
}

impl Inner {
    fn read_reply(&self, v: &Value) -> AppReply {
        let answer = self.answer.query(v).first().map(|a| match a {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        });
        let mut out = Message::assistant(answer.clone().unwrap_or_default());
        let mut spans = Vec::new();
        if let Some(p) = &self.tool_calls {
            let reported = p.query(v).all().into_iter().flat_map(|x| match x {
                Value::Array(a) => a.iter().collect::<Vec<_>>(),
                other => vec![other],
            });
            for (i, c) in reported.enumerate() {
                let name = c
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                let arguments = c
                    .get("arguments")
                    .or_else(|| c.get("args"))
                    .or_else(|| c.get("input"))
                    .cloned()
                    .unwrap_or_else(|| json!({}));
                let arguments = match arguments {
                    Value::String(s) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
                    other => other,
                };
                let output = c
                    .get("output")
                    .or_else(|| c.get("result"))
                    .map(|o| match o {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    });
                let error = c.get("error").and_then(Value::as_str).map(str::to_owned);
                out.tool_calls.push(gauntlet_core::trace::ToolCallRequest {
                    id: format!("app_{i}"),
                    name: name.clone(),
                    arguments: arguments.clone(),
                    malformed: false,
                });
                spans.push(ToolSpanInput {
                    call_id: format!("app_{i}"),
                    name,
                    arguments,
                    output,
                    error,
                    duration_ms: 0,
                    approval: Approval::NotRequired,
                    side_effect: None,
                });
            }
        }
        AppReply { answer, out, spans }
    }
}

impl AppReply {
    /// The app call is the "model call" gauntlet can see; the tools the app reports are its
    /// children.
    fn record(
        self,
        inner: &Inner,
        rec: &mut TraceRecorder,
        sent: Vec<Message>,
        started: Instant,
        attempts: u32,
        finish: &str,
    ) {
        rec.llm_call(
            Some(inner.info.label.clone()),
            sent,
            self.out,
            Usage::default(),
            started.elapsed().as_millis() as u64,
            Some(finish.into()),
            attempts,
        );
        for s in self.spans {
            rec.tool_call(s);
        }
    }
}

impl Target for HttpAppTarget {
    fn info(&self) -> TargetInfo {
        self.inner.info.clone()
    }

    fn open<'a>(
        &'a self,
        ctx: &'a TrialContext<'a>,
    ) -> BoxFuture<'a, Result<Box<dyn Session + 'a>, TargetError>> {
        Box::pin(async move {
            let s: Box<dyn Session + 'a> = Box::new(HttpSession {
                inner: Arc::clone(&self.inner),
                ctx,
                history: Vec::new(),
            });
            Ok(s)
        })
    }
}

struct HttpSession<'a> {
    inner: Arc<Inner>,
    ctx: &'a TrialContext<'a>,
    history: Vec<Message>,
}

impl Session for HttpSession<'_> {
    fn turn<'a>(
        &'a mut self,
        user: &'a str,
        _tools: &'a mut dyn ToolHost,
        rec: &'a mut TraceRecorder,
    ) -> BoxFuture<'a, Result<TurnAnswer, TargetError>> {
        Box::pin(async move {
            let inner = &*self.inner;
            let history: Vec<Value> = self
                .history
                .iter()
                .map(|m| json!({ "role": if m.role == Role::User { "user" } else { "assistant" }, "content": m.content }))
                .collect();
            let ctx = minijinja::context! {
                input => user,
                history => minijinja::Value::from(minijinja::value::Serde(&history)),
                vars => minijinja::Value::from(minijinja::value::Serde(&self.ctx.case.vars)),
                documents => minijinja::Value::from(minijinja::value::Serde(
                    gauntlet_core::context::documents_json(&self.ctx.case.documents),
                )),
                session_id => self.ctx.session_id.as_str(),
                case_id => self.ctx.case.id.as_str(),
                turn => self.history.len() / 2,
                system_prompt => self.ctx.system_prompt,
            };
            let url = inner
                .env
                .render_str(&inner.cfg.url, &ctx)
                .map_err(|e| TargetError::Harness(format!("url template: {e}")))?;
            let body = match &inner.cfg.body {
                Some(b) => Some(
                    render(&inner.env, b, &ctx).map_err(|e| TargetError::Harness(e.to_string()))?,
                ),
                None => None,
            };
            let bytes = body
                .as_ref()
                .map(|b| serde_json::to_vec(b).map(Bytes::from))
                .transpose()
                .map_err(|e| TargetError::Harness(e.to_string()))?;
            let url = inner
                .client
                .parse_url(&url)
                .map_err(|e| TargetError::Harness(e.to_string()))?;
            let started = Instant::now();
            let resp = inner
                .client
                .send(inner.method.clone(), &url, &inner.headers, bytes, rec)
                .await?;
            let mut sent = self.history.clone();
            sent.push(Message::user(user));
            if !(200..300).contains(&resp.status) {
                let err = inner
                    .client
                    .reject_status(&resp, rec, Some(is_content_filter_error));
                // A filter's error that still carries the app's answer (or the tools it
                // ran): recorded before the block, so that violation checks grade it.
                if matches!(err, TargetError::Blocked(_))
                    && let Ok(v) = serde_json::from_slice::<Value>(&resp.body)
                {
                    let reply = inner.read_reply(&v);
                    let said = reply
                        .answer
                        .as_deref()
                        .is_some_and(|a| !a.trim().is_empty());
                    if said || !reply.spans.is_empty() {
                        let answer = reply.answer.clone().unwrap_or_default();
                        reply.record(inner, rec, sent, started, resp.attempts, "content_filter");
                        rec.turn(user.to_owned(), answer, false);
                    }
                }
                return Err(err);
            }
            let v = inner.client.json_body(&resp, rec)?;
            let reply = inner.read_reply(&v);
            let Some(answer) = reply.answer.clone() else {
                let raw = inner.client.clip_body(&resp.body);
                return Err(TargetError::Protocol(format!(
                    "answer_path `{}` selects nothing in the response: {raw}",
                    inner.cfg.answer_path
                )));
            };
            if answer.trim().is_empty() && reply.spans.is_empty() && !self.ctx.case.allow_empty {
                let raw = inner.client.clip_body(&resp.body);
                let detail = format!(
                    "an empty reply: answer_path `{}` selects an empty answer and the app reports no tool call (set `allow_empty: true` on a case where that is a valid answer); raw body: {raw}",
                    inner.cfg.answer_path
                );
                rec.transport(TransportKind::Failed, Some(resp.status), detail.clone());
                return Err(TargetError::Protocol(detail));
            }
            reply.record(inner, rec, sent, started, resp.attempts, "stop");
            self.history.push(Message::user(user));
            self.history.push(Message::assistant(answer.clone()));
            Ok(TurnAnswer {
                content: answer,
                truncated: false,
            })
        })
    }
}
