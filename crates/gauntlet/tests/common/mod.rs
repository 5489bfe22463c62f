//! Test support for the binary's integration tests: the binary as a [`Command`] ([`bin`],
//! [`run`]), what it printed ([`code`], [`text`]), what it wrote ([`report`], [`case`]), the
//! repository's files ([`root`], [`examples`], [`write`], [`copy_dir`]), each case's status
//! ([`statuses`]) and verdicts ([`case_verdicts`]), the personas of a `serve-fake` as named
//! targets ([`personas_config`]), child processes that die with the
//! test ([`ChildGuard`], [`serve_fake`]), one HTTP request read off a socket by the tests' own
//! servers ([`read_http_request`], [`http_body`]) and a server that answers JSON
//! ([`serve_json`], [`json_response`], [`completion`]), the python3 check the example agents
//! need ([`have_python`]) and its venv module ([`venv_available`]), and the Python tests'
//! venvs ([`py_venv`], [`py_venv_or_skip`]).
//!
//! The venvs' packages are the pins of `tests/data/pins/`. With `GAUNTLET_TEST_WHEELHOUSE`
//! naming a folder of wheels (`.ci/wheelhouse DIR` fills one; `.ci/run` does and exports it)
//! pip installs from that folder alone, `--no-index`, every proxy pointed at a closed port
//! ([`pip_install`], [`offline`]): no test reaches the network. Without it pip downloads
//! them from its index, as on a developer machine; in CI (`CI` set) a missing wheelhouse
//! fails the Python tests ([`pip_source_from`]).

// Every test file is a crate of its own and uses only some of these.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;

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

/// The `report.json` written into `out`, as a reader that wants every field sees it: what
/// gauntlet leaves out because it repeats another field ([`expand_case`]) written back in.
pub fn report(out: &Path) -> Value {
    let mut r: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("report.json")).expect("report.json"),
    )
    .expect("report.json parses");
    for c in r["cases"].as_array_mut().into_iter().flatten() {
        expand_case(c);
    }
    r
}

/// Writes back into a case of `report.json` what is left out when it repeats another field,
/// by the rules of docs/report-format.md (read independently of gauntlet's own reader): the
/// one trial's `score` and `spend`, the id as `name`, the check's name as a verdict's
/// `label`, the turns that follow from the model calls.
pub fn expand_case(c: &mut Value) {
    let one = c["trials"]
        .as_array()
        .filter(|t| t.len() == 1)
        .map(|t| t[0].clone());
    if c.get("score").is_none()
        && let Some(t) = &one
    {
        c["score"] = t["score"].clone();
        if c.get("spend").is_none() && t.get("spend").is_some() {
            c["spend"] = t["spend"].clone();
        }
    }
    if c["case"].get("name").is_none() {
        c["case"]["name"] = c["case"]["id"].clone();
    }
    for t in c["trials"].as_array_mut().into_iter().flatten() {
        for v in t["verdicts"].as_array_mut().into_iter().flatten() {
            if v.get("label").is_none() {
                v["label"] = v["check"].clone();
            }
        }
        expand_trace(&mut t["trace"]);
    }
}

