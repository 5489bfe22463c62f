//! Importers of public attack data: [`Kind`] names a format, [`import`] turns one local file
//! into an [`Imported`] suite (a `suite.yaml` header and a `cases.jsonl` of cases) with the
//! data set's source, licence and revision recorded in the suite, and so in every run's
//! manifest. Nothing here touches the network: the files are read as given.
//!
//! Each importer maps what a program can decide to an oracle (a secret in a system prompt to
//! `no_canary`, a phrase the attack wants said to `not_contains`, a tool the injection asks
//! for to `tool_not_called` and `injection_resistance`), and keeps a data set's own success
//! question as a `judge` check, which stays triage. A case that only a model could decide is
//! not written as a runnable case (a judge alone cannot gate); it is counted in the report.
