"""Identity under a race (issue 6): while the Shell reads ~/src/project/a/b/file
in a loop through the mount, a host process swaps the directory `a` with a
symlink to a directory outside every root (renameat2 RENAME_EXCHANGE, so each
swap is atomic), 10,000 times.  Every read must either print the real file or
fail; none may print the outside file."""
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


def run_race(box, link_target):
    ws = box.workspace
    (ws / "a" / "b").mkdir(parents=True)
    (ws / "a" / "b" / "file").write_text("REAL\n")
    outside = box.root / "outside"
    (outside / "b").mkdir(parents=True)
    (outside / "b" / "file").write_text("SECRET\n")
    os.symlink(link_target(outside), ws / "alink")
    box.seed_policy()
    box.write_config()
    box.start()
    reader = subprocess.Popen(
        [str(box.box_dir / "bin" / "bash"), "-c",
         "n=0; while [ ! -e stop ]; do cat a/b/file 2>&1; n=$((n+1)); done; echo reads=$n"],
        cwd=str(ws), env=box.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, bufsize=0)
    # the loop is reading before the first swap; read unbuffered, a byte at
    # a time: communicate() below reads the descriptor itself, and lines a
    # buffered readline() had taken past the first would be lost to it
    first = reader.stdout.readline().decode()
    for i in range(SWAPS):
        exchange(str(ws / "a"), str(ws / "alink"))
        if i % 8 == 0:
            time.sleep(0.0002)  # leave the reader room to resolve between swaps
    if os.path.islink(ws / "a"):
        exchange(str(ws / "a"), str(ws / "alink"))
    (ws / "stop").write_text("")
    out, _ = reader.communicate(timeout=60)
    out = first + out.decode()
    lines = out.splitlines()
    assert reader.returncode == 0, out[-2000:]
    assert lines[-1].startswith("reads="), out[-2000:]
    reads = int(lines[-1][len("reads="):])
    body = lines[:-1]
    assert "SECRET" not in out
    real = body.count("REAL")
    failed = [l for l in body if l != "REAL"]
    # Every failure is a refusal of the path, never another file's contents.
    assert all(l.startswith("cat: a/b/file: ") for l in failed), failed[:5]
    assert real + len(failed) == reads
    assert reads >= 100 and real > 0, (reads, real)
    return reads, real, len(failed)


def test_swap_with_relative_symlink_out_of_every_root(box):
    run_race(box, lambda outside: os.path.relpath(outside, box.workspace))


def test_swap_with_absolute_symlink_out_of_every_root(box):
    run_race(box, lambda outside: str(outside))
