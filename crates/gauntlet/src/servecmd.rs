//! `gauntlet serve-fake`: the built-in personas over the OpenAI (chat completions, Responses)
//! and Anthropic wire formats on 127.0.0.1, until Ctrl-C.

use std::io::Write;

use crate::cli::{PersonaArg, ServeFakeArgs};
use crate::error::CliError;
use crate::out::Printer;
use crate::setup::runtime;

pub fn serve_fake(args: ServeFakeArgs) -> Result<i32, CliError> {
    use gauntlet_targets::persona::Persona;
    let persona = match args.persona {
        PersonaArg::Safe => Persona::Safe,
        PersonaArg::Vulnerable => Persona::Vulnerable,
    };
    let server = gauntlet_targets::serve::FakeServer {
        persona,
        latency: std::time::Duration::from_millis(args.latency_ms),
    };
    let rt = runtime()?;
    rt.block_on(async {
        let addr = std::net::SocketAddr::new(args.host, args.port);
        let (bound, serving) = server.bind(addr).await.map_err(|e| {
            CliError::usage(
                format!("failed to listen on {addr}: {e}"),
                "pick another port with --port (0 picks a free one)",
            )
        })?;
        let mut out = Printer::stdout();
        writeln!(
            out,
            "serve-fake: persona {} on http://{bound} (OpenAI: http://{bound}/v1, Anthropic: http://{bound}); Ctrl-C to stop",
            persona.as_str()
        )?;
        out.flush()?;
        tokio::select! {
            r = serving => r.map_err(|e| CliError::plain(format!("the server stopped: {e}")))?,
            _ = tokio::signal::ctrl_c() => {}
        }
        Ok(0)
    })
}
