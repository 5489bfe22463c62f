//! Reading traces captured elsewhere, for `gauntlet grade`: gauntlet's JSON-lines trace
//! format ([`gauntlet_core::capture::CapturedTrace`]), the recording proxy's JSON lines, and
//! OTLP JSON exports of GenAI spans ([`otlp`]); and matching them to suite cases
//! ([`matching::Matcher`]). The main entry point is [`read_file`].
//!
//! Input is untrusted and may be large. Files are streamed: a JSON-lines file one line at a
//! time (a line longer than [`MAX_LINE`] is reported and skipped, never buffered whole), an
//! OTLP document one span at a time. A line that cannot be read becomes a [`Diagnostic`] with
//! its file, line and column and a hint, and reading goes on with the next line, so that one
//! bad line loses nothing else.

pub mod matching;
pub mod otlp;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use gauntlet_core::capture::{
    CapturedTrace, CapturedTrial, tool_spans_from_conversation, turns_from_conversation, value_text,
};
use gauntlet_core::result::Outcome;
use gauntlet_core::trace::{
    LlmSpan, Message, Role, Span, ToolSpan, Trace, TransportEvent, TurnRecord,
};
use serde::Deserialize;

use crate::Diagnostic;

/// The longest line read (bytes). A longer line is reported and skipped.
pub const MAX_LINE: usize = 64 * 1024 * 1024;

/// Which format a file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Decide from the file's first object.
    Auto,
    /// OTLP JSON (`ExportTraceServiceRequest`), one document or one per line.
    Otlp,
    /// The recording proxy's JSON lines.
    Proxy,
    /// gauntlet's JSON-lines trace format.
    Jsonl,
}

impl Format {
    /// Reads `auto`, `otlp`, `proxy` or `jsonl`.
    pub fn parse(s: &str) -> Option<Format> {
        Some(match s {
            "auto" => Format::Auto,
            "otlp" => Format::Otlp,
            "proxy" => Format::Proxy,
            "jsonl" | "gauntlet" => Format::Jsonl,
            _ => return None,
        })
    }

    /// The name used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Otlp => "otlp",
            Format::Proxy => "proxy",
            Format::Jsonl => "jsonl",
        }
    }
}

/// One trace read from a file.
#[derive(Debug, Clone)]
pub struct ReadTrace {
    /// Where it was read: `FILE:LINE`.
    pub source: String,
    /// The trial it was.
    pub trial: CapturedTrial,
}

/// What reading one file found, besides its traces.
#[derive(Debug, Default)]
pub struct FileStats {
    /// The format it was read as.
    pub format: Option<Format>,
    /// Traces read.
    pub traces: usize,
    /// Objects that could not be read (each also reported as a diagnostic).
    pub malformed: usize,
    /// Traces that were read but hold nothing to grade, and spans that came too late to
    /// join their trace: each with why. Reported with the unmatched traces, never dropped.
    pub skipped: Vec<String>,
}

/// Reads one file of captured traces, handing each trace to `on_trace` and each problem to
/// `on_diag`, in file order. Only a file that cannot be opened at all is an `Err`.
pub fn read_file(
    path: &Path,
    format: Format,
    wanted_attrs: &[String],
    on_trace: &mut dyn FnMut(ReadTrace),
    on_diag: &mut dyn FnMut(Diagnostic),
) -> Result<FileStats, Diagnostic> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| {
        Diagnostic::file(&name, format!("cannot read `{name}`: {e}")).hint(
            "pass files of captured traces: OTLP JSON, proxy recordings or gauntlet JSON lines",
        )
    })?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let format = match format {
        Format::Auto => detect(&mut reader)
            .map_err(|e| Diagnostic::file(&name, format!("cannot read `{name}`: {e}")))?,
        f => f,
    };
    let mut stats = FileStats {
        format: Some(format),
        ..FileStats::default()
    };
    match format {
        Format::Otlp => otlp::read(&name, reader, wanted_attrs, &mut stats, on_trace, on_diag)
            .map_err(|e| Diagnostic::file(&name, format!("cannot read `{name}`: {e}")))?,
        Format::Proxy | Format::Jsonl | Format::Auto => {
            let mut lines = Lines::new(reader);
            loop {
                let line = match lines.next_line() {
                    Ok(Some(l)) => l,
                    Ok(None) => break,
                    Err(e) => {
                        on_diag(Diagnostic::file(
                            &name,
                            format!("cannot read `{name}`: {e}"),
                        ));
                        stats.malformed += 1;
                        break;
                    }
                };
                let (no, text) = match line {
                    Line::TooLong(no) => {
                        stats.malformed += 1;
                        on_diag(
                            Diagnostic::at(
                                &name,
                                None,
                                no,
                                1,
                                format!("line is longer than {} MiB", MAX_LINE >> 20),
                            )
                            .hint(
                                "one trace per line; split the exchange or drop its large payloads",
                            ),
                        );
                        continue;
                    }
                    Line::Text(no, text) => (no, text),
                };
                if text.trim().is_empty() {
                    continue;
                }
                let parsed = line_trace(format, &text, no);
                match parsed {
                    Ok(trial) => {
                        stats.traces += 1;
                        on_trace(ReadTrace {
                            source: format!("{name}:{no}"),
                            trial,
                        });
                    }
                    Err(LineError {
                        column,
                        message,
                        hint,
                    }) => {
                        stats.malformed += 1;
                        on_diag(diag_at(&name, &text, no, column, message, hint));
                    }
                }
            }
        }
    }
    Ok(stats)
}

