//! Reading a trajectory file (`gauntlet trajectory run`): YAML read with the suite reader's
//! rules (unknown keys are errors, YAML 1.2 booleans, every problem a [`Diagnostic`] with
//! file, line, column and a hint), then the checks serde cannot make: at least one
//! checkpoint, unique checkpoint and test ids, a command for every test, and a starting
//! workspace that is a folder inside the file's own. The main type is [`LoadedTrajectory`].

use std::path::{Path, PathBuf};

use gauntlet_suite::Diagnostic;
use gauntlet_suite::load::{check_relative, parse_yaml_documented};

use super::Trajectory;

/// Largest trajectory file read.
const MAX_BYTES: u64 = 4 << 20;

/// A trajectory read and checked.
#[derive(Debug, Clone)]
pub struct LoadedTrajectory {
    /// The file, as given.
    pub origin: String,
    /// The file's folder: relative paths in the file are resolved here, and it is the
    /// harness tree whose integrity is checked.
    pub dir: PathBuf,
    /// The trajectory.
    pub trajectory: Trajectory,
}

impl LoadedTrajectory {
    /// The starting workspace folder, when the file names one.
    pub fn seed_dir(&self) -> Option<PathBuf> {
        self.trajectory.workspace.as_ref().map(|w| self.dir.join(w))
    }
}

/// Reads and checks a trajectory file.
pub fn load_trajectory(path: &Path) -> Result<LoadedTrajectory, Vec<Diagnostic>> {
    let (origin, text, dir) = read_yaml_file(path, "trajectory file")?;
    parse_trajectory(&origin, &text, &dir)
}

/// Reads a YAML file that names paths relative to its folder (a trajectory, a task file):
/// its name for diagnostics, its text and its folder. Only a regular UTF-8 file of at most
/// 4 MiB is read.
pub(crate) fn read_yaml_file(
    path: &Path,
    what: &str,
) -> Result<(String, String, PathBuf), Vec<Diagnostic>> {
    let origin = path.display().to_string();
    let cannot = |e: std::io::Error, hint: &str| {
        vec![Diagnostic::file(&origin, format!("cannot read the {what}: {e}")).hint(hint)]
    };
    let meta = std::fs::metadata(path).map_err(|e| cannot(e, "check the path"))?;
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return Err(vec![
            Diagnostic::file(&origin, "not a regular file of at most 4 MiB")
                .hint(format!("name the {what} (YAML)")),
        ]);
    }
    let text = std::fs::read_to_string(path).map_err(|e| cannot(e, "save the file as UTF-8"))?;
    let dir = path
        .parent()
        .map(Path::to_path_buf)
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("."));
    Ok((origin, text, dir))
}

/// Position of the first `key: value` (value as written, quoted or not) at or after
/// `from`, else the start of the file.
pub(crate) fn locate(text: &str, key: &str, value: &str, nth: usize) -> (usize, usize) {
    let re = regex::Regex::new(&format!(
        r#"(?m)\b{}\s*:\s*["']?{}["']?\s*$"#,
        regex::escape(key),
        regex::escape(value)
    ))
    .expect("escaped pattern");
    match re.find_iter(text).nth(nth) {
        Some(m) => {
            let before = &text[..m.start()];
            let line = before.matches('\n').count() + 1;
            let start = before.rfind('\n').map_or(0, |i| i + 1);
            (line, before[start..].chars().count() + 1)
        }
        None => (1, 1),
    }
}

/// [`load_trajectory`] over text already read; `dir` is the file's folder.
pub fn parse_trajectory(
    origin: &str,
    text: &str,
    dir: &Path,
) -> Result<LoadedTrajectory, Vec<Diagnostic>> {
    let t: Trajectory = parse_yaml_documented(origin, text, "docs/coding-agents.md")?;
    let src = Src { origin, text };
    let mut out = src.settings(&t, dir);
    out.extend(src.checkpoints(&t));
    if !out.is_empty() {
        return Err(out);
    }
    Ok(LoadedTrajectory {
        origin: origin.to_owned(),
        dir: dir.to_path_buf(),
        trajectory: t,
    })
}

/// A trajectory file's text and the name it is shown by: where its diagnostics point.
struct Src<'a> {
    origin: &'a str,
    text: &'a str,
}

