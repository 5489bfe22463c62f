//! gauntlet's graders: objective oracles first, model judges second.
//!
//! The detectors ([`refusal`], [`ontopic`], [`canary`], [`markup`]) are plain functions over
//! text with no knowledge of suites, so they can be measured on labelled data directly and reused by the
//! `gauntlet oracle` command. [`oracles::OracleGrader`] applies a case's checks to a trace.

pub mod agent;
mod aims;
pub mod attack;
pub mod canary;
pub mod claims;
pub mod emails;
pub mod embedding;
pub mod grounded;
mod harm;
pub mod judge;
pub mod markup;
pub mod mcp;
pub mod ontopic;
pub mod oracles;
pub mod refusal;
pub mod script;
pub mod similarity;
pub mod success;
pub mod text;
mod words;

pub use oracles::OracleGrader;
