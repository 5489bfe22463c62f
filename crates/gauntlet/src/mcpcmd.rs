//! `gauntlet mcp scan`: connects to one MCP server (a stdio command after `--`, or `--url`
//! for streamable HTTP), lists its tools, prompts and resources twice, and prints the
//! findings of `gauntlet_graders::mcp::scan` as tables or, with `--json`, as one JSON
//! document. Exit codes: 0 when no finding reaches `--fail-on`, 1 when one does, 2 when the
//! server could not be scanned (it would not start, did not answer in time, broke the
//! protocol) or the arguments are wrong.
//!
//! Everything the server says is untrusted: it is printed with control and invisible
//! characters escaped, and every secret the command resolved (`--env NAME=${env:...}`,
//! `--header`) is redacted from all output, errors included.

use std::collections::BTreeMap;
use std::io::Write;

use gauntlet_core::mcp::{McpListing, McpServer};
use gauntlet_core::redact::Redactor;
use gauntlet_graders::mcp::{Finding, Severity};

use crate::cli::{McpArgs, McpCommand, McpScanArgs};
use crate::error::CliError;
use crate::out::{Printer, shown};

pub fn mcp(args: McpArgs) -> Result<i32, CliError> {
    match args.command {
        McpCommand::Scan(a) => scan(a),
    }
}

/// The server as the command line describes it, in the suite's form.
fn server_of(args: &McpScanArgs) -> Result<McpServer, CliError> {
    if args.command.is_empty() && args.url.is_none() {
        return Err(CliError::usage(
            "no MCP server to scan",
            "give its command after `--` (gauntlet mcp scan -- python3 server.py) or its endpoint with --url",
        ));
    }
    if let Some(url) = &args.url
        && !(url.starts_with("http://") || url.starts_with("https://"))
    {
        return Err(CliError::usage(
            format!("`{}` is not an http:// or https:// URL", shown(url)),
            "a streamable HTTP endpoint, such as http://127.0.0.1:8000/mcp",
        ));
    }
    if args.url.is_some() && (!args.env.is_empty() || !args.pass_env.is_empty()) {
        return Err(CliError::usage(
            "--env and --pass-env are for a stdio server",
            "send an HTTP server credentials with --header",
        ));
    }
    if args.url.is_none() && !args.headers.is_empty() {
        return Err(CliError::usage(
            "--header is for an HTTP server (--url)",
            "pass a stdio server its settings with --env",
        ));
    }
    if args.timeout_ms == 0 {
        return Err(CliError::usage(
            "--timeout-ms 0 allows no time at all",
            "give a positive number of milliseconds",
        ));
    }
    let mut env = BTreeMap::new();
    for e in &args.env {
        let Some((k, v)) = e.split_once('=') else {
            return Err(CliError::usage(
                format!("--env `{}` is not NAME=VALUE", shown(k_only(e))),
                "write --env NAME=VALUE, or --env 'NAME=${env:OTHER}' to read a secret from the environment",
            ));
        };
        env.insert(k.to_owned(), v.to_owned());
    }
    let mut headers = BTreeMap::new();
    for h in &args.headers {
        let Some((k, v)) = h.split_once(':') else {
            return Err(CliError::usage(
                format!("--header `{}` is not 'NAME: VALUE'", shown(k_only(h))),
                "write --header 'Authorization: Bearer ${env:TOKEN}'",
            ));
        };
        headers.insert(k.trim().to_owned(), v.trim().to_owned());
    }
    let name = match (&args.url, args.command.first()) {
        (Some(u), _) => u.clone(),
        (None, Some(p)) => std::path::Path::new(p)
            .file_name()
            .map_or_else(|| p.clone(), |f| f.to_string_lossy().into_owned()),
        (None, None) => String::new(),
    };
    Ok(McpServer {
        name,
        command: args.command.clone(),
        url: args.url.clone(),
        env,
        pass_env: args.pass_env.clone(),
        headers,
        timeout_ms: Some(args.timeout_ms),
        tools: Vec::new(),
    })
}

/// The part of a malformed `NAME=VALUE` that may be shown: never a value, which may be a
/// secret.
fn k_only(s: &str) -> &str {
    let end = s.find([':', '=']).unwrap_or(s.len()).min(40);
    &s[..s.floor_char_boundary(end)]
}

#[cfg(feature = "mcp")]
fn listings(
    server: &McpServer,
    redactor: &mut Redactor,
) -> Result<(String, McpListing, McpListing), CliError> {
    use gauntlet_targets::mcp::{McpClient, McpEndpoint};
    let hint =
        "check the command (or URL); a server that starts slowly needs a larger --timeout-ms";
    let ep = McpEndpoint::resolve(server, None, redactor)
        .map_err(|e| CliError::usage(redactor.redact(&e.to_string()).into_owned(), hint))?;
    let shown_as = ep.shown();
    let rt = crate::setup::runtime()?;
    let result = rt.block_on(async {
        let client = McpClient::connect(&ep).await?;
        // Listed twice: a description that changes after it was first seen is a rug pull.
        let first = client.list().await;
        let second = match &first {
            Ok(_) => client.list().await,
            Err(_) => Ok(McpListing::default()),
        };
        client.close().await;
        Ok::<_, gauntlet_targets::mcp::McpError>((first?, second?))
    });
    // Whatever the server started is gone before anything is printed.
    drop(rt);
    let (first, second) =
        result.map_err(|e| CliError::usage(redactor.redact(&e.to_string()).into_owned(), hint))?;
    Ok((shown_as, first, second))
}

