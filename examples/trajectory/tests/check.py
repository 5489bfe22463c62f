"""Black-box checks of the workspace's textkit.py, one per name on the command line.

Run by gauntlet in a copy of the agent's workspace (the current directory); the agent
never sees this file.
"""
import sys

sys.path.insert(0, ".")
import textkit  # noqa: E402

CHECKS = {
    "words_basic": lambda: textkit.words("  a b\tc ") == ["a", "b", "c"],
    "slugify_basic": lambda: textkit.slugify("Hello Big World") == "hello-big-world",
    "slugify_empty": lambda: textkit.slugify("   ") == "",
    "count_words": lambda: textkit.count_words("a A b") == {"a": 2, "b": 1},
    "slugify_sep": lambda: textkit.slugify("A b", sep="_") == "a_b",
    "title_basic": lambda: textkit.title("hello  big world") == "Hello Big World",
}

name = sys.argv[1]
ok = CHECKS[name]()
print(f"{name}: {'ok' if ok else 'wrong answer'}")
sys.exit(0 if ok else 1)
