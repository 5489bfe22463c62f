//! `script:` checks end to end: examples/script-check runs its Python check and PASSes; the
//! same suite with a wrong total FAILs hard on the script's evidence; a script that crashes,
//! runs past its limit, answers something that is not the JSON asked for, or floods its
//! stdout is not assessed (never a pass); a key in gauntlet's environment reaches a script
//! only when the check names it; `audit` runs the scripts against its trivial agents.

use std::path::Path;

use serde_json::Value;

mod common;

use common::{bin, case, code, copy_dir, examples, have_python, report, run, text, write};

fn script_verdict(r: &Value, id: &str) -> Value {
    case(r, id)["trials"][0]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["check"] == "script")
        .cloned()
        .unwrap_or_else(|| panic!("no script verdict in {id}"))
}

/// A suite in `dir` with one case per (id, answer, script entry).
fn suite(dir: &Path, cases: &[(&str, &str, &str)]) -> String {
    let mut s =
        String::from("suite: s\ntarget: fake:scripted\npacks: {no_refusal_pack: true}\ncases:\n");
    for (id, answer, entry) in cases {
        s.push_str(&format!(
            "  - id: {id}\n    input: What is the total for 2 x 12.50 EUR plus 4.90 EUR shipping?\n    scripted: [{answer:?}]\n    expect:\n      - {entry}\n"
        ));
    }
    write(dir, "s.yaml", &s).display().to_string()
}

#[test]
fn the_example_script_passes_a_right_total_and_fails_a_wrong_one_hard() {
    if !have_python() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ex");
    copy_dir(&examples().join("script-check"), &dir);
    // Run from elsewhere: the script is found, and runs, in the suite's folder.
    let o = run(&["run", "ex/suite.yaml", "--out", "out"], tmp.path());
    assert_eq!(code(&o), 0, "{}", text(&o));
    let r = report(&tmp.path().join("out"));
    let v = script_verdict(&r, "order-total");
    assert_eq!(v["passed"], true, "{v}");
    assert_eq!(v["evidence"], "states the total 29.90 EUR");

    let s = std::fs::read_to_string(dir.join("suite.yaml")).unwrap();
    std::fs::write(dir.join("suite.yaml"), s.replace("29.90 EUR", "27.40 EUR")).unwrap();
    let o = run(&["run", "ex/suite.yaml", "--out", "out2"], tmp.path());
    assert_eq!(code(&o), 1, "{}", text(&o));
    let r = report(&tmp.path().join("out2"));
    let v = script_verdict(&r, "order-total");
    assert_eq!(v["passed"], false, "{v}");
    assert_eq!(v["hard_fail"], true, "{v}");
    assert_eq!(v["evidence"], "states 27.40, the total is 29.90 EUR");
    assert_eq!(case(&r, "order-total")["status"], "FAIL");

    // The example is audit-clean: the script is run against every trivial agent.
    let o = run(&["audit", "ex/suite.yaml"], tmp.path());
    assert_eq!(code(&o), 0, "{}", text(&o));
}

#[test]
fn a_script_that_breaks_is_not_assessed_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write(
        d,
        "crash.sh",
        "echo 'Traceback: KeyError answer' >&2\nexit 1\n",
    );
    write(d, "slow.sh", "exec sleep 30\n");
    write(d, "prose.sh", "echo 'looks fine to me'\n");
    write(d, "flood.sh", "exec yes '{\"pass\": true}'\n");
    write(
        d,
        "ok.sh",
        "cat >/dev/null; echo '{\"pass\": true, \"evidence\": \"fine\"}'\n",
    );
    let s = suite(
        d,
        &[
            ("crash", "29.90", "script: sh crash.sh"),
            (
                "slow",
                "29.90",
                "script: {run: sh slow.sh, timeout_ms: 300}",
            ),
            ("prose", "29.90", "script: sh prose.sh"),
            ("flood", "29.90", "script: sh flood.sh"),
            ("ok", "29.90", "script: [sh, ok.sh]"),
        ],
    );
    let started = std::time::Instant::now();
    let o = run(&["run", &s, "--out", "out"], d);
    assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
    // Nothing decided but one case: the run cannot pass.
    assert_ne!(code(&o), 0, "{}", text(&o));
    let r = report(&d.join("out"));
    for (id, why) in [
        (
            "crash",
            "the script exited with code 1; stderr: Traceback: KeyError answer",
        ),
        ("slow", "ran past its time limit"),
        ("prose", "the script's answer is not JSON"),
        ("flood", "more on stdout than a check answer may hold"),
    ] {
        let v = script_verdict(&r, id);
        assert_eq!(v["assessed"], false, "{id}: {v}");
        assert_eq!(v["passed"], false, "{id}: {v}");
        assert!(v["evidence"].as_str().unwrap().contains(why), "{id}: {v}");
        assert_ne!(case(&r, id)["status"], "PASS", "{id}");
    }
    assert_eq!(case(&r, "ok")["status"], "PASS");
}

#[test]
fn a_key_reaches_a_script_only_when_the_check_names_it() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    write(
        d,
        "env.sh",
        "cat >/dev/null\nif [ -n \"$SHOP_API_KEY\" ]; then echo '{\"pass\": false, \"evidence\": \"key seen\"}'; else echo '{\"pass\": true, \"evidence\": \"no key\"}'; fi\n",
    );
    let s = suite(
        d,
        &[
            ("unnamed", "29.90", "script: sh env.sh"),
            (
                "named",
                "29.90",
                "script: {run: sh env.sh, env: [SHOP_API_KEY]}",
            ),
        ],
    );
    let o = bin()
        .args(["run", &s, "--out", "out"])
        .current_dir(d)
        .env("SHOP_API_KEY", "sk-live-4f9a8b7c6d5e")
        .output()
        .unwrap();
    let r = report(&d.join("out"));
    assert_eq!(
        script_verdict(&r, "unnamed")["evidence"],
        "no key",
        "{}",
        text(&o)
    );
    assert_eq!(script_verdict(&r, "named")["evidence"], "key seen");
}

#[test]
fn validate_points_at_a_script_that_is_not_there() {
    let tmp = tempfile::tempdir().unwrap();
    let s = suite(tmp.path(), &[("a", "29.90", "script: ./check_totl.py")]);
    let o = run(&["validate", &s], tmp.path());
    assert_eq!(code(&o), 2, "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains(&format!(
            "error: {s}:9:17: no script `./check_totl.py` in the suite's folder"
        )),
        "{t}"
    );
    assert!(
        t.contains("hint: a program with a `/` is a path relative to the suite file"),
        "{t}"
    );
}
