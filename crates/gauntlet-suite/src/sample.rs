//! Stratified samples of a run's cases: [`stratified`] picks `n` case ids balanced over
//! categories (the OWASP id, else the pack) and, within each, over techniques, with a
//! seeded generator, and [`apply`] narrows a run's suites and selection to them.
//!
//! Allocation is equal, not proportional: the sample takes one case of every (category,
//! technique) stratum before it takes a second of any, visiting the strata so that the
//! categories alternate (the first technique of each category, then the second of each...).
//! A sample smaller than the number of strata is therefore spread over the categories, and a
//! sample of 40 over 40 techniques takes one case of each. The cases run in suite order whatever order they were drawn in, so the
//! same seed sends the same prompts in the same order.

use std::collections::{BTreeMap, HashSet};

use gauntlet_core::suite::Case;

use crate::converters::Rng;
use crate::filter::Selection;
use crate::load::{LoadedSuite, stream_jsonl};

/// What sampling needs to know about a case.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The case id.
    pub id: String,
    /// The stratum's first level: the OWASP category, else the pack, else `-`.
    pub category: String,
    /// The second level: the technique, else `-`.
    pub technique: String,
    /// The case has a benign twin, which runs with it when it is drawn.
    pub twin: bool,
}

impl Candidate {
    /// The candidate for a case.
    pub fn of(c: &Case) -> Candidate {
        Candidate {
            id: c.id.clone(),
            category: c
                .owasp
                .clone()
                .or_else(|| c.pack.clone())
                .unwrap_or_else(|| "-".into()),
            technique: c.technique.clone().unwrap_or_else(|| "-".into()),
            twin: c.benign.is_some(),
        }
    }
}

/// Draws `n` ids from the candidates, balanced over categories and then techniques. Every
/// candidate is drawn when there are `n` or fewer.
pub fn stratified(candidates: &[Candidate], n: usize, seed: u64) -> HashSet<String> {
    let mut rng = Rng::new(seed ^ 0x5a4d_504c_4553_0001);
    // category -> technique -> ids, in a seeded order at every level.
    let mut strata: BTreeMap<&str, BTreeMap<&str, Vec<&str>>> = BTreeMap::new();
    for c in candidates {
        strata
            .entry(&c.category)
            .or_default()
            .entry(&c.technique)
            .or_default()
            .push(&c.id);
    }
    let mut cats: Vec<Vec<Vec<&str>>> = strata
        .into_values()
        .map(|techs| {
            let mut t: Vec<Vec<&str>> = techs
                .into_values()
                .map(|mut ids| {
                    rng.shuffle(&mut ids);
                    ids
                })
                .collect();
            rng.shuffle(&mut t);
            t
        })
        .collect();
    rng.shuffle(&mut cats);
    // The strata in an order that interleaves the categories: the first technique of each
    // category, then the second of each, and so on.
    let mut strata_order: Vec<Vec<&str>> = Vec::new();
    let deepest = cats.iter().map(Vec::len).max().unwrap_or(0);
    for depth in 0..deepest {
        for techs in &mut cats {
            if let Some(t) = techs.get_mut(depth) {
                strata_order.push(std::mem::take(t));
            }
        }
    }
    // Passes over the strata, one case from each per pass, until the sample is full.
    let mut out = HashSet::new();
    'fill: loop {
        let mut took = false;
        for ids in &mut strata_order {
            if out.len() >= n {
                break 'fill;
            }
            if let Some(id) = ids.pop() {
                out.insert(id.to_owned());
                took = true;
            }
        }
        if !took {
            break;
        }
    }
    out
}

/// Narrows loaded suites (loaded with `selection`) to a stratified sample of `n` of the
/// cases the selection takes, and the selection to the sampled ids. Cases in included JSON
/// lines files are read once more to be counted.
pub fn apply(
    suites: &mut [LoadedSuite],
    selection: &mut Selection,
    n: usize,
    seed: u64,
) -> std::io::Result<usize> {
    let mut per_suite: Vec<Vec<Candidate>> = Vec::with_capacity(suites.len());
    for s in suites.iter() {
        let mut cands: Vec<Candidate> = s
            .suite
            .cases
            .iter()
            .filter(|c| selection.keeps(c))
            .map(Candidate::of)
            .collect();
        for path in &s.streamed {
            for c in stream_jsonl(path)?.flatten() {
                if selection.keeps(&c) {
                    cands.push(Candidate::of(&c));
                }
            }
        }
        per_suite.push(cands);
    }
    let all: Vec<Candidate> = per_suite.iter().flatten().cloned().collect();
    let picked = stratified(&all, n, seed);
    for (s, cands) in suites.iter_mut().zip(&per_suite) {
        // A drawn case brings its benign twin along (the plan keeps a twin with its case).
        s.selected = cands
            .iter()
            .filter(|c| picked.contains(&c.id))
            .map(|c| 1 + usize::from(c.twin))
            .sum();
    }
    selection.only = Some(match selection.only.take() {
        Some(prev) => prev.intersection(&picked).cloned().collect(),
        None => picked.clone(),
    });
    Ok(picked.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cands() -> Vec<Candidate> {
        let mut v = Vec::new();
        for (cat, techs, per) in [("LLM01", 4, 5), ("LLM02", 2, 3), ("ASI02", 1, 10)] {
            for t in 0..techs {
                for i in 0..per {
                    v.push(Candidate {
                        id: format!("{cat}-t{t}-{i}"),
                        category: cat.into(),
                        technique: format!("t{t}"),
                        twin: false,
                    });
                }
            }
        }
        v
    }

    #[test]
    fn the_same_seed_draws_the_same_sample() {
        let c = cands();
        assert_eq!(stratified(&c, 7, 42), stratified(&c, 7, 42));
        assert_ne!(stratified(&c, 7, 42), stratified(&c, 7, 43));
    }

    #[test]
    fn the_sample_covers_every_stratum_it_can() {
        let c = cands();
        let s = stratified(&c, 7, 1);
        assert_eq!(s.len(), 7);
        let strata: HashSet<(String, String)> = c
            .iter()
            .filter(|x| s.contains(&x.id))
            .map(|x| (x.category.clone(), x.technique.clone()))
            .collect();
        // Seven cases over seven techniques: one of each.
        assert_eq!(strata.len(), 7);
        // Asking for more than there are takes everything.
        assert_eq!(stratified(&c, 1000, 1).len(), c.len());
    }

    #[test]
    fn a_small_sample_spreads_over_the_categories() {
        let c = cands();
        let s = stratified(&c, 3, 9);
        for cat in ["LLM01", "LLM02", "ASI02"] {
            let n = s.iter().filter(|id| id.starts_with(cat)).count();
            assert_eq!(n, 1, "{cat}: {s:?}");
        }
    }
}
