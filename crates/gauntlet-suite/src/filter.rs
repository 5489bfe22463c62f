//! Choosing cases: [`CaseFilter`] (`--filter key:glob`), [`Shard`] (`--shard i/n`), and
//! [`Selection`], the two together with an explicit id set (`--rerun-failed`); with
//! [`FilterError`] and [`ShardError`] for what does not parse.
//!
//! Filters with the same key are alternatives (OR); filters with different keys must all
//! hold (AND): `--filter pack:smoke --filter pack:refusal --filter owasp:LLM01` keeps smoke
//! or refusal cases in LLM01. Terms joined by `|` in one filter are alternatives whatever
//! their keys: `--filter 'tag:handoff|tag:coordination|pack:regression'` keeps a case that has
//! either tag or is in the regression pack. A bare word matches the case id. Globs take `*`
//! and `?`. `framework:NAME[:ID]` (`--framework`) keeps the cases whose compliance map
//! (`gauntlet_core::compliance`) names the framework, or that entry of it.

use std::collections::HashSet;
use std::fmt;
use std::num::ParseIntError;

use gauntlet_core::compliance::Selector;
use gauntlet_core::glob;
use gauntlet_core::suite::Case;

/// The keys a filter term may use.
pub const FILTER_KEYS: &[&str] = &[
    "id",
    "pack",
    "owasp",
    "technique",
    "tag",
    "kind",
    "framework",
];

/// Why a `--filter` term is not a filter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    /// A key that is not in [`FILTER_KEYS`].
    #[error("unknown filter key `{key}` in `{term}`; use one of: {}", FILTER_KEYS.join(", "))]
    UnknownKey {
        /// The key.
        key: String,
        /// The term it was in.
        term: String,
    },
    /// `key:` and nothing after it.
    #[error("filter `{0}` has no value")]
    NoValue(String),
    /// A `framework:` value that names no framework, or an id no case maps to.
    #[error(transparent)]
    Framework(#[from] gauntlet_core::compliance::SelectorError),
}

/// Why a `--shard` value is not a shard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// No `/`.
    #[error("`{0}` is not a shard; write i/n, e.g. 1/4")]
    NotAShard(String),
    /// The part before the `/` is not a number.
    #[error("bad shard index `{index}`")]
    Index {
        /// As written.
        index: String,
        /// Why it does not parse.
        #[source]
        source: ParseIntError,
    },
    /// The part after the `/` is not a number.
    #[error("bad shard count `{count}`")]
    Count {
        /// As written.
        count: String,
        /// Why it does not parse.
        #[source]
        source: ParseIntError,
    },
    /// `0/n`, or an index above the count.
    #[error("shard {index}/{total} is out of range; i runs from 1 to n")]
    OutOfRange {
        /// The index.
        index: u32,
        /// The count.
        total: u32,
    },
}

/// A set of filter terms.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CaseFilter {
    terms: Vec<(String, String)>,
    /// Groups of `|`-joined terms: each group holds when any of its terms does.
    any_of: Vec<Vec<(String, String)>>,
}

fn parse_term(t: &str) -> Result<(String, String), FilterError> {
    let (k, v) = match t.split_once(':') {
        Some((k, v)) => (k.trim().to_ascii_lowercase(), v.trim().to_owned()),
        None => ("id".to_owned(), t.to_owned()),
    };
    if !FILTER_KEYS.contains(&k.as_str()) {
        return Err(FilterError::UnknownKey {
            key: k,
            term: t.to_owned(),
        });
    }
    if v.is_empty() {
        return Err(FilterError::NoValue(t.to_owned()));
    }
    if k == "framework" {
        // Checked now, so that a misspelt framework is an error and not an empty run.
        Selector::parse(&v)?;
    }
    Ok((k, v))
}

fn term_matches(key: &str, pat: &str, case: &Case) -> bool {
    match key {
        "id" => glob(pat, &case.id),
        "pack" => case.pack.as_deref().is_some_and(|p| glob(pat, p)),
        "owasp" => case
            .owasp
            .as_deref()
            .is_some_and(|o| glob(&pat.to_ascii_uppercase(), o)),
        "technique" => case.technique.as_deref().is_some_and(|t| glob(pat, t)),
        "tag" => case.tags.iter().any(|t| glob(pat, t)),
        "kind" => glob(pat, case.kind.as_str()),
        "framework" => Selector::parse(pat)
            .is_ok_and(|s| s.matches(case.owasp.as_deref(), case.technique.as_deref())),
        _ => false,
    }
}

