//! [`CanaryMask`]: the run's canary masked in the files that leave the run's folder.
//!
//! `summary.md` becomes a pull-request comment, `results.sarif` a code-scanning alert and
//! `junit.xml` a CI test page: places people outside the test read and search. A planted
//! canary quoted there (in a leak's evidence, in the answer that leaked it) is published
//! with them, and a published canary no longer proves a leak. These writers mask it to its
//! first characters and its length (`[REDACTED:canary GNTC…(19 chars)]`): enough to tell which
//! secret leaked, not enough to plant it again. `report.json` and `report.html` stay whole:
//! they are the run's own record, which a reviewer needs as it was.
//!
//! The masking is the secret redactor's ([`gauntlet_core::redact::Redactor`]), with each
//! canary registered under its masked form: the plain and percent-encoded forms go. A
//! disguised leak (spelled out, encoded, reversed, in part) gives the canary away as surely,
//! so when the writers are lent a [`DisclosureFinder`] (the canary detector, which this
//! crate does not depend on: the engine lends it) each disclosure it finds is masked too,
//! named by its disguise (`[REDACTED:canary GNTC…(19 chars), spelled]`): a reviewer still
//! learns how the secret left, and `report.json` keeps the reply as it was. The canaries are
//! the run's (`--canary`, or the corpus's for the red team, as recorded in the manifest's
//! invocation), each suite's `agent.canary` and the canaries single cases of the suite file
//! set for themselves (recorded with the suite in the manifest; a case streamed from a data
//! file is not read ahead, and its own canary is not masked).

mod disguise;

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use disguise::{Disguise, Scope};

use gauntlet_core::event::{EventKind, RunEvent, RunManifest};
use gauntlet_core::redact::Redactor;
use gauntlet_core::result::{CaseResult, CaseStatus};
use serde_json::Value;

/// Where a text discloses one planted secret in a disguise.
pub trait Disclosures: Send + Sync + std::fmt::Debug {
    /// The disclosures in `text`: each one's byte range (on character boundaries) and the
    /// name of its disguise. Not every one need be found in one call: the mask calls again
    /// on what it masked, until nothing is found.
    fn find(&self, text: &str) -> Vec<(Range<usize>, &'static str)>;
}

/// Builds the [`Disclosures`] of one secret.
pub type DisclosureFinder = fn(&str) -> Box<dyn Disclosures>;

/// What [`CanaryMask::result_of`] keeps in an event: the mask and the result it masked
/// (`None` when there was nothing to mask).
struct MaskedResult {
    mask: Arc<CanaryMask>,
    result: Option<Arc<CaseResult>>,
}

/// A result as a consumer quotes it: the event's own when it quotes no canary, else the
/// masked copy every consumer of the event with the same mask shares.
#[derive(Debug)]
pub enum Quoted<'a> {
    /// The event's result, which quotes no canary.
    Own(&'a CaseResult),
    /// The result with the canary masked.
    Masked(Arc<CaseResult>),
}

impl std::ops::Deref for Quoted<'_> {
    type Target = CaseResult;

    fn deref(&self) -> &CaseResult {
        match self {
            Quoted::Own(r) => r,
            Quoted::Masked(r) => r,
        }
    }
}

/// Masks the run's canaries in case results.
#[derive(Debug, Clone, Default)]
pub struct CanaryMask {
    canaries: Vec<String>,
    redactor: Redactor,
    /// Every form of every canary the redactor replaces (plain and percent-encoded), in one
    /// automaton, longest first where two overlap, with the label of each: one pass over a
    /// text however many canaries there are (a run whose cases each plant their own has
    /// hundreds, and the redactor looks for each in turn).
    any: Option<(aho_corasick::AhoCorasick, Vec<String>)>,
    /// Each canary and the results it can be in.
    scopes: Vec<(String, Scope)>,
    /// Each canary's finder of disguised disclosures: empty when the writer was lent no
    /// finder.
    disguises: Vec<Disguise>,
    /// The disguises by where they can be: `("", "")` every result, `(suite, "")` a suite's,
    /// `(suite, case id)` a case's.
    index: std::collections::HashMap<(String, String), Vec<usize>>,
}