impl Src<'_> {
    /// A problem at the `nth` `key: value` of the file, with a hint.
    fn at(&self, key: &str, value: &str, nth: usize, msg: String, hint: &str) -> Diagnostic {
        let (l, c) = locate(self.text, key, value, nth);
        Diagnostic::at(self.origin, Some(self.text), l, c, msg).hint(hint)
    }

    /// The file's own settings: its name, that it has checkpoints, its starting workspace
    /// (a folder next to the file) and its time limits.
    fn settings(&self, t: &Trajectory, dir: &Path) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        if t.name.trim().is_empty() {
            out.push(self.at(
                "name",
                "",
                0,
                "the trajectory's `name` is empty".into(),
                "give it a name",
            ));
        }
        if t.checkpoints.is_empty() {
            out.push(
            Diagnostic::file(self.origin, "the trajectory has no checkpoints")
                .hint("list the checkpoints under `checkpoints:`, each with an `id`, a `spec` and `tests`"),
        );
        }
        if let Some(w) = &t.workspace {
            if let Err(e) = check_relative(w) {
                out.push(self.at(
                    "workspace",
                    w,
                    0,
                    format!("`workspace`: {e}"),
                    "name a folder next to the trajectory file",
                ));
            } else if !dir.join(w).is_dir() {
                out.push(self.at(
                    "workspace",
                    w,
                    0,
                    format!("`workspace`: `{w}` is not a folder next to the trajectory file"),
                    "create the folder, or remove `workspace` to start from an empty one",
                ));
            }
        }
        for (key, v) in [
            ("agent_timeout_secs", t.agent_timeout_secs),
            ("test_timeout_secs", t.test_timeout_secs),
        ] {
            if v == Some(0) {
                out.push(self.at(
                    key,
                    "0",
                    0,
                    format!("`{key}` is 0"),
                    "give a number of seconds above 0, or leave it out for the default",
                ));
            }
        }
        out
    }

    /// Each checkpoint's id (unique), spec and tests; each test's id (unique across the
    /// trajectory and apart from checkpoint ids) and command.
    fn checkpoints(&self, t: &Trajectory) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let mut cps: Vec<&str> = Vec::new();
        let mut tests: Vec<&str> = Vec::new();
        for cp in &t.checkpoints {
            let seen = cps.iter().filter(|c| **c == cp.id).count();
            // Each problem of the checkpoint points at its `id` line.
            let at_cp = |msg: String, hint: &str| self.at("id", &cp.id, seen, msg, hint);
            if cp.id.trim().is_empty() {
                out.push(
                    Diagnostic::file(self.origin, "a checkpoint has an empty `id`")
                        .hint("give every checkpoint an id such as C1"),
                );
            } else if seen > 0 {
                out.push(at_cp(
                    format!("checkpoint id `{}` is used twice", cp.id),
                    "give every checkpoint its own id",
                ));
            }
            cps.push(&cp.id);
            if cp.spec.trim().is_empty() {
                out.push(at_cp(
                    format!("checkpoint `{}` has an empty `spec`", cp.id),
                    "write the spec change the agent is given",
                ));
            }
            if cp.tests.is_empty() {
                out.push(at_cp(
                    format!("checkpoint `{}` has no tests", cp.id),
                    "a checkpoint without tests cannot be assessed: add at least one under `tests:`",
                ));
            }
            for test in &cp.tests {
                let seen_t = tests.iter().filter(|x| **x == test.id).count()
                    + cps.iter().filter(|c| **c == test.id).count();
                let at_test = |msg: String, hint: &str| self.at("id", &test.id, seen_t, msg, hint);
                if test.id.trim().is_empty() {
                    out.push(
                        Diagnostic::file(
                            self.origin,
                            format!("a test of checkpoint `{}` has an empty `id`", cp.id),
                        )
                        .hint("give every test an id"),
                    );
                } else if seen_t > 0 {
                    out.push(at_test(
                        format!("id `{}` is used twice", test.id),
                        "test ids are unique across the trajectory (and differ from checkpoint ids)",
                    ));
                }
                tests.push(&test.id);
                if test.run.first().is_none_or(|p| p.trim().is_empty()) {
                    out.push(at_test(
                        format!("test `{}` has no command in `run`", test.id),
                        "write the program and its arguments, as in `run: [python3, tests/test_c1.py]`",
                    ));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "name: t\ncheckpoints:\n  - id: C1\n    spec: add\n    tests:\n      - id: t1\n        run: [python3, t.py]\n        core: true\n";

    #[test]
    fn reads_a_good_file() {
        let t = parse_trajectory("t.yaml", GOOD, Path::new(".")).unwrap();
        assert_eq!(
            t.trajectory.checkpoints[0].tests[0].run,
            ["python3", "t.py"]
        );
        assert!(t.trajectory.checkpoints[0].tests[0].core);
    }

    #[test]
    fn a_yaml_error_sends_the_reader_to_the_coding_agents_page() {
        // A structural error (not an unknown key): the fallback hint names this format's page.
        for bad in ["name: t\ncheckpoints: [\n", "- a\n- b\n"] {
            let d = parse_trajectory("t.yaml", bad, Path::new(".")).unwrap_err();
            let hint = d[0].hint.as_deref().unwrap_or_default();
            assert_eq!(hint, "see docs/coding-agents.md for the format", "{d:?}");
        }
    }

    #[test]
    fn unknown_keys_and_duplicates_point_at_their_line() {
        let bad = GOOD.replace("core: true", "cor: true");
        let d = parse_trajectory("t.yaml", &bad, Path::new(".")).unwrap_err();
        assert_eq!(d[0].line, 8, "{d:?}");
        assert!(d[0].hint.is_some());
        let dup = format!(
            "{GOOD}  - id: C2\n    spec: more\n    tests:\n      - id: t1\n        run: [x]\n"
        );
        let d = parse_trajectory("t.yaml", &dup, Path::new(".")).unwrap_err();
        assert_eq!((d[0].line, d[0].column), (12, 9), "{d:?}");
        assert!(d[0].message.contains("`t1` is used twice"));
        let outside = format!("workspace: ../up\n{GOOD}");
        let d = parse_trajectory("t.yaml", &outside, Path::new(".")).unwrap_err();
        assert_eq!(d[0].line, 1);
        assert!(d[0].message.contains("leaves"), "{d:?}");
    }
}
