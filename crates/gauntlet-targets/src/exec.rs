//! The subprocess adapter: [`ExecTarget`] launches the user's agent once per trial and talks
//! to it in JSON lines over its stdin and stdout (protocol version [`PROTOCOL_VERSION`],
//! specified in `docs/exec-protocol.md`).
//!
//! This module owns the agent process's whole life: resolving the command and the
//! `${env:NAME}` values once, when the target is built; the pinned environment and the fresh
//! working directory of each trial; both directions of the protocol (tool calls go through
//! the runner's [`ToolHost`], decisions and self-reported model calls into the trace); the
//! stderr tail kept for error messages; and the shutdown when the trial is over (`end`,
//! stdin closed, a short grace, then a kill) or cut off (an immediate kill). The agent runs
//! in a process group of its own ([`ProcessGroup`]), killed whole when its trial ends, so
//! nothing it started outlives the trial.
//!
//! The agent runs its own loop, so `max_steps` does not apply here: the trial time limit is
//! what stops an agent that never answers.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gauntlet_core::event::{EvidenceLevel, SideEffectMode};
use gauntlet_core::redact::Redactor;
use gauntlet_core::target::{
    BoxFuture, ExecTargetConfig, Session, Target, TargetError, TargetInfo, ToolHost, TrialContext,
    TurnAnswer,
};
use gauntlet_core::trace::{Message, ToolCallRequest, TraceRecorder, TransportKind, Usage};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

use crate::error::AgentError;

/// The protocol version sent in the `start` message and in `GAUNTLET_PROTOCOL`.
pub const PROTOCOL_VERSION: u32 = 1;

/// The clock value handed to the agent when the config sets none.
pub const DEFAULT_FROZEN_TIME: &str = "2025-01-01T00:00:00Z";

/// Seeds are cut to 53 bits so that every JSON parser (JavaScript's included) reads the
/// `seed` field exactly, and it equals `GAUNTLET_SEED`.
pub(crate) const SEED_MASK: u64 = (1 << 53) - 1;

/// How long a finished agent gets to exit on its own after `end` before it is killed.
pub(crate) const END_GRACE: Duration = Duration::from_secs(2);

/// How long to wait for an exit status and the last stderr lines once the agent closed its
/// stdout, so that the error says how it ended.
pub(crate) const EXIT_WAIT: Duration = Duration::from_secs(2);

/// Longest protocol line accepted (a self-reported model call may carry a long history).
pub(crate) const MAX_STDOUT_LINE: usize = 16 << 20;

/// What is kept of stderr for error messages: the last lines, up to this many bytes, each
/// line clipped (after redaction: see [`collect_stderr`]).
const STDERR_LINES: usize = 20;
const STDERR_BYTES: usize = 4096;
pub(crate) const STDERR_LINE_BYTES: usize = 1024;

/// The protocol error for an empty answer (exec's and the proxy's line protocols alike).
pub(crate) const EMPTY_ANSWER: &str = "the agent answered with nothing (an empty answer has nothing to grade; set `allow_empty: true` on a case where it is a valid answer)";

/// How much of an offending stdout line an error message quotes.
pub(crate) const QUOTE_BYTES: usize = 200;

/// Used when gauntlet itself runs without `PATH`.
const FALLBACK_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// A target that runs the agent as a subprocess per trial.
#[derive(Debug)]
pub struct ExecTarget {
    /// The program, as an absolute path (found when the target was built).
    program: PathBuf,
    /// Arguments; relative paths of existing files made absolute.
    args: Vec<OsString>,
    /// The command as configured, for labels and messages.
    shown: String,
    /// The configured environment, `${env:NAME}` references resolved.
    env: BTreeMap<String, String>,
    /// The `pass_env` variables that gauntlet's environment has, read when the target was
    /// built.
    passed: BTreeMap<String, OsString>,
    /// `PATH` handed to the agent (gauntlet's own unless the config sets one).
    path: OsString,
    /// Handed to the agent as `frozen_time` and `GAUNTLET_FROZEN_TIME`.
    frozen_time: String,
    /// Knows every secret resolved here (and whatever the caller had registered before), so
    /// that stderr and stdout quoted in errors never carry one.
    redactor: Arc<Redactor>,
}

impl ExecTarget {
    /// Builds the target: resolves `${env:NAME}` values (an unset variable is an error; every
    /// resolved value is registered in `redactor` as a secret under NAME), and resolves the
    /// command against gauntlet's working directory, because the agent itself runs in a
    /// fresh temporary directory where a relative path would not name the same file.
    pub fn new(cfg: &ExecTargetConfig, redactor: &mut Redactor) -> Result<ExecTarget, AgentError> {
        Self::build(cfg, None, redactor, "exec")
    }

    /// [`ExecTarget::new`] with relative paths in the command (a program with a `/`, an
    /// argument that names a file there) resolved against `base_dir` (the folder of the suite
    /// that declares the target) instead of the working directory.
    pub fn new_in(
        cfg: &ExecTargetConfig,
        base_dir: Option<&Path>,
        redactor: &mut Redactor,
    ) -> Result<ExecTarget, AgentError> {
        Self::build(cfg, base_dir, redactor, "exec")
    }

