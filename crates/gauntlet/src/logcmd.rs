//! The regression protocol on the command line: `log RUN` (the regression log and its JSON
//! twin), `plan --change TYPE` (what to re-run for a kind of change), `plan SUITE --diff BASE`
//! (the cases to run for the files a change touched, under a profile: the mapping is
//! `gauntlet_suite::changes`) and `sample-size` (pairs a comparison needs).

use std::io::Write;
use std::path::Path;

use gauntlet_core::compare::Comparison;
use gauntlet_core::event::RunManifest;
use gauntlet_core::regression::{ChangeType, hypothesis};
use gauntlet_core::summary::Summary;
use gauntlet_report::text::{failure_reason, opt_num};
use gauntlet_store::compare::comparison;

use gauntlet_suite::changes::{ChangePlan, ChangedFile, Profile};

use crate::cli::{LogArgs, PlanArgs, PlanProfile, SampleSizeArgs};
use crate::error::CliError;
use crate::out::Printer;
use crate::setup::{open_existing_store, store_err};

pub fn plan(args: PlanArgs) -> Result<i32, CliError> {
    let Some(change) = args.change else {
        return plan_changes(args);
    };
    let change = ChangeType::from(change);
    let mut out = Printer::stdout();
    writeln!(out, "A {} change: re-run", change.title())?;
    for p in change.rerun_scope() {
        writeln!(out, "  - {p}")?;
    }
    // One filter with `|`-joined alternatives selects what the scope means: separate
    // `--filter`s of different keys would AND them.
    let hint = match change {
        ChangeType::Prompt => "gauntlet run SUITE --filter 'pack:smoke|pack:regression'",
        ChangeType::Tool => {
            "gauntlet run SUITE --filter 'pack:smoke|pack:regression|pack:security'"
        }
        ChangeType::Model => {
            "gauntlet run SUITE --filter 'pack:smoke|pack:refusal|kind:refusal|pack:regression'"
        }
        ChangeType::Judge => {
            "gauntlet run SUITE --filter 'pack:smoke|pack:regression'  (plus `gauntlet judge calibrate` on the calibration set)"
        }
        ChangeType::Retrieval => "gauntlet run SUITE --filter 'pack:regression|tag:grounding'",
        ChangeType::Workflow => {
            "gauntlet run SUITE --filter 'tag:handoff|tag:coordination|pack:regression'"
        }
    };
    writeln!(out, "\nFor example: {hint}")?;
    writeln!(
        out,
        "Prefer the smallest scope that covers the risk; nightly runs take the full set."
    )?;
    Ok(0)
}

pub fn sample_size(args: SampleSizeArgs) -> Result<i32, CliError> {
    let Some(n) =
        gauntlet_core::stats::mcnemar_sample_size(args.p01, args.p10, args.alpha, args.power)
    else {
        return Err(CliError::usage(
            "no sample size for these inputs",
            "p01 and p10 are probabilities with p01 + p10 <= 1 and p01 != p10; alpha and power are in (0, 1)",
        ));
    };
    let mut out = Printer::stdout();
    writeln!(
        out,
        "{n} paired cases detect p01 = {} vs p10 = {} (discordant share {:.3}, difference {:+.3}) with a two-sided McNemar test at alpha = {} and power = {}.",
        args.p01,
        args.p10,
        args.p01 + args.p10,
        args.p10 - args.p01,
        args.alpha,
        args.power
    )?;
    writeln!(
        out,
        "(Connor 1987, normal approximation.) A 15-25 case smoke set answers \"is something obviously broken\", not \"is B a few points better\"."
    )?;
    Ok(0)
}

