//! What a `script:` check's program is told and what its answer means: [`input`], the JSON
//! document written on its stdin, and [`read`], which turns what the process did (a
//! [`ScriptOutput`] from the [`ScriptHost`](gauntlet_core::grader::ScriptHost) that ran it)
//! into a [`ScriptAnswer`] or the reason it decides nothing.
//!
//! Starting the process is not this crate's: the host is lent to
//! [`OracleGrader`](crate::OracleGrader). Everything that is not a clean exit with one JSON
//! object holding a boolean `pass` (a crash, a non-zero exit, a time-out, too much output,
//! text that is not that object) is a reason, and the check is not assessed: a program that
//! broke never passes a case.

use gauntlet_core::grader::{GradeContext, ScriptEnd, ScriptOutput};
use gauntlet_core::text::clip;
use serde_json::{Value, json};

/// The longest evidence kept from a script's answer or its stderr, in characters.
const EVIDENCE_CHARS: usize = 2_000;

/// The document a script reads on stdin: the case as loaded, the final answer, every
/// answer, the trace and how the trial ended.
pub fn input(ctx: &GradeContext<'_>) -> Vec<u8> {
    let doc = json!({
        "case": ctx.case,
        "answer": ctx.trace.final_answer(),
        "answers": ctx.trace.answers().collect::<Vec<_>>(),
        "trace": ctx.trace,
        "outcome": ctx.outcome,
    });
    serde_json::to_vec(&doc).unwrap_or_default()
}

/// A script's decision.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptAnswer {
    /// Whether the answer passes.
    pub pass: bool,
    /// The score on the check's dimension (0-3), when the script gave one.
    pub score: Option<u8>,
    /// What the script saw, in words (clipped).
    pub evidence: String,
    /// Structured evidence, when the script gave some.
    pub details: Option<Value>,
}

/// What the process did, read as an answer; the error is why it decides nothing.
pub fn read(out: &ScriptOutput) -> Result<ScriptAnswer, String> {
    let stderr = || {
        let s = out.stderr.trim();
        if s.is_empty() {
            String::new()
        } else {
            format!("; stderr: {}", clip(s, EVIDENCE_CHARS))
        }
    };
    match &out.end {
        ScriptEnd::Exited(0) => {}
        ScriptEnd::Exited(code) => {
            return Err(format!("the script exited with code {code}{}", stderr()));
        }
        ScriptEnd::Signalled => {
            return Err(format!(
                "the script was killed by a signal (a crash){}",
                stderr()
            ));
        }
        ScriptEnd::TimedOut => {
            return Err("the script ran past its time limit and was killed".into());
        }
        ScriptEnd::TooLarge => {
            return Err(
                "the script wrote more on stdout than a check answer may hold and was killed"
                    .into(),
            );
        }
        ScriptEnd::NotStarted(why) => {
            return Err(format!("the script could not be started: {why}"));
        }
    }
    let text = std::str::from_utf8(&out.stdout)
        .map_err(|_| "the script's answer is not UTF-8".to_owned())?;
    let value: Value = serde_json::from_str(text.trim()).map_err(|e| {
        format!(
            "the script's answer is not JSON ({e}): {}",
            clip(text.trim(), 200)
        )
    })?;
    answer(&value)
}