    /// [`ExecTarget::new`] for a target of `kind` (`exec`, or `proxy`, which launches its
    /// agent the same way); errors name the kind.
    pub(crate) fn build(
        cfg: &ExecTargetConfig,
        base_dir: Option<&Path>,
        redactor: &mut Redactor,
        kind: &'static str,
    ) -> Result<ExecTarget, AgentError> {
        let Some((program, args)) = cfg.command.split_first() else {
            return Err(AgentError::NoCommand { kind });
        };
        if program.is_empty() {
            return Err(AgentError::EmptyProgram { kind });
        }
        let mut env = BTreeMap::new();
        for (key, value) in &cfg.env {
            if key.is_empty() || key.contains('=') || key.contains('\0') {
                return Err(AgentError::EnvName {
                    kind,
                    key: key.clone(),
                });
            }
            if key.starts_with("GAUNTLET_") {
                return Err(AgentError::ReservedEnv {
                    kind,
                    key: key.clone(),
                });
            }
            env.insert(key.clone(), resolve_env_refs(kind, key, value, redactor)?);
        }
        let mut passed = BTreeMap::new();
        for name in &cfg.pass_env {
            if name.is_empty() || name.contains('=') || name.contains('\0') {
                return Err(AgentError::EnvName {
                    kind,
                    key: name.clone(),
                });
            }
            if name.starts_with("GAUNTLET_") {
                return Err(AgentError::ReservedEnv {
                    kind,
                    key: name.clone(),
                });
            }
            if looks_like_a_secret(name) {
                return Err(AgentError::SecretPassEnv {
                    kind,
                    name: name.clone(),
                });
            }
            if let Some(v) = std::env::var_os(name) {
                passed.insert(name.clone(), v);
            }
        }
        let frozen_time = match cfg.frozen_time.as_deref().map(str::trim) {
            None => DEFAULT_FROZEN_TIME.to_owned(),
            Some("") => return Err(AgentError::EmptyFrozenTime { kind }),
            Some(t) => t.to_owned(),
        };
        let path = match env.get("PATH") {
            Some(p) => OsString::from(p),
            None => std::env::var_os("PATH").unwrap_or_else(|| FALLBACK_PATH.into()),
        };
        let cwd =
            std::env::current_dir().map_err(|source| AgentError::CurrentDir { kind, source })?;
        let base = match base_dir {
            Some(d) => cwd.join(d),
            None => cwd.clone(),
        };
        let program = resolve_program(kind, program, &base, &cwd, &path)?;
        let args = args.iter().map(|a| resolve_arg(a, &base)).collect();
        Ok(ExecTarget {
            program,
            args,
            shown: cfg.command.join(" "),
            env,
            passed,
            path,
            frozen_time,
            redactor: Arc::new(redactor.clone()),
        })
    }
}

impl ExecTarget {
    /// The agent's command for one trial, in `workdir`, with the pinned environment (the
    /// `pass_env` variables over the pins, the configured `env:` over both, the `GAUNTLET_`
    /// variables over everything), piped stdio, in a process group of its own, and killed
    /// when dropped. Shared with the proxy target, which adds its own variables.
    pub(crate) fn pinned_command(
        &self,
        workdir: &Path,
        ctx: &TrialContext<'_>,
        seed: u64,
    ) -> Command {
        let mut cmd = self.allowlisted(Some(workdir), &[]);
        // The configured environment may override the pins (a virtualenv's PATH); the
        // GAUNTLET_ variables below may not (checked in `new`).
        cmd.env("GAUNTLET_PROTOCOL", PROTOCOL_VERSION.to_string())
            .env("GAUNTLET_FROZEN_TIME", &self.frozen_time)
            .env("GAUNTLET_SESSION_ID", &ctx.session_id)
            .env("GAUNTLET_CASE_ID", &ctx.case.id)
            .env("GAUNTLET_TRIAL", ctx.trial.to_string())
            .env("GAUNTLET_SEED", seed.to_string())
            .current_dir(workdir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// The program with the environment allow-list every child of this target gets: `PATH`,
    /// `HOME` (when given), the pins, `extra` pins, then `pass_env` and `env:` (which may
    /// override the pins). Dropping the child kills it (the runner's trial timeout drops the
    /// whole trial), and it leads a process group of its own, so that what it starts (a
    /// server, a `sleep 1000 &`) can be found and killed with it ([`ProcessGroup`]), and a
    /// terminal's Ctrl-C reaches it only through gauntlet.
    fn allowlisted(&self, home: Option<&Path>, extra: &[(&str, &str)]) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args).env_clear().env("PATH", &self.path);
        if let Some(home) = home {
            cmd.env("HOME", home);
        }
        cmd.env("TZ", "UTC")
            .env("LANG", "C.UTF-8")
            .env("LC_ALL", "C.UTF-8")
            .env("PYTHONHASHSEED", "0")
            .env("PYTHONUNBUFFERED", "1")
            .envs(extra.iter().copied())
            .envs(&self.passed)
            .envs(&self.env)
            .kill_on_drop(true);
        #[cfg(unix)]
        cmd.process_group(0);
        cmd
    }

    /// A long-lived helper's command (an MCP server started for a run): the same program,
    /// arguments and environment allow-list as the agent's (`PATH`, the pins, `pass_env`,
    /// `env:`), without the per-trial `GAUNTLET_` variables, in gauntlet's working directory,
    /// in a process group of its own, and killed when dropped.
    #[cfg(feature = "mcp")]
    pub(crate) fn server_command(&self) -> Command {
        self.allowlisted(None, &[])
    }

    /// The command as configured, for labels and messages.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// The frozen clock value handed to the agent.
    pub(crate) fn frozen_time(&self) -> &str {
        &self.frozen_time
    }

    /// The names (never the values) of the configured environment variables, `env:` and
    /// `pass_env` alike.
    pub(crate) fn env_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .env
            .keys()
            .chain(self.passed.keys())
            .map(String::as_str)
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// The redactor that knows every secret resolved for this target.
    pub(crate) fn redactor(&self) -> &Arc<Redactor> {
        &self.redactor
    }
}

/// Whether a variable's name says it holds a credential. `pass_env` values are not
/// redacted, so such a variable must go through `env:` as `${env:NAME}`, which is.
pub fn looks_like_a_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    [
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "AUTH",
    ]
    .iter()
    .any(|w| upper.contains(w))
}

