//! HTML: a start-tag tokenizer modelled on the HTML standard's ([`scan_tags`]), the judgement
//! of one tag and its attributes ([`analyze_tag`]: script, event handlers, URL attributes,
//! embedded content, meta refresh, CSS that runs script), `<script` anywhere, and autolinks.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use super::decode::decode_entities;
use super::url::{Hosts, Target, classify, normalize_url};
use super::{Hit, MarkupKind};

const fn is_html_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0C' | b'\r' | b' ')
}

struct Attr<'a> {
    /// Lowercased name.
    name: String,
    /// Raw value (entities not decoded); `None` for a bare attribute.
    value: Option<&'a str>,
}

/// Tokenizes start tags in `text[from..to]` the way the HTML standard's tokenizer does, with
/// one deliberate difference: a `<` inside a tag name or between attributes ends the tag, so
/// `<scr<script>` exposes the inner `<script>`.
pub(super) fn scan_tags(text: &str, from: usize, to: usize, hosts: &Hosts, hits: &mut Vec<Hit>) {
    let bytes = &text.as_bytes()[..to];
    let mut i = from;
    let mut svg_depth = 0usize;
    // (the `<` of an open `<style>`, where its content starts)
    let mut style_open: Option<(usize, usize)> = None;
    while let Some(rel) = memchr_lt(&bytes[i..]) {
        let lt = i + rel;
        let mut j = lt + 1;
        if j < to && bytes[j] == b'/' {
            // End tag: only its name matters (attributes on end tags are ignored by browsers).
            j += 1;
            let name_start = j;
            while j < to && bytes[j].is_ascii_alphanumeric() {
                j += 1;
            }
            let name = &text[name_start..j];
            if name.eq_ignore_ascii_case("svg") {
                svg_depth = svg_depth.saturating_sub(1);
            } else if name.eq_ignore_ascii_case("style")
                && let Some((open, content)) = style_open.take()
            {
                check_css(&text[content..lt], open, j, hosts, hits);
            }
            i = j;
            continue;
        }
        if j >= to || !bytes[j].is_ascii_alphabetic() {
            i = j;
            continue;
        }
        let name_start = j;
        while j < to && !is_html_space(bytes[j]) && !matches!(bytes[j], b'/' | b'>' | b'<') {
            j += 1;
        }
        let name = text[name_start..j].to_ascii_lowercase();
        let mut attrs: Vec<Attr> = Vec::new();
        let mut self_closing = false;
        let end;
        loop {
            while j < to && (is_html_space(bytes[j]) || bytes[j] == b'/') {
                self_closing = bytes[j] == b'/';
                j += 1;
            }
            if j >= to {
                end = to;
                break;
            }
            match bytes[j] {
                b'>' => {
                    end = j + 1;
                    break;
                }
                b'<' => {
                    end = j;
                    break;
                }
                _ => {}
            }
            self_closing = false;
            let an_start = j;
            j += 1; // the first character may be `=` (a parse error browsers keep in the name)
            while j < to
                && !is_html_space(bytes[j])
                && !matches!(bytes[j], b'/' | b'>' | b'=' | b'<')
            {
                j += 1;
            }
            let aname = text[an_start..j].to_ascii_lowercase();
            let mut k = j;
            while k < to && is_html_space(bytes[k]) {
                k += 1;
            }
            if k < to && bytes[k] == b'=' {
                k += 1;
                while k < to && is_html_space(bytes[k]) {
                    k += 1;
                }
                let value;
                if k < to && (bytes[k] == b'"' || bytes[k] == b'\'') {
                    let q = bytes[k];
                    let vs = k + 1;
                    let ve = bytes[vs..]
                        .iter()
                        .position(|&b| b == q)
                        .map_or(to, |p| vs + p);
                    value = &text[vs..ve];
                    j = (ve + 1).min(to);
                } else {
                    let vs = k;
                    while k < to && !is_html_space(bytes[k]) && bytes[k] != b'>' {
                        k += 1;
                    }
                    value = &text[vs..k];
                    j = k;
                }
                attrs.push(Attr {
                    name: aname,
                    value: Some(value),
                });
            } else {
                attrs.push(Attr {
                    name: aname,
                    value: None,
                });
            }
        }
        let in_svg = svg_depth > 0 || name == "svg";
        analyze_tag(lt, end, &name, &attrs, in_svg, hosts, hits);
        if name == "svg" && !self_closing {
            svg_depth += 1;
        }
        if name == "style" && !self_closing && style_open.is_none() {
            style_open = Some((lt, end));
        }
        i = end.max(lt + 1);
    }
    if let Some((open, content)) = style_open {
        check_css(&text[content..to], open, to, hosts, hits);
    }
}

