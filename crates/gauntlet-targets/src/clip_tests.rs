//! Property tests of every place a target cuts text it quotes: response bodies
//! ([`crate::client::clip_body`], shared by OpenAI, Anthropic, HTTP apps and the proxy, and
//! [`crate::client::clip_head`] for a body cut off at `max_reply_bytes`),
//! stderr lines of exec and proxied agents ([`crate::exec::collect_stderr`]) and quotes of
//! protocol lines ([`crate::exec::quote`]). A key placed at every offset across each limit
//! must never come out, not even 8 consecutive characters of it.

use std::sync::{Arc, Mutex};

use gauntlet_core::redact::Redactor;
use proptest::prelude::*;

use crate::client::{BODY_CLIP, clip_body, clip_head};
use crate::exec::{QUOTE_BYTES, STDERR_LINE_BYTES, StderrTail, collect_stderr, quote};

/// Whether any 8 consecutive characters of `key` occur in `out`.
fn shows_part_of(out: &str, key: &str) -> bool {
    let k: Vec<char> = key.chars().collect();
    k.windows(8)
        .any(|w| out.contains(&w.iter().collect::<String>()))
}

/// `len` bytes of filler (multi-byte characters included, so that cuts fall between the
/// bytes of a character too), then the key, then more text.
fn text_with_key_at(filler: &str, len: usize, key: &str) -> String {
    let mut t = String::new();
    for c in filler.chars().cycle() {
        if t.len() + c.len_utf8() > len {
            break;
        }
        t.push(c);
    }
    while t.len() < len {
        t.push('x');
    }
    t.push_str(key);
    t.push_str("\", \"type\": \"invalid_request_error\"}}");
    t
}

fn redactor(key: &str) -> Redactor {
    let mut r = Redactor::new();
    r.add("OPENAI_API_KEY", key);
    r
}

fn stderr_of(r: &Redactor, stream: &[u8]) -> String {
    let tail = Arc::new(Mutex::new(StderrTail::default()));
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(collect_stderr(
            stream,
            Arc::clone(&tail),
            Arc::new(r.clone()),
        ));
    let t = tail.lock().expect("tail");
    t.suffix()
}

/// Offsets from a whole key before the limit to the key starting just past it.
fn offsets(limit: usize, key: &str) -> std::ops::RangeInclusive<usize> {
    limit.saturating_sub(key.len() + 2)..=limit + 2
}

proptest! {
    // Failures are not persisted to a file: the test is seeded afresh each run, and a
    // failure prints its minimal input.
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_key_across_the_body_limit_never_survives(
        key in "sk-(proj-)?[A-Za-z0-9_-]{20,60}",
        filler in "[a-z é{}\":,]{1,40}",
    ) {
        let r = redactor(&key);
        for at in offsets(BODY_CLIP, &key) {
            let body = text_with_key_at(&filler, at, &key);
            let out = clip_body(body.as_bytes(), &r);
            prop_assert!(!shows_part_of(&out, &key), "at {at}: …{:?}", &out[out.len().saturating_sub(80)..]);
        }
    }

    #[test]
    fn a_key_across_the_reply_limit_never_survives(
        key in "sk-(proj-)?[A-Za-z0-9_-]{20,60}",
        filler in "[a-z é{}\":,]{1,40}",
        limit in 16usize..3000,
    ) {
        // The reply cap cut the body somewhere inside the key: only its head arrived.
        let r = redactor(&key);
        let body = text_with_key_at(&filler, limit.saturating_sub(key.len() / 2), &key);
        let head = &body.as_bytes()[..limit.min(body.len())];
        let out = clip_head(head, &r);
        prop_assert!(!shows_part_of(&out, &key), "…{:?}", &out[out.len().saturating_sub(80)..]);
    }

    #[test]
    fn a_key_across_the_quote_limit_never_survives(
        key in "sk-[A-Za-z0-9_-]{20,60}",
        filler in "[a-z é{}\":,]{1,40}",
    ) {
        let r = redactor(&key);
        for at in offsets(QUOTE_BYTES, &key) {
            let line = text_with_key_at(&filler, at, &key);
            let out = quote(&r, &line, QUOTE_BYTES);
            prop_assert!(!shows_part_of(&out, &key), "at {at}: {out:?}");
        }
    }

    #[test]
    fn a_key_across_the_stderr_line_limit_never_survives(
        key in "sk-[A-Za-z0-9_-]{20,60}",
        filler in "[a-z é:=]{1,40}",
    ) {
        let r = redactor(&key);
        // The line limit, and the reader's own limit (the line limit plus the longest
        // secret), past which the reader hands over a line already cut.
        let reader_limit = STDERR_LINE_BYTES + r.longest();
        for limit in [STDERR_LINE_BYTES, reader_limit] {
            for at in offsets(limit, &key) {
                let mut stream = text_with_key_at(&filler, at, &key).into_bytes();
                stream.extend_from_slice(b"\nlast line\n");
                let out = stderr_of(&r, &stream);
                prop_assert!(!shows_part_of(&out, &key), "at {at}: …{:?}", &out[out.len().saturating_sub(80)..]);
                prop_assert!(out.ends_with("| last line"), "{out:?}");
            }
        }
    }
}
