//! Rust repositories in `gauntlet impact task`: `cargo test --offline --no-fail-fast` run
//! in a grading copy, its libtest output read per test (`test NAME ... ok|FAILED|ignored`,
//! each block attributed to the target cargo named in its `Running unittests src/lib.rs` /
//! `Running tests/x.rs` line), ids named `FILE::PATH::NAME` as the impact map names files:
//! a unit test `a::b::tests::t` of the library is `src/a/b.rs::tests::t` (the file of the
//! longest module prefix), an integration test `t` of `tests/x.rs` is `tests/x.rs::t`.
//! A crate that does not compile fails every test of the run, with the compiler's first
//! error as detail. A crate that needs to download dependencies cannot be built (`--offline`):
//! vendored or already cached dependencies only.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use gauntlet_core::redact::Redactor;

use super::run_test_command;
use crate::task::ObservedTest;
use crate::text::clip;
use crate::trajectory::TestState;
use crate::tree::copy_tree;

/// The command the agent is told runs the tests (it may add `--test NAME` or `--lib`).
pub const AGENT_RUNNER: &[&str] = &["cargo", "test", "--offline"];

/// The toolchain's variables handed to cargo (and to the agent of a Rust repository) on top
/// of the exec allow-list: `RUSTUP_HOME`, `CARGO_HOME` and `RUSTUP_TOOLCHAIN` as gauntlet has
/// them. `HOME` is the run's own folder, so `RUSTUP_HOME` and `CARGO_HOME`, when not set,
/// are gauntlet's `~/.rustup` and `~/.cargo` (where they exist).
pub fn toolchain_env() -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    for (name, default) in [
        ("RUSTUP_HOME", Some(".rustup")),
        ("CARGO_HOME", Some(".cargo")),
        ("RUSTUP_TOOLCHAIN", None),
    ] {
        if let Some(v) = std::env::var_os(name) {
            env.insert(name.to_owned(), v.to_string_lossy().into_owned());
        } else if let (Some(h), Some(d)) = (&home, default)
            && h.join(d).is_dir()
        {
            env.insert(name.to_owned(), h.join(d).display().to_string());
        }
    }
    env
}

/// One libtest line read.
#[derive(Debug, PartialEq)]
pub struct LibTest {
    /// `FILE::PATH::NAME`.
    pub id: String,
    pub state: TestState,
    pub detail: Option<String>,
}

/// The file of a test `path` (`a::b::tests::t`) run from the target `root` (`src/lib.rs`):
/// the longest module prefix in `modules` (module path -> file), else the root itself.
fn attribute(root: &str, name: &str, modules: &BTreeMap<String, String>) -> String {
    if root.starts_with("src/") {
        let segs: Vec<&str> = name.split("::").collect();
        for n in (1..segs.len()).rev() {
            let m = segs[..n].join("::");
            if let Some(f) = modules.get(&m) {
                return format!("{f}::{}", segs[n..].join("::"));
            }
        }
    }
    format!("{root}::{name}")
}

