//! The `http` target against an app on 127.0.0.1: templated requests (input, history, vars,
//! session id, headers from the environment), answer and tool-call extraction by JSON path,
//! and a missing answer as a protocol error.

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;
use gauntlet_core::redact::Redactor;
use gauntlet_core::suite::Case;
use gauntlet_core::target::{NoTools, TargetConfig, TargetError, TrialContext};
use gauntlet_core::trace::TraceRecorder;
use serde_json::{Value, json};

type Seen = Arc<Mutex<Vec<(HeaderMap, Value)>>>;

async fn app(State(seen): State<Seen>, headers: HeaderMap, Json(body): Json<Value>) -> Json<Value> {
    seen.lock().unwrap().push((headers, body.clone()));
    let msg = body["message"].as_str().unwrap_or("").to_owned();
    if msg == "no answer" {
        return Json(json!({"result": {}}));
    }
    let turns = body["history"].as_array().map_or(0, Vec::len);
    Json(json!({
        "result": {"text": format!("echo: {msg} (after {turns} messages)")},
        "trace": {"tools": [{"name": "lookup", "arguments": {"id": "A-1"}, "output": "{\"ok\": true}"}]}
    }))
}

async fn start() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let router = axum::Router::new()
        .route("/chat/{tenant}", post(app))
        .with_state(Arc::clone(&seen));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (format!("http://{addr}"), seen)
}

fn target(base: &str) -> TargetConfig {
    serde_json::from_value(json!({
        "kind": "http",
        "http": {
            "url": format!("{base}/chat/{{{{ vars.tenant }}}}"),
            "headers": {"x-app-token": "${env:CARGO_MANIFEST_DIR}"},
            "body": {"message": "{{ input }}", "history": "{{ history }}", "session": "{{ session_id }}"},
            "answer_path": "$.result.text",
            "tool_calls_path": "$.trace.tools"
        }
    }))
    .unwrap()
}

fn case(turns: &[&str]) -> Case {
    serde_json::from_value(json!({
        "id": "c", "turns": turns, "vars": {"tenant": "acme"}, "expect": [{"contains": "echo"}]
    }))
    .unwrap()
}

#[tokio::test]
async fn templated_multi_turn_requests_and_extraction() {
    let (base, seen) = start().await;
    let mut redactor = Redactor::new();
    let t = gauntlet_targets::build_target(&target(&base), &mut redactor).unwrap();
    let c = case(&["hello", "again"]);
    let ctx = TrialContext {
        case: &c,
        system_prompt: None,
        tools: &[],
        trial: 0,
        seed: 1,
        session_id: "sess-1".into(),
    };
    let mut session = t.open(&ctx).await.unwrap();
    let mut rec = TraceRecorder::new();
    let a1 = session.turn("hello", &mut NoTools, &mut rec).await.unwrap();
    let a2 = session.turn("again", &mut NoTools, &mut rec).await.unwrap();
    assert_eq!(a1.content, "echo: hello (after 0 messages)");
    assert_eq!(a2.content, "echo: again (after 2 messages)");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    let (headers, body) = &seen[1];
    // Tests cannot set variables (unsafe code is forbidden), so a variable cargo always sets
    // stands in for a token.
    let token = env!("CARGO_MANIFEST_DIR");
    assert_eq!(headers["x-app-token"], token);
    assert_eq!(body["session"], "sess-1");
    assert_eq!(
        body["history"][0],
        json!({"role": "user", "content": "hello"})
    );
    // The app's tool calls are in the trace, children of the app call.
    let tools: Vec<_> = rec.trace().tool_calls().collect();
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0].name, "lookup");
    assert_eq!(tools[0].arguments, json!({"id": "A-1"}));
    assert!(
        redactor
            .redact(&format!("x {token} y"))
            .contains("[REDACTED:CARGO_MANIFEST_DIR]")
    );
}

#[tokio::test]
async fn a_missing_answer_is_a_protocol_error() {
    let (base, _) = start().await;
    let mut redactor = Redactor::new();
    let t = gauntlet_targets::build_target(&target(&base), &mut redactor).unwrap();
    let c = case(&["no answer"]);
    let ctx = TrialContext {
        case: &c,
        system_prompt: None,
        tools: &[],
        trial: 0,
        seed: 1,
        session_id: "s".into(),
    };
    let mut session = t.open(&ctx).await.unwrap();
    let mut rec = TraceRecorder::new();
    let err = session
        .turn("no answer", &mut NoTools, &mut rec)
        .await
        .unwrap_err();
    assert!(
        matches!(err, TargetError::Protocol(ref m) if m.contains("answer_path")),
        "{err:?}"
    );
}

#[test]
fn an_unset_header_variable_is_a_configuration_error() {
    let mut cfg = target("http://127.0.0.1:9");
    cfg.http
        .as_mut()
        .unwrap()
        .headers
        .insert("x".into(), "${env:GAUNTLET_SURELY_UNSET_VAR}".into());
    let mut redactor = Redactor::new();
    let err = gauntlet_targets::build_target(&cfg, &mut redactor)
        .err()
        .unwrap();
    // The message names the variable, and the hint says what to do about it.
    assert!(err.hint().is_some(), "{err}");
    let err = err.to_string();
    assert!(err.contains("GAUNTLET_SURELY_UNSET_VAR"), "{err}");
}
