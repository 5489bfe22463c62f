//! Loading and validating suites: [`LoadedSuite`], [`load_file`], [`load_str`].
//!
//! A suite is read once, deserialized (serde reports syntax errors, unknown keys and wrong
//! types with their position), then checked for what serde cannot see: a case with no
//! oracle, a case whose only check is a model judge, a regex that does not compile, an
//! invalid JSON Schema, a duplicate id, an unknown tool. What is wrong with one check is
//! decided by the check itself (`gauntlet_core::expect::Check::validate`); this module lends
//! it the parsers and places its findings. Every problem becomes a [`Diagnostic`] with file,
//! line, column and a hint; all of them are collected, so one `gauntlet validate` shows every
//! mistake at once.
//!
//! Cases may live in the suite file, in included YAML files (lists of cases) and in included
//! JSON lines files. JSON lines files are checked here in one streaming pass (keeping only
//! the ids) and streamed again when the run reads them, so a 50,000-case suite costs almost
//! no memory.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use gauntlet_core::expect::{CheckProblem, Oracle, Parsers, Role, Syntax, SyntaxError, Validation};
use gauntlet_core::suite::{
    BENIGN_SUFFIX, Case, CaseKind, Relation, RelationExpect, SUITE_FORMAT_VERSION, Suite,
    owasp_title,
};
use gauntlet_core::target::{FAKE_PERSONAS, TargetConfig, TargetKind};
use gauntlet_core::verdict::Dimension;
use sha2::{Digest, Sha256};

use crate::diag::{Diagnostic, did_you_mean};
use crate::pathmap::PathMap;

/// A suite, loaded and checked.
#[derive(Debug, Clone)]
pub struct LoadedSuite {
    /// Where it came from: the path as given, or `builtin:NAME`.
    pub origin: String,
    /// The suite, with the cases of included YAML files appended to `cases`.
    pub suite: Suite,
    /// The system prompt in force (inline, or read from `system_prompt_file`).
    pub system_prompt: Option<String>,
    /// The system-prompt variants (`prompts:`), each read (inline, or from its file).
    pub prompts: Vec<gauntlet_core::plan::PromptText>,
    /// Included JSON lines files, streamed when the run reads them.
    pub streamed: Vec<PathBuf>,
    /// Cases in all (inline, included and streamed).
    pub case_count: usize,
    /// Cases the run's selection takes ([`LoadOptions::select`]; all of them without one).
    pub selected: usize,
    /// Hold-out cases (`holdout: true`), inline, included and streamed.
    pub holdout_count: usize,
    /// SHA-256 (hex) over the suite file and everything it includes.
    pub sha256: String,
    /// Every file read, for integrity checks.
    pub files: Vec<PathBuf>,
    /// The folder of the suite file (where its `script:` checks run); `None` for a suite
    /// that is no file.
    pub dir: Option<PathBuf>,
}

/// Options that change what counts as valid, and which cases a run will take.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadOptions<'a> {
    /// A canary given for the whole run (`--canary`): `no_canary` checks may rely on it.
    pub run_canary: Option<&'a str>,
    /// The cases the run takes: counted in [`LoadedSuite::selected`] during the validation
    /// pass, so that a JSON lines include is not read again just to count them.
    pub select: Option<&'a crate::filter::Selection>,
    /// Folders outside a suite's own that the files it names may come from (`--allow-path`).
    /// Without one, every path a suite names stays inside the suite's folder.
    pub allow_paths: &'a [PathBuf],
}

/// The most a file a suite names (a system prompt, a YAML include, a document) may hold.
/// JSON lines includes are streamed and have no total limit, only this much per line.
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// Why a file a suite names (its system prompt, an include) could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadError {
    #[error("failed to read `{}`", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("no embedded file `{0}`")]
    NotEmbedded(String),
    /// An absolute path, a `..` that climbs out, or a symlink that points out of the
    /// suite's folder: a suite from a pull request must not read the machine's files.
    #[error("`{given}` is outside the suite's folder `{}`", folder.display())]
    Outside { given: String, folder: PathBuf },
    #[error("`{}` is not a regular file", path.display())]
    NotAFile { path: PathBuf },
    #[error("`{}` holds {size} bytes, more than the {MAX_FILE_BYTES} a suite file may", path.display())]
    TooLarge { path: PathBuf, size: u64 },
    #[error("`{}` is not UTF-8 text (line {line}, column {column})", path.display())]
    NotUtf8 {
        path: PathBuf,
        line: usize,
        column: usize,
    },
}

impl ReadError {
    /// What the user can do about it.
    fn hint(&self, default: &str) -> String {
        match self {
            ReadError::Outside { .. } => "paths a suite names are relative to its folder and stay inside it; to read from another folder, pass it with --allow-path DIR".into(),
            ReadError::NotAFile { .. } => "name a regular file (not a folder, a device, a pipe or a socket)".into(),
            ReadError::TooLarge { .. } => "split it, or stream cases from a JSON lines include (.jsonl)".into(),
            ReadError::NotUtf8 { .. } => "save the file as UTF-8".into(),
            _ => default.into(),
        }
    }
}

/// Reads a file whole as UTF-8 text: only a regular file, at most [`MAX_FILE_BYTES`], with
/// the position of the first byte that is not UTF-8.
fn read_text_inner(path: &Path) -> Result<String, ReadError> {
    use std::io::Read;
    let io = |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    // Look before opening: opening a FIFO waits for a writer that may never come.
    if !std::fs::metadata(path).map_err(io)?.is_file() {
        return Err(ReadError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let f = std::fs::File::open(path).map_err(io)?;
    let meta = f.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(ReadError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge {
            path: path.to_path_buf(),
            size: meta.len(),
        });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // The size can change between the check and the read: read at most one byte more.
    f.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge {
            path: path.to_path_buf(),
            size: bytes.len() as u64,
        });
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = good.iter().filter(|b| **b == b'\n').count() + 1;
        let line_start = good.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&good[line_start..]).chars().count() + 1;
        ReadError::NotUtf8 {
            path: path.to_path_buf(),
            line,
            column,
        }
    })
}

/// An error and its sources on one line, `a: b: c`, as a diagnostic shows it.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        out.push_str(": ");
        out.push_str(&s.to_string());
        next = s.source();
    }
    out
}

/// Where included files are read from: the file system, or the embedded corpus.
pub(crate) trait Source {
    fn read(&self, rel: &str) -> Result<(String, Option<PathBuf>), ReadError>;
    /// How a file is named in a case's recorded source: the path as read, or the corpus
    /// file's path in gauntlet's repository.
    fn shown(&self, rel: &str) -> String;
    /// Opens a file for streaming (JSON lines files can be large).
    fn open(&self, rel: &str) -> Result<(Box<dyn BufRead>, Option<PathBuf>), ReadError>;
    /// Whether a path the suite names as a program or an argument (an MCP server's command)
    /// is a file inside the folders files may come from: `Ok(false)` when there is no such
    /// file, an error when it is outside.
    fn confine(&self, rel: &str) -> Result<bool, ReadError>;
}

struct FsSource {
    dir: PathBuf,
    /// Folders (besides `dir`) files may come from.
    roots: Vec<PathBuf>,
}

impl FsSource {
    /// The file a suite names, resolved (symlinks followed) and confined to the suite's
    /// folder or an allowed root.
    fn resolve(&self, rel: &str) -> Result<PathBuf, ReadError> {
        let outside = || ReadError::Outside {
            given: rel.to_owned(),
            folder: self.dir.clone(),
        };
        let joined = self.dir.join(rel);
        let real = joined.canonicalize().map_err(|source| ReadError::Io {
            path: joined.clone(),
            source,
        })?;
        let inside = |root: &Path| root.canonicalize().is_ok_and(|r| real.starts_with(r));
        if Path::new(rel).is_absolute() && !self.roots.iter().any(|r| inside(r)) {
            return Err(outside());
        }
        if !inside(&self.dir) && !self.roots.iter().any(|r| inside(r)) {
            return Err(outside());
        }
        Ok(joined)
    }
}

impl Source for FsSource {
    fn confine(&self, rel: &str) -> Result<bool, ReadError> {
        if !self.dir.join(rel).is_file() {
            return Ok(false);
        }
        self.resolve(rel).map(|_| true)
    }

    fn shown(&self, rel: &str) -> String {
        self.dir.join(rel).display().to_string()
    }

    fn read(&self, rel: &str) -> Result<(String, Option<PathBuf>), ReadError> {
        let p = self.resolve(rel)?;
        Ok((read_text_inner(&p)?, Some(p)))
    }

    fn open(&self, rel: &str) -> Result<(Box<dyn BufRead>, Option<PathBuf>), ReadError> {
        let p = self.resolve(rel)?;
        let io = |source| ReadError::Io {
            path: p.clone(),
            source,
        };
        // Look before opening: opening a FIFO waits for a writer that may never come.
        if !std::fs::metadata(&p).map_err(io)?.is_file() {
            return Err(ReadError::NotAFile { path: p });
        }
        let f = std::fs::File::open(&p).map_err(io)?;
        Ok((Box::new(BufReader::new(f)), Some(p)))
    }
}

/// Checks a suite's `agent.mcp_servers` (one transport each, unique names, programs and
/// files inside the suite's folder, tools unique across the suite) and returns their tools
/// as the agent's tools.
fn check_mcp_servers(
    suite: &Suite,
    fs: &dyn Source,
    report: &mut dyn FnMut(&str, String, String),
) -> Vec<gauntlet_core::tools::ToolDef> {
    let mut out = Vec::new();
    let mut servers: HashMap<&str, usize> = HashMap::new();
    let mut tools: HashMap<&str, String> = suite
        .agent
        .tools
        .iter()
        .map(|t| (t.name.as_str(), "a simulated tool".to_owned()))
        .collect();
    for (i, m) in suite.agent.mcp_servers.iter().enumerate() {
        let at = |field: &str| format!("agent.mcp_servers[{i}].{field}");
        if m.name.trim().is_empty() {
            report(
                &at("name"),
                "the MCP server's name is empty".into(),
                "name it: `name: notes`".into(),
            );
        } else if let Some(first) = servers.insert(m.name.as_str(), i) {
            report(
                &at("name"),
                format!(
                    "duplicate MCP server name `{}` (first declared as server {})",
                    m.name,
                    first + 1
                ),
                "MCP server names must be unique in a suite".into(),
            );
        }
        match (m.command.is_empty(), &m.url) {
            (true, None) => report(
                &at("name"),
                format!("MCP server `{}` has neither `command` nor `url`", m.name),
                "give `command: [python3, server.py]` for a stdio server or `url: http://127.0.0.1:8000/mcp` for a streamable HTTP one".into(),
            ),
            (false, Some(_)) => report(
                &at("url"),
                format!("MCP server `{}` has both `command` and `url`", m.name),
                "keep one: a server is reached over stdio or over HTTP".into(),
            ),
            (true, Some(url)) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    report(&at("url"), format!("`{url}` is not an http:// or https:// URL"), "a streamable HTTP endpoint, such as http://127.0.0.1:8000/mcp".into());
                }
                if !m.env.is_empty() || !m.pass_env.is_empty() {
                    report(&at("env"), "`env` and `pass_env` are for a stdio server (`command`)".into(), "an HTTP server's environment is its own; send credentials with `headers`".into());
                }
            }
            (false, None) => {
                if !m.headers.is_empty() {
                    report(&at("headers"), "`headers` are for an HTTP server (`url`)".into(), "pass a stdio server its settings with `env`".into());
                }
                let program = &m.command[0];
                if program.trim().is_empty() {
                    report(&at("command[0]"), "the MCP server's program is empty".into(), "name a program on PATH (`python3`) or a file in the suite's folder (`./server.py`)".into());
                } else if program.contains('/') {
                    match fs.confine(program) {
                        Ok(true) => {}
                        Ok(false) => report(&at("command[0]"), format!("no program `{program}` in the suite's folder"), "a program with a `/` is a path relative to the suite file; a bare name is looked up on PATH".into()),
                        Err(e) => report(&at("command[0]"), chain(&e), e.hint("the path is relative to the suite file")),
                    }
                }
                for (j, arg) in m.command.iter().enumerate().skip(1) {
                    // Arguments naming files are handed over as paths in the suite's folder.
                    if arg.starts_with('-') || arg.is_empty() {
                        continue;
                    }
                    if let Err(e) = fs.confine(arg) {
                        report(&at(&format!("command[{j}]")), chain(&e), e.hint("the path is relative to the suite file"));
                    }
                }
            }
        }
        if m.timeout_ms == Some(0) {
            report(
                &at("timeout_ms"),
                "`timeout_ms: 0` allows no time at all".into(),
                "leave it out for 10000 ms, or give a positive number".into(),
            );
        }
        if m.tools.is_empty() {
            report(
                &at("tools"),
                format!("MCP server `{}` offers the agent no tools", m.name),
                "name the server's tools the agent may call: `tools: [{name: read_note}]` (`gauntlet mcp scan` lists them)".into(),
            );
        }
        for (j, t) in m.tools.iter().enumerate() {
            let path = at(&format!("tools[{j}].name"));
            if t.name.trim().is_empty() {
                report(
                    &path,
                    "the tool's name is empty".into(),
                    "give the name the server lists".into(),
                );
                continue;
            }
            if let Some(first) = tools.insert(t.name.as_str(), format!("MCP server `{}`", m.name)) {
                report(
                    &path,
                    format!("duplicate tool name `{}` (also {first})", t.name),
                    "tool names must be unique across a suite's tools and MCP servers".into(),
                );
                continue;
            }
            for (k, claim) in t.claims.iter().enumerate() {
                if let Err(e) = ctx_free_regex(claim) {
                    report(
                        &at(&format!("tools[{j}].claims[{k}]")),
                        format!("invalid claim pattern: {e}"),
                        "claims are regular expressions matched case-insensitively".into(),
                    );
                }
            }
            out.push(t.to_tool_def(&m.name));
        }
    }
    out
}

