//! Choosing judged items for people to label: [`candidates`] reads a stored case's judge
//! verdicts for one check, and [`stratified`] draws a seeded sample stratified by the
//! judge's verdict and spread over cases.
//!
//! Stratifying by verdict keeps the rare verdicts in the sample (a judge that fails one item
//! in twenty must still be checked on its fails); spreading over cases keeps one chatty case
//! from filling the sample. The judge's verdict is used to draw the sample and is not
//! exported: people label without seeing what the judge said.

use std::collections::{BTreeMap, HashSet};

use gauntlet_core::judges::JudgeSubject;
use gauntlet_core::result::CaseResult;
use gauntlet_core::stats::SplitMix64;

/// One judged item of a stored run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The case.
    pub case_id: String,
    /// The judge's verdict: `pass`, `fail`, `score N` or `no verdict`.
    pub stratum: String,
    /// What was judged.
    pub subject: JudgeSubject,
}

/// The items a case's verdicts of judge `check` judged, once each.
pub fn candidates(case: &CaseResult, check: &str) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    for v in case.trials.iter().flat_map(|t| &t.verdicts) {
        let Some(d) = v.details.as_ref().filter(|_| v.check == "judge") else {
            continue;
        };
        if d.get("check").and_then(|c| c.as_str()) != Some(check) {
            continue;
        }
        let Some(subject) = d
            .get("subject")
            .and_then(|s| serde_json::from_value::<JudgeSubject>(s.clone()).ok())
        else {
            continue;
        };
        let stratum = if !v.assessed {
            "no verdict".to_owned()
        } else if d.get("scale").and_then(|s| s.as_str()) == Some("0-3") {
            format!("score {}", v.score)
        } else if v.passed {
            "pass".to_owned()
        } else {
            "fail".to_owned()
        };
        if !out.iter().any(|c| c.subject == subject) {
            out.push(Candidate {
                case_id: case.case.id.clone(),
                stratum,
                subject,
            });
        }
    }
    out
}

/// A seeded sample of `n` candidates (all of them when there are fewer), stratified by
/// verdict: each verdict gets its share of `n` (largest remainders), at least one when `n`
/// allows; within a verdict, cases take turns so that every case is drawn once before any is
/// drawn twice.
pub fn stratified(cands: Vec<Candidate>, n: usize, seed: u64) -> Vec<Candidate> {
    let mut seen = HashSet::new();
    let cands: Vec<Candidate> = cands
        .into_iter()
        .filter(|c| seen.insert(c.subject.clone()))
        .collect();
    if cands.len() <= n {
        return cands;
    }
    let mut strata: BTreeMap<String, Vec<Candidate>> = BTreeMap::new();
    for c in cands {
        strata.entry(c.stratum.clone()).or_default().push(c);
    }
    let total: usize = strata.values().map(Vec::len).sum();
    // Shares by largest remainder, then at least one per verdict while n allows.
    let mut quota: Vec<(String, usize, f64)> = strata
        .iter()
        .map(|(k, v)| {
            let exact = n as f64 * v.len() as f64 / total as f64;
            (k.clone(), exact.floor() as usize, exact - exact.floor())
        })
        .collect();
    let mut left = n - quota.iter().map(|q| q.1).sum::<usize>();
    let mut by_remainder: Vec<usize> = (0..quota.len()).collect();
    by_remainder.sort_by(|&a, &b| quota[b].2.total_cmp(&quota[a].2).then(a.cmp(&b)));
    for &i in by_remainder.iter().cycle().take(quota.len() * 2) {
        if left == 0 {
            break;
        }
        if quota[i].1 < strata[&quota[i].0].len() {
            quota[i].1 += 1;
            left -= 1;
        }
    }
    for i in 0..quota.len() {
        if quota[i].1 == 0
            && let Some(j) = (0..quota.len())
                .filter(|&j| quota[j].1 > 1)
                .max_by_key(|&j| quota[j].1)
        {
            quota[j].1 -= 1;
            quota[i].1 += 1;
        }
    }
    let mut rng = SplitMix64::new(seed);
    let mut out = Vec::with_capacity(n);
    for (name, want, _) in quota {
        let mut pool = strata.remove(&name).unwrap_or_default();
        for i in (1..pool.len()).rev() {
            pool.swap(i, rng.below(i + 1));
        }
        // Cases take turns, in the order the shuffle first met them.
        let mut by_case: Vec<(String, Vec<Candidate>)> = Vec::new();
        for c in pool {
            match by_case.iter_mut().find(|(k, _)| *k == c.case_id) {
                Some((_, v)) => v.push(c),
                None => by_case.push((c.case_id.clone(), vec![c])),
            }
        }
        let mut taken = 0;
        let mut round = 0;
        while taken < want {
            let mut any = false;
            for (_, v) in &by_case {
                if let Some(c) = v.get(round) {
                    any = true;
                    if taken < want {
                        out.push(c.clone());
                        taken += 1;
                    }
                }
            }
            if !any {
                break;
            }
            round += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(case: &str, stratum: &str, i: usize) -> Candidate {
        Candidate {
            case_id: case.into(),
            stratum: stratum.into(),
            subject: JudgeSubject {
                input: format!("q{i}"),
                output: format!("a{i}"),
                reference: None,
                context: None,
            },
        }
    }

    #[test]
    fn rare_verdicts_and_every_case_are_drawn() {
        let mut c = Vec::new();
        for i in 0..95 {
            c.push(cand(if i < 90 { "big" } else { "small" }, "pass", i));
        }
        for i in 95..100 {
            c.push(cand("big", "fail", i));
        }
        let s = stratified(c.clone(), 10, 3);
        assert_eq!(s.len(), 10);
        assert!(
            s.iter().any(|x| x.stratum == "fail"),
            "the rare verdict is in"
        );
        assert!(
            s.iter().any(|x| x.case_id == "small"),
            "every case takes a turn"
        );
        assert_eq!(s, stratified(c.clone(), 10, 3), "seeded");
        assert_eq!(stratified(c, 500, 3).len(), 100, "fewer than n: all");
    }
}
