//! `--agent model:SPEC`: a chat model driven through the built-in coding loop, against a
//! scripted OpenAI-compatible server on 127.0.0.1 written here. The loop writes the
//! trajectory example's files and the checkpoints pass; paths leaving the workspace are
//! refused and change nothing; the step limit ends a checkpoint as `step_limit`; an empty
//! reply is a protocol error and a 500 a transport error, never finished, never a pass; the
//! API key appears in no output.

use std::collections::VecDeque;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

mod common;

const KEY: &str = "sk-test-CODINGLOOP-7731-do-not-leak";

/// What the server answers to one request.
#[derive(Clone)]
enum Act {
    /// 200 with this chat completion.
    Reply(String),
    /// This status with an error body.
    Status(u16),
}

/// A completion asking for tool calls: (name, arguments).
fn calls(model: &str, calls: &[(&str, Value)]) -> Act {
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| {
            json!({"id": format!("call_{i}"), "type": "function",
                   "function": {"name": name, "arguments": args.to_string()}})
        })
        .collect();
    Act::Reply(
        json!({
            "id": "x", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": tool_calls}, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20}
        })
        .to_string(),
    )
}

/// A completion answering in text.
fn say(model: &str, text: &str) -> Act {
    Act::Reply(
        json!({
            "id": "x", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20}
        })
        .to_string(),
    )
}

struct Server {
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn bodies(&self) -> Vec<Value> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .map(|r| serde_json::from_str(common::http_body(r)).unwrap_or(Value::Null))
            .collect()
    }
}

/// Serves the acts in order (the last one repeats), one connection at a time.
fn serve(acts: Vec<Act>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let queue = Arc::new(Mutex::new(VecDeque::from(acts)));
    let requests = Arc::new(Mutex::new(Vec::new()));
    let reqs = Arc::clone(&requests);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let act = {
                let mut q = queue.lock().unwrap();
                if q.len() > 1 {
                    q.pop_front().unwrap()
                } else {
                    q.front().cloned().unwrap()
                }
            };
            let req = common::read_http_request(&mut stream);
            reqs.lock().unwrap().push(req);
            answer(&mut stream, act);
        }
    });
    Server { port, requests }
}

fn answer(s: &mut TcpStream, act: Act) {
    let (status, body) = match act {
        Act::Reply(b) => (200, b),
        Act::Status(st) => (st, "{\"error\":{\"message\":\"down\"}}".to_owned()),
    };
    let resp = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = s.write_all(resp.as_bytes());
}

fn example_file(rel: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/trajectory")
            .join(rel),
    )
    .unwrap()
}

/// A trajectory folder with the example's first `n` checkpoints and its tests, and a
/// gauntlet.yaml naming the model `coder` on the server.
fn setup(n: usize, model: &str, port: u16) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("traj");
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(dir.join("tests/check.py"), example_file("tests/check.py")).unwrap();
    let cps = [
        (
            "C1",
            "Create textkit.py with words(s) returning the whitespace-separated words of s.",
            "words_basic",
        ),
        (
            "C2",
            "Add slugify(s) that lowercases s and joins its words with \"-\".",
            "slugify_basic",
        ),
    ];
    let mut y = String::from(
        "name: textkit\nagent_timeout_secs: 60\ntest_timeout_secs: 30\ncheckpoints:\n",
    );
    for (id, spec, test) in cps.iter().take(n) {
        y.push_str(&format!(
            "  - id: {id}\n    spec: '{spec}'\n    tests:\n      - id: {test}\n        run: [python3, tests/check.py, {test}]\n"
        ));
    }
    std::fs::write(dir.join("trajectory.yaml"), y).unwrap();
    std::fs::write(
        tmp.path().join("gauntlet.yaml"),
        format!(
            "targets:\n  coder:\n    kind: openai\n    model: {model}\n    base_url: http://127.0.0.1:{port}/v1\n    api_key_env: GAUNTLET_TEST_KEY\n    request_timeout_ms: 5000\n    retry: {{max_attempts: 2, base_delay_ms: 10, max_delay_ms: 20}}\n"
        ),
    )
    .unwrap();
    (tmp, dir)
}

