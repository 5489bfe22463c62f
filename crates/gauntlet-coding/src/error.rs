//! [`Error`]: why a coding-agent command could not give its report (a setting that cannot
//! work, files with diagnostics, a file system failure). The binary maps each to its exit
//! code and its `error:`/`hint:` lines.

use gauntlet_suite::Diagnostic;

/// Why a command of this crate stopped before its report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A usage or configuration problem: a message and, when there is one, a hint the user
    /// can act on.
    #[error("{message}")]
    Usage {
        /// What is wrong.
        message: String,
        /// What to do about it.
        hint: Option<String>,
    },
    /// Problems in an input file, each with file, line and column.
    #[error("{} problem(s) in the input files", .0.len())]
    Diagnostics(Vec<Diagnostic>),
    /// The workspace, a copy or a report could not be written or read.
    #[error("failed to write the output: {0}")]
    Io(#[from] std::io::Error),
}

impl Error {
    /// A message with a hint the user can act on.
    pub fn usage(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Error::Usage {
            message: message.into(),
            hint: Some(hint.into()),
        }
    }

    /// A message with no hint.
    pub fn plain(message: impl Into<String>) -> Self {
        Error::Usage {
            message: message.into(),
            hint: None,
        }
    }
}

impl From<Vec<Diagnostic>> for Error {
    fn from(d: Vec<Diagnostic>) -> Self {
        Error::Diagnostics(d)
    }
}
