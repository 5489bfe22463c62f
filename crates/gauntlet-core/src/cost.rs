//! Tokens and money: the [`PriceTable`] (built-in defaults, dated, overridden by
//! `prices:` in `gauntlet.yaml`) turns the token usage a trace records into [`Spend`]: calls,
//! tokens and US dollars, for a trial ([`TrialSpend`]: the agent's calls and each judge's
//! apart), a case, and a run ([`RunSpend`]).
//!
//! A price is never guessed. A model the table does not know leaves the cost *unknown*
//! (`cost_usd: null`, the model listed under `unpriced`), never zero, and a sum with an
//! unknown part is unknown too. A call answered from the response cache made no request: it
//! is counted under `cached` and costs nothing; its recorded usage is what the original call
//! used and is not counted again.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::trace::{Trace, Usage};

/// What a model's tokens cost, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Dollars per million prompt (input) tokens.
    pub input_per_mtok: f64,
    /// Dollars per million completion (output) tokens.
    pub output_per_mtok: f64,
}

impl Price {
    /// The cost of `usage` at this price.
    pub fn cost(&self, usage: Usage) -> f64 {
        (usage.input_tokens as f64 * self.input_per_mtok
            + usage.output_tokens as f64 * self.output_per_mtok)
            / 1_000_000.0
    }
}

/// The day the built-in prices were last checked against the providers' published prices.
pub const BUILTIN_PRICES_CHECKED: &str = "2026-12-01";

/// Built-in prices (USD per million input and output tokens), by model id or id prefix.
/// gauntlet's own fake models cost nothing.
const BUILTIN: &[(&str, f64, f64)] = &[
    ("gpt-5", 1.25, 10.0),
    ("gpt-5-mini", 0.25, 2.0),
    ("gpt-5-nano", 0.05, 0.40),
    ("gpt-4.1", 2.0, 8.0),
    ("gpt-4.1-mini", 0.40, 1.60),
    ("gpt-4.1-nano", 0.10, 0.40),
    ("gpt-4o", 2.50, 10.0),
    ("gpt-4o-mini", 0.15, 0.60),
    ("gpt-3.5-turbo", 0.50, 1.50),
    ("o1", 15.0, 60.0),
    ("o3", 2.0, 8.0),
    ("o3-mini", 1.10, 4.40),
    ("o4-mini", 1.10, 4.40),
    ("claude-opus-4-5", 5.0, 25.0),
    ("claude-opus-4-1", 15.0, 75.0),
    ("claude-opus-4", 15.0, 75.0),
    ("claude-sonnet-4-5", 3.0, 15.0),
    ("claude-sonnet-4", 3.0, 15.0),
    ("claude-3-7-sonnet", 3.0, 15.0),
    ("claude-3-5-sonnet", 3.0, 15.0),
    ("claude-haiku-4-5", 1.0, 5.0),
    ("claude-3-5-haiku", 0.80, 4.0),
    ("claude-3-haiku", 0.25, 1.25),
    ("gauntlet-fake", 0.0, 0.0),
];

/// Model prices: the built-in defaults with the project's own entries over them.
///
/// A model id is looked up exactly, then by the longest entry it starts with followed by
/// `-` or `@` (`gpt-4o-mini-2024-07-18` is priced as `gpt-4o-mini`, not as `gpt-4o`), so a
/// dated snapshot takes its family's price unless the table names it.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable {
    prices: BTreeMap<String, Price>,
    overridden: BTreeSet<String>,
}

impl Default for PriceTable {
    fn default() -> Self {
        Self::builtin()
    }
}

impl PriceTable {
    /// The built-in defaults (checked on [`BUILTIN_PRICES_CHECKED`]).
    pub fn builtin() -> Self {
        PriceTable {
            prices: BUILTIN
                .iter()
                .map(|(m, i, o)| {
                    (
                        (*m).to_owned(),
                        Price {
                            input_per_mtok: *i,
                            output_per_mtok: *o,
                        },
                    )
                })
                .collect(),
            overridden: BTreeSet::new(),
        }
    }

    /// No price at all (every cost is unknown).
    pub fn empty() -> Self {
        PriceTable {
            prices: BTreeMap::new(),
            overridden: BTreeSet::new(),
        }
    }

    /// The table with `entries` (from `gauntlet.yaml`) over it.
    pub fn with_overrides(mut self, entries: &BTreeMap<String, Price>) -> Self {
        for (m, p) in entries {
            self.prices.insert(m.clone(), *p);
            self.overridden.insert(m.clone());
        }
        self
    }