/// Replaces every `${env:NAME}` in `value` with the variable's value, registering each as a
/// secret.
pub(crate) fn resolve_env_refs(
    kind: &'static str,
    key: &str,
    value: &str,
    redactor: &mut Redactor,
) -> Result<String, AgentError> {
    const OPEN: &str = "${env:";
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find(OPEN) {
        out.push_str(&rest[..at]);
        let after = &rest[at + OPEN.len()..];
        let Some(end) = after.find('}') else {
            return Err(AgentError::UnterminatedEnvRef {
                kind,
                key: key.to_owned(),
            });
        };
        let name = after[..end].trim();
        if name.is_empty() {
            return Err(AgentError::EmptyEnvRef {
                kind,
                key: key.to_owned(),
            });
        }
        // A named secret may also come from the `.env` file (the environment wins).
        let secret = std::env::var(name)
            .or_else(|e| match (&e, crate::keys::key_var(name)) {
                (std::env::VarError::NotPresent, Some((v, _))) => Ok(v),
                _ => Err(e),
            })
            .map_err(|e| {
                let (name, key) = (name.to_owned(), key.to_owned());
                match e {
                    std::env::VarError::NotPresent => AgentError::EnvUnset { kind, name, key },
                    std::env::VarError::NotUnicode(_) => {
                        AgentError::EnvNotUnicode { kind, name, key }
                    }
                }
            })?;
        redactor.add(name, &secret);
        out.push_str(&secret);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A program with a `/` is a path (made absolute against gauntlet's working directory); a
/// bare name is looked up on the agent's `PATH` now, so that a typo is a configuration error
/// before any trial runs.
fn resolve_program(
    kind: &'static str,
    program: &str,
    base: &Path,
    cwd: &Path,
    path: &OsString,
) -> Result<PathBuf, AgentError> {
    if program.contains('/') {
        let p = base.join(program);
        if !p.is_file() {
            return Err(AgentError::NoSuchProgram {
                kind,
                program: program.to_owned(),
                looked: p.display().to_string(),
            });
        }
        return Ok(p);
    }
    std::env::split_paths(path)
        .map(|dir| cwd.join(dir).join(program))
        .find(|p| is_executable(p))
        .ok_or_else(|| AgentError::NotOnPath {
            kind,
            program: program.to_owned(),
        })
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// An argument that is a relative path to an existing file is made absolute (the script of
/// `python3 agent.py`); options and everything else pass unchanged.
fn resolve_arg(arg: &str, base: &Path) -> OsString {
    let p = Path::new(arg);
    if !arg.is_empty() && !arg.starts_with('-') && p.is_relative() && base.join(p).is_file() {
        base.join(p).into_os_string()
    } else {
        OsString::from(arg)
    }
}

impl Target for ExecTarget {
    fn info(&self) -> TargetInfo {
        let mut settings = BTreeMap::new();
        settings.insert("protocol".into(), PROTOCOL_VERSION.to_string());
        settings.insert("frozen_time".into(), self.frozen_time.clone());
        let names = self.env_names();
        if !names.is_empty() {
            // Names only: values may be secrets.
            settings.insert("env".into(), names.join(","));
        }
        TargetInfo {
            kind: "exec".into(),
            label: format!("exec:{}", self.shown),
            model: None,
            base_url: None,
            settings,
            // The agent's tools are gauntlet's simulated ones, whatever model it runs on.
            evidence_level: EvidenceLevel::Offline,
            side_effects: SideEffectMode::Simulated,
        }
    }

    fn open<'a>(
        &'a self,
        ctx: &'a TrialContext<'a>,
    ) -> BoxFuture<'a, Result<Box<dyn Session + 'a>, TargetError>> {
        Box::pin(async move {
            let session: Box<dyn Session + 'a> = Box::new(ExecSession::start(self, ctx).await?);
            Ok(session)
        })
    }
}

/// The last lines the agent wrote on stderr, already redacted.
#[derive(Debug, Default)]
pub(crate) struct StderrTail {
    lines: VecDeque<String>,
    bytes: usize,
}

impl StderrTail {
    fn push(&mut self, line: String) {
        self.bytes += line.len();
        self.lines.push_back(line);
        while self.lines.len() > STDERR_LINES || self.bytes > STDERR_BYTES {
            match self.lines.pop_front() {
                Some(l) => self.bytes -= l.len(),
                None => break,
            }
        }
    }

    /// `; stderr: a | b | c`, on one line so that it fits a terminal reason and a report
    /// table cell.
    pub(crate) fn suffix(&self) -> String {
        let lines: Vec<&str> = self
            .lines
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty())
            .collect();
        if lines.is_empty() {
            "; nothing on stderr".into()
        } else {
            format!("; stderr: {}", lines.join(" | "))
        }
    }
}

/// One line read from a pipe, without its line ending.
pub(crate) struct Line {
    pub(crate) bytes: Vec<u8>,
    /// Longer than the reader's limit: `bytes` holds only the start.
    pub(crate) overlong: bool,
}

/// Reads lines with a length limit. Cancel-safe: a partial line survives a dropped read,
/// because only `fill_buf` awaits and the copy out of the buffer is synchronous.
pub(crate) struct LineReader<R> {
    inner: BufReader<R>,
    buf: Vec<u8>,
    overlong: bool,
    max: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(crate) fn new(inner: R, max: usize) -> Self {
        LineReader {
            inner: BufReader::new(inner),
            buf: Vec::new(),
            overlong: false,
            max,
        }
    }

    /// The next line, or `None` at the end of the stream.
    pub(crate) async fn next_line(&mut self) -> io::Result<Option<Line>> {
        loop {
            let chunk = self.inner.fill_buf().await?;
            if chunk.is_empty() {
                if self.buf.is_empty() && !self.overlong {
                    return Ok(None);
                }
                // A last line without a newline still counts.
                return Ok(Some(self.take()));
            }
            let (used, content, done) = match chunk.iter().position(|b| *b == b'\n') {
                Some(i) => (i + 1, i, true),
                None => (chunk.len(), chunk.len(), false),
            };
            let room = self.max.saturating_sub(self.buf.len());
            if content > room {
                self.overlong = true;
            }
            self.buf.extend_from_slice(&chunk[..content.min(room)]);
            self.inner.consume(used);
            if done {
                return Ok(Some(self.take()));
            }
        }
    }

    fn take(&mut self) -> Line {
        let mut bytes = std::mem::take(&mut self.buf);
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        Line {
            bytes,
            overlong: std::mem::take(&mut self.overlong),
        }
    }

    /// Whether output is already waiting (best effort: only what has reached the pipe).
    pub(crate) async fn has_pending(&mut self) -> bool {
        if !self.buf.is_empty() || self.overlong {
            return true;
        }
        // `timeout` polls the read once before looking at the clock, so a zero timeout
        // answers "is anything readable right now".
        matches!(
            tokio::time::timeout(Duration::ZERO, self.inner.fill_buf()).await,
            Ok(Ok(b)) if !b.is_empty()
        )
    }
}

pub(crate) async fn collect_stderr<R: AsyncRead + Unpin>(
    stderr: R,
    tail: Arc<Mutex<StderrTail>>,
    redactor: Arc<Redactor>,
) {
    // The reader keeps a secret's length more than a line may show, so that a secret
    // straddling the line limit is still whole when it is redacted; only then is the line
    // cut (a head of a secret the reader itself cut off is redacted at the end).
    let mut reader = LineReader::new(stderr, STDERR_LINE_BYTES + redactor.longest());
    while let Ok(Some(line)) = reader.next_line().await {
        if let Ok(mut t) = tail.lock() {
            t.push(stderr_line(&redactor, &line));
        }
    }
}

/// One stderr line as kept for error messages: redacted, then clipped to
/// [`STDERR_LINE_BYTES`], `…` marking a cut.
fn stderr_line(redactor: &Redactor, line: &Line) -> String {
    let text = String::from_utf8_lossy(&line.bytes);
    let (mut text, cut) = redactor.clip(&text, STDERR_LINE_BYTES, line.overlong);
    if cut {
        text.push('…');
    }
    text
}

/// The process groups of the agents running now, for [`interrupt_agents`].
static LIVE_GROUPS: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

fn live_groups() -> std::sync::MutexGuard<'static, BTreeSet<u32>> {
    LIVE_GROUPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sends SIGINT to every agent process group still running, as a terminal's Ctrl-C would
/// have before agents got groups of their own: the binary calls it when the user interrupts
/// a run, so agents stop as they used to, and their trials end (and are killed) as usual.
pub fn interrupt_agents() {
    #[cfg(unix)]
    for id in live_groups().iter() {
        if let Some(pid) = group_pid(*id) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::INT);
        }
    }
}

