"""The pytest plugin (entry point `pytest11`, name `gauntlet`): each case of a gauntlet
suite becomes a pytest item whose outcome is the case's verdict.

Which files are suites: a YAML file named on the command line (`pytest suite.yaml`) or with
`--gauntlet-suite PATH` (or the ini option `gauntlet_suites`), and any `gauntlet_*.yaml` /
`gauntlet_*.yml` pytest finds in the folders it collects that has a top-level `suite:` key.

Collecting a suite runs nothing: its cases are listed (`gauntlet run SUITE --list`), each an
item, so `pytest --collect-only` calls no model. The suite runs once, when the first of its
selected items runs (`gauntlet run SUITE --out DIR`), and only the selected cases run
(`-k`, node ids: `--filter id:...`; a case runs with its benign twin and in every column of
a matrix, whichever of them was selected). Each item's outcome is its case's status:

| case status | pytest outcome |
|---|---|
| PASS | passed |
| FAIL, CONDITIONAL | failed: the failed checks and their evidence are the message |
| ERROR, BLOCKED, NOT_ASSESSED, SKIPPED | skipped, with the status and why (no evidence either way: never passed) |

A suite gauntlet refuses to run (exit 2: an invalid suite, a bad flag) is a collection error
with gauntlet's message and hint. pytest's exit status is its own when tests failed,
otherwise gauntlet's worst (FAIL 1, usage 2, INCONCLUSIVE 4, CONDITIONAL 3): a run that is
INCONCLUSIVE never exits 0.

Options: `--gauntlet-target SPEC` (gauntlet's `--target`), `--gauntlet-out DIR` (default
`gauntlet-out`; each suite's reports go to `DIR/<suite path from the current folder, / as
->`), `--gauntlet-arg ARG` (repeatable, passed to `gauntlet run` as is, e.g.
`--gauntlet-arg=--no-store`), and the ini options `gauntlet_suites`, `gauntlet_target`, `gauntlet_out`, `gauntlet_args`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from .results import Case, RunResult
from .runner import GauntletError, list_cases, run

# The order in which gauntlet's exit codes win (README "Exit codes"): FAIL, usage error,
# INCONCLUSIVE, CONDITIONAL, PASS.
_PRECEDENCE = {1: 4, 2: 3, 4: 2, 3: 1, 0: 0}
_INCONCLUSIVE = ("ERROR", "BLOCKED", "NOT_ASSESSED", "SKIPPED")


def pytest_addoption(parser):
    group = parser.getgroup("gauntlet", "gauntlet suites as tests")
    group.addoption("--gauntlet-suite", action="append", default=[], metavar="PATH",
                    help="a gauntlet suite file to run as tests (repeatable)")
    group.addoption("--gauntlet-target", metavar="SPEC",
                    help="the target the suites run against (gauntlet run --target)")
    group.addoption("--gauntlet-out", metavar="DIR",
                    help="folder for gauntlet's reports (default: gauntlet-out)")
    group.addoption("--gauntlet-arg", action="append", default=[], metavar="ARG",
                    help="an argument passed to gauntlet run as is (repeatable)")
    parser.addini("gauntlet_suites", "gauntlet suite files to run as tests", type="args", default=[])
    parser.addini("gauntlet_target", "the target the suites run against", default="")
    parser.addini("gauntlet_out", "folder for gauntlet's reports", default="")
    parser.addini("gauntlet_args", "arguments passed to gauntlet run", type="args", default=[])


class _State:
    """What the plugin knows across the session: the suites asked for and each run."""

    def __init__(self, config):
        self.config = config
        base = Path(str(config.invocation_params.dir))
        self.base = base
        ini_base = Path(str(config.rootpath))
        named = [base / p for p in config.getoption("gauntlet_suite")]
        named += [ini_base / p for p in config.getini("gauntlet_suites")]
        self.named = [p.resolve() for p in named]
        explicit = [base / str(a).split("::")[0] for a in config.args]
        self.explicit = {p.resolve() for p in explicit} | set(self.named)
        self.target = config.getoption("gauntlet_target") or config.getini("gauntlet_target") or None
        self.out = Path(config.getoption("gauntlet_out") or config.getini("gauntlet_out")
                        or "gauntlet-out")
        self.args = list(config.getini("gauntlet_args")) + list(config.getoption("gauntlet_arg"))
        self.runs: Dict[Path, RunResult] = {}
        self.failed: Dict[Path, GauntletError] = {}
        self.selected: Dict[Path, List[str]] = {}
        self.listed: Dict[Path, List[str]] = {}
        self.codes: List[int] = []

    def out_dir(self, suite: Path) -> Path:
        """`OUT/<the suite's path from the folder pytest runs in, / as ->`: the same name
        whatever pytest takes for its rootdir (which its arguments and ini files move)."""
        try:
            rel = suite.relative_to(self.base.resolve())
        except ValueError:
            rel = Path(*suite.parts[1:])  # outside it: the absolute path, without its root
        name = "-".join(rel.with_suffix("").parts) or "suite"
        return self.out / name

    def list_suite(self, suite: Path) -> List[Case]:
        try:
            cases = list_cases(str(suite), target=self.target, cwd=str(self.base), args=self.args)
        except GauntletError as e:
            self.codes.append(e.exit_code if e.exit_code in _PRECEDENCE else 2)
            raise
        self.listed[suite] = [c.id for c in cases]
        return cases

    def run_suite(self, suite: Path) -> RunResult:
        """The suite's run, made the first time one of its items asks: of the selected
        cases only, when the selection can be said as filters."""
        if suite in self.failed:
            raise self.failed[suite]
        if suite in self.runs:
            return self.runs[suite]
        args = self.args + _filters(self.selected.get(suite, []), self.listed.get(suite, []))
        try:
            result = run(str(suite), target=self.target, out=str(self.out_dir(suite)),
                         cwd=str(self.base), args=args)
        except GauntletError as e:
            self.codes.append(e.exit_code if e.exit_code in _PRECEDENCE else 2)
            self.failed[suite] = e
            raise
        self.codes.append(result.exit_code)
        self.runs[suite] = result
        return result


def _filters(selected: List[str], listed: List[str]) -> List[str]:
    """`--filter id:ID` for each selected case, by the id the filter reads (a benign twin
    and a matrix column run with their case); none when every case is selected, or when an
    id holds a character a filter reads as a pattern (then the whole suite runs)."""
    if not selected or set(selected) >= set(listed):
        return []
    ids = sorted({_case_of(i) for i in selected})
    if any(ch in i for i in ids for ch in "*?|"):
        return []
    return [a for i in ids for a in ("--filter", "id:" + i)]


def _case_of(case_id: str) -> str:
    """The id a filter reads: a matrix column's and a benign twin's are their case's."""
    base = case_id.split(" @ ")[0]
    return base[:-len("~benign")] if base.endswith("~benign") else base


