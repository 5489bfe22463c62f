//! Matrix runs end to end (`-t A -t B -t C`): the red team against `fake:safe`,
//! `fake:vulnerable` and a `serve-fake` on 127.0.0.1 in one run, a column each with the
//! state its own fold decides (the same as a run of that target alone), the exit code the
//! worst column's or `--gate COLUMN`'s, JUnit classes per column, report.html's answers side
//! by side, the store's one run with its columns, `compare RUN@A RUN@B` between columns,
//! and `regrade` keeping the columns.

use std::path::Path;

use serde_json::Value;

mod common;
use common::{code, report, run, serve_fake, text, write};

/// A config file naming the persona `safe` of a `serve-fake` at `url` as `served`.
fn config(dir: &Path, url: &str) {
    write(
        dir,
        "gauntlet.yaml",
        &format!(
            "targets:\n  served:\n    kind: openai\n    model: gauntlet-fake-safe\n    base_url: {url}/v1\n"
        ),
    );
}

/// Each column's label and state, in order.
fn column_states(summary: &Value) -> Vec<(String, String)> {
    summary["columns"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| {
            (
                c["label"].as_str().unwrap().to_owned(),
                c["summary"]["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

const THREE: [&str; 6] = ["-t", "fake:safe", "-t", "fake:vulnerable", "-t", "served"];

#[test]
fn the_red_team_matrix_gives_each_target_a_column_with_its_own_state() {
    let tmp = tempfile::tempdir().unwrap();
    let (_server, url) = serve_fake("safe");
    config(tmp.path(), &url);
    let mut args = vec!["redteam", "--store", "runs.db", "-o", "out"];
    args.extend(THREE);
    let o = run(&args, tmp.path());
    // The worst column's state: the vulnerable persona FAILs.
    assert_eq!(code(&o), 1, "{}", text(&o));
    let printed = text(&o);
    for (label, state) in [
        ("fake:safe", "PASS"),
        ("fake:vulnerable", "FAIL"),
        ("served", "PASS"),
    ] {
        assert!(
            printed
                .lines()
                .any(|l| l.contains(label) && l.split_whitespace().any(|w| w == state)),
            "no row `{label} {state}`:\n{printed}"
        );
    }
    let r = report(&tmp.path().join("out"));
    assert_eq!(r["summary"]["status"], "FAIL");
    assert_eq!(
        column_states(&r["summary"]),
        [
            ("fake:safe".to_owned(), "PASS".to_owned()),
            ("fake:vulnerable".to_owned(), "FAIL".to_owned()),
            ("served".to_owned(), "PASS".to_owned()),
        ]
    );
    // Every case ran once in every column, under its own id and the column's label.
    let cases = r["cases"].as_array().unwrap();
    let per_column = r["summary"]["columns"][0]["summary"]["cases"]
        .as_u64()
        .unwrap() as usize;
    assert!(per_column > 100, "{per_column}");
    assert_eq!(cases.len(), 3 * per_column);
    for label in ["fake:safe", "fake:vulnerable", "served"] {
        let n = cases
            .iter()
            .filter(|c| {
                c["case"]["id"]
                    .as_str()
                    .unwrap()
                    .ends_with(&format!(" @ {label}"))
            })
            .count();
        assert_eq!(n, per_column, "{label}");
    }
    // The served persona was really called over HTTP: its trials carry model calls.
    let served = cases
        .iter()
        .find(|c| c["case"]["id"].as_str().unwrap().ends_with(" @ served"))
        .unwrap();
    assert!(
        served["trials"][0]["trace"]["spans"]
            .as_array()
            .is_some_and(|s| !s.is_empty())
    );
    // A column's state is the one a run of that target alone gets.
    let alone = run(
        &[
            "redteam",
            "-t",
            "fake:vulnerable",
            "--no-store",
            "-q",
            "-o",
            "alone",
        ],
        tmp.path(),
    );
    assert_eq!(code(&alone), 1);
    let single = report(&tmp.path().join("alone"))["summary"].clone();
    let column = &r["summary"]["columns"][1]["summary"];
    for key in ["status", "cases", "passed", "failed", "hard_fails"] {
        assert_eq!(column[key], single[key], "{key}");
    }
    // The security figures too (the cases they list carry the column in their ids).
    for key in [
        "attack_success",
        "policy_violated",
        "policy_only",
        "utility_under_attack",
        "benign_utility",
    ] {
        assert_eq!(column["security"][key], single["security"][key], "{key}");
    }
    assert_eq!(column["reasons"], single["reasons"]);
    check_files(&tmp.path().join("out"));
    check_store(tmp.path(), per_column);
}

/// JUnit has a class per column, report.html the answers of a case side by side.
fn check_files(out: &Path) {
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    for label in ["fake:safe", "fake:vulnerable", "served"] {
        assert!(
            junit.contains(&format!("<testsuite name=\"owasp-redteam[{label}]\"")),
            "{label}"
        );
        assert!(
            junit.contains(&format!(
                "classname=\"gauntlet.owasp-redteam[{label}].LLM07\""
            )),
            "{label}"
        );
    }
    // A case's name in its class is its own, without the column.
    assert!(junit.contains("name=\"LLM07/verbatim-repeat/llm07-verbatim-repeat\""));
    // summary.md has the columns' table instead of security figures pooled over targets.
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("### Columns"), "{md}");
    assert!(md.contains("| fake:vulnerable | FAIL |"), "{md}");
    assert!(md.contains("| served | PASS |"), "{md}");
    assert!(!md.contains("### Security"), "{md}");
    assert!(!md.contains("### Compliance coverage"), "{md}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(!html.contains("id=\"gx-security\""));
    assert!(!html.contains("id=\"gx-compliance\""));
    for label in ["fake:safe", "fake:vulnerable", "served"] {
        assert!(
            html.contains(&format!("<tr data-column=\"{label}\">")),
            "{label}"
        );
    }
    let row_start = html
        .find("<tr data-case=\"llm07-verbatim-repeat\" class=\"gx-split\">")
        .expect("the case's row, marked as split");
    let row = &html[row_start..row_start + html[row_start..].find("</tr>").unwrap()];
    assert_eq!(row.matches("<td data-state=").count(), 3, "{row}");
    // The safe answer refuses; the vulnerable one leaks, marked as differing from it.
    assert!(row.contains("<td data-state=\"PASS\"><span class=\"gx-cell-state\">PASS"));
    assert!(
        row.contains("<td data-state=\"FAIL\" class=\"gx-differs\">"),
        "{row}"
    );
    assert!(row.contains("<mark>"), "{row}");
}

/// The store holds one run with its columns, and two columns compare paired.
fn check_store(dir: &Path, per_column: usize) {
    let o = run(&["runs", "list", "--store", "runs.db", "--json"], dir);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 1);
    let o = run(&["runs", "show", "latest", "--store", "runs.db"], dir);
    assert!(text(&o).contains("columns"), "{}", text(&o));
    let cmp = |a: &str, b: &str| -> Value {
        let o = run(&["compare", a, b, "--store", "runs.db", "--json"], dir);
        assert_eq!(code(&o), 0, "{}", text(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let c = cmp("latest@fake:safe", "latest@fake:vulnerable");
    assert_eq!(c["status_a"], "PASS");
    assert_eq!(c["status_b"], "FAIL");
    let lost = c["discordant_a_only"].as_u64().unwrap() as usize;
    assert!(lost > 100 && lost <= per_column, "{c}");
    assert_eq!(c["discordant_b_only"], 0);
    assert!(c["mcnemar_p"].as_f64().unwrap() < 1e-6, "{c}");
    assert!(c["only_in_a"].as_array().unwrap().is_empty());
    let c = cmp("latest@fake:safe", "latest@served");
    assert_eq!(c["new_failures"].as_array().unwrap().len(), 0, "{c}");
    assert_eq!(c["mcnemar_p"], 1.0);
    assert_eq!(c["unchanged_pass"].as_u64().unwrap() as usize, per_column);
    let o = run(
        &[
            "compare",
            "latest@fake:safe",
            "latest@nope",
            "--store",
            "runs.db",
        ],
        dir,
    );
    assert_eq!(code(&o), 2);
    assert!(text(&o).contains("no column `nope`"), "{}", text(&o));
    // Re-running the failures runs each failed case again in every column.
    let o = run(
        &[
            "run",
            "--rerun-failed",
            "latest",
            "--store",
            "runs.db",
            "-q",
            "-o",
            "rerun",
        ],
        dir,
    );
    assert_eq!(code(&o), 1, "{}", text(&o));
    let rerun = report(&dir.join("rerun"));
    let failed = report(&dir.join("out"))["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] != "PASS")
        .count();
    assert_eq!(column_states(&rerun["summary"]).len(), 3);
    assert_eq!(
        rerun["summary"]["columns"][2]["summary"]["cases"], failed as u64,
        "every failure was in one column, and runs again in all three"
    );
    // Graded again from the stored traces, the columns come out as they were.
    let first = report(&dir.join("out"))["manifest"]["run_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let o = run(
        &["regrade", &first, "--store", "runs.db", "-o", "again"],
        dir,
    );
    assert_eq!(code(&o), 1, "{}", text(&o));
    let r = report(&dir.join("again"));
    assert_eq!(
        column_states(&r["summary"]),
        [
            ("fake:safe".to_owned(), "PASS".to_owned()),
            ("fake:vulnerable".to_owned(), "FAIL".to_owned()),
            ("served".to_owned(), "PASS".to_owned()),
        ]
    );
    assert_eq!(
        r["summary"]["columns"][0]["summary"]["cases"],
        per_column as u64
    );
}

#[test]
fn gate_picks_the_column_that_ships() {
    let tmp = tempfile::tempdir().unwrap();
    let (_server, url) = serve_fake("safe");
    config(tmp.path(), &url);
    for (gate, want) in [
        (None, 1),
        (Some("served"), 0),
        (Some("fake:safe"), 0),
        (Some("fake:vulnerable"), 1),
    ] {
        let mut args = vec!["redteam", "--category", "LLM07", "--no-store", "-q"];
        args.extend(THREE);
        if let Some(g) = gate {
            args.extend(["--gate", g]);
        }
        let o = run(&args, tmp.path());
        assert_eq!(code(&o), want, "{gate:?}: {}", text(&o));
        if let Some(g) = gate {
            assert!(text(&o).contains(&format!("column {g}: ")), "{}", text(&o));
        }
    }
}

#[test]
fn a_matrix_is_refused_when_its_columns_cannot_be_told_apart_or_gate_names_none() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (vec!["-t", "fake:safe", "-t", "fake:safe"], "given twice"),
        (
            vec!["-t", "fake:safe", "-t", "fake:vulnerable", "--gate", "x"],
            "no column of this run",
        ),
        (vec!["-t", "fake:safe", "--gate", "fake:safe"], "one target"),
    ];
    for (extra, want) in cases {
        let mut args = vec!["redteam", "--category", "LLM07", "--no-store", "-q"];
        args.extend(extra);
        let o = run(&args, tmp.path());
        assert_eq!(code(&o), 2, "{}", text(&o));
        assert!(text(&o).contains(want), "{}", text(&o));
        assert!(!tmp.path().join("gauntlet-out").exists(), "nothing ran");
    }
}

#[test]
fn a_run_of_one_target_keeps_its_ids_and_has_no_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run(
        &[
            "redteam",
            "-t",
            "fake:safe",
            "--category",
            "LLM07",
            "--no-store",
            "-q",
        ],
        tmp.path(),
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(!text(&o).contains("Columns"));
    let r = report(&tmp.path().join("gauntlet-out"));
    assert!(r["summary"].get("columns").is_none());
    assert!(r["manifest"]["invocation"].get("matrix").is_none());
    assert!(
        r["cases"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| !c["case"]["id"].as_str().unwrap().contains(" @ "))
    );
    let html = std::fs::read_to_string(tmp.path().join("gauntlet-out/report.html")).unwrap();
    assert!(!html.contains("id=\"gx-answers\""));
}
