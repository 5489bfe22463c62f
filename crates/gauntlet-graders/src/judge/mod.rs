//! Model judges: a [`Judge`] (one judge check of a suite: its prompt [`template`], its
//! rubric, the [`JudgeModel`] that answers, its calibration record and whether it may gate)
//! and the [`JudgePanel`] of a run, which grades `judge` entries into verdicts.
//!
//! A judge is any model behind the [`JudgeModel`] seam: a target built by the binary
//! (`openai:`, `anthropic:`, `exec:`, a named target) or a [`fake`] for tests. Every question
//! goes through one path, [`Judge::assess`]: render the prompt, ask (or take the answer from
//! the [`cache`]), read the answer strictly ([`answer`]), and record the call as a
//! [`JudgeSpan`]. Runs and calibration ([`calibrate`]) both use it, so a calibration measures
//! the judge exactly as a run uses it.
//!
//! A judge's verdict changes the state only when the judge gates: a calibration record bound
//! to this judge ([`JudgeIdentity`]: what answers, down to the values of its settings)
//! clears the suite's thresholds, its binding is strong, and the answer reports the model
//! calibrated (`gauntlet_core::calibration`). Otherwise it is triage, shown with the reason.
//! An answer outside the format is a judge error, never a pass and never a fail: the verdict is not
//! assessed, and when the judge gates its case is INCONCLUSIVE. Judges never decide a hard
//! policy failure. A verdict is never asked again: retries are the transport's, for
//! infrastructure failures only.

pub mod answer;
mod bounded;
pub mod cache;
pub mod calibrate;
pub mod fake;
pub mod labels;
pub mod sample;
pub mod template;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use gauntlet_core::calibration::{
    CalibrationRecord, JudgeBinding, JudgeRef, Triage, answer_gate, gate, standing,
};
use gauntlet_core::expect::{Expect, JudgeSpec};
use gauntlet_core::grader::GradeContext;
use gauntlet_core::judges::{JudgeDef, JudgeForm, JudgeScale, JudgeSubject, Property};
use gauntlet_core::target::{BoxFuture, TargetError};
use gauntlet_core::trace::{JudgeSpan, Message, Span, Trace, Usage};
use gauntlet_core::verdict::Verdict;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub use bounded::bounded;

use answer::{Answer, Preference, parse_answer};
use cache::JudgeCache;
use template::{PromptVars, Template, rubric_sha256};

/// Who a judge is, before it answers: what a calibration record is bound to and the cache
/// is keyed by. Two judges share records and cached answers only when every field is equal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JudgeIdentity {
    /// Where it is called (`openai https://api.openai.com/v1`, `exec:python3 judge.py`).
    pub endpoint: String,
    /// The model asked for (the pinned model when the configuration pins one, else the
    /// target's label).
    pub configured_model: String,
    /// Sampling settings that change answers (temperature, seed, max tokens).
    pub params: String,
    /// The values of the other settings that change answers (`env.MODEL`, `header.NAME`);
    /// secret ones as `secret:` and a salted hash, never the value.
    pub settings: BTreeMap<String, String>,
    /// The model the configuration pins, if any: the model sent to the API, the value of a
    /// model variable of an exec judge.
    pub pinned_model: Option<String>,
}

/// One question to a judge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgeRequest {
    /// The judge check id.
    pub check: String,
    /// The system prompt.
    pub system: String,
    /// The user prompt.
    pub user: String,
    /// Which asking of the same question this is (0; 1 for calibration's second asking).
    pub sample: u32,
    /// Pairwise: the agent's answer is shown as B.
    pub swapped: bool,
    /// The item's other fields (case vars, extra label-file columns). Models never see them;
    /// fake judges answer from them.
    pub fields: BTreeMap<String, String>,
}

/// A judge's reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgeReply {
    /// The text, exactly as received.
    pub text: String,
    /// The model id the API reported.
    #[serde(default)]
    pub model: Option<String>,
    /// Token usage.
    #[serde(default)]
    pub usage: Usage,
    /// Wall time, retries included.
    #[serde(default)]
    pub latency_ms: u64,
    /// Attempts made.
    #[serde(default)]
    pub attempts: u32,
}