/// `GNTC…(19 chars)`: the first characters of a secret (a quarter of it, at most 4) and its
/// length in characters.
pub fn masked(secret: &str) -> String {
    let n = secret.chars().count();
    let head: String = secret.chars().take((n / 4).min(4)).collect();
    format!("{head}…({n} chars)")
}

impl CanaryMask {
    /// The mask of the run's canaries, from its manifest: the invocation's, each suite's and
    /// its cases' own (none when the run recorded none).
    pub fn of(m: &RunManifest) -> CanaryMask {
        let run = m.invocation.as_ref().and_then(|i| i.canary.as_deref());
        let mut scoped: Vec<(&str, Scope)> = run.into_iter().map(|c| (c, Scope::Run)).collect();
        for s in &m.suites {
            scoped.extend(
                s.canary
                    .as_deref()
                    .map(|c| (c, Scope::Suite(s.name.clone()))),
            );
            for (id, secrets) in &s.case_canaries {
                scoped.extend(secrets.iter().map(|c| {
                    let scope = Scope::Case {
                        suite: s.name.clone(),
                        id: id.clone(),
                    };
                    (c.as_str(), scope)
                }));
            }
        }
        CanaryMask::scoped(scoped)
    }

    /// The mask of `canary`.
    pub fn new(canary: Option<&str>) -> CanaryMask {
        CanaryMask::all(canary)
    }

