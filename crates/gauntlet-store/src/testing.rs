//! Test support: [`TestDatabase`], a fresh PostgreSQL database for one test on the server
//! that `GAUNTLET_TEST_PG` names (`.ci/run` starts one; see `.ci/postgres`).
//!
//! Without the variable the tests that need a server are skipped, except under CI (the `CI`
//! variable set), where its absence is a failure: a CI that quietly skipped them would say
//! nothing about the PostgreSQL store.

use postgres::{Client, NoTls};

/// The variable that names the test server (a URL whose user may create databases).
pub const TEST_PG_VAR: &str = "GAUNTLET_TEST_PG";

/// A database made for one test, dropped when this goes.
pub struct TestDatabase {
    admin: String,
    name: String,
    /// The URL of the new database.
    pub url: String,
}

/// Why a test that needs PostgreSQL does not run.
#[derive(Debug)]
pub struct Skip(pub String);

impl TestDatabase {
    /// A new, empty database named after `label`: `Err(Skip)` when no server is named and
    /// this is not CI; a panic when it is CI, or when the server cannot be used.
    pub fn create(label: &str) -> Result<TestDatabase, Skip> {
        let Some(admin) = std::env::var(TEST_PG_VAR).ok().filter(|v| !v.is_empty()) else {
            let why = format!(
                "{TEST_PG_VAR} is not set: no PostgreSQL server to test against (`eval \"$(.ci/postgres start)\"` starts one)"
            );
            assert!(
                std::env::var_os("CI").is_none(),
                "{why}; under CI the PostgreSQL tests must run"
            );
            return Err(Skip(why));
        };
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let clean: String = label
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .take(30)
            .collect();
        let name = format!("gt_{clean}_{}_{stamp:x}", std::process::id()).to_lowercase();
        let mut client = Client::connect(&admin, NoTls)
            .unwrap_or_else(|e| panic!("{TEST_PG_VAR} names a server that refuses: {e}"));
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap_or_else(|e| panic!("cannot create a test database: {e}"));
        let url = with_database(&admin, &name);
        Ok(TestDatabase { admin, name, url })
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Ok(mut c) = Client::connect(&self.admin, NoTls) {
            let _ = c.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

/// The URL with its database replaced.
pub fn with_database(url: &str, db: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let start = base.find("://").map_or(0, |i| i + 3);
    let authority_end = base[start..].find('/').map_or(base.len(), |i| start + i);
    let mut out = format!("{}/{db}", &base[..authority_end]);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn the_database_of_a_url_is_replaced() {
        assert_eq!(
            with_database("postgres://u:p@%2Ftmp%2Fx/postgres", "t1"),
            "postgres://u:p@%2Ftmp%2Fx/t1"
        );
        assert_eq!(
            with_database("postgres://u@localhost:5432?sslmode=disable", "t1"),
            "postgres://u@localhost:5432/t1?sslmode=disable"
        );
    }
}