/// Appends a run to the regression log: what changed, what ran, what failed or improved
/// (with a root-cause hypothesis per new failure), and the decision.
pub fn log(args: LogArgs) -> Result<i32, CliError> {
    let kind = ChangeType::from(args.change);
    let mut store = open_existing_store(args.store.store.as_deref())?;
    let run = store.resolve(&args.run).map_err(store_err)?;
    let manifest = store.manifest(&run).map_err(store_err)?;
    let Some((summary, finished_at)) = store.summary(&run).map_err(store_err)? else {
        return Err(CliError::usage(
            format!("run {run} did not finish"),
            "log finished runs only",
        ));
    };
    let against = match &args.against {
        Some(a) => Some(store.resolve(a).map_err(store_err)?),
        None => store.baseline("default").map_err(store_err)?,
    };
    let cmp = match &against {
        Some(a) if *a != run => {
            Some(comparison(&mut store, a, &run, failure_reason).map_err(store_err)?)
        }
        _ => None,
    };
    let e = LogEntry {
        args: &args,
        kind,
        date: finished_at.get(..10).unwrap_or(&finished_at).to_owned(),
        regressions: regressions(cmp.as_ref(), kind),
        run,
        against,
        manifest,
        summary,
        cmp,
    };
    append(&args.file, &e.markdown(), &e.json())?;
    writeln!(
        Printer::stdout(),
        "appended run {} to {} and {}",
        e.run,
        args.file.display(),
        json_twin(&args.file).display()
    )?;
    Ok(0)
}

/// One entry of the regression log, gathered once and written twice (Markdown and JSON).
struct LogEntry<'a> {
    args: &'a LogArgs,
    kind: ChangeType,
    /// The day the run finished.
    date: String,
    run: String,
    /// The run compared with, if any.
    against: Option<String>,
    manifest: RunManifest,
    summary: Summary,
    cmp: Option<Comparison>,
    /// The new failures with their hypotheses, as the JSON entry holds them.
    regressions: Vec<serde_json::Value>,
}

/// The comparison's new failures, each with its root-cause hypothesis.
fn regressions(cmp: Option<&Comparison>, kind: ChangeType) -> Vec<serde_json::Value> {
    cmp.map(|c| {
        c.new_failures
            .iter()
            .map(|f| {
                let h = hypothesis(f, kind);
                serde_json::json!({
                    "case": f.id, "previous": f.before.as_str(), "current": f.after.as_str(),
                    "hypothesis": h.text, "class": h.class.as_str(),
                })
            })
            .collect()
    })
    .unwrap_or_default()
}

