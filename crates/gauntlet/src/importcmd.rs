//! `gauntlet import KIND FILE -o DIR`: public attack data in, a suite out.

use std::path::PathBuf;

use clap::Args;

use crate::error::CliError;

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The data set's format: garak, cyberseceval, bipia, agentdojo, behaviors, text, jsonl.
    pub kind: String,
    /// The file to read.
    pub file: PathBuf,
    /// The folder to write suite.yaml and cases.jsonl into.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: PathBuf,
}

pub fn import(_args: ImportArgs) -> Result<i32, CliError> {
    Err(CliError::usage("not yet", "later"))
}
