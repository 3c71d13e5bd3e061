"""A command's round trip through the alias (issue 29, bench/roundtrip): what
runs between boxd's answer and the alias's exit.  The alias is woken with
the status on a CPU of a two-CPU machine; the worker's exit, the zygote's
fork of the next worker and that worker's set-up (500-700 us of CPU) must
not be queued ahead of it there, so they wait until the caller has gone."""
import os
import re
import signal
import socket
import time

from conftest import ALLOW_ALL, Box, permissive_box
from test_alias import frame, read_frame
from test_worker_footprint import shell_zygote

POOL_SIZE = 3  # box/worker_pool.c


def workers(zygote):
    """The zygote's children: the pool's workers and any that ran a command."""
    with open(f"/proc/{zygote}/task/{zygote}/children") as f:
        return {int(p) for p in f.read().split()}


def settled_pool(zygote):
    """The pool's workers once it holds POOL_SIZE and they stay the same."""
    deadline = time.monotonic() + 30
    last = None
    while time.monotonic() < deadline:
        now = workers(zygote)
        if len(now) == POOL_SIZE and now == last:
            return now
        last = now
        time.sleep(0.2)
    raise AssertionError(f"the pool never settled: {last}")


def call_and_hold(b, source):
    """A call as the alias makes it, on a connection that stays open after
    the exit frame: the frame, and the socket (still connected)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(str(b.box_dir / "run" / "box.sock"))
    nul = os.open("/dev/null", os.O_RDWR)
    request = (frame({"version": 6, "program": 1, "frame_type": "open", "body": {"mode": "shell"}})
               + frame({"version": 6, "program": 1, "frame_type": "call",
                        "body": {"source": source}})
               + frame({"version": 6, "program": 1, "frame_type": "input_eof"}))
    socket.send_fds(s, [request], [nul, nul, nul])
    os.close(nul)
    return read_frame(s), s


def settled_then_held(b):
    """`true` called on b once its pool has settled, the connection kept:
    the zygote, the pool's workers before the call, and the socket."""
    assert b.bash("true").returncode == 0
    zygote = shell_zygote(b.proc.pid)
    before = settled_pool(zygote)
    reply, s = call_and_hold(b, "true")
    assert reply["frame_type"] == "exit" and reply["body"] == {"status": 0}, reply
    return zygote, before, s


def test_the_worker_ends_and_is_replaced_only_once_its_caller_has_gone(tmp_path):
    b = permissive_box(tmp_path)
    try:
        zygote, before, s = settled_then_held(b)
        try:
            time.sleep(0.1)
            # answered, the caller still there: the worker that ran is alive
            # (not torn down, not reaped) and no new one was forked
            held = workers(zygote)
            states = {}
            for pid in held:
                with open(f"/proc/{pid}/stat") as f:
                    states[pid] = f.read().rsplit(")", 1)[1].split()[0]
        finally:
            s.close()
        assert held == before, (before, held)
        assert "Z" not in states.values(), states
        # gone: the one that ran is ended and another takes its place
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            after = workers(zygote)
            if len(after) == POOL_SIZE and len(after - before) == 1:
                break
            time.sleep(0.05)
        assert len(after) == POOL_SIZE and len(before - after) == 1, (before, after)
        # and the alias, which leaves at once, gets the same as before
        r = b.bash("echo hi; exit 3")
        assert (r.returncode, r.stdout, r.stderr) == (3, "hi\n", "")
    finally:
        b.teardown()


def test_a_caller_that_stays_connected_holds_no_worker_long(tmp_path):
    """A client other than the alias may keep its connection after the
    status: its worker still ends within a bound (half a second)."""
    b = permissive_box(tmp_path)
    try:
        zygote, before, s = settled_then_held(b)
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and len(before - workers(zygote)) != 1:
                time.sleep(0.05)
            assert len(before - workers(zygote)) == 1
            # boxd closes the connection once done with it
            s.settimeout(10)
            assert s.recv(1) == b""
        finally:
            s.close()
    finally:
        b.teardown()


def test_the_worker_is_woken_before_the_first_exec_is_decided(tmp_path):
    """boxd decides (and logs) a command's first shell:exec from its text
    (worker_command.c, decide_first) after it has sent the worker "run":
    the worker's wake-up, 50-100 us when its CPU has halted, overlaps the
    decision instead of following it.  The worker waits for the verdict
    before it runs anything, so the log's order is as before."""
    b = Box(tmp_path)
    b.write_policy(ALLOW_ALL)
    b.write_config()
    trace = tmp_path / "strace.out"
    b.start(prefix=("strace", "-f", "-qq", "-s", "256", "-e", "trace=sendmsg,write",
                    "-o", str(trace)))
    with open(f"/proc/{b.proc.pid}/task/{b.proc.pid}/children") as f:
        boxd = int(f.read().split()[0])
    try:
        for _ in range(3):
            r = b.bash("echo hi")
            assert (r.returncode, r.stdout) == (0, "hi\n")
    finally:
        os.kill(boxd, signal.SIGTERM)
        b.proc.wait(timeout=30)
    # per thread, in order: the "run" messages and the history's records of
    # a shell:exec request (kind 0; kind 1 is its status, after the run)
    # strace pads a pid to five columns: "2960  sendmsg(" when it has four
    run = re.compile(r'^(\d+) +sendmsg\(.*\\"op\\":\\"run\\"')
    decision = re.compile(r'^(\d+) +write\(.*\\"a\\":\\"shell:exec\\",\\"k\\":0')
    order = []
    text = trace.read_text()
    for line in text.splitlines():
        for kind, pattern in (("run", run), ("decision", decision)):
            m = pattern.match(line)
            if m:
                order.append((int(m.group(1)), kind))
    assert [k for _, k in order].count("run") == 3, (order, text[-3000:])
    assert [k for _, k in order].count("decision") == 3, order
    for tid in {t for t, k in order if k == "run"}:
        kinds = [k for t, k in order if t == tid]
        # each command's decision follows its own "run", none precedes it
        assert kinds[0] == "run" and all(
            a != b for a, b in zip(kinds, kinds[1:])), (tid, kinds)
    # and the log holds each decision before the status recorded after it
    kinds = [h["k"] for h in b.history() if h.get("a") == "shell:exec"]
    assert kinds == [0, 1] * 3, kinds
