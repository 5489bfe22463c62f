//! The core is layered, and so is every other crate: no file of a crate's `src/` may reach, through its `use` lines and `crate::`
//! paths, a file that reaches it back. This test reads every source file, finds each path
//! that names another file's module (`use crate::a::b`, `crate::a::b::C` in code or in a serde
//! attribute, `super::`, `$crate::` in a macro, a child module by its name) and fails on any
//! circle of files, naming the files and the arrows that close it.
//!
//! A path points at the deepest file module it names: `crate::expect::checks::X` is an arrow
//! to `expect/checks.rs`, `crate::expect::Oracle` one to `expect.rs` (even when `expect.rs`
//! only re-exports it), `crate::glob` one to `lib.rs`. Comments are skipped; a `mod` line
//! declares a child and is no arrow.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A token of Rust source, as coarse as this test needs.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    /// `::`
    Sep,
    Open,
    Close,
    Comma,
    Semi,
    Star,
    /// `(`, kept apart for `pub(in path)`, which names a module without using it.
    Paren,
    Other,
}

/// Tokens of `src`, without comments and string contents. A string that is a path
/// (`"crate::serde_true"`, as serde attributes write them) is read as that path.
fn tokens(src: &str) -> Vec<Tok> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if ch == '"' || ((ch == 'r' || ch == 'b') && raw_string_start(&c, i).is_some()) {
            let (text, end) = string_literal(&c, i);
            i = end;
            if is_path_text(&text) {
                out.extend(tokens(&text));
            } else {
                out.push(Tok::Other);
            }
        } else if ch == '\'' {
            i = char_or_lifetime(&c, i);
            out.push(Tok::Other);
        } else if ch == '$' || ch == '_' || ch.is_alphanumeric() {
            let start = i;
            i += 1;
            while i < c.len() && (c[i] == '_' || c[i].is_alphanumeric()) {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            // A macro's `$crate` is the crate; any other `$x` is a fragment.
            out.push(match word.as_str() {
                "$crate" => Tok::Ident("crate".into()),
                w if w.starts_with('$') => Tok::Other,
                w => Tok::Ident(w.into()),
            });
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push(Tok::Sep);
            i += 2;
        } else {
            out.push(match ch {
                '{' => Tok::Open,
                '}' => Tok::Close,
                ',' => Tok::Comma,
                ';' => Tok::Semi,
                '*' => Tok::Star,
                '(' => Tok::Paren,
                _ => Tok::Other,
            });
            i += 1;
        }
    }
    out
}

/// Where a raw or byte string's opening quote is, if one starts at `i` (`r"`, `r#"`, `b"`,
/// `br#"`); the `b` or `r` of an identifier is not one.
fn raw_string_start(c: &[char], i: usize) -> Option<usize> {
    if i > 0 && (c[i - 1] == '_' || c[i - 1].is_alphanumeric()) {
        return None;
    }
    let mut j = i;
    if c.get(j) == Some(&'b') {
        j += 1;
    }
    if c.get(j) == Some(&'r') {
        j += 1;
        while c.get(j) == Some(&'#') {
            j += 1;
        }
    }
    (j > i && c.get(j) == Some(&'"')).then_some(j)
}

/// The text of the string literal starting at `i`, and the index after it.
fn string_literal(c: &[char], i: usize) -> (String, usize) {
    let quote = raw_string_start(c, i).unwrap_or(i);
    let hashes = c[i..quote].iter().filter(|&&h| h == '#').count();
    let raw = c[i..quote].contains(&'r');
    let mut j = quote + 1;
    let mut text = String::new();
    while j < c.len() {
        if !raw && c[j] == '\\' {
            j += 2;
            continue;
        }
        if c[j] == '"'
            && c[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&h| h == '#')
                .count()
                == hashes
        {
            return (text, j + 1 + hashes);
        }
        text.push(c[j]);
        j += 1;
    }
    (text, j)
}

/// The index after a char literal (`'x'`, `'\n'`, `'\u{1F600}'`) or a lifetime (`'a`).
fn char_or_lifetime(c: &[char], i: usize) -> usize {
    if c.get(i + 1) == Some(&'\\') {
        let mut j = i + 2;
        while j < c.len() && c[j] != '\'' {
            j += 1;
        }
        return j + 1;
    }
    if c.get(i + 2) == Some(&'\'') {
        return i + 3;
    }
    let mut j = i + 1;
    while j < c.len() && (c[j] == '_' || c[j].is_alphanumeric()) {
        j += 1;
    }
    j
}

/// Whether a string literal is a path into the crate (`"crate::judges::X::is_empty"`).
fn is_path_text(s: &str) -> bool {
    (s.starts_with("crate::") || s.starts_with("super::") || s.starts_with("self::"))
        && s.chars()
            .all(|c| c == ':' || c == '_' || c.is_alphanumeric())
}

/// The source files of `src/`, by module path (`[]` for `lib.rs`, `["expect", "checks"]` for
/// `expect/checks.rs`).
fn modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut found = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).expect("under src");
            let mut parts: Vec<String> = rel
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts == ["lib"] || parts == ["main"] || parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            found.insert(parts, path);
        }
    }
    found
}

