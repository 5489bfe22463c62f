//! The built-in coding loop: [`CodingLoop`] drives a [`ChatModel`] through one coding step
//! (a checkpoint of a trajectory, a task of `impact task`) with file tools confined to a
//! workspace folder ([`Sandbox`]), and returns what happened as a [`LoopRun`] (how it
//! ended, tokens, cost, the trace of its model and tool calls).
//!
//! The loop owns the sandbox rules, because the model is untrusted: every path is relative
//! to the workspace; absolute paths, `..` components and symlinks resolving outside are
//! refused, as are reads of anything but a regular file and reads or writes over the size
//! limits. A refusal is the tool's result (an error the model reads and the trace records),
//! never a crash of the run. There is no shell tool: the loop cannot run commands, so the
//! tests (run by gauntlet outside the workspace) stay out of its reach.
//!
//! Each call of [`CodingLoop::run_in`] is a fresh conversation: only the workspace carries
//! what earlier steps decided, as for a fresh agent process.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gauntlet_core::cost::PriceTable;
use gauntlet_core::redact::Redactor;
use gauntlet_core::suite::Case;
use gauntlet_core::target::{TargetError, TrialContext};
use gauntlet_core::tools::{SideEffectClass, ToolDef};
use gauntlet_core::trace::{
    Approval, Message, ToolCallRequest, ToolSpanInput, Trace, TraceRecorder, Usage,
};
use serde_json::{Value, json};

use crate::chat::{ChatModel, ChatReply, ChatRequest, says_nothing};

/// Model calls one step gets unless told otherwise.
pub const DEFAULT_CODING_STEPS: u32 = 30;
/// Largest file `read_file` returns (and `search_files` reads), bytes.
pub const READ_LIMIT: u64 = 256 << 10;
/// Largest content `write_file` writes, bytes.
pub const WRITE_LIMIT: usize = 256 << 10;
/// Bytes of message text, tool arguments and tool outputs one step's trace keeps; past it,
/// each text is replaced by a note of its size. The model's conversation is not cut (the
/// model reads it whole); only what is written down is.
pub const TRACE_CAP: u64 = 32 << 20;
/// Entries `list_files` shows at most.
const LIST_LIMIT: usize = 2000;
/// Matches `search_files` shows at most.
const SEARCH_LIMIT: usize = 200;

/// The system prompt of every step.
pub const SYSTEM_PROMPT: &str = "You are a coding agent working in a workspace folder. \
Make the change the user asks for by editing files with your tools: list_files, read_file, \
write_file (creates or replaces a whole file), delete_file and search_files. Every path is \
relative to the workspace root; absolute paths, `..` and symlinks leading out of the \
workspace are refused. You cannot run commands or tests: read the code carefully instead. \
Files from earlier changes are in the workspace; keep what they do working unless the \
change says otherwise. When the change is complete, reply with a short summary and no tool \
call.";

/// How a step of the loop ended.
#[derive(Debug, Clone, PartialEq)]
pub enum LoopEnd {
    /// The model answered without asking for a tool: it says it is done.
    Finished,
    /// The model was still calling tools when the step limit was reached.
    StepLimit,
    /// A model call failed, or the model replied with nothing (a protocol error).
    ModelError {
        /// `blocked`, `timeout`, `transport`, `protocol` or `harness`.
        class: &'static str,
        /// What went wrong, redacted.
        detail: String,
    },
    /// The step's time limit ran out.
    TimedOut,
}

/// What one step of the loop gave.
#[derive(Debug, Clone)]
pub struct LoopRun {
    /// How it ended.
    pub end: LoopEnd,
    /// Model calls that returned a reply.
    pub steps: u32,
    /// Tokens of those calls, summed.
    pub usage: Usage,
    /// Their cost from the price table; `None` when a model had no price (unknown, not 0)
    /// or no call returned.
    pub cost_usd: Option<f64>,
    /// Bytes the model produced: reply text and tool-call arguments.
    pub output_bytes: u64,
    /// Tool calls the sandbox refused or that failed.
    pub tool_errors: u32,
    /// Wall time.
    pub elapsed: Duration,
    /// The model calls and tool calls, as a run's trace records them: each model call
    /// holds the messages since the call before it ([`gauntlet_core::trace::LlmSpan::continues`]).
    pub trace: Trace,
    /// Bytes of text the trace did not keep, once it reached its cap ([`TRACE_CAP`]).
    pub trace_elided_bytes: u64,
}

