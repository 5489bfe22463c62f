//! The `proxy` target: [`ProxyTarget`] runs an unmodified agent as a subprocess per trial and
//! records its model calls through a [`RecordingProxy`] shared by the run's trials.
//!
//! This module owns the trial side: starting the proxy listener (lazily, on 127.0.0.1, once
//! per target), one proxy session per trial carrying the case's `tool_faults`, launching the
//! agent with exec's pinned environment plus the base-URL variables that point it at its
//! session, the line protocol (each user turn is one JSON string on stdin, each answer one
//! JSON string on stdout), merging the session's spans into the trial's trace as they are
//! recorded, and the agent's shutdown (stdin closed, a short grace, then a kill).
//!
//! The runner's [`ToolHost`] is not used: the agent runs its own tools, and the case's faults
//! and poisons are applied in transit by the proxy, to what the model sees.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};

use gauntlet_core::event::{EvidenceLevel, SideEffectMode};
use gauntlet_core::redact::Redactor;
use gauntlet_core::target::{
    BoxFuture, ExecTargetConfig, Session, Target, TargetConfig, TargetError, TargetInfo, ToolHost,
    TrialContext, TurnAnswer,
};
use gauntlet_core::trace::TraceRecorder;
use serde_json::Value;
use tokio::sync::OnceCell;
use tokio::task::JoinHandle;

use super::{ProxyConfig, ProxySession, RecordingProxy, SessionOptions};
use crate::error::BuildError;
use crate::exec::{AgentLink, AgentProc, EMPTY_ANSWER, ExecTarget, SEED_MASK, agent_workdir};

/// The line protocol's version, in `GAUNTLET_PROTOCOL` (the exec protocol's is `1`).
pub const LINE_PROTOCOL: &str = "proxy-1";

/// A target that runs an unmodified agent per trial behind the recording proxy.
pub struct ProxyTarget {
    /// The resolved command and environment (exec's resolution rules, shared).
    exec: ExecTarget,
    upstream: String,
    /// The listener, started by the first trial and shared by all.
    server: OnceCell<Server>,
    /// Makes session ids unique within the target.
    sessions: AtomicU64,
    /// Most bytes of one upstream reply.
    max_reply: usize,
}

struct Server {
    proxy: RecordingProxy,
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl ProxyTarget {
    /// Builds the target from a config with a `proxy:` section: resolves the command and the
    /// `${env:NAME}` values as the exec target does (secrets go into `redactor`), and the
    /// upstream (the target's `base_url` when set, as `--base-url` does, else `proxy.upstream`).
    pub fn new(cfg: &TargetConfig, redactor: &mut Redactor) -> Result<ProxyTarget, BuildError> {
        let Some(p) = &cfg.proxy else {
            return Err(BuildError::MissingSection {
                kind: "proxy",
                wants: "a `proxy:` section with a `command` and an `upstream`",
            });
        };
        // `base_url` (what --base-url sets) wins, so that a suite's upstream can be pointed
        // elsewhere from the command line.
        let upstream = match cfg.base_url.as_deref().map(str::trim) {
            Some(b) if !b.is_empty() => b.to_owned(),
            _ => p.upstream.clone(),
        };
        let upstream = upstream.trim().trim_end_matches('/').to_owned();
        if upstream.is_empty() {
            return Err(BuildError::NoUpstream);
        }
        if let Err(source) = reqwest::Url::parse(&upstream) {
            return Err(BuildError::ProxyTargetUpstream {
                url: redactor.redact(&upstream).into_owned(),
                source,
            });
        }
        let exec_cfg = ExecTargetConfig {
            command: p.command.clone(),
            env: p.env.clone(),
            pass_env: p.pass_env.clone(),
            frozen_time: p.frozen_time.clone(),
        };
        let exec = ExecTarget::build(&exec_cfg, cfg.base_dir.as_deref(), redactor, "proxy")?;
        Ok(ProxyTarget {
            exec,
            upstream,
            server: OnceCell::new(),
            sessions: AtomicU64::new(0),
            max_reply: crate::client::reply_limit(cfg.max_reply_bytes),
        })
    }

    /// The proxy's address, once the first trial has started it.
    pub fn proxy_addr(&self) -> Option<SocketAddr> {
        self.server.get().map(|s| s.addr)
    }

    async fn start_server(&self) -> Result<Server, TargetError> {
        let mut cfg = ProxyConfig::new(self.upstream.clone());
        // Only the sessions gauntlet opened: an agent that bypasses its base URL gets an
        // error instead of making unrecorded calls.
        cfg.sessions_on_demand = false;
        cfg.max_reply_bytes = self.max_reply;
        let proxy = RecordingProxy::new(cfg, (**self.exec.redactor()).clone())
            .map_err(|e| TargetError::Harness(e.to_string()))?;
        let (addr, serving) = proxy
            .bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .map_err(|e| {
                TargetError::Harness(format!("could not start the recording proxy: {e}"))
            })?;
        let task = tokio::spawn(async move {
            let _ = serving.await;
        });
        Ok(Server { proxy, addr, task })
    }
}

impl Drop for ProxyTarget {
    fn drop(&mut self) {
        if let Some(s) = self.server.get() {
            s.task.abort();
        }
    }
}

impl Target for ProxyTarget {
    fn info(&self) -> TargetInfo {
        let mut settings = self.exec.settings(LINE_PROTOCOL);
        let upstream = self.exec.redactor().redact(&self.upstream).into_owned();
        settings.insert("upstream".into(), upstream.clone());
        TargetInfo {
            kind: "proxy".into(),
            label: format!("proxy:{}", self.exec.shown()),
            model: None,
            base_url: Some(upstream),
            settings,
            // The proxied agent runs its own tools: whatever those do, happens.
            evidence_level: EvidenceLevel::Online,
            side_effects: SideEffectMode::Real,
        }
    }

