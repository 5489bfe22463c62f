//! `junit.xml` is valid against both schemas CI systems read: the Jenkins xUnit plugin's
//! `junit-10.xsd` and Apache Ant's `JUnit.xsd` (vendored in `tests/data/junit`, with their
//! sources and licences), for runs with passes, failures across OWASP categories, errors and
//! skips. Validation is Python's `xmlschema`, in the venv the SDK test uses (installed from
//! the wheelhouse, see `common`); without python3 or pip the test is skipped with the reason,
//! except in CI, where it fails.

use std::path::{Path, PathBuf};

mod common;

use common::{bin, py_venv_or_skip, text, write};

fn schemas() -> [PathBuf; 2] {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/junit");
    [dir.join("junit-10.xsd"), dir.join("JUnit.xsd")]
}

/// Validates `xml` against both schemas; the error names the schema and the first problem.
fn validate(python: &Path, xml: &Path) {
    for xsd in schemas() {
        let o = std::process::Command::new(python)
            .args([
                "-c",
                "import sys, xmlschema; xmlschema.XMLSchema(sys.argv[1]).validate(sys.argv[2])",
            ])
            .arg(&xsd)
            .arg(xml)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{} is not valid against {}:\n{}\n{}",
            xml.display(),
            xsd.display(),
            text(&o),
            std::fs::read_to_string(xml).unwrap()
        );
    }
}

fn run(dir: &Path, args: &[&str]) -> PathBuf {
    let out = dir.join(format!(
        "out-{}",
        args.join("-").replace([':', '/', '.'], "_")
    ));
    let o = bin()
        .args(args)
        .args(["--no-store", "-o"])
        .arg(&out)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        matches!(o.status.code(), Some(0..=4)),
        "{args:?}: {}",
        text(&o)
    );
    out.join("junit.xml")
}

#[test]
fn junit_xml_is_valid_against_the_jenkins_and_ant_schemas() {
    let Some(python) = py_venv_or_skip() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    // Failures in every OWASP category of the corpus, hard and scored.
    let red = run(tmp.path(), &["redteam", "--target", "fake:vulnerable"]);
    let xml = std::fs::read_to_string(&red).unwrap();
    assert!(
        xml.contains("<failure type=\"hard_policy_failure\""),
        "{xml}"
    );
    assert!(
        xml.contains("classname=\"gauntlet.") && xml.contains(".LLM01\""),
        "{xml}"
    );
    validate(&python, &red);
    // All passing.
    validate(
        &python,
        &run(tmp.path(), &["redteam", "--target", "fake:safe"]),
    );
    // Errors (nothing listens on the port) next to a pass, with characters to escape.
    write(
        tmp.path(),
        "s.yaml",
        "suite: mixed <&>\ncases:\n  - id: c1\n    input: \"hi <b> & \\\"q\\\"\"\n    expect: [{contains: hello}]\n",
    );
    let err = run(
        tmp.path(),
        &[
            "run",
            "s.yaml",
            "--target",
            "openai:m",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ],
    );
    assert!(std::fs::read_to_string(&err).unwrap().contains("<error "));
    validate(&python, &err);
}
