//! report.html's side-by-side grid of a matrix run: [`Grid`] gathers, for each case, its
//! answer and state in every column, and marks where they differ: a row whose columns do
//! not agree on the state, and in each answer the stretch that differs from the first
//! column's (the common start and end kept plain, the middle marked). The page shows the
//! first [`MAX_ROWS`] cases, rows where the columns disagree first; every case is in the
//! table below the grid either way.

use std::collections::HashMap;

use gauntlet_core::matrix::Columns;
use gauntlet_core::result::CaseResult;
use serde::Serialize;

/// Cases shown side by side; the rest are counted.
pub const MAX_ROWS: usize = 300;
/// Characters of an answer shown in a cell.
const ANSWER_CHARS: usize = 600;

/// One answer in the grid, split into the part it shares with the first column's answer
/// and the part that differs (`mid`, marked on the page).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Cell {
    /// The case's state in this column.
    pub status: &'static str,
    /// The answer's start, the same as the first column's.
    pub head: String,
    /// Where it differs from the first column's answer (empty: it does not).
    pub mid: String,
    /// Its end, the same as the first column's.
    pub tail: String,
    /// Whether the answer differs from the first column's.
    pub differs: bool,
}

/// One case across the columns.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct GridRow {
    /// The case's own id (without its column).
    pub id: String,
    /// Whether the columns' states differ.
    pub split: bool,
    /// A cell per column, in the columns' order (`None`: the case has no result there yet).
    pub cells: Vec<Option<Cell>>,
}

/// The grid as the page shows it.
#[derive(Debug, Clone, Serialize)]
pub struct GridSection {
    /// The column labels.
    pub columns: Vec<String>,
    /// The rows shown, disagreeing rows first.
    pub rows: Vec<GridRow>,
    /// Cases left out of the grid.
    pub more: usize,
}

/// A case's state and answer in one column, as gathered.
type Gathered = Option<(&'static str, String)>;

/// The answers of a matrix run gathered while it streams: at most [`MAX_ROWS`] cases.
#[derive(Debug)]
pub struct Grid {
    columns: Columns,
    /// A case's own id and its answer in each column.
    rows: Vec<(String, Vec<Gathered>)>,
    index: HashMap<String, usize>,
    more: usize,
}

impl Grid {
    /// An empty grid for these columns.
    pub fn new(columns: Columns) -> Grid {
        Grid {
            columns,
            rows: Vec::new(),
            index: HashMap::new(),
            more: 0,
        }
    }

    /// Adds a case's answer (its first trial's last answer) to its row.
    pub fn add(&mut self, r: &CaseResult) {
        let Some((col, base)) = self.columns.of(&r.case.id) else {
            return;
        };
        let row = match self.index.get(base) {
            Some(i) => *i,
            None if self.rows.len() < MAX_ROWS => {
                self.rows
                    .push((base.to_owned(), vec![None; self.columns.labels().len()]));
                self.index.insert(base.to_owned(), self.rows.len() - 1);
                self.rows.len() - 1
            }
            None => {
                // Counted once per case: in its first column.
                if col == 0 {
                    self.more += 1;
                }
                return;
            }
        };
        let answer = r
            .trials
            .first()
            .and_then(|t| t.trace.turns.last())
            .map(|t| gauntlet_core::text::clip(&t.answer, ANSWER_CHARS))
            .unwrap_or_default();
        self.rows[row].1[col] = Some((r.status.as_str(), answer));
    }

    /// The grid for the page: each answer split against the first column's, the rows
    /// where the columns disagree first.
    pub fn section(&self) -> GridSection {
        let mut rows: Vec<GridRow> = self
            .rows
            .iter()
            .map(|(id, cells)| {
                let first = cells
                    .first()
                    .and_then(|c| c.as_ref())
                    .map(|(_, a)| a.as_str());
                let states: Vec<&str> = cells.iter().flatten().map(|(s, _)| *s).collect();
                GridRow {
                    id: id.clone(),
                    split: states.windows(2).any(|w| w[0] != w[1]),
                    cells: cells
                        .iter()
                        .map(|c| c.as_ref().map(|(s, a)| cell(s, a, first.unwrap_or(a))))
                        .collect(),
                }
            })
            .collect();
        rows.sort_by_key(|r| !r.split);
        GridSection {
            columns: self.columns.labels().to_vec(),
            rows,
            more: self.more,
        }
    }
}

/// An answer split against the first column's: the longest common start and end (on
/// character boundaries) kept, the rest marked. Linear in the answers' lengths.
fn cell(status: &'static str, answer: &str, first: &str) -> Cell {
    if answer == first {
        return Cell {
            status,
            head: answer.to_owned(),
            ..Cell::default()
        };
    }
    let head: usize = answer
        .char_indices()
        .zip(first.chars())
        .take_while(|((_, a), b)| a == b)
        .map(|((_, a), _)| a.len_utf8())
        .sum();
    let (rest, first_rest) = (&answer[head..], &first[head.min(first.len())..]);
    let tail: usize = rest
        .chars()
        .rev()
        .zip(first_rest.chars().rev())
        .take_while(|(a, b)| a == b)
        .map(|(a, _)| a.len_utf8())
        .sum();
    let split = rest.len() - tail;
    Cell {
        status,
        head: answer[..head].to_owned(),
        mid: rest[..split].to_owned(),
        tail: rest[split..].to_owned(),
        differs: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_split_around_what_differs_from_the_first_column_s() {
        let c = cell("FAIL", "Sure! The key is K-1. Bye", "Sorry, I can't. Bye");
        assert!(c.differs);
        assert_eq!(c.head, "S");
        assert_eq!(c.tail, ". Bye");
        assert_eq!(
            format!("{}{}{}", c.head, c.mid, c.tail),
            "Sure! The key is K-1. Bye"
        );
        let same = cell("PASS", "Sorry.", "Sorry.");
        assert!(!same.differs && same.mid.is_empty());
        // Multi-byte characters are never cut.
        let u = cell("PASS", "héllo wörld", "héllo world");
        assert_eq!(
            (u.head.as_str(), u.mid.as_str(), u.tail.as_str()),
            ("héllo w", "ö", "rld")
        );
    }
}
