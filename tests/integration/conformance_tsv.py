"""The shared conformance table (../shared/conformance/shell-cases.tsv):
where it is and how its escaped cells read.  Used by the SI-/CU- runner
(test_conformance.py) and the LU- runner (test_lua_conformance.py)."""
import os
from pathlib import Path

CASES = Path(os.environ.get(
    "BOXFS_CONFORMANCE",
    Path(__file__).resolve().parents[3] / "shared" / "conformance" / "shell-cases.tsv"))


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