/// The seam: a model that answers a judge's questions.
pub trait JudgeModel: Send + Sync {
    /// Who it is.
    fn identity(&self) -> JudgeIdentity;

    /// Asks one question. Infrastructure failures are retried inside (and counted in
    /// `attempts`); an `Err` is what is left after the retries.
    fn ask<'a>(&'a self, req: &'a JudgeRequest) -> BoxFuture<'a, Result<JudgeReply, TargetError>>;
}

/// What a judge is asked to judge.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Subject {
    /// What the user said.
    pub input: String,
    /// What is judged.
    pub output: String,
    /// The reference, if any.
    pub reference: Option<String>,
    /// What was retrieved (documents and tool outputs), if anything.
    pub context: Option<String>,
    /// Fields of the item for fake judges (case vars, label-file columns).
    pub fields: BTreeMap<String, String>,
}

impl Subject {
    /// The subject in the shape of a label-file row.
    pub fn as_row(&self) -> JudgeSubject {
        JudgeSubject {
            input: self.input.clone(),
            output: self.output.clone(),
            reference: self.reference.clone(),
            context: self.context.clone(),
        }
    }
}

/// A judge's decision on one subject, once its answer parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// As a label: binary fail 0 and pass 1; the 0-3 score.
    pub category: usize,
    /// The score on the rubric dimension (binary: pass 3, fail 0).
    pub score: u8,
    /// Whether the check passes.
    pub passed: bool,
    /// The judge's reason.
    pub rationale: String,
    /// The model id that answered (the configured one when the API reports none), to show.
    pub model: String,
    /// The model id the answer reported, if it reported one: what the gate compares.
    pub reported: Option<String>,
    /// The answer object as received.
    pub answer: Value,
}

/// What asking a judge about one subject gave.
#[derive(Debug, Clone, PartialEq)]
pub struct Assessment {
    /// The decision, or why there is none.
    pub outcome: Result<Judgement, String>,
    /// The calls made (two for a pairwise judge), for the trace.
    pub calls: Vec<JudgeSpan>,
    /// Pairwise: whether both orders answered and agreed.
    pub swap_stable: Option<bool>,
}

/// One judge check, ready to ask.
pub struct Judge {
    /// The check id (`judge` for an inline judge).
    pub check: String,
    /// Its definition.
    pub def: JudgeDef,
    /// Its prompt.
    pub template: Template,
    /// The hash of its rubric.
    pub rubric_sha256: String,
    model: Option<Arc<dyn JudgeModel>>,
    cache: Arc<JudgeCache>,
    /// Its calibration record, when one was found.
    pub record: Option<CalibrationRecord>,
    /// Whether it may gate (before any answer), or why not.
    pub gate: Result<(), Triage>,
}

/// Why a suite's judge could not be set up: a configuration error, found before any call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JudgeSetupError {
    /// The judge names a template that does not exist.
    #[error("judge `{check}` names no template this gauntlet has ({template})")]
    UnknownTemplate {
        /// The judge's check id.
        check: String,
        /// The template it names.
        template: String,
    },
    /// The template does not render with the judge's own settings.
    #[error("judge `{check}`: {message}")]
    Render {
        /// The judge's check id.
        check: String,
        /// What the template engine said.
        message: String,
    },
}

impl JudgeSetupError {
    /// What the suite's author can do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            JudgeSetupError::UnknownTemplate { .. } => {
                "name a built-in template (pointwise, reference, pairwise, trace, attack-success, semantic-leak, leak, faithfulness, answer-relevance, context-relevance) or a template_file; see docs/judges.md"
            }
            JudgeSetupError::Render { .. } => {
                "use only the variables docs/judges.md lists for templates"
            }
        }
    }
}

