//! Diagnostics for suite files: [`Diagnostic`] (file, line, column, message, hint) and its
//! rendering with a source snippet.

use std::fmt;

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
    /// The source line, for the snippet.
    pub source_line: Option<String>,
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
        let source_line = source
            .filter(|_| line > 0)
            .and_then(|s| s.lines().nth(line - 1))
            .map(str::to_owned);
        Diagnostic {
            file: file.to_owned(),
            line,
            column,
            message: message.into(),
            hint: None,
            source_line,
        }
    }

    /// A diagnostic about a whole file (no position).
    pub fn file(file: &str, message: impl Into<String>) -> Self {
        Self::at(file, None, 0, 0, message)
    }

    /// Adds a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
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
        writeln!(f, "error: {}: {}", self.location(), self.message)?;
        if let Some(src) = &self.source_line {
            let num = self.line.to_string();
            let pad = " ".repeat(num.len());
            writeln!(f, " {pad} |")?;
            writeln!(f, " {num} | {src}")?;
            let caret_pad: String = src
                .chars()
                .take(self.column.saturating_sub(1))
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            writeln!(f, " {pad} | {caret_pad}^")?;
        }
        if let Some(h) = &self.hint {
            writeln!(f, "hint: {h}")?;
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
