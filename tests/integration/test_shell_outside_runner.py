"""tests/differential/outside.py, the runner for outside shell corpora, on a
small corpus of its two layouts written here: spec-test cases (`#### NAME`,
expected-answer lines `## …` dropped) and a plain script compared by output
line, each through bash and box-shell with its helpers on PATH."""
import shutil
import sys
from pathlib import Path

import pytest

from conftest import BOX_SHELL

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "differential"))
import difftest  # noqa: E402
import outside  # noqa: E402

SPEC = """## a header line the runner drops
#### words through the argv helper
x='a b'
argv.py $x "$x"
## stdout: ['a', 'b', 'a b']
#### a descriptor of its own for a helper
read_from_fd.py 5 5<<END
five
END
#### the environment's SH
echo "$SH"
### an older header
printf '%s\\n' one two
# stdout-json: "one\\ntwo\\n"
"""

SCRIPT = "echo first\nfor i in 1 2; do echo $i; done\necho last\n"


@pytest.mark.skipif(not shutil.which("bash"), reason="bash not installed")
def test_outside_runner_counts_cases_and_lines(tmp_path):
    difftest.BOX_SHELL = str(BOX_SHELL)
    (tmp_path / "small.test.sh").write_text(SPEC)
    (tmp_path / "plain.tests").write_text(SCRIPT)
    items = outside.cases(tmp_path)
    assert [(n, k) for n, _, k in items] == [
        ("plain.tests", "file"),
        ("small: words through the argv helper", "case"),
        ("small: a descriptor of its own for a helper", "case"),
        ("small: the environment's SH", "case"),
        ("small: an older header", "case"),
    ]
    assert all("## " not in t and "# stdout" not in t for _, t, _ in items)
    results, total = outside.sweep(tmp_path)
    assert total == 5 and len(results) == 5
    for name, kind, ours, ref in results:
        assert (ours[0], ours[2]) == (ref[0], ref[2]), name
    by_name = {r[0]: r for r in results}
    assert by_name["small: words through the argv helper"][3][0] == b"['a', 'b', 'a b']\n"
    assert by_name["small: a descriptor of its own for a helper"][3][0] == b"5: five\n"
    assert by_name["small: the environment's SH"][3][0] == b"bash\n"
    assert outside.line_share(b"a\nx\nc\n", b"a\nb\nc\n") == (3, 4)
