//! `--otel-endpoint` end to end: a run exports one trace per trial to an OTLP/HTTP receiver
//! on 127.0.0.1 (decoded with the OpenTelemetry protobuf types), with the same exit code as
//! the same run without export; the standard variables turn it on and name the service;
//! header values never reach an output; a dead endpoint changes nothing but a warning and
//! does not hold the exit; a bad endpoint is a usage error.
#![cfg(feature = "otel")]

use std::collections::HashMap;
use std::path::Path;
use std::process::Output;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

mod common;

use common::{bin, code, examples, text};

const TOKEN: &str = "otel-tok-8Hq2Lm5Zx9Wv3";

/// What the receiver got: each request's headers, its resource's service name and its spans.
type Got = Arc<Mutex<Vec<(HashMap<String, String>, String, Vec<Span>)>>>;

/// An OTLP/HTTP receiver on 127.0.0.1 that decodes `POST /v1/traces` and answers 200.
fn receiver() -> (String, Got) {
    let got: Got = Arc::default();
    let state = Arc::clone(&got);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let app = axum::Router::new().route(
                "/v1/traces",
                axum::routing::post(
                    move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                        let state = Arc::clone(&state);
                        async move {
                            let req =
                                ExportTraceServiceRequest::decode(body.as_ref()).expect("protobuf");
                            let h: HashMap<String, String> = headers
                                .iter()
                                .map(|(k, v)| {
                                    (k.to_string(), v.to_str().unwrap_or_default().to_owned())
                                })
                                .collect();
                            for rs in req.resource_spans {
                                let service = rs
                                    .resource
                                    .as_ref()
                                    .and_then(|r| str_attr(&r.attributes, "service.name"))
                                    .unwrap_or_default()
                                    .to_owned();
                                let spans =
                                    rs.scope_spans.into_iter().flat_map(|s| s.spans).collect();
                                state.lock().unwrap().push((h.clone(), service, spans));
                            }
                            Vec::<u8>::new()
                        }
                    },
                ),
            );
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap().port()).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    (format!("http://127.0.0.1:{}", rx.recv().unwrap()), got)
}

fn str_attr<'a>(attrs: &'a [KeyValue], key: &str) -> Option<&'a str> {
    attrs
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref()?.value.as_ref())
        .and_then(|v| match v {
            any_value::Value::StringValue(s) => Some(s.as_str()),
            _ => None,
        })
}

fn int_attr(attrs: &[KeyValue], key: &str) -> Option<i64> {
    attrs
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref()?.value.as_ref())
        .and_then(|v| match v {
            any_value::Value::IntValue(i) => Some(*i),
            _ => None,
        })
}

/// Runs gauntlet in `dir` with no OpenTelemetry variable but those given.
fn gauntlet(args: &[&str], env: &[(&str, &str)], dir: &Path) -> Output {
    let mut c = bin();
    for (k, _) in std::env::vars() {
        if k.starts_with("OTEL_") {
            c.env_remove(k);
        }
    }
    c.args(args).envs(env.iter().copied()).current_dir(dir);
    c.output().expect("run gauntlet")
}

/// Stdout with the run's duration blanked (the one thing two runs print differently).
fn without_duration(stdout: &[u8]) -> String {
    let re = regex::Regex::new(r"\[\s*[0-9.]+s\]").unwrap();
    re.replace_all(&String::from_utf8_lossy(stdout), "[TIME]")
        .into_owned()
}

fn all_spans(got: &Got) -> Vec<Span> {
    got.lock()
        .unwrap()
        .iter()
        .flat_map(|(_, _, s)| s.clone())
        .collect()
}

/// Every model call is a `chat` span and every tool call an `execute_tool` span, with the
/// GenAI and OpenInference names a trace UI reads.
fn model_and_tool_spans_carry_their_names(spans: &[Span]) {
    let chats: Vec<&Span> = spans
        .iter()
        .filter(|s| str_attr(&s.attributes, "gen_ai.operation.name") == Some("chat"))
        .collect();
    let tools: Vec<&Span> = spans
        .iter()
        .filter(|s| str_attr(&s.attributes, "gen_ai.operation.name") == Some("execute_tool"))
        .collect();
    assert!(!chats.is_empty() && !tools.is_empty());
    for c in &chats {
        assert_eq!(
            str_attr(&c.attributes, "gen_ai.provider.name"),
            Some("gauntlet.fake")
        );
        assert!(str_attr(&c.attributes, "gen_ai.input.messages").is_some());
        assert_eq!(
            str_attr(&c.attributes, "openinference.span.kind"),
            Some("LLM")
        );
    }
    for t in &tools {
        assert!(str_attr(&t.attributes, "gen_ai.tool.name").is_some());
        assert!(str_attr(&t.attributes, "gen_ai.tool.call.id").is_some());
        assert_eq!(
            str_attr(&t.attributes, "openinference.span.kind"),
            Some("TOOL")
        );
    }
}

