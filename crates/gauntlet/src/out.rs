//! Output: [`Printer`], the one writer of every command's output on stdout, and [`warn`]
//! for warnings on stderr.
//!
//! Colour follows `--color` ([`set_color`]); left at `auto` it follows `anstream` (off when
//! the stream is not a terminal, off with `NO_COLOR`, on with `FORCE_COLOR`). When
//! the reader of stdout goes away (`gauntlet runs list | head -1`), the printer stops writing
//! and the command ends as it would have, with its own exit code: no panic, no error line.
//!
//! Output quotes models, agents and suite files, all untrusted, so the printer lets through
//! no control character that could act on a terminal: the commands escape what they quote
//! ([`shown`]), and as a last guard the printer itself passes only colour sequences (`ESC [
//! … m`, which the commands' styles write) and shows every other escape sequence and
//! control character as a visible escape (`\x1b]0;…`), so a clear-screen, a window title or
//! a hyperlink that slipped through is seen, not obeyed.

use std::borrow::Cow;
use std::io::{self, Write};

use gauntlet_core::text::{escape_controls, is_hidden_control};

/// Untrusted text made safe to print: control characters shown as escapes.
pub fn shown(text: &str) -> Cow<'_, str> {
    escape_controls(text)
}

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
    guard: Guard,
}

impl Printer {
    /// A printer on stdout.
    pub fn stdout() -> Printer {
        Printer {
            out: anstream::AutoStream::auto(io::stdout()),
            closed: false,
            guard: Guard::default(),
        }
    }

    /// Writes `value` as pretty-printed JSON on a line of its own: a command's `--json`.
    pub fn json(&mut self, value: &impl serde::Serialize) -> io::Result<()> {
        let text = serde_json::to_string_pretty(value).map_err(io::Error::other)?;
        writeln!(self, "{text}")
    }

    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.closed || bytes.is_empty() {
            return Ok(());
        }
        match self.out.write_all(bytes) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            r => r,
        }
    }
}

impl Write for Printer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let safe = self.guard.filter(buf);
        self.send(&safe)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let rest = self.guard.finish();
        self.send(&rest)?;
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

impl Drop for Printer {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// The printer's last guard: passes text and colour sequences, escapes every other control
/// character. It keeps state across writes, because `write!` hands over a colour sequence
/// or a multi-byte character in pieces.
#[derive(Default)]
struct Guard {
    /// Bytes of an incomplete UTF-8 character at the end of the last write.
    partial: Vec<u8>,
    /// An escape sequence begun and not yet ended: `ESC`, or `ESC [` with parameters.
    sequence: String,
}

/// Longest colour sequence waited for; anything longer is not one of ours.
const MAX_SEQUENCE: usize = 32;

impl Guard {
    fn filter(&mut self, buf: &[u8]) -> Vec<u8> {
        let mut bytes = std::mem::take(&mut self.partial);
        bytes.extend_from_slice(buf);
        let mut out = String::with_capacity(bytes.len());
        let mut raw = Vec::new();
        let mut rest: &[u8] = &bytes;
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    self.chars(text, &mut out);
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    // Checked valid just above.
                    self.chars(std::str::from_utf8(valid).unwrap_or_default(), &mut out);
                    match e.error_len() {
                        // Not UTF-8: passed on as it is (no control character is a
                        // stray byte), in order with the text around it.
                        Some(n) => {
                            raw.extend_from_slice(out.as_bytes());
                            out.clear();
                            raw.extend_from_slice(&after[..n]);
                            rest = &after[n..];
                        }
                        // A character cut by the end of this write: wait for the rest.
                        None => {
                            self.partial = after.to_vec();
                            break;
                        }
                    }
                }
            }
        }
        raw.extend_from_slice(out.as_bytes());
        raw
    }

    fn chars(&mut self, text: &str, out: &mut String) {
        for c in text.chars() {
            if !self.sequence.is_empty() {
                let colour_so_far = self.sequence.len() > 1;
                if !colour_so_far && c == '[' {
                    self.sequence.push(c);
                    continue;
                }
                if colour_so_far
                    && (c.is_ascii_digit() || c == ';' || c == ':')
                    && self.sequence.len() < MAX_SEQUENCE
                {
                    self.sequence.push(c);
                    continue;
                }
                if colour_so_far && c == 'm' {
                    out.push_str(&self.sequence);
                    out.push('m');
                    self.sequence.clear();
                    continue;
                }
                // Not a colour sequence: shown, and `c` read afresh.
                out.push_str(&escape_controls(&self.sequence));
                self.sequence.clear();
            }
            if c == '\x1b' {
                self.sequence.push(c);
            } else if is_hidden_control(c) {
                out.push_str(&escape_controls(c.encode_utf8(&mut [0; 4])));
            } else {
                out.push(c);
            }
        }
    }

    /// What is held back, shown: at a flush, a sequence still open is not ours.
    fn finish(&mut self) -> Vec<u8> {
        let mut out = escape_controls(&std::mem::take(&mut self.sequence))
            .into_owned()
            .into_bytes();
        out.append(&mut self.partial);
        out
    }
}

/// Prints a warning on stderr (`warning: ...`). A failure to write to stderr has nowhere to
/// be reported, so it is ignored. Control characters in the message are shown as escapes.
pub fn warn(message: &str) {
    let _ = writeln!(anstream::stderr(), "warning: {}", shown(message));
}

/// Prints a note on stderr, such as how to continue an interrupted run.
pub fn note(message: &str) {
    let _ = writeln!(anstream::stderr(), "{}", shown(message));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guard over `pieces` written one after another, then flushed.
    fn guarded(pieces: &[&[u8]]) -> String {
        let mut g = Guard::default();
        let mut out = Vec::new();
        for p in pieces {
            out.extend(g.filter(p));
        }
        out.extend(g.finish());
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn colours_pass_and_every_other_sequence_is_shown() {
        let hostile = "\x1b[1m\x1b[32mPASS\x1b[0m \x1b[2J\x1b]0;title\x07 \x1b]8;;https://evil.example\x1b\\x\x1b]8;;\x1b\\ \0\r\u{9b}2J é\n";
        assert_eq!(
            guarded(&[hostile.as_bytes()]),
            "\x1b[1m\x1b[32mPASS\x1b[0m \\x1b[2J\\x1b]0;title\\x07 \\x1b]8;;https://evil.example\\x1b\\x\\x1b]8;;\\x1b\\ \\x00\\r\\u{9b}2J é\n"
        );
    }

    #[test]
    fn a_sequence_or_a_character_split_across_writes_is_read_whole() {
        let text = "a\x1b[31mred\x1b[0m é \x1b[2J z".as_bytes();
        let whole = guarded(&[text]);
        for at in 0..text.len() {
            let (a, b) = text.split_at(at);
            assert_eq!(guarded(&[a, b]), whole, "split at {at}");
        }
        assert_eq!(whole, "a\x1b[31mred\x1b[0m é \\x1b[2J z");
        // An escape left open at a flush is shown.
        assert_eq!(guarded(&[b"x\x1b["]), "x\\x1b[");
    }
}
