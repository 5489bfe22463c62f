#!/usr/bin/env python3
"""Write crates/gauntlet/link-order.txt: the functions a run executes, for the linker to place
together at the start of the shipped build's machine code (a build step, not a test).

Why: a process's resident memory counts every page of the binary it has touched, and the
kernel maps the binary in 64 KB runs around each page a run reaches. A run of 50,000 cases
executes about 3.4 MB of the 18 MB of machine code, but scattered over it, so it touched about
12.5 MB of it. Placed together, the code a run executes is mapped in a few runs of pages.

What it does: builds the `dist` profile with a link map (GAUNTLET_LINK_MAP), runs that binary
under `valgrind --tool=callgrind` on two workloads (the throughput benchmark's 1,000-case run
against its fake server, and `gauntlet redteam -t fake:safe`), maps every executed
instruction to the function section the link map places it in, and writes the sections'
symbols: first those the run executes, then those only the red team does, each group sorted by
name (so that the file changes little from one regeneration to the next). The order is a
layout only: a function missing from it (new code) is placed after the listed ones, and a name
that no longer exists is ignored.

Usage (from the repository root; five minutes on two cores after a `dist` build, as long as a
cold `dist` build from nothing):

    python3 bench/link_order.py [--out crates/gauntlet/link-order.txt]

The list holds mangled names, which depend on the compiler version and the dependencies'
versions and features: regenerate it after changing the toolchain or Cargo.lock, and after
large changes to the run path. `crates/gauntlet/build.rs` passes it to the linker only for
the `dist` profile on x86_64 Linux (glibc), where rustc links with LLD.
"""

import argparse
import bisect
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CALLGRIND = [
    "valgrind",
    "--tool=callgrind",
    "--dump-instr=yes",
    "--compress-pos=no",
    "--compress-strings=no",
]
# An input section in LLD's map: address, size, alignment, "file:(section)".
SECTION = re.compile(r"^\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+\s+\S+:\((\.text[^)]*)\)$")
PREFIXES = (".text.unlikely.", ".text.hot.", ".text.startup.", ".text.split.", ".text.")


def build(map_path):
    env = dict(os.environ, GAUNTLET_LINK_MAP=map_path)
    cmd = ["cargo", "build", "--profile", "dist", "--locked", "-p", "gauntlet", "--features", "full"]
    subprocess.run(cmd, cwd=ROOT, env=env, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    return os.path.join(target, "dist", "gauntlet")


def sections(map_path):
    """Function sections as sorted (start, end, symbol) from LLD's map."""
    found = []
    with open(map_path) as f:
        for line in f:
            m = SECTION.match(line)
            if not m:
                continue
            name = m.group(3)
            prefix = next((p for p in PREFIXES if name.startswith(p)), None)
            if prefix is None:
                continue
            start, size = int(m.group(1), 16), int(m.group(2), 16)
            found.append((start, start + size, name[len(prefix):]))
    found.sort()
    return found


def executed(callgrind_out, binary):
    """Addresses of the instructions callgrind saw executed in `binary`."""
    addrs, inside = set(), False
    with open(callgrind_out, errors="replace") as f:
        for line in f:
            if line.startswith("ob="):
                inside = os.path.realpath(line[3:].strip()) == os.path.realpath(binary)
            elif inside and line.startswith("0x"):
                addrs.add(int(line.split(None, 1)[0], 16))
    return addrs


def hit(secs, addrs):
    """Symbols of the sections holding the addresses. valgrind loads the binary at the
    addresses it was linked for; a load bias would show here as almost nothing found."""
    starts = [s[0] for s in secs]
    names = set()
    for a in addrs:
        i = bisect.bisect_right(starts, a) - 1
        if i >= 0 and a < secs[i][1]:
            names.add(secs[i][2])
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "crates", "gauntlet", "link-order.txt"))
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("valgrind is needed (apt-get install valgrind)")
    with tempfile.TemporaryDirectory(prefix="gauntlet-order-") as tmp:
        map_path = os.path.join(tmp, "gauntlet.map")
        built = build(map_path)
        binary = os.path.join(tmp, "gauntlet")
        shutil.copy2(built, binary)
        secs = sections(map_path)
        run_out = os.path.join(tmp, "run.out")
        env = dict(os.environ, VALGRIND_OPTS=" ".join(CALLGRIND[2:]))
        subprocess.run(
            [sys.executable, os.path.join(ROOT, "bench", "throughput.py"), "--bin", binary,
             "--sizes", "1000", "--callgrind", "--concurrency", "64", "--keep-callgrind", run_out],
            env=env, check=True, stdout=subprocess.DEVNULL,
        )
        redteam_out = os.path.join(tmp, "redteam.out")
        subprocess.run(
            CALLGRIND + [f"--callgrind-out-file={redteam_out}", binary, "redteam", "-t", "fake:safe",
                         "--no-store", "-q", "--out", os.path.join(tmp, "rt")],
            cwd=tmp, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        run = hit(secs, executed(run_out + ".1000", binary))
        redteam = hit(secs, executed(redteam_out, binary)) - run
    if len(run) < 1000:
        sys.exit(f"only {len(run)} executed functions found in the link map: is the binary loaded at another address?")
    sizes = {name: end - start for start, end, name in secs}
    with open(args.out, "w") as f:
        for name in sorted(run) + sorted(redteam):
            f.write(name + "\n")
    mb = lambda names: sum(sizes[n] for n in names) / 1e6
    print(f"function sections in the map: {len(secs)} ({sum(sizes.values()) / 1e6:.1f} MB)")
    print(f"executed by the run:          {len(run)} ({mb(run):.2f} MB)")
    print(f"and only by the red team:     {len(redteam)} ({mb(redteam):.2f} MB)")
    print(f"wrote {os.path.relpath(args.out, ROOT)}")


if __name__ == "__main__":
    main()