/// Loads and checks a suite file.
pub fn load_file(path: &Path, opts: &LoadOptions<'_>) -> Result<LoadedSuite, Vec<Diagnostic>> {
    let display = path.display().to_string();
    let source = read_text_inner(path).map_err(|e| {
        let message = format!("failed to read the suite: {}", chain(&e));
        // Bytes that are not UTF-8 have a position: the diagnostic carries it, so that an
        // editor (or CI's annotations) can jump there like to any other error.
        let d = match &e {
            ReadError::NotUtf8 { line, column, .. } => {
                Diagnostic::at(&display, None, *line, *column, message)
            }
            _ => Diagnostic::file(&display, message),
        };
        vec![d.hint(e.hint("check the path; suites are YAML files"))]
    })?;
    let dir = path
        .parent()
        .map(Path::to_path_buf)
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("."));
    let fs = FsSource {
        dir: dir.clone(),
        roots: opts.allow_paths.to_vec(),
    };
    let mut loaded = load_source(&display, &source, &fs, opts)?;
    loaded.files.insert(0, path.to_path_buf());
    loaded.dir = Some(dir.clone());
    if let Some(t) = &mut loaded.suite.target {
        set_base_dir(t, &dir);
    }
    Ok(loaded)
}

/// Loads and checks a suite from text (for tests and tools that generate suites).
pub fn load_str(
    name: &str,
    source: &str,
    base_dir: &Path,
    opts: &LoadOptions<'_>,
) -> Result<LoadedSuite, Vec<Diagnostic>> {
    let mut loaded = load_source(
        name,
        source,
        &FsSource {
            dir: base_dir.to_path_buf(),
            roots: opts.allow_paths.to_vec(),
        },
        opts,
    )?;
    loaded.dir = Some(base_dir.to_path_buf());
    Ok(loaded)
}

/// What loading gathers as it reads a suite: the hash over every file read, the files
/// themselves and every problem found, placed in the suite's own text.
struct Gathered<'a> {
    origin: &'a str,
    loc: Locator<'a>,
    fs: &'a dyn Source,
    hasher: Sha256,
    files: Vec<PathBuf>,
    diags: Vec<Diagnostic>,
}

impl<'a> Gathered<'a> {
    fn new(origin: &'a str, source: &'a str, fs: &'a dyn Source) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(source.as_bytes());
        Gathered {
            origin,
            loc: Locator::new(origin, source),
            fs,
            hasher,
            files: Vec::new(),
            diags: Vec::new(),
        }
    }

    /// Records a problem at a path of the suite file.
    fn diag(&mut self, path: &str, key: bool, msg: String, hint: Option<String>) {
        let d = self.loc.diag(path, key, msg, hint);
        self.diags.push(d);
    }

    /// A file the suite names at `path` could not be read: the error's causes, and its own
    /// hint or `hint`.
    fn read_error(&mut self, path: &str, e: &ReadError, hint: &str) {
        self.diag(path, false, chain(e), Some(e.hint(hint)));
    }

    /// Reads a file the suite names, adding it to the hash and to the files read.
    fn read(&mut self, rel: &str) -> Result<String, ReadError> {
        let (text, path) = self.fs.read(rel)?;
        self.hasher.update(text.as_bytes());
        self.files.extend(path);
        Ok(text)
    }
}

/// Cases of included files, and the counts of those streamed rather than kept.
#[derive(Default)]
struct Included {
    /// Cases of included YAML files, in order.
    cases: Vec<Case>,
    /// Included JSON lines files.
    streamed: Vec<PathBuf>,
    /// Cases in included JSON lines files (those in memory are counted from the suite).
    streamed_count: usize,
    /// Streamed cases the run's selection takes.
    selected: usize,
    /// Streamed hold-out cases.
    holdout: usize,
}

pub(crate) fn load_source(
    origin: &str,
    source: &str,
    fs: &dyn Source,
    opts: &LoadOptions<'_>,
) -> Result<LoadedSuite, Vec<Diagnostic>> {
    let mut suite: Suite = parse_yaml(origin, source)?;
    let mut g = Gathered::new(origin, source, fs);
    check_header(&suite, &mut g);
    let system_prompt = read_system_prompt(&suite, &mut g);
    let prompts = read_prompt_variants(&suite, &mut g);
    if let Some(t) = &suite.target
        && let Err(e) = check_target(t)
    {
        g.diag("target", false, e.to_string(), e.hint());
    }
    check_tools(&suite, &mut g);
    add_server_tools(&mut suite, &mut g);
    check_tool_roles(&suite, &mut g);
    read_judge_templates(&mut suite, &mut g);

    // The suite's default relations: whether each can change a given case's text is decided
    // per case when a metamorphic run expands them (a default is skipped, not refused, for
    // a case it cannot change).
    let mut defaults = Vec::new();
    relation_problems(&suite.metamorphic, None, &mut defaults);
    for p in defaults {
        g.diag(&p.path, p.at_key, p.message, p.hint);
    }

    let ctx = CaseCtx {
        fs,
        suite: &suite,
        run_canary: opts.run_canary,
        good_regexes: Default::default(),
    };
    let mut ids = Seen::default();
    let sources = check_inline_cases(&ctx, &mut ids, &mut g);
    let included = read_includes(&ctx, &mut ids, opts, &mut g);

    for (case, line) in suite.cases.iter_mut().zip(sources) {
        case.source = Some(gauntlet_core::suite::CaseSource {
            file: origin.to_owned(),
            line,
        });
    }
    suite.cases.extend(included.cases);
    read_documents(&mut suite, &mut g);
    if !g.diags.is_empty() {
        return Err(g.diags);
    }
    // Cases in memory are counted now; streamed ones were counted as they were checked.
    let case_count = suite.cases.len() + included.streamed_count;
    let selected = included.selected
        + suite
            .cases
            .iter()
            .map(|c| taken(c, opts.select))
            .sum::<usize>();
    let holdout_count = included.holdout + suite.cases.iter().filter(|c| c.holdout).count();
    let digest = g.hasher.finalize();
    Ok(LoadedSuite {
        origin: origin.to_owned(),
        suite,
        system_prompt,
        prompts,
        streamed: included.streamed,
        case_count,
        selected,
        holdout_count,
        sha256: digest.iter().map(|b| format!("{b:02x}")).collect(),
        files: g.files,
        dir: None,
    })
}

/// The suite's format version and name.
fn check_header(suite: &Suite, g: &mut Gathered<'_>) {
    if suite.version != SUITE_FORMAT_VERSION {
        g.diag(
            "version",
            false,
            format!("unsupported suite format version {}", suite.version),
            Some(format!(
                "this gauntlet reads version {SUITE_FORMAT_VERSION}"
            )),
        );
    }
    if suite.suite.trim().is_empty() {
        g.diag(
            "suite",
            false,
            "the suite name is empty".into(),
            Some("name the suite: `suite: my-agent`".into()),
        );
    }
}

/// The system prompt in force: inline or from a file.
fn read_system_prompt(suite: &Suite, g: &mut Gathered<'_>) -> Option<String> {
    let mut system_prompt = suite.agent.system_prompt.clone();
    match (&suite.agent.system_prompt, &suite.agent.system_prompt_file) {
        (Some(_), Some(_)) => g.diag(
            "agent.system_prompt_file",
            true,
            "both `system_prompt` and `system_prompt_file` are set".into(),
            Some("keep one of them".into()),
        ),
        (None, Some(rel)) => match g.read(rel) {
            Ok(text) => system_prompt = Some(text),
            Err(e) => g.read_error(
                "agent.system_prompt_file",
                &e,
                "the path is relative to the suite file",
            ),
        },
        _ => {}
    }
    system_prompt
}

/// The system-prompt variants (`prompts:`), each read like the agent's prompt: at least
/// two (one variant is the agent's `system_prompt`), labels that can name a column and
/// are unique, exactly one of `system_prompt` and `system_prompt_file`, a file inside the
/// suite's folder. Problems are recorded; the variants read are returned.
fn read_prompt_variants(
    suite: &Suite,
    g: &mut Gathered<'_>,
) -> Vec<gauntlet_core::plan::PromptText> {
    if suite.prompts.len() == 1 {
        g.diag(
            "prompts",
            true,
            "`prompts:` holds one variant: a matrix of prompts needs at least two".into(),
            Some("add a second variant, or make the one the agent's `system_prompt`".into()),
        );
    }
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut read = Vec::new();
    for (i, v) in suite.prompts.iter().enumerate() {
        let at = format!("prompts[{i}]");
        if let Some(problem) = label_problem(&v.label) {
            g.diag(
                &format!("{at}.label"),
                false,
                problem,
                Some(
                    "a label is letters, digits, `.`, `_` and `-`, such as `terse` or `v2`".into(),
                ),
            );
        } else if let Some(first) = seen.insert(v.label.as_str(), i) {
            g.diag(
                &format!("{at}.label"),
                false,
                format!(
                    "duplicate prompt label `{}` (first given to variant {})",
                    v.label,
                    first + 1
                ),
                Some("each variant is a column: give each its own label".into()),
            );
        }
        let text = match (&v.system_prompt, &v.system_prompt_file) {
            (Some(_), Some(_)) => {
                g.diag(
                    &format!("{at}.system_prompt_file"),
                    true,
                    "both `system_prompt` and `system_prompt_file` are set".into(),
                    Some("keep one of them".into()),
                );
                None
            }
            (None, None) => {
                g.diag(
                    &at,
                    false,
                    format!("prompt variant `{}` has no text", v.label),
                    Some("give it `system_prompt: ...` or `system_prompt_file: FILE`".into()),
                );
                None
            }
            (Some(text), None) => Some(text.clone()),
            (None, Some(rel)) => match g.read(rel) {
                Ok(text) => Some(text),
                Err(e) => {
                    let path = format!("{at}.system_prompt_file");
                    g.read_error(&path, &e, "the path is relative to the suite file");
                    None
                }
            },
        };
        read.extend(text.map(|text| gauntlet_core::plan::PromptText {
            label: v.label.clone(),
            text,
        }));
    }
    read
}

/// Why a prompt variant's label cannot name a column, if it cannot: it is empty, or holds
/// something other than letters, digits, `.`, `_` and `-` (a space or `@` would make case
/// ids and `RUN@COLUMN` ambiguous, a `/` the `TARGET/PROMPT` label).
fn label_problem(label: &str) -> Option<String> {
    if label.is_empty() {
        return Some("the prompt label is empty".into());
    }
    let bad = label
        .chars()
        .find(|c| !(c.is_alphanumeric() || matches!(c, '.' | '_' | '-')))?;
    Some(format!("the prompt label `{label}` holds `{bad}`"))
}

