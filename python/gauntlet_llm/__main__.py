"""`python -m gauntlet_llm ARGS...`: the gauntlet binary of this wheel, for environments
whose scripts folder is not on PATH (`python -m gauntlet_llm redteam`)."""

import subprocess
import sys

from .runner import GauntletError, find_binary


def main():
    try:
        binary = find_binary()
    except GauntletError as e:
        print("error: %s" % e, file=sys.stderr)
        return 2
    return subprocess.call([binary] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
