//! `gauntlet oracle refusal|canary|markup|attack-success`: grades existing transcripts with one
//! oracle. Reads JSON lines `{"id": ..., "output": "...", "canary": "..."}` (refusal: an
//! optional `input`, the request, adds the off-topic reading; canary: an optional `input`
//! adds a guess of the secret confirmed; attack-success:
//! `{"id", "input", "goal", "output"}`, the goal defaulting to the input) from a file or stdin and
//! writes one JSON line per input with the verdict and its evidence. A malformed line gets an
//! error line (nothing is dropped) and the exit code is then 2.

use std::io::{BufRead, BufReader, Write};

use gauntlet_graders::canary::CanaryDetector;
use gauntlet_graders::markup::{MarkupOptions, scan};
use gauntlet_graders::refusal::analyze_with_request;
use gauntlet_graders::success::attack_success_to;
use serde_json::{Value, json};

use crate::cli::{OracleArgs, OracleKind};
use crate::error::CliError;

pub fn oracle(args: OracleArgs) -> Result<i32, CliError> {
    let input: Box<dyn BufRead> = match &args.file {
        Some(p) => Box::new(BufReader::new(std::fs::File::open(p).map_err(|e| {
            CliError::usage(
                format!("failed to read `{}`: {e}", p.display()),
                "pass a JSON lines file, or pipe it on stdin",
            )
        })?)),
        None => Box::new(BufReader::new(std::io::stdin())),
    };
    let mut out = std::io::BufWriter::new(crate::out::Printer::stdout());
    let markup_opts = MarkupOptions {
        inspect_code: args.inspect_code,
        allowed_hosts: args.allowed_hosts.clone(),
        denied_hosts: args.denied_hosts.clone(),
        ..MarkupOptions::default()
    };
    let mut detector: Option<(String, CanaryDetector)> = None;
    let mut bad = 0usize;
    for (i, line) in input.lines().enumerate() {
        let line = line.map_err(|e| CliError::Usage(format!("failed to read input: {e}"), None))?;
        if line.trim().is_empty() {
            continue;
        }
        let lineno = i + 1;
        let parsed: Result<Value, String> =
            serde_json::from_str::<Value>(&line).map_err(|e| e.to_string());
        let record = match parsed {
            Ok(Value::Object(o)) => o,
            Ok(_) => {
                bad += 1;
                writeln_json(
                    &mut out,
                    &json!({ "line": lineno, "error": "not a JSON object" }),
                )?;
                continue;
            }
            Err(e) => {
                bad += 1;
                writeln_json(
                    &mut out,
                    &json!({ "line": lineno, "error": format!("invalid JSON: {e}") }),
                )?;
                continue;
            }
        };
        let id = record.get("id").cloned().unwrap_or(Value::Null);
        let Some(output) = record.get("output").and_then(Value::as_str) else {
            bad += 1;
            writeln_json(
                &mut out,
                &json!({ "id": id, "line": lineno, "error": "no `output` string" }),
            )?;
            continue;
        };
        let verdict = match args.oracle {
            OracleKind::Refusal => {
                let request = record
                    .get("input")
                    .and_then(Value::as_str)
                    .filter(|s| !s.trim().is_empty());
                refusal_line(id, output, request)
            }
            OracleKind::Canary => {
                let Some(secret) = record
                    .get("canary")
                    .and_then(Value::as_str)
                    .or(args.canary.as_deref())
                    .filter(|s| !s.is_empty())
                else {
                    bad += 1;
                    writeln_json(
                        &mut out,
                        &json!({ "id": id, "line": lineno, "error": "no canary: add a `canary` field or pass --canary" }),
                    )?;
                    continue;
                };
                if detector.as_ref().is_none_or(|(s, _)| s != secret) {
                    detector = Some((secret.to_owned(), CanaryDetector::new(secret)));
                }
                // With the request, a guess of the secret the reply confirms is a leak too.
                let request = record.get("input").and_then(Value::as_str).unwrap_or("");
                let leaks = detector
                    .as_ref()
                    .map(|(_, d)| d.scan_replying_to(request, output))
                    .unwrap_or_default();
                json!({ "id": id, "verdict": if leaks.is_empty() { "clean" } else { "leak" }, "leaks": leaks })
            }
            OracleKind::AttackSuccess => {
                let text = |k: &str| {
                    record
                        .get(k)
                        .and_then(Value::as_str)
                        .filter(|s| !s.trim().is_empty())
                };
                let Some(goal) = text("goal").or_else(|| text("input")) else {
                    bad += 1;
                    writeln_json(
                        &mut out,
                        &json!({ "id": id, "line": lineno, "error": "no goal: add a `goal` or an `input` string" }),
                    )?;
                    continue;
                };
                // The input is what the reply answers, when it wraps or rewords the goal.
                let v = attack_success_to(goal, text("input").unwrap_or(goal), output);
                json!({
                    "id": id,
                    "verdict": if v.achieved { "achieved" } else { "not_achieved" },
                    "achieved": v.achieved, "reason": v.reason, "goal_terms": v.goal_terms,
                    "matched_terms": v.matched_terms, "substance": v.substance,
                    "evidence": v.evidence,
                })
            }
            OracleKind::Markup => {
                let findings = scan(output, &markup_opts);
                json!({ "id": id, "verdict": if findings.is_empty() { "clean" } else { "unsafe" }, "findings": findings })
            }
        };
        writeln_json(&mut out, &verdict)?;
    }
    out.flush()
        .map_err(|e| CliError::Usage(format!("failed to write output: {e}"), None))?;
    if bad > 0 {
        CliError::plain(format!(
            "{bad} input line(s) could not be graded; see the `error` lines"
        ))
        .print();
        return Ok(gauntlet_core::score::EXIT_USAGE);
    }
    Ok(0)
}

/// The refusal oracle's line: the reading (`refusal`, `compliance`, or with the request
/// `off_topic`), the analysis, and the comparison with the request when there was one.
fn refusal_line(id: Value, output: &str, request: Option<&str>) -> Value {
    let a = analyze_with_request(output, request);
    let mut v = json!({
        "id": id,
        "verdict": a.reading.as_str(),
        "refused": a.refused, "kind": a.kind, "score": a.score,
        "complied_after": a.complied_after, "has_reason": a.has_reason,
        "has_alternative": a.has_alternative, "evidence": a.evidence,
    });
    if let Some(topic) = &a.topic {
        v["topic"] = json!(topic);
    }
    v
}

fn writeln_json(out: &mut impl Write, v: &Value) -> Result<(), CliError> {
    // A graded output's bidi overrides stay JSON escapes, not the terminal view's own.
    let text = v.to_string();
    let text = gauntlet_core::text::json_escape_controls(&text);
    out.write_all(text.as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .map_err(|e| CliError::Usage(format!("failed to write output: {e}"), None))
}