    /// The price of a model id, when the table has one.
    pub fn price(&self, model: &str) -> Option<Price> {
        if let Some(p) = self.prices.get(model) {
            return Some(*p);
        }
        self.prices
            .iter()
            .filter(|(k, _)| {
                model.len() > k.len()
                    && model.starts_with(k.as_str())
                    && matches!(model.as_bytes()[k.len()], b'-' | b'@' | b':')
            })
            .max_by_key(|(k, _)| k.len())
            .map(|(_, p)| *p)
    }

    /// Where the prices came from, for the manifest: the built-in date and the models the
    /// project priced itself.
    pub fn source(&self) -> String {
        if self.overridden.is_empty() {
            format!("built-in prices checked {BUILTIN_PRICES_CHECKED}")
        } else {
            format!(
                "built-in prices checked {BUILTIN_PRICES_CHECKED}; gauntlet.yaml prices for {}",
                self.overridden
                    .iter()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    }
}

/// Calls, tokens and money of some model calls.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Spend {
    /// Calls made (answers from the cache not included).
    #[serde(default)]
    pub calls: u64,
    /// Answers taken from the response cache: no request was made and nothing was spent.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached: u64,
    /// Prompt tokens of the calls made.
    #[serde(default)]
    pub input_tokens: u64,
    /// Completion tokens of the calls made.
    #[serde(default)]
    pub output_tokens: u64,
    /// US dollars, or `null` when a model that was called has no price (unknown, not zero).
    pub cost_usd: Option<f64>,
    /// The dollars of the calls whose model has a price: the known part of an unknown cost.
    #[serde(default, skip_serializing_if = "is_zero_f")]
    pub priced_usd: f64,
    /// Models called that the price table does not know.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub unpriced: BTreeSet<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_f(n: &f64) -> bool {
    *n == 0.0
}

impl Default for Spend {
    fn default() -> Self {
        Spend {
            calls: 0,
            cached: 0,
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: Some(0.0),
            priced_usd: 0.0,
            unpriced: BTreeSet::new(),
        }
    }
}

impl Spend {
    /// Nothing spent and nothing cached.
    pub fn is_empty(&self) -> bool {
        self.calls == 0 && self.cached == 0 && self.input_tokens == 0 && self.output_tokens == 0
    }

    /// Every token counted.
    pub fn tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }

    /// Counts one call of `model` that used `usage` (`cached`: answered from the cache).
    pub fn add_call(&mut self, prices: &PriceTable, model: &str, usage: Usage, cached: bool) {
        if cached {
            self.cached += 1;
            return;
        }
        self.calls += 1;
        self.input_tokens += usage.input_tokens;
        self.output_tokens += usage.output_tokens;
        match prices.price(model) {
            Some(p) => {
                let c = p.cost(usage);
                self.priced_usd += c;
                if let Some(total) = &mut self.cost_usd {
                    *total += c;
                }
            }
            None => {
                self.cost_usd = None;
                self.unpriced.insert(model.to_owned());
            }
        }
    }

    /// Adds another spend to this one (unknown stays unknown).
    pub fn add(&mut self, o: &Spend) {
        self.calls += o.calls;
        self.cached += o.cached;
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.priced_usd += o.priced_usd;
        self.cost_usd = match (self.cost_usd, o.cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
        self.unpriced.extend(o.unpriced.iter().cloned());
    }

    /// Calls, tokens and cost on one line: `12 calls (3 cached), 3456 tokens, $0.0012`.
    pub fn line(&self) -> String {
        let cached = if self.cached > 0 {
            format!(" ({} cached)", self.cached)
        } else {
            String::new()
        };
        format!(
            "{} call{}{cached}, {} tokens ({} in, {} out), {}",
            self.calls,
            if self.calls == 1 { "" } else { "s" },
            self.tokens(),
            self.input_tokens,
            self.output_tokens,
            self.cost_label()
        )
    }

    /// The cost as a person reads it: `$0.0123`, or `unknown (no price for m; $0.01 priced)`.
    pub fn cost_label(&self) -> String {
        match self.cost_usd {
            Some(c) => usd(c),
            None => {
                let models = self.unpriced.iter().cloned().collect::<Vec<_>>().join(", ");
                if self.priced_usd > 0.0 {
                    format!(
                        "unknown (no price for {models}; {} priced)",
                        usd(self.priced_usd)
                    )
                } else {
                    format!("unknown (no price for {models})")
                }
            }
        }
    }
}

/// Dollars with enough digits for small test runs: `$0.000123`, `$1.23`.
pub fn usd(v: f64) -> String {
    if v == 0.0 {
        "$0".to_owned()
    } else if v.abs() < 0.01 {
        format!("${v:.6}")
    } else {
        format!("${v:.4}")
    }
}

/// What one trial spent: the agent's model calls, each judge check's calls and each helper
/// model's (attacker, rewriter) calls apart.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct TrialSpend {
    /// The agent's model calls (the spans of the trace).
    #[serde(default)]
    pub agent: Spend,
    /// Model-judge calls, by judge check id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub judges: BTreeMap<String, Spend>,
    /// Helper-model calls, by role: the attacker of a strategy, the rewriter of a
    /// model-driven converter. They cost like any other call, so they count in the total.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub helpers: BTreeMap<String, Spend>,
}

