//! `serve-fake --latency-ms N` answers N ms after a request arrived, on both wire formats:
//! never sooner (a latency-bound benchmark must wait what it asked for), and with the
//! persona's own work done inside that time, so a round of concurrent requests comes back
//! together instead of queued behind each other's work.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use gauntlet_targets::persona::Persona;
use gauntlet_targets::serve::FakeServer;
use serde_json::json;

const LATENCY: Duration = Duration::from_millis(150);

async fn start() -> SocketAddr {
    let (addr, fut) = FakeServer {
        persona: Persona::Safe,
        latency: LATENCY,
    }
    .bind("127.0.0.1:0".parse().unwrap())
    .await
    .unwrap();
    tokio::spawn(fut);
    addr
}

fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_leave_the_latency_after_their_request_arrived() {
    let addr = start().await;
    let c = client();
    let openai = json!({"model": "gauntlet-fake-safe",
        "messages": [{"role": "user", "content": "What can you help me with?"}]});
    let anthropic = json!({"model": "gauntlet-fake-safe", "max_tokens": 100,
        "messages": [{"role": "user", "content": "What can you help me with?"}]});
    for (url, body) in [
        (format!("http://{addr}/v1/chat/completions"), &openai),
        (format!("http://{addr}/v1/messages"), &anthropic),
    ] {
        // Sixteen at once: each answer waits the latency, not the latency plus the others'.
        let started = Instant::now();
        let calls: Vec<_> = (0..16)
            .map(|_| tokio::spawn(c.post(&url).json(body).send()))
            .collect();
        for call in calls {
            assert_eq!(call.await.unwrap().unwrap().status(), 200, "{url}");
        }
        let took = started.elapsed();
        assert!(took >= LATENCY, "{url}: {took:?}");
        assert!(took < LATENCY * 3, "{url}: {took:?}");
    }
    // A request that is not JSON is refused at once.
    let started = Instant::now();
    let r = c
        .post(format!("http://{addr}/v1/chat/completions"))
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert!(started.elapsed() < LATENCY, "{:?}", started.elapsed());
}
