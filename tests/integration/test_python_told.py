"""The interpreter's child tells the Shell its status as its last act, its
descriptors closed first, and the Shell goes on without waiting for the
child's memory to be torn down (shell/commands/python_launcher.c): what
the Shell and the alias's caller see stays as when the Shell waited for
the child's end — statuses, output, a pipe's end, files written — and a
process the interpreter forked tells nothing."""
import shlex

from conftest import permissive_box


def test_statuses_output_and_files_as_before(tmp_path):
    b = permissive_box(tmp_path)
    try:
        cases = [("print(1)", "1\n", "", 0),
                 ("import sys; print('a'); sys.exit(3)", "a\n", "", 3),
                 ("import sys; sys.exit('gone')", "", "gone\n", 1),
                 ("import os; print('x', flush=True); os._exit(5)", "x\n", "", 5),
                 ("import os, sys; os.kill(os.getpid(), 15)", "", "", -1)]
        for text, out, err, status in cases:
            r = b.alias("-c", text, name="python3")
            got = (r.stdout, r.stderr, r.returncode)
            if status < 0:  # killed by SIGTERM: the Shell's 128+15
                assert got == ("", "", 143), (text, got)
            else:
                assert got == (out, err, status), (text, got)
        # the file written and closed by the end is there for the next command
        r = b.bash("python3 -c \"import os; fd = os.open('w.txt', os.O_WRONLY | os.O_CREAT, 0o644);"
                   " os.write(fd, b'kept')\"; cat w.txt; echo \" $?\"")
        assert (r.stdout, r.returncode) == ("kept 0\n", 0)
        # many runs in one Shell, each status its own
        r = b.bash("for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do"
                   " python3 -c \"import sys; sys.exit($i)\"; printf '%s ' $?; done")
        assert r.stdout == " ".join(str(i) for i in range(1, 21)) + " "
    finally:
        b.teardown()


def test_a_forked_process_tells_nothing_and_pipes_end(tmp_path):
    b = permissive_box(tmp_path)
    try:
        # the forked child ends later, with another status: the command's is the parent's
        text = ("import os, sys, time\n"
                "if os.fork() == 0:\n"
                "    time.sleep(0.3); print('child', flush=True); sys.exit(9)\n"
                "print('parent', flush=True); sys.exit(4)")
        r = b.bash(f"python3 -c {shlex.quote(text)}; echo \"status $?\"")
        assert r.stdout.splitlines()[0] == "parent", r.stdout
        assert "status 4" in r.stdout.splitlines()
        # a pipe's reader sees its end, and the pipeline's status is the reader's
        r = b.bash("python3 -c 'print(\"through\")' | cat; echo \"$?\"")
        assert r.stdout == "through\n0\n", r.stdout
    finally:
        b.teardown()
