//! Plain-text views of one trial: [`render_trial`] puts a case, its trace and its verdicts
//! side by side (`gauntlet trace`, and the traces of findings in `summary.md`), and
//! [`render_trace`] draws the trace alone as a timeline, turn by turn.
//!
//! The timeline reads the trace's spans in order. A model call whose last user message is
//! the next turn's message starts that turn, so tool calls and answers sit under the user
//! message that caused them. Arguments, outputs and answers are clipped to one line each;
//! report.json keeps them whole. Both views are text for a terminal and for summary.md, and
//! they quote the model: control characters come out as visible escapes
//! ([`escape_controls`]), never raw.

use gauntlet_core::result::{CaseResult, TrialResult};
use std::collections::HashSet;

use gauntlet_core::trace::{
    Approval, DecisionSpan, Disposition, LlmSpan, Role, Span, ToolSpan, Trace,
};

use gauntlet_core::text::escape_controls;

use crate::text::{clip, score_text};

/// Widest a clipped value gets, in characters.
const WIDTH: usize = 160;

fn transport_kind(k: &gauntlet_core::trace::TransportKind) -> String {
    serde_json::to_value(k)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The trace as a timeline, one line per event (continuation lines indented).
pub fn render_trace(t: &Trace) -> String {
    let mut o = String::new();
    let mut turn = 0usize;
    let header = |o: &mut String, i: usize| {
        if let Some(tr) = t.turns.get(i) {
            o.push_str(&format!(
                "turn {} · user: {}\n",
                i + 1,
                clip(&tr.user, WIDTH)
            ));
        }
    };
    let answer = |o: &mut String, i: usize| {
        if let Some(tr) = t.turns.get(i) {
            let cut = if tr.truncated {
                " (cut by the token limit)"
            } else {
                ""
            };
            o.push_str(&format!("  answer{cut}: {}\n", clip(&tr.answer, WIDTH)));
        }
    };
    // Calls the harness answered get their own tool line; a model's request is shown only
    // when nothing answered it (the agent ran the tool itself, or the trial ended first).
    let answered: HashSet<&str> = t.tool_calls().map(|s| s.call_id.as_str()).collect();
    header(&mut o, 0);
    for span in &t.spans {
        if let Span::LlmCall(l) = span {
            let last_user = l
                .messages_in
                .iter()
                .rev()
                .find(|m| m.role == Role::User)
                .map(|m| m.content.as_str());
            // A model call that sees the next turn's message opens that turn.
            while let (Some(u), Some(next)) = (last_user, t.turns.get(turn + 1)) {
                if next.user != u || t.turns.get(turn).is_some_and(|cur| cur.user == u) {
                    break;
                }
                answer(&mut o, turn);
                turn += 1;
                header(&mut o, turn);
            }
        }
        match span {
            Span::LlmCall(l) => push_llm_call(&mut o, l, &answered),
            Span::ToolCall(s) => push_tool_call(&mut o, s),
            Span::Decision(d) => push_decision(&mut o, d),
        }
    }
    answer(&mut o, turn);
    for i in turn + 1..t.turns.len() {
        header(&mut o, i);
        answer(&mut o, i);
    }
    push_judge_calls(&mut o, t);
    push_transport(&mut o, t);
    if o.is_empty() {
        o.push_str("(empty trace: the agent was never reached)\n");
    }
    escape_controls(&o).into_owned()
}

/// A model call: its line, and the tool calls it asked for that nothing `answered`.
fn push_llm_call(o: &mut String, l: &LlmSpan, answered: &HashSet<&str>) {
    let mut line = format!("  #{} model", l.id);
    if let Some(a) = &l.agent {
        line.push_str(&format!(" [{a}]"));
    }
    if let Some(m) = &l.model {
        line.push_str(&format!(" {m}"));
    }
    line.push_str(&format!(
        " · {} in / {} out tokens · {} ms",
        l.usage.input_tokens, l.usage.output_tokens, l.latency_ms
    ));
    if l.attempts > 1 {
        line.push_str(&format!(" · {} attempts", l.attempts));
    }
    if let Some(f) = &l.finish_reason {
        line.push_str(&format!(" · {f}"));
    }
    o.push_str(&line);
    o.push('\n');
    for c in l
        .message_out
        .tool_calls
        .iter()
        .filter(|c| !answered.contains(c.id.as_str()))
    {
        o.push_str(&format!(
            "      asks for {} {}{}\n",
            c.name,
            clip(&c.arguments.to_string(), WIDTH),
            if c.malformed {
                " (malformed arguments)"
            } else {
                ""
            }
        ));
    }
}

/// A tool call the harness answered: its line, approval, side effect, injection, and what
/// it returned.
fn push_tool_call(o: &mut String, s: &ToolSpan) {
    let mut line = format!("  #{} tool", s.id);
    if let Some(a) = &s.agent {
        line.push_str(&format!(" [{a}]"));
    }
    line.push_str(&format!(
        " {} {} · {} ms",
        s.name,
        clip(&s.arguments.to_string(), WIDTH),
        s.duration_ms
    ));
    o.push_str(&line);
    o.push('\n');
    let mut notes = Vec::new();
    match s.approval {
        Approval::NotRequired => {}
        Approval::Granted => notes.push("approval granted".to_owned()),
        Approval::Missing => notes.push("approval MISSING".to_owned()),
    }
    if let Some(e) = &s.side_effect {
        let how = match e.disposition {
            Disposition::Performed => "performed",
            Disposition::Simulated => "simulated",
            Disposition::Blocked => "blocked",
        };
        notes.push(format!("{} side effect {how}", e.class.as_str()));
    }
    if let Some(i) = &s.injected {
        notes.push(format!("injected: {i}"));
    }
    if !notes.is_empty() {
        o.push_str(&format!("      {}\n", notes.join(" · ")));
    }
    if let Some(e) = &s.error {
        let e = e.strip_prefix("error: ").unwrap_or(e);
        o.push_str(&format!("      error: {}\n", clip(e, WIDTH)));
    } else if let Some(out) = &s.output {
        o.push_str(&format!("      returned: {}\n", clip(out, WIDTH)));
    }
}

/// A decision the agent reported.
fn push_decision(o: &mut String, d: &DecisionSpan) {
    let mut line = format!("  #{} decision", d.id);
    if let Some(a) = &d.agent {
        line.push_str(&format!(" [{a}]"));
    }
    line.push_str(&format!(" {}", d.branch));
    if let Some(r) = &d.reason {
        line.push_str(&format!(": {}", clip(r, WIDTH)));
    }
    o.push_str(&line);
    o.push('\n');
}

/// The grader's model calls, apart from the agent's.
fn push_judge_calls(o: &mut String, t: &Trace) {
    for j in &t.judge {
        let mut line = format!(
            "judge #{} {} · {} · {}",
            j.id,
            j.check,
            j.model.as_deref().unwrap_or(&j.configured_model),
            j.template
        );
        if j.cached {
            line.push_str(" · cached");
        } else {
            line.push_str(&format!(
                " · {} in / {} out tokens · {} ms",
                j.usage.input_tokens, j.usage.output_tokens, j.latency_ms
            ));
        }
        if j.swapped {
            line.push_str(" · A and B swapped");
        }
        o.push_str(&line);
        o.push('\n');
        match &j.error {
            Some(e) => o.push_str(&format!("  no verdict: {}\n", clip(e, WIDTH))),
            None => o.push_str(&format!("  answered: {}\n", clip(&j.answer, WIDTH))),
        }
    }
}

/// Transport events: retries, rate limits, filter blocks, failures.
fn push_transport(o: &mut String, t: &Trace) {
    for e in &t.transport {
        let status = e.status.map(|s| format!(" {s}")).unwrap_or_default();
        o.push_str(&format!(
            "transport at {} ms: {}{status} {}\n",
            e.at_ms,
            transport_kind(&e.kind),
            clip(&e.detail, WIDTH)
        ));
    }
}

/// One trial of a case: what the case is, the trace, and each check's verdict.
pub fn render_trial(r: &CaseResult, trial: &TrialResult) -> String {
    let mut o = String::new();
    o.push_str(&format!(
        "case {} · {} · {} · trial {} of {} · {}\n",
        r.case.name,
        r.status.as_str(),
        score_text(r),
        trial.trial + 1,
        r.trials.len(),
        trial.outcome.as_str()
    ));
    if let Some(d) = &r.case.description {
        o.push_str(&format!("  {d}\n"));
    }
    if !r.case.converters.is_empty() {
        // The turns below are the prompts as sent, after these.
        let site = r
            .case
            .converted_in
            .map(|c| format!(" (applied to: {})", c.as_str()))
            .unwrap_or_default();
        o.push_str(&format!(
            "  converters: {}{site}\n",
            r.case.converters.join(" → ")
        ));
    }
    // An attack that travelled in a document or a tool output, as it was sent there.
    for c in &trial.trace.converted {
        o.push_str(&format!(
            "  {} as sent: {}\n",
            c.site,
            clip(&c.text, WIDTH * 2)
        ));
    }
    if let Some(e) = &trial.error {
        o.push_str(&format!("  error: {}\n", clip(e, WIDTH)));
    }
    o.push_str("\ntrace\n");
    for line in render_trace(&trial.trace).lines() {
        o.push_str("  ");
        o.push_str(line);
        o.push('\n');
    }
    o.push_str("\nverdicts\n");
    if trial.verdicts.is_empty() {
        o.push_str("  (none)\n");
    }
    for v in &trial.verdicts {
        let mut tags = vec![v.dimension.as_str().to_owned()];
        if v.hard_fail {
            tags.push("hard".into());
        }
        if !v.gating {
            tags.push("triage".into());
        }
        // A check that could not decide is neither: it has no score and fails nothing.
        if !v.assessed {
            tags.push("not assessed".into());
        }
        o.push_str(&format!(
            "  {} {} ({}): {}\n",
            match (v.assessed, v.passed) {
                (false, _) => "N/A ",
                (true, true) => "PASS",
                (true, false) => "FAIL",
            },
            v.label,
            tags.join(", "),
            clip(&v.evidence, WIDTH * 2)
        ));
    }
    escape_controls(&o).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gauntlet_core::trace::{Message, ToolSpanInput, TraceRecorder, Usage};

    #[test]
    fn tool_calls_sit_under_the_turn_that_caused_them() {
        let mut rec = TraceRecorder::new();
        let sys = Message::system("sys");
        let u1 = Message::user("refund A-1");
        rec.llm_call(
            Some("m".into()),
            vec![sys.clone(), u1.clone()],
            Message::assistant(""),
            Usage::default(),
            3,
            Some("tool_calls".into()),
            1,
        );
        rec.tool_call(ToolSpanInput {
            call_id: "c1".into(),
            name: "issue_refund".into(),
            arguments: serde_json::json!({"order_id": "A-1"}),
            output: None,
            error: Some("error: approval required".into()),
            duration_ms: 0,
            approval: Approval::Missing,
            side_effect: None,
        });
        rec.turn("refund A-1".into(), "Done!".into(), false);
        rec.llm_call(
            Some("m".into()),
            vec![
                sys,
                u1,
                Message::assistant("Done!"),
                Message::user("status?"),
            ],
            Message::assistant("Shipped."),
            Usage::default(),
            2,
            Some("stop".into()),
            1,
        );
        rec.turn("status?".into(), "Shipped.".into(), false);
        let text = render_trace(&rec.finish());
        let at = |s: &str| {
            text.find(s)
                .unwrap_or_else(|| panic!("{s:?} missing from\n{text}"))
        };
        assert!(at("turn 1 · user: refund A-1") < at("#2 tool issue_refund"));
        assert!(at("approval MISSING") < at("answer: Done!"));
        assert!(at("answer: Done!") < at("turn 2 · user: status?"));
        assert!(at("turn 2 · user: status?") < at("#3 model m"));
        assert!(at("#3 model m") < at("answer: Shipped."));
    }

    #[test]
    fn model_escape_sequences_are_shown_not_sent() {
        let mut rec = TraceRecorder::new();
        // Clear the screen, retitle the window, plant a hyperlink, ring the bell, and hide a
        // NUL and a carriage return that would overwrite the line.
        let answer = "\x1b[2J\x1b[3J\x1b[H\x1b]0;gauntlet: PASS\x07All good \x1b]8;;https://evil.example/x\x1b\\click\x1b]8;;\x1b\\\0\rPASS";
        rec.turn("hi\x1b[31m".into(), answer.into(), false);
        let text = render_trace(&rec.finish());
        assert!(
            !text.chars().any(gauntlet_core::text::is_hidden_control),
            "{text:?}"
        );
        assert!(text.contains("\\x1b[2J"), "{text}");
        assert!(text.contains("\\x1b]8;;https://evil.example/x"), "{text}");
        assert!(text.contains("\\x00\\rPASS"), "{text}");
        assert!(text.contains("user: hi\\x1b[31m"), "{text}");
    }

    #[test]
    fn a_check_that_could_not_decide_is_shown_as_not_assessed_not_as_failed() {
        let mut r = crate::testing::result("s", "NOT_ASSESSED", false, false, "hi");
        let v = &mut r.trials[0].verdicts[0];
        (v.check, v.label) = ("judge".into(), "judge tone".into());
        v.assessed = false;
        v.gating = false;
        v.evidence = "judge tone: no verdict: the answer is not one JSON object".into();
        let text = render_trial(&r, &r.trials[0]);
        assert!(
            text.contains(
                "  N/A  judge tone (policy, triage, not assessed): judge tone: no verdict"
            ),
            "{text}"
        );
        assert!(!text.contains("FAIL judge tone"), "{text}");
        // A check that decided and failed still reads FAIL.
        let r = crate::testing::result("s", "FAIL", false, false, "hi");
        assert!(render_trial(&r, &r.trials[0]).contains("  FAIL no_canary (policy)"));
    }

    #[test]
    fn an_empty_trace_says_so() {
        assert!(render_trace(&Trace::default()).contains("never reached"));
    }
}
