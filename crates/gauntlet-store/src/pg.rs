//! The PostgreSQL backend: [`PgDb`], a team store on a PostgreSQL server, and [`PgLocation`],
//! where that server is.
//!
//! A location is a `postgres://` URL (or libpq's `key=value` form), completed from the usual
//! `PG*` variables for whatever it leaves out: `PGHOST` (a host name or a Unix socket
//! folder), `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`, `PGAPPNAME`,
//! `PGCONNECT_TIMEOUT` and `PGSSLMODE`. Its password is never shown: the location prints
//! without it, and [`PgLocation::secrets`] hands it to the run's redactor.
//!
//! Connections are plain (no TLS): meant for a Unix socket or a server on 127.0.0.1, or a
//! TLS-terminating proxy next to gauntlet. A location that asks for TLS (`sslmode=require`)
//! is refused rather than quietly sent in the clear.
//!
//! The tables are the SQLite store's with PostgreSQL's types (BIGINT for integers, byte-wise
//! `"C"` ordering for the text that queries sort by, so that both stores list runs in the
//! same order), and a `gauntlet_schema` table holds the schema version. Several processes may
//! open a new database at once: the first creates the tables under an advisory lock while
//! the others wait for it.

use std::collections::HashMap;
use std::time::Duration;

use postgres::config::{Host, SslMode};
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, Config, NoTls, Statement};

use crate::db::{Db, Dialect, Row, RowResult, Value, numbered_placeholders};
use crate::{SCHEMA_VERSION, StoreError};

/// How long connecting may take unless `connect_timeout` or `PGCONNECT_TIMEOUT` says.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The key of the advisory lock under which a new database gets its tables.
const MIGRATION_LOCK: i64 = 0x6761_756e_746c_6574; // "gauntlet"

/// Where a PostgreSQL store is: the connection settings, complete.
#[derive(Clone)]
pub struct PgLocation {
    config: Config,
    shown: String,
    password: Option<String>,
}

impl std::fmt::Debug for PgLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

impl PgLocation {
    /// Parses a location (`postgres://USER:PASSWORD@HOST:PORT/DB?...` or `host=... user=...`)
    /// and completes it from the environment.
    pub fn parse(spec: &str) -> Result<PgLocation, StoreError> {
        PgLocation::parse_with(spec, |k| std::env::var(k).ok())
    }

