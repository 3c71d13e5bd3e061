"""$$ in a box.

A box's worker is PID 1 of a namespace of its own, so without more every
command would show $$ = 1 and `/tmp/out.$$` or `mkdir run.$$` in the
workspace would name one file for all of them.  The worker shows its PID
outside the namespace instead (a number no other command of the box
shows while it runs), and `kill` takes that number for itself, as bash
takes its own $$.  Each case is checked against GNU bash's answer where
bash gives one.
"""
import subprocess

import pytest

from conftest import module_box

from test_shell_bash import BASH


running = module_box("running")


def shown(running, text):
    r = running.bash(text)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_each_command_shows_a_pid_of_its_own(running):
    pids = [shown(running, "echo $$").strip() for _ in range(4)]
    assert all(p.isdigit() and int(p) > 1 for p in pids), pids
    assert len(set(pids)) == 4, pids


def test_a_file_named_by_pid_is_not_shared(running):
    a = shown(running, "echo one > out.$$; echo out.$$").strip()
    b = shown(running, "echo two > out.$$; echo out.$$").strip()
    assert a != b
    assert (running.workspace / a).read_text() == "one\n"
    assert (running.workspace / b).read_text() == "two\n"


@pytest.mark.skipif(not BASH, reason="bash not installed")
@pytest.mark.parametrize("text", [
    # the main shell: $BASHPID is $$; a subshell keeps $$ and has a BASHPID of its own
    '[ "$BASHPID" = "$$" ] && echo same',
    'p=$$; ( [ "$$" = "$p" ] && echo kept; [ "$BASHPID" != "$p" ] && echo own )',
    # a new shell's $PPID is the shell that ran it
    'sh -c \'echo $PPID\' > ppid; [ "$(cat ppid)" = "$$" ] && echo parent; rm ppid',
    # kill takes $$ for the shell itself
    'kill -0 $$; echo st=$?',
    "trap 'echo caught' USR1; kill -USR1 $$; echo after",
    'echo a; kill -KILL $$; echo not-reached',
    'sleep 5 & kill $!; wait $!; echo st=$?',
])
def test_pid_like_bash(running, tmp_path, text):
    want = subprocess.run([BASH, "-c", text], capture_output=True, cwd=tmp_path)
    got = running.bash(text)
    want_status = 128 - want.returncode if want.returncode < 0 else want.returncode
    assert (got.returncode, got.stdout) == (want_status, want.stdout.decode())

