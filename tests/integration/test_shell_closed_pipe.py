"""A reader that goes away: the Shell against GNU bash.

`bash -c TEXT | head -c 2`: in bash a program (cat, seq, grep) is a process
of its own, which alone dies of SIGPIPE (status 141) while the script goes
on; a builtin's write (echo) ends bash itself.  The Shell runs its programs
in its own process, and in a box it is its PID namespace's init, to which
the kernel sends no SIGPIPE at all: each case is run here as box-shell -c,
as bash -c, and through a real box's alias, its stdout a pipe the test
closes after two bytes; the status and stderr must be bash's.
"""
import subprocess

import pytest

from conftest import BOX_SHELL, table_cases
from test_shell_bash import BASH, _norm

pytestmark = pytest.mark.skipif(not BASH, reason="bash not installed")

CASES = [
    ("builtin-ends-shell", "echo a; sleep 0.2; echo b; echo c >&2"),
    ("printf-ends-shell", "printf '%s\\n' {1..100000}; echo not-reached >&2"),
    ("loop-of-echo-ends-shell", "for i in $(seq 1 20000); do echo $i; done; echo not-reached >&2"),
    ("cat-ends-alone", "cat /dev/zero; echo st=$? >&2"),
    ("seq-ends-alone", "seq 1 1000000; echo st=$? >&2"),
    ("yes-twice", "for i in 1 2; do yes; echo st=$? >&2; done"),
    ("tr-stops-reading", "tr -d x < /dev/zero; echo st=$? >&2"),
    ("sed-stops-reading", "sed s/a/b/ /dev/urandom; echo st=$? >&2"),
    ("grep-stops-reading", "grep -a . /dev/urandom; echo st=$? >&2"),
    ("awk-ends-alone", "awk 'BEGIN { while (1) print 1 }'; echo st=$? >&2"),
    ("jq-ends-alone", "jq -n 'range(1000000)'; echo st=$? >&2"),
    ("sort-ends-alone", "seq 100000 | sort -n; echo st=$? >&2"),
    ("gzip-ends-alone", "gzip -c /dev/zero; echo st=$? >&2"),
    ("head-ends-alone", "head -c 100000000 /dev/zero; echo st=$? >&2"),
    ("nested-sh-builtin-loop", "sh -c 'while :; do echo y; done'; echo st=$? >&2"),
    ("nested-bash-script", "bash -c 'for i in $(seq 100000); do echo $i; done; echo not-reached >&2'; echo st=$? >&2"),
    ("in-subshell", "(cat /dev/zero; echo st=$? >&2); echo after=$? >&2"),
    ("in-group-stage", "{ cat /dev/zero; echo st=$? >&2; } | cat; echo ps=${PIPESTATUS[*]} >&2"),
    ("ignored-builtin-says-so", "trap '' PIPE; echo a; sleep 0.2; echo b; echo st=$? >&2"),
    ("ignored-cat-says-so", "trap '' PIPE; cat /dev/zero; echo st=$? >&2"),
    ("ignored-jq-says-so", "trap '' PIPE; jq -n 'range(1000000)'; echo st=$? >&2"),
    ("trapped-program-no-trap", "trap 'echo trapped >&2' PIPE; cat /dev/zero; echo st=$? >&2"),
]


def closed_after_two(argv, **kw):
    """Runs argv with stdout a pipe closed after its first two bytes:
    (status as a shell reports it, stderr)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    p.stdout.read(2)
    p.stdout.close()
    try:
        err = p.stderr.read()
        p.wait(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    status = 128 - p.returncode if p.returncode < 0 else p.returncode
    return status, _norm(err)


@table_cases("text", CASES)
def test_closed_pipe_like_bash(text, tmp_path):
    want = closed_after_two([BASH, "-c", text], cwd=tmp_path)
    got = closed_after_two([str(BOX_SHELL), "-c", text], cwd=tmp_path)
    assert got == want


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    from conftest import Box
    b = Box(tmp_path_factory.mktemp("pipebox"))
    b.start_seeded()
    yield b
    b.teardown()


@table_cases("text", CASES)
def test_closed_pipe_in_a_box_like_bash(text, running, tmp_path):
    want = closed_after_two([BASH, "-c", text], cwd=tmp_path)
    got = closed_after_two([str(running.box_dir / "bin" / "bash"), "-c", text],
                           cwd=running.workspace, env=running.env())
    assert got == want


# The box's Shell is its namespace's init: a signal it has no trap for ends
# it as it would end bash, though the kernel sends an init none by default.
SIGNALS = [
    ("kill-self-term", "echo a; kill $$; echo not-reached"),
    ("kill-self-usr1", "kill -USR1 $$; echo not-reached"),
    ("kill-self-hup", "kill -HUP $$; echo not-reached"),
    ("trapped-term-goes-on", "trap 'echo caught' TERM; kill $$; echo after"),
    ("ignored-term-goes-on", "trap '' TERM; kill $$; echo after"),
    ("subshell-kills-itself", "(kill $BASHPID; echo not-reached); echo st=$?"),
]


@table_cases("text", SIGNALS)
def test_signal_to_itself_in_a_box_like_bash(text, running, tmp_path):
    want = subprocess.run([BASH, "-c", text], capture_output=True, cwd=tmp_path)
    got = running.bash(text)
    assert (got.returncode, got.stdout, got.stderr) == \
        (128 - want.returncode if want.returncode < 0 else want.returncode,
         want.stdout.decode(), _norm(want.stderr).decode())