/// Writes back a trace's `turns` when they were left out: a turn starts at each model call
/// whose last message in is the user's, and its answer is the last call's reply before the
/// next turn.
pub fn expand_trace(trace: &mut Value) {
    if trace.get("turns").is_some() {
        return;
    }
    let mut turns: Vec<Value> = Vec::new();
    for s in trace["spans"].as_array().into_iter().flatten() {
        if s["kind"] != "llm_call" {
            continue;
        }
        let answer = s["message_out"]["content"].clone();
        let truncated = s["finish_reason"] == "length";
        let last = s["messages_in"].as_array().and_then(|m| m.last());
        match last {
            Some(m) if m["role"] == "user" => turns.push(serde_json::json!({
                "user": m["content"], "answer": answer, "truncated": truncated
            })),
            _ => {
                let t = turns.last_mut().expect("a model call before any user turn");
                t["answer"] = answer;
                t["truncated"] = Value::Bool(truncated);
            }
        }
    }
    trace["turns"] = Value::Array(turns);
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

/// Each case of a report as (id, status, its first trial's verdicts as JSON), sorted: what a
/// regrade of the same traces must give again.
pub fn case_verdicts(r: &Value) -> Vec<(String, String, String)> {
    let mut v: Vec<(String, String, String)> = r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["case"]["id"].as_str().unwrap().to_owned(),
                c["status"].as_str().unwrap().to_owned(),
                c["trials"][0]["verdicts"].to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

/// A config file whose named targets are personas of one `serve-fake` at `url`: the agents
/// `agent-vulnerable` and `agent-safe`, and the scripted attacker `red`.
pub fn personas_config(dir: &Path, url: &str) {
    let t = |name: &str, model: &str| {
        format!("  {name}:\n    kind: openai\n    model: {model}\n    base_url: {url}/v1\n")
    };
    write(
        dir,
        "gauntlet.yaml",
        &format!(
            "targets:\n{}{}{}",
            t("agent-vulnerable", "gauntlet-fake-vulnerable"),
            t("agent-safe", "gauntlet-fake-safe"),
            t("red", "gauntlet-fake-attacker"),
        ),
    );
}

/// Each case of a report with its status: case id -> status.
pub fn statuses(r: &Value) -> BTreeMap<String, String> {
    r["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["case"]["id"].as_str().unwrap().to_owned(),
                c["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Copies the folder `from` into `to`, sub-folders included.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
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

/// Whether `python3 -m venv` works; says why `what` is skipped when it does not, or fails it
/// under CI.
#[allow(clippy::print_stderr)]
pub fn venv_available(what: &str) -> bool {
    let ok = Command::new("python3")
        .args(["-m", "venv", "--help"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok && std::env::var_os("CI").is_some() {
        panic!("CI must run {what}, but `python3 -m venv` does not run (python3-venv)");
    }
    if !ok {
        eprintln!("skipped: `python3 -m venv` does not run (install python3 and python3-venv)");
    }
    ok
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

/// What the Python test venv installs: the vendors' SDKs (read serve-fake's answers as a
/// user's code does) and `xmlschema` (validates junit.xml against the CI schemas). Every pin
/// the tests use is a file of `tests/data/pins/`, the list `.ci/wheelhouse` downloads.
pub const PY_REQUIREMENTS: &str = include_str!("../data/pins/sdk.txt");

/// pytest, added to [`PY_REQUIREMENTS`] by the Python SDK's tests.
pub const PY_PYTEST_REQUIREMENTS: &str = include_str!("../data/pins/pytest.txt");

/// The pins of the venv that runs an agent written on the OpenAI Agents SDK (kept apart
/// from [`PY_REQUIREMENTS`]: it pulls in a tree of its own).
pub const PY_AGENTS_REQUIREMENTS: &str = include_str!("../data/pins/agents.txt");

/// The variable that names the wheelhouse: a folder of wheels holding every pin of
/// `tests/data/pins/` with its dependencies, filled by `.ci/wheelhouse`.
pub const WHEELHOUSE_VAR: &str = "GAUNTLET_TEST_WHEELHOUSE";

/// A proxy nobody listens on: pip pointed at it fails at once instead of reaching out.
pub const DEAD_PROXY: &str = "http://127.0.0.1:9";

/// Where the test venvs' packages come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PipSource {
    /// This folder of wheels alone, the network shut off ([`offline`]).
    Wheelhouse(PathBuf),
    /// pip's index as the machine configures it: a developer machine without a wheelhouse.
    Index,
}

/// The source for this test process: [`WHEELHOUSE_VAR`] from the environment, read by
/// [`pip_source_from`].
pub fn pip_source() -> Result<PipSource, String> {
    pip_source_from(
        std::env::var_os(WHEELHOUSE_VAR),
        std::env::var_os("CI").is_some(),
    )
}

/// The wheelhouse when one is named (an absolute path to a folder); pip's index when none is
/// and this is not CI. `Err` says why not: CI installs only from a wheelhouse, so that no
/// test depends on the network, and a named wheelhouse that is not there is a mistake.
pub fn pip_source_from(wheelhouse: Option<OsString>, ci: bool) -> Result<PipSource, String> {
    match wheelhouse.filter(|w| !w.is_empty()).map(PathBuf::from) {
        Some(dir) if !dir.is_absolute() => Err(format!(
            "{WHEELHOUSE_VAR}={} is not an absolute path (the tests run in the crate's folder)",
            dir.display()
        )),
        Some(dir) if !dir.is_dir() => Err(format!(
            "{WHEELHOUSE_VAR}={} is not a folder: fill it with `.ci/wheelhouse {}`",
            dir.display(),
            dir.display()
        )),
        Some(dir) => Ok(PipSource::Wheelhouse(dir)),
        None if ci => Err(format!(
            "CI is set but {WHEELHOUSE_VAR} is not: in CI the Python tests install only from a \
             wheelhouse, never from the network; `.ci/run` fills one (`.ci/wheelhouse DIR`) \
             and exports {WHEELHOUSE_VAR}=DIR"
        )),
        None => Ok(PipSource::Index),
    }
}

/// Shuts the network off for a pip command: every proxy variable pointed at [`DEAD_PROXY`]
/// (and no host let past it), no index or link from the environment, no pip configuration
/// file read. pip then installs from what the command names on disk, or fails.
pub fn offline(c: &mut Command) -> &mut Command {
    for var in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ] {
        c.env(var, DEAD_PROXY);
    }
    for var in [
        "NO_PROXY",
        "no_proxy",
        "PIP_INDEX_URL",
        "PIP_EXTRA_INDEX_URL",
        "PIP_FIND_LINKS",
    ] {
        c.env_remove(var);
    }
    // pip reads no configuration file at all when this names the null device.
    c.env("PIP_CONFIG_FILE", "/dev/null")
        .env("PIP_NO_INDEX", "1")
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
}

/// `python -m pip install -r requirements` from `source`: from a wheelhouse, wheels only,
/// with `--no-index --find-links DIR` and the network shut off ([`offline`]).
pub fn pip_install(python: &Path, requirements: &Path, source: &PipSource) -> Command {
    let mut c = Command::new(python);
    c.args(["-m", "pip", "install", "-q", "--disable-pip-version-check"]);
    if let PipSource::Wheelhouse(dir) = source {
        c.args(["--no-index", "--only-binary", ":all:", "--find-links"])
            .arg(dir);
        offline(&mut c);
    }
    c.arg("-r").arg(requirements);
    c
}

/// A Python virtual environment with [`PY_REQUIREMENTS`], made once and kept under the
/// cargo target directory in a folder named by a hash of the requirements (so a change of
/// pins makes a new one); returns its `python`. `Err` says why it could not be made (no
/// python3, no venv module, pip could not install, CI without a wheelhouse): the caller
/// skips, except in CI.
pub fn py_venv() -> Result<PathBuf, String> {
    py_venv_with(PY_REQUIREMENTS)
}

/// [`py_venv`] with other requirements (a test that needs more packages than the shared
/// set), in a folder of its own named by their hash, installed from [`pip_source`].
pub fn py_venv_with(requirements: &str) -> Result<PathBuf, String> {
    let source = pip_source()?;
    py_venv_in(
        Path::new(env!("CARGO_TARGET_TMPDIR")),
        requirements,
        &source,
    )
}

/// [`py_venv_with`] under `root`, its packages from `source`.
pub fn py_venv_in(root: &Path, requirements: &str, source: &PipSource) -> Result<PathBuf, String> {
    // FNV-1a: stable across runs and toolchains, unlike std's hasher.
    let hash = requirements
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    let dir = root.join(format!("py-venv-{hash:016x}"));
    let python = dir.join("bin/python");
    if dir.join("ready").exists() {
        return Ok(python);
    }
    // Built beside its place and renamed in, so concurrent tests never see half a venv.
    let tmp = dir.with_extension(format!("tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&tmp)
        .output()
        .map_err(|e| format!("python3 could not be run: {e}"))?;
    if !made.status.success() {
        return Err(format!(
            "python3 -m venv failed (install python3-venv): {}",
            String::from_utf8_lossy(&made.stderr).trim()
        ));
    }
    let req = tmp.join("requirements.txt");
    std::fs::write(&req, requirements).map_err(|e| e.to_string())?;
    let pip = pip_install(&tmp.join("bin/python"), &req, source)
        .output()
        .map_err(|e| format!("pip could not be run: {e}"))?;
    if !pip.status.success() {
        let _ = std::fs::remove_dir_all(&tmp);
        let from = match source {
            PipSource::Wheelhouse(w) => format!(
                " from the wheelhouse {} alone (is every pin in tests/data/pins/, and was \
                 `.ci/wheelhouse` run since?)",
                w.display()
            ),
            PipSource::Index => String::new(),
        };
        return Err(format!(
            "pip could not install {}{from}: {}",
            requirements.trim().replace('\n', ", "),
            String::from_utf8_lossy(&pip.stderr).trim()
        ));
    }
    std::fs::write(tmp.join("ready"), requirements).map_err(|e| e.to_string())?;
    if std::fs::rename(&tmp, &dir).is_err() {
        // Another test made it first.
        let _ = std::fs::remove_dir_all(&tmp);
    }
    if dir.join("ready").exists() {
        Ok(python)
    } else {
        Err(format!("the venv at {} is not ready", dir.display()))
    }
}

/// [`py_venv`], or `None` after saying why the test is skipped; in CI (`CI` set) a venv
/// that cannot be made fails the test instead.
pub fn py_venv_or_skip() -> Option<PathBuf> {
    py_venv_or_skip_with(PY_REQUIREMENTS)
}

/// [`py_venv_or_skip`] with other pins.
#[allow(clippy::print_stderr)]
pub fn py_venv_or_skip_with(requirements: &str) -> Option<PathBuf> {
    match py_venv_with(requirements) {
        Ok(p) => Some(p),
        Err(why) if std::env::var_os("CI").is_some() => {
            panic!("CI must run this test, but the Python venv could not be made: {why}")
        }
        Err(why) => {
            eprintln!("skipped: {why}");
            None
        }
    }
}

/// One HTTP/1.1 request as text, head and body: read until the head's `content-length` bytes
/// of body have arrived, or the peer closed (then whatever came, possibly nothing).
pub fn read_http_request(s: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = s.read(&mut chunk).unwrap_or(0);
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let len = String::from_utf8_lossy(&buf[..end])
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
            })
            .unwrap_or(0);
        if buf.len() >= end + 4 + len {
            break;
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// The body of a request [`read_http_request`] read (empty when there is none).
pub fn http_body(request: &str) -> &str {
    request.split_once("\r\n\r\n").map_or("", |(_, body)| body)
}

/// Serves HTTP on a free port of 127.0.0.1 until the test ends: each request is read whole
/// ([`read_http_request`]) on a thread of its own and answered with the status and the JSON
/// body `reply` gives for it; then the connection closes. Returns the port.
pub fn serve_json<F>(reply: F) -> u16
where
    F: Fn(&str) -> (u16, String) + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let reply = Arc::new(reply);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let reply = Arc::clone(&reply);
            std::thread::spawn(move || {
                let request = read_http_request(&mut s);
                let (status, body) = reply(&request);
                let _ = s.write_all(json_response(status, &body).as_bytes());
            });
        }
    });
    port
}

/// An HTTP/1.1 response with a JSON body, closing the connection.
pub fn json_response(status: u16, body: &str) -> String {
    format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// A chat completion in the OpenAI shape whose answer is `content`.
pub fn completion(content: &str) -> String {
    serde_json::json!({
        "id": "x", "object": "chat.completion", "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2}
    })
    .to_string()
}

/// A port that refuses every connection while the returned socket lives: bound, never
/// listening. A port freed by dropping a listener can be taken by a test running alongside.
pub fn refusing_port() -> (socket2::Socket, u16) {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    s.bind(&std::net::SocketAddr::from(([127, 0, 0, 1], 0)).into())
        .unwrap();
    let port = s.local_addr().unwrap().as_socket().unwrap().port();
    (s, port)
}