/// A diagnostic on one line of a file, with the line (clipped) as its snippet.
pub(crate) fn diag_at(
    file: &str,
    text: &str,
    line: usize,
    column: usize,
    message: String,
    hint: String,
) -> Diagnostic {
    // The snippet is a window around the column, so a huge line costs nothing to show.
    let mut d = Diagnostic::at(file, Some(text), 1, column, message).hint(hint);
    d.line = line;
    d
}

/// Decides a file's format from the start of its first object: `resourceSpans` is OTLP, a
/// `session` key at the top of an object with `spans` is a proxy recording, anything else is
/// gauntlet's format.
fn detect(reader: &mut BufReader<std::fs::File>) -> std::io::Result<Format> {
    let head = reader.fill_buf()?;
    let n = head.len().min(1 << 16);
    let text = String::from_utf8_lossy(&head[..n]);
    if text.contains("\"resourceSpans\"") || text.contains("\"resource_spans\"") {
        return Ok(Format::Otlp);
    }
    let first = text.lines().next().unwrap_or("");
    if let Ok(serde_json::Value::Object(o)) = serde_json::from_str::<serde_json::Value>(first)
        && o.contains_key("session")
        && o.contains_key("spans")
    {
        return Ok(Format::Proxy);
    }
    if first.contains("\"session\"") && first.contains("\"spans\"") {
        return Ok(Format::Proxy);
    }
    Ok(Format::Jsonl)
}

/// One line of a JSON-lines file.
enum Line {
    Text(usize, String),
    TooLong(usize),
}

/// Reads lines with a bound on their length: a longer line is skipped to its end, not held.
struct Lines<R> {
    reader: R,
    no: usize,
}

impl<R: BufRead> Lines<R> {
    fn new(reader: R) -> Self {
        Lines { reader, no: 0 }
    }

    fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        let mut buf = Vec::new();
        let mut too_long = false;
        let mut any = false;
        loop {
            let chunk = self.reader.fill_buf()?;
            if chunk.is_empty() {
                break;
            }
            any = true;
            let (take, done) = match chunk.iter().position(|b| *b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            if !too_long {
                if buf.len() + take > MAX_LINE {
                    too_long = true;
                    buf = Vec::new();
                } else {
                    buf.extend_from_slice(&chunk[..take]);
                }
            }
            self.reader.consume(take);
            if done {
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        self.no += 1;
        if too_long {
            return Ok(Some(Line::TooLong(self.no)));
        }
        while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
            buf.pop();
        }
        Ok(Some(Line::Text(
            self.no,
            String::from_utf8(buf)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        )))
    }
}

/// Why a line could not be read.
#[derive(Debug)]
pub(crate) struct LineError {
    pub column: usize,
    pub message: String,
    pub hint: String,
}

fn json_error(e: &serde_json::Error, what: &str, hint: &str) -> LineError {
    LineError {
        column: e.column().max(1),
        message: format!("not a valid {what}: {}", plain(e)),
        hint: hint.to_owned(),
    }
}

/// serde_json's message without its own position (which counts from the line's start, and
/// is given separately).
pub(crate) fn plain(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}

const JSONL_HINT: &str = "one JSON object per line: `case_id` (or attributes to match on), `messages` [{role, content}], and optionally `tool_calls`, `answer`, `started_at`, `ended_at`; see `gauntlet schema --trace`";

/// One line of a JSON-lines file, by its format: a proxy recording's exchange or a trace in
/// gauntlet's own format.
fn line_trace(format: Format, text: &str, no: usize) -> Result<CapturedTrial, LineError> {
    if format == Format::Proxy {
        proxy_line(text, no)
    } else {
        jsonl_line(text, no)
    }
}

/// One line of gauntlet's trace format.
fn jsonl_line(text: &str, no: usize) -> Result<CapturedTrial, LineError> {
    let t: CapturedTrace = serde_json::from_str(text).map_err(|e| {
        let mut err = json_error(&e, "trace", JSONL_HINT);
        if text.contains("\"resourceSpans\"") {
            err.hint = "this line looks like OTLP JSON: pass --format otlp".into();
        } else if text.contains("\"spans\"") && text.contains("\"session\"") {
            err.hint = "this line looks like a proxy recording: pass --format proxy".into();
        }
        err
    })?;
    from_captured(t, no)
}

/// Milliseconds between two RFC 3339 times.
fn duration_between(start: Option<&str>, end: Option<&str>) -> Result<u64, String> {
    let parse = |s: &str| {
        s.parse::<jiff::Timestamp>()
            .map_err(|e| format!("`{s}` is not an RFC 3339 time: {e}"))
    };
    match (start, end) {
        (Some(a), Some(b)) => {
            let (a, b) = (parse(a)?, parse(b)?);
            let ms = b.as_millisecond() - a.as_millisecond();
            if ms < 0 {
                return Err("`ended_at` is before `started_at`".into());
            }
            Ok(ms as u64)
        }
        (Some(a), None) => parse(a).map(|_| 0),
        (None, Some(b)) => parse(b).map(|_| 0),
        (None, None) => Ok(0),
    }
}

/// A trace in gauntlet's format, as a trial: one model-call span per assistant message (its
/// input the messages since the previous answer), tool spans from `tool_calls` or from the
/// messages, turns from the conversation.
fn from_captured(t: CapturedTrace, no: usize) -> Result<CapturedTrial, LineError> {
    let err = |message: String| LineError {
        column: 1,
        message,
        hint: JSONL_HINT.to_owned(),
    };
    if !t.messages.iter().any(|m| m.role == Role::User) {
        return Err(err(
            "the trace has no `user` message, so there is no input to grade an answer against"
                .into(),
        ));
    }
    let duration_ms =
        duration_between(t.started_at.as_deref(), t.ended_at.as_deref()).map_err(err)?;
    let mut turns = turns_from_conversation(&t.messages);
    if let (Some(answer), Some(last)) = (&t.answer, turns.last_mut()) {
        last.answer = answer.clone();
    }
    let mut tools: Vec<ToolSpan> = if t.tool_calls.is_empty() {
        tool_spans_from_conversation(&t.messages)
    } else {
        t.tool_calls
            .iter()
            .enumerate()
            .map(|(i, c)| ToolSpan {
                id: 0,
                parent: None,
                agent: None,
                call_id: c.id.clone().unwrap_or_else(|| format!("call_{i}")),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
                output: c.result.as_ref().map(value_text),
                error: c.error.clone(),
                duration_ms: c.duration_ms.unwrap_or(0),
                approval: Default::default(),
                side_effect: None,
                injected: None,
            })
            .collect()
    };
    // Model calls: one per assistant message; a tool span follows the call that asked for it.
    let mut spans = Vec::new();
    let mut next_id = 1u32;
    let mut since: Vec<Message> = Vec::new();
    for m in &t.messages {
        if m.role != Role::Assistant {
            since.push(m.clone());
            continue;
        }
        let id = next_id;
        next_id += 1;
        spans.push(Span::LlmCall(LlmSpan {
            id,
            parent: None,
            agent: None,
            model: t.model.clone(),
            messages_in: std::mem::take(&mut since),
            continues: None,
            message_out: m.clone(),
            usage: Default::default(),
            latency_ms: 0,
            finish_reason: None,
            attempts: 1,
            cached: false,
        }));
        for c in &m.tool_calls {
            if let Some(i) = tools.iter().position(|s| s.id == 0 && s.call_id == c.id) {
                let mut s = tools.remove(i);
                s.id = next_id;
                s.parent = Some(id);
                next_id += 1;
                spans.push(Span::ToolCall(s));
            }
        }
    }
    // Tool calls the messages do not mention (an agent that ran tools on its own).
    for mut s in tools {
        s.id = next_id;
        next_id += 1;
        spans.push(Span::ToolCall(s));
    }
    if turns.iter().all(|t| t.answer.is_empty()) && t.answer.is_none() && t.outcome.is_none() {
        // Nothing to grade, said plainly rather than graded as an empty answer.
        return Err(err(
            "the trace has no answer: no assistant message with text, and no `answer`".into(),
        ));
    }
    let attributes: BTreeMap<String, String> = t
        .attributes
        .iter()
        .map(|(k, v)| (k.clone(), value_text(v)))
        .collect();
    let label = t
        .trace_id
        .clone()
        .or_else(|| t.case_id.clone())
        .unwrap_or_else(|| format!("line {no}"));
    Ok(CapturedTrial {
        trace: Trace {
            spans,
            transport: Vec::new(),
            turns,
            judge: Vec::new(),
            strategy: Vec::new(),
            converted: Vec::new(),
        },
        outcome: t.outcome.unwrap_or(Outcome::Completed),
        error: t.error,
        duration_ms,
        case_id: t.case_id,
        attributes,
        label,
    })
}

/// One line of the proxy's recordings: a `Trace` with a `session`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProxyLine {
    session: String,
    #[serde(default)]
    spans: Vec<Span>,
    #[serde(default)]
    transport: Vec<TransportEvent>,
    #[serde(default)]
    turns: Vec<TurnRecord>,
    #[serde(default)]
    judge: Vec<gauntlet_core::trace::JudgeSpan>,
}

