//! The suite loader on mutated suites: a seeded mutation fuzzer over the shipped suites (the
//! built-in corpus and its includes, the starter, the examples). Suite files are untrusted
//! input, so for every mutation (byte flips, interesting bytes, truncation, duplicated lines
//! and keys, deleted and repeated spans, deep nesting, huge numbers, alias bombs, invalid
//! UTF-8, splices of other suites) the loader must not panic, must not hang, and every error
//! must name its file and a line.
//!
//! It runs in `cargo test` with a bounded number of mutations (`FUZZ_ITERATIONS`), so CI
//! needs nothing beyond the stable toolchain. For a longer run:
//!
//! ```text
//! GAUNTLET_FUZZ_ITERATIONS=200000 GAUNTLET_FUZZ_SEED=7 cargo test -p gauntlet-suite --release --test fuzz_load
//! ```
//!
//! A failure prints the seed and the iteration; the mutated file is left in the folder the
//! message names.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use gauntlet_suite::{LoadOptions, load_file};

/// Mutations per `cargo test` run: about 25 s in a debug build on two cores.
const FUZZ_ITERATIONS: u64 = 2000;

/// How long the whole run may take before it counts as a hang: 5 minutes for the default
/// count, more for a longer run (100 ms a mutation, some eight times the usual).
fn run_limit(iterations: u64) -> Duration {
    Duration::from_secs(300).max(Duration::from_millis(100) * iterations as u32)
}

/// How long one load may take: a suite of 16 MB at most loads in well under this, so a
/// slower one is a blow-up (an alias bomb, a quadratic path).
const LOAD_LIMIT: Duration = Duration::from_secs(10);

/// splitmix64: a seeded generator, so a failure can be replayed from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Bytes that mean something to YAML or JSON, or break UTF-8.
const INTERESTING: &[u8] = &[
    b':', b'-', b'[', b']', b'{', b'}', b'"', b'\'', b'\n', b' ', b'\t', b'&', b'*', b'!', b'|',
    b'>', b'#', b'%', b'@', b'`', b',', b'?', b'\\', 0, 0x7f, 0x80, 0xc3, 0xff,
];

/// Numbers that overflow or are not numbers.
const HUGE_NUMBERS: &[&str] = &[
    "1e999999",
    "-1e999999",
    "99999999999999999999999999999999999999",
    "-9223372036854775809",
    "18446744073709551616",
    "0x7fffffffffffffffff",
    ".nan",
    "-.inf",
    "1_000_000_000_000_000_000_000",
    "0o777777777777777777777777",
];

/// One mutation of `data`, taking splices from `others`.
fn mutate(rng: &mut Rng, data: &mut Vec<u8>, others: &[Vec<u8>]) -> &'static str {
    let len = data.len().max(1);
    match rng.below(13) {
        0 => {
            // Flip bits in a few bytes.
            for _ in 0..1 + rng.below(8) {
                if !data.is_empty() {
                    let i = rng.below(data.len());
                    data[i] ^= 1 << rng.below(8);
                }
            }
            "bit flips"
        }
        1 => {
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(len);
                if i < data.len() {
                    data[i] = *rng.pick(INTERESTING);
                } else {
                    data.push(*rng.pick(INTERESTING));
                }
            }
            "interesting bytes"
        }
        2 => {
            data.truncate(rng.below(len));
            "truncation"
        }
        3 => {
            // A line repeated right after itself: a duplicated key in a mapping, a repeated
            // list item, or a repeated case id.
            let lines = split_lines(data);
            if !lines.is_empty() {
                let (a, b) = *rng.pick(&lines);
                let line = data[a..b].to_vec();
                let at = b;
                data.splice(at..at, line);
            }
            "duplicated line"
        }
        4 => {
            let a = rng.below(len).min(data.len());
            let b = (a + rng.below(256)).min(data.len());
            data.drain(a..b);
            "deleted span"
        }
        5 => {
            let a = rng.below(len).min(data.len());
            let b = (a + rng.below(64)).min(data.len());
            let span = data[a..b].to_vec();
            for _ in 0..1 + rng.below(50) {
                data.splice(b..b, span.iter().copied());
            }
            "repeated span"
        }
        6 => {
            deep_nesting(rng, data, len);
            "deep nesting"
        }
        7 => {
            // A number replaced by one that does not fit, or is not a number.
            let digits: Vec<usize> = (0..data.len())
                .filter(|&i| data[i].is_ascii_digit())
                .collect();
            let huge = (*rng.pick(HUGE_NUMBERS)).as_bytes().to_vec();
            if digits.is_empty() {
                data.extend_from_slice(b"\ntimeout_ms: ");
                data.extend_from_slice(&huge);
            } else {
                let i = *rng.pick(&digits);
                let mut j = i;
                while j < data.len() && data[j].is_ascii_digit() {
                    j += 1;
                }
                data.splice(i..j, huge);
            }
            "huge number"
        }
        8 => {
            // Invalid UTF-8: a lone continuation byte, a cut sequence, an overlong form,
            // a surrogate.
            let bad = *rng.pick(&[
                &[0x80][..],
                &[0xc3][..],
                &[0xe2, 0x82][..],
                &[0xc0, 0xaf][..],
                &[0xed, 0xa0, 0x80][..],
                &[0xff, 0xfe][..],
            ]);
            let at = rng.below(len).min(data.len());
            data.splice(at..at, bad.iter().copied());
            "invalid UTF-8"
        }
        9 => {
            alias_bomb(rng, data);
            "alias bomb"
        }
        10 => {
            // A span of another shipped suite spliced in.
            let other = rng.pick(others);
            if !other.is_empty() {
                let a = rng.below(other.len());
                let b = (a + rng.below(512)).min(other.len());
                let at = rng.below(len).min(data.len());
                data.splice(at..at, other[a..b].iter().copied());
            }
            "splice"
        }
        11 => {
            // Indentation broken: a tab, or one space more or less.
            let lines = split_lines(data);
            if !lines.is_empty() {
                let (a, _) = *rng.pick(&lines);
                match rng.below(3) {
                    0 => data.insert(a, b'\t'),
                    1 => data.insert(a, b' '),
                    _ => {
                        if data.get(a) == Some(&b' ') {
                            data.remove(a);
                        }
                    }
                }
            }
            "indentation"
        }
        _ => {
            // Characters that look like nothing: a BOM, NBSP, a line separator, a NUL.
            let odd = *rng.pick(&["\u{feff}", "\u{a0}", "\u{2028}", "\0", "\r", "\u{85}"]);
            let at = rng.below(len).min(data.len());
            data.splice(at..at, odd.bytes());
            "odd characters"
        }
    }
}