/// Runs the trajectory with `model:coder`, `--out OUT --json`: exit code, report, all text.
fn run(tmp: &Path, dir: &Path, extra: &[&str]) -> (i32, Value, String) {
    let out = tmp.join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_gauntlet"))
        .args(["trajectory", "run"])
        .arg(dir.join("trajectory.yaml"))
        .args(["--agent", "model:coder", "--config"])
        .arg(tmp.join("gauntlet.yaml"))
        .arg("--out")
        .arg(&out)
        .args(extra)
        .env("GAUNTLET_TEST_KEY", KEY)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    let report: Value = std::fs::read(out.join("trajectory.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    (o.status.code().unwrap_or(-1), report, text)
}

/// Every file under `dir`, read as text, joined (to look for a leaked key).
fn all_text(dir: &Path) -> String {
    let mut s = String::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            s.push_str(&all_text(&p));
        } else if let Ok(t) = std::fs::read_to_string(&p) {
            s.push_str(&t);
        }
    }
    s
}

#[test]
fn the_loop_writes_the_files_and_both_checkpoints_pass_with_tokens_cost_and_traces() {
    let m = "gpt-4o-mini";
    let srv_acts = vec![
        calls(m, &[("list_files", json!({}))]),
        calls(
            m,
            &[(
                "write_file",
                json!({"path": "textkit.py", "content": example_file("agent/changes/c1.py")}),
            )],
        ),
        say(m, "Created textkit.py with words()."),
        calls(m, &[("read_file", json!({"path": "textkit.py"}))]),
        calls(
            m,
            &[(
                "write_file",
                json!({"path": "textkit.py", "content": example_file("agent/changes/c2.py")}),
            )],
        ),
        say(m, "Added slugify()."),
    ];
    let srv = serve(srv_acts);
    let (tmp, dir) = setup(2, m, srv.port);
    let (code, r, text) = run(tmp.path(), &dir, &["--json"]);
    assert_eq!(code, 0, "{text}");
    let cps = r["checkpoints"].as_array().unwrap();
    assert_eq!(cps.len(), 2, "{r}");
    for (c, steps) in cps.iter().zip([3, 3]) {
        assert_eq!(
            c["agent"],
            json!({"kind": "finished", "steps": steps}),
            "{c}"
        );
        assert_eq!(c["strict"], "pass", "{c}");
        assert_eq!(c["signals"]["model_calls"], steps);
        assert_eq!(
            c["signals"]["tokens"],
            json!({"input_tokens": 300, "output_tokens": 60})
        );
        // gpt-4o-mini: $0.15 / $0.60 per million tokens.
        let cost = c["signals"]["cost_usd"].as_f64().unwrap();
        assert!(
            (cost - (300.0 * 0.15 + 60.0 * 0.60) / 1e6).abs() < 1e-12,
            "{cost}"
        );
    }
    let out = tmp.path().join("out");
    assert_eq!(
        std::fs::read_to_string(out.join("workspace/textkit.py")).unwrap(),
        example_file("agent/changes/c2.py")
    );
    // The trace of C2: its model calls and tool calls, as a run records them.
    assert_eq!(cps[1]["trace"], "C2.trace.json");
    let mut trace: Value =
        serde_json::from_slice(&std::fs::read(out.join("C2.trace.json")).unwrap()).unwrap();
    common::expand_trace(&mut trace);
    let kinds: Vec<&str> = trace["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(
        kinds,
        ["llm_call", "tool_call", "llm_call", "tool_call", "llm_call"],
        "{trace}"
    );
    assert_eq!(trace["turns"][0]["answer"], "Added slugify().");
    // Each checkpoint is a fresh conversation: the system prompt and that checkpoint's
    // spec; the tool results go back to the model.
    let bodies = srv.bodies();
    assert_eq!(bodies.len(), 6);
    let first = &bodies[0]["messages"];
    assert_eq!(first[0]["role"], "system");
    assert!(
        first[0]["content"]
            .as_str()
            .unwrap()
            .contains("cannot run commands")
    );
    assert!(first[1]["content"].as_str().unwrap().contains("words(s)"));
    let c2 = &bodies[3]["messages"];
    assert_eq!(c2.as_array().unwrap().len(), 2, "C2 starts afresh: {c2}");
    assert!(c2[1]["content"].as_str().unwrap().contains("slugify"));
    let after_read = bodies[4]["messages"].to_string();
    assert!(after_read.contains("return s.split()"), "{after_read}");
    let tools: Vec<&str> = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "list_files",
            "read_file",
            "write_file",
            "delete_file",
            "search_files"
        ]
    );
    // The key went in the header only, and into no output.
    assert!(srv.requests.lock().unwrap()[0].contains(KEY));
    assert!(!text.contains(KEY));
    assert!(!all_text(&out).contains(KEY));
}