impl LogEntry<'_> {
    /// The JSON twin's entry.
    fn json(&self) -> serde_json::Value {
        let LogEntry {
            args,
            kind,
            date,
            run,
            against,
            manifest,
            summary,
            cmp,
            regressions,
        } = self;
        let change = kind.as_str();
        let packs = kind.rerun_scope();
        serde_json::json!({
            "log_version": 1,
            "date": date,
            "run": run,
            "compared_with": against,
            "version_from": args.from,
            "version_to": args.to,
            "change_type": change,
            "description": args.description,
            "expected_impact": args.expected_impact,
            "risk_areas": args.risk,
            "rerun_scope": packs,
            "task_avg": summary.tasks.avg,
            "refusal_avg": summary.refusals.avg,
            "suite_normalized": summary.suite_normalized,
            "status": summary.status,
            "quality_band": summary.quality_band,
            "hard_fails": summary.hard_fails,
            "new_failures": cmp.as_ref().map_or(0, |c| c.new_failures.len()),
            "fixed": cmp.as_ref().map_or(0, |c| c.fixed.len()),
            "mcnemar_p": cmp.as_ref().map(|c| c.mcnemar_p),
            "regressions": regressions,
            "manifest": {
                "gauntlet_version": manifest.gauntlet_version,
                "target": manifest.target.label,
                "model": manifest.target.model,
                "suites": manifest.suites,
                "dataset_revision": manifest.dataset_revision,
                "tool_versions": manifest.tool_versions,
                "judge": manifest.judge,
                "k": manifest.k,
                "seed": manifest.seed,
                "evidence_level": manifest.evidence_level,
                "side_effects": manifest.side_effects,
            },
        })
    }

    /// The Markdown entry: a reading of the fields the JSON entry holds in full (its
    /// exhaustive pattern is the one that makes a new field be written).
    fn markdown(&self) -> String {
        let (args, date, run, manifest, summary) = (
            self.args,
            &self.date,
            &self.run,
            &self.manifest,
            &self.summary,
        );
        let kind = self.kind;
        let change = kind.as_str();
        let what = kind.title();
        let packs = kind.rerun_scope();
        let mut md = String::new();
        md.push_str(&format!(
            "\n## {date}: {} -> {} ({change} change)\n\n",
            args.from.as_deref().unwrap_or("?"),
            args.to.as_deref().unwrap_or("?")
        ));
        md.push_str(&format!("- Description: {}\n", args.description));
        if let Some(e) = &args.expected_impact {
            md.push_str(&format!("- Expected impact: {e}\n"));
        }
        if !args.risk.is_empty() {
            md.push_str(&format!("- Risk areas: {}\n", args.risk.join("; ")));
        }
        md.push_str(&format!(
            "- Rerun scope ({what} change): {}\n",
            packs.join(", ")
        ));
        md.push_str(&format!(
            "- Run: `{run}` against {}{}; k = {}, seed = {}; evidence {:?}, side effects {:?}\n",
            gauntlet_report::md::code(&manifest.target.label),
            self.against
                .as_ref()
                .map_or(String::new(), |a| format!(", compared with `{a}`")),
            manifest.k,
            manifest.seed,
            manifest.evidence_level,
            manifest.side_effects
        ));
        md.push_str(&format!(
            "- Versions: gauntlet {}, dataset {}, judge {}, tools {}\n",
            manifest.gauntlet_version,
            manifest.dataset_revision,
            manifest.judge.as_deref().unwrap_or("none"),
            if manifest.tool_versions.is_empty() {
                "none".to_owned()
            } else {
                manifest
                    .tool_versions
                    .iter()
                    .map(|(k, v)| format!("{k}@{v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ));
        md.push_str(&format!(
            "- Result: task avg {}/18 · refusal avg {}/3 · normalised {} · status **{}** · band {} · hard fails {}\n",
            opt_num(summary.tasks.avg),
            opt_num(summary.refusals.avg),
            summary.suite_normalized.map_or("-".into(), |n| format!("{n:.3}")),
            summary.status,
            summary.quality_band.map_or("-".into(), |b| b.to_string()),
            summary.hard_fails
        ));
        if let Some(c) = &self.cmp {
            md.push_str(&format!(
                "- Changes: {} new failure(s), {} fixed; McNemar p = {:.4}\n",
                c.new_failures.len(),
                c.fixed.len(),
                c.mcnemar_p
            ));
            if !c.new_failures.is_empty() {
                md.push_str("\n| case | previous | current | root-cause hypothesis | class |\n|---|---|---|---|---|\n");
                for r in &self.regressions {
                    // The hypothesis quotes the failure's reason, model text included: inert,
                    // as in summary.md.
                    md.push_str(&format!(
                        "| {} | {} | {} | {} | {} |\n",
                        gauntlet_report::md::code_cell(r["case"].as_str().unwrap_or("")),
                        r["previous"].as_str().unwrap_or(""),
                        r["current"].as_str().unwrap_or(""),
                        gauntlet_report::md::text(r["hypothesis"].as_str().unwrap_or("")),
                        r["class"].as_str().unwrap_or("")
                    ));
                }
            }
        }
        md.push_str(&format!("\nDecision: {}.\n", decision(summary.status)));
        md
    }
}

/// What the log advises for a state.
fn decision(status: gauntlet_core::score::Status) -> &'static str {
    match status {
        gauntlet_core::score::Status::Pass => "approve",
        gauntlet_core::score::Status::Conditional => "review the weak cases",
        gauntlet_core::score::Status::Inconclusive => {
            "add the missing evidence and rerun; do not merge"
        }
        gauntlet_core::score::Status::Fail => "fix forward or roll back",
    }
}

fn json_twin(md: &Path) -> std::path::PathBuf {
    md.with_extension("json")
}

/// Appends to the Markdown log (created with a heading if missing) and to its JSON twin (an
/// array of entries), writing the JSON atomically.
fn append(md: &Path, text: &str, entry: &serde_json::Value) -> Result<(), CliError> {
    let io = |e: std::io::Error, p: &Path| {
        CliError::usage(
            format!("failed to write `{}`: {e}", p.display()),
            "check the path",
        )
    };
    if !md.exists() {
        std::fs::write(md, "# Regression log\n").map_err(|e| io(e, md))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(md)
        .map_err(|e| io(e, md))?;
    f.write_all(text.as_bytes()).map_err(|e| io(e, md))?;
    let twin = json_twin(md);
    let mut entries: Vec<serde_json::Value> = match std::fs::read_to_string(&twin) {
        Ok(t) if !t.trim().is_empty() => serde_json::from_str(&t).map_err(|e| {
            CliError::usage(
                format!("`{}` is not a JSON array: {e}", twin.display()),
                "fix or move the file",
            )
        })?,
        _ => Vec::new(),
    };
    entries.push(entry.clone());
    let tmp = twin.with_extension("json.partial");
    std::fs::write(
        &tmp,
        serde_json::to_string_pretty(&entries).expect("serializes") + "\n",
    )
    .map_err(|e| io(e, &tmp))?;
    std::fs::rename(&tmp, &twin).map_err(|e| io(e, &twin))?;
    Ok(())
}

/// Single quotes for a shell, with any quote inside closed and reopened.
fn sh_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-:=+,@".contains(c))
    {
        return s.to_owned();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The changed files: from `git diff --name-only BASE` in the first suite's repository, or
/// as given.
fn changed_files(args: &PlanArgs) -> Result<Vec<ChangedFile>, CliError> {
    use std::path::PathBuf;
    if let Some(base) = &args.diff {
        let first = &args.suites[0];
        let dir = first
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let git = |a: &[&str]| -> Result<String, CliError> {
            let o = std::process::Command::new("git")
                .arg("-C")
                .arg(dir)
                .args(a)
                .output()
                .map_err(|e| {
                    CliError::usage(
                        format!("failed to run git: {e}"),
                        "install git, or name the changed files with --changed FILE...",
                    )
                })?;
            if !o.status.success() {
                return Err(CliError::usage(
                    format!(
                        "`git {}` failed: {}",
                        a.join(" "),
                        String::from_utf8_lossy(&o.stderr).trim()
                    ),
                    "--diff takes a revision of the suite's repository (a branch, a tag, a commit); outside git use --changed FILE...",
                ));
            }
            Ok(String::from_utf8_lossy(&o.stdout).into_owned())
        };
        let root = PathBuf::from(git(&["rev-parse", "--show-toplevel"])?.trim());
        let names = git(&["diff", "--name-only", base, "--"])?;
        return Ok(names
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| ChangedFile {
                shown: l.to_owned(),
                path: root.join(l),
            })
            .collect());
    }
    Ok(args
        .changed
        .iter()
        .map(|p| {
            let shown = p.display().to_string();
            ChangedFile {
                shown: shown.strip_prefix("./").unwrap_or(&shown).to_owned(),
                path: p.clone(),
            }
        })
        .collect())
}

fn plan_changes(args: PlanArgs) -> Result<i32, CliError> {
    if args.suites.is_empty() {
        return Err(CliError::usage(
            "name the suites to plan over",
            "gauntlet plan SUITE... --diff BASE (or --changed FILE..., or --profile nightly)",
        ));
    }
    let profile = match args.profile.unwrap_or(PlanProfile::Pr) {
        PlanProfile::Pr => Profile::Pr,
        PlanProfile::Nightly => Profile::Nightly,
        PlanProfile::Release => Profile::Release,
    };
    let paths: Vec<String> = args
        .suites
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let suites = crate::setup::load_all(&paths, None, None, None, &args.allow_path)?;
    let changed = changed_files(&args)?;
    let cfg_path = args
        .config
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from("gauntlet.yaml"));
    let globs = if args.config.is_some() || cfg_path.exists() {
        gauntlet_suite::load::load_config(&cfg_path)
            .map_err(CliError::Diagnostics)?
            .change_globs
    } else {
        Default::default()
    };
    let plan = gauntlet_suite::changes::plan_changes(&suites, &changed, &globs, profile);
    let command = run_command(&paths, profile, &plan);
    let mut out = Printer::stdout();
    if args.json {
        return print_plan_json(&mut out, &args, &plan, &command);
    }
    print_plan_text(&mut out, &args, profile, changed.len(), &plan, &command)
}

/// The `gauntlet run` command that runs the plan (empty when no case is selected).
fn run_command(paths: &[String], profile: Profile, plan: &ChangePlan) -> String {
    let suites_arg: Vec<String> = paths.iter().map(|p| sh_quote(p)).collect();
    let mut command = format!("gauntlet run {}", suites_arg.join(" "));
    match profile {
        Profile::Pr => match plan.filter() {
            Some(f) => command.push_str(&format!(" --filter {}", sh_quote(&f))),
            None => command.clear(),
        },
        Profile::Nightly => command.push_str(" -k 5"),
        Profile::Release => command.push_str(" -k 5 --include-holdout"),
    }
    command
}

/// The plan as JSON, with the base, the filter and the command.
fn print_plan_json(
    out: &mut Printer,
    args: &PlanArgs,
    plan: &ChangePlan,
    command: &str,
) -> Result<i32, CliError> {
    let mut v = serde_json::to_value(plan).expect("plan serializes");
    if let serde_json::Value::Object(m) = &mut v {
        m.insert("base".into(), args.diff.clone().into());
        m.insert("filter".into(), plan.filter().into());
        m.insert(
            "command".into(),
            (!command.is_empty()).then(|| command.to_owned()).into(),
        );
    }
    out.json(&v)?;
    Ok(0)
}

/// The plan as text: the changed files and their kinds, each suite's selected cases, what
/// else to do, and the command.
fn print_plan_text(
    out: &mut Printer,
    args: &PlanArgs,
    profile: Profile,
    changed: usize,
    plan: &ChangePlan,
    command: &str,
) -> Result<i32, CliError> {
    let since = match &args.diff {
        Some(b) => format!(" since {b}"),
        None => String::new(),
    };
    writeln!(
        out,
        "Plan ({} profile): {} changed file{}{since}",
        profile.as_str(),
        changed,
        if changed == 1 { "" } else { "s" }
    )?;
    let width = plan
        .changed
        .iter()
        .map(|f| f.file.chars().count())
        .chain(plan.unclassified.iter().map(|f| f.chars().count()))
        .max()
        .unwrap_or(0)
        .min(48);
    for f in &plan.changed {
        let kinds: Vec<&str> = f.kinds.iter().map(|k| k.as_str()).collect();
        writeln!(
            out,
            "  {:<width$}  {:<12} {}",
            f.file,
            kinds.join(", "),
            f.why
        )?;
    }
    for f in &plan.unclassified {
        writeln!(
            out,
            "  {f:<width$}  {:<12} no rule matched (name it under change_globs in gauntlet.yaml if it matters)",
            "unclassified"
        )?;
    }
    for s in &plan.suites {
        writeln!(
            out,
            "\nSuite `{}` ({}): {} of {} case{}",
            s.suite,
            s.file,
            s.selected.len(),
            s.cases,
            if s.cases == 1 { "" } else { "s" }
        )?;
        if profile == Profile::Pr {
            let w = s
                .selected
                .iter()
                .map(|c| c.id.chars().count())
                .max()
                .unwrap_or(0)
                .min(40);
            for c in &s.selected {
                writeln!(out, "  {:<w$}  {}", c.id, c.reasons.join("; "))?;
            }
        }
        if s.holdout > 0 {
            writeln!(
                out,
                "  {} hold-out case{} {}",
                s.holdout,
                if s.holdout == 1 { "" } else { "s" },
                if s.holdout_included {
                    "run too, reported only as pass rates per slice"
                } else {
                    "not run (the release profile runs them)"
                }
            )?;
        }
    }
    if !plan.also.is_empty() {
        writeln!(out, "\nAlso:")?;
        for a in &plan.also {
            writeln!(out, "  - {a}")?;
        }
    }
    if !plan.notes.is_empty() {
        writeln!(out, "\nNotes:")?;
        for n in &plan.notes {
            writeln!(out, "  - {n}")?;
        }
    }
    if command.is_empty() {
        writeln!(out, "\nNothing to run: no case is selected.")?;
    } else {
        writeln!(out, "\nRun it:\n  {command}")?;
    }
    Ok(0)
}
