//! `gauntlet impact task` over the shipped example (copied to a temporary folder, so a
//! tampering agent cannot touch the repository): completion needs passing acceptance tests
//! and matching evidence, missing and false evidence are reported as such, a regression is
//! counted apart from completion, hidden mode keeps the tests out of the agent's workspace,
//! an agent's edit of its copy of a test gains nothing, and a write to the pristine tests
//! fails the run.

mod common;

use std::path::{Path, PathBuf};

use common::{code, copy_dir, have_python, run, text};
use serde_json::Value;

/// The example's folder copied, without the Rust crate (not used here).
fn example() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/impact");
    let dir = tmp.path().join("impact");
    for sub in ["python-repo", "acceptance", "agent"] {
        copy_dir(&src.join(sub), &dir.join(sub));
    }
    std::fs::copy(src.join("tasks.yaml"), dir.join("tasks.yaml")).unwrap();
    (tmp, dir)
}

fn tasks(dir: &Path, extra: &[&str]) -> (i32, Value, String) {
    let file = dir.join("tasks.yaml");
    let mut args = vec!["impact", "task", file.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    let o = run(&args, dir);
    let t = text(&o);
    let v = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (code(&o), v, t)
}

fn task<'a>(r: &'a Value, id: &str) -> &'a Value {
    r["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("no task {id} in {r}"))
}

#[test]
fn given_mode_needs_evidence_and_counts_regressions_apart() {
    if !have_python() {
        return;
    }
    let (tmp, dir) = example();
    let out = tmp.path().join("out");
    let (c, r, t) = tasks(&dir, &["--out", out.to_str().unwrap()]);
    assert_eq!(c, 1, "{t}");
    assert_eq!(r["mode"], "given");
    assert_eq!(r["baseline_passing"], 3);
    let mul = task(&r, "mul");
    assert_eq!(mul["completion"], "done", "{mul}");
    assert_eq!(mul["evidence"]["kind"], "matches");
    assert_eq!(
        mul["affected"],
        serde_json::json!([
            "tests/test_fmt.py::TestTotal::test_total",
            "tests/test_ops.py::test_add",
            "tests/test_ops.py::test_sub"
        ])
    );
    assert!(mul["regressions"].as_array().unwrap().is_empty());
    // Given mode: the acceptance test was in the agent's workspace.
    assert!(out.join("1-mul/workspace/acceptance/test_mul.py").is_file());
    // Done and regressing: both are reported.
    let eur = task(&r, "eur");
    assert_eq!(eur["completion"], "done", "{eur}");
    assert_eq!(
        eur["regressions"][0]["id"],
        "tests/test_fmt.py::TestTotal::test_total"
    );
    assert_eq!(eur["regressions"][0]["affected"], true);
    let neg = task(&r, "neg");
    assert_eq!(neg["acceptance"], "pass");
    assert_eq!(neg["completion"], "not_done");
    assert_eq!(neg["evidence"]["kind"], "missing");
    assert_eq!(neg["reasons"], serde_json::json!(["no evidence"]));
    let div = task(&r, "div");
    assert_eq!(div["evidence"]["kind"], "false");
    assert_eq!(
        div["evidence"]["contradicted"][0]["id"],
        "acceptance/test_div.py::test_div"
    );
    assert_eq!(div["evidence"]["contradicted"][0]["observed"], "fail");
    assert_eq!(div["completion"], "not_done");
    // The same report on disk; the terminal shows both rates apart.
    let disk: Value =
        serde_json::from_slice(&std::fs::read(out.join("tasks.json")).unwrap()).unwrap();
    assert_eq!(disk, r);
    let o = run(
        &["impact", "task", dir.join("tasks.yaml").to_str().unwrap()],
        &dir,
    );
    let t = text(&o);
    assert_eq!(code(&o), 1, "{t}");
    assert!(t.contains("completion: 2/4 (50%) tasks done"), "{t}");
    assert!(
        t.contains("regression: 1/4 (25%) tasks broke previously passing tests"),
        "{t}"
    );
    assert!(
        t.contains("neg: no evidence: the agent wrote no .gauntlet/evidence.json"),
        "{t}"
    );
    assert!(
        t.contains("div: FALSE EVIDENCE: claimed acceptance/test_div.py::test_div passed, gauntlet observed FAIL"),
        "{t}"
    );
    assert!(
        t.contains("eur: REGRESSION tests/test_fmt.py::TestTotal::test_total (affected)"),
        "{t}"
    );
}

