//! Diagnostics for suite files: [`Diagnostic`] (file, line, column, message, hint) and its
//! rendering with a source snippet.
//!
//! A suite file is untrusted input and may hold one enormous line (a generated file, a
//! minified JSON blob pasted into YAML): a diagnostic never copies the whole line. It keeps
//! a window of [`EXCERPT_CHARS`] characters around the column, marked with `…` where it was
//! cut, and messages and hints (which may quote a value from the file) are cut to
//! [`MAX_TEXT_CHARS`], so what is printed and what is held stay small whatever the file.

use std::fmt;

/// Most characters of the source line a diagnostic keeps: a window around the column.
pub const EXCERPT_CHARS: usize = 120;

/// Characters of the window kept before the column (the rest come after it).
const EXCERPT_BEFORE: usize = 40;

/// Most characters of a message or a hint (a value quoted from the file is cut).
pub const MAX_TEXT_CHARS: usize = 1000;

/// The marker where an excerpt was cut.
const CUT: char = '…';

/// One problem found in a suite file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file (as given on the command line, or `builtin:NAME`).
    pub file: String,
    /// Line, 1-based (0 when unknown).
    pub line: usize,
    /// Column, 1-based (0 when unknown).
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
    /// The source line, for the snippet: the whole line when it is short, else a window
    /// of [`EXCERPT_CHARS`] characters around the column, with `…` where it was cut.
    pub source_line: Option<String>,
    /// The column within `source_line` the caret points at (1-based; equals `column` when
    /// the line was not cut at its start).
    pub source_column: usize,
}

/// A window of the line around `column` (1-based, in characters) and the column within the
/// window. Reads only as far as the window's end, so a 50 MB line costs nothing.
fn excerpt(line: &str, column: usize) -> (String, usize) {
    let col = column.max(1);
    let start = col.saturating_sub(1 + EXCERPT_BEFORE);
    let mut chars = line.chars().skip(start);
    let mut out = String::new();
    if start > 0 {
        out.push(CUT);
    }
    out.extend(chars.by_ref().take(EXCERPT_CHARS));
    if chars.next().is_some() {
        out.push(CUT);
    }
    (out, col - start + usize::from(start > 0))
}

/// `text`, or its first [`MAX_TEXT_CHARS`] characters and a note of how much was cut.
fn clip_text(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(MAX_TEXT_CHARS) {
        None => std::borrow::Cow::Borrowed(text),
        Some((end, _)) => {
            let rest = text[end..].chars().count();
            std::borrow::Cow::Owned(format!(
                "{}{CUT} ({rest} more characters cut)",
                &text[..end]
            ))
        }
    }
}

impl Diagnostic {
    /// A diagnostic at a position, with the source line taken from `source`.
    pub fn at(
        file: &str,
        source: Option<&str>,
        line: usize,
        column: usize,
        message: impl Into<String>,
    ) -> Self {
        let (source_line, source_column) = source
            .filter(|_| line > 0)
            .and_then(|s| s.lines().nth(line - 1))
            .map(|l| excerpt(l, column))
            .unzip();
        let message = message.into();
        Diagnostic {
            file: file.to_owned(),
            line,
            column,
            message: clip_text(&message).into_owned(),
            hint: None,
            source_line,
            source_column: source_column.unwrap_or(column),
        }
    }

    /// A diagnostic about a whole file (no position).
    pub fn file(file: &str, message: impl Into<String>) -> Self {
        Self::at(file, None, 0, 0, message)
    }

    /// Adds a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(clip_text(&hint.into()).into_owned());
        self
    }

    /// `file:line:column` (or just the file).
    pub fn location(&self) -> String {
        if self.line == 0 {
            self.file.clone()
        } else {
            format!("{}:{}:{}", self.file, self.line, self.column)
        }
    }
}

impl fmt::Display for Diagnostic {
    /// Renders as:
    ///
    /// ```text
    /// error: suite.yaml:4:5: unknown key `expct`
    ///    |
    ///  4 |     expct: []
    ///    |     ^
    /// hint: did you mean `expect`?
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Cut again here: the fields are public, and a message set directly may be long.
        writeln!(
            f,
            "error: {}: {}",
            self.location(),
            clip_text(&self.message)
        )?;
        if let Some(src) = &self.source_line {
            let num = self.line.to_string();
            let pad = " ".repeat(num.len());
            writeln!(f, " {pad} |")?;
            writeln!(f, " {num} | {src}")?;
            let caret_pad: String = src
                .chars()
                .take(self.source_column.saturating_sub(1))
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            writeln!(f, " {pad} | {caret_pad}^")?;
        }
        if let Some(h) = &self.hint {
            writeln!(f, "hint: {}", clip_text(h))?;
        }
        Ok(())
    }
}

/// Suggests the closest of `candidates` to `word`, if one is close enough to be a typo.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}