/// Reads cargo's output: `Running X` lines (stderr) zipped in order with libtest's
/// `running N tests` blocks (stdout). When nothing ran: `Err` FAIL with the compiler's first
/// error when the build failed (the code's outcome), else NOT_ASSESSED with cargo's first
/// error (a dependency that cannot be fetched offline, a manifest cargo cannot read).
pub fn parse(
    stdout: &str,
    stderr: &str,
    modules: &BTreeMap<String, String>,
) -> Result<Vec<LibTest>, (TestState, String)> {
    let roots: Vec<String> = stderr
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let rest = l.strip_prefix("Running ")?;
            let rest = rest.strip_prefix("unittests ").unwrap_or(rest);
            Some(rest.split(" (").next().unwrap_or(rest).trim().to_owned())
        })
        .collect();
    let mut out = Vec::new();
    let mut block: Option<String> = None;
    let mut k = 0;
    let mut failures: BTreeMap<String, String> = BTreeMap::new();
    let mut current_failure: Option<(String, String)> = None;
    for line in stdout.lines() {
        if line.starts_with("running ") && (line.ends_with(" test") || line.ends_with(" tests")) {
            block = Some(roots.get(k).cloned().unwrap_or_else(|| "?".into()));
            k += 1;
            continue;
        }
        let Some(root) = &block else { continue };
        if let Some(rest) = line.strip_prefix("---- ")
            && let Some(name) = rest.strip_suffix(" stdout ----")
        {
            if let Some((n, d)) = current_failure.take() {
                failures.insert(n, d);
            }
            current_failure = Some((attribute(root, name, modules), String::new()));
            continue;
        }
        if let Some((_, d)) = &mut current_failure {
            if line == "failures:" || line.starts_with("test result:") {
                let (n, d) = current_failure.take().expect("set");
                failures.insert(n, d);
            } else {
                d.push_str(line);
                d.push('\n');
            }
            continue;
        }
        let Some(rest) = line.strip_prefix("test ") else {
            continue;
        };
        let Some((name, verdict)) = rest.rsplit_once(" ... ") else {
            continue;
        };
        let (state, detail) = match verdict.trim() {
            "ok" => (TestState::Pass, None),
            "FAILED" => (TestState::Fail, None),
            v if v.starts_with("ignored") => (TestState::NotAssessed, Some(v.to_owned())),
            _ => continue,
        };
        out.push(LibTest {
            id: attribute(root, name.trim(), modules),
            state,
            detail,
        });
    }
    if let Some((n, d)) = current_failure.take() {
        failures.insert(n, d);
    }
    for t in &mut out {
        if t.state == TestState::Fail {
            t.detail = Some(clip(failures.get(&t.id).map_or("failed", |d| d.as_str())));
        }
    }
    if out.is_empty() && k == 0 && stderr.contains("error") {
        return Err(if stderr.contains("could not compile") {
            (
                TestState::Fail,
                format!("does not compile: {}", first_error(stderr)),
            )
        } else {
            (
                TestState::NotAssessed,
                format!("cargo could not run the tests: {}", first_error(stderr)),
            )
        });
    }
    Ok(out)
}

/// The compiler's first error with its location line.
fn first_error(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().collect();
    match lines.iter().position(|l| l.starts_with("error")) {
        Some(i) => {
            let mut s = lines[i].to_owned();
            if let Some(at) = lines
                .get(i + 1)
                .filter(|l| l.trim_start().starts_with("-->"))
            {
                s.push(' ');
                s.push_str(at.trim());
            }
            s
        }
        None => clip(stderr),
    }
}

/// What to run in one cargo invocation.
pub struct CargoRun<'a> {
    /// The folder copied for the run.
    pub dir: &'a Path,
    /// Integration test stems (`--test NAME`).
    pub tests: Vec<String>,
    /// Also the library's (and binaries') unit tests.
    pub units: bool,
    /// The ids expected (from the baseline), so that a run that cannot happen still yields
    /// an outcome for each; `fallback` names the run when none are known.
    pub known: Vec<String>,
    pub fallback: String,
}

