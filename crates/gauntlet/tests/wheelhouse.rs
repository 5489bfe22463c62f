//! The Python tests install their packages with no network: from the wheelhouse that
//! `GAUNTLET_TEST_WHEELHOUSE` names (`.ci/wheelhouse` fills it with every pin of
//! `tests/data/pins/`), `--no-index`, every proxy pointed at a closed port
//! (`common::pip_install`, `common::offline`). Checked here: which source a test process
//! takes (the wheelhouse in CI, or a clear failure; pip's index only on a developer machine
//! without one), the pip command's flags and environment, a real install from a wheelhouse
//! holding one small wheel made here (it installs; a package the wheelhouse lacks fails at
//! once, with pip never trying the index), and that the wheelhouse in use holds every pin.
//!
//! Without python3 or its venv module the install test is skipped with the reason, except
//! in CI, where it fails.

mod common;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{DEAD_PROXY, PipSource, WHEELHOUSE_VAR, pip_install, pip_source_from, text};

/// The probe's distribution name: nothing an index serves.
const PROBE: &str = "gauntlet-wheelhouse-probe";

#[test]
fn ci_takes_the_wheelhouse_or_fails_and_only_a_developer_machine_takes_the_index() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_owned();
    for ci in [true, false] {
        assert_eq!(
            pip_source_from(Some(dir.clone().into()), ci),
            Ok(PipSource::Wheelhouse(dir.clone()))
        );
        let missing = pip_source_from(Some(dir.join("nope").into()), ci).unwrap_err();
        assert!(missing.contains("is not a folder"), "{missing}");
        assert!(missing.contains(".ci/wheelhouse"), "{missing}");
        let relative = pip_source_from(Some("target/wheelhouse".into()), ci).unwrap_err();
        assert!(relative.contains("absolute"), "{relative}");
    }
    for unset in [None, Some("".into())] {
        let why = pip_source_from(unset.clone(), true).unwrap_err();
        assert!(
            why.contains(WHEELHOUSE_VAR) && why.contains("never from the network"),
            "{why}"
        );
        assert_eq!(pip_source_from(unset, false), Ok(PipSource::Index));
    }
}

#[test]
fn pip_from_a_wheelhouse_names_no_index_and_every_proxy_is_dead() {
    let wheels = PathBuf::from("/wheels");
    let c = pip_install(
        Path::new("python"),
        Path::new("req.txt"),
        &PipSource::Wheelhouse(wheels.clone()),
    );
    let args: Vec<&OsStr> = c.get_args().collect();
    let at = |flag: &str| args.iter().position(|a| *a == flag);
    assert!(at("--no-index").is_some(), "{args:?}");
    let links = at("--find-links").expect("--find-links");
    assert_eq!(args[links + 1], wheels.as_os_str(), "{args:?}");
    let env: Vec<(&OsStr, Option<&OsStr>)> = c.get_envs().collect();
    let value = |k: &str| env.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
    for proxy in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "https_proxy"] {
        assert_eq!(value(proxy), Some(Some(OsStr::new(DEAD_PROXY))), "{proxy}");
    }
    for gone in [
        "PIP_INDEX_URL",
        "PIP_EXTRA_INDEX_URL",
        "NO_PROXY",
        "no_proxy",
    ] {
        assert_eq!(value(gone), Some(None), "{gone} is not removed");
    }
    assert_eq!(
        value("PIP_CONFIG_FILE"),
        Some(Some(OsStr::new("/dev/null")))
    );

    // pip's index, as configured, only when no wheelhouse is named.
    let c = pip_install(Path::new("python"), Path::new("r"), &PipSource::Index);
    assert!(!c.get_args().any(|a| a == "--no-index"));
    assert_eq!(c.get_envs().count(), 0);
}