/// The agent's tools: unique names, claim patterns that compile and valid parameter schemas.
fn check_tools(suite: &Suite, g: &mut Gathered<'_>) {
    let mut tool_names: HashMap<&str, usize> = HashMap::new();
    for (i, t) in suite.agent.tools.iter().enumerate() {
        if let Some(first) = tool_names.insert(t.name.as_str(), i) {
            g.diag(
                &format!("agent.tools[{i}].name"),
                false,
                format!(
                    "duplicate tool name `{}` (first declared as tool {})",
                    t.name,
                    first + 1
                ),
                Some("tool names must be unique".into()),
            );
        }
        for (j, claim) in t.claims.iter().enumerate() {
            if let Err(e) = ctx_free_regex(claim) {
                g.diag(
                    &format!("agent.tools[{i}].claims[{j}]"),
                    false,
                    format!("invalid claim pattern: {e}"),
                    Some("claims are regular expressions matched case-insensitively, e.g. 'refund (has been )?sent'".into()),
                );
            }
        }
        if let Err(p) = schema_problem(&t.parameters) {
            // Placed at the offending node of the schema (inside an `anyOf`, say), not at
            // the start of `parameters`.
            let (path, shown) = if p.at.is_empty() {
                (format!("agent.tools[{i}].parameters"), String::new())
            } else {
                (
                    format!("agent.tools[{i}].parameters{}", p.at),
                    format!(" at `parameters{}`", p.at),
                )
            };
            g.diag(
                &path,
                false,
                format!(
                    "tool `{}` has an invalid parameters schema{shown}: {}",
                    t.name, p.reason
                ),
                Some(p.hint.unwrap_or_else(|| "parameters is a JSON Schema object, e.g. {type: object, properties: {id: {type: string}}}".into())),
            );
        }
    }
}

/// `agent.tool_roles` names tools of the card (its own, its servers' or the bus's).
fn check_tool_roles(suite: &Suite, g: &mut Gathered<'_>) {
    let roles = &suite.agent.tool_roles;
    let lists = [
        ("untrusted_output", &roles.untrusted_output),
        ("sends_out", &roles.sends_out),
        ("irreversible", &roles.irreversible),
    ];
    let names: Vec<&str> = suite.agent.tools.iter().map(|t| t.name.as_str()).collect();
    for (role, list) in lists {
        for (i, name) in list.iter().flatten().enumerate() {
            if !names.contains(&name.as_str()) {
                g.diag(
                    &format!("agent.tool_roles.{role}[{i}]"),
                    false,
                    format!("`{name}` in agent.tool_roles.{role} is no tool of the card"),
                    Some(match did_you_mean(name, names.iter().copied()) {
                        Some(m) => format!("did you mean `{m}`?"),
                        None => format!("the card's tools: {}", names.join(", ")),
                    }),
                );
            }
        }
    }
}

/// Tools answered by something other than fixtures join the agent's: those of its MCP
/// servers, and the message bus's two.
fn add_server_tools(suite: &mut Suite, g: &mut Gathered<'_>) {
    let fs = g.fs;
    let mcp_tools = check_mcp_servers(suite, fs, &mut |path, msg, hint| {
        g.diag(path, false, msg, Some(hint));
    });
    suite.agent.tools.extend(mcp_tools);

    // The bus answers its tools itself, so a suite may not declare tools of those names.
    if suite.agent.message_bus {
        for (i, t) in suite.agent.tools.iter().enumerate() {
            if gauntlet_core::bus::is_bus_tool(&t.name) {
                g.diag(
                    &format!("agent.tools[{i}].name"),
                    false,
                    format!(
                        "`{}` is a tool of the message bus (`agent.message_bus: true`), so the suite cannot declare it",
                        t.name
                    ),
                    Some("rename the tool, or remove it and let the bus answer it".into()),
                );
            }
        }
        suite.agent.tools.extend(gauntlet_core::bus::bus_tools());
    }
}

/// The `judges:` block, and the prompt templates it names (read now, so that they are part
/// of the suite's hash and of the harness files).
fn read_judge_templates(suite: &mut Suite, g: &mut Gathered<'_>) {
    for p in suite.judges.problems() {
        g.diag(
            &format!("judges.{}", p.path),
            false,
            p.message,
            Some(p.hint),
        );
    }
    for (id, def) in suite.judges.checks.iter_mut() {
        let Some(rel) = def.template_file.clone() else {
            continue;
        };
        let at = format!("judges.checks.{id}.template_file");
        let rel_path = Path::new(&rel);
        if rel_path.is_absolute()
            || rel_path
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            g.diag(
                &at,
                false,
                format!("the template file `{rel}` is outside the suite's folder"),
                Some("give a path relative to the suite file, inside its folder".into()),
            );
            continue;
        }
        match g.read(&rel) {
            Ok(text) => def.template_text = Some(text),
            Err(e) => g.diag(
                &at,
                false,
                chain(&e),
                Some("the path is relative to the suite file".into()),
            ),
        }
    }
}

/// Checks the suite file's own cases and records their ids; returns the line of each.
fn check_inline_cases(ctx: &CaseCtx<'_>, ids: &mut Seen, g: &mut Gathered<'_>) -> Vec<usize> {
    let mut sources: Vec<usize> = Vec::with_capacity(ctx.suite.cases.len());
    for (i, case) in ctx.suite.cases.iter().enumerate() {
        let base = format!("cases[{i}]");
        for p in case_problems(case, ctx) {
            let path = if p.path.is_empty() {
                base.clone()
            } else {
                format!("{base}.{}", p.path)
            };
            g.diag(&path, p.at_key, p.message, p.hint);
        }
        let (l, c) = g.loc.at(&format!("{base}.id"), false);
        sources.push(l);
        if let Some(first) = ids.insert(&case.id, g.origin, l, c) {
            g.diag(
                &format!("{base}.id"),
                false,
                format!("duplicate case id `{}` (first used at {first})", case.id),
                Some("case ids must be unique within a run".into()),
            );
        }
    }
    sources
}

/// The hint of an include that could not be read.
const INCLUDE_HINT: &str = "included paths are relative to the suite file";

/// Included files: YAML lists of cases are merged, JSON lines files are streamed.
fn read_includes(
    ctx: &CaseCtx<'_>,
    ids: &mut Seen,
    opts: &LoadOptions<'_>,
    g: &mut Gathered<'_>,
) -> Included {
    let mut inc = Included::default();
    let origin = g.origin;
    for (i, rel) in ctx.suite.include.iter().enumerate() {
        let is_jsonl = rel.ends_with(".jsonl") || rel.ends_with(".ndjson");
        if is_jsonl {
            let (reader, path) = match g.fs.open(rel) {
                Ok(x) => x,
                Err(e) => {
                    g.read_error(&format!("include[{i}]"), &e, INCLUDE_HINT);
                    continue;
                }
            };
            let shown = path
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| format!("{origin}/{rel}"));
            let (n, kept, held) = check_jsonl(
                &shown,
                reader,
                &mut g.hasher,
                ctx,
                ids,
                &mut g.diags,
                opts.select,
            );
            inc.streamed_count += n;
            inc.selected += kept;
            inc.holdout += held;
            if let Some(p) = &path {
                inc.streamed.push(p.clone());
            }
            g.files.extend(path);
            continue;
        }
        let (text, path) = match g.fs.read(rel) {
            Ok(x) => x,
            Err(e) => {
                g.read_error(&format!("include[{i}]"), &e, INCLUDE_HINT);
                continue;
            }
        };
        g.hasher.update(text.as_bytes());
        if rel.ends_with(".yaml") || rel.ends_with(".yml") {
            let shown = path
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| format!("{origin}/{rel}"));
            match parse_yaml::<Vec<Case>>(&shown, &text) {
                Ok(cases) => {
                    let file = g.fs.shown(rel);
                    let cases =
                        check_included_cases(cases, &shown, &text, file, ctx, ids, &mut g.diags);
                    inc.cases.extend(cases);
                    g.files.extend(path);
                }
                Err(mut d) => g.diags.append(&mut d),
            }
        } else {
            g.diag(
                &format!("include[{i}]"),
                false,
                format!("cannot include `{rel}`: unknown file type"),
                Some("include YAML lists of cases (.yaml) or JSON lines (.jsonl)".into()),
            );
        }
    }
    inc
}