fn memchr_lt(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'<')
}

/// Attributes whose value the browser follows as a URL (navigation, fetch or script) on the
/// element `tag`. Attributes that only some elements follow are limited to those, so that a
/// custom `data="javascript:..."` on a `<div>` (inert) does not count.
fn is_url_attr(tag: &str, name: &str) -> bool {
    match name {
        "href" | "src" | "action" | "formaction" | "xlink:href" | "background" | "poster"
        | "lowsrc" | "dynsrc" | "srcset" | "imagesrcset" | "ping" | "xml:base" => true,
        "data" => tag == "object",
        "code" | "codebase" | "archive" => matches!(tag, "applet" | "object" | "embed"),
        // SVG animation can set an `href` to any of these values.
        "to" | "from" | "values" | "by" => matches!(
            tag,
            "set" | "animate" | "animatemotion" | "animatetransform"
        ),
        _ => false,
    }
}

/// `on` followed by letters: an event handler, unless it is an English word that some page
/// might use as a custom attribute (no handler is named like these).
fn is_event_handler(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("on") else {
        return false;
    };
    rest.len() >= 3
        && rest.bytes().all(|b| b.is_ascii_lowercase())
        && !matches!(
            name,
            "onion"
                | "onions"
                | "onset"
                | "online"
                | "ongoing"
                | "onward"
                | "onwards"
                | "onboard"
                | "onboarding"
                | "onsite"
                | "onstage"
        )
}

/// What one start tag can do: run script, load or link to what it should not, embed
/// content, redirect. Each finding becomes a hit spanning the tag.
fn analyze_tag(
    start: usize,
    end: usize,
    name: &str,
    attrs: &[Attr],
    in_svg: bool,
    hosts: &Hosts,
    hits: &mut Vec<Hit>,
) {
    let script_kind = if in_svg {
        MarkupKind::SvgScript
    } else {
        MarkupKind::ScriptTag
    };
    let handler_kind = if in_svg {
        MarkupKind::SvgScript
    } else {
        MarkupKind::EventHandler
    };
    let mut add = |kind, encoded| hits.push(Hit::new(kind, start, end, encoded));
    if name == "script" {
        add(script_kind, false);
    }
    if attrs
        .iter()
        .any(|a| is_event_handler(&a.name) && a.value.is_some_and(|v| !v.trim().is_empty()))
    {
        add(handler_kind, false);
    }
    url_findings(name, attrs, hosts, &mut add);
    element_findings(name, attrs, hosts, &mut add);
}