/// A chat model driven through the coding loop.
pub struct CodingLoop {
    model: Arc<dyn ChatModel>,
    max_steps: u32,
    prices: PriceTable,
    redactor: Redactor,
    trace_cap: u64,
}

impl CodingLoop {
    /// A loop over `model` with at most `max_steps` model calls per step, costs from
    /// `prices`, and `redactor` (holding the model's API key) applied to every error.
    pub fn new(
        model: Arc<dyn ChatModel>,
        max_steps: u32,
        prices: PriceTable,
        redactor: Redactor,
    ) -> Self {
        Self {
            model,
            max_steps: max_steps.max(1),
            prices,
            redactor,
            trace_cap: TRACE_CAP,
        }
    }

    /// The same loop keeping at most `cap` bytes of text in each step's trace.
    pub fn with_trace_cap(mut self, cap: u64) -> Self {
        self.trace_cap = cap;
        self
    }

    /// The step limit.
    pub fn max_steps(&self) -> u32 {
        self.max_steps
    }

    /// Runs one step: a fresh conversation (the system prompt, then `task` as the user
    /// message) working on `workspace`, within `limit`. `session` names the step (a
    /// checkpoint or task id).
    pub async fn run_in(
        &self,
        workspace: &Path,
        task: &str,
        session: &str,
        limit: Duration,
    ) -> LoopRun {
        let started = Instant::now();
        let mut rec = StepTrace::new(self.trace_cap);
        let mut tally = Tally::default();
        let end = match Sandbox::new(workspace) {
            Err(e) => LoopEnd::ModelError {
                class: "harness",
                detail: format!("the workspace cannot be used: {e}"),
            },
            Ok(sandbox) => {
                let drive = self.drive(&sandbox, task, session, &mut rec, &mut tally);
                tokio::time::timeout(limit, drive)
                    .await
                    .unwrap_or(LoopEnd::TimedOut)
            }
        };
        LoopRun {
            end,
            steps: tally.steps,
            usage: tally.usage,
            cost_usd: if tally.steps == 0 || tally.unpriced {
                None
            } else {
                Some(tally.cost)
            },
            output_bytes: tally.output_bytes,
            tool_errors: tally.tool_errors,
            elapsed: started.elapsed(),
            trace_elided_bytes: rec.elided,
            trace: rec.rec.finish(),
        }
    }

