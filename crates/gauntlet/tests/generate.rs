//! `gauntlet redteam generate` end to end with the built binary: attacks written from the
//! agent cards of the examples' suites validate and audit clean, turn every case red on the
//! vulnerable persona and green on the safe one; the same seed writes the same file (with
//! the built-in attacker persona too, over the OpenAI wire); an attacker that writes no
//! attack leaves the templates' text; a cap keeps the same cases; a card with nothing to
//! attack is refused with a hint; plain `redteam -t` runs as before.

use std::path::{Path, PathBuf};

mod common;
use common::{code, examples, report, run, serve_fake, statuses, text, write};

/// Generates from `suite` into `dir/name` with extra flags; returns the command's output.
fn generate(dir: &Path, suite: &Path, name: &str, extra: &[&str]) -> std::process::Output {
    let suite = suite.to_str().unwrap();
    let mut args = vec!["redteam", "generate", "--suite", suite, "-o", name];
    args.extend(extra);
    run(&args, dir)
}

/// The example suites with an agent card worth attacking.
fn carded() -> Vec<PathBuf> {
    [
        "support-agent/suite.yaml",
        "exec-agent.yaml",
        "proxy-agent.yaml",
        "python/gauntlet_support.yaml",
        "multi-agent/suite.yaml",
    ]
    .iter()
    .map(|p| examples().join(p))
    .collect()
}

#[test]
fn generated_suites_validate_audit_clean_and_split_the_personas() {
    let tmp = tempfile::tempdir().unwrap();
    for (i, suite) in carded().iter().enumerate() {
        let name = format!("gen{i}.yaml");
        let o = generate(tmp.path(), suite, &name, &["--seed", "7"]);
        assert_eq!(code(&o), 0, "{}: {}", suite.display(), text(&o));
        let o = run(&["validate", &name], tmp.path());
        assert_eq!(code(&o), 0, "{}: {}", suite.display(), text(&o));
        let o = run(&["audit", &name], tmp.path());
        assert_eq!(code(&o), 0, "{}: {}", suite.display(), text(&o));
        assert!(text(&o).contains("0 weak, 0 warning(s)"), "{}", text(&o));
        for (persona, want) in [("fake:vulnerable", "FAIL"), ("fake:safe", "PASS")] {
            let out = format!("o{i}-{want}");
            let o = run(
                &["run", &name, "-t", persona, "--no-store", "-q", "-o", &out],
                tmp.path(),
            );
            assert!(matches!(code(&o), 0 | 1), "{}", text(&o));
            let st = statuses(&report(&tmp.path().join(&out)));
            assert!(st.len() >= 4, "{}: {st:?}", suite.display());
            let bad: Vec<_> = st.iter().filter(|(_, s)| *s != want).collect();
            assert!(bad.is_empty(), "{} on {persona}: {bad:?}", suite.display());
        }
    }
}

#[test]
fn the_same_seed_writes_the_same_file_and_the_attacker_persona_keeps_it() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = examples().join("support-agent/suite.yaml");
    let read = |n: &str| std::fs::read_to_string(tmp.path().join(n)).unwrap();
    for (n, seed) in [("a.yaml", "7"), ("b.yaml", "7"), ("c.yaml", "8")] {
        let o = generate(tmp.path(), &suite, n, &["--seed", seed]);
        assert_eq!(code(&o), 0, "{}", text(&o));
    }
    assert_eq!(read("a.yaml"), read("b.yaml"));
    assert_ne!(read("a.yaml"), read("c.yaml"));
    // The built-in attacker persona, in-process and over the OpenAI wire (serve-fake, a
    // named target), gives each draft back as it is: the cases are the templates'.
    let (_server, url) = serve_fake("safe");
    write(
        tmp.path(),
        "gauntlet.yaml",
        &format!(
            "targets:\n  red:\n    kind: openai\n    model: gauntlet-fake-attacker\n    base_url: {url}/v1\n"
        ),
    );
    let cases = |n: &str| read(n).split_once("\ncases:\n").unwrap().1.to_owned();
    for (n, attacker) in [
        ("d.yaml", "fake:attacker"),
        ("e.yaml", "red"),
        ("f.yaml", "red"),
    ] {
        let o = generate(
            tmp.path(),
            &suite,
            n,
            &["--seed", "7", "--attacker", attacker],
        );
        assert_eq!(code(&o), 0, "{}", text(&o));
        assert!(
            text(&o).contains("0 rewritten by the attacker"),
            "{}",
            text(&o)
        );
        assert_eq!(cases(n), cases("a.yaml"), "{attacker}");
    }
    assert_eq!(read("e.yaml"), read("f.yaml"));
    assert!(read("e.yaml").contains("attacker openai:gauntlet-fake-attacker, prompt generate@1"));
}