/// A group id as a pid to signal; never 0 or 1, where `kill(-pid)` would reach this
/// process's own group or every process there is.
#[cfg(unix)]
fn group_pid(id: u32) -> Option<rustix::process::Pid> {
    i32::try_from(id)
        .ok()
        .filter(|id| *id > 1)
        .and_then(rustix::process::Pid::from_raw)
}

/// The process group an agent leads (the agent is started with `process_group(0)`, so the
/// group id is its pid). Killing the agent alone would leave whatever it started running
/// past the trial, holding ports and files, even past gauntlet's exit; so when the trial
/// ends the whole group gets SIGKILL: at the end of a trial, when the trial is cut off, and
/// when the guard is dropped (a run or a runtime shutting down). Once only: after that the
/// id may belong to someone else. A process that leaves the group (`setsid`) escapes this.
#[derive(Debug)]
pub(crate) struct ProcessGroup {
    id: Option<u32>,
}

impl ProcessGroup {
    /// The group of a child started with [`ExecTarget::pinned_command`].
    pub(crate) fn of(child: &Child) -> ProcessGroup {
        let id = child.id().filter(|_| cfg!(unix));
        if let Some(id) = id {
            live_groups().insert(id);
        }
        ProcessGroup { id }
    }

    /// Kills every process left in the group (none left is fine).
    pub(crate) fn kill(&mut self) {
        let Some(id) = self.id.take() else { return };
        #[cfg(unix)]
        if let Some(pid) = group_pid(id) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        live_groups().remove(&id);
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The running agent of one trial and its working directory (an exec agent, or an
/// unmodified agent behind the recording proxy).
pub(crate) struct AgentProc {
    pub(crate) child: Child,
    /// The agent's process group: killed when the trial ends, and when this is dropped.
    pub(crate) group: ProcessGroup,
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) stdout: LineReader<ChildStdout>,
    pub(crate) stderr: Arc<Mutex<StderrTail>>,
    pub(crate) stderr_task: Option<JoinHandle<()>>,
    /// Removed when dropped, after the agent is gone.
    pub(crate) workdir: tempfile::TempDir,
    /// Written to the agent before its input closes at a graceful end (exec's `end`).
    pub(crate) farewell: Option<&'static [u8]>,
}

impl AgentProc {
    pub(crate) async fn send_line(&mut self, line: &[u8]) -> io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "stdin is closed"))?;
        stdin.write_all(line).await?;
        stdin.flush().await
    }

    async fn send(&mut self, msg: &ToAgent<'_>) -> io::Result<()> {
        let mut line = serde_json::to_vec(msg)?;
        line.push(b'\n');
        self.send_line(&line).await
    }

    pub(crate) fn stderr_suffix(&self) -> String {
        self.stderr.lock().map(|t| t.suffix()).unwrap_or_default()
    }

    /// Ends the process. `graceful`: the trial finished normally, so the agent is told (its
    /// farewell line, then end of input) and gets [`END_GRACE`] to exit on its own; otherwise
    /// (a cut-off or failed trial) it is killed at once. The working directory goes last.
    async fn shutdown(mut self, graceful: bool) {
        if graceful && let Some(mut stdin) = self.stdin.take() {
            if let Some(line) = self.farewell {
                let end = async {
                    stdin.write_all(line).await?;
                    stdin.flush().await
                };
                let _ = tokio::time::timeout(Duration::from_millis(200), end).await;
            }
            drop(stdin);
            if tokio::time::timeout(END_GRACE, self.child.wait())
                .await
                .is_ok()
            {
                self.finish();
                return;
            }
        }
        let _ = self.child.start_kill();
        self.group.kill();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
        self.finish();
    }

    fn finish(mut self) {
        // The agent is gone; what it started goes too, before its directory does.
        self.group.kill();
        if let Some(t) = self.stderr_task.take() {
            t.abort();
        }
        // The agent no longer runs in it. A failed removal leaves a folder in the system
        // temporary directory, which is not worth failing a finished trial for.
        let _ = self.workdir.close();
    }

    /// Hands the process over for its end when its trial is dropped. A drop in the middle of
    /// a turn is the runner's time limit (or a cancelled run): no grace then, and the kill
    /// goes out now rather than from a task that a runtime shutting down might never run.
    /// `Session` has no close step, so the orderly end runs from here.
    pub(crate) fn release(mut self, graceful: bool) {
        if !graceful {
            let _ = self.child.start_kill();
            self.group.kill();
        }
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn(self.shutdown(graceful));
            }
            // No runtime to wait on: `kill_on_drop` kills the agent and the working
            // directory is removed as `self` drops.
            Err(_) => drop(self),
        }
    }
}