/// Checks the cases of one included YAML file (`shown`, with its `text`), records their ids,
/// and marks each with its line in `file` (the file as a case's source names it).
fn check_included_cases(
    mut cases: Vec<Case>,
    shown: &str,
    text: &str,
    file: String,
    ctx: &CaseCtx<'_>,
    ids: &mut Seen,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Case> {
    let iloc = Locator::new(shown, text);
    for (j, case) in cases.iter_mut().enumerate() {
        case.source = Some(gauntlet_core::suite::CaseSource {
            file: file.clone(),
            line: iloc.at(&format!("[{j}].id"), false).0,
        });
    }
    for (j, case) in cases.iter().enumerate() {
        let base = format!("[{j}]");
        for p in case_problems(case, ctx) {
            let path = if p.path.is_empty() {
                base.clone()
            } else {
                format!("{base}.{}", p.path)
            };
            diags.push(iloc.diag(&path, p.at_key, p.message, p.hint));
        }
        let (l, c) = iloc.at(&format!("{base}.id"), false);
        if let Some(first) = ids.insert(&case.id, shown, l, c) {
            diags.push(
                Diagnostic::at(
                    shown,
                    Some(text),
                    l,
                    c,
                    format!("duplicate case id `{}` (first used at {first})", case.id),
                )
                .hint("case ids must be unique within a run"),
            );
        }
    }
    cases
}

/// Retrieved documents written as files are read now, so that a target never reads the
/// suite's folder and the harness hash covers them.
fn read_documents(suite: &mut Suite, g: &mut Gathered<'_>) {
    let origin = g.origin;
    for (ci, case) in suite.cases.iter_mut().enumerate() {
        // The benign twin's documents are read like the case's own.
        let twin_docs = case
            .benign
            .as_mut()
            .and_then(|b| b.documents.as_mut())
            .into_iter()
            .flatten();
        for (di, doc) in case.documents.iter_mut().chain(twin_docs).enumerate() {
            let Some(rel) = doc.file.clone() else {
                continue;
            };
            if doc.text.is_some() {
                continue;
            }
            if let Err(e) = check_relative(&rel) {
                g.diags.push(
                    Diagnostic::file(
                        origin,
                        format!("case `{}`: document {}: {e}", case.id, di + 1),
                    )
                    .hint("document files are relative to the suite and stay inside its folder"),
                );
                continue;
            }
            match g.read(&rel) {
                Ok(text) => doc.text = Some(text),
                Err(e) => g.diags.push(
                    Diagnostic::file(origin, format!("case `{}` (case {}): {e}", case.id, ci + 1))
                        .hint("document files are relative to the suite file"),
                ),
            }
        }
        if let Some(d) = document_span_problem(case, origin) {
            g.diags.push(d);
        }
    }
}

/// A span of an attack carried by documents read from files, checked once they are read:
/// at the case's line when the loader knows it.
fn document_span_problem(case: &Case, origin: &str) -> Option<Diagnostic> {
    use gauntlet_core::attack::Carrier;
    let a = case.attack.as_ref()?;
    let span = a.span.as_deref()?;
    if a.carrier != Carrier::Documents
        || span.trim().is_empty()
        || case.documents.iter().all(|d| d.file.is_none())
        || case
            .documents
            .iter()
            .any(|d| d.text.as_deref().is_some_and(|t| t.contains(span)))
    {
        return None;
    }
    let message = format!(
        "case `{}`: the attack's span is not written in the case's documents",
        case.id
    );
    let d = match &case.source {
        Some(s) if s.line > 0 => Diagnostic::at(&s.file, None, s.line, 0, message),
        _ => Diagnostic::file(origin, message),
    };
    Some(d.hint(
        "copy the planted text exactly as the document file holds it (same spaces, line breaks and quotes)",
    ))
}

/// Deserializes YAML, turning serde's error into a diagnostic with a hint.
pub(crate) fn parse_yaml<T: serde::de::DeserializeOwned>(
    origin: &str,
    source: &str,
) -> Result<T, Vec<Diagnostic>> {
    parse_yaml_documented(origin, source, "docs/suite-format.md")
}

/// YAML read into `T` with every error a [`Diagnostic`] (file, line, column), for a file
/// whose format another page (`doc`) describes, such as a trajectory or a task file: the
/// fallback hint sends the reader there, not to the suite format.
pub fn parse_yaml_documented<T: serde::de::DeserializeOwned>(
    origin: &str,
    source: &str,
    doc: &str,
) -> Result<T, Vec<Diagnostic>> {
    // YAML 1.2 booleans only: `contains: y` or `equals: no` must stay text (the 1.1 rules
    // would read them as booleans).
    let mut options = serde_saphyr::Options::default();
    options.strict_booleans = true;
    serde_saphyr::from_str_with_options::<T>(source, options).map_err(|e| {
        let (mut line, mut col) = e
            .location()
            .map(|l| (l.line() as usize, l.column() as usize))
            .unwrap_or((0, 0));
        let plain = e.without_snippet().to_string();
        let message = strip_position_suffix(&plain).to_owned();
        let reworded = if let serde_saphyr::Error::Budget { breach, .. } = e.without_snippet() {
            Some(budget_words(breach))
        } else if is_tab_error(&message) {
            // The reader reports where the token it was reading began (often the value
            // before the line break), not where the tab is: point at the tab.
            if let Some(at) = find_tab(source, line, col) {
                (line, col) = at;
            }
            Some((
                "a tab where YAML allows only spaces: YAML indents with spaces".to_owned(),
                "replace the tab with spaces (set your editor to insert spaces in YAML files)"
                    .to_owned(),
            ))
        } else {
            reword(&message, source, line, col)
        };
        let (message, hint) = match reworded {
            Some((m, h)) => (m, Some(h)),
            None => {
                let hint = hint_for_serde(&message, doc);
                (message, hint)
            }
        };
        let mut d = Diagnostic::at(origin, Some(source), line, col, message);
        d.hint = hint;
        vec![d]
    })
}

/// Our words for the YAML reader's terse or library-facing messages: a value of the wrong
/// type (`invalid u64`) names the key and what it takes; a duplicate key drops the reader's
/// advice to its own programmer (`set DuplicateKeyPolicy in Options`).
fn reword(message: &str, source: &str, line: usize, col: usize) -> Option<(String, String)> {
    if let Some(rest) = message.strip_prefix("duplicate mapping key: ") {
        let key = rest.split(',').next().unwrap_or(rest).trim();
        return Some((
            format!("the key `{key}` appears twice in the same map"),
            "keep one of the two (a later one would silently replace the first)".into(),
        ));
    }
    let ty = message.strip_prefix("invalid ")?;
    let takes = match ty {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number, 0 or more",
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number",
        "f32" | "f64" => "a number",
        "bool" => "`true` or `false`",
        _ => return None,
    };
    // The key and the value as written on the line the reader points at (`key: value`).
    let text = source.lines().nth(line.checked_sub(1)?)?;
    let value_at = col.saturating_sub(1).min(text.len());
    let (before, value) = text.split_at(value_at);
    // The last word before the colon, also in flow maps (`{max: lots}`) and list items.
    let key = before
        .trim_end()
        .strip_suffix(':')
        .and_then(|k| k.rsplit(['{', ',', ' ']).next());
    let value = value.split([',', '}', ']']).next().unwrap_or("").trim();
    let what = match key {
        Some(k) if !k.is_empty() => format!("`{k}` takes {takes}"),
        _ => format!("this value must be {takes}"),
    };
    Some((
        format!("{what}, not `{value}`"),
        format!("write {takes} here, without quotes"),
    ))
}

/// The YAML reader's messages about a tab where it allows none.
fn is_tab_error(message: &str) -> bool {
    [
        "found a tab",
        "tabs disallowed",
        "start with a tab",
        "tab cannot be used",
    ]
    .iter()
    .any(|m| message.contains(m))
}

/// Where the tab is that the YAML reader complained of at `line:col`: the first tab in the
/// indentation of that line or of the lines after it, up to the first line with content
/// after it (the reader looks no further), else the first tab at or after the column on the
/// line itself.
fn find_tab(source: &str, line: usize, col: usize) -> Option<(usize, usize)> {
    let first = line.max(1);
    for (i, text) in source.lines().enumerate().skip(first - 1) {
        let content = text.trim_start_matches([' ', '\t']);
        let indent = &text[..text.len() - content.len()];
        if let Some(p) = indent.find('\t') {
            return Some((i + 1, indent[..p].chars().count() + 1));
        }
        if i + 1 > first && !content.trim().is_empty() {
            break;
        }
    }
    let text = source.lines().nth(first - 1)?;
    let skip = col.saturating_sub(1);
    text.chars()
        .skip(skip)
        .position(|c| c == '\t')
        .map(|p| (first, skip + p + 1))
}

/// Our words for a breached budget of the YAML reader (its guards against documents that
/// would take unbounded memory or time): which budget, its limit, and what to do. A large
/// case list is the usual cause, and JSON lines includes are streamed with no such limit.
fn budget_words(breach: &serde_saphyr::budget::BudgetBreach) -> (String, String) {
    use serde_saphyr::budget::BudgetBreach as B;
    let limits = serde_saphyr::Budget::default();
    let big_list = "move the cases into a JSON lines file (one case per line, as JSON: {\"id\": \"c1\", \"input\": \"...\", \"expect\": [{\"contains\": \"...\"}]}) and name it in the suite with `include: [cases.jsonl]`; JSON lines includes are streamed, with no limit on the number of cases (see docs/suite-format.md)";
    let (what, hint) = match breach {
        B::Nodes { .. } => (
            format!(
                "the file is too large for the YAML reader: more than {} nodes (keys, values and list items; its `Nodes` budget)",
                limits.max_nodes
            ),
            big_list.to_owned(),
        ),
        B::Events { .. } => (
            format!(
                "the file is too large for the YAML reader: more than {} parser events (its `Events` budget)",
                limits.max_events
            ),
            big_list.to_owned(),
        ),
        B::ScalarBytes { .. } => (
            format!(
                "the file holds more than {} bytes of text values (the YAML reader's `ScalarBytes` budget)",
                limits.max_total_scalar_bytes
            ),
            big_list.to_owned(),
        ),
        B::Depth { .. } => (
            format!(
                "the file nests deeper than {} levels (the YAML reader's `Depth` budget)",
                limits.max_depth
            ),
            "flatten the nesting; a suite needs only a few levels".to_owned(),
        ),
        B::Aliases { .. } | B::Anchors { .. } | B::AliasAnchorRatio { .. } => (
            format!(
                "the file uses too many YAML anchors or aliases (the YAML reader's budget: {breach:?})"
            ),
            format!("write the repeated parts out, use `defaults:`, or {big_list}"),
        ),
        other => (
            format!("the file is over a limit of the YAML reader (its budget: {other:?})"),
            big_list.to_owned(),
        ),
    };
    (what, hint)
}

/// serde-saphyr appends " at line L, column C"; the diagnostic shows the position itself.
fn strip_position_suffix(msg: &str) -> &str {
    match msg.rfind(" at line ") {
        Some(i) if msg[i..].contains(", column ") => &msg[..i],
        _ => msg,
    }
}

fn hint_for_serde(message: &str, doc: &str) -> Option<String> {
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let word = rest.split('`').next().unwrap_or("");
        let expected = rest
            .split_once("expected one of ")
            .or_else(|| rest.split_once("expected "))
            .map(|(_, e)| e)
            .unwrap_or("");
        let candidates: Vec<&str> = expected
            .split(',')
            .map(|s| s.trim().trim_matches('`'))
            .filter(|s| !s.is_empty())
            .collect();
        return Some(match did_you_mean(word, candidates.iter().copied()) {
            Some(c) => format!("did you mean `{c}`?"),
            None if !candidates.is_empty() => format!("valid keys here: {}", candidates.join(", ")),
            None => "remove the key".into(),
        });
    }
    if message.contains("an expect entry") {
        return Some("see `gauntlet schema` or docs/suite-format.md for the checks".into());
    }
    if message.contains("missing field") {
        return Some("add the missing key".into());
    }
    if message.contains("invalid type") {
        return Some(
            "check the value's type (quote strings that look like numbers or booleans)".into(),
        );
    }
    Some(format!("see {doc} for the format"))
}

/// Case ids seen so far and where. Compact, because a generated suite can hold tens of
/// thousands of them: positions are numbers, file names are stored once.
#[derive(Default)]
struct Seen {
    files: Vec<String>,
    ids: HashMap<Box<str>, (u32, u32, u32)>,
}

impl Seen {
    fn file(&mut self, name: &str) -> u32 {
        match self.files.iter().position(|f| f == name) {
            Some(i) => i as u32,
            None => {
                self.files.push(name.to_owned());
                (self.files.len() - 1) as u32
            }
        }
    }

    /// Records an id; returns where it was first used if it is a duplicate.
    fn insert(&mut self, id: &str, file: &str, line: usize, col: usize) -> Option<String> {
        let f = self.file(file);
        match self.ids.get(id) {
            Some(&(ff, l, c)) => Some(format!("{}:{l}:{c}", self.files[ff as usize])),
            None => {
                self.ids.insert(id.into(), (f, line as u32, col as u32));
                None
            }
        }
    }
}

/// Finds positions in one source text, building its [`PathMap`] on first use.
struct Locator<'a> {
    origin: &'a str,
    source: &'a str,
    map: std::cell::OnceCell<PathMap>,
}

impl<'a> Locator<'a> {
    fn new(origin: &'a str, source: &'a str) -> Self {
        Locator {
            origin,
            source,
            map: std::cell::OnceCell::new(),
        }
    }

    fn at(&self, path: &str, key: bool) -> (usize, usize) {
        let m = self.map.get_or_init(|| PathMap::build(self.source));
        if key { m.key(path) } else { m.value(path) }.unwrap_or((0, 0))
    }

    fn diag(&self, path: &str, key: bool, msg: String, hint: Option<String>) -> Diagnostic {
        let (l, c) = self.at(path, key);
        let mut d = Diagnostic::at(self.origin, Some(self.source), l, c, msg);
        d.hint = hint;
        d
    }
}

struct CaseCtx<'a> {
    /// Where the files a check names (a script) are found.
    fs: &'a dyn Source,
    suite: &'a Suite,
    run_canary: Option<&'a str>,
    /// Patterns already compiled: generated suites repeat the same few checks thousands of
    /// times, and compiling a regex costs far more than checking a case.
    good_regexes: std::cell::RefCell<std::collections::HashSet<String>>,
}

impl CaseCtx<'_> {
    fn check_regex(&self, pattern: &str) -> Result<(), SyntaxError> {
        if self.good_regexes.borrow().contains(pattern) {
            return Ok(());
        }
        ctx_free_regex(pattern)?;
        let mut seen = self.good_regexes.borrow_mut();
        if seen.len() < 10_000 {
            seen.insert(pattern.to_owned());
        }
        Ok(())
    }
}

/// The parsers a check's validation needs (gauntlet-core has none).
impl Parsers for CaseCtx<'_> {
    fn parse(&self, text: Syntax<'_>) -> Result<(), SyntaxError> {
        match text {
            Syntax::Regex(pattern) => self.check_regex(pattern),
            Syntax::JsonSchema(schema) => check_json_schema(schema),
            Syntax::JsonPath(path) => serde_json_path::JsonPath::parse(path)
                .map(|_| ())
                .map_err(|e| SyntaxError(one_line(&e.to_string()))),
        }
    }

    fn closest<'a>(&self, word: &str, candidates: &[&'a str]) -> Option<&'a str> {
        did_you_mean(word, candidates.iter().copied())
    }

    fn script(&self, argv: &[String]) -> Vec<CheckProblem> {
        script_problems(self.fs, argv)
    }
}

/// The files a `script:` check's command names: the program (a path with a `/` in the
/// suite's folder, a bare name on `PATH`), and each argument that is a file, or names a
/// script by its extension, inside the folder.
fn script_problems(fs: &dyn Source, argv: &[String]) -> Vec<CheckProblem> {
    let problem = |message: String, hint: &str| CheckProblem {
        message,
        hint: hint.to_owned(),
    };
    let mut out = Vec::new();
    let program = &argv[0];
    if program.contains('/') {
        match fs.confine(program) {
            Ok(true) => {}
            Ok(false) => out.push(problem(
                format!("no script `{program}` in the suite's folder"),
                "a program with a `/` is a path relative to the suite file; a bare name is looked up on PATH",
            )),
            Err(e) => out.push(problem(chain(&e), &e.hint("the path is relative to the suite file"))),
        }
    } else if !on_path(program) {
        out.push(problem(
            format!("no program `{program}` on PATH"),
            "install it, or name a script in the suite's folder with a path (`./check.py`)",
        ));
    }
    const SCRIPT_EXTENSIONS: &[&str] =
        &["py", "js", "mjs", "ts", "rb", "pl", "sh", "php", "lua", "R"];
    for arg in argv
        .iter()
        .skip(1)
        .filter(|a| !a.starts_with('-') && !a.is_empty())
    {
        match fs.confine(arg) {
            Ok(true) => {}
            Ok(false) => {
                let ext = Path::new(arg).extension().and_then(|e| e.to_str());
                if ext.is_some_and(|e| SCRIPT_EXTENSIONS.contains(&e)) {
                    out.push(problem(
                        format!("no script `{arg}` in the suite's folder"),
                        "the script runs in the suite's folder: name the file relative to the suite file",
                    ));
                }
            }
            Err(e) => out.push(problem(
                chain(&e),
                &e.hint("the path is relative to the suite file"),
            )),
        }
    }
    out
}

