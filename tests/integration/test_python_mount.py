"""Python's file operations on the mount, at their fewest round trips.

The attributes a command was permitted to read stay in the kernel for
the rest of it (vfs/attrs.c): CPython's open() and read() of a file stat
it twice, and the second stat no longer reaches the mount, nor decides
again.  What the kernel keeps is never another command's to read without a
decision, and a change made outside the mount reaches the command at once."""
import os
import subprocess
import threading
import time

import pytest

from conftest import Box
from test_commands_decisions import op_decisions, per_operation_policy
from test_python import py_box  # noqa: F401 (a fixture)

DEADLINE = 30
# for the box's side: waits (at most DEADLINE seconds) until test() holds
UNTIL = ("import os, sys, time\n"
         "def until(what, test):\n"
         "    t0 = time.monotonic()\n"
         "    while not test():\n"
         f"        if time.monotonic() - t0 > {DEADLINE}:\n"
         "            sys.exit(what + ' never changed')\n"
         "        time.sleep(0.005)\n"
         "    print(what, flush=True)\n")



def per_operation(box):
    """box started under a policy whose rules name each fs operation."""
    per_operation_policy(box)
    box.write_config()
    return box.start()


def of(decisions, name):
    return [(verdict, op) for verdict, op, path in decisions if path == name]


def in_background(box, text):
    """Runs text in the box on a thread: (the thread, a dict that gets "r")."""
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("r", box.bash(text)))
    t.start()
    return t, out


def wait_for(path):
    t0 = time.monotonic()
    while not path.exists():
        assert time.monotonic() - t0 < DEADLINE, f"{path} never appeared"
        time.sleep(0.01)


@pytest.mark.parametrize("open_, want", [
    # _io.open: the stock open(), through the mount; fstat at open and
    # fstat again in read(): one decision
    ("import _io; f = _io.open('a.txt')", [("permit", "read_content"), ("permit", "read_metadata")]),
    # builtins.open: the read decided and logged by boxd as the mount's OPEN
    # would be, its descriptor handed over: its stats are the file's own
    ("f = open('a.txt')", [("permit", "read_content")]),
])
def test_a_read_file_is_stat_decided_once(box, open_, want):
    b = per_operation(box)
    (b.workspace / "a.txt").write_text("abc")
    since = len(b.decisions())
    r = b.bash(f"python3 -c \"{open_}; print(f.read(), f.name); f.close()\"")
    assert (r.stdout, r.stderr, r.returncode) == ("abc a.txt\n", "", 0)
    assert of(op_decisions(b, since), "a.txt") == want


def test_each_command_decides_its_own_stats(box):
    b = per_operation(box)
    (b.workspace / "a.txt").write_text("abc")
    for _ in range(3):
        since = len(b.decisions())
        r = b.bash("python3 -c \"import os; f = os.open('a.txt', os.O_RDONLY); "
                   "print(os.fstat(f).st_size, os.fstat(f).st_size, os.stat('a.txt').st_size)\"")
        assert (r.stdout, r.returncode) == ("3 3 3\n", 0), r.stderr
        # what the last command was granted ended with it: this one decides
        # its own stat.  Only one is logged while it runs alone; while the
        # command before it is still being ended (a loaded machine), no
        # attributes are granted and each stat is decided, all permitted.
        got = of(op_decisions(b, since), "a.txt")
        assert got[:2] == [("permit", "read_content"), ("permit", "read_metadata")]
        assert set(got[2:]) <= {("permit", "read_metadata")}


def test_a_second_running_command_decides_for_itself(box):
    """A command that starts while another holds attributes the kernel
    keeps gets a decision for its own stat all the same."""
    b = per_operation(box)
    ws = b.workspace
    (ws / "a.txt").write_text("abc")
    script = UNTIL + ("f = os.open('a.txt', os.O_RDONLY)\n"
                      "print(os.fstat(f).st_size)\n"
                      "open('held', 'w').close()\n"
                      "until('go', lambda: os.path.exists('go'))\n"
                      "print(os.fstat(f).st_size)\n")
    (ws / "hold.py").write_text(script)
    first, out = in_background(b, "python3 hold.py")
    try:
        wait_for(ws / "held")
        since = len(b.decisions())
        r = b.bash("stat -c %s a.txt")
        assert (r.stdout, r.returncode) == ("3\n", 0), r.stderr
        assert ("permit", "read_metadata") in of(op_decisions(b, since), "a.txt")
    finally:
        (ws / "go").write_text("")
        first.join(60)
    assert (out["r"].stdout, out["r"].returncode) == ("3\ngo\n3\n", 0), out["r"].stderr


