//! Test support for the target adapters' integration tests: [`have_python`], the check the
//! tests that run a Python agent make first, and [`serve_fake`], `serve-fake` on a free port.

// Every test file is a crate of its own and uses only some of these.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::process::Command;

use gauntlet_targets::persona::Persona;
use gauntlet_targets::serve::FakeServer;

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

/// `serve-fake` with `persona`, answering at once, on a free port of 127.0.0.1 until the
/// test's runtime ends; returns its address.
pub async fn serve_fake(persona: Persona) -> SocketAddr {
    let (addr, fut) = FakeServer {
        persona,
        latency: std::time::Duration::ZERO,
    }
    .bind("127.0.0.1:0".parse().unwrap())
    .await
    .unwrap();
    tokio::spawn(fut);
    addr
}

/// A port that refuses every connection while the returned socket lives: bound, never
/// listening. A port freed by dropping a listener can be taken by a test running alongside.
pub fn refusing_port() -> (socket2::Socket, u16) {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    s.bind(&std::net::SocketAddr::from(([127, 0, 0, 1], 0)).into())
        .unwrap();
    let port = s.local_addr().unwrap().as_socket().unwrap().port();
    (s, port)
}