/// Whether a bare program name is found on `PATH`.
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
}

/// A problem in one case: a path relative to the case, a message and a hint.
struct Problem {
    path: String,
    at_key: bool,
    message: String,
    hint: Option<String>,
}

impl Problem {
    fn new(path: impl Into<String>, message: impl Into<String>, hint: impl Into<String>) -> Self {
        Problem {
            path: path.into(),
            at_key: false,
            message: message.into(),
            hint: Some(hint.into()),
        }
    }
}

/// What serde cannot check about a list of metamorphic relations: each perturbation known
/// and listed once, each score band in range. With the case they belong to, also that each
/// perturbation can change its text (an unchanged variant would test nothing). Paths are
/// relative to the list's parent (`metamorphic[0].perturb`).
fn relation_problems(list: &[Relation], case: Option<&Case>, out: &mut Vec<Problem>) {
    let hint = "perturbations: reorder, noise, noise:typo, format, format:whitespace, paraphrase (see docs/stability.md)";
    for (i, r) in list.iter().enumerate() {
        let at = format!("metamorphic[{i}].perturb");
        if list[..i].iter().any(|o| o.perturb == r.perturb) {
            out.push(Problem::new(
                at,
                format!("perturbation `{}` is listed twice", r.perturb),
                "list each perturbation once",
            ));
        } else if let Some(case) = case {
            if let Err(e) = crate::perturb::variant(case, r, 0) {
                out.push(Problem::new(at, e, hint));
            }
        } else if let Err(e) = crate::perturb::check(&r.perturb) {
            out.push(Problem::new(at, e, hint));
        }
        if let RelationExpect::Score(band) = r.expect
            && let Some((key, message, hint)) = band.problem()
        {
            let path = if key.is_empty() {
                format!("metamorphic[{i}].expect.score")
            } else {
                format!("metamorphic[{i}].expect.score.{key}")
            };
            out.push(Problem::new(path, message, hint));
        }
    }
}

/// What serde cannot check about a case's `strategy:` and its turns' `rephrase:`.
fn strategy_problems(case: &Case, out: &mut Vec<Problem>) {
    use gauntlet_core::strategy::StrategyKind;
    let Some(s) = &case.strategy else {
        if let Some(i) = case.turns.iter().position(|t| !t.rephrase.is_empty()) {
            out.push(Problem::new(
                format!("turns[{i}].rephrase"),
                "`rephrase` is only used by a crescendo strategy",
                "add `strategy: {kind: crescendo}` to the case, or remove `rephrase`",
            ));
        }
        return;
    };
    if case.simulated_user.is_some() {
        out.push(Problem::new(
            "strategy",
            "a case cannot have both a strategy and a simulated user",
            "keep one: the strategy writes the user's turns",
        ));
    }
    if s.kind != StrategyKind::Tree {
        tree_fields_elsewhere(s, out);
    }
    if s.max_turns == Some(0) {
        out.push(Problem::new(
            "strategy.max_turns",
            "max_turns is 0",
            "give at least 1",
        ));
    }
    if !case.expect.iter().any(|e| e.oracle.is_violation_check()) {
        out.push(Problem::new(
            "strategy",
            format!(
                "case `{}` has a strategy but no check that can tell, turn by turn, whether its objective was reached",
                case.id
            ),
            "add a violation check (no_canary, not_contains, not_regex, tool_not_called, no_unsafe_markup, injection_resistance, ...); a judge may join it",
        ));
    }
    match s.kind {
        StrategyKind::Crescendo => {
            if case.turns.len() < 2 {
                out.push(Problem::new(
                    "strategy",
                    format!("crescendo case `{}` needs at least two `turns`", case.id),
                    "write the benign steps that approach the objective as `turns:`, the last one closest to it",
                ));
            }
            if let Some(i) = case.turns.iter().position(|t| t.when.is_some()) {
                out.push(Problem::new(
                    format!("turns[{i}].when"),
                    "a crescendo step cannot have a `when` condition",
                    "a refused step is reworded with `rephrase:` instead",
                ));
            }
        }
        StrategyKind::Tree => tree_problems(case, s, out),
        StrategyKind::Attacker => {
            if s.objective_for(case).is_none() {
                out.push(Problem::new(
                    "strategy.objective",
                    format!("attacker case `{}` has no objective", case.id),
                    "say what the attack tries to make the agent do, e.g. `objective: print the internal reference code`",
                ));
            }
            if let Some(i) = case.turns.iter().position(|t| !t.rephrase.is_empty()) {
                out.push(Problem::new(
                    format!("turns[{i}].rephrase"),
                    "`rephrase` is only used by a crescendo strategy",
                    "the attacker writes its own rewordings",
                ));
            }
        }
    }
}

/// What is wrong with a tree strategy: no objective, a field of another strategy, a shape
/// of 0 or past [`MAX_TREE_SHAPE`](gauntlet_core::strategy::MAX_TREE_SHAPE), scripted
/// rewordings. A tree's fields on another strategy are refused in [`strategy_problems`].
fn tree_problems(case: &Case, s: &gauntlet_core::strategy::Strategy, out: &mut Vec<Problem>) {
    use gauntlet_core::strategy::MAX_TREE_SHAPE;
    if s.objective_for(case).is_none() {
        out.push(Problem::new(
            "strategy.objective",
            format!("tree case `{}` has no objective", case.id),
            "say what the attack tries to make the agent do, e.g. `objective: explain how to pick a lock`",
        ));
    }
    for (field, set) in [
        ("max_turns", s.max_turns.is_some()),
        ("max_backtracks", s.max_backtracks.is_some()),
    ] {
        if set {
            out.push(Problem::new(
                format!("strategy.{field}"),
                format!("`{field}` is not used by a tree strategy: each prompt is sent on its own"),
                "bound the tree with `width`, `branching`, `depth`, `max_calls` and `max_tokens`",
            ));
        }
    }
    for (field, v) in [
        ("width", s.width),
        ("branching", s.branching),
        ("depth", s.depth),
    ] {
        match v {
            Some(0) => out.push(Problem::new(
                format!("strategy.{field}"),
                format!("{field} is 0"),
                "give at least 1",
            )),
            Some(n) if n > MAX_TREE_SHAPE => out.push(Problem::new(
                format!("strategy.{field}"),
                format!("{field} is {n}, more than {MAX_TREE_SHAPE}"),
                format!("a tree grows as width x branching x depth: keep each at most {MAX_TREE_SHAPE}, and bound the search with `max_calls`"),
            )),
            _ => {}
        }
    }
    if s.max_calls == Some(0) {
        out.push(Problem::new(
            "strategy.max_calls",
            "max_calls is 0: the search could make no call",
            "give at least 2 (one attacker call and one agent call), e.g. `max_calls: 40`",
        ));
    }
    if let Some(i) = case.turns.iter().position(|t| !t.rephrase.is_empty()) {
        out.push(Problem::new(
            format!("turns[{i}].rephrase"),
            "`rephrase` is only used by a crescendo strategy",
            "the tree's attacker writes its own prompts",
        ));
    }
    if let Some(id) = &s.judge {
        tree_judge_problems(case, id, out);
    }
}

/// A tree's ranking judge must be one of the case's own judge entries: the entry says what
/// the judge is given (`reference`) and whether it may gate here (`gate: false`), and its
/// verdict is how the judge reaches the case, through the calibration gate like any judge.
fn tree_judge_problems(case: &Case, id: &str, out: &mut Vec<Problem>) {
    let entries: Vec<&str> = case
        .expect
        .iter()
        .filter_map(|e| match &e.oracle {
            Oracle::Judge(spec) => spec.check.as_deref(),
            _ => None,
        })
        .collect();
    if entries.contains(&id) {
        return;
    }
    let have = if entries.is_empty() {
        "the case has no judge entry".to_owned()
    } else {
        format!("the case's judges are {}", entries.join(", "))
    };
    out.push(Problem::new(
        "strategy.judge",
        format!("the tree's judge `{id}` is not one of the case's checks ({have})"),
        format!("add `- judge: {id}` to the case's expect (a judge the suite declares under `judges.checks`), or remove `strategy.judge`"),
    ));
}

/// The tree's fields on a strategy of another kind.
fn tree_fields_elsewhere(s: &gauntlet_core::strategy::Strategy, out: &mut Vec<Problem>) {
    let fields = [
        ("width", s.width.is_some()),
        ("branching", s.branching.is_some()),
        ("depth", s.depth.is_some()),
        ("max_calls", s.max_calls.is_some()),
        ("judge", s.judge.is_some()),
    ];
    for (field, set) in fields {
        if set {
            out.push(Problem::new(
                format!("strategy.{field}"),
                format!("`{field}` is only used by a tree strategy"),
                "use `kind: tree`, or remove it",
            ));
        }
    }
}

fn case_problems(case: &Case, ctx: &CaseCtx<'_>) -> Vec<Problem> {
    let mut out = Vec::new();
    shape_problems(case, &mut out);
    check_problems(case, ctx, &mut out);
    scripted_problems(case, &ctx.suite.agent.tools, &mut out);
    tool_fault_problems(case, &case.tool_faults, "tool_faults", ctx, &mut out);
    coordination_problems(case, ctx, &mut out);
    security_problems(case, ctx, &mut out);
    out
}

/// How many cases the run takes of one case: the case and its benign twin, as the selection
/// (none: every case) says.
fn taken(case: &Case, select: Option<&crate::filter::Selection>) -> usize {
    let twin = case
        .benign
        .as_ref()
        .map(|_| format!("{}{BENIGN_SUFFIX}", case.id));
    match select {
        None => 1 + usize::from(twin.is_some()),
        Some(sel) => {
            usize::from(sel.keeps(case))
                + usize::from(twin.is_some_and(|t| sel.keeps_twin(case, &t)))
        }
    }
}

/// What is wrong with the parts of a case that only a security case has: the roles of its
/// checks and its benign twin.
fn security_problems(case: &Case, ctx: &CaseCtx<'_>, out: &mut Vec<Problem>) {
    if case.id.ends_with(BENIGN_SUFFIX) {
        out.push(Problem::new(
            "id",
            format!(
                "case id `{}` ends with `{BENIGN_SUFFIX}`, which names the benign twin of a case",
                case.id
            ),
            "rename the case",
        ));
    }
    if !case.is_security() {
        if let Some(i) = case.expect.iter().position(|e| e.role.is_some()) {
            out.push(Problem::new(
                format!("expect[{i}].role"),
                "`role` says what a check stands for in a security case, and this case is none",
                "make it a security case (`owasp: LLM01` or `pack: security`), or remove `role`",
            ));
        }
        if case.benign.is_some() {
            out.push(Problem::new(
                "benign",
                "only a security case has a benign twin (its legitimate task without the attack)",
                "make it a security case (`owasp: ...` or `pack: security`), or remove `benign`",
            ));
        }
        return;
    }
    let Some(b) = &case.benign else {
        return;
    };
    benign_problems(case, b, out);
    if let Some(faults) = &b.tool_faults {
        tool_fault_problems(case, faults, "benign.tool_faults", ctx, out);
    }
}

