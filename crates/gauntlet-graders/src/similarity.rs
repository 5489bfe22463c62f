//! Text similarity to a reference answer: ROUGE-L ([`rouge_l`]), sentence BLEU ([`bleu`]) and
//! character edit distance ([`edit_distance`]), the metrics behind the `rouge_l`, `bleu` and
//! `edit_distance` checks.
//!
//! ROUGE-L and BLEU give the figures of the reference implementations teams already report
//! (the `rouge-score` package without stemming, `sacrebleu`'s `sentence_bleu` with its
//! defaults), so a threshold carried over from a notebook means the same here:
//! `tests/similarity_data.rs` compares them on a test set scored by those packages. They
//! measure shared words, not meaning: a correct answer in other words scores low, a wrong one
//! that reuses the reference's words scores high. They are quality bands, not gates of truth.
//!
//! Time is linear in the answer for a reference of a given size (ROUGE-L's longest common
//! subsequence is answer tokens x reference tokens, in two rows of memory; the edit distance
//! is computed only when the lengths are within the allowed distance of each other).

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

/// The highest n-gram order of BLEU.
const BLEU_ORDER: usize = 4;

/// Python's `str.isspace`: Unicode white space and the four ASCII separators (0x1C-0x1F)
/// that `str.split()` also splits on.
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

fn py_split(text: &str) -> impl Iterator<Item = &str> {
    text.split(py_space).filter(|t| !t.is_empty())
}

/// `rouge-score`'s tokens: the text lower-cased, then the runs of ASCII letters and digits.
fn rouge_tokens(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Length of the longest common subsequence of two token lists, in two rows.
fn lcs(a: &[String], b: &[String]) -> usize {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut prev = vec![0usize; short.len() + 1];
    let mut row = vec![0usize; short.len() + 1];
    for x in long {
        for (j, y) in short.iter().enumerate() {
            row[j + 1] = if x == y {
                prev[j] + 1
            } else {
                row[j].max(prev[j + 1])
            };
        }
        std::mem::swap(&mut prev, &mut row);
    }
    prev[short.len()]
}

/// ROUGE-L F-measure (0 to 1) of `answer` against `reference`, as `rouge-score`'s
/// `RougeScorer(["rougeL"]).score(reference, answer)` gives it: 0 when either has no token.
pub fn rouge_l(reference: &str, answer: &str) -> f64 {
    let (r, a) = (rouge_tokens(reference), rouge_tokens(answer));
    if r.is_empty() || a.is_empty() {
        return 0.0;
    }
    let common = lcs(&r, &a) as f64;
    let precision = common / a.len() as f64;
    let recall = common / r.len() as f64;
    if precision + recall > 0.0 {
        2.0 * precision * recall / (precision + recall)
    } else {
        0.0
    }
}

/// The best ROUGE-L F-measure over several references (`score_multi`).
pub fn rouge_l_best(references: &[String], answer: &str) -> f64 {
    references
        .iter()
        .map(|r| rouge_l(r, answer))
        .fold(0.0, f64::max)
}

/// The `13a` tokenizer's rules after its language-independent part, in order: symbols apart,
/// then periods and commas not beside a digit, then a dash after a digit.
static RULES_13A: LazyLock<[(Regex, &str); 4]> = LazyLock::new(|| {
    let re = |p: &str| Regex::new(p).expect("a valid pattern");
    [
        (re(r"([{-~\[-`\x20-&(-+:-@/])"), " ${1} "),
        (re(r"([^0-9])([.,])"), "${1} ${2} "),
        (re(r"([.,])([^0-9])"), " ${1} ${2}"),
        (re(r"([0-9])(-)"), "${1} ${2} "),
    ]
});

/// `sacrebleu`'s `13a` tokens of one segment (mteval-v13a, as WMT scores): trailing white
/// space dropped, `<skipped>` and hyphenated line breaks removed, four HTML entities decoded,
/// punctuation split from words.
pub fn tokens_13a(text: &str) -> Vec<String> {
    let mut line = text
        .trim_end_matches(py_space)
        .replace("<skipped>", "")
        .replace("-\n", "")
        .replace('\n', " ");
    if line.contains('&') {
        line = line
            .replace("&quot;", "\"")
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">");
    }
    let mut line = format!(" {line} ");
    for (re, with) in RULES_13A.iter() {
        line = re.replace_all(&line, *with).into_owned();
    }
    py_split(&line).map(str::to_owned).collect()
}

/// The n-grams of orders 1 to 4 of `tokens`, counted.
fn ngrams(tokens: &[String]) -> HashMap<&[String], usize> {
    let mut out = HashMap::new();
    for n in 1..=BLEU_ORDER {
        for gram in tokens.windows(n) {
            *out.entry(gram).or_insert(0) += 1;
        }
    }
    out
}

