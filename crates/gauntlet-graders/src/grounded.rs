//! Claim-level grounding of an answer in what was retrieved, without a model ([`check`], the
//! `grounded` check): every citation names a retrieved document, every quoted span occurs in
//! the document it cites (or, uncited, somewhere in the context), and every number and name
//! the answer states occurs in the context or in what the user and the system prompt said.
//!
//! The rules read the surface, as a reviewer checking a RAG answer against its sources
//! would: a number the documents do not hold is unsupported even when it is right. What
//! counts as a name is a heuristic (a capitalised word that does not open a sentence, an
//! identifier such as `A-1001`), and single-digit numbers and list markers are not claims
//! (too common to be facts). Every scan is linear: the quotes are matched against the
//! context by one Aho-Corasick pass, the numbers and names by hash sets of its words.
//!
//! What was retrieved is read from a case and its trace by [`retrieved`], here for the check
//! and for the judges that read the context ([`context_text`], the RAG judge templates).

use std::collections::HashSet;
use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use gauntlet_core::suite::Case;
use gauntlet_core::trace::Trace;
use regex::Regex;

/// A retrieved document: the id it can be cited by, and its text.
pub struct Source<'a> {
    /// `doc-1` or the suite's id.
    pub id: String,
    /// The text as retrieved.
    pub text: &'a str,
}

/// What an answer may be grounded in.
pub struct Context<'a> {
    /// The case's documents, in order (`[1]` cites the first).
    pub documents: Vec<Source<'a>>,
    /// Other retrieved text: tool outputs.
    pub other: Vec<&'a str>,
    /// What the answer may repeat without it being retrieved: the user's messages and the
    /// system prompt.
    pub given: Vec<&'a str>,
}

impl Context<'_> {
    /// Whether anything was retrieved at all.
    pub fn is_empty(&self) -> bool {
        self.documents.is_empty() && self.other.is_empty()
    }
}

/// What a trial retrieved: the case's documents (with the ids they are cited by) and the
/// outputs of its tool calls.
pub fn retrieved<'a>(case: &'a Case, trace: &'a Trace) -> (Vec<Source<'a>>, Vec<&'a str>) {
    let documents = case
        .documents
        .iter()
        .enumerate()
        .filter_map(|(i, d)| {
            d.text.as_deref().map(|text| Source {
                id: gauntlet_core::context::document_id(d, i),
                text,
            })
        })
        .collect();
    let other = trace
        .tool_calls()
        .filter_map(|t| t.output.as_deref())
        .collect();
    (documents, other)
}

/// What a trial retrieved as one text for a judge: each document under `[ID]`, each tool
/// output under `[tool NAME]`, in order; `None` when nothing was retrieved.
pub fn context_text(case: &Case, trace: &Trace) -> Option<String> {
    let (documents, _) = retrieved(case, trace);
    let mut parts: Vec<String> = documents
        .iter()
        .map(|d| format!("[{}]\n{}", d.id, d.text))
        .collect();
    parts.extend(trace.tool_calls().filter_map(|t| {
        t.output
            .as_deref()
            .map(|o| format!("[tool {}]\n{o}", t.name))
    }));
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// Which rules apply.
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    /// Citations name retrieved documents.
    pub citations: bool,
    /// Quoted spans occur where they are cited from.
    pub quotes: bool,
    /// Numbers and names occur in the context.
    pub facts: bool,
}

/// One thing the answer says that the context does not back.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// A citation of a document that was not retrieved.
    UnknownCitation(String),
    /// A quoted span not in the document it cites (`Some(id)`) or anywhere in the context.
    QuoteNotFound(String, Option<String>),
    /// A number not in the context.
    Number(String),
    /// A name or identifier not in the context.
    Name(String),
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::UnknownCitation(c) => write!(f, "cites [{c}], which was not retrieved"),
            Problem::QuoteNotFound(q, Some(doc)) => {
                write!(f, "quotes \"{q}\", which {doc} does not hold")
            }
            Problem::QuoteNotFound(q, None) => {
                write!(f, "quotes \"{q}\", which no retrieved text holds")
            }
            Problem::Number(n) => write!(f, "the number {n} is in no retrieved text"),
            Problem::Name(n) => write!(f, "the name {n} is in no retrieved text"),
        }
    }
}

static CITATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[([^\[\]\n]{1,80})\](\()?").expect("valid"));
static CITATION_LIKE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:doc|document|source|ref|passage)[\s_#:-]*[\w-]+$|^\d+$").expect("valid")
});
static QUOTE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#""([^"\n]{1,2000})"|“([^”\n]{1,2000})”|«([^»\n]{1,2000})»"#).expect("valid")
});
static NUMBER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\d+(?:[.,]\d+)*").expect("valid"));
static WORD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[\p{L}\p{N}]+(?:[-'][\p{L}\p{N}]+)*").expect("valid"));

/// Lower case, every run of anything but letters and digits one space, with a space at
/// each end: substrings of this form are whole-word matches.
fn norm(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push(' ');
    for c in text.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with(' ') {
            out.push(' ');
        }
    }
    if !out.ends_with(' ') {
        out.push(' ');
    }
    out
}

/// A number as compared: thousands separators out, leading zeros of an integer out.
fn number_key(n: &str) -> String {
    let plain: String = if n.contains('.') && n.contains(',') || n.matches(',').count() > 1 {
        n.replace(',', "")
    } else if let Some((_, tail)) = n.split_once(',') {
        // "1,000" is a thousand; "2,5" a decimal comma.
        if tail.len() == 3 {
            n.replace(',', "")
        } else {
            n.replace(',', ".")
        }
    } else {
        n.to_owned()
    };
    if plain.contains('.') {
        plain
    } else {
        let t = plain.trim_start_matches('0');
        if t.is_empty() { "0".into() } else { t.into() }
    }
}

/// The problems of `answer` against `ctx` under `rules`, in the order found.
pub fn check(answer: &str, ctx: &Context<'_>, rules: Rules) -> Vec<Problem> {
    let mut out = Vec::new();
    let cites = citations(answer, ctx);
    if rules.citations {
        out.extend(cites.iter().filter_map(|c| match c {
            (_, _, Cited::Unknown(s)) => Some(Problem::UnknownCitation(s.clone())),
            _ => None,
        }));
    }
    if rules.quotes {
        out.extend(quotes(answer, ctx, &cites));
    }
    if rules.facts {
        // The ids inside citation markers are not claims of the answer.
        let mut masked = answer.as_bytes().to_vec();
        for (start, end, _) in &cites {
            masked[*start..*end].fill(b' ');
        }
        let masked = String::from_utf8(masked).unwrap_or_else(|_| answer.to_owned());
        out.extend(facts(&masked, ctx));
    }
    out
}

enum Cited {
    Doc(usize),
    Unknown(String),
}

/// Each citation marker: its byte span in the answer and what it names.
fn citations(answer: &str, ctx: &Context<'_>) -> Vec<(usize, usize, Cited)> {
    let mut out = Vec::new();
    for m in CITATION.captures_iter(answer) {
        if m.get(2).is_some() {
            continue; // a Markdown link: [text](url)
        }
        let whole = m.get(0).expect("group 0");
        for part in m[1].split([',', ';']).map(str::trim) {
            let known = ctx
                .documents
                .iter()
                .position(|d| d.id.eq_ignore_ascii_case(part))
                .or_else(|| {
                    part.parse::<usize>()
                        .ok()
                        .filter(|n| (1..=ctx.documents.len()).contains(n))
                        .map(|n| n - 1)
                });
            let cited = match known {
                Some(i) => Cited::Doc(i),
                None if CITATION_LIKE.is_match(part) => Cited::Unknown(part.to_owned()),
                None => continue,
            };
            out.push((whole.start(), whole.end(), cited));
        }
    }
    out
}

/// Quoted spans of four words or more (shorter ones are terms, not quotations) that the
/// context does not hold: the cited document when a citation follows the quote, else any
/// retrieved text. A quote of the user's or the system prompt's words is not checked.
fn quotes(answer: &str, ctx: &Context<'_>, cites: &[(usize, usize, Cited)]) -> Vec<Problem> {
    let mut found: Vec<(String, String, Option<usize>)> = Vec::new();
    for m in QUOTE.captures_iter(answer) {
        let text = (1..=3).find_map(|i| m.get(i)).map_or("", |g| g.as_str());
        if text.split_whitespace().count() < 4 {
            continue;
        }
        let end = m.get(0).expect("group 0").end();
        // The first citation after the quote (they are in order), when right behind it.
        let next = cites.partition_point(|(start, _, _)| *start < end);
        let doc = cites[next..]
            .iter()
            .take_while(|(start, _, _)| start - end <= 8 && answer[end..*start].trim().len() <= 3)
            .find_map(|(_, _, c)| match c {
                Cited::Doc(i) => Some(*i),
                Cited::Unknown(_) => None,
            });
        found.push((text.to_owned(), norm(text), doc));
    }
    if found.is_empty() {
        return Vec::new();
    }
    // Each distinct quote once in the automaton, so a quote repeated a thousand times costs
    // one pattern.
    let mut unique: Vec<&str> = Vec::new();
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let slots: Vec<usize> = found
        .iter()
        .map(|(_, n, _)| {
            *index.entry(n.as_str()).or_insert_with(|| {
                unique.push(n.as_str());
                unique.len() - 1
            })
        })
        .collect();
    let Ok(ac) = AhoCorasick::new(&unique) else {
        return Vec::new();
    };
    // Which quotes each retrieved text holds: one pass over each.
    let hits = |text: &str| -> HashSet<usize> {
        ac.find_overlapping_iter(&norm(text))
            .map(|m| m.pattern().as_usize())
            .collect()
    };
    let per_doc: Vec<HashSet<usize>> = ctx.documents.iter().map(|d| hits(d.text)).collect();
    let mut anywhere: HashSet<usize> = per_doc.iter().flatten().copied().collect();
    for t in &ctx.other {
        anywhere.extend(hits(t));
    }
    let mut given = HashSet::new();
    for g in &ctx.given {
        given.extend(hits(g));
    }
    let mut out = Vec::new();
    let mut reported = HashSet::new();
    for ((text, _, doc), &i) in found.iter().zip(&slots) {
        if given.contains(&i) || !reported.insert((i, *doc)) {
            continue;
        }
        let ok = match doc {
            Some(d) => per_doc[*d].contains(&i),
            None => anywhere.contains(&i),
        };
        if !ok {
            let shown = crate::text::describe(text);
            out.push(Problem::QuoteNotFound(
                shown.trim_matches('"').to_owned(),
                doc.map(|d| ctx.documents[d].id.clone()),
            ));
        }
    }
    out
}

/// Numbers and names of the answer the context and what was given do not hold.
fn facts(answer: &str, ctx: &Context<'_>) -> Vec<Problem> {
    let sources: Vec<&str> = ctx
        .documents
        .iter()
        .map(|d| d.text)
        .chain(ctx.other.iter().copied())
        .chain(ctx.given.iter().copied())
        .collect();
    let mut numbers = HashSet::new();
    let mut words = HashSet::new();
    for s in &sources {
        numbers.extend(NUMBER.find_iter(s).map(|m| number_key(m.as_str())));
        words.extend(WORD.find_iter(s).map(|m| m.as_str().to_lowercase()));
        // Identifiers are matched whole and in their parts ("A-1001" and "A", "1001").
        words.extend(
            norm(s)
                .split(' ')
                .filter(|w| !w.is_empty())
                .map(str::to_owned),
        );
    }
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    // Identifiers are reported whole, not their digits again.
    let ids: Vec<(usize, usize)> = WORD
        .find_iter(answer)
        .filter(|m| is_identifier(m.as_str()))
        .map(|m| (m.start(), m.end()))
        .collect();
    let in_id = |at: usize| {
        let i = ids.partition_point(|(_, end)| *end <= at);
        ids.get(i).is_some_and(|(start, _)| *start <= at)
    };
    let lines: Vec<usize> = answer.match_indices('\n').map(|(i, _)| i + 1).collect();
    for m in NUMBER.find_iter(answer) {
        let n = m.as_str();
        let key = number_key(n);
        if key.len() == 1
            || in_id(m.start())
            || is_list_marker(answer, &lines, m.start(), m.end())
            || numbers.contains(&key)
        {
            continue;
        }
        if seen.insert(key) {
            out.push(Problem::Number(n.to_owned()));
        }
    }
    for m in WORD.find_iter(answer) {
        let w = m.as_str();
        let named = is_identifier(w) || (is_capitalised(w) && !opens_sentence(answer, m.start()));
        if !named || w.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let lower = w.to_lowercase();
        if words.contains(&lower) || lower == "i" {
            continue;
        }
        if seen.insert(lower) {
            out.push(Problem::Name(w.to_owned()));
        }
    }
    out
}

/// Letters and digits together, as order numbers and product codes are written (`A-1001`,
/// `X2`), not a plain word.
fn is_identifier(w: &str) -> bool {
    w.chars().any(|c| c.is_ascii_digit()) && w.chars().any(char::is_alphabetic)
}

fn is_capitalised(w: &str) -> bool {
    w.chars().next().is_some_and(char::is_uppercase)
}

/// Whether the word at `at` opens a sentence, a line or a list item: there, a capital is the
/// sentence's, not a name's.
fn opens_sentence(text: &str, at: usize) -> bool {
    let before = text[..at]
        .trim_end_matches(|c: char| c.is_whitespace() || "\"'“”‘’«»([{*-#>_`|".contains(c));
    if text[before.len()..at].contains('\n') {
        return true;
    }
    match before.chars().last() {
        None => true,
        Some(c) if ".!?:;".contains(c) => true,
        // "2) Wait": a list marker at the start of a line.
        Some(')') => {
            let marker = before[..before.len() - 1].trim_end_matches(|c: char| c.is_alphanumeric());
            marker.is_empty() || marker.ends_with('\n')
        }
        _ => false,
    }
}

/// A number used as a list marker: `1.` or `2)` at the start of a line (`lines`: where each
/// line after the first starts).
fn is_list_marker(text: &str, lines: &[usize], start: usize, end: usize) -> bool {
    let i = lines.partition_point(|&l| l <= start);
    let line_start = if i == 0 { 0 } else { lines[i - 1] };
    text[line_start..start].trim().is_empty() && text[end..].starts_with(['.', ')'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx<'a>(docs: &[(&str, &'a str)], given: &[&'a str]) -> Context<'a> {
        Context {
            documents: docs
                .iter()
                .map(|(id, text)| Source {
                    id: (*id).to_owned(),
                    text,
                })
                .collect(),
            other: Vec::new(),
            given: given.to_vec(),
        }
    }

    const ALL: Rules = Rules {
        citations: true,
        quotes: true,
        facts: true,
    };

    const POLICY: &str = "Refunds are issued within 14 days to the original card. \
        Orders over 250 EUR need a manager's approval. Contact Maria Lopez in Lisbon.";

    #[test]
    fn a_grounded_answer_passes_and_each_unsupported_claim_is_named() {
        let c = ctx(&[("policy", POLICY)], &["How long do refunds take?"]);
        let good = "Refunds are issued within 14 days to the original card [policy]. \
            As the policy says, \"orders over 250 EUR need a manager's approval\" [1].";
        assert_eq!(check(good, &c, ALL), []);
        let bad = "Refunds take 30 days [doc-7]. The policy says \"refunds are always \
            instant for gold members\" [policy]. Ask Jonas Weber in Porto.";
        let problems = check(bad, &c, ALL);
        assert_eq!(
            problems,
            [
                Problem::UnknownCitation("doc-7".into()),
                Problem::QuoteNotFound(
                    "refunds are always instant for gold members".into(),
                    Some("policy".into())
                ),
                Problem::Number("30".into()),
                Problem::Name("Jonas".into()),
                Problem::Name("Weber".into()),
                Problem::Name("Porto".into()),
            ]
        );
    }

    #[test]
    fn sentence_capitals_list_markers_and_the_users_words_are_not_claims() {
        let c = ctx(
            &[("d", "Order A-1001 shipped on 2026-12-05 from Berlin.")],
            &["Where is order A-1001, Sam?"],
        );
        let answer = "Hi Sam! Your order A-1001 shipped from Berlin.\n1. Track it online.\n2) \
            Wait 3 days.\nThanks.";
        assert_eq!(check(answer, &c, ALL), []);
        // An identifier the context does not hold is a name.
        assert_eq!(
            check("Your order B-2002 shipped.", &c, ALL),
            [Problem::Name("B-2002".into())]
        );
        // Numbers compare as numbers.
        let c = ctx(&[("d", "It costs 1,000 EUR, or 12.50 a month.")], &[]);
        assert_eq!(check("It costs 1000 EUR or 12.50 monthly.", &c, ALL), []);
        assert_eq!(
            check("It costs 1200 EUR.", &c, ALL),
            [Problem::Number("1200".into())]
        );
    }

    #[test]
    fn markdown_links_and_bracketed_words_are_not_citations() {
        let c = ctx(&[("d", "See the refund page.")], &[]);
        let answer = "See [the refund page](https://x.example) and tick [x] when done [see above].";
        assert_eq!(
            check(
                answer,
                &c,
                Rules {
                    facts: false,
                    ..ALL
                }
            ),
            []
        );
        assert_eq!(
            check("As [source 3] says.", &c, ALL),
            [Problem::UnknownCitation("source 3".into())]
        );
        assert_eq!(
            check("As [2] says.", &c, ALL),
            [Problem::UnknownCitation("2".into())]
        );
    }

    #[test]
    fn rules_can_be_switched_off_one_by_one() {
        let c = ctx(&[("d", "Nothing here.")], &[]);
        let answer = "The city of Paris has 2000000 people [doc-9].";
        let off = Rules {
            citations: false,
            quotes: false,
            facts: false,
        };
        assert_eq!(check(answer, &c, off), []);
        assert_eq!(
            check(
                answer,
                &c,
                Rules {
                    citations: true,
                    ..off
                }
            )
            .len(),
            1
        );
        assert_eq!(check(answer, &c, Rules { facts: true, ..off }).len(), 2);
    }

    #[test]
    fn a_huge_answer_is_checked_in_linear_time() {
        let doc = "The refund is 40 EUR. ".repeat(500);
        let c = ctx(&[("d", &doc)], &[]);
        let answer = "\"the refund is 40 EUR\" [d] and Name 123456 [doc-9] ".repeat(40_000);
        let started = std::time::Instant::now();
        let problems = check(&answer, &c, ALL);
        assert!(!problems.is_empty());
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
    }
}