    fn open<'a>(
        &'a self,
        ctx: &'a TrialContext<'a>,
    ) -> BoxFuture<'a, Result<Box<dyn Session + 'a>, TargetError>> {
        Box::pin(async move {
            let server = self.server.get_or_try_init(|| self.start_server()).await?;
            let n = self.sessions.fetch_add(1, Ordering::Relaxed);
            let id = format!("{}-{n}", url_safe(&ctx.session_id));
            let session = server.proxy.open_session(
                &id,
                SessionOptions {
                    faults: ctx.case.tool_faults.clone(),
                    tools: ctx.tools.to_vec(),
                },
            );
            let turns_left = match &ctx.case.input {
                Some(_) => 1,
                None => ctx.case.turns.len(),
            };
            let s: Box<dyn Session + 'a> = Box::new(
                ProxyTrial::start(&self.exec, server.addr, session, ctx, turns_left).await?,
            );
            Ok(s)
        })
    }
}

/// A session id that can sit in a URL path segment as it is.
fn url_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// One trial: the agent process and its proxy session.
struct ProxyTrial {
    /// First: dropped (and the agent ended) before the session.
    link: AgentLink,
    session: ProxySession,
    shown: String,
    /// Turns the case may still play: when none is left, tool calls still waiting for their
    /// results are closed as unanswered.
    turns_left: usize,
}

impl ProxyTrial {
    async fn start(
        exec: &ExecTarget,
        addr: SocketAddr,
        session: ProxySession,
        ctx: &TrialContext<'_>,
        turns_left: usize,
    ) -> Result<ProxyTrial, TargetError> {
        // Outside the suite's folder, as for exec.
        let workdir = agent_workdir("gauntlet-proxy-")?;
        let base = format!("http://{addr}/s/{}", session.id());
        let openai_base = format!("{base}/v1");
        let mut cmd = exec.pinned_command(workdir.path(), ctx, ctx.seed & SEED_MASK);
        // Set after the configured environment, so that they win: pointing the agent at its
        // session is the whole point.
        cmd.env("GAUNTLET_PROTOCOL", LINE_PROTOCOL)
            .env("GAUNTLET_PROXY_URL", &base)
            .env("GAUNTLET_PROXY_SESSION", session.id())
            .env("OPENAI_BASE_URL", &openai_base)
            .env("OPENAI_API_BASE", &openai_base)
            .env("ANTHROPIC_BASE_URL", &base);
        let proc = AgentProc::spawn(cmd, workdir, exec.shown(), exec.redactor(), None)?;
        let mut link = AgentLink::new(proc, ctx);
        // Nothing to send first: the agent waits for its first turn.
        link.started(true);
        Ok(ProxyTrial {
            link,
            session,
            shown: exec.shown().to_owned(),
            turns_left,
        })
    }

