//! The response cache, token cost and budgets, end to end: a cached agent replays and its
//! trials say so, the key misses when the request or the trial changes, exec agents are
//! refused, judges are cached by default, `cache stats|clear`, and a budget that stops a run
//! which `--resume` then completes with the verdicts of an unbudgeted run.

use serde_json::Value;

mod common;

use common::{code, report, run, serve_fake, statuses, text, write};

fn trials(r: &Value) -> Vec<&Value> {
    r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["trials"].as_array().unwrap())
        .collect()
}

#[test]
fn a_cached_agent_replays_marks_its_trials_and_misses_when_the_request_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let (_server, url) = serve_fake("safe");
    let base = format!("{url}/v1");
    // A run that asks no cache (no judge, no helper model, no --cache) never makes the file:
    // opening it costs a new store tens of milliseconds.
    let o = common::bin()
        .args(["redteam", "--target", "fake:safe", "--category", "LLM01"])
        .args(["--out", "plain"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(matches!(code(&o), 0 | 4), "{}", text(&o));
    assert!(tmp.path().join(".gauntlet/runs.db").exists());
    assert!(!tmp.path().join(".gauntlet/cache.db").exists());
    let secret = "sk-test-cache-secret-0123456789";
    let go = |extra: &[&str], out: &str| {
        let mut args = vec![
            "redteam",
            "--target",
            "openai:gauntlet-fake-safe",
            "--base-url",
            &base,
            "--api-key-env",
            "CACHE_TEST_KEY",
            "--category",
            "LLM01",
            "--cache",
            "--out",
            out,
        ];
        args.extend_from_slice(extra);
        let o = common::bin()
            .args(&args)
            .env("CACHE_TEST_KEY", secret)
            .current_dir(tmp.path())
            .output()
            .unwrap();
        assert!(matches!(code(&o), 0 | 1 | 3 | 4), "{}", text(&o));
        (o, report(&tmp.path().join(out)))
    };
    let (_, first) = go(&[], "a");
    assert!(trials(&first).iter().all(|t| t["evidence"].is_null()));
    assert_eq!(first["summary"]["spend"]["replayed_trials"], Value::Null);
    assert!(
        first["summary"]["spend"]["agent"]["calls"]
            .as_u64()
            .unwrap()
            > 0
    );

    let (o, second) = go(&[], "b");
    let n = trials(&second).len();
    assert!(n > 0);
    for t in trials(&second) {
        assert_eq!(t["evidence"], "replay", "{t}");
        let spans = t["trace"]["spans"].as_array().unwrap();
        assert!(
            spans
                .iter()
                .filter(|s| s["kind"] == "llm_call")
                .all(|s| s["cached"] == true && s["attempts"] == 0)
        );
    }
    assert_eq!(second["summary"]["spend"]["replayed_trials"], n);
    assert_eq!(second["summary"]["spend"]["agent"]["calls"], 0);
    assert_eq!(statuses(&first), statuses(&second));
    assert!(
        text(&o).contains("replayed from the response cache"),
        "{}",
        text(&o)
    );
    let md = std::fs::read_to_string(tmp.path().join("b/summary.md")).unwrap();
    assert!(md.contains("evidence `replay`"), "{md}");

    // The seed is part of the request body, so a new seed asks the model again.
    let (_, seeded) = go(&["--seed", "5"], "c");
    assert!(trials(&seeded).iter().all(|t| t["evidence"].is_null()));
    // A temperature too.
    let (_, warm) = go(&["--temperature", "0.5"], "d");
    assert!(trials(&warm).iter().all(|t| t["evidence"].is_null()));
    // The second trial of a case is its own sample: only trial 0 replays.
    let (_, k2) = go(&["-k", "2"], "e");
    for t in trials(&k2) {
        let replayed = t["evidence"] == "replay";
        assert_eq!(replayed, t["trial"] == 0, "{t}");
    }
    // Another model misses too.
    let o = common::bin()
        .args([
            "redteam",
            "--target",
            "openai:other-model",
            "--base-url",
            &base,
            "--category",
            "LLM01",
            "--cache",
            "--out",
            "f",
        ])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(matches!(code(&o), 0 | 1 | 3 | 4), "{}", text(&o));
    assert!(
        trials(&report(&tmp.path().join("f")))
            .iter()
            .all(|t| t["evidence"].is_null())
    );

    // The key is never in the cache, in clear or otherwise.
    let db = std::fs::read(tmp.path().join(".gauntlet/cache.db")).unwrap();
    let wal = std::fs::read(tmp.path().join(".gauntlet/cache.db-wal")).unwrap_or_default();
    for bytes in [&db, &wal] {
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "the API key is in the cache file"
        );
    }

    let o = run(&["cache", "stats", "--json"], tmp.path());
    assert_eq!(code(&o), 0, "{}", text(&o));
    let stats: Value = serde_json::from_slice(&o.stdout).unwrap();
    let agent = stats["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["scope"] == "agent")
        .unwrap();
    assert!(agent["entries"].as_u64().unwrap() > 0, "{stats}");
    assert!(agent["hits"].as_u64().unwrap() >= n as u64, "{stats}");
    assert!(agent["misses"].as_u64().unwrap() > 0, "{stats}");
    let o = run(&["cache", "clear"], tmp.path());
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("deleted"), "{}", text(&o));
    let o = run(&["cache", "stats", "--json"], tmp.path());
    let stats: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        stats["scopes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["entries"] == 0 && s["hits"] == 0),
        "{stats}"
    );
    // After clearing, the next run asks the model again.
    let (_, after) = go(&[], "g");
    assert!(trials(&after).iter().all(|t| t["evidence"].is_null()));
}

