//! A headless Chromium driven over the Chrome DevTools Protocol: [`Browser`] starts one with
//! a fresh profile, [`Page`] talks to its tab over a minimal websocket client (text frames,
//! client masking, fragmentation, ping), collecting every event so that tests can assert on
//! console errors and network requests afterwards.
//!
//! Written against std only: the browser is Debian's `chromium`, nothing is downloaded.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

/// Where the browser is: `GAUNTLET_CHROMIUM`, else the first of the usual names on `PATH`.
pub fn find_chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("GAUNTLET_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in [
            "chromium",
            "chromium-browser",
            "google-chrome",
            "google-chrome-stable",
        ] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// A running headless browser with its own profile folder.
pub struct Browser {
    child: Child,
    port: u16,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts the browser; its DevTools port is read from the profile once it is listening.
    pub fn launch(bin: &Path) -> Browser {
        let profile = tempfile::tempdir().expect("profile dir");
        let child = Command::new(bin)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--disable-default-apps",
                "--metrics-recording-only",
                "--hide-scrollbars",
                "--mute-audio",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                "--window-size=1280,900",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("failed to start {}: {e}", bin.display()));
        let file = profile.path().join("DevToolsActivePort");
        // Owned from here on, so that a failure below still stops the browser.
        let mut b = Browser {
            child,
            port: 0,
            _profile: profile,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        b.port = loop {
            if let Some(p) = std::fs::read_to_string(&file)
                .ok()
                .and_then(|s| s.lines().next().and_then(|l| l.trim().parse().ok()))
            {
                break p;
            }
            assert!(
                Instant::now() < deadline,
                "the browser did not open its DevTools port"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        b
    }

    /// The browser's first tab.
    pub fn page(&self) -> Page {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let list = http_get(self.port, "/json/list");
            if let Some(ws) = serde_json::from_str::<Value>(&list).ok().and_then(|v| {
                v.as_array()?
                    .iter()
                    .find(|t| t["type"] == "page")
                    .and_then(|t| t["webSocketDebuggerUrl"].as_str().map(str::to_owned))
            }) {
                let mut page = Page::connect(&ws);
                for m in [
                    "Runtime.enable",
                    "Log.enable",
                    "Network.enable",
                    "Page.enable",
                ] {
                    page.call(m, json!({}));
                }
                page.call(
                    "Emulation.setDeviceMetricsOverride",
                    json!({"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false}),
                );
                return page;
            }
            assert!(Instant::now() < deadline, "no page target: {list}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http_get(port: u16, path: &str) -> String {
    let Ok(s) = TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    let mut r = BufReader::new(s);
    let req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if r.get_mut().write_all(req.as_bytes()).is_err() {
        return String::new();
    }
    // DevTools keeps the connection open: read the headers, then exactly the body.
    let mut len = 0usize;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return String::new();
        }
        if line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            len = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; len];
    if r.read_exact(&mut body).is_err() {
        return String::new();
    }
    String::from_utf8(body).unwrap_or_default()
}

/// A websocket to one tab, and everything it has reported.
pub struct Page {
    stream: BufReader<TcpStream>,
    next_id: u64,
    /// Every event received, in order.
    pub events: Vec<Value>,
}

impl Page {
    fn connect(url: &str) -> Page {
        let rest = url.strip_prefix("ws://").expect("a ws:// URL");
        let (host, path) = rest.split_once('/').expect("a path");
        let stream = TcpStream::connect(host).expect("connect to DevTools");
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .expect("timeout");
        let key = base64::engine::general_purpose::STANDARD.encode(b"gauntlet-test-key");
        let req = format!(
            "GET /{path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        );
        let mut stream = BufReader::new(stream);
        stream
            .get_mut()
            .write_all(req.as_bytes())
            .expect("handshake");
        let mut status = String::new();
        stream.read_line(&mut status).expect("handshake reply");
        assert!(status.contains(" 101 "), "websocket refused: {status}");
        loop {
            let mut line = String::new();
            stream.read_line(&mut line).expect("handshake headers");
            if line == "\r\n" || line.is_empty() {
                break;
            }
        }
        Page {
            stream,
            next_id: 1,
            events: Vec::new(),
        }
    }

    fn send_frame(&mut self, opcode: u8, payload: &[u8]) {
        let mut f = vec![0x80 | opcode];
        match payload.len() {
            n if n < 126 => f.push(0x80 | n as u8),
            n if n < 65536 => {
                f.push(0x80 | 126);
                f.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                f.push(0x80 | 127);
                f.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        let mask = (self.next_id as u32)
            .wrapping_mul(2_654_435_761)
            .to_be_bytes();
        f.extend_from_slice(&mask);
        f.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.stream.get_mut().write_all(&f).expect("send frame");
    }

    fn read_message(&mut self) -> String {
        let mut message = Vec::new();
        loop {
            let mut head = [0u8; 2];
            self.stream.read_exact(&mut head).expect("read frame");
            let fin = head[0] & 0x80 != 0;
            let opcode = head[0] & 0x0f;
            let mut len = u64::from(head[1] & 0x7f);
            if len == 126 {
                let mut b = [0u8; 2];
                self.stream.read_exact(&mut b).expect("len");
                len = u64::from(u16::from_be_bytes(b));
            } else if len == 127 {
                let mut b = [0u8; 8];
                self.stream.read_exact(&mut b).expect("len");
                len = u64::from_be_bytes(b);
            }
            let mut mask = None;
            if head[1] & 0x80 != 0 {
                let mut m = [0u8; 4];
                self.stream.read_exact(&mut m).expect("mask");
                mask = Some(m);
            }
            let mut payload = vec![0u8; len as usize];
            self.stream.read_exact(&mut payload).expect("payload");
            if let Some(m) = mask {
                for (i, b) in payload.iter_mut().enumerate() {
                    *b ^= m[i % 4];
                }
            }
            match opcode {
                0x9 => self.send_frame(0xA, &payload),
                0x8 => panic!("the browser closed the DevTools connection"),
                0x0..=0x2 => {
                    message.extend_from_slice(&payload);
                    if fin {
                        return String::from_utf8(message).expect("UTF-8 message");
                    }
                }
                _ => {}
            }
        }
    }

    /// Sends a command and waits for its result (events that arrive meanwhile are kept).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({"id": id, "method": method, "params": params}).to_string();
        self.send_frame(0x1, msg.as_bytes());
        loop {
            let v: Value = serde_json::from_str(&self.read_message()).expect("JSON message");
            if v["id"] == id {
                if let Some(e) = v.get("error") {
                    panic!("{method} failed: {e}");
                }
                return v["result"].clone();
            }
            self.events.push(v);
        }
    }

    /// Evaluates an expression in the page (promises awaited) and returns its value.
    pub fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        );
        if let Some(ex) = r.get("exceptionDetails") {
            panic!("`{expr}` threw: {ex}");
        }
        r["result"]["value"].clone()
    }

    /// Polls `expr` until it is truthy (an exception, as while a page is being replaced,
    /// counts as not yet).
    pub fn wait_for(&mut self, expr: &str, timeout: Duration) -> Value {
        let deadline = Instant::now() + timeout;
        let guarded =
            format!("(() => {{ try {{ return ({expr}); }} catch (e) {{ return null; }} }})()");
        loop {
            let v = self.eval(&guarded);
            if !matches!(v, Value::Null | Value::Bool(false)) && v != json!("") && v != json!(0) {
                return v;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for `{expr}`; console: {:?}",
                self.console_errors()
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Opens a URL and waits until the document has loaded.
    pub fn goto(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url}));
        let want = serde_json::to_string(url).expect("url");
        self.wait_for(
            &format!(
                "location.href.split('#')[0] === {want}.split('#')[0] && document.readyState === 'complete'"
            ),
            Duration::from_secs(30),
        );
    }

    /// Presses a key in the focused element.
    pub fn key(&mut self, key: &str) {
        let (code, vk, text) = match key {
            "ArrowDown" => ("ArrowDown", 40, ""),
            "ArrowUp" => ("ArrowUp", 38, ""),
            "Enter" => ("Enter", 13, "\r"),
            "Escape" => ("Escape", 27, ""),
            "/" => ("Slash", 191, "/"),
            "j" => ("KeyJ", 74, "j"),
            "k" => ("KeyK", 75, "k"),
            other => panic!("no key mapping for {other}"),
        };
        let mut down =
            json!({"type": "keyDown", "key": key, "code": code, "windowsVirtualKeyCode": vk});
        if !text.is_empty() {
            down["text"] = json!(text);
        }
        self.call("Input.dispatchKeyEvent", down);
        self.call(
            "Input.dispatchKeyEvent",
            json!({"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": vk}),
        );
    }

    /// Takes a PNG of the viewport (or of the whole page).
    pub fn screenshot(&mut self, path: &Path, full_page: bool) {
        let mut params = json!({"format": "png"});
        if full_page {
            params["captureBeyondViewport"] = json!(true);
            let h = self
                .eval("Math.min(document.documentElement.scrollHeight, 2400)")
                .as_f64()
                .unwrap_or(900.0);
            params["clip"] = json!({"x": 0, "y": 0, "width": 1280, "height": h, "scale": 1});
        }
        let r = self.call("Page.captureScreenshot", params);
        let png = base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().expect("png data"))
            .expect("base64 png");
        std::fs::write(path, png).expect("write screenshot");
    }

    /// Console errors, uncaught exceptions and error log entries (CSP violations among them).
    pub fn console_errors(&self) -> Vec<String> {
        let mut out = Vec::new();
        for e in &self.events {
            match e["method"].as_str() {
                Some("Runtime.consoleAPICalled")
                    if matches!(e["params"]["type"].as_str(), Some("error" | "assert")) =>
                {
                    out.push(format!("console: {}", e["params"]["args"]));
                }
                Some("Runtime.exceptionThrown") => {
                    out.push(format!("exception: {}", e["params"]["exceptionDetails"]));
                }
                Some("Log.entryAdded") if e["params"]["entry"]["level"] == "error" => {
                    out.push(format!("log: {}", e["params"]["entry"]["text"]));
                }
                _ => {}
            }
        }
        out
    }

    /// Every URL the page asked the network for.
    pub fn requests(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["method"] == "Network.requestWillBeSent")
            .filter_map(|e| e["params"]["request"]["url"].as_str().map(str::to_owned))
            .collect()
    }

    /// Forgets the events so far.
    pub fn clear_events(&mut self) {
        self.events.clear();
    }
}
