//! Short texts shared by the coding-agent reports: the tail of an agent's or a test's output
//! that fits a report ([`clip`]), a test's detail on one line ([`detail_suffix`]) and a name
//! made safe for a folder ([`slug`]).

/// The last 400 characters of `s`, trimmed, with control characters escaped: the end of an
/// output is where a failure says what went wrong.
pub fn clip(s: &str) -> String {
    let t = s.trim();
    let start = t.char_indices().rev().nth(400).map_or(0, |(i, _)| i);
    gauntlet_core::text::escape_controls(&t[start..]).into_owned()
}

/// A test's detail after its verdict on one line: ` - first | second`, or nothing.
pub fn detail_suffix(detail: Option<&str>) -> String {
    detail
        .map(|d| format!(" - {}", d.replace('\n', " | ")))
        .unwrap_or_default()
}

/// A folder name from an id: ASCII letters and digits kept, anything else `-`, at most 40.
pub fn slug(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(40)
        .collect()
}