/// Records a failed turn in the trace, once: a block was recorded where it was reported.
pub(crate) fn record_turn_failure(rec: &mut TraceRecorder, e: &TargetError) {
    let kind = match e {
        TargetError::Blocked(_) => return,
        TargetError::Timeout(_) => TransportKind::Timeout,
        _ => TransportKind::Failed,
    };
    rec.transport(kind, None, e.to_string());
}

/// One trial's agent process.
struct ExecSession {
    proc: Option<AgentProc>,
    redactor: Arc<Redactor>,
    /// The session is starting or playing a turn: a drop now means the trial was cut off
    /// (the runner's time limit), so the agent is killed without grace.
    busy: bool,
    /// A turn failed: the agent is in an unknown state and gets no more input.
    broken: bool,
    /// For tool calls that come without an id.
    next_call: u32,
    /// The case accepts an empty answer (`allow_empty`).
    allow_empty: bool,
}

/// Messages to the agent. Serialized with `type` first, so that logs read well. (`end` is
/// written by [`AgentProc::shutdown`] directly.)
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ToAgent<'a> {
    Start {
        protocol: u32,
        session_id: &'a str,
        case_id: &'a str,
        trial: u32,
        seed: u64,
        system_prompt: Option<&'a str>,
        tools: Vec<ToolSpec<'a>>,
        vars: &'a BTreeMap<String, Value>,
        /// The case's retrieved documents, `[{id, title, text}]` (empty for most cases).
        documents: Value,
        frozen_time: &'a str,
    },
    User {
        content: &'a str,
    },
    ToolResult {
        id: &'a str,
        name: &'a str,
        content: &'a str,
    },
}

/// A tool as the agent sees it: never its fixtures.
#[derive(Debug, Serialize)]
struct ToolSpec<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

/// Messages from the agent (`type` selects the variant; unknown fields are ignored, so
/// agents may add their own).
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum AgentMsg {
    ToolCall {
        #[serde(default)]
        id: Option<String>,
        name: String,
        #[serde(default)]
        arguments: Value,
        #[serde(default)]
        agent: Option<String>,
    },
    Decision {
        branch: String,
        #[serde(default)]
        reason: Option<String>,
        #[serde(default)]
        agent: Option<String>,
    },
    LlmCall(Box<LlmCallMsg>),
    Answer {
        content: String,
        #[serde(default)]
        truncated: bool,
    },
    Error {
        message: String,
        #[serde(default)]
        kind: Option<String>,
    },
}

#[derive(Debug, Deserialize)]
struct LlmCallMsg {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    messages_in: Vec<Message>,
    message_out: Message,
    #[serde(default)]
    usage: UsageMsg,
    #[serde(default)]
    latency_ms: u64,
    #[serde(default)]
    finish_reason: Option<String>,
    #[serde(default)]
    attempts: Option<u32>,
    #[serde(default)]
    agent: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct UsageMsg {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
}

/// Tool arguments as the agent sent them: an object as is, a string holding JSON decoded (an
/// agent forwarding a model's raw arguments), a string that is not JSON kept and marked
/// malformed, nothing at all an empty object.
fn tool_arguments(arguments: Value) -> (Value, bool) {
    match arguments {
        Value::Null => (json!({}), false),
        Value::String(s) => match serde_json::from_str::<Value>(&s) {
            Ok(v) => (v, false),
            Err(_) => (Value::String(s), true),
        },
        other => (other, false),
    }
}

/// The text with secrets replaced, then cut to `max` bytes (see [`Redactor::clip`]).
pub(crate) fn quote(redactor: &Redactor, text: &str, max: usize) -> String {
    match redactor.clip(text, max, false) {
        (head, true) => format!("{head}… ({} bytes)", redactor.redact(text).len()),
        (whole, false) => whole,
    }
}

impl ExecSession {
    async fn start(
        target: &ExecTarget,
        ctx: &TrialContext<'_>,
    ) -> Result<ExecSession, TargetError> {
        // Outside the suite's folder (under the system temporary directory), so an agent
        // cannot read fixtures or expectations by relative path, and nothing it writes
        // survives the trial.
        let workdir = tempfile::Builder::new()
            .prefix("gauntlet-exec-")
            .tempdir()
            .map_err(|e| {
                TargetError::Harness(format!(
                    "could not create the agent's working directory: {e}"
                ))
            })?;
        let seed = ctx.seed & SEED_MASK;
        let mut cmd = target.pinned_command(workdir.path(), ctx, seed);
        let mut child = cmd.spawn().map_err(|e| {
            TargetError::Transport(format!("could not start `{}`: {e}", target.shown))
        })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(TargetError::Harness(
                "the agent's pipes were not set up".into(),
            ));
        };
        let tail = Arc::new(Mutex::new(StderrTail::default()));
        let stderr_task = tokio::spawn(collect_stderr(
            stderr,
            Arc::clone(&tail),
            Arc::clone(&target.redactor),
        ));
        let mut session = ExecSession {
            proc: Some(AgentProc {
                group: ProcessGroup::of(&child),
                child,
                stdin: Some(stdin),
                stdout: LineReader::new(stdout, MAX_STDOUT_LINE),
                stderr: tail,
                stderr_task: Some(stderr_task),
                workdir,
                farewell: Some(b"{\"type\":\"end\"}\n"),
            }),
            redactor: Arc::clone(&target.redactor),
            busy: true,
            broken: false,
            next_call: 0,
            allow_empty: ctx.case.allow_empty,
        };
        let start = ToAgent::Start {
            protocol: PROTOCOL_VERSION,
            session_id: &ctx.session_id,
            case_id: &ctx.case.id,
            trial: ctx.trial,
            seed,
            system_prompt: ctx.system_prompt,
            tools: ctx
                .tools
                .iter()
                .map(|t| ToolSpec {
                    name: &t.name,
                    description: &t.description,
                    parameters: &t.parameters,
                })
                .collect(),
            vars: &ctx.case.vars,
            documents: gauntlet_core::context::documents_json(&ctx.case.documents),
            frozen_time: &target.frozen_time,
        };
        if let Err(e) = session.proc_mut()?.send(&start).await {
            session.broken = true;
            return Err(session
                .exited("before it read the start message", &e.to_string())
                .await);
        }
        session.busy = false;
        Ok(session)
    }

