//! The coding agent of `trajectory run` and `impact task`: [`CodingAgent`], either an
//! `exec:COMMAND` process or a chat model driven through the built-in coding loop
//! (`model:SPEC`, [`gauntlet_targets::codeloop`]; its named targets and prices come from the
//! caller's [`ModelSource`]). Both run one step in a workspace through
//! [`CodingAgent::run_in`] and give an [`AgentRun`] in the same terms (how it ended, output
//! bytes, wall time, cost), so the commands grade either the same way.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use gauntlet_core::cost::PriceTable;
use gauntlet_core::redact::Redactor;
use gauntlet_core::target::{TargetConfig, TargetKind};
use gauntlet_core::trace::{Trace, Usage};
use gauntlet_targets::codeloop::{CodingLoop, DEFAULT_CODING_STEPS, LoopEnd};
use gauntlet_targets::exec::{ExecTarget, FolderEnd};

use crate::Error;
use crate::trajectory::AgentEnd;

/// Settings of the built-in loop from the command line.
#[derive(Debug, Clone, Default)]
pub struct LoopOpts {
    /// Model calls per step (default [`DEFAULT_CODING_STEPS`]).
    pub max_steps: Option<u32>,
    /// Over the model's base URL.
    pub base_url: Option<String>,
    /// The variable holding the model's API key.
    pub api_key_env: Option<String>,
}

/// Where a `model:SPEC` agent's settings come from: the caller's config file (named
/// targets, `prices:`), which this crate does not read itself.
pub trait ModelSource {
    /// The target a spec names (`openai:MODEL`, or `NAME` of a configured target).
    fn target(&self, spec: &str) -> Result<TargetConfig, Error>;
    /// The prices the loop's cost is counted with.
    fn prices(&self) -> Result<PriceTable, Error>;
}

/// A coding agent: a process, or a model in the built-in loop.
pub enum CodingAgent {
    /// `exec:COMMAND`.
    Exec(ExecTarget),
    /// `model:SPEC`.
    Loop(CodingLoop),
}

/// What one step of a coding agent gave.
pub struct AgentRun {
    /// How it ended.
    pub end: AgentEnd,
    /// Bytes it produced: an exec agent's stdout and stderr, the loop's model output.
    pub output_bytes: u64,
    /// Wall time.
    pub elapsed: Duration,
    /// Cost: reported by an exec agent on stdout, priced for the loop; `None` is unknown.
    pub cost_usd: Option<f64>,
    /// The loop's model calls.
    pub model_calls: Option<u32>,
    /// The loop's tokens.
    pub tokens: Option<Usage>,
    /// The loop's trace (redacted when written).
    pub trace: Option<Trace>,
}

impl CodingAgent {
    /// Runs one step in `dir`: an exec agent reads `line` on stdin with `vars` set; the
    /// loop gets `prompt` as its user message. Either is cut off at `limit`.
    pub async fn run_in(
        &self,
        dir: &Path,
        line: &[u8],
        vars: &[(&str, String)],
        prompt: &str,
        session: &str,
        limit: Duration,
    ) -> AgentRun {
        match self {
            CodingAgent::Exec(agent) => {
                let run = agent.run_in(dir, line, vars, limit).await;
                AgentRun {
                    end: match run.end {
                        FolderEnd::Exited(code) => AgentEnd::Exited { code },
                        FolderEnd::Killed => AgentEnd::Killed,
                        FolderEnd::TimedOut => AgentEnd::TimedOut,
                        FolderEnd::NotStarted(reason) => AgentEnd::NotStarted { reason },
                    },
                    output_bytes: run.output_bytes,
                    elapsed: run.elapsed,
                    cost_usd: reported_cost(&run.stdout),
                    model_calls: None,
                    tokens: None,
                    trace: None,
                }
            }
            CodingAgent::Loop(l) => {
                let run = l.run_in(dir, prompt, session, limit).await;
                AgentRun {
                    end: match run.end {
                        LoopEnd::Finished => AgentEnd::Finished { steps: run.steps },
                        LoopEnd::StepLimit => AgentEnd::StepLimit { steps: run.steps },
                        LoopEnd::TimedOut => AgentEnd::TimedOut,
                        LoopEnd::ModelError { class, detail } => AgentEnd::ModelError {
                            class: class.to_owned(),
                            detail,
                        },
                    },
                    output_bytes: run.output_bytes,
                    elapsed: run.elapsed,
                    cost_usd: run.cost_usd,
                    model_calls: Some(run.steps),
                    tokens: Some(run.usage),
                    trace: Some(run.trace),
                }
            }
        }
    }
}

/// Writes a loop's trace to `path` as JSON (the trace object of a run's report), redacted.
pub fn write_trace(path: &Path, trace: &Trace, redactor: &Redactor) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(trace).expect("a trace serializes");
    std::fs::write(path, redactor.redact(&text).as_bytes())
}

/// Cost an exec agent reported on its stdout (`{"type":"usage","cost_usd":N}` lines).
fn reported_cost(stdout: &str) -> Option<f64> {
    let mut total = None;
    for line in stdout.lines() {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(line.trim())
            && v.get("type").and_then(|t| t.as_str()) == Some("usage")
            && let Some(c) = v.get("cost_usd").and_then(|c| c.as_f64())
            && c.is_finite()
            && c >= 0.0
        {
            total = Some(total.unwrap_or(0.0) + c);
        }
    }
    total
}

