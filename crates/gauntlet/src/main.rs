//! The `gauntlet` binary: parses the command line, dispatches to the commands, prints, and
//! chooses the exit code (PASS 0, FAIL 1, usage or configuration error 2, CONDITIONAL 3,
//! INCONCLUSIVE 4). Only this crate talks to the user.

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod cli;
mod flakycmd;
mod initcmd;
mod judge;
mod oraclecmd;
mod printer;
mod proxycmd;
mod runcmd;
mod scorecmd;
mod storecmd;
mod tracecmd;

use std::io::Write;

use clap::Parser;
use gauntlet_core::score::EXIT_USAGE;
use gauntlet_suite::Diagnostic;

use crate::cli::{Cli, Command};

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

// Trials allocate many small short-lived objects on several threads; glibc's allocator
// serialises them on arena locks, mimalloc does not.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// An error that ends a command with exit code 2.
#[derive(Debug)]
pub enum CliError {
    /// A usage or configuration problem: a message and a hint.
    Usage(String, Option<String>),
    /// Problems in suite files.
    Diagnostics(Vec<Diagnostic>),
}

impl CliError {
    pub fn usage(message: impl Into<String>, hint: impl Into<String>) -> Self {
        CliError::Usage(message.into(), Some(hint.into()))
    }

    fn print(&self) {
        let mut err = anstream::stderr();
        match self {
            CliError::Usage(m, h) => {
                let _ = writeln!(err, "error: {m}");
                if let Some(h) = h {
                    let _ = writeln!(err, "hint: {h}");
                }
            }
            CliError::Diagnostics(ds) => {
                for d in ds {
                    let _ = write!(err, "{d}");
                }
                let _ = writeln!(
                    err,
                    "{} error{} found; nothing was run",
                    ds.len(),
                    if ds.len() == 1 { "" } else { "s" }
                );
            }
        }
    }
}

/// The async runtime for commands that call targets (built only when needed, so that
/// `--version` and `validate` stay instant).
pub fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .max(2);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .map_err(|e| CliError::Usage(format!("failed to start the async runtime: {e}"), None))
}

fn validate(args: cli::ValidateArgs) -> Result<i32, CliError> {
    let opts = gauntlet_suite::LoadOptions {
        run_canary: args.canary.as_deref(),
    };
    let mut diags = Vec::new();
    let mut ok = Vec::new();
    for p in &args.suites {
        match gauntlet_suite::load_file(p, &opts) {
            Ok(s) => ok.push(s),
            Err(mut d) => diags.append(&mut d),
        }
    }
    diags.extend(gauntlet_suite::load::check_unique_ids(&ok));
    if !diags.is_empty() {
        return Err(CliError::Diagnostics(diags));
    }
    let mut out = anstream::stdout();
    for s in &ok {
        let _ = writeln!(
            out,
            "ok: {} (suite `{}`, {} case{})",
            s.origin,
            s.suite.suite,
            s.case_count,
            if s.case_count == 1 { "" } else { "s" }
        );
    }
    Ok(0)
}

fn schema(args: cli::SchemaArgs) -> Result<i32, CliError> {
    let v = if args.report {
        serde_json::to_value(schemars::schema_for!(gauntlet_report::json::ReportDocument))
            .expect("schema serializes")
    } else {
        gauntlet_core::suite_json_schema()
    };
    println!(
        "{}",
        serde_json::to_string_pretty(&v).expect("schema serializes")
    );
    Ok(0)
}

fn serve_fake(args: cli::ServeFakeArgs) -> Result<i32, CliError> {
    use gauntlet_targets::persona::Persona;
    let persona = match args.persona {
        cli::PersonaArg::Safe => Persona::Safe,
        cli::PersonaArg::Vulnerable => Persona::Vulnerable,
    };
    let server = gauntlet_targets::serve::FakeServer {
        persona,
        latency: std::time::Duration::from_millis(args.latency_ms),
    };
    let rt = runtime()?;
    rt.block_on(async {
        let addr = std::net::SocketAddr::new(args.host, args.port);
        let (bound, serving) = server.bind(addr).await.map_err(|e| {
            CliError::usage(
                format!("failed to listen on {addr}: {e}"),
                "pick another port with --port (0 picks a free one)",
            )
        })?;
        println!(
            "serve-fake: persona {} on http://{bound} (OpenAI: http://{bound}/v1, Anthropic: http://{bound}); Ctrl-C to stop",
            persona.as_str()
        );
        tokio::select! {
            r = serving => r.map_err(|e| CliError::Usage(format!("the server stopped: {e}"), None))?,
            _ = tokio::signal::ctrl_c() => {}
        }
        Ok(0)
    })
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(a) => runcmd::run(a),
        Command::Redteam(a) => runcmd::redteam(a),
        Command::Validate(a) => validate(a),
        Command::Schema(a) => schema(a),
        Command::Init(a) => initcmd::init(a),
        Command::Score(a) => scorecmd::score(a),
        Command::Oracle(a) => oraclecmd::oracle(a),
        Command::ServeFake(a) => serve_fake(a),
        Command::Runs(a) => storecmd::runs(a),
        Command::Report(a) => storecmd::report(a),
        Command::Regrade(a) => storecmd::regrade(a),
        Command::Baseline(a) => storecmd::baseline(a),
        Command::Compare(a) => storecmd::compare_cmd(a),
        Command::SampleSize(a) => storecmd::sample_size(a),
        Command::Flaky(a) => flakycmd::flaky(a),
        Command::Log(a) => storecmd::log(a),
        Command::Plan(a) => storecmd::plan(a),
        Command::Proxy(a) => proxycmd::proxy(a),
        Command::Trace(a) => tracecmd::trace(a),
    };
    let code = match result {
        Ok(c) => c,
        Err(e) => {
            e.print();
            EXIT_USAGE
        }
    };
    std::process::exit(code);
}
