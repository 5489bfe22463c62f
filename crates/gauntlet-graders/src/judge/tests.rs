//! The gate end to end, with fake judges: calibrate, grade, and fold into a state.

use std::sync::Arc;

use gauntlet_core::calibration::{CalibrationRecord, Triage};
use gauntlet_core::expect::{Expect, JudgeSpec, Oracle};
use gauntlet_core::grader::GradeContext;
use gauntlet_core::judges::{JudgeDef, JudgeScale};
use gauntlet_core::result::{CaseMeta, CaseResult, CaseStatus, Outcome, TrialResult};
use gauntlet_core::score::Status;
use gauntlet_core::suite::Case;
use gauntlet_core::summary::{PackRequirements, RunEnd, SummaryBuilder};
use gauntlet_core::trace::{Trace, TurnRecord};
use gauntlet_core::verdict::Verdict;
use serde_json::json;

use super::calibrate::{CalibrateOptions, RecordFacts, calibrate, record};
use super::fake::FakeJudge;
use super::labels::{LabelFormat, parse_labels};
use super::{Judge, JudgeModel, JudgePanel, cache::JudgeCache};

/// Drives a future whose judges answer at once (the fakes never wait).
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

fn fake(spec: &str) -> Arc<dyn JudgeModel> {
    Arc::new(FakeJudge::parse(spec).unwrap().unwrap())
}

fn def() -> JudgeDef {
    JudgeDef {
        rubric: Some("answers politely".into()),
        scale: Some(JudgeScale::Binary),
        ..JudgeDef::default()
    }
}

fn judge(spec: &str, def: JudgeDef) -> Judge {
    Judge::new(
        "tone",
        def,
        Some(fake(spec)),
        Arc::new(JudgeCache::memory()),
    )
    .unwrap()
}

