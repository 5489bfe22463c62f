//! Link order of the shipped build: the functions a run executes placed together.
//!
//! `link-order.txt` (written by `bench/link_order.py`) lists the functions a run and the red
//! team execute. Handed to the linker, they are laid out together at the start of the
//! machine code, so a run touches a few megabytes of the binary's pages instead of most of
//! them (docs/performance.md has the figures). Only for the `dist` profile on x86_64 Linux
//! with glibc, where rustc links with LLD, which takes `--symbol-ordering-file`; any other
//! build, or a build with its own linker, links as before.

use std::env;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=link-order.txt");
    println!("cargo:rerun-if-env-changed=GAUNTLET_LINK_MAP");
    // A link map, for bench/link_order.py to read which function sits where.
    if let Ok(map) = env::var("GAUNTLET_LINK_MAP") {
        println!("cargo:rustc-link-arg-bins=-Wl,-Map={map}");
    }
    if !lld_dist_build() {
        return;
    }
    let order =
        Path::new(&env::var("CARGO_MANIFEST_DIR").expect("cargo sets it")).join("link-order.txt");
    if order.exists() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        // Names of functions that no longer exist are expected, and harmless.
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// The `dist` profile (its output directory is `<target>/[<triple>/]dist/build/<pkg>/out`),
/// on the target whose default linker is LLD, with no linker of the user's choosing.
fn lld_dist_build() -> bool {
    let out_dir = env::var("OUT_DIR").unwrap_or_default();
    let profile = Path::new(&out_dir)
        .ancestors()
        .nth(3)
        .and_then(Path::file_name);
    let own_linker = env::var_os("RUSTC_LINKER").is_some()
        || env::var("CARGO_ENCODED_RUSTFLAGS")
            .is_ok_and(|f| f.contains("linker") || f.contains("fuse-ld"));
    profile.is_some_and(|p| p == "dist")
        && env::var("TARGET").is_ok_and(|t| t == "x86_64-unknown-linux-gnu")
        && !own_linker
}