    /// The error for an agent that stopped talking: how it ended and what it said on stderr.
    async fn exited(&mut self, when: &str, cause: &str) -> TargetError {
        let agent = format!("the agent `{}`", self.shown);
        self.link
            .exited(&self.session.redactor(), &agent, when, cause)
            .await
    }

    fn protocol_error(&self, what: &str, line: &str) -> TargetError {
        self.link
            .protocol_error(&self.session.redactor(), what, line)
    }

    /// Merges what the proxy recorded, closing unanswered calls after the case's last turn.
    fn settle(&mut self, rec: &mut TraceRecorder) {
        self.session.drain_into(rec);
        if self.turns_left == 0 {
            self.session.close_unanswered();
            self.session.drain_into(rec);
        }
    }

    async fn play(
        &mut self,
        user: &str,
        rec: &mut TraceRecorder,
    ) -> Result<TurnAnswer, TargetError> {
        self.turns_left = self.turns_left.saturating_sub(1);
        // Anything recorded between turns (a background call) goes in first.
        self.session.drain_into(rec);
        let proc = self.link.proc_mut()?;
        if let Some(line) = proc.stray_line().await {
            return Err(self.protocol_error(
                "the agent wrote on stdout while no turn was open (stdout carries only answers, one JSON string per line; write logs to stderr)",
                &line,
            ));
        }
        let mut line = serde_json::to_vec(user).map_err(|e| TargetError::Harness(e.to_string()))?;
        line.push(b'\n');
        if let Err(e) = proc.send_line(&line).await {
            return Err(self
                .exited("before it read the user turn", &e.to_string())
                .await);
        }
        loop {
            let next = {
                let session = &self.session;
                let Some(proc) = self.link.proc.as_mut() else {
                    return Err(TargetError::Harness("the agent process is gone".into()));
                };
                tokio::select! {
                    // Both are cancel-safe: a partial line stays in the reader's buffer.
                    l = proc.stdout.next_line() => Some(l),
                    () = session.changed() => None,
                }
            };
            let line = match next {
                None => {
                    self.session.drain_into(rec);
                    continue;
                }
                Some(Ok(Some(line))) => line,
                Some(Ok(None)) => {
                    self.session.drain_into(rec);
                    return Err(self.exited("before answering", "its stdout closed").await);
                }
                Some(Err(e)) => {
                    self.session.drain_into(rec);
                    return Err(self.exited("before answering", &e.to_string()).await);
                }
            };
            let redactor = self.session.redactor();
            let text = self.link.text_of(&redactor, &line)?;
            if text.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Value>(text) {
                Ok(Value::String(answer)) => {
                    self.settle(rec);
                    if answer.trim().is_empty() && !self.link.allow_empty {
                        return Err(self.protocol_error(EMPTY_ANSWER, text));
                    }
                    let content = self.session.redactor().redact(&answer).into_owned();
                    return Ok(TurnAnswer {
                        content,
                        truncated: false,
                    });
                }
                Ok(Value::Object(o)) if o.get("error").is_some_and(Value::is_string) => {
                    self.session.drain_into(rec);
                    let message = o["error"].as_str().unwrap_or("");
                    let kind = o.get("kind").and_then(Value::as_str);
                    let redactor = self.session.redactor();
                    let reported = self.link.reported_error(&redactor, message, kind, rec);
                    return Err(reported.unwrap_or_else(|| {
                        self.protocol_error(
                            "an error line whose `kind` is not transport, blocked or timeout",
                            text,
                        )
                    }));
                }
                _ => {
                    return Err(self.protocol_error(
                        "the agent wrote a line on stdout that is not a JSON string (each answer is one JSON string per line, such as \"Order A-1001 has shipped.\"; write logs to stderr)",
                        text,
                    ));
                }
            }
        }
    }
}

impl Session for ProxyTrial {
    fn turn<'a>(
        &'a mut self,
        user: &'a str,
        _tools: &'a mut dyn ToolHost,
        rec: &'a mut TraceRecorder,
    ) -> BoxFuture<'a, Result<TurnAnswer, TargetError>> {
        Box::pin(async move {
            self.link.begin_turn()?;
            let result = self.play(user, rec).await;
            self.link.end_turn(&result, rec);
            result
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_url_safe() {
        assert_eq!(url_safe("case/1 x-0-00ff"), "case_1_x-0-00ff");
    }
}
