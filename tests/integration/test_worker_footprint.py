"""The Shell's zygote stays small: every command's worker is forked from it,
so each of its mappings is copied into the worker at fork and torn down at
its exit, and each page of its heap is copied into the worker's page tables
and faulted on, copy on write, when the worker's malloc reuses it.  Both are
paid by every command (bench/roundtrip counts the faults per command)."""
import os
import re
import signal
import time

from conftest import ALLOW_ALL, Box, permissive_box, zygotes


def shell_zygote(boxd_pid):
    shell = [pid for pid, argv in zygotes(boxd_pid).items() if b"--warm-python" not in argv]
    assert len(shell) == 1, shell
    return shell[0]


def heap_anonymous_kib(pid):
    """The kB of the heap's pages the process has touched and not returned."""
    in_heap = False
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            first = line.split()[0]
            if "-" in first and not first.endswith(":"):
                in_heap = line.rstrip().endswith("[heap]")
            elif in_heap and first == "Anonymous:":
                return int(line.split()[1])
    return 0


def test_the_zygote_hands_its_freed_heap_back_before_it_forks(tmp_path):
    b = permissive_box(tmp_path)
    try:
        for _ in range(5):  # a few forks' requests through its heap as well
            assert b.bash("true").returncode == 0
        zygote = shell_zygote(b.proc.pid)
        # what compiling the seccomp filter freed (~250 kB) is not in it
        assert heap_anonymous_kib(zygote) <= 160, heap_anonymous_kib(zygote)
    finally:
        b.teardown()


def test_the_zygote_maps_few_files_and_no_library_it_links_statically(tmp_path):
    b = permissive_box(tmp_path)
    try:
        assert b.bash("true").returncode == 0
        with open(f"/proc/{shell_zygote(b.proc.pid)}/maps") as f:
            maps = f.read().splitlines()
        # box/meson.build: GLib, json-c, Lua, libcap and libseccomp are in
        # box-shell itself, five mappings fewer each
        for lib in ("libglib-2.0", "libjson-c", "liblua5.4", "libcap", "libseccomp"):
            assert not any(lib in m for m in maps), lib
        assert len(maps) <= 50, len(maps)
    finally:
        b.teardown()


def test_a_command_costs_boxd_no_file_call_it_can_spare(tmp_path):
    """`box mount`'s record of a command (live/<N>.json) is written only once
    the command has run 10 ms: one that ends sooner has none to remove.  And
    the checkpoints' lock file is opened once, not by every command."""
    b = Box(tmp_path)
    b.write_policy(ALLOW_ALL)
    b.write_config()
    trace = tmp_path / "strace.out"
    b.start(prefix=("strace", "-f", "-qq", "-e", "trace=unlink,rename,openat", "-o", str(trace)))
    # strace detaches from `box run` when it is signalled, leaving the box
    # running (and counted by every later box_processes()): the box itself
    # is ended, and strace with it
    with open(f"/proc/{b.proc.pid}/task/{b.proc.pid}/children") as f:
        boxd = int(f.read().split()[0])
    try:
        for _ in range(5):
            assert b.bash("true").returncode == 0
        assert b.bash("sleep 0.3").returncode == 0  # this one is published
    finally:
        os.kill(boxd, signal.SIGTERM)
        b.proc.wait(timeout=30)
    assert not os.path.exists(f"/proc/{boxd}")
    text = trace.read_text()
    live = re.compile(r'(rename)\("[^"]*", "([^"]*/live/\d+\.json)"|(unlink)\("([^"]*/live/\d+\.json)"')
    written, removed = set(), []
    for line in text.splitlines():
        m = live.search(line)
        if m and m.group(1) == "rename":
            written.add(m.group(2))
        elif m and m.group(3) == "unlink":
            removed.append(m.group(4))
    assert written, text[-2000:]
    assert [p for p in removed if p not in written] == [], (written, removed)
    # once at start to clear what a killed run left, once to keep
    assert text.count("checkpoints.lock") <= 2, text.count("checkpoints.lock")


def minor_faults(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[7])


def test_the_zygote_writes_few_pages_between_forks(tmp_path):
    """Each fork shares every page of the zygote with the new worker, so each
    page the zygote writes before the next fork is copied then: it only
    receives a fork request and answers it (the worker parses it)."""
    b = permissive_box(tmp_path)
    try:
        for _ in range(5):
            assert b.bash("true").returncode == 0
        zygote = shell_zygote(b.proc.pid)
        before = minor_faults(zygote)
        for _ in range(20):
            assert b.bash("true").returncode == 0
        per_fork = (minor_faults(zygote) - before) / 20
        assert per_fork <= 10, per_fork
    finally:
        b.teardown()


def voluntary_switches(pid, tid):
    with open(f"/proc/{pid}/task/{tid}/status") as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    raise AssertionError(f"no switch count for thread {tid}")


def test_an_idle_boxd_s_main_thread_sleeps_until_a_signal(tmp_path):
    """boxd's main thread waits for the agent's end woken by SIGCHLD (also
    when another thread reaped the agent), not by a 100 ms clock; the box
    still ends when its agent does."""
    b = permissive_box(tmp_path)
    try:
        assert b.bash("true").returncode == 0
        time.sleep(0.3)
        before = voluntary_switches(b.proc.pid, b.proc.pid)
        time.sleep(1.0)
        assert voluntary_switches(b.proc.pid, b.proc.pid) - before <= 1
        assert b.stop() == 128 + signal.SIGTERM
    finally:
        b.teardown()


