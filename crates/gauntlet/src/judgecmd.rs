//! `gauntlet judge calibrate|sample|status`: measuring a judge against people's labels and
//! writing its calibration record, exporting judged items of a stored run for people to
//! label, and showing which judges of a suite gate and why not.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use gauntlet_core::calibration::{
    BindingStrength, CalibrationMetrics, CalibrationRecord, SECRET_PREFIX, WEAK_BINDING_HELP,
};
use gauntlet_core::judges::{JudgeDef, JudgeScale};
use gauntlet_graders::judge::Judge;
use gauntlet_graders::judge::calibrate::{
    CalibrateOptions, Calibration, RecordFacts, calibrate, record,
};
use gauntlet_graders::judge::labels::{
    ExportItem, LabelFormat, LabelSet, parse_labels, write_items,
};
use gauntlet_graders::judge::sample::{candidates, stratified};
use gauntlet_suite::LoadedSuite;
use sha2::{Digest, Sha256};

use crate::cli::{
    CalibrateArgs, JudgeArgs, JudgeCommand, JudgeStatusArgs, LabelFileFormat, SampleArgs,
};
use crate::error::CliError;
use crate::judge::{judge_model, judge_panel, open_cache, read_record, record_path};
use crate::out::{self, Printer};
use crate::setup::{load_all, open_existing_store, runtime, store_err};

pub fn judge(args: JudgeArgs) -> Result<i32, CliError> {
    match args.command {
        JudgeCommand::Calibrate(a) => calibrate_cmd(a),
        JudgeCommand::Sample(a) => sample_cmd(a),
        JudgeCommand::Status(a) => status_cmd(a),
    }
}

fn calibrate_cmd(args: CalibrateArgs) -> Result<i32, CliError> {
    let path = args.suite.display().to_string();
    let suites = load_all(std::slice::from_ref(&path), None, None, None, &[])?;
    let suite = &suites[0];
    let def = judge_def(suite, &args.check)?;
    let spec = args
        .judge
        .as_deref()
        .or(def.judge.as_deref())
        .ok_or_else(|| {
            CliError::usage(
                format!("judge `{}` names no model", args.check),
                "pass --judge SPEC, or set `judge:` on the judge in the suite",
            )
        })?;
    let mut redactor = gauntlet_core::redact::Redactor::new();
    let model = judge_model(spec, args.config.as_deref(), &mut redactor)?;
    let cache = open_cache(args.judge_cache.as_deref(), false, None)?;
    let judge = Judge::new(
        &args.check,
        gauntlet_engine::judge::with_card(def, &suite.suite.agent),
        Some(model),
        cache,
    )
    .map_err(|e| CliError::usage(e.to_string(), e.hint()))?;

    let (bytes, labels) = read_labels(
        &args.labels,
        &args.check,
        &judge_names(suite, &args.check),
        def.scale(),
    )?;
    if let (Some(t), Some(who)) = (&suite.suite.target, judge.identity())
        && t.model.as_deref() == Some(who.configured_model.as_str())
    {
        out::warn(&format!(
            "the judge is the suite's target model ({}): models tend to prefer their own answers",
            who.configured_model
        ));
    }
    let opts = CalibrateOptions {
        consistency: args.consistency,
        seed: args
            .seed
            .unwrap_or(gauntlet_core::calibration::BOOTSTRAP_SEED),
        concurrency: args.concurrency.max(1),
    };
    let rt = runtime()?;
    let cal = rt.block_on(calibrate(&judge, &labels, &opts));
    if cal.models.len() > 1 {
        out::warn(&format!(
            "the answers came from more than one model ({}); the record is bound to the most frequent, {}",
            cal.models
                .iter()
                .map(|(m, n)| format!("{m} x{n}"))
                .collect::<Vec<_>>()
                .join(", "),
            cal.model
        ));
    }
    if cal.unreported > 0 && !cal.models.is_empty() {
        out::warn(&format!(
            "{} answer(s) reported no model id while others reported {}; in a run, answers without the recorded model id do not gate",
            cal.unreported, cal.model
        ));
    }
    let file_name = args
        .labels
        .file_name()
        .map_or_else(String::new, |f| f.to_string_lossy().into_owned());
    let rec = record(
        &judge,
        &cal,
        &labels,
        &RecordFacts {
            suite: &suite.suite.suite,
            created: jiff::Timestamp::now().to_string(),
            gauntlet_version: env!("CARGO_PKG_VERSION"),
            labels_file: &file_name,
            labels_sha256: gauntlet_graders::judge::template::hex(&Sha256::digest(&bytes)),
            min_kappa: suite.suite.judges.min_kappa(),
            min_labels: suite.suite.judges.min_labels(),
        },
    );
    let target = if args.dry_run {
        None
    } else {
        let p = args
            .out
            .clone()
            .or_else(|| record_path(suite, &args.check))
            .ok_or_else(|| {
                CliError::usage(
                    "the suite has no folder to write the record in",
                    "pass --out FILE",
                )
            })?;
        write_record(&p, &rec)?;
        Some(p)
    };
    if rec.judge.strength() == BindingStrength::Weak {
        out::warn(&format!(
            "judge `{}` cannot gate on this record: {WEAK_BINDING_HELP}",
            args.check
        ));
    }
    print_calibration(&args, &rec, &cal, target.as_deref())?;
    Ok(if rec.gate.passed { 0 } else { 1 })
}

