//! The OpenAI Responses API with the official Python SDK against `gauntlet serve-fake` on
//! 127.0.0.1, directly and through `gauntlet proxy` (`tests/data/responses_check.py`:
//! `responses.create` plain and streamed, the stream helper, function tools with their
//! results sent back as full input and with `previous_response_id`, two turns, the async
//! client); then an agent written on the OpenAI Agents SDK through the proxy
//! (`tests/data/agents_check.py`). Through the proxy, the trace must hold every model call
//! and every tool result sent back. The venvs are made once under the target directory, their
//! pins (`tests/data/pins/`) installed with no network from the wheelhouse
//! `GAUNTLET_TEST_WHEELHOUSE` names (see `common`); without python3 or pip the tests are
//! skipped with the reason, except in CI.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;

use common::{
    ChildGuard, PY_AGENTS_REQUIREMENTS, py_venv_or_skip, py_venv_or_skip_with, serve_fake,
};
use serde_json::Value;

const RESULT: &str = r#"{"deleted": true, "account_id": "A-4411"}"#;

fn script(python: &Path, name: &str, base: &str, extra: &[&str], passed: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    let o = std::process::Command::new(python)
        .arg(script)
        .arg(base)
        .args(extra)
        .env("OPENAI_AGENTS_DISABLE_TRACING", "1")
        .output()
        .unwrap();
    let text = common::text(&o);
    assert!(o.status.success(), "{text}");
    assert!(text.contains(passed), "{text}");
    text
}

/// A count the script printed as `LABEL: N`.
fn count(text: &str, label: &str) -> usize {
    text.lines()
        .find_map(|l| l.strip_prefix(label))
        .unwrap_or_else(|| panic!("no `{label}` in {text}"))
        .trim()
        .parse()
        .unwrap()
}

/// `gauntlet proxy` in front of `upstream`, writing its traces to `out`: the guard, its pid
/// and its listening URL.
fn proxy(upstream: &str, out: &Path) -> (ChildGuard, String, String) {
    let mut child = common::bin()
        .args(["proxy", "--upstream", upstream, "--listen", "127.0.0.1:0"])
        .args(["--idle-secs", "3600", "--out"])
        .arg(out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut banner = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut banner)
        .unwrap();
    let pid = child.id().to_string();
    (ChildGuard(child), pid, common::first_url(&banner))
}

/// Stops the proxy with SIGTERM (it writes the open sessions' traces and exits 0) and
/// returns the one trace it wrote.
fn stop(proxy: ChildGuard, pid: &str, out: &Path) -> Value {
    let killed = std::process::Command::new("kill")
        .args(["-TERM", pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut proxy = proxy;
    let status = proxy.0.wait().unwrap();
    assert!(status.success(), "the proxy exited with {status}");
    let traces = std::fs::read_to_string(out).unwrap();
    let lines: Vec<Value> = traces
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "one session, one trace: {traces}");
    lines.into_iter().next().unwrap()
}

/// The trace's model calls each answered (text or a tool call) with tokens counted, its
/// answered tool spans (`delete_account` with the SDK's result), and no transport trouble
/// but the upstream's answers with these statuses.
fn check_trace(trace: &Value, calls: usize, results: usize, failed: &[u64]) {
    let spans = trace["spans"].as_array().unwrap();
    let llm: Vec<&Value> = spans.iter().filter(|s| s["kind"] == "llm_call").collect();
    assert_eq!(llm.len(), calls, "every model call is an LLM span");
    for s in &llm {
        let out = &s["message_out"];
        let said = out["content"].as_str().is_some_and(|t| !t.is_empty());
        let asked = out["tool_calls"].as_array().is_some_and(|c| !c.is_empty());
        assert!(said || asked, "an empty answer recorded: {s}");
        assert!(s["usage"]["input_tokens"].as_u64() > Some(0), "{s}");
    }
    let tools: Vec<&Value> = spans.iter().filter(|s| s["kind"] == "tool_call").collect();
    let answered: Vec<&&Value> = tools
        .iter()
        .filter(|s| s["output"].as_str() == Some(RESULT))
        .collect();
    assert_eq!(answered.len(), results, "{tools:?}");
    for s in &answered {
        assert_eq!(s["name"], "delete_account");
        assert_eq!(s["arguments"]["account_id"], "A-4411");
    }
    assert!(
        tools
            .iter()
            .filter(|s| s["output"].is_null())
            .all(|s| s["error"] == "no result returned by the agent"),
        "{tools:?}"
    );
    let statuses: Vec<u64> = trace["transport"]
        .as_array()
        .map(|t| t.iter().filter_map(|e| e["status"].as_u64()).collect())
        .unwrap_or_default();
    assert_eq!(
        statuses, failed,
        "no other transport trouble: {}",
        trace["transport"]
    );
}

fn upstream_of(url: &str) -> String {
    format!("{}/v1", url.trim_end_matches('/').trim_end_matches("/v1"))
}

#[test]
fn the_openai_sdk_s_responses_calls_read_serve_fake_plain_streamed_and_with_tools() {
    let Some(python) = py_venv_or_skip() else {
        return;
    };
    let (_server, url) = serve_fake("safe");
    let root = url.trim_end_matches('/').trim_end_matches("/v1").to_owned();
    let text = script(
        &python,
        "responses_check.py",
        &root,
        &[],
        "all Responses checks passed",
    );
    assert!(count(&text, "model calls: ") >= 10, "{text}");
}

#[test]
fn the_openai_sdk_s_responses_calls_go_through_the_proxy_and_are_recorded() {
    let Some(python) = py_venv_or_skip() else {
        return;
    };
    let (_server, url) = serve_fake("safe");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("traces.jsonl");
    let (guard, pid, listen) = proxy(&upstream_of(&url), &out);
    let base = format!("{listen}/s/sdk");
    let text = script(
        &python,
        "responses_check.py",
        &base,
        &["--proxy"],
        "all Responses checks passed",
    );
    let trace = stop(guard, &pid, &out);
    assert_eq!(trace["session"], "sdk");
    // Retrieving and deleting a stored response pass through unrecorded; continuing the
    // deleted one is the upstream's 400, passed back and noted.
    check_trace(
        &trace,
        count(&text, "model calls: "),
        count(&text, "tool results: "),
        &[400],
    );
}

#[test]
fn an_openai_agents_sdk_agent_runs_through_the_proxy_and_is_recorded() {
    let Some(python) = py_venv_or_skip_with(PY_AGENTS_REQUIREMENTS) else {
        return;
    };
    let (_server, url) = serve_fake("safe");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("traces.jsonl");
    let (guard, pid, listen) = proxy(&upstream_of(&url), &out);
    let text = script(
        &python,
        "agents_check.py",
        &format!("{listen}/s/agents"),
        &[],
        "all Agents SDK checks passed",
    );
    let runs = count(&text, "tool runs: ");
    let trace = stop(guard, &pid, &out);
    // Each run: the call that asked for the tool, then the answer after its result.
    check_trace(&trace, 2 * runs, runs, &[]);
    let spans = trace["spans"].as_array().unwrap();
    let first = spans.iter().find(|s| s["kind"] == "llm_call").unwrap();
    assert_eq!(
        first["messages_in"][0]["content"], "You are HelpDesk.",
        "{first}"
    );
}
