//! SQLite's page-cache setting, in a process of its own: SQLite takes it only before it
//! starts, and other tests in one process would start it first.

use gauntlet_store::sqlite::no_bulk_page_cache;

#[test]
fn the_page_cache_setting_is_taken_before_sqlite_starts_and_refused_after() {
    assert!(
        no_bulk_page_cache(),
        "SQLite refused the setting before it started"
    );
    // A database still opens, writes and reads a value of many pages with it.
    let dir = tempfile::tempdir().expect("tempdir");
    let conn = rusqlite::Connection::open(dir.path().join("t.db")).expect("open");
    conn.execute_batch("CREATE TABLE t (x BLOB); INSERT INTO t VALUES (zeroblob(100000));")
        .expect("write");
    let n: i64 = conn
        .query_row("SELECT length(x) FROM t", [], |r| r.get(0))
        .expect("read");
    assert_eq!(n, 100_000);
    assert!(
        !no_bulk_page_cache(),
        "SQLite took a setting after it started: the call must come first in main"
    );
}
