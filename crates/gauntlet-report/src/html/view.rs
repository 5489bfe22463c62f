//! The pages of `gauntlet view` that are not reports: the runs list ([`RunsPage`]), the
//! labelling page ([`LabelPage`]) and plain messages. The viewer (in the binary) serves
//! them; they are built here so that every page shares one template engine, one stylesheet
//! and one policy. None of them has a script.

use serde::Serialize;

use super::page::{self, Nav, PageKind};

/// One stored run in the list.
#[derive(Debug, Clone, Serialize)]
pub struct RunItem {
    /// Run id.
    pub id: String,
    /// When it started.
    pub started: String,
    /// `run`, `redteam`, ...
    pub command: String,
    /// Target label.
    pub target: String,
    /// The state, or `unfinished`.
    pub status: String,
    /// Whether it finished.
    pub finished: bool,
    /// Cases recorded.
    pub cases: i64,
    /// Cases planned.
    pub planned: i64,
    /// Link to its report.
    pub report: String,
    /// Link to its labelling page.
    pub label: String,
}

/// The runs list.
#[derive(Debug, Clone, Serialize)]
pub struct RunsPage {
    /// The store's path, as shown.
    pub store: String,
    /// The labels file, as shown.
    pub labels: String,
    /// Runs, newest first.
    pub runs: Vec<RunItem>,
    /// More runs exist than are listed.
    pub more: bool,
}

/// One output to label.
#[derive(Debug, Clone, Serialize)]
pub struct LabelItem {
    /// Case id.
    pub case_id: String,
    /// Display name.
    pub case_name: String,
    /// Trial index, from 0.
    pub trial: u32,
    /// The check's label, as reports show it.
    pub check_label: String,
    /// What the agent was given.
    pub input: String,
    /// What it answered.
    pub output: String,
    /// The check's reference (a judge's rubric, a check's settings), when known.
    pub reference: String,
    /// Why the reference is empty, when it is.
    pub reference_note: String,
}

/// The labelling page.
#[derive(Debug, Clone, Serialize)]
pub struct LabelPage {
    /// The run.
    pub run: String,
    /// The check being labelled.
    pub check: String,
    /// Checks of the run with their number of verdicts.
    pub checks: Vec<(String, usize)>,
    /// Outputs of this run and check already labelled.
    pub labelled: usize,
    /// Outputs left.
    pub left: usize,
    /// The next output, if any is left.
    pub item: Option<LabelItem>,
    /// The token a label must carry to be recorded.
    pub token: String,
    /// The labels file, as shown.
    pub labels: String,
    /// A note from the last action.
    pub message: Option<String>,
}

#[derive(Serialize)]
struct Message<'a> {
    title: &'a str,
    text: &'a str,
}

/// The runs list.
pub fn render_runs(p: &RunsPage, nav: &Nav) -> Result<String, minijinja::Error> {
    page::render_string("view_runs.html", PageKind::Forms, Some(nav), p)
}

/// The labelling page.
pub fn render_label(p: &LabelPage, nav: &Nav) -> Result<String, minijinja::Error> {
    page::render_string("view_label.html", PageKind::Forms, Some(nav), p)
}

/// A page with one message.
pub fn render_message(title: &str, text: &str, nav: &Nav) -> Result<String, minijinja::Error> {
    page::render_string(
        "view_message.html",
        PageKind::Static,
        Some(nav),
        &Message { title, text },
    )
}