/// Deep nesting, in flow and block style, spliced in at a random place.
fn deep_nesting(rng: &mut Rng, data: &mut Vec<u8>, len: usize) {
    let depth = 1 + rng.below(20_000);
    let nest: Vec<u8> = match rng.below(4) {
        0 => "[".repeat(depth).into_bytes(),
        1 => "{a: ".repeat(depth).into_bytes(),
        2 => (0..depth.min(2000))
            .flat_map(|d| format!("\n{}- ", " ".repeat(d)).into_bytes())
            .collect(),
        _ => format!("{}{}", "[".repeat(depth), "]".repeat(depth)).into_bytes(),
    };
    let at = rng.below(len).min(data.len());
    data.splice(at..at, nest);
}

/// An alias bomb in front of the suite.
fn alias_bomb(rng: &mut Rng, data: &mut Vec<u8>) {
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..1 + rng.below(12) {
        let p = i - 1;
        bomb.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    let mut v = bomb.into_bytes();
    v.extend_from_slice(data);
    *data = v;
}

/// The byte ranges of the lines of `data`, line endings included.
fn split_lines(data: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, b) in data.iter().enumerate() {
        if *b == b'\n' {
            out.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < data.len() {
        out.push((start, data.len()));
    }
    out
}

/// A shipped suite to mutate: where its copy lies, and the file to load (itself, or the
/// suite that includes it).
struct Seed {
    file: PathBuf,
    load: PathBuf,
    original: Vec<u8>,
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Copies the shipped suites into `dir` and lists them as seeds.
fn seeds(dir: &Path) -> Vec<Seed> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    copy_dir(
        &repo.join("crates/gauntlet-suite/corpus/owasp"),
        &dir.join("owasp"),
    );
    copy_dir(
        &repo.join("crates/gauntlet-suite/starter"),
        &dir.join("starter"),
    );
    std::fs::create_dir_all(dir.join("examples")).unwrap();
    for f in ["exec-agent.yaml", "proxy-agent.yaml"] {
        std::fs::copy(repo.join("examples").join(f), dir.join("examples").join(f)).unwrap();
    }
    std::fs::copy(
        repo.join("examples/support-agent/suite.yaml"),
        dir.join("examples/support-agent.yaml"),
    )
    .unwrap();
    let mut out = Vec::new();
    let corpus = dir.join("owasp/suite.yaml");
    for e in std::fs::read_dir(dir.join("owasp")).unwrap() {
        let file = e.unwrap().path();
        if file.extension().is_some_and(|x| x == "yaml") {
            out.push(Seed {
                original: std::fs::read(&file).unwrap(),
                load: corpus.clone(),
                file,
            });
        }
    }
    for file in [
        dir.join("starter/suite.yaml"),
        dir.join("examples/exec-agent.yaml"),
        dir.join("examples/proxy-agent.yaml"),
        dir.join("examples/support-agent.yaml"),
    ] {
        out.push(Seed {
            original: std::fs::read(&file).unwrap(),
            load: file.clone(),
            file,
        });
    }
    // Every seed loads as shipped, so that what the mutations break is theirs.
    for s in &out {
        if let Err(ds) = load_file(&s.load, &LoadOptions::default()) {
            panic!("{} does not load as shipped: {ds:?}", s.load.display());
        }
    }
    out.sort_by(|a, b| a.file.cmp(&b.file));
    out
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[test]
fn mutated_suites_never_panic_hang_or_lose_their_position() {
    let iterations = env_number("GAUNTLET_FUZZ_ITERATIONS").unwrap_or(FUZZ_ITERATIONS);
    let seed = env_number("GAUNTLET_FUZZ_SEED").unwrap_or(0x5eed);
    let dir = tempfile::tempdir().unwrap();
    let seeds = seeds(dir.path());
    let others: Vec<Vec<u8>> = seeds.iter().map(|s| s.original.clone()).collect();
    // What the fuzzer is doing, for the message when it panics or hangs.
    let doing = Arc::new(Mutex::new(String::new()));
    let (done, finished) = mpsc::channel();
    let (shared, folder) = (Arc::clone(&doing), dir.path().to_path_buf());
    let worker = std::thread::Builder::new()
        // The loader runs on a thread of a debug build's usual main-thread size, so a
        // recursion that only a larger stack survives fails here too.
        .stack_size(8 << 20)
        .spawn(move || {
            let mut rng = Rng(seed);
            let mut counts = std::collections::BTreeMap::<&str, (u64, u64)>::new();
            let mut slowest = Duration::ZERO;
            for i in 0..iterations {
                let s = &seeds[rng.below(seeds.len())];
                let mut data = s.original.clone();
                let mut how = Vec::new();
                for _ in 0..1 + rng.below(3) {
                    how.push(mutate(&mut rng, &mut data, &others));
                }
                let what = format!(
                    "seed {seed}, iteration {i}: {} mutated by {} ({} bytes), loading {}",
                    s.file.display(),
                    how.join(", "),
                    data.len(),
                    s.load.display()
                );
                *shared.lock().unwrap() = what.clone();
                std::fs::write(&s.file, &data).unwrap();
                let started = Instant::now();
                let loaded = load_file(&s.load, &LoadOptions::default());
                let took = started.elapsed();
                slowest = slowest.max(took);
                assert!(took < LOAD_LIMIT, "{what}: the load took {took:?}");
                let entry = counts.entry(how[0]).or_default();
                entry.0 += 1;
                if let Err(ds) = &loaded {
                    entry.1 += 1;
                    assert!(!ds.is_empty(), "{what}: an error without a diagnostic");
                    for d in ds {
                        assert!(
                            !d.file.is_empty() && d.line > 0,
                            "{what}: a diagnostic without a file and line: {d:?}"
                        );
                        // It renders, snippet and all.
                        let _ = d.to_string();
                    }
                }
                std::fs::write(&s.file, &s.original).unwrap();
            }
            let _ = done.send((counts, slowest));
        })
        .unwrap();
    let limit = run_limit(iterations);
    match finished.recv_timeout(limit) {
        Ok((counts, slowest)) => {
            worker.join().unwrap();
            let total: u64 = counts.values().map(|c| c.0).sum();
            assert_eq!(total, iterations);
            let rejected: u64 = counts.values().map(|c| c.1).sum();
            // The mutations must reach the loader's error paths, or the test checks little.
            assert!(
                rejected * 4 > iterations,
                "only {rejected} of {iterations} mutated suites were rejected: {counts:?}"
            );
            // The figures docs/reliability.md quotes (shown with `--nocapture`).
            #[allow(clippy::print_stderr)]
            {
                eprintln!(
                    "{iterations} mutated suites (seed {seed}): {rejected} rejected with positioned diagnostics, {} loaded; slowest load {slowest:?}",
                    iterations - rejected
                );
                for (how, (n, bad)) in &counts {
                    eprintln!("  {how}: {n} ({bad} rejected)");
                }
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!(
            "the fuzzer hung for {limit:?} at {} (files left in {})",
            doing.lock().unwrap(),
            folder.display()
        ),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            let at = doing.lock().unwrap().clone();
            let e = worker
                .join()
                .expect_err("the worker ended without a result");
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            // Keep the folder with the mutated file for a look.
            let kept = dir.keep();
            panic!("{msg}\n(at {at}; files in {})", kept.display());
        }
    }
}