fn proxy_line(text: &str, _no: usize) -> Result<CapturedTrial, LineError> {
    let p: ProxyLine = serde_json::from_str(text).map_err(|e| {
        json_error(
            &e,
            "proxy recording",
            "each line is what `gauntlet proxy --out` writes: a trace (`spans`, `turns`) with its `session`",
        )
    })?;
    let _ = p.judge;
    let mut trace = Trace {
        spans: p.spans,
        transport: p.transport,
        turns: p.turns,
        judge: Vec::new(),
        strategy: Vec::new(),
        converted: Vec::new(),
    };
    if trace.turns.is_empty() {
        // The proxy sees model calls, not the user's turns: the last call holds the whole
        // conversation, its answer included.
        if let Some(last) = trace.llm_calls().last() {
            let mut conv = last.messages_in.clone();
            conv.push(last.message_out.clone());
            trace.turns = turns_from_conversation(&conv);
        }
    }
    if trace.turns.is_empty() {
        return Err(LineError {
            column: 1,
            message: format!(
                "session `{}` recorded no model call with a user message: there is nothing to grade",
                p.session
            ),
            hint: "a session is graded from its model calls; check that the agent used the proxy's base URL".into(),
        });
    }
    let duration_ms = trace
        .spans
        .iter()
        .map(|s| match s {
            Span::LlmCall(l) => l.latency_ms,
            Span::ToolCall(t) => t.duration_ms,
            Span::Decision(_) => 0,
        })
        .sum();
    let blocked = trace
        .llm_calls()
        .last()
        .is_some_and(|l| l.finish_reason.as_deref() == Some("content_filter"));
    Ok(CapturedTrial {
        trace,
        outcome: if blocked {
            Outcome::Blocked
        } else {
            Outcome::Completed
        },
        error: blocked.then(|| "the last model call was stopped by a content filter".to_owned()),
        duration_ms,
        case_id: Some(p.session.clone()),
        attributes: BTreeMap::new(),
        label: format!("session {}", p.session),
    })
}

