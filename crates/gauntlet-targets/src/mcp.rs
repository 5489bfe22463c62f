//! The MCP client, on the official SDK (`rmcp`, client side only): [`McpEndpoint`] (a stdio
//! server's command or a streamable HTTP server's URL, resolved with the secrets it names
//! registered for redaction), [`McpClient`] (connect, list tools, prompts and resources, call
//! a tool, close, each under a time limit), and [`McpBackend`], the [`ToolBackend`] through
//! which a run's simulated tools reach a server.
//!
//! A stdio server is started like an `exec` agent (the same command resolution and
//! environment allow-list), in a process group of its own, with its stderr kept (bounded,
//! redacted) for error messages only; it is killed when the client closes or is dropped. A
//! server that does not answer within the time limit is an error, never a hang.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use gauntlet_core::mcp::{BackendAnswer, McpListing, McpServer, ToolBackend};
use gauntlet_core::redact::Redactor;
use gauntlet_core::target::ExecTargetConfig;
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ContentBlock, Implementation,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::Value;
use tokio::io::AsyncReadExt;

use crate::error::AgentError;
use crate::exec::ExecTarget;

/// How much of a stdio server's stderr is kept for error messages.
const STDERR_KEEP: usize = 2048;

/// Why talking to an MCP server failed. Messages carry no secret (they are redacted).
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The server's command or environment is wrong.
    #[error(transparent)]
    Command(#[from] AgentError),
    /// A header name or value that HTTP cannot carry, or an unset `${env:NAME}`.
    #[error("MCP server `{server}`: {message}")]
    Header {
        /// The server.
        server: String,
        /// What is wrong.
        message: String,
    },
    /// Neither a command nor a URL.
    #[error("MCP server `{0}` has neither a command nor a URL")]
    NoEndpoint(String),
    /// The server could not be started.
    #[error("MCP server `{server}`: cannot start `{program}`: {source}")]
    Spawn {
        /// The server.
        server: String,
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// The server did not answer in time.
    #[error("MCP server `{server}` did not {what} within {ms} ms{stderr}")]
    Timeout {
        /// The server.
        server: String,
        /// What it did not do: `start`, `list its tools`...
        what: &'static str,
        /// The limit.
        ms: u128,
        /// The tail of its stderr, as `; stderr: ...`, or nothing.
        stderr: String,
    },
    /// The protocol failed: the handshake, a listing or a call.
    #[error("MCP server `{server}`: {what} failed: {message}{stderr}")]
    Protocol {
        /// The server.
        server: String,
        /// What failed.
        what: &'static str,
        /// Why.
        message: String,
        /// The tail of its stderr, as `; stderr: ...`, or nothing.
        stderr: String,
    },
}

/// Where an MCP server is, with every secret it needs resolved.
pub struct McpEndpoint {
    name: String,
    kind: EndpointKind,
    timeout: Duration,
    redactor: Redactor,
}

enum EndpointKind {
    Stdio(ExecTarget),
    Http {
        url: String,
        headers: HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>,
    },
}

impl McpEndpoint {
    /// Resolves a server as a suite (or `gauntlet mcp scan`) describes it: the command like an
    /// `exec` agent's, relative paths against `base_dir`; `${env:NAME}` in `env` and
    /// `headers` read and registered in `redactor` as secrets.
    pub fn resolve(
        server: &McpServer,
        base_dir: Option<&Path>,
        redactor: &mut Redactor,
    ) -> Result<McpEndpoint, McpError> {
        let kind = match (&server.url, server.command.is_empty()) {
            (None, false) => {
                let cfg = ExecTargetConfig {
                    command: server.command.clone(),
                    env: server.env.clone(),
                    pass_env: server.pass_env.clone(),
                    frozen_time: None,
                };
                EndpointKind::Stdio(ExecTarget::build(&cfg, base_dir, redactor, "mcp")?)
            }
            (Some(url), _) => {
                let mut headers = HashMap::new();
                for (k, v) in &server.headers {
                    let bad = |message: String| McpError::Header {
                        server: server.name.clone(),
                        message,
                    };
                    let value = crate::openai::resolve_env_refs(v, redactor)
                        .map_err(|e| bad(e.to_string()))?;
                    let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
                        .map_err(|_| bad(format!("`{k}` is not a valid header name")))?;
                    let mut value = reqwest::header::HeaderValue::from_str(&value)
                        .map_err(|_| bad(format!("the value of header `{k}` is not valid")))?;
                    value.set_sensitive(true);
                    headers.insert(name, value);
                }
                EndpointKind::Http {
                    url: url.clone(),
                    headers,
                }
            }
            (None, true) => return Err(McpError::NoEndpoint(server.name.clone())),
        };
        Ok(McpEndpoint {
            name: server.name.clone(),
            kind,
            timeout: server.timeout(),
            redactor: redactor.clone(),
        })
    }

    /// How the server is shown: its command (secrets redacted) or its URL.
    pub fn shown(&self) -> String {
        match &self.kind {
            EndpointKind::Stdio(t) => self.redactor.redact(t.shown()).into_owned(),
            EndpointKind::Http { url, .. } => self.redactor.redact(url).into_owned(),
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// A connected MCP server.
pub struct McpClient {
    service: RunningService<RoleClient, ClientConfig>,
    name: String,
    timeout: Duration,
    redactor: Redactor,
    stderr: Arc<Mutex<Vec<u8>>>,
    /// The stdio server's process group, killed when the client closes.
    #[cfg(unix)]
    group: Option<u32>,
}

fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("gauntlet", env!("CARGO_PKG_VERSION")),
    )
}

impl McpClient {
    /// Starts (stdio) or reaches (HTTP) the server and runs the protocol's handshake, within
    /// the endpoint's time limit.
    pub async fn connect(ep: &McpEndpoint) -> Result<McpClient, McpError> {
        let stderr = Arc::new(Mutex::new(Vec::new()));
        #[cfg(unix)]
        let mut group = None;
        let started = match &ep.kind {
            EndpointKind::Stdio(t) => {
                let (proc, err) = TokioChildProcess::builder(t.server_command())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .map_err(|source| McpError::Spawn {
                        server: ep.name.clone(),
                        program: ep.shown(),
                        source,
                    })?;
                #[cfg(unix)]
                {
                    group = proc.id();
                }
                if let Some(mut err) = err {
                    let keep = Arc::clone(&stderr);
                    tokio::spawn(async move {
                        let mut buf = [0u8; 1024];
                        while let Ok(n) = err.read(&mut buf).await {
                            if n == 0 {
                                break;
                            }
                            let mut k = keep.lock().unwrap_or_else(|p| p.into_inner());
                            k.extend_from_slice(&buf[..n]);
                            if k.len() > STDERR_KEEP {
                                let cut = k.len() - STDERR_KEEP;
                                k.drain(..cut);
                            }
                        }
                    });
                }
                tokio::time::timeout(ep.timeout, client_info().serve(proc)).await
            }
            EndpointKind::Http { url, headers } => {
                crate::client::install_crypto();
                let http = reqwest::Client::builder()
                    .connect_timeout(ep.timeout)
                    .build()
                    .map_err(|e| McpError::Protocol {
                        server: ep.name.clone(),
                        what: "building the HTTP client",
                        message: e.to_string(),
                        stderr: String::new(),
                    })?;
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                config.custom_headers = headers.clone();
                let transport = StreamableHttpClientTransport::with_client(http, config);
                tokio::time::timeout(ep.timeout, client_info().serve(transport)).await
            }
        };
        let tail = |stderr: &Arc<Mutex<Vec<u8>>>| stderr_tail(stderr, &ep.redactor);
        let service = match started {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                // Give the reader a moment to collect what the server said before it died.
                tokio::time::sleep(Duration::from_millis(50)).await;
                #[cfg(unix)]
                kill_group(group);
                return Err(McpError::Protocol {
                    server: ep.name.clone(),
                    what: "the handshake",
                    message: ep.redactor.redact(&e.to_string()).into_owned(),
                    stderr: tail(&stderr),
                });
            }
            Err(_) => {
                #[cfg(unix)]
                kill_group(group);
                return Err(McpError::Timeout {
                    server: ep.name.clone(),
                    what: "start",
                    ms: ep.timeout.as_millis(),
                    stderr: tail(&stderr),
                });
            }
        };
        Ok(McpClient {
            service,
            name: ep.name.clone(),
            timeout: ep.timeout,
            redactor: ep.redactor.clone(),
            stderr,
            #[cfg(unix)]
            group,
        })
    }

    fn failed(&self, what: &'static str, e: &dyn std::fmt::Display) -> McpError {
        McpError::Protocol {
            server: self.name.clone(),
            what,
            message: self.redactor.redact(&e.to_string()).into_owned(),
            stderr: stderr_tail(&self.stderr, &self.redactor),
        }
    }

    fn late(&self, what: &'static str) -> McpError {
        McpError::Timeout {
            server: self.name.clone(),
            what,
            ms: self.timeout.as_millis(),
            stderr: stderr_tail(&self.stderr, &self.redactor),
        }
    }

    /// Lists the server's tools, and its prompts and resources when it says it has them,
    /// each listing within the time limit.
    pub async fn list(&self) -> Result<McpListing, McpError> {
        let t = self.timeout;
        let info = self.service.peer_info();
        let caps = info.as_ref().map(|i| i.capabilities.clone());
        let tools = tokio::time::timeout(t, self.service.list_all_tools())
            .await
            .map_err(|_| self.late("list its tools"))?
            .map_err(|e| self.failed("tools/list", &e))?;
        let prompts = if caps.as_ref().is_some_and(|c| c.prompts.is_some()) {
            tokio::time::timeout(t, self.service.list_all_prompts())
                .await
                .map_err(|_| self.late("list its prompts"))?
                .map_err(|e| self.failed("prompts/list", &e))?
        } else {
            Vec::new()
        };
        let resources = if caps.as_ref().is_some_and(|c| c.resources.is_some()) {
            tokio::time::timeout(t, self.service.list_all_resources())
                .await
                .map_err(|_| self.late("list its resources"))?
                .map_err(|e| self.failed("resources/list", &e))?
        } else {
            Vec::new()
        };
        // The SDK's types follow the protocol's JSON; gauntlet's listing reads the same
        // field names, so the conversion goes through it.
        let json = serde_json::json!({
            "server": info.as_ref().and_then(|i| i.server_info.as_ref()).map(|s| serde_json::json!({"name": s.name, "version": s.version})),
            "instructions": info.as_ref().and_then(|i| i.instructions.clone()),
            "tools": tools,
            "prompts": prompts,
            "resources": resources,
        });
        serde_json::from_value(json).map_err(|e| self.failed("reading the listing", &e))
    }

    /// Calls a tool within the time limit: its text content (other content as JSON), or the
    /// error it reported.
    pub async fn call(&self, tool: &str, arguments: &Value) -> BackendAnswer {
        call_on(
            self.service.peer(),
            tool,
            arguments,
            self.timeout,
            &self.name,
        )
        .await
    }

    /// Closes the connection and kills a stdio server (and what it started).
    pub async fn close(self) {
        let McpClient {
            service,
            #[cfg(unix)]
            group,
            ..
        } = self;
        let _ = tokio::time::timeout(Duration::from_secs(2), service.cancel()).await;
        #[cfg(unix)]
        kill_group(group);
    }
}

async fn call_on(
    peer: &rmcp::service::Peer<RoleClient>,
    tool: &str,
    arguments: &Value,
    timeout: Duration,
    server: &str,
) -> BackendAnswer {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    if let Value::Object(o) = arguments {
        params = params.with_arguments(o.clone());
    }
    let result = match tokio::time::timeout(timeout, peer.call_tool(params)).await {
        Err(_) => {
            return Err(format!(
                "error: the MCP server `{server}` did not answer within {} ms",
                timeout.as_millis()
            ));
        }
        Ok(Err(e)) => return Err(format!("error: the MCP server `{server}` failed: {e}")),
        Ok(Ok(r)) => r,
    };
    let mut parts: Vec<String> = result
        .content
        .iter()
        .map(|c| match c {
            ContentBlock::Text(t) => t.text.clone(),
            other => serde_json::to_string(other).unwrap_or_default(),
        })
        .collect();
    if parts.is_empty()
        && let Some(s) = &result.structured_content
    {
        parts.push(s.to_string());
    }
    let text = parts.join("\n");
    if result.is_error == Some(true) {
        Err(if text.starts_with("error") {
            text
        } else {
            format!("error: {text}")
        })
    } else {
        Ok(text)
    }
}

fn stderr_tail(stderr: &Mutex<Vec<u8>>, redactor: &Redactor) -> String {
    let k = stderr.lock().unwrap_or_else(|p| p.into_inner());
    let text = String::from_utf8_lossy(&k);
    let text = text.trim();
    if text.is_empty() {
        return String::new();
    }
    let clean = gauntlet_core::text::escape_controls(text).into_owned();
    format!("; stderr: {}", redactor.redact(&clean))
}

#[cfg(unix)]
fn kill_group(group: Option<u32>) {
    if let Some(pid) = group.and_then(|p| rustix::process::Pid::from_raw(p as i32)) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// One call handed to a backend's worker.
struct CallRequest {
    tool: String,
    arguments: Value,
    reply: mpsc::SyncSender<BackendAnswer>,
}

/// An MCP server serving a run's tool calls: a client on a thread and runtime of its own, so
/// that the simulated tools (which answer synchronously) can wait for it from any runtime.
/// Calls run concurrently on the connection. [`McpBackend::shutdown`] (or dropping the
/// backend) closes the connection and kills a stdio server.
pub struct McpBackend {
    name: String,
    timeout: Duration,
    requests: Mutex<Option<tokio::sync::mpsc::UnboundedSender<CallRequest>>>,
    worker: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl McpBackend {
    /// Connects to the server and lists it, on the backend's own thread; returns the
    /// backend and the listing, or why it could not.
    pub fn start(ep: McpEndpoint) -> Result<(Arc<McpBackend>, McpListing), McpError> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<CallRequest>();
        let (ready_tx, ready_rx) = mpsc::sync_channel::<Result<McpListing, McpError>>(1);
        let name = ep.name.clone();
        let timeout = ep.timeout;
        let worker = std::thread::Builder::new()
            .name(format!("mcp-{name}"))
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(McpError::Protocol {
                            server: ep.name.clone(),
                            what: "starting its runtime",
                            message: e.to_string(),
                            stderr: String::new(),
                        }));
                        return;
                    }
                };
                rt.block_on(serve(ep, rx, ready_tx));
            })
            .map_err(|source| McpError::Spawn {
                server: name.clone(),
                program: "a worker thread".into(),
                source,
            })?;
        let backend = Arc::new(McpBackend {
            name,
            timeout,
            requests: Mutex::new(Some(tx)),
            worker: Mutex::new(Some(worker)),
        });
        let listing = block(|| ready_rx.recv()).unwrap_or_else(|_| {
            Err(McpError::Protocol {
                server: backend.name.clone(),
                what: "starting",
                message: "the worker stopped".into(),
                stderr: String::new(),
            })
        });
        match listing {
            Ok(l) => Ok((backend, l)),
            Err(e) => {
                backend.shutdown();
                Err(e)
            }
        }
    }

    /// Closes the connection, kills a stdio server and waits for the worker to end.
    /// Calls made after it get an error.
    pub fn shutdown(&self) {
        let sender = self
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        drop(sender);
        let worker = self.worker.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(w) = worker {
            let _ = block(|| w.join());
        }
    }
}