impl Judge {
    /// A suite judge with its model (`None` when no model is configured). It starts
    /// uncalibrated; [`Judge::with_record`] decides its gate.
    pub fn new(
        check: &str,
        def: JudgeDef,
        model: Option<Arc<dyn JudgeModel>>,
        cache: Arc<JudgeCache>,
    ) -> Result<Judge, JudgeSetupError> {
        let template = Template::of(&def).ok_or_else(|| JudgeSetupError::UnknownTemplate {
            check: check.to_owned(),
            template: def
                .template_file
                .as_deref()
                .or(def.template.as_deref())
                .unwrap_or("pointwise")
                .to_owned(),
        })?;
        // A template that does not render is a configuration error now, not a run of judge
        // errors later.
        template
            .render(&PromptVars {
                form: def.form(),
                scale: def.scale(),
                pass_score: def.pass_score(),
                rubric: def.rubric.as_deref(),
                input: "",
                output: "",
                reference: Some(""),
                context: Some(""),
                answers: Some(("", "")),
            })
            .map_err(|message| JudgeSetupError::Render {
                check: check.to_owned(),
                message,
            })?;
        Ok(Judge {
            check: check.to_owned(),
            rubric_sha256: rubric_sha256(&def),
            def,
            template,
            model,
            cache,
            record: None,
            gate: Err(Triage::Uncalibrated),
        })
    }

    /// An inline judge (`judge: {rubric: ...}`): the pointwise template on the 0-3 scale,
    /// triage always.
    pub fn inline(
        spec: &JudgeSpec,
        model: Option<Arc<dyn JudgeModel>>,
        cache: Arc<JudgeCache>,
    ) -> Judge {
        let def = JudgeDef {
            rubric: spec.rubric.clone(),
            pass_score: spec.pass_score,
            ..JudgeDef::default()
        };
        let mut j = Judge::new("judge", def, model, cache).expect("the pointwise template exists");
        j.gate = Err(Triage::Inline);
        j
    }

    /// Decides the judge's gate from its record (or the failure to read one) and the
    /// suite's thresholds.
    pub fn with_record(
        mut self,
        record: Result<Option<CalibrationRecord>, String>,
        min_kappa: f64,
        min_labels: usize,
    ) -> Judge {
        let binding = self.binding();
        let record = match record {
            Ok(r) => r,
            Err(e) => {
                self.gate = Err(Triage::Unreadable(e));
                return self;
            }
        };
        self.gate = if !self.def.may_gate() {
            Err(Triage::ByChoice)
        } else {
            match &binding {
                Some(b) => gate(record.as_ref(), b, min_kappa, min_labels),
                // No model to run it: it can gate only if a record says it could.
                None => match &record {
                    None => Err(Triage::Uncalibrated),
                    Some(r) => standing(r, min_kappa, min_labels),
                },
            }
        };
        self.record = record;
        self
    }

    /// The longer notice a run shows once about this judge's gate (an old or weakly bound
    /// record), if any.
    pub fn notice(&self) -> Option<String> {
        self.gate.as_ref().err().and_then(|t| t.notice(&self.check))
    }

    /// Whether the judge's built-in template reads the retrieved context.
    fn reads_context(&self) -> bool {
        self.def.template_file.is_none()
            && gauntlet_core::judges::builtin_template(
                self.def.template.as_deref().unwrap_or("pointwise"),
            )
            .is_some_and(|b| b.needs_context)
    }

    /// Whether a model is there to ask.
    pub fn has_model(&self) -> bool {
        self.model.is_some()
    }

    /// Who answers, when a model is configured.
    pub fn identity(&self) -> Option<JudgeIdentity> {
        self.model.as_ref().map(|m| m.identity())
    }

    /// What a calibration record of this judge must match.
    pub fn binding(&self) -> Option<JudgeBinding> {
        self.identity().map(|who| JudgeBinding {
            endpoint: who.endpoint,
            configured_model: who.configured_model,
            params: who.params,
            settings: who.settings,
            pinned_model: who.pinned_model,
            template_sha256: self.template.sha256.clone(),
            rubric_sha256: self.rubric_sha256.clone(),
        })
    }

    /// The judge as a run's manifest records it.
    pub fn reference(&self) -> JudgeRef {
        let who = self.identity();
        JudgeRef {
            check: self.check.clone(),
            endpoint: who.as_ref().map_or("none".into(), |w| w.endpoint.clone()),
            configured_model: who.map_or("none".into(), |w| w.configured_model),
            template: self.template.label(),
            template_sha256: self.template.sha256.clone(),
            rubric_sha256: self.rubric_sha256.clone(),
            gate: match &self.gate {
                Ok(()) => "gating".into(),
                Err(t) => format!("triage: {t}"),
            },
        }
    }

