"""`RunResult`: a run's report.json (docs/report-format.md) as dataclasses: the run's state,
its `Summary`, and each `Case` with its `Trial`s and their `Verdict`s (check, passed,
evidence).

report.json leaves out what repeats another field (a one-trial case's score, a case's name
when it is its id, a verdict's label when it is its check); `load_report` writes those back,
so every field here is filled whichever way the file spelled it. `raw` keeps the parsed JSON
of each part for the fields not lifted into attributes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

# gauntlet's exit codes by state (README "Exit codes").
EXIT_CODES = {"PASS": 0, "FAIL": 1, "CONDITIONAL": 3, "INCONCLUSIVE": 4}


@dataclass
class Verdict:
    """One check's verdict on one trial."""

    check: str
    label: str
    passed: bool
    evidence: str = ""
    score: Optional[float] = None
    dimension: Optional[str] = None
    hard: bool = False
    gating: bool = True
    assessed: bool = True
    role: Optional[str] = None
    details: Any = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, v: Dict[str, Any]) -> "Verdict":
        return cls(check=v.get("check", ""), label=v.get("label") or v.get("check", ""),
                   passed=bool(v.get("passed")), evidence=v.get("evidence") or "",
                   score=v.get("score"), dimension=v.get("dimension"),
                   hard=bool(v.get("hard_fail")), gating=v.get("gating", True) is not False,
                   assessed=v.get("assessed", True) is not False, role=v.get("role"),
                   details=v.get("details"), raw=v)


@dataclass
class Trial:
    """One trial of a case: how it ended (`outcome`), its status and verdicts."""

    index: int
    outcome: str
    status: str
    verdicts: List[Verdict]
    score: Optional[Dict[str, Any]] = None
    error: Optional[str] = None
    duration_ms: Optional[int] = None
    trace: Dict[str, Any] = field(default_factory=dict, repr=False)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, t: Dict[str, Any]) -> "Trial":
        return cls(index=t.get("trial", 0), outcome=t.get("outcome", ""),
                   status=t.get("status", ""),
                   verdicts=[Verdict.from_json(v) for v in t.get("verdicts") or []],
                   score=t.get("score"), error=t.get("error"), duration_ms=t.get("duration_ms"),
                   trace=t.get("trace") or {}, raw=t)

    @property
    def spans(self) -> List[Dict[str, Any]]:
        return self.trace.get("spans") or []

    @property
    def answers(self) -> List[str]:
        """The answer of each user turn (from `turns`, or derived from the model calls as
        docs/report-format.md says when they are left out)."""
        if "turns" in self.trace:
            return [t.get("answer") or "" for t in self.trace["turns"]]
        answers: List[str] = []
        for s in self.spans:
            if s.get("kind") != "llm_call" or s.get("parent") or s.get("agent"):
                continue
            last = (s.get("messages_in") or [{}])[-1]
            out = (s.get("message_out") or {}).get("content") or ""
            if last.get("role") == "user" or not answers:
                answers.append(out)
            else:
                answers[-1] = out
        return answers


