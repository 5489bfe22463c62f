//! End to end through the binary: `gauntlet run examples/exec-agent.yaml`, from the repository
//! root or any other directory, drives the example Python agent over the exec protocol and
//! passes (exit 0); an agent sees only its allow-listed environment, and what it starts does
//! not outlive the run.

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

/// An exec agent that starts a process of its own (`sleep 1000`, left running, as a careless
/// agent's server or helper would be), writes its pid where the test says, and answers with
/// its own environment.
const LEAVES_A_CHILD: &str = r#"
import json, os, subprocess, sys
start = json.loads(sys.stdin.readline())
child = subprocess.Popen(["sleep", "1000"])
with open(os.environ["PID_FILE"], "w") as f:
    f.write(str(child.pid))
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "user":
        env = sorted(os.environ.items())
        sys.stdout.write(json.dumps({"type": "answer", "content": json.dumps(env)}) + "\n")
        sys.stdout.flush()
"#;

fn gone(pid: u32) -> bool {
    // Gone, or a zombie waiting for whichever process reaps orphans here.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().next())
                == Some("Z")
        })
        .unwrap_or(true)
}

#[test]
fn an_exec_agent_sees_only_its_allow_listed_environment_and_leaves_nothing_running() {
    if !have_python() || !std::path::Path::new("/proc/self").exists() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("agent.py"), LEAVES_A_CHILD).unwrap();
    // Outside the suite's folder: a file written there is a harness change that FAILs a run.
    let side = tempfile::tempdir().unwrap();
    let pid_file = side.path().join("child.pid");
    std::fs::write(
        dir.path().join("s.yaml"),
        format!(
            r#"suite: exec-env
target:
  kind: exec
  exec:
    command: [python3, agent.py]
    env: {{PID_FILE: "{}"}}
    pass_env: [E2E_TEST_SETTING]
cases:
  - id: env
    input: what do you see?
    expect: [{{not_contains: sk-fake-parent-key}}]
"#,
            pid_file.display()
        ),
    )
    .unwrap();
    let o = bin()
        .args(["run", "s.yaml", "--out", "out"])
        .env("OPENAI_API_KEY", "sk-fake-parent-key-0000")
        .env("E2E_TEST_SETTING", "passed-through")
        .current_dir(dir.path())
        .output()
        .expect("run gauntlet");
    let text = common::text(&o);
    assert!(dir.path().join("out/report.json").exists(), "{text}");
    let r = report(&dir.path().join("out"));
    let answer = r["cases"][0]["trials"][0]["trace"]["turns"][0]["answer"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let env: Vec<(String, String)> = serde_json::from_str(&answer).expect("the agent's env");
    let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
    assert!(!names.contains(&"OPENAI_API_KEY"), "{names:?}");
    assert!(!answer.contains("sk-fake-parent-key"), "{answer}");
    assert!(
        env.contains(&("E2E_TEST_SETTING".into(), "passed-through".into())),
        "pass_env reaches the agent: {names:?}"
    );
    assert_eq!(o.status.code(), Some(0), "{text}");
    // The agent's own child died with its process group when the trial ended.
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .expect("the agent wrote its child's pid")
        .trim()
        .parse()
        .unwrap();
    // A signal takes a moment to land; a survivor would still be there after seconds.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while !gone(pid) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(gone(pid), "`sleep 1000` (pid {pid}) outlived the run");
}
