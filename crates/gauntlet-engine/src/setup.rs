//! Set-up shared by every command that runs or reads runs: the async runtime, loading
//! suites (and the built-in corpus) with [`load_all`], the corpus aimed at a suite's own
//! tools ([`load_retargeted`]), resolving targets from specs and the
//! config file ([`resolve_target`] with its [`TargetOverrides`]), where the run store is
//! and opening it, prices, the quarantine file, run ids, the harness-integrity snapshot
//! ([`integrity_check`]) and a run's MCP servers ([`McpServers`], [`connect_mcp`]).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gauntlet_core::plan::CANARY_PLACEHOLDER;
use gauntlet_core::target::TargetConfig;
use gauntlet_store::{Store, StoreLocation};
use gauntlet_suite::filter::Selection;
use gauntlet_suite::load::{LoadOptions, LoadedSuite};

use crate::error::{EngineError, store_err};

/// The origin recorded for the built-in red-team corpus.
pub const BUILTIN_OWASP: &str = "builtin:owasp";

/// The origin recorded for the built-in harm pack.
pub const BUILTIN_HARM: &str = "builtin:harm";

/// The async runtime for commands that call targets (built only when needed, so that
/// `--version` and `validate` stay instant).
pub fn runtime() -> Result<tokio::runtime::Runtime, EngineError> {
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .max(2);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .map_err(|e| EngineError::plain(format!("failed to start the async runtime: {e}")))
}

/// Loads suites (`builtin:owasp` is the corpus, `builtin:harm` the harm pack), printing nothing; diagnostics become a
/// usage error. `select` is the run's selection, counted while the suites are validated.
pub fn load_all(
    paths: &[String],
    canary: Option<&str>,
    system_prompt_file: Option<&str>,
    select: Option<&Selection>,
    allow_paths: &[PathBuf],
) -> Result<Vec<LoadedSuite>, EngineError> {
    let opts = LoadOptions {
        run_canary: canary,
        select,
        allow_paths,
    };
    let mut suites = Vec::new();
    let mut diags = Vec::new();
    for p in paths {
        if p == BUILTIN_OWASP {
            suites.push(corpus(system_prompt_file.map(Path::new), canary, &opts)?);
            continue;
        }
        if p == BUILTIN_HARM {
            suites.push(gauntlet_suite::builtin::harm(&opts).map_err(EngineError::Diagnostics)?);
            continue;
        }
        match gauntlet_suite::load_file(Path::new(p), &opts) {
            Ok(s) => suites.push(s),
            Err(mut d) => diags.append(&mut d),
        }
    }
    diags.extend(gauntlet_suite::load::check_unique_ids(&suites));
    if !diags.is_empty() {
        return Err(EngineError::Diagnostics(diags));
    }
    Ok(suites)
}

/// What `redteam --suite PATH` calls the suite it aims at PATH's tools when it writes no file
/// of it (`--emit`): `PATH (redteam)`, which `promote` recognises.
pub const RETARGETED_SUFFIX: &str = " (redteam)";

/// The built-in red team aimed at a suite's own tools (`redteam --suite`): what runs, and the
/// plan that says which case went where and which were skipped.
#[derive(Debug, Clone)]
pub struct RetargetedRun {
    /// The re-targeted suite, loaded and checked from [`RetargetedRun::text`].
    pub loaded: LoadedSuite,
    /// The roles of the suite's tools, the cases re-targeted, kept and skipped.
    pub plan: gauntlet_suite::retarget::Retargeted,
    /// The suite file that runs (what `--emit` writes).
    pub text: String,
}

