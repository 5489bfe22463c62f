//! Reading a task file (`gauntlet impact task`): YAML read with the suite reader's rules
//! (unknown keys are errors, YAML 1.2 booleans, every problem a [`Diagnostic`] with file,
//! line, column and a hint), then the checks serde cannot make: a repository folder inside
//! the file's own, at least one task, unique ids, a prompt and acceptance tests for every
//! task, test files that exist next to the file and lie outside the repository (so that in
//! hidden mode the agent's copy of the repository holds none of them), and `touches` paths
//! that stay inside the repository; a Rust crate's (`Cargo.toml` at its root) tests are `.rs`
//! files whose names do not clash once placed as `tests/NAME.rs`, a Python repository's `.py`. The main type is [`LoadedTasks`].

use std::path::{Path, PathBuf};

use gauntlet_suite::Diagnostic;
use gauntlet_suite::load::{check_relative, parse_yaml_documented};

use super::{TaskDef, TaskFile};
use crate::trajectory::file::{locate, read_yaml_file};

/// A task file read and checked.
#[derive(Debug, Clone)]
pub struct LoadedTasks {
    /// The file, as given.
    pub origin: String,
    /// The file's folder: relative paths are resolved here, and it is the harness tree
    /// (tests, graders, the pristine repository) whose integrity is checked.
    pub dir: PathBuf,
    /// The file.
    pub file: TaskFile,
}

impl LoadedTasks {
    /// The pristine repository.
    pub fn repo_dir(&self) -> PathBuf {
        self.dir.join(&self.file.repo)
    }
}

/// Reads and checks a task file.
pub fn load_tasks(path: &Path) -> Result<LoadedTasks, Vec<Diagnostic>> {
    let (origin, text, dir) = read_yaml_file(path, "task file")?;
    parse_tasks(&origin, &text, &dir)
}

/// Line and column of the `nth` occurrence of `needle` in `text`, else the file's start.
fn find(text: &str, needle: &str, nth: usize) -> (usize, usize) {
    match text.match_indices(needle).nth(nth) {
        Some((i, _)) => {
            let before = &text[..i];
            let line = before.matches('\n').count() + 1;
            let start = before.rfind('\n').map_or(0, |i| i + 1);
            (line, before[start..].chars().count() + 1)
        }
        None => (1, 1),
    }
}

/// [`load_tasks`] over text already read; `dir` is the file's folder.
pub fn parse_tasks(origin: &str, text: &str, dir: &Path) -> Result<LoadedTasks, Vec<Diagnostic>> {
    let f: TaskFile = parse_yaml_documented(origin, text, "docs/coding-agents.md")?;
    let mut c = Checks {
        origin,
        text,
        dir,
        out: Vec::new(),
    };
    let repo_ok = c.file_settings(&f);
    // A Rust crate, as `impact map` tells it: Cargo.toml at the repository's root.
    let rust = repo_ok && dir.join(&f.repo).join("Cargo.toml").is_file();
    let mut ids: Vec<&str> = Vec::new();
    for t in &f.tasks {
        let seen = ids.iter().filter(|i| **i == t.id).count();
        c.task(t, seen);
        ids.push(&t.id);
        for p in &t.tests {
            c.test_file(&f, t, p, repo_ok, rust);
        }
    }
    if !c.out.is_empty() {
        return Err(c.out);
    }
    Ok(LoadedTasks {
        origin: origin.to_owned(),
        dir: dir.to_path_buf(),
        file: f,
    })
}

/// The checks of one task file past serde, collecting every problem.
struct Checks<'a> {
    origin: &'a str,
    text: &'a str,
    /// The file's folder.
    dir: &'a Path,
    out: Vec<Diagnostic>,
}

