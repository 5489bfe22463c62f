"""`run`: `gauntlet run` from Python, with the binary this wheel installed, returning a
`RunResult` read from the report.json it wrote. `GauntletError` is what the binary said when
it ran nothing (exit 2: bad flags, an invalid suite), with its `error:` and `hint:` lines.

    result = gauntlet_llm.run("suite.yaml", agent=my_agent, k=3, filter="pack:smoke")
    result.state            # "PASS", "FAIL", "CONDITIONAL" or "INCONCLUSIVE"
    [c.id for c in result.cases if not c.passed]

Keyword options become flags: `k=3` is `--k 3`, `no_store=True` is `--no-store`, a list
repeats the flag (`filter=["pack:smoke", "pack:refusal"]`), False and None leave it out.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from .agent import Agent
from .results import Case, RunResult, load_report

PathLike = Union[str, "os.PathLike[str]"]


class GauntletError(Exception):
    """gauntlet could not run, or ran nothing: its message, its hint, its exit code and what
    it wrote on stderr."""

    def __init__(self, message: str, hint: Optional[str] = None, exit_code: Optional[int] = None,
                 stderr: str = ""):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.exit_code = exit_code
        self.stderr = stderr

    def __str__(self) -> str:
        return self.message + ("\nhint: " + self.hint if self.hint else "")

    @classmethod
    def from_output(cls, stderr: str, exit_code: int) -> "GauntletError":
        """Reads the binary's `error:` and `hint:` lines; suite diagnostics (several lines
        with file:line:column) are kept whole as the message."""
        lines = [l for l in stderr.splitlines() if l.strip()]
        hints = [l[len("hint: "):] for l in lines if l.startswith("hint: ")]
        rest = [l for l in lines if not l.startswith("hint: ")
                and not re.fullmatch(r"\d+ errors? found; nothing was run", l)]
        if len(rest) == 1 and rest[0].startswith("error: "):
            message = rest[0][len("error: "):]
        else:
            message = "\n".join(rest) or "gauntlet exited with status %d and said nothing" % exit_code
        return cls(message, hints[0] if hints else None, exit_code, stderr)


def find_binary() -> str:
    """The gauntlet executable: `GAUNTLET_BIN` when set, else the one pip installed beside
    this package (the environment's scripts folder, or the user scheme's), else `PATH`'s."""
    env = os.environ.get("GAUNTLET_BIN")
    if env:
        return env
    exe = "gauntlet.exe" if os.name == "nt" else "gauntlet"
    folders = [sysconfig.get_path("scripts")]
    try:
        folders.append(sysconfig.get_path("scripts", "%s_user" % os.name))
    except KeyError:
        pass
    for folder in folders:
        if folder and os.path.isfile(os.path.join(folder, exe)):
            return os.path.join(folder, exe)
    found = shutil.which("gauntlet")
    if found:
        return found
    raise GauntletError("the gauntlet binary was not found beside this package nor on PATH",
                        "pip install gauntlet-llm, or set GAUNTLET_BIN to the binary's path")


def option_args(options: Dict[str, Any]) -> List[str]:
    """Keyword options as command-line flags."""
    out: List[str] = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            out.append(flag)
        elif isinstance(value, (list, tuple)):
            for v in value:
                out += [flag, str(v)]
        else:
            out += [flag, str(value)]
    return out


def agent_target(agent: Union[Agent, PathLike]) -> str:
    """The `exec:` target that starts an agent: a decorated function (through
    `python -m gauntlet_llm.serve FILE --agent NAME`, so the file needs no `__main__`
    block) or a script, with this interpreter, so the agent sees the same packages."""
    if isinstance(agent, Agent):
        if not agent.file or not os.path.isfile(agent.file):
            raise GauntletError("the agent %r is not written in a file gauntlet can start" % agent.name,
                                "define the decorated function in a .py file")
        parts = [sys.executable, "-m", "gauntlet_llm.serve", agent.file, "--agent", agent.name]
    else:
        parts = [sys.executable, os.path.abspath(os.fspath(agent))]
    if any(not p or any(ch.isspace() for ch in p) for p in parts):
        raise GauntletError("an exec target's command is split on whitespace, and this one has "
                            "a path with a space: %s" % " ".join(parts),
                            "move the agent (or the virtual environment) to a path without "
                            "spaces, or declare the target in the suite's `target.exec.command`")
    return "exec:" + " ".join(parts)


