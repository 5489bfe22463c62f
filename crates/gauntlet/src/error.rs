//! [`CliError`]: an error that ends a command with exit code 2 (usage or configuration),
//! printed as `error:` and `hint:` lines, or as the diagnostics of suite files.

use std::io::Write;

use gauntlet_suite::Diagnostic;

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
                let _ = writeln!(err, "error: {m}");
                if let Some(h) = h {
                    let _ = writeln!(err, "hint: {h}");
                }
            }
            CliError::Diagnostics(ds) => {
                for d in ds {
                    let _ = write!(err, "{d}");
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
