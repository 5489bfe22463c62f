//! The shell around a run: colour on request (`--color`, `NO_COLOR`, `FORCE_COLOR`),
//! completion scripts, and the published JSON Schemas kept equal to what `gauntlet schema`
//! prints.

use std::path::Path;
use std::process::{Command, Output};

fn gauntlet(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gauntlet"));
    c.args(args).current_dir(dir);
    // The test's own environment must not decide the colour.
    for v in ["NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE"] {
        c.env_remove(v);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run gauntlet")
}

fn escapes(o: &Output) -> usize {
    o.stdout
        .iter()
        .chain(&o.stderr)
        .filter(|&&b| b == 0x1b)
        .count()
}

#[test]
fn colour_follows_the_flag_then_no_color_then_force_color() {
    let tmp = tempfile::tempdir().unwrap();
    let o = gauntlet(&["init", "st"], tmp.path(), &[]);
    assert_eq!(o.status.code(), Some(0));
    let dir = tmp.path().join("st");
    let run = |extra: &[&str], env: &[(&str, &str)]| {
        let mut args = extra.to_vec();
        args.extend([
            "run",
            "suite.yaml",
            "--target",
            "fake:safe",
            "--no-store",
            "--no-reports",
        ]);
        escapes(&gauntlet(&args, &dir, env))
    };
    // Output goes to a pipe here: no colour unless asked.
    assert_eq!(run(&[], &[]), 0);
    assert!(run(&["--color", "always"], &[]) > 0);
    assert!(run(&[], &[("FORCE_COLOR", "1")]) > 0);
    assert_eq!(run(&[], &[("FORCE_COLOR", "0")]), 0);
    assert_eq!(run(&[], &[("NO_COLOR", "1"), ("FORCE_COLOR", "1")]), 0);
    assert_eq!(run(&["--color", "never"], &[("FORCE_COLOR", "1")]), 0);
    assert!(run(&["--color", "always"], &[("NO_COLOR", "1")]) > 0);
}

#[test]
fn completion_scripts_name_the_commands_for_each_shell() {
    let tmp = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = gauntlet(&["completions", shell], tmp.path(), &[]);
        assert_eq!(o.status.code(), Some(0), "{shell}");
        let text = String::from_utf8(o.stdout).unwrap();
        // (fish names long flags without their dashes: `-l color`.)
        for word in ["redteam", "validate", "completions", "color"] {
            assert!(text.contains(word), "{shell} completion lacks {word}");
        }
    }
    let o = gauntlet(&["completions", "tcsh"], tmp.path(), &[]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn the_published_schemas_are_what_gauntlet_schema_prints() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for (flag, file) in [
        (None, "suite.schema.json"),
        (Some("--report"), "report.schema.json"),
        (Some("--config"), "config.schema.json"),
        (Some("--trace"), "trace.schema.json"),
    ] {
        let mut args = vec!["schema"];
        args.extend(flag);
        let o = gauntlet(&args, &root, &[]);
        assert_eq!(o.status.code(), Some(0));
        let printed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(
            printed["$id"].as_str(),
            Some(
                format!(
                    "https://raw.githubusercontent.com/gauntlet-dev/gauntlet/main/schema/{file}"
                )
                .as_str()
            )
        );
        let committed: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(root.join("schema").join(file)).unwrap())
                .unwrap();
        assert!(
            printed == committed,
            "schema/{file} is stale: run `gauntlet schema {}> schema/{file}`",
            flag.map(|f| format!("{f} ")).unwrap_or_default()
        );
    }
    // The config schema describes gauntlet.yaml: named targets.
    let o = gauntlet(&["schema", "--config"], &root, &[]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["properties"]["targets"].is_object(), "{v}");
}