/// The file a module path lands in: the deepest file module it names.
fn file_of(path: &[String], files: &BTreeMap<Vec<String>, PathBuf>) -> Option<Vec<String>> {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| files.contains_key(p))
}

/// Reads the paths of one file and reports the module path each one names.
struct Reader<'a> {
    toks: Vec<Tok>,
    at: usize,
    /// The module the file is, then the inline modules (`mod tests { .. }`) it is inside,
    /// each with the brace depth its body closes at.
    scope: Vec<(String, usize)>,
    base: Vec<String>,
    depth: usize,
    files: &'a BTreeMap<Vec<String>, PathBuf>,
    found: Vec<Vec<String>>,
}

impl Reader<'_> {
    fn module(&self) -> Vec<String> {
        let mut m = self.base.clone();
        m.extend(self.scope.iter().map(|(n, _)| n.clone()));
        m
    }

    fn ident(&self, at: usize) -> Option<&str> {
        match self.toks.get(at) {
            Some(Tok::Ident(s)) => Some(s),
            _ => None,
        }
    }

    /// Resolves a path's segments against the current module: `crate`, `super`, `self`, or
    /// a child module's name. None for paths outside the crate or to a local item.
    fn resolve(&self, segs: &[String]) -> Option<Vec<String>> {
        let mut module = self.module();
        let first = segs.first()?;
        let rest = match first.as_str() {
            "crate" => {
                module.clear();
                &segs[1..]
            }
            "self" => &segs[1..],
            "super" => {
                let ups = segs.iter().take_while(|s| *s == "super").count();
                for _ in 0..ups {
                    module.pop()?;
                }
                &segs[ups..]
            }
            _ => {
                let mut child = module.clone();
                child.push(first.clone());
                if !self.files.contains_key(&child) {
                    return None;
                }
                segs
            }
        };
        module.extend(rest.iter().cloned());
        Some(module)
    }

    /// Reads a `use` tree from the current token, adding every path under `prefix`.
    fn use_tree(&mut self, prefix: Vec<String>) {
        let mut segs = prefix;
        loop {
            match self.toks.get(self.at).cloned() {
                Some(Tok::Ident(s)) if s != "as" => {
                    segs.push(s);
                    self.at += 1;
                }
                Some(Tok::Sep) => self.at += 1,
                Some(Tok::Open) => {
                    self.at += 1;
                    loop {
                        if self.toks.get(self.at) == Some(&Tok::Close) {
                            self.at += 1;
                            return;
                        }
                        self.use_tree(segs.clone());
                        match self.toks.get(self.at) {
                            Some(Tok::Comma) => self.at += 1,
                            Some(Tok::Close) => {
                                self.at += 1;
                                return;
                            }
                            _ => return,
                        }
                    }
                }
                Some(Tok::Star) => {
                    self.at += 1;
                    break;
                }
                Some(Tok::Ident(_)) => {
                    // `as NAME`
                    self.at += 2;
                    break;
                }
                _ => break,
            }
        }
        // `use a::{self}` names `a` itself.
        if segs.last().is_some_and(|s| s == "self") && segs.len() > 1 {
            segs.pop();
        }
        if let Some(m) = self.resolve(&segs) {
            self.found.push(m);
        }
    }

    fn read(mut self) -> Vec<Vec<String>> {
        while self.at < self.toks.len() {
            let tok = self.toks[self.at].clone();
            match tok {
                Tok::Open => {
                    self.depth += 1;
                    self.at += 1;
                }
                Tok::Close => {
                    if self.scope.last().is_some_and(|(_, d)| *d == self.depth) {
                        self.scope.pop();
                    }
                    self.depth = self.depth.saturating_sub(1);
                    self.at += 1;
                }
                Tok::Ident(w) if w == "mod" => {
                    let name = self.ident(self.at + 1).map(str::to_owned);
                    if let (Some(name), Some(Tok::Open)) = (name, self.toks.get(self.at + 2)) {
                        self.depth += 1;
                        self.scope.push((name, self.depth));
                        self.at += 3;
                    } else {
                        // `mod name;` declares a child file: no arrow.
                        self.at += 2;
                    }
                }
                Tok::Ident(w)
                    if w == "in" && self.at > 0 && self.toks[self.at - 1] == Tok::Paren =>
                {
                    // `pub(in crate::a)`: a visibility, not an arrow. Skip its path.
                    self.at += 1;
                    while matches!(self.toks.get(self.at), Some(Tok::Ident(_) | Tok::Sep)) {
                        self.at += 1;
                    }
                }
                Tok::Ident(w) if w == "use" => {
                    self.at += 1;
                    self.use_tree(Vec::new());
                }
                Tok::Ident(w) if self.toks.get(self.at + 1) == Some(&Tok::Sep) => {
                    let after_sep = self.at > 0 && self.toks[self.at - 1] == Tok::Sep;
                    let mut segs = vec![w];
                    self.at += 1;
                    while self.toks.get(self.at) == Some(&Tok::Sep) {
                        match self.ident(self.at + 1) {
                            Some(s) => {
                                segs.push(s.to_owned());
                                self.at += 2;
                            }
                            None => break,
                        }
                    }
                    if !after_sep && let Some(m) = self.resolve(&segs) {
                        self.found.push(m);
                    }
                }
                _ => self.at += 1,
            }
        }
        self.found
    }
}

