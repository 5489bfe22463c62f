//! Suite files in, checked suites out: loading ([`load::load_file`]), validation with spans
//! ([`diag::Diagnostic`]), filters and shards ([`filter`]), the plan of a run ([`plan::Plan`]:
//! contexts, packs, the case stream, the manifest), the suites embedded in the binary
//! ([`builtin`]), prompt converters ([`converters`]), stratified samples ([`sample`]),
//! importers of public attack sets ([`import`]), attacks written from an agent card
//! ([`generate`]), change-aware plans ([`changes`]) and the built-in red team aimed at a
//! suite's own tools ([`retarget`]).

pub mod audit;
pub mod builtin;
pub mod capture;
pub mod changes;
pub mod converters;
pub mod diag;
pub mod filter;
pub mod generate;
pub mod import;
pub mod load;
mod pathmap;
pub mod perturb;
pub mod plan;
pub mod retarget;
pub mod sample;

pub use diag::Diagnostic;
pub use load::{LoadOptions, LoadedSuite, load_file, load_str};
pub use plan::{ManifestFacts, Plan, PlanSettings};