    fn proc_mut(&mut self) -> Result<&mut AgentProc, TargetError> {
        self.proc
            .as_mut()
            .ok_or_else(|| TargetError::Harness("the agent process is gone".into()))
    }

    /// The error for an agent that stopped talking: how it ended and what it said on stderr.
    async fn exited(&mut self, when: &str, cause: &str) -> TargetError {
        let Some(proc) = self.proc.as_mut() else {
            return TargetError::Harness("the agent process is gone".into());
        };
        // The process may still be on its way out: give it a moment, so that the message has
        // its exit status and the last stderr lines.
        let status = tokio::time::timeout(EXIT_WAIT, proc.child.wait()).await;
        if let Some(task) = proc.stderr_task.take() {
            let _ = tokio::time::timeout(EXIT_WAIT, task).await;
        }
        let stderr = proc.stderr_suffix();
        let cause = quote(&self.redactor, cause, QUOTE_BYTES);
        TargetError::Transport(match status {
            Ok(Ok(s)) => format!("the agent exited {when} ({s}){stderr}"),
            Ok(Err(e)) => {
                format!("the agent stopped {when} ({cause}; exit status unknown: {e}){stderr}")
            }
            Err(_) => {
                format!("the agent stopped talking {when} ({cause}) but is still running{stderr}")
            }
        })
    }

    fn protocol_error(&self, what: &str, line: &str) -> TargetError {
        let stderr = self
            .proc
            .as_ref()
            .map(AgentProc::stderr_suffix)
            .unwrap_or_default();
        TargetError::Protocol(format!(
            "{}: `{}`{stderr}",
            quote(&self.redactor, what, 1000),
            quote(&self.redactor, line, QUOTE_BYTES)
        ))
    }

    async fn play(
        &mut self,
        user: &str,
        tools: &mut dyn ToolHost,
        rec: &mut TraceRecorder,
    ) -> Result<TurnAnswer, TargetError> {
        self.open_turn(user).await?;
        loop {
            let Some((msg, text)) = self.next_message().await? else {
                continue;
            };
            match msg {
                AgentMsg::Answer { content, truncated } => {
                    if content.trim().is_empty() && !self.allow_empty {
                        return Err(self.protocol_error(EMPTY_ANSWER, &text));
                    }
                    if truncated {
                        rec.transport(
                            TransportKind::Truncated,
                            None,
                            "the agent reported its answer as truncated".into(),
                        );
                    }
                    return Ok(TurnAnswer { content, truncated });
                }
                AgentMsg::ToolCall {
                    id,
                    name,
                    arguments,
                    agent,
                } => {
                    if name.trim().is_empty() {
                        return Err(self.protocol_error("a tool_call without a tool name", &text));
                    }
                    let id = id.filter(|i| !i.is_empty()).unwrap_or_else(|| {
                        self.next_call += 1;
                        format!("call-{}", self.next_call)
                    });
                    let (arguments, malformed) = tool_arguments(arguments);
                    let call = ToolCallRequest {
                        id,
                        name,
                        arguments,
                        malformed,
                    };
                    self.answer_tool_call(&call, agent, tools, rec).await?;
                }
                AgentMsg::Decision {
                    branch,
                    reason,
                    agent,
                } => {
                    rec.set_agent(agent);
                    rec.decision(branch, reason);
                    rec.set_agent(None);
                }
                AgentMsg::LlmCall(m) => record_llm_call(rec, *m),
                AgentMsg::Error { message, kind } => {
                    return Err(self.reported_error(&message, kind.as_deref(), &text, rec)?);
                }
            }
        }
    }

    /// Sends the user turn, after checking that the agent wrote nothing while no turn was
    /// open.
    async fn open_turn(&mut self, user: &str) -> Result<(), TargetError> {
        let proc = self.proc_mut()?;
        if proc.stdout.has_pending().await {
            let line = match proc.stdout.next_line().await {
                Ok(Some(l)) => String::from_utf8_lossy(&l.bytes).into_owned(),
                _ => String::new(),
            };
            return Err(self.protocol_error(
                "the agent wrote a message while no turn was open (after its answer, or before the first user turn)",
                &line,
            ));
        }
        if let Err(e) = proc.send(&ToAgent::User { content: user }).await {
            return Err(self
                .exited("before it read the user turn", &e.to_string())
                .await);
        }
        Ok(())
    }

