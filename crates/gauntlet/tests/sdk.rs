//! The vendors' own Python SDKs (openai, anthropic) against `gauntlet serve-fake` on
//! 127.0.0.1, directly and through `gauntlet proxy`: sync and async calls, streaming (OpenAI
//! chunks with tool-call deltas and the `include_usage` chunk; Anthropic's Messages events
//! with `text_delta` and `input_json_delta`) and tool calls with their results sent back, in
//! both wire formats (`tests/data/sdk_check.py`). Through the proxy, the trace it writes must
//! hold every model call the SDKs made and the tool results they sent.
//! The venv is made once under the target directory, its pins (`tests/data/pins/`) installed
//! with no network from the wheelhouse `GAUNTLET_TEST_WHEELHOUSE` names (see `common`);
//! without python3 or pip the test is skipped with the reason, except in CI, where it fails.

mod common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use common::{ChildGuard, py_venv_or_skip, serve_fake};
use serde_json::Value;

fn sdk_check(python: &std::path::Path, base: &str, extra: &[&str]) -> String {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sdk_check.py");
    let o = std::process::Command::new(python)
        .arg(script)
        .arg(base)
        .args(extra)
        .output()
        .unwrap();
    let text = common::text(&o);
    assert!(o.status.success(), "{text}");
    assert!(text.contains("all SDK checks passed"), "{text}");
    text
}

#[test]
fn the_official_sdks_read_serve_fake_sync_async_streaming_and_tools() {
    let Some(python) = py_venv_or_skip() else {
        return;
    };
    let (_server, url) = serve_fake("safe");
    let root = url.trim_end_matches('/').trim_end_matches("/v1").to_owned();
    sdk_check(&python, &root, &[]);
}

#[test]
fn the_official_sdks_work_through_the_recording_proxy_and_every_call_is_recorded() {
    let Some(python) = py_venv_or_skip() else {
        return;
    };
    let (_server, url) = serve_fake("safe");
    // The proxy's upstream is the OpenAI-style base URL, with `/v1`.
    let upstream = format!("{}/v1", url.trim_end_matches('/').trim_end_matches("/v1"));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("traces.jsonl");
    let mut child = common::bin()
        .args(["proxy", "--upstream", &upstream, "--listen", "127.0.0.1:0"])
        .args(["--idle-secs", "3600", "--out"])
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut banner = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut banner)
        .unwrap();
    let pid = child.id().to_string();
    let proxy = ChildGuard(child);
    let listen = common::first_url(&banner);
    let text = sdk_check(&python, &format!("{listen}/s/sdk"), &["--proxy"]);
    let calls: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("model calls: "))
        .expect("the script counts its calls")
        .trim()
        .parse()
        .unwrap();

    // SIGTERM: the proxy writes the open session's trace and exits 0.
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut proxy = proxy;
    let status = proxy.0.wait().unwrap();
    assert!(status.success(), "the proxy exited with {status}");
    let traces = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<Value> = traces
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "one session, one trace: {traces}");
    let trace = &lines[0];
    assert_eq!(trace["session"], "sdk");
    let spans = trace["spans"].as_array().unwrap();
    let llm: Vec<&Value> = spans.iter().filter(|s| s["kind"] == "llm_call").collect();
    assert_eq!(llm.len(), calls, "every model call is an LLM span");
    // Streamed or not, each call's answer was recorded: text, or the tool call asked for.
    for s in &llm {
        let out = &s["message_out"];
        let said = out["content"].as_str().is_some_and(|t| !t.is_empty());
        let asked = out["tool_calls"].as_array().is_some_and(|c| !c.is_empty());
        assert!(said || asked, "an empty answer recorded: {s}");
        assert!(s["usage"]["input_tokens"].as_u64() > Some(0), "{s}");
    }
    // The two results the SDKs sent back (one per wire) are tool spans with the output;
    // the calls never answered are closed as such.
    let tools: Vec<&Value> = spans.iter().filter(|s| s["kind"] == "tool_call").collect();
    let answered: Vec<&&Value> = tools
        .iter()
        .filter(|s| s["output"].as_str() == Some(r#"{"deleted": true, "account_id": "A-4411"}"#))
        .collect();
    assert_eq!(answered.len(), 2, "{tools:?}");
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
    assert!(
        trace["transport"].as_array().is_none_or(|t| t.is_empty()),
        "no transport trouble: {}",
        trace["transport"]
    );
}
