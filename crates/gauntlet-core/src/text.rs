//! Text shortening and escaping shared by the graders, the report writers and the terminal:
//! [`clip`] and [`escape_controls`].
//!
//! Evidence and reasons quote model output, which can be any length; every crate that quotes
//! it cuts it the same way, so a reason reads alike in a verdict, the terminal and a report.
//! Model output is also untrusted: shown raw on a terminal, its escape sequences would clear
//! the screen, retitle the window or plant hyperlinks, so every plain-text view shows control
//! characters as visible escapes instead.

use std::borrow::Cow;

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

/// Whether a character is shown as an escape by [`escape_controls`]: C0 controls but line
/// feed and tab, DEL, C1 controls (U+0080 to U+009F; U+009B starts a sequence on some
/// terminals as ESC [ does), and the bidirectional overrides and isolates, which reorder
/// what follows them on screen.
pub fn is_hidden_control(c: char) -> bool {
    match c {
        '\n' | '\t' => false,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

/// `s` with every control character that could act on a terminal (see
/// [`is_hidden_control`]) written as a visible escape: `\x1b` for ESC, `\r` for a carriage
/// return, `\u{202e}` for a right-to-left override. Line feeds and tabs stay, since layouts
/// need them. Borrowed when there is nothing to escape.
pub fn escape_controls(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_hidden_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if !is_hidden_control(c) {
            out.push(c);
        } else if c == '\r' {
            out.push_str("\\r");
        } else if (c as u32) < 0x80 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    Cow::Owned(out)
}

/// JSON text (as `serde_json` writes it) with every control character that could act on a
/// terminal written as a JSON escape (`\u202e`), so that it stays valid JSON when printed
/// through a writer that would otherwise make those characters visible in its own way.
/// Such characters can only stand inside JSON strings (the syntax is ASCII), where the
/// escape means the same character. Borrowed when there is nothing to escape.
pub fn json_escape_controls(json: &str) -> Cow<'_, str> {
    if !json.chars().any(is_hidden_control) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if is_hidden_control(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_with_hidden_controls_stays_json_and_shows_none_raw() {
        let v = serde_json::json!({"name": "rtl\u{202e}evil\u{202c} \u{85} \u{1b}[2J ok\nline"});
        let text = serde_json::to_string_pretty(&v).expect("json");
        assert!(text.contains('\u{202e}'), "serde_json leaves it raw");
        let safe = json_escape_controls(&text);
        assert!(!safe.chars().any(is_hidden_control), "{safe}");
        assert!(safe.contains("\\u202e"), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).expect("still JSON");
        assert_eq!(back, v);
        assert!(matches!(
            json_escape_controls("{\"a\": 1}"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn escapes_what_a_terminal_would_act_on_and_keeps_layout() {
        let hostile = "clear\x1b[2J\x1b[H title\x1b]0;pwned\x07 link\x1b]8;;https://evil.example\x1b\\here\x1b]8;;\x1b\\ nul\0 cr\r over \u{9b}31m rtl\u{202e}txt\nnext\tcol";
        let shown = escape_controls(hostile);
        assert_eq!(
            shown,
            "clear\\x1b[2J\\x1b[H title\\x1b]0;pwned\\x07 link\\x1b]8;;https://evil.example\\x1b\\here\\x1b]8;;\\x1b\\ nul\\x00 cr\\r over \\u{9b}31m rtl\\u{202e}txt\nnext\tcol"
        );
        assert!(!shown.chars().any(is_hidden_control));
        assert!(matches!(
            escape_controls("plain é text\n"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn clips_by_characters_and_marks_the_cut() {
        assert_eq!(clip("short", 5), "short");
        assert_eq!(clip("longer", 5), "longe…");
        assert_eq!(clip("żółwie", 3), "żół…");
        assert_eq!(clip("", 0), "");
    }
}