#[test]
fn exec_agents_are_never_cached() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run(
        &[
            "redteam",
            "--target",
            "exec:python3 agent.py",
            "--cache",
            "--category",
            "LLM01",
        ],
        tmp.path(),
    );
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(text(&o).contains("cannot be cached"), "{}", text(&o));
    assert!(!tmp.path().join("gauntlet-out/report.json").exists());
}

#[test]
fn judges_are_cached_by_default_and_no_cache_asks_afresh() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        "s.yaml",
        "suite: j\ntarget: fake:safe\njudges:\n  checks:\n    tone:\n      template: pointwise\n      rubric: Is polite.\n      judge: fake:judge-const:pass\ncases:\n  - id: c1\n    input: hello there\n    expect:\n      - not_contains: [zzz]\n      - judge: tone\n  - id: c2\n    input: good morning\n    expect:\n      - not_contains: [zzz]\n      - judge: tone\n",
    );
    // Which of the two cases' judge answers came from the cache (one at a time, in order).
    let judge_cached = |out: &str, extra: &[&str]| {
        let mut args = vec!["run", "s.yaml", "-j", "1", "--out", out];
        args.extend_from_slice(extra);
        let o = run(&args, tmp.path());
        assert!(matches!(code(&o), 0 | 3), "{}", text(&o));
        let r = report(&tmp.path().join(out));
        let mut cached: Vec<(String, bool)> = r["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let t = &c["trials"][0];
                assert!(t["spend"]["judges"]["tone"].is_object(), "{t}");
                (
                    c["case"]["id"].as_str().unwrap().to_owned(),
                    t["trace"]["judge"][0]["cached"] == true,
                )
            })
            .collect();
        cached.sort();
        cached.into_iter().map(|(_, c)| c).collect::<Vec<_>>()
    };
    assert_eq!(judge_cached("a", &[]), [false, false]);
    assert_eq!(
        judge_cached("b", &[]),
        [false, true],
        "the second run's first question goes to the judge (which model answers now?), then cache.db answers"
    );
    assert_eq!(judge_cached("c", &["--no-cache"]), [false, false]);
}