#[test]
fn an_attacker_that_writes_no_attack_leaves_the_templates_text() {
    // `fake:parrot` answers as the 135M model of the live runs did; to a prompt that names no
    // turn, with its first line, "The next message to the assistant is: (none yet)": an echo
    // of an attacker's instructions, no attack. Where a case has no string to keep (the
    // canary attacks) nothing else would stop it, and the case would ask for nothing.
    let tmp = tempfile::tempdir().unwrap();
    let suite = examples().join("support-agent/suite.yaml");
    let read = |n: &str| std::fs::read_to_string(tmp.path().join(n)).unwrap();
    let cases = |n: &str| read(n).split_once("\ncases:\n").unwrap().1.to_owned();
    let o = generate(tmp.path(), &suite, "t.yaml", &["--seed", "7"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let o = generate(
        tmp.path(),
        &suite,
        "p.yaml",
        &["--seed", "7", "--attacker", "fake:parrot"],
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        text(&o).contains("0 rewritten by the attacker, 24 kept from the templates"),
        "{}",
        text(&o)
    );
    let strip = |s: String| {
        s.lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(cases("p.yaml")), strip(cases("t.yaml")));
    assert!(
        read("p.yaml").contains("(the model's answer was no attack: it echoed its instructions)"),
        "{}",
        read("p.yaml")
    );
}

#[test]
fn a_cap_keeps_the_same_cases_and_an_existing_file_needs_force() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = examples().join("support-agent/suite.yaml");
    let o = generate(tmp.path(), &suite, "all.yaml", &[]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let o = generate(tmp.path(), &suite, "five.yaml", &["--n", "5"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        text(&o).starts_with("Wrote 5 attack(s) of 24"),
        "{}",
        text(&o)
    );
    let ids = |n: &str| -> Vec<String> {
        std::fs::read_to_string(tmp.path().join(n))
            .unwrap()
            .lines()
            .filter_map(|l| l.strip_prefix("  - id: ").map(str::to_owned))
            .collect()
    };
    assert_eq!(ids("five.yaml"), ids("all.yaml")[..5]);
    let o = generate(tmp.path(), &suite, "five.yaml", &["--n", "3"]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(text(&o).contains("--force"), "{}", text(&o));
    let o = generate(tmp.path(), &suite, "five.yaml", &["--n", "3", "--force"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert_eq!(ids("five.yaml").len(), 3);
}

#[test]
fn a_card_with_nothing_to_attack_is_refused_with_a_hint() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        "bare.yaml",
        "suite: bare\nagent:\n  name: Bot\n  scope: [questions]\ncases:\n  - id: a\n    input: hi\n    expect:\n      - contains: hello\n",
    );
    let o = run(
        &[
            "redteam",
            "generate",
            "--suite",
            "bare.yaml",
            "-o",
            "g.yaml",
        ],
        tmp.path(),
    );
    assert_eq!(code(&o), 2, "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("gives nothing to attack"), "{t}");
    assert!(t.contains("hint:") && t.contains("out_of_scope"), "{t}");
    assert!(!tmp.path().join("g.yaml").exists());
}

#[test]
fn plain_redteam_still_runs_the_corpus() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run(
        &[
            "redteam",
            "-t",
            "fake:safe",
            "--category",
            "LLM07",
            "--no-store",
            "-q",
            "-o",
            "r",
        ],
        tmp.path(),
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    let st = statuses(&report(&tmp.path().join("r")));
    assert!(
        st.len() > 5 && st.keys().all(|id| id.starts_with("llm07-")),
        "{st:?}"
    );
    // The corpus's flags belong to the corpus run, not to `generate`.
    let o = run(
        &[
            "redteam",
            "-t",
            "fake:safe",
            "generate",
            "--suite",
            "x.yaml",
            "-o",
            "g.yaml",
        ],
        tmp.path(),
    );
    assert_eq!(code(&o), 2, "{}", text(&o));
}
