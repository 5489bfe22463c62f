//! Where each node of a YAML document is: [`PathMap`] maps paths such as
//! `cases[3].expect[1].regex` to line and column.
//!
//! serde reports positions only for errors it finds itself. Semantic checks run after
//! deserialization (a regex that does not compile, a duplicate id), so they look the node
//! up here by path. The map is built only when a semantic error needs it.

use std::collections::HashMap;

use serde_saphyr::granit_parser::{Event, Parser};

/// Positions of a document's nodes by path.
#[derive(Debug, Default)]
pub struct PathMap {
    keys: HashMap<String, (usize, usize)>,
    values: HashMap<String, (usize, usize)>,
}

impl PathMap {
    /// Builds the map for a YAML document. On a syntax error the map is partial (serde has
    /// already reported the error with its position).
    pub fn build(source: &str) -> PathMap {
        let mut map = PathMap::default();
        let mut parser = Parser::new_from_str(source);
        let mut events = std::iter::from_fn(move || match parser.next_event() {
            Some(Ok((ev, span))) => Some((ev, (span.start.line(), span.start.col() + 1))),
            _ => None,
        })
        .filter(|(ev, _)| !matches!(ev, Event::StreamStart | Event::DocumentStart(..)));
        if let Some(first) = events.next() {
            map.walk(first, String::new(), &mut events);
        }
        map
    }

    fn walk<'a>(
        &mut self,
        (ev, pos): (Event<'a>, (usize, usize)),
        path: String,
        events: &mut impl Iterator<Item = (Event<'a>, (usize, usize))>,
    ) {
        match ev {
            Event::MappingStart(..) => {
                self.values.entry(path.clone()).or_insert(pos);
                while let Some((kev, kpos)) = events.next() {
                    match kev {
                        Event::MappingEnd => break,
                        Event::Scalar(key, ..) => {
                            let child = if path.is_empty() {
                                key.to_string()
                            } else {
                                format!("{path}.{key}")
                            };
                            self.keys.entry(child.clone()).or_insert(kpos);
                            if let Some(v) = events.next() {
                                self.walk(v, child, events);
                            }
                        }
                        other => {
                            // A complex key: skip it and its value.
                            self.walk((other, kpos), format!("{path}.?"), events);
                            if let Some(v) = events.next() {
                                self.walk(v, format!("{path}.?"), events);
                            }
                        }
                    }
                }
            }
            Event::SequenceStart(..) => {
                self.values.entry(path.clone()).or_insert(pos);
                let mut i = 0;
                while let Some(item) = events.next() {
                    if matches!(item.0, Event::SequenceEnd) {
                        break;
                    }
                    self.walk(item, format!("{path}[{i}]"), events);
                    i += 1;
                }
            }
            _ => {
                self.values.entry(path).or_insert(pos);
            }
        }
    }

    /// Position of the value at `path`, falling back to its key, then to its parents.
    pub fn value(&self, path: &str) -> Option<(usize, usize)> {
        let mut p = path;
        loop {
            if let Some(v) = self.values.get(p).or_else(|| self.keys.get(p)) {
                return Some(*v);
            }
            p = parent(p)?;
        }
    }

    /// Position of the key at `path`, falling back to its value, then to its parents.
    pub fn key(&self, path: &str) -> Option<(usize, usize)> {
        self.keys.get(path).copied().or_else(|| self.value(path))
    }
}

fn parent(path: &str) -> Option<&str> {
    let cut = path.rfind(['.', '['])?;
    Some(&path[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_keys_and_items() {
        let src = "suite: s\ncases:\n  - id: a\n    expect:\n      - regex: '('\n";
        let m = PathMap::build(src);
        assert_eq!(m.key("cases[0].expect[0].regex"), Some((5, 9)));
        assert_eq!(m.value("cases[0].expect[0].regex"), Some((5, 16)));
        assert_eq!(m.value("cases[0]"), Some((3, 5)));
        // Unknown paths fall back to the closest parent.
        assert_eq!(m.value("cases[0].expect[0].nope"), Some((5, 9)));
    }
}
