"""`box mount --config FILE [--rw] MOUNTPOINT`, an operator's
live view of a running box: its roots at their real paths (read-only unless
--rw), /.box/decisions.jsonl following the decision log (tail -f sees new
decisions), /.box/commands/ listing the commands running now (text, cwd,
RAM area), and a clean unmount on SIGINT/SIGTERM; a view whose `box mount`
was SIGKILLed is cleared by the next one."""
import errno
import os
import re
import signal
import subprocess
import threading
import time

import pytest

from conftest import BOX

def mounted_at(path):
    with open("/proc/self/mountinfo") as f:
        return [l for l in f if f" {path} " in l or f" {path}/" in l]


def hidden_views():
    """The hidden mount points root's views make in /tmp, this user's only:
    another user's run (root's, beside an ordinary user's) is not ours."""
    out = []
    for d in os.listdir("/tmp"):
        try:
            if d.startswith("boxfs-opview-") and os.lstat(os.path.join("/tmp", d)).st_uid == os.getuid():
                out.append(d)
        except OSError:
            continue  # gone meanwhile, or another user's view closed to us
    return out


class View:
    def __init__(self, box, mnt, rw=False):
        self.mnt = mnt
        self.err = mnt.parent / f"{mnt.name}.stderr"
        args = [str(BOX), "mount", "--config", str(box.config), *(["--rw"] if rw else []), str(mnt)]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=open(self.err, "wb"), env=box.env())
        deadline = time.time() + 15
        while time.time() < deadline:
            if "box: mounted" in self.stderr():
                return
            if self.proc.poll() is not None:
                raise AssertionError("box mount exited: " + self.stderr())
            time.sleep(0.05)
        raise AssertionError("box mount never mounted: " + self.stderr())

    def stderr(self):
        return self.err.read_text(errors="replace") if self.err.exists() else ""

    def path(self, real):
        return self.mnt / str(real).lstrip("/")

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout=30)


@pytest.fixture
def running(box, tmp_path):
    box.write_policy('permit(principal, action, resource);\n')
    box.write_config()
    box.start()
    mnt = tmp_path / "view"
    mnt.mkdir()
    views = []

    def make(rw=False):
        v = View(box, mnt, rw)
        views.append(v)
        return v
    yield box, make
    for v in views:
        if v.proc.poll() is None:
            v.stop()
    assert not mounted_at(str(mnt))


def test_view_shows_the_roots_read_only_and_unmounts_on_sigterm(running):
    box, make = running
    v = make()
    assert "is not running" not in v.stderr()
    # the agent's hidden .box is listed to the operator
    assert ".box" in os.listdir(v.mnt)
    main = v.path(box.workspace / "src" / "main.rs")
    assert main.read_text() == (box.workspace / "src" / "main.rs").read_text()
    assert sorted(os.listdir(v.path(box.workspace))) == sorted(os.listdir(box.workspace))
    # read-only: the kernel refuses, nothing reaches the workspace
    with pytest.raises(OSError) as e:
        v.path(box.workspace / "new.txt").write_text("x")
    assert e.value.errno == errno.EROFS
    assert not (box.workspace / "new.txt").exists()
    # a change made by the box shows up in the view at once
    r = box.bash("echo from-the-box > made.txt")
    assert r.returncode == 0, r.stderr
    assert v.path(box.workspace / "made.txt").read_text() == "from-the-box\n"
    assert mounted_at(str(v.mnt))
    assert v.stop(signal.SIGTERM) == 0
    assert "box: unmounted" in v.stderr()
    assert not mounted_at(str(v.mnt))
    assert os.listdir(v.mnt) == []
    assert not [d for d in hidden_views() if os.path.ismount(os.path.join("/tmp", d))]


def test_rw_view_writes_through_and_sigint_unmounts(running):
    box, make = running
    v = make(rw=True)
    v.path(box.workspace / "op.txt").write_text("operator\n")
    assert (box.workspace / "op.txt").read_text() == "operator\n"
    r = box.bash("cat op.txt")
    assert (r.returncode, r.stdout) == (0, "operator\n"), r.stderr
    assert v.stop(signal.SIGINT) == 0
    assert not mounted_at(str(v.mnt))


