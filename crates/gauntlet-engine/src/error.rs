//! [`EngineError`]: why a run (or its set-up) could not go ahead. Each carries the hint the
//! user can act on, or the diagnostics of suite files with their `file:line:column`; the
//! binary prints them as `error:` and `hint:` lines and exits 2.

use gauntlet_suite::Diagnostic;

/// An error of the run API: a configuration or usage problem, or bad suite files.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A problem with the settings, the store, a target or a file, and what to do about it.
    #[error("{message}")]
    Usage {
        /// What went wrong (lowercase, "failed to ..." where something failed).
        message: String,
        /// What the user can do about it.
        hint: Option<String>,
    },
    /// Problems in suite files, each with its position.
    #[error("{} problem(s) in suite files", .0.len())]
    Diagnostics(Vec<Diagnostic>),
}

impl EngineError {
    /// A message with a hint the user can act on.
    pub fn usage(message: impl Into<String>, hint: impl Into<String>) -> Self {
        EngineError::Usage {
            message: message.into(),
            hint: Some(hint.into()),
        }
    }

    /// A message with no hint.
    pub fn plain(message: impl Into<String>) -> Self {
        EngineError::Usage {
            message: message.into(),
            hint: None,
        }
    }

    /// The hint, if the error has one.
    pub fn hint(&self) -> Option<&str> {
        match self {
            EngineError::Usage { hint, .. } => hint.as_deref(),
            EngineError::Diagnostics(_) => None,
        }
    }
}

/// A store error, with the store's own hint.
pub fn store_err(e: gauntlet_store::StoreError) -> EngineError {
    EngineError::usage(e.to_string(), e.hint())
}

/// A warning or a note for the user, said while a run is set up or after it: the library
/// hands it over, the binary prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// Something the user should know may be wrong.
    Warning(String),
    /// Information: how to continue, what was exported.
    Note(String),
}