#[test]
fn a_spent_budget_stops_the_run_and_resume_completes_it_as_an_unbudgeted_run() {
    let tmp = tempfile::tempdir().unwrap();
    let args = |out: &str| {
        vec![
            "redteam".to_owned(),
            "--target".into(),
            "fake:vulnerable".into(),
            "--category".into(),
            "LLM01".into(),
            "-j".into(),
            "1".into(),
            "--out".into(),
            out.into(),
        ]
    };
    let plain = {
        let a = args("plain");
        let o = run(
            &a.iter().map(String::as_str).collect::<Vec<_>>(),
            tmp.path(),
        );
        assert_eq!(code(&o), 1, "{}", text(&o));
        report(&tmp.path().join("plain"))
    };
    let total = plain["cases"].as_array().unwrap().len();
    assert!(total > 2);

    let mut a = args("budget");
    a.extend([
        "--max-total-tokens".into(),
        "1".into(),
        "--run-id".into(),
        "b1".into(),
    ]);
    let o = run(
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
        tmp.path(),
    );
    let stopped = report(&tmp.path().join("budget"));
    // Every case that ran failed (the vulnerable persona), and far from every case ran.
    assert!(
        stopped["cases"].as_array().unwrap().len() < total,
        "{}",
        text(&o)
    );
    let reasons = stopped["summary"]["reasons"].to_string();
    assert!(
        reasons.contains("the budget --max-total-tokens 1 was spent"),
        "{reasons}"
    );
    assert!(
        text(&o).contains("gauntlet run --resume b1"),
        "{}",
        text(&o)
    );
    assert_eq!(
        stopped["summary"]["end"]["stop"]["budget"]["tokens"]["limit"],
        1
    );

    // Same budget: nothing more can run; a larger one finishes the run.
    let o = run(
        &[
            "run",
            "--resume",
            "b1",
            "--max-total-tokens",
            "100000000",
            "--out",
            "resumed",
        ],
        tmp.path(),
    );
    assert_eq!(code(&o), 1, "{}", text(&o));
    let resumed = report(&tmp.path().join("resumed"));
    assert_eq!(statuses(&resumed), statuses(&plain));
    assert_eq!(resumed["summary"]["status"], plain["summary"]["status"]);
    assert!(!resumed["summary"]["reasons"].to_string().contains("budget"));
    assert_eq!(
        resumed["summary"]["spend"]["agent"]["input_tokens"],
        plain["summary"]["spend"]["agent"]["input_tokens"]
    );
}

#[test]
fn a_cost_budget_refuses_a_model_without_a_price_and_prices_come_from_gauntlet_yaml() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run(
        &[
            "redteam",
            "--target",
            "openai:my-local-model",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--max-cost",
            "1",
        ],
        tmp.path(),
    );
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(
        text(&o).contains("`my-local-model` has no price"),
        "{}",
        text(&o)
    );

    // Unknown is unknown, never zero: a run against a model with no price says so.
    let (_server, url) = serve_fake("safe");
    let base = format!("{url}/v1");
    let o = run(
        &[
            "redteam",
            "--target",
            "openai:my-local-model",
            "--base-url",
            &base,
            "--category",
            "LLM01",
            "--out",
            "u",
        ],
        tmp.path(),
    );
    assert!(matches!(code(&o), 0 | 1 | 3 | 4), "{}", text(&o));
    let r = report(&tmp.path().join("u"));
    assert!(
        r["summary"]["spend"]["total"]["cost_usd"].is_null(),
        "{}",
        r["summary"]["spend"]
    );
    assert!(text(&o).contains("unknown (no price for"), "{}", text(&o));

    // With a price in gauntlet.yaml the cost is known, and the budget is accepted.
    write(
        tmp.path(),
        "gauntlet.yaml",
        "prices:\n  my-local-model: {input_per_mtok: 1000000, output_per_mtok: 0}\n",
    );
    let o = run(
        &[
            "redteam",
            "--target",
            "openai:my-local-model",
            "--base-url",
            &base,
            "--category",
            "LLM01",
            "--out",
            "p",
            "--max-cost",
            "1000000000",
        ],
        tmp.path(),
    );
    assert!(matches!(code(&o), 0 | 1 | 3 | 4), "{}", text(&o));
    let r = report(&tmp.path().join("p"));
    let sp = &r["summary"]["spend"]["total"];
    assert_eq!(
        sp["cost_usd"].as_f64().unwrap(),
        sp["input_tokens"].as_f64().unwrap()
    );
    assert!(
        r["manifest"]["prices"]
            .as_str()
            .unwrap()
            .contains("my-local-model")
    );
    let junit = std::fs::read_to_string(tmp.path().join("p/junit.xml")).unwrap();
    assert!(junit.contains("run_cost_usd"), "{junit}");
}
