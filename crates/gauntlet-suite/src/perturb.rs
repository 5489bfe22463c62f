//! Meaning-preserving perturbations for metamorphic stability: the registry
//! [`PERTURBATIONS`], [`perturb`] (one text) and [`variant`] (a case's perturbed twin, as
//! `gauntlet stability --metamorphic` runs it).
//!
//! Every rule here is a small pure function of the text and a seed (the converters'
//! [`Rng`]), so the same `--seed` sends byte-for-byte the same variants, and each keeps what
//! the text asks for: `reorder` shuffles whole sentences (or whole lines of a list of
//! constraints), `noise` adds one sentence that asks for nothing, `noise:typo` swaps two
//! adjacent letters inside one long lower-case word (never an id, a number or an acronym),
//! `format` turns prose into bullet lines or lines into prose, `format:whitespace` adds
//! spaces and blank lines. `paraphrase` needs a model: the variant carries the `paraphrase`
//! converter first in its chain and the trial applies it with the rewriter (`--rewriter`),
//! which records every call in the trace.
//!
//! A rule that cannot change a text (`reorder` on one sentence) is an error, not a silent
//! copy of the base: an unchanged "variant" would report stability that was never tested.

use gauntlet_core::suite::{Case, Relation};

use crate::converters::Rng;

/// Every perturbation: name and what it does.
pub const PERTURBATIONS: &[(&str, &str)] = &[
    (
        "reorder",
        "shuffles the sentences (or the lines of a multi-line input), seeded; never the identity",
    ),
    (
        "noise",
        "adds one irrelevant filler sentence (or line) at a seeded position",
    ),
    (
        "noise:typo",
        "swaps two adjacent interior letters of one lower-case word of five letters or more",
    ),
    (
        "format",
        "prose becomes one bullet line per sentence; a multi-line input becomes one paragraph",
    ),
    (
        "format:whitespace",
        "doubles some spaces between words and adds blank lines around the text",
    ),
    (
        "paraphrase",
        "reworded by the rewriter model (--rewriter) while the trial runs; every call recorded",
    ),
];

/// Filler sentences that ask for nothing and say nothing about the request.
const FILLERS: &[&str] = &[
    "I hope you are having a good day.",
    "Thanks in advance for your help.",
    "I am writing this from my phone.",
    "This is my first time contacting you.",
    "I have a few minutes before my next meeting.",
];

/// What a perturbation produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Perturbed {
    /// The text to send instead.
    Text(String),
    /// A model step: the trial rewrites the text with the rewriter.
    Model,
}

/// Checks a perturbation name; the error suggests the closest one.
pub fn check(name: &str) -> Result<(), String> {
    if PERTURBATIONS.iter().any(|(n, _)| *n == name) {
        return Ok(());
    }
    let hint = crate::diag::did_you_mean(name, PERTURBATIONS.iter().map(|(n, _)| *n))
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default();
    Err(format!("unknown perturbation `{name}`{hint}"))
}

/// How a text splits into units that can move without changing what it asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// Two or more non-empty lines: each line is a unit (a list of constraints).
    Lines,
    /// One paragraph: each sentence is a unit.
    Sentences,
}

