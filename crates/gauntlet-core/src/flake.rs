//! Flake triage: [`classify`] reads the k trials of one case re-run alone with pinned inputs
//! and says which of three things is going on, with the evidence:
//!
//! | evidence | class | what to do |
//! |---|---|---|
//! | timeouts, rate limits, retries, transport errors, or answers that differ only in dates and times | harness flake | fix the fixture, the mock or the clock |
//! | identical traces, different verdicts | grader/judge instability | fix the grader; the agent is not at fault |
//! | same input, a different tool choice, refusal decision or answer | agent nondeterminism | a real finding: a blocking case FAILs; a quality case gates on pass^k |
//!
//! Harness evidence is checked first: a trial that did not complete says nothing about the
//! agent or the grader.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::result::{CaseStatus, Outcome, TrialResult};
use crate::trace::{Span, TransportKind};

/// The class of a flaky case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FlakeClass {
    /// Every trial got the same verdicts: no flake observed.
    Stable,
    /// The harness (network, limits, clock) made trials differ.
    HarnessFlake,
    /// Identical traces were graded differently.
    GraderInstability,
    /// The agent did different things given the same input.
    AgentNondeterminism,
}

impl FlakeClass {
    /// The snake_case name (used in quarantine files).
    pub fn as_str(self) -> &'static str {
        match self {
            FlakeClass::Stable => "stable",
            FlakeClass::HarnessFlake => "harness_flake",
            FlakeClass::GraderInstability => "grader_instability",
            FlakeClass::AgentNondeterminism => "agent_nondeterminism",
        }
    }

    /// What to do about it.
    pub fn action(self) -> &'static str {
        match self {
            FlakeClass::Stable => "nothing: keep the case as it is",
            FlakeClass::HarnessFlake => {
                "fix the fixture, mock, rate limit or clock; the agent is not at fault"
            }
            FlakeClass::GraderInstability => {
                "fix or recalibrate the grader; the agent is not at fault"
            }
            FlakeClass::AgentNondeterminism => {
                "a real finding: on a blocking case the suite FAILs; on a quality case record the pass rate and gate on pass^k"
            }
        }
    }
}

/// The verdict of flake triage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FlakeReport {
    /// The class.
    pub class: FlakeClass,
    /// Trials run.
    pub k: usize,
    /// Trials that passed.
    pub passes: usize,
    /// passes / k.
    pub pass_rate: f64,
    /// The evidence, one finding per line.
    pub evidence: Vec<String>,
}

/// What the agent did in a trial, without ids, timings or usage: two trials with the same
/// fingerprint behaved the same.
fn fingerprint(t: &TrialResult) -> String {
    let mut s = String::new();
    for span in &t.trace.spans {
        if let Span::ToolCall(c) = span {
            s.push_str(&format!("tool {} {}\n", c.name, c.arguments));
        }
    }
    for turn in &t.trace.turns {
        s.push_str("answer ");
        s.push_str(&turn.answer);
        s.push('\n');
    }
    s.push_str(&format!("outcome {}\n", t.outcome.as_str()));
    s
}

fn tool_choice(t: &TrialResult) -> Vec<String> {
    t.trace.tool_calls().map(|c| c.name.clone()).collect()
}

fn verdicts(t: &TrialResult) -> Vec<(String, bool, u8)> {
    t.verdicts
        .iter()
        .map(|v| (v.label.clone(), v.passed, v.score))
        .collect()
}

