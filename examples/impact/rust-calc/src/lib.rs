//! A tiny crate for `gauntlet impact task` (examples/impact/rust-tasks.yaml).
pub mod fmt;
pub mod ops;