impl CaseFilter {
    /// Parses filter terms (`key:glob` or a bare id glob); several terms may be joined by commas.
    pub fn parse<S: AsRef<str>>(terms: &[S]) -> Result<CaseFilter, FilterError> {
        let mut out = CaseFilter::default();
        for raw in terms {
            for t in raw
                .as_ref()
                .split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty())
            {
                if t.contains('|') {
                    let group = t
                        .split('|')
                        .map(str::trim)
                        .filter(|x| !x.is_empty())
                        .map(parse_term)
                        .collect::<Result<Vec<_>, _>>()?;
                    out.any_of.push(group);
                } else {
                    out.terms.push(parse_term(t)?);
                }
            }
        }
        Ok(out)
    }

    /// Adds `key:value` alternatives (used by `--category LLM01,LLM02`).
    pub fn add(&mut self, key: &str, value: &str) {
        self.terms.push((key.to_owned(), value.to_owned()));
    }

    /// Whether no term is set.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty() && self.any_of.is_empty()
    }

    /// Whether the case passes the filter.
    pub fn matches(&self, case: &Case) -> bool {
        let grouped = self
            .any_of
            .iter()
            .all(|g| g.iter().any(|(k, pat)| term_matches(k, pat, case)));
        grouped
            && FILTER_KEYS.iter().all(|key| {
                let mut any_term = false;
                let mut any_match = false;
                for (k, pat) in &self.terms {
                    if k != key {
                        continue;
                    }
                    any_term = true;
                    any_match |= term_matches(key, pat, case);
                }
                !any_term || any_match
            })
    }
}

impl fmt::Display for CaseFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = self.terms.iter().map(|(k, v)| format!("{k}:{v}")).collect();
        parts.extend(self.any_of.iter().map(|g| {
            g.iter()
                .map(|(k, v)| format!("{k}:{v}"))
                .collect::<Vec<_>>()
                .join("|")
        }));
        f.write_str(&parts.join(","))
    }
}

/// A `--framework` value that no case of the run's suites maps to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmapped {
    /// The value as written.
    pub value: String,
    /// The entries of its framework that cases do map to (`atlas:AML.T0051`, ...).
    pub mapped: Vec<String>,
}

/// The first of `values` (`NAME[:ID]`) that selects no case of `cases`, with what its
/// framework does map, so that `--framework atlas:AML.T0020` is an error and not an empty
/// run. Values that do not parse are left to [`CaseFilter::parse`].
pub fn unmapped_framework<'a, I>(values: &[String], cases: I) -> Option<Unmapped>
where
    I: IntoIterator<Item = &'a Case>,
{
    let mapped: std::collections::BTreeSet<gauntlet_core::compliance::Ref> = cases
        .into_iter()
        .flat_map(|c| gauntlet_core::compliance::map(c.owasp.as_deref(), c.technique.as_deref()))
        .collect();
    values.iter().find_map(|v| {
        let sel = Selector::parse(v).ok()?;
        (!mapped.iter().any(|r| sel.selects(r))).then(|| Unmapped {
            value: v.clone(),
            mapped: mapped
                .iter()
                .filter(|r| r.framework == sel.framework)
                .map(ToString::to_string)
                .collect(),
        })
    })
}

/// One shard of a run: `--shard 2/4` keeps the cases whose id hashes to the 2nd of 4 buckets.
/// Hashing the id (not the position) keeps a case in its shard when others are added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based index.
    pub index: u32,
    /// Number of shards.
    pub total: u32,
}

impl Shard {
    /// Parses `i/n`.
    pub fn parse(s: &str) -> Result<Shard, ShardError> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| ShardError::NotAShard(s.to_owned()))?;
        let index: u32 = i.trim().parse().map_err(|source| ShardError::Index {
            index: i.to_owned(),
            source,
        })?;
        let total: u32 = n.trim().parse().map_err(|source| ShardError::Count {
            count: n.to_owned(),
            source,
        })?;
        if total == 0 || index == 0 || index > total {
            return Err(ShardError::OutOfRange { index, total });
        }
        Ok(Shard { index, total })
    }

    /// Whether the case belongs to this shard.
    pub fn contains(&self, case_id: &str) -> bool {
        // FNV-1a: stable across platforms and versions, unlike std's hasher.
        let mut h: u64 = 0xcbf29ce484222325;
        for b in case_id.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100000001b3);
        }
        (h % u64::from(self.total)) as u32 == self.index - 1
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.total)
    }
}

