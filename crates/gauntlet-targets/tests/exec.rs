//! The `exec` target against small Python agents written to a temporary directory: answers,
//! tool round trips, multi-turn sessions, the pinned environment, protocol and crash errors,
//! secret redaction, and killing an agent whose trial was cut off.

#![allow(clippy::print_stderr)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use gauntlet_core::redact::Redactor;
use gauntlet_core::suite::Case;
use gauntlet_core::target::{
    ExecTargetConfig, Session, Target, TargetError, ToolHost, TrialContext, TurnAnswer,
};
use gauntlet_core::tools::ToolDef;
use gauntlet_core::trace::{
    Approval, Message, Span, ToolCallRequest, ToolSpanInput, TraceRecorder,
};
use gauntlet_targets::exec::ExecTarget;
use serde_json::{Value, json};

mod common;

use common::have_python;

/// Shared by every agent: line-oriented send and receive, and the start message.
const PRELUDE: &str = r#"
import json, os, sys

def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()

def recv():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)

start = recv()
"#;

/// Writes an agent script (the prelude, then `body`) and a config that runs it.
fn agent(body: &str) -> (tempfile::TempDir, ExecTargetConfig) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("agent.py");
    std::fs::write(&script, format!("{PRELUDE}\n{body}")).unwrap();
    let cfg = ExecTargetConfig {
        command: vec!["python3".into(), script.display().to_string()],
        env: BTreeMap::new(),
        pass_env: Vec::new(),
        frozen_time: None,
    };
    (dir, cfg)
}

fn target(cfg: &ExecTargetConfig) -> ExecTarget {
    ExecTarget::new(cfg, &mut Redactor::new()).expect("target builds")
}

fn case(id: &str) -> Case {
    serde_json::from_value(json!({"id": id, "input": "hi", "vars": {"customer": "dana"}})).unwrap()
}

