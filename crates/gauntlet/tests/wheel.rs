//! The wheel (`pip install gauntlet-llm`): `python/build_wheel.py` packs the binary this test
//! build already made (no release build), and the wheel goes into a fresh virtual
//! environment with no network (`pip install --no-index --no-deps`, proxies pointed at a
//! closed port), puts `gauntlet` on the activated environment's PATH, and that gauntlet
//! prints its version and runs the red team: green against the safe persona, red against
//! the vulnerable one. The wheel is checked with code of its own (`tests/data/wheel_check.py`:
//! RECORD digests and sizes, tags, metadata), its platform tag against the glibc symbol
//! versions `objdump -T` lists, and the installed binary byte for byte. A Python package
//! folder beside the builder goes into the wheel with its entry points, and pip's uninstall
//! removes everything the RECORD lists. The tagger itself is checked on small executables
//! made byte by byte (`tests/data/wheel_tags.py`).
//!
//! Without python3 or its venv module the tests are skipped with the reason, except in CI,
//! where they fail.

mod common;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{code, text};

/// What needs `python3 -m venv`, for the skip or CI failure message.
const WHAT: &str = "the wheel tests";
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Runs python3 with these arguments.
fn python<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    Command::new("python3")
        .args(args)
        .output()
        .expect("run python3")
}

/// A fresh virtual environment at `dir`, with pip (from the interpreter's own copy).
fn make_venv(dir: &Path) {
    let made = python(&[OsStr::new("-m"), OsStr::new("venv"), dir.as_os_str()]);
    assert!(made.status.success(), "python3 -m venv: {}", text(&made));
}

/// Builds a wheel with `python/build_wheel.py`; returns its path.
fn build_wheel(binary: &Path, out: &Path, extra: &[&str]) -> PathBuf {
    let builder = root().join("python/build_wheel.py");
    let o = Command::new("python3")
        .arg(&builder)
        .arg("--binary")
        .arg(binary)
        .arg("--out")
        .arg(out)
        // Stored, not deflated: a debug binary is 200 MB, and CI has two cores.
        .arg("--store")
        .args(extra)
        .output()
        .expect("run the wheel builder");
    assert!(o.status.success(), "build_wheel.py: {}", text(&o));
    let path = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
    assert!(path.is_file(), "the builder named {}", path.display());
    path
}

/// The wheel as `tests/data/wheel_check.py` reads it.
fn check_wheel(wheel: &Path) -> Value {
    let o = python(&[data("wheel_check.py").as_os_str(), wheel.as_os_str()]);
    assert!(o.status.success(), "{}: {}", wheel.display(), text(&o));
    serde_json::from_slice(&o.stdout).expect("wheel_check.py prints JSON")
}

/// A shell with the venv activated, as a user types the commands, with the network shut off
/// for pip (`common::offline`: every proxy pointed at a closed port, no index).
fn in_venv(venv: &Path, cwd: &Path, script: &str) -> Output {
    common::offline(&mut Command::new("bash"))
        .arg("-c")
        .arg(format!(". '{}/bin/activate' && {script}", venv.display()))
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .output()
        .expect("run bash")
}

fn pip_install(venv: &Path, wheel: &Path) {
    let o = in_venv(
        venv,
        venv,
        &format!(
            "python -m pip install --no-index --no-deps --force-reinstall '{}'",
            wheel.display()
        ),
    );
    assert!(o.status.success(), "pip install: {}", text(&o));
}

/// The newest `GLIBC_2.N` minor `objdump -T` lists for a binary; `None` without objdump.
fn objdump_glibc_minor(binary: &Path) -> Option<u32> {
    let o = Command::new("objdump")
        .arg("-T")
        .arg(binary)
        .output()
        .ok()?;
    if !o.status.success() {
        return None;
    }
    let re = regex::Regex::new(r"GLIBC_2\.(\d+)").unwrap();
    re.captures_iter(&String::from_utf8_lossy(&o.stdout))
        .map(|c| c[1].parse::<u32>().unwrap())
        .max()
}