    /// The mask of every canary given (each once), each read in every result.
    pub fn all<'a>(canaries: impl IntoIterator<Item = &'a str>) -> CanaryMask {
        CanaryMask::scoped(canaries.into_iter().map(|c| (c, Scope::Run)).collect())
    }

    fn scoped(canaries: Vec<(&str, Scope)>) -> CanaryMask {
        let mut redactor = Redactor::new();
        let mut kept: Vec<String> = Vec::new();
        let mut known: std::collections::HashSet<&str> = std::collections::HashSet::new();
        let mut scopes: Vec<(String, Scope)> = Vec::new();
        for (c, scope) in canaries {
            if !known.contains(c) {
                // The redactor turns down what is too short to mask safely.
                if c.len() < gauntlet_core::redact::MIN_SECRET_HEAD {
                    continue;
                }
                redactor.add(&format!("canary {}", masked(c)), c);
                known.insert(c);
                kept.push(c.to_owned());
            }
            scopes.push((c.to_owned(), scope));
        }
        let (forms, labels): (Vec<String>, Vec<String>) = kept
            .iter()
            .flat_map(|c| {
                let label = format!("[REDACTED:canary {}]", masked(c));
                [
                    (c.clone(), label.clone()),
                    (gauntlet_core::text::percent_encode(c), label),
                ]
            })
            .unzip();
        let any = aho_corasick::AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::LeftmostLongest)
            .build(&forms)
            .ok()
            .filter(|_| !forms.is_empty())
            .map(|a| (a, labels));
        CanaryMask {
            canaries: kept,
            redactor,
            any,
            scopes,
            disguises: Vec::new(),
            index: std::collections::HashMap::new(),
        }
    }

    /// This mask, also masking what `finder` finds of each canary in disguise (none when
    /// `finder` is `None`), in the results that can hold that canary.
    #[must_use]
    pub fn finding(mut self, finder: Option<DisclosureFinder>) -> CanaryMask {
        let mut by_canary: std::collections::HashMap<&str, Vec<Scope>> =
            std::collections::HashMap::new();
        for (c, s) in &self.scopes {
            by_canary.entry(c.as_str()).or_default().push(s.clone());
        }
        let disguises = finder.map_or_else(Vec::new, |f| {
            self.canaries
                .iter()
                .map(|c| Disguise {
                    scopes: by_canary.remove(c.as_str()).unwrap_or_default(),
                    finder: Arc::from(f(c)),
                    label: masked(c),
                    canary: c.clone(),
                })
                .collect()
        });
        let mut index: std::collections::HashMap<(String, String), Vec<usize>> =
            std::collections::HashMap::new();
        for (i, d) in disguises.iter().enumerate() {
            for scope in &d.scopes {
                index.entry(scope.key()).or_default().push(i);
            }
        }
        self.disguises = disguises;
        self.index = index;
        self
    }

    /// `text` with every plain canary masked, in one pass.
    fn plain(&self, text: &str) -> String {
        match &self.any {
            Some((a, labels)) => a.replace_all(text, labels),
            None => text.to_owned(),
        }
    }

    /// The disguises a result can hold: the run's, its suite's and its case's (found through
    /// an index, so that a run of many cases each planting its own canary stays linear).
    fn covering(&self, r: &CaseResult) -> Vec<&Disguise> {
        let base = r.case.id.split(['~', ' ']).next().unwrap_or(&r.case.id);
        let mut out: Vec<&Disguise> = Vec::new();
        let keys = [
            (String::new(), String::new()),
            (r.case.suite.clone(), String::new()),
            (r.case.suite.clone(), base.to_owned()),
        ];
        for k in &keys {
            for &i in self.index.get(k).into_iter().flatten() {
                let d = &self.disguises[i];
                if d.covers(r) && !out.iter().any(|o| std::ptr::eq(*o, d)) {
                    out.push(d);
                }
            }
        }
        out
    }

    /// `text` with the canary masked (as written or percent-encoded).
    pub fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match &self.any {
            Some((a, _)) if a.is_match(text) => Cow::Owned(self.plain(text)),
            _ => Cow::Borrowed(text),
        }
    }

    /// [`CanaryMask::result`] for the writers that quote a result's text only when it did not
    /// pass or a check in it failed (`summary.md`, `junit.xml`): a clean pass is written as
    /// its names and score, which come from the suite, so it is not masked. A suite's canary
    /// sits in every trace's system prompt, and masking each passing result would cost a run
    /// of passing cases two copies of every result for nothing.
    pub fn quoted<'a>(&self, r: &'a CaseResult) -> Cow<'a, CaseResult> {
        if self.is_clean(r) {
            Cow::Borrowed(r)
        } else {
            self.result(r)
        }
    }

    /// Whether `r` is a clean pass whose names hold no canary ([`CanaryMask::quoted`]).
    fn is_clean(&self, r: &CaseResult) -> bool {
        r.status == CaseStatus::Pass
            && crate::text::failed_checks(r).is_empty()
            // The names are written: a canary the suite put in one is still masked.
            && ![&r.case.id, &r.case.name, &r.case.suite]
                .iter()
                .any(|s| matches!(self.text(s), Cow::Owned(_)))
    }

    /// The run's mask, from its `run_started` event and manifest: built once for every
    /// consumer of the event lent the same finder (the three writers and the terminal), so
    /// each canary's detector is built once, not once per consumer.
    pub fn of_event(
        ev: &RunEvent,
        manifest: &RunManifest,
        finder: Option<DisclosureFinder>,
    ) -> Arc<CanaryMask> {
        // Equal finders build equal masks of one manifest; no finder is 0. Two addresses for
        // one function only cost a second mask; one address for two functions would need
        // them to be the same code, which builds the same mask.
        let key = finder.map_or(0, |f| f as usize);
        ev.derived
            .get_or_make(key, || CanaryMask::of(manifest).finding(finder))
    }

    /// [`CanaryMask::result`] of `r`, the result `ev` carries, masked once for every consumer
    /// of `ev` that holds this same mask ([`CanaryMask::of_event`]). The slot keeps the mask
    /// it was made with, so its address names it for as long as the event lives; a result
    /// that is not `ev`'s own is masked apart.
    pub fn result_of<'a>(self: &Arc<Self>, ev: &RunEvent, r: &'a CaseResult) -> Quoted<'a> {
        let own =
            matches!(&ev.kind, EventKind::CaseFinished { result } if std::ptr::eq(&**result, r));
        let mask = || MaskedResult {
            mask: Arc::clone(self),
            result: match self.result(r) {
                Cow::Owned(masked) => Some(Arc::new(masked)),
                Cow::Borrowed(_) => None,
            },
        };
        let made = if own {
            ev.derived.get_or_make(Arc::as_ptr(self) as usize, mask)
        } else {
            Arc::new(mask())
        };
        let made = if Arc::ptr_eq(&made.mask, self) {
            made
        } else {
            Arc::new(mask())
        };
        match &made.result {
            Some(masked) => Quoted::Masked(masked.clone()),
            None => Quoted::Own(r),
        }
    }

    /// [`CanaryMask::quoted`] of the result `ev` carries, shared as
    /// [`CanaryMask::result_of`] is.
    pub fn quoted_of<'a>(self: &Arc<Self>, ev: &RunEvent, r: &'a CaseResult) -> Quoted<'a> {
        if self.is_clean(r) {
            Quoted::Own(r)
        } else {
            self.result_of(ev, r)
        }
    }

    /// The result with the canary masked wherever it is quoted (prompts, answers, evidence,
    /// tool calls), borrowed when it quotes none.
    pub fn result<'a>(&self, r: &'a CaseResult) -> Cow<'a, CaseResult> {
        if self.canaries.is_empty() {
            return Cow::Borrowed(r);
        }
        let Ok(mut v) = serde_json::to_value(r) else {
            return Cow::Borrowed(r);
        };
        let disguises = self.covering(r);
        let heads: Vec<&str> = if self.disguises.is_empty() {
            self.canaries.iter().map(String::as_str).collect()
        } else {
            disguises.iter().map(|d| d.canary.as_str()).collect()
        };
        if !mask_json(self, &heads, &disguises, true, &mut v) {
            return Cow::Borrowed(r);
        }
        match serde_json::from_value(v) {
            Ok(masked) => Cow::Owned(masked),
            // A mask that made the result unreadable (a label where a field wants one of its
            // words) must not leave it unmasked: mask each string on its own, which replaces
            // only what holds the canary, never a field's word.
            Err(_) => {
                let again = |disguises: &[&Disguise]| {
                    let mut v = serde_json::to_value(r).ok()?;
                    mask_json(self, &heads, disguises, false, &mut v);
                    serde_json::from_value::<CaseResult>(v).ok()
                };
                again(&disguises)
                    .or_else(|| again(&[]))
                    .map_or(Cow::Borrowed(r), Cow::Owned)
            }
        }
    }
}

