"""The Shell's zygote stays small: every command's worker is forked from it,
so each of its mappings is copied into the worker at fork and torn down at
its exit, and each page of its heap is copied into the worker's page tables
and faulted on, copy on write, when the worker's malloc reuses it.  Both are
paid by every command (bench/roundtrip counts the faults per command)."""
from conftest import children_of, permissive_box


def shell_zygote(boxd_pid):
    for pid in children_of(boxd_pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if b"--zygote" in argv and b"--warm-python" not in argv:
            return pid
    raise AssertionError("no Shell zygote")


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
