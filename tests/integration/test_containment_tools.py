"""Issue 7: real tools through [tool.*] tables, and what a planted symlink or a
rename race can (not) add to a tool's view."""
import os
import subprocess
import textwrap
import threading
import time

from conftest import BOX

POLICY_SPAWN = """
    permit(principal, action == Box::Action::"shell:spawn", resource)
    when {{ {cond} }};
    """


def spawn_policy(box, *programs):
    cond = " || ".join(f'context.input.program == "{p}"' for p in programs)
    box.seed_policy(extra=POLICY_SPAWN.format(cond=cond))


def test_git_clone_commit_log(box):
    bare = box.home / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(box.workspace), str(bare)], check=True)
    spawn_policy(box, "git")
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
    spawn_policy(box, "make")
    box.write_config(extra='\n[tool.make]\ncommand = ["make"]\nfilesystem.write = ["~/src/project"]\n')
    box.start()
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
    spawn_policy(box, "/usr/bin/python3")
    box.write_config(extra='\n[tool.py]\ncommand = ["/usr/bin/python3"]\n'
                           'filesystem.write = ["~/src/project"]\n')
    box.start()
    r = box.bash("/usr/bin/python3 sum.py")
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"sum 12 {box.workspace}\n"
    assert (box.workspace / "result.txt").read_text() == "12\n"


def test_tool_status_and_signal_status(box):
    spawn_policy(box, "/usr/bin/python3")
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
    spawn_policy(box, "/usr/bin/python3")
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
    spawn_policy(box, "/usr/bin/python3")
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
