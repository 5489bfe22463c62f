//! The backend seam: [`Db`], one connection to the database behind a store.
//!
//! Every query of the store is written once, in the SQL both SQLite and PostgreSQL read, with
//! `?1`, `?2`, ... placeholders (the PostgreSQL backend rewrites them to `$1`, `$2`, ...). The
//! few places where the dialects differ (a JSON lookup, the schema itself) ask
//! [`Db::dialect`]. Parameters are [`Value`]s that borrow their text, so binding a 2 KB case
//! row copies nothing; rows are read through [`Row`] while the query streams, so a scan of a
//! large run holds one row at a time.

use crate::StoreError;

/// Which SQL a backend speaks, where the dialects differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// SQLite 3.
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

/// A query parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    /// SQL NULL.
    Null,
    /// An integer (BIGINT in PostgreSQL).
    Int(i64),
    /// Text, borrowed.
    Text(&'a str),
}

impl<'a> From<&'a str> for Value<'a> {
    fn from(s: &'a str) -> Self {
        Value::Text(s)
    }
}

impl<'a> From<&'a String> for Value<'a> {
    fn from(s: &'a String) -> Self {
        Value::Text(s)
    }
}

impl From<i64> for Value<'_> {
    fn from(i: i64) -> Self {
        Value::Int(i)
    }
}

impl From<u32> for Value<'_> {
    fn from(i: u32) -> Self {
        Value::Int(i64::from(i))
    }
}

impl<'a, T: Into<Value<'a>>> From<Option<T>> for Value<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

/// One row of a result, borrowed while the query streams.
pub trait Row {
    /// An integer column (NULL is `None`).
    fn int(&self, i: usize) -> Result<Option<i64>, StoreError>;
    /// A text column (NULL is `None`).
    fn text(&self, i: usize) -> Result<Option<&str>, StoreError>;
    /// A truth value: a boolean in PostgreSQL, an integer in SQLite.
    fn flag(&self, i: usize) -> Result<bool, StoreError>;

    /// A text column that must not be NULL.
    fn string(&self, i: usize) -> Result<String, StoreError> {
        self.text(i)?
            .map(str::to_owned)
            .ok_or_else(|| StoreError::Record(format!("column {i} is unexpectedly NULL")))
    }

    /// An integer column that must not be NULL.
    fn count(&self, i: usize) -> Result<i64, StoreError> {
        self.int(i)?
            .ok_or_else(|| StoreError::Record(format!("column {i} is unexpectedly NULL")))
    }
}

/// What a row callback returns.
pub type RowResult = Result<(), StoreError>;

/// One connection to a store's database.
///
/// A backend implements the four statements the store needs (run one, stream one, and the
/// bounds of a write transaction); everything else about it (how it opens, migrates, checks
/// and compacts its database) stays in its own module.
pub trait Db: Send {
    /// The SQL it speaks.
    fn dialect(&self) -> Dialect;

    /// Runs a statement; returns the rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value<'_>]) -> Result<u64, StoreError>;

    /// Runs a query, calling `each` with every row as it arrives.
    fn query(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
        each: &mut dyn FnMut(&dyn Row) -> RowResult,
    ) -> Result<(), StoreError>;

    /// Starts a write transaction (taking whatever lock writers take, waiting in turn).
    fn begin(&mut self) -> Result<(), StoreError>;

    /// Commits the open transaction.
    fn commit(&mut self) -> Result<(), StoreError>;

    /// Rolls the open transaction back (an error has nowhere better to go).
    fn rollback(&mut self);

    /// Problems the database's own integrity check finds (none: healthy).
    fn check(&mut self) -> Result<Vec<String>, StoreError> {
        Ok(Vec::new())
    }

    /// Gives the space of removed runs back, where the database does not do so itself.
    fn compact(&mut self) -> Result<(), StoreError> {
        Ok(())
    }

    /// The bytes the store takes, where the backend can tell (0 otherwise).
    fn size(&mut self) -> u64 {
        0
    }
}

impl dyn Db + '_ {
    /// The first row of a query, mapped; `None` when there is none.
    pub fn first<T>(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
        f: impl FnOnce(&dyn Row) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError> {
        let mut f = Some(f);
        let mut out = None;
        self.query(sql, params, &mut |r| {
            if let Some(f) = f.take() {
                out = Some(f(r)?);
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// Every row of a query, mapped.
    pub fn all<T>(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
        mut f: impl FnMut(&dyn Row) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError> {
        let mut out = Vec::new();
        self.query(sql, params, &mut |r| {
            out.push(f(r)?);
            Ok(())
        })?;
        Ok(out)
    }

    /// Runs `f` in a write transaction: committed when it succeeds, rolled back when not.
    pub fn in_transaction<T>(
        &mut self,
        f: impl FnOnce(&mut (dyn Db + '_)) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.begin()?;
        match f(self) {
            Ok(v) => {
                self.commit()?;
                Ok(v)
            }
            Err(e) => {
                self.rollback();
                Err(e)
            }
        }
    }
}

/// `?N` placeholders as PostgreSQL's `$N` (the store's SQL holds no `?` in its literals).
pub fn numbered_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_for_postgres() {
        assert_eq!(
            numbered_placeholders("SELECT a FROM t WHERE x = ?1 AND y IN (?2, ?10)"),
            "SELECT a FROM t WHERE x = $1 AND y IN ($2, $10)"
        );
        assert_eq!(numbered_placeholders("no params"), "no params");
    }
}