/// A label file of `n` items on which the column `v` always agrees with the label.
fn labels(n: usize) -> String {
    (0..n)
        .map(|i| {
            let l = if i % 3 == 0 { "fail" } else { "pass" };
            json!({"case_id": format!("c{i}"), "check_id": "tone", "input": format!("q{i}"),
                   "output": format!("a{i}"), "label": l, "v": l})
            .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn calibrated(j: &Judge, n: usize) -> CalibrationRecord {
    let set = parse_labels(&labels(n), LabelFormat::Jsonl, "tone", JudgeScale::Binary).unwrap();
    let cal = block_on(calibrate(j, &set, &CalibrateOptions::default()));
    record(
        j,
        &cal,
        &set,
        &RecordFacts {
            suite: "s",
            created: "2026-12-01T00:00:00Z".into(),
            gauntlet_version: "test",
            labels_file: "labels.jsonl",
            labels_sha256: "x".into(),
            min_kappa: 0.6,
            min_labels: 50,
        },
    )
}

fn case(verdict: &str) -> Case {
    serde_json::from_value(json!({
        "id": "c", "input": "hello", "vars": {"v": verdict},
        "expect": [{"contains": "hi"}, {"judge": "tone"}]
    }))
    .unwrap()
}

/// Grades the judge entry of `case` on an answer that passes the objective check.
fn grade(panel: &JudgePanel, case: &Case) -> (Verdict, TrialResult) {
    let trace = Trace {
        turns: vec![TurnRecord {
            user: "hello".into(),
            answer: "hi there".into(),
            truncated: false,
        }],
        ..Trace::default()
    };
    let ctx = GradeContext {
        case,
        trace: &trace,
        outcome: Outcome::Completed,
        canary: None,
        tools: &[],
        system_prompt: None,
    };
    let e: &Expect = &case.expect[1];
    let Oracle::Judge(spec) = &e.oracle else {
        unreachable!()
    };
    let v = block_on(panel.grade(e, spec, &ctx));
    let mut verdicts = crate::OracleGrader::new().grade_objective(&ctx);
    verdicts.push(v.clone());
    let t = TrialResult::new(
        case,
        0,
        Outcome::Completed,
        trace.clone(),
        verdicts,
        None,
        1,
    );
    (v, t)
}

fn state(case: &Case, t: TrialResult) -> Status {
    let r = CaseResult::combine(CaseMeta::of(case, &suite_ctx()), vec![t]);
    let mut b = SummaryBuilder::new();
    b.add(&r);
    b.finish(&PackRequirements::default(), &RunEnd::default(), 0)
        .status
}

fn panel(j: Judge) -> JudgePanel {
    let mut p = JudgePanel::new(Arc::new(JudgeCache::memory()));
    p.add(j);
    p
}

#[test]
fn an_uncalibrated_judge_never_gates() {
    let j = judge("fake:judge-column:v", def()).with_record(Ok(None), 0.6, 50);
    assert_eq!(j.gate, Err(Triage::Uncalibrated));
    let c = case("fail");
    let (v, t) = grade(&panel(j), &c);
    assert!(!v.passed && !v.gating, "{v:?}");
    assert!(
        v.evidence.ends_with("(triage: uncalibrated)"),
        "{}",
        v.evidence
    );
    // Its fail changes nothing: the objective check passes, so the case does.
    assert_eq!(t.status, CaseStatus::Pass);
    assert_eq!(
        t.trace.judge.len(),
        1,
        "the call is in the trace, apart from the agent's"
    );
    assert_eq!(
        t.trace.judge[0].model.as_deref(),
        Some("gauntlet-fake-judge")
    );
    assert_eq!(state(&c, t), Status::Pass);
}

#[test]
fn a_matching_record_gates() {
    let j = judge("fake:judge-column:v", def());
    let r = calibrated(&j, 60);
    assert_eq!(r.metrics.n, 60);
    assert_eq!(r.metrics.kappa, Some(1.0));
    assert!(r.gate.passed);
    let j = j.with_record(Ok(Some(r)), 0.6, 50);
    assert_eq!(j.gate, Ok(()));
    let c = case("fail");
    let (v, t) = grade(&panel(j), &c);
    assert!(v.gating && !v.passed && !v.hard_fail, "{v:?}");
    assert_eq!(t.status, CaseStatus::Fail, "a gating judge's fail counts");
    let (v, t) = grade(
        &panel(judge("fake:judge-column:v", def()).with_record(
            Ok(Some(calibrated(&judge("fake:judge-column:v", def()), 60))),
            0.6,
            50,
        )),
        &case("pass"),
    );
    assert!(v.gating && v.passed);
    assert_eq!(t.status, CaseStatus::Pass);
}

#[test]
fn too_few_labels_or_a_weak_judge_do_not_gate() {
    let j = judge("fake:judge-column:v", def());
    let r = calibrated(&j, 30);
    let j = j.with_record(Ok(Some(r)), 0.6, 50);
    assert_eq!(j.gate, Err(Triage::TooFewLabels { n: 30, min: 50 }));
    // A judge that says pass to everything agrees two times in three and has kappa 0.
    let always = judge("fake:judge-const:pass", def());
    let r = calibrated(&always, 60);
    assert!((r.metrics.accuracy - 40.0 / 60.0).abs() < 1e-12);
    assert_eq!(r.metrics.kappa, Some(0.0));
    assert!(!r.gate.passed);
}

#[test]
fn a_changed_prompt_or_model_ungates() {
    let r = calibrated(&judge("fake:judge-column:v", def()), 60);
    // The rubric edited after calibration.
    let mut edited = def();
    edited.rubric = Some("answers politely and briefly".into());
    let j = judge("fake:judge-column:v", edited).with_record(Ok(Some(r.clone())), 0.6, 50);
    assert_eq!(j.gate, Err(Triage::OtherPrompt));
    // Another template.
    let mut other = def();
    other.template = Some("reference".into());
    let j = judge("fake:judge-column:v", other).with_record(Ok(Some(r.clone())), 0.6, 50);
    assert_eq!(j.gate, Err(Triage::OtherPrompt));
    // Another model asked for.
    let j = judge("fake:judge-column:w", def()).with_record(Ok(Some(r.clone())), 0.6, 50);
    assert!(matches!(j.gate, Err(Triage::OtherJudge { .. })));
    // The same model asked for, but the answers come from another one: the provider moved.
    let j =
        judge("fake:judge-column:v@gauntlet-fake-judge-2", def()).with_record(Ok(Some(r)), 0.6, 50);
    assert_eq!(j.gate, Ok(()), "nothing tells before it answers");
    let c = case("fail");
    let (v, t) = grade(&panel(j), &c);
    assert!(!v.gating, "{v:?}");
    assert!(v.evidence.contains("model changed"), "{}", v.evidence);
    assert_eq!(t.status, CaseStatus::Pass);
}

#[test]
fn a_malformed_answer_is_never_a_verdict_and_a_gating_one_is_inconclusive() {
    // Triage: shown, changes nothing.
    let j = judge("fake:judge-malformed", def()).with_record(Ok(None), 0.6, 50);
    let c = case("pass");
    let (v, t) = grade(&panel(j), &c);
    assert!(!v.assessed && !v.passed && !v.gating, "{v:?}");
    assert!(v.evidence.contains("no verdict"), "{}", v.evidence);
    assert_eq!(state(&c, t), Status::Pass);

    // Gating: a record for this very judge (its figures borrowed from a good calibration).
    let good = judge("fake:judge-malformed", def());
    let mut r = calibrated(&judge("fake:judge-column:v", def()), 60);
    r.judge.configured_model = good.identity().unwrap().configured_model;
    let j = good.with_record(Ok(Some(r)), 0.6, 50);
    assert_eq!(j.gate, Ok(()));
    let (v, t) = grade(&panel(j), &c);
    assert!(!v.assessed && v.gating, "{v:?}");
    assert_eq!(t.status, CaseStatus::NotAssessed, "no evidence either way");
    assert_eq!(
        t.trace.judge[0]
            .error
            .as_deref()
            .map(|e| e.starts_with("the answer is not one JSON object")),
        Some(true)
    );
    let r = CaseResult::combine(CaseMeta::of(&c, &suite_ctx()), vec![t]);
    assert_eq!(r.status, CaseStatus::NotAssessed);
    let mut b = SummaryBuilder::new();
    b.add(&r);
    let s = b.finish(&PackRequirements::default(), &RunEnd::default(), 0);
    assert_eq!(s.status, Status::Inconclusive);
    assert_eq!(s.not_assessed, 1);
    assert_eq!(s.errors, 0, "a judge error is not the agent's error");
    assert!(
        s.reasons[0].contains("could not decide (not assessed)"),
        "{:?}",
        s.reasons
    );
    let tally = s.judge.unwrap();
    assert_eq!((tally.calls, tally.errors, tally.gating), (1, 1, 1));
}

#[test]
fn answers_are_cached_by_question_and_repeats_are_asked_again() {
    let cache = Arc::new(JudgeCache::memory());
    let j = Judge::new(
        "tone",
        def(),
        Some(fake("fake:judge-column:v")),
        Arc::clone(&cache),
    )
    .unwrap();
    let s = super::Subject {
        input: "q".into(),
        output: "a".into(),
        reference: None,
        fields: [("v".to_owned(), "pass".to_owned())].into_iter().collect(),
    };
    let a = block_on(j.assess(&s, 0));
    let b = block_on(j.assess(&s, 0));
    let c = block_on(j.assess(&s, 1));
    assert!(!a.calls[0].cached && b.calls[0].cached && !c.calls[0].cached);
    assert_eq!(a.outcome, b.outcome);
}

#[test]
fn pairwise_judges_ask_both_orders() {
    let mut d = def();
    d.template = Some("pairwise".into());
    d.scale = None;
    let s = |pref: &str| super::Subject {
        input: "q".into(),
        output: "mine".into(),
        reference: Some("theirs".into()),
        fields: [("v".to_owned(), pref.to_owned())].into_iter().collect(),
    };
    let j = judge("fake:judge-column:v", d.clone());
    // The column answers for the first order; the fake swaps it for the second, so a
    // consistent judge: A (the agent's) wins both times.
    let a = block_on(j.assess(&s("A"), 0));
    assert_eq!(a.calls.len(), 2);
    assert!(a.calls[1].swapped);
    assert!(
        a.calls[1].messages_in[1].content.find("theirs")
            < a.calls[1].messages_in[1].content.find("mine")
    );
    assert_eq!(a.swap_stable, Some(true));
    assert!(a.outcome.unwrap().passed);
    // A judge that always says "A" whatever is shown first has position bias.
    let biased = judge("fake:judge-const:A", d);
    let a = block_on(biased.assess(&s("A"), 0));
    assert_eq!(a.swap_stable, Some(false));
    assert!(a.outcome.unwrap_err().contains("position bias"));
}

#[test]
fn an_inline_judge_is_triage_and_reads_the_old_answer_shape_as_an_error() {
    let spec = JudgeSpec {
        rubric: Some("greets".into()),
        ..JudgeSpec::default()
    };
    let j = Judge::inline(
        &spec,
        Some(fake("fake:judge-const:3")),
        Arc::new(JudgeCache::memory()),
    );
    assert_eq!(j.gate, Err(Triage::Inline));
    assert_eq!(j.def.scale(), JudgeScale::Graded);
}

/// A suite context whose cases gate by default.
fn suite_ctx() -> gauntlet_core::plan::SuiteContext {
    gauntlet_core::plan::SuiteContext {
        name: "s".into(),
        default_blocking: true,
        ..Default::default()
    }
}
