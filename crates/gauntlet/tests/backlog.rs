//! The backlog benchmark on the command line: `backlog validate` and `backlog report` on the
//! shipped example, a contract changed after its ledger started, an arm that accepted
//! nothing, and the template `init --backlog` writes.

mod common;

use common::{code, examples, run, text, write};

fn example() -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = examples().join("backlog");
    (dir.join("contract.json"), dir.join("ledger.jsonl"))
}

#[test]
fn the_example_validates_and_reports() {
    let (contract, ledger) = example();
    let dir = tempfile::tempdir().unwrap();
    let c = contract.to_str().unwrap();
    let l = ledger.to_str().unwrap();
    let o = run(&["backlog", "validate", c, "--ledger", l], dir.path());
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        text(&o).contains("12 rows: 6 accepted, 2 failed, 1 abandoned, 2 censored, 1 not_started"),
        "{}",
        text(&o)
    );

    let o = run(
        &["backlog", "report", l, "--contract", c, "--json"],
        dir.path(),
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let agent = &r["arms"][1];
    assert_eq!(agent["arm"], "agent");
    // Final: 3 accepted of 5 resolved (the censored row is out of the denominator).
    assert_eq!(agent["final"]["x"], 3);
    assert_eq!(agent["final"]["n"], 5);
    assert_eq!(agent["to_date"]["n"], 6);
    let low = agent["final"]["low"].as_f64().unwrap();
    let high = agent["final"]["high"].as_f64().unwrap();
    assert!(
        low > 0.2 && low < 0.6 && high > 0.6 && high < 0.95,
        "{low} {high}"
    );
    // 2.40 + 6.10 + 1.20 + 3.30 + 9.80 + 4.50 (the censored row's spend counts too) over 3.
    let cost = agent["cost_usd"]["per_accepted"].as_f64().unwrap();
    assert!((cost - 27.3 / 3.0).abs() < 1e-9, "{cost}");
    assert_eq!(r["comparisons"][0]["paired"], 4);
    assert!(r["censoring"].as_str().unwrap().contains("2 censored"));

    let o = run(&["backlog", "report", l, "--contract", c], dir.path());
    let t = text(&o);
    assert!(t.contains("final rate      3/5 = 60% [23%, 88%]"), "{t}");
    assert!(t.contains("Censoring: 3 of 12 planned slot(s)"), "{t}");
    let o = run(
        &["backlog", "report", l, "--contract", c, "--markdown"],
        dir.path(),
    );
    let t = text(&o);
    assert!(
        t.starts_with("# Backlog benchmark `billing-service-pilot`"),
        "{t}"
    );
    assert!(
        t.contains("| `agent` | 3 accepted, 1 failed, 1 abandoned"),
        "{t}"
    );
}