def pytest_collection_finish(session):
    """Records which cases of each suite pytest kept (after `-k`, `-m` and node ids)."""
    state = getattr(session.config, "_gauntlet", None)
    if state is None:
        return
    for item in session.items:
        if isinstance(item, CaseItem):
            state.selected.setdefault(item.suite, []).append(item.case.id)


def pytest_configure(config):
    state = _State(config)
    config._gauntlet = state
    known = {Path(str(config.invocation_params.dir), str(a).split("::")[0]).resolve()
             for a in config.args}
    for p in state.named:
        if p not in known:
            config.args.append(str(p))


def _looks_like_suite(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = f.read(65536)
    except OSError:
        return False
    return re.search(r"^suite\s*:", head, re.M) is not None


def pytest_collect_file(file_path, parent):
    if file_path.suffix not in (".yaml", ".yml"):
        return None
    state = getattr(parent.config, "_gauntlet", None)
    if state is None:
        return None
    resolved = file_path.resolve()
    if resolved in state.explicit or (file_path.name.startswith("gauntlet_")
                                      and _looks_like_suite(file_path)):
        return SuiteFile.from_parent(parent, path=file_path)
    return None


class SuiteFile(pytest.File):
    """A gauntlet suite: collecting it lists its cases (running nothing); they are the items."""

    def collect(self):
        state = self.config._gauntlet
        suite = self.path.resolve()
        try:
            cases = state.list_suite(suite)
        except GauntletError as e:
            raise self.CollectError("gauntlet could not run %s: %s" % (self.path, e)) from None
        for case in sorted(cases, key=lambda c: (c.file or "", c.line or 0, c.id)):
            yield CaseItem.from_parent(self, name=case.id, case=case, suite=suite)


class CaseFailed(Exception):
    """A case that FAILed or is CONDITIONAL; the message is the failure report."""


class CaseItem(pytest.Item):
    """One case of a suite; running it reads the case's result from the suite's run."""

    def __init__(self, *, case: Case, suite: Path, **kwargs):
        super().__init__(**kwargs)
        self.case = case
        self.suite = suite
        for key in ("pack", "owasp", "technique"):
            value = getattr(case, key)
            if value:
                self.user_properties.append(("gauntlet_" + key, value))

    def runtest(self):
        try:
            result = self.config._gauntlet.run_suite(self.suite)
        except GauntletError as e:
            raise CaseFailed("gauntlet could not run %s: %s" % (_shown(str(self.suite)), e)) from None
        found = [c for c in result.cases if c.id == self.case.id]
        if not found:
            raise CaseFailed("%s was listed but the run has no result for it (reports in %s)" % (
                self.case.id, _shown(result.out_dir or "")))
        case = found[0]
        self.user_properties.append(("gauntlet_status", case.status))
        if case.status == "PASS":
            return
        if case.status in _INCONCLUSIVE:
            reason = _mask_canary(_skip_reason(case), result)
            try:
                # Reported at the case's line in the suite, not at this line of the plugin.
                skip = pytest.skip.Exception(reason, _use_item_location=True)
            except TypeError:  # a pytest without the option (before 7.0)
                skip = pytest.skip.Exception(reason)
            raise skip
        raise CaseFailed(failure_message(case, result))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        line = self.case.line - 1 if self.case.line else None
        return self.path, line, "gauntlet case %s" % self.case.id


def _cut(text: str, limit: int = 400) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _score(case: Case) -> str:
    s = case.score or {}
    if s.get("kind") == "task" and s.get("total") is not None:
        return "task score %.1f/18 over %s dimension(s)" % (s["total"], s.get("assessed", "?"))
    if s.get("kind") == "refusal" and s.get("score") is not None:
        return "refusal score %g/3" % s["score"]
    return ""


def _skip_reason(case: Case) -> str:
    why = "; ".join(case.errors) or "; ".join(
        "%s could not decide: %s" % (v.label, v.evidence) for v in case.verdicts if not v.assessed)
    return _cut("%s (no evidence either way, the run cannot PASS): %s" % (
        case.status, why or "no trial gave a verdict"), 600)


def failure_message(case: Case, result: RunResult) -> str:
    """The failure report of a FAIL or CONDITIONAL case: each failed check with its
    evidence, per trial, then the hard failures and where the reports are."""
    head = "%s %s" % (case.status, case.name)
    facts = [f for f in (case.kind + " case", case.owasp, case.technique, _score(case)) if f]
    lines = [head + " (" + ", ".join(facts) + ")"]
    if case.description:
        lines.append("  " + _cut(case.description, 200))
    for t in case.trials:
        lines.append("  trial %d: %s (%s)" % (t.index, t.status, t.outcome))
        for v in t.verdicts:
            if v.passed or not v.assessed:
                continue
            marks = [m for m in ("hard" if v.hard else "", "" if v.gating else "triage") if m]
            mark = " [%s]" % ", ".join(marks) if marks else ""
            lines.append("    failed check %s%s: %s" % (v.label, mark, _cut(v.evidence)))
        if t.error:
            lines.append("    error: %s" % _cut(t.error))
    if result.out_dir:
        lines.append("  reports: %s" % _shown(os.path.join(result.out_dir, "report.json")))
    return _mask_canary("\n".join(lines), result)


def _shown(path: str) -> str:
    """A path relative to the folder pytest runs in, when it is under it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _mask_canary(text: str, result: RunResult) -> str:
    """The run's canaries masked as gauntlet masks them in junit.xml and summary.md (their
    first characters and their length): a pytest failure lands in CI logs and test pages
    too. Every secret the manifest records is masked: the run's, each suite's, and those
    single cases name (a case's `canary:`, a `no_canary: SECRET` check). A disclosure in
    disguise (spelled out, encoded) is masked in gauntlet's own files only."""
    manifest = result.manifest or {}
    secrets = [(manifest.get("invocation") or {}).get("canary")]
    for suite in manifest.get("suites") or []:
        secrets.append(suite.get("canary"))
        for named in (suite.get("case_canaries") or {}).values():
            secrets.extend(named if isinstance(named, list) else [named])
    # Longest first, so that a secret holding another is masked whole.
    for canary in sorted({s for s in secrets if isinstance(s, str) and len(s) >= 4},
                         key=len, reverse=True):
        head = canary[:min(len(canary) // 4, 4)]
        text = text.replace(canary, "[REDACTED:canary %s…(%d chars)]" % (head, len(canary)))
    return text


def _worst(codes: List[int]) -> Optional[int]:
    return max(codes, key=lambda c: _PRECEDENCE.get(c, 3)) if codes else None


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    state = getattr(session.config, "_gauntlet", None)
    worst = _worst(state.codes) if state else None
    if not worst:
        return
    # Tests that failed (1) or an interrupted session keep pytest's status; otherwise a
    # run that is not PASS must not exit 0 (or 5, "no tests").
    if int(exitstatus) in (0, 5):
        session.exitstatus = worst


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    state = getattr(config, "_gauntlet", None)
    if not state or not state.runs:
        return
    terminalreporter.section("gauntlet")
    for suite, result in state.runs.items():
        terminalreporter.write_line("%s: %s (gauntlet exit %d), %d case(s); reports in %s" % (
            _shown(str(suite)), result.state, result.exit_code, len(result.cases),
            _shown(result.out_dir or "")))
        for reason in result.summary.reasons[:3]:
            terminalreporter.write_line("  " + _cut(reason, 200))
