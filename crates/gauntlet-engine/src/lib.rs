//! gauntlet's run API, shared by every command that runs suites or re-grades and re-writes
//! runs. The main entry is [`run::run`]: a typed [`run::RunRequest`] in, a typed
//! [`run::RunOutcome`] out, with nothing printed (warnings are handed over as [`Notice`]s,
//! the terminal view is a `Reporter` the caller passes in). Around it: the set-up every
//! command shares ([`setup`]: suites, targets, the store, prices, quarantine, run ids, the
//! integrity check, MCP servers), judges and helper models built from targets ([`judge`]),
//! the embeddings endpoint of `similar:` checks ([`embeddings`]),
//! the response cache's place ([`cache`]), the OpenTelemetry export ([`otel`]), and the
//! repeat checks built on the run: server stability ([`stability`]) and metamorphic
//! stability ([`metamorphic`]). Errors
//! are [`EngineError`]s that carry the user's hint. Stored runs are re-rendered and re-graded
//! by [`stored`]; captured traces are graded by [`grade`], the shards of
//! a sharded run merged by [`merge`]; attacks are written from a suite's agent card by
//! [`generate`].

pub mod audit;
pub mod baseline;
pub mod cache;
pub mod embeddings;
pub mod error;
pub mod generate;
pub mod grade;
pub mod judge;
pub mod merge;
pub mod metamorphic;
pub mod otel;
pub mod promote;
pub mod run;
pub mod setup;
pub mod stability;
pub mod stored;

pub use error::{EngineError, Notice, store_err};
pub use run::{RunOutcome, RunRequest, run, selection};

/// gauntlet's version, recorded in every manifest.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
