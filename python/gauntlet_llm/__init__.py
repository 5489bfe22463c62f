"""gauntlet from Python: the SDK shipped in the `gauntlet-llm` wheel beside the binary.

- `agent` (in `gauntlet_llm.agent`) turns a function `(messages, tools) -> answer or tool
  calls` into an agent speaking the exec protocol, version 1 (docs/exec-protocol.md).
- `run` (in `gauntlet_llm.runner`) runs `gauntlet run` with the binary of this wheel and
  returns a `RunResult` (in `gauntlet_llm.results`) read from report.json; `list_cases` the
  cases such a run would run, without running them.
- The pytest plugin (`gauntlet_llm.pytest_plugin`, registered under the `pytest11` entry
  point) turns each case of a suite into a pytest item with its verdict.

The import name is `gauntlet_llm`, the distribution's name, and not `gauntlet`: the
unrelated `gauntlet` project on PyPI owns that one, and the command `gauntlet` is the
binary, not a Python module. Standard library only.
"""

from .agent import Agent, AgentError, Reply, Session, ToolCall, agent, anthropic_tools, openai_tools
from .results import Case, RunResult, Summary, Trial, Verdict, load_report
from .runner import GauntletError, find_binary, list_cases, run

__all__ = [
    "Agent", "AgentError", "Case", "GauntletError", "Reply", "RunResult", "Session",
    "Summary", "ToolCall", "Trial", "Verdict", "agent", "anthropic_tools", "find_binary",
    "list_cases", "load_report", "openai_tools", "run",
]