/// Loads the suite at `path` and the corpus, aims the corpus at the suite's tools
/// ([`gauntlet_suite::retarget::retarget`]) and loads the result again from its own text
/// under the name `shown`, so the run takes exactly what a reviewer reads, and a planned
/// suite that would not load is an error rather than a quiet change.
pub fn load_retargeted(
    path: &str,
    shown: &str,
    canary: Option<&str>,
    select: Option<&Selection>,
    allow_paths: &[PathBuf],
) -> Result<RetargetedRun, EngineError> {
    let mut user = load_all(&[path.to_owned()], canary, None, None, allow_paths)?;
    let corpus = load_all(&[BUILTIN_OWASP.to_owned()], canary, None, None, allow_paths)?;
    let user = user.remove(0);
    let plan = gauntlet_suite::retarget::retarget(&gauntlet_suite::retarget::RetargetRequest {
        corpus: &corpus[0],
        suite: &user,
        canary,
    })
    .map_err(|e| EngineError::usage(e.to_string(), e.hint()))?;
    let text = gauntlet_suite::retarget::to_json(&plan.suite);
    let opts = LoadOptions {
        run_canary: canary,
        select,
        allow_paths,
    };
    let dir = user.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let mut loaded =
        gauntlet_suite::load_str(shown, &text, &dir, &opts).map_err(EngineError::Diagnostics)?;
    loaded.files.extend(user.files.iter().cloned());
    Ok(RetargetedRun { loaded, plan, text })
}

/// The OWASP corpus with the user's system prompt (if any).
fn corpus(
    system_prompt: Option<&Path>,
    canary: Option<&str>,
    opts: &LoadOptions<'_>,
) -> Result<LoadedSuite, EngineError> {
    let mut corpus = gauntlet_suite::builtin::owasp(opts).map_err(EngineError::Diagnostics)?;
    if let Some(path) = system_prompt {
        let text = std::fs::read_to_string(path).map_err(|e| {
            EngineError::usage(
                format!("failed to read the system prompt `{}`: {e}", path.display()),
                "pass a text file holding your app's system prompt",
            )
        })?;
        if !text.contains(CANARY_PLACEHOLDER) && canary.is_none() {
            return Err(EngineError::usage(
                format!(
                    "`{}` has no {CANARY_PLACEHOLDER} placeholder and no --canary was given",
                    path.display()
                ),
                "write {{canary}} in your prompt where a secret should be planted, or pass --canary with the secret your prompt already holds",
            ));
        }
        corpus.suite.agent.system_prompt = Some(text.clone());
        corpus.system_prompt = Some(text);
        corpus.files.push(path.to_path_buf());
    }
    Ok(corpus)
}

/// The current folder, absolute, as recorded in a run's invocation.
pub fn current_dir() -> Option<String> {
    std::env::current_dir()
        .ok()
        .map(|d| d.display().to_string())
}

/// The suites a recorded run ran, loaded again: the files its invocation names, or, for a
/// `redteam --suite PATH` run that wrote no file of its suite (the manifest names it
/// `PATH (redteam)`), the corpus aimed at PATH's tools again as the run aimed it. Without
/// that, a re-run, a re-grade or a promotion would take the built-in app's cases for the
/// suite's.
pub fn load_recorded(
    inv: &gauntlet_core::event::Invocation,
    manifest: &gauntlet_core::event::RunManifest,
    store: &StoreLocation,
    select: Option<&Selection>,
    allowed: &[PathBuf],
) -> Result<Vec<LoadedSuite>, EngineError> {
    let aimed: Vec<(&str, &str)> = manifest
        .suites
        .iter()
        .filter_map(|s| Some((s.path.strip_suffix(RETARGETED_SUFFIX)?, s.path.as_str())))
        .collect();
    if aimed.is_empty() {
        return load_all(
            &resolve_suite_paths(inv, store)?,
            inv.canary.as_deref(),
            inv.system_prompt_file.as_deref(),
            select,
            allowed,
        );
    }
    aimed
        .into_iter()
        .map(|(given, shown)| {
            let at = gauntlet_core::event::Invocation {
                suites: vec![given.to_owned()],
                ..inv.clone()
            };
            let path = resolve_suite_paths(&at, store)?.remove(0);
            let run = load_retargeted(&path, shown, inv.canary.as_deref(), select, allowed)?;
            Ok(run.loaded)
        })
        .collect()
}

