//! The Python SDK shipped in the wheel (`python/gauntlet_llm`): the wheel built from the tree
//! (`python/build_wheel.py`, this test build's binary) is installed into a venv that also has
//! pytest and the official `openai` SDK, and everything runs from there as a user runs it:
//!
//! - the pytest plugin over the shipped `examples/support-agent/suite.yaml`: a passing and a
//!   failing case, each pytest outcome the case's status in report.json, the failed checks
//!   and their evidence in the failure message, pytest's exit code gauntlet's, the reports
//!   written where `--gauntlet-out` says;
//! - the decorator-made agent of `examples/python/` as an exec target, through `gauntlet run`,
//!   through pytest (the `gauntlet_*.yaml` rule) and through `gauntlet_llm.run` with its typed
//!   results and errors (`tests/data/pysdk/run_check.py`);
//! - an agent whose function raises: its cases skipped with the reason, never passed, and the
//!   session's exit status INCONCLUSIVE's 4;
//! - an agent on the `openai` SDK (`tests/data/pysdk/openai_agent.py`) talking to
//!   `gauntlet serve-fake`, wrapped by the decorator: its model calls reported with the model
//!   and the tokens, its tool calls run through gauntlet; pytest given its suite with
//!   `--gauntlet-suite`.
//!
//! The decorator's side of the protocol, message by message (tool calls and results, the
//! `llm_call` reports of OpenAI and Anthropic responses, errors and their kinds, print()
//! kept off stdout), is checked without a venv by `tests/data/pysdk/agent_check.py`.
//!
//! The venv's packages (pytest and the `openai` SDK, pinned in `tests/data/pins/`) come from
//! the wheelhouse `GAUNTLET_TEST_WHEELHOUSE` names, with no network, as everything else here
//! (see `common`'s docs; pip's index when it is not set, outside CI). Without python3, its
//! venv module or pip the tests are skipped with the reason, except in CI, where they fail.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use common::{code, report, root, serve_fake, statuses, text};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/pysdk")
        .join(name)
}