FUSE_LOOKUP = 1


def fuse_lookups(strace_text):
    """The names of the LOOKUP requests a strace -xx of boxd's reads of
    /dev/fuse shows (a request: length, opcode, ..., the name at byte 40),
    a blocked read's data on its "resumed" line."""
    names = []
    read = r'(?:read\(\d+, |<\.\.\. read resumed>)"((?:\\x[0-9a-f]{2})+)"(?:\.\.\.)?, \d+\) = (\d+)'
    for m in re.finditer(read, strace_text):
        data = bytes.fromhex(m.group(1).replace("\\x", ""))
        if len(data) < 41 or int.from_bytes(data[:4], "little") != int(m.group(2)):
            continue
        if int.from_bytes(data[4:8], "little") == FUSE_LOOKUP:
            names.append(data[40:].split(b"\0")[0].decode(errors="replace"))
    return names


def test_a_worker_joining_its_area_asks_the_mount_no_lookup_of_the_workspace(tmp_path):
    """A worker that joins the namespace an earlier worker built around its
    RAM area enters the workspace by that worker's descriptor of it: a walk
    of its path asked the mount to LOOKUP its ancestors again once their
    entries had expired (a second), round trips to boxd for each worker
    prepared after an agent's pause."""
    b = Box(tmp_path)
    b.write_policy(ALLOW_ALL)
    b.write_config()
    trace = tmp_path / "strace.out"
    b.start(prefix=("strace", "-f", "-qq", "-xx", "-s", "96", "-e", "trace=read,pivot_root",
                    "-o", str(trace)))
    with open(f"/proc/{b.proc.pid}/task/{b.proc.pid}/children") as f:
        boxd = int(f.read().split()[0])
    try:
        # the areas' namespaces built, and their builders' walks traced
        for _ in range(12):
            assert b.bash("true").returncode == 0
        text = trace.read_text()
        assert fuse_lookups(text)  # the trace does show the builders' walks
        before = len(text)
        for _ in range(4):
            # past the second the mount's entries are kept for: a walk
            # would ask again
            time.sleep(1.2)
            assert b.bash("true").returncode == 0
        window = trace.read_text()[before:]
        components = str(b.workspace).strip("/").split("/")
        walked = [n for n in fuse_lookups(window) if n in components]
        # a worker that built a namespace of its own (another area's, under
        # load) walks to its binds and the workspace, and only such a one
        built = window.count("pivot_root(")
        assert len(walked) <= built * 2 * len(components) + 1, (walked, built)
        # and the workspace is where each command starts
        assert b.bash("pwd").stdout.strip() == str(b.workspace)
    finally:
        os.kill(boxd, signal.SIGTERM)
        b.proc.wait(timeout=30)


def test_a_workspace_made_anew_is_where_the_next_workers_start(tmp_path):
    """The workers that join an area's namespace enter the workspace by a
    descriptor kept from the first: one removed and made anew, or moved
    aside, is walked to by its path again (the workers already waiting in
    the pool started before the change, as they always did)."""
    b = permissive_box(tmp_path)
    try:
        for _ in range(12):
            assert b.bash("true").returncode == 0
        r = b.bash("cd .. && rm -rf project && mkdir project && echo new > project/f")
        assert r.returncode == 0, r.stderr
        outs = [b.bash("cat f").stdout for _ in range(12)]
        assert outs[-6:] == ["new\n"] * 6, outs
        r = b.bash("cd .. && mv project aside && mkdir project && echo newer > project/f")
        assert r.returncode == 0, r.stderr
        outs = [b.bash("cat f").stdout for _ in range(12)]
        assert outs[-6:] == ["newer\n"] * 6, outs
    finally:
        b.teardown()


def test_a_builtin_in_a_loop_costs_one_message_to_boxd(tmp_path):
    """Each command a worker runs is one decision asked of boxd; its exit
    status (which history rules read) rides on the next request or on the
    command's "exit", never in a message of its own: a loop of builtins
    wakes boxd once an iteration, not twice."""
    b = Box(tmp_path)
    b.write_policy(ALLOW_ALL)
    b.write_config()
    trace = tmp_path / "strace.out"
    b.start(prefix=("strace", "-f", "-qq", "-s", "40", "-e", "trace=sendmsg", "-o", str(trace)))
    with open(f"/proc/{b.proc.pid}/task/{b.proc.pid}/children") as f:
        boxd = int(f.read().split()[0])
    try:
        r = b.bash("for i in 1 2 3 4 5 6 7 8 9 10; do [ $i = 4 ]; done; echo $?")
        assert (r.returncode, r.stdout) == (0, "1\n"), r
    finally:
        os.kill(boxd, signal.SIGTERM)
        b.proc.wait(timeout=30)
    text = trace.read_text()
    decides = re.findall(r'sendmsg\(\d+, \{msg_name=NULL, msg_namelen=0, msg_iov=\[\{iov_base="\{\\"op\\":\\"decide\\"', text)
    statuses = re.findall(r'iov_base="\{\\"op\\":\\"status\\"', text)
    # ten `[` and one `echo`
    assert len(decides) == 11, text[-3000:]
    assert statuses == [], text[-3000:]
