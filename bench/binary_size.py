#!/usr/bin/env python3
"""What the gauntlet binary is made of (a measurement, not a test).

Prints the binary's file size and its sections, then the machine code and read-only data
of its symbols added up by the crate that names them (the first path segment of the
demangled symbol: `serde_json::...` counts for serde_json). Generic code is named after
the crate that defines it, wherever it was instantiated: `serde_json` holds the JSON
(de)serialisers of every gauntlet type, `core` and `alloc` the drop glue, iterators and
collections of all crates.

Usage (from the repository root; the binary must have its symbols, so use a release build,
not the stripped `dist` one):

    python3 bench/binary_size.py [--bin target/release/gauntlet] [--top 40]

Needs `nm` and `size` (binutils).
"""

import argparse
import collections
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def crate_of(name):
    """The crate a demangled symbol belongs to, or a bucket for the ones with no path."""
    name = name.strip()
    m = re.match(r"^<?(?:&(?:mut )?)?(?:dyn )?(?:\[)?([A-Za-z_][A-Za-z0-9_]*)::", name)
    if m:
        return m.group(1)
    if name.startswith(("sqlite3", "vdbe", "btree", "pager", "wal")):
        return "(SQLite, C)"
    if name.startswith(("mi_", "_mi_", "mi_")):
        return "(mimalloc, C)"
    if "ring_core" in name or name.startswith(("GFp", "ecp_nistz", "aes_", "sha", "x25519", "p256", "p384")):
        return "(ring, C and assembly)"
    return "(other)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "gauntlet"))
    ap.add_argument("--top", type=int, default=40)
    args = ap.parse_args()
    if not os.path.exists(args.bin):
        sys.exit(f"no binary at {args.bin}: cargo build --release")
    print(f"{args.bin}: {os.path.getsize(args.bin) / 1e6:.1f} MB on disk")
    sections = subprocess.run(["size", "-A", args.bin], capture_output=True, text=True, check=True).stdout
    for line in sections.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith(".") and parts[1].isdigit() and int(parts[1]) > 500_000:
            print(f"  {parts[0]:<20} {int(parts[1]) / 1e6:>7.1f} MB")
    out = subprocess.run(["nm", "-S", "-C", "--size-sort", args.bin], capture_output=True, text=True).stdout
    sizes = collections.Counter()
    total = 0
    for line in out.splitlines():
        parts = line.split(None, 3)
        if len(parts) < 4 or parts[2] not in "tTrRdD":
            continue
        size = int(parts[1], 16)
        sizes[crate_of(parts[3])] += size
        total += size
    if not total:
        sys.exit("no symbols: the binary is stripped")
    print(f"\nsymbols: {total / 1e6:.1f} MB, by crate (top {args.top}):")
    for crate, size in sizes.most_common(args.top):
        print(f"  {crate:<28} {size / 1e6:>7.2f} MB {100 * size / total:>5.1f} %")


if __name__ == "__main__":
    main()
