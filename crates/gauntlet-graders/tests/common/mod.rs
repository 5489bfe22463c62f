//! What the measurements of the detectors share ([`Confusion`]): the counts of a detector
//! against human labels, the figures read from them, the table line they print under
//! [`HEADER`], and [`show_errors`], the switch that lists the misclassified rows of a split;
//! the labelled sets in `tests/data` ([`rows`], [`s`]) and their halves ([`split_of`]), and
//! JailbreakBench's judge comparison where it is on the machine ([`jbb_comparison`]); a
//! judge's calibration labels in `tests/data`, read as the calibration reads them
//! ([`label_set`]).

// Each measurement reads the figures it reports, not all of them.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

/// A detector's calls against the labels: true and false positives, true and false
/// negatives.
#[derive(Default, Clone, Copy)]
pub struct Confusion {
    pub tp: u32,
    pub fp: u32,
    pub tn: u32,
    pub fn_: u32,
}

impl Confusion {
    /// Counts one row: what the labels say (`truth`) and what the detector said.
    pub fn add(&mut self, truth: bool, predicted: bool) {
        match (truth, predicted) {
            (true, true) => self.tp += 1,
            (false, true) => self.fp += 1,
            (false, false) => self.tn += 1,
            (true, false) => self.fn_ += 1,
        }
    }

    /// Rows counted.
    pub fn n(&self) -> u32 {
        self.tp + self.fp + self.tn + self.fn_
    }

    /// `a / b`, and 1 when there is nothing to divide by: no call made, none wrong (a
    /// precision floor holds on a slice where the detector says nothing).
    fn ratio(a: u32, b: u32) -> f64 {
        if b == 0 {
            1.0
        } else {
            f64::from(a) / f64::from(b)
        }
    }

    pub fn accuracy(&self) -> f64 {
        Self::ratio(self.tp + self.tn, self.n())
    }

    pub fn precision(&self) -> f64 {
        Self::ratio(self.tp, self.tp + self.fp)
    }

    pub fn recall(&self) -> f64 {
        Self::ratio(self.tp, self.tp + self.fn_)
    }

    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }

    /// Cohen's kappa of the detector against the people: agreement beyond chance.
    pub fn kappa(&self) -> f64 {
        let n = f64::from(self.n());
        let po = self.accuracy();
        let said = f64::from(self.tp + self.fp) / n;
        let truth = f64::from(self.tp + self.fn_) / n;
        let pe = said * truth + (1.0 - said) * (1.0 - truth);
        (po - pe) / (1.0 - pe)
    }

    /// The slice's line of the table under [`HEADER`].
    pub fn line(&self, name: &str) -> String {
        format!(
            "{name:<28} {:>5} {:>8.3} {:>9.3} {:>7.3} {:>6.3} {:>5} {:>4} {:>4} {:>4}",
            self.n(),
            self.accuracy(),
            self.precision(),
            self.recall(),
            self.kappa(),
            self.tp,
            self.fp,
            self.tn,
            self.fn_
        )
    }
}

/// The head of the table of [`Confusion::line`]s.
pub const HEADER: &str =
    "slice                            n accuracy precision  recall  kappa    TP   FP   TN   FN";

/// Whether `GAUNTLET_ORACLE_ERRORS` asks for the misclassified rows of `split` (or `all`).
pub fn show_errors(split: &str) -> bool {
    std::env::var("GAUNTLET_ORACLE_ERRORS").is_ok_and(|v| v == split || v == "all")
}

const SPLIT_SALT: &str = "gauntlet-oracle-split-v1:";

/// A file of `tests/data`.
pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// The half (`dev` or `heldout`) of a labelled row: a function of the id alone
/// (bench/oracle_data.py uses the same rule).
pub fn split_of(id: &str) -> &'static str {
    let digest = Sha256::digest(format!("{SPLIT_SALT}{id}").as_bytes());
    if digest[0] % 2 == 0 { "dev" } else { "heldout" }
}

/// The rows of a JSON-lines file of `tests/data`.
pub fn rows(name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(data(name)).expect("the labelled set is in the repository");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

/// A row's text field `k`, or empty.
pub fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v[k].as_str().unwrap_or("")
}

/// JailbreakBench's judge comparison (`GAUNTLET_DATASETS`, else a `shared/datasets` above the
/// crate), or `None`: the test then skips and says so.
pub fn jbb_comparison() -> Option<PathBuf> {
    let rel = "jbb_judge_comparison/judge-comparison.csv";
    if let Some(dir) = std::env::var_os("GAUNTLET_DATASETS") {
        let p = Path::new(&dir).join(rel);
        return p.exists().then_some(p);
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared/datasets").join(rel))
        .find(|p| p.exists())
}

/// A binary judge's calibration labels in `tests/data` (`name`, JSON lines), read for check
/// `check` as `gauntlet judge calibrate` reads them, with no conflicting or unlabelled item.
pub fn label_set(name: &str, check: &str) -> gauntlet_graders::judge::labels::LabelSet {
    use gauntlet_core::judges::JudgeScale;
    use gauntlet_graders::judge::labels::{LabelFormat, parse_labels};
    let text = std::fs::read_to_string(data(name)).expect("the label set is in the repository");
    let set = parse_labels(&text, LabelFormat::Jsonl, check, &[], JudgeScale::Binary)
        .expect("the labels parse");
    assert!(
        set.conflicts.is_empty() && set.unlabelled.is_empty(),
        "{name}"
    );
    set
}