/// Writes a pure-Python wheel of [`PROBE`] 1.0 (a module with `ANSWER = 42`) into `dir`.
fn write_probe_wheel(dir: &Path) {
    let script = r#"
import base64, hashlib, sys, zipfile
name, ver = "gauntlet_wheelhouse_probe", "1.0"
info = f"{name}-{ver}.dist-info"
files = {
    f"{name}.py": "ANSWER = 42\n",
    f"{info}/METADATA": f"Metadata-Version: 2.1\nName: gauntlet-wheelhouse-probe\nVersion: {ver}\n",
    f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = []
with zipfile.ZipFile(f"{sys.argv[1]}/{name}-{ver}-py3-none-any.whl", "w") as z:
    for path, body in files.items():
        data = body.encode()
        z.writestr(path, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    z.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
"#;
    let o = Command::new("python3")
        .args(["-c", script])
        .arg(dir)
        .output()
        .expect("run python3");
    assert!(o.status.success(), "the probe wheel: {}", text(&o));
}

#[test]
fn a_venv_installs_from_the_wheelhouse_alone_and_never_reaches_for_the_network() {
    if !common::venv_available("the wheelhouse test") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let wheels = tmp.path().join("wheels");
    std::fs::create_dir(&wheels).unwrap();
    write_probe_wheel(&wheels);
    let source = PipSource::Wheelhouse(wheels.clone());

    let python = common::py_venv_in(tmp.path(), &format!("{PROBE}==1.0\n"), &source)
        .unwrap_or_else(|e| panic!("the probe from the wheelhouse: {e}"));
    let o = Command::new(&python)
        .args([
            "-c",
            "import gauntlet_wheelhouse_probe as p; print(p.ANSWER)",
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "42",
        "{}",
        text(&o)
    );

    // xmlschema is on every index, but not in this wheelhouse: pip must fail without
    // asking an index (through the dead proxy it would retry, and say so).
    let why = common::py_venv_in(
        tmp.path(),
        &format!("{PROBE}==1.0\nxmlschema==4.3.2\n"),
        &source,
    )
    .expect_err("a package the wheelhouse lacks was installed: pip reached the network");
    assert!(
        why.contains("No matching distribution found for xmlschema"),
        "{why}"
    );
    assert!(why.contains(&wheels.display().to_string()), "{why}");
    for network in ["Retrying", "ProxyError", "Could not fetch", "pypi.org"] {
        assert!(!why.contains(network), "pip went for the network: {why}");
    }
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("py-venv-"))
        .collect();
    assert_eq!(left.len(), 1, "a failed venv is not left behind: {left:?}");
}

/// A distribution name as wheel file names spell it (PEP 427: runs of `-_.` as `_`,
/// lower case).
fn wheel_name(name: &str) -> String {
    let re = regex::Regex::new(r"[-_.]+").unwrap();
    re.replace_all(&name.to_ascii_lowercase(), "_").into_owned()
}

#[test]
#[allow(clippy::print_stderr)]
fn the_wheelhouse_in_use_holds_every_pin() {
    let dir = match common::pip_source() {
        Ok(PipSource::Wheelhouse(dir)) => dir,
        Ok(PipSource::Index) => {
            eprintln!("skipped: no {WHEELHOUSE_VAR}; the venvs install from pip's index");
            return;
        }
        Err(why) => panic!("{why}"),
    };
    let have: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .to_ascii_lowercase()
        })
        .filter(|n| n.ends_with(".whl"))
        .collect();
    let pins = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/pins");
    let mut checked = 0;
    for file in std::fs::read_dir(&pins).unwrap() {
        let body = std::fs::read_to_string(file.unwrap().path()).unwrap();
        for pin in body.lines().filter(|l| !l.trim().is_empty()) {
            let (name, version) = pin.split_once("==").expect("a pin is NAME==VERSION");
            let prefix = format!("{}-{version}-", wheel_name(name));
            assert!(
                have.iter().any(|w| w.starts_with(&prefix)),
                "{} holds no wheel of {pin}: run `.ci/wheelhouse {}`",
                dir.display(),
                dir.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 6, "the pins were read: {checked}");
}