    async fn drive(
        &self,
        sandbox: &Sandbox,
        task: &str,
        session: &str,
        rec: &mut StepTrace,
        tally: &mut Tally,
    ) -> LoopEnd {
        let case: Case = match serde_json::from_value(json!({
            "id": session,
            "input": task,
        })) {
            Ok(c) => c,
            Err(e) => {
                return LoopEnd::ModelError {
                    class: "harness",
                    detail: format!("failed to build the step: {e}"),
                };
            }
        };
        let tools = tool_defs();
        let ctx = TrialContext {
            case: &case,
            system_prompt: Some(SYSTEM_PROMPT),
            tools: &tools,
            trial: 0,
            seed: 0,
            session_id: format!("coding-loop-{session}"),
        };
        let mut history = vec![Message::system(SYSTEM_PROMPT), Message::user(task)];
        for _ in 0..self.max_steps {
            let call_started = Instant::now();
            let reply = self
                .model
                .complete(
                    &ctx,
                    ChatRequest {
                        messages: &history,
                        tools: &tools,
                    },
                    &mut rec.rec,
                )
                .await;
            let reply = match reply {
                Ok(r) => r,
                Err(e) => return self.model_error(e),
            };
            tally.steps += 1;
            tally.usage.input_tokens += reply.usage.input_tokens;
            tally.usage.output_tokens += reply.usage.output_tokens;
            match reply.model.as_deref().and_then(|m| self.prices.price(m)) {
                Some(p) => tally.cost += p.cost(reply.usage),
                None => tally.unpriced = true,
            }
            tally.output_bytes += reply.message.content.len() as u64
                + reply
                    .message
                    .tool_calls
                    .iter()
                    .map(|c| c.arguments.to_string().len() as u64)
                    .sum::<u64>();
            rec.model_call(&history, &reply, call_started.elapsed());
            if reply.finish_reason.as_deref() == Some("content_filter") {
                return LoopEnd::ModelError {
                    class: "blocked",
                    detail: "finish_reason: content_filter".into(),
                };
            }
            // Models that do not check for it themselves (fakes): nothing is not an answer.
            if says_nothing(&reply.message) {
                return LoopEnd::ModelError {
                    class: "protocol",
                    detail: "the model replied with nothing: no text and no tool call".into(),
                };
            }
            let calls = reply.message.tool_calls.clone();
            let answer = reply.message.content.clone();
            history.push(reply.message);
            if calls.is_empty() {
                let answer = rec.keep(answer);
                rec.rec.turn(
                    task.to_owned(),
                    answer,
                    reply.finish_reason.as_deref() == Some("length"),
                );
                return LoopEnd::Finished;
            }
            for call in &calls {
                let t = Instant::now();
                // The model reads a refusal as the tool's result; the span keeps it as an error.
                let (output, error, text) = match sandbox.call(call) {
                    Ok(out) => (Some(out.clone()), None, out),
                    Err(e) => {
                        tally.tool_errors += 1;
                        let text = format!("error: {e}");
                        (None, Some(e), text)
                    }
                };
                let output = output.map(|o| rec.keep(o));
                let arguments = rec.keep_value(&call.arguments);
                rec.rec.tool_call(ToolSpanInput {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    arguments,
                    output,
                    error,
                    duration_ms: t.elapsed().as_millis() as u64,
                    approval: Approval::NotRequired,
                    side_effect: None,
                });
                history.push(Message::tool_result(&call.id, &call.name, text));
            }
        }
        LoopEnd::StepLimit
    }

    fn model_error(&self, e: TargetError) -> LoopEnd {
        let (class, detail) = match e {
            TargetError::Blocked(d) => ("blocked", d),
            TargetError::Timeout(d) => ("timeout", d),
            TargetError::Transport(d) => ("transport", d),
            TargetError::Protocol(d) => ("protocol", d),
            TargetError::Harness(d) => ("harness", d),
        };
        LoopEnd::ModelError {
            class,
            detail: self.redactor.redact(&detail).into_owned(),
        }
    }
}

/// The trace of one step, kept linear in the conversation: each model call's span holds
/// only the messages since the call before it (the conversation is sent whole at every
/// call, and copying it into every span made a long step's trace grow with its square),
/// and once the step has kept `cap` bytes of text, each further text is replaced by a note
/// of its size.
struct StepTrace {
    rec: TraceRecorder,
    /// Messages of the conversation already held by a span (a call's messages in and its
    /// reply).
    held: usize,
    /// The last model call recorded.
    last: Option<u32>,
    kept: u64,
    cap: u64,
    elided: u64,
}

impl StepTrace {
    fn new(cap: u64) -> Self {
        Self {
            rec: TraceRecorder::new(),
            held: 0,
            last: None,
            kept: 0,
            cap,
            elided: 0,
        }
    }

    /// `text`, or a note of its size once the cap is reached.
    fn keep(&mut self, text: String) -> String {
        let n = text.len() as u64;
        if self.kept + n <= self.cap {
            self.kept += n;
            return text;
        }
        self.elided += n;
        format!(
            "[{n} bytes not kept: this step's trace reached its {} byte cap]",
            self.cap
        )
    }

    /// Tool arguments, or a note of their size (as a JSON string) once the cap is reached.
    fn keep_value(&mut self, value: &Value) -> Value {
        let n = value.to_string().len() as u64;
        if self.kept + n <= self.cap {
            self.kept += n;
            return value.clone();
        }
        Value::String(self.keep(value.to_string()))
    }