#[test]
fn paths_leaving_the_workspace_are_refused_recorded_and_change_nothing() {
    let m = "test-model";
    let tmp0 = tempfile::tempdir().unwrap();
    let victim = tmp0.path().join("victim.txt");
    std::fs::write(&victim, "untouched").unwrap();
    let victim_s = victim.display().to_string();
    let srv = serve(vec![
        calls(
            m,
            &[
                (
                    "write_file",
                    json!({"path": "../escaped.txt", "content": "x"}),
                ),
                ("read_file", json!({"path": "/etc/passwd"})),
                ("write_file", json!({"path": victim_s, "content": "owned"})),
                (
                    "write_file",
                    json!({"path": "../traj/tests/check.py", "content": "import sys; sys.exit(0)"}),
                ),
                ("delete_file", json!({"path": "sub/../../trajectory.json"})),
                ("run_shell", json!({"command": "touch /tmp/x"})),
            ],
        ),
        say(m, "I could not write anything."),
    ]);
    let (tmp, dir) = setup(1, m, srv.port);
    let check_before = std::fs::read(dir.join("tests/check.py")).unwrap();
    let (code, r, text) = run(tmp.path(), &dir, &["--json"]);
    // Nothing was written: C1's test fails; the run is not broken by the refusals.
    assert_eq!(code, 1, "{text}");
    let c = &r["checkpoints"][0];
    assert_eq!(c["agent"]["kind"], "finished", "{c}");
    assert_eq!(c["strict"], "fail");
    assert!(r.get("integrity").is_none(), "{r}");
    let out = tmp.path().join("out");
    assert!(!out.join("escaped.txt").exists());
    assert!(!tmp.path().join("escaped.txt").exists());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
    assert_eq!(
        std::fs::read(dir.join("tests/check.py")).unwrap(),
        check_before
    );
    // Every refusal went back to the model and is in the trace.
    let trace: Value =
        serde_json::from_slice(&std::fs::read(out.join("C1.trace.json")).unwrap()).unwrap();
    let errors: Vec<String> = trace["spans"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "tool_call")
        .map(|s| s["error"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(errors.len(), 6, "{trace}");
    for e in &errors[..5] {
        assert!(e.contains("refused"), "{e}");
    }
    assert!(errors[5].contains("no shell"), "{}", errors[5]);
    let second = srv.bodies()[1]["messages"].to_string();
    assert!(second.contains("absolute paths are refused"), "{second}");
    assert!(second.contains("`..` is refused"), "{second}");
}

#[test]
fn the_step_limit_ends_a_checkpoint_as_step_limit_not_finished() {
    let m = "test-model";
    let srv = serve(vec![calls(m, &[("list_files", json!({}))])]);
    let (tmp, dir) = setup(1, m, srv.port);
    let (code, r, text) = run(tmp.path(), &dir, &["--max-steps", "3"]);
    assert_eq!(code, 1, "{text}");
    assert_eq!(
        r["checkpoints"][0]["agent"],
        json!({"kind": "step_limit", "steps": 3})
    );
    assert_eq!(srv.requests.lock().unwrap().len(), 3);
    assert!(text.contains("step limit"), "{text}");
    assert!(
        text.contains("still calling tools after 3 model calls"),
        "{text}"
    );
    // A model without a price: the cost is unknown, not 0.
    assert!(r["checkpoints"][0]["signals"]["cost_usd"].is_null());
}

#[test]
fn an_empty_reply_is_a_protocol_error_never_finished() {
    let m = "test-model";
    let srv = serve(vec![say(m, "")]);
    let (tmp, dir) = setup(1, m, srv.port);
    let (code, r, text) = run(tmp.path(), &dir, &[]);
    assert_eq!(code, 1, "{text}");
    let a = &r["checkpoints"][0]["agent"];
    assert_eq!(a["kind"], "model_error", "{a}");
    assert_eq!(a["class"], "protocol", "{a}");
    assert!(text.contains("model error"), "{text}");
}

#[test]
fn a_model_500_is_a_classified_error_not_a_pass_and_the_key_stays_secret() {
    let srv = serve(vec![Act::Status(500)]);
    let (tmp, dir) = setup(1, "test-model", srv.port);
    let (code, r, text) = run(tmp.path(), &dir, &[]);
    assert_eq!(code, 1, "{text}");
    let c = &r["checkpoints"][0];
    assert_eq!(c["agent"]["kind"], "model_error", "{c}");
    assert_eq!(c["agent"]["class"], "transport", "{c}");
    assert_eq!(c["strict"], "fail");
    assert!(c["signals"]["cost_usd"].is_null());
    assert_eq!(srv.requests.lock().unwrap().len(), 2, "bounded retries");
    assert!(text.contains("the model failed (transport)"), "{text}");
    assert!(!text.contains(KEY));
    assert!(!all_text(&tmp.path().join("out")).contains(KEY));
}

#[test]
fn a_spec_that_is_not_a_chat_model_is_a_usage_error() {
    let (tmp, dir) = setup(1, "m", 9);
    let o = Command::new(env!("CARGO_BIN_EXE_gauntlet"))
        .args(["trajectory", "run"])
        .arg(dir.join("trajectory.yaml"))
        .args(["--agent", "model:exec:python3 x.py"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("not a chat model"), "{err}");
}

/// Copies a folder (the impact example) so that nothing the run does reaches the repository.
fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

#[test]
fn an_impact_task_runs_through_the_loop_with_its_test_context_and_evidence_checked() {
    let m = "test-model";
    let ops = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/impact/python-repo/calc/ops.py"),
    )
    .unwrap();
    let srv = serve(vec![
        calls(m, &[("read_file", json!({"path": "calc/ops.py"}))]),
        calls(
            m,
            &[
                (
                    "write_file",
                    json!({"path": "calc/ops.py", "content": format!("{ops}\n\ndef mul(a, b):\n    return a * b\n")}),
                ),
                (
                    "write_file",
                    json!({"path": ".gauntlet/evidence.json", "content": "{\"tests\": [{\"id\": \"acceptance/test_mul.py::test_mul\", \"outcome\": \"passed\"}]}"}),
                ),
            ],
        ),
        say(m, "Added mul."),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("impact");
    copy(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/impact"),
        &dir,
    );
    std::fs::write(
        dir.join("one.yaml"),
        "name: one\nrepo: python-repo\ntasks:\n  - id: mul\n    prompt: Add mul(a, b) to calc/ops.py, returning the product of a and b.\n    touches: [calc/ops.py]\n    tests: [acceptance/test_mul.py]\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_gauntlet"))
        .args(["impact", "task"])
        .arg(dir.join("one.yaml"))
        .arg("--agent")
        .arg("model:openai:test-model")
        .arg("--base-url")
        .arg(format!("http://127.0.0.1:{}/v1", srv.port))
        .arg("--out")
        .arg(&out)
        .arg("--json")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    let r: Value = serde_json::from_slice(&std::fs::read(out.join("tasks.json")).unwrap()).unwrap();
    let t = &r["tasks"][0];
    assert_eq!(
        t["agent"],
        json!({"kind": "finished", "steps": 3}),
        "{text}"
    );
    assert_eq!(t["acceptance"], "pass", "{t}");
    // Its evidence names only the acceptance test, not the affected ones: not done.
    assert_eq!(t["evidence"]["kind"], "incomplete", "{t}");
    assert_eq!(t["completion"], "not_done", "{t}");
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert_eq!(t["model_calls"], 3);
    assert_eq!(t["trace"], "1-mul/trace.json");
    assert!(out.join("1-mul/trace.json").is_file());
    assert!(t["cost_usd"].is_null(), "no price for test-model: unknown");
    let user = srv.bodies()[0]["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(user.contains("Existing tests affected"), "{user}");
    assert!(user.contains("acceptance/test_mul.py"), "{user}");
    assert!(user.contains("cannot run commands"), "{user}");
}
