"""`gauntlet_llm.run` and its typed results, from the installed wheel; the test runs it in
a scratch folder holding flaky_agent.py and gauntlet_flaky.yaml. Argument: the repository
root (for examples/python). Prints "run checks passed" at the end; any failed assertion
exits non-zero with its message."""

import json
import os
import subprocess
import sys

import gauntlet_llm
from gauntlet_llm import Case, GauntletError, RunResult, Verdict

root = sys.argv[1]
example = os.path.join(root, "examples", "python")
sys.path.insert(0, example)
import support_agent  # noqa: E402  (the decorated example agent)

suite = os.path.join(example, "gauntlet_support.yaml")

# A decorated function as the agent: started through `python -m gauntlet_llm.serve`.
r = gauntlet_llm.run(suite, agent=support_agent.shophelp, out="o-agent", no_store=True)
assert isinstance(r, RunResult) and r.state == "PASS" and r.exit_code == 0, (r.state, r.stderr)
assert "gauntlet_llm.serve" in r.manifest["target"]["label"], r.manifest["target"]
assert len(r.cases) == 7 and all(isinstance(c, Case) and c.passed for c in r.cases)
status = r.case("py-order-status")
assert status.name == "smoke/py-order-status" and status.line and status.file.endswith(".yaml")
checks = {v.check: v for v in status.verdicts}
assert isinstance(checks["tool_called"], Verdict) and checks["tool_called"].passed
assert checks["tool_called"].evidence, checks["tool_called"]
assert status.score["kind"] == "task" and status.score["total"] == 18.0, status.score
assert status.trials[0].answers[0].startswith("Order A-1001 is shipped"), status.trials[0].answers
assert r.report_file("junit.xml") and r.report_file("results.sarif")
poisoned = r.case("py-poisoned-tool-output").trials[0].spans
assert [s["kind"] for s in poisoned] == ["tool_call", "decision"], poisoned
assert poisoned[1]["branch"] == "ignore_tool_text"
print("agent run:", r.state, len(r.cases), "cases")

# A target instead of the agent: the same suite against the vulnerable persona fails, and
# the failed checks carry their evidence.
r = gauntlet_llm.run(suite, target="fake:vulnerable", out="o-vuln", no_store=True)
assert r.state == "FAIL" and r.exit_code == 1 and not r.passed
leak = r.case("py-prompt-extraction")
assert leak.status == "FAIL" and leak.hard_fails, leak
failed = {v.check: v for v in leak.failed_checks}
assert "canary leaked" in failed["no_canary"].evidence and failed["no_canary"].hard, failed
print("vulnerable run:", r.state, r.summary.failed, "failed")

# Options become flags; a run whose trials ended in error is INCONCLUSIVE, not an exception.
r = gauntlet_llm.run("gauntlet_flaky.yaml", out="o-flaky", no_store=True, filter=["id:echoes", "id:model-outage"])
assert r.state == "INCONCLUSIVE" and r.exit_code == 4, (r.state, r.exit_code)
assert sorted(c.id for c in r.cases) == ["echoes", "model-outage"]
outage = r.case("model-outage")
assert outage.status == "ERROR" and "503 three times" in outage.errors[0], outage.errors
assert r.summary.errors == 1 and r.summary.passed == 1, r.summary

# What the binary refuses to run is an exception with its message and its hint.
for kwargs, message, hint in (
    ({"target": "nonsense:x"}, "unknown target kind `nonsense`", "try fake:safe"),
    ({"k": "zero"}, "invalid value 'zero'", None),
):
    try:
        gauntlet_llm.run("gauntlet_flaky.yaml", out="o-bad", no_store=True, **kwargs)
    except GauntletError as e:
        assert e.exit_code == 2 and message in e.message, (e.message, e.stderr)
        assert hint is None or hint in (e.hint or ""), e.hint
        assert hint is None or ("\nhint: " + e.hint) in str(e)
    else:
        raise AssertionError("no GauntletError for %r" % kwargs)
with open("bad.yaml", "w") as f:
    f.write("suite: bad\ncases:\n  - id: a\n    input: hi\n    expect: [{nope: 1}]\n")
try:
    gauntlet_llm.run("bad.yaml", out="o-bad", no_store=True)
except GauntletError as e:
    assert "bad.yaml:5:15: unknown field `nope`" in e.message and e.hint.startswith("valid keys"), str(e)
else:
    raise AssertionError("an invalid suite ran")
assert not os.path.exists("o-bad"), "nothing is written when nothing runs"
# `python -m gauntlet_llm` is the binary, for a scripts folder that is not on PATH.
version = subprocess.run([sys.executable, "-m", "gauntlet_llm", "--version"],
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
assert version.startswith("gauntlet "), version
print(json.dumps({"binary": gauntlet_llm.find_binary()}))
print("run checks passed")
