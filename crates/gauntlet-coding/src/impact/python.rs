//! Python repositories: tests found by name (`test_*.py`, `*_test.py`), mapped by running
//! each test file under the shipped tracer ([`RUNNER`]), or by a line-based scan of
//! `import`/`from` statements resolved to repository files, followed transitively.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use super::{ImpactMap, Link, Method, Skipped, files, reach};

/// The tracer-runner, written next to the run and started with `python3`.
pub const RUNNER: &str = include_str!("pyrunner.py");

const LIMITS: &[&str] = &[
    "coverage: a file counts as covered when one of its functions is called while the test runs; code run only at import time is not attributed to a test",
    "imports: `import`/`from` lines scanned without a parser: dynamic imports (importlib, __import__), imports built from strings and lines inside strings are not understood; conditional imports count as imports",
];

/// Whether a file is a test file by its name.
pub fn is_test_file(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name.starts_with("test_") || name.ends_with("_test.py")
}

/// One test as the runner reported it (its outcome is not needed for the map).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct RunTest {
    pub name: String,
    #[serde(default)]
    pub files: Vec<String>,
}

#[derive(Debug, serde::Deserialize)]
struct RunOut {
    tests: Vec<RunTest>,
    error: Option<String>,
}

/// Runs the tests of one test file (all of them, or `names`) under the tracer in `root`.
/// `Err` when the file could not be run at all.
pub fn run_file(
    python: &Path,
    runner: &Path,
    root: &Path,
    file: &str,
    names: &[String],
) -> Result<Vec<RunTest>, String> {
    let out = Command::new(python)
        .arg(runner)
        .arg(root)
        .arg(file)
        .args(names)
        .current_dir(root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONHASHSEED", "0")
        .output()
        .map_err(|e| format!("cannot start python3: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().rev().find(|l| l.starts_with('{'));
    let parsed: RunOut = last
        .and_then(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| {
            let err = String::from_utf8_lossy(&out.stderr);
            format!(
                "the runner printed no result (exit {:?}): {}",
                out.status.code(),
                err.lines().last().unwrap_or("")
            )
        })?;
    match parsed.error {
        Some(e) => Err(e),
        None => Ok(parsed.tests),
    }
}

/// `python3` on PATH, if any.
pub fn find_python() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("python3"))
        .find(|p| p.is_file())
}

/// The runner written to a private temporary folder (kept while the value lives).
pub fn write_runner() -> Result<(tempfile::TempDir, std::path::PathBuf), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("cannot make a temporary folder: {e}"))?;
    let p = dir.path().join("gauntlet_pyrunner.py");
    std::fs::write(&p, RUNNER).map_err(|e| format!("cannot write the runner: {e}"))?;
    Ok((dir, p))
}

pub fn map(repo: &Path, coverage: bool) -> ImpactMap {
    let all = files(repo, "py");
    let (tests_files, sources): (Vec<_>, Vec<_>) =
        all.iter().cloned().partition(|f| is_test_file(f));
    let mut m = ImpactMap {
        lang: "python",
        tests: BTreeMap::new(),
        sources: BTreeMap::new(),
        skipped: Vec::new(),
        limits: LIMITS.to_vec(),
    };
    let known: BTreeSet<String> = all.iter().cloned().collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &all {
        match std::fs::read_to_string(repo.join(f)) {
            Ok(text) => {
                graph.insert(f.clone(), imports(&text, f, &known));
            }
            Err(e) => m.skipped.push(Skipped {
                path: f.clone(),
                reason: format!("unreadable: {e}"),
            }),
        }
    }
    let runner = if coverage {
        find_python().and_then(|py| write_runner().ok().map(|(d, r)| (py, d, r)))
    } else {
        None
    };
    let source_set: BTreeSet<&String> = sources.iter().collect();
    for tf in &tests_files {
        let mut by_cov = None;
        if let Some((py, _dir, r)) = &runner {
            match run_file(py, r, repo, tf, &[]) {
                Ok(ts) => by_cov = Some(ts),
                Err(e) => m.skipped.push(Skipped {
                    path: tf.clone(),
                    reason: format!("not run under coverage ({e}); mapped by imports"),
                }),
            }
        }
        match by_cov {
            Some(ts) => {
                for t in ts {
                    let id = format!("{tf}::{}", t.name);
                    m.tests.insert(id.clone(), tf.clone());
                    for f in t.files.iter().filter(|f| source_set.contains(f)) {
                        m.sources.entry(f.clone()).or_default().insert(Link {
                            test: id.clone(),
                            method: Method::Coverage,
                        });
                    }
                }
            }
            None => {
                if !graph.contains_key(tf) {
                    continue;
                }
                m.tests.insert(tf.clone(), tf.clone());
                for f in reach(&graph, tf).iter().filter(|f| source_set.contains(f)) {
                    m.sources.entry(f.clone()).or_default().insert(Link {
                        test: tf.clone(),
                        method: Method::Imports,
                    });
                }
            }
        }
    }
    m
}