impl Drop for McpBackend {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The worker: connect, list, answer, then close when every sender is gone.
async fn serve(
    ep: McpEndpoint,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<CallRequest>,
    ready: mpsc::SyncSender<Result<McpListing, McpError>>,
) {
    let client = match McpClient::connect(&ep).await {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    match client.list().await {
        Ok(l) => {
            if ready.send(Ok(l)).is_err() {
                client.close().await;
                return;
            }
        }
        Err(e) => {
            let _ = ready.send(Err(e));
            client.close().await;
            return;
        }
    }
    let mut calls = tokio::task::JoinSet::new();
    while let Some(req) = rx.recv().await {
        let peer = client.service.peer().clone();
        let (timeout, server) = (client.timeout, client.name.clone());
        calls.spawn(async move {
            let answer = call_on(&peer, &req.tool, &req.arguments, timeout, &server).await;
            let _ = req.reply.send(answer);
        });
        // Reap the calls that have finished, so the set stays small.
        while calls.try_join_next().is_some() {}
    }
    while calls.join_next().await.is_some() {}
    client.close().await;
}

/// Runs a blocking wait; on a multi-threaded runtime the worker thread is handed over first,
/// so other trials keep running while this one waits.
fn block<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

impl ToolBackend for McpBackend {
    fn call(&self, tool: &str, arguments: &Value) -> BackendAnswer {
        let (reply, answer) = mpsc::sync_channel(1);
        let sent = self
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|tx| {
                tx.send(CallRequest {
                    tool: tool.to_owned(),
                    arguments: arguments.clone(),
                    reply,
                })
                .is_ok()
            })
            .unwrap_or(false);
        if !sent {
            return Err(format!(
                "error: the MCP server `{}` is no longer connected",
                self.name
            ));
        }
        // The worker answers within its own limit; the margin covers a worker that is gone.
        let wait = self.timeout + Duration::from_secs(2);
        block(|| answer.recv_timeout(wait)).unwrap_or_else(|_| {
            Err(format!(
                "error: the MCP server `{}` did not answer within {} ms",
                self.name,
                self.timeout.as_millis()
            ))
        })
    }

    fn label(&self) -> String {
        format!("mcp:{}", self.name)
    }
}
