"""Identity under a race: while the Shell reads ~/src/project/a/b/file
in a loop through the mount, a host process swaps the directory `a` with a
symlink to a directory outside every root (renameat2 RENAME_EXCHANGE, so each
swap is atomic), 10,000 times.  Every read must either print the real file or
fail; none may print the outside file.  The same for a stat in a loop: the
mount answers a stat of a node whose place no name change has touched from
the node's own descriptor, without walking from the root (vfs/watch.c), so
every size printed must be the real file's, never the outside one's."""
import ctypes
import os
import subprocess
import time

AT_FDCWD = -100
RENAME_EXCHANGE = 2
SWAPS = 10000

libc = ctypes.CDLL("libc.so.6", use_errno=True)


def exchange(a, b):
    if libc.renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), a)


READ_LOOP = "n=0; while [ ! -e stop ]; do cat a/b/file 2>&1; n=$((n+1)); done; echo reads=$n"
STAT_LOOP = "n=0; while [ ! -e stop ]; do stat -c %s a/b/file 2>&1; n=$((n+1)); done; echo reads=$n"
SECRET = "SECRET" + "-" * 993 + "\n"  # 1000 bytes: its size tells it from the real file's


def start_reader(box, loop):
    """Starts the Shell's loop with its output in a file (a pipe nobody reads
    until the end would stop the loop once full) and waits for its first line."""
    out_path = box.root / "reader.out"
    with open(out_path, "wb") as out:
        reader = subprocess.Popen([str(box.box_dir / "bin" / "bash"), "-c", loop], cwd=str(box.workspace),
                                  env=box.env(), stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while out_path.stat().st_size == 0:
        assert reader.poll() is None and time.monotonic() < deadline, out_path.read_text()
        time.sleep(0.01)
    return reader, out_path


def stop_reader(box, reader, out_path):
    (box.workspace / "stop").write_text("")
    reader.wait(timeout=60)
    return out_path.read_text()


# boxd under a hard limit of 400 descriptors (no CAP_SYS_RESOURCE to raise
# it): a budget of 144 node descriptors, which the FILL files the loop lists
# first take, so the nodes of a/b/file hold none and every op reaches them by
# a walk (vfs/node.c, vfs_pass_insert)
def descriptor_targets(pid):
    """What pid's descriptors name; one closed between the listing and its
    reading (boxd works on) is passed over."""
    out = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            out.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except FileNotFoundError:
            pass
    return out


LOW_FDS = ["setpriv", "--bounding-set", "-sys_resource", "--inh-caps", "-sys_resource",
           "prlimit", "--nofile=400:400", "--"]
FILL = 200


def run_race(box, link_target, loop=READ_LOOP, real_line="REAL", refusal="cat: a/b/file: ", low_fds=False):
    ws = box.workspace
    if low_fds:
        (ws / "fill").mkdir()
        for i in range(FILL):
            (ws / "fill" / f"f{i}").write_text("")
        loop = "ls -l fill > /dev/null; " + loop
    (ws / "a" / "b").mkdir(parents=True)
    (ws / "a" / "b" / "file").write_text("REAL\n")
    outside = box.root / "outside"
    (outside / "b").mkdir(parents=True)
    (outside / "b" / "file").write_text(SECRET)
    os.symlink(link_target(outside), ws / "alink")
    box.seed_policy()
    box.write_config()
    box.start(prefix=LOW_FDS if low_fds else ())
    reader, out_path = start_reader(box, loop)
    if low_fds:
        # the fill took the budget: boxd holds a descriptor for none of a, a/b, a/b/file
        # (an operation of the reader's on them opens one for its own length: a
        # node's would be in every listing, so one listing without is the proof)
        for _ in range(50):
            targets = descriptor_targets(box.proc.pid)
            held = [t for t in targets if t == str(ws / "a") or t.startswith(str(ws / "a") + "/")]
            if not held:
                break
            time.sleep(0.01)
        assert sum(t.startswith(str(ws / "fill") + "/") for t in targets) > 100, targets
        assert not held, targets
    for i in range(SWAPS):
        exchange(str(ws / "a"), str(ws / "alink"))
        if i % 8 == 0:
            time.sleep(0.0002)  # leave the reader room to resolve between swaps
    if os.path.islink(ws / "a"):
        exchange(str(ws / "a"), str(ws / "alink"))
    out = stop_reader(box, reader, out_path)
    lines = out.splitlines()
    assert reader.returncode == 0, out[-2000:]
    assert lines[-1].startswith("reads="), out[-2000:]
    reads = int(lines[-1][len("reads="):])
    body = lines[:-1]
    assert "SECRET" not in out
    assert str(len(SECRET)) not in body
    real = body.count(real_line)
    failed = [l for l in body if l != real_line]
    # Every failure is a refusal of the path, never another file's contents.
    assert all(l.startswith(refusal) for l in failed), failed[:5]
    assert real + len(failed) == reads
    assert reads >= 100 and real > 0, (reads, real)
    return reads, real, len(failed)


def test_swap_with_relative_symlink_out_of_every_root(box):
    run_race(box, lambda outside: os.path.relpath(outside, box.workspace))


def test_swap_with_absolute_symlink_out_of_every_root(box):
    run_race(box, lambda outside: str(outside))


def test_stat_during_swaps_never_reports_the_outside_file(box):
    reads, real, failed = run_race(box, lambda outside: str(outside), loop=STAT_LOOP, real_line="5",
                                   refusal="stat: ")


def test_swap_with_nodes_past_the_descriptor_budget(box):
    run_race(box, lambda outside: str(outside), low_fds=True)


def test_stat_during_swaps_with_nodes_past_the_descriptor_budget(box):
    run_race(box, lambda outside: str(outside), loop=STAT_LOOP, real_line="5", refusal="stat: ",
             low_fds=True)


MOVES = 1000


def moved_out_race(box, loop, policy_extra=""):
    ws = box.workspace
    (ws / "a" / "b").mkdir(parents=True)
    (ws / "a" / "b" / "file").write_text("REAL\n")
    (ws / "c").mkdir()
    away = box.root / "away"
    away.mkdir()
    box.start_seeded(extra=policy_extra)
    reader, out_path = start_reader(box, loop)
    for _ in range(MOVES):
        os.rename(ws / "a", away / "a")
        with open(away / "a" / "b" / "file", "a") as f:
            f.write(SECRET[len("REAL\n"):])
        time.sleep(0.002)
        with open(away / "a" / "b" / "file", "r+") as f:
            f.truncate(len("REAL\n"))
        os.rename(away / "a", ws / "a")
        time.sleep(0.002)
    lines = stop_reader(box, reader, out_path).splitlines()
    assert reader.returncode == 0, lines[-20:]
    assert lines[-1].startswith("reads="), lines[-20:]
    body = lines[:-1]
    assert str(len(SECRET)) not in body
    real = body.count("5")
    failed = [l for l in body if l != "5"]
    assert all(l.startswith("stat: ") for l in failed), failed[:5]
    assert real > 0 and failed, (real, len(failed))


# eight stats a command: more of them fall in each move's moment
EIGHT_STATS = STAT_LOOP.replace("a/b/file", " ".join(["a/b/file"] * 8))


def test_stat_of_a_directory_moved_out_of_every_root_never_reports_it(box):
    """A host process moves `a` out of the workspace and grows the file it
    holds, then puts both back, MOVES times, while the Shell stats a/b/file
    in a loop.  The kernel still holds the names a/b/file for a moment after
    each move (the watch expires them within milliseconds), and their node
    still holds the file's descriptor: a stat answered from it without proof
    of its place would print the size the file has outside (1000)."""
    moved_out_race(box, EIGHT_STATS)


def test_stat_among_creates_never_reports_a_directory_moved_out(box):
    """The same while the Shell also creates and removes a file in another
    directory of the workspace between its stats: the watch's queue then
    nearly always holds the daemon's own events, and the request that finds
    them reads the queue itself (vfs/watch.c), outside events among them
    included; those must still count as moves at once."""
    churn = "n=0; while [ ! -e stop ]; do : > c/t; stat -c %s a/b/file a/b/file 2>&1; rm c/t; n=$((n+1)); done; echo reads=$n"
    moved_out_race(box, churn, policy_extra="""
        permit(principal, action == Box::Action::"fs:delete", resource)
        when { context.input.path like "~/src/project/c/*" };
        """)
    assert not (box.workspace / "c" / "t").exists()  # every create was removed again