/// The judge a suite defines under `judges.checks` by this id.
fn judge_def<'a>(suite: &'a LoadedSuite, check: &str) -> Result<&'a JudgeDef, CliError> {
    let Some(def) = suite.suite.judges.checks.get(check) else {
        let defined: Vec<&str> = suite
            .suite
            .judges
            .checks
            .keys()
            .map(String::as_str)
            .collect();
        return Err(CliError::usage(
            format!("suite `{}` defines no judge `{}`", suite.suite.suite, check),
            if defined.is_empty() {
                "define it under `judges: {checks: {ID: {template: ..., rubric: ...}}}`".to_owned()
            } else {
                format!("defined judges: {}", defined.join(", "))
            },
        ));
    };
    Ok(def)
}

/// The names a suite's cases give judge `check` (`name:` on a `judge: CHECK` entry), with
/// each case's id: the viewer writes the name as a label's `check_label`, and another case
/// may give another judge the same name.
fn judge_names(suite: &LoadedSuite, check: &str) -> Vec<(String, String)> {
    let mut names = Vec::new();
    for c in &suite.suite.cases {
        for e in &c.expect {
            if let (Some(n), gauntlet_core::expect::Oracle::Judge(j)) = (&e.name, &e.oracle)
                && j.check.as_deref() == Some(check)
            {
                names.push((c.id.clone(), n.clone()));
            }
        }
    }
    names
}

/// The labels file's bytes (hashed into the record) and its items for one judge, with its
/// problems warned about; a file with no labelled item for the judge is an error.
fn read_labels(
    path: &Path,
    check: &str,
    names: &[(String, String)],
    scale: JudgeScale,
) -> Result<(Vec<u8>, LabelSet), CliError> {
    let bytes = std::fs::read(path).map_err(|e| {
        CliError::usage(
            format!("failed to read the labels `{}`: {e}", path.display()),
            "pass a JSON lines or CSV file of labelled items (see docs/judges.md)",
        )
    })?;
    let text = String::from_utf8(bytes.clone()).map_err(|_| {
        CliError::usage(
            format!("`{}` is not UTF-8 text", path.display()),
            "save the labels as UTF-8",
        )
    })?;
    let labels =
        parse_labels(&text, LabelFormat::of_path(path), check, names, scale).map_err(|e| {
            CliError::usage(
                format!("{}: {e}", path.display()),
                "columns: case_id, check_id, input, output, reference (optional), label",
            )
        })?;
    report_label_problems(&labels, path);
    if labels.items.is_empty() {
        return Err(CliError::usage(
            format!(
                "`{}` holds no labelled item for judge `{}`",
                path.display(),
                check
            ),
            "label some items (gauntlet judge sample RUN --check ID writes them) and try again",
        ));
    }
    Ok((bytes, labels))
}