    /// The agent's next protocol message and its line; `None` for a blank line. A closed
    /// stdout, an overlong or non-UTF-8 line or one that is no protocol message ends the turn.
    async fn next_message(&mut self) -> Result<Option<(AgentMsg, String)>, TargetError> {
        let line = match self.proc_mut()?.stdout.next_line().await {
            Ok(Some(line)) => line,
            Ok(None) => {
                return Err(self.exited("before answering", "its stdout closed").await);
            }
            Err(e) => return Err(self.exited("before answering", &e.to_string()).await),
        };
        if line.overlong {
            let start =
                String::from_utf8_lossy(&line.bytes[..line.bytes.len().min(64)]).into_owned();
            return Err(self.protocol_error(
                &format!("the agent wrote a line longer than {MAX_STDOUT_LINE} bytes on stdout"),
                &start,
            ));
        }
        let Ok(text) = std::str::from_utf8(&line.bytes) else {
            let lossy = String::from_utf8_lossy(&line.bytes).into_owned();
            return Err(self.protocol_error("the agent wrote a line that is not UTF-8", &lossy));
        };
        if text.trim().is_empty() {
            return Ok(None);
        }
        match serde_json::from_str::<AgentMsg>(text) {
            Ok(m) => Ok(Some((m, text.to_owned()))),
            Err(e) => {
                let what = if serde_json::from_str::<Value>(text).is_ok_and(|v| v.is_object()) {
                    format!("the agent wrote an invalid protocol message ({e})")
                } else {
                    "the agent wrote a line on stdout that is not a JSON object (stdout carries only protocol messages; write logs to stderr)".to_owned()
                };
                Err(self.protocol_error(&what, text))
            }
        }
    }

    /// Answers a tool call the agent made (as `agent`) from the simulated tools.
    async fn answer_tool_call(
        &mut self,
        call: &ToolCallRequest,
        agent: Option<String>,
        tools: &mut dyn ToolHost,
        rec: &mut TraceRecorder,
    ) -> Result<(), TargetError> {
        rec.set_agent(agent);
        let result = tools.call(call, rec);
        rec.set_agent(None);
        let reply = ToAgent::ToolResult {
            id: &call.id,
            name: &call.name,
            content: &result.content,
        };
        if let Err(e) = self.proc_mut()?.send(&reply).await {
            return Err(self
                .exited("before it read a tool result", &e.to_string())
                .await);
        }
        Ok(())
    }

    /// The error the agent reported, by its `kind` (a blocked one is recorded as a filter
    /// block); an unknown kind is a protocol error.
    fn reported_error(
        &mut self,
        message: &str,
        kind: Option<&str>,
        text: &str,
        rec: &mut TraceRecorder,
    ) -> Result<TargetError, TargetError> {
        let stderr = self.proc_mut()?.stderr_suffix();
        let message = quote(&self.redactor, message, 1000);
        Ok(match kind {
            None | Some("transport") => {
                TargetError::Transport(format!("the agent reported an error: {message}{stderr}"))
            }
            Some("blocked") => {
                rec.transport(TransportKind::FilterBlock, None, message.clone());
                TargetError::Blocked(format!("reported by the agent: {message}"))
            }
            Some("timeout") => {
                TargetError::Timeout(format!("reported by the agent: {message}{stderr}"))
            }
            Some(_) => {
                return Err(self.protocol_error(
                    "an error message whose `kind` is not transport, blocked or timeout",
                    text,
                ));
            }
        })
    }
}

/// Records a model call the agent reported making.
fn record_llm_call(rec: &mut TraceRecorder, m: LlmCallMsg) {
    rec.set_agent(m.agent);
    rec.llm_call(
        m.model,
        m.messages_in,
        m.message_out,
        Usage {
            input_tokens: m.usage.input_tokens,
            output_tokens: m.usage.output_tokens,
        },
        m.latency_ms,
        m.finish_reason,
        m.attempts.unwrap_or(1),
    );
    rec.set_agent(None);
}

impl Session for ExecSession {
    fn turn<'a>(
        &'a mut self,
        user: &'a str,
        tools: &'a mut dyn ToolHost,
        rec: &'a mut TraceRecorder,
    ) -> BoxFuture<'a, Result<TurnAnswer, TargetError>> {
        Box::pin(async move {
            if self.broken {
                return Err(TargetError::Harness(
                    "the agent failed an earlier turn; no more turns are sent to it".into(),
                ));
            }
            self.busy = true;
            let result = self.play(user, tools, rec).await;
            self.busy = false;
            if let Err(e) = &result {
                self.broken = true;
                record_turn_failure(rec, e);
            }
            result
        })
    }
}