    /// [`PgLocation::parse`] with the environment given (for tests).
    pub fn parse_with(
        spec: &str,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<PgLocation, StoreError> {
        let bad = |why: String| StoreError::Location(why);
        let env = |k: &str| env(k).filter(|v| !v.is_empty());
        // The parser's own message may quote the text it choked on, password included.
        let mut config: Config = spec.parse().map_err(|_| {
            bad("it is not a PostgreSQL connection URL (postgres://USER@HOST:PORT/DATABASE) or key=value string".into())
        })?;
        if config.get_hosts().is_empty() {
            match env("PGHOST") {
                Some(hosts) => {
                    for h in hosts.split(',') {
                        config.host(h.trim());
                    }
                }
                None => {
                    // libpq's default: the server's Unix socket, where Debian puts it.
                    match ["/var/run/postgresql", "/tmp"]
                        .into_iter()
                        .find(|d| std::path::Path::new(d).join(".s.PGSQL.5432").exists())
                    {
                        Some(dir) => config.host(dir),
                        None => config.host("localhost"),
                    };
                }
            }
        }
        if config.get_ports().is_empty()
            && let Some(p) = env("PGPORT")
        {
            let port: u16 = p
                .trim()
                .parse()
                .map_err(|_| bad(format!("PGPORT `{p}` is not a port number")))?;
            config.port(port);
        }
        if config.get_user().is_none() {
            let user = env("PGUSER")
                .or_else(|| env("USER"))
                .or_else(|| env("LOGNAME"))
                .unwrap_or_else(|| "postgres".into());
            config.user(&user);
        }
        if config.get_dbname().is_none()
            && let Some(db) = env("PGDATABASE")
        {
            config.dbname(&db);
        }
        if config.get_password().is_none()
            && let Some(pw) = env("PGPASSWORD")
        {
            config.password(&pw);
        }
        if config.get_application_name().is_none() {
            config.application_name(&env("PGAPPNAME").unwrap_or_else(|| "gauntlet".into()));
        }
        if config.get_connect_timeout().is_none() {
            let secs = env("PGCONNECT_TIMEOUT").and_then(|s| s.trim().parse::<u64>().ok());
            config.connect_timeout(secs.map_or(CONNECT_TIMEOUT, Duration::from_secs));
        }
        let wants_tls = |mode: &str| matches!(mode, "require" | "verify-ca" | "verify-full");
        if config.get_ssl_mode() == SslMode::Require
            || spec.contains("sslmode=verify")
            || env("PGSSLMODE").is_some_and(|m| wants_tls(m.trim()))
        {
            return Err(bad(
                "it asks for TLS (sslmode require or verify), which this store does not speak: connect over a Unix socket or 127.0.0.1, or through a TLS-terminating proxy next to gauntlet".into(),
            ));
        }
        config.ssl_mode(SslMode::Disable);
        let password = config
            .get_password()
            .map(|p| String::from_utf8_lossy(p).into_owned());
        let shown = show(&config);
        Ok(PgLocation {
            config,
            shown,
            password,
        })
    }

    /// Secrets to redact wherever they might appear: the password, by the name it came by.
    pub fn secrets(&self) -> Vec<(String, String)> {
        self.password
            .iter()
            .map(|p| ("store password".to_owned(), p.clone()))
            .collect()
    }

    /// The location as it may be shown: no password.
    pub fn shown(&self) -> &str {
        &self.shown
    }
}

/// `postgres://USER@HOST:PORT/DB`, a Unix socket folder percent-encoded in the host's place.
fn show(c: &Config) -> String {
    let hosts: Vec<String> = c
        .get_hosts()
        .iter()
        .map(|h| match h {
            Host::Tcp(name) => name.clone(),
            Host::Unix(path) => path.display().to_string().replace('/', "%2F"),
        })
        .collect();
    let port = match c.get_ports().first() {
        Some(5432) | None => String::new(),
        Some(p) => format!(":{p}"),
    };
    let user = c.get_user().unwrap_or("");
    let db = c.get_dbname().unwrap_or(user);
    format!("postgres://{user}@{}{port}/{db}", hosts.join(","))
}

/// A connection to a PostgreSQL store.
pub struct PgDb {
    client: Client,
    /// Prepared statements by their SQL as the store writes it.
    statements: HashMap<String, Statement>,
}

impl PgDb {
    /// Connects, and creates the tables if the database has none yet.
    pub fn connect(loc: &PgLocation) -> Result<PgDb, StoreError> {
        let client = loc.config.connect(NoTls)?;
        let mut db = PgDb {
            client,
            statements: HashMap::new(),
        };
        db.migrate(loc)?;
        Ok(db)
    }

    fn version(&mut self) -> Result<Option<i64>, StoreError> {
        let has: bool = self
            .client
            .query_one("SELECT to_regclass('gauntlet_schema') IS NOT NULL", &[])?
            .get(0);
        if !has {
            return Ok(None);
        }
        let row = self
            .client
            .query_opt("SELECT MAX(version) FROM gauntlet_schema", &[])?;
        Ok(row.and_then(|r| r.get::<_, Option<i64>>(0)))
    }