def test_changes_made_outside_reach_a_running_command(box):
    """The box's command stats a file and a directory, then waits for each
    change the host makes to show: the attributes it was granted are
    expired by the watch, never kept until the command ends."""
    b = per_operation(box)
    ws = b.workspace
    (ws / "f").write_text("1234")
    (ws / "d").mkdir()
    os.chmod(ws / "f", 0o644)
    script = UNTIL + (
        # descriptors: their stats never walk the names again, so only the
        # watch can expire what the kernel keeps of them
        "f, d = os.open('f', os.O_RDONLY), os.open('d', os.O_RDONLY)\n"
        "size, mode = os.fstat(f).st_size, os.fstat(f).st_mode\n"
        "dtime = os.fstat(d).st_mtime_ns\n"
        "open('ready', 'w').close()\n"
        "until('size', lambda: os.fstat(f).st_size != size)\n"
        "until('mode', lambda: os.fstat(f).st_mode != mode)\n"
        "until('dir', lambda: os.fstat(d).st_mtime_ns != dtime)\n"
        "until('times', lambda: os.fstat(f).st_mtime_ns == 10**18)\n")
    (ws / "watch.py").write_text(script)
    runner, out = in_background(b, "python3 watch.py")
    try:
        wait_for(ws / "ready")
        with open(ws / "f", "a") as f:
            f.write("5678")
        os.chmod(ws / "f", 0o600)
        (ws / "d" / "new").write_text("")
        os.utime(ws / "f", ns=(10**18, 10**18))
    finally:
        runner.join(90)
    r = out["r"]
    assert (r.stdout, r.stderr, r.returncode) == ("size\nmode\ndir\ntimes\n", "", 0)


def traced(tmp_path):
    """A box whose mount traces every request (libfuse's debug output)."""
    b = Box(tmp_path)
    b.write_policy("permit(principal, action, resource);\n")
    b.write_config()
    b.start(prefix=("env", "BOXFS_FUSE_DEBUG=1"))
    return b


def test_open_asks_the_mount_no_ioctl(tmp_path):
    """io.open() asks each file whether it is a terminal: the file's type
    answers, not an ioctl the mount would get for every open."""
    b = traced(tmp_path)
    try:
        (b.workspace / "a.txt").write_text("abc")
        r = b.bash("python3 -c \"import os; print(open('a.txt').read(), "
                   "os.isatty(os.open('a.txt', os.O_RDONLY)))\"")
        assert (r.stdout, r.stderr, r.returncode) == ("abc False\n", "", 0)
        assert "opcode: IOCTL" not in b.stderr()
    finally:
        b.teardown()


ISATTY = """\
import errno, os
def probe(fd):
    try:
        return os.isatty(fd), None
    except OSError as e:
        return None, errno.errorcode[e.errno]
r, w = os.pipe()
f = os.open("a.txt", os.O_RDONLY)
d = os.open(".", os.O_RDONLY)
n = os.open("/dev/null", os.O_RDONLY)
print([probe(x) for x in (r, w, f, d, n, 999)])
"""


def test_isatty_answers_as_natively(py_box):
    (py_box.workspace / "a.txt").write_text("abc")
    (py_box.workspace / "isatty_probe.py").write_text(ISATTY)
    r = py_box.bash("python3 isatty_probe.py")
    native = subprocess.run(["/usr/bin/python3", "isatty_probe.py"], cwd=py_box.workspace,
                            capture_output=True, text=True)
    assert (r.stdout, r.stderr, r.returncode) == (native.stdout, native.stderr, 0)


THREADS = """\
import os, threading
got = {}
def read(k):
    for i in range(40):
        with open(f"d/{k}-{i}") as f:
            got[(k, i)] = f.read()
ts = [threading.Thread(target=read, args=(k,)) for k in range(4)]
for t in ts: t.start()
for t in ts: t.join()
print(all(v == f"{k}-{i}" for (k, i), v in got.items()), len(got))
"""


def test_threads_opening_at_once_each_get_their_file(box):
    """The fast path is one call at a time; a thread that finds it busy
    opens through the mount: every file is its own, each read decided once."""
    b = per_operation(box)
    (b.workspace / "d").mkdir()
    for k in range(4):
        for i in range(40):
            (b.workspace / "d" / f"{k}-{i}").write_text(f"{k}-{i}")
    (b.workspace / "threads.py").write_text(THREADS)
    since = len(b.decisions())
    r = b.bash("python3 threads.py")
    assert (r.stdout, r.stderr, r.returncode) == ("True 160\n", "", 0)
    reads = [p for v, op, p in op_decisions(b, since) if op == "read_content" and p.startswith("d/")]
    assert sorted(reads) == sorted(f"d/{k}-{i}" for k in range(4) for i in range(40))
