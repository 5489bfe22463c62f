//! placeholder crate root
