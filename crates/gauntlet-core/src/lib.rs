//! gauntlet's data model: the suite format, traces, verdicts, results, the event stream,
//! the rubric and the state fold, and the seam traits ([`target::Target`],
//! [`grader::Grader`], [`event::Reporter`]).
//!
//! This crate does no I/O. Everything here is plain data with serde and JSON Schema
//! derivations, plus the pure functions that decide scores and states, so that every other
//! crate (and a stored run re-rendered years later) agrees on what a result means.
//!
//! # Layers
//!
//! The modules are layered, bottom up; a file uses only files of its own layer (never in a
//! circle) or of lower ones, which `tests/layers.rs` checks:
//!
//! 0. leaf utilities: [`text`], `de`, [`stats`], [`redact`], [`cache`], [`technique`], [`harm`]
//!    (the harm taxonomy and the public sets' categories mapped onto it), and
//!    [`rubric`] (the [`rubric::Dimension`] a check feeds, the [`rubric::CaseKind`] that
//!    picks the rubric);
//! 1. the suite model: [`tools`], [`mcp`], [`judges`], [`calibration`],
//!    [`strategy::settings`], [`target_config`], [`bus::fault`], the checks
//!    ([`expect`]), [`suite`], [`context`], [`plan`];
//! 2. the trace and verdicts: [`trace`], [`verdict`], and the seams that run over a trace:
//!    [`target`], [`strategy`], [`bus`];
//! 3. results and scoring: [`score`], [`cost`], [`result`], [`grader`], [`capture`],
//!    [`stability`], [`flake`];
//! 4. events and what is built over them: [`event`], [`summary`] (the state fold),
//!    [`merge`], [`compare`], [`drift`], [`regression`], [`quarantine`], [`metamorphic`],
//!    [`config`].
//!
//! A type a lower file needs lives in that lower file, and its old path re-exports it.

#![warn(missing_docs)]

pub mod attack;
pub mod bus;
pub mod cache;
pub mod calibration;
pub mod capture;
pub mod compare;
pub mod compliance;
pub mod config;
pub mod context;
pub mod cost;
mod de;
pub mod drift;
pub mod event;
pub mod expect;
pub mod flake;
pub mod grader;
pub mod harm;
pub mod judges;
pub mod matrix;
pub mod mcp;
pub mod merge;
pub mod metamorphic;
pub mod plan;
pub mod quarantine;
pub mod redact;
pub mod regression;
pub mod result;
pub mod rubric;
pub mod score;
pub mod stability;
pub mod stats;
pub mod strategy;
pub mod suite;
pub mod summary;
pub mod target;
pub mod target_config;
pub mod technique;
pub mod text;
pub mod tools;
pub mod trace;
pub mod verdict;

/// Glob match with `*` (any run) and `?` (one character).
pub fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

/// The JSON Schema of the suite format, for `gauntlet schema` and editors.
pub fn suite_json_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(suite::Suite);
    serde_json::to_value(schema).expect("schema serializes")
}
