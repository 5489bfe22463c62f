//! API keys from a `.env` file: [`DotEnv`], read once by the binary from the folder gauntlet
//! runs in and installed for the process ([`install`]); [`key_var`] is how every target reads
//! a key variable (the environment first, then the file).
//!
//! Only key variables are read through it, never base URLs or other settings: a `.env` file
//! can arrive in a pull request like a suite file, and one that set `OPENAI_BASE_URL` would
//! widen where the CI's own key may be sent (see `openai::ImplicitKeyScope`). A key it holds
//! is the user's own to spend; where the key goes is still decided by the environment and the
//! suite rules. The process environment is never changed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The file's name, looked up in the folder gauntlet runs in.
pub const FILE_NAME: &str = ".env";

static INSTALLED: OnceLock<DotEnv> = OnceLock::new();

/// The variables of one `.env` file, and the lines that could not be read.
#[derive(Debug, Default, Clone)]
pub struct DotEnv {
    /// Where it was read from.
    pub path: PathBuf,
    vars: BTreeMap<String, String>,
    /// One message per line that could not be parsed (its number and why), for a warning.
    pub skipped: Vec<String>,
}

impl DotEnv {
    /// Reads `dir/.env`; `Ok(None)` when there is none. A line that cannot be parsed is
    /// skipped and named in [`DotEnv::skipped`], so one bad line loses no other key.
    pub fn read(dir: &Path) -> std::io::Result<Option<DotEnv>> {
        let path = dir.join(FILE_NAME);
        let iter = match dotenvy::from_path_iter(&path) {
            Ok(i) => i,
            Err(dotenvy::Error::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(None);
            }
            Err(dotenvy::Error::Io(e)) => return Err(e),
            Err(e) => return Err(std::io::Error::other(e.to_string())),
        };
        let mut env = DotEnv {
            path,
            ..DotEnv::default()
        };
        for item in iter {
            match item {
                // A later line for the same name wins, as in the shells that source it.
                Ok((k, v)) => {
                    env.vars.insert(k, v);
                }
                Err(dotenvy::Error::LineParse(line, at)) => env.skipped.push(format!(
                    "line `{}` could not be read at character {}",
                    first_word(&line),
                    at + 1
                )),
                Err(e) => env.skipped.push(e.to_string()),
            }
        }
        Ok(Some(env))
    }

    /// The names it sets (never the values), sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.vars.keys().map(String::as_str)
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }
}

/// The name part of a line that could not be parsed: never its value, which may be a key.
fn first_word(line: &str) -> String {
    let name: String = line
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
        .take(64)
        .collect();
    if name.is_empty() {
        "?".to_owned()
    } else {
        format!("{name}=…")
    }
}

/// Makes `env` the process's `.env` file for [`key_var`]. Only the first call counts.
pub fn install(env: DotEnv) {
    let _ = INSTALLED.set(env);
}

/// Where a key variable's value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyOrigin {
    /// The process environment.
    Environment,
    /// The `.env` file.
    DotEnv,
}

/// A key variable: the environment's value when it is set and not empty (the environment
/// wins), else the installed `.env` file's.
pub fn key_var(name: &str) -> Option<(String, KeyOrigin)> {
    key_var_in(INSTALLED.get(), name)
}

/// A variable of `file` only, for registering its values as secrets before it is installed.
pub fn key_var_of(file: &DotEnv, name: &str) -> Option<(String, KeyOrigin)> {
    file.get(name)
        .filter(|v| !v.is_empty())
        .map(|v| (v.to_owned(), KeyOrigin::DotEnv))
}

fn key_var_in(file: Option<&DotEnv>, name: &str) -> Option<(String, KeyOrigin)> {
    if let Some(v) = std::env::var(name).ok().filter(|v| !v.is_empty()) {
        return Some((v, KeyOrigin::Environment));
    }
    file.and_then(|f| f.get(name))
        .filter(|v| !v.is_empty())
        .map(|v| (v.to_owned(), KeyOrigin::DotEnv))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_wins_and_the_file_fills_in() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join(FILE_NAME),
            "# keys\nGAUNTLET_TEST_DOTENV_KEY=sk-from-file\nexport PATH=/nowhere\n\
             GAUNTLET_TEST_DOTENV_QUOTED=\"a b\"\nGAUNTLET_TEST_DOTENV_KEY=sk-later\n",
        )
        .expect("write");
        let env = DotEnv::read(dir.path()).expect("read").expect("a file");
        assert!(env.skipped.is_empty(), "{:?}", env.skipped);
        // A later line wins inside the file.
        assert_eq!(
            key_var_in(Some(&env), "GAUNTLET_TEST_DOTENV_KEY"),
            Some(("sk-later".to_owned(), KeyOrigin::DotEnv))
        );
        assert_eq!(
            key_var_in(Some(&env), "GAUNTLET_TEST_DOTENV_QUOTED").map(|v| v.0),
            Some("a b".to_owned())
        );
        // `PATH` is set in every test process: the environment wins over the file.
        let (path, origin) = key_var_in(Some(&env), "PATH").expect("PATH");
        assert_eq!(origin, KeyOrigin::Environment);
        assert_ne!(path, "/nowhere");
        assert_eq!(key_var_in(Some(&env), "GAUNTLET_TEST_DOTENV_ABSENT"), None);
        assert_eq!(key_var_in(None, "GAUNTLET_TEST_DOTENV_KEY"), None);
    }

    #[test]
    fn a_bad_line_is_named_without_its_value_and_loses_no_other_key() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join(FILE_NAME),
            "GOOD_ONE=1\nBROKEN KEY=sk-secret-value\nGOOD_TWO=2\n",
        )
        .expect("write");
        let env = DotEnv::read(dir.path()).expect("read").expect("a file");
        assert_eq!(env.names().collect::<Vec<_>>(), ["GOOD_ONE", "GOOD_TWO"]);
        assert_eq!(env.skipped.len(), 1, "{:?}", env.skipped);
        assert!(env.skipped[0].contains("BROKEN"), "{:?}", env.skipped);
        assert!(!env.skipped[0].contains("sk-secret"), "{:?}", env.skipped);
    }

    #[test]
    fn no_file_is_no_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(DotEnv::read(dir.path()).expect("read").is_none());
    }
}
