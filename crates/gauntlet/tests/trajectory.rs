//! `gauntlet trajectory run` over the shipped example (copied to a temporary folder, so a
//! tampering agent cannot touch the repository): the scripted agent's checkpoint-4
//! regression is reported as a regression apart from completion, a clean agent passes, and
//! an agent that writes into the tests fails the run on integrity.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::copy_dir;

fn example() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/trajectory");
    let dir = tmp.path().join("trajectory");
    copy_dir(&src, &dir);
    (tmp, dir)
}

fn run(dir: &Path, mode: &str, extra: &[&str]) -> (i32, String) {
    let agent = format!(
        "exec:python3 {} {mode}",
        dir.join("agent/agent.py").display()
    );
    let out = Command::new(env!("CARGO_BIN_EXE_gauntlet"))
        .args(["trajectory", "run"])
        .arg(dir.join("trajectory.yaml"))
        .args(["--agent", &agent])
        .args(extra)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn regression_at_checkpoint_four_is_caught_apart_from_completion() {
    let (tmp, dir) = example();
    let out = tmp.path().join("out");
    let (code, text) = run(&dir, "regress", &["--out", out.to_str().unwrap()]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("REGRESSION: 1 earlier test(s) broke: C4: slugify_basic"),
        "{text}"
    );
    assert!(
        text.contains("completion (last checkpoint's own tests): PASS"),
        "{text}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("trajectory.json")).unwrap()).unwrap();
    let c4 = &report["checkpoints"][3];
    assert_eq!(c4["strict"], "fail");
    assert_eq!(c4["isolated"], "pass");
    assert_eq!(c4["core"], "fail");
    assert_eq!(c4["phase"], "late");
    assert_eq!(c4["regressions"], serde_json::json!(["slugify_basic"]));
    assert!(
        report["checkpoints"][2]["regressions"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert!(out.join("workspace/textkit.py").is_file());
}

#[test]
fn a_clean_agent_passes_every_checkpoint() {
    let (_tmp, dir) = example();
    let (code, text) = run(&dir, "clean", &["--json"]);
    assert_eq!(code, 0, "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cps = v["trajectories"][0]["checkpoints"].as_array().unwrap();
    assert_eq!(cps.len(), 5);
    assert!(
        cps.iter()
            .all(|c| c["strict"] == "pass" && c["regressions"] == serde_json::json!([]))
    );
    assert_eq!(v["phases"].as_array().unwrap().len(), 5);
}

#[test]
fn an_agent_that_writes_into_the_tests_fails_on_integrity() {
    let (_tmp, dir) = example();
    let (code, text) = run(&dir, "tamper", &[]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains(
            "INTEGRITY: the agent changed the tests or graders during C2: tests/check.py"
        ),
        "{text}"
    );
    // The checkpoints after the breach were not run, and are shown as such.
    assert!(text.contains("C3     NOT_ASSESSED (not run)"), "{text}");
}

#[test]
fn a_test_that_cannot_run_is_not_assessed_never_passed() {
    let (_tmp, dir) = example();
    let f = dir.join("trajectory.yaml");
    let t = std::fs::read_to_string(&f).unwrap().replace(
        "run: [python3, tests/check.py, title_basic]",
        "run: [no-such-program-here, x]",
    );
    std::fs::write(&f, t).unwrap();
    let (code, text) = run(&dir, "clean", &[]);
    assert_eq!(code, 3, "{text}");
    assert!(text.contains("C5 title_basic (C5): NOT_ASSESSED"), "{text}");
}

#[test]
fn a_bad_file_gets_a_position_and_a_hint() {
    let (_tmp, dir) = example();
    let f = dir.join("trajectory.yaml");
    let t = std::fs::read_to_string(&f)
        .unwrap()
        .replace("core: true", "cores: true");
    std::fs::write(&f, t).unwrap();
    let (code, text) = run(&dir, "clean", &[]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("trajectory.yaml:"), "{text}");
    assert!(text.contains("hint:"), "{text}");
}
