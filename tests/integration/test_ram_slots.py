"""A command's RAM root is a slot lent to one command at a
time.  What a command makes in it goes when it ends, the slot's layout
(/tmp, /home, /dev, the roots' directory chain) cannot be moved or removed
and gets its modes back, and the workers of a slot join the mount
namespace its first worker built instead of building their own."""
import os
import threading
import time

from conftest import BOX_SHELL, parent_of

DIRTY = ("echo mark > /mark; mkdir /newdir; echo secret > /tmp/secret; "
         "mkdir -p /tmp/d/e; echo deep > /tmp/d/e/f; chmod 700 /tmp /home; "
         "ln -s /tmp/secret /link")
LOOK = "ls -A /; ls -A /tmp; ls -ld /tmp /home /dev | while read m rest; do echo $m; done"


def start(box):
    box.write_policy('permit(principal, action, resource);\n')
    box.write_config()
    box.start()


def test_each_command_gets_a_clean_root(box):
    start(box)
    first = box.bash(LOOK)
    assert first.returncode == 0, first.stderr
    assert "mark" not in first.stdout and "secret" not in first.stdout
    assert first.stdout.endswith("drwxr-xr-x\ndrwxr-xr-x\ndrwxrwxrwt\n"), first.stdout
    # more commands than the pool has slots, so every slot is reused
    for i in range(10):
        r = box.bash(DIRTY + "; cat /mark /tmp/d/e/f")
        assert (r.returncode, r.stdout) == (0, "mark\ndeep\n"), r.stderr
        r = box.bash(LOOK)
        assert (r.returncode, r.stdout) == (0, first.stdout), (i, r.stderr)
        r = box.bash("cat /mark /tmp/secret")
        assert r.returncode == 1
        assert "/mark" in r.stderr and "/tmp/secret" in r.stderr


def test_the_layout_cannot_be_moved_or_removed(box):
    start(box)
    r = box.bash("mv /dev /tmp/d2")
    assert r.returncode == 1
    assert r.stderr == "mv: cannot move '/dev' to '/tmp/d2': Device or resource busy\n"
    r = box.bash("rmdir /home")
    assert r.returncode == 1
    assert r.stderr == "rmdir: failed to remove '/home': Device or resource busy\n"
    r = box.bash("mv /tmp /t2")
    assert r.returncode == 1 and "Device or resource busy" in r.stderr
    for _ in range(4):
        r = box.bash("ls -d /dev /home /tmp; echo x > /dev/null && echo null")
        assert (r.returncode, r.stdout) == (0, "/dev\n/home\n/tmp\nnull\n"), r.stderr


def worker_namespaces(zygote_exe, stop, seen, held):
    """Samples the zygote's children: pid -> mount namespace.  Each
    namespace seen is held open, so that its number is not reused."""
    while not stop.is_set():
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                ppid = parent_of(entry)
                if os.readlink(f"/proc/{entry}/exe") != zygote_exe:
                    continue
                if os.readlink(f"/proc/{ppid}/exe") != zygote_exe:
                    continue
                if int(entry) not in seen:
                    fd = os.open(f"/proc/{entry}/ns/mnt", os.O_RDONLY)
                    held.append(fd)
                    seen[int(entry)] = os.fstat(fd).st_ino
            except (OSError, IndexError, ValueError):
                continue
        time.sleep(0.01)


def test_workers_of_a_slot_share_its_mount_namespace(box):
    start(box)
    seen, held = {}, []
    stop = threading.Event()
    t = threading.Thread(target=worker_namespaces,
                         args=(str(BOX_SHELL.resolve()), stop, seen, held))
    t.start()
    try:
        for _ in range(16):
            r = box.bash("sleep 0.1; ls / > /dev/null")
            assert r.returncode == 0, r.stderr
    finally:
        stop.set()
        t.join()
        for fd in held:
            os.close(fd)
    host = os.stat("/proc/self/ns/mnt").st_ino
    # a worker forked to join its slot's namespace is in the zygote's
    # (the host's) until it does
    spaces = {ns for ns in seen.values() if ns != host}
    assert len(seen) >= 16, seen
    # one namespace per slot: the pool's three, the running command's and
    # the one still being reset, not one per worker
    assert 1 <= len(spaces) <= 6, (len(seen), spaces)


def test_commands_at_once_each_see_only_their_own_ram(box):
    start(box)
    chain = box.bash("ls -A /tmp").stdout  # the roots' directory chain, if any
    failures = []

    def one(k):
        for i in range(5):
            token = f"t{k}-{i}"
            r = box.bash(f"echo {token} > /tmp/{token}; echo {token} > /{token}; sleep 0.05; "
                         f"cat /tmp/{token} /{token}; ls -A /tmp; ls -A / | grep -c '^t[0-9]'")
            lines = r.stdout.split("\n")
            ok = (r.returncode == 0 and lines[:2] == [token, token]
                  and sorted(lines[2:-2]) == sorted(chain.split("\n")[:-1] + [token])
                  and lines[-2] == "1")
            if not ok:
                failures.append((token, r.returncode, r.stdout, r.stderr))

    threads = [threading.Thread(target=one, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
