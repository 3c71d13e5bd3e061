"""Real tools through [tool.*] tables, and what a planted symlink or a
rename race can (not) add to a tool's view."""
import os
import re
import subprocess
import textwrap
import threading
import time

from conftest import BOX, PERMIT_TMP

def test_git_clone_commit_log(box):
    bare = box.home / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(box.workspace), str(bare)], check=True)
    box.permit_spawn("git")
    box.write_config()
    box.config.write_text(box.config.read_text().replace(
        'filesystem.write = ["~/src/project"]',
        'filesystem.write = ["~/src/project"]\nfilesystem.read = ["~/bare.git"]\n'
        'env = { GIT_AUTHOR_NAME = "a", GIT_AUTHOR_EMAIL = "a@a", GIT_COMMITTER_NAME = "a", '
        'GIT_COMMITTER_EMAIL = "a@a" }'))
    box.start()
    r = box.bash(f"git clone -q {bare} clone")
    assert r.returncode == 0, r.stderr
    assert (box.workspace / "clone" / "src" / "main.rs").exists()
    r = box.bash("cd clone && echo change > new.txt && git add new.txt && "
                 "git commit -q -m from-the-box && git log --format=%s")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["from-the-box", "init"]
    host_log = subprocess.run(["git", "log", "--format=%s"], cwd=box.workspace / "clone",
                              capture_output=True, text=True, check=True).stdout
    assert host_log.splitlines() == ["from-the-box", "init"]
    # The bare repository is a read view: pushing to it fails.
    r = box.bash("cd clone && git push -q origin HEAD:refs/heads/other")
    assert r.returncode != 0
    assert "Read-only file system" in r.stderr or "unable" in r.stderr


def test_make_cc_builds_and_runs(box):
    (box.workspace / "hello.c").write_text(
        '#include <stdio.h>\nint main(void) { printf("built in the box\\n"); return 0; }\n')
    (box.workspace / "Makefile").write_text(
        "run: hello\n\t./hello > out.txt\nhello: hello.c\n\tcc -O1 -o hello hello.c\n")
    box.start_with_tool("make", "make", extra=PERMIT_TMP)
    r = box.bash("make run")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (box.workspace / "out.txt").read_text() == "built in the box\n"
    assert "cc -O1 -o hello hello.c" in r.stdout


def test_python_reads_and_writes_workspace(box):
    (box.workspace / "data.txt").write_text("3\n4\n5\n")
    (box.workspace / "sum.py").write_text(textwrap.dedent("""\
        import os
        total = sum(int(x) for x in open("data.txt"))
        open("result.txt", "w").write(f"{total}\\n")
        print("sum", total, os.getcwd())
        """))
    box.start_with_tool("py", "/usr/bin/python3")
    r = box.bash("/usr/bin/python3 sum.py")
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"sum 12 {box.workspace}\n"
    assert (box.workspace / "result.txt").read_text() == "12\n"


def test_tool_status_and_signal_status(box):
    box.permit_spawn("/usr/bin/python3")
    box.write_config(extra='\n[tool.py]\ncommand = ["/usr/bin/python3"]\n')
    box.start()
    assert box.bash("/usr/bin/python3 -c 'raise SystemExit(7)'").returncode == 7
    r = box.bash("/usr/bin/python3 -c 'import os; os.kill(os.getpid(), 9)'")
    assert r.returncode == 128 + 9


def test_planted_symlink_does_not_widen(box):
    """A symlink planted in a granted tree (by the agent, or any writer) names
    nothing outside the view; a grant spelled through a link is refused."""
    (box.home / "private.txt").write_text("private\n")
    sub = box.workspace / "sub"
    sub.mkdir()
    os.symlink(box.home / "private.txt", sub / "link-out")
    os.symlink("../src", sub / "link-sibling")
    box.permit_spawn("/usr/bin/python3")
    box.write_config(extra='\n[tool.py]\ncommand = ["/usr/bin/python3"]\n'
                           'filesystem.read = ["~/src/project/sub"]\n')
    box.start()
    probe = ("import os\n"
             "for p in ['link-out', 'link-sibling/main.rs']:\n"
             "    try:\n"
             "        open(os.path.join(%r, p)).read(); print(p, 'ESCAPED')\n"
             "    except OSError as e:\n"
             "        print(p, e.errno)\n") % str(sub)
    # Only sub is in this tool's view: the probe lives there.
    (sub / "probe.py").write_text(probe)
    r = box.bash("cd sub && /usr/bin/python3 probe.py")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "link-out 2\nlink-sibling/main.rs 2\n"
    box.stop()
    # A grant spelled through a link is refused at startup.
    os.symlink(sub, box.workspace / "sub-link")
    box.config.write_text(box.config.read_text().replace('"~/src/project/sub"',
                                                         '"~/src/project/sub-link"'))
    proc = subprocess.run([str(BOX), "run", "--config", str(box.config)],
                          capture_output=True, text=True, env=box.env(), timeout=30)
    assert proc.returncode == 1
    assert "is a symbolic link. A grant carries the identity the kernel checks" in proc.stderr


