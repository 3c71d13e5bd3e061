"""Kernel refusal records (spec/runtime.md §8.4, §5.8): what seccomp refuses
a tool reaches the targets that take `kernel` as a `strands-box.containment`
log record, the call still fails with EPERM, repeats are counted rather
than written, and past 256 kinds only a count per syscall is kept."""
import json
import time

from conftest import Box
from telemetry_util import attrs, control_records, file_entries, items

KERNEL_SCOPE = "strands-box.containment"

# Each refusal a tool makes: (family, type) of a socket the filter refuses,
# or "bpf"; the tool prints the errno of each attempt.
PROBE = """
import ctypes, errno, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
for arg in sys.argv[1:]:
    if arg == "bpf":
        r = libc.syscall(321, 0, 0, 0)  # bpf(2) on x86_64
        print("bpf", errno.errorcode.get(ctypes.get_errno()) if r < 0 else "ran")
        continue
    family, kind = (int(x) for x in arg.split(","))
    try:
        socket.socket(family, kind).close()
        print(arg, "ran")
    except OSError as e:
        print(arg, errno.errorcode.get(e.errno))
"""


def kernel_box(tmp_path, include=None):
    box = Box(tmp_path)
    kernel_box_config(box, tmp_path, include)
    return box.start()


def kernel_box_config(box, tmp_path, include=None):
    box.permit_spawn("/usr/bin/python3")
    (box.workspace / "probe.py").write_text(PROBE)
    target = ('\n[telemetry.all]\nkind = "file"\n'
              f'destination = "{tmp_path}/records.jsonl"\n')
    if include:
        target += f"include = {json.dumps(include)}\n"
    box.write_config(extra='\n[tool.py]\ncommand = ["/usr/bin/python3"]\n'
                     'filesystem.read = ["~/src/project"]\n' + target)


def refusals(path):
    return [attrs(it) for _, _, it in items(file_entries(path), KERNEL_SCOPE)]


def poll_refusals(path, syscalls, deadline=30):
    """The refusals once one of each syscall named is written."""
    end = time.monotonic() + deadline
    while True:
        now = refusals(path)
        if syscalls <= {a["strands.box.containment.syscall"] for a in now} or \
                time.monotonic() > end:
            return now
        time.sleep(0.1)


def test_a_refused_socket_is_recorded_and_still_fails(tmp_path):
    box = kernel_box(tmp_path)
    try:
        r = box.bash("/usr/bin/python3 probe.py 17,3 17,3 17,3 2,1 bpf")
        assert r.returncode == 0, r.stderr
        assert r.stdout.splitlines() == ["17,3 EPERM", "17,3 EPERM", "17,3 EPERM", "2,1 ran",
                                         "bpf EPERM"]
        # the first of each kind while the box runs (written by the thread
        # that answered the call, so perhaps just after the tool went on)
        now = poll_refusals(tmp_path / "records.jsonl", {"socket", "bpf"})
        packet = [a for a in now if a["strands.box.containment.syscall"] == "socket"]
        assert len(packet) == 1, now
        assert packet[0]["strands.box.containment.arguments"] == "family=AF_PACKET type=SOCK_RAW"
        assert packet[0]["strands.box.containment.errno"] == "EPERM"
        assert packet[0]["strands.box.containment.suppressed"] == "0"
        assert packet[0]["process.executable.path"].startswith("/usr/bin/python3")
        assert packet[0]["process.command_args"]["values"][1] == {"stringValue": "probe.py"}
        bpf = [a for a in now if a["strands.box.containment.syscall"] == "bpf"]
        assert len(bpf) == 1 and "strands.box.containment.arguments" not in bpf[0], now
    finally:
        box.stop()
    # the two repeats inside the window, counted and flushed at stop
    after = refusals(tmp_path / "records.jsonl")
    packet = [a["strands.box.containment.suppressed"] for a in after
              if a["strands.box.containment.syscall"] == "socket"]
    assert packet == ["0", "2"], after
    # every record of the scope is a log, never a span
    assert {key for key, _, _ in items(file_entries(tmp_path / "records.jsonl"), KERNEL_SCOPE)} \
        == {"resourceLogs"}


def test_a_teardown_that_hangs_still_flushes_the_counts_and_records_the_stop(tmp_path):
    """The teardown watchdog ends a run whose teardown hangs past 10 s (held
    here by a test switch, as a loaded machine can): the refusals still
    counted and box_stopped are written before it does."""
    box = Box(tmp_path)
    env = box.env
    box.env = lambda: {**env(), "BOXFS_TEST_TEARDOWN_STALL": "1"}
    kernel_box_config(box, tmp_path)
    box.start()
    try:
        r = box.bash("/usr/bin/python3 probe.py 17,3 17,3 17,3")
        assert r.stdout == "17,3 EPERM\n" * 3, r.stderr
        poll_refusals(tmp_path / "records.jsonl", {"socket"})
    finally:
        status = box.stop(timeout=60)
    assert status == 128 + 15, box.stderr()
    assert "teardown took longer than 10 s" in box.stderr()
    path = tmp_path / "records.jsonl"
    assert [a["strands.box.containment.suppressed"] for a in refusals(path)] == ["0", "2"]
    stopped = control_records(file_entries(path))[-1]
    assert stopped["strands.box.control.operation"] == "box_stopped"
    assert stopped["strands.box.control.detail"] == \
        "stopped by SIGTERM; teardown took longer than 10 s"


