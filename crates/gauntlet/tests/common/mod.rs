//! Test support for the binary's integration tests: the binary as a [`Command`] ([`bin`],
//! [`run`]), what it printed ([`code`], [`text`]), what it wrote ([`report`], [`case`]), the
//! repository's files ([`root`], [`examples`], [`write`]), child processes that die with the
//! test ([`ChildGuard`], [`serve_fake`]), and the python3 check the example agents need
//! ([`have_python`]).

// Every test file is a crate of its own and uses only some of these.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

/// The gauntlet binary, without colours.
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gauntlet"));
    c.env("NO_COLOR", "1");
    c
}

/// Runs the binary with `args` in `dir`.
pub fn run(args: &[&str], dir: &Path) -> Output {
    bin()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run gauntlet")
}

/// The exit code.
pub fn code(o: &Output) -> i32 {
    o.status.code().expect("exit code")
}

/// Stdout then stderr, for assertions and failure messages.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The `report.json` written into `out`.
pub fn report(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).expect("report.json"))
        .expect("report.json parses")
}

/// The case with this id in a report.
pub fn case<'a>(r: &'a Value, id: &str) -> &'a Value {
    r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["case"]["id"] == id)
        .unwrap_or_else(|| panic!("no case {id}"))
}

/// The repository root (the examples' commands are relative to it).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The repository's `examples` folder.
pub fn examples() -> PathBuf {
    root().join("examples")
}

/// Writes `dir/name` and returns its path.
pub fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p
}

/// A child process killed when the guard is dropped, also when the test panics.
pub struct ChildGuard(pub Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `gauntlet serve-fake` with a persona on a free port; returns it and its base URL.
pub fn serve_fake(persona: &str) -> (ChildGuard, String) {
    let mut child = bin()
        .args(["serve-fake", "--persona", persona, "--port", "0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = first_url(&line);
    (ChildGuard(child), url)
}

/// The first `http://` URL in a line of output, without trailing punctuation.
pub fn first_url(line: &str) -> String {
    line.split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .trim_end_matches([',', ')', ';'])
        .to_owned()
}

/// Whether python3 runs; says the test is skipped when it does not.
#[allow(clippy::print_stderr)]
pub fn have_python() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "pass"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: python3 is not on PATH, and the example agent is a Python script");
    }
    ok
}
