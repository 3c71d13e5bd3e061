"""The shared conformance table (../shared/conformance/shell-cases.tsv):
where it is and how its escaped cells read.  Used by the SI-/CU- runner
(test_conformance.py) and the LU- runner (test_lua_conformance.py)."""
import os
from pathlib import Path

# The project's shared folder beside the checkout is the authority; the copy
# in tests/conformance/ lets a clone without it (CI) run the same rows, and
# test_conformance checks that the two agree wherever both are present.
SHARED_CASES = Path(__file__).resolve().parents[3] / "shared" / "conformance" / "shell-cases.tsv"
REPO_CASES = Path(__file__).resolve().parents[2] / "tests" / "conformance" / "shell-cases.tsv"
CASES = Path(os.environ.get("BOXFS_CONFORMANCE",
                            SHARED_CASES if SHARED_CASES.exists() else REPO_CASES))


def unescape(s):
    """A cell's text: \\n \\t \\r \\\\ and \\xHH decoded, other escapes kept."""
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n == "x" and i + 3 < len(s):
                out.append(chr(int(s[i + 2:i + 4], 16)))
                i += 4
                continue
            out.append({"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}.get(n, "\\" + n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)