#[test]
fn the_platform_tagger_reads_what_a_binary_needs() {
    if !common::venv_available(WHAT) {
        return;
    }
    let o = python(&[
        data("wheel_tags.py").as_os_str(),
        root().join("python/build_wheel.py").as_os_str(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("tag checks passed"), "{}", text(&o));
}

#[test]
fn the_wheel_installs_offline_into_a_fresh_venv_and_runs_the_red_team() {
    if !common::venv_available(WHAT) {
        return;
    }
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_gauntlet"));
    let tmp = tempfile::tempdir().unwrap();
    let wheel = build_wheel(&binary, &tmp.path().join("dist"), &[]);
    let facts = check_wheel(&wheel);
    assert_eq!(facts["name"], "gauntlet-llm");
    assert_eq!(facts["version"], env!("CARGO_PKG_VERSION"));
    // The README is the PyPI page, its links pointed at the repository.
    assert!(facts["description_chars"].as_u64() > Some(1000), "{facts}");
    assert_eq!(facts["relative_links"], serde_json::json!([]), "{facts}");
    let tags: Vec<&str> = facts["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_platform_tag(&binary, &tags);

    let venv = tmp.path().join("venv");
    make_venv(&venv);
    pip_install(&venv, &wheel);
    let installed = venv.join("bin/gauntlet");
    assert!(
        std::fs::read(&installed).unwrap() == std::fs::read(&binary).unwrap(),
        "the installed gauntlet is not the binary that was packed"
    );

    // The newcomer's commands, in a folder of their own.
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let o = in_venv(&venv, &work, "command -v gauntlet && gauntlet --version");
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        out.lines().next().map(PathBuf::from),
        Some(installed.clone()),
        "`gauntlet` on PATH is the venv's: {out}"
    );
    assert!(
        out.contains(&format!("gauntlet {}", env!("CARGO_PKG_VERSION"))),
        "{out}"
    );
    let o = in_venv(&venv, &work, "gauntlet redteam");
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("PASS (exit 0)"), "{}", text(&o));
    let report = common::report(&work.join("gauntlet-out"));
    assert!(
        report["cases"].as_array().unwrap().len() >= 100,
        "the built-in red team ran"
    );
    let o = in_venv(
        &venv,
        &work,
        "gauntlet redteam --target fake:vulnerable --no-store -q",
    );
    assert_eq!(
        code(&o),
        1,
        "the gate rings from the wheel too: {}",
        text(&o)
    );
    assert!(text(&o).contains("FAIL (exit 1)"), "{}", text(&o));
}

/// The tag claims no older glibc than the binary needs, and no newer (an honest, not a
/// needlessly narrow, wheel); a static binary runs on musl systems too.
fn assert_platform_tag(binary: &Path, tags: &[&str]) {
    let arch = std::env::consts::ARCH;
    match objdump_glibc_minor(binary) {
        Some(minor) => {
            let want = format!("manylinux_2_{}_{arch}", minor.max(17));
            assert_eq!(tags[0], want, "objdump -T says GLIBC_2.{minor}: {tags:?}");
            assert!(!tags.iter().any(|t| t.starts_with("musllinux")), "{tags:?}");
        }
        None if cfg!(target_os = "linux") && Command::new("objdump").output().is_ok() => {
            // objdump runs but lists no glibc symbol: a static binary.
            assert!(
                tags.contains(&format!("musllinux_1_2_{arch}").as_str()),
                "{tags:?}"
            );
        }
        None => {}
    }
}

#[test]
fn a_python_package_beside_the_builder_goes_into_the_wheel_and_uninstalls_cleanly() {
    if !common::venv_available(WHAT) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // A stand-in for the SDK: a package, its entry points (a pytest plugin), and a
    // `gauntlet` that is a shell script, so the wheel is small.
    let py = tmp.path().join("python");
    std::fs::create_dir_all(py.join("gauntlet_probe/__pycache__")).unwrap();
    std::fs::write(py.join("gauntlet_probe/__init__.py"), "ANSWER = 42\n").unwrap();
    std::fs::write(py.join("gauntlet_probe/__pycache__/x.pyc"), "stale").unwrap();
    std::fs::write(py.join("not_a_package.py"), "").unwrap();
    std::fs::write(
        py.join("entry_points.txt"),
        "[pytest11]\ngauntlet_probe = gauntlet_probe\n",
    )
    .unwrap();
    let exe = tmp.path().join("gauntlet");
    std::fs::write(&exe, "#!/bin/sh\necho probe gauntlet\n").unwrap();
    let py_dir = py.to_str().unwrap();
    let wheel = build_wheel(
        &exe,
        &tmp.path().join("dist"),
        &["--platform", "any", "--python-dir", py_dir],
    );
    let facts = check_wheel(&wheel);
    let files: Vec<&str> = facts["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(files.contains(&"gauntlet_probe/__init__.py"), "{files:?}");
    assert!(
        !files.iter().any(|f| f.contains("__pycache__")),
        "{files:?}"
    );
    assert!(
        !files.iter().any(|f| f.contains("not_a_package")),
        "{files:?}"
    );

    let venv = tmp.path().join("venv");
    make_venv(&venv);
    pip_install(&venv, &wheel);
    let probe = "gauntlet && python -c 'import gauntlet_probe, importlib.metadata as m; \
                 print(gauntlet_probe.ANSWER, [e.name for e in m.distribution(\"gauntlet-llm\").entry_points])'";
    let o = in_venv(&venv, tmp.path(), probe);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("probe gauntlet") && text(&o).contains("42 ['gauntlet_probe']"),
        "{}",
        text(&o)
    );

    // pip removes what RECORD lists: the package and the binary are gone.
    let o = in_venv(&venv, tmp.path(), "python -m pip uninstall -y gauntlet-llm");
    assert!(o.status.success(), "{}", text(&o));
    assert!(!venv.join("bin/gauntlet").exists());
    let o = in_venv(&venv, tmp.path(), "python -c 'import gauntlet_probe'");
    assert!(!o.status.success(), "the package outlived its uninstall");
}