/// Which cases of the loaded suites a run takes: filter terms, a shard, and (re-running
/// failures) an explicit set of ids. All three must hold. Hold-out cases are left out
/// unless `include_holdout` (`--include-holdout`).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// `--filter` terms.
    pub filter: CaseFilter,
    /// `--shard i/n`.
    pub shard: Option<Shard>,
    /// Only these ids.
    pub only: Option<HashSet<String>>,
    /// Take hold-out cases too (`--include-holdout`).
    pub include_holdout: bool,
}

impl Selection {
    /// Whether the run takes this case.
    pub fn keeps(&self, case: &Case) -> bool {
        (self.include_holdout || !case.holdout)
            && self.filter.matches(case)
            && self.shard.is_none_or(|s| s.contains(&case.id))
            && self.only.as_ref().is_none_or(|o| o.contains(&case.id))
    }

    /// Whether the benign twin `twin_id` of `case` is taken: where its case is (the same
    /// filter and shard, so that a twin never runs in another shard than its case), or on
    /// its own id in a list of cases (`--rerun-failed` of a twin that failed).
    pub fn keeps_twin(&self, case: &Case, twin_id: &str) -> bool {
        (self.include_holdout || !case.holdout)
            && self.filter.matches(case)
            && self.shard.is_none_or(|s| s.contains(&case.id))
            && self
                .only
                .as_ref()
                .is_none_or(|o| o.contains(&case.id) || o.contains(twin_id))
    }

    /// Whether every case is taken (hold-out cases included).
    pub fn is_everything(&self) -> bool {
        self.filter.is_empty()
            && self.shard.is_none()
            && self.only.is_none()
            && self.include_holdout
    }

