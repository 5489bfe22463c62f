//! The template engine and the page policy: [`render`] fills a named template (minijinja,
//! HTML autoescaping on every `.html` template), and [`csp`] gives the Content Security Policy
//! of each kind of page ([`PageKind`]).
//!
//! The stylesheet and the report script are constants of this crate; the policy allows exactly
//! them by their SHA-256, and nothing else: no other script, no style attribute, no connection,
//! no frame, no form target, and Trusted Types with no policy so that no HTML sink can be fed.

use std::io::Write;
use std::sync::OnceLock;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use minijinja::{Environment, UndefinedBehavior, Value, context};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// The stylesheet of every page.
pub const CSS: &str = include_str!("../../templates/report.css");
/// The script of the report page.
pub const JS: &str = include_str!("../../templates/report.js");

const TEMPLATES: [(&str, &str); 7] = [
    ("base.html", include_str!("../../templates/base.html")),
    ("macros.html", include_str!("../../templates/macros.html")),
    ("report.html", include_str!("../../templates/report.html")),
    ("compare.html", include_str!("../../templates/compare.html")),
    (
        "view_runs.html",
        include_str!("../../templates/view_runs.html"),
    ),
    (
        "view_label.html",
        include_str!("../../templates/view_label.html"),
    ),
    (
        "view_message.html",
        include_str!("../../templates/view_message.html"),
    ),
];

fn env() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        // A misspelt field is an error, not an empty cell.
        env.set_undefined_behavior(UndefinedBehavior::SemiStrict);
        for (name, src) in TEMPLATES {
            env.add_template(name, src)
                .unwrap_or_else(|e| panic!("template {name} does not parse: {e}"));
        }
        env
    })
}

fn sha256_source(s: &str) -> String {
    format!("'sha256-{}'", STANDARD.encode(Sha256::digest(s.as_bytes())))
}

/// What a page may do beyond showing itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageKind {
    /// The report: its own script, nothing else.
    Report,
    /// A page without script or form (the comparison, viewer messages).
    Static,
    /// A viewer page with forms that submit to the viewer itself.
    Forms,
}

/// The Content Security Policy of a kind of page (the same text goes in the page's `<meta>`
/// and, from the viewer, in the response header).
pub fn csp(kind: PageKind) -> String {
    static STYLE: OnceLock<String> = OnceLock::new();
    static SCRIPT: OnceLock<String> = OnceLock::new();
    let style = STYLE.get_or_init(|| sha256_source(CSS));
    let script = match kind {
        PageKind::Report => SCRIPT.get_or_init(|| sha256_source(JS)).as_str(),
        PageKind::Static | PageKind::Forms => "'none'",
    };
    let forms = if kind == PageKind::Forms {
        "'self'"
    } else {
        "'none'"
    };
    format!(
        "default-src 'none'; script-src {script}; style-src {style}; img-src data:; \
         connect-src 'none'; font-src 'none'; media-src 'none'; object-src 'none'; \
         frame-src 'none'; worker-src 'none'; manifest-src 'none'; form-action {forms}; \
         base-uri 'none'; require-trusted-types-for 'script'; trusted-types 'none'"
    )
}

/// Links back to the viewer's pages, when a page is served by `gauntlet view`.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Nav {
    /// The runs list.
    pub runs: String,
    /// The labelling page of this run, if any.
    pub label: Option<String>,
}

/// Renders template `name` with `page`'s fields and the parts every page shares, into `out`.
/// `extra` adds values that are not plain data (the report's streamed chunks).
pub fn render(
    name: &str,
    kind: PageKind,
    nav: Option<&Nav>,
    page: &impl Serialize,
    extra: Value,
    out: &mut dyn Write,
) -> Result<(), minijinja::Error> {
    let tmpl = env().get_template(name)?;
    let shared = context! {
        csp => csp(kind),
        css => Value::from_safe_string(CSS.to_owned()),
        js => Value::from_safe_string(JS.to_owned()),
        version => env!("CARGO_PKG_VERSION"),
        nav => nav.map(|n| Value::from(minijinja::value::Serde(n))),
    };
    let ctx =
        minijinja::value::merge_maps([shared, extra, Value::from(minijinja::value::Serde(page))]);
    tmpl.render_captured_to(ctx, out)?;
    Ok(())
}

/// Renders a page to a string.
pub fn render_string(
    name: &str,
    kind: PageKind,
    nav: Option<&Nav>,
    page: &impl Serialize,
) -> Result<String, minijinja::Error> {
    let mut out = Vec::new();
    render(name, kind, nav, page, Value::from(()), &mut out)?;
    Ok(String::from_utf8(out).expect("templates write UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_attributes_are_escaped() {
        #[derive(Serialize)]
        struct P {
            title: &'static str,
            text: &'static str,
        }
        let hostile = "\"><script>x()</script><img src=x onerror=y()>'&";
        let nav = Nav {
            runs: "/".into(),
            label: Some(hostile.into()),
        };
        let p = P {
            title: hostile,
            text: hostile,
        };
        let s = render_string("view_message.html", PageKind::Static, Some(&nav), &p).unwrap();
        assert!(!s.contains("<script"), "{s}");
        assert!(!s.contains("<img"), "{s}");
        assert!(!s.contains(hostile), "{s}");
        assert!(s.contains("&lt;script&gt;"), "{s}");
    }

    #[test]
    fn the_policy_allows_the_page_s_own_script_and_style_only() {
        let p = csp(PageKind::Report);
        assert!(p.starts_with("default-src 'none'"));
        assert!(p.contains(&sha256_source(JS)));
        assert!(p.contains(&sha256_source(CSS)));
        assert!(!p.contains("unsafe"));
        assert!(p.contains("connect-src 'none'"));
        assert!(csp(PageKind::Static).contains("script-src 'none'"));
        assert!(csp(PageKind::Forms).contains("form-action 'self'"));
    }
}
