//! gauntlet's checks of coding agents, as a library the binary calls with typed requests:
//! the source -> test impact map ([`impact::ImpactMap`]), coding tasks graded with targeted
//! test context ([`task`]: the file, the run, [`task::TaskRunReport`]), evolving-spec
//! trajectories ([`trajectory`]: the file, the run, [`trajectory::TrajectoryReport`]), the
//! coding agent that both drive ([`agent::CodingAgent`]: a process or a chat model in the
//! built-in coding loop), and the backlog benchmark ([`backlog`]: the contract and ledger
//! files and their fold, [`backlog::BacklogReport`]).
//!
//! Nothing here prints: each run gives back a report, and the binary shows it. File errors
//! are `gauntlet_suite` diagnostics (file, line, column); everything else is an [`Error`].

pub mod agent;
pub mod backlog;
mod error;
pub mod impact;
pub mod task;
pub mod text;
pub mod trajectory;
pub mod tree;

pub use error::Error;