/// The repository files `text` (the file `from`) imports, by a line-based scan.
pub fn imports(text: &str, from: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let pkg: Vec<&str> = from.split('/').collect::<Vec<_>>();
    let pkg = &pkg[..pkg.len().saturating_sub(1)];
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("import ") {
            for part in rest.split(',') {
                let module = part.split_whitespace().next().unwrap_or("");
                resolve_abs(module, known, &mut out);
            }
        } else if let Some(rest) = line.strip_prefix("from ") {
            let mut it = rest.splitn(2, " import ");
            let module = it.next().unwrap_or("").trim();
            let names: Vec<&str> = it
                .next()
                .unwrap_or("")
                .split(',')
                .map(|n| n.trim_matches(|c: char| c == '(' || c == ')' || c.is_whitespace()))
                .map(|n| n.split_whitespace().next().unwrap_or(""))
                .filter(|n| !n.is_empty() && *n != "*")
                .collect();
            let dots = module.chars().take_while(|c| *c == '.').count();
            let base: Vec<String> = if dots > 0 {
                let up = dots - 1;
                if up > pkg.len() {
                    continue;
                }
                let mut b: Vec<String> = pkg[..pkg.len() - up]
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                b.extend(
                    module[dots..]
                        .split('.')
                        .filter(|s| !s.is_empty())
                        .map(String::from),
                );
                b
            } else {
                module.split('.').map(String::from).collect()
            };
            let joined = base.join(".");
            if dots > 0 {
                resolve_rel(&base, known, &mut out);
                for n in &names {
                    let mut b = base.clone();
                    b.push(n.to_string());
                    resolve_rel(&b, known, &mut out);
                }
            } else {
                resolve_abs(&joined, known, &mut out);
                for n in &names {
                    resolve_abs(&format!("{joined}.{n}"), known, &mut out);
                }
            }
        }
    }
    out
}

fn resolve_rel(parts: &[String], known: &BTreeSet<String>, out: &mut BTreeSet<String>) {
    let p = parts.join("/");
    for c in [format!("{p}.py"), format!("{p}/__init__.py")] {
        if known.contains(&c) {
            out.insert(c);
        }
    }
}

/// An absolute module name, tried from the root and from `src/`; its packages'
/// `__init__.py` files come with it.
fn resolve_abs(module: &str, known: &BTreeSet<String>, out: &mut BTreeSet<String>) {
    if module.is_empty() {
        return;
    }
    let p = module.replace('.', "/");
    for prefix in ["", "src/"] {
        for c in [
            format!("{prefix}{p}.py"),
            format!("{prefix}{p}/__init__.py"),
        ] {
            if known.contains(&c) {
                out.insert(c);
                let segs: Vec<&str> = p.split('/').collect();
                for i in 1..segs.len() {
                    let init = format!("{prefix}{}/__init__.py", segs[..i].join("/"));
                    if known.contains(&init) {
                        out.insert(init);
                    }
                }
            }
        }
    }
}
