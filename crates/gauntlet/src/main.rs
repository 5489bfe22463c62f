//! The `gauntlet` binary: parses the command line and dispatches to the commands; each
//! returns its exit code (PASS 0, FAIL 1, usage or configuration error 2, CONDITIONAL 3,
//! INCONCLUSIVE 4). Only this crate talks to the user, and only through `out` (command
//! output), `printer` (a run's terminal view) and `error` (`error:` and `hint:` lines).

mod agents;
mod auditcmd;
mod backlogcmd;
mod cachecmd;
mod cli;
mod comparecmd;
mod error;
mod flakycmd;
mod generatecmd;
mod gradecmd;
mod impactcmd;
mod importcmd;
mod initcmd;
mod judge;
mod judgecmd;
mod logcmd;
mod mcpcmd;
mod mergecmd;
mod metamorphiccmd;
mod oraclecmd;
mod out;
mod printer;
mod promotecmd;
mod proxycmd;
mod runcmd;
mod scorecmd;
mod servecmd;
mod setup;
mod stabilitycmd;
mod storecmd;
mod suitecmd;
mod tracecmd;
mod trajectorycmd;
mod viewcmd;

use clap::Parser;
use gauntlet_core::score::EXIT_USAGE;

use crate::cli::{Cli, Command};

// Trials allocate many small short-lived objects on several threads; glibc's allocator
// serialises them on arena locks, mimalloc does not.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc's `mi_option_t` (the same index in mimalloc 2 and 3;
/// the sys crate names only some options).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Returns freed memory to the system at once instead of after mimalloc's purge delay, unless
/// the user set the delay (`MIMALLOC_PURGE_DELAY`). With the delay, peak RSS follows the sum
/// of a run's large allocations rather than its live heap: a 2 MB reply went through several
/// short-lived copies of its size (the trace, the case's JSON, SQLite's bound row, the
/// report's chunk) that each stayed resident. Throughput on small cases did not change
/// measurably (docs/performance.md, "Hostile replies").
#[allow(unsafe_code)]
fn tune_allocator() {
    let set_by_user = ["MIMALLOC_PURGE_DELAY", "mimalloc_purge_delay"]
        .iter()
        .any(|k| std::env::var_os(k).is_some());
    if !set_by_user {
        // SAFETY: called first in `main`, before any thread of ours starts; mimalloc reads
        // the option on every purge, so setting it after its own start-up takes effect.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
    }
}

fn main() {
    tune_allocator();
    // Before any connection opens: SQLite takes the setting only before it starts.
    gauntlet_store::sqlite::no_bulk_page_cache();
    let cli = Cli::parse();
    out::set_color(cli.color);
    setup::load_dotenv();
    let result = match cli.command {
        Command::Run(a) => runcmd::run(a),
        Command::Redteam(a) => match a.command {
            Some(cli::RedteamCommand::Generate(g)) => generatecmd::generate(g),
            None => runcmd::redteam(a),
        },
        Command::Validate(a) => suitecmd::validate(a),
        Command::Audit(a) => auditcmd::audit(a),
        Command::Schema(a) => suitecmd::schema(a),
        Command::Completions(a) => suitecmd::completions(a),
        Command::Init(a) => initcmd::init(a),
        Command::Score(a) => scorecmd::score(a),
        Command::Oracle(a) => oraclecmd::oracle(a),
        Command::ServeFake(a) => servecmd::serve_fake(a),
        Command::Runs(a) => storecmd::runs(a),
        Command::Report(a) => storecmd::report(a),
        Command::Regrade(a) => storecmd::regrade(a),
        Command::Grade(a) => gradecmd::grade(a),
        Command::Promote(a) => promotecmd::promote(a),
        Command::Baseline(a) => comparecmd::baseline(a),
        Command::Compare(a) => comparecmd::compare_cmd(a),
        Command::View(a) => viewcmd::view(a),
        Command::SampleSize(a) => logcmd::sample_size(a),
        Command::Flaky(a) => flakycmd::flaky(a),
        Command::Stability(a) if a.metamorphic => metamorphiccmd::metamorphic(a),
        Command::Stability(a) => stabilitycmd::stability(a),
        Command::Log(a) => logcmd::log(a),
        Command::Plan(a) => logcmd::plan(a),
        Command::Proxy(a) => proxycmd::proxy(a),
        Command::Import(a) => importcmd::import(a),
        Command::Trace(a) => tracecmd::trace(a),
        Command::Merge(a) => mergecmd::merge(a),
        Command::Judge(a) => judgecmd::judge(a),
        Command::Mcp(a) => mcpcmd::mcp(a),
        Command::Backlog(a) => backlogcmd::backlog(a),
        Command::Impact(a) => impactcmd::impact(a),
        Command::Cache(a) => cachecmd::cache(a),
        Command::Trajectory(a) => trajectorycmd::trajectory(a),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(unsafe_code)]
    fn the_allocator_returns_freed_memory_at_once() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return;
        }
        // SAFETY: reading an option is safe at any time; this test is the only one in the
        // binary that sets it.
        let before = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        // mimalloc 3 purges after one second by default: a different value means the index names
        // another option, and the tuning would set the wrong one.
        assert_eq!(
            before, 1000,
            "option {MI_OPTION_PURGE_DELAY} is not the purge delay"
        );
        tune_allocator();
        let after = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        assert_eq!(after, 0);
    }
}