/// Runs `run` in a fresh copy at `scratch`, under the exec target's process handling
/// (environment allow-list plus [`toolchain_env`] and `CARGO_TARGET_DIR`, own process group,
/// `limit`).
///
/// `target_dir` is shared by every run of one `impact task` so that grading compiles
/// incrementally. A stale build cannot be graded: every run copies the sources anew (new
/// files, so their modification time is later than any artifact in `target_dir`), and cargo
/// rebuilds a unit whenever one of the sources its dep-info lists is newer than the build;
/// the folder is a fresh temporary one per run, outside the agent's workspace and the task
/// file's folder, and its name is not told to the agent.
pub async fn run_cargo(
    run: &CargoRun<'_>,
    scratch: &Path,
    target_dir: &Path,
    modules: &BTreeMap<String, String>,
    limit: Duration,
    redactor: &mut Redactor,
) -> Result<Vec<ObservedTest>, crate::Error> {
    let _ = std::fs::remove_dir_all(scratch);
    copy_tree(run.dir, scratch)?;
    let _ = std::fs::remove_dir_all(scratch.join("target"));
    let _ = std::fs::remove_dir_all(scratch.join(".gauntlet"));
    let every = |state: TestState, detail: String| {
        ObservedTest::every(&run.known, &run.fallback, state, detail)
    };
    let mut command: Vec<String> = ["cargo", "test", "--offline", "--no-fail-fast"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if run.units {
        if scratch.join("src/lib.rs").is_file() {
            command.push("--lib".into());
        }
        if scratch.join("src/main.rs").is_file() || scratch.join("src/bin").is_dir() {
            command.push("--bins".into());
        }
    }
    for t in &run.tests {
        command.push("--test".into());
        command.push(t.clone());
    }
    let mut env = toolchain_env();
    env.insert("CARGO_TARGET_DIR".into(), target_dir.display().to_string());
    env.insert("CARGO_TERM_COLOR".into(), "never".into());
    let r = match run_test_command(command, env, scratch, limit, redactor).await {
        Ok(r) => r,
        Err(why) => return Ok(every(TestState::NotAssessed, why)),
    };
    let parsed = match parse(&r.stdout, &r.stderr, modules) {
        Ok(p) => p,
        // A crate (or test) that does not compile is the change's outcome: it fails.
        Err((state, e)) => return Ok(every(state, e)),
    };
    if parsed.is_empty() {
        return Ok(every(
            TestState::NotAssessed,
            format!("no tests found: {}", clip(&r.stderr)),
        ));
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for t in parsed {
        seen.insert(t.id.clone());
        out.push(ObservedTest {
            id: t.id,
            state: t.state,
            detail: t.detail,
        });
    }
    out.extend(ObservedTest::not_found(&run.known, &seen));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STDERR: &str = "   Compiling rcalc v0.1.0 (/x)\n    Finished `test` profile\n     Running unittests src/lib.rs (target/debug/deps/rcalc-1)\n     Running tests/fmt.rs (target/debug/deps/fmt-2)\n     Running tests/ops.rs (target/debug/deps/ops-3)\nerror: 1 target failed:\n";
    const STDOUT: &str = "\nrunning 2 tests\ntest ops::tests::add_small ... ok\ntest util ... ignored, slow\n\ntest result: ok.\n\nrunning 1 test\ntest total_format ... FAILED\n\nfailures:\n\n---- total_format stdout ----\nthread 'total_format' panicked at tests/fmt.rs:5:5:\nassertion failed\n\nfailures:\n    total_format\n\ntest result: FAILED.\n\nrunning 1 test\ntest adds ... ok\n\ntest result: ok.\n";

    #[test]
    fn libtest_output_is_read_per_test_and_attributed_to_files() {
        let modules = BTreeMap::from([
            (String::new(), "src/lib.rs".to_owned()),
            ("ops".to_owned(), "src/ops.rs".to_owned()),
        ]);
        let t = parse(STDOUT, STDERR, &modules).unwrap();
        let got: Vec<(&str, TestState)> = t.iter().map(|t| (t.id.as_str(), t.state)).collect();
        assert_eq!(
            got,
            [
                ("src/ops.rs::tests::add_small", TestState::Pass),
                ("src/lib.rs::util", TestState::NotAssessed),
                ("tests/fmt.rs::total_format", TestState::Fail),
                ("tests/ops.rs::adds", TestState::Pass),
            ]
        );
        assert!(t[2].detail.as_deref().unwrap().contains("assertion failed"));
    }

    #[test]
    fn a_build_failure_is_the_first_compiler_error() {
        let e = parse(
            "",
            "   Compiling rcalc\nerror: expected expression, found `}`\n --> src/ops.rs:3:1\n  |\nerror: could not compile `rcalc`\n",
            &BTreeMap::new(),
        )
        .unwrap_err();
        assert_eq!(
            e,
            (
                TestState::Fail,
                "does not compile: error: expected expression, found `}` --> src/ops.rs:3:1"
                    .to_owned()
            )
        );
        // Not the code's doing: nothing could be built.
        let e = parse(
            "",
            "error: no matching package named `serde` found\nnote: offline\n",
            &BTreeMap::new(),
        )
        .unwrap_err();
        assert_eq!(e.0, TestState::NotAssessed);
        assert!(e.1.contains("no matching package"), "{e:?}");
    }
}
