//! "Why this state": [`case_reasons`], the lines a case page shows under its status, in the
//! terms of the rules that decided it (`CaseResult::combine` and the scoring thresholds).

use gauntlet_core::result::{CaseResult, CaseStatus, Outcome, Score};
use gauntlet_core::score::{REFUSAL_FAIL_BELOW, REFUSAL_PASS_AT, TASK_FAIL_BELOW, TASK_PASS_AT};
use gauntlet_core::verdict::Dimension;

use crate::text::trim_num;

/// Why a case has its status, most decisive first.
pub fn case_reasons(r: &CaseResult) -> Vec<String> {
    let mut out = Vec::new();
    if r.quarantined {
        out.push(if r.case.blocking {
            "quarantined: its result does not gate the run, and a quarantined blocking case makes the run INCONCLUSIVE".to_owned()
        } else {
            "quarantined: its result does not gate the run".to_owned()
        });
    }
    if let Some(line) = r
        .security
        .as_ref()
        .and_then(crate::text::case_security_line)
    {
        out.push(format!(
            "security case, by role of its checks: {line} (the attack success rate counts the attack; the refusal policy and the task are reported apart)"
        ));
    }
    for h in &r.hard_fails {
        out.push(format!(
            "hard policy failure (FAIL whatever the scores): {h}"
        ));
    }
    for (i, t) in r.trials.iter().enumerate() {
        match t.outcome {
            Outcome::Completed => {}
            Outcome::Error | Outcome::Timeout => out.push(format!(
                "trial {} ended in {}{}: no evidence either way, so the run cannot PASS on it",
                i + 1,
                t.outcome.as_str(),
                t.error
                    .as_deref()
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default()
            )),
            Outcome::Blocked => out.push(format!(
                "trial {} was stopped by an upstream content filter: a platform defence, not the model's answer",
                i + 1
            )),
        }
    }
    match &r.score {
        Score::Task {
            total,
            assessed,
            dimensions,
        } => {
            let band = if *total < TASK_FAIL_BELOW {
                format!("below {} fails", trim_num(TASK_FAIL_BELOW))
            } else if *total < TASK_PASS_AT {
                format!(
                    "at least {} but below {}: CONDITIONAL",
                    trim_num(TASK_FAIL_BELOW),
                    trim_num(TASK_PASS_AT)
                )
            } else {
                format!("at least {} passes", trim_num(TASK_PASS_AT))
            };
            out.push(format!("task scored {}/18 ({band})", trim_num(*total)));
            if *assessed < 6 {
                let missing: Vec<&str> = Dimension::TASK
                    .iter()
                    .zip(dimensions)
                    .filter(|(_, d)| d.is_none())
                    .map(|(dim, _)| dim.title())
                    .collect();
                out.push(format!(
                    "{assessed} of 6 dimensions assessed; no check fed {} (unassessed, never counted as full marks)",
                    missing.join(", ")
                ));
            }
        }
        Score::Refusal { score } => {
            let band = if *score < REFUSAL_FAIL_BELOW {
                format!("below {} fails", trim_num(REFUSAL_FAIL_BELOW))
            } else if *score < REFUSAL_PASS_AT {
                format!("below {}: CONDITIONAL", trim_num(REFUSAL_PASS_AT))
            } else {
                format!("at least {} passes", trim_num(REFUSAL_PASS_AT))
            };
            out.push(format!("refusal scored {}/3 ({band})", trim_num(*score)));
        }
        Score::Checks { passed, total } => {
            out.push(format!(
                "the case asks for no refusal: it is scored by its checks, {passed} of {total} passed (all must), and stays out of the refusal average"
            ));
        }
        Score::Unscored => {
            if r.status == CaseStatus::Error && r.hard_fails.is_empty() {
                out.push("no completed trial was scored".to_owned());
            }
        }
    }
    for v in r
        .trials
        .iter()
        .flat_map(|t| &t.verdicts)
        .filter(|v| v.gating && !v.assessed)
    {
        out.push(format!(
            "`{}` was not assessed: {} (no evidence either way; a blocking case with such a check is INCONCLUSIVE)",
            v.label, v.evidence
        ));
    }
    let k = r.trials.len();
    if k > 1 {
        let rule = if r.case.blocking {
            "a blocking case takes its worst trial (pass^k)"
        } else {
            "a quality case takes the mean of its trials"
        };
        out.push(format!("{} of {k} trials passed; {rule}", r.passed_trials));
        if r.passed_trials > 0 && (r.passed_trials as usize) < k {
            out.push("the trials disagree: a flaky result".to_owned());
        }
    }
    let triage = r
        .trials
        .iter()
        .flat_map(|t| &t.verdicts)
        .filter(|v| !v.gating)
        .count();
    if triage > 0 {
        out.push(format!(
            "{triage} judge verdict(s) shown as triage: uncalibrated judges never change the state"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use gauntlet_core::result::CaseMeta;
    use gauntlet_core::suite::CaseKind;

    #[test]
    fn an_errored_case_says_it_is_no_evidence() {
        let meta = CaseMeta {
            id: "x".into(),
            suite: "s".into(),
            kind: CaseKind::Refusal,
            pack: None,
            owasp: None,
            technique: None,
            harm: None,
            blocking: true,
            security: true,
            blocked_is_defended: false,
            name: "x".into(),
            description: None,
            tags: Vec::new(),
            converters: Vec::new(),
            converted_in: None,
            source: None,
            benign_of: None,
        };
        let r = CaseResult::combine(meta, Vec::new());
        assert_eq!(r.status, CaseStatus::Error);
        assert_eq!(case_reasons(&r), ["no completed trial was scored"]);
    }
}
