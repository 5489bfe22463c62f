//! A tiny crate for the impact map (never compiled by the tests).
pub mod area;
pub mod shapes;
mod util;
