//! Hold-out slices: skipped by default, run with `--include-holdout`, and then reported only
//! as pass rates per slice. Every output a run leaves (terminal, report.json, junit.xml,
//! summary.md, report.html, results.sarif, the run store and what it renders, `runs show`,
//! `report RUN`, `trace`) is searched for the hold-out cases' input and answer text.

mod common;

use common::{code, examples, report, run, text};

const SECRETS: [&str; 4] = [
    "HOLDOUT-INPUT-Q7",
    "HOLDOUT-ANSWER-Z3",
    "HOLDOUT-INPUT-K2",
    "HOLDOUT-ANSWER-M5",
];

fn assert_clean(what: &str, bytes: &[u8]) {
    let s = String::from_utf8_lossy(bytes);
    for m in SECRETS {
        assert!(!s.contains(m), "{what} shows hold-out text {m}:\n{s}");
    }
}

fn assert_tree_clean(dir: &std::path::Path) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            assert_tree_clean(&p);
        } else {
            assert_clean(&p.display().to_string(), &std::fs::read(&p).unwrap());
        }
    }
}

#[test]
fn holdout_cases_are_skipped_unless_included() {
    let suite = examples().join("holdout/suite.yaml");
    let dir = tempfile::tempdir().unwrap();
    let o = run(&["run", suite.to_str().unwrap(), "-o", "out"], dir.path());
    assert_eq!(code(&o), 0, "{}", text(&o));
    let r = report(&dir.path().join("out"));
    assert_eq!(r["summary"]["cases"], 3);
    assert!(r["summary"].get("holdout").is_none());
    assert_tree_clean(dir.path());
}

#[test]
fn included_holdouts_are_only_rates_in_every_output() {
    let suite = examples().join("holdout/suite.yaml");
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        &[
            "run",
            suite.to_str().unwrap(),
            "--include-holdout",
            "-k",
            "2",
            "-o",
            "out",
            "-v",
            "--run-id",
            "rel1",
        ],
        dir.path(),
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_clean("the terminal", &o.stdout);
    assert_clean("stderr", &o.stderr);
    let t = text(&o);
    assert!(
        t.contains("Hold-out suite:holdout-demo 1/2 passed = 50%"),
        "{t}"
    );
    assert!(t.contains("tag:returns 0/1 passed"), "{t}");
    assert!(
        !t.contains("holdout-sunday") && !t.contains("holdout-exchange"),
        "{t}"
    );
    let r = report(&dir.path().join("out"));
    // The state and the counts are the development cases' only.
    assert_eq!(r["summary"]["cases"], 3);
    assert_eq!(r["summary"]["status"], "PASS");
    let slices = r["summary"]["holdout"].as_array().unwrap();
    assert_eq!(slices.len(), 3);
    assert_eq!(slices[0]["slice"], "suite:holdout-demo");
    assert_eq!(slices[0]["passed"], 1);
    assert_eq!(slices[0]["failed"], 1);
    let md = std::fs::read_to_string(dir.path().join("out/summary.md")).unwrap();
    assert!(md.contains("### Hold-out slices"), "{md}");
    let html = std::fs::read_to_string(dir.path().join("out/report.html")).unwrap();
    assert!(html.contains("gx-holdout"));
    for f in [
        "report.json",
        "junit.xml",
        "summary.md",
        "report.html",
        "results.sarif",
    ] {
        let p = dir.path().join("out").join(f);
        if p.exists() {
            assert_clean(f, &std::fs::read(&p).unwrap());
        }
    }
    // The store never received them: its file, and everything it renders.
    assert_tree_clean(dir.path());
    let o = run(&["runs", "show", "rel1", "--json"], dir.path());
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_clean("runs show", &o.stdout);
    let o = run(&["report", "rel1", "-o", "again"], dir.path());
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_tree_clean(&dir.path().join("again"));
    let o = run(&["trace", "holdout-sunday", "--run", "rel1"], dir.path());
    assert_ne!(code(&o), 0);
    assert_clean("trace", &o.stdout);
    assert_clean("trace", &o.stderr);
}

#[test]
fn validate_warns_on_a_large_suite_without_a_holdout_slice() {
    let dir = tempfile::tempdir().unwrap();
    let support = examples().join("support-agent/suite.yaml");
    let o = run(
        &[
            "validate",
            support.to_str().unwrap(),
            "--holdout-min-cases",
            "10",
        ],
        dir.path(),
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("has 21 cases and no hold-out slice"), "{err}");
    // Below the threshold, or with a hold-out slice, no warning; nor without a threshold.
    for args in [
        vec![
            "validate",
            support.to_str().unwrap(),
            "--holdout-min-cases",
            "30",
        ],
        vec!["validate", support.to_str().unwrap()],
    ] {
        let o = run(&args, dir.path());
        assert!(o.stderr.is_empty(), "{}", text(&o));
    }
    let holdout = examples().join("holdout/suite.yaml");
    let o = run(
        &[
            "validate",
            holdout.to_str().unwrap(),
            "--holdout-min-cases",
            "1",
        ],
        dir.path(),
    );
    assert!(o.stderr.is_empty(), "{}", text(&o));
    assert!(text(&o).contains("5 cases, 2 hold-out"), "{}", text(&o));
    // From the config file.
    std::fs::write(dir.path().join("gauntlet.yaml"), "holdout_min_cases: 5\n").unwrap();
    let o = run(&["validate", support.to_str().unwrap()], dir.path());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("holdout_min_cases in the config file"),
        "{}",
        text(&o)
    );
}