    /// How the selection reads in a manifest: `filter ...`, `shard i/n`, `only N case(s)`.
    pub fn labels(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.filter.is_empty() {
            out.push(format!("filter {}", self.filter));
        }
        if let Some(sh) = self.shard {
            out.push(format!("shard {sh}"));
        }
        if let Some(o) = &self.only {
            out.push(format!("only {} case(s)", o.len()));
        }
        if self.include_holdout {
            out.push("hold-out cases included".to_owned());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(id: &str, pack: Option<&str>, owasp: Option<&str>) -> Case {
        serde_json::from_value(serde_json::json!({
            "id": id, "pack": pack, "owasp": owasp, "input": "x", "expect": [{"contains": "y"}]
        }))
        .unwrap()
    }

    #[test]
    fn globs() {
        assert!(glob("leak-*", "leak-system-prompt"));
        assert!(glob("*prompt", "leak-system-prompt"));
        assert!(glob("l?ak*", "leak"));
        assert!(!glob("leak-*", "refund"));
        assert!(glob("*", ""));
    }

    #[test]
    fn same_key_ors_and_different_keys_and() {
        let f = CaseFilter::parse(&["pack:smoke", "pack:refusal,owasp:LLM01"]).unwrap();
        assert!(f.matches(&case("a", Some("smoke"), Some("LLM01"))));
        assert!(f.matches(&case("b", Some("refusal"), Some("LLM01"))));
        assert!(!f.matches(&case("c", Some("smoke"), Some("LLM02"))));
        assert!(!f.matches(&case("d", Some("regression"), Some("LLM01"))));
        assert!(CaseFilter::parse(&["bogus:x"]).is_err());
    }

    #[test]
    fn bar_joined_terms_are_alternatives_whatever_their_keys() {
        let mut handoff = case("h", Some("smoke"), None);
        handoff.tags = vec!["handoff".into()];
        let mut coord = case("c", None, None);
        coord.tags = vec!["coordination".into()];
        let regression = case("r", Some("regression"), None);
        let other = case("o", Some("smoke"), None);
        let f = CaseFilter::parse(&["tag:handoff|tag:coordination|pack:regression"]).unwrap();
        assert!(f.matches(&handoff) && f.matches(&coord) && f.matches(&regression));
        assert!(!f.matches(&other));
        // The same three as separate filters AND the keys: only the tagged regression cases.
        let anded =
            CaseFilter::parse(&["tag:handoff", "tag:coordination", "pack:regression"]).unwrap();
        assert!(!anded.matches(&handoff) && !anded.matches(&regression));
        assert_eq!(
            f.to_string(),
            "tag:handoff|tag:coordination|pack:regression"
        );
    }

    #[test]
    fn framework_terms_select_by_the_compliance_map() {
        let mut rag = case("rag", Some("security"), Some("LLM01"));
        rag.technique = Some("rag-html-comment".into());
        let mut leak = case("leak", Some("security"), Some("LLM07"));
        leak.technique = Some("verbatim-repeat".into());
        let mut bulk = case("bulk", Some("security"), Some("LLM06"));
        bulk.technique = Some("bulk-destructive-action".into());
        let plain = case("plain", Some("smoke"), None);
        let keeps = |term: &str| -> Vec<String> {
            let f = CaseFilter::parse(&[term]).unwrap();
            [&rag, &leak, &bulk, &plain]
                .into_iter()
                .filter(|c| f.matches(c))
                .map(|c| c.id.clone())
                .collect()
        };
        assert_eq!(keeps("framework:atlas"), ["rag", "leak", "bulk"]);
        assert_eq!(keeps("framework:atlas:AML.T0051.001"), ["rag"]);
        assert_eq!(keeps("framework:atlas:AML.T0051"), ["rag", "leak", "bulk"]);
        assert_eq!(keeps("framework:atlas:AML.T0056"), ["leak"]);
        assert_eq!(keeps("framework:owasp-llm:LLM07"), ["leak"]);
        assert_eq!(keeps("framework:owasp-agentic"), ["bulk"]);
        assert_eq!(keeps("framework:owasp-agentic:ASI02"), ["bulk"]);
        assert_eq!(
            keeps("framework:nist-ai-rmf:MEASURE-2.7"),
            ["rag", "leak", "bulk"]
        );
        assert_eq!(keeps("framework:nist-ai-rmf:MAP-3.5"), ["bulk"]);
        assert_eq!(keeps("framework:eu-ai-act"), ["rag", "leak", "bulk"]);
        assert_eq!(keeps("framework:eu-ai-act:Art.14"), ["bulk"]);
        // Alternatives of one key OR; a framework and another key AND.
        let f = CaseFilter::parse(&["framework:atlas:AML.T0056", "framework:eu-ai-act:Art.14"])
            .unwrap();
        assert!(f.matches(&leak) && f.matches(&bulk) && !f.matches(&rag));
        let f = CaseFilter::parse(&["framework:atlas", "owasp:LLM01"]).unwrap();
        assert!(f.matches(&rag) && !f.matches(&leak));
        for bad in [
            "framework:iso42001",
            "framework:atlas:AML.T9999",
            "framework:nist:GOVERN-9.9",
        ] {
            let err = CaseFilter::parse(&[bad]).unwrap_err();
            assert!(matches!(err, FilterError::Framework(_)), "{bad}: {err}");
        }
    }

    #[test]
    fn a_framework_value_no_case_maps_to_is_named_with_what_is_mapped() {
        let mut rag = case("rag", Some("security"), Some("LLM01"));
        rag.technique = Some("rag-html-comment".into());
        let cases = [rag, case("plain", None, None)];
        let ok = ["atlas:AML.T0070".to_owned(), "owasp-llm".to_owned()];
        assert_eq!(unmapped_framework(&ok, &cases), None);
        let miss = unmapped_framework(&["atlas".to_owned(), "atlas:AML.T0056".to_owned()], &cases)
            .expect("no case maps to AML.T0056");
        assert_eq!(miss.value, "atlas:AML.T0056");
        assert_eq!(miss.mapped, ["atlas:AML.T0051.001", "atlas:AML.T0070"]);
        let none = unmapped_framework(&["owasp-agentic".to_owned()], &cases).expect("none");
        assert!(none.mapped.is_empty());
    }

    #[test]
    fn shards_partition_the_cases() {
        let ids: Vec<String> = (0..200).map(|i| format!("case-{i}")).collect();
        let shards: Vec<Shard> = (1..=3).map(|i| Shard { index: i, total: 3 }).collect();
        for id in &ids {
            assert_eq!(shards.iter().filter(|s| s.contains(id)).count(), 1);
        }
        assert!(Shard::parse("0/3").is_err());
        assert!(Shard::parse("4/3").is_err());
        assert_eq!(Shard::parse("2/3").unwrap(), Shard { index: 2, total: 3 });
    }
}
