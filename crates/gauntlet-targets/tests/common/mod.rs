//! Test support for the target adapters' integration tests: [`have_python`], the check the
//! tests that run a Python agent make first.

use std::process::Command;

/// Whether python3 runs; says the test is skipped when it does not.
#[allow(clippy::print_stderr)]
pub fn have_python() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "pass"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: python3 is not on PATH");
    }
    ok
}