/// What the tag's URL-valued attributes (and its `style`) point at: script and active data
/// URLs, images and links that carry data out, denied hosts. Each kind is one hit, encoded
/// only when every URL of that kind was hidden by encoding.
fn url_findings(name: &str, attrs: &[Attr], hosts: &Hosts, add: &mut dyn FnMut(MarkupKind, bool)) {
    let mut js: Option<bool> = None;
    let mut data: Option<bool> = None;
    let auto_loads = |attr_name: &str| match attr_name {
        "src" | "srcset" | "imagesrcset" | "poster" | "background" | "lowsrc" | "dynsrc" => {
            !matches!(
                name,
                "script"
                    | "iframe"
                    | "frame"
                    | "embed"
                    | "object"
                    | "applet"
                    | "portal"
                    | "fencedframe"
            )
        }
        "href" | "xlink:href" => matches!(name, "image" | "use" | "feimage"),
        _ => false,
    };
    let is_link = |attr_name: &str| {
        matches!(attr_name, "href" | "xlink:href") && matches!(name, "a" | "area")
    };
    let mut image_exfil: Option<bool> = None;
    let mut link_exfil: Option<bool> = None;
    let mut denied: Option<bool> = None;
    let note = |slot: &mut Option<bool>, encoded: bool| {
        *slot = Some(slot.map_or(encoded, |e| e && encoded));
    };

    for a in attrs {
        let Some(raw) = a.value else { continue };
        if a.name == "style" {
            if let Some(encoded) = css_runs_script(raw) {
                add(MarkupKind::StyleExpression, encoded);
            }
            // Browsers decode character references in attribute values before the CSS
            // parser sees them.
            let decoded = decode_entities(raw);
            for u in css_urls(&css_unescape(&decoded)) {
                let encoded = raw.contains('&') && !css_urls(&css_unescape(raw)).contains(&u);
                note_css_url(&u, encoded, hosts, &mut |k, e| match k {
                    MarkupKind::DeniedHost => note(&mut denied, e),
                    MarkupKind::HtmlImageExfil => note(&mut image_exfil, e),
                    _ => {}
                });
            }
            continue;
        }
        if !is_url_attr(name, &a.name) {
            continue;
        }
        let urls: Vec<&str> = match a.name.as_str() {
            // Candidate lists: `url 1x, url 2x`; animation value lists: `a;b;c`.
            "srcset" | "imagesrcset" => raw
                .split(',')
                .filter_map(|c| c.split_ascii_whitespace().next())
                .collect(),
            "values" => raw.split(';').collect(),
            "archive" => raw.split([',', ' ']).collect(),
            _ => vec![raw],
        };
        for u in urls {
            let (target, encoded) = classify_decoded(u);
            match target {
                Target::Script => note(&mut js, encoded),
                Target::ActiveData => note(&mut data, encoded),
                Target::Remote(r) if hosts.denies(&r.host) => note(&mut denied, encoded),
                Target::Remote(r) if !hosts.allows(&r.host) => {
                    if auto_loads(&a.name) && r.image_carries_data() {
                        note(&mut image_exfil, encoded);
                    } else if is_link(&a.name) && r.link_carries_data() {
                        note(&mut link_exfil, encoded);
                    }
                }
                _ => {}
            }
        }
    }
    if let Some(e) = js {
        add(MarkupKind::JavascriptUrl, e);
    }
    if let Some(e) = data {
        add(MarkupKind::DataUrl, e);
    }
    if let Some(e) = image_exfil {
        add(MarkupKind::HtmlImageExfil, e);
    }
    if let Some(e) = link_exfil {
        add(MarkupKind::HtmlLinkExfil, e);
    }
    if let Some(e) = denied {
        add(MarkupKind::DeniedHost, e);
    }
}

/// What the element itself does with its URL: embedded content from outside the allowed
/// hosts, a base or form that points outside, an outside stylesheet, a meta refresh.
fn element_findings(
    name: &str,
    attrs: &[Attr],
    hosts: &Hosts,
    add: &mut dyn FnMut(MarkupKind, bool),
) {
    let attr = |n: &str| attrs.iter().find(|a| a.name == n).and_then(|a| a.value);
    // Whether an element's URL points somewhere untrusted; a missing or relative URL is
    // same-origin.
    let outside = |v: Option<&str>| -> bool {
        v.map(classify_decoded).is_some_and(|(t, _)| match t {
            Target::Remote(r) => !hosts.allows(&r.host),
            Target::Script | Target::ActiveData => true,
            Target::Other => false,
        })
    };
    match name {
        "iframe" | "frame" | "object" | "embed" | "applet" | "portal" | "fencedframe" => {
            // Embedded content counts when it loads something from outside the allowed hosts
            // (or inline content). Without a source it is an empty box, which prose such as
            // "avoid <iframe> elements" produces.
            let nonempty = |n: &str| attr(n).filter(|v| !v.trim().is_empty());
            let url = nonempty("src")
                .or_else(|| nonempty("data"))
                .or_else(|| nonempty("code"))
                .or_else(|| nonempty("classid"));
            let allowed = url
                .map(classify_decoded)
                .is_some_and(|(t, _)| matches!(t, Target::Remote(r) if hosts.allows(&r.host)));
            if url.is_some() && !allowed || nonempty("srcdoc").is_some() {
                add(MarkupKind::EmbeddedContent, false);
            }
        }
        "base" if outside(attr("href")) => add(MarkupKind::EmbeddedContent, false),
        "form" if outside(attr("action")) => add(MarkupKind::EmbeddedContent, false),
        "link" => {
            let rel = attr("rel")
                .map(|r| r.to_ascii_lowercase())
                .unwrap_or_default();
            if rel
                .split_ascii_whitespace()
                .any(|r| r == "stylesheet" || r == "import")
                && outside(attr("href"))
            {
                add(MarkupKind::EmbeddedContent, false);
            }
        }
        "meta" => {
            let refresh = attr("http-equiv")
                .is_some_and(|v| decode_entities(v).trim().eq_ignore_ascii_case("refresh"));
            // A refresh to a relative URL stays on the site; one that leaves it or runs
            // script is a redirect the reply should not be able to make.
            if refresh
                && let Some(content) = attr("content")
                && let Some(url) = refresh_target(&decode_entities(content))
                && outside(Some(&url))
            {
                add(MarkupKind::MetaRefresh, false);
                if matches!(classify_decoded(&url).0, Target::Remote(r) if hosts.denies(&r.host)) {
                    add(MarkupKind::DeniedHost, false);
                }
            }
        }
        _ => {}
    }
}