/// Every arrow between files: from file, to file, and one path that makes it.
fn arrows(src: &Path) -> BTreeMap<String, BTreeMap<String, String>> {
    let files = modules(src);
    let name = |m: &Vec<String>| {
        files[m]
            .strip_prefix(src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/")
    };
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (module, path) in &files {
        let text = std::fs::read_to_string(path).expect("source is readable");
        let reader = Reader {
            toks: tokens(&text),
            at: 0,
            scope: Vec::new(),
            base: module.clone(),
            depth: 0,
            files: &files,
            found: Vec::new(),
        };
        let from = name(module);
        let entry = out.entry(from.clone()).or_default();
        for target in reader.read() {
            let Some(file) = file_of(&target, &files) else {
                continue;
            };
            let to = name(&file);
            if to != from {
                entry
                    .entry(to)
                    .or_insert_with(|| format!("crate::{}", target.join("::")));
            }
        }
    }
    out
}

/// The circles of the graph: its strongly connected parts of more than one file (Tarjan).
fn circles(graph: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<BTreeSet<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<String, BTreeMap<String, String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        parts: Vec<BTreeSet<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flat_map(|e| e.keys()) {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut part = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                part.insert(w.to_owned());
                if w == v {
                    break;
                }
            }
            if part.len() > 1 {
                s.parts.push(part);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        parts: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.parts
}

#[test]
fn no_file_of_the_core_imports_itself_in_a_circle() {
    let found = circle_report(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), false);
    assert!(found.is_empty(), "{found}");
}

/// Every crate of the workspace: no import circle between modules. A module's own files are
/// allowed one thing the core's are not: a parent uses what its submodules define (a
/// `mod.rs` calling its children, the crate root its modules) while they use its types.
#[test]
fn no_file_of_any_crate_imports_itself_in_a_circle() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("crates/");
    let mut checked = 0;
    let mut found = Vec::new();
    for entry in std::fs::read_dir(crates).expect("crates/ is readable") {
        let src = entry.expect("a directory entry").path().join("src");
        if src.join("lib.rs").is_file() || src.join("main.rs").is_file() {
            let report = circle_report(&src, true);
            if !report.is_empty() {
                found.push(report);
            }
            checked += 1;
        }
    }
    assert!(
        checked >= 10,
        "only {checked} crates found under {}",
        crates.display()
    );
    assert!(found.is_empty(), "{}", found.join("\n\n"));
}

/// Every circle among the files of `src`, each with the arrows that close it; empty when
/// there is none.
fn circle_report(src: &Path, parents_may_use_children: bool) -> String {
    let mut graph = arrows(src);
    if parents_may_use_children {
        for (from, to) in &mut graph {
            // The folder of the module's children: `x/` for `x.rs` and `x/mod.rs`.
            let dir = match from.as_str() {
                "lib.rs" | "main.rs" => String::new(),
                f => match f.strip_suffix("mod.rs") {
                    Some(d) => d.to_owned(),
                    None => format!("{}/", f.trim_end_matches(".rs")),
                },
            };
            to.retain(|file, _| !(file != from && file.starts_with(&dir)));
        }
    }
    let found = circles(&graph);
    let report: Vec<String> = found
        .iter()
        .map(|part| {
            let inner: Vec<String> = part
                .iter()
                .flat_map(|from| {
                    graph[from]
                        .iter()
                        .filter(|(to, _)| part.contains(*to))
                        .map(move |(to, via)| format!("  {from} -> {to} ({via})"))
                })
                .collect();
            format!(
                "circle of {} files: {}\n{}",
                part.len(),
                part.iter().cloned().collect::<Vec<_>>().join(", "),
                inner.join("\n")
            )
        })
        .collect();
    if report.is_empty() {
        return String::new();
    }
    format!("{}: {}", src.display(), report.join("\n\n"))
}

#[test]
fn the_reader_sees_every_kind_of_path() {
    let toks = tokens(
        r#"use crate::{a::B, b::{self, C}}; // crate::z
        #[serde(default = "crate::c::f")] let x = 'a'; fn f<'a>() { super::d::g(); $crate::e::H }
        pub(in crate::z) fn g() {}"#,
    );
    let files: BTreeMap<Vec<String>, PathBuf> = ["", "a", "b", "c", "d", "e", "z", "m"]
        .iter()
        .map(|m| {
            let path: Vec<String> = m
                .split('/')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            (path, PathBuf::from(format!("{m}.rs")))
        })
        .collect();
    let reader = Reader {
        toks,
        at: 0,
        scope: Vec::new(),
        base: vec!["m".into()],
        depth: 0,
        files: &files,
        found: Vec::new(),
    };
    let found: BTreeSet<String> = reader
        .read()
        .iter()
        .filter_map(|m| file_of(m, &files))
        .map(|m| m.join("::"))
        .collect();
    let want: BTreeSet<String> = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(found, want);
}
