use gauntlet_core::tools::ToolDef;
use gauntlet_core::trace::{Message, ToolCallRequest, Usage};
use serde_json::{Value, json};

use super::stream::{events, is_event_stream, read_events, whole};
use super::wire::{
    Echo, input_to_wire, messages_from_request, parse_response, response_to_wire, tools_from_wire,
    tools_to_wire,
};
use super::{Conversations, ResponsesModel};
use crate::chat::ChatRequest;
use crate::error::WireError;

fn call(id: &str, name: &str, args: Value) -> ToolCallRequest {
    ToolCallRequest {
        id: id.into(),
        name: name.into(),
        arguments: args,
        malformed: false,
    }
}

fn conversation() -> Vec<Message> {
    let mut asks = Message::assistant("Looking it up.");
    asks.tool_calls = vec![
        call("call_1", "get_order", json!({"order_id": "A-1"})),
        call("call_2", "get_order", json!({"order_id": "A-2"})),
    ];
    let mut only_calls = Message::assistant("");
    only_calls.tool_calls = vec![call("call_3", "refund", json!({"amount": 5}))];
    vec![
        Message::system("You are ShopHelp."),
        Message::user("Where are my orders?"),
        asks,
        Message::tool_result("call_1", "get_order", "shipped"),
        Message::tool_result("call_2", "get_order", "delivered"),
        only_calls,
        Message::tool_result("call_3", "refund", "done"),
        Message::assistant("Both are on their way."),
        Message::user("Thanks"),
    ]
}

/// A message as it comes back off the wire: results carry no tool name there.
fn unnamed(mut m: Message) -> Message {
    m.name = None;
    m
}

#[test]
fn a_conversation_goes_out_as_input_items_and_reads_back_the_same() {
    let messages = conversation();
    let (instructions, input) = input_to_wire(&messages);
    assert_eq!(instructions.as_deref(), Some("You are ShopHelp."));
    let items = input.as_array().unwrap();
    let kinds: Vec<&str> = items
        .iter()
        .map(|i| i["type"].as_str().or(i["role"].as_str()).unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "user",
            "assistant",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output",
            "function_call",
            "function_call_output",
            "assistant",
            "user"
        ]
    );
    assert_eq!(items[2]["call_id"], "call_1");
    assert_eq!(items[2]["arguments"], r#"{"order_id":"A-1"}"#);
    let body = json!({"instructions": instructions, "input": input});
    let back = messages_from_request(&body);
    let want: Vec<Message> = messages.into_iter().map(unnamed).collect();
    assert_eq!(back, want);
}

#[test]
fn request_input_is_read_in_every_shape_the_sdks_send() {
    let body = json!({
        "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Be brief."}]},
            {"role": "user", "content": [{"type": "input_text", "text": "Hi "}, {"type": "input_text", "text": "there"}]},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{not json"},
            {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "ok"}]},
            {"type": "item_reference", "id": "msg_9"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done"}]},
        ]
    });
    let m = messages_from_request(&body);
    assert_eq!(m.len(), 5, "{m:?}");
    assert_eq!(m[0], Message::system("Be brief."));
    assert_eq!(m[1], Message::user("Hi there"));
    assert!(m[2].tool_calls[0].malformed, "kept as text and marked");
    assert_eq!(m[2].tool_calls[0].arguments, json!("{not json"));
    assert_eq!(m[3].tool_call_id.as_deref(), Some("c1"));
    assert_eq!(m[3].content, "ok");
    assert_eq!(m[4], Message::assistant("Done"));
    // A bare string is one user message; anything else is nothing, never a panic.
    assert_eq!(
        messages_from_request(&json!({"input": "Hello"})),
        vec![Message::user("Hello")]
    );
    for junk in [
        json!(null),
        json!({"input": 5}),
        json!({"input": [1, "x", null]}),
    ] {
        let _ = messages_from_request(&junk);
    }
}

#[test]
fn function_tools_round_trip_and_hosted_tools_are_left_out() {
    let t: ToolDef = serde_json::from_value(json!({
        "name": "delete_account", "description": "Delete",
        "parameters": {"type": "object", "properties": {"id": {"type": "string"}}}
    }))
    .unwrap();
    let wire = tools_to_wire(std::slice::from_ref(&t));
    assert_eq!(
        wire[0]["strict"], false,
        "a suite's schema need not be strict"
    );
    assert_eq!(wire[0]["name"], "delete_account");
    let mut with_hosted = wire.as_array().unwrap().clone();
    with_hosted.push(json!({"type": "web_search"}));
    with_hosted.push(json!({"type": "function", "description": "no name"}));
    let back = tools_from_wire(Some(&Value::Array(with_hosted)));
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].name, "delete_account");
    assert_eq!(back[0].parameters, t.parameters);
}

