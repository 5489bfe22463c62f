//! Rust crates, mapped statically (nothing is compiled): the module tree from `mod NAME;`
//! declarations, edges from `crate::`, `super::`, `self::` paths (and `use` of a child
//! module), and each test's entry: an integration test (`tests/*.rs`) reaches what its
//! `CRATE::...` paths name; a source file with `#[test]` is a test of itself.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use regex::Regex;

use super::{ImpactMap, Link, Method, Skipped, files, reach};

const LIMITS: &[&str] = &[
    "rust: a line-based scan of `mod`, `use` and `crate::`/`super::`/`self::` paths; macros, `#[path]` attributes, `cfg` conditions and glob re-exports are not followed; an item named through a re-export counts against the file that re-exports it",
    "rust: coverage (llvm-cov) is not used; every entry is found by imports",
];

/// The crate's module tree: module path ("" for the root, "a::b") -> file.
struct Tree {
    modules: BTreeMap<String, String>,
    files: BTreeMap<String, String>,
}

fn crate_name(repo: &Path) -> Option<String> {
    let text = std::fs::read_to_string(repo.join("Cargo.toml")).ok()?;
    let mut in_pkg = false;
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            in_pkg = l == "[package]";
        } else if in_pkg && let Some(v) = l.strip_prefix("name") {
            let v = v.trim_start().strip_prefix('=')?.trim().trim_matches('"');
            return Some(v.replace('-', "_"));
        }
    }
    None
}

fn tree(repo: &Path, skipped: &mut Vec<Skipped>) -> Tree {
    let mut t = Tree {
        modules: BTreeMap::new(),
        files: BTreeMap::new(),
    };
    let decl = Regex::new(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_]\w*)\s*;").expect("regex");
    let mut stack: Vec<(String, String)> = ["src/lib.rs", "src/main.rs"]
        .iter()
        .filter(|f| repo.join(f).is_file())
        .map(|f| (String::new(), f.to_string()))
        .collect();
    while let Some((module, file)) = stack.pop() {
        if t.files.contains_key(&file) {
            continue;
        }
        t.modules.insert(module.clone(), file.clone());
        t.files.insert(file.clone(), module.clone());
        let Ok(text) = std::fs::read_to_string(repo.join(&file)) else {
            skipped.push(Skipped {
                path: file,
                reason: "unreadable (not UTF-8, or gone)".into(),
            });
            continue;
        };
        let (dir, stem) = file.rsplit_once('/').unwrap_or(("", &file));
        let stem = stem.trim_end_matches(".rs");
        let child_dir = if matches!(stem, "lib" | "main" | "mod") {
            dir.to_owned()
        } else {
            format!("{dir}/{stem}")
        };
        for line in text.lines() {
            let Some(c) = decl.captures(line) else {
                continue;
            };
            let name = &c[1];
            let path = if module.is_empty() {
                name.to_owned()
            } else {
                format!("{module}::{name}")
            };
            let a = format!("{child_dir}/{name}.rs");
            let b = format!("{child_dir}/{name}/mod.rs");
            if repo.join(&a).is_file() {
                stack.push((path, a));
            } else if repo.join(&b).is_file() {
                stack.push((path, b));
            } else {
                skipped.push(Skipped {
                    path: file.clone(),
                    reason: format!("`mod {name};` has no file ({a} or {b})"),
                });
            }
        }
    }
    t
}

/// The deepest module named by `segments` from `base`, as a file.
fn resolve(t: &Tree, base: &str, segments: &[&str]) -> Option<String> {
    let mut cur = base.to_owned();
    for s in segments {
        let next = if cur.is_empty() {
            (*s).to_owned()
        } else {
            format!("{cur}::{s}")
        };
        if t.modules.contains_key(&next) {
            cur = next;
        } else {
            break;
        }
    }
    t.modules.get(&cur).cloned()
}

fn parent(module: &str) -> String {
    module
        .rsplit_once("::")
        .map(|(p, _)| p.to_owned())
        .unwrap_or_default()
}

