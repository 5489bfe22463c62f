//! Text shortening shared by the graders and the report writers: [`clip`].
//!
//! Evidence and reasons quote model output, which can be any length; every crate that quotes
//! it cuts it the same way, so a reason reads alike in a verdict, the terminal and a report.

/// `s` cut to its first `n` characters with `…` appended when it is longer; unchanged
/// otherwise.
pub fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        let mut out: String = s.chars().take(n).collect();
        out.push('…');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clips_by_characters_and_marks_the_cut() {
        assert_eq!(clip("short", 5), "short");
        assert_eq!(clip("longer", 5), "longe…");
        assert_eq!(clip("żółwie", 3), "żół…");
        assert_eq!(clip("", 0), "");
    }
}