/// The suite files of a recorded invocation, found again from wherever gauntlet runs now: a
/// relative path is tried against the folder the run started in, then the current folder,
/// then the project folder that holds an SQLite store (`PROJECT/.gauntlet/runs.db`).
pub fn resolve_suite_paths(
    inv: &gauntlet_core::event::Invocation,
    store: &StoreLocation,
) -> Result<Vec<String>, EngineError> {
    let store_root = store
        .path()
        .and_then(|p| p.canonicalize().ok())
        .and_then(|p| p.parent()?.parent().map(Path::to_path_buf));
    inv.suites
        .iter()
        .map(|given| {
            if given == BUILTIN_OWASP || given == BUILTIN_HARM || Path::new(given).is_absolute() {
                return Ok(given.clone());
            }
            let candidates: Vec<PathBuf> = [
                inv.base_dir.as_deref().map(PathBuf::from),
                std::env::current_dir().ok(),
                store_root.clone(),
            ]
            .into_iter()
            .flatten()
            .map(|dir| dir.join(given))
            .collect();
            candidates
                .iter()
                .find(|p| p.is_file())
                .map(|p| p.display().to_string())
                .ok_or_else(|| {
                    EngineError::usage(
                        format!(
                            "the run's suite `{given}` is not at {}",
                            candidates
                                .iter()
                                .map(|p| format!("`{}`", p.display()))
                                .collect::<Vec<_>>()
                                .join(" or ")
                        ),
                        "run gauntlet from the folder the run started in, or restore the suite there",
                    )
                })
        })
        .collect()
}

/// Where the store is: the flag (or `GAUNTLET_STORE`), else `store:` in the config file,
/// else the default. The caller keeps the location's secrets (a PostgreSQL password) out of
/// what it prints (`StoreLocation::secrets`).
pub fn store_location(
    flag: Option<&str>,
    config: Option<&Path>,
) -> Result<StoreLocation, EngineError> {
    let spec = match flag {
        Some(s) => s.to_owned(),
        None => {
            let cfg_path = config
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from("gauntlet.yaml"));
            let configured = if cfg_path.exists() {
                gauntlet_suite::load::load_config(&cfg_path)
                    .map_err(EngineError::Diagnostics)?
                    .store
            } else {
                None
            };
            configured.unwrap_or_else(|| gauntlet_store::DEFAULT_STORE.to_owned())
        }
    };
    let location = StoreLocation::parse(&spec).map_err(|e| {
        // The spec may hold a password: it is not repeated.
        EngineError::usage(e.to_string(), e.hint())
    })?;
    Ok(location)
}

/// The price table: the built-in defaults with `prices:` of the config file over them.
pub fn prices(config: Option<&Path>) -> Result<gauntlet_core::cost::PriceTable, EngineError> {
    let path = config
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("gauntlet.yaml"));
    let table = gauntlet_core::cost::PriceTable::builtin();
    if !path.exists() {
        return Ok(table);
    }
    let cfg = gauntlet_suite::load::load_config(&path).map_err(EngineError::Diagnostics)?;
    Ok(table.with_overrides(&cfg.prices))
}

/// Opens a store that must exist already (commands that read runs).
pub fn open_existing_store(location: StoreLocation) -> Result<Store, EngineError> {
    if !location.exists() {
        return Err(EngineError::usage(
            format!("no run store at `{location}`"),
            "runs are stored by `gauntlet run`/`redteam` in .gauntlet/runs.db; pass --store to look elsewhere",
        ));
    }
    Store::open(location).map_err(store_err)
}

/// A target from a spec: `KIND:ARG`, or a name from the config file.
pub fn resolve_spec(spec: &str, config: Option<&Path>) -> Result<TargetConfig, EngineError> {
    let parsed = TargetConfig::parse(spec)
        .map_err(|e| EngineError::usage(e.to_string(), "try fake:safe or openai:MODEL"))?;
    match &parsed.name {
        Some(name) if parsed.kind.is_none() => named_target(name, config),
        _ => Ok(parsed),
    }
}

