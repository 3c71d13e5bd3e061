"""Per-command checkpoints (issue 36): a bare git repository in
<box_dir>/private/checkpoints.git with one commit per command that changed
the workspace, built from the paths the mount saw it change, plus "outside"
commits for changes made around the box; `box checkpoints`, `box diff` and
`box restore` on real boxes."""
import errno
import hashlib
import json
import os
import signal
import stat
import subprocess
import time

from conftest import BOX, ALLOW_ALL

EXCLUDED = {".git", "node_modules"}


def repo(box):
    return box.box_dir / "private" / "checkpoints.git"


def git_repo(box, *args):
    return subprocess.run(["git", "--git-dir", str(repo(box)), *args], capture_output=True,
                          text=True, check=True).stdout


def log(box):
    r = subprocess.run([str(BOX), "checkpoints", "--config", str(box.config)],
                       capture_output=True, text=True, env=box.env(), timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def wait_count(box, n, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if repo(box).exists() and len(log(box)) >= n:
            return
        time.sleep(0.05)
    raise AssertionError(f"never {n} checkpoints: {log(box)}")


def blob_id(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def snapshot(root):
    """path -> (git mode, blob id, full mode) of every file and symlink below
    root, as a checkpoint keeps them (no empty directories, nothing excluded),
    and path -> mode of every directory."""
    files, dirs = {}, {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in EXCLUDED]
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir != ".":
            dirs[rel_dir] = stat.S_IMODE(os.lstat(dirpath).st_mode)
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                files[rel] = ("120000", blob_id(os.readlink(p).encode()), None)
            elif stat.S_ISREG(st.st_mode):
                data = open(p, "rb").read()
                gm = "100755" if st.st_mode & 0o111 else "100644"
                files[rel] = (gm, blob_id(data), stat.S_IMODE(st.st_mode))
    return files, dirs


def tree_of(box, commit):
    out = {}
    for line in git_repo(box, "ls-tree", "-r", "--full-tree", commit).splitlines():
        meta, path = line.split("\t", 1)
        mode, _, oid = meta.split()
        out[path] = (mode, oid)
    return out


def commits(box):
    return git_repo(box, "rev-list", "--reverse", "HEAD").split()


def fsck_clean(box):
    r = subprocess.run(["git", "--git-dir", str(repo(box)), "fsck", "--strict", "--full"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "error" not in r.stderr and "missing" not in r.stdout, r.stdout + r.stderr


def start(box, extra=""):
    box.write_policy(ALLOW_ALL)
    box.write_config(extra='\n[tool.py]\ncommand = ["/usr/bin/python3"]\n'
                           'filesystem.write = ["~/src/project"]\n' + extra)
    box.start()
    wait_count(box, 1)


def test_twenty_commands_give_twenty_one_checkpoints(box):
    start(box)
    ws = box.workspace
    snaps = [snapshot(ws)]

    def step(source):
        r = box.bash(source)
        assert r.returncode == 0, (source, r.stdout, r.stderr)
        snaps.append(snapshot(ws))

    def outside(fn):
        fn()
        snaps.append(snapshot(ws))

    step("echo a > a.txt")
    step("mkdir -p d/e && echo b > d/e/b.txt")
    step("printf 'x\\ny\\n' >> a.txt")
    step("mv a.txt a2.txt")
    step("cp -r d d2")
    step("rm -r d")
    step("chmod 600 a2.txt")
    step("chmod +x d2/e/b.txt")
    step("ln -s a2.txt link")
    step("/usr/bin/python3 -c \"open('py.txt','w').write('from a tool')\"")
    outside(lambda: (ws / "src" / "main.rs").write_text("fn main() { /* edited outside */ }\n"))
    step("mv d2 d3")
    step("echo more > d3/e/new.txt")
    step(": > a2.txt")
    step("rm link")
    step("mkdir -p x/y/z && echo deep > x/y/z/f")
    step("python3 -c \"import os; os.rename('py.txt', 'x/y/py2.txt')\"")
    step("rm -r x/y/z")
    step("mkdir -p node_modules/m && echo skip > node_modules/m/i.js && echo c > c.txt")
    step("chmod 700 d3 && echo e > d3/e.txt")
    assert len(snaps) == 21
    wait_count(box, 21)
    ids = commits(box)
    assert len(ids) == 21, log(box)
    for i, (cid, (files, _dirs)) in enumerate(zip(ids, snaps)):
        want = {p: (m, o) for p, (m, o, _) in files.items()}
        assert tree_of(box, cid) == want, f"checkpoint {i}"
    # the messages carry the command and its id; the outside edit its own kind
    msgs = [git_repo(box, "log", "-1", "--format=%B", c) for c in ids]
    assert "kind: start" in msgs[0]
    assert "command: echo a > a.txt" in msgs[1] and "command-id: " in msgs[1]
    assert "kind: outside" in msgs[11]
    assert "0600 a2.txt" in msgs[7]
    lines = log(box)
    assert lines[0].split(None, 3)[3] == "chmod 700 d3 && echo e > d3/e.txt"
    assert lines[-1].endswith("box started")
    fsck_clean(box)
    # any of them restored: the workspace as it was after that step, byte
    # and mode exact (git keeps no empty directory: those are not compared)
    for i in [*range(len(ids) - 1, -1, -1), len(ids) - 1]:
        files, dirs = snaps[i]
        r = subprocess.run([str(BOX), "restore", "--config", str(box.config), ids[i]],
                           capture_output=True, text=True, env=box.env())
        assert r.returncode == 0, (i, r.stderr)
        now_files, now_dirs = snapshot(ws)
        assert now_files == files, f"restore of checkpoint {i}"
        assert {k: v for k, v in now_dirs.items() if k in dirs and any(
            f.startswith(k + "/") for f in files)} == {k: v for k, v in dirs.items() if any(
                f.startswith(k + "/") for f in files)}, f"restore of checkpoint {i}"
    fsck_clean(box)


def test_diff_and_restore_are_byte_and_mode_exact(box):
    start(box)
    ws = box.workspace
    assert box.bash("mkdir -p keep/deep && printf 'one\\n' > keep/a && chmod 640 keep/a && "
                    "printf '\\000\\001bin' > keep/deep/b && chmod 711 keep/deep && "
                    "ln -s a keep/ln").returncode == 0
    wait_count(box, 2)
    want_files, want_dirs = snapshot(ws)
    target = commits(box)[-1]
    assert box.bash("printf 'two\\n' > keep/a && chmod 644 keep/a && rm -r keep/deep && "
                    "echo new > keep/new && rm keep/ln && mkdir keep/ln").returncode == 0
    wait_count(box, 3)
    r = subprocess.run([str(BOX), "diff", "--config", str(box.config), target, "HEAD", "--",
                        "keep/a"], capture_output=True, text=True, env=box.env())
    assert r.returncode == 0, r.stderr
    assert "-one\n+two\n" in r.stdout and "keep/new" not in r.stdout
    r = subprocess.run([str(BOX), "diff", "--config", str(box.config), "HEAD", "--stat"],
                       capture_output=True, text=True, env=box.env())
    assert r.returncode == 0 and "keep/new" in r.stdout and "changed" in r.stdout, r.stdout

    r = subprocess.run([str(BOX), "restore", "--config", str(box.config), target],
                       capture_output=True, text=True, env=box.env())
    assert r.returncode == 0, r.stderr
    files, dirs = snapshot(ws)
    assert files == want_files
    assert {k: v for k, v in dirs.items() if k in want_dirs} == want_dirs
    assert stat.S_IMODE(os.lstat(ws / "keep" / "a").st_mode) == 0o640
    assert (ws / "keep" / "deep" / "b").read_bytes() == b"\0\1bin"
    # the restore is a checkpoint of its own, whose tree is the target's
    wait_count(box, 4)
    assert tree_of(box, "HEAD") == tree_of(box, target)
    # one path only
    assert box.bash("echo changed > keep/a && echo other > keep/new2").returncode == 0
    wait_count(box, 5)
    r = subprocess.run([str(BOX), "restore", "--config", str(box.config), target, "keep/a"],
                       capture_output=True, text=True, env=box.env())
    assert r.returncode == 0, r.stderr
    assert (ws / "keep" / "a").read_text() == "one\n"
    assert (ws / "keep" / "new2").read_text() == "other\n"
    fsck_clean(box)


def test_restore_is_refused_while_a_command_runs(box):
    start(box)
    assert box.bash("echo 1 > f").returncode == 0
    wait_count(box, 2)
    first = commits(box)[0]
    running = subprocess.Popen([str(box.box_dir / "bin" / "bash"), "-c", "sleep 3"],
                               cwd=str(box.workspace), env=box.env())
    time.sleep(0.8)
    r = subprocess.run([str(BOX), "restore", "--config", str(box.config), first],
                       capture_output=True, text=True, env=box.env())
    running.wait(timeout=30)
    assert r.returncode == 1
    assert r.stderr == "box: error: a command is running in the box; restore refused\n"
    assert (box.workspace / "f").read_text() == "1\n"


def test_verbs_help_and_errors(box):
    for v, operands in (("checkpoints", ""), ("diff", "A [B] [-- PATHS...]"),
                        ("restore", "ID [PATHS...]")):
        r = subprocess.run([str(BOX), v, "--help"], capture_output=True, text=True)
        assert r.returncode == 0 and r.stdout.startswith(f"Usage:\n  box {v}"), r.stdout
        usage = r.stdout.splitlines()[1]
        assert usage.endswith(operands) and usage.count(operands or "x") <= 1, usage
    box.write_policy(ALLOW_ALL)
    box.write_config(extra="\n[checkpoints]\nkeep = -1\n")
    r = subprocess.run([str(BOX), "checkpoints", "--config", str(box.config)],
                       capture_output=True, text=True, env=box.env())
    assert r.returncode == 1
    assert "`checkpoints.keep` must be between 0 and" in r.stderr, r.stderr
    box.write_config(extra="\n[checkpoints]\nexclude = [1]\n")
    r = subprocess.run([str(BOX), "checkpoints", "--config", str(box.config)],
                       capture_output=True, text=True, env=box.env())
    assert r.returncode == 1 and "checkpoints.exclude" in r.stderr, r.stderr
    box.write_config(extra="\n[checkpoints]\nenabled = \"yes\"\n")
    r = subprocess.run([str(BOX), "checkpoints", "--config", str(box.config)],
                       capture_output=True, text=True, env=box.env())
    assert r.returncode == 1 and "checkpoints.enabled" in r.stderr, r.stderr
    box.write_config(extra="\n[checkpoints]\nsize = 1\n")
    r = subprocess.run([str(BOX), "checkpoints", "--config", str(box.config)],
                       capture_output=True, text=True, env=box.env())
    assert r.returncode == 1 and "unknown field `checkpoints.size`" in r.stderr, r.stderr


def test_disabled_and_large_files_and_excludes(box):
    start(box, extra="\n[checkpoints]\nmax_file_size = 1000\nexclude = [\"build/\", \"*.log\"]\n")
    assert box.bash("head -c 5000 /dev/zero > big && mkdir build && echo o > build/o && "
                    "echo l > x.log && echo k > kept").returncode == 0
    wait_count(box, 2)
    tree = tree_of(box, "HEAD")
    assert "kept" in tree and "build/o" not in tree and "x.log" not in tree
    big = git_repo(box, "cat-file", "blob", tree["big"][1])
    assert big.startswith("box-checkpoints: kept by hash only\nsize 5000\nsha256 ")
    box.teardown()
    shutil_rm(repo(box))
    box.write_config(extra="\n[checkpoints]\nenabled = false\n")
    box.start()
    assert box.bash("echo z > z").returncode == 0
    time.sleep(0.5)
    assert not repo(box).exists()


def shutil_rm(path):
    subprocess.run(["rm", "-rf", str(path)], check=True)


def restart_and_write(box, word):
    """Starts the box again after its boxd was killed, and has a command
    write word to word.txt: its checkpoint lands (awaited by its content)."""
    (box.box_dir / "run" / "box.sock").unlink()  # the killed run's
    box.start()
    assert box.bash(f"echo {word} > {word}.txt").returncode == 0
    deadline = time.time() + 30
    while f"{word}.txt" not in tree_of(box, "HEAD") and time.time() < deadline:
        time.sleep(0.05)
    assert git_repo(box, "show", f"HEAD:{word}.txt") == f"{word}\n"


def test_killed_mid_command_leaves_a_valid_repository(box):
    start(box)
    ws = box.workspace
    writer = subprocess.Popen([str(box.box_dir / "bin" / "bash"), "-c",
                               "i=0; while [ $i -lt 100000 ]; do echo $i > w$((i % 50)); "
                               "i=$((i+1)); done"], cwd=str(ws), env=box.env(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for n in range(6):
        assert box.bash(f"echo {n} > n{n}").returncode == 0
    time.sleep(0.3)
    box.proc.send_signal(signal.SIGKILL)
    box.proc.wait(timeout=30)
    writer.wait(timeout=60)
    fsck_clean(box)
    # the next run goes on from the last checkpoint
    before = len(commits(box))
    # The new run's first scan may commit what the killed run's writer left
    # before the command's own checkpoint lands: wait for the latter.
    restart_and_write(box, "after")
    assert len(commits(box)) >= before + 1
    fsck_clean(box)


def test_a_file_that_becomes_a_directory_and_back(box):
    start(box)
    sources = ["echo f > t && mkdir -p u/v && echo g > u/v/g",
               "rm t && mkdir t && echo in > t/f && echo h > u/v/g",
               "rm -r t u/v && echo flat > t && echo file > u/v",
               "echo again > t && chmod +x u/v"]
    want = []
    for source in sources:
        r = box.bash(source)
        assert r.returncode == 0, (source, r.stderr)
        files, _dirs = snapshot(box.workspace)
        want.append({p: (m, o) for p, (m, o, _) in files.items()})
    wait_count(box, 1 + len(sources))
    assert [tree_of(box, c) for c in commits(box)[1:]] == want
    fsck_clean(box)


def open_paused_fifo(fifo, timeout=30):
    """The FIFO's writing end, once boxd waits on its reading end (a
    non-blocking open finds no reader before: ENXIO)."""
    deadline = time.time() + timeout
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as e:
            if e.errno != errno.ENXIO or time.time() > deadline:
                raise
        time.sleep(0.05)


def test_changes_made_while_the_first_checkpoint_is_read_follow_it_at_once(box, tmp_path):
    # boxd pauses once the first checkpoint is made, before it takes what
    # changed meanwhile: what the test does then is what a change during
    # the scan, after it read the path, would leave
    fifo = tmp_path / "pause"
    os.mkfifo(fifo)
    box.write_policy(ALLOW_ALL)
    box.write_config()
    box.start(prefix=("env", f"BOXFS_TEST_FIRST_CHECKPOINT_PAUSE={fifo}"))
    fd = open_paused_fifo(fifo)
    try:
        first = commits(box)
        assert len(first) == 1
        # an edit from outside, and a command that ends before its
        # checkpoint can be made
        (box.workspace / "outside.txt").write_text("outside\n")
        (box.workspace / "src" / "main.rs").write_text("fn main() {}\n")
        assert box.bash("echo during > during.txt").returncode == 0
        assert len(commits(box)) == 1
    finally:
        os.close(fd)
    # no further command: the outside's changes follow the first checkpoint
    # by themselves, and the command keeps its own, after them
    wait_count(box, 3)
    start_id, outside_id, command_id = commits(box)
    assert start_id == first[0]
    assert "outside.txt" not in tree_of(box, start_id)
    changed = [sorted(git_repo(box, "diff-tree", "--no-commit-id", "--name-only", "-r", c).split())
               for c in (outside_id, command_id)]
    assert changed == [["outside.txt", "src/main.rs"], ["during.txt"]]
    assert git_repo(box, "log", "-1", "--format=%B", outside_id).startswith("outside the box\n")
    assert git_repo(box, "log", "-1", "--format=%s", command_id) == "echo during > during.txt\n"
    assert git_repo(box, "show", "HEAD:src/main.rs") == "fn main() {}\n"


def test_a_lock_a_killed_run_left_keeps_no_checkpoint_out(box):
    # A SIGKILL while a commit moved the branch leaves git's lock file of
    # it, which would refuse every later commit: what the kill leaves is
    # made here, as the moment to hit is too short to hit on purpose.
    start(box)
    assert box.bash("echo one > one.txt").returncode == 0
    wait_count(box, 2)
    box.proc.send_signal(signal.SIGKILL)
    box.proc.wait(timeout=30)
    branch = git_repo(box, "symbolic-ref", "HEAD").strip()
    lock = repo(box) / (branch + ".lock")
    lock.write_text(git_repo(box, "rev-parse", "HEAD"))
    restart_and_write(box, "two")
    assert not lock.exists()
    fsck_clean(box)


def test_concurrent_commands_each_get_their_own_checkpoint(box):
    start(box)
    slow = subprocess.Popen([str(box.box_dir / "bin" / "bash"), "-c",
                             "echo a > ca.txt; sleep 1.5; echo a2 >> ca.txt"],
                            cwd=str(box.workspace), env=box.env())
    time.sleep(0.5)
    assert box.bash("echo b > cb.txt").returncode == 0
    assert slow.wait(timeout=60) == 0
    wait_count(box, 3)
    subjects = git_repo(box, "log", "--format=%s").splitlines()
    assert subjects[:2] == ["echo a > ca.txt; sleep 1.5; echo a2 >> ca.txt", "echo b > cb.txt"]
    ids = commits(box)
    changed = [git_repo(box, "diff-tree", "--no-commit-id", "--name-only", "-r", c).split()
               for c in ids[1:]]
    assert changed == [["cb.txt"], ["ca.txt"]]
    assert git_repo(box, "show", "HEAD:ca.txt") == "a\na2\n"


def test_keep_drops_the_oldest_when_the_box_starts(box):
    start(box, extra="\n[checkpoints]\nkeep = 3\n")
    for n in range(5):
        assert box.bash(f"echo {n} > k{n}").returncode == 0
    wait_count(box, 6)
    newest = git_repo(box, "log", "-3", "--format=%s%n%T").splitlines()
    box.teardown()
    (box.box_dir / "run" / "box.sock").unlink(missing_ok=True)
    box.start()
    assert box.bash("true").returncode == 0
    lines = log(box)
    assert len(lines) == 3, lines
    assert git_repo(box, "log", "--format=%s%n%T").splitlines() == newest
    assert git_repo(box, "rev-list", "--max-parents=0", "HEAD").split() == [commits(box)[0]]
    fsck_clean(box)


def log_records(box, scope):
    """(spanId, attributes) of every log record of scope in the records file."""
    path = box.box_dir / "private" / "telemetry" / "records.jsonl"
    out = []
    for line in path.read_text().splitlines():
        for rl in json.loads(line).get("resourceLogs", []):
            for sl in rl["scopeLogs"]:
                if sl["scope"]["name"] == scope:
                    out += [(lr["spanId"], {a["key"]: next(iter(a["value"].values()))
                                            for a in lr["attributes"]})
                            for lr in sl["logRecords"]]
    return out


def test_a_checkpoint_and_the_decision_log_name_each_other(box):
    start(box)
    assert box.bash("echo one > named.txt && mkdir dd && mv named.txt dd/moved.txt").returncode == 0
    wait_count(box, 2)
    head = git_repo(box, "rev-parse", "HEAD").strip()
    msg = git_repo(box, "log", "-1", "--format=%B", head)
    fields = dict(line.split(": ", 1) for line in msg.splitlines()[2:] if ": " in line)
    assert fields["command"] == "echo one > named.txt && mkdir dd && mv named.txt dd/moved.txt"
    command_id = fields["command-id"]
    named = fields["decisions"].split()
    # from the commit to the log: each decision it names is a record there,
    # one that let the command change a path it changed
    deadline = time.time() + 10
    while True:
        decisions = dict(log_records(box, "strands-box.policy"))
        checkpoints = [a for _, a in log_records(box, "strands-box.control")
                       if a["strands.box.control.operation"] == "checkpoint"]
        if all(n in decisions for n in named) and any(
                a["strands.box.control.subject"] == head for a in checkpoints) or \
                time.time() > deadline:
            break
        time.sleep(0.1)
    assert named and all(n in decisions for n in named), (named, list(decisions)[:5])
    resources = {decisions[n]["file.path"] for n in named}
    assert {"~/src/project/named.txt", "~/src/project/dd", "~/src/project/dd/moved.txt"} \
        <= resources, resources
    assert all(decisions[n]["strands.box.policy.action"] != "fs:read" for n in named)
    # from the log to the commit: the checkpoint's record names the command
    # and the same decisions
    mine = [a for a in checkpoints if a["strands.box.control.subject"] == head]
    assert len(mine) == 1, checkpoints
    assert mine[0]["strands.box.control.detail"] == \
        f"command-id: {command_id}; decisions: {' '.join(named)}"
    # the first checkpoint, which no command made, has none: a run that
    # runs no command keeps its control records as they were
    first = commits(box)[0]
    assert not any(a["strands.box.control.subject"] == first for a in checkpoints)


def start_big(box):
    """A box on a workspace whose whole-tree checkpoint takes a while: 64 MiB
    that does not compress; not waiting for that checkpoint."""
    big = box.workspace / "big"
    big.mkdir()
    for i in range(16):
        (big / f"r{i}").write_bytes(os.urandom(4 << 20))
    box.write_policy(ALLOW_ALL)
    box.write_config()
    box.start()


def test_the_first_checkpoint_holds_up_neither_the_start_nor_a_command(box):
    start_big(box)
    r = box.bash("echo first > first.txt")
    assert r.returncode == 0, r.stderr
    head = subprocess.run(["git", "--git-dir", str(repo(box)), "rev-parse", "-q", "--verify",
                           "HEAD"], capture_output=True, text=True)
    assert head.returncode != 0, "the command waited for the first checkpoint"
    wait_count(box, 1, timeout=120)
    # what the command wrote is in the first checkpoint or on top of it
    deadline = time.time() + 60
    while "first.txt" not in tree_of(box, "HEAD") and time.time() < deadline:
        time.sleep(0.1)
    assert box.bash("echo second > second.txt").returncode == 0
    deadline = time.time() + 60
    while "second.txt" not in tree_of(box, "HEAD") and time.time() < deadline:
        time.sleep(0.1)
    files, _ = snapshot(box.workspace)
    assert tree_of(box, "HEAD") == {p: (m, o) for p, (m, o, _) in files.items()}
    msgs = [git_repo(box, "log", "-1", "--format=%B", c) for c in commits(box)]
    assert "kind: start" in msgs[0] and "command: echo second > second.txt" in msgs[-1]
    # the whole tree went to one pack, not a loose object per file
    objects = repo(box) / "objects"
    packs = sorted(p.name for p in (objects / "pack").iterdir())
    assert len(packs) == 2 and packs[0].endswith(".idx") and packs[1].endswith(".pack"), packs
    loose = [p for d in objects.iterdir() if len(d.name) == 2 for p in d.iterdir()]
    assert len(loose) <= 8, loose
    fsck_clean(box)


def test_killed_while_the_first_checkpoint_is_made_leaves_a_valid_repository(box):
    start_big(box)
    pack = repo(box) / "objects" / "pack"
    deadline = time.time() + 30
    while not (pack.exists() and any(p.name.startswith("tmp_") for p in pack.iterdir())):
        assert time.time() < deadline, "the first checkpoint's pack never started"
        time.sleep(0.005)
    box.proc.send_signal(signal.SIGKILL)
    box.proc.wait(timeout=30)
    fsck_clean(box)
    (box.box_dir / "run" / "box.sock").unlink()  # the killed run's
    box.start()
    assert box.bash("echo after > after.txt").returncode == 0
    # the half-written pack is gone, whether or not the new one is begun
    left = [p.name for p in pack.iterdir() if p.name.startswith("tmp_")]
    assert len(left) <= 1, left
    deadline = time.time() + 120
    while time.time() < deadline:
        if len(log(box)) >= 1 and "after.txt" in tree_of(box, "HEAD"):
            break
        time.sleep(0.1)
    files, _ = snapshot(box.workspace)
    assert tree_of(box, "HEAD") == {p: (m, o) for p, (m, o, _) in files.items()}
    assert not [p.name for p in pack.iterdir() if p.name.startswith("tmp_")]
    fsck_clean(box)