#[test]
fn a_run_exports_one_trace_per_trial_and_keeps_its_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let suite = examples().join("support-agent/suite.yaml");
    let suite = suite.to_str().unwrap();
    let base = [
        "run",
        suite,
        "--target",
        "fake:safe",
        "--no-store",
        "-k",
        "2",
    ];
    let plain = gauntlet(&[&base[..], &["--out", "plain"]].concat(), &[], dir.path());
    let (url, got) = receiver();
    let headers = format!("authorization=Bearer%20{TOKEN},x-team=qa");
    let exported = gauntlet(
        &[
            &base[..],
            &[
                "--out",
                "exported",
                "--otel-endpoint",
                &url,
                "--otel-content",
            ],
        ]
        .concat(),
        &[
            ("OTEL_EXPORTER_OTLP_HEADERS", &headers),
            ("OTEL_SERVICE_NAME", "support-evals"),
        ],
        dir.path(),
    );
    assert_eq!(code(&exported), code(&plain), "{}", text(&exported));
    // Through the shared reader: a case leaves out what repeats another field (its turns).
    let report = common::report(&dir.path().join("exported"));
    let cases = report["cases"].as_array().unwrap();
    let trials: usize = cases
        .iter()
        .map(|c| c["trials"].as_array().unwrap().len())
        .sum();
    assert!(trials >= 2 * 15, "{trials}");

    let spans = all_spans(&got);
    let evals: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id.is_empty())
        .collect();
    assert_eq!(evals.len(), trials, "one eval span per trial");
    // Every trial of every case is there, under its case id and trial index, with the
    // case's state as the report has it.
    for c in cases {
        let id = c["case"]["id"].as_str().unwrap();
        for t in c["trials"].as_array().unwrap() {
            let idx = t["trial"].as_i64().unwrap();
            let e = evals
                .iter()
                .find(|e| {
                    str_attr(&e.attributes, "gauntlet.case.id") == Some(id)
                        && int_attr(&e.attributes, "gauntlet.trial.index") == Some(idx)
                })
                .unwrap_or_else(|| panic!("no eval span for {id}#{idx}"));
            assert_eq!(
                str_attr(&e.attributes, "gauntlet.trial.status"),
                t["status"].as_str()
            );
            assert_eq!(
                str_attr(&e.attributes, "gauntlet.case.status"),
                c["status"].as_str()
            );
            let verdicts = e
                .events
                .iter()
                .filter(|ev| ev.name == "gen_ai.evaluation.result")
                .count();
            assert_eq!(verdicts, t["verdicts"].as_array().unwrap().len(), "{id}");
            // A trace UI lists the case as an agent run with what was said (content mode).
            assert_eq!(
                str_attr(&e.attributes, "openinference.span.kind"),
                Some("AGENT")
            );
            let turns = t["trace"]["turns"].as_array().unwrap();
            let users: Vec<&str> = turns.iter().map(|x| x["user"].as_str().unwrap()).collect();
            assert_eq!(
                str_attr(&e.attributes, "input.value"),
                Some(users.join("\n\n").as_str()),
                "{id}"
            );
            assert_eq!(
                str_attr(&e.attributes, "output.value"),
                turns.last().and_then(|x| x["answer"].as_str()),
                "{id}"
            );
            // Its children: one per model call and tool call of the trace, in one trace.
            let kids: Vec<&Span> = spans
                .iter()
                .filter(|s| s.parent_span_id == e.span_id)
                .collect();
            assert!(kids.iter().all(|k| k.trace_id == e.trace_id));
            let recorded = t["trace"]["spans"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| s["kind"] != "decision")
                .count();
            assert_eq!(kids.len(), recorded, "{id}#{idx}");
        }
    }
    model_and_tool_spans_carry_their_names(&spans);

    let got = got.lock().unwrap();
    assert!(got.iter().all(|(_, service, _)| service == "support-evals"));
    let (h, _, _) = &got[0];
    assert_eq!(h["authorization"], format!("Bearer {TOKEN}"));
    assert_eq!(h["x-team"], "qa");
    // The header's token went to the endpoint and nowhere else.
    let out = text(&exported);
    assert!(!out.contains(TOKEN), "{out}");
    for f in ["report.json", "junit.xml", "summary.md", "report.html"] {
        let body = std::fs::read_to_string(dir.path().join("exported").join(f)).unwrap();
        assert!(!body.contains(TOKEN), "{f}");
    }
    assert!(
        out.contains(&format!(
            "OpenTelemetry: {} span(s) of {trials} trial(s) exported",
            spans.len()
        )),
        "{out}"
    );
}

