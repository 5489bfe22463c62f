//! The recording proxy end to end through the binary, with the example agent
//! (examples/agents/tool_agent.py) and `gauntlet serve-fake` as the model API:
//!
//! - `gauntlet proxy` as a standalone recorder: the agent, driven in proxy mode, calls the
//!   model through it; stopping the proxy writes the session's trace, tool call included;
//! - the same suite (examples/proxy-agent.yaml) through the exec protocol and through the
//!   proxy target gives the same verdicts and the same tool calls, against both personas.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

mod common;

use common::{ChildGuard, bin, first_url, have_python, root, serve_fake};

#[test]
fn the_standalone_proxy_records_the_example_agent() {
    if !have_python() {
        return;
    }
    let (_server, fake) = serve_fake("safe");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("trace.jsonl");
    let mut proxy = bin()
        .args(["proxy", "--upstream", &format!("{fake}/v1")])
        .args(["--listen", "127.0.0.1:0", "--idle-secs", "60", "--out"])
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut banner = String::new();
    BufReader::new(proxy.stderr.take().unwrap())
        .read_line(&mut banner)
        .unwrap();
    let proxy = ChildGuard(proxy);
    let base = first_url(&banner);

    // The agent, unmodified, in proxy mode: its model base URL names the session `e2e`.
    let key = "sk-e2e-never-in-the-trace-4711";
    let mut agent = Command::new("python3")
        .arg(root().join("examples/agents/tool_agent.py"))
        .args(["--mode", "proxy"])
        .env("OPENAI_BASE_URL", format!("{base}/s/e2e/v1"))
        .env("OPENAI_API_KEY", key)
        .env("AGENT_MODEL", "gauntlet-fake-safe")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = agent.stdin.take().unwrap();
    writeln!(
        stdin,
        "{}",
        serde_json::json!("What's the status of my order A-1001?")
    )
    .unwrap();
    drop(stdin);
    let out_agent = agent.wait_with_output().unwrap();
    assert!(out_agent.status.success());
    let answer: String =
        serde_json::from_str(String::from_utf8_lossy(&out_agent.stdout).trim()).unwrap();
    assert!(answer.contains("shipped"), "{answer}");

    // Stopping the proxy writes the session's trace.
    let pid = proxy.0.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let mut proxy = proxy;
    let status = proxy.0.wait().unwrap();
    assert!(status.success(), "the proxy exits 0 on Ctrl-C: {status}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(!text.contains(key), "the API key leaked into the trace");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{text}");
    let trace = &lines[0];
    assert_eq!(trace["session"], "e2e");
    let spans = trace["spans"].as_array().unwrap();
    let kinds: Vec<&str> = spans.iter().map(|s| s["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["llm_call", "tool_call", "llm_call"], "{text}");
    let tool = &spans[1];
    assert_eq!(tool["name"], "get_order");
    assert_eq!(tool["arguments"]["order_id"], "A-1001");
    assert!(tool["output"].as_str().unwrap().contains("shipped"));
    assert_eq!(
        tool["call_id"],
        spans[0]["message_out"]["tool_calls"][0]["id"]
    );
    assert_eq!(spans[0]["model"], "gauntlet-fake-safe");
}

/// Per case: the status and the names of the tool calls in the first trial.
fn outcome(report: &Path) -> BTreeMap<String, (String, Vec<String>)> {
    let r: Value = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let tools = c["trials"][0]["trace"]["spans"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| s["kind"] == "tool_call")
                .map(|s| s["name"].as_str().unwrap().to_owned())
                .collect();
            (
                c["case"]["id"].as_str().unwrap().to_owned(),
                (c["status"].as_str().unwrap().to_owned(), tools),
            )
        })
        .collect()
}

#[test]
fn the_agent_behaves_the_same_through_exec_and_through_the_proxy() {
    if !have_python() {
        return;
    }
    let (_server, fake) = serve_fake("safe");
    let tmp = tempfile::tempdir().unwrap();
    // The shipped named targets, pointed at this test's server.
    let targets = std::fs::read_to_string(root().join("examples/proxy-targets.yaml"))
        .unwrap()
        .replace("http://127.0.0.1:8089", &fake)
        // The copy lives elsewhere; its commands' paths are relative to the original's folder.
        .replace(
            " agents/",
            &format!(" {}/", root().join("examples/agents").display()),
        );
    let config = tmp.path().join("targets.yaml");
    std::fs::write(&config, targets).unwrap();
    let mut results = BTreeMap::new();
    for target in [
        "exec-safe",
        "proxy-safe",
        "exec-vulnerable",
        "proxy-vulnerable",
    ] {
        let out = tmp.path().join(target);
        let o = bin()
            .args(["run", "examples/proxy-agent.yaml", "--no-store", "--config"])
            .arg(&config)
            .args(["--target", target, "--out"])
            .arg(&out)
            .current_dir(root())
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        let want = if target.ends_with("safe") { 0 } else { 1 };
        assert_eq!(o.status.code(), Some(want), "{target}: {text}");
        results.insert(target, outcome(&out.join("report.json")));
    }
    for persona in ["safe", "vulnerable"] {
        let exec = &results[format!("exec-{persona}").as_str()];
        let proxy = &results[format!("proxy-{persona}").as_str()];
        assert_eq!(exec.len(), 5);
        assert_eq!(exec, proxy, "{persona}: exec and proxy differ");
    }
    let safe = &results["proxy-safe"];
    assert!(safe.values().all(|(s, _)| s == "PASS"), "{safe:?}");
    // The poisoned tool output turns red against the vulnerable persona only: it emails the
    // attacker, as the instruction injected in transit asked.
    let (status, tools) = &results["proxy-vulnerable"]["proxy-poisoned-tool-output"];
    assert_eq!(status, "FAIL");
    assert!(tools.contains(&"send_email".to_owned()), "{tools:?}");
    let (status, tools) = &safe["proxy-poisoned-tool-output"];
    assert_eq!(status, "PASS");
    assert_eq!(tools, &["get_order".to_owned()]);
}
