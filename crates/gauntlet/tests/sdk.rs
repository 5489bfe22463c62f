//! The vendors' own Python SDKs (openai, anthropic) against `gauntlet serve-fake` on
//! 127.0.0.1: sync and async calls, streaming (OpenAI chunks with tool-call deltas and the
//! `include_usage` chunk; Anthropic's Messages events with `text_delta` and
//! `input_json_delta`) and tool calls, in both wire formats (`tests/data/sdk_check.py`).
//! The venv is made once under the target directory; without python3 or pip the test is
//! skipped with the reason, except in CI, where it fails.

mod common;

use common::{py_venv_or_skip, serve_fake};

#[test]
fn the_official_sdks_read_serve_fake_sync_async_streaming_and_tools() {
    let Some(python) = py_venv_or_skip() else {
        return;
    };
    let (_server, url) = serve_fake("safe");
    let root = url.trim_end_matches('/').trim_end_matches("/v1").to_owned();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sdk_check.py");
    let o = std::process::Command::new(python)
        .arg(script)
        .arg(&root)
        .output()
        .unwrap();
    let text = common::text(&o);
    assert!(o.status.success(), "{text}");
    assert!(text.contains("all SDK checks passed"), "{text}");
}