/// Prints the calibration record (as JSON with `--json`), and with `--show-disagreements`
/// every item where the judge and the people differ.
fn print_calibration(
    args: &CalibrateArgs,
    rec: &CalibrationRecord,
    cal: &Calibration,
    target: Option<&Path>,
) -> Result<(), CliError> {
    let mut out = Printer::stdout();
    if args.json {
        out.json(rec)?;
    } else {
        write!(out, "{}", render_record(rec, target))?;
        if args.show_disagreements {
            let cats = &rec.metrics.categories;
            for it in cal.items.iter() {
                match &it.judge {
                    Ok(j) if *j != it.human => writeln!(
                        out,
                        "  line {:>5}  case {:<24} judge {:<5} people {}",
                        it.line, it.case_id, cats[*j], cats[it.human]
                    )?,
                    Err(e) => writeln!(
                        out,
                        "  line {:>5}  case {:<24} no verdict: {}",
                        it.line,
                        it.case_id,
                        gauntlet_report::text::clip(e, 100)
                    )?,
                    Ok(_) => {}
                }
            }
        }
    }
    Ok(())
}

fn report_label_problems(labels: &LabelSet, file: &Path) {
    let lines = |v: &[usize]| {
        v.iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !labels.conflicts.is_empty() {
        out::warn(&format!(
            "{}: {} item(s) labelled differently by different rows were left out (lines {})",
            file.display(),
            labels.conflicts.len(),
            labels
                .conflicts
                .iter()
                .map(|c| lines(&c.lines))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    if !labels.duplicates.is_empty() {
        out::warn(&format!(
            "{}: {} item(s) labelled more than once with the same label count once (lines {})",
            file.display(),
            labels.duplicates.len(),
            labels
                .duplicates
                .iter()
                .map(|c| lines(&c.lines))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    if !labels.unlabelled.is_empty() {
        out::note(&format!(
            "{}: {} row(s) have no label yet and were skipped",
            file.display(),
            labels.unlabelled.len()
        ));
    }
}

/// Writes a record whole or not at all.
fn write_record(path: &Path, rec: &CalibrationRecord) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(rec).expect("records serialize") + "\n";
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| {
            CliError::usage(
                format!("failed to write the record `{}`: {e}", path.display()),
                "pass --out FILE in a folder you can write",
            )
        })
}

/// How firmly a record is bound, and to what: the model, then the settings (a secret one
/// as `(secret)`).
fn binding_line(rec: &CalibrationRecord) -> String {
    let j = &rec.judge;
    let mut what = Vec::new();
    if let Some(m) = &j.reported_model {
        what.push(format!("reported model {m}"));
    }
    if let Some(m) = &j.pinned_model {
        what.push(format!("pinned model {m}"));
    }
    for (k, v) in &j.settings {
        if v.starts_with(SECRET_PREFIX) {
            what.push(format!("{k}=(secret)"));
        } else {
            what.push(format!("{k}={v}"));
        }
    }
    let to = if what.is_empty() {
        String::new()
    } else {
        format!(": {}", what.join(", "))
    };
    match j.strength() {
        BindingStrength::Strong => format!("strong{to}"),
        BindingStrength::Weak => format!("weak (nothing pins the model that answers){to}"),
    }
}

fn f3(v: f64) -> String {
    format!("{v:.3}")
}

/// A record as text: the figures a team lead reads, then the gate.
pub fn render_record(rec: &CalibrationRecord, written: Option<&Path>) -> String {
    let m: &CalibrationMetrics = &rec.metrics;
    let mut o = String::new();
    o.push_str(&format!(
        "judge `{}` of suite `{}` against {} ({} rows, {} used)\n",
        rec.check, rec.suite, rec.labels.file, rec.labels.rows, rec.labels.used
    ));
    o.push_str(&format!(
        "  judge             {} at {} ({}), prompt {}\n",
        rec.judge.configured_model,
        rec.judge.endpoint,
        match &rec.judge.reported_model {
            Some(m) => format!("answers from {m}"),
            None => "answers report no model id".to_owned(),
        },
        rec.judge.template
    ));
    o.push_str(&format!("  binding           {}\n", binding_line(rec)));
    o.push_str(&format!(
        "  n                 {} answered of {} ({} judge error(s))\n",
        m.n, m.items, m.judge_errors
    ));
    if m.n == 0 {
        o.push_str("  figures           none: the judge answered no item in the format\n");
    } else {
        o.push_str(&format!(
            "  base rate         {} of the items people labelled failing; the judge says failing for {}\n",
            f3(m.base_rate),
            f3(m.judge_rate)
        ));
        o.push_str(&format!("  accuracy          {}\n", f3(m.accuracy)));
    }
    if m.n > 0 {
        let kind = match m.weights {
            gauntlet_core::stats::KappaWeights::Unweighted => "Cohen's kappa",
            gauntlet_core::stats::KappaWeights::Quadratic => "weighted kappa (quadratic)",
        };
        match (m.kappa, m.interval) {
            (Some(k), Some(i)) => o.push_str(&format!(
                "  {kind:<17} {}  95% interval {}..{} (bootstrap, {} resamples, seed {})\n",
                f3(k),
                f3(i.low),
                f3(i.high),
                i.resamples,
                i.seed
            )),
            (Some(k), None) => o.push_str(&format!("  {kind:<17} {}\n", f3(k))),
            _ => o.push_str(&format!("  {kind:<17} undefined (one category only)\n")),
        }
        o.push_str("  confusion         rows: the judge; columns: the people\n");
        o.push_str(&format!("  {:>18}", ""));
        for c in &m.categories {
            o.push_str(&format!("{c:>7}"));
        }
        o.push('\n');
        for (c, row) in m.categories.iter().zip(&m.confusion) {
            o.push_str(&format!("  {c:>18}"));
            for v in row {
                o.push_str(&format!("{v:>7}"));
            }
            o.push('\n');
        }
    }
    if let Some(a) = m.self_consistency.filter(|a| a.n > 0) {
        o.push_str(&format!(
            "  self-consistency  {}/{} asked twice agreed ({})\n",
            a.agreed,
            a.n,
            f3(a.rate)
        ));
    }
    if let Some(a) = m.order_swap.filter(|a| a.n > 0) {
        o.push_str(&format!(
            "  order swap        {}/{} kept their verdict with A and B swapped ({})\n",
            a.agreed,
            a.n,
            f3(a.rate)
        ));
    }
    if rec.labels.duplicates + rec.labels.conflicts > 0 {
        o.push_str(&format!(
            "  label repeats     {} duplicate(s) counted once, {} conflict(s) left out\n",
            rec.labels.duplicates, rec.labels.conflicts
        ));
    }
    o.push_str(&match &rec.gate.reason {
        None => format!(
            "  gate              PASSES: kappa's lower bound clears {} with n >= {}; `{}` gates while its prompt, rubric and model stay as recorded\n",
            rec.gate.min_kappa, rec.gate.min_labels, rec.check
        ),
        Some(r) => format!("  gate              does not pass: {r}; `{}` stays triage\n", rec.check),
    });
    if let Some(p) = written {
        o.push_str(&format!("  record            {}\n", p.display()));
    }
    o
}

fn sample_cmd(args: SampleArgs) -> Result<i32, CliError> {
    let mut store = open_existing_store(args.store.store.as_deref())?;
    let run = store.resolve(&args.run).map_err(store_err)?;
    let mut cands = Vec::new();
    store
        .for_each_case(&run, |c| {
            cands.extend(candidates(&c, &args.check));
            Ok(())
        })
        .map_err(store_err)?;
    if cands.is_empty() {
        return Err(CliError::usage(
            format!("run {run} has no verdict of judge `{}`", args.check),
            "sample a run made with the judge configured (--judge SPEC or `judge:` on the judge)",
        ));
    }
    let total = cands.len();
    let picked = stratified(cands, args.n, args.seed);
    let mut strata: BTreeMap<&str, usize> = BTreeMap::new();
    for c in &picked {
        *strata.entry(c.stratum.as_str()).or_default() += 1;
    }
    let format = match (args.format, &args.out) {
        (Some(LabelFileFormat::Csv), _) => LabelFormat::Csv,
        (Some(LabelFileFormat::Jsonl), _) => LabelFormat::Jsonl,
        (None, Some(p)) if p.extension().is_some_and(|e| e == "jsonl" || e == "ndjson") => {
            LabelFormat::Jsonl
        }
        (None, _) => LabelFormat::Csv,
    };
    let items: Vec<ExportItem> = picked
        .iter()
        .map(|c| ExportItem {
            case_id: c.case_id.clone(),
            check_id: args.check.clone(),
            input: c.subject.input.clone(),
            output: c.subject.output.clone(),
            reference: c.subject.reference.clone(),
        })
        .collect();
    let text = write_items(&items, format);
    match &args.out {
        Some(p) => std::fs::write(p, &text).map_err(|e| {
            CliError::usage(
                format!("failed to write `{}`: {e}", p.display()),
                "pass --out FILE in a folder you can write",
            )
        })?,
        None => write!(Printer::stdout(), "{text}")?,
    }
    out::note(&format!(
        "{} of {total} judged item(s) of run {run}{} (by the judge's verdict: {}); fill in `label` and run `gauntlet judge calibrate SUITE --check {} --labels FILE`",
        items.len(),
        args.out
            .as_ref()
            .map(|p| format!(" written to {}", p.display()))
            .unwrap_or_default(),
        strata
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", "),
        args.check
    ));
    Ok(0)
}

fn status_cmd(args: JudgeStatusArgs) -> Result<i32, CliError> {
    let paths: Vec<String> = args
        .suites
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let suites = load_all(&paths, None, None, None, &[])?;
    let mut redactor = gauntlet_core::redact::Redactor::new();
    let setup = judge_panel(
        &suites,
        args.judge.as_deref(),
        args.config.as_deref(),
        open_cache(None, false, None)?,
        None,
        &mut redactor,
    )?;
    for w in &setup.warnings {
        out::warn(w);
    }
    let mut out = Printer::stdout();
    if setup.refs.is_empty() {
        writeln!(out, "no judge is defined (judges: checks: ...)")?;
        return Ok(0);
    }
    for s in &suites {
        for id in s.suite.judges.checks.keys() {
            let Some(j) = setup.panel.get(id) else {
                continue;
            };
            let r = j.reference();
            let record = record_path(s, id);
            let state = match &j.gate {
                Ok(()) => "GATES ".to_owned(),
                Err(_) => "triage".to_owned(),
            };
            writeln!(
                out,
                "{state}  {id:<20} {} {} ({})",
                r.configured_model, r.template, r.gate
            )?;
            if let Some(p) = record {
                let found = match read_record(Some(&p)) {
                    Ok(Some(rec)) => format!(
                        "kappa {} [{}], n {}, model {}, binding {}, {}",
                        rec.metrics.kappa.map_or("-".into(), f3),
                        rec.metrics.interval.map_or("-".into(), |i| format!(
                            "{}..{}",
                            f3(i.low),
                            f3(i.high)
                        )),
                        rec.metrics.n,
                        rec.judge.model,
                        rec.judge.strength().as_str(),
                        rec.created
                    ),
                    Ok(None) => "no record".into(),
                    Err(e) => e,
                };
                writeln!(out, "        record {}: {found}", p.display())?;
            }
        }
    }
    Ok(0)
}
