//! `gauntlet impact map|affected` on the shipped examples: a Python repository mapped by
//! coverage and by imports, a Rust crate mapped by its module graph (nothing compiled), a
//! test file that cannot be imported reported as not analysed, and affected tests from
//! changed files and from `git diff`.

mod common;

use common::{code, examples, run, text};

/// Writes a file, making its folders.
fn write(dir: &std::path::Path, name: &str, body: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

fn map(repo: &std::path::Path, extra: &[&str]) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["impact", "map", "--repo", repo.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    let o = run(&args, dir.path());
    assert_eq!(code(&o), 0, "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn tests_of(m: &serde_json::Value, source: &str) -> Vec<(String, String)> {
    m["sources"][source]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|l| {
                    (
                        l["test"].as_str().unwrap().to_owned(),
                        l["method"].as_str().unwrap().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn owned(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn python_is_mapped_per_test_by_coverage() {
    let m = map(&examples().join("impact/python-repo"), &[]);
    assert_eq!(m["lang"], "python");
    assert_eq!(
        tests_of(&m, "calc/fmt.py"),
        owned(&[("tests/test_fmt.py::TestTotal::test_total", "coverage")])
    );
    assert_eq!(
        tests_of(&m, "calc/ops.py"),
        owned(&[
            ("tests/test_fmt.py::TestTotal::test_total", "coverage"),
            ("tests/test_ops.py::test_add", "coverage"),
            ("tests/test_ops.py::test_sub", "coverage"),
        ])
    );
    // Nothing calls it: no test covers it, and it is not made up.
    assert!(m["sources"].get("calc/unused.py").is_none(), "{m}");
    assert_eq!(m["skipped"].as_array().unwrap().len(), 0, "{m}");
}

#[test]
fn python_without_coverage_falls_back_to_imports() {
    let m = map(&examples().join("impact/python-repo"), &["--no-coverage"]);
    assert_eq!(
        tests_of(&m, "calc/ops.py"),
        owned(&[
            ("tests/test_fmt.py", "imports"),
            ("tests/test_ops.py", "imports")
        ])
    );
    assert_eq!(
        tests_of(&m, "calc/fmt.py"),
        owned(&[("tests/test_fmt.py", "imports")])
    );
    assert!(m["sources"].get("calc/unused.py").is_none(), "{m}");
}

#[test]
fn a_test_file_that_cannot_be_imported_is_reported_not_dropped() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "pkg/__init__.py", "");
    write(dir.path(), "pkg/core.py", "def f():\n    return 1\n");
    write(
        dir.path(),
        "tests/test_broken.py",
        "from pkg.core import f\n\ndef test_f(:\n    pass\n",
    );
    let m = map(dir.path(), &["--lang", "python"]);
    let skipped = m["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{m}");
    assert_eq!(skipped[0]["path"], "tests/test_broken.py");
    assert!(
        skipped[0]["reason"]
            .as_str()
            .unwrap()
            .contains("SyntaxError"),
        "{m}"
    );
    // The import graph still links it, marked as such.
    assert_eq!(
        tests_of(&m, "pkg/core.py"),
        owned(&[("tests/test_broken.py", "imports")])
    );
}

#[test]
fn rust_is_mapped_by_its_module_graph_without_compiling() {
    let m = map(&examples().join("impact/rust-crate"), &[]);
    assert_eq!(m["lang"], "rust");
    // `circle_area` uses `crate::util::square`: the transitive edge is followed.
    assert_eq!(
        tests_of(&m, "src/util.rs"),
        owned(&[("tests/circle.rs", "imports")])
    );
    assert_eq!(
        tests_of(&m, "src/shapes/circle.rs"),
        owned(&[("tests/circle.rs", "imports")])
    );
    // The unit tests in rect.rs are a test of their own file.
    assert_eq!(
        tests_of(&m, "src/shapes/rect.rs"),
        owned(&[
            ("src/shapes/rect.rs", "imports"),
            ("tests/rect.rs", "imports")
        ])
    );
    assert!(
        !tests_of(&m, "src/area.rs")
            .iter()
            .any(|(t, _)| t == "tests/rect.rs")
    );
}

#[test]
fn rust_files_outside_the_module_tree_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "Cargo.toml", "[package]\nname = \"k\"\n");
    write(dir.path(), "src/lib.rs", "pub mod a;\nmod gone;\n");
    write(dir.path(), "src/a.rs", "pub fn f() {}\n");
    write(dir.path(), "src/orphan.rs", "pub fn g() {}\n");
    write(dir.path(), "tests/t.rs", "#[test]\nfn t() { k::a::f(); }\n");
    let m = map(dir.path(), &[]);
    assert_eq!(
        tests_of(&m, "src/a.rs"),
        owned(&[("tests/t.rs", "imports")])
    );
    let reasons = m["skipped"].to_string();
    assert!(reasons.contains("`mod gone;` has no file"), "{m}");
    assert!(reasons.contains("src/orphan.rs"), "{m}");
}

#[test]
fn affected_lists_tests_and_says_what_no_test_covers() {
    let repo = examples().join("impact/python-repo");
    let dir = tempfile::tempdir().unwrap();
    let o = run(
        &[
            "impact",
            "affected",
            "--repo",
            repo.to_str().unwrap(),
            "--changed",
            "calc/fmt.py",
            "calc/unused.py",
        ],
        dir.path(),
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("tests/test_fmt.py::TestTotal::test_total"),
        "{out}"
    );
    assert!(!out.contains("test_ops.py"), "{out}");
    assert!(out.contains("no test covers calc/unused.py"), "{out}");
}

#[test]
fn affected_from_git_diff() {
    let dir = tempfile::tempdir().unwrap();
    let src = examples().join("impact/rust-crate");
    let repo = dir.path().join("repo");
    let cp = std::process::Command::new("cp")
        .args(["-r", src.to_str().unwrap(), repo.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(cp.success());
    let git = |args: &[&str]| {
        let s = std::process::Command::new("git")
            .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
            .args(args)
            .current_dir(&repo)
            .output()
            .unwrap();
        assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "base"]);
    std::fs::write(
        repo.join("src/util.rs"),
        "pub fn square(x: f64) -> f64 { x * x * 1.0 }\n",
    )
    .unwrap();
    let o = run(
        &[
            "impact",
            "affected",
            "--repo",
            repo.to_str().unwrap(),
            "--diff",
            "HEAD",
            "--json",
        ],
        dir.path(),
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["changed"], serde_json::json!(["src/util.rs"]));
    let tests: Vec<&String> = v["tests"].as_object().unwrap().keys().collect();
    assert_eq!(tests, vec!["tests/circle.rs"]);
}