#[test]
fn hidden_mode_shows_the_agent_neither_test_list_nor_tests() {
    if !have_python() {
        return;
    }
    let (tmp, dir) = example();
    // An agent that records what it was given and what its workspace holds.
    std::fs::write(
        dir.join("agent/look.py"),
        "import json, os, sys\nmsg = json.loads(sys.stdin.readline())\nfiles = sorted(os.path.relpath(os.path.join(d, f), '.') for d, _, fs in os.walk('.') for f in fs)\njson.dump({'msg': msg, 'files': files}, open('seen.json', 'w'))\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    let (c, r, t) = tasks(
        &dir,
        &[
            "--mode",
            "hidden",
            "--agent",
            &format!("exec:python3 {}", dir.join("agent/look.py").display()),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(c, 1, "{t}");
    assert_eq!(r["mode"], "hidden");
    let seen: Value =
        serde_json::from_slice(&std::fs::read(out.join("1-mul/workspace/seen.json")).unwrap())
            .unwrap();
    assert!(seen["msg"].get("affected_tests").is_none(), "{seen}");
    assert!(seen["msg"].get("acceptance_tests").is_none(), "{seen}");
    assert!(
        !seen["msg"]["prompt"]
            .as_str()
            .unwrap()
            .contains("test_total")
    );
    let files = seen["files"].to_string();
    assert!(!files.contains("acceptance"), "{files}");
    assert!(files.contains("tests/test_ops.py"), "{files}");
    // It changed nothing and wrote no evidence: graded with the hidden tests, not done.
    let mul = task(&r, "mul");
    assert_eq!(mul["acceptance"], "fail");
    assert_eq!(mul["evidence"]["kind"], "missing");
    // The shipped agent in hidden mode: its `div` evidence is true (it could only run the
    // repository's tests), the hidden acceptance tests fail it.
    let (c, r, t) = tasks(&dir, &["--mode", "hidden"]);
    assert_eq!(c, 1, "{t}");
    assert_eq!(task(&r, "mul")["completion"], "done", "{r}");
    let div = task(&r, "div");
    assert_eq!(div["evidence"]["kind"], "matches", "{div}");
    assert_eq!(div["acceptance"], "fail");
    assert_eq!(
        div["reasons"],
        serde_json::json!(["acceptance tests failed"])
    );
    assert_eq!(task(&r, "eur")["regressions"].as_array().unwrap().len(), 1);
}

#[test]
fn a_clean_run_passes_and_a_missing_evidence_file_never_does() {
    if !have_python() {
        return;
    }
    let (_tmp, dir) = example();
    let file = dir.join("tasks.yaml");
    let full = std::fs::read_to_string(&file).unwrap();
    let only_mul = &full[..full.find("  - id: eur").unwrap()];
    std::fs::write(&file, only_mul).unwrap();
    let (c, r, t) = tasks(&dir, &[]);
    assert_eq!(c, 0, "{t}");
    assert_eq!(r["tasks"][0]["completion"], "done");
    // The same task with an agent that does the work and gives no evidence: exit 1.
    std::fs::write(
        dir.join("agent/quiet.py"),
        "import json, sys\nmsg = json.loads(sys.stdin.readline())\nopen('calc/ops.py', 'a').write('\\n\\ndef mul(a, b):\\n    return a * b\\n')\n",
    )
    .unwrap();
    let (c, r, t) = tasks(
        &dir,
        &[
            "--agent",
            &format!("exec:python3 {}", dir.join("agent/quiet.py").display()),
        ],
    );
    assert_eq!(c, 1, "{t}");
    assert_eq!(r["tasks"][0]["acceptance"], "pass");
    assert_eq!(r["tasks"][0]["completion"], "not_done");
}

#[test]
fn editing_the_workspace_copy_of_a_test_gains_nothing_and_is_reported() {
    if !have_python() {
        return;
    }
    let (_tmp, dir) = example();
    let agent = format!(
        "exec:python3 {} cheat",
        dir.join("agent/agent.py").display()
    );
    let (c, r, t) = tasks(&dir, &["--agent", &agent]);
    assert_eq!(c, 1, "{t}");
    let mul = task(&r, "mul");
    assert_eq!(mul["acceptance"], "fail", "{mul}");
    assert_eq!(mul["completion"], "not_done");
    assert_eq!(
        mul["edited_tests"],
        serde_json::json!(["acceptance/test_mul.py"])
    );
    // It ran its edited copy and claimed a pass: contradicted by the pristine one.
    assert_eq!(mul["evidence"]["kind"], "false");
    assert!(r.get("integrity").is_none(), "{r}");
}

#[test]
fn a_write_to_the_pristine_tests_fails_the_run() {
    if !have_python() {
        return;
    }
    let (_tmp, dir) = example();
    let agent = format!(
        "exec:python3 {} tamper",
        dir.join("agent/agent.py").display()
    );
    let (c, r, t) = tasks(&dir, &["--agent", &agent]);
    assert_eq!(c, 1, "{t}");
    assert_eq!(r["integrity"]["task"], "mul", "{r}");
    assert_eq!(
        r["integrity"]["changed"],
        serde_json::json!(["acceptance/test_mul.py"])
    );
    // The run stopped there.
    assert_eq!(r["tasks"].as_array().unwrap().len(), 1);
    let o = run(
        &[
            "impact",
            "task",
            dir.join("tasks.yaml").to_str().unwrap(),
            "--agent",
            &agent,
        ],
        &dir,
    );
    let t = text(&o);
    assert!(
        t.contains("INTEGRITY: the tests, graders or pristine repository changed during task mul: acceptance/test_mul.py"),
        "{t}"
    );
    assert!(t.contains("task 2 NOT_ASSESSED (not run)"), "{t}");
}

#[test]
fn a_bad_task_file_is_refused_with_its_position() {
    let (tmp, dir) = example();
    let file = dir.join("tasks.yaml");
    let full = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        full.replace(
            "tests: [acceptance/test_neg.py]",
            "tests: [python-repo/tests/test_ops.py]",
        ),
    )
    .unwrap();
    let (c, _, t) = tasks(&dir, &[]);
    assert_eq!(c, 2, "{t}");
    assert!(t.contains("tasks.yaml:"), "{t}");
    assert!(t.contains("lies inside the repository"), "{t}");
    // An --out inside the task file's folder is refused before anything runs.
    std::fs::write(&file, full).unwrap();
    let inside = dir.join("out");
    let (c, _, t) = tasks(&dir, &["--out", inside.to_str().unwrap()]);
    assert_eq!(c, 2, "{t}");
    assert!(t.contains("overlaps"), "{t}");
    drop(tmp);
}

/// The Rust example's folder copied (the crate, its acceptance tests, the agents).
fn rust_example() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/impact");
    let dir = tmp.path().join("impact");
    for sub in ["rust-calc", "rust-acceptance", "agent"] {
        copy_dir(&src.join(sub), &dir.join(sub));
    }
    std::fs::copy(src.join("rust-tasks.yaml"), dir.join("tasks.yaml")).unwrap();
    (tmp, dir)
}

fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_rust_crate_runs_under_cargo_in_both_modes() {
    if !have_python() {
        return;
    }
    let (_tmp, dir) = rust_example();
    for mode in ["given", "hidden"] {
        let (c, r, t) = tasks(&dir, &["--mode", mode]);
        assert_eq!(c, 1, "{t}");
        assert_eq!(r["baseline_passing"], 3, "{r}");
        let mul = task(&r, "mul");
        assert_eq!(mul["completion"], "done", "{mode}: {mul}");
        assert_eq!(
            mul["affected"],
            serde_json::json!(["src/ops.rs::tests::add_small", "tests/ops.rs::adds"])
        );
        assert_eq!(ids(&mul["acceptance_tests"]), ["tests/mul.rs::mul_small"]);
        assert_eq!(mul["evidence"]["kind"], "matches");
        assert_eq!(mul["regressions"], serde_json::json!([]));
        let eur = task(&r, "eur");
        assert_eq!(eur["completion"], "done", "{eur}");
        assert_eq!(ids(&eur["regressions"]), ["tests/fmt.rs::total_format"]);
        assert_eq!(eur["regressions"][0]["affected"], true);
        let neg = task(&r, "neg");
        assert_eq!(neg["completion"], "not_done");
        assert_eq!(neg["evidence"]["kind"], "missing");
        let div = task(&r, "div");
        assert_eq!(div["completion"], "not_done");
        assert_eq!(div["acceptance"], "fail", "{div}");
        // In hidden mode the agent never saw div's tests, so it claimed none of them.
        let kind = if mode == "given" { "false" } else { "matches" };
        assert_eq!(div["evidence"]["kind"], kind, "{mode}: {div}");
        assert_eq!(r["tasks"].as_array().unwrap().len(), 4);
    }
}

#[test]
fn a_rust_change_that_does_not_compile_fails_and_regresses() {
    if !have_python() {
        return;
    }
    let (_tmp, dir) = rust_example();
    let agent = format!(
        "exec:python3 {} broken",
        dir.join("agent/rust_agent.py").display()
    );
    let (c, r, t) = tasks(&dir, &["--agent", &agent]);
    assert_eq!(c, 1, "{t}");
    let mul = task(&r, "mul");
    assert_eq!(mul["completion"], "not_done", "{mul}");
    assert_eq!(mul["acceptance"], "fail");
    let detail = mul["acceptance_tests"][0]["detail"].as_str().unwrap();
    assert!(detail.starts_with("does not compile: error"), "{detail}");
    assert!(detail.contains("src/ops.rs"), "{detail}");
    let mut reg = ids(&mul["regressions"]);
    reg.sort();
    assert_eq!(
        reg,
        [
            "src/ops.rs::tests::add_small",
            "tests/fmt.rs::total_format",
            "tests/ops.rs::adds"
        ]
    );
}

#[test]
fn a_rust_agent_writing_into_the_harness_fails_on_integrity() {
    if !have_python() {
        return;
    }
    let (_tmp, dir) = rust_example();
    let agent = format!(
        "exec:python3 {} tamper",
        dir.join("agent/rust_agent.py").display()
    );
    let (c, r, t) = tasks(&dir, &["--agent", &agent]);
    assert_eq!(c, 1, "{t}");
    assert_eq!(r["integrity"]["task"], "mul", "{r}");
    assert_eq!(
        r["integrity"]["changed"],
        serde_json::json!(["rust-acceptance/mul.rs"])
    );
    assert_eq!(r["tasks"].as_array().unwrap().len(), 1);
}