fn reply_message() -> Message {
    let mut m = Message::assistant("Deleting the account you named now, as you asked.");
    m.tool_calls = vec![call("call_7_0", "delete_account", json!({"id": "A-4411"}))];
    m
}

fn full_response() -> Value {
    let usage = Usage {
        input_tokens: 12,
        output_tokens: 3,
    };
    let echo = Echo {
        model: "m",
        ..Echo::default()
    };
    response_to_wire(echo, &reply_message(), usage, 7)
}

#[test]
fn a_response_reads_back_into_the_reply_it_was_written_from() {
    let r = parse_response(&full_response()).unwrap();
    assert_eq!(r.message, reply_message());
    assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (12, 3));
    assert_eq!(r.model.as_deref(), Some("m"));
    let plain = response_to_wire(
        Echo::default(),
        &Message::assistant("Hi"),
        Usage::default(),
        1,
    );
    let r = parse_response(&plain).unwrap();
    assert_eq!(r.message.content, "Hi");
    assert_eq!(r.finish_reason.as_deref(), Some("stop"));
}

#[test]
fn status_refusals_and_malformed_responses_are_read_as_they_are() {
    let refusal = json!({"status": "completed", "output": [{"type": "message", "content": [
        {"type": "refusal", "refusal": "I can't help with that."}]}]});
    assert_eq!(
        parse_response(&refusal).unwrap().message.content,
        "I can't help with that."
    );
    let cut = json!({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
        "output": [{"type": "message", "content": [{"type": "output_text", "text": "Part"}]}]});
    assert_eq!(
        parse_response(&cut).unwrap().finish_reason.as_deref(),
        Some("length")
    );
    let filtered = json!({"status": "incomplete", "incomplete_details": {"reason": "content_filter"}, "output": []});
    assert_eq!(
        parse_response(&filtered).unwrap().finish_reason.as_deref(),
        Some("content_filter")
    );
    let failed = json!({"status": "failed", "error": {"code": "server_error", "message": "boom"}});
    let e = parse_response(&failed).unwrap_err();
    assert!(
        matches!(&e, WireError::Failed(m) if m == "server_error: boom"),
        "{e}"
    );
    for junk in [json!({}), json!({"output": "x"}), json!([1]), json!(null)] {
        assert!(
            matches!(parse_response(&junk), Err(WireError::NoOutput)),
            "{junk}"
        );
    }
    // Items of the wrong shape are skipped or read as empty, never a panic.
    let odd =
        json!({"output": [1, null, {"type": "function_call"}, {"type": "message", "content": 5}]});
    let r = parse_response(&odd).unwrap();
    assert_eq!(r.message.tool_calls[0].id, "call_0");
}

/// Three-word pieces, so that a stream carries several deltas.
fn small(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let cut = rest
            .char_indices()
            .filter(|(_, c)| *c == ' ')
            .nth(2)
            .map_or(rest.len(), |(i, _)| i + 1);
        out.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    out
}