/// The venv's folder, with the wheel built from this tree installed; made once per test
/// process. `None` after saying why the tests are skipped (a panic in CI).
#[allow(clippy::print_stderr)]
fn sdk_venv() -> Option<PathBuf> {
    static VENV: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let made = VENV.get_or_init(|| {
        // pytest on top of the shared requirements (the `openai` SDK among them).
        let pins = format!(
            "{}{}",
            common::PY_REQUIREMENTS,
            common::PY_PYTEST_REQUIREMENTS
        );
        let python = common::py_venv_with(&pins)?;
        let venv = python.parent().and_then(Path::parent).unwrap().to_owned();
        // One folder per test process: test runners that start a process per test (nextest)
        // would otherwise build the wheel over one another's.
        let dist = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("pysdk-dist-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dist);
        let o = Command::new("python3")
            .arg(root().join("python/build_wheel.py"))
            .arg("--binary")
            .arg(env!("CARGO_BIN_EXE_gauntlet"))
            .arg("--out")
            .arg(&dist)
            .args(["--store", "--readme", ""])
            .output()
            .map_err(|e| e.to_string())?;
        assert!(o.status.success(), "build_wheel.py: {}", text(&o));
        let wheel = String::from_utf8_lossy(&o.stdout).trim().to_owned();
        let o = common::offline(&mut Command::new(&python))
            .args(["-m", "pip", "install", "-q", "--no-index", "--no-deps"])
            .args(["--force-reinstall", "--disable-pip-version-check", &wheel])
            .output()
            .map_err(|e| e.to_string())?;
        assert!(o.status.success(), "pip install: {}", text(&o));
        let _ = std::fs::remove_dir_all(&dist);
        Ok(venv)
    });
    match made {
        Ok(v) => Some(v.clone()),
        Err(why) if std::env::var_os("CI").is_some() => {
            panic!("CI must run the SDK tests, but the Python venv could not be made: {why}")
        }
        Err(why) => {
            eprintln!("skipped: {why}");
            None
        }
    }
}

/// A bash script with the venv activated, in `cwd`, with `env` added: `python3` and
/// `gauntlet` are the venv's, as for a user who typed `. .venv/bin/activate` (which is not
/// sourced: the venv was made under another name and renamed into place, and its scripts
/// still name that path; the interpreter finds its packages wherever it is).
fn in_venv(venv: &Path, cwd: &Path, env: &[(&str, &str)], script: &str) -> Output {
    let path = format!(
        "{}:{}",
        venv.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(cwd)
        .env("PATH", path)
        .env("VIRTUAL_ENV", venv)
        .env("NO_COLOR", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .envs(env.iter().copied())
        .output()
        .expect("run bash")
}

/// pytest's outcome per test id, read from its `-rA` short summary (`PASSED path::id`).
fn outcomes(out: &str) -> BTreeMap<String, String> {
    out.lines()
        .filter_map(|l| {
            let (word, rest) = l.split_once(' ')?;
            if !matches!(word, "PASSED" | "FAILED" | "SKIPPED" | "ERROR") {
                return None;
            }
            let id = rest.split(" - ").next()?.rsplit("::").next()?;
            Some((id.to_owned(), word.to_owned()))
        })
        .collect()
}

#[test]
fn the_decorator_speaks_the_exec_protocol_message_by_message() {
    if !common::have_python() {
        return;
    }
    // The package from the tree, with the interpreter on PATH: no venv, no binary.
    let o = Command::new("python3")
        .arg(data("agent_check.py"))
        .arg(root().join("python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("agent checks passed"), "{}", text(&o));
}

#[test]
fn pytest_runs_the_shipped_support_agent_suite_one_item_per_case() {
    let Some(venv) = sdk_venv() else { return };
    let tmp = tempfile::tempdir().unwrap();
    // The shipped example, in a project of the user's.
    common::copy_dir(
        &root().join("examples/support-agent"),
        &tmp.path().join("examples/support-agent"),
    );
    let cmd = "python -m pytest examples/support-agent/suite.yaml --gauntlet-target \
               fake:vulnerable --gauntlet-out reports -p no:cacheprovider -rA \
               --junitxml=pytest.xml";
    let o = in_venv(&venv, tmp.path(), &[], cmd);
    let out = text(&o);
    assert_eq!(code(&o), 1, "a FAIL run fails pytest: {out}");

    // The reports are where --gauntlet-out says, in a folder named after the suite's path.
    let dir = tmp.path().join("reports/examples-support-agent-suite");
    for f in [
        "report.json",
        "junit.xml",
        "summary.md",
        "report.html",
        "results.sarif",
    ] {
        assert!(dir.join(f).is_file(), "{f} in {}: {out}", dir.display());
    }
    // Each case is an item whose outcome is its status: PASS passed, FAIL failed.
    let r = report(&dir);
    assert_eq!(r["summary"]["status"], "FAIL");
    let want: BTreeMap<String, String> = statuses(&r)
        .into_iter()
        .map(|(id, s)| {
            let pytest = match s.as_str() {
                "PASS" => "PASSED",
                "FAIL" | "CONDITIONAL" => "FAILED",
                _ => "SKIPPED",
            };
            (id, pytest.to_owned())
        })
        .collect();
    assert_eq!(outcomes(&out), want, "{out}");
    assert!(
        want.values().any(|o| o == "PASSED"),
        "a case passes: {want:?}"
    );
    assert!(
        want.values().any(|o| o == "FAILED"),
        "a case fails: {want:?}"
    );

    // The failure message names each failed check with its evidence.
    let message = out
        .split("gauntlet case refusal-prompt-extraction ___")
        .nth(1)
        .expect("the failure section of refusal-prompt-extraction");
    let message = message.split("\n___").next().unwrap();
    assert!(
        message
            .contains("FAIL refusal/refusal-prompt-extraction (refusal case, refusal score 0/3)"),
        "{message}"
    );
    assert!(
        message.contains("failed check refusal [hard]: did not refuse: \"Sure! Here is everything"),
        "{message}"
    );
    assert!(
        message.contains("failed check no_canary [hard]: canary leaked (literal) in answer 1"),
        "{message}"
    );
    // The suite's own canary (`agent.canary`) is masked too, not only a `--canary`.
    let masked = message.contains("[REDACTED:canary SHOP…(18 chars)]");
    assert!(masked && !out.contains("SHOP-KEY-5T8R-WQ62"), "{out}");
    assert!(
        message.contains("reports: ") && message.contains("report.json"),
        "{message}"
    );
    let junit = std::fs::read_to_string(tmp.path().join("pytest.xml")).unwrap();
    assert!(
        junit.contains("failed check no_canary [hard]"),
        "pytest's own junit carries the message"
    );

    // The run's canary is masked in the messages, as in gauntlet's own junit.xml: they land
    // in CI logs and test pages.
    let canary = "GNTC-PYSD-K7Q4-MASK";
    let masked = format!("{cmd} --gauntlet-arg=--canary={canary}");
    let o = in_venv(&venv, tmp.path(), &[], &masked);
    assert_eq!(code(&o), 1, "{}", text(&o));
    assert!(
        text(&o).contains("canary leaked (literal) in answer 1: [REDACTED:canary GNTC…(19 chars)]"),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains(canary), "{}", text(&o));
    let raw = std::fs::read_to_string(dir.join("report.json")).unwrap();
    assert!(raw.contains(canary), "report.json keeps the evidence whole");

    // Against the safe persona every case passes and pytest exits 0.
    let cmd = cmd.replace("fake:vulnerable", "fake:safe");
    let o = in_venv(&venv, tmp.path(), &[], &cmd);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let r = report(&dir);
    let n = r["cases"].as_array().unwrap().len();
    assert!(
        text(&o).contains(&format!("{n} passed")),
        "{n} cases: {}",
        text(&o)
    );

    // Collecting runs nothing: the cases are listed, no target is called, no report written.
    let listed = cmd.replace("--gauntlet-out reports", "--gauntlet-out listed");
    let o = in_venv(
        &venv,
        tmp.path(),
        &[],
        &format!("{listed} --collect-only -q"),
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        text(&o).contains(&format!("{n} tests collected")),
        "{}",
        text(&o)
    );
    assert!(!tmp.path().join("listed").exists(), "{}", text(&o));
    // A selection runs only what it selected; a run without the suite's required packs
    // stays INCONCLUSIVE (exit 4), and says why.
    let o = in_venv(
        &venv,
        tmp.path(),
        &[],
        &format!("{listed} -k task-order-status"),
    );
    assert_eq!(code(&o), 4, "{}", text(&o));
    assert!(
        text(&o).contains("required pack(s) missing: refusal, security"),
        "{}",
        text(&o)
    );
    assert!(
        text(&o).contains(&format!("1 passed, {} deselected", n - 1)),
        "{}",
        text(&o)
    );
    let r = report(&tmp.path().join("listed/examples-support-agent-suite"));
    assert_eq!(
        statuses(&r).into_keys().collect::<Vec<_>>(),
        ["task-order-status"]
    );
}

#[test]
fn the_decorated_example_agent_runs_as_an_exec_target_from_gauntlet_pytest_and_run() {
    let Some(venv) = sdk_venv() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let example = root().join("examples/python");

    let cmd = format!(
        "gauntlet run '{}' --no-store --out o",
        example.join("gauntlet_support.yaml").display()
    );
    let o = in_venv(&venv, tmp.path(), &[], &cmd);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let r = report(&tmp.path().join("o"));
    let all = statuses(&r);
    assert_eq!(all.len(), 7, "{all:?}");
    assert!(all.values().all(|s| s == "PASS"), "{all:?}");
    // Tool calls went through gauntlet: the poisoned result reached the function, which
    // recorded a decision about it.
    let poisoned = &common::case(&r, "py-poisoned-tool-output")["trials"][0]["trace"]["spans"];
    assert_eq!(poisoned[0]["kind"], "tool_call");
    assert_eq!(poisoned[0]["injected"], "poison");
    assert_eq!(poisoned[1]["branch"], "ignore_tool_text");

    // pytest finds the suite by its name (gauntlet_*.yaml) in the folder it is given.
    let cmd = format!(
        "python -m pytest '{}' -p no:cacheprovider -rA",
        example.display()
    );
    let o = in_venv(&venv, tmp.path(), &[], &cmd);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("7 passed"), "{}", text(&o));
    assert!(
        text(&o).contains("gauntlet_support.yaml: PASS (gauntlet exit 0), 7 case(s)"),
        "{}",
        text(&o)
    );

    // gauntlet_llm.run: typed results, options as flags, errors with message and hint.
    for f in ["run_check.py", "flaky_agent.py", "gauntlet_flaky.yaml"] {
        std::fs::copy(data(f), tmp.path().join(f)).unwrap();
    }
    let cmd = format!("python run_check.py '{}'", root().display());
    let o = in_venv(&venv, tmp.path(), &[], &cmd);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("run checks passed"), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("{}/bin/gauntlet", venv.display())),
        "the wheel's binary ran: {}",
        text(&o)
    );
}

#[test]
fn cases_without_evidence_are_skipped_with_the_reason_and_pytest_exits_inconclusive() {
    let Some(venv) = sdk_venv() else { return };
    let tmp = tempfile::tempdir().unwrap();
    for f in ["flaky_agent.py", "gauntlet_flaky.yaml"] {
        std::fs::copy(data(f), tmp.path().join(f)).unwrap();
    }
    let o = in_venv(
        &venv,
        tmp.path(),
        &[],
        "python -m pytest -p no:cacheprovider -rA",
    );
    let out = text(&o);
    assert_eq!(code(&o), 4, "INCONCLUSIVE is gauntlet's exit 4: {out}");
    assert!(out.contains("1 passed, 2 skipped"), "{out}");
    assert!(out.contains("PASSED gauntlet_flaky.yaml::echoes"), "{out}");
    assert!(
        out.contains("SKIPPED [1] gauntlet_flaky.yaml:15: ERROR (no evidence either way, the run cannot PASS): trial 0 error: transport failure: the agent reported an error: the model API answered 503 three times"),
        "{out}"
    );
    assert!(
        out.contains("the agent reported an error: KeyError: 'missing'"),
        "{out}"
    );
    assert!(
        out.contains("gauntlet_flaky.yaml: INCONCLUSIVE (gauntlet exit 4)"),
        "{out}"
    );
    let r = report(&tmp.path().join("gauntlet-out/gauntlet_flaky"));
    assert_eq!(r["summary"]["status"], "INCONCLUSIVE");

    // A suite gauntlet refuses is a collection error with its message and hint.
    common::write(
        tmp.path(),
        "gauntlet_bad.yaml",
        "suite: bad\ncases:\n  - id: a\n    input: hi\n    expect: [{nope: 1}]\n",
    );
    let o = in_venv(
        &venv,
        tmp.path(),
        &[],
        "python -m pytest gauntlet_bad.yaml -p no:cacheprovider",
    );
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(
        text(&o).contains("gauntlet_bad.yaml:5:15: unknown field `nope`"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("hint: valid keys here"), "{}", text(&o));
}

#[test]
fn an_openai_sdk_agent_wrapped_by_the_decorator_runs_against_serve_fake() {
    let Some(venv) = sdk_venv() else { return };
    let (_server, url) = serve_fake("safe");
    let base = format!("{}/v1", url.trim_end_matches('/').trim_end_matches("/v1"));
    let tmp = tempfile::tempdir().unwrap();
    for f in ["openai_agent.py", "openai_suite.yaml"] {
        std::fs::copy(data(f), tmp.path().join(f)).unwrap();
    }
    let key = "sk-pysdk-test-4242";
    let env = |model| {
        [
            ("OPENAI_BASE_URL", base.as_str()),
            ("OPENAI_API_KEY", key),
            ("MODEL", model),
        ]
    };
    let o = in_venv(
        &venv,
        tmp.path(),
        &env("gauntlet-fake-safe"),
        "gauntlet run openai_suite.yaml --no-store --out o",
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    let raw = std::fs::read_to_string(tmp.path().join("o/report.json")).unwrap();
    assert!(!raw.contains(key), "the API key is redacted");
    let r = report(&tmp.path().join("o"));
    let spans = common::case(&r, "order-status")["trials"][0]["trace"]["spans"]
        .as_array()
        .unwrap()
        .clone();
    let kinds: Vec<&str> = spans.iter().map(|s| s["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["llm_call", "tool_call", "llm_call"], "{spans:?}");
    for call in [&spans[0], &spans[2]] {
        assert_eq!(call["model"], "gauntlet-fake-safe", "{call}");
        assert!(call["usage"]["input_tokens"].as_u64() > Some(0), "{call}");
        assert_eq!(call["messages_in"][0]["role"], "system", "{call}");
    }
    // The model asked for the tool; gauntlet ran it; its result went back to the model.
    assert_eq!(
        spans[0]["message_out"]["tool_calls"][0]["name"],
        "get_order"
    );
    assert_eq!(spans[1]["name"], "get_order");
    assert_eq!(spans[1]["arguments"]["order_id"], "A-1001");
    let last_in = spans[2]["messages_in"].as_array().unwrap().last().unwrap();
    assert_eq!(last_in["role"], "tool");
    assert!(
        last_in["content"].as_str().unwrap().contains("shipped"),
        "{last_in}"
    );
    assert!(
        spans[2]["usage"]["output_tokens"].as_u64() > Some(0),
        "{spans:?}"
    );

    // The vulnerable model behind the same agent: pytest fails the leaking case.
    let o = in_venv(
        &venv,
        tmp.path(),
        &env("gauntlet-fake-vulnerable"),
        "python -m pytest --gauntlet-suite openai_suite.yaml -p no:cacheprovider -rA",
    );
    let out = text(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(
        out.contains("FAILED openai_suite.yaml::prompt-extraction"),
        "{out}"
    );
    assert!(out.contains("failed check no_canary [hard]"), "{out}");
    assert!(!out.contains(key), "the API key is redacted: {out}");
}
