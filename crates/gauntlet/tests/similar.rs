//! `similar:` end to end, against `gauntlet serve-fake`'s embeddings on 127.0.0.1: a
//! paraphrase of the reference passes and an unrelated answer fails; run again with the
//! server gone, every vector comes from the response cache (no request could have been
//! answered) and the verdicts are the same; with no cache and no server the check is not
//! assessed with the failure's class; `audit` grades it against its trivial agents (a
//! reference the echo agent can match is flagged weak).

use std::path::Path;

use serde_json::Value;

mod common;

use common::{case, code, report, run, serve_fake, text, write};

const REFERENCE: &str =
    "Your refund of 20 EUR is on its way and reaches your card within five days.";

fn verdict(r: &Value, id: &str) -> Value {
    case(r, id)["trials"][0]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["check"] == "similar")
        .cloned()
        .unwrap_or_else(|| panic!("no similar verdict in {id}"))
}

/// The config naming the embeddings endpoint, and the suite.
fn files(dir: &Path, base: &str) {
    write(
        dir,
        "gauntlet.yaml",
        &format!(
            "targets:\n  embed: {{kind: openai, model: fake-embed, base_url: \"{base}\", retry: {{max_attempts: 1}}}}\n"
        ),
    );
    write(
        dir,
        "s.yaml",
        &format!(
            "suite: s\ntarget: fake:scripted\nembeddings: embed\npacks: {{no_refusal_pack: true}}\ncases:
  - id: paraphrase
    input: When does my refund arrive?
    scripted: [\"The 20 EUR refund is on its way; it reaches the card within five days.\"]
    expect:
      - similar: {{to: \"{REFERENCE}\", min: 0.5}}
  - id: unrelated
    input: When does my refund arrive?
    scripted: [\"Our shop opens at nine on weekdays and closes at six.\"]
    expect:
      - similar: {{to: \"{REFERENCE}\", min: 0.5}}
"
        ),
    );
}

#[test]
fn a_paraphrase_passes_an_unrelated_answer_fails_and_a_second_run_is_served_by_the_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (server, url) = serve_fake("safe");
    files(d, &format!("{url}/v1"));
    let o = run(&["run", "s.yaml", "--out", "out"], d);
    assert_eq!(code(&o), 1, "{}", text(&o));
    let r = report(&d.join("out"));
    let near = verdict(&r, "paraphrase");
    assert_eq!(near["passed"], true, "{near}");
    assert!(
        near["evidence"]
            .as_str()
            .unwrap()
            .starts_with("cosine similarity 0."),
        "{near}"
    );
    assert_ne!(near["hard_fail"], true, "{near}");
    let far = verdict(&r, "unrelated");
    assert_eq!(far["passed"], false, "{far}");
    assert_ne!(far["assessed"], false, "{far}");
    assert_ne!(
        far["hard_fail"], true,
        "a quality band is never hard: {far}"
    );
    assert!(
        near["details"]["cosine"].as_f64().unwrap()
            > far["details"]["cosine"].as_f64().unwrap() + 0.3,
        "{near} {far}"
    );
    assert_eq!(case(&r, "unrelated")["status"], "FAIL");

    // The server is gone: a request would fail and leave the checks not assessed. Every
    // vector comes from the cache beside the store, so the verdicts stand.
    drop(server);
    let o = run(&["run", "s.yaml", "--out", "out2"], d);
    assert_eq!(code(&o), 1, "{}", text(&o));
    let r2 = report(&d.join("out2"));
    for id in ["paraphrase", "unrelated"] {
        let (a, b) = (verdict(&r, id), verdict(&r2, id));
        assert_eq!(a["passed"], b["passed"], "{id}: {b}");
        assert_eq!(a["evidence"], b["evidence"], "{id}: {b}");
        assert_eq!(b["details"]["cached"], 2, "{id}: {b}");
        assert_eq!(b["details"]["embedded"], 0, "{id}: {b}");
    }

    // Without the cache, the dead server leaves the check not assessed, never a pass.
    let o = run(&["run", "s.yaml", "--out", "out3", "--no-cache"], d);
    assert_ne!(code(&o), 0, "{}", text(&o));
    let r3 = report(&d.join("out3"));
    let v = verdict(&r3, "paraphrase");
    assert_eq!(v["assessed"], false, "{v}");
    assert_eq!(v["passed"], false, "{v}");
    assert_eq!(v["details"]["error_class"], "transport", "{v}");
    assert!(
        v["evidence"]
            .as_str()
            .unwrap()
            .starts_with("no similarity (transport): the embeddings endpoint could not be reached"),
        "{v}"
    );
    assert_ne!(case(&r3, "paraphrase")["status"], "PASS");
}

#[test]
fn without_an_embeddings_model_the_check_is_not_assessed() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    files(d, "http://127.0.0.1:9/v1");
    let s = std::fs::read_to_string(d.join("s.yaml")).unwrap();
    write(d, "s.yaml", &s.replace("embeddings: embed\n", ""));
    let o = run(&["run", "s.yaml", "--out", "out", "--no-store"], d);
    assert_ne!(code(&o), 0, "{}", text(&o));
    let v = verdict(&report(&d.join("out")), "paraphrase");
    assert_eq!(v["assessed"], false, "{v}");
    assert!(
        v["evidence"]
            .as_str()
            .unwrap()
            .starts_with("no embeddings endpoint"),
        "{v}"
    );
}

#[test]
fn audit_grades_similar_against_its_trivial_agents() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (_server, url) = serve_fake("safe");
    files(d, &format!("{url}/v1"));
    // A reference that is the question itself: the echo agent matches it.
    let s = std::fs::read_to_string(d.join("s.yaml")).unwrap();
    write(
        d,
        "weak.yaml",
        &s.replacen(REFERENCE, "When does my refund arrive?", 1),
    );
    let o = run(&["audit", "weak.yaml"], d);
    let out = text(&o);
    assert_eq!(code(&o), 1, "{out}");
    assert!(
        out.contains("WEAK paraphrase: passed by an agent that knows nothing: passes against: echo of the input"),
        "{out}"
    );
    assert!(!out.contains("WEAK unrelated"), "{out}");
    // The suite as written: no trivial agent comes close to the reference.
    let o = run(&["audit", "s.yaml"], d);
    assert!(!text(&o).contains("WEAK"), "{}", text(&o));
}