/// What the command line says about the run's target, over what the suites declare.
#[derive(Debug, Clone, Default)]
pub struct TargetOverrides {
    /// `--target SPEC` (`KIND:ARG` or a named target).
    pub target: Option<String>,
    /// The config file with named targets.
    pub config: Option<PathBuf>,
    pub base_url: Option<String>,
    pub api_key_env: Option<String>,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    pub seed: Option<u64>,
}

/// Resolves the run's target: the flag, else the suites' (all the same), else the default;
/// then the command line's settings on top.
pub fn resolve_target(
    suites: &[LoadedSuite],
    opts: &TargetOverrides,
    default: Option<TargetConfig>,
) -> Result<TargetConfig, EngineError> {
    let mut cfg = match &opts.target {
        Some(spec) => resolve_spec(spec, opts.config.as_deref())?,
        None => {
            let declared: Vec<&TargetConfig> = suites
                .iter()
                .filter_map(|s| s.suite.target.as_ref())
                .collect();
            match declared.first() {
                Some(first) => {
                    if declared.iter().any(|t| t != first) {
                        return Err(EngineError::usage(
                            "the suites declare different targets",
                            "pass --target to choose one for this run",
                        ));
                    }
                    (*first).clone()
                }
                None => default.ok_or_else(|| {
                    EngineError::usage(
                        "no target: the suite declares none and --target was not given",
                        "pass --target fake:scripted (answers written in the cases), fake:safe, openai:MODEL, ...",
                    )
                })?,
            }
        }
    };
    if cfg.kind.is_none() {
        let name = cfg.name.clone().unwrap_or_default();
        cfg = named_target(&name, opts.config.as_deref())?;
    }
    if let Some(u) = &opts.base_url {
        cfg.base_url = Some(u.clone());
    }
    if let Some(k) = &opts.api_key_env {
        cfg.api_key_env = Some(k.clone());
    }
    if let Some(t) = opts.temperature {
        cfg.temperature = Some(t);
    }
    if let Some(m) = opts.max_tokens {
        cfg.max_tokens = Some(m);
    }
    if let Some(s) = opts.seed {
        cfg.seed = Some(s as i64);
    }
    gauntlet_suite::load::check_target(&cfg).map_err(|e| EngineError::Usage {
        message: e.to_string(),
        hint: e.hint(),
    })?;
    Ok(cfg)
}

/// The target of a check on one suite's cases (`flaky`, `stability`): `--target`, else the
/// suite's own; the flags' base URL and key variable over it; a bare name from the config
/// file.
pub fn case_target(
    declared: Option<&TargetConfig>,
    opts: &TargetOverrides,
) -> Result<TargetConfig, EngineError> {
    let mut target = match &opts.target {
        Some(t) => resolve_spec(t, opts.config.as_deref())?,
        None => declared
            .cloned()
            .ok_or_else(|| EngineError::usage("the suite declares no target", "pass --target"))?,
    };
    if let Some(u) = &opts.base_url {
        target.base_url = Some(u.clone());
    }
    if let Some(k) = &opts.api_key_env {
        target.api_key_env = Some(k.clone());
    }
    if target.kind.is_none() {
        let name = target.name.clone().unwrap_or_default();
        target = resolve_spec(&name, opts.config.as_deref())?;
    }
    Ok(target)
}

