"""Runs `python3 -m test -v MODULE` and records each test case's outcome.

usage: python3 regrtest_cases.py OUT MODULE [regrtest options...]

The same script runs under the host's python3 and under the box's, so the
two runs differ only in the interpreter and what lies under it.  Outcomes
are taken from unittest's result object rather than parsed from the
verbose text: the tests' own output (and their children's) interleaves
with that text.  One JSON line per case, written as the case ends, so a run
that dies part-way still says which cases it got through:
{"id": "test.test_x.Class.test_y", "outcome": "ok" | "fail" | "error" |
 "skip" | "xfail" | "xpass", "detail": "..."}
A case may have several lines (its subtests'); it passed if one says "ok"
and none "fail" or "error".
"""
import json
import sys
import traceback
import unittest


def main():
    out_path, module, *options = sys.argv[1:]
    out = open(out_path, "a", buffering=1, encoding="utf-8")
    base = unittest.TestResult

    def record(test, outcome, detail=""):
        case = getattr(test, "test_case", test)  # a subtest counts for its case
        if hasattr(case, "id"):
            out.write(json.dumps({"id": case.id(), "outcome": outcome,
                                  "detail": detail[-2000:]}) + "\n")

    def text(err):
        return "".join(traceback.format_exception_only(err[0], err[1])).strip()

    def wrap(name, fn):
        orig = getattr(base, name)

        def hook(self, test, *args):
            fn(test, *args)
            return orig(self, test, *args)

        setattr(base, name, hook)

    wrap("addSuccess", lambda t: record(t, "ok"))
    wrap("addFailure", lambda t, e: record(t, "fail", text(e)))
    wrap("addError", lambda t, e: record(t, "error", text(e)))
    wrap("addSkip", lambda t, reason: record(t, "skip", str(reason)))
    wrap("addExpectedFailure", lambda t, e: record(t, "xfail"))
    wrap("addUnexpectedSuccess", lambda t: record(t, "xpass"))
    # A failing subtest fails its case, which then never reaches addSuccess.
    wrap("addSubTest", lambda t, sub, e: e and record(sub, "fail", f"{sub.id()}: {text(e)}"))
    from test.libregrtest.main import main as regrtest
    sys.argv = [sys.argv[0], "-v", *options, module]
    regrtest()


if __name__ == "__main__":
    main()