/// Masks every string in `v` (and every key); whether any changed. A head of a canary
/// longer than the mask shows, cut with `…` by whoever quoted it, is masked as well: the
/// rest was cut off, but the head alone gives most of the secret away. Then the disguised
/// disclosures, in each string and split between the strings of one object.
fn mask_json(
    mask: &CanaryMask,
    heads: &[&str],
    disguises: &[&Disguise],
    split: bool,
    v: &mut Value,
) -> bool {
    match v {
        Value::String(s) => {
            let mut out = mask.plain(s);
            let mut cut = false;
            // Looked for once: most texts hold no cut, and there may be many canaries; the
            // heads looked for are those of the canaries the result can hold.
            if out.contains('…') {
                for canary in heads {
                    cut |= mask_cut_heads(&mask.redactor, canary, &mut out);
                }
            }
            cut |= disguise::mask_text(disguises, &mut out);
            let changed = cut || out != *s;
            if changed {
                *s = out;
            }
            changed
        }
        // Every element is masked: no short cut after the first change.
        Value::Array(a) => {
            let inner = a
                .iter_mut()
                .map(|x| mask_json(mask, heads, disguises, split, x))
                .fold(false, |a, c| a | c);
            inner | (split && disguise::mask_split(disguises, v))
        }
        Value::Object(o) => {
            let mut changed = o
                .values_mut()
                .map(|x| mask_json(mask, heads, disguises, split, x))
                .fold(false, |a, c| a | c);
            // A key holding a canary (a tool argument's name) is masked as a string is;
            // masked keys stay apart, since two of one label would make one entry.
            let keys: Vec<String> = o
                .keys()
                .map(|k| {
                    let mut out = mask.plain(k);
                    disguise::mask_text(disguises, &mut out);
                    out
                })
                .collect();
            if o.keys().zip(&keys).any(|(k, m)| k != m) {
                let old = std::mem::take(o);
                for (n, ((k, x), key)) in old.into_iter().zip(keys).enumerate() {
                    let key = if key != k && o.contains_key(&key) {
                        format!("{key} #{n}")
                    } else {
                        key
                    };
                    o.insert(key, x);
                }
                changed = true;
            }
            changed | (split && disguise::mask_split(disguises, v))
        }
        _ => false,
    }
}