    /// Asks the judge about one subject: once, or twice in swapped orders for a pairwise
    /// judge (an answer that changes with the order is a judge error: position bias).
    /// `sample` tells deliberate repeats apart in the cache.
    pub async fn assess(&self, subject: &Subject, sample: u32) -> Assessment {
        let Some(model) = &self.model else {
            return Assessment {
                outcome: Err("no judge model is configured".into()),
                calls: Vec::new(),
                swap_stable: None,
            };
        };
        // A judge of the retrieved context with nothing retrieved has nothing to judge.
        if self.reads_context()
            && subject
                .context
                .as_deref()
                .is_none_or(|c| c.trim().is_empty())
        {
            return Assessment {
                outcome: Err(
                    "nothing was retrieved (no documents, no tool output): there is no context to judge"
                        .into(),
                ),
                calls: Vec::new(),
                swap_stable: None,
            };
        }
        let who = model.identity();
        if self.def.form() != JudgeForm::Pairwise {
            let (span, parsed) = self.ask_once(&**model, &who, subject, sample, false).await;
            let outcome = parsed.map(|(p, m)| self.judgement(p, m, &who, false));
            return Assessment {
                outcome,
                calls: vec![span],
                swap_stable: None,
            };
        }
        let (first, a) = self.ask_once(&**model, &who, subject, sample, false).await;
        let (second, b) = self.ask_once(&**model, &who, subject, sample, true).await;
        let calls = vec![first, second];
        let (a, b) = match (a, b) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => {
                return Assessment {
                    outcome: Err(e),
                    calls,
                    swap_stable: None,
                };
            }
        };
        let ja = self.judgement(a.0, a.1, &who, false);
        let jb = self.judgement(b.0, b.1, &who, true);
        let stable = ja.passed == jb.passed;
        Assessment {
            outcome: if stable {
                Ok(ja)
            } else {
                Err(format!(
                    "the judge changed its preference when the two answers swapped places (position bias): {:?} then {:?}",
                    ja.rationale, jb.rationale
                ))
            },
            calls,
            swap_stable: Some(stable),
        }
    }

    async fn ask_once(
        &self,
        model: &dyn JudgeModel,
        who: &JudgeIdentity,
        subject: &Subject,
        sample: u32,
        swapped: bool,
    ) -> (JudgeSpan, Result<(answer::Parsed, Option<String>), String>) {
        let reference = subject.reference.as_deref();
        let shown = reference.unwrap_or("");
        let vars = PromptVars {
            form: self.def.form(),
            scale: self.def.scale(),
            pass_score: self.def.pass_score(),
            rubric: self.def.rubric.as_deref(),
            input: &subject.input,
            output: &subject.output,
            reference,
            context: subject.context.as_deref(),
            answers: Some(if swapped {
                (shown, subject.output.as_str())
            } else {
                (subject.output.as_str(), shown)
            }),
        };
        let mut span = JudgeSpan {
            check: self.check.clone(),
            endpoint: who.endpoint.clone(),
            configured_model: who.configured_model.clone(),
            template: self.template.label(),
            swapped,
            ..JudgeSpan::default()
        };
        let (system, user) = match self.template.render(&vars) {
            Ok(p) => p,
            Err(e) => {
                span.error = Some(e.clone());
                return (span, Err(e));
            }
        };
        let req = JudgeRequest {
            check: self.check.clone(),
            system,
            user,
            sample,
            swapped,
            fields: subject.fields.clone(),
        };
        span.messages_in = vec![
            Message::system(req.system.clone()),
            Message::user(req.user.clone()),
        ];
        let key = JudgeCache::key(who, &req);
        let reply = match self.cache.lookup(who, &key) {
            Some(r) => {
                span.cached = true;
                Ok(JudgeReply { latency_ms: 0, ..r })
            }
            None => {
                let r = model.ask(&req).await;
                if let Ok(r) = &r {
                    self.cache.answered(who, &key, r);
                }
                r
            }
        };
        let reply = match reply {
            Ok(r) => r,
            Err(e) => {
                let why = format!("the judge call failed: {e}");
                span.error = Some(why.clone());
                return (span, Err(why));
            }
        };
        span.model = reply.model.clone();
        span.answer = reply.text.clone();
        span.usage = reply.usage;
        span.latency_ms = reply.latency_ms;
        span.attempts = reply.attempts;
        match parse_answer(&reply.text, self.def.form(), self.def.scale()) {
            Ok(p) => (span, Ok((p, reply.model))),
            Err(e) => {
                let why = e.to_string();
                span.error = Some(why.clone());
                (span, Err(why))
            }
        }
    }

    fn judgement(
        &self,
        p: answer::Parsed,
        reported: Option<String>,
        who: &JudgeIdentity,
        swapped: bool,
    ) -> Judgement {
        let (category, score, passed) = match p.answer {
            Answer::Verdict(pass) => (usize::from(pass), if pass { 3 } else { 0 }, pass),
            Answer::Score(s) => (usize::from(s), s, s >= self.def.pass_score()),
            Answer::Preference(pref) => {
                // The agent's answer holds its own unless the other one is preferred.
                let other = if swapped {
                    Preference::A
                } else {
                    Preference::B
                };
                let ok = pref != other;
                (usize::from(ok), if ok { 3 } else { 0 }, ok)
            }
        };
        Judgement {
            category,
            score,
            passed,
            rationale: p.rationale,
            model: reported
                .clone()
                .unwrap_or_else(|| who.configured_model.clone()),
            reported,
            answer: p.raw,
        }
    }
}

