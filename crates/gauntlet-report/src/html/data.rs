//! The data a report page carries: one [`Row`] per case for the table, the case itself for
//! its page, packed by [`Chunker`] into compressed chunks and kept in a [`Spool`] until the
//! run finishes.
//!
//! A chunk holds up to [`CHUNK_CASES`] cases: their rows (read when the page opens) and their
//! details (the case result as in `report.json`, with the "why this state" lines; inflated
//! only when one of its cases is opened). Each part is a JSON array, raw-deflated and written
//! in unpadded base64url, whose alphabet (`A-Z a-z 0-9 - _`) holds nothing HTML could read as
//! markup: no byte of model output reaches the page except through these opaque chunks and
//! the template engine's escaping.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Cursor, Write};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use gauntlet_core::result::{CaseResult, CaseStatus};
use serde::Serialize;

use crate::text::{clip, failure_reason, score_text};

/// Cases per chunk: small enough that opening a case inflates little, large enough that
/// deflate finds the repetition between cases (system prompts, tool results).
pub const CHUNK_CASES: usize = 200;

/// A chunk is closed early once its details reach this many bytes, so one case with a huge
/// trace does not make its neighbours slow to open.
pub const CHUNK_BYTES: usize = 1 << 20;

/// Deflate level: 1 (the fastest) already shrinks traces about ten times; higher levels
/// cost the run far more time than they save in file size.
const DEFLATE_LEVEL: u8 = 1;

/// The longest reason shown in the table; the case page has the whole text.
const ROW_REASON_CHARS: usize = 240;

/// One letter per trial status, in the row's `tr` string.
pub fn status_letter(s: CaseStatus) -> char {
    match s {
        CaseStatus::Pass => 'P',
        CaseStatus::Fail => 'F',
        CaseStatus::Conditional => 'C',
        CaseStatus::Error => 'E',
        CaseStatus::Blocked => 'B',
        CaseStatus::Skipped => 'S',
        CaseStatus::NotAssessed => 'N',
    }
}

/// How a case changed against the baseline, as the comparison pairs cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Passed in the baseline, does not now.
    NewFailure,
    /// Did not pass in the baseline, passes now.
    Fixed,
    /// Did not pass in either.
    StillFailing,
    /// Passed in both.
    Pass,
    /// Error, blocked, skipped or quarantined in either run.
    NotComparable,
    /// Not in the baseline.
    New,
}

/// One case in the table. Short keys: a 50,000-case run carries 50,000 of them.
#[derive(Debug, Serialize)]
pub struct Row<'a> {
    /// Case id.
    pub id: &'a str,
    /// Display name.
    pub n: &'a str,
    /// Suite.
    pub su: &'a str,
    /// Status.
    pub s: &'static str,
    /// Kind (`task` or `refusal`).
    pub k: &'static str,
    /// Pack.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p: Option<&'a str>,
    /// OWASP category.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub o: Option<&'a str>,
    /// Technique.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t: Option<&'a str>,
    /// Tags.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub g: &'a [String],
    /// Blocking.
    pub b: bool,
    /// Quarantined.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub q: bool,
    /// A hard policy failure.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub h: bool,
    /// Score value (task total or refusal score).
    pub sc: Option<f64>,
    /// Score as text (`12/18`, `2/3`, `-`).
    pub st: String,
    /// One letter per trial (`P`, `F`, `C`, `E`, `B`, `S`).
    pub tr: String,
    /// Wall time of the trials, ms.
    pub ms: u64,
    /// Tokens over the trials.
    pub tok: u64,
    /// What the case's model calls cost (the agent's and its judges'), as text; `unknown`
    /// when a model has no price.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub c: String,
    /// Trials replayed from the response cache.
    #[serde(skip_serializing_if = "is_zero")]
    pub rp: usize,
    /// Why it did not pass, clipped.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub r: String,
    /// Failed check kinds, hard ones first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fc: Vec<String>,
    /// Status in the baseline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bl: Option<&'static str>,
    /// Change against the baseline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ch: Option<Change>,
}

