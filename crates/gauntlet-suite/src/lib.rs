//! Suite files in, checked suites out: loading ([`load::load_file`]), validation with spans
//! ([`diag::Diagnostic`]), filters and shards ([`filter`]), the plan of a run ([`plan::Plan`]:
//! contexts, packs, the case stream, the manifest), and the suites embedded in the binary
//! ([`builtin`]).

pub mod audit;
pub mod builtin;
pub mod diag;
pub mod filter;
pub mod load;
mod pathmap;
pub mod plan;

pub use diag::Diagnostic;
pub use load::{LoadOptions, LoadedSuite, load_file, load_str};
pub use plan::{ManifestFacts, Plan, PlanSettings};
