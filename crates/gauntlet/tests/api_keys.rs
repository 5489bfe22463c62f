//! `openai:MODEL` and `anthropic:MODEL` read the vendors' conventional variables for the key
//! and the base URL, as their SDKs do: against a server on 127.0.0.1 that demands the key
//! (`Authorization: Bearer` for OpenAI, `x-api-key` for Anthropic), a run with only the
//! variable exported passes; without it every case errors and the message names the
//! variable. The key never appears in what gauntlet prints or writes.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output};

use serde_json::json;

mod common;

use common::{bin, code, text, write};

const KEY: &str = "sk-test-CONVENTIONAL-7788-do-not-leak";

/// Variables that would change what the runs below read, removed from the child.
const VARS: [&str; 6] = [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "AZURE_OPENAI_API_KEY",
    "GAUNTLET_OTHER_KEY",
];

/// Answers both wire formats with "hello", but only when the request carries `KEY` the way
/// the format sends it; otherwise 401 as the real APIs answer.
fn serve() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            std::thread::spawn(move || handle(s));
        }
    });
    port
}

fn handle(mut s: TcpStream) {
    let req = common::read_http_request(&mut s);
    let head = req
        .split("\r\n\r\n")
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let has = |h: &str| head.lines().any(|l| l.trim() == h.to_ascii_lowercase());
    let anthropic = head.starts_with("post /v1/messages");
    let authorized = if anthropic {
        has(&format!("x-api-key: {KEY}"))
    } else {
        has(&format!("authorization: bearer {KEY}"))
    };
    let (status, body) = match (authorized, anthropic) {
        (false, false) => (
            401,
            json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}),
        ),
        (false, true) => (
            401,
            json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
        ),
        (true, false) => (
            200,
            json!({
                "id": "x", "object": "chat.completion", "model": "m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1}
            }),
        ),
        (true, true) => (
            200,
            json!({
                "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                "content": [{"type": "text", "text": "hello"}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 3, "output_tokens": 1}
            }),
        ),
    };
    let body = body.to_string();
    let resp = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = s.write_all(resp.as_bytes());
}

fn suite(dir: &Path) {
    write(
        dir,
        "s.yaml",
        "suite: keys\ncases:\n  - id: c1\n    input: hi\n    expect: [{contains: hello}]\n",
    );
}

