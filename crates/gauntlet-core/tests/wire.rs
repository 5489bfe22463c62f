//! The written form of results: what `report.json` and the run store leave out because it
//! repeats something else in the same case (turns that follow from the model calls, a label
//! that is the check's name, a one-trial case's score and spend, a display name that is the
//! id) is left out, and reading the JSON back gives the same values.

use gauntlet_core::result::{CaseMeta, CaseResult, Outcome, TrialResult};
use gauntlet_core::suite::{Case, CaseKind};
use gauntlet_core::trace::{Message, Trace, TraceRecorder, Usage};
use gauntlet_core::verdict::{Dimension, Verdict};
use serde_json::Value;

fn chat_trace(turns: &[(&str, &str)], finish: &str) -> Trace {
    let mut rec = TraceRecorder::new();
    let mut msgs = vec![Message::system("You are a support assistant.")];
    for (user, answer) in turns {
        msgs.push(Message::user(*user));
        rec.llm_call(
            Some("m".into()),
            msgs.clone(),
            Message::assistant(*answer),
            Usage::default(),
            3,
            Some(finish.into()),
            1,
        );
        msgs.push(Message::assistant(*answer));
        rec.turn((*user).into(), (*answer).into(), finish == "length");
    }
    rec.finish()
}

fn json(v: &impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap()
}

#[test]
fn turns_that_follow_from_the_model_calls_are_left_out_and_derived_again() {
    let trace = chat_trace(
        &[("hello", "Hi! How can I help?"), ("refund?", "Sure.")],
        "stop",
    );
    let written = json(&trace);
    assert!(written.get("turns").is_none(), "{written}");
    let back: Trace = serde_json::from_value(written).unwrap();
    assert_eq!(back, trace);
    assert_eq!(back.turns.len(), 2);
    assert_eq!(back.final_answer(), "Sure.");

    // A reply cut at the token limit is a truncated turn, derived as such.
    let cut = chat_trace(&[("long story", "Once upon")], "length");
    assert!(json(&cut).get("turns").is_none());
    let back: Trace = serde_json::from_value(json(&cut)).unwrap();
    assert!(back.turns[0].truncated);
}

#[test]
fn turns_that_differ_from_the_model_calls_are_written() {
    // The answer graded is not the model's reply (an HTTP app, a filtered reply): kept.
    let mut trace = chat_trace(&[("hello", "Hi!")], "stop");
    trace.turns[0].answer = "Hi! (as the app showed it)".into();
    let written = json(&trace);
    assert_eq!(written["turns"][0]["answer"], "Hi! (as the app showed it)");
    assert_eq!(serde_json::from_value::<Trace>(written).unwrap(), trace);

    // Spans but no turn (the trial failed before answering): an empty list is written, so
    // that nothing is derived on the way back.
    let mut trace = chat_trace(&[("hello", "Hi!")], "stop");
    trace.turns.clear();
    let written = json(&trace);
    assert_eq!(written["turns"], serde_json::json!([]));
    assert!(
        serde_json::from_value::<Trace>(written)
            .unwrap()
            .turns
            .is_empty()
    );

    // Turns without any model call (a subprocess agent) are all there is.
    let mut rec = TraceRecorder::new();
    rec.turn("hello".into(), "Hi!".into(), false);
    let trace = rec.finish();
    assert_eq!(json(&trace)["turns"][0]["user"], "hello");
}

#[test]
fn a_label_that_is_the_checks_name_is_left_out() {
    let plain = Verdict::pass(
        "contains",
        "contains".into(),
        Dimension::Outcome,
        "found".into(),
    );
    let written = json(&plain);
    assert!(written.get("label").is_none(), "{written}");
    assert_eq!(serde_json::from_value::<Verdict>(written).unwrap(), plain);

    let named = Verdict::pass(
        "contains",
        "greets".into(),
        Dimension::Outcome,
        "found".into(),
    );
    let written = json(&named);
    assert_eq!(written["label"], "greets");
    assert_eq!(serde_json::from_value::<Verdict>(written).unwrap(), named);
}

fn case() -> Case {
    serde_json::from_value(serde_json::json!({
        "id": "c1",
        "input": "hello",
        "expect": [{"contains": "Hi"}]
    }))
    .unwrap()
}

fn meta(name: &str) -> CaseMeta {
    CaseMeta {
        id: "c1".into(),
        suite: "s".into(),
        kind: CaseKind::Task,
        pack: None,
        owasp: None,
        technique: None,
        harm: None,
        blocking: true,
        security: false,
        blocked_is_defended: false,
        name: name.into(),
        description: None,
        tags: Vec::new(),
        converters: Vec::new(),
        converted_in: None,
        source: None,
        benign_of: None,
    }
}

