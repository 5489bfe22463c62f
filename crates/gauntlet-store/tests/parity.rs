//! The store interface on both backends: the same events written into SQLite and into
//! PostgreSQL read back the same (replay, runs, trials, warnings, resolve, resume, prune,
//! check), several writers share one PostgreSQL store without their keys meeting, and a
//! run id is taken once. The PostgreSQL half needs `GAUNTLET_TEST_PG` (see `.ci/postgres`).

use std::collections::BTreeMap;

use gauntlet_core::event::{EventKind, Reporter, RunEvent, RunManifest};
use gauntlet_core::result::CaseResult;
use gauntlet_core::summary::Summary;
use gauntlet_store::testing::TestDatabase;
use gauntlet_store::{Store, StoreError, StoreLocation};

/// A PostgreSQL database for this test, or the reason there is none (printed: the test
/// then checks SQLite alone).
#[allow(clippy::print_stderr)]
fn postgres(label: &str) -> Option<TestDatabase> {
    match TestDatabase::create(label) {
        Ok(db) => Some(db),
        Err(skip) => {
            eprintln!("skipping the PostgreSQL half of {label}: {}", skip.0);
            None
        }
    }
}

fn manifest(run: &str, k: u32, started: &str) -> RunManifest {
    serde_json::from_value(serde_json::json!({
        "schema_version": 1, "run_id": run, "gauntlet_version": "0.1.0",
        "started_at": started, "command": "run",
        "suites": [{"name": "s", "path": "suite.yaml", "sha256": "00", "cases": 3}],
        "target": {"kind": "fake", "label": "fake:safe"}, "k": k, "seed": 0, "planned_cases": 3,
        "evidence_level": "offline", "side_effects": "simulated", "dataset_revision": "-"
    }))
    .expect("manifest")
}

fn case(i: usize, outcome: &str, quarantined: bool) -> CaseResult {
    let id = format!("case-{i:03}");
    let trial = |t: u32, outcome: &str| {
        serde_json::json!({"case_id": id, "trial": t, "outcome": outcome,
            "status": if outcome == "completed" { "PASS" } else { "ERROR" },
            "score": {"kind": "unscored"}, "verdicts": [],
            "error": if outcome == "completed" { serde_json::Value::Null } else { "connection refused".into() },
            "trace": {"spans": [], "turns": [{"user": "hi", "answer": format!("answer {i}/{t}: ünïcode ✓ 0.1")}]},
            "duration_ms": 3})
    };
    serde_json::from_value(serde_json::json!({
        "case": {"id": id, "suite": "s", "kind": "task", "blocking": true, "security": false,
                 "name": id, "pack": "smoke"},
        "status": if outcome == "completed" { "PASS" } else { "ERROR" },
        "score": {"kind": "unscored"}, "passed_trials": 1, "quarantined": quarantined,
        "trials": [trial(0, "completed"), trial(1, outcome)]
    }))
    .expect("case")
}

fn summary(status: &str) -> Summary {
    serde_json::from_value(serde_json::json!({
        "status": status, "reasons": [], "cases": 3, "trials": 6, "passed": 2, "failed": 0,
        "conditional": 0, "errors": 1, "blocked": 0, "quarantined": 1, "hard_fails": 0,
        "tasks": {"count": 0, "fail_count": 0, "conditional_count": 0},
        "refusals": {"count": 0, "fail_count": 0, "conditional_count": 0},
        "pass_at_1": 2, "pass_at_k": 1, "k": 2, "by_category": [], "duration_ms": 90
    }))
    .expect("summary")
}

