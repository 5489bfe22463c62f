//! gauntlet's runner: [`Runner`] (the dispatcher, `dispatch`) schedules trials of planned
//! cases over a target (or grades recorded ones again), the executors (`execute`) run one
//! trial each, [`script::ProcessScripts`] starts the programs of `script:` checks,
//! [`strategy`] plays multi-turn attacks and model-driven converters, [`tree`] grows a
//! tree of attacks,
//! [`tools::SimTools`] simulates tools, and [`Delivery`] (`deliver`) hands the
//! run's [`RunEvent`]s to reporters.
//!
//! [`RunEvent`]: gauntlet_core::event::RunEvent

pub mod deliver;
pub mod dispatch;
pub mod execute;
pub mod script;
pub mod strategy;
pub mod tools;
pub mod tree;

pub use deliver::{Delivery, FLUSH_EVERY, deliver_all};
pub use dispatch::{CaseJob, PlanItem, RunConfig, RunOutcome, Runner};
pub use execute::{DEFAULT_TRIAL_TIMEOUT_MS, RefusalProbe, trial_seed};
pub use gauntlet_core::plan::{PlannedCase, SuiteContext};
pub use gauntlet_core::score::Stop;
pub use script::ProcessScripts;
pub use strategy::Helpers;
