//! Output: [`Printer`], the one writer of every command's output on stdout, and [`warn`]
//! for warnings on stderr.
//!
//! Colour follows `--color` ([`set_color`]); left at `auto` it follows `anstream` (off when
//! the stream is not a terminal, off with `NO_COLOR`, on with `FORCE_COLOR`). When
//! the reader of stdout goes away (`gauntlet runs list | head -1`), the printer stops writing
//! and the command ends as it would have, with its own exit code: no panic, no error line.

use std::io::{self, Write};

/// When to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, unless `NO_COLOR` is set (`FORCE_COLOR` forces it on).
    Auto,
    /// Always, even into a pipe or a file.
    Always,
    /// Never.
    Never,
}

/// Sets colour for every stream of the process, once, before anything is written. An
/// explicit `--color` wins; at `auto`, `NO_COLOR` turns colour off and a `FORCE_COLOR` other
/// than empty or `0` turns it on (CI logs render colour, but are not terminals).
pub fn set_color(when: ColorWhen) {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    let choice = match when {
        ColorWhen::Always => anstream::ColorChoice::Always,
        ColorWhen::Never => anstream::ColorChoice::Never,
        ColorWhen::Auto if set("NO_COLOR") => anstream::ColorChoice::Never,
        ColorWhen::Auto
            if set("FORCE_COLOR") && std::env::var_os("FORCE_COLOR").is_some_and(|v| v != "0") =>
        {
            anstream::ColorChoice::Always
        }
        ColorWhen::Auto => anstream::ColorChoice::Auto,
    };
    choice.write_global();
}

/// Writes a command's output to stdout.
pub struct Printer {
    out: anstream::AutoStream<io::Stdout>,
    closed: bool,
}

impl Printer {
    /// A printer on stdout.
    pub fn stdout() -> Printer {
        Printer {
            out: anstream::AutoStream::auto(io::stdout()),
            closed: false,
        }
    }
}

impl Write for Printer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        match self.out.write(buf) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(buf.len())
            }
            r => r,
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        match self.out.flush() {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            r => r,
        }
    }
}

/// Prints a warning on stderr (`warning: ...`). A failure to write to stderr has nowhere to
/// be reported, so it is ignored.
pub fn warn(message: &str) {
    let _ = writeln!(anstream::stderr(), "warning: {message}");
}

/// Prints a note on stderr, such as how to continue an interrupted run.
pub fn note(message: &str) {
    let _ = writeln!(anstream::stderr(), "{message}");
}