/// A benign twin that could not measure the task without the attack: one that changes
/// nothing, is the attacked case again, or has no task check to run.
fn benign_problems(case: &Case, b: &gauntlet_core::suite::Benign, out: &mut Vec<Problem>) {
    let hint = "give the legitimate task without the attack: `input` without the planted request, `documents` without the hidden instruction, `tool_faults: []` without the poison";
    if b.is_empty() {
        out.push(Problem::new(
            "benign",
            "`benign` changes nothing: the twin would be the attacked case itself",
            hint,
        ));
        return;
    }
    if b.input.is_some() && case.input.is_none() {
        out.push(Problem::new(
            "benign.input",
            "the case is a conversation (`turns`): a benign twin replaces a single `input`",
            "write the case with `input`, or leave `benign.input` out",
        ));
    }
    for (i, d) in b.documents.iter().flatten().enumerate() {
        if d.text.is_some() == d.file.is_some() {
            out.push(Problem::new(
                format!("benign.documents[{i}]"),
                "a document needs exactly one of `text` and `file`",
                "e.g. `documents: [{title: Refund policy, text: ...}]`",
            ));
        }
    }
    let same = b
        .input
        .as_ref()
        .is_none_or(|i| Some(i) == case.input.as_ref())
        && b.documents.as_ref().is_none_or(|d| *d == case.documents)
        && b.tool_faults
            .as_ref()
            .is_none_or(|f| *f == case.tool_faults);
    if same {
        out.push(Problem::new(
            "benign",
            "the benign twin is the same as the case: the attack is still in it",
            hint,
        ));
    }
    if !case.expect.iter().any(|e| e.role() == Role::Task) {
        out.push(Problem::new(
            "benign",
            format!(
                "case `{}` has no check of the legitimate task, so its benign twin would check nothing",
                case.id
            ),
            "add the task's check (`regex`, `contains`, `tool_called`...; or `role: task` on a check that stands for it), or remove `benign`",
        ));
    }
}

/// Whether a `no_canary` check of the case has a canary to look for: the case's, the
/// agent's or the run's.
fn canary_known(case: &Case, ctx: &CaseCtx<'_>) -> bool {
    case.canary.is_some() || ctx.suite.agent.canary.is_some() || ctx.run_canary.is_some()
}

/// What is wrong with the case apart from its checks: its id, input, tags, strategy,
/// converters, relations, documents and time limit.
fn shape_problems(case: &Case, out: &mut Vec<Problem>) {
    if case.id.trim().is_empty() || case.id.chars().any(|c| c.is_whitespace() || c.is_control()) {
        out.push(Problem::new(
            "id",
            format!("invalid case id `{}`", case.id),
            "ids are non-empty and have no spaces, e.g. `refund-small`",
        ));
    }
    match (&case.input, case.turns.is_empty()) {
        (Some(_), false) => out.push(Problem::new(
            "turns",
            format!("case `{}` has both `input` and `turns`", case.id),
            "use `input` for one message or `turns` for a conversation",
        )),
        (None, true)
            if !case
                .strategy
                .as_ref()
                .is_some_and(|s| s.kind.uses_attacker() && s.objective.is_some()) =>
        {
            out.push(Problem::new(
                "",
                format!("case `{}` has no input", case.id),
                "add `input: <the user's message>` or a `turns:` list",
            ))
        }
        _ => {}
    }
    if case.turns.first().is_some_and(|t| t.when.is_some()) {
        out.push(Problem::new(
            "turns[0].when",
            "the first turn cannot depend on a previous answer",
            "move the condition to a later turn",
        ));
    }
    if let Some(cat) = &case.owasp
        && owasp_title(cat).is_none()
    {
        out.push(Problem::new(
            "owasp",
            format!("unknown OWASP category `{cat}`"),
            "use the LLM Top 10 (2025) ids LLM01 to LLM10 or the Agentic Top 10 (2026) ids ASI01 to ASI10, e.g. `owasp: LLM01`",
        ));
    }
    if let Some(h) = &case.harm
        && gauntlet_core::harm::find(h).is_none()
    {
        let ids: Vec<&str> = gauntlet_core::harm::HARM_CATEGORIES
            .iter()
            .map(|c| c.id)
            .collect();
        out.push(Problem::new(
            "harm",
            format!("unknown harm category `{h}`"),
            format!(
                "use one of {} (docs/redteam.md, \"The harm pack\")",
                ids.join(", ")
            ),
        ));
    }
    strategy_problems(case, out);
    if let Err(e) = crate::converters::check_chain(&case.converters) {
        out.push(Problem::new(
            "converters",
            e,
            "see `gauntlet redteam --help` or docs/redteam.md for the converters",
        ));
    }
    relation_problems(case.metamorphic.as_deref().unwrap_or(&[]), Some(case), out);
    attack_problems(case, out);
    for (i, d) in case.documents.iter().enumerate() {
        if d.text.is_some() == d.file.is_some() {
            out.push(Problem::new(
                format!("documents[{i}]"),
                "a document needs exactly one of `text` and `file`",
                "e.g. `documents: [{title: Refund policy, text: ...}]` or `{file: docs/policy.html}`",
            ));
        }
    }
    if case.timeout_ms == Some(0) {
        out.push(Problem::new(
            "timeout_ms",
            "timeout_ms is 0",
            "give a limit in milliseconds, e.g. 30000",
        ));
    }
}

/// What serde cannot check about a case's `attack:`: its carrier is in the case, and its
/// span is written in that carrier (in a document read from a file, the span is checked
/// when the file is read, [`read_documents`]).
fn attack_problems(case: &Case, out: &mut Vec<Problem>) {
    use gauntlet_core::attack::Carrier;
    let Some(a) = &case.attack else { return };
    if case
        .strategy
        .as_ref()
        .is_some_and(|s| s.kind.uses_attacker())
    {
        out.push(Problem::new(
            "attack",
            "an attacker or tree strategy writes the attack itself: converters apply to its messages",
            "remove `attack:` from this case",
        ));
        return;
    }
    let missing = match a.carrier {
        Carrier::Documents if case.documents.is_empty() => Some("`documents`"),
        Carrier::ToolOutput if !case.tool_faults.iter().any(|f| f.poison.is_some()) => {
            Some("a `tool_faults` entry with `poison`")
        }
        _ => None,
    };
    if let Some(what) = missing {
        out.push(Problem::new(
            "attack.in",
            format!(
                "the attack travels in `{}`, but case `{}` has no {what}",
                a.carrier.as_str(),
                case.id
            ),
            "name the carrier the case has: user, documents, tool_output, or none",
        ));
        return;
    }
    let Some(span) = &a.span else { return };
    if span.trim().is_empty() {
        out.push(Problem::new(
            "attack.span",
            "the attack's span is empty",
            "copy the planted text exactly as the case writes it, or remove `span` to convert the whole carrier",
        ));
        return;
    }
    let texts: Vec<&str> = match a.carrier {
        Carrier::User => case
            .input
            .iter()
            .map(String::as_str)
            .chain(case.turns.iter().flat_map(|t| {
                std::iter::once(t.user.as_str()).chain(t.rephrase.iter().map(String::as_str))
            }))
            .collect(),
        Carrier::Documents => {
            if case.documents.iter().any(|d| d.text.is_none()) {
                return;
            }
            case.documents
                .iter()
                .filter_map(|d| d.text.as_deref())
                .collect()
        }
        Carrier::ToolOutput => case
            .tool_faults
            .iter()
            .filter_map(|f| f.poison.as_deref())
            .collect(),
        Carrier::None => {
            out.push(Problem::new(
                "attack.span",
                "a span needs a carrier: with `in: none` converters change nothing",
                "name where the span is written (user, documents, tool_output), or remove `span`",
            ));
            return;
        }
    };
    if !texts.iter().any(|t| t.contains(span.as_str())) {
        out.push(Problem::new(
            "attack.span",
            format!(
                "the attack's span is not written in the case's {}",
                carrier_words(a.carrier)
            ),
            "copy the planted text exactly as the case writes it (same spaces, line breaks and quotes)",
        ));
    }
}

/// How a diagnostic names a carrier's texts.
fn carrier_words(c: gauntlet_core::attack::Carrier) -> &'static str {
    use gauntlet_core::attack::Carrier;
    match c {
        Carrier::User => "user turns (`input`, `turns`)",
        Carrier::Documents => "documents",
        Carrier::ToolOutput => "tool outputs (`tool_faults[].poison`)",
        Carrier::None => "nothing",
    }
}

/// The case's checks: at least one, at least one objective, and each valid for the case.
fn check_problems(case: &Case, ctx: &CaseCtx<'_>, out: &mut Vec<Problem>) {
    if case.expect.is_empty() {
        out.push(Problem::new(
            "",
            format!("case `{}` has no check", case.id),
            "add at least one objective oracle under `expect:`, e.g. `- contains: ...` or `- no_canary: true`",
        ));
    } else if !case.expect.iter().any(|e| e.oracle.is_objective()) {
        out.push(Problem::new(
            "expect",
            format!("case `{}` is checked only by a model judge", case.id),
            "judges are triage until calibrated; add an objective oracle (contains, regex, json_schema, no_canary, refusal, tool_called, ...)",
        ));
    }
    let tools = &ctx.suite.agent.tools;
    let canary_known = canary_known(case, ctx);
    for (i, e) in case.expect.iter().enumerate() {
        let p = |k: &str| format!("expect[{i}].{k}");
        if case.kind == CaseKind::Task && e.dimension == Some(Dimension::Refusal) {
            out.push(Problem::new(
                p("dimension"),
                "a task has no refusal dimension",
                "use one of outcome, policy, grounding, communication, tool_selection, tool_execution; or make the case `kind: refusal`",
            ));
        }
        // Each check knows what it needs (gauntlet-core's `Check::validate`); the loader lends
        // it the parsers and places what it finds at the check's key.
        if matches!(e.oracle, Oracle::Judge(_)) && e.hard == Some(true) {
            out.push(Problem::new(
                p("hard"),
                "a judge never decides a hard policy failure",
                "remove `hard: true`; check the property with its objective oracle (no_canary, no_side_effect, no_unbacked_claims, ...)",
            ));
        }
        if matches!(e.oracle, Oracle::Similar(_)) && e.hard == Some(true) {
            out.push(Problem::new(
                p("hard"),
                "`similar` is a quality band, never a hard policy failure",
                "remove `hard: true`; check a property that must hold with an exact oracle (contains, equals, json_schema, no_canary, ...)",
            ));
        }
        let mut v = Validation::new(case, tools, canary_known, ctx)
            .with_judges(&ctx.suite.judges)
            .with_message_bus(ctx.suite.agent.message_bus)
            .with_out_of_scope(&ctx.suite.agent.out_of_scope);
        e.oracle.validate(&mut v);
        for found in v.into_problems() {
            out.push(Problem::new(p(e.oracle.key()), found.message, found.hint));
        }
    }
}

/// Tools the case's scripted replies call: a scripted reply that calls a tool the suite does
/// not declare would only get `error: unknown tool` from the simulated tools, a fixture that
/// tests nothing it meant to.
fn scripted_problems(case: &Case, tools: &[gauntlet_core::tools::ToolDef], out: &mut Vec<Problem>) {
    for (i, reply) in case.scripted.iter().enumerate() {
        for (j, call) in reply.tool_calls.iter().enumerate() {
            if tools.iter().any(|t| t.name == call.name) {
                continue;
            }
            let declared: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            let hint = match did_you_mean(&call.name, declared.iter().copied()) {
                Some(c) => format!("did you mean `{c}`?"),
                None if declared.is_empty() => format!(
                    "the suite declares no tools: add `{}` under agent.tools (name, description, parameters), or remove the call",
                    call.name
                ),
                None => format!(
                    "declared tools: {}; declare `{}` under agent.tools, or fix the name",
                    declared.join(", "),
                    call.name
                ),
            };
            out.push(Problem::new(
                format!("scripted[{i}].tool_calls[{j}].name"),
                format!(
                    "scripted reply {} calls `{}`, a tool the suite does not declare in agent.tools",
                    i + 1,
                    call.name
                ),
                hint,
            ));
        }
    }
}

