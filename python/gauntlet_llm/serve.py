"""`python -m gauntlet_llm.serve FILE [--agent NAME]`: serves a decorated function of FILE
as an exec agent, so the file needs no `if __name__ == "__main__"` block:

    gauntlet run suite.yaml --target "exec:python3 -m gauntlet_llm.serve agent.py"

FILE is loaded under another name than `__main__`, so its own main block does not run too.
Without `--agent`, the file must hold exactly one `Agent`.
"""

import argparse
import os
import runpy
import sys

from .agent import Agent


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m gauntlet_llm.serve",
                                description="Serve a @gauntlet_llm.agent function as an exec agent.")
    p.add_argument("file", help="the Python file that defines the agent")
    p.add_argument("--agent", help="the decorated function's name (default: the only one)")
    a = p.parse_args(argv)
    # The file's folder first on sys.path, as when it runs as a script.
    sys.path.insert(0, os.path.dirname(os.path.abspath(a.file)))
    found = runpy.run_path(a.file, run_name="__gauntlet_agent__")
    agents = {k: v for k, v in found.items() if isinstance(v, Agent)}
    if a.agent is not None:
        chosen = agents.get(a.agent)
        if chosen is None:
            chosen = next((v for v in agents.values() if v.name == a.agent), None)
        if chosen is None:
            sys.exit("no @gauntlet_llm.agent named %r in %s (found: %s)" % (
                a.agent, a.file, ", ".join(sorted(agents)) or "none"))
    elif len(agents) == 1:
        chosen = next(iter(agents.values()))
    else:
        sys.exit("%s defines %s @gauntlet_llm.agent functions: name one with --agent (found: %s)"
                 % (a.file, len(agents) or "no", ", ".join(sorted(agents)) or "none"))
    return chosen.serve()


if __name__ == "__main__":
    sys.exit(main())
