#!/usr/bin/env python3
"""kill -9 at many points of a run, then --resume: nothing lost, nothing repeated (a
reliability check, not a test; crates/gauntlet/tests/store.rs kills at one point in CI).

Runs a 30-case suite with k = 2 (60 trials, two at a time) against a slow OpenAI-compatible
server on 127.0.0.1 (40 ms per answer, so the run takes about 1.2 s), kills gauntlet with
SIGKILL after a delay, checks the store (`gauntlet runs check`), resumes the run, and checks:

- every case has exactly trials 0 and 1, and the run finished PASS;
- the resume sent exactly the trials the store did not hold (none stored was sent again);
- every trial the server answered before the kill is either stored or sent again (none lost).

Usage (from the repository root, after `cargo build`):

    python3 bench/kill9.py [--points 40] [--bin PATH]

The delays are spread evenly from 20 ms (gauntlet still starting) to 1.4 s (past the end of a
fast run), so some kills land before the store exists and some after the run finished.
Nothing here talks to anything but 127.0.0.1.
"""

import argparse
import http.server
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "debug", "gauntlet")
CASES, K = 30, 2


class Slow(http.server.BaseHTTPRequestHandler):
    count = 0
    lock = threading.Lock()

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        # Counted on arrival: a request in flight when gauntlet is killed was sent before.
        with Slow.lock:
            Slow.count += 1
        time.sleep(0.04)
        body = json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "hello"},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1},
            }
        ).encode()
        try:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # gauntlet was killed while this answer was on its way

    def log_message(self, *args):
        pass


def stored(db):
    """{case: [trials]} of the one run in the store, and whether it finished."""
    if not os.path.exists(db):
        return None, {}, False
    c = sqlite3.connect(db)
    try:
        try:
            row = c.execute("SELECT run_id, status FROM runs").fetchone()
        except sqlite3.OperationalError:
            return None, {}, False  # killed while the store was being created
        if row is None:
            return None, {}, False
        # Finished cases hold their trials; the trials of cases in progress have a table.
        trials = {}
        for case, data in c.execute("SELECT case_id, data FROM cases WHERE run_id = ?", (row[0],)):
            trials[case] = sorted(t["trial"] for t in json.loads(data)["trials"])
        for case, trial in c.execute(
            "SELECT case_id, trial FROM trials WHERE run_id = ? ORDER BY case_id, trial", (row[0],)
        ):
            if trial not in trials.setdefault(case, []):
                trials[case].append(trial)
        return row[0], {k: sorted(v) for k, v in trials.items()}, row[1] is not None
    finally:
        c.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=40)
    ap.add_argument("--bin", default=BIN)
    a = ap.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    suite = f"suite: long\ntarget: {{kind: openai, model: m, base_url: 'http://127.0.0.1:{port}/v1'}}\ncases:\n"
    for i in range(CASES):
        suite += f"  - id: c{i:02}\n    input: q{i}\n    expect: [{{contains: hello}}]\n"
    total = CASES * K
    results = {"killed_mid_run": 0, "before_store": 0, "after_finish": 0, "failures": []}
    for p in range(a.points):
        delay = 0.02 + (1.4 - 0.02) * p / max(1, a.points - 1)
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "s.yaml"), "w") as f:
                f.write(suite)
            env = dict(os.environ, NO_COLOR="1")
            Slow.count = 0
            child = subprocess.Popen(
                [a.bin, "run", "s.yaml", "--k", str(K), "-j", "2", "-q", "--no-reports"],
                cwd=d,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(delay)
            child.send_signal(signal.SIGKILL)
            child.wait()
            # A request gauntlet wrote just before it died may reach a server thread a little
            # later: let it arrive, so that it counts as sent before the kill.
            time.sleep(0.3)
            sent_before = Slow.count
            db = os.path.join(d, ".gauntlet", "runs.db")
            run_id, before, finished = stored(db)
            n_before = sum(len(t) for t in before.values())
            problems = []
            if run_id is None:
                results["before_store"] += 1
                continue
            if finished:
                results["after_finish"] += 1
                continue
            results["killed_mid_run"] += 1
            check = subprocess.run([a.bin, "runs", "check"], cwd=d, env=env, capture_output=True, text=True)
            if check.returncode != 0:
                problems.append(f"runs check: {check.stdout}{check.stderr}")
            if sent_before < n_before:
                problems.append(f"{n_before} trials stored but only {sent_before} sent")
            resumed = subprocess.run(
                [a.bin, "run", "--resume", run_id, "-q", "--no-reports"],
                cwd=d,
                env=env,
                capture_output=True,
                text=True,
            )
            if resumed.returncode != 0:
                problems.append(f"resume exited {resumed.returncode}: {resumed.stdout}{resumed.stderr}")
            _, after, finished = stored(db)
            if not finished:
                problems.append("the resumed run did not finish")
            if len(after) != CASES or any(t != list(range(K)) for t in after.values()):
                problems.append(f"trials after resume: {after}")
            sent_on_resume = Slow.count - sent_before
            if sent_on_resume != total - n_before:
                problems.append(
                    f"resume sent {sent_on_resume} trials, the store lacked {total - n_before}"
                )
            if problems:
                results["failures"].append({"delay_s": round(delay, 3), "problems": problems})
            print(
                f"kill at {delay:.3f} s: {n_before}/{total} trials stored, {sent_before} sent; "
                f"resume sent {sent_on_resume}: {'ok' if not problems else 'FAILED'}",
                flush=True,
            )
    server.shutdown()
    print(json.dumps(results, indent=2))
    sys.exit(1 if results["failures"] else 0)


if __name__ == "__main__":
    main()