fn tools() -> Vec<ToolDef> {
    vec![
        serde_json::from_value(json!({
            "name": "get_order",
            "description": "Look up an order by id.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        }))
        .unwrap(),
    ]
}

fn ctx<'a>(case: &'a Case, tools: &'a [ToolDef]) -> TrialContext<'a> {
    TrialContext {
        case,
        system_prompt: Some("You are a test agent."),
        tools,
        trial: 0,
        seed: 42,
        session_id: format!("{}-0-42", case.id),
    }
}

/// A tool host that records calls and answers every one with the same text.
struct CannedTools {
    reply: String,
    calls: Vec<ToolCallRequest>,
}

impl CannedTools {
    fn new(reply: &str) -> Self {
        CannedTools {
            reply: reply.into(),
            calls: Vec::new(),
        }
    }
}

impl ToolHost for CannedTools {
    fn call(&mut self, call: &ToolCallRequest, rec: &mut TraceRecorder) -> Message {
        self.calls.push(call.clone());
        rec.tool_call(ToolSpanInput {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            output: Some(self.reply.clone()),
            error: None,
            duration_ms: 0,
            approval: Approval::NotRequired,
            side_effect: None,
        });
        Message::tool_result(&call.id, &call.name, self.reply.clone())
    }
}

async fn turn(
    session: &mut Box<dyn Session + '_>,
    user: &str,
    rec: &mut TraceRecorder,
) -> Result<TurnAnswer, TargetError> {
    let mut tools = CannedTools::new("unused");
    session.turn(user, &mut tools, rec).await
}

/// Polls until `cond` holds, for up to five seconds.
async fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    for _ in 0..100 {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    cond()
}

#[tokio::test]
async fn plain_answer_and_the_start_message() {
    if !have_python() {
        return;
    }
    let (_dir, cfg) = agent(
        r#"
msg = recv()
assert msg["type"] == "user"
send({"type": "answer", "content": json.dumps({"start": start, "user": msg["content"]})})
recv()
"#,
    );
    let t = target(&cfg);
    let (c, tools) = (case("plain"), tools());
    let ctx = ctx(&c, &tools);
    let mut s = t.open(&ctx).await.unwrap();
    let mut rec = TraceRecorder::new();
    let a = turn(&mut s, "hello agent", &mut rec).await.unwrap();
    assert!(!a.truncated);
    let v: Value = serde_json::from_str(&a.content).unwrap();
    assert_eq!(v["user"], "hello agent");
    let start = &v["start"];
    assert_eq!(start["type"], "start");
    assert_eq!(start["protocol"], 1);
    assert_eq!(start["session_id"], "plain-0-42");
    assert_eq!(start["case_id"], "plain");
    assert_eq!(start["trial"], 0);
    assert_eq!(start["seed"], 42);
    assert_eq!(start["system_prompt"], "You are a test agent.");
    assert_eq!(start["vars"], json!({"customer": "dana"}));
    assert_eq!(start["frozen_time"], "2025-01-01T00:00:00Z");
    assert_eq!(start["tools"][0]["name"], "get_order");
    assert_eq!(
        start["tools"][0]["parameters"]["properties"]["order_id"]["type"],
        "string"
    );
    // Fixtures never reach the agent.
    assert!(start["tools"][0].get("fixtures").is_none());
    assert_eq!(t.info().label, format!("exec:{}", cfg.command.join(" ")));
}

#[tokio::test]
async fn tool_call_round_trip_with_decision_and_llm_call() {
    if !have_python() {
        return;
    }
    let (_dir, cfg) = agent(
        r#"
msg = recv()
send({"type": "llm_call", "model": "test-model",
      "messages_in": [{"role": "user", "content": msg["content"]}],
      "message_out": {"role": "assistant", "content": "",
                      "tool_calls": [{"id": "c1", "name": "get_order", "arguments": {"order_id": "A-1"}}]},
      "usage": {"input_tokens": 12, "output_tokens": 3}, "latency_ms": 7})
send({"type": "tool_call", "id": "c1", "name": "get_order", "arguments": {"order_id": "A-1"}})
res = recv()
assert res["type"] == "tool_result" and res["id"] == "c1" and res["name"] == "get_order", res
send({"type": "decision", "branch": "answer_from_tool", "reason": "the order was found"})
# Arguments as a JSON string (a model's raw output) and without an id.
send({"type": "tool_call", "name": "get_order", "arguments": "{\"order_id\": \"A-2\"}"})
res2 = recv()
send({"type": "answer", "content": "tool said: " + res["content"] + " / " + res2["id"]})
recv()
"#,
    );
    let t = target(&cfg);
    let (c, tools) = (case("tools"), tools());
    let ctx = ctx(&c, &tools);
    let mut s = t.open(&ctx).await.unwrap();
    let mut rec = TraceRecorder::new();
    let mut host = CannedTools::new(r#"{"status": "shipped"}"#);
    let a = s.turn("where is A-1?", &mut host, &mut rec).await.unwrap();
    assert_eq!(a.content, r#"tool said: {"status": "shipped"} / call-1"#);
    assert_eq!(host.calls.len(), 2);
    assert_eq!(host.calls[0].id, "c1");
    assert_eq!(host.calls[0].arguments, json!({"order_id": "A-1"}));
    assert_eq!(host.calls[1].arguments, json!({"order_id": "A-2"}));
    assert!(!host.calls[1].malformed);
    let trace = rec.finish();
    let llm = trace.llm_calls().next().expect("an llm span");
    assert_eq!(llm.model.as_deref(), Some("test-model"));
    assert_eq!(llm.usage.input_tokens, 12);
    assert_eq!(llm.latency_ms, 7);
    assert_eq!(llm.message_out.tool_calls[0].name, "get_order");
    let tool = trace.tool_calls().next().expect("a tool span");
    assert_eq!(
        tool.parent,
        Some(llm.id),
        "tool spans nest under the reported model call"
    );
    let decision = trace
        .spans
        .iter()
        .find_map(|s| match s {
            Span::Decision(d) => Some(d),
            _ => None,
        })
        .expect("a decision span");
    assert_eq!(decision.branch, "answer_from_tool");
    assert_eq!(decision.reason.as_deref(), Some("the order was found"));
}

#[tokio::test]
async fn multi_turn_keeps_one_process_and_ends_gracefully() {
    if !have_python() {
        return;
    }
    let (dir, mut cfg) = agent(
        r#"
seen = []
while True:
    msg = recv()
    if msg["type"] == "end":
        open(os.environ["MARKER"], "w").write("ended")
        sys.exit(0)
    seen.append(msg["content"])
    send({"type": "answer", "content": "pid=%d turns=%s" % (os.getpid(), "|".join(seen))})
"#,
    );
    let marker = dir.path().join("ended.txt");
    cfg.env
        .insert("MARKER".into(), marker.display().to_string());
    let t = target(&cfg);
    let (c, tools) = (case("multi"), tools());
    let ctx = ctx(&c, &tools);
    let mut s = t.open(&ctx).await.unwrap();
    let mut rec = TraceRecorder::new();
    let a1 = turn(&mut s, "first", &mut rec).await.unwrap().content;
    let a2 = turn(&mut s, "second", &mut rec).await.unwrap().content;
    let a3 = turn(&mut s, "third", &mut rec).await.unwrap().content;
    assert!(a1.ends_with("turns=first"), "{a1}");
    assert!(a2.ends_with("turns=first|second"), "{a2}");
    assert!(a3.ends_with("turns=first|second|third"), "{a3}");
    let pid = |a: &str| a.split_whitespace().next().unwrap().to_owned();
    assert_eq!(pid(&a1), pid(&a3), "one process per trial");
    drop(s);
    assert!(
        eventually(|| marker.exists()).await,
        "the agent got `end` after the last turn"
    );
}

#[tokio::test]
async fn the_environment_is_pinned() {
    if !have_python() {
        return;
    }
    let (dir, mut cfg) = agent(
        r#"
msg = recv()
send({"type": "answer", "content": json.dumps({"env": dict(os.environ), "cwd": os.getcwd()})})
recv()
"#,
    );
    cfg.env.insert("EXTRA".into(), "from-config".into());
    cfg.frozen_time = Some("2030-06-01T12:00:00Z".into());
    let t = target(&cfg);
    let (c, tools) = (case("env"), tools());
    let ctx = ctx(&c, &tools);
    let mut s = t.open(&ctx).await.unwrap();
    let mut rec = TraceRecorder::new();
    let a = turn(&mut s, "env?", &mut rec).await.unwrap();
    let v: Value = serde_json::from_str(&a.content).unwrap();
    let env = &v["env"];
    assert_eq!(env["TZ"], "UTC");
    assert_eq!(env["LANG"], "C.UTF-8");
    assert_eq!(env["LC_ALL"], "C.UTF-8");
    assert_eq!(env["PYTHONHASHSEED"], "0");
    assert_eq!(env["PYTHONUNBUFFERED"], "1");
    assert_eq!(env["GAUNTLET_FROZEN_TIME"], "2030-06-01T12:00:00Z");
    assert_eq!(env["GAUNTLET_SESSION_ID"], "env-0-42");
    assert_eq!(env["GAUNTLET_CASE_ID"], "env");
    assert_eq!(env["GAUNTLET_TRIAL"], "0");
    assert_eq!(env["GAUNTLET_SEED"], "42");
    assert_eq!(env["GAUNTLET_PROTOCOL"], "1");
    assert_eq!(env["EXTRA"], "from-config");
    assert!(env["PATH"].is_string());
    // gauntlet's own environment does not leak through.
    for k in [
        "CARGO_MANIFEST_DIR",
        "CARGO_PKG_NAME",
        "USER",
        "SHELL",
        "TERM",
    ] {
        assert!(
            env.get(k).is_none(),
            "{k} leaked into the agent's environment"
        );
    }
    let cwd = PathBuf::from(v["cwd"].as_str().unwrap());
    assert_eq!(env["HOME"].as_str().map(Path::new), Some(cwd.as_path()));
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap();
    let tmp = canon(&std::env::temp_dir());
    assert!(
        canon(&cwd).starts_with(&tmp),
        "{} is not under {}",
        cwd.display(),
        tmp.display()
    );
    let here = canon(&std::env::current_dir().unwrap());
    assert!(
        !canon(&cwd).starts_with(&here),
        "the agent runs outside the suite's folder"
    );
    assert!(
        !canon(&cwd).starts_with(canon(dir.path())),
        "nor in the script's folder"
    );
    drop(s);
    assert!(
        eventually(|| !cwd.exists()).await,
        "the working directory is removed after the trial"
    );
}

#[tokio::test]
async fn a_seed_is_cut_to_53_bits() {
    if !have_python() {
        return;
    }
    let (_dir, cfg) = agent(
        r#"
recv()
send({"type": "answer", "content": "%d %s" % (start["seed"], os.environ["GAUNTLET_SEED"])})
recv()
"#,
    );
    let t = target(&cfg);
    let (c, tools) = (case("seed"), tools());
    let mut ctx = ctx(&c, &tools);
    ctx.seed = u64::MAX;
    let mut s = t.open(&ctx).await.unwrap();
    let a = turn(&mut s, "seed?", &mut TraceRecorder::new())
        .await
        .unwrap();
    let want = (1u64 << 53) - 1;
    assert_eq!(a.content, format!("{want} {want}"));
}

#[tokio::test]
async fn malformed_stdout_is_a_protocol_error() {
    if !have_python() {
        return;
    }
    let (_dir, cfg) = agent(
        r#"
recv()
sys.stderr.write("about to print a debug line\n")
sys.stderr.flush()
print("debug: thinking about it")
sys.stdout.flush()
recv()
"#,
    );
    let t = target(&cfg);
    let (c, tools) = (case("malformed"), tools());
    let ctx = ctx(&c, &tools);
    let mut s = t.open(&ctx).await.unwrap();
    let mut rec = TraceRecorder::new();
    let e = turn(&mut s, "hi", &mut rec).await.unwrap_err();
    let TargetError::Protocol(msg) = &e else {
        panic!("expected a protocol error, got {e:?}");
    };
    assert!(msg.contains("debug: thinking about it"), "{msg}");
    assert!(msg.contains("not a JSON object"), "{msg}");
    // The session is finished after a failure.
    assert!(turn(&mut s, "again", &mut rec).await.is_err());
    assert!(
        !rec.trace().transport.is_empty(),
        "the failure is in the trace"
    );
}

#[tokio::test]
async fn unknown_types_and_bad_fields_are_protocol_errors() {
    if !have_python() {
        return;
    }
    for (line, want) in [
        (r#"{"type": "shout", "content": "hi"}"#, "shout"),
        (
            r#"{"type": "answer", "text": "no content field"}"#,
            "content",
        ),
        (r#"[1, 2, 3]"#, "not a JSON object"),
    ] {
        let (_dir, cfg) = agent(&format!(
            "recv()\nsys.stdout.write({line:?} + \"\\n\")\nsys.stdout.flush()\nrecv()\n"
        ));
        let t = target(&cfg);
        let (c, tools) = (case("unknown"), tools());
        let ctx = ctx(&c, &tools);
        let mut s = t.open(&ctx).await.unwrap();
        let e = turn(&mut s, "hi", &mut TraceRecorder::new())
            .await
            .unwrap_err();
        assert!(
            matches!(&e, TargetError::Protocol(m) if m.contains(want)),
            "{line}: {e:?}"
        );
    }
}

#[tokio::test]
async fn a_second_answer_to_one_turn_is_a_protocol_error() {
    if !have_python() {
        return;
    }
    let (_dir, cfg) = agent(
        r#"
recv()
a = json.dumps({"type": "answer", "content": "one"})
b = json.dumps({"type": "answer", "content": "two"})
sys.stdout.write(a + "\n" + b + "\n")
sys.stdout.flush()
while True:
    recv()
"#,
    );
    let t = target(&cfg);
    let (c, tools) = (case("twice"), tools());
    let ctx = ctx(&c, &tools);
    let mut s = t.open(&ctx).await.unwrap();
    let mut rec = TraceRecorder::new();
    assert_eq!(turn(&mut s, "1", &mut rec).await.unwrap().content, "one");
    let e = turn(&mut s, "2", &mut rec).await.unwrap_err();
    assert!(
        matches!(&e, TargetError::Protocol(m) if m.contains("two") && m.contains("no turn was open")),
        "{e:?}"
    );
}

#[tokio::test]
async fn a_crash_before_answering_is_a_transport_error_with_the_stderr_tail() {
    if !have_python() {
        return;
    }
    let (_dir, cfg) = agent(
        r#"
recv()
for i in range(50):
    sys.stderr.write("noise line %d\n" % i)
raise RuntimeError("the model client blew up")
"#,
    );
    let t = target(&cfg);
    let (c, tools) = (case("crash"), tools());
    let ctx = ctx(&c, &tools);
    let mut s = t.open(&ctx).await.unwrap();
    let e = turn(&mut s, "hi", &mut TraceRecorder::new())
        .await
        .unwrap_err();
    let TargetError::Transport(msg) = &e else {
        panic!("expected a transport error, got {e:?}");
    };
    assert!(msg.contains("exited before answering"), "{msg}");
    assert!(msg.contains("exit status: 1"), "{msg}");
    assert!(
        msg.contains("RuntimeError: the model client blew up"),
        "{msg}"
    );
    assert!(
        !msg.contains("noise line 0 "),
        "only the tail is kept: {msg}"
    );
    assert!(msg.len() < 5000, "the tail is bounded: {} bytes", msg.len());
}

#[tokio::test]
async fn an_agent_that_exits_at_once_fails_open_or_its_first_turn() {
    if !have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("agent.py");
    std::fs::write(
        &script,
        "import sys\nsys.stderr.write('bad config\\n')\nsys.exit(7)\n",
    )
    .unwrap();
    let cfg = ExecTargetConfig {
        command: vec!["python3".into(), script.display().to_string()],
        env: BTreeMap::new(),
        pass_env: Vec::new(),
        frozen_time: None,
    };
    let t = target(&cfg);
    let (c, tools) = (case("early"), tools());
    let ctx = ctx(&c, &tools);
    // The start message may still fit the pipe before the exit is noticed: then the first
    // turn reports it.
    let e = match t.open(&ctx).await {
        Err(e) => e,
        Ok(mut s) => turn(&mut s, "hi", &mut TraceRecorder::new())
            .await
            .unwrap_err(),
    };
    assert!(
        matches!(&e, TargetError::Transport(m) if m.contains("exit status: 7") && m.contains("bad config")),
        "{e:?}"
    );
}

#[tokio::test]
async fn agent_reported_errors_map_to_target_errors() {
    if !have_python() {
        return;
    }
    for (kind, want) in [
        ("null", "transport"),
        ("\"blocked\"", "blocked"),
        ("\"timeout\"", "timeout"),
    ] {
        let (_dir, cfg) = agent(&format!(
            "recv()\nsend({{\"type\": \"error\", \"message\": \"upstream said no\", \"kind\": {}}})\nrecv()\n",
            if kind == "null" { "None" } else { kind }
        ));
        let t = target(&cfg);
        let (c, tools) = (case("err"), tools());
        let ctx = ctx(&c, &tools);
        let mut s = t.open(&ctx).await.unwrap();
        let e = turn(&mut s, "hi", &mut TraceRecorder::new())
            .await
            .unwrap_err();
        let got = match &e {
            TargetError::Transport(m) | TargetError::Blocked(m) | TargetError::Timeout(m) => {
                assert!(m.contains("upstream said no"), "{m}");
                match e {
                    TargetError::Transport(_) => "transport",
                    TargetError::Blocked(_) => "blocked",
                    _ => "timeout",
                }
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(got, want);
    }
}

/// A variable of this test process with a value long enough to be redacted, to stand in for
/// an API key (tests cannot set variables: `unsafe_code` is forbidden).
fn some_env_secret() -> Option<(String, String)> {
    ["CARGO_MANIFEST_DIR", "PATH", "HOME"].iter().find_map(|k| {
        std::env::var(k)
            .ok()
            .filter(|v| v.len() >= 8)
            .map(|v| ((*k).to_owned(), v))
    })
}

#[tokio::test]
async fn secrets_from_env_references_never_appear_in_errors() {
    if !have_python() {
        return;
    }
    let Some((name, secret)) = some_env_secret() else {
        eprintln!("skipped: no environment variable to use as a secret");
        return;
    };
    // Leaked on stderr and then in a malformed stdout line; then, in a second agent, in a
    // crash's stderr tail and in an agent-reported error.
    let bodies = [
        r#"
recv()
sys.stderr.write("key is " + os.environ["API_KEY"] + "\n")
sys.stderr.flush()
print("oops " + os.environ["API_KEY"])
sys.stdout.flush()
recv()
"#,
        r#"
recv()
sys.stderr.write("Bearer " + os.environ["API_KEY"] + "\n")
sys.exit(2)
"#,
        r#"
recv()
send({"type": "error", "message": "401 for key " + os.environ["API_KEY"]})
recv()
"#,
    ];
    for body in bodies {
        let (_dir, mut cfg) = agent(body);
        cfg.env.insert("API_KEY".into(), format!("${{env:{name}}}"));
        let mut redactor = Redactor::new();
        let t = ExecTarget::new(&cfg, &mut redactor).unwrap();
        assert!(
            redactor
                .redact(&secret)
                .contains(&format!("[REDACTED:{name}]")),
            "the resolved value is registered with the caller's redactor"
        );
        assert!(!format!("{:?}", t.info()).contains(&secret));
        let (c, tools) = (case("secret"), tools());
        let ctx = ctx(&c, &tools);
        let mut s = t.open(&ctx).await.unwrap();
        let mut rec = TraceRecorder::new();
        let e = turn(&mut s, "hi", &mut rec).await.unwrap_err().to_string();
        assert!(!e.contains(&secret), "secret leaked: {e}");
        assert!(e.contains(&format!("[REDACTED:{name}]")), "{e}");
        let trace = serde_json::to_string(rec.trace()).unwrap();
        assert!(
            !trace.contains(&secret),
            "secret leaked into the trace: {trace}"
        );
    }
}

#[tokio::test]
async fn configuration_errors() {
    let mut cfg = ExecTargetConfig {
        command: vec!["sh".into(), "-c".into(), "true".into()],
        env: BTreeMap::new(),
        pass_env: Vec::new(),
        frozen_time: None,
    };
    cfg.env.insert(
        "KEY".into(),
        "${env:GAUNTLET_TEST_SURELY_UNSET_VARIABLE_0}".into(),
    );
    let e = ExecTarget::new(&cfg, &mut Redactor::new())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("GAUNTLET_TEST_SURELY_UNSET_VARIABLE_0") && e.contains("not set"),
        "{e}"
    );

    cfg.env.clear();
    cfg.env.insert("GAUNTLET_SEED".into(), "1".into());
    let e = ExecTarget::new(&cfg, &mut Redactor::new())
        .unwrap_err()
        .to_string();
    assert!(e.contains("GAUNTLET_SEED"), "{e}");

    cfg.env.clear();
    cfg.command = vec!["surely-not-a-program-gauntlet-0".into()];
    let e = ExecTarget::new(&cfg, &mut Redactor::new())
        .unwrap_err()
        .to_string();
    assert!(e.contains("not an executable on PATH"), "{e}");

    cfg.command = vec!["./no/such/agent".into()];
    let e = ExecTarget::new(&cfg, &mut Redactor::new())
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not exist"), "{e}");

    cfg.command = vec![];
    assert!(matches!(
        ExecTarget::new(&cfg, &mut Redactor::new()),
        Err(gauntlet_targets::AgentError::NoCommand { kind: "exec" })
    ));
}

#[tokio::test]
async fn a_cut_off_trial_kills_the_agent() {
    if !have_python() {
        return;
    }
    let (dir, mut cfg) = agent(
        r#"
open(os.environ["PID_FILE"], "w").write(str(os.getpid()))
recv()
import time
time.sleep(3600)
"#,
    );
    let pid_file = dir.path().join("pid");
    cfg.env
        .insert("PID_FILE".into(), pid_file.display().to_string());
    let t = target(&cfg);
    let (c, tools) = (case("hang"), tools());
    let ctx = ctx(&c, &tools);
    let mut s = t.open(&ctx).await.unwrap();
    let mut rec = TraceRecorder::new();
    let cut = tokio::time::timeout(Duration::from_millis(500), turn(&mut s, "hi", &mut rec)).await;
    assert!(cut.is_err(), "the turn never ends on its own");
    assert!(eventually(|| pid_file.exists()).await);
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let proc_dir = PathBuf::from(format!("/proc/{pid}"));
    if !Path::new("/proc/self").exists() {
        eprintln!("no /proc: only checked that the turn returned");
        return;
    }
    assert!(
        proc_dir.exists(),
        "the agent is still running before the drop"
    );
    drop(s);
    // Gone, or at worst a zombie for an instant before it is reaped.
    let gone = || {
        std::fs::read_to_string(proc_dir.join("stat"))
            .map(|s| s.split_whitespace().nth(2) == Some("Z"))
            .unwrap_or(true)
    };
    assert!(eventually(gone).await, "the agent was not killed");
}

#[tokio::test]
async fn an_empty_answer_is_a_protocol_error_unless_the_case_allows_it() {
    if !have_python() {
        return;
    }
    let (_dir, cfg) = agent(
        r#"
recv()
send({"type": "answer", "content": "  "})
recv()
"#,
    );
    let t = target(&cfg);
    let tools = tools();
    let c = case("empty");
    let trial = ctx(&c, &tools);
    let mut s = t.open(&trial).await.unwrap();
    let mut rec = TraceRecorder::new();
    let e = turn(&mut s, "hi", &mut rec).await.unwrap_err();
    let TargetError::Protocol(msg) = &e else {
        panic!("expected a protocol error, got {e:?}");
    };
    assert!(msg.contains("answered with nothing"), "{msg}");
    assert!(
        msg.contains(r#""content": "  ""#),
        "the raw line is quoted: {msg}"
    );
    drop(s);

    let mut c = case("empty-allowed");
    c.allow_empty = true;
    let trial = ctx(&c, &tools);
    let mut s = t.open(&trial).await.unwrap();
    let a = turn(&mut s, "hi", &mut TraceRecorder::new()).await.unwrap();
    assert_eq!(a.content, "  ");
}

/// Polls until a process is gone (or a zombie nobody has reaped yet).
async fn gone(pid: u32) -> bool {
    eventually(|| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                s.rsplit(')')
                    .next()
                    .and_then(|r| r.split_whitespace().next())
                    == Some("Z")
            })
            .unwrap_or(true)
    })
    .await
}

#[tokio::test]
async fn what_an_agent_starts_dies_with_its_trial() {
    if !have_python() || !Path::new("/proc/self").exists() {
        return;
    }
    // The agent starts `sleep 1000` and leaves it running; then it either answers and ends
    // normally, or hangs until its trial is cut off.
    let (dir, mut cfg) = agent(
        r#"
import subprocess
child = subprocess.Popen(["sleep", "1000"])
open(os.environ["PID_FILE"], "w").write(str(child.pid))
msg = recv()
if msg["content"] == "hang":
    import time
    time.sleep(3600)
send({"type": "answer", "content": "started a helper"})
recv()
"#,
    );
    let pid_file = dir.path().join("pid");
    cfg.env
        .insert("PID_FILE".into(), pid_file.display().to_string());
    let t = target(&cfg);
    let tools = tools();
    for how in ["answer", "hang"] {
        let _ = std::fs::remove_file(&pid_file);
        let c = case(how);
        let ctx = ctx(&c, &tools);
        let mut s = t.open(&ctx).await.unwrap();
        let mut rec = TraceRecorder::new();
        let played =
            tokio::time::timeout(Duration::from_millis(1500), turn(&mut s, how, &mut rec)).await;
        assert_eq!(played.is_err(), how == "hang", "{how}");
        assert!(eventually(|| pid_file.exists()).await, "{how}");
        let pid: u32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(
            Path::new(&format!("/proc/{pid}")).exists(),
            "{how}: the helper runs during the trial"
        );
        // The trial ends: the graceful end (`end`, the agent exits on its own) or the cut.
        drop(s);
        assert!(
            gone(pid).await,
            "{how}: the agent's `sleep 1000` outlived its trial"
        );
    }
}

#[tokio::test]
async fn pass_env_passes_named_variables_and_refuses_secrets() {
    if !have_python() {
        return;
    }
    let (_dir, mut cfg) = agent(
        r#"
recv()
send({"type": "answer", "content": json.dumps(dict(os.environ))})
recv()
"#,
    );
    // PATH is a variable every test process has; HOME too, which the pins would set
    // otherwise.
    cfg.pass_env = vec!["HOME".into(), "ZZ_TEST_SURELY_UNSET_1".into()];
    let t = target(&cfg);
    let tools = tools();
    let c = case("pass");
    let ctx = ctx(&c, &tools);
    let mut s = t.open(&ctx).await.unwrap();
    let a = turn(&mut s, "env?", &mut TraceRecorder::new())
        .await
        .unwrap();
    let env: Value = serde_json::from_str(&a.content).unwrap();
    assert_eq!(
        env["HOME"].as_str(),
        std::env::var("HOME").ok().as_deref(),
        "a passed variable keeps gauntlet's value"
    );
    assert!(
        env.get("ZZ_TEST_SURELY_UNSET_1").is_none(),
        "unset: not passed"
    );
    drop(s);

    for (name, secret) in [
        ("OPENAI_API_KEY", true),
        ("GITHUB_TOKEN", true),
        ("TMPDIR", false),
    ] {
        cfg.pass_env = vec![name.into()];
        let built = ExecTarget::new(&cfg, &mut Redactor::new());
        assert_eq!(
            matches!(
                built,
                Err(gauntlet_targets::AgentError::SecretPassEnv { .. })
            ),
            secret,
            "{name}"
        );
    }
    cfg.pass_env = vec!["GAUNTLET_SEED".into()];
    assert!(matches!(
        ExecTarget::new(&cfg, &mut Redactor::new()),
        Err(gauntlet_targets::AgentError::ReservedEnv { .. })
    ));
}