    /// Brings the database to [`SCHEMA_VERSION`]; a current one is only read.
    fn migrate(&mut self, loc: &PgLocation) -> Result<(), StoreError> {
        match self.version()? {
            Some(v) if v > SCHEMA_VERSION => return Err(StoreError::TooNew(v)),
            Some(v) if v == SCHEMA_VERSION => return Ok(()),
            _ => {}
        }
        // The lock is taken before the transaction starts: a transaction sees the tables
        // another one committed only if it began after that commit (the catalog cache of a
        // transaction that began earlier may still say they are absent).
        self.client
            .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])?;
        let created = self.create_tables(loc);
        let unlocked = self
            .client
            .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK]);
        created?;
        unlocked?;
        Ok(())
    }

    fn create_tables(&mut self, loc: &PgLocation) -> Result<(), StoreError> {
        let mut tx = self.client.transaction()?;
        let marked: bool = tx
            .query_one("SELECT to_regclass('gauntlet_schema') IS NOT NULL", &[])?
            .get(0);
        if !marked {
            // A `runs` table that gauntlet did not make belongs to something else.
            let foreign: bool = tx
                .query_one("SELECT to_regclass('runs') IS NOT NULL", &[])?
                .get(0);
            if foreign {
                return Err(StoreError::Location(format!(
                    "the database of {} already has a `runs` table that gauntlet did not create; give gauntlet a database of its own (createdb gauntlet)",
                    loc.shown
                )));
            }
            tx.batch_execute(
                r#"CREATE TABLE runs (
                    run_id TEXT COLLATE "C" PRIMARY KEY,
                    started_at TEXT COLLATE "C" NOT NULL,
                    finished_at TEXT,
                    command TEXT NOT NULL,
                    target TEXT NOT NULL,
                    status TEXT,
                    planned BIGINT NOT NULL,
                    manifest TEXT NOT NULL,
                    summary TEXT
                 );
                 CREATE TABLE cases (
                    run_id TEXT COLLATE "C" NOT NULL,
                    seq BIGINT NOT NULL,
                    case_id TEXT COLLATE "C" NOT NULL,
                    status TEXT NOT NULL,
                    data TEXT NOT NULL,
                    ev_seq BIGINT,
                    elapsed_ms BIGINT,
                    PRIMARY KEY (run_id, case_id)
                 );
                 CREATE INDEX cases_by_seq ON cases (run_id, seq);
                 CREATE TABLE trials (
                    run_id TEXT COLLATE "C" NOT NULL,
                    case_id TEXT COLLATE "C" NOT NULL,
                    trial BIGINT NOT NULL,
                    status TEXT NOT NULL,
                    outcome TEXT NOT NULL,
                    data TEXT NOT NULL,
                    PRIMARY KEY (run_id, case_id, trial)
                 );
                 CREATE TABLE warnings (
                    run_id TEXT COLLATE "C" NOT NULL,
                    seq BIGINT NOT NULL,
                    message TEXT NOT NULL,
                    PRIMARY KEY (run_id, seq)
                 );
                 CREATE TABLE baselines (
                    name TEXT COLLATE "C" PRIMARY KEY,
                    run_id TEXT COLLATE "C" NOT NULL,
                    set_at TEXT NOT NULL
                 );
                 CREATE TABLE events (
                    run_id TEXT COLLATE "C" NOT NULL,
                    ev_seq BIGINT NOT NULL,
                    elapsed_ms BIGINT NOT NULL,
                    kind TEXT NOT NULL,
                    case_id TEXT COLLATE "C",
                    trial BIGINT,
                    message TEXT,
                    PRIMARY KEY (run_id, ev_seq)
                 );
                 CREATE TABLE gauntlet_schema (version BIGINT NOT NULL);"#,
            )?;
            tx.execute(
                "INSERT INTO gauntlet_schema (version) VALUES ($1)",
                &[&SCHEMA_VERSION],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    fn statement(&mut self, sql: &str) -> Result<Statement, StoreError> {
        if let Some(st) = self.statements.get(sql) {
            return Ok(st.clone());
        }
        let st = self.client.prepare(&numbered_placeholders(sql))?;
        self.statements.insert(sql.to_owned(), st.clone());
        Ok(st)
    }
}

impl ToSql for Value<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match *self {
            Value::Null => Ok(IsNull::Yes),
            // The server decides a parameter's type from where it stands; integers go as
            // whichever width it chose.
            Value::Int(i) if *ty == Type::INT4 => i32::try_from(i)?.to_sql(ty, out),
            Value::Int(i) if *ty == Type::INT2 => i16::try_from(i)?.to_sql(ty, out),
            Value::Int(i) => i.to_sql(ty, out),
            Value::Text(s) => s.to_sql(ty, out),
        }
    }

    fn accepts(ty: &Type) -> bool {
        <i64 as ToSql>::accepts(ty)
            || <i32 as ToSql>::accepts(ty)
            || <i16 as ToSql>::accepts(ty)
            || <&str as ToSql>::accepts(ty)
    }

    to_sql_checked!();
}