impl Drop for ExecSession {
    fn drop(&mut self) {
        if let Some(proc) = self.proc.take() {
            proc.release(!self.busy && !self.broken);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_references_resolve_inside_text_and_register_secrets() {
        let path = std::env::var("PATH").expect("PATH is set in tests");
        let mut r = Redactor::new();
        let v = resolve_env_refs(
            "exec",
            "AUTH",
            "Bearer ${env:PATH} and ${env:PATH}!",
            &mut r,
        )
        .unwrap();
        assert_eq!(v, format!("Bearer {path} and {path}!"));
        assert_eq!(r.redact(&path), "[REDACTED:PATH]");
        assert_eq!(
            resolve_env_refs("exec", "K", "plain", &mut r).unwrap(),
            "plain"
        );
        assert!(resolve_env_refs("exec", "K", "${env:PATH", &mut r).is_err());
        assert!(resolve_env_refs("exec", "K", "${env:}", &mut r).is_err());
    }

    #[test]
    fn tool_arguments_accept_objects_json_strings_and_nothing() {
        assert_eq!(tool_arguments(json!({"a": 1})), (json!({"a": 1}), false));
        assert_eq!(
            tool_arguments(json!("{\"a\": 1}")),
            (json!({"a": 1}), false)
        );
        assert_eq!(tool_arguments(json!("a=1")), (json!("a=1"), true));
        assert_eq!(tool_arguments(Value::Null), (json!({}), false));
    }

    #[test]
    fn the_stderr_tail_is_bounded() {
        let mut t = StderrTail::default();
        for i in 0..100 {
            t.push(format!("line {i}"));
        }
        assert_eq!(t.lines.len(), STDERR_LINES);
        assert_eq!(t.lines.back().map(String::as_str), Some("line 99"));
        for _ in 0..10 {
            t.push("x".repeat(STDERR_LINE_BYTES));
        }
        assert!(t.bytes <= STDERR_BYTES);
        assert_eq!(StderrTail::default().suffix(), "; nothing on stderr");
    }

    #[tokio::test]
    async fn lines_are_split_and_bounded() {
        let input: &[u8] = b"{\"a\":1}\r\n\nabcdefghij\ntail";
        let mut r = LineReader::new(input, 5);
        let mut got = Vec::new();
        while let Some(l) = r.next_line().await.unwrap() {
            got.push((String::from_utf8(l.bytes).unwrap(), l.overlong));
        }
        assert_eq!(
            got,
            vec![
                ("{\"a\":".to_owned(), true),
                (String::new(), false),
                ("abcde".to_owned(), true),
                ("tail".to_owned(), false),
            ]
        );
    }

    #[test]
    fn quotes_are_redacted_then_clipped() {
        let mut r = Redactor::new();
        r.add("KEY", "sk-secret-value");
        assert_eq!(quote(&r, "key sk-secret-value", 100), "key [REDACTED:KEY]");
        let long = format!("sk-secret-value {}", "é".repeat(100));
        let q = quote(&r, &long, 20);
        assert!(
            q.starts_with("[REDACTED:KEY]") && q.ends_with("bytes)"),
            "{q}"
        );
    }
}

/// How a command run by [`ExecTarget::run_in`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FolderEnd {
    /// Exited with this status.
    Exited(i32),
    /// Ended by a signal.
    Killed,
    /// Cut off by the time limit (its process group killed).
    TimedOut,
    /// Could not be started (redacted).
    NotStarted(String),
}

/// What one [`ExecTarget::run_in`] gave.
#[derive(Debug, Clone)]
pub struct FolderRun {
    /// How it ended.
    pub end: FolderEnd,
    /// Its stdout, the first [`FOLDER_KEEP`] bytes, redacted.
    pub stdout: String,
    /// The last [`FOLDER_KEEP`] bytes of its stderr, redacted.
    pub stderr: String,
    /// Every byte it wrote, on both streams.
    pub output_bytes: u64,
    /// Wall time.
    pub elapsed: Duration,
}

/// Bytes of each stream a [`FolderRun`] keeps.
pub const FOLDER_KEEP: usize = 64 << 10;

/// Reads a stream to its end, keeping the first (or last) `FOLDER_KEEP` bytes and the count.
async fn drain(mut r: impl AsyncRead + Unpin, keep_tail: bool) -> (Vec<u8>, u64) {
    use tokio::io::AsyncReadExt;
    let mut kept = Vec::new();
    let mut total = 0u64;
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                total += n as u64;
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > FOLDER_KEEP {
                    if keep_tail {
                        kept.drain(..kept.len() - FOLDER_KEEP);
                    } else {
                        kept.truncate(FOLDER_KEEP);
                    }
                }
            }
        }
    }
    (kept, total)
}

impl ExecTarget {
    /// Runs the command once in `dir` (a coding agent's workspace, or a copy of it where a
    /// black-box test runs) with the same environment allow-list as a trial's agent (`PATH`,
    /// the pins, `pass_env`, `env:`; `HOME` is `dir`) plus `vars`, `input` written to its
    /// stdin and then closed, in a process group of its own that is killed whole when it
    /// exits or when `limit` runs out, so nothing it started outlives it.
    pub async fn run_in(
        &self,
        dir: &Path,
        input: &[u8],
        vars: &[(&str, String)],
        limit: Duration,
    ) -> FolderRun {
        let started = std::time::Instant::now();
        let mut cmd = self.allowlisted(Some(dir), &[("PYTHONDONTWRITEBYTECODE", "1")]);
        cmd.env("GAUNTLET_FROZEN_TIME", &self.frozen_time)
            .envs(vars.iter().map(|(k, v)| (*k, v.as_str())))
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                return FolderRun {
                    end: FolderEnd::NotStarted(
                        self.redactor
                            .redact(&format!("cannot start `{}`: {e}", self.shown))
                            .into_owned(),
                    ),
                    stdout: String::new(),
                    stderr: String::new(),
                    output_bytes: 0,
                    elapsed: started.elapsed(),
                };
            }
        };
        let mut group = ProcessGroup::of(&child);
        let stdin = child.stdin.take();
        let input = input.to_vec();
        let feed = tokio::spawn(async move {
            if let Some(mut s) = stdin {
                let _ = s.write_all(&input).await;
                let _ = s.shutdown().await;
            }
        });
        let out = tokio::spawn(drain(child.stdout.take().expect("piped"), false));
        let err = tokio::spawn(drain(child.stderr.take().expect("piped"), true));
        let end = match tokio::time::timeout(limit, child.wait()).await {
            Ok(Ok(status)) => match status.code() {
                Some(c) => FolderEnd::Exited(c),
                None => FolderEnd::Killed,
            },
            Ok(Err(e)) => FolderEnd::NotStarted(format!("waiting for the process failed: {e}")),
            Err(_) => {
                let _ = child.start_kill();
                FolderEnd::TimedOut
            }
        };
        // Whatever it left running goes with the group; then the pipes close.
        group.kill();
        feed.abort();
        let grab = |h: JoinHandle<(Vec<u8>, u64)>| async move {
            tokio::time::timeout(EXIT_WAIT, h)
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default()
        };
        let (so, so_n) = grab(out).await;
        let (se, se_n) = grab(err).await;
        FolderRun {
            end,
            stdout: self
                .redactor
                .redact(&String::from_utf8_lossy(&so))
                .into_owned(),
            stderr: self
                .redactor
                .redact(&String::from_utf8_lossy(&se))
                .into_owned(),
            output_bytes: so_n + se_n,
            elapsed: started.elapsed(),
        }
    }
}