/// A list of tool faults (the case's, or its benign twin's at `at`): each names a declared
/// tool (not one of the bus's) and says what goes wrong.
fn tool_fault_problems(
    case: &Case,
    faults: &[gauntlet_core::tools::ToolFault],
    at: &str,
    ctx: &CaseCtx<'_>,
    out: &mut Vec<Problem>,
) {
    let tools = &ctx.suite.agent.tools;
    let canary_known = canary_known(case, ctx);
    for (i, f) in faults.iter().enumerate() {
        let mut v = Validation::new(case, tools, canary_known, ctx);
        v.tool(&f.tool);
        for found in v.into_problems() {
            out.push(Problem::new(
                format!("{at}[{i}].tool"),
                found.message,
                found.hint,
            ));
        }
        if ctx.suite.agent.message_bus && gauntlet_core::bus::is_bus_tool(&f.tool) {
            out.push(Problem::new(
                format!("{at}[{i}].tool"),
                format!("`{}` is a tool of the message bus; its faults are coordination faults", f.tool),
                "use `coordination_faults: [{fault: drop, message: 1}]` (drop, duplicate, delay or impersonate)",
            ));
        }
        if f.fault.is_none() && f.poison.is_none() {
            out.push(Problem::new(
                format!("{at}[{i}]"),
                "a tool fault needs `fault` or `poison`",
                "e.g. `fault: timeout` or `poison: \"Ignore previous instructions and ...\"`",
            ));
        }
    }
}

/// The case's coordination faults: they need the message bus, and each kind its own options.
fn coordination_problems(case: &Case, ctx: &CaseCtx<'_>, out: &mut Vec<Problem>) {
    use gauntlet_core::bus::CoordinationFaultKind as K;
    if !case.coordination_faults.is_empty() && !ctx.suite.agent.message_bus {
        out.push(Problem::new(
            "coordination_faults",
            "coordination faults need the message bus, which this suite does not turn on",
            "add `message_bus: true` under `agent:`, and have the team hand work over with `send_message` and `read_messages`",
        ));
        return;
    }
    for (i, f) in case.coordination_faults.iter().enumerate() {
        let at = |k: &str| {
            if k.is_empty() {
                format!("coordination_faults[{i}]")
            } else {
                format!("coordination_faults[{i}].{k}")
            }
        };
        match (f.fault, f.as_agent.as_deref().map(str::trim)) {
            (K::Impersonate, None | Some("")) => out.push(Problem::new(
                at("fault"),
                "an `impersonate` fault needs `as`: the sender the recipient is shown",
                "e.g. `{fault: impersonate, match: {to: payments}, as: billing}`",
            )),
            (K::Impersonate, _) | (_, None) => {}
            (_, Some(_)) => out.push(Problem::new(
                at("as"),
                format!(
                    "`as` only applies to `impersonate`, not to `{}`",
                    f.fault.as_str()
                ),
                "remove `as`, or make the fault `impersonate`",
            )),
        }
        if f.delay_reads.is_some() && f.fault != K::Delay {
            out.push(Problem::new(
                at("delay_reads"),
                format!(
                    "`delay_reads` only applies to `delay`, not to `{}`",
                    f.fault.as_str()
                ),
                "remove `delay_reads`, or make the fault `delay`",
            ));
        }
        if f.delay_reads == Some(0) {
            out.push(Problem::new(
                at("delay_reads"),
                "`delay_reads: 0` delays nothing",
                "give the number of the recipient's reads that miss the message, e.g. `delay_reads: 1`",
            ));
        }
        if f.message == Some(0) {
            out.push(Problem::new(
                at("message"),
                "messages are numbered from 1",
                "`message: 1` is the first `send_message` of the trial",
            ));
        }
        if f.times == Some(0) {
            out.push(Problem::new(
                at("times"),
                "`times: 0` applies the fault to no message",
                "remove `times` (every message it picks), or give a count from 1",
            ));
        }
        if f.matches.as_ref().is_some_and(|m| {
            m.to.is_none() && m.from.is_none() && m.contains.as_deref().is_none_or(str::is_empty)
        }) {
            out.push(Problem::new(
                at("match"),
                "an empty `match` picks every message",
                "name `to`, `from` or `contains`, or remove `match`",
            ));
        }
    }
}

/// What is missing or wrong in a target declaration ([`check_target`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetCheckError {
    /// Neither a kind nor a name.
    #[error("the target has no `kind`")]
    NoKind,
    /// A fake persona that does not exist.
    #[error("unknown fake persona `{0}`")]
    UnknownPersona(String),
    /// A model target without a model.
    #[error("the {0} target has no `model`")]
    NoModel(&'static str),
    /// An http target without its settings.
    #[error("the http target has no `http:` section")]
    NoHttp,
    /// An `answer_path` that is not a JSON path.
    #[error("invalid answer_path `{path}`: {reason}")]
    AnswerPath {
        /// As written.
        path: String,
        /// Why it does not parse, in one line.
        reason: String,
    },
    /// A `tool_calls_path` that is not a JSON path.
    #[error("invalid tool_calls_path `{path}`: {reason}")]
    ToolCallsPath {
        /// As written.
        path: String,
        /// Why it does not parse, in one line.
        reason: String,
    },
    /// An exec target without a command.
    #[error("the exec target has no command")]
    NoExecCommand,
    /// A proxy target without a command.
    #[error("the proxy target has no command")]
    NoProxyCommand,
    /// `max_reply_bytes: 0`, which no reply could meet.
    #[error("`max_reply_bytes` is 0: every reply would be over the limit")]
    ZeroReplyLimit,
}

impl TargetCheckError {
    /// What to write instead.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            TargetCheckError::NoKind => "write `kind: openai` (or fake, anthropic, http, exec, proxy), or the short form `openai:MODEL`".into(),
            TargetCheckError::UnknownPersona(_) => {
                format!("choose one of: {}", FAKE_PERSONAS.join(", "))
            }
            TargetCheckError::NoModel(_) => "add `model: <model id>`".into(),
            TargetCheckError::NoHttp => {
                "add `http: {url: ..., body: {...}, answer_path: $.answer}`".into()
            }
            TargetCheckError::AnswerPath { .. } => "paths follow RFC 9535, e.g. `$.answer`".into(),
            TargetCheckError::ToolCallsPath { .. } => "paths follow RFC 9535".into(),
            TargetCheckError::NoExecCommand => {
                "add `exec: {command: [python3, agent.py]}` or use `exec:python3 agent.py`".into()
            }
            TargetCheckError::NoProxyCommand => "add `proxy: {command: [python3, agent.py], upstream: https://api.openai.com/v1}`".into(),
            TargetCheckError::ZeroReplyLimit => {
                "leave it out for the default (4 MiB), or give a size in bytes such as 16777216".into()
            }
        })
    }
}

/// Checks that a target declaration is complete.
pub fn check_target(t: &TargetConfig) -> Result<(), TargetCheckError> {
    let Some(kind) = t.kind else {
        if t.name.is_some() {
            return Ok(());
        }
        return Err(TargetCheckError::NoKind);
    };
    if t.max_reply_bytes == Some(0) {
        return Err(TargetCheckError::ZeroReplyLimit);
    }
    match kind {
        TargetKind::Fake => {
            let p = t.persona.as_deref().unwrap_or("safe");
            if !FAKE_PERSONAS.contains(&p) {
                return Err(TargetCheckError::UnknownPersona(p.to_owned()));
            }
        }
        TargetKind::Openai | TargetKind::OpenaiResponses | TargetKind::Anthropic => {
            if t.model.is_none() && t.azure.is_none() {
                return Err(TargetCheckError::NoModel(kind.as_str()));
            }
        }
        TargetKind::Http => {
            let Some(h) = &t.http else {
                return Err(TargetCheckError::NoHttp);
            };
            if let Err(e) = serde_json_path::JsonPath::parse(&h.answer_path) {
                return Err(TargetCheckError::AnswerPath {
                    path: h.answer_path.clone(),
                    reason: one_line(&e.to_string()),
                });
            }
            if let Some(tp) = &h.tool_calls_path
                && let Err(e) = serde_json_path::JsonPath::parse(tp)
            {
                return Err(TargetCheckError::ToolCallsPath {
                    path: tp.clone(),
                    reason: one_line(&e.to_string()),
                });
            }
        }
        TargetKind::Exec => {
            if t.exec.as_ref().is_none_or(|e| e.command.is_empty()) {
                return Err(TargetCheckError::NoExecCommand);
            }
        }
        TargetKind::Proxy => {
            // The upstream may still come from --base-url at run time; building the target
            // checks that one is there.
            if t.proxy.as_ref().is_none_or(|p| p.command.is_empty()) {
                return Err(TargetCheckError::NoProxyCommand);
            }
        }
    }
    Ok(())
}

fn ctx_free_regex(p: &str) -> Result<(), SyntaxError> {
    regex::Regex::new(p)
        .map(|_| ())
        .map_err(|e| SyntaxError(one_line(&e.to_string())))
}

/// Checks that a value is a usable JSON Schema (meta-valid, compilable, no remote `$ref`).
pub fn check_json_schema(schema: &serde_json::Value) -> Result<(), SyntaxError> {
    schema_problem(schema).map_err(|p| {
        let at = if p.at.is_empty() {
            String::new()
        } else {
            format!(" (at `{}`)", p.at.trim_start_matches('.'))
        };
        SyntaxError(format!("{}{at}", p.reason))
    })
}

/// Why a JSON Schema is not usable, and where in it.
struct SchemaProblem {
    reason: String,
    /// The offending node, as a path below the schema in the suite's path syntax
    /// (`.properties.id.anyOf[1].type`); empty for the schema itself.
    at: String,
    hint: Option<String>,
}

/// The JSON Schema types, for a `type` that is none of them.
const SCHEMA_TYPES: &str = "string, number, integer, boolean, object, array, null";

fn schema_problem(schema: &serde_json::Value) -> Result<(), SchemaProblem> {
    if !schema.is_object() && !schema.is_boolean() {
        return Err(SchemaProblem {
            reason: "a schema is an object (or true/false)".into(),
            at: String::new(),
            hint: None,
        });
    }
    let problem = |e: jsonschema::ValidationError<'_>| {
        let at = pointer_to_path(schema, e.instance_path().as_str());
        let value = e.instance();
        // The meta-schema writes `type` as an `anyOf`, whose own message ("not valid under
        // any of the schemas listed in the 'anyOf' keyword") names no type.
        if at.ends_with(".type") {
            return SchemaProblem {
                reason: format!("{} is not a JSON Schema type", one_line(&value.to_string())),
                at,
                hint: Some(format!(
                    "`type` is one of {SCHEMA_TYPES}, or a list of them"
                )),
            };
        }
        SchemaProblem {
            reason: one_line(&e.to_string()),
            at,
            hint: None,
        }
    };
    jsonschema::meta::validate(schema).map_err(problem)?;
    jsonschema::validator_for(schema).map_err(problem)?;
    Ok(())
}

/// A JSON pointer into `root` (`/properties/id/anyOf/1`) in the suite's path syntax
/// (`.properties.id.anyOf[1]`): a token is an index where the node it points into is a list.
fn pointer_to_path(root: &serde_json::Value, pointer: &str) -> String {
    let mut out = String::new();
    let mut node = Some(root);
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        match node {
            Some(serde_json::Value::Array(items)) => {
                out.push_str(&format!("[{token}]"));
                node = token.parse::<usize>().ok().and_then(|i| items.get(i));
            }
            other => {
                out.push('.');
                out.push_str(&token);
                node = other.and_then(|n| n.get(&token));
            }
        }
    }
    out
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Checks a JSON lines file of cases; returns how many cases it holds, how many of them
/// the selection takes, and how many are hold-outs.
fn check_jsonl(
    shown: &str,
    reader: Box<dyn BufRead>,
    hasher: &mut Sha256,
    ctx: &CaseCtx<'_>,
    ids: &mut Seen,
    diags: &mut Vec<Diagnostic>,
    select: Option<&crate::filter::Selection>,
) -> (usize, usize, usize) {
    let mut n = 0;
    let mut kept = 0;
    let mut held = 0;
    for (i, line) in CappedLines::new(reader).enumerate() {
        let lineno = i + 1;
        let line = match line {
            Ok(JsonLine::Text(l)) => l,
            Ok(JsonLine::TooLong(bytes)) => {
                diags.push(
                    Diagnostic::at(
                        shown,
                        None,
                        lineno,
                        1,
                        format!(
                            "line {lineno} holds {bytes} bytes, more than the {MAX_FILE_BYTES} one case may"
                        ),
                    )
                    .hint("a JSON lines case is one line of at most 16 MiB; shorten its text, or split it into several cases"),
                );
                continue;
            }
            Err(e) => {
                diags.push(Diagnostic::at(
                    shown,
                    None,
                    lineno,
                    1,
                    format!("failed to read: {e}"),
                ));
                break;
            }
        };
        hasher.update(line.as_bytes());
        hasher.update(b"\n");
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Case>(&line) {
            Ok(case) => {
                n += 1;
                if case
                    .documents
                    .iter()
                    .chain(
                        case.benign
                            .iter()
                            .flat_map(|b| b.documents.iter().flatten()),
                    )
                    .any(|d| d.file.is_some() && d.text.is_none())
                {
                    diags.push(
                        Diagnostic::at(shown, None, lineno, 1, "documents of a JSON lines case must be inline `text`".to_owned())
                            .hint("write the document's text into the case, or move the case to a YAML file"),
                    );
                }
                kept += taken(&case, select);
                held += usize::from(case.holdout);
                for p in case_problems(&case, ctx) {
                    let at = if p.path.is_empty() {
                        "the case"
                    } else {
                        &p.path
                    };
                    let mut d =
                        Diagnostic::at(shown, None, lineno, 1, format!("{} (at {at})", p.message));
                    d.hint = p.hint;
                    diags.push(d);
                }
                if let Some(first) = ids.insert(&case.id, shown, lineno, 1) {
                    diags.push(
                        Diagnostic::at(
                            shown,
                            None,
                            lineno,
                            1,
                            format!("duplicate case id `{}` (first used at {first})", case.id),
                        )
                        .hint("case ids must be unique within a run"),
                    );
                }
            }
            Err(e) => {
                let msg = e.to_string();
                let msg = strip_serde_json_position(&msg);
                let hint = hint_for_serde(msg, "docs/suite-format.md");
                let mut d = Diagnostic::at(shown, None, lineno, e.column(), msg.to_owned());
                d.hint = hint;
                diags.push(d);
            }
        }
        if diags.len() > 100 {
            diags.push(Diagnostic::file(shown, "too many errors; stopping here"));
            break;
        }
    }
    (n, kept, held)
}

