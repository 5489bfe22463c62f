//! Targets: [`TargetConfig`] (how a suite or the command line names the agent under test,
//! declared in [`crate::target_config`] below the suite model) and the seam traits every adapter
//! implements, [`Target`] and [`Session`], with what a target says of itself
//! ([`TargetInfo`], [`EvidenceLevel`], [`SideEffectMode`]).
//!
//! A target opens one [`Session`] per trial. A session takes one user turn at a time and
//! answers it, recording what happened in the trial's [`crate::trace::Trace`]; when the agent
//! asks for a tool, the session calls the [`ToolHost`] the runner gives it, so tool simulation
//! and fault injection stay in one place whatever the target.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The suite model's half of targets, at its old path.
pub use crate::target_config as config;
pub use crate::target_config::*;

use crate::suite::Case;
use crate::trace::{Message, ToolCallRequest, TraceRecorder};

/// A boxed future, so that the seam traits stay object-safe.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// How close to production the evidence is.
#[derive(
    Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq, PartialOrd, Ord,
)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceLevel {
    /// No model call: the agent's configuration was inspected.
    Static,
    /// Built-in or scripted targets, simulated tools.
    #[default]
    Offline,
    /// Recorded traffic replayed.
    Replay,
    /// A small share of real traffic.
    Canary,
    /// A live model or agent.
    Online,
}

/// Whether side effects were real.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SideEffectMode {
    /// The agent ran its own tools (an HTTP app, a proxied agent): their effects were real.
    Real,
    /// Tools were simulated.
    #[default]
    Simulated,
    /// Side-effecting tools were blocked.
    Blocked,
}

/// What the run records about a target in its manifest.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct TargetInfo {
    /// Kind of adapter.
    pub kind: String,
    /// A short label such as `openai:gpt-4o-mini`.
    pub label: String,
    /// The model id configured, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The base URL, if any (credentials never appear here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Sampling settings and other facts worth recording.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
    /// How close to production this target's evidence is. The manifest records it once, at
    /// its top level (`evidence_level`), so it is not written here again.
    #[serde(skip)]
    #[schemars(skip)]
    pub evidence_level: EvidenceLevel,
    /// Whether the target's side effects are real (an app or agent running its own tools) or
    /// simulated by gauntlet. Recorded at the manifest's top level (`side_effects`).
    #[serde(skip)]
    #[schemars(skip)]
    pub side_effects: SideEffectMode,
}

/// Everything a target needs to know about one trial.
#[derive(Debug, Clone)]
pub struct TrialContext<'a> {
    /// The case.
    pub case: &'a Case,
    /// The system prompt in force (case override, else the agent's), if any.
    pub system_prompt: Option<&'a str>,
    /// Tools the agent may call, in the OpenAI function format.
    pub tools: &'a [crate::tools::ToolDef],
    /// Which trial of the case this is (0-based).
    pub trial: u32,
    /// A seed derived from the run seed, the case and the trial.
    pub seed: u64,
    /// A conversation id unique to this trial.
    pub session_id: String,
}

/// Why a target could not produce an answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TargetError {
    /// An upstream content filter stopped the request or the answer (platform defence).
    #[error("blocked by an upstream content filter: {0}")]
    Blocked(String),
    /// No answer within the time limit.
    #[error("timed out: {0}")]
    Timeout(String),
    /// A transport failure that bounded retries did not overcome.
    #[error("transport failure: {0}")]
    Transport(String),
    /// The target answered, but not in the expected protocol (malformed JSON, missing fields).
    #[error("protocol error: {0}")]
    Protocol(String),
    /// The harness could not do its part (bad configuration found late, a tool loop overrun).
    #[error("harness error: {0}")]
    Harness(String),
}

/// The seam every adapter implements: open a session for one trial.
pub trait Target: Send + Sync {
    /// Facts for the run manifest.
    fn info(&self) -> TargetInfo;

    /// Starts a session for one trial.
    fn open<'a>(
        &'a self,
        ctx: &'a TrialContext<'a>,
    ) -> BoxFuture<'a, Result<Box<dyn Session + 'a>, TargetError>>;
}

/// One trial's conversation with a target.
pub trait Session: Send {
    /// Sends one user turn and drives the agent until it answers it. Tool calls go through
    /// `tools`; every model call, tool call and transport event is recorded in `rec`.
    fn turn<'a>(
        &'a mut self,
        user: &'a str,
        tools: &'a mut dyn ToolHost,
        rec: &'a mut TraceRecorder,
    ) -> BoxFuture<'a, Result<TurnAnswer, TargetError>>;

    /// Takes the last exchange (the user turn and everything the agent did for it) back out
    /// of the conversation, for a strategy that backtracks after a refusal. A target that
    /// cannot returns false, and the exchange stays in its conversation.
    fn rewind(&mut self) -> bool {
        false
    }
}

/// The agent's answer to one user turn.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnAnswer {
    /// The answer text.
    pub content: String,
    /// The reply was cut by the token limit.
    pub truncated: bool,
}

/// Plays the user in a conversation (a simulated user with a persona and a goal).
pub trait UserSimulator: Send + Sync {
    /// The user's next message given the conversation so far, or `None` when the user is
    /// done.
    fn next<'a>(
        &'a self,
        user: &'a crate::suite::SimulatedUser,
        transcript: &'a [crate::trace::TurnRecord],
    ) -> BoxFuture<'a, Result<Option<String>, TargetError>>;
}

/// Runs a tool call on the agent's behalf (simulated tools, fault injection, the side-effect
/// ledger). The runner implements it.
pub trait ToolHost: Send {
    /// Executes one call and returns the message to hand back to the model.
    fn call(&mut self, call: &ToolCallRequest, rec: &mut TraceRecorder) -> Message;
}

/// A [`ToolHost`] for agents without tools: every call is answered with an error.
#[derive(Debug, Default)]
pub struct NoTools;

impl ToolHost for NoTools {
    fn call(&mut self, call: &ToolCallRequest, rec: &mut TraceRecorder) -> Message {
        let text = format!("error: no tool named `{}` is available", call.name);
        rec.tool_call(crate::trace::ToolSpanInput {
            call_id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            output: None,
            error: Some(text.clone()),
            duration_ms: 0,
            approval: crate::trace::Approval::NotRequired,
            side_effect: None,
        });
        Message::tool_result(&call.id, &call.name, text)
    }
}
