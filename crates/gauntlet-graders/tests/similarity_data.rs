//! ROUGE-L and BLEU against the reference implementations: every pair of
//! `tests/data/similarity.jsonl` was scored by the `rouge-score` package (ROUGE-L
//! F-measure, no stemming) and `sacrebleu.sentence_bleu` (its defaults), by
//! `bench/similarity_reference.py`; gauntlet's figures must agree to three decimals.

use gauntlet_graders::similarity::{bleu, rouge_l_best};
use serde_json::Value;

#[test]
fn rouge_l_and_bleu_agree_with_the_reference_packages_to_three_decimals() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/similarity.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let mut n = 0;
    let mut off = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let row: Value = serde_json::from_str(line).unwrap();
        let answer = row["answer"].as_str().unwrap();
        let refs: Vec<String> = row["references"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap().to_owned())
            .collect();
        let (want_rouge, want_bleu) = (
            row["rouge_l"].as_f64().unwrap(),
            row["bleu"].as_f64().unwrap(),
        );
        let (got_rouge, got_bleu) = (rouge_l_best(&refs, answer), bleu(answer, &refs));
        if (got_rouge - want_rouge).abs() >= 5e-4 {
            off.push(format!(
                "ROUGE-L {got_rouge} != {want_rouge}: {answer:?} / {refs:?}"
            ));
        }
        if (got_bleu - want_bleu).abs() >= 5e-4 {
            off.push(format!(
                "BLEU {got_bleu} != {want_bleu}: {answer:?} / {refs:?}"
            ));
        }
        n += 1;
    }
    assert!(n >= 100, "only {n} pairs");
    assert!(
        off.is_empty(),
        "{} of {n} pairs differ:\n{}",
        off.len(),
        off.join("\n")
    );
}