/// A k = 2 run: warnings between events, trials before their case, one case with a trial
/// that ended in error, one quarantined, one case left unfinished (killed) unless `finish`.
fn stream(run: &str, started: &str, finish: bool) -> Vec<RunEvent> {
    let trial = |c: &CaseResult, t: usize, at| {
        RunEvent::new(
            at,
            EventKind::TrialFinished {
                trial: Box::new(c.trials[t].clone()),
            },
        )
    };
    let done = |c: CaseResult, at| {
        RunEvent::new(
            at,
            EventKind::CaseFinished {
                result: Box::new(c),
            },
        )
    };
    let warn = |at, m: &str| RunEvent::new(at, EventKind::Warning { message: m.into() });
    let (a, b, c) = (
        case(0, "completed", false),
        case(1, "error", true),
        case(2, "completed", false),
    );
    let mut ev = vec![
        RunEvent::new(
            1,
            EventKind::RunStarted {
                manifest: Box::new(manifest(run, 2, started)),
            },
        ),
        warn(2, "first"),
        trial(&a, 0, 5),
        trial(&b, 0, 6),
        trial(&a, 1, 7),
        done(a, 8),
        warn(9, "between"),
        trial(&b, 1, 10),
        done(b, 11),
        trial(&c, 0, 12),
    ];
    if finish {
        ev.push(trial(&c, 1, 13));
        ev.push(done(c, 14));
        ev.push(RunEvent::new(
            20,
            EventKind::RunFinished {
                summary: Box::new(summary("INCONCLUSIVE")),
                finished_at: "2026-11-30T03:06:33Z".into(),
            },
        ));
    }
    ev
}

fn write(store: &Store, events: &[RunEvent]) -> Result<(), String> {
    let mut rep = store.reporter().map_err(|e| e.to_string())?;
    for (i, ev) in events.iter().enumerate() {
        rep.on_event(ev).map_err(|e| e.to_string())?;
        if i % 3 == 2 {
            rep.flush().map_err(|e| e.to_string())?;
        }
    }
    rep.flush().map_err(|e| e.to_string())
}

fn replayed(store: &mut Store, run: &str) -> Vec<RunEvent> {
    let mut out = Vec::new();
    store
        .replay(run, |ev| {
            out.push(ev);
            Ok(())
        })
        .expect("replay");
    out
}

/// Everything the store answers about its runs, as one value to compare across backends.
fn observe(store: &mut Store) -> serde_json::Value {
    let runs = store.runs(10).expect("runs");
    let mut per_run = BTreeMap::new();
    for r in &runs {
        let id = &r.run_id;
        let trials: BTreeMap<String, Vec<u32>> = store
            .trials(id)
            .expect("trials")
            .into_iter()
            .map(|(c, ts)| (c, ts.iter().map(|t| t.trial).collect()))
            .collect();
        per_run.insert(
            id.clone(),
            serde_json::json!({
                "manifest": store.manifest(id).expect("manifest"),
                "summary": store.summary(id).expect("summary"),
                "warnings": store.warnings(id).expect("warnings"),
                "case_ids": store.case_ids(id).expect("ids"),
                "quarantined": store.quarantined_cases(id).expect("quarantined"),
                "trials": trials,
                "replay": replayed(store, id),
            }),
        );
    }
    serde_json::json!({
        "runs": runs,
        "per_run": per_run,
        "latest": store.resolve("latest").expect("latest"),
        "prefix": store.resolve("run-b").expect("prefix"),
        "prefix_any_case": store.resolve("RUN-B").expect("prefix"),
        "ambiguous": store.resolve("run-").err().map(|e| e.to_string()),
        "baselines": store
            .baselines()
            .expect("baselines")
            .into_iter()
            .map(|(name, run, _set_at)| (name, run))
            .collect::<Vec<_>>(),
    })
}

/// Drives one store through the whole interface and returns what it saw.
fn exercise(location: StoreLocation) -> serde_json::Value {
    let mut store = Store::open(location).expect("open");
    let a = stream("run-a", "2026-11-30T03:06:32Z", true);
    let b = stream("run-b", "2026-11-30T03:07:00Z", false);
    write(&store, &a).expect("run a");
    write(&store, &b).expect("run b");
    // A stored run replays as the stream it was, on either backend.
    assert_eq!(replayed(&mut store, "run-a"), a);
    assert_eq!(replayed(&mut store, "run-b"), b);
    // The same id twice is refused (two writers of one shard meet here).
    let again = write(&store, &a[..1]).expect_err("a second run-a");
    assert!(again.contains("already in the store"), "{again}");
    store.set_baseline("main", "run-a").expect("baseline");
    assert_eq!(store.resolve("main").expect("baseline"), "run-a");
    assert!(store.check().expect("check").is_empty());
    let before = observe(&mut store);
    // Resume of a finished run reopens the trial that ended in error.
    let reopened = store.reopen_failed_trials("run-a").expect("reopen");
    assert_eq!(reopened.len(), 1, "{reopened:?}");
    assert!(reopened[0].contains("case-001 trial 1"), "{reopened:?}");
    assert!(store.summary("run-a").expect("summary").is_none());
    let after_reopen = observe(&mut store);
    // Prune keeps the baseline; the unfinished run started long ago, so it goes.
    let pruned = store.prune(Some(0), None).expect("prune");
    assert_eq!(pruned.removed, ["run-b"]);
    assert!(!store.exists("run-b").expect("exists"));
    store.remove_run("run-a").expect("remove");
    assert!(store.runs(10).expect("runs").is_empty());
    serde_json::json!({"before": before, "after_reopen": after_reopen})
}

