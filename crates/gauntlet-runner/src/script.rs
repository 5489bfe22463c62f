//! The processes of `script:` checks: [`ProcessScripts`], the
//! [`ScriptHost`] a run lends its grader.
//!
//! A script starts in the suite's folder with an emptied environment (`PATH`, and the
//! variables its check names, nothing else: no key of the run reaches it unless named), gets
//! the grading document on stdin, and is killed at its time limit or as soon as its stdout
//! passes [`ProcessScripts::max_stdout`]. On Unix a script leads a process group of its own,
//! and the whole group is killed when the check ends, so a program it started (a shell's
//! `sleep`, a test runner's workers) does not outlive its check or hold its pipes open. Only the start of its stderr is kept, for the
//! evidence; the rest is read and dropped so that a chatty script never blocks on a full
//! pipe. What its answer means is the graders' (`gauntlet_graders::script`).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use gauntlet_core::grader::{ScriptEnd, ScriptHost, ScriptOutput, ScriptRun};
use gauntlet_core::target::BoxFuture;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

/// The most a script may write on stdout by default: an answer is a small JSON object.
pub const MAX_SCRIPT_STDOUT: usize = 1 << 20;

/// How much of a script's stderr is kept for the evidence.
const STDERR_KEPT: usize = 4096;

/// Starts scripts as local processes.
#[derive(Debug, Clone, Copy)]
pub struct ProcessScripts {
    /// The most a script may write on stdout; past it, it is killed.
    pub max_stdout: usize,
}

impl Default for ProcessScripts {
    fn default() -> Self {
        ProcessScripts {
            max_stdout: MAX_SCRIPT_STDOUT,
        }
    }
}

impl ScriptHost for ProcessScripts {
    fn run<'a>(&'a self, run: ScriptRun<'a>) -> BoxFuture<'a, ScriptOutput> {
        Box::pin(run_script(run, self.max_stdout))
    }
}

/// The folder a script runs in, made absolute so that a relative program is found there
/// whatever the platform does with a relative path and a changed directory.
fn folder(dir: Option<&Path>) -> PathBuf {
    let dir = dir.unwrap_or(Path::new("."));
    std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf())
}

fn command(run: &ScriptRun<'_>, dir: &Path) -> Command {
    let program = &run.argv[0];
    let mut cmd = if program.contains('/') {
        Command::new(dir.join(program))
    } else {
        Command::new(program)
    };
    cmd.args(&run.argv[1..])
        .current_dir(dir)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    for name in run.env {
        if let Some(value) = std::env::var_os(name) {
            cmd.env(name, value);
        }
    }
    cmd
}

async fn run_script(run: ScriptRun<'_>, max_stdout: usize) -> ScriptOutput {
    let ended = |end| ScriptOutput {
        end,
        stdout: Vec::new(),
        stderr: String::new(),
    };
    if run.argv.is_empty() {
        return ended(ScriptEnd::NotStarted("no program".into()));
    }
    let dir = folder(run.dir);
    let mut child = match command(&run, &dir).spawn() {
        Ok(c) => c,
        Err(e) => return ended(ScriptEnd::NotStarted(format!("`{}`: {e}", run.argv[0]))),
    };
    // Taken now: once the script is reaped its id is gone from `child`.
    let group = child.id();
    // The document is written from a task of its own: a script that answers before
    // reading all of it must not stall the read of its answer.
    let stdin = child.stdin.take();
    let input = run.input.to_vec();
    let writer = tokio::spawn(async move {
        if let Some(mut s) = stdin {
            let _ = s.write_all(&input).await;
        }
    });
    let stderr = child.stderr.take().map(|e| tokio::spawn(keep_start(e)));
    let limit = Duration::from_millis(run.timeout_ms);
    let (end, stdout) = match tokio::time::timeout(limit, finish(&mut child, max_stdout)).await {
        Ok(done) => done,
        Err(_) => (ScriptEnd::TimedOut, Vec::new()),
    };
    if !matches!(end, ScriptEnd::Exited(_) | ScriptEnd::Signalled) {
        let _ = child.kill().await;
    }
    kill_group(group);
    writer.abort();
    let stderr = match stderr {
        // A child the script left behind may hold the pipe open: wait a moment, no more.
        Some(task) => match tokio::time::timeout(Duration::from_millis(200), task).await {
            Ok(Ok(text)) => text,
            _ => String::new(),
        },
        None => String::new(),
    };
    ScriptOutput {
        end,
        stdout,
        stderr,
    }
}

/// Kills what is left of the process group a script led (nothing left is fine). The id
/// cannot name a stranger's group: a pid is not handed out again while a group of that id
/// has a member.
fn kill_group(group: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = group
        .and_then(|id| i32::try_from(id).ok())
        .filter(|id| *id > 1)
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    #[cfg(not(unix))]
    let _ = group;
}

/// Reads stdout to its end (or past the cap), then waits for the exit.
async fn finish(child: &mut Child, max_stdout: usize) -> (ScriptEnd, Vec<u8>) {
    let mut stdout = Vec::new();
    if let Some(out) = child.stdout.take() {
        let mut limited = out.take(max_stdout as u64 + 1);
        if let Err(e) = limited.read_to_end(&mut stdout).await {
            return (
                ScriptEnd::NotStarted(format!("reading its stdout: {e}")),
                stdout,
            );
        }
        if stdout.len() > max_stdout {
            return (ScriptEnd::TooLarge, Vec::new());
        }
    }
    match child.wait().await {
        Ok(status) => match status.code() {
            Some(code) => (ScriptEnd::Exited(code), stdout),
            None => (ScriptEnd::Signalled, stdout),
        },
        Err(e) => (
            ScriptEnd::NotStarted(format!("waiting for it: {e}")),
            stdout,
        ),
    }
}