    fn keep_message(&mut self, m: &Message) -> Message {
        let mut m = m.clone();
        m.content = self.keep(std::mem::take(&mut m.content));
        for call in &mut m.tool_calls {
            call.arguments = self.keep_value(&call.arguments);
        }
        m
    }

    /// Records a model call: the messages of `history` no span holds yet, and the reply.
    fn model_call(&mut self, history: &[Message], reply: &ChatReply, took: Duration) {
        let new: Vec<Message> = history[self.held.min(history.len())..]
            .iter()
            .map(|m| self.keep_message(m))
            .collect();
        let out = self.keep_message(&reply.message);
        let id = self.rec.llm_call(
            reply.model.clone(),
            new,
            out,
            reply.usage,
            took.as_millis() as u64,
            reply.finish_reason.clone(),
            reply.attempts,
        );
        if let Some(earlier) = self.last {
            self.rec.continue_last_llm(earlier);
        }
        self.last = Some(id);
        // The reply joins the conversation next, and this span holds it.
        self.held = history.len() + 1;
    }
}

#[derive(Default)]
struct Tally {
    steps: u32,
    usage: Usage,
    cost: f64,
    unpriced: bool,
    output_bytes: u64,
    tool_errors: u32,
}

fn tool(name: &str, description: &str, parameters: Value, effect: SideEffectClass) -> ToolDef {
    ToolDef {
        side_effect: effect,
        ..ToolDef::declared(name, description, parameters)
    }
}

/// The loop's tools, as the model sees them.
pub fn tool_defs() -> Vec<ToolDef> {
    let path = |what: &str| json!({"type": "string", "description": what});
    vec![
        tool(
            "list_files",
            "List the files and folders under a folder of the workspace (default: the whole workspace), recursively.",
            json!({"type": "object", "properties": {"path": path("folder, relative to the workspace")}}),
            SideEffectClass::ReadOnly,
        ),
        tool(
            "read_file",
            "Read a text file of the workspace (at most 256 KiB).",
            json!({"type": "object", "properties": {"path": path("file, relative to the workspace")}, "required": ["path"]}),
            SideEffectClass::ReadOnly,
        ),
        tool(
            "write_file",
            "Create or replace a file of the workspace with the whole content given (at most 256 KiB); folders are created as needed.",
            json!({"type": "object", "properties": {"path": path("file, relative to the workspace"), "content": {"type": "string", "description": "the file's whole new content"}}, "required": ["path", "content"]}),
            SideEffectClass::Write,
        ),
        tool(
            "delete_file",
            "Delete a file of the workspace.",
            json!({"type": "object", "properties": {"path": path("file, relative to the workspace")}, "required": ["path"]}),
            SideEffectClass::Write,
        ),
        tool(
            "search_files",
            "Find the lines containing a text (exact, case-sensitive) in the files under a folder (default: the whole workspace).",
            json!({"type": "object", "properties": {"pattern": {"type": "string", "description": "the text to find"}, "path": path("folder, relative to the workspace")}, "required": ["pattern"]}),
            SideEffectClass::ReadOnly,
        ),
    ]
}

/// The file tools over one workspace folder, and the rules that keep them inside it.
#[derive(Debug)]
pub struct Sandbox {
    root: PathBuf,
}

impl Sandbox {
    /// A sandbox over `root` (which must exist; its symlinks are resolved once, here).
    pub fn new(root: &Path) -> std::io::Result<Self> {
        Ok(Self {
            root: std::fs::canonicalize(root)?,
        })
    }

    /// Runs one tool call: its output, or the error handed to the model.
    pub fn call(&self, call: &ToolCallRequest) -> Result<String, String> {
        if call.malformed || !call.arguments.is_object() {
            return Err("the arguments are not a JSON object".into());
        }
        let a = &call.arguments;
        let arg = |k: &str| a.get(k).and_then(Value::as_str);
        let need = |k: &str| arg(k).ok_or_else(|| format!("missing string argument `{k}`"));
        match call.name.as_str() {
            "list_files" => self.list(arg("path").unwrap_or(".")),
            "read_file" => self.read(need("path")?),
            "write_file" => self.write(need("path")?, need("content")?),
            "delete_file" => self.delete(need("path")?),
            "search_files" => self.search(need("pattern")?, arg("path").unwrap_or(".")),
            other => Err(format!(
                "no tool `{other}`; the tools are list_files, read_file, write_file, delete_file and search_files (there is no shell)"
            )),
        }
    }