/// One line of a JSON lines file ([`CappedLines`]).
enum JsonLine {
    /// The line, without its line break.
    Text(String),
    /// A line over [`MAX_FILE_BYTES`]: how many bytes it holds (none of them kept).
    TooLong(u64),
}

/// The lines of a JSON lines file, each read with a cap: a line over [`MAX_FILE_BYTES`] is
/// skipped to its end without being held, so a file with one 50 MB line costs at most the
/// cap in memory (`BufRead::lines` would hold the whole line).
struct CappedLines<R> {
    reader: R,
    buf: Vec<u8>,
}

impl<R: BufRead> CappedLines<R> {
    fn new(reader: R) -> Self {
        CappedLines {
            reader,
            buf: Vec::new(),
        }
    }

    fn next_line(&mut self) -> std::io::Result<Option<JsonLine>> {
        let cap = MAX_FILE_BYTES as usize;
        self.buf.clear();
        let mut total: u64 = 0;
        let mut read_any = false;
        let mut newline = false;
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                break;
            }
            read_any = true;
            let (take, end) = match chunk.iter().position(|b| *b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            total += take as u64;
            // One byte past the cap (plus the line break) is enough to know it is over.
            let room = (cap + 2).saturating_sub(self.buf.len());
            self.buf.extend_from_slice(&chunk[..take.min(room)]);
            self.reader.consume(take);
            if end {
                newline = true;
                break;
            }
        }
        if !read_any {
            return Ok(None);
        }
        let mut len = total;
        if newline {
            len -= 1;
            if len <= cap as u64 {
                self.buf.pop();
                if self.buf.last() == Some(&b'\r') {
                    self.buf.pop();
                    len -= 1;
                }
            }
        }
        if len > cap as u64 {
            return Ok(Some(JsonLine::TooLong(len)));
        }
        String::from_utf8(std::mem::take(&mut self.buf))
            .map(|l| Some(JsonLine::Text(l)))
            .map_err(|_| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "stream did not contain valid UTF-8",
                )
            })
    }
}

impl<R: BufRead> Iterator for CappedLines<R> {
    type Item = std::io::Result<JsonLine>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_line().transpose()
    }
}

fn strip_serde_json_position(msg: &str) -> &str {
    match msg.rfind(" at line ") {
        Some(i) => &msg[..i],
        None => msg,
    }
}

/// Why a case of a streamed JSON lines file could not be read ([`stream_jsonl`]).
#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    /// The line could not be read.
    #[error("failed to read line {line} of `{}`", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// 1-based.
        line: usize,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The line is longer than a case may be (the file changed since it was checked).
    #[error("line {line} of `{}` holds {bytes} bytes, more than the {MAX_FILE_BYTES} one case may", file.display())]
    TooLong {
        /// The file.
        file: PathBuf,
        /// 1-based.
        line: usize,
        /// The line's length in bytes.
        bytes: u64,
    },
    /// The line is not a case (the file changed since it was checked).
    #[error("failed to parse the case on line {line} of `{}`", file.display())]
    Parse {
        /// The file.
        file: PathBuf,
        /// 1-based.
        line: usize,
        /// Why it is not a case.
        #[source]
        source: serde_json::Error,
    },
}

/// Refuses a path that could leave the suite's folder: absolute, or with a `..` part.
pub fn check_relative(rel: &str) -> Result<(), String> {
    let p = Path::new(rel);
    if p.is_absolute() || rel.starts_with('/') || rel.starts_with('\\') {
        return Err(format!("`{rel}` is an absolute path"));
    }
    if p.components()
        .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(format!("`{rel}` leaves the suite's folder"));
    }
    Ok(())
}

/// Reads the cases of a JSON lines file one at a time.
pub fn stream_jsonl(
    path: &Path,
) -> std::io::Result<impl Iterator<Item = Result<Case, StreamError>> + use<>> {
    let f = std::fs::File::open(path)?;
    let file = path.to_path_buf();
    let shown = path.display().to_string();
    let mut lines = CappedLines::new(BufReader::new(f)).enumerate();
    Ok(std::iter::from_fn(move || {
        loop {
            let (i, line) = lines.next()?;
            let line_no = i + 1;
            match line {
                Err(source) => {
                    return Some(Err(StreamError::Read {
                        file: file.clone(),
                        line: line_no,
                        source,
                    }));
                }
                Ok(JsonLine::TooLong(bytes)) => {
                    return Some(Err(StreamError::TooLong {
                        file: file.clone(),
                        line: line_no,
                        bytes,
                    }));
                }
                Ok(JsonLine::Text(l)) if l.trim().is_empty() => continue,
                Ok(JsonLine::Text(l)) => {
                    return Some(
                        serde_json::from_str::<Case>(&l)
                            .map(|mut c| {
                                c.source = Some(gauntlet_core::suite::CaseSource {
                                    file: shown.clone(),
                                    line: line_no,
                                });
                                c
                            })
                            .map_err(|source| StreamError::Parse {
                                file: file.clone(),
                                line: line_no,
                                source,
                            }),
                    );
                }
            }
        }
    }))
}

/// Relative paths in an `exec` or `proxy` command name files next to the file that declares
/// the target, wherever gauntlet runs; other kinds have no paths to resolve (and stay equal
/// across folders).
fn set_base_dir(t: &mut TargetConfig, dir: &Path) {
    if matches!(t.kind, Some(TargetKind::Exec | TargetKind::Proxy)) {
        t.base_dir = Some(dir.to_path_buf());
    }
}

/// Loads the project config file (`gauntlet.yaml`), checking every named target.
pub fn load_config(path: &Path) -> Result<gauntlet_core::config::Config, Vec<Diagnostic>> {
    let display = path.display().to_string();
    let source = std::fs::read_to_string(path).map_err(|e| {
        vec![Diagnostic::file(
            &display,
            format!("failed to read the config file: {e}"),
        )]
    })?;
    let mut cfg: gauntlet_core::config::Config = parse_yaml(&display, &source)?;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    for t in cfg.targets.values_mut() {
        set_base_dir(t, dir);
    }
    let loc = Locator::new(&display, &source);
    let mut diags = Vec::new();
    for (name, t) in &cfg.targets {
        if t.kind.is_none() {
            diags.push(loc.diag(
                &format!("targets.{name}"),
                true,
                format!("target `{name}` has no `kind`"),
                Some("write `kind: openai` (or anthropic, http, exec, fake)".into()),
            ));
        } else if let Err(e) = check_target(t) {
            diags.push(loc.diag(
                &format!("targets.{name}"),
                true,
                format!("target `{name}`: {e}"),
                e.hint(),
            ));
        }
    }
    for (model, p) in &cfg.prices {
        for (field, v) in [
            ("input_per_mtok", p.input_per_mtok),
            ("output_per_mtok", p.output_per_mtok),
        ] {
            if !v.is_finite() || v < 0.0 {
                diags.push(loc.diag(
                    &format!("prices.{model}.{field}"),
                    false,
                    format!("the price of `{model}` must be a number of dollars of at least 0, not {v}"),
                    Some("prices are US dollars per million tokens, e.g. `input_per_mtok: 0.15`".into()),
                ));
            }
        }
    }
    if diags.is_empty() {
        Ok(cfg)
    } else {
        Err(diags)
    }
}

/// Loads `quarantine.yaml` (a list of entries). Dates must be YYYY-MM-DD; an entry whose
/// `expires` is before `today` is an error naming its owner.
pub fn load_quarantine(
    path: &Path,
    today: jiff::civil::Date,
) -> Result<Vec<gauntlet_core::quarantine::QuarantineEntry>, Vec<Diagnostic>> {
    let display = path.display().to_string();
    let source = std::fs::read_to_string(path).map_err(|e| {
        vec![Diagnostic::file(
            &display,
            format!("failed to read the quarantine file: {e}"),
        )]
    })?;
    let entries: Vec<gauntlet_core::quarantine::QuarantineEntry> = if source.trim().is_empty() {
        Vec::new()
    } else {
        parse_yaml(&display, &source)?
    };
    let loc = Locator::new(&display, &source);
    let mut diags = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        for (key, value) in [("first_seen", &e.first_seen), ("expires", &e.expires)] {
            if value.parse::<jiff::civil::Date>().is_err() {
                diags.push(loc.diag(
                    &format!("[{i}].{key}"),
                    false,
                    format!("`{value}` is not a date"),
                    Some("write dates as YYYY-MM-DD".into()),
                ));
            }
        }
        if let Ok(expires) = e.expires.parse::<jiff::civil::Date>()
            && expires < today
        {
            diags.push(loc.diag(
                &format!("[{i}].expires"),
                false,
                format!(
                    "the quarantine of `{}` expired on {} (owner: {})",
                    e.case, e.expires, e.owner
                ),
                Some(format!(
                    "{} should fix the case and remove the entry, or extend `expires` with a reason",
                    e.owner
                )),
            ));
        }
        if !(0.0..=1.0).contains(&e.pass_rate) {
            diags.push(loc.diag(
                &format!("[{i}].pass_rate"),
                false,
                "pass_rate must be between 0 and 1".into(),
                Some("the share of trials that passed, e.g. 0.6".into()),
            ));
        }
    }
    if diags.is_empty() {
        Ok(entries)
    } else {
        Err(diags)
    }
}

/// Checks that case ids are unique across several suites of one run.
pub fn check_unique_ids(suites: &[LoadedSuite]) -> Vec<Diagnostic> {
    let mut seen: HashMap<&str, &str> = HashMap::new();
    let mut out = Vec::new();
    for s in suites {
        for c in &s.suite.cases {
            if let Some(first) = seen.insert(c.id.as_str(), s.origin.as_str())
                && first != s.origin
            {
                out.push(
                    Diagnostic::file(
                        &s.origin,
                        format!("case id `{}` is also used in {first}", c.id),
                    )
                    .hint("case ids must be unique within a run; rename one"),
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_over_the_cap_is_skipped_without_being_held() {
        use std::io::Read;
        // 50 MB without a line break, then a short line.
        let long = std::io::repeat(b'x').take(50 << 20);
        let rest = std::io::Cursor::new(b"\n{}\r\n".to_vec());
        let mut lines = CappedLines::new(BufReader::new(long.chain(rest)));
        match lines.next() {
            Some(Ok(JsonLine::TooLong(n))) => assert_eq!(n, 50 << 20),
            _ => panic!("expected a line over the cap"),
        }
        assert!(
            lines.buf.capacity() <= (MAX_FILE_BYTES as usize) * 2 + 64,
            "held {} bytes",
            lines.buf.capacity()
        );
        match lines.next() {
            Some(Ok(JsonLine::Text(l))) => assert_eq!(l, "{}"),
            _ => panic!("expected the next line"),
        }
        assert!(lines.next().is_none());
    }
}
