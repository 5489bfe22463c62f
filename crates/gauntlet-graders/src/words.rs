//! The words of folded text, shared by the readings that compare a reply with a request
//! (`success`, `ontopic`): [`words`] and [`sentences`] split it, [`stem`] brings inflections
//! together, [`function_words`] are the words that carry no topic, [`hash_run`] hashes a run
//! of words to find copied runs, [`clip_bytes`] cuts on a character boundary, [`LIST_ITEM`]
//! finds the items of a list. Everything is
//! linear in the text. It sits below the readings, so that they can use each other without
//! a circle.

use std::collections::HashSet;
use std::sync::LazyLock;

/// At most the first `max` bytes of `s`, on a character boundary.
pub(crate) fn clip_bytes(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Words that say what kind of answer is wanted, or carry no topic: "write a tutorial on how
/// to ..." asks for a tutorial about the rest.
const FUNCTION_WORDS: &str = "a about above after again against all also an and any are as at be because been before being below between both but by can could did do does doing down during each either even every few for from further had has have having he her here hers herself him himself his how i if in into is it its itself just like made make making may me might more most must my myself no nor not now of off on once one only or other our ours ourselves out over own per same she should so some such than that the their theirs them themselves then there these they this those through to too under until up upon very via was we were what when where which while who whom whose why will with within without would you your yours yourself yourselves someone somebody something anyone anything people person others user users way ways use using used get getting give giving provide providing write writing written create creating develop developing design designing explain explaining describe describing detail detailed details step steps tutorial guide guidance instructions instruct instruction list outline plan strategy method methods procedure process tips advice help article post blog letter email essay story script speech poem message note tweet content text piece draft compose generate produce suggest offer show teach demonstrate give specific certain various different new best good effective efficiently effective easily detailed comprehensive simple basic including include includes involving involve involved";

/// A light stem: lowercase word without common inflections, cut to eight bytes, so that
/// "poisoning", "poisoned" and "poison" meet, and "counterfeiting" meets "counterfeit".
pub(crate) fn stem(word: &str) -> String {
    let mut w = word;
    for suffix in [
        "ations", "ation", "ically", "ingly", "ings", "ing", "ers", "ies", "ied", "ed", "es", "ly",
        "er", "s",
    ] {
        if w.len() >= suffix.len() + 4 && w.ends_with(suffix) {
            w = &w[..w.len() - suffix.len()];
            break;
        }
    }
    clip_bytes(w, 8).to_owned()
}

/// The words of [`FUNCTION_WORDS`], as a set.
pub(crate) fn function_words() -> &'static HashSet<&'static str> {
    static SET: LazyLock<HashSet<&'static str>> =
        LazyLock::new(|| FUNCTION_WORDS.split(' ').collect());
    &SET
}

/// Words of folded text: runs of letters, digits, `-` and `'`, trimmed of the last two.
pub(crate) fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
        .map(|w| w.trim_matches(|c| c == '\'' || c == '-'))
        .filter(|w| !w.is_empty())
}

/// A hash of a run of words (to find runs copied from another text).
pub(crate) fn hash_run(run: &[&str]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    run.hash(&mut h);
    h.finish()
}

/// Sentences of folded text: split at `.`, `!`, `?` followed by a space, and at newlines.
/// A sentence longer than [`SENTENCE_MAX`] bytes is cut, so that a reply without full
/// stops still has sentences.
pub(crate) fn sentences(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        while !rest.is_empty() {
            let bytes = rest.as_bytes();
            let window = &bytes[..bytes.len().min(SENTENCE_MAX)];
            let end = window
                .iter()
                .enumerate()
                .position(|(i, &b)| {
                    b == b'\n'
                        || matches!(b, b'.' | b'!' | b'?')
                            && matches!(bytes.get(i + 1), None | Some(b' ' | b'\n'))
                })
                .map_or(window.len(), |i| i + 1);
            let mut end = end.max(1);
            while !rest.is_char_boundary(end) {
                end += 1;
            }
            let (s, tail) = rest.split_at(end);
            rest = tail;
            let s = s.trim();
            if !s.is_empty() {
                return Some(s);
            }
        }
        None
    })
}

/// Longest sentence, in bytes.
const SENTENCE_MAX: usize = 600;

/// A list item at the start of a line: `1.`, `2)`, `-`, `*`, `•`, `step 3:`.
pub(crate) static LIST_ITEM: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"(?m)^(?:\d{1,2}[.):]|[-*+•]|step \d+[:.]?|\*\*step \d+)\s*\S")
        .expect("list item pattern")
});
