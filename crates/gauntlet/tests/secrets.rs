//! A secret that straddles a clip limit never reaches an output, end to end through the
//! binary: an OpenAI or Anthropic endpoint whose error body carries the API key across the
//! 2,048-byte body limit, an upstream behind the recording proxy doing the same, and an exec
//! agent writing the key across the 1 KB stderr line limit. Neither the key nor any 8
//! consecutive characters of it may appear in report.json, junit.xml, summary.md, the run
//! store's file, `gauntlet runs show` or `gauntlet trace`.
//!
//! The servers are tiny HTTP/1.1 responders on 127.0.0.1 written here.

use std::path::Path;

mod common;

use common::{bin, have_python, text};

const KEY: &str = "sk-proj-Zq8XwV3tLm9KpR2sYd7NcF4hGj6BbE1aUo5iTe0W";

/// The limit of a response body in errors and traces.
const BODY_CLIP: usize = 2048;
/// The limit of one stderr line of an agent.
const STDERR_LINE: usize = 1024;

/// Answers every request with `status` and `body`, until the test ends.
fn serve(status: u16, body: String) -> u16 {
    common::serve_json(move |_| (status, body.clone()))
}

/// An error body in the OpenAI shape whose message puts the key's first byte at `at`.
fn body_with_key_at(at: usize) -> String {
    let open = r#"{"error": {"message": "Incorrect API key provided: "#;
    let pad = "x".repeat(at - open.len());
    format!(r#"{open}{pad}{KEY}", "type": "invalid_request_error", "code": "invalid_api_key"}}}}"#)
}

/// Every 8 consecutive characters of the key found in `bytes`.
fn parts_of_key_in(bytes: &[u8]) -> Vec<String> {
    let k = KEY.as_bytes();
    k.windows(8)
        .filter(|w| bytes.windows(8).any(|b| b == *w))
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect()
}

/// Runs `s.yaml` in `dir`, then reads back every output: the report files, the store's
/// files as bytes, `runs show` and `trace`. Asserts that no part of the key is in any.
fn assert_no_part_of_the_key(dir: &Path, case: &str) {
    let run = bin()
        .args(["run", "s.yaml", "--out", "out"])
        .env("GAUNTLET_TEST_KEY", KEY)
        .current_dir(dir)
        .output()
        .unwrap();
    let shown = text(&run);
    // INCONCLUSIVE on the error, or FAIL when the agent answered the error it got.
    assert!(
        matches!(run.status.code(), Some(1 | 4)),
        "the run did not run: {shown}"
    );
    let mut outputs: Vec<(String, Vec<u8>)> = vec![("the run's output".into(), shown.into())];
    for name in ["report.json", "junit.xml", "summary.md"] {
        let p = dir.join("out").join(name);
        outputs.push((name.into(), std::fs::read(&p).unwrap()));
    }
    // The store as it lies on disk: the database and whatever journal it keeps.
    for f in std::fs::read_dir(dir.join(".gauntlet")).unwrap() {
        let p = f.unwrap().path();
        if p.is_file() {
            outputs.push((p.display().to_string(), std::fs::read(&p).unwrap()));
        }
    }
    for args in [
        vec!["runs", "show", "latest"],
        vec!["trace", case],
        vec!["trace", case, "--json"],
    ] {
        let o = bin().args(&args).current_dir(dir).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o));
        outputs.push((args.join(" "), text(&o).into()));
    }
    for (what, bytes) in &outputs {
        let found = parts_of_key_in(bytes);
        assert!(found.is_empty(), "part of the key in {what}: {found:?}");
    }
    let report = std::fs::read_to_string(dir.join("out/report.json")).unwrap();
    assert!(
        report.contains("[REDACTED:GAUNTLET_TEST_KEY]"),
        "the redaction marker shows where the key was: {report}"
    );
}