@dataclass
class Case:
    """One case's result: its identity, status (PASS, FAIL, CONDITIONAL, ERROR, BLOCKED,
    SKIPPED, NOT_ASSESSED) and trials."""

    id: str
    suite: str
    name: str
    kind: str
    status: str
    trials: List[Trial]
    score: Optional[Dict[str, Any]] = None
    passed_trials: int = 0
    hard_fails: List[str] = field(default_factory=list)
    pack: Optional[str] = None
    owasp: Optional[str] = None
    technique: Optional[str] = None
    description: Optional[str] = None
    security: bool = False
    file: Optional[str] = None
    line: Optional[int] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, c: Dict[str, Any]) -> "Case":
        meta = c.get("case") or {}
        trials = [Trial.from_json(t) for t in c.get("trials") or []]
        score = c.get("score")
        if score is None and len(trials) == 1:
            score = trials[0].score
        source = meta.get("source") or {}
        return cls(id=meta.get("id", ""), suite=meta.get("suite", ""),
                   name=meta.get("name") or meta.get("id", ""), kind=meta.get("kind", "task"),
                   status=c.get("status", ""), trials=trials, score=score,
                   passed_trials=c.get("passed_trials", 0), hard_fails=c.get("hard_fails") or [],
                   pack=meta.get("pack"), owasp=meta.get("owasp"), technique=meta.get("technique"),
                   description=meta.get("description"), security=bool(meta.get("security")),
                   file=source.get("file"), line=source.get("line"), raw=c)

    @property
    def passed(self) -> bool:
        return self.status == "PASS"

    @property
    def verdicts(self) -> List[Verdict]:
        return [v for t in self.trials for v in t.verdicts]

    @property
    def failed_checks(self) -> List[Verdict]:
        """The verdicts that failed (and could decide), over all trials."""
        return [v for v in self.verdicts if not v.passed and v.assessed]

    @property
    def errors(self) -> List[str]:
        """What ended a trial in error, timeout or a block."""
        return ["trial %d %s: %s" % (t.index, t.outcome, t.error) for t in self.trials if t.error]


@dataclass
class Summary:
    """The run's state and the counts it was decided from."""

    status: str
    reasons: List[str]
    cases: int = 0
    passed: int = 0
    failed: int = 0
    conditional: int = 0
    errors: int = 0
    blocked: int = 0
    not_assessed: int = 0
    hard_fails: int = 0
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, s: Dict[str, Any]) -> "Summary":
        return cls(status=s.get("status", ""), reasons=s.get("reasons") or [],
                   cases=s.get("cases", 0), passed=s.get("passed", 0), failed=s.get("failed", 0),
                   conditional=s.get("conditional", 0), errors=s.get("errors", 0),
                   blocked=s.get("blocked", 0), not_assessed=s.get("not_assessed", 0),
                   hard_fails=s.get("hard_fails", 0), raw=s)


@dataclass
class RunResult:
    """A finished run: `state` (PASS, FAIL, CONDITIONAL, INCONCLUSIVE), the exit code
    gauntlet gave, the summary, the cases, and where the reports are."""

    state: str
    exit_code: int
    run_id: str
    summary: Summary
    cases: List[Case]
    warnings: List[str]
    manifest: Dict[str, Any]
    out_dir: Optional[str] = None
    stdout: str = field(default="", repr=False)
    stderr: str = field(default="", repr=False)

    @property
    def passed(self) -> bool:
        return self.state == "PASS"

    def case(self, case_id: str) -> Case:
        for c in self.cases:
            if c.id == case_id:
                return c
        raise KeyError("no case %r in run %s" % (case_id, self.run_id))

    def report_file(self, name: str = "report.json") -> Optional[str]:
        """The path of one of the run's reports (report.json, junit.xml, summary.md,
        report.html, results.sarif), when it was written."""
        if self.out_dir is None:
            return None
        path = os.path.join(self.out_dir, name)
        return path if os.path.exists(path) else None


def parse_report(doc: Dict[str, Any], out_dir: Optional[str] = None) -> RunResult:
    """A report.json document, parsed."""
    if doc.get("kind") != "gauntlet.report":
        raise ValueError("not a gauntlet report (kind %r)" % doc.get("kind"))
    summary = Summary.from_json(doc.get("summary") or {})
    manifest = doc.get("manifest") or {}
    return RunResult(state=summary.status, exit_code=EXIT_CODES.get(summary.status, 4),
                     run_id=manifest.get("run_id", ""), summary=summary,
                     cases=[Case.from_json(c) for c in doc.get("cases") or []],
                     warnings=doc.get("warnings") or [], manifest=manifest, out_dir=out_dir)


def load_report(path: str) -> RunResult:
    """report.json (or the folder holding it), parsed."""
    if os.path.isdir(path):
        path = os.path.join(path, "report.json")
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    return parse_report(doc, out_dir=os.path.dirname(os.path.abspath(path)))
