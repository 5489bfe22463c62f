//! The header of a suite that is no file (the red-team corpus `builtin:owasp`, the harm
//! pack `builtin:harm`), written as a suite file would declare it: [`header`] returns the
//! YAML of its name, description, agent card (system prompt, tools and fixtures, canary)
//! and defaults, which `yaml::new_suite` then completes with the promoted case.
//!
//! What the run had from its command line stays there: a canary given with `--canary` may
//! be a real secret and is never written (the file is re-run with the same `--canary`), and
//! a system prompt given with `--system-prompt FILE` is named as `system_prompt_file`, not
//! copied, so the prompt's text stays in the one file that holds it.

use std::path::{Path, PathBuf};

use gauntlet_core::suite::{AgentCard, CaseDefaults};
use gauntlet_suite::LoadedSuite;
use serde::Serialize;

use crate::error::EngineError;

/// What a red-team run had from its command line.
#[derive(Debug, Clone, Default)]
pub struct RunInputs {
    /// `--canary`.
    pub canary: Option<String>,
    /// `--system-prompt FILE`, as found again from where the run started.
    pub system_prompt_file: Option<PathBuf>,
}

/// A suite file's header, in the order a person writes it.
#[derive(Serialize)]
struct Header<'a> {
    suite: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    agent: &'a AgentCard,
    #[serde(skip_serializing_if = "Option::is_none")]
    defaults: Option<&'a CaseDefaults>,
}

/// The default file: `NAME.regressions.yaml` in the current folder, after the built-in
/// suite's name (`owasp-redteam.regressions.yaml`).
pub fn default_path(s: &LoadedSuite) -> PathBuf {
    PathBuf::from(format!("{}.regressions.yaml", s.suite.suite))
}

/// The header of the built-in suite `s` for a file written at `path`.
pub fn header(s: &LoadedSuite, path: &Path, run: &RunInputs) -> Result<String, EngineError> {
    let mut agent = s.suite.agent.clone();
    if run.canary.is_some() {
        agent.canary = None;
    }
    if let Some(prompt) = &run.system_prompt_file {
        agent.system_prompt = None;
        agent.system_prompt_file = Some(relative_to_folder_of(prompt, path)?);
    }
    let defaults = (s.suite.defaults != CaseDefaults::default()).then_some(&s.suite.defaults);
    let head = Header {
        suite: &s.suite.suite,
        description: s.suite.description.as_deref(),
        agent: &agent,
        defaults,
    };
    let text = super::yaml::block(&head).ok_or_else(|| {
        EngineError::plain(format!("failed to write the header of `{}`", s.origin))
    })?;
    // A suite file is named by its file name: the folder it was run from is nobody else's.
    let (from, name) = if s.origin.starts_with("builtin:") {
        ("the built-in suite", s.origin.as_str())
    } else {
        let name = Path::new(&s.origin).file_name().and_then(|n| n.to_str());
        ("the suite", name.unwrap_or(&s.origin))
    };
    Ok(format!(
        "# Regressions from runs of {from} `{name}`: its app as a suite file declares it.\n{text}"
    ))
}

/// `prompt` as a path relative to the folder of `file`, which a suite may name: the prompt
/// must be in that folder or below it.
fn relative_to_folder_of(prompt: &Path, file: &Path) -> Result<String, EngineError> {
    let abs = |p: &Path| {
        std::path::absolute(p)
            .map_err(|e| EngineError::plain(format!("failed to resolve `{}`: {e}", p.display())))
    };
    let dir = abs(file)?
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let dir = dir.canonicalize().unwrap_or(dir);
    let prompt_abs = abs(prompt)?;
    let prompt_abs = prompt_abs.canonicalize().unwrap_or(prompt_abs);
    let rel = prompt_abs.strip_prefix(&dir).map_err(|_| {
        EngineError::usage(
            format!(
                "the run's system prompt `{}` is outside `{}`, the folder of the file to write",
                prompt.display(),
                dir.display()
            ),
            "write the file next to the prompt (--out DIR/NAME.yaml, DIR holding the prompt): the prompt is named, not copied",
        )
    })?;
    Ok(rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/"))
}