fn trial(n: u32, outcome: Outcome, passed: bool) -> TrialResult {
    let v = if passed {
        Verdict::pass(
            "contains",
            "contains".into(),
            Dimension::Outcome,
            "found".into(),
        )
    } else {
        Verdict::fail(
            "contains",
            "contains".into(),
            Dimension::Outcome,
            0,
            "missing".into(),
        )
    };
    let mut t = TrialResult::new(
        &case(),
        n,
        outcome,
        chat_trace(&[("hello", "Hi!")], "stop"),
        vec![v],
        None,
        4,
    );
    t.spend.agent.calls = 1;
    t.spend.agent.input_tokens = 10 + u64::from(n);
    t
}

#[test]
fn a_one_trial_case_leaves_out_the_score_and_spend_it_repeats() {
    let one = CaseResult::combine(meta("c1"), vec![trial(0, Outcome::Completed, true)]);
    assert_eq!(one.score, one.trials[0].score);
    let written = json(&one);
    for key in ["score", "spend"] {
        assert!(written.get(key).is_none(), "{key} in {written}");
    }
    // The display name is the id: left out; `security` is false: left out.
    assert!(written["case"].get("name").is_none());
    assert!(written["case"].get("security").is_none());
    assert_eq!(serde_json::from_value::<CaseResult>(written).unwrap(), one);
}

#[test]
fn a_case_whose_score_is_its_own_writes_it() {
    // Two trials: the case's score and spend are its own.
    let two = CaseResult::combine(
        meta("LLM01/direct/c1"),
        vec![
            trial(0, Outcome::Completed, true),
            trial(1, Outcome::Completed, false),
        ],
    );
    let written = json(&two);
    assert!(written.get("score").is_some());
    assert_eq!(written["spend"]["agent"]["calls"], 2);
    assert_eq!(written["case"]["name"], "LLM01/direct/c1");
    assert_eq!(serde_json::from_value::<CaseResult>(written).unwrap(), two);

    // One trial that ended in an error: the case's score is not the trial's.
    let errored = CaseResult::combine(meta("c1"), vec![trial(0, Outcome::Error, false)]);
    if errored.score != errored.trials[0].score {
        assert!(json(&errored).get("score").is_some());
    }
    assert_eq!(
        serde_json::from_value::<CaseResult>(json(&errored)).unwrap(),
        errored
    );

    // A case written before these fields could be left out reads the same.
    let mut old = json(&two);
    old["case"]["security"] = Value::Bool(false);
    old["trials"][0]["verdicts"][0]["label"] = "contains".into();
    assert_eq!(serde_json::from_value::<CaseResult>(old).unwrap(), two);
}

#[test]
fn where_converters_applied_and_the_texts_they_changed_are_written_and_read_back() {
    // The custom written forms must carry every field: a case's `converted_in` and a
    // trace's `converted` (a poisoned tool output as sent) are what the report shows of a
    // converter on an indirect attack.
    let mut m = meta("c1");
    m.converters = vec!["base64".into()];
    m.converted_in = Some(gauntlet_core::attack::Carrier::ToolOutput);
    let written = json(&m);
    assert_eq!(written["converted_in"], "tool_output");
    assert_eq!(serde_json::from_value::<CaseMeta>(written).unwrap(), m);

    let mut rec = TraceRecorder::new();
    rec.converted("tool_faults[0].poison".into(), "aGVsbG8=".into());
    let trace = rec.finish();
    let written = json(&trace);
    assert_eq!(written["converted"][0]["site"], "tool_faults[0].poison");
    assert_eq!(written["converted"][0]["text"], "aGVsbG8=");
    assert_eq!(serde_json::from_value::<Trace>(written).unwrap(), trace);
}

#[test]
fn a_continued_model_call_is_put_back_together_and_a_broken_chain_is_refused() {
    let mut rec = TraceRecorder::new();
    let first = rec.llm_call(
        None,
        vec![Message::system("s"), Message::user("u")],
        Message::assistant("a1"),
        Usage::default(),
        1,
        None,
        1,
    );
    let second = rec.llm_call(
        None,
        vec![Message::user("tool says")],
        Message::assistant("a2"),
        Usage::default(),
        1,
        None,
        1,
    );
    rec.continue_last_llm(first);
    let mut trace = rec.finish();
    let words = |t: &Trace, id| -> Option<Vec<String>> {
        t.conversation(id)
            .map(|c| c.iter().map(|m| m.content.clone()).collect())
    };
    assert_eq!(words(&trace, first).unwrap(), ["s", "u"]);
    assert_eq!(
        words(&trace, second).unwrap(),
        ["s", "u", "a1", "tool says"]
    );
    // The continued field survives the written form.
    let back: Trace = serde_json::from_value(json(&trace)).unwrap();
    assert_eq!(words(&back, second).unwrap().len(), 4);
    // A call that "continues" itself or a later call, or one that is missing, is not followed.
    for bad in [second, second + 7] {
        if let Some(gauntlet_core::trace::Span::LlmCall(l)) = trace.spans.last_mut() {
            l.continues = Some(bad);
        }
        assert_eq!(words(&trace, second), None);
    }
    assert_eq!(words(&trace, 99), None);
}