impl TrialSpend {
    /// The spend a trace records, priced with `prices`: the agent's calls, the helpers', and
    /// every judge call, those of the final grading and those a strategy made while it
    /// played (scoring each exchange, or each reply of a tree). The agent's calls are priced
    /// by the model id each reply reported; a judge's by the id its answer reported, else the
    /// model asked for; a helper's by the id its answer reported.
    pub fn of(trace: &Trace, prices: &PriceTable) -> TrialSpend {
        let mut s = TrialSpend::default();
        for l in trace.llm_calls() {
            let model = l.model.as_deref().unwrap_or("(model not reported)");
            s.agent.add_call(prices, model, l.usage, l.cached);
        }
        // A call that failed in transport got no answer and reported no usage. The judges
        // that scored each exchange of an attacker loop or a crescendo, and each reply of a
        // tree while it grew, are calls like any other.
        s.add_judge_calls(prices, trace.all_judge_calls());
        for e in &trace.strategy {
            if let crate::trace::StrategyEvent::HelperCall(c) = e {
                let model = c.model.as_deref().unwrap_or("(model not reported)");
                s.helpers
                    .entry(c.role.as_str().to_owned())
                    .or_default()
                    .add_call(prices, model, c.usage, c.cached);
            }
        }
        s
    }

    /// Adds judge calls, each under its check, priced by the model its answer reported, else
    /// the model asked for.
    fn add_judge_calls<'t>(
        &mut self,
        prices: &PriceTable,
        calls: impl Iterator<Item = &'t crate::trace::JudgeSpan>,
    ) {
        for j in calls {
            let model = j.model.as_deref().unwrap_or(&j.configured_model);
            self.judges
                .entry(j.check.clone())
                .or_default()
                .add_call(prices, model, j.usage, j.cached);
        }
    }

    /// Whether nothing was called.
    pub fn is_empty(&self) -> bool {
        self.agent.is_empty()
            && self.judges.values().all(Spend::is_empty)
            && self.helpers.values().all(Spend::is_empty)
    }

    /// Every judge's calls together.
    pub fn judge_total(&self) -> Spend {
        let mut t = Spend::default();
        for s in self.judges.values() {
            t.add(s);
        }
        t
    }

    /// The agent's, the judges' and the helpers' calls together.
    pub fn total(&self) -> Spend {
        let mut t = self.agent.clone();
        t.add(&self.judge_total());
        for s in self.helpers.values() {
            t.add(s);
        }
        t
    }

    /// Adds another trial's (or case's) spend.
    pub fn add(&mut self, o: &TrialSpend) {
        self.agent.add(&o.agent);
        for (k, v) in &o.judges {
            self.judges.entry(k.clone()).or_default().add(v);
        }
        for (k, v) in &o.helpers {
            self.helpers.entry(k.clone()).or_default().add(v);
        }
    }
}

/// What a run spent: the agent, each judge check, each helper model, and the total.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct RunSpend {
    /// The agent's model calls.
    pub agent: Spend,
    /// Model-judge calls, by judge check id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub judges: BTreeMap<String, Spend>,
    /// Helper-model calls (attacker, rewriter), by role.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub helpers: BTreeMap<String, Spend>,
    /// Everything together.
    pub total: Spend,
    /// Trials whose agent answers came from the response cache (evidence `replay`).
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub replayed_trials: usize,
}

fn is_zero_usize(n: &usize) -> bool {
    *n == 0
}

impl RunSpend {
    /// Adds one trial.
    pub fn add_trial(&mut self, t: &TrialSpend, replayed: bool) {
        self.agent.add(&t.agent);
        for (k, v) in &t.judges {
            self.judges.entry(k.clone()).or_default().add(v);
        }
        for (k, v) in &t.helpers {
            self.helpers.entry(k.clone()).or_default().add(v);
        }
        self.total.add(&t.total());
        self.replayed_trials += usize::from(replayed);
    }

