"""CPython's open() of a workspace file through boxd's fast path, at one
message each way: a worker process hands boxd one channel on its first
open and asks every later one on it (box/ctl.h, BoxOpenWire), instead of
making, passing and closing a reply socket per file.  A forked child asks
on a channel of its own; every read is decided and logged, in order."""
import os
import re
import signal

from conftest import ALLOW_ALL, Box
from test_commands_decisions import op_decisions, per_operation_policy

READ = """\
import os, sys
n = int(sys.argv[1])
got = 0
for i in range(n):
    with open(f"d/f{i}", "rb") as f:
        got += len(f.read())
print(got)
"""


def test_each_open_costs_no_reply_socket(tmp_path):
    """socketpair (worker) and SO_PEERCRED (boxd) are per-request costs of a
    reply socket: reading 100 more files adds neither."""
    b = Box(tmp_path)
    b.write_policy(ALLOW_ALL)
    b.write_config()
    ws = b.workspace
    (ws / "d").mkdir()
    for i in range(100):
        (ws / "d" / f"f{i}").write_text("x" * 7)
    (ws / "read.py").write_text(READ)
    trace = tmp_path / "strace.out"
    b.start(prefix=("strace", "-f", "-qq", "-e", "trace=socketpair,getsockopt", "-o", str(trace)))
    # strace detaches from `box run` when it is signalled: the box itself
    # is ended, and strace with it (as test_worker_footprint does)
    with open(f"/proc/{b.proc.pid}/task/{b.proc.pid}/children") as f:
        boxd = int(f.read().split()[0])
    counts = []
    try:
        for n in (1, 101):
            before = trace.read_text()
            r = b.bash(f"python3 read.py {n - 1}")
            assert (r.stdout, r.stderr, r.returncode) == (f"{7 * (n - 1)}\n", "", 0)
            text = trace.read_text()[len(before):]
            counts.append((len(re.findall(r"\bsocketpair\(", text)),
                           len(re.findall(r"SO_PEERCRED", text))))
    finally:
        os.kill(boxd, signal.SIGTERM)
        b.proc.wait(timeout=30)
    (pairs0, creds0), (pairs100, creds100) = counts
    assert pairs100 - pairs0 <= 5, counts
    assert creds100 - creds0 <= 5, counts


FORKED = """\
import os
def read(who):
    for i in range(30):
        with open(f"d/{who}{i}", "rb") as f:
            assert f.read() == f"{who}{i}".encode(), (who, i)
read("p")  # the parent's channel is made before the fork
pid = os.fork()
if pid == 0:
    read("c")
    os._exit(0)
read("q")
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""


def test_a_forked_child_asks_on_its_own_channel(box):
    """Parent and child open files at once: each gets its own, and each read
    is decided and logged once, in each process's order."""
    per_operation_policy(box)
    box.write_config()
    b = box.start()
    ws = b.workspace
    (ws / "d").mkdir()
    for who in "pcq":
        for i in range(30):
            (ws / "d" / f"{who}{i}").write_text(f"{who}{i}")
    (ws / "forked.py").write_text(FORKED)
    since = len(b.decisions())
    r = b.bash("python3 forked.py")
    assert (r.stdout, r.stderr, r.returncode) == ("0\n", "", 0)
    reads = [p[2:] for v, op, p in op_decisions(b, since)
             if op == "read_content" and v == "permit" and p.startswith("d/")]
    for who in "pcq":
        assert [p for p in reads if p[0] == who] == [f"{who}{i}" for i in range(30)], reads
