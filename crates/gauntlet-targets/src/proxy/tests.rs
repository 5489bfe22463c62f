//! Unit tests of the proxy's routing, upstream URLs and SSE replay (the HTTP behaviour is
//! tested end to end in `tests/proxy.rs`).

use super::*;

use super::forward::{Endpoint, Route, parse_route};
use super::sse::anthropic_sse;

use serde_json::json;

#[test]
fn routes_carry_session_and_agent() {
    assert_eq!(
        parse_route("/v1/chat/completions"),
        Some(Route {
            session: None,
            agent: None,
            endpoint: Endpoint::Chat(Wire::OpenAi)
        })
    );
    assert_eq!(
        parse_route("/s/abc/v1/messages"),
        Some(Route {
            session: Some("abc".into()),
            agent: None,
            endpoint: Endpoint::Chat(Wire::Anthropic)
        })
    );
    assert_eq!(
        parse_route("/s/abc/a/planner/chat/completions"),
        Some(Route {
            session: Some("abc".into()),
            agent: Some("planner".into()),
            endpoint: Endpoint::Chat(Wire::OpenAi)
        })
    );
    assert_eq!(
        parse_route("/s/x/v1/models").map(|r| r.endpoint),
        Some(Endpoint::Models)
    );
    assert_eq!(parse_route("/s//v1/messages"), None);
    assert_eq!(parse_route("/v2/other"), None);
}

#[test]
fn a_stored_response_s_routes_reach_no_other_upstream_path() {
    let stored = |p: &str| parse_route(p).map(|r| r.endpoint);
    for (path, rest) in [
        ("/v1/responses/resp_1", "/resp_1"),
        (
            "/s/abc/v1/responses/resp_1/input_items",
            "/resp_1/input_items",
        ),
        ("/responses/resp-9/cancel", "/resp-9/cancel"),
    ] {
        assert_eq!(
            stored(path),
            Some(Endpoint::StoredResponse(rest.into())),
            "{path}"
        );
    }
    for path in [
        "/v1/responses/../models",
        "/v1/responses/resp_1/../../admin",
        "/v1/responses/resp_1/other",
        "/v1/responses/resp%2F1",
        "/v1/responses//input_items",
        "/v1/responsesX/resp_1",
    ] {
        assert_eq!(stored(path), None, "{path}");
    }
}

#[test]
fn upstream_urls_tolerate_a_trailing_v1() {
    let (o, a, m) = upstream_urls("http://127.0.0.1:9/v1/");
    assert_eq!(o, "http://127.0.0.1:9/v1/chat/completions");
    assert_eq!(a, "http://127.0.0.1:9/v1/messages");
    assert_eq!(m, "http://127.0.0.1:9/v1/models");
    let (_, a, _) = upstream_urls("https://api.anthropic.com");
    assert_eq!(a, "https://api.anthropic.com/v1/messages");
}

#[test]
fn anthropic_sse_is_a_complete_event_sequence() {
    let v = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": [{"type": "text", "text": "hi"}, {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}}],
        "stop_reason": "tool_use", "stop_sequence": null, "usage": {"input_tokens": 3, "output_tokens": 2},
    });
    let s = anthropic_sse(&v);
    let names: Vec<&str> = s
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(
        names,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    assert!(s.contains(r#""partial_json":"{\"a\":1}""#), "{s}");
}