/// A named target from the config file (`--config`, else `gauntlet.yaml` if present).
fn named_target(name: &str, config: Option<&Path>) -> Result<TargetConfig, EngineError> {
    let path = config
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("gauntlet.yaml"));
    if !path.exists() {
        return Err(EngineError::usage(
            format!(
                "unknown target `{name}`: no config file `{}` defines named targets",
                path.display()
            ),
            "write KIND:ARG (fake:safe, openai:MODEL, ...), or define the target under `targets:` in gauntlet.yaml",
        ));
    }
    let config = gauntlet_suite::load::load_config(&path).map_err(EngineError::Diagnostics)?;
    match config.targets.get(name) {
        Some(t) => Ok(t.clone()),
        None => Err(EngineError::usage(
            format!("`{}` defines no target named `{name}`", path.display()),
            format!(
                "defined targets: {}",
                if config.targets.is_empty() {
                    "none".to_owned()
                } else {
                    config
                        .targets
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
        )),
    }
}

/// Loads the quarantine file (the flag, else `quarantine.yaml` if present), failing on
/// expired entries.
pub fn quarantine(path: Option<&Path>) -> Result<HashSet<String>, EngineError> {
    let default = PathBuf::from("quarantine.yaml");
    let path = match path {
        Some(p) => p.to_path_buf(),
        None if default.exists() => default,
        None => return Ok(HashSet::new()),
    };
    let entries =
        gauntlet_suite::load::load_quarantine(&path, today()).map_err(EngineError::Diagnostics)?;
    Ok(entries.into_iter().map(|e| e.case).collect())
}

/// Today's date (UTC).
pub fn today() -> jiff::civil::Date {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%d")
        .to_string()
        .parse()
        .expect("a date")
}

/// A new run id: the UTC time and a few bits that differ between processes.
pub fn new_run_id() -> String {
    let now = jiff::Timestamp::now();
    let stamp = now.strftime("%Y%m%dT%H%M%SZ").to_string();
    let nanos = now.subsec_nanosecond() as u32;
    let pid = std::process::id();
    format!("{stamp}-{:04x}", (nanos ^ pid.rotate_left(16)) & 0xffff)
}

/// Hashes every harness file now, and lists the folders they are in, and returns the check
/// the runner calls when the trials are done: the files whose hash changed (or that went
/// away) in between, and the files that appeared in those folders. What gauntlet itself
/// writes during the run (`ours`: the reports, the store) is not a change.
pub fn integrity_check(
    files: Vec<PathBuf>,
    ours: Vec<PathBuf>,
) -> Arc<dyn Fn() -> Vec<String> + Send + Sync> {
    let before = snapshot(&files);
    let mut folders: Vec<PathBuf> = files
        .iter()
        .filter_map(|f| f.parent().map(Path::to_path_buf))
        .map(|d| {
            if d.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                d
            }
        })
        .collect();
    folders.sort();
    folders.dedup();
    let listed = listing(&folders);
    // The store's files (runs.db, runs.db-wal, ...) and its own folder, the reports.
    let mut ours: Vec<String> = ours
        .iter()
        .map(|p| absolute(p).display().to_string())
        .collect();
    ours.extend(
        ours.clone()
            .iter()
            .filter_map(|p| Path::new(p).parent().filter(|d| d.ends_with(".gauntlet")))
            .map(|d| d.display().to_string()),
    );
    Arc::new(move || {
        let after = snapshot(&files);
        let mut changed: Vec<String> = before
            .iter()
            .zip(after)
            .filter(|((_, a), (_, b))| a != b)
            .map(|((p, _), _)| p.display().to_string())
            .collect();
        for new in listing(&folders).difference(&listed) {
            let abs = absolute(new).display().to_string();
            if !ours.iter().any(|o| abs.starts_with(o.as_str())) {
                changed.push(format!("{} (new)", new.display()));
            }
        }
        changed
    })
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// The files in each folder (not recursive: a suite folder, not the whole project). A new
/// folder is not a change: nothing reads a folder, and the files a suite does read are
/// hashed one by one. Parallel shards writing their reports next to the suite (`shard3/`)
/// must not look like an agent planting cases.
fn listing(folders: &[PathBuf]) -> std::collections::BTreeSet<PathBuf> {
    folders
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().map(|t| !t.is_dir()).unwrap_or(true))
        .map(|e| e.path())
        .collect()
}

/// SHA-256 of every harness file, to detect changes during the run.
fn snapshot(files: &[PathBuf]) -> Vec<(PathBuf, Option<String>)> {
    use sha2::{Digest, Sha256};
    files
        .iter()
        .map(|p| {
            // Streamed: a generated suite can be large, and memory must stay flat.
            let h = std::fs::File::open(p).ok().and_then(|mut f| {
                let mut hasher = Sha256::new();
                let mut buf = [0u8; 64 * 1024];
                loop {
                    let n = std::io::Read::read(&mut f, &mut buf).ok()?;
                    if n == 0 {
                        break;
                    }
                    hasher.update(&buf[..n]);
                }
                Some(
                    hasher
                        .finalize()
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect::<String>(),
                )
            });
            (p.clone(), h)
        })
        .collect()
}

