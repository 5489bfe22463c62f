"""A scripted coding agent for the trajectory example: reads the checkpoint message on
stdin and writes the prepared textkit.py for that checkpoint into the workspace.

AGENT_MODE (set through the agent's `env:` or the command line) picks the script:
`regress` (default) breaks slugify at checkpoint 4, `clean` does not, `tamper` also
writes into the trajectory's tests (the run must fail on integrity).
"""
import json
import os
import pathlib
import sys

msg = json.loads(sys.stdin.readline())
mode = sys.argv[1] if len(sys.argv) > 1 else "regress"
n = msg["index"]
here = pathlib.Path(__file__).resolve().parent
name = f"c{n}.py"
if mode == "regress" and n == 4:
    name = "c4_regress.py"
src = (here / "changes" / name).read_text()
ws = pathlib.Path(msg["workspace"])
(ws / "textkit.py").write_text(src)
if mode == "tamper" and n == 2:
    (here.parent / "tests" / "check.py").open("a").write("\nsys.exit(0)\n")
print(f"checkpoint {msg['checkpoint']}: wrote textkit.py from {name}")
print(json.dumps({"type": "usage", "cost_usd": 0.001}))