#[test]
fn the_standard_variables_turn_the_export_on() {
    let dir = tempfile::tempdir().unwrap();
    let (url, got) = receiver();
    let o = gauntlet(
        &[
            "redteam",
            "--target",
            "fake:vulnerable",
            "--no-store",
            "--no-reports",
            "-q",
            "--category",
            "LLM07",
        ],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", &url)],
        dir.path(),
    );
    assert_eq!(code(&o), 1, "the vulnerable persona fails: {}", text(&o));
    let spans = all_spans(&got);
    let evals: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id.is_empty())
        .collect();
    assert!(!evals.is_empty());
    assert!(
        got.lock().unwrap().iter().all(|(_, s, _)| s == "gauntlet"),
        "service.name defaults to gauntlet"
    );
    // The failures are errors in the backend's eyes; content stayed out.
    let failed = evals
        .iter()
        .filter(|e| str_attr(&e.attributes, "gauntlet.trial.status") == Some("FAIL"))
        .count();
    assert!(failed > 0);
    assert!(
        evals
            .iter()
            .filter(|e| str_attr(&e.attributes, "gauntlet.trial.status") == Some("FAIL"))
            .all(|e| e.status.as_ref().is_some_and(|s| s.code == 2))
    );
    assert!(spans.iter().all(
        |s| str_attr(&s.attributes, "gen_ai.input.messages").is_none()
            && str_attr(&s.attributes, "input.value").is_none()
            && str_attr(&s.attributes, "output.value").is_none()
    ));
    assert!(
        evals
            .iter()
            .all(|e| str_attr(&e.attributes, "openinference.span.kind") == Some("AGENT"))
    );
    assert!(evals.iter().all(|e| {
        str_attr(&e.attributes, "gauntlet.case.owasp") == Some("LLM07")
            && str_attr(&e.attributes, "gauntlet.run.command") == Some("redteam")
    }));
}

#[test]
fn a_dead_endpoint_changes_nothing_but_a_warning_and_does_not_hold_the_exit() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "redteam",
        "--target",
        "fake:vulnerable",
        "--no-store",
        "--no-reports",
        "-q",
        "--category",
        "LLM01",
    ];
    let plain = gauntlet(&args, &[], dir.path());
    // One port nobody listens on, one that takes connections and never answers.
    let (_held, dead) = common::refusing_port();
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in silent.incoming() {
            held.push(s);
        }
    });
    for port in [dead, silent_port] {
        let url = format!("http://127.0.0.1:{port}");
        let t = Instant::now();
        let o = gauntlet(
            &[&args[..], &["--otel-endpoint", &url]].concat(),
            &[("OTEL_EXPORTER_OTLP_TIMEOUT", "1000")],
            dir.path(),
        );
        let took = t.elapsed();
        assert_eq!(code(&o), code(&plain), "{}", text(&o));
        assert_eq!(
            without_duration(&o.stdout),
            without_duration(&plain.stdout),
            "the same summary"
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("OpenTelemetry export to {url}/v1/traces failed"))
                && err.contains("not delivered")
                && err.contains("the run's result does not depend on it"),
            "{err}"
        );
        // The run itself takes well under a second; the export costs at most its timeout
        // at the end (and the failures before it).
        assert!(took < Duration::from_secs(8), "{took:?}");
    }
}

#[test]
fn a_bad_endpoint_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = gauntlet(
        &[
            "redteam",
            "--target",
            "fake:safe",
            "--no-store",
            "--no-reports",
            "--otel-endpoint",
            "127.0.0.1:4318",
        ],
        &[],
        dir.path(),
    );
    assert_eq!(code(&o), 2);
    let out = text(&o);
    assert!(
        out.contains("error: --otel-endpoint is not an http:// or https:// URL"),
        "{out}"
    );
    assert!(out.contains("hint:"), "{out}");
    let o = gauntlet(
        &[
            "redteam",
            "--target",
            "fake:safe",
            "--no-store",
            "--no-reports",
        ],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ],
        dir.path(),
    );
    assert_eq!(code(&o), 2);
    assert!(
        text(&o).contains("only http/protobuf is supported"),
        "{}",
        text(&o)
    );
}
