"""gauntlet's Python test runner for `gauntlet impact`: no pytest, no pip installs.

Usage: python3 pyrunner.py ROOT TEST_FILE [NAME ...]

Imports TEST_FILE (with ROOT, ROOT/src and the file's folder on sys.path), collects its tests
(module functions named test*, methods test* of classes named Test*, unittest.TestCase
included) or only the NAMEs given, and runs each one under a `sys.settrace` call tracer that
records which files under ROOT had a function called while the test ran. Prints one JSON
object: {"tests": [{"name", "outcome", "detail", "files"}], "error": null | "..."}.
Outcomes: passed, failed (an assertion), error (any other exception), skipped.
"""
import importlib.util
import json
import os
import sys
import traceback
import unittest


def main():
    root = os.path.realpath(sys.argv[1])
    path = os.path.realpath(os.path.join(root, sys.argv[2]))
    wanted = sys.argv[3:]
    for p in (os.path.dirname(path), os.path.join(root, "src"), root):
        if p not in sys.path:
            sys.path.insert(0, p)
    try:
        spec = importlib.util.spec_from_file_location("gauntlet_test_module", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except BaseException:
        emit([], "cannot import: " + traceback.format_exc(limit=3).strip().splitlines()[-1])
        return
    tests = collect(module)
    if wanted:
        tests = [t for t in tests if t[0] in wanted]
        missing = [w for w in wanted if w not in [t[0] for t in tests]]
    else:
        missing = []
    results = [run_one(name, fn, root) for name, fn in tests]
    for m in missing:
        results.append({"name": m, "outcome": "missing", "detail": "no such test", "files": []})
    emit(results, None)


def collect(module):
    found = []
    for name, obj in sorted(vars(module).items()):
        if name.startswith("test") and callable(obj) and not isinstance(obj, type):
            if getattr(obj, "__module__", None) == module.__name__:
                found.append((name, obj))
        elif isinstance(obj, type) and name.startswith("Test"):
            if issubclass(obj, unittest.TestCase):
                for meth in unittest.defaultTestLoader.getTestCaseNames(obj):
                    found.append((name + "::" + meth, case_runner(obj, meth)))
            else:
                for meth in sorted(dir(obj)):
                    if meth.startswith("test") and callable(getattr(obj, meth)):
                        found.append((name + "::" + meth, plain_runner(obj, meth)))
    return found


def case_runner(cls, meth):
    def run():
        result = unittest.TestResult()
        cls(meth).run(result)
        if result.skipped:
            raise unittest.SkipTest(result.skipped[0][1])
        if result.failures:
            # The assertion line, not the last line of a diff under it.
            lines = result.failures[0][1].strip().splitlines()
            raise AssertionError(next(
                (l for l in lines if l.startswith("AssertionError")), lines[-1]))
        if result.errors:
            raise RuntimeError(result.errors[0][1].strip().splitlines()[-1])
    return run


def plain_runner(cls, meth):
    def run():
        getattr(cls(), meth)()
    return run


def run_one(name, fn, root):
    files = set()
    prefix = root + os.sep

    def tracer(frame, event, arg):
        f = frame.f_code.co_filename
        if f.startswith(prefix):
            files.add(os.path.relpath(f, root))
        return None

    outcome, detail = "passed", ""
    sys.settrace(tracer)
    try:
        fn()
    except unittest.SkipTest as e:
        outcome, detail = "skipped", str(e)
    except AssertionError as e:
        outcome, detail = "failed", str(e) or "assertion failed"
    except BaseException as e:
        outcome, detail = "error", type(e).__name__ + ": " + str(e)
    finally:
        sys.settrace(None)
    return {"name": name, "outcome": outcome, "detail": detail[:500], "files": sorted(files)}


def emit(tests, error):
    sys.stdout.write(json.dumps({"tests": tests, "error": error}) + "\n")


if __name__ == "__main__":
    main()