/// The judges of a run, by check id, and the model for inline judges.
#[derive(Default)]
pub struct JudgePanel {
    judges: HashMap<String, Arc<Judge>>,
    inline_model: Option<Arc<dyn JudgeModel>>,
    cache: Arc<JudgeCache>,
}

impl JudgePanel {
    /// A panel whose judges share `cache`.
    pub fn new(cache: Arc<JudgeCache>) -> JudgePanel {
        JudgePanel {
            judges: HashMap::new(),
            inline_model: None,
            cache,
        }
    }

    /// The cache the panel's judges share.
    pub fn cache(&self) -> Arc<JudgeCache> {
        Arc::clone(&self.cache)
    }

    /// The model inline judges use (the run's `--judge`).
    pub fn with_inline_model(mut self, model: Option<Arc<dyn JudgeModel>>) -> JudgePanel {
        self.inline_model = model;
        self
    }

    /// Adds a suite judge.
    pub fn add(&mut self, judge: Judge) {
        self.judges.insert(judge.check.clone(), Arc::new(judge));
    }

    /// A judge by check id.
    pub fn get(&self, check: &str) -> Option<&Arc<Judge>> {
        self.judges.get(check)
    }

    /// The suite judges, by check id.
    pub fn judges(&self) -> impl Iterator<Item = &Arc<Judge>> {
        let mut v: Vec<&Arc<Judge>> = self.judges.values().collect();
        v.sort_by(|a, b| a.check.cmp(&b.check));
        v.into_iter()
    }

    /// The calls one `judge` entry makes on one subject: none when its judge is not set up
    /// or has no model to ask, two for a pairwise judge (asked in both orders), else one.
    /// What a tree of attacks' budget reserves for each reply: [`JudgePanel::grade`] asks
    /// no more (fewer when a judge of the retrieved context finds nothing retrieved).
    pub fn calls_per_subject(&self, spec: &JudgeSpec) -> u32 {
        let Some(check) = &spec.check else {
            return u32::from(self.inline_model.is_some());
        };
        match self.judges.get(check) {
            Some(j) if j.has_model() && j.def.form() == JudgeForm::Pairwise => 2,
            Some(j) if j.has_model() => 1,
            _ => 0,
        }
    }