/// The MCP servers of a run's suites, connected for the run; dropping it (or
/// [`McpServers::shutdown`]) closes them and kills the stdio ones.
#[derive(Default)]
pub struct McpServers {
    #[cfg(feature = "mcp")]
    backends: Vec<Arc<gauntlet_targets::mcp::McpBackend>>,
}

impl McpServers {
    /// How many servers are connected.
    pub fn len(&self) -> usize {
        #[cfg(feature = "mcp")]
        return self.backends.len();
        #[cfg(not(feature = "mcp"))]
        0
    }

    /// Whether no server is connected.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Closes every server.
    pub fn shutdown(&mut self) {
        #[cfg(feature = "mcp")]
        for b in self.backends.drain(..) {
            b.shutdown();
        }
    }
}

impl Drop for McpServers {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Connects the MCP servers the plan's suites name (`agent.mcp_servers`), each once for the
/// whole run: their tools get the descriptions and argument schemas the server lists, and
/// their calls go to the server. A server that cannot be started, does not answer in time,
/// or lacks a tool the suite names, is an error before any trial runs.
#[cfg(feature = "mcp")]
pub fn connect_mcp(
    plan: &mut gauntlet_suite::Plan,
    redactor: &mut gauntlet_core::redact::Redactor,
) -> Result<McpServers, EngineError> {
    use gauntlet_targets::mcp::{McpBackend, McpEndpoint};
    let mut servers = McpServers::default();
    let hint = "`gauntlet mcp scan -- COMMAND` (or `--url`) connects to the server alone and lists what it offers";
    plan.attach_tools(|loaded, ctx| {
        let base = std::path::Path::new(&loaded.origin).parent();
        for server in &loaded.suite.agent.mcp_servers {
            let fail = |e: &dyn std::fmt::Display, redactor: &gauntlet_core::redact::Redactor| {
                EngineError::usage(
                    format!("{}: {}", loaded.origin, redactor.redact(&e.to_string())),
                    hint,
                )
            };
            let ep =
                McpEndpoint::resolve(server, base, redactor).map_err(|e| fail(&e, redactor))?;
            let (backend, listing) = McpBackend::start(ep).map_err(|e| fail(&e, redactor))?;
            servers.backends.push(Arc::clone(&backend));
            for t in &server.tools {
                let Some(info) = listing.tools.iter().find(|i| i.name == t.name) else {
                    let listed: Vec<&str> = listing.tools.iter().map(|i| i.name.as_str()).collect();
                    return Err(EngineError::usage(
                        format!(
                            "{}: MCP server `{}` lists no tool `{}` (it lists: {})",
                            loaded.origin,
                            server.name,
                            t.name,
                            gauntlet_core::text::escape_controls(&listed.join(", "))
                        ),
                        "name the server's tools as it lists them",
                    ));
                };
                if let Some(def) = ctx.tools.iter_mut().find(|d| d.name == t.name) {
                    info.describe(def);
                }
                let b: Arc<dyn gauntlet_core::mcp::ToolBackend> = Arc::clone(&backend) as _;
                ctx.tool_backends.insert(t.name.clone(), b);
            }
        }
        Ok(())
    })?;
    Ok(servers)
}

/// Without the `mcp` feature, a suite that names an MCP server cannot run.
#[cfg(not(feature = "mcp"))]
pub fn connect_mcp(
    plan: &mut gauntlet_suite::Plan,
    _redactor: &mut gauntlet_core::redact::Redactor,
) -> Result<McpServers, EngineError> {
    plan.attach_tools(|loaded, _| {
        Err(EngineError::usage(
            format!(
                "{}: this suite names MCP servers, and this gauntlet was built without MCP support",
                loaded.origin
            ),
            "build gauntlet with its default features (the `mcp` cargo feature)",
        ))
    })?;
    Ok(McpServers::default())
}
