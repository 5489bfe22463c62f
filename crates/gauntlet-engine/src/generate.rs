//! `gauntlet redteam generate`'s work: [`generate`] takes a [`GenerateRequest`] (a suite file,
//! a seed, a cap, an attacker model) and returns the [`GeneratedSuite`] that
//! `gauntlet_suite::generate` writes from the suite's agent card. With an attacker, each
//! attack's text goes through the model (the helper-model plumbing of attacker strategies,
//! `judge::ChatHelper`) once, and is read by the attacker loop's reader of attacker messages
//! (`gauntlet_graders::attack::classify`): a rewrite that is no attack is not used. The
//! binary writes the file and prints what was made.

use std::path::PathBuf;

use gauntlet_core::redact::Redactor;
use gauntlet_core::strategy::HelperModel;
use gauntlet_core::target::TargetConfig;
pub use gauntlet_suite::generate::{Authored, GeneratedCase, GeneratedSuite, RewriteAnswer};
use gauntlet_suite::generate::{GenerateRequest as Draw, generate as draw};

use crate::error::EngineError;
use crate::setup::{load_all, runtime};

/// What to generate.
#[derive(Debug, Clone, Default)]
pub struct GenerateRequest {
    /// The suite file whose agent card is attacked.
    pub suite: String,
    /// The seed (`--seed`).
    pub seed: u64,
    /// Most cases (`--n`).
    pub n: Option<usize>,
    /// The attacker model that rewrites each attack (`--attacker`); none: the templates.
    pub attacker: Option<TargetConfig>,
    /// Folders outside the suite's own that its files may come from.
    pub allow_paths: Vec<PathBuf>,
}

/// Generates the suite.
pub fn generate(req: &GenerateRequest) -> Result<GeneratedSuite, EngineError> {
    let mut loaded = load_all(
        std::slice::from_ref(&req.suite),
        None,
        None,
        None,
        &req.allow_paths,
    )?;
    let loaded = loaded.remove(0);
    let draw_req = Draw {
        suite: loaded.suite,
        system_prompt: loaded.system_prompt,
        source: req.suite.clone(),
        seed: req.seed,
        n: req.n,
        attacker: req.attacker.as_ref().map(TargetConfig::label),
    };
    let fail =
        |e: gauntlet_suite::generate::GenerateError| EngineError::usage(e.to_string(), e.hint());
    let Some(cfg) = &req.attacker else {
        return draw(&draw_req, None).map_err(fail);
    };
    let mut redactor = Redactor::new();
    let helper = crate::judge::ChatHelper::new(cfg, &mut redactor, None).map_err(|e| {
        EngineError::usage(
            e,
            "--attacker takes a model target: fake:attacker, openai:MODEL, anthropic:MODEL or a named one",
        )
    })?;
    let rt = runtime()?;
    // The attacker loop's reader of attacker messages: a rewrite that offers help, refuses,
    // echoes its instructions or loops is no attack, and the template's text is kept.
    let mut rewrite = |messages: &[gauntlet_core::trace::Message], seed: u64| {
        rt.block_on(helper.complete(messages, seed))
            .map(|r| RewriteAnswer {
                no_attack: gauntlet_graders::attack::classify(r.text.trim())
                    .no_attack()
                    .map(str::to_owned),
                text: r.text,
            })
            .map_err(|e| redactor.redact(&e).into_owned())
    };
    draw(&draw_req, Some(&mut rewrite)).map_err(fail)
}
