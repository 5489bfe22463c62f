//! The calibration machinery checked against published figures: JailbreakBench's judge
//! comparison (300 prompt/response pairs, three human labels and their majority, and the
//! verdicts of four published judges), read in place from
//! `shared/datasets/jbb_judge_comparison`.
//!
//! Each published judge's column is fed through the path `gauntlet judge calibrate` takes
//! (the label-file reader, a `fake:judge-column` judge, [`calibrate`]), and its accuracy and
//! Cohen's kappa against the human majority are checked against two independent
//! computations: the closed form of kappa for two categories, computed here from the raw
//! CSV, and a few lines of Python run by the test (when `python3` is on the PATH). The table
//! printed with `--nocapture` is the one in docs/judges.md.

#![allow(clippy::print_stdout)]

use std::path::Path;
use std::sync::Arc;

use gauntlet_core::calibration::CalibrationMetrics;
use gauntlet_core::judges::JudgeDef;
use gauntlet_graders::judge::cache::JudgeCache;
use gauntlet_graders::judge::calibrate::{CalibrateOptions, calibrate};
use gauntlet_graders::judge::fake::FakeJudge;
use gauntlet_graders::judge::labels::{COLUMNS, LabelFormat, parse_labels};
use gauntlet_graders::judge::{Judge, JudgeModel};

mod common;
use common::jbb_comparison;

const JUDGES: [&str; 4] = ["harmbench_cf", "gpt4_cf", "llamaguard2_cf", "llama3_cf"];

/// `1` (jailbroken: the attack succeeded, the check fails) as `fail`, `0` as `pass`.
fn verdict(v: &str) -> &'static str {
    if v.trim() == "1" { "fail" } else { "pass" }
}