/// The URL of a `<meta http-equiv=refresh content="5; url=...">`, if it names one.
fn refresh_target(content: &str) -> Option<String> {
    let (_, rest) = content.split_once([';', ','])?;
    let rest = rest.trim_start();
    let rest = if rest.get(..3).is_some_and(|p| p.eq_ignore_ascii_case("url")) {
        rest[3..]
            .trim_start()
            .strip_prefix('=')
            .map_or(rest, str::trim_start)
    } else {
        rest
    };
    let rest = rest.trim_matches(|c| c == '"' || c == '\'' || c == ' ');
    (!rest.is_empty()).then(|| rest.to_string())
}

/// Classifies a URL the way the browser sees it after decoding character references (as it
/// does in attribute values, and CommonMark in link destinations). `encoded` is true when the
/// decoding changed the verdict.
pub(super) fn classify_decoded(raw: &str) -> (Target, bool) {
    let plain = classify(&normalize_url(raw));
    if !raw.contains('&') {
        return (plain, false);
    }
    let decoded = classify(&normalize_url(&decode_entities(raw)));
    let encoded = std::mem::discriminant(&plain) != std::mem::discriminant(&decoded);
    (decoded, encoded)
}

/// A `<script` opening anywhere, including inside attribute values that the tokenizer skipped.
pub(super) fn scan_script_anywhere(text: &str, hits: &mut Vec<Hit>) {
    static SCRIPT_OPEN: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)<script(?:[\t\n\x0C\r />]|\z)").expect("valid regex"));
    let known: std::collections::HashSet<usize> = hits
        .iter()
        .filter(|h| matches!(h.kind, MarkupKind::ScriptTag | MarkupKind::SvgScript))
        .map(|h| h.start)
        .collect();
    for m in SCRIPT_OPEN.find_iter(text) {
        if !known.contains(&m.start()) {
            // The excerpt runs to the tag's `>` when it is near.
            let window = &text.as_bytes()[m.start()..text.len().min(m.start() + 120)];
            let end = window
                .iter()
                .position(|&c| c == b'>')
                .map_or(m.end(), |p| m.start() + p + 1);
            hits.push(Hit::new(MarkupKind::ScriptTag, m.start(), end, false));
        }
    }
}

/// CommonMark autolinks `<scheme:...>`: live links whose text is the URL, so only script,
/// active data and denied hosts count.
pub(super) fn scan_autolinks(text: &str, hosts: &Hosts, hits: &mut Vec<Hit>) {
    static AUTOLINK: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"<([A-Za-z][A-Za-z0-9+.\-]{1,31}:[^\x00-\x20<>]*)>").expect("valid regex")
    });
    for c in AUTOLINK.captures_iter(text) {
        let m = c.get(0).expect("group 0");
        let kind = match classify(&normalize_url(&c[1])) {
            Target::Script => MarkupKind::JavascriptUrl,
            Target::ActiveData => MarkupKind::DataUrl,
            Target::Remote(r) if hosts.denies(&r.host) => MarkupKind::DeniedHost,
            _ => continue,
        };
        hits.push(Hit::new(kind, m.start(), m.end(), false));
    }
}

