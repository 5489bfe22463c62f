//! End to end through the binary: `gauntlet run examples/exec-agent.yaml`, from the repository
//! root or any other directory, drives the example Python agent over the exec protocol and
//! passes (exit 0).

mod common;

use common::{bin, have_python, report, root};

#[test]
fn the_example_exec_agent_suite_passes() {
    if !have_python() {
        return;
    }
    // The suite's command names the agent relative to the suite's folder.
    let out = tempfile::tempdir().unwrap();
    let o = bin()
        .args(["run", "examples/exec-agent.yaml", "--out"])
        .arg(out.path())
        .current_dir(root())
        .output()
        .expect("run gauntlet");
    let text = common::text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let report = report(out.path());
    let cases = report["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 7, "{text}");
    // The agent's tool calls went through gauntlet's simulated tools, faults included.
    let poisoned = cases
        .iter()
        .find(|c| c["case"]["id"] == "exec-poisoned-tool-output")
        .unwrap();
    let spans = poisoned["trials"][0]["trace"]["spans"].as_array().unwrap();
    assert!(
        spans
            .iter()
            .any(|s| s["kind"] == "tool_call" && s["injected"] == "poison"),
        "{spans:?}"
    );
    assert!(
        spans.iter().any(|s| s["kind"] == "decision"),
        "the agent's decision is in the trace: {spans:?}"
    );
}

#[test]
fn the_example_exec_agent_suite_passes_from_another_directory() {
    if !have_python() {
        return;
    }
    // The command's relative paths are the suite folder's, not the working directory's.
    let elsewhere = tempfile::tempdir().unwrap();
    let o = bin()
        .arg("run")
        .arg(root().join("examples/exec-agent.yaml"))
        .args(["--no-store", "--out", "out"])
        .current_dir(elsewhere.path())
        .output()
        .expect("run gauntlet");
    let text = common::text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert_eq!(
        report(&elsewhere.path().join("out"))["cases"]
            .as_array()
            .unwrap()
            .len(),
        7,
        "{text}"
    );
}
