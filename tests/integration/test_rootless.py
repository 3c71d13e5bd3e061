"""box run for an ordinary user: refused, it says which setting refuses it.

Root sets the machine up as an administrator would have (a /dev/fuse of mode
0600, user namespaces limited to none) in namespaces of the test's own, then
runs box as uid 1000 there; and a box of uid 1000's whose mount fusermount3
makes.  The other runs that work are CI's unprivileged runs of the suites
(.ci/run)."""
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import BOX, Box, host_mounts

pytestmark = pytest.mark.root_only(reason="sets the machine up as its administrator")

USER = ["setpriv", "--reuid", "1000", "--regid", "1000", "--clear-groups"]


def fuse_of_mode(tmp_path, mode):
    """A shell line that puts a /dev/fuse of mode over the real one (in the
    mount namespace it runs in)."""
    node = tmp_path / "fuse"
    return (f"mknod {node} c 10 229 && chmod {mode:o} {node} && "
            f"mount --bind {node} /dev/fuse")


# A user namespace of the test's, every uid below 65536 mapped to itself
# (written by the parent, root outside), whose root lets none be made below
# it; then uid 1000 runs argv there.
IN_USERNS = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(w)
    if libc.unshare(0x10000000) != 0:
        os._exit(90)
    os.read(r, 1)
    with open("/proc/sys/user/max_user_namespaces", "w") as f:
        f.write("0")
    os.setgroups([])
    os.setresgid(1000, 1000, 1000)
    os.setresuid(1000, 1000, 1000)
    os.execvp(sys.argv[1], sys.argv[1:])
os.close(r)
import time
for _ in range(200):
    if os.readlink(f"/proc/{pid}/ns/user") != os.readlink("/proc/self/ns/user"):
        break
    time.sleep(0.01)
for m in ("uid_map", "gid_map"):
    with open(f"/proc/{pid}/{m}", "w") as f:
        f.write("0 0 65536")
os.write(w, b"g")
_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st))
"""


def run_as_user(tmp_path, setup, in_userns=False):
    config = tmp_path / "box.toml"
    config.write_text("")
    os.chmod(tmp_path, 0o755)
    box = [str(BOX), "run", "--config", str(config)]
    if in_userns:
        helper = tmp_path / "in_userns.py"
        helper.write_text(IN_USERNS)
        argv = ["/usr/bin/python3", str(helper), *box]
    else:
        argv = [*USER, *box]
    script = f'{setup} && exec "$@"'
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                           "sh", *argv], capture_output=True, text=True, timeout=30, cwd="/")


def test_unusable_dev_fuse_is_named_with_its_fix(tmp_path):
    r = run_as_user(tmp_path, fuse_of_mode(tmp_path, 0o600))
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith("box: error: /dev/fuse cannot be opened by uid 1000 "
                               "(Permission denied)"), r.stderr
    assert "chmod 0666 /dev/fuse" in r.stderr
    # no route around it: Debian's fusermount3 opens the device as the user
    assert "fusermount3 opens the device as the user too" in r.stderr


def test_refused_user_namespace_names_the_sysctl(tmp_path):
    r = run_as_user(tmp_path, fuse_of_mode(tmp_path, 0o666), in_userns=True)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith("box: error: box needs an unprivileged user namespace, which "
                               "user.max_user_namespaces=0 refuses"), r.stderr
    assert "sysctl -w user.max_user_namespaces=" in r.stderr


def fusermount_mounts():
    """The host's mounts fusermount3 made for box (a private directory of
    the user's, box-fuse-*)."""
    return [line for line in host_mounts().splitlines()
            if " - fuse.boxfs " in line and "/box-fuse-" in line]


@pytest.fixture
def user_box():
    """A box whose files are uid 1000's, in a directory it may reach (the
    test's own tmp_path lies below one closed to it)."""
    root = Path(tempfile.mkdtemp(prefix="boxfs-user-"))
    os.chmod(root, 0o755)
    b = Box(root)
    yield b
    b.teardown()
    shutil.rmtree(root, ignore_errors=True)


def test_mount_through_fusermount3_runs_commands_and_goes_with_the_box(user_box):
    box = user_box
    box.seed_policy()
    box.write_config()
    subprocess.run(["chown", "-R", "1000:1000", str(box.root)], check=True)
    before = fusermount_mounts()
    box.start(prefix=[*USER, "env", "BOXFS_MOUNT=fusermount3"])
    made = [m for m in fusermount_mounts() if m not in before]
    assert len(made) == 1, box.stderr()
    # fusermount3's mount, the user's, in the host's namespaces
    assert "user_id=1000,group_id=1000" in made[0]
    # the user's own processes on the host find the place, not the box
    where = made[0].split()[4]
    seen = subprocess.run([*USER, "ls", f"{where}/pass"], capture_output=True, text=True)
    assert seen.returncode != 0 and "Permission denied" in seen.stderr, seen
    r = box.bash("echo hi > out.txt && cat out.txt && ls -ln out.txt")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "hi"
    # the user is uid 0 inside, on both sides of the connection
    assert lines[1].split()[2:4] == ["0", "0"], r.stdout
    st = os.stat(box.workspace / "out.txt")
    assert (st.st_uid, st.st_gid) == (1000, 1000)
    assert box.stop() == 128 + signal.SIGTERM
    # the watcher detaches the mount, then removes its directory
    place = os.path.dirname(made[0].split()[4])
    for _ in range(100):
        if not [m for m in fusermount_mounts() if m not in before] and not os.path.exists(place):
            break
        time.sleep(0.05)
    assert [m for m in fusermount_mounts() if m not in before] == []
    assert not os.path.exists(place)


def demo_transcript(argv):
    """`box demo`'s output with its temporary directory named <demo> and the
    environment lines (PATH is the caller's) left out: what the agent ran,
    what it saw and every decision."""
    r = subprocess.run([*argv, str(BOX), "demo"], capture_output=True, text=True, timeout=120,
                       cwd="/", env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"})
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout + r.stderr
    place = out.split("operator home ", 1)[1].split("/home,", 1)[0]
    assert place.startswith("/tmp/boxfs-demo-"), out
    shutil.rmtree(place, ignore_errors=True)
    return [line.replace(place, "<demo>") for line in out.splitlines() if " PATH=" not in line]


def test_demo_as_a_user_prints_the_decisions_root_does():
    as_root = demo_transcript([])
    as_user = demo_transcript(USER)
    log = as_root.index(next(x for x in as_root if x.startswith("Decision log")))
    decisions = [x for x in as_root[log + 1:] if x.startswith(("  permit ", "  deny "))]
    # the demo's refusals and permits are all there, then compared whole
    assert any(x.startswith("  deny   fs:read      ~/.ssh") for x in decisions), as_root
    assert len(decisions) >= 10, as_root
    assert as_user == as_root
