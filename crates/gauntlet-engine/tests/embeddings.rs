//! `similar:` checks over HTTP on 127.0.0.1, against `serve-fake`'s embeddings route with a
//! request counter in front: a paraphrase passes, an unrelated answer fails, the second
//! grading of the same answer makes no request (the cache answers), and a server that is
//! down or answers garbage leaves the check not assessed, with the failure's class.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use gauntlet_core::cache::MemoryCache;
use gauntlet_core::redact::Redactor;
use gauntlet_core::target::TargetConfig;
use gauntlet_graders::agent::Finding;
use gauntlet_graders::embedding::{Embeddings, Similarity, assess};
use gauntlet_targets::embeddings::OpenAiEmbedder;
use gauntlet_targets::persona::Persona;
use gauntlet_targets::serve::FakeServer;

/// Serves `router` on a free port of 127.0.0.1; returns its base URL and a count of the
/// requests it received.
async fn serve(router: axum::Router) -> (String, Arc<AtomicUsize>) {
    let count = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&count);
    let router = router.layer(axum::middleware::from_fn(
        move |req: axum::extract::Request, next: axum::middleware::Next| {
            let c = Arc::clone(&c);
            async move {
                c.fetch_add(1, Ordering::SeqCst);
                next.run(req).await
            }
        },
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    (format!("http://{addr}/v1"), count)
}

fn fake_server() -> axum::Router {
    FakeServer {
        persona: Persona::Safe,
        latency: std::time::Duration::ZERO,
    }
    .router()
}

fn embeddings(base: &str) -> Embeddings {
    let cfg: TargetConfig = serde_json::from_value(serde_json::json!({
        "kind": "openai",
        "model": "fake-embed",
        "base_url": base,
        "retry": {"max_attempts": 1},
    }))
    .unwrap();
    let e = OpenAiEmbedder::new(&cfg, &mut Redactor::new()).unwrap();
    Embeddings::new(Arc::new(e), Some(Arc::new(MemoryCache::new())))
}

const REFERENCE: &str =
    "Your refund of 20 EUR is on its way and reaches your card within five days.";

async fn grade(e: &Embeddings, answer: &str) -> Similarity {
    assess(&[REFERENCE.to_owned()], 0.5, answer, e).await
}

#[tokio::test]
async fn a_paraphrase_passes_an_unrelated_answer_fails_and_a_second_grading_asks_nothing() {
    let (base, count) = serve(fake_server()).await;
    let e = embeddings(&base);
    let para = grade(
        &e,
        "The 20 EUR refund is on its way; it reaches the card within five days.",
    )
    .await;
    assert!(matches!(para.finding, Finding::Pass(_)), "{para:?}");
    assert_eq!(
        count.load(Ordering::SeqCst),
        1,
        "answer and reference in one request"
    );
    let far = grade(&e, "Our shop opens at nine on weekdays and closes at six.").await;
    assert!(matches!(far.finding, Finding::Fail(_)), "{far:?}");
    assert_eq!(count.load(Ordering::SeqCst), 2);
    let near = para.details.as_ref().unwrap()["cosine"].as_f64().unwrap();
    let unrelated = far.details.as_ref().unwrap()["cosine"].as_f64().unwrap();
    assert!(
        near > unrelated + 0.3,
        "paraphrase {near}, unrelated {unrelated}"
    );

    // The same answers again: every vector comes from the cache, the server sees nothing.
    let again = grade(
        &e,
        "The 20 EUR refund is on its way; it reaches the card within five days.",
    )
    .await;
    assert_eq!(again.finding, para.finding);
    assert_eq!(again.details.as_ref().unwrap()["cached"], 2);
    let far_again = grade(&e, "Our shop opens at nine on weekdays and closes at six.").await;
    assert_eq!(far_again.finding, far.finding);
    assert_eq!(
        count.load(Ordering::SeqCst),
        2,
        "no request for cached vectors"
    );
}

fn not_assessed_class(s: &Similarity) -> String {
    let Finding::NotAssessed(why) = &s.finding else {
        panic!("not assessed expected: {s:?}")
    };
    let class = s.details.as_ref().unwrap()["error_class"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        why.starts_with(&format!("no similarity ({class}): ")),
        "{why}"
    );
    class
}

#[tokio::test]
async fn a_server_that_is_down_or_answers_garbage_is_not_assessed_never_a_pass() {
    // Down: a port that refuses connections.
    let (_held, port) = refusing_port();
    let down = embeddings(&format!("http://127.0.0.1:{port}/v1"));
    assert_eq!(
        not_assessed_class(&grade(&down, REFERENCE).await),
        "transport"
    );

    // Garbage: HTML with status 200, the wrong number of vectors, an error status.
    let html = axum::Router::new().route(
        "/v1/embeddings",
        axum::routing::post(|| async { "<html>upstream gateway</html>" }),
    );
    let (base, _) = serve(html).await;
    assert_eq!(
        not_assessed_class(&grade(&embeddings(&base), REFERENCE).await),
        "protocol"
    );
    let short = axum::Router::new().route(
        "/v1/embeddings",
        axum::routing::post(|| async {
            axum::Json(serde_json::json!({"data": [{"embedding": [1.0], "index": 0}]}))
        }),
    );
    let (base, _) = serve(short).await;
    assert_eq!(
        not_assessed_class(&grade(&embeddings(&base), REFERENCE).await),
        "protocol"
    );
    let refused = axum::Router::new().route(
        "/v1/embeddings",
        axum::routing::post(|| async { (axum::http::StatusCode::BAD_REQUEST, "no such model") }),
    );
    let (base, count) = serve(refused).await;
    let e = embeddings(&base);
    assert_eq!(not_assessed_class(&grade(&e, REFERENCE).await), "refused");
    // A failure is not cached: asking again goes to the server again.
    assert_eq!(not_assessed_class(&grade(&e, REFERENCE).await), "refused");
    assert_eq!(count.load(Ordering::SeqCst), 2);
}

/// A port that refuses every connection while the returned socket lives: bound, never
/// listening. A port freed by dropping a listener can be taken by a test running alongside.
fn refusing_port() -> (socket2::Socket, u16) {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    s.bind(&std::net::SocketAddr::from(([127, 0, 0, 1], 0)).into())
        .unwrap();
    let port = s.local_addr().unwrap().as_socket().unwrap().port();
    (s, port)
}