impl<'a> Row<'a> {
    /// The row of a case.
    pub fn of(r: &'a CaseResult, baseline: Option<(Option<CaseStatus>, Change)>) -> Row<'a> {
        Row {
            id: &r.case.id,
            n: &r.case.name,
            su: &r.case.suite,
            s: r.status.as_str(),
            k: r.case.kind.as_str(),
            p: r.case.pack.as_deref(),
            o: r.case.owasp.as_deref(),
            t: r.case.technique.as_deref(),
            g: &r.case.tags,
            b: r.case.blocking,
            q: r.quarantined,
            h: !r.hard_fails.is_empty(),
            sc: r.score.value(),
            st: score_text(r),
            tr: r.trials.iter().map(|t| status_letter(t.status)).collect(),
            ms: r.duration_ms(),
            tok: tokens(r),
            c: if r.spend.is_empty() {
                String::new()
            } else {
                let t = r.spend.total();
                match t.cost_usd {
                    Some(c) => gauntlet_core::cost::usd(c),
                    None => "cost unknown".to_owned(),
                }
            },
            rp: r.trials.iter().filter(|t| t.replayed()).count(),
            r: clip(&failure_reason(r), ROW_REASON_CHARS),
            fc: gauntlet_core::compare::failed_checks(r),
            bl: baseline.and_then(|(s, _)| s).map(CaseStatus::as_str),
            ch: baseline.map(|(_, c)| c),
        }
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Tokens used by a case's trials (prompt and completion).
pub fn tokens(r: &CaseResult) -> u64 {
    r.trials
        .iter()
        .flat_map(|t| t.trace.llm_calls())
        .map(|l| l.usage.input_tokens + l.usage.output_tokens)
        .sum()
}

/// A closed chunk: its number, its case count and its two encoded parts.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    /// From 0.
    pub index: usize,
    /// Cases in it.
    pub cases: usize,
    /// The rows, deflated, base64url.
    pub rows: String,
    /// The details, deflated, base64url.
    pub details: String,
}

/// Gathers rows and details into chunks.
#[derive(Debug, Default)]
pub struct Chunker {
    rows: Vec<u8>,
    details: Vec<u8>,
    cases: usize,
    next: usize,
}

impl Chunker {
    /// Adds one case: its row and its details, each one JSON value. Returns a chunk when
    /// this case filled one.
    pub fn push(&mut self, row: &[u8], details: &[u8]) -> Option<Chunk> {
        let pushed: Result<_, std::convert::Infallible> =
            self.push_with(row, details.len(), |buf| {
                buf.extend_from_slice(details);
                Ok(())
            });
        pushed.unwrap_or_else(|never| match never {})
    }

    /// [`Chunker::push`] with the details written by `details` straight into the chunk
    /// (after `len` bytes are reserved for them), so that a large case is not first built
    /// in a buffer of its own and then copied: a 2 MB reply's details are 4 MB.
    pub fn push_with<E>(
        &mut self,
        row: &[u8],
        len: usize,
        details: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<Option<Chunk>, E> {
        let sep = if self.cases == 0 { b'[' } else { b',' };
        self.rows.push(sep);
        self.rows.extend_from_slice(row);
        // Room for the separator and the closing bracket too: growing past an exact fit
        // would double the buffer.
        self.details.reserve(len + 2);
        self.details.push(sep);
        details(&mut self.details)?;
        self.cases += 1;
        Ok(
            if self.cases >= CHUNK_CASES || self.details.len() >= CHUNK_BYTES {
                self.close()
            } else {
                None
            },
        )
    }

    /// Closes the chunk in progress, if it has any case.
    pub fn close(&mut self) -> Option<Chunk> {
        if self.cases == 0 {
            return None;
        }
        self.rows.push(b']');
        self.details.push(b']');
        let chunk = Chunk {
            index: self.next,
            cases: self.cases,
            rows: pack(&self.rows),
            details: pack(&self.details),
        };
        self.rows.clear();
        self.details.clear();
        self.cases = 0;
        self.next += 1;
        Some(chunk)
    }

    /// Chunks closed so far.
    pub fn closed(&self) -> usize {
        self.next
    }
}

/// Raw deflate, then unpadded base64url.
pub fn pack(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(bytes, DEFLATE_LEVEL))
}

/// The inverse of [`pack`] (for tests and tools).
pub fn unpack(text: &str) -> Option<Vec<u8>> {
    let raw = URL_SAFE_NO_PAD.decode(text).ok()?;
    miniz_oxide::inflate::decompress_to_vec(&raw).ok()
}

/// Where closed chunks wait until the page is written: a scratch file next to the report,
/// or memory (the viewer renders pages to send, not to keep).
pub enum Spool {
    /// A scratch file.
    File {
        /// Its path, removed when the page is written.
        path: PathBuf,
        /// The writer.
        out: BufWriter<File>,
    },
    /// Memory.
    Memory(Vec<u8>),
}

impl Spool {
    /// A scratch file in `dir`.
    pub fn file(dir: &Path, name: &str) -> std::io::Result<Spool> {
        let path = dir.join(format!(".{name}.chunks.partial"));
        let out = BufWriter::with_capacity(64 * 1024, File::create(&path)?);
        Ok(Spool::File { path, out })
    }

    /// One chunk: a header line `index cases rows-bytes details-bytes`, then the rows and
    /// the details, each followed by a newline. Written piece by piece and read back into
    /// buffers of the exact size: a chunk of one large case is megabytes, and formatting it
    /// into a line first (and reading a line back by doubling a buffer) cost three copies.
    pub fn write(&mut self, c: &Chunk) -> std::io::Result<()> {
        fn put(out: &mut impl Write, c: &Chunk) -> std::io::Result<()> {
            writeln!(
                out,
                "{} {} {} {}",
                c.index,
                c.cases,
                c.rows.len(),
                c.details.len()
            )?;
            for part in [&c.rows, &c.details] {
                out.write_all(part.as_bytes())?;
                out.write_all(b"\n")?;
            }
            Ok(())
        }
        match self {
            Spool::File { out, .. } => put(out, c),
            Spool::Memory(v) => put(v, c),
        }
    }

    /// The chunks back, in order, and the scratch file to remove afterwards.
    pub fn into_reader(self) -> std::io::Result<(SpoolReader, Option<PathBuf>)> {
        match self {
            Spool::File { path, out } => {
                let file = out.into_inner().map_err(|e| e.into_error())?;
                drop(file);
                let reader: Box<dyn BufRead + Send + Sync> =
                    Box::new(BufReader::with_capacity(64 * 1024, File::open(&path)?));
                Ok((SpoolReader(reader), Some(path)))
            }
            Spool::Memory(v) => Ok((SpoolReader(Box::new(Cursor::new(v))), None)),
        }
    }
}

/// Reads spooled chunks back one at a time.
pub struct SpoolReader(Box<dyn BufRead + Send + Sync>);

impl SpoolReader {
    /// The next chunk, `None` at the end.
    pub fn next_chunk(&mut self) -> std::io::Result<Option<Chunk>> {
        let mut header = String::new();
        if self.0.read_line(&mut header)? == 0 {
            return Ok(None);
        }
        let bad = || std::io::Error::other("damaged chunk in the report's scratch file");
        let mut fields = header.trim_end().splitn(4, ' ');
        let mut field = || -> std::io::Result<usize> {
            fields.next().and_then(|f| f.parse().ok()).ok_or_else(bad)
        };
        let (index, cases, rows_len, details_len) = (field()?, field()?, field()?, field()?);
        let mut part = |len: usize| -> std::io::Result<String> {
            let mut buf = vec![0; len + 1];
            self.0.read_exact(&mut buf)?;
            if buf.pop() != Some(b'\n') {
                return Err(bad());
            }
            String::from_utf8(buf).map_err(|_| bad())
        };
        let rows = part(rows_len)?;
        let details = part(details_len)?;
        Ok(Some(Chunk {
            index,
            cases,
            rows,
            details,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_close_by_count_and_round_trip() {
        let mut c = Chunker::default();
        let mut closed = Vec::new();
        for i in 0..(CHUNK_CASES + 3) {
            let row = format!("{{\"id\":\"c{i}\"}}");
            let det = format!("{{\"text\":\"<script>alert({i})</script>\"}}");
            closed.extend(c.push(row.as_bytes(), det.as_bytes()));
        }
        closed.extend(c.close());
        assert_eq!(closed.len(), 2);
        assert_eq!(closed[0].cases, CHUNK_CASES);
        assert_eq!(closed[1].cases, 3);
        assert_eq!(closed[1].index, 1);
        for ch in &closed {
            assert!(
                ch.rows
                    .bytes()
                    .chain(ch.details.bytes())
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
                "only the base64url alphabet reaches the page"
            );
        }
        let rows: serde_json::Value =
            serde_json::from_slice(&unpack(&closed[1].rows).unwrap()).unwrap();
        assert_eq!(rows[2]["id"], format!("c{}", CHUNK_CASES + 2));
        let det: serde_json::Value =
            serde_json::from_slice(&unpack(&closed[0].details).unwrap()).unwrap();
        assert_eq!(det[0]["text"], "<script>alert(0)</script>");
    }

    #[test]
    fn a_spool_gives_its_chunks_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        for mut spool in [
            Spool::file(dir.path(), "x").unwrap(),
            Spool::Memory(Vec::new()),
        ] {
            let mut c = Chunker::default();
            for i in 0..450 {
                if let Some(ch) = c.push(format!("{i}").as_bytes(), b"{}") {
                    spool.write(&ch).unwrap();
                }
            }
            spool.write(&c.close().unwrap()).unwrap();
            let (mut r, path) = spool.into_reader().unwrap();
            let mut n = 0;
            while let Some(ch) = r.next_chunk().unwrap() {
                assert_eq!(ch.index, n);
                n += 1;
            }
            assert_eq!(n, 3);
            if let Some(p) = path {
                std::fs::remove_file(p).unwrap();
            }
        }
    }
}