/// The fields of a script's JSON answer.
fn answer(value: &Value) -> Result<ScriptAnswer, String> {
    let Some(obj) = value.as_object() else {
        return Err("the script's answer is not a JSON object".into());
    };
    let Some(pass) = obj.get("pass").and_then(Value::as_bool) else {
        return Err("the script's answer has no boolean `pass`".into());
    };
    let score = match obj.get("score") {
        None | Some(Value::Null) => None,
        Some(s) => match s.as_u64() {
            Some(n) if n <= 3 => Some(n as u8),
            _ => {
                return Err(format!(
                    "the script's `score` is {s}, not a whole number 0-3"
                ));
            }
        },
    };
    let evidence = match obj.get("evidence") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => clip(s, EVIDENCE_CHARS),
        Some(other) => clip(&other.to_string(), EVIDENCE_CHARS),
    };
    Ok(ScriptAnswer {
        pass,
        score,
        evidence,
        details: obj.get("details").filter(|d| !d.is_null()).cloned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(end: ScriptEnd, stdout: &str) -> ScriptOutput {
        ScriptOutput {
            end,
            stdout: stdout.as_bytes().to_vec(),
            stderr: "Traceback: boom".into(),
        }
    }

    #[test]
    fn a_clean_answer_is_read_with_its_score_and_evidence() {
        let a = read(&out(
            ScriptEnd::Exited(0),
            r#"{"pass": false, "score": 1, "evidence": "total is 41, not 42", "details": {"total": 41}}"#,
        ))
        .expect("answer");
        assert!(!a.pass);
        assert_eq!(a.score, Some(1));
        assert_eq!(a.evidence, "total is 41, not 42");
        assert_eq!(a.details, Some(json!({"total": 41})));
    }

    #[test]
    fn anything_but_a_clean_exit_with_the_object_decides_nothing() {
        let bad = [
            (
                out(ScriptEnd::Exited(1), r#"{"pass": true}"#),
                "exited with code 1; stderr: Traceback",
            ),
            (out(ScriptEnd::Signalled, r#"{"pass": true}"#), "signal"),
            (out(ScriptEnd::TimedOut, r#"{"pass": true}"#), "time limit"),
            (out(ScriptEnd::TooLarge, ""), "more on stdout"),
            (
                out(ScriptEnd::NotStarted("no such file".into()), ""),
                "could not be started",
            ),
            (out(ScriptEnd::Exited(0), "PASS"), "not JSON"),
            (out(ScriptEnd::Exited(0), ""), "not JSON"),
            (out(ScriptEnd::Exited(0), "[true]"), "not a JSON object"),
            (
                out(ScriptEnd::Exited(0), r#"{"pass": "yes"}"#),
                "no boolean `pass`",
            ),
            (
                out(ScriptEnd::Exited(0), r#"{"passed": true}"#),
                "no boolean `pass`",
            ),
            (
                out(ScriptEnd::Exited(0), r#"{"pass": true, "score": 7}"#),
                "not a whole number 0-3",
            ),
        ];
        for (o, why) in bad {
            let err = read(&o).expect_err(why);
            assert!(err.contains(why), "{err} should say {why}");
        }
    }

    /// A host that runs no process: it plays a script that passes an answer holding
    /// `ships` and fails any other, reading the document it is given, or ends as told.
    struct Played(Option<ScriptEnd>);

    impl gauntlet_core::grader::ScriptHost for Played {
        fn run<'a>(
            &'a self,
            run: gauntlet_core::grader::ScriptRun<'a>,
        ) -> gauntlet_core::target::BoxFuture<'a, ScriptOutput> {
            Box::pin(async move {
                if let Some(end) = &self.0 {
                    return out(end.clone(), "");
                }
                let doc: Value = serde_json::from_slice(run.input).expect("input is JSON");
                let answer = doc["answer"].as_str().expect("answer");
                assert_eq!(doc["case"]["id"], "c");
                assert_eq!(doc["trace"]["turns"][0]["answer"], answer);
                let stdout = if answer.contains("ships") {
                    json!({"pass": true, "evidence": "names the day it ships"})
                } else {
                    json!({"pass": false, "score": 1, "evidence": "no shipping day"})
                };
                out(ScriptEnd::Exited(0), &stdout.to_string())
            })
        }
    }

    fn grade(host: Option<Played>, answer: &str) -> gauntlet_core::verdict::Verdict {
        use gauntlet_core::grader::Grader;
        use gauntlet_core::result::Outcome;
        use gauntlet_core::suite::Case;
        use gauntlet_core::trace::{Trace, TurnRecord};
        let case: Case = serde_json::from_value(json!({
            "id": "c", "input": "When does A-1 ship?",
            "expect": [{"script": "./check.py", "hard": true}]
        }))
        .expect("case");
        let trace = Trace {
            turns: vec![TurnRecord {
                user: "When does A-1 ship?".into(),
                answer: answer.into(),
                truncated: false,
            }],
            ..Trace::default()
        };
        let mut grader = crate::OracleGrader::new();
        if let Some(h) = host {
            grader = grader.with_scripts(std::sync::Arc::new(h));
        }
        let ctx = GradeContext {
            case: &case,
            trace: &trace,
            outcome: Outcome::Completed,
            canary: None,
            system_prompt: None,
            tools: &[],
            suite_dir: None,
        };
        let rt = tokio_free_block_on(grader.grade(ctx));
        rt.into_iter()
            .find(|v| v.check == "script")
            .expect("script verdict")
    }

    /// Polls a future that never waits (the played host answers at once).
    fn tokio_free_block_on<T>(f: impl std::future::Future<Output = T>) -> T {
        let mut f = std::pin::pin!(f);
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        match f.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(v) => v,
            std::task::Poll::Pending => panic!("the played host never waits"),
        }
    }

    #[test]
    fn a_script_passes_a_clean_answer_and_fails_a_violating_one_hard() {
        let v = grade(Some(Played(None)), "It ships Monday.");
        assert!(v.passed && v.assessed && v.score == 3, "{v:?}");
        assert_eq!(v.evidence, "names the day it ships");
        let v = grade(Some(Played(None)), "I cannot say.");
        assert!(!v.passed && v.assessed && v.hard_fail, "{v:?}");
        assert_eq!(v.score, 1);
        assert_eq!(v.evidence, "no shipping day");
    }

    #[test]
    fn a_script_that_breaks_or_is_not_run_is_not_assessed_never_a_pass() {
        for end in [
            ScriptEnd::TimedOut,
            ScriptEnd::Signalled,
            ScriptEnd::Exited(2),
        ] {
            let v = grade(Some(Played(Some(end))), "It ships Monday.");
            assert!(!v.passed && !v.assessed && !v.hard_fail, "{v:?}");
        }
        let v = grade(None, "It ships Monday.");
        assert!(!v.passed && !v.assessed, "{v:?}");
        assert!(v.evidence.contains("not run"), "{}", v.evidence);
    }
}