const AGENT_HINT: &str = "give `exec:COMMAND` (a program), or `model:SPEC` for a chat model in the built-in coding loop (`model:openai:MODEL`, `model:anthropic:MODEL`, `model:NAME` of a target in gauntlet.yaml); see docs/coding-agents.md";

/// The coding agent a spec names: `exec:COMMAND` (its relative paths resolved against
/// `base`, else the working directory; `extra` variables set for it, its own `env:`
/// winning), or `model:SPEC`, a chat-model target in the built-in loop (resolved through
/// `models`). `label` names where the spec came from.
pub fn coding_agent_with(
    spec: &str,
    label: &str,
    base: Option<&Path>,
    redactor: &mut Redactor,
    extra: BTreeMap<String, String>,
    opts: &LoopOpts,
    models: &dyn ModelSource,
) -> Result<CodingAgent, Error> {
    if let Some(model) = spec.trim().strip_prefix("model:") {
        return coding_loop(model.trim(), label, redactor, opts, models).map(CodingAgent::Loop);
    }
    let cfg =
        TargetConfig::parse(spec).map_err(|e| Error::usage(format!("{label}: {e}"), AGENT_HINT))?;
    let mut exec_cfg = match (cfg.kind, cfg.exec) {
        (Some(TargetKind::Exec), Some(e)) => e,
        _ => {
            return Err(Error::usage(
                format!("{label} `{spec}` is neither an exec agent nor a model"),
                AGENT_HINT,
            ));
        }
    };
    for (k, v) in extra {
        exec_cfg.env.entry(k).or_insert(v);
    }
    ExecTarget::new_in(&exec_cfg, base, redactor)
        .map(CodingAgent::Exec)
        .map_err(|e| Error::usage(format!("{label}: {e}"), "check the agent's command"))
}

fn coding_loop(
    spec: &str,
    label: &str,
    redactor: &mut Redactor,
    opts: &LoopOpts,
    models: &dyn ModelSource,
) -> Result<CodingLoop, Error> {
    let mut cfg = models.target(spec)?;
    if !matches!(
        cfg.kind,
        Some(
            TargetKind::Openai
                | TargetKind::OpenaiResponses
                | TargetKind::Anthropic
                | TargetKind::Fake
        )
    ) {
        return Err(Error::usage(
            format!("{label} `model:{spec}` is not a chat model"),
            "the built-in loop drives a chat model: model:openai:MODEL, model:anthropic:MODEL, or a gauntlet.yaml target of kind openai or anthropic",
        ));
    }
    if let Some(u) = &opts.base_url {
        cfg.base_url = Some(u.clone());
    }
    if let Some(k) = &opts.api_key_env {
        cfg.api_key_env = Some(k.clone());
    }
    gauntlet_suite::load::check_target(&cfg).map_err(|e| Error::Usage {
        message: e.to_string(),
        hint: e.hint(),
    })?;
    let model = gauntlet_targets::build_chat_model(&cfg, redactor).map_err(|e| {
        Error::usage(
            format!("{label} `model:{spec}`: {e}"),
            "check the model's settings and its API key variable",
        )
    })?;
    let prices = models.prices()?;
    Ok(CodingLoop::new(
        model,
        opts.max_steps.unwrap_or(DEFAULT_CODING_STEPS),
        prices,
        redactor.clone(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_lines_are_summed_and_none_is_unknown() {
        assert_eq!(reported_cost("hello\n"), None);
        assert_eq!(
            reported_cost(
                "{\"type\":\"usage\",\"cost_usd\":0.5}\n{\"type\":\"usage\",\"cost_usd\":0.25}\n"
            ),
            Some(0.75)
        );
        assert_eq!(
            reported_cost("{\"type\":\"usage\",\"cost_usd\":-1}\n"),
            None
        );
    }

    /// Specs as written, the built-in prices: no config file.
    struct NoConfig;

    impl ModelSource for NoConfig {
        fn target(&self, spec: &str) -> Result<TargetConfig, Error> {
            TargetConfig::parse(spec).map_err(|e| Error::plain(e.to_string()))
        }
        fn prices(&self) -> Result<PriceTable, Error> {
            Ok(PriceTable::builtin())
        }
    }

    #[test]
    fn an_agent_is_exec_or_a_model_and_nothing_else() {
        let o = LoopOpts::default();
        let build = |spec: &str| {
            coding_agent_with(
                spec,
                "--agent",
                None,
                &mut Redactor::default(),
                BTreeMap::new(),
                &o,
                &NoConfig,
            )
        };
        let e = build("http:http://x").err().unwrap();
        assert!(format!("{e:?}").contains("neither"), "{e:?}");
        let e = build("model:exec:ls").err().unwrap();
        assert!(format!("{e:?}").contains("not a chat model"), "{e:?}");
        assert!(matches!(
            build("model:fake:safe").unwrap(),
            CodingAgent::Loop(_)
        ));
        assert!(matches!(build("exec:true").unwrap(), CodingAgent::Exec(_)));
    }
}
