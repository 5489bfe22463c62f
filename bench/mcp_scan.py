#!/usr/bin/env python3
"""How `gauntlet mcp scan` time grows with a server's tool count (a measurement, not a test).

Scans the test server's `crowd` mode (every description hides a right-to-left override
and names another tool, so every tool is checked against every other name) at growing
tool counts, each count `--runs` times interleaved with the others, and prints the median
wall time per count and the ratio to the previous count: about 2 per doubling is linear,
about 4 quadratic.

Usage (from the repository root, after `cargo build --release --features mcp`):

    python3 bench/mcp_scan.py [--bin target/release/gauntlet] [--counts 250,500,1000,2000,4000]
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVER = os.path.join(ROOT, "crates/gauntlet/tests/data/mcp/notes_server.py")


def scan(binary, tools):
    cmd = [binary, "mcp", "scan", "--json", "--timeout-ms", "60000", "--",
           sys.executable, SERVER, "--mode", "crowd", "--tools", str(tools)]
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    took = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"scan of {tools} tools failed ({done.returncode}): {done.stderr.decode()[-400:]}")
    return took


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=os.path.join(ROOT, "target/release/gauntlet"))
    p.add_argument("--counts", default="250,500,1000,2000,4000")
    p.add_argument("--runs", type=int, default=5)
    a = p.parse_args()
    counts = [int(c) for c in a.counts.split(",")]
    times = {c: [] for c in counts}
    for _ in range(a.runs):
        for c in counts:
            times[c].append(scan(a.bin, c))
    print(f"{'tools':>6} {'median s':>9} {'x previous':>10}")
    prev = None
    for c in counts:
        m = statistics.median(times[c])
        ratio = f"{m / prev:.2f}" if prev else "-"
        print(f"{c:>6} {m:>9.3f} {ratio:>10}")
        prev = m


if __name__ == "__main__":
    main()
