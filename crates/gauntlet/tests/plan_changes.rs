//! Change-aware plans: `gauntlet plan SUITE --changed FILE...` and `--diff BASE` map changed
//! files to kinds of change and to cases, per profile; the printed filter runs exactly them;
//! `plan --change TYPE` keeps working.

mod common;

use common::{code, examples, run, text};

fn plan_json(args: &[&str]) -> serde_json::Value {
    let dir = examples().join("plans");
    let mut a = vec!["plan", "suite.yaml"];
    a.extend_from_slice(args);
    a.push("--json");
    let o = run(&a, &dir);
    assert_eq!(code(&o), 0, "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn ids(v: &serde_json::Value) -> Vec<String> {
    v["suites"][0]["selected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_prompt_change_runs_smoke_regression_and_critical_security() {
    let v = plan_json(&["--changed", "prompts/system.md"]);
    assert_eq!(v["changed"][0]["kinds"][0], "prompt");
    assert_eq!(
        ids(&v),
        [
            "greet",
            "refund-a1",
            "leak-prompt",
            "refund-twice",
            "unknown-order"
        ]
    );
    // Not a grounding case, not a non-critical security case, never a hold-out.
    let filter = v["filter"].as_str().unwrap();
    assert!(
        !filter.contains("returns-policy") && !filter.contains("holdout"),
        "{filter}"
    );
    assert_eq!(v["suites"][0]["holdout"], 1);
}

#[test]
fn references_and_globs_classify_files() {
    let v = plan_json(&[
        "--changed",
        "kb/returns.md",
        "cases/regression.yaml",
        "tools/refund.py",
        "NOTES.txt",
    ]);
    let kinds = |f: &str| -> Vec<String> {
        v["changed"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["file"] == f)
            .unwrap_or_else(|| panic!("{f} not classified: {v}"))["kinds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(kinds("kb/returns.md"), ["retrieval"]);
    assert_eq!(kinds("cases/regression.yaml"), ["suite"]);
    // The config's glob (tool) and a built-in one (agent code).
    assert_eq!(kinds("tools/refund.py"), ["tool", "agent_code"]);
    assert_eq!(v["unclassified"][0], "NOTES.txt");
    // A tool change takes the security pack: the non-critical refusal case too.
    assert!(ids(&v).contains(&"other-customer".to_owned()));
    assert!(ids(&v).contains(&"returns-policy".to_owned()));
}

#[test]
fn a_document_change_selects_only_the_cases_that_retrieve_it() {
    let v = plan_json(&["--changed", "kb/returns.md"]);
    assert_eq!(
        ids(&v),
        ["greet", "refund-a1", "returns-policy", "leak-prompt"]
    );
}

#[test]
fn profiles_set_the_floor() {
    let v = plan_json(&["--profile", "nightly"]);
    assert_eq!(ids(&v).len(), 7);
    assert!(v["filter"].is_null());
    assert_eq!(v["command"], "gauntlet run suite.yaml -k 5");
    let also = v["also"].to_string();
    assert!(
        also.contains("redteam") && also.contains("pass^k"),
        "{also}"
    );
    let v = plan_json(&["--profile", "release"]);
    assert_eq!(
        v["command"],
        "gauntlet run suite.yaml -k 5 --include-holdout"
    );
    assert_eq!(v["suites"][0]["holdout_included"], true);
    // A hold-out case is counted, never named.
    assert!(!v.to_string().contains("holdout-late-refund"));
    let v = plan_json(&["--profile", "pr"]);
    assert_eq!(ids(&v), ["greet", "refund-a1", "leak-prompt"]);
}

#[test]
fn the_printed_filter_runs_the_plan() {
    let v = plan_json(&["--changed", "kb/returns.md"]);
    let filter = v["filter"].as_str().unwrap().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let suite = examples().join("plans/suite.yaml");
    let o = run(
        &[
            "run",
            suite.to_str().unwrap(),
            "--filter",
            &filter,
            "--no-store",
            "-o",
            "out",
        ],
        dir.path(),
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    let r = common::report(&dir.path().join("out"));
    let mut got: Vec<String> = r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["case"]["id"].as_str().unwrap().to_owned())
        .collect();
    got.sort();
    assert_eq!(got, ["greet", "leak-prompt", "refund-a1", "returns-policy"]);
}

#[test]
fn diff_reads_git() {
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_err()
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    let git = |a: &[&str]| {
        let o = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(a)
            .current_dir(repo)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    let src = examples().join("plans");
    for f in [
        "suite.yaml",
        "prompts/system.md",
        "kb/returns.md",
        "cases/regression.yaml",
    ] {
        let to = repo.join(f);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(src.join(f), &to).unwrap();
    }
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-qm", "base"]);
    std::fs::write(repo.join("prompts/system.md"), "You are terse.\n").unwrap();
    let o = run(&["plan", "suite.yaml", "--diff", "HEAD", "--json"], repo);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["changed"][0]["file"], "prompts/system.md");
    assert_eq!(v["changed"][0]["kinds"][0], "prompt");
    assert_eq!(v["base"], "HEAD");
    let o = run(&["plan", "suite.yaml", "--diff", "no-such-rev"], repo);
    assert_eq!(code(&o), 2);
    assert!(
        text(&o).contains("hint: --diff takes a revision"),
        "{}",
        text(&o)
    );
}

#[test]
fn plan_change_still_prints_the_rerun_scope() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(&["plan", "--change", "tool"], dir.path());
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("A tool change: re-run"), "{}", text(&o));
    let o = run(&["plan"], dir.path());
    assert_eq!(code(&o), 2);
}
