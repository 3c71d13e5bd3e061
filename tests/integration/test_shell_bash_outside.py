"""Divergences from GNU bash that an outside conformance corpus found
(tests/differential/outside.py), one case each, written here in our own words
and run as test_shell_bash.py runs its cases (box-shell -c and bash -c in twin
directories; stdout, stderr with bash's prefix forgiven, and status compared).
"""
import pytest

from conftest import table_cases
from test_shell_bash import BASH
from test_shell_bash import test_like_bash as like_bash  # the comparison, not a test here

CASES = [
    # ---- a program gets every descriptor at its own number ------------------
    ("fd-heredoc-high", '/bin/cat /dev/fd/5 5<<EOF\nfive\nEOF\n/bin/cat /dev/fd/3 /dev/fd/4 3<<A 4<<B\nthree\nA\nfour\nB'),
    ("fd-exec-high", 'exec 7>f; /bin/sh -c "echo seven >&7"; exec 7>&-; /bin/cat f'),
    ("fd-swap-high", 'exec 3>a 4>b; /bin/sh -c "echo x >&3; echo y >&4" 3>&4 4>&3; /bin/cat a; echo -; /bin/cat b'),
]


@pytest.mark.skipif(not BASH, reason="bash not installed")
@table_cases("text", CASES)
def test_like_bash_outside(text, tmp_path):
    like_bash(text, tmp_path)


def test_unique_ids():
    assert len({c[0] for c in CASES}) == len(CASES)