/// Sentence ends: `.`, `!` or `?` followed by white space and then a capital letter, a
/// digit or a quote, so that "e.g. the" and "3.5 days" stay whole.
fn sentences(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        cur.push(c);
        if matches!(c, '.' | '!' | '?') && i + 1 < chars.len() && chars[i + 1].is_whitespace() {
            let mut j = i + 1;
            while j < chars.len() && chars[j].is_whitespace() {
                j += 1;
            }
            if j < chars.len()
                && (chars[j].is_uppercase() || chars[j].is_ascii_digit() || chars[j] == '"')
            {
                out.push(cur.trim().to_string());
                cur.clear();
                i = j;
                continue;
            }
        }
        i += 1;
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

fn units(text: &str) -> (Layout, Vec<String>) {
    let lines: Vec<String> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    if lines.len() >= 2 {
        (Layout::Lines, lines)
    } else {
        (Layout::Sentences, sentences(text))
    }
}

fn join(layout: Layout, units: &[String]) -> String {
    match layout {
        Layout::Lines => units.join("\n"),
        Layout::Sentences => units.join(" "),
    }
}

fn reorder(text: &str, rng: &mut Rng) -> Result<String, String> {
    let (layout, mut u) = units(text);
    let original = u.clone();
    let mut distinct = u.clone();
    distinct.sort();
    distinct.dedup();
    if distinct.len() < 2 {
        return Err(
            "`reorder` needs at least two different sentences or lines, and this input has one"
                .into(),
        );
    }
    rng.shuffle(&mut u);
    if u == original {
        u.rotate_left(1);
    }
    Ok(join(layout, &u))
}

fn noise(text: &str, rng: &mut Rng) -> String {
    let (layout, mut u) = units(text);
    let filler = FILLERS[rng.below(FILLERS.len())].to_string();
    let at = rng.below(u.len() + 1);
    u.insert(at, filler);
    join(layout, &u)
}

fn typo(text: &str, rng: &mut Rng) -> Result<String, String> {
    // (byte offset of the word, the word) for every plain lower-case word of 5+ letters
    // whose interior has two adjacent different letters.
    let mut words = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        if c.is_ascii_alphabetic() {
            start.get_or_insert(i);
        } else if let Some(s) = start.take() {
            let w = &text[s..i];
            // A word glued to a digit, a hyphen or an underscore is part of an id.
            let glued = |ch: Option<char>| {
                ch.is_some_and(|ch| ch.is_ascii_digit() || ch == '-' || ch == '_')
            };
            if w.len() >= 5
                && w.chars().all(|ch| ch.is_ascii_lowercase())
                && !glued(text[..s].chars().next_back())
                && !glued(Some(c))
            {
                words.push(s);
            }
        }
    }
    let mut spots = Vec::new();
    for s in words {
        let w: Vec<u8> = text[s..]
            .bytes()
            .take_while(u8::is_ascii_alphabetic)
            .collect();
        for j in 1..w.len() - 2 {
            if w[j] != w[j + 1] {
                spots.push(s + j);
            }
        }
    }
    if spots.is_empty() {
        return Err(
            "`noise:typo` needs a lower-case word of five letters or more, and this input has none"
                .into(),
        );
    }
    let at = spots[rng.below(spots.len())];
    let mut b = text.as_bytes().to_vec();
    b.swap(at, at + 1);
    Ok(String::from_utf8(b).expect("ASCII letters swapped"))
}

/// Strips a list marker (`- `, `* `, `1. `, `1) `) from a line.
fn unmark(line: &str) -> &str {
    let t = line.trim_start();
    if let Some(r) = t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")) {
        return r.trim_start();
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0
        && let Some(r) = t[digits..]
            .strip_prefix(". ")
            .or_else(|| t[digits..].strip_prefix(") "))
    {
        return r.trim_start();
    }
    t
}

