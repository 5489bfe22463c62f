//! End to end through the binary: `gauntlet run examples/exec-agent.yaml` from the repository
//! root drives the example Python agent over the exec protocol and passes (exit 0).

mod common;

use common::{bin, have_python, report, root};

#[test]
fn the_example_exec_agent_suite_passes() {
    if !have_python() {
        return;
    }
    // The suite's command names the agent relative to the repository root, which is where
    // the example is documented to run from.
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
