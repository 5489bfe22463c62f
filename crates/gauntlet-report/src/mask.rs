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
//! disguised leak (spelled out, encoded) is quoted as the reply wrote it, so that a reviewer
//! sees the disguise, as the canary detector's own excerpts do. The canaries are the run's
//! (`--canary`, or the corpus's for the red team, as recorded in the manifest's invocation)
//! and each suite's `agent.canary` (recorded with the suite in the manifest); a canary a
//! single case sets for itself is not in the manifest and is not masked.

use std::borrow::Cow;

use gauntlet_core::event::RunManifest;
use gauntlet_core::redact::Redactor;
use gauntlet_core::result::{CaseResult, CaseStatus};
use serde_json::Value;

/// Masks the run's canaries in case results.
#[derive(Debug, Clone, Default)]
pub struct CanaryMask {
    canaries: Vec<String>,
    redactor: Redactor,
}

/// `GNTC…(19 chars)`: the first characters of a secret (a quarter of it, at most 4) and its
/// length in characters.
pub fn masked(secret: &str) -> String {
    let n = secret.chars().count();
    let head: String = secret.chars().take((n / 4).min(4)).collect();
    format!("{head}…({n} chars)")
}

impl CanaryMask {
    /// The mask of the run's canaries, from its manifest: the invocation's and each suite's
    /// (none when the run recorded none).
    pub fn of(m: &RunManifest) -> CanaryMask {
        let run = m.invocation.as_ref().and_then(|i| i.canary.as_deref());
        CanaryMask::all(
            run.into_iter()
                .chain(m.suites.iter().filter_map(|s| s.canary.as_deref())),
        )
    }

    /// The mask of `canary`.
    pub fn new(canary: Option<&str>) -> CanaryMask {
        CanaryMask::all(canary)
    }

    /// The mask of every canary given (each once).
    pub fn all<'a>(canaries: impl IntoIterator<Item = &'a str>) -> CanaryMask {
        let mut redactor = Redactor::new();
        let mut kept: Vec<String> = Vec::new();
        for c in canaries {
            if kept.iter().any(|k| k == c) {
                continue;
            }
            redactor.add(&format!("canary {}", masked(c)), c);
            // The redactor turns down what is too short to mask safely.
            if redactor.redact(c) != c {
                kept.push(c.to_owned());
            }
        }
        CanaryMask {
            canaries: kept,
            redactor,
        }
    }

    /// `text` with the canary masked.
    pub fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        self.redactor.redact(text)
    }

    /// [`CanaryMask::result`] for the writers that quote a result's text only when it did not
    /// pass or a check in it failed (`summary.md`, `junit.xml`): a clean pass is written as
    /// its names and score, which come from the suite, so it is not masked. A suite's canary
    /// sits in every trace's system prompt, and masking each passing result would cost a run
    /// of passing cases two copies of every result for nothing.
    pub fn quoted<'a>(&self, r: &'a CaseResult) -> Cow<'a, CaseResult> {
        let clean = r.status == CaseStatus::Pass
            && crate::text::failed_checks(r).is_empty()
            // The names are written: a canary the suite put in one is still masked.
            && !self.canaries.iter().any(|c| {
                [&r.case.id, &r.case.name, &r.case.suite]
                    .iter()
                    .any(|s| s.contains(c.as_str()))
            });
        if clean {
            Cow::Borrowed(r)
        } else {
            self.result(r)
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
        if !mask_json(&self.redactor, &self.canaries, &mut v) {
            return Cow::Borrowed(r);
        }
        serde_json::from_value(v).map_or(Cow::Borrowed(r), Cow::Owned)
    }
}

/// Masks every string in `v`; whether any changed. A head of a canary longer than the
/// mask shows, cut with `…` by whoever quoted it, is masked as well: the rest was cut off,
/// but the head alone gives most of the secret away.
fn mask_json(red: &Redactor, canaries: &[String], v: &mut Value) -> bool {
    match v {
        Value::String(s) => {
            let mut out = red.redact(s).into_owned();
            let mut cut = false;
            for canary in canaries {
                cut |= mask_cut_heads(red, canary, &mut out);
            }
            let changed = cut || out != *s;
            if changed {
                *s = out;
            }
            changed
        }
        // Every element is masked: no short cut after the first change.
        Value::Array(a) => {
            a.iter_mut()
                .map(|x| mask_json(red, canaries, x))
                .filter(|&c| c)
                .count()
                > 0
        }
        Value::Object(o) => {
            o.values_mut()
                .map(|x| mask_json(red, canaries, x))
                .filter(|&c| c)
                .count()
                > 0
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
        assert!(mask_json(&m.redactor, &m.canaries, &mut v));
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

    #[test]
    fn every_suite_s_canary_is_masked_with_the_run_s() {
        let mut m: RunManifest = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "run_id": "r", "gauntlet_version": "0", "started_at": "t",
            "command": "run", "target": {"kind": "fake", "label": "fake"},
            "suites": [
                {"name": "a", "path": "a.yaml", "sha256": "", "cases": 1, "canary": "SHOP-KEY-5T8R-WQ62"},
                {"name": "b", "path": "b.yaml", "sha256": "", "cases": 1, "canary": "abc"},
                {"name": "c", "path": "c.yaml", "sha256": "", "cases": 1}
            ],
            "k": 1, "seed": 0, "planned_cases": 3, "evidence_level": "offline",
            "side_effects": "simulated", "dataset_revision": "-"
        }))
        .expect("manifest");
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
}