fn format(text: &str) -> String {
    match units(text) {
        (Layout::Lines, lines) => lines
            .iter()
            .map(|l| {
                let l = unmark(l).trim_end();
                if l.ends_with(['.', '!', '?', ':', ';']) {
                    l.to_string()
                } else {
                    format!("{l}.")
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
        (Layout::Sentences, s) => s
            .iter()
            .map(|x| format!("- {x}"))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

fn whitespace(text: &str, rng: &mut Rng) -> String {
    let gaps: Vec<usize> = text
        .char_indices()
        .filter(|(_, c)| *c == ' ')
        .map(|(i, _)| i)
        .collect();
    let mut doubled: Vec<usize> = gaps.iter().copied().filter(|_| rng.chance(1, 3)).collect();
    if doubled.is_empty()
        && let Some(g) = gaps.get(rng.below(gaps.len().max(1)))
    {
        doubled.push(*g);
    }
    let mut out = String::from("\n");
    for (i, c) in text.char_indices() {
        out.push(c);
        if doubled.contains(&i) {
            out.push(' ');
        }
    }
    out.push_str("\n\n");
    out
}

/// Perturbs one text. An error names a perturbation that does not exist or cannot change
/// this text.
pub fn perturb(name: &str, text: &str, seed: u64) -> Result<Perturbed, String> {
    check(name)?;
    let mut rng = Rng::new(seed);
    let out = match name {
        "reorder" => reorder(text, &mut rng)?,
        "noise" => noise(text, &mut rng),
        "noise:typo" => typo(text, &mut rng)?,
        "format" => format(text),
        "format:whitespace" => whitespace(text, &mut rng),
        "paraphrase" => return Ok(Perturbed::Model),
        _ => unreachable!("checked above"),
    };
    if out == text {
        return Err(format!("`{name}` leaves this input unchanged"));
    }
    Ok(Perturbed::Text(out))
}

/// The id of a case's variant for a perturbation.
pub fn variant_id(case_id: &str, perturb: &str) -> String {
    format!("{case_id}~{perturb}")
}

/// The seed of one perturbed turn: the run seed, the variant's id and the turn.
fn seed_of(run_seed: u64, id: &str, turn: usize) -> u64 {
    crate::converters::turn_seed(run_seed, id, turn, 0)
}

/// A case's perturbed twin: id `CASE~PERTURB`, its input (and every scripted user turn)
/// perturbed, no relations of its own (never expanded again). For `paraphrase` the text is left as written and the
/// `paraphrase` converter goes first in the case's chain, so the trial rewrites it (with the
/// case's own converters after it). An error when the perturbation cannot change any of the
/// case's user text.
pub fn variant(case: &Case, relation: &Relation, run_seed: u64) -> Result<Case, String> {
    let mut v = case.clone();
    v.id = variant_id(&case.id, &relation.perturb);
    v.metamorphic = None;
    let name = relation.perturb.as_str();
    check(name)?;
    if name == "paraphrase" {
        v.converters.insert(0, "paraphrase".to_string());
        return Ok(v);
    }
    let mut changed = 0;
    let mut last_err = None;
    let mut apply = |text: &mut String, turn: usize| match perturb(
        name,
        text,
        seed_of(run_seed, &v.id, turn),
    ) {
        Ok(Perturbed::Text(t)) => {
            *text = t;
            changed += 1;
        }
        Ok(Perturbed::Model) => {}
        Err(e) => last_err = Some(e),
    };
    if let Some(input) = &mut v.input {
        apply(input, 0);
    }
    for (i, t) in v.turns.iter_mut().enumerate() {
        apply(&mut t.user, i);
    }
    if changed == 0 {
        return Err(last_err.unwrap_or_else(|| format!("`{name}` has no user text to perturb")));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(p: Perturbed) -> String {
        match p {
            Perturbed::Text(t) => t,
            Perturbed::Model => panic!("a model step"),
        }
    }

    fn sorted(mut v: Vec<String>) -> Vec<String> {
        v.sort();
        v
    }

    const PROSE: &str = "My card ending 4421 was stolen. Please freeze it now. Do not cancel my other card, e.g. the savings one.";
    const LINES: &str = "Write a reply to the customer.\n- Keep it under 80 words\n- Mention the 30-day window\n- Sign it as Acme Support";

    #[test]
    fn sentences_split_at_real_ends_only() {
        assert_eq!(
            sentences(PROSE),
            [
                "My card ending 4421 was stolen.",
                "Please freeze it now.",
                "Do not cancel my other card, e.g. the savings one."
            ]
        );
        assert_eq!(
            sentences("It costs 3.5 EUR. Fine?"),
            ["It costs 3.5 EUR.", "Fine?"]
        );
    }

    #[test]
    fn reorder_keeps_every_sentence_and_is_seeded() {
        for seed in 0..20 {
            let a = text(perturb("reorder", PROSE, seed).unwrap());
            assert_eq!(a, text(perturb("reorder", PROSE, seed).unwrap()));
            assert_ne!(a, PROSE, "seed {seed}: never the identity");
            assert_eq!(sorted(sentences(&a)), sorted(sentences(PROSE)));
            let l = text(perturb("reorder", LINES, seed).unwrap());
            assert_ne!(l, LINES);
            assert_eq!(
                sorted(l.lines().map(str::to_string).collect()),
                sorted(LINES.lines().map(str::to_string).collect())
            );
        }
        let e = perturb("reorder", "Freeze my card.", 1).unwrap_err();
        assert!(e.contains("at least two"), "{e}");
    }

    #[test]
    fn noise_adds_one_filler_and_keeps_the_rest_in_order() {
        let a = text(perturb("noise", PROSE, 3).unwrap());
        let mut s = sentences(&a);
        assert_eq!(s.len(), 4);
        let filler = s
            .iter()
            .position(|x| FILLERS.contains(&x.as_str()))
            .expect("a filler");
        s.remove(filler);
        assert_eq!(s, sentences(PROSE));
        assert_eq!(a, text(perturb("noise", PROSE, 3).unwrap()));
    }

    #[test]
    fn a_typo_swaps_two_letters_of_a_plain_word_only() {
        for seed in 0..20 {
            let a = text(perturb("noise:typo", PROSE, seed).unwrap());
            let diff: Vec<usize> = a
                .bytes()
                .zip(PROSE.bytes())
                .enumerate()
                .filter(|(_, (x, y))| x != y)
                .map(|(i, _)| i)
                .collect();
            assert_eq!(diff.len(), 2, "{a}");
            assert_eq!(diff[1], diff[0] + 1);
            // Ids and numbers are never touched.
            assert!(a.contains("4421"));
        }
        let e = perturb("noise:typo", "Freeze A-1001 now", 0).unwrap_err();
        assert!(e.contains("five letters"), "{e}");
        assert!(perturb("noise:typo", "Refund T-abcdef", 0).is_err());
    }

    #[test]
    fn format_turns_prose_into_bullets_and_lines_into_prose() {
        let b = text(perturb("format", PROSE, 0).unwrap());
        assert_eq!(b.lines().count(), 3);
        assert!(b.lines().all(|l| l.starts_with("- ")));
        // Back to prose: the same sentences.
        let p = text(perturb("format", &b, 0).unwrap());
        assert_eq!(p, PROSE);
        let l = text(perturb("format", LINES, 0).unwrap());
        assert_eq!(
            l,
            "Write a reply to the customer. Keep it under 80 words. Mention the 30-day window. Sign it as Acme Support."
        );
        let w = text(perturb("format:whitespace", PROSE, 5).unwrap());
        assert_eq!(
            w.split_whitespace().collect::<Vec<_>>(),
            PROSE.split_whitespace().collect::<Vec<_>>()
        );
        assert_ne!(w, PROSE);
    }

    #[test]
    fn paraphrase_is_a_model_step_and_unknown_names_are_refused() {
        assert_eq!(perturb("paraphrase", PROSE, 0).unwrap(), Perturbed::Model);
        let e = perturb("reoder", PROSE, 0).unwrap_err();
        assert!(e.contains("did you mean `reorder`"), "{e}");
    }

    #[test]
    fn a_variant_is_a_perturbed_twin() {
        let case: Case = serde_json::from_value(serde_json::json!({
            "id": "stolen", "input": PROSE, "converters": ["rot13"],
            "metamorphic": [{"perturb": "reorder"}, {"perturb": "paraphrase"}],
            "expect": [{"contains": "frozen"}]
        }))
        .unwrap();
        let rel = case.metamorphic.clone().unwrap();
        let v = variant(&case, &rel[0], 0).unwrap();
        assert_eq!(v.id, "stolen~reorder");
        assert!(v.metamorphic.is_none());
        assert_ne!(v.input, case.input);
        assert_eq!(v.expect, case.expect);
        assert_eq!(v.converters, ["rot13"]);
        assert_eq!(v, variant(&case, &rel[0], 0).unwrap());
        let p = variant(&case, &rel[1], 0).unwrap();
        assert_eq!(p.input, case.input);
        assert_eq!(p.converters, ["paraphrase", "rot13"]);
        let one: Case = serde_json::from_value(serde_json::json!({
            "id": "x", "input": "Freeze my card.", "expect": [{"contains": "y"}]
        }))
        .unwrap();
        let r: Relation =
            serde_json::from_value(serde_json::json!({"perturb": "reorder"})).unwrap();
        assert!(variant(&one, &r, 0).is_err());
    }
}