    /// Grades one `judge` entry of a completed trial.
    pub async fn grade(&self, e: &Expect, spec: &JudgeSpec, ctx: &GradeContext<'_>) -> Verdict {
        let id = spec.check_id().to_owned();
        let label = e.verdict_label();
        let inline;
        let judge: &Judge = match &spec.check {
            Some(check) => match self.judges.get(check) {
                Some(j) => j,
                None => {
                    let mut v = Verdict::not_assessed(
                        "judge",
                        label,
                        e.dimension_for(ctx.case.kind),
                        format!("judge {id}: not run: the judge is not set up in this run"),
                    );
                    v.gating = false;
                    return v;
                }
            },
            None => {
                inline = Judge::inline(spec, self.inline_model.clone(), Arc::clone(&self.cache));
                &inline
            }
        };
        let dim = e.dimension.unwrap_or_else(|| judge.def.dimension());
        let mut gate = if spec.gate == Some(false) {
            Err(Triage::ByChoice)
        } else {
            judge.gate.clone()
        };
        if !judge.has_model() {
            let subject = subject_of(ctx, judge, spec);
            let mut v = Verdict::not_assessed(
                "judge",
                label,
                dim,
                format!(
                    "judge {id}: not run: no judge model configured (pass --judge SPEC, or set `judge:` on the judge)"
                ),
            );
            // A judge whose record lets it gate cannot just be skipped: without it the case
            // has no evidence on what it checks.
            v.gating = gate.is_ok();
            return v.with_details(json!({"check": id, "subject": subject.as_row()}));
        }
        let (subject, a) = assess_trial(judge, ctx, spec).await;
        let mut answer = Value::Null;
        let mut model = None;
        let mut v = match a.outcome {
            Err(why) => Verdict::not_assessed(
                "judge",
                label,
                dim,
                format!("judge {id}: no verdict: {why}"),
            ),
            Ok(j) => {
                if let (Ok(()), Some(r)) = (&gate, &judge.record)
                    && let Err(t) = answer_gate(r, j.reported.as_deref())
                {
                    gate = Err(t);
                }
                let graded = judge.def.scale() == JudgeScale::Graded;
                let score = if graded {
                    j.score
                } else if j.passed {
                    3
                } else {
                    e.fail_score.unwrap_or(0)
                };
                let said = match (graded, j.passed) {
                    (true, _) => format!("{score}/3"),
                    (false, true) => "pass".into(),
                    (false, false) => "fail".into(),
                };
                let evidence = format!("judge {id}: {said}: {}", j.rationale);
                answer = j.answer;
                model = Some(j.model);
                let mut v = if j.passed {
                    Verdict::pass("judge", label, dim, evidence)
                } else {
                    Verdict::fail("judge", label, dim, score, evidence)
                };
                v.score = score;
                v
            }
        };
        v.gating = gate.is_ok();
        // Judges never decide a hard policy failure.
        v.hard_fail = false;
        if let Err(t) = &gate {
            v.evidence.push_str(&format!(" (triage: {t})"));
        }
        let who = judge.identity();
        v.details = Some(json!({
            "check": id,
            "template": judge.template.label(),
            "scale": judge.def.scale().as_str(),
            "endpoint": who.as_ref().map(|w| w.endpoint.clone()),
            "configured_model": who.map(|w| w.configured_model),
            "model": model,
            "gate": match &gate { Ok(()) => "gating".to_owned(), Err(t) => format!("triage: {t}") },
            "answer": answer,
            "subject": subject.as_row(),
        }));
        v.judge_calls = a.calls;
        v
    }
}

/// Asks a judge about a trial: the trial as one conversation, or, over a tree of attacks
/// (whose prompts each went to the agent in a conversation of its own), each reply on its
/// own, as the tree scored it while it grew. Over a tree the judge fails when one reply
/// fails (the first such one, and the asking stops there); it gives no verdict when a
/// reply got none and none failed (a reply it could not judge is no pass); else it passes,
/// with the lowest of its answers. A trace judge reads the whole trial either way.
async fn assess_trial(
    judge: &Judge,
    ctx: &GradeContext<'_>,
    spec: &JudgeSpec,
) -> (Subject, Assessment) {
    let tree = ctx
        .case
        .strategy
        .as_ref()
        .is_some_and(|s| s.kind == gauntlet_core::strategy::StrategyKind::Tree);
    if !tree || ctx.trace.turns.len() < 2 || judge.def.form() == JudgeForm::Trace {
        let subject = subject_of(ctx, judge, spec);
        let a = judge.assess(&subject, 0).await;
        return (subject, a);
    }
    let mut calls = Vec::new();
    let mut lowest: Option<(Subject, Judgement, usize)> = None;
    let mut fault: Option<String> = None;
    for (i, turn) in ctx.trace.turns.iter().enumerate() {
        let alone = Trace {
            turns: vec![turn.clone()],
            ..Trace::default()
        };
        let subject = subject_of(
            &GradeContext {
                trace: &alone,
                ..*ctx
            },
            judge,
            spec,
        );
        let a = judge.assess(&subject, 0).await;
        calls.extend(a.calls);
        match a.outcome {
            Err(why) => {
                fault.get_or_insert(format!("reply {} of the tree: {why}", i + 1));
            }
            Ok(j) => {
                let failed = !j.passed;
                if lowest
                    .as_ref()
                    .is_none_or(|(_, l, _)| (j.passed, j.score) < (l.passed, l.score))
                {
                    lowest = Some((subject, j, i));
                }
                if failed {
                    break;
                }
            }
        }
    }
    let n = ctx.trace.turns.len();
    let outcome = match (lowest, fault) {
        (Some((subject, mut j, i)), _) if !j.passed => {
            j.rationale = format!("reply {} of the tree: {}", i + 1, j.rationale);
            return (subject, tree_assessment(Ok(j), calls));
        }
        (_, Some(why)) => Err(why),
        (Some((subject, mut j, i)), None) => {
            j.rationale = format!(
                "{n} repl(ies) of the tree judged on their own; the lowest, reply {}: {}",
                i + 1,
                j.rationale
            );
            return (subject, tree_assessment(Ok(j), calls));
        }
        (None, None) => Err("no reply of the tree to judge".to_owned()),
    };
    (
        subject_of(ctx, judge, spec),
        tree_assessment(outcome, calls),
    )
}

