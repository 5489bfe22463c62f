//! Snapshots of what a run shows and writes: the terminal output, `junit.xml` and
//! `summary.md` of the support-agent example against `fake:safe` and of the built-in red
//! team against `fake:safe` and `fake:vulnerable`.
//!
//! Cases run one at a time (`-j 1`) so that they finish in plan order; durations,
//! timestamps, run ids and temporary paths are redacted. A change in any of these outputs
//! fails the test: review it with `cargo insta review` (or rerun with
//! `INSTA_UPDATE=always`) and commit the new snapshot with the change that caused it.

use std::path::Path;

mod common;

use common::{bin, code, root, text};

/// Regex filters that replace what differs from one run to the next.
fn redactions(tmp: &Path) -> Vec<(String, String)> {
    vec![
        // The temporary folder the run wrote into, wherever the OS puts it.
        (escape(&tmp.display().to_string()), "[tmp]".to_owned()),
        // Durations: `[   0.011s]` in the terminal, `time="0.011"` in JUnit, a model call's
        // latency (`· 7 ms ·`) in the traces of summary.md.
        (r"\[\s*\d+\.\d{3}s\]".to_owned(), "[duration]".to_owned()),
        (r"· \d+ ms ·".to_owned(), "· [duration] ·".to_owned()),
        (
            r#"time="\d+(\.\d+)?""#.to_owned(),
            r#"time="[duration]""#.to_owned(),
        ),
        // Run ids (`20261201T154732Z-fdc6`) and RFC 3339 timestamps.
        (
            r"\b\d{8}T\d{6}Z-[0-9a-f]{4}\b".to_owned(),
            "[run-id]".to_owned(),
        ),
        (
            r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})".to_owned(),
            "[timestamp]".to_owned(),
        ),
        // JUnit's suite timestamp, in the zone-less form Ant's schema wants.
        (
            r#"timestamp="\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}""#.to_owned(),
            r#"timestamp="[timestamp]""#.to_owned(),
        ),
    ]
}

/// `s` with the regex metacharacters escaped.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if r"\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Runs gauntlet from the repository root with `args` (and `-j 1 --no-store -o TMP/out`), and
/// snapshots the terminal output, `junit.xml` and `summary.md` under `name`.
fn snapshot_run(name: &str, args: &[&str], want_code: i32) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = bin()
        .args(args)
        .args(["-j", "1", "--no-store", "-o"])
        .arg(&out)
        .current_dir(root())
        .output()
        .expect("run gauntlet");
    assert_eq!(code(&o), want_code, "{}", text(&o));
    assert!(o.stderr.is_empty(), "{}", text(&o));
    let read =
        |f: &str| std::fs::read_to_string(out.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    let filters = redactions(tmp.path());
    let filters: Vec<(&str, &str)> = filters
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    insta::with_settings!({ filters => filters, prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!(format!("{name}.terminal"), String::from_utf8_lossy(&o.stdout));
        insta::assert_snapshot!(format!("{name}.junit.xml"), read("junit.xml"));
        insta::assert_snapshot!(format!("{name}.summary.md"), read("summary.md"));
    });
}

#[test]
fn the_support_agent_example_against_the_safe_persona() {
    snapshot_run(
        "support-agent-safe",
        &["run", "examples/support-agent/suite.yaml"],
        0,
    );
}

#[test]
fn the_red_team_against_the_safe_persona() {
    snapshot_run("redteam-safe", &["redteam", "--target", "fake:safe"], 0);
}

#[test]
fn the_red_team_against_the_vulnerable_persona() {
    snapshot_run(
        "redteam-vulnerable",
        &["redteam", "--target", "fake:vulnerable"],
        1,
    );
}

#[test]
fn the_redactions_cover_what_varies() {
    let tmp = Path::new("/tmp/.tmpAb12");
    let filters = redactions(tmp);
    let apply = |s: &str| {
        filters.iter().fold(s.to_owned(), |acc, (re, to)| {
            insta_regex(re).replace_all(&acc, to.as_str()).into_owned()
        })
    };
    assert_eq!(
        apply("PASS [   0.011s] x; run `20261201T154732Z-fdc6`; /tmp/.tmpAb12/out/report.json"),
        "PASS [duration] x; run `[run-id]`; [tmp]/out/report.json"
    );
    assert_eq!(
        apply(r#"time="0.049" at 2026-12-01T15:47:32.347349107Z"#),
        r#"time="[duration]" at [timestamp]"#
    );
    assert_eq!(
        apply(r#"<testsuite timestamp="2026-12-01T15:47:32" hostname="localhost">"#),
        r#"<testsuite timestamp="[timestamp]" hostname="localhost">"#
    );
    assert_eq!(
        apply("113 in / 98 out tokens · 7 ms · stop"),
        "113 in / 98 out tokens · [duration] · stop"
    );
}

/// The filters as insta compiles them (its `filters` feature uses the regex crate).
fn insta_regex(re: &str) -> regex::Regex {
    regex::Regex::new(re).expect("filter compiles")
}