/// `gauntlet run` with only `env` set of the variables in `VARS`.
fn run(dir: &Path, args: &[&str], env: &[(&str, String)]) -> Output {
    let mut c: Command = bin();
    c.args(["run", "s.yaml", "--out", "out"])
        .args(args)
        .current_dir(dir);
    for v in VARS {
        c.env_remove(v);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// Asserts the key is nowhere in the output or the files written.
fn assert_no_key(dir: &Path, out: &Output) {
    assert!(!text(out).contains(KEY), "key in the output");
    for f in std::fs::read_dir(dir.join("out")).unwrap() {
        let f = f.unwrap().path();
        let body = std::fs::read(&f).unwrap();
        assert!(
            !String::from_utf8_lossy(&body).contains(KEY),
            "key in {}",
            f.display()
        );
    }
}

#[test]
fn openai_reads_the_key_and_base_url_from_the_conventional_variables() {
    let port = serve();
    let t = tempfile::tempdir().unwrap();
    suite(t.path());
    let base = format!("http://127.0.0.1:{port}/v1");
    let out = run(
        t.path(),
        &["--target", "openai:m"],
        &[("OPENAI_API_KEY", KEY.into()), ("OPENAI_BASE_URL", base)],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_no_key(t.path(), &out);
}

#[test]
fn openai_without_the_key_says_which_variable_was_not_set() {
    let port = serve();
    let t = tempfile::tempdir().unwrap();
    suite(t.path());
    let base = format!("http://127.0.0.1:{port}/v1");
    let out = run(
        t.path(),
        &["--target", "openai:m", "--base-url", &base, "-v"],
        &[],
    );
    assert_eq!(code(&out), 4, "an error is INCONCLUSIVE: {}", text(&out));
    let all = format!(
        "{}{}",
        text(&out),
        std::fs::read_to_string(t.path().join("out/report.json")).unwrap()
    );
    assert!(all.contains("HTTP 401"), "{all}");
    assert!(
        all.contains("no API key was sent: `OPENAI_API_KEY` is not set"),
        "{all}"
    );
    assert!(all.contains("--api-key-env"), "{all}");
}

#[test]
fn api_key_env_overrides_the_conventional_variable_and_a_401_names_it() {
    let port = serve();
    let t = tempfile::tempdir().unwrap();
    suite(t.path());
    let base = format!("http://127.0.0.1:{port}/v1");
    // The named variable wins over OPENAI_API_KEY.
    let out = run(
        t.path(),
        &[
            "--target",
            "openai:m",
            "--base-url",
            &base,
            "--api-key-env",
            "GAUNTLET_OTHER_KEY",
        ],
        &[
            ("GAUNTLET_OTHER_KEY", KEY.into()),
            ("OPENAI_API_KEY", "sk-wrong".into()),
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_no_key(t.path(), &out);
    // A wrong key read from the conventional variable: the 401 says where it came from.
    let out = run(
        t.path(),
        &["--target", "openai:m", "--base-url", &base, "-v"],
        &[("OPENAI_API_KEY", "sk-wrong-key-1234".into())],
    );
    assert_eq!(code(&out), 4, "{}", text(&out));
    let report = std::fs::read_to_string(t.path().join("out/report.json")).unwrap();
    assert!(
        report.contains("the API key was read from `OPENAI_API_KEY`"),
        "{report}"
    );
    assert!(!report.contains("sk-wrong-key-1234"), "{report}");
}

#[test]
fn anthropic_reads_the_key_and_base_url_from_the_conventional_variables() {
    let port = serve();
    let t = tempfile::tempdir().unwrap();
    suite(t.path());
    let base = format!("http://127.0.0.1:{port}");
    let out = run(
        t.path(),
        &["--target", "anthropic:m"],
        &[
            ("ANTHROPIC_API_KEY", KEY.into()),
            ("ANTHROPIC_BASE_URL", base.clone()),
        ],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_no_key(t.path(), &out);

    let out = run(
        t.path(),
        &["--target", "anthropic:m", "--base-url", &base, "-v"],
        &[],
    );
    assert_eq!(code(&out), 4, "{}", text(&out));
    let all = format!(
        "{}{}",
        text(&out),
        std::fs::read_to_string(t.path().join("out/report.json")).unwrap()
    );
    assert!(
        all.contains("no API key was sent: `ANTHROPIC_API_KEY` is not set"),
        "{all}"
    );
}

#[test]
fn a_key_in_dot_env_is_read_and_the_environment_wins() {
    let port = serve();
    let t = tempfile::tempdir().unwrap();
    suite(t.path());
    let base = format!("http://127.0.0.1:{port}/v1");
    // The key only in `.env`, the base URL on the command line: the run passes and the key
    // appears nowhere. A broken line is named without its value and loses no other key.
    write(
        t.path(),
        ".env",
        &format!("# local keys\nBROKEN LINE=sk-never-shown\nOPENAI_API_KEY={KEY}\n"),
    );
    let out = run(
        t.path(),
        &["--target", "openai:m", "--base-url", &base],
        &[],
    );
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert_no_key(t.path(), &out);
    assert!(
        text(&out).contains(".env: line `BROKEN=…`"),
        "{}",
        text(&out)
    );
    assert!(!text(&out).contains("sk-never-shown"), "{}", text(&out));
    // The environment wins over the file: a wrong exported key is the one sent.
    let out = run(
        t.path(),
        &["--target", "openai:m", "--base-url", &base],
        &[("OPENAI_API_KEY", "sk-wrong-exported-0000".into())],
    );
    assert_eq!(code(&out), 4, "{}", text(&out));
}

#[test]
fn a_base_url_in_dot_env_is_not_read() {
    // A `.env` from a pull request must not move where an exported key goes. With no key at
    // all, a base URL read from the file would point the target at the local server (which
    // needs none to be reached); unread, the target stays on the vendor's API and stops
    // before the run for want of a key, so no request leaves the machine.
    let port = serve();
    let t = tempfile::tempdir().unwrap();
    suite(t.path());
    write(
        t.path(),
        ".env",
        &format!("OPENAI_BASE_URL=http://127.0.0.1:{port}/v1\n"),
    );
    let out = run(t.path(), &["--target", "openai:m"], &[]);
    assert_eq!(code(&out), 2, "{}", text(&out));
    assert!(text(&out).contains("api.openai.com"), "{}", text(&out));
}

#[test]
fn the_vendor_api_without_any_key_stops_before_the_run() {
    for (target, var) in [
        ("openai:gpt-4o-mini", "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
    ] {
        let t = tempfile::tempdir().unwrap();
        suite(t.path());
        let out = run(t.path(), &["--target", target], &[]);
        assert_eq!(code(&out), 2, "{target}: {}", text(&out));
        let all = text(&out);
        assert!(all.contains(var), "{all}");
        assert!(all.contains(".env"), "{all}");
        // Stopped before the run: nothing was written.
        assert!(!t.path().join("out/report.json").exists(), "{all}");
    }
}