def run(suite: Union[PathLike, Sequence[PathLike]], agent: Union[Agent, PathLike, None] = None,
        target: Optional[str] = None, *, out: PathLike = "gauntlet-out",
        cwd: Optional[PathLike] = None, binary: Optional[str] = None,
        env: Optional[Dict[str, str]] = None, args: Iterable[str] = (),
        timeout: Optional[float] = None, **options: Any) -> RunResult:
    """Runs `gauntlet run SUITE... --out OUT` and returns its results.

    `agent` (a decorated function or a script) or `target` (a `--target` spec such as
    `fake:safe` or `openai:gpt-4o-mini`) says what runs; neither keeps the suite's own
    target. `out` is relative to `cwd` (default: the current folder). A run that ends
    FAIL, CONDITIONAL or INCONCLUSIVE is a result, not an exception: read `state`.
    """
    base = os.fspath(cwd) if cwd is not None else os.getcwd()
    cmd = _command(suite, agent, target, binary, options, args) + ["--out", os.fspath(out)]
    out_dir = os.path.join(base, os.fspath(out))
    report = os.path.join(out_dir, "report.json")
    before = _stamp(report)
    proc = _invoke(cmd, base, env, timeout)
    if proc.returncode not in (0, 1, 3, 4):
        raise GauntletError.from_output(proc.stderr, proc.returncode)
    if before is not None and _stamp(report) == before or not os.path.isfile(report):
        raise GauntletError("gauntlet exited %d without writing %s" % (proc.returncode, report),
                            "run it by hand to see why: %s" % " ".join(cmd), proc.returncode,
                            proc.stderr)
    result = load_report(report)
    result.exit_code = proc.returncode
    result.stdout = proc.stdout
    result.stderr = proc.stderr
    return result


def list_cases(suite: Union[PathLike, Sequence[PathLike]], agent: Union[Agent, PathLike, None] = None,
               target: Optional[str] = None, *, cwd: Optional[PathLike] = None,
               binary: Optional[str] = None, env: Optional[Dict[str, str]] = None,
               args: Iterable[str] = (), timeout: Optional[float] = None,
               **options: Any) -> List[Case]:
    """The cases `run` would run with the same arguments (`gauntlet run --list`), in the
    order it would start them: their id, suite file and line, kind, pack and OWASP category,
    with no status (nothing runs, no target is called)."""
    base = os.fspath(cwd) if cwd is not None else os.getcwd()
    cmd = _command(suite, agent, target, binary, options, args) + ["--list"]
    proc = _invoke(cmd, base, env, timeout)
    if proc.returncode != 0:
        raise GauntletError.from_output(proc.stderr, proc.returncode)
    return [Case.from_json({"case": json.loads(line)})
            for line in proc.stdout.splitlines() if line.strip()]


def _command(suite, agent, target, binary, options, args) -> List[str]:
    """`gauntlet run SUITE... [--target T] [flags]`."""
    if agent is not None and target is not None:
        raise ValueError("pass agent= or target=, not both")
    if agent is not None:
        target = agent_target(agent)
    suites = [suite] if isinstance(suite, (str, os.PathLike)) else list(suite)
    cmd = [binary or find_binary(), "run"] + [os.fspath(s) for s in suites]
    if target:
        cmd += ["--target", target]
    return cmd + option_args(options) + list(args)


def _invoke(cmd: List[str], cwd: str, env: Optional[Dict[str, str]],
            timeout: Optional[float]) -> "subprocess.CompletedProcess[str]":
    full_env = dict(os.environ, NO_COLOR="1")
    # This interpreter's folder first on PATH: an exec agent declared as `python3 agent.py`
    # then runs with the packages this program sees (gauntlet_llm among them), activated
    # virtual environment or not.
    full_env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + full_env.get("PATH", "")
    full_env.update(env or {})
    try:
        return subprocess.run(cmd, cwd=cwd, env=full_env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True,
                              encoding="utf-8", errors="replace", timeout=timeout)
    except OSError as e:
        raise GauntletError("gauntlet could not be started: %s" % e,
                            "pip install gauntlet-llm, or pass binary=") from e


def _stamp(path: str) -> Optional[tuple]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)
