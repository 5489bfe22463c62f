//! The harm pack end to end: `builtin:harm` rings on the vulnerable persona in every case and
//! holds on the safe one, the attack success rate per harm category in `report.json` is what
//! counting its cases gives, every report shows it, `audit` finds no weak case, and imported
//! behaviour files (JailbreakBench, HarmBench, AILuminate, as small fixtures in their own
//! formats) get their harm categories from the sets' own category columns.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

mod common;
use common::{code, report, root, run, statuses, text};

/// (cases, attack achieved, attack observed) per harm category, counted from the cases of a
/// report.
fn counted(r: &Value) -> BTreeMap<String, (u64, u64, u64)> {
    let mut out: BTreeMap<String, (u64, u64, u64)> = BTreeMap::new();
    for c in r["cases"].as_array().unwrap() {
        let Some(h) = c["case"]["harm"].as_str() else {
            continue;
        };
        let e = out.entry(h.to_owned()).or_default();
        e.0 += 1;
        match c["security"]["attack"].as_str() {
            Some("achieved") => {
                e.1 += 1;
                e.2 += 1;
            }
            Some("not_achieved") => e.2 += 1,
            _ => {}
        }
    }
    out
}

/// The per-category block of `report.json`, as (cases, achieved, observed) by category.
fn reported(r: &Value) -> BTreeMap<String, (u64, u64, u64)> {
    r["summary"]["security"]["by_harm"]
        .as_array()
        .expect("a per-category block")
        .iter()
        .map(|h| {
            let a = &h["attack_success"];
            (
                h["category"].as_str().unwrap().to_owned(),
                (
                    h["cases"].as_u64().unwrap(),
                    a["cases"].as_u64().unwrap(),
                    a["of"].as_u64().unwrap(),
                ),
            )
        })
        .collect()
}

fn run_harm(dir: &Path, persona: &str, out: &str) -> (Value, String) {
    let o = run(
        &[
            "run",
            "builtin:harm",
            "-t",
            persona,
            "--out",
            out,
            "--no-store",
        ],
        dir,
    );
    assert!(matches!(code(&o), 0 | 1), "{}", text(&o));
    (report(&dir.join(out)), text(&o))
}

#[test]
fn the_harm_pack_rings_on_the_vulnerable_persona_and_holds_on_the_safe_one() {
    let tmp = tempfile::tempdir().unwrap();
    let categories = 14;
    for (persona, want, asr) in [
        ("fake:vulnerable", "FAIL", 1.0),
        ("fake:safe", "PASS", 0.0),
        ("fake:literal", "PASS", 0.0),
    ] {
        let out = persona.replace(':', "-");
        let (r, shown) = run_harm(tmp.path(), persona, &out);
        let st = statuses(&r);
        assert_eq!(st.len(), 42, "{persona}");
        let bad: Vec<_> = st.iter().filter(|(_, s)| *s != want).collect();
        assert!(bad.is_empty(), "{persona}: {bad:?}");
        // The block is what counting the cases gives, in every category.
        let rep = reported(&r);
        assert_eq!(rep, counted(&r), "{persona}");
        assert_eq!(rep.len(), categories, "{persona}: {rep:?}");
        for h in r["summary"]["security"]["by_harm"].as_array().unwrap() {
            assert_eq!(h["attack_success"]["rate"], asr, "{persona}: {h}");
            assert!(!h["title"].as_str().unwrap().is_empty(), "{h}");
        }
        // In the terminal, summary.md and report.html, one line or row per category.
        let md = std::fs::read_to_string(tmp.path().join(&out).join("summary.md")).unwrap();
        let html = std::fs::read_to_string(tmp.path().join(&out).join("report.html")).unwrap();
        assert!(md.contains("### Attack success by harm category"), "{md}");
        assert!(html.contains("Attack success by harm category"));
        let (pct, n) = if asr > 0.0 { ("100%", 3) } else { ("0%", 0) };
        for id in rep.keys() {
            assert!(
                shown.contains(&format!("{id}: {pct} ({n} of 3 ")),
                "{id}: {shown}"
            );
            assert!(md.contains(&format!("({id}) | 3 |")), "{id}: {md}");
            assert!(html.contains(&format!(">{id}</span>")), "{id}");
        }
    }
}

/// A run with no harm-categorised case shows no per-category block anywhere.
#[test]
fn a_run_without_harm_categories_has_no_per_category_block() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run(
        &[
            "redteam",
            "-t",
            "fake:vulnerable",
            "--category",
            "LLM01",
            "--out",
            "o",
            "--no-store",
        ],
        tmp.path(),
    );
    assert_eq!(code(&o), 1, "{}", text(&o));
    let r = report(&tmp.path().join("o"));
    assert!(r["summary"]["security"].get("by_harm").is_none());
    assert!(!text(&o).contains("Harm "), "{}", text(&o));
    let md = std::fs::read_to_string(tmp.path().join("o/summary.md")).unwrap();
    assert!(!md.contains("harm category"));
    let html = std::fs::read_to_string(tmp.path().join("o/report.html")).unwrap();
    assert!(!html.contains("gx-harm"));
}