def assert_never_wider(status, out, err):
    assert "private.txt" not in out, (status, out, err)
    assert "src" not in out, (status, out, err)
    if status == 0:
        assert out == "['marker.txt']", (status, out, err)
        return
    # Refused at the plan (126), by the sandbox's own no-symlink resolution
    # of the bind source (127), launched while the name was absent (the
    # grant binds nothing: ENOENT), or bound to the directory the name held
    # a moment before, which the mount then no longer reaches at that name
    # (ESTALE) or refuses (EACCES): never wider.
    assert out == "", (status, out, err)
    assert status in (126, 127) or any(
        m in err for m in ("No such file or directory", "Permission denied",
                           "Stale file handle")), (status, out, err)


def test_rename_race_cannot_widen_a_view(box):
    """While tools start again and again, the granted directory is swapped with a
    symlink to the home and back.  Every launch either sees the real grant or
    refuses to start; none sees the home."""
    (box.home / "private.txt").write_text("private\n")
    grant = box.workspace / "grant"
    grant.mkdir()
    (grant / "marker.txt").write_text("grant\n")
    box.permit_spawn("/usr/bin/python3")
    box.write_config(extra='\n[tool.py]\ncommand = ["/usr/bin/python3"]\n'
                           'filesystem.read = ["~/src/project/grant"]\n')
    box.start()
    stop = threading.Event()
    swapped = box.workspace / "grant-real"
    link = box.workspace / "grant-link"

    def racer():
        while not stop.is_set():
            try:
                os.symlink(box.home, link)
                os.rename(grant, swapped)
                os.rename(link, grant)
                time.sleep(0.001)
                os.rename(grant, link)
                os.rename(swapped, grant)
                os.unlink(link)
            except OSError:
                pass

    t = threading.Thread(target=racer)
    t.start()
    seen = []
    try:
        for _ in range(25):
            r = box.bash(f"/usr/bin/python3 -c \"import os; "
                         f"print(sorted(os.listdir('{grant}')))\"")
            seen.append((r.returncode, r.stdout.strip(), r.stderr.strip()))
    finally:
        stop.set()
        t.join()
    for status, out, err in seen:
        assert_never_wider(status, out, err)
    # With the race over, the grant is itself again.  The renames happened
    # outside the mount, so the kernel may hold a name of the mount's
    # /pass tree that one of them made stale until its entry times out
    # (1 s): until then a launch is refused (127: the bind source resolves
    # to a link) or the bound tree answers ESTALE, never wider.  Poll for
    # it rather than sleep a guessed time.
    listing = f"/usr/bin/python3 -c \"import os; print(sorted(os.listdir('{grant}')))\""
    deadline = time.monotonic() + 15
    while True:
        r = box.bash(listing)
        if (r.returncode, r.stdout) == (0, "['marker.txt']\n"):
            break
        assert_never_wider(r.returncode, r.stdout.strip(), r.stderr.strip())
        assert time.monotonic() < deadline, (r.returncode, r.stdout, r.stderr)
        time.sleep(0.1)


MOUNTS = r"""
import json, os
rows = []
for line in open("/proc/self/mountinfo"):
    pre, post = line.split(" - ", 1)
    f = pre.split()
    fstype, source = post.split()[:2]
    opts = sorted(o for o in f[5].split(",") if o in ("ro", "rw", "nosuid", "nodev", "noexec"))
    rows.append([f[4], f[3], fstype, source, opts])
print(json.dumps(rows))
"""


def view_config(box):
    (box.home / "ro").mkdir()
    (box.home / "ro" / "file.txt").write_text("ro\n")
    (box.workspace / "denied").mkdir()
    (box.workspace / "denied" / "secret.txt").write_text("no\n")
    (box.workspace / "mounts.py").write_text(MOUNTS)
    box.permit_spawn("/usr/bin/python3", extra=PERMIT_TMP)
    box.write_config(extra='\n[tool.py]\ncommand = ["/usr/bin/python3"]\n'
                           'filesystem.write = ["~/src/project"]\n'
                           'filesystem.read = ["~/ro"]\n'
                           'filesystem.deny = ["~/src/project/denied"]\n')