#[test]
fn sqlite_and_postgres_give_back_the_same_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sqlite = exercise(StoreLocation::from(dir.path().join("runs.db")));
    let Some(db) = postgres("parity") else {
        return;
    };
    let pg = exercise(StoreLocation::parse(&db.url).expect("url"));
    // Compared part by part, so that a difference names its place.
    for part in ["before", "after_reopen"] {
        for (key, want) in sqlite[part].as_object().expect("an object") {
            assert!(
                pg[part][key] == *want,
                "{part}.{key} differs:\nSQLite:     {want}\nPostgreSQL: {}",
                pg[part][key]
            );
        }
    }
    assert_eq!(sqlite, pg);
}

#[test]
fn several_writers_share_one_postgres_store_without_their_keys_meeting() {
    let Some(db) = postgres("writers") else {
        return;
    };
    let location = StoreLocation::parse(&db.url).expect("url");
    // Open once first, as a CI step would; the writers below may also race to create the
    // tables on a fresh database, which the advisory lock settles.
    let fresh = postgres("writers_fresh").expect("a second database");
    let fresh_location = StoreLocation::parse(&fresh.url).expect("url");
    std::thread::scope(|s| {
        for loc in [&location, &fresh_location] {
            for w in 0..4 {
                s.spawn(move || {
                    let store = Store::open(loc).expect("open");
                    let run = format!("run-w{w}");
                    write(&store, &stream(&run, "2026-11-30T03:06:32Z", true)).expect("write");
                });
            }
        }
    });
    for loc in [location, fresh_location] {
        let mut store = Store::open(loc).expect("open");
        let runs = store.runs(10).expect("runs");
        assert_eq!(runs.len(), 4);
        for w in 0..4 {
            let run = format!("run-w{w}");
            assert_eq!(
                replayed(&mut store, &run),
                stream(&run, "2026-11-30T03:06:32Z", true)
            );
        }
    }
}

#[test]
fn a_postgres_location_never_shows_its_password() {
    let env = |k: &str| match k {
        "PGPASSWORD" => Some("from-the-env-9".to_owned()),
        "PGUSER" => Some("ci".to_owned()),
        _ => None,
    };
    let loc =
        gauntlet_store::PgLocation::parse_with("postgres://u:s3cret-pw@db.internal:6543/runs", env)
            .expect("parse");
    assert_eq!(loc.shown(), "postgres://u@db.internal:6543/runs");
    assert_eq!(
        loc.secrets(),
        [("store password".to_owned(), "s3cret-pw".to_owned())]
    );
    let loc =
        gauntlet_store::PgLocation::parse_with("postgres://db.internal/runs", env).expect("parse");
    assert_eq!(loc.shown(), "postgres://ci@db.internal/runs");
    assert_eq!(loc.secrets()[0].1, "from-the-env-9");
    let err = gauntlet_store::PgLocation::parse_with("postgres://u:pw@h/db?sslmode=require", env)
        .expect_err("TLS is refused");
    assert!(matches!(err, StoreError::Location(_)), "{err}");
    let err = gauntlet_store::PgLocation::parse_with("postgres://u:pw-in-junk@h:notaport/db", env)
        .expect_err("junk");
    assert!(!err.to_string().contains("pw-in-junk"), "{err}");
}