#[test]
fn a_contract_changed_after_the_ledger_started_is_refused() {
    let (contract, ledger) = example();
    let dir = tempfile::tempdir().unwrap();
    let changed = std::fs::read_to_string(&contract)
        .unwrap()
        .replace("\"max_cost_usd\": 10", "\"max_cost_usd\": 12");
    let c = write(dir.path(), "contract.json", &changed);
    let o = run(
        &[
            "backlog",
            "validate",
            c.to_str().unwrap(),
            "--ledger",
            ledger.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert_eq!(code(&o), 2, "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("ledger.jsonl:1:2: the contract changed after the ledger started: 12 row(s)"),
        "{t}"
    );
    assert!(t.contains("hint: a frozen contract does not change"), "{t}");
    // The report refuses it as well: no numbers from a moved goalpost.
    let o = run(
        &[
            "backlog",
            "report",
            ledger.to_str().unwrap(),
            "--contract",
            c.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(o.stdout.is_empty());
}

#[test]
fn an_arm_that_accepted_nothing_has_an_undefined_cost_not_zero() {
    let (contract, _) = example();
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        &["backlog", "validate", contract.to_str().unwrap()],
        dir.path(),
    );
    let t = text(&o);
    let hash = t
        .split_whitespace()
        .find(|w| w.starts_with("sha256:"))
        .unwrap()
        .to_owned();
    let rows: String = ["BILL-311", "BILL-318"]
        .iter()
        .map(|task| {
            format!(
                "{{\"contract\":\"{hash}\",\"task\":\"{task}\",\"arm\":\"agent\",\"state\":\"failed\",\"review_minutes\":5,\"rework_minutes\":0,\"cost_usd\":3,\"reviewer\":\"li\"}}\n"
            )
        })
        .collect();
    let l = write(dir.path(), "ledger.jsonl", &rows);
    let args = [
        "backlog",
        "report",
        l.to_str().unwrap(),
        "--contract",
        contract.to_str().unwrap(),
    ];
    let o = run(&args, dir.path());
    assert_eq!(code(&o), 0, "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("cost undefined (nothing was accepted)"), "{t}");
    assert!(
        t.contains("final rate      undefined (no resolved row)"),
        "{t}"
    );
    let mut json = args.to_vec();
    json.push("--json");
    let r: serde_json::Value = serde_json::from_slice(&run(&json, dir.path()).stdout).unwrap();
    let agent = &r["arms"][1];
    assert_eq!(agent["cost_usd"]["total"], 6.0);
    assert!(agent["cost_usd"]["per_accepted"].is_null());
    assert_eq!(agent["final"]["rate"], 0.0);
    assert!(r["arms"][0]["final"].is_null());
}

#[test]
fn ledger_errors_name_file_line_and_column() {
    let (contract, _) = example();
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        &["backlog", "validate", contract.to_str().unwrap()],
        dir.path(),
    );
    let hash = text(&o)
        .split_whitespace()
        .find(|w| w.starts_with("sha256:"))
        .unwrap()
        .to_owned();
    let l = write(
        dir.path(),
        "ledger.csv",
        &format!(
            "contract,task,arm,state,review_minutes,rework_minutes,cost_usd,reviewer\n{hash},BILL-311,agent,accepted,5,0,1,li\n{hash},BILL-999,agent,failed,5,0,1,li\n{hash},BILL-311,agent,failed,5,0,1,li\n{hash},BILL-318,agent,accepted,5,0,1,\n"
        ),
    );
    let o = run(
        &[
            "backlog",
            "validate",
            contract.to_str().unwrap(),
            "--ledger",
            l.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert_eq!(code(&o), 2);
    let t = text(&o);
    let col = hash.len() + 2;
    assert!(
        t.contains(&format!("ledger.csv:3:{col}: unknown task `BILL-999`")),
        "{t}"
    );
    assert!(t.contains("ledger.csv:4:1: duplicate row: task `BILL-311`, arm `agent`, trial 1 is already on line 2"), "{t}");
    assert!(
        t.contains("ledger.csv:5:1: the row is accepted but has no `reviewer`, a blocking field"),
        "{t}"
    );
    assert!(t.contains("3 errors found"), "{t}");
}

#[test]
fn init_backlog_writes_a_template_that_validates() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(&["init", "--backlog", "pilot"], dir.path());
    assert_eq!(code(&o), 0, "{}", text(&o));
    let p = dir.path().join("pilot");
    for f in ["contract.json", "ledger.csv", "README.md"] {
        assert!(p.join(f).exists(), "{f}");
    }
    let o = run(
        &[
            "backlog",
            "validate",
            "pilot/contract.json",
            "--ledger",
            "pilot/ledger.csv",
        ],
        dir.path(),
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        text(&o).contains("ok: pilot/ledger.csv (0 rows"),
        "{}",
        text(&o)
    );
    // An empty ledger reports nothing as a zero: every rate rests on nothing resolved.
    let o = run(
        &[
            "backlog",
            "report",
            "pilot/ledger.csv",
            "--contract",
            "pilot/contract.json",
        ],
        dir.path(),
    );
    let t = text(&o);
    assert!(
        t.contains("final rate      undefined (no resolved row)"),
        "{t}"
    );
    assert!(t.contains("cost undefined (nothing was accepted)"), "{t}");
    // A second init does not overwrite.
    let o = run(&["init", "--backlog", "pilot"], dir.path());
    assert_eq!(code(&o), 2);
}
