//! The run store in a browser: [`Viewer`] serves, on 127.0.0.1 only, the runs list, any
//! run's report (the same page as `report.html`, replayed from the store), two runs
//! compared, and a labelling mode that shows one sampled output at a time with its case and
//! appends a person's label to the labels file (`gauntlet_graders::judge::labels`).
//! `gauntlet view` turns its flags into a [`ViewRequest`], [`bind`]s, prints the address
//! and [`Viewer::serve`]s until it is stopped; this crate prints nothing.
//!
//! The store is only read. Requests must name the viewer's own address as their host (so a
//! web page cannot reach the viewer through DNS rebinding), a label is recorded only with the
//! token of the page that showed it (so another site cannot post one), and every page carries
//! the same Content Security Policy as the report files, sent as a header too.

mod label;
mod pages;

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use gauntlet_core::event::{Invocation, RunManifest};
use gauntlet_report::html::page::{Nav, PageKind, csp};
use gauntlet_report::html::view::render_message;
use gauntlet_store::{Store, StoreLocation};
use gauntlet_suite::LoadedSuite;

use crate::label::{References, RunSamples};

/// Reads the suites a stored run recorded (its invocation and manifest, the store it is in),
/// so that the labelling mode can show each check as the suite writes it; `None` when they
/// cannot be read any more. Where suites are found and how they load is the caller's (the
/// binary loads them as `regrade` does, a `redteam --suite` run's corpus aimed again at the
/// suite's tools).
pub type SuiteLoader = Box<
    dyn Fn(&Invocation, &RunManifest, &StoreLocation) -> Option<Vec<LoadedSuite>> + Send + Sync,
>;

/// What `gauntlet view` asks for.
pub struct ViewRequest {
    /// The store, opened; it is only read.
    pub store: Store,
    /// The port on 127.0.0.1 (0 picks a free one).
    pub port: u16,
    /// The labels file the labelling mode appends to (CSV when it ends in `.csv`).
    pub labels: PathBuf,
    /// Runs listed on the first page.
    pub limit: usize,
    /// Reads a run's suites for the labelling mode.
    pub suites: SuiteLoader,
}

/// Why the viewer could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// The port could not be bound.
    #[error("failed to listen on 127.0.0.1:{port}: {source}")]
    Listen {
        /// The port asked for.
        port: u16,
        /// Why.
        source: std::io::Error,
    },
    /// The bound address could not be read.
    #[error("failed to read the address: {0}")]
    Address(std::io::Error),
    /// The server failed while serving.
    #[error("the viewer stopped: {0}")]
    Serve(std::io::Error),
}

/// Report pages kept rendered (a run's page is the same until the run changes).
const CACHED_PAGES: usize = 4;

/// The application's state, shared by every request.
struct App {
    store: Mutex<Store>,
    store_shown: String,
    labels: PathBuf,
    limit: usize,
    token: String,
    hosts: Vec<String>,
    suites: SuiteLoader,
    pages: Mutex<Vec<(String, Arc<Vec<u8>>)>>,
    samples: Mutex<HashMap<String, Arc<RunSamples>>>,
    references: Mutex<HashMap<String, Arc<References>>>,
    skipped: Mutex<HashSet<(String, String, String, u32)>>,
}

fn random_token() -> String {
    // Two independently seeded hashers: 128 bits the page must echo back.
    let mut s = String::new();
    for i in 0..2u64 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(i ^ std::process::id() as u64);
        s.push_str(&format!("{:016x}", h.finish()));
    }
    s
}

/// A viewer bound to its address, ready to serve.
pub struct Viewer {
    listener: tokio::net::TcpListener,
    addr: SocketAddr,
    store_shown: String,
    router: Router,
}

impl Viewer {
    /// The address it listens on (`127.0.0.1:PORT`).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The store it shows, as its location reads (no secrets).
    pub fn store_shown(&self) -> &str {
        &self.store_shown
    }

