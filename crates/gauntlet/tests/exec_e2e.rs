//! End to end through the binary: `gauntlet run examples/exec-agent.yaml` from the repository
//! root drives the example Python agent over the exec protocol and passes (exit 0).

#![allow(clippy::print_stderr)]

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_example_exec_agent_suite_passes() {
    let python = Command::new("python3")
        .args(["-c", "pass"])
        .status()
        .is_ok_and(|s| s.success());
    if !python {
        eprintln!("skipped: python3 is not on PATH, and the example agent is a Python script");
        return;
    }
    // The suite's command names the agent relative to the repository root, which is where
    // the example is documented to run from.
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_gauntlet"))
        .args(["run", "examples/exec-agent.yaml", "--out"])
        .arg(out.path())
        .current_dir(&root)
        .env("NO_COLOR", "1")
        .output()
        .expect("run gauntlet");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(0), "{text}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("report.json")).unwrap())
            .unwrap();
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
