"""A directory listed through boxd's fast path (box/fastopen.c) is one
message each way on the worker's open channel (box/ctl.h,
BOX_LIST_WIRE_TAG): the request, and boxd's answer with the records and
their end in one packet (a directory whose records fit a chunk).  Each
message more is a wake-up more of the worker or boxd, and on a busy machine
a wait for a CPU: find over a tree waited on three answers per directory
(a head, the records, their end), and made, passed and closed a reply
socket for each."""
import os
import re
import signal

from conftest import ALLOW_ALL, Box

DIRS = 40


def test_a_listing_is_one_message_each_way(tmp_path):
    b = Box(tmp_path)
    b.write_policy(ALLOW_ALL)
    b.write_config()
    ws = b.workspace
    for d in range(DIRS):
        (ws / "t" / f"d{d}").mkdir(parents=True)
        for f in range(20):
            (ws / "t" / f"d{d}" / f"f{f}.c").write_text("x\n")
    (ws / "one").mkdir()
    (ws / "one" / "f.c").write_text("x\n")
    trace = tmp_path / "strace.out"
    b.start(prefix=("strace", "-f", "-qq", "-e", "trace=sendmsg,sendto,socketpair", "-o", str(trace)))
    # strace detaches from `box run` when it is signalled: the box itself
    # is ended, and strace with it (as test_python_fast_open does)
    with open(f"/proc/{b.proc.pid}/task/{b.proc.pid}/children") as f:
        boxd = int(f.read().split()[0])
    sends, pairs = {}, {}
    try:
        assert b.bash("true").returncode == 0
        for top, listings in (("one", 1), ("t", DIRS + 1)):
            before = trace.read_text()
            r = b.bash(f"find {top} -name '*.c' | wc -l")
            assert (r.stdout.strip(), r.stderr, r.returncode) == (str(max(1, 20 * (listings - 1))), "", 0)
            text = trace.read_text()[len(before):]
            sends[top] = len(re.findall(r"\bsend(?:msg|to)\(", text))
            pairs[top] = len(re.findall(r"\bsocketpair\(", text))
    finally:
        os.kill(boxd, signal.SIGTERM)
        b.proc.wait(timeout=30)
    # every listing more: the worker's request and boxd's answer (4 before:
    # the request, then a JSON head, the records and an end apart)
    per_listing = (sends["t"] - sends["one"]) / DIRS
    assert per_listing <= 2.25, (sends, per_listing)
    # and no reply socket per listing (one each before)
    assert pairs["t"] - pairs["one"] <= 2, pairs