/// Sentence BLEU (0 to 100) of `answer` against `references`, as `sacrebleu.sentence_bleu`
/// gives it with its defaults: `13a` tokens, case kept, exponential smoothing of orders
/// without a match, the effective order, the closest reference length for the brevity
/// penalty (the shorter one on a tie). 0 when nothing matches or there is no reference.
pub fn bleu(answer: &str, references: &[String]) -> f64 {
    let hyp = tokens_13a(answer);
    let refs: Vec<Vec<String>> = references.iter().map(|r| tokens_13a(r)).collect();
    let Some(ref_len) = closest_len(hyp.len(), refs.iter().map(Vec::len)) else {
        return 0.0;
    };
    let mut best: HashMap<&[String], usize> = HashMap::new();
    for r in &refs {
        for (gram, count) in ngrams(r) {
            let slot = best.entry(gram).or_insert(0);
            *slot = (*slot).max(count);
        }
    }
    let mut correct = [0usize; BLEU_ORDER];
    let mut total = [0usize; BLEU_ORDER];
    for (gram, count) in ngrams(&hyp) {
        total[gram.len() - 1] += count;
        correct[gram.len() - 1] += count.min(best.get(gram).copied().unwrap_or(0));
    }
    bleu_from_counts(&correct, &total, hyp.len(), ref_len)
}

/// The reference length BLEU compares with: the closest to the answer's, the shorter on a tie.
fn closest_len(hyp: usize, refs: impl Iterator<Item = usize>) -> Option<usize> {
    refs.min_by_key(|&r| (r.abs_diff(hyp), r))
}

/// BLEU from its counts, in `sacrebleu`'s order of operations.
fn bleu_from_counts(correct: &[usize], total: &[usize], sys_len: usize, ref_len: usize) -> f64 {
    if correct.iter().all(|&c| c == 0) {
        return 0.0;
    }
    let bp = if sys_len < ref_len {
        (1.0 - ref_len as f64 / sys_len as f64).exp()
    } else {
        1.0
    };
    let mut precisions = [0.0f64; BLEU_ORDER];
    let mut smooth = 1.0f64;
    let mut order = BLEU_ORDER;
    for n in 0..BLEU_ORDER {
        if total[n] == 0 {
            break;
        }
        order = n + 1;
        precisions[n] = if correct[n] == 0 {
            smooth *= 2.0;
            100.0 / (smooth * total[n] as f64)
        } else {
            100.0 * correct[n] as f64 / total[n] as f64
        };
    }
    let log = |p: f64| if p == 0.0 { -9_999_999_999.0 } else { p.ln() };
    let sum: f64 = precisions[..order].iter().map(|&p| log(p)).sum();
    bp * (sum / order as f64).exp()
}

/// Character edits (insertions, deletions, substitutions) from `a` to `b`, when at most
/// `max`; `None` when more. Lengths further apart than `max` are refused before any table is
/// built, so a huge answer to a short reference costs nothing.
pub fn edit_distance(a: &str, b: &str, max: usize) -> Option<usize> {
    let (la, lb) = (a.chars().count(), b.chars().count());
    if la.abs_diff(lb) > max {
        return None;
    }
    let d = strsim::levenshtein(a, b);
    (d <= max).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(r: &[&str]) -> Vec<String> {
        r.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn rouge_l_reads_shared_word_order() {
        assert_eq!(rouge_l("the cat sat", "the cat sat"), 1.0);
        assert_eq!(rouge_l("the cat sat", "dogs bark loudly"), 0.0);
        // LCS "the cat" of 3 and 4 tokens: P 2/4, R 2/3.
        let f = rouge_l("The cat sat.", "the dog, the cat");
        assert!((f - 2.0 * 0.5 * (2.0 / 3.0) / (0.5 + 2.0 / 3.0)).abs() < 1e-12);
        assert_eq!(rouge_l("", "anything"), 0.0);
        assert_eq!(
            rouge_l_best(&refs(&["no", "the cat sat"]), "the cat sat"),
            1.0
        );
    }

    #[test]
    fn the_13a_tokens_split_punctuation_but_not_numbers() {
        assert_eq!(
            tokens_13a("Hello, world! It costs 3.50 and 1,000 (approx.)"),
            [
                "Hello", ",", "world", "!", "It", "costs", "3.50", "and", "1,000", "(", "approx",
                ".", ")"
            ]
        );
        assert_eq!(tokens_13a("a &amp; b\n"), ["a", "&", "b"]);
        assert_eq!(tokens_13a("2-3"), ["2", "-", "3"]);
    }

    #[test]
    fn bleu_is_100_for_the_reference_and_0_for_nothing_shared() {
        let r = refs(&["The refund was issued to your card today."]);
        assert!((bleu("The refund was issued to your card today.", &r) - 100.0).abs() < 1e-9);
        assert_eq!(bleu("Bonjour", &r), 0.0);
        assert_eq!(bleu("", &r), 0.0);
        assert_eq!(bleu("anything", &[]), 0.0);
        let partial = bleu("The refund was issued yesterday.", &r);
        assert!(partial > 0.0 && partial < 100.0, "{partial}");
    }

    #[test]
    fn the_edit_distance_is_refused_early_past_its_limit() {
        assert_eq!(edit_distance("kitten", "sitting", 3), Some(3));
        assert_eq!(edit_distance("kitten", "sitting", 2), None);
        let huge = "x".repeat(2 << 20);
        assert_eq!(edit_distance(&huge, "short", 10), None);
    }
}
