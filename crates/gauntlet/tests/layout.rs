//! The binary's layout: a command module (`*cmd.rs`) holds one command (family) and calls
//! library crates and the binary's shared modules (`cli`, `setup`, `error`, `out`,
//! `printer`); it never names another command module. When two commands need the same
//! work, it belongs in a library (the run API, `gauntlet-engine`), not in one of them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The command modules: `src/*cmd.rs`, by module name.
fn command_modules() -> BTreeSet<String> {
    std::fs::read_dir(src())
        .expect("src/")
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".rs")
                .filter(|m| m.ends_with("cmd"))
                .map(str::to_owned)
        })
        .collect()
}

/// The identifier that starts `text`.
fn ident(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// Every (module, item) a source names through `crate::MODULE::ITEM`, `crate::MODULE` or
/// a grouped `use crate::{...}`; the item is empty when none follows. In a module at the top
/// of `src/`, `super::` is the crate root too, so it is read the same way.
fn named(source: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let roots = source
        .match_indices("crate::")
        .chain(source.match_indices("super::"));
    for (at, root) in roots {
        if source[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            continue;
        }
        let rest = &source[at + root.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `use crate::{a, b::c, d::{e, f}}`: every path's first segment.
            let mut depth = 1;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                })
                .map_or(group.len(), |(i, _)| i);
            let body = &group[..end];
            let mut level = 0;
            let mut start = true;
            for (i, c) in body.char_indices() {
                match c {
                    '{' => level += 1,
                    '}' => level -= 1,
                    ',' if level == 0 => start = true,
                    c if start && level == 0 && !c.is_whitespace() => {
                        start = false;
                        let module = ident(&body[i..]);
                        let after = &body[i + module.len()..];
                        let item = after.strip_prefix("::").map(ident).unwrap_or_default();
                        out.push((module.to_owned(), item.to_owned()));
                    }
                    _ => {}
                }
            }
            continue;
        }
        let module = ident(rest);
        let after = &rest[module.len()..];
        let item = after.strip_prefix("::").map(ident).unwrap_or_default();
        out.push((module.to_owned(), item.to_owned()));
    }
    out
}

#[test]
fn no_command_module_names_another() {
    let modules = command_modules();
    assert!(modules.contains("runcmd"), "found: {modules:?}");
    let mut found = Vec::new();
    for m in &modules {
        let text = std::fs::read_to_string(src().join(format!("{m}.rs"))).expect("read");
        for (module, item) in named(&text) {
            if &module == m || !modules.contains(&module) {
                continue;
            }
            found.push(format!("{m}.rs names crate::{module}::{item}"));
        }
    }
    assert!(
        found.is_empty(),
        "command modules must not import each other; move the shared work into a library:\n{}",
        found.join("\n")
    );
}

/// The shared modules (`setup`, `out`, ...) name no command module either: a re-export there
/// (`pub use crate::runcmd::execute`) would be a command module importing another by a
/// detour. Only `main.rs`, which dispatches to them, names them.
#[test]
fn no_shared_module_names_a_command_module() {
    let modules = command_modules();
    let mut found = Vec::new();
    for entry in std::fs::read_dir(src())
        .expect("src/")
        .filter_map(Result::ok)
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(m) = name.strip_suffix(".rs") else {
            continue;
        };
        if m == "main" || modules.contains(m) {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).expect("read");
        for (module, item) in named(&text) {
            if modules.contains(&module) {
                found.push(format!("{m}.rs names crate::{module}::{item}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "shared modules must not name command modules:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_sees_plain_and_grouped_imports() {
    let text = "use crate::setup::{load_all};\nuse crate::{cli::X, runcmd::{a, b}};\nlet x = crate::flakycmd::go();\nfn s() { let _ = super::stabilitycmd::run; }\nuse super::{metamorphiccmd::m};\nlet y = my_crate::gradecmd::g();";
    let got = named(text);
    assert!(got.contains(&("setup".into(), "".into())));
    assert!(got.contains(&("runcmd".into(), "".into())));
    assert!(got.contains(&("flakycmd".into(), "go".into())));
    assert!(got.contains(&("cli".into(), "X".into())));
    assert!(got.contains(&("stabilitycmd".into(), "run".into())));
    assert!(got.contains(&("metamorphiccmd".into(), "m".into())));
    // `my_crate::` is another path, not the crate root.
    assert!(!got.iter().any(|(m, _)| m == "gradecmd"), "{got:?}");
}
