//! `gauntlet view`: the flags become a `gauntlet_view::ViewRequest`; the viewer (the run
//! store in a browser on 127.0.0.1, read-only, and the labelling mode) is the
//! `gauntlet-view` crate. This module binds it, prints where it listens, and serves until
//! Ctrl-C.

use std::io::Write;

use gauntlet_view::{ViewError, ViewRequest};

use crate::cli::ViewArgs;
use crate::error::CliError;
use crate::out::Printer;
use crate::setup::{open_existing_store, runtime};

pub fn view(args: ViewArgs) -> Result<i32, CliError> {
    let store = open_existing_store(args.store.store.as_deref())?;
    let request = ViewRequest {
        store,
        port: args.port,
        labels: args.labels.clone(),
        limit: args.limit,
        // A run's suites, found and loaded as `regrade` does (a `redteam --suite` run's
        // corpus aimed again at the suite's tools), for the labelling mode's references; any
        // problem means the references are unknown.
        suites: Box::new(|inv, manifest, location| {
            let allow = gauntlet_engine::run::resume::allowed_paths(inv);
            gauntlet_engine::setup::load_recorded(inv, manifest, location, None, &allow).ok()
        }),
    };
    let rt = runtime()?;
    rt.block_on(async move {
        let viewer = gauntlet_view::bind(request).await.map_err(view_err)?;
        let mut out = Printer::stdout();
        writeln!(
            out,
            "gauntlet view: http://{}/ (store {}, read-only; labels to {}; Ctrl-C to stop)",
            viewer.addr(),
            viewer.store_shown(),
            args.labels.display()
        )?;
        out.flush()?;
        viewer
            .serve(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .map_err(view_err)?;
        Ok(0)
    })
}

fn view_err(e: ViewError) -> CliError {
    match e {
        ViewError::Listen { .. } => CliError::usage(
            e.to_string(),
            "pick another port with --port (0 picks a free one)",
        ),
        _ => CliError::plain(e.to_string()),
    }
}