/// Replaces dates, times and weekday or month names with placeholders, so that answers that
/// differ only by the clock compare equal.
fn without_clock(s: &str) -> String {
    static WORDS: &[&str] = &[
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let mut out = String::with_capacity(s.len());
    for word in s.split_inclusive(|c: char| c.is_whitespace()) {
        let core = word.trim_end();
        let lower = core
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        let digits = core.chars().filter(char::is_ascii_digit).count();
        let clockish =
            core.contains(':') || core.contains('-') || core.contains('/') || core.contains('T');
        if WORDS.contains(&lower.as_str()) || (digits >= 2 && (clockish || digits == core.len())) {
            out.push_str("<t>");
            out.push_str(&word[core.len()..]);
        } else {
            out.push_str(word);
        }
    }
    out
}

/// Classifies the trials of one case. `refused` says whether an answer is a refusal.
pub fn classify(trials: &[TrialResult], refused: &dyn Fn(&str) -> bool) -> FlakeReport {
    let k = trials.len();
    let passes = trials
        .iter()
        .filter(|t| t.status == CaseStatus::Pass)
        .count();
    let mut r = FlakeReport {
        class: FlakeClass::Stable,
        k,
        passes,
        pass_rate: if k == 0 {
            0.0
        } else {
            passes as f64 / k as f64
        },
        evidence: Vec::new(),
    };
    if k == 0 {
        r.evidence.push("no trial ran".into());
        return r;
    }
    // 1. Harness: trials that did not complete, or infrastructure trouble on the way.
    let mut harness = Vec::new();
    for t in trials {
        if matches!(t.outcome, Outcome::Error | Outcome::Timeout) {
            harness.push(format!(
                "trial {} ended in {}: {}",
                t.trial + 1,
                t.outcome.as_str(),
                t.error.as_deref().unwrap_or("")
            ));
        }
        let kinds: BTreeSet<&str> = t
            .trace
            .transport
            .iter()
            .filter(|e| {
                matches!(
                    e.kind,
                    TransportKind::Retry
                        | TransportKind::RateLimited
                        | TransportKind::Timeout
                        | TransportKind::Failed
                )
            })
            .map(|e| match e.kind {
                TransportKind::Retry => "retries",
                TransportKind::RateLimited => "rate limits (429)",
                TransportKind::Timeout => "timeouts",
                _ => "transport failures",
            })
            .collect();
        if !kinds.is_empty() {
            harness.push(format!(
                "trial {} met {}",
                t.trial + 1,
                kinds.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    let verdict_sets: BTreeSet<Vec<(String, bool, u8)>> = trials.iter().map(verdicts).collect();
    let prints: BTreeSet<String> = trials.iter().map(fingerprint).collect();
    if !harness.is_empty() && (verdict_sets.len() > 1 || passes < k) {
        r.class = FlakeClass::HarnessFlake;
        r.evidence = harness;
        return r;
    }
    // Answers that differ only by dates and times: the clock leaked into the trial.
    if prints.len() > 1 {
        let unclocked: BTreeSet<String> = prints.iter().map(|p| without_clock(p)).collect();
        if unclocked.len() == 1 {
            r.class = FlakeClass::HarnessFlake;
            r.evidence.push(
                "the answers differ only in dates or times: the agent saw a moving clock (pin it: exec agents get GAUNTLET_FROZEN_TIME)".into(),
            );
            return r;
        }
    }
    if verdict_sets.len() == 1 {
        r.evidence.push(format!(
            "{k} trials, identical verdicts ({})",
            if prints.len() == 1 {
                "identical traces"
            } else {
                "the traces differ, but not in anything the checks look at"
            }
        ));
        return r;
    }
    // 2. Identical behaviour, different verdicts: the grader.
    if prints.len() == 1 {
        r.class = FlakeClass::GraderInstability;
        let first = verdicts(&trials[0]);
        for t in &trials[1..] {
            for ((label, p1, s1), (_, p2, s2)) in first.iter().zip(verdicts(t)) {
                if (*p1, *s1) != (p2, s2) {
                    r.evidence.push(format!(
                        "identical traces; `{label}` gave {}/3 in trial 1 and {s2}/3 in trial {}",
                        s1,
                        t.trial + 1
                    ));
                }
            }
        }
        r.evidence.truncate(8);
        return r;
    }
    // 3. The agent behaved differently.
    r.class = FlakeClass::AgentNondeterminism;
    let choices: BTreeSet<Vec<String>> = trials.iter().map(tool_choice).collect();
    if choices.len() > 1 {
        let shown: Vec<String> = trials
            .iter()
            .map(|t| format!("trial {}: [{}]", t.trial + 1, tool_choice(t).join(", ")))
            .collect();
        r.evidence
            .push(format!("different tool choices: {}", shown.join("; ")));
    }
    let decisions: Vec<bool> = trials
        .iter()
        .map(|t| refused(t.trace.final_answer()))
        .collect();
    if decisions.iter().any(|d| *d) && decisions.iter().any(|d| !*d) {
        let refusing: Vec<String> = trials
            .iter()
            .zip(&decisions)
            .filter(|(_, d)| **d)
            .map(|(t, _)| (t.trial + 1).to_string())
            .collect();
        r.evidence.push(format!(
            "different refusal decisions: trials {} refused, the others complied",
            refusing.join(", ")
        ));
    }
    if r.evidence.is_empty() {
        r.evidence.push(format!(
            "same input, {} different answers across {k} trials",
            prints.len()
        ));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_tokens_are_masked() {
        assert_eq!(
            without_clock("It is 2025-01-01T10:00:00Z, Monday."),
            without_clock("It is 2026-11-29T22:15:03Z, Sunday.")
        );
        assert_ne!(
            without_clock("refund sent"),
            without_clock("refund refused")
        );
    }
}