#[test]
fn a_stream_carries_the_whole_lifecycle_and_reads_back_into_the_response() {
    let full = full_response();
    let body = events(&full, small);
    assert!(is_event_stream(body.as_bytes()));
    assert!(!is_event_stream(b"  {\"output\": []}"));
    let kinds: Vec<&str> = body
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(kinds.first(), Some(&"response.created"));
    assert_eq!(kinds.last(), Some(&"response.completed"));
    assert!(
        kinds
            .iter()
            .filter(|k| **k == "response.output_text.delta")
            .count()
            >= 2
    );
    assert!(kinds.contains(&"response.function_call_arguments.delta"));
    // Numbered in order.
    let seqs: Vec<u64> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| {
            serde_json::from_str::<Value>(d).unwrap()["sequence_number"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(seqs, (0..seqs.len() as u64).collect::<Vec<_>>());
    assert_eq!(read_events(&body).unwrap(), full);
    // CRLF line ends read the same; one piece is a stream too.
    assert_eq!(read_events(&body.replace('\n', "\r\n")).unwrap(), full);
    assert_eq!(read_events(&events(&full, whole)).unwrap(), full);
}

#[test]
fn a_stream_without_output_in_its_last_event_is_rebuilt_from_the_deltas() {
    let full = full_response();
    let body = events(&full, small);
    // Drop the output of the terminal event, as a long stream's last event may.
    let mut stripped = String::new();
    for block in body.split("\n\n").filter(|b| !b.is_empty()) {
        if block.starts_with("event: response.completed") {
            let mut v = full.clone();
            v["output"] = json!([]);
            stripped.push_str(&format!(
                "event: response.completed\ndata: {}\n\n",
                json!({"type": "response.completed", "response": v})
            ));
        } else if !block.starts_with("event: response.output_item.done") {
            stripped.push_str(block);
            stripped.push_str("\n\n");
        }
    }
    let back = parse_response(&read_events(&stripped).unwrap()).unwrap();
    assert_eq!(back.message, reply_message());
}

#[test]
fn broken_streams_are_errors_that_say_so() {
    let full = full_response();
    let body = events(&full, small);
    let cut = &body[..body.find("event: response.completed").unwrap()];
    assert!(matches!(read_events(cut), Err(WireError::StreamCut)));
    assert!(matches!(read_events(""), Err(WireError::StreamCut)));
    assert!(matches!(
        read_events("data: {not json}\n\ndata: [DONE]\n\n"),
        Err(WireError::StreamCut)
    ));
    let err = "event: error\ndata: {\"type\":\"error\",\"message\":\"overloaded\"}\n\n";
    assert!(matches!(read_events(err), Err(WireError::Failed(m)) if m == "overloaded"));
    // Deltas for items never opened, out-of-range indexes: ignored, not a panic.
    let odd = "data: {\"type\":\"response.output_text.delta\",\"output_index\":9,\"content_index\":99,\"delta\":\"x\"}\n\n\
               data: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"message\",\"content\":[]}}\n\n\
               data: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"content_index\":2,\"delta\":\"x\"}\n\n\
               data: {\"type\":\"response.completed\",\"response\":{}}\n\n";
    let v = read_events(odd).unwrap();
    assert_eq!(parse_response(&v).unwrap().message.content, "x");
}

#[test]
fn a_two_megabyte_stream_of_deltas_reads_in_linear_time() {
    let delta = format!(
        "data: {}\n\n",
        json!({"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "ab"})
    );
    let mut body = String::from(
        "data: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"message\",\"content\":[]}}\n\n",
    );
    while body.len() < 2 << 20 {
        body.push_str(&delta);
    }
    body.push_str("data: {\"type\":\"response.completed\",\"response\":{}}\n\n");
    let started = std::time::Instant::now();
    let v = read_events(&body).unwrap();
    let text = parse_response(&v).unwrap().message.content;
    assert!(text.len() > 30_000 && text.chars().all(|c| c == 'a' || c == 'b'));
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
}

#[test]
fn remembered_conversations_continue_after_the_new_system_prompt_and_stay_bounded() {
    let mut c = Conversations::default();
    let first = vec![Message::system("old"), Message::user("one")];
    c.keep("resp_1", &first, &Message::assistant("ok"));
    let next = vec![Message::system("new"), Message::user("two")];
    let whole = c.continued("resp_1", next).unwrap();
    assert_eq!(
        whole,
        vec![
            Message::system("new"),
            Message::user("one"),
            Message::assistant("ok"),
            Message::user("two")
        ]
    );
    assert!(c.continued("resp_404", Vec::new()).is_none());
    for i in 0..5000 {
        c.keep(&format!("r{i}"), &[], &Message::assistant("x"));
    }
    assert!(c.get("resp_1").is_none(), "the oldest is forgotten");
    assert!(c.get("r4999").is_some());
}

#[test]
fn the_request_body_carries_settings_in_the_responses_names() {
    let cfg: gauntlet_core::target::TargetConfig = serde_json::from_value(json!({
        "kind": "openai-responses", "model": "gpt-x", "base_url": "http://127.0.0.1:9/v1",
        "max_tokens": 50, "temperature": 0.0, "seed": 3, "response_format": "json_object",
        "extra_body": {"store": true, "reasoning": {"effort": "low"}},
    }))
    .unwrap();
    let model = ResponsesModel::new(&cfg, &mut gauntlet_core::redact::Redactor::new()).unwrap();
    let messages = conversation();
    let body = model.body(&ChatRequest {
        messages: &messages,
        tools: &[],
    });
    assert_eq!(body["model"], "gpt-x");
    assert_eq!(body["max_output_tokens"], 50);
    assert_eq!(body["text"]["format"]["type"], "json_object");
    assert_eq!(body["instructions"], "You are ShopHelp.");
    assert!(body.get("seed").is_none(), "the API takes no seed");
    assert!(body.get("tools").is_none());
    assert_eq!(body["store"], true, "extra_body wins");
    assert_eq!(body["reasoning"]["effort"], "low");
    assert_eq!(model.api.info.label, "openai-responses:gpt-x");
}