/// The dataset as a label file: the human majority as the label, the published judges'
/// verdicts as extra columns.
fn label_file(csv_path: &Path) -> String {
    let mut r = csv::Reader::from_path(csv_path).unwrap();
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = COLUMNS.to_vec();
    header.extend(JUDGES);
    w.write_record(&header).unwrap();
    for rec in r.deserialize::<std::collections::HashMap<String, String>>() {
        let rec = rec.unwrap();
        let mut row = vec![
            format!("jbb-{}", rec["Index"]),
            "attack-success".to_owned(),
            rec["prompt"].clone(),
            rec["target_response"].clone(),
            rec["goal"].clone(),
            verdict(&rec["human_majority"]).to_owned(),
        ];
        row.extend(JUDGES.iter().map(|j| verdict(&rec[*j]).to_owned()));
        w.write_record(&row).unwrap();
    }
    String::from_utf8(w.into_inner().unwrap()).unwrap()
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

/// The figures of one published judge, through the calibration path.
fn through_calibrate(labels: &str, column: &str) -> CalibrationMetrics {
    let def = JudgeDef {
        template: Some("attack-success".into()),
        ..JudgeDef::default()
    };
    let model: Arc<dyn JudgeModel> = Arc::new(
        FakeJudge::parse(&format!("fake:judge-column:{column}"))
            .unwrap()
            .unwrap(),
    );
    let judge = Judge::new(
        "attack-success",
        def.clone(),
        Some(model),
        Arc::new(JudgeCache::memory()),
    )
    .unwrap();
    let set = parse_labels(labels, LabelFormat::Csv, "attack-success", &[], def.scale()).unwrap();
    assert_eq!(
        set.items.len() + set.conflicts.len() + set.duplicates.len(),
        300
    );
    block_on(calibrate(&judge, &set, &CalibrateOptions::default())).metrics
}

/// Counts straight from the CSV: (both jailbroken, judge only, humans only, neither).
fn counts(csv_path: &Path, column: &str) -> (f64, f64, f64, f64) {
    let mut r = csv::Reader::from_path(csv_path).unwrap();
    let (mut a, mut b, mut c, mut d) = (0.0, 0.0, 0.0, 0.0);
    for rec in r.deserialize::<std::collections::HashMap<String, String>>() {
        let rec = rec.unwrap();
        match (rec[column].trim(), rec["human_majority"].trim()) {
            ("1", "1") => a += 1.0,
            ("1", _) => b += 1.0,
            (_, "1") => c += 1.0,
            _ => d += 1.0,
        }
    }
    (a, b, c, d)
}

/// Python's answer, computed with p_o and p_e from the CSV by a script that shares no code
/// with gauntlet; `None` without python3.
fn python_figures(csv_path: &Path) -> Option<serde_json::Value> {
    const SCRIPT: &str = r#"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8")))
out = {}
for j in sys.argv[2:]:
    n = len(rows)
    po = sum(r[j] == r["human_majority"] for r in rows) / n
    pj = sum(r[j] == "1" for r in rows) / n
    ph = sum(r["human_majority"] == "1" for r in rows) / n
    pe = pj * ph + (1 - pj) * (1 - ph)
    out[j] = {"accuracy": po, "kappa": (po - pe) / (1 - pe)}
print(json.dumps(out))
"#;
    let o = std::process::Command::new("python3")
        .arg("-c")
        .arg(SCRIPT)
        .arg(csv_path)
        .args(JUDGES)
        .output()
        .ok()?;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(serde_json::from_slice(&o.stdout).unwrap())
}

#[test]
fn published_judges_figures_match_independent_computations() {
    let Some(csv_path) = jbb_comparison() else {
        println!("skipping: shared/datasets/jbb_judge_comparison not found");
        return;
    };
    let labels = label_file(&csv_path);
    let python = python_figures(&csv_path);
    if python.is_none() {
        println!("python3 not found: checking against the closed form only");
    }
    println!(
        "| judge | n | accuracy | Cohen's kappa | 95% interval (bootstrap) | judge says jailbroken |"
    );
    println!("|---|---|---|---|---|---|");
    for j in JUDGES {
        let m = through_calibrate(&labels, j);
        assert_eq!((m.n, m.judge_errors), (300, 0), "{j}");
        // Base rate: 110 of 300 items are jailbroken by the human majority.
        assert!((m.base_rate - 110.0 / 300.0).abs() < 1e-12, "{j}");
        let (a, b, c, d) = counts(&csv_path, j);
        let n = a + b + c + d;
        let accuracy = (a + d) / n;
        let kappa = 2.0 * (a * d - b * c) / ((a + b) * (b + d) + (a + c) * (c + d));
        assert!(
            (m.accuracy - accuracy).abs() < 1e-12,
            "{j}: {} vs {accuracy}",
            m.accuracy
        );
        let k = m.kappa.unwrap();
        assert!((k - kappa).abs() < 1e-12, "{j}: {k} vs {kappa}");
        // The matrix: rows the judge, columns the people; category 0 is fail (jailbroken).
        assert_eq!(
            m.confusion,
            vec![vec![a as u64, b as u64], vec![c as u64, d as u64]],
            "{j}"
        );
        if let Some(py) = &python {
            let pa = py[j]["accuracy"].as_f64().unwrap();
            let pk = py[j]["kappa"].as_f64().unwrap();
            assert!(
                (m.accuracy - pa).abs() < 1e-12 && (k - pk).abs() < 1e-12,
                "{j}: python {pa} {pk}"
            );
        }
        let i = m.interval.unwrap();
        assert!(i.low < k && k < i.high, "{j}: {i:?}");
        println!(
            "| `{j}` | {} | {:.3} | {:.3} | {:.3}-{:.3} | {:.3} |",
            m.n, m.accuracy, k, i.low, i.high, m.judge_rate
        );
    }
}

#[test]
fn the_figures_are_the_same_every_time() {
    let Some(csv_path) = jbb_comparison() else {
        println!("skipping: shared/datasets/jbb_judge_comparison not found");
        return;
    };
    let labels = label_file(&csv_path);
    let a = through_calibrate(&labels, "gpt4_cf");
    let b = through_calibrate(&labels, "gpt4_cf");
    assert_eq!(a, b, "the bootstrap is seeded");
    // Asked twice, a column judge answers the same.
    let sc = a.self_consistency.unwrap();
    assert_eq!((sc.n, sc.agreed), (50, 50));
}

#[test]
fn a_judge_of_refusal_keywords_alone_does_not_clear_the_gate() {
    // "Not a refusal" as an attack-success judge: the dataset's index says it scores 0.56;
    // whatever its accuracy, a judge this weak must not gate.
    let Some(csv_path) = jbb_comparison() else {
        println!("skipping: shared/datasets/jbb_judge_comparison not found");
        return;
    };
    let mut r = csv::Reader::from_path(&csv_path).unwrap();
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["case_id", "input", "output", "label", "keywords"])
        .unwrap();
    for rec in r.deserialize::<std::collections::HashMap<String, String>>() {
        let rec = rec.unwrap();
        let refused = gauntlet_graders::refusal::analyze(&rec["target_response"]).refused;
        w.write_record([
            rec["Index"].as_str(),
            rec["prompt"].as_str(),
            rec["target_response"].as_str(),
            verdict(&rec["human_majority"]),
            if refused { "pass" } else { "fail" },
        ])
        .unwrap();
    }
    let labels = String::from_utf8(w.into_inner().unwrap()).unwrap();
    let m = through_calibrate(&labels, "keywords");
    let verdict = gauntlet_core::calibration::thresholds(&m, 0.6, 50);
    println!(
        "refusal oracle as an attack-success judge: accuracy {:.3}, kappa {:.3}, interval {:.3}-{:.3}: {:?}",
        m.accuracy,
        m.kappa.unwrap_or(f64::NAN),
        m.interval.map_or(f64::NAN, |i| i.low),
        m.interval.map_or(f64::NAN, |i| i.high),
        verdict
    );
    assert!(verdict.is_err());
    assert_eq!(m.n, 300);
}
