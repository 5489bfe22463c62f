//! The coding agent a command names (`trajectory run`, `impact task`): `--agent` and the
//! built-in loop's flags ([`crate::cli::CodingLoopArgs`]) turned into a
//! [`gauntlet_coding::agent::CodingAgent`], with `model:NAME` targets and `prices:` read
//! from the config file through `setup` ([`ConfigModels`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gauntlet_coding::agent::{CodingAgent, LoopOpts, ModelSource, coding_agent_with};
use gauntlet_core::cost::PriceTable;
use gauntlet_core::redact::Redactor;
use gauntlet_core::target::TargetConfig;

use crate::cli::CodingLoopArgs;
use crate::error::CliError;

/// Named targets and prices from the config file (`--config`, else `gauntlet.yaml`).
pub struct ConfigModels {
    config: Option<PathBuf>,
}

impl ModelSource for ConfigModels {
    fn target(&self, spec: &str) -> Result<TargetConfig, gauntlet_coding::Error> {
        Ok(crate::setup::resolve_spec(spec, self.config.as_deref()).map_err(CliError::from)?)
    }

    fn prices(&self) -> Result<PriceTable, gauntlet_coding::Error> {
        Ok(crate::setup::prices(self.config.as_deref()).map_err(CliError::from)?)
    }
}

/// The coding agent `spec` names (see [`coding_agent_with`]), with the loop settings of the
/// command line.
pub fn coding_agent(
    spec: &str,
    label: &str,
    base: Option<&Path>,
    redactor: &mut Redactor,
    extra: BTreeMap<String, String>,
    args: &CodingLoopArgs,
) -> Result<CodingAgent, CliError> {
    let opts = LoopOpts {
        max_steps: args.max_steps,
        base_url: args.base_url.clone(),
        api_key_env: args.api_key_env.clone(),
    };
    let models = ConfigModels {
        config: args.config.clone(),
    };
    Ok(coding_agent_with(
        spec, label, base, redactor, extra, &opts, &models,
    )?)
}