    /// The real path of a workspace-relative `rel`, or why it is refused: not relative,
    /// leaving by `..`, or through a symlink whose target lies outside (or nowhere).
    pub fn resolve(&self, rel: &str) -> Result<PathBuf, String> {
        if rel.contains('\0') {
            return Err("a path cannot contain a NUL byte".into());
        }
        let p = Path::new(rel);
        let mut clean = PathBuf::new();
        for c in p.components() {
            match c {
                Component::Normal(n) => clean.push(n),
                Component::CurDir => {}
                Component::ParentDir => {
                    return Err(format!(
                        "`{rel}`: `..` is refused; paths stay inside the workspace"
                    ));
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(format!(
                        "`{rel}`: absolute paths are refused; give a path relative to the workspace"
                    ));
                }
            }
        }
        // The longest part that exists (a dangling symlink counts) is resolved, symlinks
        // and all; the rest are plain names that do not exist yet.
        let mut existing = self.root.join(&clean);
        let mut rest = Vec::new();
        while std::fs::symlink_metadata(&existing).is_err() {
            match (
                existing.file_name().map(ToOwned::to_owned),
                existing.parent(),
            ) {
                (Some(name), Some(parent)) if existing != self.root => {
                    rest.push(name);
                    existing = parent.to_path_buf();
                }
                _ => return Err(format!("`{rel}`: the workspace is gone")),
            }
        }
        let real = std::fs::canonicalize(&existing)
            .map_err(|_| format!("`{rel}`: a symlink that leads nowhere is refused"))?;
        if !real.starts_with(&self.root) {
            return Err(format!(
                "`{rel}`: it leads outside the workspace (through a symlink); refused"
            ));
        }
        Ok(rest.into_iter().rev().fold(real, |p, n| p.join(n)))
    }

    fn shown(&self, p: &Path) -> String {
        let rel = p.strip_prefix(&self.root).unwrap_or(p);
        if rel.as_os_str().is_empty() {
            ".".into()
        } else {
            rel.display().to_string()
        }
    }

    fn list(&self, rel: &str) -> Result<String, String> {
        let dir = self.resolve(rel)?;
        if !dir.is_dir() {
            return Err(format!("`{rel}` is not a folder"));
        }
        let mut lines = Vec::new();
        let mut more = 0usize;
        let mut stack = vec![dir];
        while let Some(d) = stack.pop() {
            let mut entries: Vec<_> = std::fs::read_dir(&d)
                .map_err(|e| format!("cannot list `{}`: {e}", self.shown(&d)))?
                .flatten()
                .collect();
            entries.sort_by_key(|e| e.file_name());
            // Folders are pushed in reverse, so that they come out in order.
            let mut dirs = Vec::new();
            for e in entries {
                let Ok(ty) = e.file_type() else { continue };
                let path = e.path();
                if lines.len() >= LIST_LIMIT {
                    more += 1;
                    continue;
                }
                if ty.is_dir() {
                    lines.push(format!("{}/", self.shown(&path)));
                    dirs.push(path);
                } else if ty.is_symlink() {
                    lines.push(format!("{} (symlink)", self.shown(&path)));
                } else if ty.is_file() {
                    let len = e.metadata().map(|m| m.len()).unwrap_or(0);
                    lines.push(format!("{} ({len} bytes)", self.shown(&path)));
                } else {
                    lines.push(format!("{} (not a regular file)", self.shown(&path)));
                }
            }
            stack.extend(dirs.into_iter().rev());
        }
        if lines.is_empty() {
            return Ok("(empty)".into());
        }
        if more > 0 {
            lines.push(format!("... and {more} more"));
        }
        Ok(lines.join("\n"))
    }

