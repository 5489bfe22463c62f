//! The source -> test impact map behind `gauntlet impact` ([`ImpactMap`]): which tests cover
//! which source file of a repository, with the method that found each link and every file
//! that could not be analysed (reported, never dropped).
//!
//! Python: each test runs under the shipped `sys.settrace` runner (`pyrunner.py`), which
//! records the repository files whose functions were called while it ran (`coverage`); when
//! no `python3` is found, or a test file cannot be imported, a static import graph is used
//! for that file instead (`imports`). Rust: a static graph of `mod`, `use` and `crate::`
//! paths, from each integration test's `use CRATE::...` and each file with `#[test]`
//! (`imports`); nothing is compiled. Both static scans are line-based (limits in the docs).
//!
//! The grading runs of `impact task` (Python test files, `cargo test`) start their test
//! command in a grading copy through [`run_test_command`].

pub mod cargo;
pub mod python;
pub mod rust;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use gauntlet_core::redact::Redactor;
use gauntlet_core::target::ExecTargetConfig;
use gauntlet_targets::exec::{ExecTarget, FolderEnd, FolderRun};
use serde::Serialize;

/// How a link between a source file and a test was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// The test was run and the file's code was called while it ran.
    Coverage,
    /// The test reaches the file through imports (`import`/`from`, `use`/`mod`), transitively.
    Imports,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Coverage => "coverage",
            Method::Imports => "imports",
        }
    }
}

/// One test that covers a source file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Link {
    pub test: String,
    pub method: Method,
}

/// A file the map could not analyse, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub path: String,
    pub reason: String,
}

/// The map of one repository.
#[derive(Debug, Serialize)]
pub struct ImpactMap {
    pub lang: &'static str,
    /// Every test found, with the test file it lives in.
    pub tests: BTreeMap<String, String>,
    /// Source file (relative, `/`-separated) -> the tests that cover it.
    pub sources: BTreeMap<String, BTreeSet<Link>>,
    /// Files that could not be analysed.
    pub skipped: Vec<Skipped>,
    /// What the method used cannot see.
    pub limits: Vec<&'static str>,
}

/// What a set of changed files affects.
#[derive(Debug, Serialize)]
pub struct Affected {
    /// The tests to run, with the changed files that brought each in.
    pub tests: BTreeMap<String, BTreeSet<String>>,
    /// Changed files no test covers (or that the map does not know).
    pub uncovered: Vec<String>,
}

impl ImpactMap {
    /// The tests affected by `changed` (repository-relative paths): those that cover a
    /// changed source file, and those that live in a changed test file.
    pub fn affected(&self, changed: &[String]) -> Affected {
        let mut tests: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut uncovered = Vec::new();
        for c in changed {
            let mut hit = false;
            if let Some(links) = self.sources.get(c) {
                for l in links {
                    tests.entry(l.test.clone()).or_default().insert(c.clone());
                    hit = true;
                }
            }
            for (t, file) in &self.tests {
                if file == c {
                    tests.entry(t.clone()).or_default().insert(c.clone());
                    hit = true;
                }
            }
            if !hit {
                uncovered.push(c.clone());
            }
        }
        Affected { tests, uncovered }
    }
}

/// Which language a repository is mapped as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Python,
    Rust,
}

/// Guesses the language: `Cargo.toml` at the root is Rust, any `.py` file is Python.
pub fn detect(repo: &Path) -> Option<Lang> {
    if repo.join("Cargo.toml").is_file() {
        return Some(Lang::Rust);
    }
    files(repo, "py").first().map(|_| Lang::Python)
}

/// Builds the map of `repo` as `lang`. `coverage` false forces the static method.
pub fn build(repo: &Path, lang: Lang, coverage: bool) -> Result<ImpactMap, String> {
    if !repo.is_dir() {
        return Err(format!("{} is not a directory", repo.display()));
    }
    // Absolute, so the test runner (started inside the repository) finds the same files.
    let repo = repo
        .canonicalize()
        .map_err(|e| format!("{}: {e}", repo.display()))?;
    Ok(match lang {
        Lang::Python => python::map(&repo, coverage),
        Lang::Rust => rust::map(&repo),
    })
}

/// Builds the map of `repo` as `lang`, or as the language [`detect`] finds when `lang` is
/// `None`; `coverage` false forces the static method.
pub fn build_for(
    repo: &Path,
    lang: Option<Lang>,
    coverage: bool,
) -> Result<ImpactMap, crate::Error> {
    let lang = match lang {
        Some(l) => l,
        None => detect(repo).ok_or_else(|| {
            crate::Error::usage(
                format!("cannot tell the language of {}", repo.display()),
                "pass --lang python or --lang rust",
            )
        })?,
    };
    build(repo, lang, coverage)
        .map_err(|e| crate::Error::usage(e, "pass the repository folder with --repo"))
}

/// The files changed in `repo` since `base` (`git diff --name-only --relative BASE`),
/// relative to `repo`.
pub fn git_changed(repo: &Path, base: &str) -> Result<Vec<String>, crate::Error> {
    let out = std::process::Command::new("git")
        .args(["diff", "--name-only", "--relative", base, "--"])
        .current_dir(repo)
        .output()
        .map_err(|e| crate::Error::plain(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        return Err(crate::Error::usage(
            format!(
                "git diff {base} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            "pass a commit, branch or tag the repository has",
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect())
}

/// The files under `root` ending in `.ext`, relative and sorted, skipping hidden folders,
/// `target`, virtualenvs and `__pycache__`.
pub fn files(root: &Path, ext: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(root.join(&rel)) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let p = rel.join(&name);
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                let skip = name.starts_with('.')
                    || matches!(
                        name.as_str(),
                        "target" | "__pycache__" | "venv" | "node_modules"
                    );
                if !skip {
                    stack.push(p);
                }
            } else if ft.is_file() && name.ends_with(&format!(".{ext}")) {
                out.push(rel_str(&p));
            }
        }
    }
    out.sort();
    out
}

/// A relative path with `/` separators.
pub fn rel_str(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The files reachable from `start` in `graph` (`start` included).
pub fn reach(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![start.to_owned()];
    while let Some(f) = stack.pop() {
        if seen.insert(f.clone())
            && let Some(next) = graph.get(&f)
        {
            stack.extend(next.iter().cloned());
        }
    }
    seen
}

/// Runs a test command once in `scratch`, a fresh copy of the repository, under the exec
/// target's process handling (the environment allow-list plus `env`, a process group of its
/// own, `limit`), then removes the copy. `Err` says why there is no output to read: the
/// command could not start, or ran out of time.
pub(crate) async fn run_test_command(
    command: Vec<String>,
    env: BTreeMap<String, String>,
    scratch: &Path,
    limit: Duration,
    redactor: &mut Redactor,
) -> Result<FolderRun, String> {
    let cfg = ExecTargetConfig {
        command,
        env,
        pass_env: Vec::new(),
        frozen_time: None,
    };
    let target = ExecTarget::new_in(&cfg, Some(scratch), redactor)
        .map_err(|e| format!("cannot run: {e}"))?;
    let vars = [("GAUNTLET_WORKSPACE", scratch.display().to_string())];
    let r = target.run_in(scratch, b"", &vars, limit).await;
    let _ = std::fs::remove_dir_all(scratch);
    match r.end {
        FolderEnd::TimedOut => Err(format!("timed out after {}s", limit.as_secs())),
        FolderEnd::NotStarted(why) => Err(why),
        FolderEnd::Exited(_) | FolderEnd::Killed => Ok(r),
    }
}