struct PgRow<'a>(&'a postgres::Row);

impl Row for PgRow<'_> {
    fn int(&self, i: usize) -> Result<Option<i64>, StoreError> {
        let ty = self.0.columns()[i].type_();
        Ok(if *ty == Type::INT4 {
            self.0.try_get::<_, Option<i32>>(i)?.map(i64::from)
        } else if *ty == Type::INT2 {
            self.0.try_get::<_, Option<i16>>(i)?.map(i64::from)
        } else {
            self.0.try_get::<_, Option<i64>>(i)?
        })
    }

    fn text(&self, i: usize) -> Result<Option<&str>, StoreError> {
        Ok(self.0.try_get::<_, Option<&str>>(i)?)
    }

    fn flag(&self, i: usize) -> Result<bool, StoreError> {
        if *self.0.columns()[i].type_() == Type::BOOL {
            Ok(self.0.try_get::<_, Option<bool>>(i)?.unwrap_or(false))
        } else {
            Ok(self.int(i)?.unwrap_or(0) != 0)
        }
    }
}

fn refs<'a>(params: &'a [Value<'_>]) -> Vec<&'a (dyn ToSql + Sync)> {
    params.iter().map(|v| v as &(dyn ToSql + Sync)).collect()
}

impl Db for PgDb {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn execute(&mut self, sql: &str, params: &[Value<'_>]) -> Result<u64, StoreError> {
        let st = self.statement(sql)?;
        Ok(self.client.execute(&st, &refs(params))?)
    }

    fn query(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
        each: &mut dyn FnMut(&dyn Row) -> RowResult,
    ) -> Result<(), StoreError> {
        let st = self.statement(sql)?;
        // Streamed: rows are read from the connection as they are handled.
        let mut rows = self.client.query_raw(&st, refs(params))?;
        while let Some(row) = rows.next()? {
            each(&PgRow(&row))?;
        }
        Ok(())
    }

    fn begin(&mut self) -> Result<(), StoreError> {
        self.client.batch_execute("BEGIN")?;
        Ok(())
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        self.client.batch_execute("COMMIT")?;
        Ok(())
    }

    fn rollback(&mut self) {
        let _ = self.client.batch_execute("ROLLBACK");
    }

    fn check(&mut self) -> Result<Vec<String>, StoreError> {
        // The server keeps its pages whole; what can be wrong is gauntlet's part: the schema
        // and the records in it.
        let mut problems = Vec::new();
        for table in ["runs", "cases", "trials", "warnings", "baselines", "events"] {
            let present: bool = self
                .client
                .query_one("SELECT to_regclass($1) IS NOT NULL", &[&table])?
                .get(0);
            if !present {
                problems.push(format!("table `{table}` is missing"));
            }
        }
        Ok(problems)
    }

    fn size(&mut self) -> u64 {
        let tables =
            "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::BIGINT FROM pg_class c
             WHERE c.relname IN ('runs', 'cases', 'trials', 'warnings', 'baselines', 'events')
               AND c.relkind = 'r' AND pg_table_is_visible(c.oid)";
        self.client
            .query_one(tables, &[])
            .map_or(0, |r| r.get::<_, i64>(0).max(0) as u64)
    }
}
