//! Calibrating a judge against people's labels: [`calibrate`] asks a [`Judge`] about every
//! labelled item through [`Judge::assess`] (the path a run uses), asks a seeded subset a
//! second time for self-consistency, and computes the figures; [`record`] turns them into
//! the [`CalibrationRecord`] that lets the judge gate, bound to the judge's whole identity
//! and to the model id its answers reported (none when they reported none: then only a model
//! the configuration pins can make the binding strong).

use std::collections::BTreeMap;

use gauntlet_core::calibration::{
    Agreement, CALIBRATION_FORMAT, CalibrationMetrics, CalibrationRecord, RecordedGate,
    RecordedJudge, RecordedLabels, standing,
};
use gauntlet_core::stats::SplitMix64;
use gauntlet_core::target::BoxFuture;
use gauntlet_core::trace::{JudgeSpan, Usage};

use super::labels::{LabelItem, LabelSet};
use super::{Assessment, Judge, Subject, bounded};

/// How to calibrate.
#[derive(Debug, Clone)]
pub struct CalibrateOptions {
    /// Items asked a second time to measure self-consistency (at most all of them).
    pub consistency: usize,
    /// Seed of the self-consistency subset and of the bootstrap.
    pub seed: u64,
    /// Questions in flight at once.
    pub concurrency: usize,
}

impl Default for CalibrateOptions {
    fn default() -> Self {
        CalibrateOptions {
            consistency: 50,
            seed: gauntlet_core::calibration::BOOTSTRAP_SEED,
            concurrency: 4,
        }
    }
}

/// What the judge said about one labelled item.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemOutcome {
    /// Its line in the label file.
    pub line: usize,
    /// Its case.
    pub case_id: String,
    /// The people's label.
    pub human: usize,
    /// The judge's verdict as a category, or why there is none.
    pub judge: Result<usize, String>,
    /// The second asking, for items in the self-consistency subset.
    pub again: Option<Result<usize, String>>,
    /// Pairwise: whether the verdict survived swapping A and B.
    pub swap_stable: Option<bool>,
    /// The model id the answer reported, if it reported one.
    pub model: Option<String>,
}

/// A finished calibration.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// Every item, in file order.
    pub items: Vec<ItemOutcome>,
    /// The figures.
    pub metrics: CalibrationMetrics,
    /// The model id most answers reported (the record is bound to it), or the configured
    /// model when none reported one.
    pub model: String,
    /// The model id most answers reported, if any answer reported one.
    pub reported: Option<String>,
    /// Every model id the answers reported, with counts: more than one means the endpoint
    /// switched models during the calibration.
    pub models: BTreeMap<String, usize>,
    /// Answers that reported no model id.
    pub unreported: usize,
    /// Judge calls made, cached answers included.
    pub calls: usize,
    /// Answers taken from the cache.
    pub cached: usize,
    /// Tokens used.
    pub usage: Usage,
}

fn subject(item: &LabelItem) -> Subject {
    Subject {
        input: item.input.clone(),
        output: item.output.clone(),
        reference: item.reference.clone(),
        // The retrieved context of a RAG judge's item is a column of its own.
        context: item
            .fields
            .get("context")
            .filter(|c| !c.is_empty())
            .cloned(),
        fields: item.fields.clone(),
    }
}

/// The indices of `k` of `n` items, chosen with a seeded shuffle, in order.
fn subset(n: usize, k: usize, seed: u64) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    let mut rng = SplitMix64::new(seed ^ 0x5eed_c0de);
    for i in (1..n).rev() {
        idx.swap(i, rng.below(i + 1));
    }
    let mut chosen: Vec<usize> = idx.into_iter().take(k).collect();
    chosen.sort_unstable();
    chosen
}