def test_decisions_file_follows_the_log_and_tail_f_works(running):
    box, make = running
    assert box.bash("cat src/main.rs").returncode == 0
    v = make()
    log = box.box_dir / "private" / "telemetry" / "records.jsonl"
    view_log = v.mnt / ".box" / "decisions.jsonl"
    assert view_log.read_bytes() == log.read_bytes()
    assert os.stat(view_log).st_size == os.stat(log).st_size
    tail = subprocess.Popen(["tail", "-n", "0", "-f", str(view_log)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        time.sleep(0.5)
        marker = f"marker-{os.getpid()}-{time.time_ns()}.txt"
        assert box.bash(f"echo x > {marker}").returncode == 0
        got = []
        reader = threading.Thread(target=lambda: got.extend(iter(tail.stdout.readline, "")), daemon=True)
        reader.start()
        deadline = time.time() + 10
        while time.time() < deadline and not any(marker in l for l in got):
            time.sleep(0.1)
        assert any(marker in l for l in got), got[-3:]
    finally:
        tail.kill()
        tail.wait()
    # what the view shows is the file itself, byte for byte, as it grows
    assert view_log.read_bytes() == log.read_bytes()


def test_commands_lists_what_runs_now(running):
    box, make = running
    v = make()
    cmds = v.mnt / ".box" / "commands"
    assert os.listdir(cmds) == []
    result = {}
    t = threading.Thread(target=lambda: result.update(r=box.bash("cd src && sleep 3")))
    t.start()
    try:
        deadline = time.time() + 10
        names = []
        while time.time() < deadline and not names:
            names = os.listdir(cmds)
            time.sleep(0.05)
        assert len(names) == 1, names
        text = ""
        deadline = time.time() + 5
        while time.time() < deadline and f"cwd: {box.workspace}/src\n" not in text:
            text = (cmds / names[0]).read_text()
            time.sleep(0.05)
        assert "text: cd src && sleep 3\n" in text
        assert f"cwd: {box.workspace}/src\n" in text
        # the RAM root lent to the command (a slot, reused after it ends)
        assert re.search(r"^ram: /ram/c\d+ \(lifetime: command", text, re.M), text
    finally:
        t.join()
    assert result["r"].returncode == 0, result["r"].stderr
    deadline = time.time() + 5
    while time.time() < deadline and os.listdir(cmds):
        time.sleep(0.05)
    assert os.listdir(cmds) == []
    with pytest.raises(FileNotFoundError):
        (cmds / names[0]).read_text()


def test_view_killed_by_sigkill_is_cleared_by_the_next(running):
    box, make = running
    v = make()
    v.stop(signal.SIGKILL)
    assert mounted_at(str(v.mnt))  # left behind, its daemon gone
    with pytest.raises(OSError) as e:
        os.listdir(v.mnt)
    assert e.value.errno == errno.ENOTCONN
    w = make()
    assert w.path(box.workspace / "src" / "main.rs").read_text().startswith("fn main")
    assert w.stop() == 0
    assert not mounted_at(str(v.mnt))
    assert not hidden_views()


def test_view_stops_while_another_namespace_holds_a_copy(running):
    # a mount namespace made while the view is mounted (as every box started
    # meanwhile makes) copies its mounts, and with them its connections
    box, make = running
    v = make()
    copy = subprocess.Popen(["unshare", "--user", "--map-root-user", "--mount", "sleep", "600"],
                            stdin=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        held = False
        while time.time() < deadline and not held:
            try:
                with open(f"/proc/{copy.pid}/mountinfo") as f:
                    held = f" {v.mnt} " in f.read()
            except OSError:
                pass
            if not held:
                assert copy.poll() is None, "unshare failed"
                time.sleep(0.05)
        assert held
        assert v.stop(signal.SIGTERM) == 0
        assert "box: unmounted" in v.stderr()
        assert not mounted_at(str(v.mnt))
    finally:
        copy.kill()
        copy.wait()


def test_view_of_a_box_not_running_says_so(box, tmp_path):
    box.write_policy('permit(principal, action, resource);\n')
    box.write_config()
    mnt = tmp_path / "view"
    mnt.mkdir()
    v = View(box, mnt)
    try:
        assert "box: box test is not running:" in v.stderr()
        assert {"commands", "decisions.jsonl"} <= set(os.listdir(v.mnt / ".box"))
        assert os.listdir(v.mnt / ".box" / "commands") == []
        assert v.path(box.workspace / "src" / "main.rs").read_text().startswith("fn main")
    finally:
        assert v.stop() == 0
    assert not mounted_at(str(mnt))


def test_mount_usage_errors(box, tmp_path):
    r = subprocess.run([str(BOX), "mount", "--config", str(box.config)], capture_output=True,
                       text=True, env=box.env())
    assert r.returncode == 2
    assert "Usage: box mount --config FILE [--rw] MOUNTPOINT" in r.stderr
    box.write_policy('permit(principal, action, resource);\n')
    box.write_config()
    r = subprocess.run([str(BOX), "mount", "--config", str(box.config), str(tmp_path / "nope")],
                       capture_output=True, text=True, env=box.env())
    assert r.returncode == 1
    assert "is not an existing directory" in r.stderr


def test_view_shows_each_checkpoint_read_only(running):
    box, make = running
    assert box.bash("mkdir -p d && printf 'one\\n' > d/f && chmod +x d/f && "
                    "ln -s d/f ln").returncode == 0
    assert box.bash("printf 'two\\n' > d/f && echo x > x").returncode == 0
    repo = ["git", "--git-dir", str(box.box_dir / "private" / "checkpoints.git")]
    deadline = time.time() + 30
    while time.time() < deadline:
        r = subprocess.run([*repo, "rev-list", "HEAD"], capture_output=True, text=True)
        if len(r.stdout.split()) == 3:
            break
        time.sleep(0.05)
    start, first, second = reversed(r.stdout.split())
    v = make()
    ck = v.mnt / ".box" / "checkpoints"
    assert "checkpoints" in os.listdir(v.mnt / ".box")
    assert os.listdir(ck) == ["log", second, first, start]
    # the view's user owns them, as the rest of the view
    assert os.stat(ck).st_uid == os.getuid() and os.stat(ck / "log").st_uid == os.getuid()
    # the log is `box checkpoints`'s
    listed = subprocess.run([str(BOX), "checkpoints", "--config", str(box.config)],
                            capture_output=True, text=True, env=box.env()).stdout
    assert (ck / "log").read_text() == listed and second[:12] in listed
    # each checkpoint's tree, as git keeps it, with its modes less write
    one = ck / first
    assert (one / "d" / "f").read_text() == "one\n"
    assert (ck / second / "d" / "f").read_text() == "two\n"
    assert not (one / "x").exists() and (ck / second / "x").read_text() == "x\n"
    assert os.readlink(one / "ln") == "d/f" and (one / "ln").read_text() == "one\n"
    assert oct(os.lstat(one / "d" / "f").st_mode & 0o7777) == "0o555"
    assert oct(os.lstat(one / "d").st_mode & 0o7777) == "0o555"
    tree = sorted(subprocess.run([*repo, "ls-tree", "-r", "--name-only", first],
                                 capture_output=True, text=True).stdout.split())
    walked = sorted(os.path.relpath(os.path.join(dp, f), one)
                    for dp, dns, fns in os.walk(one) for f in fns + [d for d in dns
                                                                      if os.path.islink(os.path.join(dp, d))])
    assert walked == tree
    # the 12 digits the log shows name a checkpoint too
    assert (ck / second[:12] / "d" / "f").read_text() == "two\n"
    # read-only
    for attempt in (lambda: (one / "d" / "f").write_text("no"),
                    lambda: (one / "new").write_text("no"),
                    lambda: os.unlink(one / "d" / "f"),
                    lambda: os.mkdir(one / "m"),
                    lambda: os.chmod(one / "d" / "f", 0o777),
                    lambda: open(one / "d" / "f", "r+")):
        with pytest.raises(OSError) as e:
            attempt()
        assert e.value.errno == errno.EROFS
    # a checkpoint made while the view is mounted appears in it
    assert box.bash("echo three > three").returncode == 0
    deadline = time.time() + 30
    while len(os.listdir(ck)) < 5 and time.time() < deadline:
        time.sleep(0.05)
    newest = os.listdir(ck)[1]
    assert (ck / newest / "three").read_text() == "three\n"
    assert newest[:12] in (ck / "log").read_text()
    assert v.stop() == 0
    assert not mounted_at(str(v.mnt))