fn tree_assessment(outcome: Result<Judgement, String>, calls: Vec<JudgeSpan>) -> Assessment {
    Assessment {
        outcome,
        calls,
        swap_stable: None,
    }
}

/// What a judge entry of a trial is asked about.
fn subject_of(ctx: &GradeContext<'_>, judge: &Judge, spec: &JudgeSpec) -> Subject {
    let turns = &ctx.trace.turns;
    let input = match turns.split_last() {
        None => ctx.case.input.clone().unwrap_or_default(),
        Some((last, [])) => last.user.clone(),
        Some((last, before)) => {
            let mut s = String::new();
            for t in before {
                s.push_str(&format!("USER: {}\nASSISTANT: {}\n\n", t.user, t.answer));
            }
            s.push_str(&format!("USER: {}", last.user));
            s
        }
    };
    let final_answer = ctx.trace.final_answer().to_owned();
    let output = if judge.def.form() == JudgeForm::Trace {
        render_trace(ctx.trace)
    } else {
        final_answer
    };
    // A leak judge looks for the case's secret unless the entry names another.
    let reference = spec.reference.clone().or_else(|| {
        (judge.def.property() == Some(Property::Leak))
            .then(|| ctx.canary.map(str::to_owned))
            .flatten()
    });
    Subject {
        input,
        output,
        reference,
        context: crate::grounded::context_text(ctx.case, ctx.trace),
        fields: fake::fields_of(&ctx.case.vars),
    }
}

/// The tool calls of a trace, one per line, and the final answer: what a trace judge reads.
pub fn render_trace(trace: &Trace) -> String {
    let mut s = String::new();
    let mut n = 0;
    for span in &trace.spans {
        match span {
            Span::ToolCall(c) => {
                n += 1;
                let result = match (&c.output, &c.error) {
                    (_, Some(e)) => format!("error: {e}"),
                    (Some(o), None) => o.clone(),
                    (None, None) => "(no result)".into(),
                };
                let injected = c
                    .injected
                    .as_deref()
                    .map(|i| format!(" [injected fault: {i}]"))
                    .unwrap_or_default();
                let agent = c
                    .agent
                    .as_deref()
                    .map(|a| format!("{a}: "))
                    .unwrap_or_default();
                s.push_str(&format!(
                    "{n}. {agent}{}({}) -> {}{injected}\n",
                    c.name, c.arguments, result
                ));
            }
            Span::Decision(d) => {
                s.push_str(&format!(
                    "   decision: {}{}\n",
                    d.branch,
                    d.reason
                        .as_deref()
                        .map(|r| format!(" ({r})"))
                        .unwrap_or_default()
                ));
            }
            Span::LlmCall(_) => {}
        }
    }
    if n == 0 {
        s.push_str("(no tool calls)\n");
    }
    s.push_str(&format!("final answer: {}", trace.final_answer()));
    s
}

#[cfg(test)]
mod rag_tests;
#[cfg(test)]
mod tests;
