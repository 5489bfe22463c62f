//! `gauntlet proxy`: the recording proxy as a standalone command ([`ProxyArgs`], [`proxy`]).
//!
//! It serves until Ctrl-C (or SIGTERM), and writes each session's trace as one JSON line (the
//! `Trace` JSON of report.json, with a `session` field added) once the session has been idle
//! for `--idle-secs`, and every remaining session at shutdown. The banner goes to stderr so
//! that stdout carries only traces when no `--out` is given.

use std::io::Write;
use std::time::Duration;

use gauntlet_core::redact::Redactor;
use gauntlet_core::trace::Trace;
use gauntlet_targets::proxy::{ProxyConfig, RecordingProxy};

use crate::cli::ProxyArgs;
use crate::error::CliError;

/// Runs the proxy until Ctrl-C.
pub fn proxy(args: ProxyArgs) -> Result<i32, CliError> {
    let rt = crate::setup::runtime()?;
    rt.block_on(async move {
        let proxy = RecordingProxy::new(ProxyConfig::new(&args.upstream), Redactor::new())
            .map_err(|e| {
                CliError::usage(
                    e.to_string(),
                    "pass --upstream with the model API's base URL, such as https://api.openai.com/v1",
                )
            })?;
        let mut sink: Box<dyn Write + Send> = match &args.out {
            Some(p) => Box::new(std::fs::File::create(p).map_err(|e| {
                CliError::usage(
                    format!("cannot write `{}`: {e}", p.display()),
                    "pass --out with a writable file",
                )
            })?),
            None => Box::new(crate::out::Printer::stdout()),
        };
        let (bound, serving) = proxy.bind(args.listen).await.map_err(|e| {
            CliError::usage(
                format!("failed to listen on {}: {e}", args.listen),
                "pick another address with --listen (port 0 picks a free one)",
            )
        })?;
        crate::out::note(&format!(
            "proxy: recording on http://{bound} -> {}; OpenAI base URL http://{bound}/s/SESSION/v1, Anthropic base URL http://{bound}/s/SESSION (or http://{bound}/v1 for the session `default`); Ctrl-C to stop",
            proxy.upstream()
        ));
        let mut server = tokio::spawn(serving);
        let idle = Duration::from_secs(args.idle_secs);
        let mut tick = tokio::time::interval(Duration::from_millis(500));
        let stop = shutdown_signal();
        tokio::pin!(stop);
        let failed = loop {
            tokio::select! {
                _ = tick.tick() => write_traces(&mut sink, proxy.finish_idle(idle))?,
                () = &mut stop => break None,
                r = &mut server => break Some(match r {
                    Ok(Ok(())) => "the server stopped".to_owned(),
                    Ok(Err(e)) => format!("the server stopped: {e}"),
                    Err(e) => format!("the server crashed: {e}"),
                }),
            }
        };
        server.abort();
        // Whatever happened, the evidence recorded so far is written.
        write_traces(&mut sink, proxy.finish_all())?;
        match failed {
            None => Ok(0),
            Some(m) => Err(CliError::Usage(m, None)),
        }
    })
}

/// One JSON line per session: the trace, with the session id.
fn write_traces(sink: &mut dyn Write, traces: Vec<(String, Trace)>) -> Result<(), CliError> {
    for (session, trace) in traces {
        let mut v = serde_json::to_value(&trace).expect("a trace serializes");
        if let Some(o) = v.as_object_mut() {
            o.insert("session".into(), serde_json::Value::String(session));
        }
        writeln!(sink, "{v}")
            .and_then(|()| sink.flush())
            .map_err(|e| CliError::Usage(format!("cannot write a trace: {e}"), None))?;
    }
    Ok(())
}

/// Ctrl-C, or SIGTERM where there is one.
async fn shutdown_signal() {
    #[cfg(unix)]
    if let Ok(mut term) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
    {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        return;
    }
    let _ = tokio::signal::ctrl_c().await;
}