/// Reads everything from a reader, for tests and small inputs.
pub fn read_all<R: Read>(name: &str, r: R, format: Format) -> (Vec<ReadTrace>, Vec<Diagnostic>) {
    let mut traces = Vec::new();
    let mut diags = Vec::new();
    let reader = BufReader::new(r);
    match format {
        Format::Otlp => {
            let mut stats = FileStats::default();
            if let Err(e) = otlp::read(
                name,
                reader,
                &[],
                &mut stats,
                &mut |t| traces.push(t),
                &mut |d| diags.push(d),
            ) {
                diags.push(Diagnostic::file(name, e.to_string()));
            }
        }
        _ => {
            let mut lines = Lines::new(reader);
            while let Ok(Some(Line::Text(no, text))) = lines.next_line() {
                if text.trim().is_empty() {
                    continue;
                }
                let parsed = line_trace(format, &text, no);
                match parsed {
                    Ok(trial) => traces.push(ReadTrace {
                        source: format!("{name}:{no}"),
                        trial,
                    }),
                    Err(e) => diags.push(diag_at(name, &text, no, e.column, e.message, e.hint)),
                }
            }
        }
    }
    (traces, diags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jsonl_trace_becomes_turns_model_calls_and_tool_spans() {
        let line = r#"{"case_id": "order", "messages": [
            {"role": "user", "content": "status of A-1?"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "get_order", "arguments": {"order_id": "A-1"}}]},
            {"role": "tool", "tool_call_id": "c1", "name": "get_order", "content": "{\"status\": \"shipped\"}"},
            {"role": "assistant", "content": "It shipped."}],
            "started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-01T00:00:01.500Z"}"#
            .replace('\n', " ");
        let t = jsonl_line(&line, 1).expect("reads");
        assert_eq!(t.case_id.as_deref(), Some("order"));
        assert_eq!(t.trace.final_answer(), "It shipped.");
        assert_eq!(t.duration_ms, 1500);
        let tools: Vec<_> = t.trace.tool_calls().collect();
        assert_eq!(tools.len(), 1);
        assert_eq!(
            tools[0].parent,
            Some(1),
            "the tool span follows the call that asked"
        );
        assert_eq!(
            tools[0].output.as_deref(),
            Some("{\"status\": \"shipped\"}")
        );
        assert_eq!(t.trace.llm_calls().count(), 2);
    }

    #[test]
    fn a_bad_line_is_reported_with_its_line_and_column_and_the_rest_is_read() {
        let text = concat!(
            r#"{"case_id": "a", "messages": [{"role": "user", "content": "hi"}], "answer": "hello"}"#,
            "\n",
            r#"{"case_id": "b", "messages": [{"role": "user", "content": "hi"}], "answer": "x",}"#,
            "\n",
            r#"{"case_id": "c", "mesages": []}"#,
            "\n",
            r#"{"case_id": "d", "messages": [{"role": "user", "content": "hi"}], "answer": "fine"}"#,
            "\n"
        );
        let (traces, diags) = read_all("t.jsonl", text.as_bytes(), Format::Jsonl);
        let ids: Vec<_> = traces
            .iter()
            .map(|t| t.trial.case_id.clone().unwrap())
            .collect();
        assert_eq!(ids, ["a", "d"], "the lines around the bad ones are kept");
        assert_eq!(diags.len(), 2);
        assert_eq!((diags[0].line, diags[0].column), (2, 81), "{:?}", diags[0]);
        assert!(diags[0].hint.is_some());
        assert_eq!(diags[1].line, 3);
        assert!(diags[1].message.contains("mesages"), "{}", diags[1].message);
    }

    #[test]
    fn a_trace_without_a_user_message_or_an_answer_is_refused_not_graded_empty() {
        assert!(
            jsonl_line(
                r#"{"messages": [{"role": "assistant", "content": "hi"}]}"#,
                1
            )
            .is_err()
        );
        assert!(jsonl_line(r#"{"messages": [{"role": "user", "content": "hi"}]}"#, 1).is_err());
    }

    #[test]
    fn an_overlong_line_is_skipped_without_holding_it() {
        let text = format!("{}\nnext\n", "x".repeat(MAX_LINE + 10));
        let mut lines = Lines::new(BufReader::new(text.as_bytes()));
        assert!(matches!(lines.next_line().unwrap(), Some(Line::TooLong(1))));
        assert!(matches!(lines.next_line().unwrap(), Some(Line::Text(2, t)) if t == "next"));
    }
}