def test_a_target_without_kernel_gets_none(tmp_path):
    box = kernel_box(tmp_path, include=["deny", "permit", "trace"])
    try:
        r = box.bash("/usr/bin/python3 probe.py 17,3")
        assert r.stdout == "17,3 EPERM\n", r.stderr
    finally:
        box.stop()
    assert refusals(tmp_path / "records.jsonl") == []


def test_past_256_kinds_counts_per_syscall_and_says_so(tmp_path):
    box = kernel_box(tmp_path)
    # 300 kinds: every refused family from 3 on (the family is part of the key)
    kinds = " ".join(f"{f},1" for f in range(3, 303))
    try:
        r = box.bash(f"/usr/bin/python3 probe.py {kinds}")
        assert r.returncode == 0, r.stderr
        assert r.stdout.count(" EPERM\n") == 300, r.stdout
    finally:
        box.stop()
    path = tmp_path / "records.jsonl"
    recs = refusals(path)
    kinds_recorded = {a.get("strands.box.containment.arguments") for a in recs
                      if "process.pid" in a}
    assert len(kinds_recorded) == 256
    bucket = [a for a in recs if "process.pid" not in a]
    assert [(a["strands.box.containment.syscall"], a["strands.box.containment.suppressed"])
            for a in bucket] == [("socket", "44")]
    capped = [c for c in control_records(file_entries(path))
              if c["strands.box.control.operation"] == "refusals_unobserved"]
    assert len(capped) == 1 and capped[0]["strands.box.control.reason"] == "rate_cap", capped


def test_repeats_are_emitted_when_their_window_ends(tmp_path):
    box = kernel_box(tmp_path)
    try:
        r = box.bash("/usr/bin/python3 probe.py 17,3 17,3 17,3")
        assert r.stdout == "17,3 EPERM\n" * 3, r.stderr
        # the 10 s window ends while the box runs: the two repeats go out
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            counts = [a["strands.box.containment.suppressed"]
                      for a in refusals(tmp_path / "records.jsonl")]
            if counts == ["0", "2"]:
                break
            time.sleep(0.5)
        assert counts == ["0", "2"]
    finally:
        box.stop()
    # nothing left counted at stop
    assert len(refusals(tmp_path / "records.jsonl")) == 2


# Starts box under a seccomp filter that lets every call through but has a
# listener, as a container runtime that answers calls for its own processes
# does: while that listener is open the kernel gives no second one beneath
# it (EBUSY), so boxd's launches take the fallback of §5.8.  A child holds
# the listener for as long as box runs (closing it would free the slot).
UNDER_A_LISTENER = """
import ctypes, os, signal, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
allow = struct.pack("=HBBI", 0x06, 0, 0, 0x7fff0000)  # BPF_RET|BPF_K, SECCOMP_RET_ALLOW
code = ctypes.create_string_buffer(allow, len(allow))
prog = struct.pack("=HxxxxxxQ", 1, ctypes.addressof(code))  # struct sock_fprog
# an unprivileged process installs a filter only under no_new_privs
if os.geteuid() != 0 and libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
    sys.exit("no_new_privs: " + os.strerror(ctypes.get_errno()))
fd = libc.syscall(317, 1, 8, ctypes.c_char_p(prog))  # seccomp(SET_MODE_FILTER, NEW_LISTENER)
if fd < 0:
    sys.exit("no listener: " + os.strerror(ctypes.get_errno()))
box = os.getpid()
if os.fork() == 0:
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: gone with box
    if os.getppid() == box:
        signal.pause()
    os._exit(0)
os.close(fd)
os.execv(sys.argv[1], sys.argv[1:])
"""


def test_without_a_listener_refusals_still_fail_and_the_run_says_why(tmp_path):
    wrapper = tmp_path / "under_a_listener.py"
    wrapper.write_text(UNDER_A_LISTENER)
    box = Box(tmp_path)
    box.permit_spawn("/usr/bin/python3")
    (box.workspace / "probe.py").write_text(PROBE)
    box.write_config(extra='\n[tool.py]\ncommand = ["/usr/bin/python3"]\n'
                     'filesystem.read = ["~/src/project"]\n'
                     '\n[telemetry.all]\nkind = "file"\n'
                     f'destination = "{tmp_path}/records.jsonl"\n')
    box.start(prefix=("/usr/bin/python3", str(wrapper)))
    try:
        # two launches: the run says so once, not per launch
        for _ in range(2):
            r = box.bash("/usr/bin/python3 probe.py 17,3 2,1 bpf")
            assert r.returncode == 0, r.stderr + box.stderr()
            assert r.stdout.splitlines() == ["17,3 EPERM", "2,1 ran", "bpf EPERM"]
    finally:
        box.stop()
    path = tmp_path / "records.jsonl"
    assert refusals(path) == []
    unobserved = [c for c in control_records(file_entries(path))
                  if c["strands.box.control.operation"] == "refusals_unobserved"]
    assert len(unobserved) == 1, unobserved
    assert unobserved[0]["strands.box.control.subject"] == "seccomp"
    assert unobserved[0]["strands.box.control.reason"] == "EBUSY"
    assert "no seccomp listener" in unobserved[0]["strands.box.control.detail"]