impl Checks<'_> {
    /// A problem at a line and column, with a hint.
    fn at(&mut self, (l, c): (usize, usize), msg: String, hint: &str) {
        self.out
            .push(Diagnostic::at(self.origin, Some(self.text), l, c, msg).hint(hint));
    }

    /// The file's own settings: its name, its repository (whether that is a folder next to
    /// the file is the answer), its time limits, and that it has tasks.
    fn file_settings(&mut self, f: &TaskFile) -> bool {
        let text = self.text;
        if f.name.trim().is_empty() {
            self.at(
                locate(text, "name", "", 0),
                "the task file's `name` is empty".into(),
                "give it a name",
            );
        }
        let repo_ok = match check_relative(&f.repo) {
            Err(e) => {
                self.at(
                    locate(text, "repo", &f.repo, 0),
                    format!("`repo`: {e}"),
                    "name the repository's folder, next to the task file",
                );
                false
            }
            Ok(()) if f.repo.trim().is_empty() || !self.dir.join(&f.repo).is_dir() => {
                self.at(
                    locate(text, "repo", &f.repo, 0),
                    format!("`repo`: `{}` is not a folder next to the task file", f.repo),
                    "name the repository's folder, next to the task file",
                );
                false
            }
            Ok(()) => true,
        };
        for (key, v) in [
            ("agent_timeout_secs", f.agent_timeout_secs),
            ("test_timeout_secs", f.test_timeout_secs),
        ] {
            if v == Some(0) {
                self.at(
                    locate(text, key, "0", 0),
                    format!("`{key}` is 0"),
                    "give a number of seconds above 0, or leave it out for the default",
                );
            }
        }
        if f.tasks.is_empty() {
            self.out
                .push(Diagnostic::file(self.origin, "the task file has no tasks").hint(
                    "list them under `tasks:`, each with an `id`, a `prompt`, `touches` and `tests`",
                ));
        }
        repo_ok
    }

    /// One task's id (`seen`: earlier tasks with the same id), prompt, tests and `touches`.
    fn task(&mut self, t: &TaskDef, seen: usize) {
        let here = locate(self.text, "id", &t.id, seen);
        if t.id.trim().is_empty() {
            self.out.push(
                Diagnostic::file(self.origin, "a task has an empty `id`")
                    .hint("give every task an id"),
            );
        } else if seen > 0 {
            self.at(
                here,
                format!("task id `{}` is used twice", t.id),
                "give every task its own id",
            );
        }
        if t.prompt.trim().is_empty() {
            self.at(
                here,
                format!("task `{}` has an empty `prompt`", t.id),
                "write what the agent is asked to do",
            );
        }
        if t.tests.is_empty() {
            self.at(
                here,
                format!("task `{}` has no acceptance tests", t.id),
                "a task without tests cannot be accepted: list its test files under `tests:`",
            );
        }
        for p in &t.touches {
            if let Err(e) = check_relative(p) {
                self.at(
                    find(self.text, p, 0),
                    format!("task `{}`: `touches`: {e}", t.id),
                    "name files relative to the repository's root",
                );
            }
        }
    }

    /// One acceptance test file `p` of task `t`: next to the task file, outside the
    /// repository, in the repository's language, and (for a crate) with a name of its own
    /// once placed as `tests/NAME.rs`.
    fn test_file(&mut self, f: &TaskFile, t: &TaskDef, p: &str, repo_ok: bool, rust: bool) {
        let pos = find(self.text, p, 0);
        if let Err(e) = check_relative(p) {
            self.at(
                pos,
                format!("task `{}`: test `{p}`: {e}", t.id),
                "name a test file next to the task file",
            );
        } else if repo_ok && Path::new(p).starts_with(Path::new(&f.repo)) {
            self.at(
                pos,
                format!("task `{}`: test `{p}` lies inside the repository", t.id),
                "acceptance tests live outside `repo` (the agent's workspace is a copy of it): move the file next to the task file",
            );
        } else if !self.dir.join(p).is_file() {
            self.at(
                pos,
                format!(
                    "task `{}`: test `{p}` is not a file next to the task file",
                    t.id
                ),
                "check the path (relative to the task file's folder)",
            );
        } else if rust && !p.ends_with(".rs") {
            self.at(
                pos,
                format!(
                    "task `{}`: test `{p}` is not a Rust file (the repository is a Rust crate)",
                    t.id
                ),
                "acceptance tests of a crate are integration test files (`.rs`, placed as tests/NAME.rs)",
            );
        } else if !rust && !p.ends_with(".py") {
            self.at(
                pos,
                format!("task `{}`: test `{p}` is not a Python file", t.id),
                "acceptance tests are Python test files (test* functions or unittest cases)",
            );
        } else if rust {
            let name = p.rsplit('/').next().unwrap_or(p);
            let clash = t
                .tests
                .iter()
                .filter(|q| q.rsplit('/').next() == Some(name))
                .count()
                > 1;
            if clash || self.dir.join(&f.repo).join("tests").join(name).exists() {
                self.at(
                    pos,
                    format!(
                        "task `{}`: test `{p}` would be placed as tests/{name}, which {}",
                        t.id,
                        if clash {
                            "another test of the task also is"
                        } else {
                            "the crate already has"
                        }
                    ),
                    "give the acceptance test a file name of its own",
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("repo/tests")).unwrap();
        std::fs::write(d.path().join("repo/tests/test_in.py"), "").unwrap();
        std::fs::create_dir_all(d.path().join("acc")).unwrap();
        std::fs::write(d.path().join("acc/test_a.py"), "").unwrap();
        d
    }

    const GOOD: &str = "name: t\nrepo: repo\nmode: hidden\ntasks:\n  - id: a\n    prompt: do it\n    touches: [x.py]\n    tests: [acc/test_a.py]\n";

    #[test]
    fn reads_a_good_file() {
        let d = folder();
        let t = parse_tasks("t.yaml", GOOD, d.path()).unwrap();
        assert_eq!(t.file.mode, crate::task::TaskMode::Hidden);
        assert_eq!(t.file.tasks[0].tests, ["acc/test_a.py"]);
    }

    #[test]
    fn a_crate_takes_rust_tests_that_do_not_clash() {
        let d = folder();
        std::fs::write(
            d.path().join("repo/Cargo.toml"),
            "[package]\nname = \"x\"\n",
        )
        .unwrap();
        let e = parse_tasks("t.yaml", GOOD, d.path()).unwrap_err();
        assert_eq!((e[0].line, e[0].column), (8, 13), "{e:?}");
        assert!(e[0].message.contains("not a Rust file"), "{e:?}");
        std::fs::write(d.path().join("acc/a.rs"), "").unwrap();
        let rs = GOOD.replace("acc/test_a.py", "acc/a.rs");
        assert!(parse_tasks("t.yaml", &rs, d.path()).is_ok());
        std::fs::write(d.path().join("repo/tests/a.rs"), "").unwrap();
        let e = parse_tasks("t.yaml", &rs, d.path()).unwrap_err();
        assert!(e[0].message.contains("already has"), "{e:?}");
    }

    #[test]
    fn bad_input_points_at_its_line() {
        let d = folder();
        let bad = GOOD.replace("touches:", "touchs:");
        let e = parse_tasks("t.yaml", &bad, d.path()).unwrap_err();
        assert_eq!(e[0].line, 7, "{e:?}");
        assert!(e[0].hint.is_some());
        let inside = GOOD.replace("acc/test_a.py", "repo/tests/test_in.py");
        let e = parse_tasks("t.yaml", &inside, d.path()).unwrap_err();
        assert_eq!((e[0].line, e[0].column), (8, 13), "{e:?}");
        assert!(e[0].message.contains("inside the repository"), "{e:?}");
        let dup = format!("{GOOD}  - id: a\n    prompt: again\n    tests: [acc/test_a.py]\n");
        let e = parse_tasks("t.yaml", &dup, d.path()).unwrap_err();
        assert_eq!(e[0].line, 9, "{e:?}");
        assert!(e[0].message.contains("used twice"));
        let missing = GOOD.replace("acc/test_a.py", "acc/nope.py");
        let e = parse_tasks("t.yaml", &missing, d.path()).unwrap_err();
        assert!(e[0].message.contains("not a file"), "{e:?}");
        let up = GOOD.replace("repo: repo", "repo: ../x");
        let e = parse_tasks("t.yaml", &up, d.path()).unwrap_err();
        assert_eq!(e[0].line, 2, "{e:?}");
        let mode = GOOD.replace("mode: hidden", "mode: secret");
        let e = parse_tasks("t.yaml", &mode, d.path()).unwrap_err();
        assert_eq!(e[0].line, 3, "{e:?}");
    }
}