/// CSS that runs script (old IE `expression()` and `behavior`, Firefox XBL `-moz-binding`,
/// `url(javascript:...)`), after undoing CSS escapes and comments. `Some(encoded)` when found.
fn css_runs_script(raw: &str) -> Option<bool> {
    let plain = css_dangerous(&css_unescape(raw));
    if plain {
        return Some(false);
    }
    if raw.contains('&') && css_dangerous(&css_unescape(&decode_entities(raw))) {
        return Some(true);
    }
    None
}

/// A `<style>` element whose content (from `open` to `end`) runs script, loads a resource
/// from a denied host, or carries data to an outside one.
fn check_css(css: &str, open: usize, end: usize, hosts: &Hosts, hits: &mut Vec<Hit>) {
    let css = css_unescape(css);
    if css_dangerous(&css) {
        hits.push(Hit::new(MarkupKind::StyleExpression, open, end, false));
    }
    let mut kinds: Vec<MarkupKind> = Vec::new();
    for u in css_urls(&css) {
        note_css_url(&u, false, hosts, &mut |k, _| {
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        });
    }
    for k in kinds {
        hits.push(Hit::new(k, open, end, false));
    }
}

/// The URLs a stylesheet fetches: `url(...)` (quoted or not), `@import "..."` and the strings
/// of `image-set(...)`. A browser loads them as soon as the rule applies, with no click, so
/// they are judged like an image's `src`.
fn css_urls(css: &str) -> Vec<String> {
    static CSS_URL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r#"(?i)\burl\(\s*(?:"([^"]*)"|'([^']*)'|([^)"'\s]*))\s*\)"#,
            r#"|@import\s+(?:"([^"]*)"|'([^']*)')"#,
            r#"|\bimage-set\(\s*(?:"([^"]*)"|'([^']*)')"#,
        ))
        .expect("valid regex")
    });
    if !css.contains('(') && !css.contains('@') {
        return Vec::new();
    }
    CSS_URL
        .captures_iter(css)
        .filter_map(|c| {
            (1..=7)
                .find_map(|i| c.get(i))
                .map(|m| m.as_str().trim().to_owned())
        })
        .filter(|u| !u.is_empty())
        .collect()
}

/// Reports a URL a stylesheet loads: any one to a denied host, and one to another outside
/// host when it carries data (the rule for images).
fn note_css_url(u: &str, encoded: bool, hosts: &Hosts, found: &mut impl FnMut(MarkupKind, bool)) {
    if let Target::Remote(r) = classify(&normalize_url(u)) {
        if hosts.denies(&r.host) {
            found(MarkupKind::DeniedHost, encoded);
        } else if !hosts.allows(&r.host) && r.image_carries_data() {
            found(MarkupKind::HtmlImageExfil, encoded);
        }
    }
}

fn css_dangerous(css: &str) -> bool {
    static CSS_SCRIPT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)expression\s*\(|(?:java|vb)script\s*:|-moz-binding|behavior\s*:")
            .expect("valid regex")
    });
    CSS_SCRIPT.is_match(css)
}

/// Undoes CSS escapes (`\65 ` is `e`, `\x` is `x`) and drops comments, which both hide
/// keywords like `exp/**/ression(`.
fn css_unescape(s: &str) -> Cow<'_, str> {
    if !s.contains('\\') && !s.contains("/*") {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("/*") {
            rest = rest.find("*/").map_or("", |p| &rest[p + 2..]);
            continue;
        }
        if c == '\\' {
            let after = &rest[1..];
            let hex: usize = after
                .bytes()
                .take(6)
                .take_while(u8::is_ascii_hexdigit)
                .count();
            if hex > 0 {
                let cp = u32::from_str_radix(&after[..hex], 16).unwrap_or(0xFFFD);
                out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                rest = &after[hex..];
                if rest.starts_with([' ', '\t', '\n']) {
                    rest = &rest[1..];
                }
            } else if let Some(n) = after.chars().next() {
                out.push(n);
                rest = &after[n.len_utf8()..];
            } else {
                rest = after;
            }
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}