/// Asks the judge about every labelled item and measures its agreement with the labels.
pub async fn calibrate(judge: &Judge, labels: &LabelSet, opts: &CalibrateOptions) -> Calibration {
    let subjects: Vec<Subject> = labels.items.iter().map(subject).collect();
    let again = subset(
        subjects.len(),
        opts.consistency.min(subjects.len()),
        opts.seed,
    );
    let mut futs: Vec<BoxFuture<'_, Assessment>> = subjects
        .iter()
        .map(|s| Box::pin(judge.assess(s, 0)) as BoxFuture<'_, Assessment>)
        .collect();
    futs.extend(
        again
            .iter()
            .map(|&i| Box::pin(judge.assess(&subjects[i], 1)) as BoxFuture<'_, Assessment>),
    );
    let mut answers = bounded(futs, opts.concurrency).await;
    let seconds = answers.split_off(subjects.len());
    let mut second: BTreeMap<usize, Assessment> = again.into_iter().zip(seconds).collect();

    let mut items = Vec::with_capacity(answers.len());
    let mut models: BTreeMap<String, usize> = BTreeMap::new();
    let mut unreported = 0;
    let (mut calls, mut cached, mut usage) = (0, 0, Usage::default());
    let mut count = |spans: &[JudgeSpan]| {
        for s in spans {
            calls += 1;
            cached += usize::from(s.cached);
            usage.input_tokens += s.usage.input_tokens;
            usage.output_tokens += s.usage.output_tokens;
        }
    };
    for (i, (item, a)) in labels.items.iter().zip(answers).enumerate() {
        count(&a.calls);
        let again = second.remove(&i).map(|b| {
            count(&b.calls);
            b.outcome.map(|j| j.category)
        });
        let model = a.outcome.as_ref().ok().and_then(|j| j.reported.clone());
        match &model {
            Some(m) => *models.entry(m.clone()).or_default() += 1,
            None => unreported += usize::from(a.outcome.is_ok()),
        }
        items.push(ItemOutcome {
            line: item.line,
            case_id: item.case_id.clone(),
            human: item.label,
            judge: a.outcome.map(|j| j.category),
            again,
            swap_stable: a.swap_stable,
            model,
        });
    }
    let pairs: Vec<(usize, usize)> = items
        .iter()
        .filter_map(|it| it.judge.as_ref().ok().map(|j| (*j, it.human)))
        .collect();
    let errors = items.len() - pairs.len();
    let mut metrics = CalibrationMetrics::compute(
        &pairs,
        judge.def.scale(),
        judge.def.pass_score(),
        errors,
        opts.seed,
    );
    let twice: Vec<bool> = items
        .iter()
        .filter_map(|it| match (&it.judge, &it.again) {
            (Ok(a), Some(Ok(b))) => Some(a == b),
            _ => None,
        })
        .collect();
    if items.iter().any(|it| it.again.is_some()) {
        metrics.self_consistency = Some(Agreement::of(
            twice.iter().filter(|a| **a).count(),
            twice.len(),
        ));
    }
    let swaps: Vec<bool> = items.iter().filter_map(|it| it.swap_stable).collect();
    if judge.def.form() == gauntlet_core::judges::JudgeForm::Pairwise {
        metrics.order_swap = Some(Agreement::of(
            swaps.iter().filter(|s| **s).count(),
            swaps.len(),
        ));
    }
    let reported = models
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
        .map(|(m, _)| m.clone());
    let model = reported
        .clone()
        .or_else(|| judge.identity().map(|w| w.configured_model))
        .unwrap_or_default();
    Calibration {
        items,
        metrics,
        model,
        reported,
        models,
        unreported,
        calls,
        cached,
        usage,
    }
}

/// What a record says beyond the calibration itself.
#[derive(Debug, Clone)]
pub struct RecordFacts<'a> {
    /// The suite's name.
    pub suite: &'a str,
    /// When (RFC 3339).
    pub created: String,
    /// gauntlet's version.
    pub gauntlet_version: &'a str,
    /// The label file's name.
    pub labels_file: &'a str,
    /// SHA-256 of its bytes.
    pub labels_sha256: String,
    /// The suite's threshold on kappa's lower bound.
    pub min_kappa: f64,
    /// The suite's minimum of answered items.
    pub min_labels: usize,
}

/// The calibration record of a finished calibration.
pub fn record(
    judge: &Judge,
    cal: &Calibration,
    labels: &LabelSet,
    facts: &RecordFacts<'_>,
) -> CalibrationRecord {
    let who = judge.identity().unwrap_or_default();
    let mut rec = CalibrationRecord {
        format: CALIBRATION_FORMAT,
        check: judge.check.clone(),
        suite: facts.suite.to_owned(),
        created: facts.created.clone(),
        gauntlet_version: facts.gauntlet_version.to_owned(),
        judge: RecordedJudge {
            endpoint: who.endpoint,
            configured_model: who.configured_model,
            model: cal.model.clone(),
            params: who.params,
            settings: who.settings,
            pinned_model: who.pinned_model,
            reported_model: cal.reported.clone(),
            template: judge.template.label(),
            template_sha256: judge.template.sha256.clone(),
            rubric_sha256: judge.rubric_sha256.clone(),
            form: judge.def.form(),
            scale: judge.def.scale(),
        },
        labels: RecordedLabels {
            file: facts.labels_file.to_owned(),
            sha256: facts.labels_sha256.clone(),
            rows: labels.rows,
            used: labels.items.len(),
            other_checks: labels.other_checks,
            unlabelled: labels.unlabelled.len(),
            duplicates: labels.duplicates.len(),
            conflicts: labels.conflicts.len(),
        },
        metrics: cal.metrics.clone(),
        gate: RecordedGate {
            min_kappa: facts.min_kappa,
            min_labels: facts.min_labels,
            passed: false,
            reason: None,
        },
    };
    // The record's own standing: a weak binding does not pass, whatever the figures.
    let verdict = standing(&rec, facts.min_kappa, facts.min_labels);
    rec.gate.passed = verdict.is_ok();
    rec.gate.reason = verdict.err().map(|t| t.to_string());
    rec
}