/// The start of a stream as text; the rest is read and dropped.
async fn keep_start(mut r: impl AsyncRead + Unpin) -> String {
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = STDERR_KEPT.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// Runs `sh -c SCRIPT` in `dir` as a check would, with the document on stdin.
    fn sh(script: &str, env: &[String], timeout_ms: u64, max_stdout: usize) -> ScriptOutput {
        let argv = vec!["sh".to_owned(), "-c".to_owned(), script.to_owned()];
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let host = ProcessScripts { max_stdout };
        rt.block_on(host.run(ScriptRun {
            argv: &argv,
            dir: Some(Path::new(env!("CARGO_MANIFEST_DIR"))),
            env,
            timeout_ms,
            input: br#"{"answer": "Your order A-1 ships Monday."}"#,
        }))
    }

    #[test]
    fn a_script_reads_the_document_and_its_answer_comes_back() {
        let out = sh(
            r#"if grep -q ships; then echo '{"pass": true}'; else echo '{"pass": false}'; fi"#,
            &[],
            10_000,
            MAX_SCRIPT_STDOUT,
        );
        assert_eq!(out.end, ScriptEnd::Exited(0));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            r#"{"pass": true}"#
        );
        // It runs in the suite's folder.
        let out = sh("test -f Cargo.toml && echo here", &[], 10_000, 1024);
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "here");
    }

    #[test]
    fn crashes_exits_and_missing_programs_are_reported_as_they_ended() {
        let out = sh("echo boom >&2; exit 3", &[], 10_000, 1024);
        assert_eq!(out.end, ScriptEnd::Exited(3));
        assert_eq!(out.stderr.trim(), "boom");
        assert_eq!(
            sh("kill -SEGV $$", &[], 10_000, 1024).end,
            ScriptEnd::Signalled
        );
        let argv = vec!["./no-such-check.py".to_owned()];
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        let out = rt.block_on(ProcessScripts::default().run(ScriptRun {
            argv: &argv,
            dir: None,
            env: &[],
            timeout_ms: 1000,
            input: b"{}",
        }));
        assert!(matches!(out.end, ScriptEnd::NotStarted(_)), "{out:?}");
    }

    #[test]
    fn a_script_past_its_time_limit_is_killed() {
        let started = std::time::Instant::now();
        let out = sh("exec sleep 30; echo '{\"pass\": true}'", &[], 300, 1024);
        assert_eq!(out.end, ScriptEnd::TimedOut);
        assert!(out.stdout.is_empty());
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
    }

    /// Whether a process is gone (reaped, or a zombie nobody has reaped yet).
    fn gone(pid: &str) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        }
    }

    #[test]
    fn what_a_script_started_is_killed_with_it() {
        // The shell starts a sleep of its own and reports its pid, then outlives its limit.
        let started = std::time::Instant::now();
        let out = sh("sleep 30 & echo $! >&2; wait", &[], 300, 1024);
        assert_eq!(out.end, ScriptEnd::TimedOut);
        let pid = out.stderr.trim().to_owned();
        assert!(pid.parse::<u32>().is_ok(), "stderr: {:?}", out.stderr);
        // Its stderr came back whole: nothing was left holding the pipe open.
        assert!(started.elapsed() < Duration::from_secs(10));
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !gone(&pid) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(gone(&pid), "the script's child {pid} is still running");
        // A script that exits at once leaves nothing behind either.
        let out = sh("sleep 30 >/dev/null 2>&1 & echo $! >&2", &[], 10_000, 1024);
        assert_eq!(out.end, ScriptEnd::Exited(0));
        let pid = out.stderr.trim().to_owned();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !gone(&pid) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(gone(&pid), "the script's child {pid} outlived it");
    }

    #[test]
    fn a_script_that_writes_without_end_is_killed_at_the_cap() {
        let out = sh("yes '{\"pass\": true}'", &[], 20_000, 64 * 1024);
        assert_eq!(out.end, ScriptEnd::TooLarge);
        assert!(out.stdout.is_empty());
        // Under the cap, the output is whole.
        let out = sh(
            "head -c 60000 /dev/zero | tr '\\0' x",
            &[],
            20_000,
            64 * 1024,
        );
        assert_eq!(out.stdout.len(), 60_000);
        // A flood on stderr neither blocks the script nor is kept whole.
        let out = sh(
            "head -c 3000000 /dev/zero >&2; echo done",
            &[],
            20_000,
            1024,
        );
        assert_eq!(out.end, ScriptEnd::Exited(0));
        assert!(out.stderr.len() <= STDERR_KEPT);
    }

    #[test]
    fn the_environment_is_emptied_but_for_path_and_the_names_given() {
        // Cargo sets this for every test process; a script sees it only when named.
        let probe = r#"printf '%s|%s' "${CARGO_MANIFEST_DIR:-unset}" "${PATH:+path}""#;
        let out = sh(probe, &[], 10_000, 1024);
        assert_eq!(String::from_utf8_lossy(&out.stdout), "unset|path");
        let out = sh(probe, &["CARGO_MANIFEST_DIR".into()], 10_000, 1024);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{}|path", env!("CARGO_MANIFEST_DIR"))
        );
        let out = sh("env | wc -l", &[], 10_000, 1024);
        // `sh` adds PWD (and some add SHLVL and `_`), nothing of ours.
        let n: usize = String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("count");
        assert!(n <= 4, "{n} variables");
    }
}
