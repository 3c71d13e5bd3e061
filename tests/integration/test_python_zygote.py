"""Python's warm interpreter lives in a zygote of its own: the Shell's
zygote, which forks a worker for every command, never maps libpython (a
fork of a process that large costs each command its page tables and
faults), and the Python zygote starts with the first command whose text
starts with python3 — the Python alias's calls are such texts.  (Where
libpython is linked into box-shell, every zygote maps its code, but only
the Python zygote has an interpreter's memory.)"""
import time

from conftest import permissive_box, zygotes


def maps_libpython(pid):
    with open(f"/proc/{pid}/maps") as f:
        return "libpython3" in f.read()


def anonymous_kib(pid):
    """Resident anonymous memory: an initialized interpreter's heap."""
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("RssAnon:"))


def test_the_shells_zygote_holds_no_python_and_pythons_starts_on_demand(tmp_path):
    b = permissive_box(tmp_path)
    try:
        assert b.bash("true").returncode == 0
        before = zygotes(b.proc.pid)
        assert len(before) == 1, before
        (shell_pid,) = before
        assert not maps_libpython(shell_pid)
        r = b.bash("python3 -c 'import sys; print(\"json\" in sys.modules)'")
        assert (r.stdout, r.stderr, r.returncode) == ("True\n", "", 0)
        deadline = time.time() + 10
        while len(zygotes(b.proc.pid)) < 2 and time.time() < deadline:
            time.sleep(0.05)
        after = zygotes(b.proc.pid)
        python = [p for p, argv in after.items() if b"--warm-python" in argv]
        assert len(python) == 1, after
        assert anonymous_kib(python[0]) > 4 * anonymous_kib(shell_pid)
        assert not maps_libpython(shell_pid)
        # a Shell command that starts otherwise still runs python3, cold
        r = b.bash("true; python3 -c 'import sys; print(\"json\" in sys.modules)'")
        assert (r.stdout, r.stderr, r.returncode) == ("False\n", "", 0)
    finally:
        b.teardown()
