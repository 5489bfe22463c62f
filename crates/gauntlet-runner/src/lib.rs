//! gauntlet's runner: [`run::Runner`] schedules trials of planned cases over a target,
//! simulates tools ([`tools::SimTools`]), grades traces and streams [`RunEvent`]s to
//! reporters.
//!
//! [`RunEvent`]: gauntlet_core::event::RunEvent

pub mod run;
pub mod tools;

pub use run::{PlannedCase, RunConfig, RunOutcome, Runner, Stop, SuiteContext};