/// Replaces each head of `canary` that stands right before a `…` (a cut) with the mask.
fn mask_cut_heads(red: &Redactor, canary: &str, s: &mut String) -> bool {
    if !s.contains('…') {
        return false;
    }
    let shown = (canary.chars().count() / 4).min(4);
    let pieces: Vec<&str> = s.split('…').collect();
    let last = pieces.len() - 1;
    let mut changed = false;
    let mut out = String::with_capacity(s.len());
    for (i, piece) in pieces.iter().enumerate() {
        if i > 0 {
            out.push('…');
        }
        if i < last && head_len(piece, canary) > shown {
            let mut p = (*piece).to_owned();
            red.redact_cut_end(&mut p);
            changed |= p != *piece;
            out.push_str(&p);
        } else {
            out.push_str(piece);
        }
    }
    if changed {
        *s = out;
    }
    changed
}

/// How many characters of `canary`'s start end `text`.
fn head_len(text: &str, canary: &str) -> usize {
    canary
        .char_indices()
        .map(|(i, c)| i + c.len_utf8())
        .filter(|&end| text.ends_with(&canary[..end]))
        .map(|end| canary[..end].chars().count())
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mask_keeps_a_head_and_the_length() {
        assert_eq!(masked("GNTC-7Q4X-M2RK-91ZB"), "GNTC…(19 chars)");
        assert_eq!(masked("abcdefgh"), "ab…(8 chars)");
    }

    #[test]
    fn the_canary_is_masked_whole_percent_encoded_and_cut() {
        let m = CanaryMask::new(Some("GNTC-7Q4X-M2RK-91ZB"));
        assert_eq!(
            m.text("code: GNTC-7Q4X-M2RK-91ZB."),
            "code: [REDACTED:canary GNTC…(19 chars)]."
        );
        let mut v = serde_json::json!({"a": ["leaked GNTC-7Q4X-M2R…\" and more", "GNTC…"]});
        assert!(mask_json(&m, &["GNTC-7Q4X-M2RK-91ZB"], &[], true, &mut v));
        assert_eq!(
            v["a"][0],
            "leaked [REDACTED:canary GNTC…(19 chars)]…\" and more"
        );
        // A head no longer than the mask's own is left: it tells nothing more.
        assert_eq!(v["a"][1], "GNTC…");
        let none = CanaryMask::new(None);
        assert_eq!(none.text("GNTC-7Q4X-M2RK-91ZB"), "GNTC-7Q4X-M2RK-91ZB");
    }

    #[test]
    fn a_clean_pass_is_left_as_it_is_and_anything_quoted_is_masked() {
        let mask = CanaryMask::new(Some("GNTC-7Q4X-M2RK-91ZB"));
        let leaked = "the code is GNTC-7Q4X-M2RK-91ZB";
        // Failed, and passed with a failing check: both quoted, both masked.
        for status in ["FAIL", "PASS"] {
            let r = crate::testing::result("s", status, false, false, leaked);
            assert!(matches!(mask.quoted(&r), Cow::Owned(_)), "{status}");
            let text = serde_json::to_string(&*mask.quoted(&r)).expect("json");
            assert!(!text.contains("GNTC-7Q4X-M2RK-91ZB"), "{text}");
        }
        // A clean pass (every check passed) is written as its names and score: borrowed.
        let mut clean = crate::testing::result("s", "PASS", false, false, leaked);
        clean.trials[0].verdicts[0].passed = true;
        assert!(matches!(mask.quoted(&clean), Cow::Borrowed(_)));
        assert!(matches!(mask.result(&clean), Cow::Owned(_)));
        // Unless its names, which are written, hold the canary.
        clean.case.name = "smoke/GNTC-7Q4X-M2RK-91ZB".into();
        let text = serde_json::to_string(&*mask.quoted(&clean)).expect("json");
        assert!(!text.contains("GNTC-7Q4X-M2RK-91ZB"), "{text}");
    }

    /// A finder that finds nothing, told apart from another by its address.
    fn no_disguise(_: &str) -> Box<dyn Disclosures> {
        #[derive(Debug)]
        struct Nothing;
        impl Disclosures for Nothing {
            fn find(&self, _: &str) -> Vec<(Range<usize>, &'static str)> {
                Vec::new()
            }
        }
        Box::new(Nothing)
    }

    #[test]
    fn the_consumers_of_one_event_share_its_mask_and_each_masked_result() {
        let manifest = crate::testing::manifest("/w", "GNTC-7Q4X-M2RK-91ZB", "s", false);
        let started = RunEvent::new(
            0,
            EventKind::RunStarted {
                manifest: Box::new(manifest.clone()),
            },
        );
        let a = CanaryMask::of_event(&started, &manifest, Some(no_disguise));
        let b = CanaryMask::of_event(&started, &manifest, Some(no_disguise));
        assert!(
            Arc::ptr_eq(&a, &b),
            "one mask for every consumer with the same finder"
        );
        // A consumer lent another finder (or none) builds its own, masking as it would.
        let other = CanaryMask::of_event(&started, &manifest, None);
        assert!(!Arc::ptr_eq(&a, &other));

        let leaked = "the code is GNTC-7Q4X-M2RK-91ZB";
        let copy = crate::testing::result("s", "FAIL", false, false, leaked);
        let finished = RunEvent::new(
            1,
            EventKind::CaseFinished {
                result: Box::new(copy.clone()),
            },
        );
        let EventKind::CaseFinished { result } = &finished.kind else {
            unreachable!()
        };
        let r: &CaseResult = result;
        let (Quoted::Masked(x), Quoted::Masked(y)) =
            (a.quoted_of(&finished, r), b.result_of(&finished, r))
        else {
            panic!("a failed result quoting the canary is masked");
        };
        assert!(Arc::ptr_eq(&x, &y), "masked once for both");
        assert_eq!(*x, *a.result(r));
        let Quoted::Masked(z) = other.result_of(&finished, r) else {
            panic!("masked");
        };
        assert!(!Arc::ptr_eq(&x, &z));
        assert_eq!(*z, *other.result(r));
        // A result that is not the event's own is masked apart, never served another's.
        let Quoted::Masked(w) = a.result_of(&finished, &copy) else {
            panic!("masked");
        };
        assert!(!Arc::ptr_eq(&x, &w));
        // A clean pass is the event's own, and so is a result quoting no canary.
        let mut clean = r.clone();
        clean.status = CaseStatus::Pass;
        clean.trials[0].verdicts[0].passed = true;
        assert!(matches!(a.quoted_of(&finished, &clean), Quoted::Own(_)));
        let plain = crate::testing::result("s", "FAIL", false, false, "nothing here");
        let plain_ev = RunEvent::new(
            2,
            EventKind::CaseFinished {
                result: Box::new(plain.clone()),
            },
        );
        assert!(matches!(a.result_of(&plain_ev, &plain), Quoted::Own(_)));
    }

    /// A run's manifest with these suites.
    fn manifest_with(suites: Value) -> RunManifest {
        serde_json::from_value(serde_json::json!({
            "schema_version": 1, "run_id": "r", "gauntlet_version": "0", "started_at": "t",
            "command": "run", "target": {"kind": "fake", "label": "fake"},
            "suites": suites,
            "k": 1, "seed": 0, "planned_cases": 3, "evidence_level": "offline",
            "side_effects": "simulated", "dataset_revision": "-"
        }))
        .expect("manifest")
    }

    #[test]
    fn every_suite_s_canary_is_masked_with_the_run_s() {
        let mut m = manifest_with(serde_json::json!([
            {"name": "a", "path": "a.yaml", "sha256": "", "cases": 1, "canary": "SHOP-KEY-5T8R-WQ62"},
            {"name": "b", "path": "b.yaml", "sha256": "", "cases": 1, "canary": "abc"},
            {"name": "c", "path": "c.yaml", "sha256": "", "cases": 1}
        ]));
        let mask = CanaryMask::of(&m);
        assert_eq!(
            mask.text("sent SHOP-KEY-5T8R-WQ62 by email"),
            "sent [REDACTED:canary SHOP…(18 chars)] by email"
        );
        // Too short to mask without masking ordinary text: left, as `--canary` would be.
        assert_eq!(mask.text("abc"), "abc");
        let mut r =
            crate::testing::result("a", "FAIL", false, true, "the key is SHOP-KEY-5T8R-WQ62");
        r.case.name = "SHOP-KEY-5T8R-WQ62 in a name".into();
        let masked_result = mask.result(&r);
        let text = serde_json::to_string(&*masked_result).expect("json");
        assert!(!text.contains("SHOP-KEY-5T8R-WQ62"), "{text}");
        // With the run's canary too, both are masked.
        m.invocation = Some(gauntlet_core::event::Invocation {
            canary: Some("GNTC-7Q4X-M2RK-91ZB".into()),
            ..Default::default()
        });
        let both = CanaryMask::of(&m);
        assert_eq!(
            both.text("GNTC-7Q4X-M2RK-91ZB and SHOP-KEY-5T8R-WQ62"),
            "[REDACTED:canary GNTC…(19 chars)] and [REDACTED:canary SHOP…(18 chars)]"
        );
    }

    /// A finder that knows one disguise: the canary's characters joined by `-` (a stand-in
    /// for the canary detector, which this crate does not depend on), and, as a reading of
    /// the same stretch, its first 8 of them.
    #[derive(Debug)]
    struct Dashed(String, String);

    impl Disclosures for Dashed {
        fn find(&self, text: &str) -> Vec<(Range<usize>, &'static str)> {
            let mut out = Vec::new();
            // One per disguise and call, as the canary detector reports them.
            if let Some(i) = text.find(&self.0) {
                out.push((i..i + self.0.len(), "separated"));
            }
            if let Some(i) = text.find(&self.1) {
                out.push((i..i + self.1.len(), "partial"));
            }
            out
        }
    }

    fn dashed(secret: &str) -> Box<dyn Disclosures> {
        let joined = |s: &str| s.chars().map(String::from).collect::<Vec<_>>().join("-");
        let head: String = secret.chars().take(8).collect();
        Box::new(Dashed(joined(secret), joined(&head)))
    }

    #[test]
    fn every_disclosure_in_disguise_is_masked_with_its_disguise_named() {
        let mask = CanaryMask::new(Some("GNTC7Q4XM2RK")).finding(Some(dashed));
        let spelled = "G-N-T-C-7-Q-4-X-M-2-R-K";
        let text =
            format!("first {spelled}, again {spelled}; a third {spelled}. plain GNTC7Q4XM2RK");
        let r = crate::testing::result("s", "FAIL", false, true, &text);
        let out = serde_json::to_string(&*mask.result(&r)).expect("json");
        // Every copy, though the finder reports one a call; the overlapping partial reading
        // of the same stretch leaves nothing of it; the plain form as before.
        assert!(!out.contains("G-N-T-C"), "{out}");
        assert!(!out.contains("GNTC7Q4XM2RK"), "{out}");
        let answer =
            serde_json::to_value(&*mask.result(&r)).expect("json")["trials"][0]["trace"]["turns"]
                [0]["answer"]
                .clone();
        assert_eq!(
            answer,
            "first [REDACTED:canary GNT…(12 chars), separated], again [REDACTED:canary GNT…(12 \
             chars), separated]; a third [REDACTED:canary GNT…(12 chars), separated]. plain \
             [REDACTED:canary GNT…(12 chars)]"
        );
        // Letters one per line in a quote that shows its escapes.
        let quoted = r#"did not refuse: "Sure:\nG\nN\nT\nC\n7\nQ\n4\nX\nM\n2\nR\nK""#;
        let finder = |_: &str| -> Box<dyn Disclosures> {
            Box::new(Dashed(
                "G  N  T  C  7  Q  4  X  M  2  R  K".into(),
                "-".into(),
            ))
        };
        let lines = CanaryMask::new(Some("GNTC7Q4XM2RK")).finding(Some(finder));
        let r = crate::testing::result("s", "FAIL", false, true, quoted);
        let out = serde_json::to_value(&*lines.result(&r)).expect("json");
        assert_eq!(
            out["trials"][0]["trace"]["turns"][0]["answer"],
            r#"did not refuse: "Sure:\n[REDACTED:canary GNT…(12 chars), separated]""#
        );
        // A part alone is masked as a part.
        let part = "the code starts G-N-T-C-7-Q-4-X and that is all";
        let r = crate::testing::result("s", "FAIL", false, true, part);
        let out = serde_json::to_string(&*mask.result(&r)).expect("json");
        assert!(
            out.contains("starts [REDACTED:canary GNT…(12 chars), partial] and"),
            "{out}"
        );
        // Without a finder the disguise stays (what report.json keeps whole anyway).
        let plain = CanaryMask::new(Some("GNTC7Q4XM2RK"));
        let r = crate::testing::result("s", "FAIL", false, true, spelled);
        let out = serde_json::to_string(&*plain.result(&r)).expect("json");
        assert!(out.contains(spelled), "{out}");
    }

    #[test]
    fn a_finder_that_reads_its_own_mask_as_a_leak_stops() {
        #[derive(Debug)]
        struct Greedy;
        impl Disclosures for Greedy {
            fn find(&self, text: &str) -> Vec<(Range<usize>, &'static str)> {
                vec![(0..text.len(), "everything")]
            }
        }
        let mask = CanaryMask::new(Some("GNTC7Q4XM2RK")).finding(Some(|_| Box::new(Greedy)));
        let mut s = "anything".to_owned();
        assert!(disguise::mask_text(&[&mask.disguises[0]], &mut s));
        // One label, not one inside another: the finder never saw a label.
        assert_eq!(s, "[REDACTED:canary GNT…(12 chars), everything]");
        // Nor in a text holding the placeholders' own characters, where labels go in at once.
        let mut s = "any\u{E000}thing".to_owned();
        assert!(disguise::mask_text(&[&mask.disguises[0]], &mut s));
        assert_eq!(s, "[REDACTED:canary GNT…(12 chars), everything]");
    }

    #[test]
    fn a_disclosure_split_between_a_turn_s_fields_masks_them_and_keeps_the_result_whole() {
        /// Finds the canary's two halves together, wherever they stand in a text.
        #[derive(Debug)]
        struct Halves;
        impl Disclosures for Halves {
            fn find(&self, text: &str) -> Vec<(Range<usize>, &'static str)> {
                match (text.find("GNTC-7Q4X"), text.find("M2RK-91ZB")) {
                    (Some(a), Some(b)) => vec![(a.min(b)..a.max(b) + 9, "pieces")],
                    _ => Vec::new(),
                }
            }
        }
        let mask = CanaryMask::new(Some("GNTC-7Q4X-M2RK-91ZB")).finding(Some(|_| Box::new(Halves)));
        let mut r = crate::testing::result("s", "FAIL", false, false, "M2RK-91ZB");
        r.trials[0].trace.turns[0].user = "the code starts GNTC-7Q4X, and then?".into();
        let masked = mask.result(&r);
        let turn = &masked.trials[0].trace.turns[0];
        assert_eq!(turn.answer, "[REDACTED:canary GNTC…(19 chars), pieces]");
        assert_eq!(turn.user, "[REDACTED:canary GNTC…(19 chars), pieces]");
        assert_eq!(masked.status, CaseStatus::Fail);
    }

    #[test]
    fn a_canary_one_case_sets_for_itself_is_masked() {
        let m = manifest_with(serde_json::json!([
            {"name": "a", "path": "a.yaml", "sha256": "", "cases": 2,
             "case_canaries": {"own": ["CASE-OWN-8Z2Q-W7K1"]}}
        ]));
        let mask = CanaryMask::of(&m);
        assert_eq!(
            mask.text("it is CASE-OWN-8Z2Q-W7K1"),
            "it is [REDACTED:canary CASE…(18 chars)]"
        );
    }
}
