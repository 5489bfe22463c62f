//! `gauntlet stability`: a local OpenAI-compatible server that answers the same request the
//! same way is reported stable, one that does not is reported unstable, faulted repeats are
//! never stable, every request carries temperature 0 and the seed, and the response cache
//! is bypassed.

use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

mod common;

use common::{bin, code, examples, text};

/// Answers chat completions with `answers[n % len]` for the n-th request; records bodies.
fn serve(answers: Vec<&'static str>) -> (u16, Arc<Mutex<Vec<Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&bodies);
    let n = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let request = common::read_http_request(&mut s);
            let body = common::http_body(&request).to_owned();
            seen.lock()
                .unwrap()
                .push(serde_json::from_str(&body).unwrap_or(Value::Null));
            let i = n.fetch_add(1, Ordering::SeqCst);
            let content = answers[i % answers.len()];
            let reply = json!({
                "id": "x", "object": "chat.completion", "model": "test-model",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2}
            })
            .to_string();
            let _ = s.write_all(
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                    reply.len()
                )
                .as_bytes(),
            );
        }
    });
    (port, bodies)
}

fn suite(dir: &Path, port: u16) {
    std::fs::write(
        dir.join("s.yaml"),
        format!(
            "suite: stab\ntarget:\n  kind: openai\n  model: test-model\n  base_url: http://127.0.0.1:{port}/v1\n  temperature: 0.9\n  retry: {{max_attempts: 1}}\ncases:\n  - id: refund\n    input: How many days for a refund?\n    expect: [{{contains: \"30 days\"}}]\n"
        ),
    )
    .unwrap();
}

fn stability(dir: &Path, extra: &[&str]) -> (i32, String, Value) {
    let o = bin()
        .args([
            "stability",
            "s.yaml",
            "--repeat",
            "4",
            "--seed",
            "7",
            "--json",
        ])
        .args(extra)
        .env("OPENAI_API_KEY", "sk-test")
        .current_dir(dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    let doc = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (code(&o), text(&o), doc)
}

#[test]
fn a_server_that_repeats_itself_is_stable_and_every_request_is_pinned() {
    let (port, bodies) = serve(vec!["You have 30 days."]);
    let t = tempfile::tempdir().unwrap();
    suite(t.path(), port);
    let (rc, all, doc) = stability(t.path(), &["--fail-on-unstable"]);
    assert_eq!(rc, 0, "{all}");
    let c = &doc["report"]["cases"][0];
    assert_eq!(c["class"], "stable", "{all}");
    assert_eq!(c["completed"], 4);
    assert_eq!(c["distinct_outputs"], 1);
    assert_eq!(doc["report"]["output_differ_share"], 0.0);
    let bodies = bodies.lock().unwrap();
    // Four repeats, each sent to the server: no cached replay.
    assert_eq!(bodies.len(), 4, "{bodies:?}");
    for b in bodies.iter() {
        assert_eq!(b["temperature"], 0.0, "{b}");
        assert_eq!(b["seed"], 7, "{b}");
    }
    assert!(
        doc["notes"][0]
            .as_str()
            .unwrap_or("")
            .contains("temperature was replaced"),
        "{doc}"
    );
}

#[test]
fn a_server_that_answers_differently_is_unstable() {
    let (port, _) = serve(vec!["You have 30 days.", "You have 30 days!", "Two weeks."]);
    let t = tempfile::tempdir().unwrap();
    suite(t.path(), port);
    let (rc, all, doc) = stability(t.path(), &[]);
    // Without --fail-on-unstable the report is information: exit 0.
    assert_eq!(rc, 0, "{all}");
    let c = &doc["report"]["cases"][0];
    assert_eq!(c["class"], "unstable", "{all}");
    assert_eq!(c["distinct_outputs"], 3);
    assert_eq!(c["outputs_differing"], 2);
    assert_eq!(c["distinct_verdicts"], 2);
    assert_eq!(c["verdicts_differing"], 1);
    let (rc, all, _) = stability(t.path(), &["--fail-on-unstable"]);
    assert_eq!(rc, 1, "{all}");
    let (rc, all, _) = stability(t.path(), &["--max-differ", "0.9"]);
    assert_eq!(rc, 0, "{all}");
    let (rc, all, _) = stability(t.path(), &["--max-differ", "0.1"]);
    assert_eq!(rc, 1, "{all}");
}

#[test]
fn the_fakes_stable_unstable_and_faulted() {
    let suite = examples().join("stability/suite.yaml");
    let t = tempfile::tempdir().unwrap();
    let run = |target: &str| {
        let o = bin()
            .args(["stability"])
            .arg(&suite)
            .args(["--repeat", "4", "--fail-on-unstable", "-t", target])
            .current_dir(t.path())
            .output()
            .unwrap();
        (code(&o), text(&o))
    };
    let (rc, out) = run("fake:safe");
    assert_eq!(rc, 0, "{out}");
    assert!(out.contains("2 stable, 0 unstable"), "{out}");
    let (rc, out) = run("fake:flaky-agent");
    assert_eq!(rc, 1, "{out}");
    assert!(out.contains("UNSTABLE"), "{out}");
    // Half the repeats fail in transport: counted as faulted, never as stable; exit 4.
    let (rc, out) = run("fake:flaky-harness");
    assert_eq!(rc, 4, "{out}");
    assert!(out.contains("0 stable, 0 unstable, 2 faulted"), "{out}");
    assert!(out.contains("faulted repeats: 2 error"), "{out}");
    assert!(out.contains("takes no temperature or seed"), "{out}");
}

#[test]
fn fewer_than_two_repeats_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let o = bin()
        .args(["stability"])
        .arg(examples().join("stability/suite.yaml"))
        .args(["--repeat", "1"])
        .current_dir(t.path())
        .output()
        .unwrap();
    assert_eq!(code(&o), 2, "{}", text(&o));
}