#[cfg(not(feature = "mcp"))]
fn listings(
    _server: &McpServer,
    _redactor: &mut Redactor,
) -> Result<(String, McpListing, McpListing), CliError> {
    Err(CliError::usage(
        "this gauntlet was built without MCP support",
        "build gauntlet with its default features (the `mcp` cargo feature)",
    ))
}

fn scan(args: McpScanArgs) -> Result<i32, CliError> {
    let fail_on = Severity::parse(&args.fail_on).unwrap_or(Severity::High);
    let server = server_of(&args)?;
    let mut redactor = Redactor::new();
    let (shown_as, first, second) = listings(&server, &mut redactor)?;
    let findings = gauntlet_graders::mcp::scan(&first, Some(&second));
    let failing = findings.iter().filter(|f| f.severity >= fail_on).count();
    let mut out = std::io::BufWriter::new(Printer::stdout());
    let io = |e: std::io::Error| CliError::plain(format!("failed to write the output: {e}"));
    if args.json {
        let doc = serde_json::json!({
            "server": shown_as,
            "listing": first,
            "changed_on_second_listing": first != second,
            "findings": findings,
            "fail_on": fail_on,
            "failing": failing,
        });
        let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
        // The server's bidi overrides stay JSON escapes, not the terminal view's own.
        let text = gauntlet_core::text::json_escape_controls(&text);
        writeln!(out, "{}", redactor.redact(&text)).map_err(io)?;
    } else {
        let text = table(&shown_as, &first, &findings, fail_on, failing);
        write!(out, "{}", redactor.redact(&text)).map_err(io)?;
    }
    out.flush().map_err(io)?;
    Ok(i32::from(failing > 0))
}

/// Text from the server, safe for a terminal (controls and invisible characters escaped)
/// and cut to `n` characters.
fn cell(text: &str, n: usize) -> String {
    let v = gauntlet_graders::mcp::visible(text, n);
    shown(&v).into_owned()
}

fn table(
    shown_as: &str,
    l: &McpListing,
    findings: &[Finding],
    fail_on: Severity,
    failing: usize,
) -> String {
    let mut s = String::new();
    let who = l
        .server
        .as_ref()
        .map(|i| format!("{} {}", cell(&i.name, 40), cell(&i.version, 20)))
        .unwrap_or_else(|| "(unnamed)".into());
    s.push_str(&format!("MCP server {who}  ({})\n", cell(shown_as, 80)));
    s.push_str(&format!(
        "{} tool(s), {} prompt(s), {} resource(s); listed twice\n\n",
        l.tools.len(),
        l.prompts.len(),
        l.resources.len()
    ));
    if !l.tools.is_empty() {
        s.push_str(&format!(
            "{:<24} {:<22} {}\n",
            "TOOL", "ANNOTATIONS", "DESCRIPTION"
        ));
        for t in &l.tools {
            let a = t.annotations.clone().unwrap_or_default();
            let mut hints = Vec::new();
            if a.read_only_hint == Some(true) {
                hints.push("read-only");
            }
            if a.destructive_hint == Some(true) {
                hints.push("destructive");
            }
            if a.idempotent_hint == Some(true) {
                hints.push("idempotent");
            }
            if a.open_world_hint == Some(true) {
                hints.push("open-world");
            }
            let hints = if hints.is_empty() {
                "-".to_owned()
            } else {
                hints.join(",")
            };
            s.push_str(&format!(
                "{:<24} {:<22} {}\n",
                cell(&t.name, 24),
                hints,
                cell(t.description.as_deref().unwrap_or(""), 70)
            ));
        }
        s.push('\n');
    }
    for p in &l.prompts {
        s.push_str(&format!(
            "prompt   {:<24} {}\n",
            cell(&p.name, 24),
            cell(p.description.as_deref().unwrap_or(""), 70)
        ));
    }
    for r in &l.resources {
        s.push_str(&format!(
            "resource {:<24} {}\n",
            cell(&r.uri, 40),
            cell(r.description.as_deref().unwrap_or(""), 60)
        ));
    }
    if !l.prompts.is_empty() || !l.resources.is_empty() {
        s.push('\n');
    }
    if findings.is_empty() {
        s.push_str("no findings\n");
    } else {
        s.push_str(&format!(
            "{:<9} {:<29} {:<30} {}\n",
            "SEVERITY", "FINDING", "IN", "WHAT"
        ));
        for f in findings {
            s.push_str(&format!(
                "{:<9} {:<29} {:<30} {}\n",
                f.severity.as_str(),
                f.kind.as_str(),
                format!("{} {}", f.item, cell(&f.name, 24)),
                cell(&f.message, 200)
            ));
            if !f.evidence.is_empty() {
                s.push_str(&format!("{:<70} > {}\n", "", cell(&f.evidence, 160)));
            }
        }
    }
    s.push_str(&format!(
        "\n{} finding(s), {failing} at or above {} (--fail-on)\n",
        findings.len(),
        fail_on.as_str()
    ));
    s
}