    /// Serves until `shutdown` completes.
    pub async fn serve(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ViewError> {
        axum::serve(self.listener, self.router)
            .with_graceful_shutdown(shutdown)
            .await
            .map_err(ViewError::Serve)
    }
}

/// Binds 127.0.0.1 on the request's port and builds the application.
pub async fn bind(req: ViewRequest) -> Result<Viewer, ViewError> {
    let store_shown = req.store.location().to_string();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", req.port))
        .await
        .map_err(|source| ViewError::Listen {
            port: req.port,
            source,
        })?;
    let addr = listener.local_addr().map_err(ViewError::Address)?;
    let app = Arc::new(App {
        store: Mutex::new(req.store),
        store_shown: store_shown.clone(),
        labels: req.labels,
        limit: req.limit,
        token: random_token(),
        hosts: vec![
            format!("127.0.0.1:{}", addr.port()),
            format!("localhost:{}", addr.port()),
        ],
        suites: req.suites,
        pages: Mutex::new(Vec::new()),
        samples: Mutex::new(HashMap::new()),
        references: Mutex::new(HashMap::new()),
        skipped: Mutex::new(HashSet::new()),
    });
    let router = Router::new()
        .route("/", get(pages::runs_page))
        .route("/runs/{run}", get(pages::report_page))
        .route("/compare", get(pages::compare_page))
        .route("/label", get(label::label_page).post(label::record_label))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(Arc::clone(&app), guard))
        .with_state(app);
    Ok(Viewer {
        listener,
        addr,
        store_shown,
        router,
    })
}

/// Refuses requests addressed to another host, and adds the headers every page carries.
async fn guard(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !app.hosts.iter().any(|h| h == host) {
        return (
            StatusCode::MISDIRECTED_REQUEST,
            "gauntlet view answers only requests addressed to its own 127.0.0.1 address\n",
        )
            .into_response();
    }
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    for (k, v) in [
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CACHE_CONTROL, "no-store"),
        (header::X_FRAME_OPTIONS, "DENY"),
    ] {
        h.insert(k, HeaderValue::from_static(v));
    }
    h.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    h.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    resp
}

pub(crate) fn html(kind: PageKind, status: StatusCode, body: Vec<u8>) -> Response {
    let policy = format!("{}; frame-ancestors 'none'", csp(kind));
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    if let Ok(v) = HeaderValue::from_str(&policy) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    r
}

pub(crate) fn nav(label: Option<String>) -> Nav {
    Nav {
        runs: "/".into(),
        label,
    }
}

pub(crate) fn message(status: StatusCode, title: &str, text: &str) -> Response {
    match render_message(title, text, &nav(None)) {
        Ok(s) => html(PageKind::Static, status, s.into_bytes()),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// A page that ends a request early (boxed: a response is large).
pub(crate) type Fail = Box<Response>;

/// Runs blocking store work off the async threads; an error becomes a message page.
pub(crate) async fn blocking(
    app: &Arc<App>,
    f: impl FnOnce(&App) -> Result<Response, Fail> + Send + 'static,
) -> Response {
    let app = Arc::clone(app);
    match tokio::task::spawn_blocking(move || f(&app)).await {
        Ok(Ok(r)) => r,
        Ok(Err(r)) => *r,
        Err(e) => message(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Something went wrong",
            &e.to_string(),
        ),
    }
}

pub(crate) fn store_failure(e: impl std::fmt::Display) -> Fail {
    Box::new(message(
        StatusCode::NOT_FOUND,
        "Not found",
        &format!("The run store says: {e}"),
    ))
}

async fn not_found() -> Response {
    message(
        StatusCode::NOT_FOUND,
        "Not found",
        "No page here. The runs list is at /.",
    )
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    async fn get(addr: SocketAddr, host: &str) -> String {
        let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let req = format!("GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
        s.write_all(req.as_bytes()).await.expect("send");
        let mut body = String::new();
        s.read_to_string(&mut body).await.expect("read");
        body
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_viewer_answers_its_own_host_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open(dir.path().join("runs.db")).expect("store");
        let viewer = bind(ViewRequest {
            store,
            port: 0,
            labels: dir.path().join("labels.csv"),
            limit: 10,
            suites: Box::new(|_, _, _| None),
        })
        .await
        .expect("bind");
        let addr = viewer.addr();
        assert!(addr.ip().is_loopback());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(viewer.serve(async {
            let _ = stopped.await;
        }));
        let other = get(addr, "attacker.example").await;
        assert!(other.starts_with("HTTP/1.1 421"), "{other}");
        let own = get(addr, &format!("127.0.0.1:{}", addr.port())).await;
        assert!(own.starts_with("HTTP/1.1 200"), "{own}");
        assert!(
            own.to_lowercase().contains("x-frame-options: deny"),
            "{own}"
        );
        let _ = stop.send(());
        server.await.expect("join").expect("served");
    }
}
