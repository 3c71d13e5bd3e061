"""CPython's open() of a workspace file through boxd's fast path, at one
message each way: a worker process hands boxd one channel on its first
open and asks every later one on it (box/ctl.h, BoxOpenWire), instead of
making, passing and closing a reply socket per file.  A forked child asks
on a channel of its own; every read is decided and logged, in order."""
import os
import re
import signal
import time

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


def _reading_box(tmp_path, files):
    """A box with ALLOW_ALL, `files` files of 7 bytes in d/ and read.py,
    not started."""
    b = Box(tmp_path)
    b.write_policy(ALLOW_ALL)
    b.write_config()
    ws = b.workspace
    (ws / "d").mkdir()
    for i in range(files):
        (ws / "d" / f"f{i}").write_text("x" * 7)
    (ws / "read.py").write_text(READ)
    return b


def _boxd_of(b):
    """boxd's pid: strace detaches from `box run` when it is signalled, so
    the box itself is ended, and strace with it (as test_worker_footprint
    does)."""
    with open(f"/proc/{b.proc.pid}/task/{b.proc.pid}/children") as f:
        return int(f.read().split()[0])



def test_each_open_costs_no_reply_socket(tmp_path):
    """socketpair (worker) and SO_PEERCRED (boxd) are per-request costs of a
    reply socket: reading 100 more files adds neither."""
    b = _reading_box(tmp_path, 100)
    trace = tmp_path / "strace.out"
    b.start(prefix=("strace", "-f", "-qq", "-e", "trace=socketpair,getsockopt", "-o", str(trace)))
    boxd = _boxd_of(b)
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


def _box_pids(top):
    """top and every process below it."""
    pids, todo = [], [top]
    while todo:
        pid = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except FileNotFoundError:
            continue  # ended meanwhile (the worker that ran the command)
        pids.append(pid)
        for task in tasks:
            try:
                with open(f"/proc/{pid}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
            except FileNotFoundError:
                pass
    return pids


def _cpu_ticks(pids):
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime: all its threads
    return total


def test_answers_are_waited_for_without_sleeping_first(tmp_path):
    """While a script opens file after file, the worker looks for boxd's
    answer without sleeping first, and boxd for the next request
    (tools/spin.h): a non-blocking recvmsg per open on the worker's side
    beside boxd's own, and a poll that does not wait before boxd's
    blocking one.  Asleep between the two, an idle machine's CPUs woke up
    twice per file."""
    b = _reading_box(tmp_path, 100)
    # a file per thread (-ff): no call split by another's; read once
    # strace has ended (its files are written in blocks)
    trace = tmp_path / "strace"
    trace.mkdir()
    # --seccomp-bpf: the calls not traced run at their speed
    b.start(prefix=("strace", "-ff", "--seccomp-bpf", "-qq", "-e", "trace=recvmsg,poll",
                    "-o", str(trace / "t")))
    boxd = _boxd_of(b)
    try:
        r = b.bash("python3 read.py 100")
        assert (r.stdout, r.stderr, r.returncode) == ("700\n", "", 0)
    finally:
        os.kill(boxd, signal.SIGTERM)
        b.proc.wait(timeout=30)
    text = "".join(p.read_text() for p in trace.iterdir())
    looks = len(re.findall(r"recvmsg\(.*MSG_DONTWAIT", text))
    # the command's loop: ctl, the cancel watch and the channel, at once
    polls = len(re.findall(r"\bpoll\(\[.*\], [3-9], 0\)", text))
    # boxd's own non-blocking read of each request, and the worker's look
    assert looks >= 2 * 100, (looks, polls)
    assert polls >= 99, (looks, polls)


def test_an_idle_box_spins_not(tmp_path):
    """The spin lasts while requests come: once a script has read its
    files, boxd and its workers use no CPU while nothing is asked (boxes
    run by the hundred)."""
    b = _reading_box(tmp_path, 500)
    b.start()
    try:
        r = b.bash("python3 read.py 500")
        assert (r.stdout, r.stderr, r.returncode) == ("3500\n", "", 0)
        pids = _box_pids(b.proc.pid)
        hz = os.sysconf("SC_CLK_TCK")
        before = _cpu_ticks(pids)
        time.sleep(2)
        idle = (_cpu_ticks(pids) - before) / hz
    finally:
        b.stop()
    # a thread spinning for the 2 s would show as 2 s; timers and the
    # housekeeping of an idle box are a few ms
    assert idle < 0.1, idle
