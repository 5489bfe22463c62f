#!/usr/bin/env python3
"""How long installing gauntlet from its wheel takes, and how large the download is (a
benchmark, not a test).

    cargo build --profile dist --locked -p gauntlet --features full
    python3 bench/install.py --binary target/dist/gauntlet --repeat 5

Packs the binary into a wheel as the release workflow does (python/build_wheel.py), then,
each round, makes a fresh virtual environment and times `pip install` of that wheel with no
network (`--no-index`: the download itself is the wheel's size over the user's link, which
this machine cannot stand for), then the first `gauntlet --version` and the Quick start's
`gauntlet redteam` from the installed command. Prints the wheel's size and the medians.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import venv

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd, **kw):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    return time.perf_counter() - t0, p


def one_round(wheel, work):
    env_dir = tempfile.mkdtemp(dir=work)
    t0 = time.perf_counter()
    venv.create(env_dir, with_pip=True)
    made = time.perf_counter() - t0
    bindir = os.path.join(env_dir, "Scripts" if os.name == "nt" else "bin")
    pip = os.path.join(bindir, "pip")
    secs, p = timed([pip, "install", "--no-index", "--disable-pip-version-check", "-q", wheel])
    if p.returncode != 0:
        sys.exit(f"pip install failed:\n{p.stdout}\n{p.stderr}")
    exe = os.path.join(bindir, "gauntlet")
    first, p = timed([exe, "--version"])
    if p.returncode != 0:
        sys.exit(f"gauntlet --version failed:\n{p.stderr}")
    out = os.path.join(env_dir, "out")
    red, p = timed([exe, "redteam", "--out", out, "-q"], cwd=env_dir)
    if p.returncode != 0:
        sys.exit(f"gauntlet redteam exited {p.returncode}:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return {"venv": made, "install": secs, "version": first, "redteam": red}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True, help="the built gauntlet (the dist profile is what ships)")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        dist = os.path.join(work, "dist")
        subprocess.run(
            [sys.executable, os.path.join(ROOT, "python", "build_wheel.py"),
             "--binary", os.path.abspath(args.binary), "--out", dist],
            check=True, capture_output=True,
        )
        wheel = os.path.join(dist, os.listdir(dist)[0])
        size = os.path.getsize(wheel)
        binary = os.path.getsize(args.binary)
        rounds = [one_round(wheel, work) for _ in range(args.repeat)]
        med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
        rng = {k: (min(r[k] for r in rounds), max(r[k] for r in rounds)) for k in rounds[0]}
        print(f"wheel {os.path.basename(wheel)}: {size / 1e6:.1f} MB to download "
              f"(the binary inside: {binary / 1e6:.1f} MB)")
        print(f"medians of {args.repeat} rounds, each in a fresh virtual environment (range in brackets):")
        for key, what in [
            ("venv", "python3 -m venv (not gauntlet's)"),
            ("install", "pip install --no-index WHEEL"),
            ("version", "first gauntlet --version"),
            ("redteam", "gauntlet redteam (the Quick start)"),
        ]:
            lo, hi = rng[key]
            print(f"  {what:<38} {med[key]:7.2f} s  ({lo:.2f}-{hi:.2f})")


if __name__ == "__main__":
    main()