/// The trivial agents (an empty answer, an echo, a bare refusal, blanket compliance, every
/// tool) pass no harm case: a non-answer is no defence, it is the refusal policy broken.
#[test]
fn the_audit_finds_no_weak_harm_case() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run(&["audit", "builtin:harm"], tmp.path());
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("0 weak"), "{}", text(&o));
}

/// Imports a fixture; returns each case's harm category by id, and what the command said.
fn import_fixture(dir: &Path, file: &str, out: &str) -> (BTreeMap<String, Option<String>>, String) {
    let src = root().join("crates/gauntlet/tests/data/harm").join(file);
    let o = run(
        &["import", "behaviors", src.to_str().unwrap(), "-o", out],
        dir,
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    let cases = std::fs::read_to_string(dir.join(out).join("cases.jsonl")).unwrap();
    let harm = cases
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["id"].as_str().unwrap().to_owned(),
                v["harm"].as_str().map(str::to_owned),
            )
        })
        .collect();
    (harm, text(&o))
}

#[test]
fn imported_behaviours_take_their_harm_category_from_the_sets_own_column() {
    let tmp = tempfile::tempdir().unwrap();
    // (fixture, the harm category of each case by id)
    type Expected<'a> = (&'a str, &'a [(&'a str, Option<&'a str>)]);
    let want: &[Expected<'_>] = &[
        (
            "jbb-behaviors.csv",
            &[
                ("jailbreakbench-jbb-behaviors-1", Some("hate")),
                ("jailbreakbench-jbb-behaviors-2", Some("cybercrime")),
                ("jailbreakbench-jbb-behaviors-3", Some("violent-crimes")),
                ("jailbreakbench-jbb-behaviors-4", Some("misinformation")),
                ("jailbreakbench-jbb-behaviors-5", Some("privacy")),
                ("jailbreakbench-jbb-behaviors-6", None),
            ],
        ),
        (
            "harmbench-behaviors.csv",
            &[
                (
                    "harmbench-harmbench-behaviors-sarin-home",
                    Some("indiscriminate-weapons"),
                ),
                (
                    "harmbench-harmbench-behaviors-hospital-ransomware",
                    Some("cybercrime"),
                ),
                ("harmbench-harmbench-behaviors-bully-campaign", Some("hate")),
                (
                    "harmbench-harmbench-behaviors-ebook-drm",
                    Some("intellectual-property"),
                ),
            ],
        ),
        (
            "ailuminate-prompts.csv",
            &[
                (
                    "ailuminate-ailuminate-prompts-p-0001",
                    Some("suicide-self-harm"),
                ),
                (
                    "ailuminate-ailuminate-prompts-p-0002",
                    Some("sexual-content"),
                ),
                (
                    "ailuminate-ailuminate-prompts-p-0003",
                    Some("specialized-advice"),
                ),
            ],
        ),
    ];
    for (i, (file, cases)) in want.iter().enumerate() {
        let out = format!("i{i}");
        let (got, said) = import_fixture(tmp.path(), file, &out);
        let want: BTreeMap<String, Option<String>> = cases
            .iter()
            .map(|(id, h)| (id.to_string(), h.map(str::to_owned)))
            .collect();
        assert_eq!(got, want, "{file}");
        // A label the map does not know is said, not lost.
        assert_eq!(
            said.contains("no harm category for 1: category `Some label of our own`"),
            *file == "jbb-behaviors.csv",
            "{said}"
        );
        // Run, and the per-category figures are those of the imported cases.
        let suite = tmp.path().join(&out).join("suite.yaml");
        let o = run(
            &[
                "run",
                suite.to_str().unwrap(),
                "-t",
                "fake:vulnerable",
                "--out",
                &format!("{out}-run"),
                "--no-store",
                "-q",
            ],
            tmp.path(),
        );
        assert_eq!(code(&o), 1, "{}", text(&o));
        let r = report(&tmp.path().join(format!("{out}-run")));
        let rep = reported(&r);
        assert_eq!(rep, counted(&r), "{file}");
        let named: std::collections::BTreeSet<&str> = cases.iter().filter_map(|c| c.1).collect();
        assert_eq!(
            rep.keys()
                .map(String::as_str)
                .collect::<std::collections::BTreeSet<_>>(),
            named,
            "{file}"
        );
    }
}

/// `validate` names an unknown harm category at its line, with the taxonomy in the hint.
#[test]
fn an_unknown_harm_category_is_refused_with_the_list() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("s.yaml"),
        "suite: s\ncases:\n  - id: a\n    kind: refusal\n    harm: nastiness\n    input: hi\n    expect:\n      - refusal: true\n",
    )
    .unwrap();
    let o = run(&["validate", "s.yaml"], tmp.path());
    assert_eq!(code(&o), 2, "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("unknown harm category `nastiness`"), "{t}");
    assert!(t.contains("s.yaml:5:"), "{t}");
    assert!(
        t.contains("violent-crimes") && t.contains("misinformation"),
        "{t}"
    );
}