fn chat_suite(dir: &Path, kind: &str, port: u16) {
    let base = if kind == "anthropic" {
        format!("http://127.0.0.1:{port}")
    } else {
        format!("http://127.0.0.1:{port}/v1")
    };
    std::fs::write(
        dir.join("s.yaml"),
        format!(
            r#"
suite: secrets
target:
  kind: {kind}
  model: test-model
  base_url: {base}
  api_key_env: GAUNTLET_TEST_KEY
  retry: {{max_attempts: 1}}
cases:
  - id: c1
    input: hello
    expect: [{{contains: hello}}]
"#
        ),
    )
    .unwrap();
}

#[test]
fn a_key_across_the_body_limit_of_an_openai_error_is_in_no_output() {
    // The key's first byte well before the limit, a few bytes before, and just before:
    // the cut falls near its end, in its middle and after its first characters.
    for before in [KEY.len() - 3, KEY.len() / 2, 5] {
        let port = serve(401, body_with_key_at(BODY_CLIP - before));
        let t = tempfile::tempdir().unwrap();
        chat_suite(t.path(), "openai", port);
        assert_no_part_of_the_key(t.path(), "c1");
    }
}

#[test]
fn a_key_across_the_body_limit_of_an_anthropic_error_is_in_no_output() {
    let port = serve(401, body_with_key_at(BODY_CLIP - KEY.len() / 2));
    let t = tempfile::tempdir().unwrap();
    chat_suite(t.path(), "anthropic", port);
    assert_no_part_of_the_key(t.path(), "c1");
}

/// A Python agent: `stderr` writes the key across the stderr line limit and exits before
/// answering; `proxy` calls its model through the recording proxy with the key, and answers
/// with whatever came back.
const AGENT: &str = r#"
import json, os, sys, urllib.request, urllib.error
mode = sys.argv[1]
key = os.environ["API_KEY"]
if mode == "stderr":
    sys.stdin.readline()
    pad = "x" * int(sys.argv[2])
    sys.stderr.write("auth failed: " + pad[13:] + key + " (check the key)\n")
    sys.stderr.flush()
    sys.exit(3)
for line in sys.stdin:
    turn = json.loads(line)
    req = urllib.request.Request(
        os.environ["OPENAI_BASE_URL"] + "/chat/completions",
        data=json.dumps({"model": "m", "messages": [{"role": "user", "content": turn}]}).encode(),
        headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"},
    )
    try:
        urllib.request.urlopen(req).read()
        answer = "ok"
    except urllib.error.HTTPError as e:
        answer = "the model failed with HTTP %d" % e.code
    print(json.dumps(answer), flush=True)
"#;

#[test]
fn a_key_an_exec_agent_writes_across_the_stderr_line_limit_is_in_no_output() {
    if !have_python() {
        return;
    }
    for before in [KEY.len() - 3, KEY.len() / 2, 5] {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("agent.py"), AGENT).unwrap();
        std::fs::write(
            t.path().join("s.yaml"),
            format!(
                r#"
suite: secrets
target:
  kind: exec
  exec:
    command: [python3, agent.py, stderr, "{}"]
    env: {{API_KEY: "${{env:GAUNTLET_TEST_KEY}}"}}
cases:
  - id: c1
    input: hello
    expect: [{{contains: hello}}]
"#,
                STDERR_LINE - before
            ),
        )
        .unwrap();
        assert_no_part_of_the_key(t.path(), "c1");
    }
}

#[test]
fn a_key_across_the_body_limit_behind_the_recording_proxy_is_in_no_output() {
    if !have_python() {
        return;
    }
    let port = serve(401, body_with_key_at(BODY_CLIP - KEY.len() / 2));
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("agent.py"), AGENT).unwrap();
    std::fs::write(
        t.path().join("s.yaml"),
        format!(
            r#"
suite: secrets
target:
  kind: proxy
  proxy:
    command: [python3, agent.py, proxy]
    upstream: http://127.0.0.1:{port}/v1
    env: {{API_KEY: "${{env:GAUNTLET_TEST_KEY}}"}}
cases:
  - id: c1
    input: hello
    expect: [{{contains: hello}}]
"#
        ),
    )
    .unwrap();
    assert_no_part_of_the_key(t.path(), "c1");
}
