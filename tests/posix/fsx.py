#!/usr/bin/env python3
"""fsx-style checker: random writes, O_APPEND writes, truncates, reads, mmap
reads, renames, fsyncs and reopens over a few files in DIR, each result checked
against an in-memory model of every file's bytes.

  fsx.py [--seconds S] [--ops N] [--seed X] [--files K] [--max-size B] [DIR]

DIR defaults to $BOXFS_DIR or the current directory.  Stops after S seconds
(default 30) or N operations, whichever comes first.  Prints one JSON line
{"ops": ..., "mismatches": 0, "seed": ..., "by_op": {...}} and exits 0, or
on the first mismatch prints the mismatch and the last operations to stderr
and exits 1."""
import argparse
import collections
import json
import mmap
import os
import random
import sys
import time


class Mismatch(Exception):
    pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--ops", type=int, default=0)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--max-size", type=int, default=256 * 1024)
    ap.add_argument("dir", nargs="?", default=os.environ.get("BOXFS_DIR", "."))
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(4), "little")
    rng = random.Random(seed)
    base = os.path.join(a.dir, "fsx.%d" % os.getpid())
    os.mkdir(base)
    names = ["f%d" % i for i in range(a.files + 2)]  # spare names for renames
    model = {}  # name -> bytearray
    fds = {}    # name -> fd (O_RDWR); follows the file across renames
    history = collections.deque(maxlen=30)
    counts = collections.Counter()

    def path(n):
        return os.path.join(base, n)

    def check(what, got, want):
        if bytes(got) != bytes(want):
            # first differing offset, for the report
            off = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]),
                       min(len(got), len(want)))
            raise Mismatch(f"{what}: {len(got)} bytes, want {len(want)}; first difference at {off}")

    for n in names[:a.files]:
        fds[n] = os.open(path(n), os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        model[n] = bytearray()

    def pick():
        return rng.choice(sorted(model))

    def op_write():
        n = pick()
        size = len(model[n])
        off = rng.randrange(0, min(a.max_size, size + 4096) + 1)
        ln = rng.randrange(1, 32 * 1024)
        if off + ln > a.max_size:
            ln = max(1, a.max_size - off)
        data = rng.randbytes(ln)
        history.append(f"write {n} off={off} len={ln}")
        w = os.pwrite(fds[n], data, off)
        if w != ln:
            raise Mismatch(f"pwrite returned {w}, want {ln}")
        m = model[n]
        if off > len(m):
            m.extend(b"\0" * (off - len(m)))
        m[off:off + ln] = data

    def op_append():
        n = pick()
        ln = rng.randrange(1, 8 * 1024)
        if len(model[n]) + ln > a.max_size:
            return op_truncate()
        data = rng.randbytes(ln)
        history.append(f"append {n} len={ln}")
        fd = os.open(path(n), os.O_WRONLY | os.O_APPEND)
        try:
            os.lseek(fd, 0, os.SEEK_SET)  # O_APPEND must still write at the end
            if os.write(fd, data) != ln:
                raise Mismatch("short append")
        finally:
            os.close(fd)
        model[n].extend(data)

    def op_truncate():
        n = pick()
        size = rng.randrange(0, a.max_size + 1) if rng.random() < 0.7 else 0
        history.append(f"truncate {n} size={size}")
        if rng.random() < 0.5:
            os.ftruncate(fds[n], size)
        else:
            os.truncate(path(n), size)
        m = model[n]
        if size < len(m):
            del m[size:]
        else:
            m.extend(b"\0" * (size - len(m)))

    def op_read():
        n = pick()
        size = len(model[n])
        off = rng.randrange(0, size + 1)
        ln = rng.randrange(0, 64 * 1024)
        history.append(f"read {n} off={off} len={ln}")
        got = os.pread(fds[n], ln, off)
        check(f"read {n} [{off},+{ln})", got, model[n][off:off + ln])
        if os.fstat(fds[n]).st_size != size:
            raise Mismatch(f"fstat size of {n}: {os.fstat(fds[n]).st_size}, want {size}")

    def op_mmap():
        n = pick()
        size = len(model[n])
        history.append(f"mmap-read {n} size={size}")
        if size == 0:
            return
        fd = os.open(path(n), os.O_RDONLY)
        try:
            with mmap.mmap(fd, size, prot=mmap.PROT_READ) as mm:
                off = rng.randrange(0, size)
                ln = rng.randrange(1, size - off + 1)
                check(f"mmap read {n} [{off},+{ln})", mm[off:off + ln], model[n][off:off + ln])
        finally:
            os.close(fd)

    def op_rename():
        src = pick()
        dst = rng.choice([x for x in names if x != src])
        history.append(f"rename {src} -> {dst}")
        os.rename(path(src), path(dst))
        if dst in model:  # replaced
            os.close(fds.pop(dst))
        model[dst] = model.pop(src)
        fds[dst] = fds.pop(src)
        if len(model) < a.files:  # keep a few files around
            free = [x for x in names if x not in model]
            n = rng.choice(free)
            history.append(f"create {n}")
            fds[n] = os.open(path(n), os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
            model[n] = bytearray()

    def op_fsync():
        n = pick()
        history.append(f"fsync {n}")
        os.fsync(fds[n])

    def op_reopen():
        n = pick()
        history.append(f"reopen {n}")
        os.close(fds[n])
        fds[n] = os.open(path(n), os.O_RDWR)
        got = bytearray()
        while True:
            b = os.read(fds[n], 1 << 20)
            if not b:
                break
            got += b
        check(f"whole {n} after reopen", got, model[n])

    ops = [(op_write, 30), (op_append, 6), (op_truncate, 8), (op_read, 25), (op_mmap, 10),
           (op_rename, 8), (op_fsync, 3), (op_reopen, 5)]
    funcs = [f for f, _ in ops]
    weights = [w for _, w in ops]
    done = 0
    deadline = time.monotonic() + a.seconds
    try:
        while (a.ops == 0 or done < a.ops) and time.monotonic() < deadline:
            f = rng.choices(funcs, weights)[0]
            f()
            counts[f.__name__[3:]] += 1
            done += 1
        for n in sorted(model):  # final full check
            with open(path(n), "rb") as fh:
                check(f"final {n}", fh.read(), model[n])
        listed = sorted(os.listdir(base))
        if listed != sorted(model):
            raise Mismatch(f"directory holds {listed}, want {sorted(model)}")
    except (Mismatch, OSError) as e:
        print(f"fsx: seed {seed}, after {done} ops: {type(e).__name__}: {e}", file=sys.stderr)
        for h in history:
            print(f"  {h}", file=sys.stderr)
        print(json.dumps({"ops": done, "mismatches": 1, "seed": seed, "by_op": counts}))
        return 1
    for fd in fds.values():
        os.close(fd)
    for n in model:
        os.unlink(path(n))
    os.rmdir(base)
    print(json.dumps({"ops": done, "mismatches": 0, "seed": seed, "by_op": counts}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
