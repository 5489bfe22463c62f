#!/usr/bin/env python3
"""Where a cold build's time goes, by crate (a measurement, not a test).

Reads the report `cargo build --timings` writes (cargo-timing.html) and prints the build's
wall time and the compile time of each unit, longest first, with its share of the sum. On a
machine with N cores the units overlap, so the sum is about N times the wall time; a unit's
share of the sum is its share of the CPU the build used.

Usage (from the repository root):

    CARGO_TARGET_DIR=$(mktemp -d) cargo build --release -p gauntlet --timings
    python3 bench/build_timings.py $CARGO_TARGET_DIR/cargo-timings/cargo-timing.html [--top 30]
"""

import argparse
import collections
import json
import re
import sys


def units(html):
    m = re.search(r"const UNIT_DATA = (\[.*?\]);\s*\n", html, re.S)
    if not m:
        sys.exit("no UNIT_DATA in the file: is it cargo-timing.html?")
    return json.loads(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("html")
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    html = open(args.html, encoding="utf-8").read()
    data = units(html)
    total = collections.Counter()
    for u in data:
        name = u["name"]
        if u.get("target", "").strip():
            name += " " + u["target"].strip()
        total[name] += u["duration"]
    wall = max(u["start"] + u["duration"] for u in data)
    s = sum(total.values())
    print(f"{len(data)} units, wall {wall:.1f} s, sum of unit times {s:.1f} s")
    for name, d in total.most_common(args.top):
        print(f"  {name:<44} {d:>7.1f} s {100 * d / s:>5.1f} %")


if __name__ == "__main__":
    main()