    /// A regular file's text, within the read limit.
    fn text_of(&self, path: &Path, rel: &str) -> Result<String, String> {
        let meta = std::fs::metadata(path).map_err(|e| format!("cannot read `{rel}`: {e}"))?;
        if !meta.is_file() {
            return Err(format!(
                "`{rel}` is not a regular file; only regular files are read"
            ));
        }
        if meta.len() > READ_LIMIT {
            return Err(format!(
                "`{rel}` has {} bytes, over the read limit of {READ_LIMIT}",
                meta.len()
            ));
        }
        let bytes = std::fs::read(path).map_err(|e| format!("cannot read `{rel}`: {e}"))?;
        String::from_utf8(bytes).map_err(|_| format!("`{rel}` is not UTF-8 text"))
    }

    fn read(&self, rel: &str) -> Result<String, String> {
        let path = self.resolve(rel)?;
        self.text_of(&path, rel)
    }

    fn write(&self, rel: &str, content: &str) -> Result<String, String> {
        if content.len() > WRITE_LIMIT {
            return Err(format!(
                "the content has {} bytes, over the write limit of {WRITE_LIMIT}",
                content.len()
            ));
        }
        let path = self.resolve(rel)?;
        if path == self.root {
            return Err("give a file's path, not the workspace".into());
        }
        if let Ok(m) = std::fs::symlink_metadata(&path)
            && !m.is_file()
        {
            return Err(format!("`{rel}` exists and is not a regular file; refused"));
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("cannot write `{rel}`: {e}"))?;
        }
        std::fs::write(&path, content).map_err(|e| format!("cannot write `{rel}`: {e}"))?;
        Ok(format!(
            "wrote {} bytes to {}",
            content.len(),
            self.shown(&path)
        ))
    }

    fn delete(&self, rel: &str) -> Result<String, String> {
        let path = self.resolve(rel)?;
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_file() => {
                std::fs::remove_file(&path).map_err(|e| format!("cannot delete `{rel}`: {e}"))?;
                Ok(format!("deleted {}", self.shown(&path)))
            }
            Ok(_) => Err(format!(
                "`{rel}` is not a regular file; only files are deleted"
            )),
            Err(_) => Err(format!("`{rel}` does not exist")),
        }
    }

    fn search(&self, pattern: &str, rel: &str) -> Result<String, String> {
        if pattern.is_empty() {
            return Err("give a non-empty pattern".into());
        }
        let dir = self.resolve(rel)?;
        if !dir.is_dir() {
            return Err(format!("`{rel}` is not a folder"));
        }
        let mut hits = Vec::new();
        let mut stack = vec![dir];
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            let mut entries: Vec<_> = rd.flatten().collect();
            entries.sort_by_key(|e| std::cmp::Reverse(e.file_name()));
            for e in entries {
                let Ok(ty) = e.file_type() else { continue };
                let path = e.path();
                if ty.is_dir() {
                    stack.push(path);
                } else if ty.is_file() {
                    // Files over the limit or not text are skipped, as a reader would.
                    let Ok(text) = self.text_of(&path, "") else {
                        continue;
                    };
                    for (n, line) in text.lines().enumerate() {
                        if line.contains(pattern) {
                            if hits.len() >= SEARCH_LIMIT {
                                hits.push(format!("... stopped at {SEARCH_LIMIT} matches"));
                                return Ok(hits.join("\n"));
                            }
                            let line: String = line.chars().take(200).collect();
                            hits.push(format!("{}:{}: {line}", self.shown(&path), n + 1));
                        }
                    }
                }
            }
        }
        if hits.is_empty() {
            return Ok("no match".into());
        }
        Ok(hits.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gauntlet_core::event::{EvidenceLevel, SideEffectMode};
    use gauntlet_core::target::{BoxFuture, TargetInfo};
    use gauntlet_core::trace::{Role, Span};

    /// A model that writes a `size`-byte file at every call, `calls` times, then says done:
    /// a long step whose conversation grows by `size` bytes a call.
    struct Writer {
        size: usize,
        calls: usize,
    }

    impl ChatModel for Writer {
        fn info(&self) -> TargetInfo {
            TargetInfo {
                kind: "test".into(),
                label: "writer".into(),
                model: None,
                base_url: None,
                settings: Default::default(),
                evidence_level: EvidenceLevel::Static,
                side_effects: SideEffectMode::Simulated,
            }
        }

        fn complete<'a>(
            &'a self,
            _ctx: &'a TrialContext<'a>,
            req: ChatRequest<'a>,
            _rec: &'a mut TraceRecorder,
        ) -> BoxFuture<'a, Result<ChatReply, TargetError>> {
            let done = req.messages.iter().filter(|m| m.role == Role::Tool).count();
            Box::pin(async move {
                let mut message = Message::assistant("");
                if done < self.calls {
                    message.tool_calls.push(ToolCallRequest {
                        id: format!("w{done}"),
                        name: "write_file".into(),
                        arguments: json!({"path": format!("f{done}.txt"), "content": "x".repeat(self.size)}),
                        malformed: false,
                    });
                } else {
                    message.content = "Done.".into();
                }
                Ok(ChatReply {
                    message,
                    model: Some("writer".into()),
                    usage: Usage::default(),
                    finish_reason: None,
                    attempts: 1,
                    agent: None,
                    cached: false,
                })
            })
        }
    }

    fn writer_loop(size: usize, calls: usize, cap: u64) -> (LoopRun, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let model: Arc<dyn ChatModel> = Arc::new(Writer { size, calls });
        let lp = CodingLoop::new(model, 100, PriceTable::default(), Redactor::default())
            .with_trace_cap(cap);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let run = rt.block_on(lp.run_in(dir.path(), "write files", "s", Duration::from_secs(60)));
        (run, dir)
    }

    #[test]
    fn a_long_step_stores_each_message_once() {
        // 60 calls writing 20 KB each: 1.2 MB of arguments, held twice (the model's reply
        // and the tool call's span), so 2.4 MB. Copying the conversation into every span
        // wrote about 60 x 60 / 2 x 20 KB = 36 MB.
        let (run, _dir) = writer_loop(20_000, 60, TRACE_CAP);
        assert_eq!(run.end, LoopEnd::Finished);
        let written = serde_json::to_string(&run.trace).unwrap().len();
        assert!(written < 3 * 60 * 20_000, "trace is {written} bytes");
        assert_eq!(run.trace_elided_bytes, 0);
        // The last call's whole conversation is there, in order: the system prompt, the
        // task, then each write and its result.
        let last = run.trace.llm_calls().last().unwrap();
        let conv = run.trace.conversation(last.id).unwrap();
        assert_eq!(conv.len(), 2 + 2 * 60);
        assert_eq!(conv[1].content, "write files");
        assert_eq!(conv[2 + 2 * 59].tool_calls[0].id, "w59");
        assert_eq!(conv.last().unwrap().role, Role::Tool);
        // Every later call continues the one before it.
        let ids: Vec<u32> = run.trace.llm_calls().map(|l| l.id).collect();
        for pair in ids.windows(2) {
            let l = run.trace.llm_calls().find(|l| l.id == pair[1]).unwrap();
            assert_eq!(l.continues, Some(pair[0]));
        }
    }

    #[test]
    fn the_trace_of_a_step_stops_keeping_text_at_its_cap() {
        let (run, _dir) = writer_loop(20_000, 60, 200_000);
        assert_eq!(run.end, LoopEnd::Finished);
        let written = serde_json::to_string(&run.trace).unwrap().len();
        assert!(written < 300_000, "trace is {written} bytes");
        assert!(
            run.trace_elided_bytes > 900_000,
            "{}",
            run.trace_elided_bytes
        );
        let text = serde_json::to_string(&run.trace).unwrap();
        assert!(text.contains("bytes not kept: this step's trace reached its 200000 byte cap"));
        // The files were still written: the cap is on the record, not on the work.
        assert!(_dir.path().join("f59.txt").exists());
        let spans = run
            .trace
            .spans
            .iter()
            .filter(|s| matches!(s, Span::ToolCall(_)));
        assert_eq!(spans.count(), 60);
    }

    fn call(name: &str, args: Value) -> ToolCallRequest {
        ToolCallRequest {
            id: "c".into(),
            name: name.into(),
            arguments: args,
            malformed: false,
        }
    }

    #[test]
    fn paths_stay_inside_the_workspace() {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path().join("ws");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::write(t.path().join("outside.txt"), "secret").unwrap();
        let sb = Sandbox::new(&ws).unwrap();
        for bad in ["../outside.txt", "/etc/passwd", "src/../../outside.txt"] {
            let e = sb
                .call(&call("read_file", json!({"path": bad})))
                .unwrap_err();
            assert!(e.contains("refused"), "{bad}: {e}");
            let e = sb
                .call(&call("write_file", json!({"path": bad, "content": "x"})))
                .unwrap_err();
            assert!(e.contains("refused"), "{bad}: {e}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(t.path(), ws.join("out")).unwrap();
            std::os::unix::fs::symlink(t.path().join("nothing"), ws.join("dangling")).unwrap();
            std::os::unix::fs::symlink(ws.join("src"), ws.join("inside")).unwrap();
            let e = sb
                .call(&call(
                    "write_file",
                    json!({"path": "out/new.txt", "content": "x"}),
                ))
                .unwrap_err();
            assert!(e.contains("outside the workspace"), "{e}");
            assert!(!t.path().join("new.txt").exists());
            let e = sb
                .call(&call("read_file", json!({"path": "out/outside.txt"})))
                .unwrap_err();
            assert!(e.contains("outside"), "{e}");
            let e = sb
                .call(&call(
                    "write_file",
                    json!({"path": "dangling", "content": "x"}),
                ))
                .unwrap_err();
            assert!(e.contains("leads nowhere"), "{e}");
            assert!(!t.path().join("nothing").exists());
            // A symlink that stays inside is followed.
            sb.call(&call(
                "write_file",
                json!({"path": "inside/a.py", "content": "1"}),
            ))
            .unwrap();
            assert_eq!(std::fs::read_to_string(ws.join("src/a.py")).unwrap(), "1");
        }
        assert_eq!(
            std::fs::read_to_string(t.path().join("outside.txt")).unwrap(),
            "secret"
        );
    }

    #[test]
    fn files_are_read_written_listed_searched_and_deleted_within_limits() {
        let t = tempfile::tempdir().unwrap();
        let sb = Sandbox::new(t.path()).unwrap();
        let out = sb
            .call(&call(
                "write_file",
                json!({"path": "pkg/mod.py", "content": "def f():\n    return 1\n"}),
            ))
            .unwrap();
        assert!(out.contains("pkg/mod.py"), "{out}");
        assert_eq!(
            sb.call(&call("read_file", json!({"path": "./pkg/mod.py"})))
                .unwrap(),
            "def f():\n    return 1\n"
        );
        let listed = sb.call(&call("list_files", json!({}))).unwrap();
        assert_eq!(listed, "pkg/\npkg/mod.py (22 bytes)");
        let found = sb
            .call(&call("search_files", json!({"pattern": "return"})))
            .unwrap();
        assert_eq!(found, "pkg/mod.py:2:     return 1");
        let e = sb
            .call(&call("read_file", json!({"path": "pkg"})))
            .unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        std::fs::write(t.path().join("big"), vec![b'a'; READ_LIMIT as usize + 1]).unwrap();
        let e = sb
            .call(&call("read_file", json!({"path": "big"})))
            .unwrap_err();
        assert!(e.contains("over the read limit"), "{e}");
        let e = sb
            .call(&call(
                "write_file",
                json!({"path": "w", "content": "a".repeat(WRITE_LIMIT + 1)}),
            ))
            .unwrap_err();
        assert!(e.contains("over the write limit"), "{e}");
        assert!(!t.path().join("w").exists());
        let e = sb
            .call(&call("delete_file", json!({"path": "pkg"})))
            .unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
        sb.call(&call("delete_file", json!({"path": "pkg/mod.py"})))
            .unwrap();
        assert!(!t.path().join("pkg/mod.py").exists());
        let e = sb
            .call(&call("run_shell", json!({"cmd": "ls"})))
            .unwrap_err();
        assert!(e.contains("no shell"), "{e}");
        let mut bad = call("read_file", json!("not json"));
        bad.malformed = true;
        assert!(sb.call(&bad).is_err());
    }
}
