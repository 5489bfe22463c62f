//! [`CliError`]: an error that ends a command with exit code 2 (usage or configuration),
//! printed as `error:` and `hint:` lines, or as the diagnostics of suite files.

use std::io::Write;
use std::sync::{Mutex, OnceLock};

use gauntlet_core::redact::Redactor;
use gauntlet_suite::Diagnostic;

use crate::out::shown;

/// Secrets of the command's own settings (a store's password), redacted from every error.
static SECRETS: OnceLock<Mutex<Redactor>> = OnceLock::new();

/// Registers a secret that no printed error may show.
pub fn redact_secret(name: &str, secret: &str) {
    SECRETS
        .get_or_init(|| Mutex::new(Redactor::new()))
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .add(name, secret);
}

/// Text with the registered secrets redacted.
pub fn redacted(text: &str) -> String {
    match SECRETS.get() {
        Some(r) => r
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .redact(text)
            .into_owned(),
        None => text.to_owned(),
    }
}

/// An error that ends a command with exit code 2.
#[derive(Debug)]
pub enum CliError {
    /// A usage or configuration problem: a message and a hint.
    Usage(String, Option<String>),
    /// Problems in suite files.
    Diagnostics(Vec<Diagnostic>),
}

impl CliError {
    /// A message with a hint the user can act on.
    pub fn usage(message: impl Into<String>, hint: impl Into<String>) -> Self {
        CliError::Usage(message.into(), Some(hint.into()))
    }

    /// A message with no hint.
    pub fn plain(message: impl Into<String>) -> Self {
        CliError::Usage(message.into(), None)
    }

    /// Prints the error on stderr (an error writing to stderr has nowhere to go).
    pub fn print(&self) {
        let mut err = anstream::stderr();
        match self {
            CliError::Usage(m, h) => {
                // Messages quote bodies, agents' stderr and suite text: shown, never obeyed.
                let _ = writeln!(err, "error: {}", shown(&redacted(m)));
                if let Some(h) = h {
                    let _ = writeln!(err, "hint: {}", shown(&redacted(h)));
                }
            }
            CliError::Diagnostics(ds) => {
                for d in ds {
                    let _ = write!(err, "{}", shown(&d.to_string()));
                }
                let _ = writeln!(
                    err,
                    "{} error{} found; nothing was run",
                    ds.len(),
                    if ds.len() == 1 { "" } else { "s" }
                );
            }
        }
    }
}

/// Writing to stdout failed for a reason other than its reader going away (which the
/// printer treats as the end of output, not an error).
impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::plain(format!("failed to write the output: {e}"))
    }
}

/// A coding-agent command's error keeps its message, hint or diagnostics.
impl From<gauntlet_coding::Error> for CliError {
    fn from(e: gauntlet_coding::Error) -> Self {
        match e {
            gauntlet_coding::Error::Usage { message, hint } => CliError::Usage(message, hint),
            gauntlet_coding::Error::Diagnostics(d) => CliError::Diagnostics(d),
            gauntlet_coding::Error::Io(e) => CliError::from(e),
        }
    }
}

/// The set-up a coding-agent library call asks the binary for (a named target, prices)
/// fails with the same message, hint or diagnostics.
impl From<CliError> for gauntlet_coding::Error {
    fn from(e: CliError) -> Self {
        match e {
            CliError::Usage(message, hint) => gauntlet_coding::Error::Usage { message, hint },
            CliError::Diagnostics(d) => gauntlet_coding::Error::Diagnostics(d),
        }
    }
}

/// The run API's errors keep their message and hint (or their diagnostics) as they are.
impl From<gauntlet_engine::EngineError> for CliError {
    fn from(e: gauntlet_engine::EngineError) -> Self {
        match e {
            gauntlet_engine::EngineError::Usage { message, hint } => CliError::Usage(message, hint),
            gauntlet_engine::EngineError::Diagnostics(d) => CliError::Diagnostics(d),
        }
    }
}