def test_prepared_view_is_the_same_view_of_the_mount_each_launch(box):
    """Launches of one table share a view prepared once (entered, then
    copied) or, after it expires, prepared again: every launch sees the same
    mounts with the same flags, the grants are binds of the box's FUSE mount,
    /tmp is the command's RAM /tmp and the root is read-only."""
    import json
    view_config(box)
    box.start()
    tables = []
    for pause in (0, 0, 0, 1.2, 0):
        time.sleep(pause)
        r = box.bash("/usr/bin/python3 mounts.py")
        assert r.returncode == 0, r.stderr
        tables.append(json.loads(r.stdout))
    shape = [[[row[0], row[2], row[3], row[4]] for row in t] for t in tables]
    assert all(s == shape[0] for s in shape), shape
    # Nothing is mounted twice: no covered copy of a grant or a refusal
    # lingers under the launch's own /tmp.
    points = [row[0] for row in tables[0]]
    assert len(points) == len(set(points)), sorted(points)
    by_point = {row[0]: row for row in tables[0]}
    ws = by_point[str(box.workspace)]
    assert ws[2] == "fuse.boxfs" and ws[4] == ["nodev", "nosuid", "rw"], ws
    assert ws[1].startswith("/pass" + str(box.workspace)), ws
    ro = by_point[str(box.home / "ro")]
    assert ro[2] == "fuse.boxfs" and "ro" in ro[4], ro
    denied = by_point[str(box.workspace / "denied")]
    assert denied[2] == "tmpfs" and "ro" in denied[4], denied
    # /tmp is the command's RAM /tmp, bound from the mount; nothing runs from it.
    for t in tables:
        tmp = next(row for row in t if row[0] == "/tmp")
        assert tmp[2] == "fuse.boxfs" and tmp[4] == ["nodev", "noexec", "nosuid", "rw"], tmp
        assert re.fullmatch(r"/ram/c\d+/tmp", tmp[1]), tmp
    assert by_point["/proc"][2] == "proc"
    assert "ro" in by_point["/"][4]


def test_tmp_private_to_each_launch(box):
    """/tmp belongs to one launch: a later launch, and one running at the same
    time, never see what another wrote there."""
    view_config(box)
    (box.workspace / "hold.py").write_text(textwrap.dedent("""\
        import os, time
        open("/tmp/held-by-a", "w").write("a")
        open("a-started", "w").write("up")
        deadline = time.time() + 20
        while not os.path.exists("release") and time.time() < deadline:
            time.sleep(0.02)
        print(sorted(os.listdir("/tmp")))
        """))
    box.start()
    r = box.bash("/usr/bin/python3 -c \"open('/tmp/left', 'w').write('x')\"")
    assert r.returncode == 0, r.stderr
    listing = "/usr/bin/python3 -c \"import os; print(sorted(os.listdir('/tmp')))\""
    r = box.bash(listing)
    # What /tmp holds of the view itself: the scaffold to the box's trees,
    # which live under the host's /tmp here.
    assert r.returncode == 0, r.stderr
    scaffold = r.stdout
    assert "left" not in scaffold and "held-by-a" not in scaffold, scaffold
    a = subprocess.Popen([str(box.box_dir / "bin" / "bash"), "-c", "/usr/bin/python3 hold.py"],
                         cwd=box.workspace, env=box.env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 20
        while not (box.workspace / "a-started").exists() and time.time() < deadline:
            time.sleep(0.02)
        assert (box.workspace / "a-started").exists()
        r = box.bash(listing)
        assert (r.returncode, r.stdout) == (0, scaffold), r.stderr
        (box.workspace / "release").write_text("go\n")
        out, err = a.communicate(timeout=30)
        assert a.returncode == 0, err
        assert sorted(eval(out)) == sorted(eval(scaffold) + ["held-by-a"]), out
    finally:
        if a.poll() is None:
            a.kill()


def test_concurrent_spawns_all_run(box):
    """Commands spawning tools side by side, over and over: every launch is
    placed and runs, though the kernel reuses the inode numbers of ended PID
    namespaces while the command that owned one still runs."""
    box.permit_spawn("/bin/true")
    box.write_config(extra='\n[tool.true]\ncommand = ["/bin/true"]\n')
    box.start()
    failures = []

    def worker():
        for _ in range(25):
            r = box.bash("/bin/true && /bin/true && /bin/true")
            if r.returncode != 0:
                failures.append((r.returncode, r.stderr))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == [], failures[:3]
