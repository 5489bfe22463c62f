//! Output: [`Printer`], the one writer of every command's output on stdout, and [`warn`]
//! for warnings on stderr.
//!
//! Colour follows `anstream` (off when stdout is not a terminal, off with `NO_COLOR`). When
//! the reader of stdout goes away (`gauntlet runs list | head -1`), the printer stops writing
//! and the command ends as it would have, with its own exit code: no panic, no error line.

use std::io::{self, Write};

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
