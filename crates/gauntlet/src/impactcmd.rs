//! `gauntlet impact map|affected`: builds the [`ImpactMap`] of a repository
//! (`crate::impact`) and prints it, or the tests a set of changed files affects, on the
//! terminal or as JSON.

use std::io::Write;
use std::path::Path;

use crate::cli::{ImpactArgs, ImpactCommand, ImpactLang};
use crate::error::CliError;
use crate::impact::{self, ImpactMap, Lang};
use crate::out::{Printer, shown};

pub fn impact(args: ImpactArgs) -> Result<i32, CliError> {
    match args.command {
        ImpactCommand::Map {
            repo,
            lang,
            no_coverage,
            json,
        } => {
            let m = build(&repo, lang, !no_coverage)?;
            let mut out = Printer::stdout();
            if json {
                writeln!(
                    out,
                    "{}",
                    serde_json::to_string_pretty(&m).map_err(|e| CliError::plain(e.to_string()))?
                )?;
                return Ok(0);
            }
            writeln!(
                out,
                "{} tests, {} source files covered ({})",
                m.tests.len(),
                m.sources.len(),
                m.lang
            )?;
            for (src, links) in &m.sources {
                writeln!(out, "{}", shown(src))?;
                for l in links {
                    writeln!(out, "  {} [{}]", shown(&l.test), l.method.as_str())?;
                }
            }
            print_skipped(&mut out, &m)?;
            Ok(0)
        }
        ImpactCommand::Affected {
            repo,
            lang,
            changed,
            diff,
            no_coverage,
            json,
        } => {
            let changed = match diff {
                Some(base) => git_changed(&repo, &base)?,
                None => changed,
            };
            let m = build(&repo, lang, !no_coverage)?;
            let a = m.affected(&changed);
            let mut out = Printer::stdout();
            if json {
                let v = serde_json::json!({
                    "changed": changed,
                    "tests": a.tests,
                    "uncovered": a.uncovered,
                    "skipped": m.skipped,
                });
                writeln!(
                    out,
                    "{}",
                    serde_json::to_string_pretty(&v).map_err(|e| CliError::plain(e.to_string()))?
                )?;
                return Ok(0);
            }
            for t in a.tests.keys() {
                writeln!(out, "{}", shown(t))?;
            }
            for u in &a.uncovered {
                writeln!(
                    out,
                    "no test covers {} (its change is not assessed by any test)",
                    shown(u)
                )?;
            }
            print_skipped(&mut out, &m)?;
            Ok(0)
        }
    }
}

fn print_skipped(out: &mut Printer, m: &ImpactMap) -> Result<(), CliError> {
    for s in &m.skipped {
        writeln!(
            out,
            "not analysed: {}: {}",
            shown(&s.path),
            shown(&s.reason)
        )?;
    }
    Ok(())
}

fn build(repo: &Path, lang: ImpactLang, coverage: bool) -> Result<ImpactMap, CliError> {
    let lang = match lang {
        ImpactLang::Python => Lang::Python,
        ImpactLang::Rust => Lang::Rust,
        ImpactLang::Auto => impact::detect(repo).ok_or_else(|| {
            CliError::usage(
                format!("cannot tell the language of {}", repo.display()),
                "pass --lang python or --lang rust",
            )
        })?,
    };
    impact::build(repo, lang, coverage)
        .map_err(|e| CliError::usage(e, "pass the repository folder with --repo"))
}

fn git_changed(repo: &Path, base: &str) -> Result<Vec<String>, CliError> {
    let out = std::process::Command::new("git")
        .args(["diff", "--name-only", "--relative", base, "--"])
        .current_dir(repo)
        .output()
        .map_err(|e| CliError::plain(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        return Err(CliError::usage(
            format!(
                "git diff {base} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            "pass a commit, branch or tag the repository has",
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect())
}
