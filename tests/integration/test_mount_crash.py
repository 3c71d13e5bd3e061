"""Crash safety of the mount: SIGKILL boxd (`box run`) while a tool
writes through the mount and syncs; then
  - no mount is left on the host (boxd's mount lives in its own mount
    namespace, which dies with it) and no box process survives it;
  - every chunk the tool reported synced is on disk, intact;
  - the next `box run` on the same box starts (stale socket cleared) and sees
    the data through its fresh mount."""
import os
import signal
import threading
import time

from conftest import box_processes, host_mounts

WRITER = r"""
import os, sys
CHUNK = 64 * 1024
fd = os.open("crash.dat", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
pf = os.open("crash.progress", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
i = 0
while True:
    os.write(fd, bytes([i % 251]) * CHUNK)
    os.fsync(fd)
    os.write(pf, b"%d\n" % i)   # chunk i is on disk
    os.fsync(pf)
    i += 1
"""


def test_sigkill_boxd_during_writes(box):
    (box.workspace / "writer.py").write_text(WRITER)
    box.start_with_tool("py", "/usr/bin/python3")
    mnt_before = [l for l in host_mounts().splitlines() if "boxfs-mnt" in l]
    done = {}

    def run_writer():
        try:
            done["r"] = box.bash("/usr/bin/python3 writer.py", timeout=60)
        except Exception as e:  # the alias loses its daemon
            done["r"] = e
    t = threading.Thread(target=run_writer)
    t.start()
    progress = box.workspace / "crash.progress"
    deadline = time.time() + 30
    while time.time() < deadline:
        if progress.exists() and progress.read_text().count("\n") >= 20:
            break
        time.sleep(0.05)
    assert progress.exists() and progress.read_text().count("\n") >= 20, (done, box.stderr())
    pid = box.proc.pid
    os.kill(pid, signal.SIGKILL)
    box.proc.wait(timeout=10)
    t.join(timeout=30)
    assert not t.is_alive()

    # no host mount, before or after: the mount was never the host's
    assert mnt_before == []
    assert "boxfs-mnt" not in host_mounts()
    # every process of the box dies with it (PDEATHSIG), writer included
    deadline = time.time() + 10
    while box_processes() and time.time() < deadline:
        time.sleep(0.1)
    assert box_processes() == []

    # what was reported synced is intact
    lines = progress.read_text().splitlines()
    synced = int(lines[-1]) + 1 if lines and lines[-1].strip() else len(lines)
    data = (box.workspace / "crash.dat").read_bytes()
    chunk = 64 * 1024
    assert len(data) >= synced * chunk
    for i in range(synced):
        assert data[i * chunk:(i + 1) * chunk] == bytes([i % 251]) * chunk, f"chunk {i}"

    # a stale socket may remain; the next box run clears it and serves again
    sock = box.box_dir / "run" / "box.sock"
    stale = sock.stat().st_ino if sock.exists() else None
    box.start(wait_socket=False)
    deadline = time.time() + 15
    while time.time() < deadline:
        if sock.exists() and sock.stat().st_ino != stale:
            break
        assert box.proc.poll() is None, box.stderr()
        time.sleep(0.05)
    r = box.bash("wc -c < crash.dat")
    assert r.returncode == 0, r.stderr
    assert int(r.stdout.strip()) == len(data)
    box.stop()
