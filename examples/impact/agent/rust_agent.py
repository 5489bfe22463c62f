"""A scripted coding agent for examples/impact/rust-tasks.yaml: reads the task message on
stdin, edits the crate in its workspace, runs `cargo test --offline` (the runner gauntlet
names) for the tests it was told about (given mode) or every test of the crate (hidden
mode), and writes its evidence to .gauntlet/evidence.json. Standard library only.

Per task: `mul` is done right, `eur` changes total() itself (its acceptance test passes, an
existing test breaks, and the evidence says so honestly), `neg` is done right but leaves no
evidence, `div` is wrong (no zero check) and its evidence claims every test passed.

The first argument picks a variant: `scripted` (default); `broken` (mul does not compile);
`tamper` (also writes into the pristine acceptance test next to the task file: the run must
fail on integrity).
"""
import json
import pathlib
import re
import subprocess
import sys

msg = json.loads(sys.stdin.readline())
variant = sys.argv[1] if len(sys.argv) > 1 else "scripted"
ws = pathlib.Path(msg["workspace"])
task = msg["task"]
here = pathlib.Path(__file__).resolve().parent


def append(rel, text):
    p = ws / rel
    p.write_text(p.read_text() + text)


if task == "mul":
    if variant == "broken":
        append("src/ops.rs", "\npub fn mul(a: i64, b: i64) -> i64 {\n    a *\n}\n")
    else:
        append("src/ops.rs", "\npub fn mul(a: i64, b: i64) -> i64 {\n    a * b\n}\n")
    if variant == "tamper":
        with open(here.parent / "rust-acceptance" / "mul.rs", "a") as f:
            f.write("\n// the agent was here\n")
elif task == "eur":
    fmt = ws / "src/fmt.rs"
    fmt.write_text(
        fmt.read_text().replace('"total: {}"', '"total: {} EUR"')
        + "\npub fn total_eur(items: &[i64]) -> String {\n    total(items)\n}\n"
    )
elif task == "neg":
    append("src/ops.rs", "\npub fn neg(a: i64) -> i64 {\n    -a\n}\n")
elif task == "div":
    append("src/ops.rs", "\npub fn div(a: f64, b: f64) -> Option<f64> {\n    Some(a / b)\n}\n")


def test_id(target, name):
    """FILE::PATH::NAME, as gauntlet names tests: a unit test belongs to the file of its
    longest module prefix."""
    if target.startswith("src/"):
        segs = name.split("::")
        for n in range(len(segs) - 1, 0, -1):
            base = ws / "src" / "/".join(segs[:n])
            for f in (base.with_suffix(".rs"), base / "mod.rs"):
                if f.is_file():
                    return str(f.relative_to(ws)) + "::" + "::".join(segs[n:])
    return target + "::" + name


args = ["--no-fail-fast"]
if msg["mode"] == "given":
    files = {t.split("::")[0] for t in msg["affected_tests"]} | set(msg["acceptance_tests"])
    if any(f.startswith("src/") for f in files):
        args.append("--lib")
    for f in sorted(files):
        if f.startswith("tests/"):
            args += ["--test", f[len("tests/"):-len(".rs")]]
# One stream, so that each `Running TARGET` header comes before its tests.
out = subprocess.run(
    msg["runner"] + args, cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    text=True, check=False,
)
results = []
target = None
for line in out.stdout.splitlines():
    m = re.match(r"\s*Running (?:unittests )?(\S+)", line)
    if m:
        target = m.group(1)
        continue
    m = re.match(r"test (\S+) \.\.\. (ok|FAILED|ignored)", line)
    if m and target:
        outcome = {"ok": "passed", "FAILED": "failed", "ignored": "skipped"}[m.group(2)]
        results.append({"id": test_id(target, m.group(1)), "outcome": outcome})
print(f"task {task}: ran {len(results)} test(s)")

if task == "neg":
    sys.exit(0)
if task == "div":
    results = [{"id": r["id"], "outcome": "passed"} for r in results]
evidence = ws / msg["evidence"]
evidence.write_text(json.dumps({"tests": results}, indent=1) + "\n")