    /// Whether the run called no model at all.
    pub fn is_empty(&self) -> bool {
        self.total.is_empty()
    }
}

/// Limits on what a run may spend (`--max-cost`, `--max-total-tokens`): when one is reached, no
/// new trial starts, the run is INCONCLUSIVE and `--resume` continues it.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Budget {
    /// US dollars over every model call of the run, the judges' included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
    /// Tokens (input and output) over every model call of the run, the judges' included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
}

impl Budget {
    /// Whether a limit is set.
    pub fn is_set(&self) -> bool {
        self.max_cost_usd.is_some() || self.max_tokens.is_some()
    }

    /// The limit `spent` has reached, if any. An unknown cost counts its priced part: the
    /// run refuses to start a cost budget with a model it cannot price.
    pub fn reached(&self, spent: &Spend) -> Option<crate::score::BudgetStop> {
        if let Some(max) = self.max_cost_usd {
            let c = spent.cost_usd.unwrap_or(spent.priced_usd);
            if c >= max {
                return Some(crate::score::BudgetStop::Cost {
                    limit_micro_usd: (max * 1e6).round() as u64,
                });
            }
        }
        if let Some(max) = self.max_tokens
            && spent.tokens() >= max
        {
            return Some(crate::score::BudgetStop::Tokens { limit: max });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Message, TraceRecorder};

    #[test]
    fn a_dated_snapshot_takes_its_family_price_and_the_longest_prefix_wins() {
        let t = PriceTable::builtin();
        assert_eq!(
            t.price("gpt-4o-mini-2024-07-18").unwrap().input_per_mtok,
            0.15
        );
        assert_eq!(t.price("gpt-4o-2024-08-06").unwrap().input_per_mtok, 2.50);
        assert_eq!(t.price("gpt-4o").unwrap().output_per_mtok, 10.0);
        assert!(t.price("gpt-4omni").is_none());
        assert!(t.price("llama-3-8b").is_none());
        let mine = BTreeMap::from([(
            "llama-3-8b".to_owned(),
            Price {
                input_per_mtok: 0.0,
                output_per_mtok: 0.0,
            },
        )]);
        let t = t.with_overrides(&mine);
        assert_eq!(t.price("llama-3-8b").unwrap().input_per_mtok, 0.0);
        assert!(t.source().contains("llama-3-8b"));
    }

    #[test]
    fn an_unpriced_model_makes_the_cost_unknown_not_zero() {
        let t = PriceTable::builtin();
        let mut s = Spend::default();
        s.add_call(&t, "gpt-4o-mini", usage(1_000_000, 0), false);
        assert_eq!(s.cost_usd, Some(0.15));
        s.add_call(&t, "my-local-model", usage(10, 10), false);
        assert_eq!(s.cost_usd, None);
        assert_eq!(s.priced_usd, 0.15);
        assert!(
            s.cost_label()
                .starts_with("unknown (no price for my-local-model")
        );
        let mut sum = Spend::default();
        sum.add(&s);
        assert_eq!(sum.cost_usd, None, "a sum with an unknown part is unknown");
        assert_eq!(sum.tokens(), 1_000_020);
    }

    #[test]
    fn cached_calls_cost_nothing_and_count_apart() {
        let t = PriceTable::builtin();
        let mut rec = TraceRecorder::new();
        gpt4o_call(&mut rec, 1);
        gpt4o_call(&mut rec, 0);
        rec.mark_last_llm_cached();
        let s = TrialSpend::of(&rec.finish(), &t);
        assert_eq!((s.agent.calls, s.agent.cached), (1, 1));
        assert_eq!(s.agent.tokens(), 150);
        assert!((s.agent.cost_usd.unwrap() - 0.00075).abs() < 1e-12);
    }

    #[test]
    fn attacker_and_rewriter_calls_count_in_the_total() {
        let t = PriceTable::builtin();
        let mut rec = TraceRecorder::new();
        gpt4o_call(&mut rec, 1);
        let helper = |role, model: &str, u, cached| {
            crate::trace::StrategyEvent::HelperCall(crate::trace::HelperCall {
                role,
                turn: 0,
                converter: None,
                endpoint: "fake:attacker".into(),
                prompt: "attacker-v1".into(),
                seed: 0,
                model: Some(model.into()),
                messages_in: vec![Message::user("objective")],
                answer: "next message".into(),
                usage: u,
                latency_ms: 1,
                attempts: 1,
                cached,
                error: None,
            })
        };
        use crate::strategy::settings::HelperRole::{Attacker, Rewriter};
        rec.strategy(helper(Attacker, "gpt-4o", usage(1000, 200), false));
        rec.strategy(helper(Attacker, "gpt-4o", usage(1000, 200), true));
        rec.strategy(helper(Rewriter, "local-rewriter", usage(10, 10), false));
        let s = TrialSpend::of(&rec.finish(), &t);
        let attacker = &s.helpers["attacker"];
        assert_eq!(
            (attacker.calls, attacker.cached, attacker.tokens()),
            (1, 1, 1200)
        );
        assert_eq!(s.helpers["rewriter"].cost_usd, None, "an unpriced rewriter");
        let total = s.total();
        assert_eq!(total.calls, 3, "agent, attacker and rewriter calls");
        assert_eq!(total.tokens(), 150 + 1200 + 20);
        assert_eq!(
            total.cost_usd, None,
            "unknown, not zero, with an unpriced helper"
        );
        assert!(!s.is_empty());

        let mut run = RunSpend::default();
        run.add_trial(&s, false);
        assert_eq!(run.helpers["attacker"].calls, 1);
        assert_eq!(run.total.tokens(), 1370);
        // A budget counts what the attacker spent.
        let b = Budget {
            max_cost_usd: None,
            max_tokens: Some(1000),
        };
        assert!(b.reached(&run.total).is_some());
        assert_eq!(b.reached(&s.agent), None);
    }

    #[test]
    fn a_tree_s_judge_calls_are_spent_like_any_judge_s() {
        let t = PriceTable::builtin();
        let mut rec = TraceRecorder::new();
        let span = |cached| crate::trace::JudgeSpan {
            check: "jb".into(),
            configured_model: "gpt-4o".into(),
            usage: usage(100, 10),
            cached,
            ..Default::default()
        };
        rec.strategy(crate::trace::StrategyEvent::TreeNode(
            crate::trace::TreeNode {
                id: 1,
                judge_calls: vec![span(false), span(true)],
                ..Default::default()
            },
        ));
        let s = TrialSpend::of(&rec.finish(), &t);
        let jb = &s.judges["jb"];
        assert_eq!((jb.calls, jb.cached, jb.tokens()), (1, 1, 110));
        assert_eq!(s.total().calls, 1);
    }

    #[test]
    fn the_judge_calls_that_scored_an_attack_s_exchanges_are_spent_and_reach_a_budget() {
        let t = PriceTable::builtin();
        let mut rec = TraceRecorder::new();
        let span = |check: &str, cached| crate::trace::JudgeSpan {
            check: check.into(),
            configured_model: "gpt-4o".into(),
            usage: usage(300, 20),
            cached,
            ..Default::default()
        };
        for (turn, cached) in [(0, false), (1, true)] {
            rec.strategy(crate::trace::StrategyEvent::Score(
                crate::trace::TurnScore {
                    turn,
                    reached: false,
                    refused: false,
                    failed: Vec::new(),
                    not_assessed: Vec::new(),
                    judge: vec![span("jq", cached)],
                },
            ));
        }
        let mut trace = rec.finish();
        trace.judge = vec![span("jq", false)];
        let s = TrialSpend::of(&trace, &t);
        let jq = &s.judges["jq"];
        // The final grading's call and the two that scored the exchanges, one from the cache.
        assert_eq!((jq.calls, jq.cached, jq.tokens()), (2, 1, 640));
        assert_eq!(s.total().tokens(), 640);
        let b = Budget {
            max_cost_usd: None,
            max_tokens: Some(600),
        };
        assert!(b.reached(&s.total()).is_some());
    }

    #[test]
    fn a_budget_names_the_limit_it_reached() {
        let b = Budget {
            max_cost_usd: Some(0.5),
            max_tokens: Some(1000),
        };
        let mut s = Spend::default();
        assert_eq!(b.reached(&s), None);
        s.input_tokens = 1000;
        assert_eq!(
            b.reached(&s),
            Some(crate::score::BudgetStop::Tokens { limit: 1000 })
        );
        s.cost_usd = Some(0.6);
        assert_eq!(
            b.reached(&s),
            Some(crate::score::BudgetStop::Cost {
                limit_micro_usd: 500_000
            })
        );
    }

    /// A gpt-4o call of 100 tokens in and 50 out (`attempts` 0: answered from the cache).
    fn gpt4o_call(rec: &mut TraceRecorder, attempts: u32) {
        rec.llm_call(
            Some("gpt-4o".into()),
            vec![Message::user("hi")],
            Message::assistant("hello"),
            usage(100, 50),
            1,
            None,
            attempts,
        );
    }

    fn usage(i: u64, o: u64) -> Usage {
        Usage {
            input_tokens: i,
            output_tokens: o,
        }
    }
}
