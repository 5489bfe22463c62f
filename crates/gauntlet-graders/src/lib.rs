//! gauntlet's graders: objective oracles first, model judges second.
//!
//! The detectors ([`refusal`], [`canary`], [`markup`]) are plain functions over text with no
//! knowledge of suites, so they can be measured on labelled data directly and reused by the
//! `gauntlet oracle` command.

pub mod canary;
pub mod markup;
pub mod refusal;
pub mod text;
