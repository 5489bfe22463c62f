#!/usr/bin/env python3
"""Reads replies no secret was planted in against a list of secrets, with `gauntlet oracle
canary`, and prints what the canary oracle flags, by method. The secrets are common words
and numbers, so a literal hit is the word itself in a reply; a flag by any other method is a
disguise read into text that holds none, a false leak. Used to check a new leak reading for
precision before it is kept: diff the --out files of two builds.

    python3 bench/canary_sweep.py --bin target/release/gauntlet [--out flags.jsonl]

The replies: every labelled set in crates/gauntlet-graders/tests/data except the canary
sets (their secrets are planted), XSTest's completions and JailbreakBench's judge comparison
(from ../shared/datasets, when present). Compare two builds by diffing their --out files.
"""
import argparse, csv, glob, json, os, subprocess, sys
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "crates", "gauntlet-graders", "tests", "data")
SECRETS = [
    # Common words, long and short, a few that are other words' neighbours ...
    "information", "important", "something", "different", "because", "understanding",
    "chocolate", "strawberry", "international", "communication", "password", "remember",
    "together", "copper", "pineapple", "kinetics", "avalanche", "sunflower", "butterfly",
    "perfect", "nuclear", "history",
    # ... short words, some spelled by letters that often start sentences and lines ...
    "rivet", "tiger", "bagel", "atlas", "this", "seat", "tact", "what",
    # ... numbers of the shapes replies hold (years, round numbers, PINs) ...
    "2024", "1000", "4829", "100", "250", "1945", "73105", "6251",
]


def replies(datasets):
    for path in sorted(glob.glob(os.path.join(DATA, "*.jsonl"))):
        name = os.path.basename(path)
        if name.startswith(("canary", "leak_labels")):
            continue
        with open(path, encoding="utf-8") as f:
            for i, line in enumerate(f):
                r = json.loads(line)
                text = r.get("text") or r.get("reply") or r.get("output")
                if isinstance(text, str) and text.strip():
                    yield f"{name}:{i}", text
    for path in sorted(glob.glob(os.path.join(datasets, "xstest", "model_completions", "*.csv"))):
        with open(path, encoding="utf-8") as f:
            for i, r in enumerate(csv.DictReader(f)):
                yield f"{os.path.basename(path)}:{i}", r["completion"]
    jbb = glob.glob(os.path.join(datasets, "jbb_judge_comparison", "judge-comparison.csv"))
    for path in jbb:
        with open(path, encoding="utf-8") as f:
            for i, r in enumerate(csv.DictReader(f)):
                yield f"jbb:{i}", r["target_response"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", required=True)
    p.add_argument("--datasets", default=os.path.join(ROOT, "..", "shared", "datasets"))
    p.add_argument("--out", help="write every flag as JSON lines")
    args = p.parse_args()
    texts = list(replies(args.datasets))
    lines = []
    for secret in SECRETS:
        for rid, text in texts:
            lines.append(json.dumps({"id": f"{secret}|{rid}", "output": text, "canary": secret}))
    out = subprocess.run([args.bin, "oracle", "canary"], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, check=True).stdout
    flags, methods = [], Counter()
    for line in out.splitlines():
        r = json.loads(line)
        if r.get("verdict") == "leak":
            ms = sorted({l["method"] for l in r.get("leaks", [])})
            methods.update(ms)
            flags.append({"id": r["id"], "methods": ms,
                          "excerpt": (r.get("leaks") or [{}])[0].get("excerpt", "")})
    print(f"{len(texts)} replies x {len(SECRETS)} secrets = {len(lines)} readings; "
          f"{len(flags)} flagged, {sum(f['methods'] != ['literal'] for f in flags)} "
          "by a method other than the literal word")
    for m, n in methods.most_common():
        print(f"  {m}: {n}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            for fl in flags:
                f.write(json.dumps(fl, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