/// The files `text` refers to: `ROOTWORD::a::b` and `ROOTWORD::{a, b::c}` for each root word
/// (`crate`, `super`, `self`, or the crate's name in a test), and `use child::...`.
fn refs(t: &Tree, text: &str, module: Option<&str>, krate: &str) -> BTreeSet<String> {
    let path = Regex::new(
        r"\b(crate|super|self|[A-Za-z_]\w*)::(\{[^}]*\}|[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)",
    )
    .expect("regex");
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        for c in path.captures_iter(code) {
            let word = &c[1];
            let base = match (word, module) {
                ("crate", Some(_)) => String::new(),
                ("super", Some(m)) => parent(m),
                ("self", Some(m)) => m.to_owned(),
                (w, None) if w == krate => String::new(),
                (w, Some(m)) => {
                    // `use child::x` (or `child::f()`) for a child module of this one.
                    let child = if m.is_empty() {
                        w.to_owned()
                    } else {
                        format!("{m}::{w}")
                    };
                    if !t.modules.contains_key(&child) {
                        continue;
                    }
                    child
                }
                _ => continue,
            };
            let rest = &c[2];
            let groups: Vec<String> = match rest.strip_prefix('{') {
                Some(inner) => inner
                    .trim_end_matches('}')
                    .split(',')
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
                    .collect(),
                None => vec![rest.to_owned()],
            };
            for g in groups {
                let segs: Vec<&str> = g.split("::").map(str::trim).collect();
                if let Some(f) = resolve(t, &base, &segs) {
                    out.insert(f);
                }
            }
        }
    }
    out
}

/// The crate's modules (module path, "" for the root -> file), for naming its unit tests.
pub fn modules(repo: &Path) -> BTreeMap<String, String> {
    tree(repo, &mut Vec::new()).modules
}

pub fn map(repo: &Path) -> ImpactMap {
    let mut m = ImpactMap {
        lang: "rust",
        tests: BTreeMap::new(),
        sources: BTreeMap::new(),
        skipped: Vec::new(),
        limits: LIMITS.to_vec(),
    };
    let Some(krate) = crate_name(repo) else {
        m.skipped.push(Skipped {
            path: "Cargo.toml".into(),
            reason: "no [package] name found; nothing mapped".into(),
        });
        return m;
    };
    let t = tree(repo, &mut m.skipped);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut unit_tests = Vec::new();
    for (file, module) in &t.files {
        let Ok(text) = std::fs::read_to_string(repo.join(file)) else {
            continue;
        };
        graph.insert(file.clone(), refs(&t, &text, Some(module), &krate));
        if text.contains("#[test]") {
            unit_tests.push(file.clone());
        }
    }
    for f in files(repo, "rs") {
        if f.starts_with("src/") && !t.files.contains_key(&f) {
            m.skipped.push(Skipped {
                path: f,
                reason: "not reached from src/lib.rs or src/main.rs by a `mod` declaration".into(),
            });
        }
    }
    let mut entries: Vec<(String, BTreeSet<String>)> = Vec::new();
    for tf in files(repo, "rs")
        .into_iter()
        .filter(|f| f.starts_with("tests/"))
    {
        match std::fs::read_to_string(repo.join(&tf)) {
            Ok(text) => entries.push((tf.clone(), refs(&t, &text, None, &krate))),
            Err(e) => m.skipped.push(Skipped {
                path: tf,
                reason: format!("unreadable: {e}"),
            }),
        }
    }
    for u in unit_tests {
        entries.push((u.clone(), BTreeSet::from([u])));
    }
    for (test, starts) in entries {
        m.tests.insert(test.clone(), test.clone());
        let mut covered = BTreeSet::new();
        for s in &starts {
            covered.extend(reach(&graph, s));
        }
        for f in covered {
            m.sources.entry(f).or_default().insert(Link {
                test: test.clone(),
                method: Method::Imports,
            });
        }
    }
    m
}
