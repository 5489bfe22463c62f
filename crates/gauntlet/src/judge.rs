//! Judges, simulated users and attack helpers built from targets live in the run API
//! (`gauntlet_engine::judge`); this module keeps the commands' paths to them.

pub use gauntlet_engine::judge::*;
