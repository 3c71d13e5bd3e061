#!/usr/bin/env python3
"""POSIX behaviour suite (pjdfstest-style categories: open, create, unlink, rename,
mkdir, rmdir, symlink, link, chmod, chown, truncate, utimensat).

Runs every case in a fresh subdirectory of DIR (default: $BOXFS_DIR or .) and prints
one JSON object: case name -> list of step results ("ok", "ok:<value>" or the errno
name).  Run it natively and through the mount and compare the outputs
(tests/integration/test_mount_posix.py does).  Part of it runs as uid/gid 65534 to
exercise permission checks.  Results hold no inode numbers or times, only
relations between them."""
import errno
import json
import os
import stat
import sys

R = {}


def res(f, *a, **k):
    try:
        v = f(*a, **k)
        return "ok" if v is None else f"ok:{v}"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def st(p, follow=False):
    s = os.stat(p) if follow else os.lstat(p)
    return f"{stat.filemode(s.st_mode)} n{s.st_nlink} s{s.st_size if not stat.S_ISDIR(s.st_mode) else '-'} u{s.st_uid} g{s.st_gid}"


def case(fn):
    name = fn.__name__
    d = os.path.join(BASE, name)
    os.mkdir(d)
    os.chmod(d, 0o777)
    cwd = os.getcwd()
    os.chdir(d)
    try:
        out = []
        fn(out)
        R[name] = out
    finally:
        os.chdir(cwd)
    return fn


def write(p, data=b"x"):
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, data)
    os.close(fd)


def read(p):
    fd = os.open(p, os.O_RDONLY)
    try:
        return os.read(fd, 1 << 16).decode(errors="replace")
    finally:
        os.close(fd)


def tests():
    @case
    def open_flags(o):
        o.append(res(os.open, "nofile", os.O_RDONLY))
        fd = os.open("f", os.O_CREAT | os.O_WRONLY, 0o640)
        os.close(fd)
        o.append(res(st, "f"))
        o.append(res(os.open, "f", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        o.append(res(os.open, "f", os.O_RDONLY | os.O_DIRECTORY))
        os.mkdir("d")
        o.append(res(os.open, "d", os.O_WRONLY))
        o.append(res(os.open, "d", os.O_RDWR))
        os.symlink("f", "l")
        o.append(res(os.open, "l", os.O_RDONLY | os.O_NOFOLLOW))
        o.append(res(lambda: os.close(os.open("l", os.O_RDONLY))))
        o.append(res(os.open, "f/x", os.O_RDONLY))
        o.append(res(os.open, "nodir/x", os.O_CREAT | os.O_WRONLY, 0o644))
        o.append(res(os.open, "x" * 256, os.O_CREAT | os.O_WRONLY, 0o644))
        write("f", b"hello")
        fd = os.open("f", os.O_WRONLY | os.O_TRUNC)
        os.close(fd)
        o.append(res(st, "f"))
        write("f", b"abc")
        fd = os.open("f", os.O_WRONLY | os.O_APPEND)
        os.write(fd, b"def")
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, b"ghi")
        os.close(fd)
        o.append(res(read, "f"))
        o.append(res(os.open, ".", os.O_RDONLY | getattr(os, "O_TMPFILE", 0o20200000)) != "ok")

    @case
    def create_modes(o):
        old = os.umask(0o022)
        for m in (0o777, 0o644, 0o600, 0o4755, 0o2755, 0o1777):
            n = f"m{m:o}"
            os.close(os.open(n, os.O_CREAT | os.O_WRONLY, m))
            o.append(res(st, n))
        os.umask(old)
        o.append(res(os.mknod, "fifo", stat.S_IFIFO | 0o644))
        o.append(res(st, "fifo"))
        o.append(res(os.mknod, "reg", stat.S_IFREG | 0o600))
        o.append(res(st, "reg"))
        # a device node: refused through the mount (EPERM); natively root may
        o.append(res(os.mknod, "chr", stat.S_IFCHR | 0o600, os.makedev(1, 3)) in ("EPERM", "ok"))

    @case
    def unlink_cases(o):
        write("f")
        o.append(res(os.unlink, "f"))
        o.append(res(os.unlink, "f"))
        os.mkdir("d")
        o.append(res(os.unlink, "d"))
        os.symlink("nowhere", "dl")
        o.append(res(os.unlink, "dl"))
        write("a")
        os.link("a", "b")
        o.append(res(st, "a"))
        o.append(res(os.unlink, "a"))
        o.append(res(st, "b"))
        o.append(res(read, "b"))
        fd = os.open("b", os.O_RDONLY)
        os.unlink("b")
        o.append(res(lambda: os.read(fd, 10).decode()))
        o.append(res(lambda: os.fstat(fd).st_nlink))
        os.close(fd)

    @case
    def rename_cases(o):
        write("a", b"A")
        write("b", b"B")
        o.append(res(os.rename, "a", "b"))
        o.append(res(read, "b"))
        o.append(res(os.lstat, "a"))
        os.mkdir("d1")
        os.mkdir("d2")
        write("d2/x")
        o.append(res(os.rename, "d1", "d2"))
        o.append(res(os.rename, "b", "d1"))
        o.append(res(os.rename, "d1", "b"))
        o.append(res(os.rename, "d1", "d1/sub"))
        os.rmdir("d1")
        os.mkdir("e")
        o.append(res(os.rename, "d2", "e"))
        o.append(res(sorted, os.listdir("e")))
        o.append(res(os.rename, "nope", "z"))
        o.append(res(os.rename, "b", "nodir/z"))
        write("c", b"C")
        o.append(res(os.rename, "b", "b"))
        os.symlink("c", "lc")
        o.append(res(os.rename, "lc", "lc2"))
        o.append(res(os.readlink, "lc2"))
        o.append(res(st, "lc2"))

    @case
    def rename_flags(o):
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        AT = -100

        def r2(a, b, flags):
            if libc.renameat2(AT, a.encode(), AT, b.encode(), flags) != 0:
                e = ctypes.get_errno()
                raise OSError(e, os.strerror(e))
        write("a", b"A")
        write("b", b"B")
        o.append(res(r2, "a", "b", 1))  # NOREPLACE
        o.append(res(r2, "a", "c", 1))
        o.append(res(r2, "c", "b", 2))  # EXCHANGE
        o.append(res(read, "b"))
        o.append(res(read, "c"))
        o.append(res(r2, "c", "zz", 2))
        o.append(res(r2, "c", "b", 3))

    @case
    def mkdir_rmdir(o):
        o.append(res(os.mkdir, "d", 0o755))
        o.append(res(st, "d"))
        o.append(res(os.mkdir, "d"))
        o.append(res(os.mkdir, "no/d"))
        os.mkdir("d/e")
        o.append(res(st, "d"))
        o.append(res(os.rmdir, "d"))
        o.append(res(os.rmdir, "d/e"))
        o.append(res(st, "d"))
        o.append(res(os.rmdir, "d"))
        o.append(res(os.rmdir, "d"))
        write("f")
        o.append(res(os.rmdir, "f"))
        o.append(res(os.mkdir, "f"))
        o.append(res(os.rmdir, "."))
        old = os.umask(0o027)
        os.mkdir("m", 0o777)
        os.umask(old)
        o.append(res(st, "m"))

    @case
    def symlink_cases(o):
        o.append(res(os.symlink, "target", "l"))
        o.append(res(os.readlink, "l"))
        o.append(res(st, "l"))
        o.append(res(os.stat, "l"))
        o.append(res(os.symlink, "x", "l"))
        write("target", b"T")
        o.append(res(read, "l"))
        os.mkdir("d")
        os.symlink("d", "ld")
        write("ld/f", b"via")
        o.append(res(read, "d/f"))
        o.append(res(os.symlink, "a" * 1000, "long"))
        o.append(res(lambda: len(os.readlink("long"))))
        os.symlink("loop2", "loop1")
        os.symlink("loop1", "loop2")
        o.append(res(os.stat, "loop1"))
        o.append(res(os.readlink, "target"))

    @case
    def link_cases(o):
        write("a", b"A")
        o.append(res(os.link, "a", "b"))
        o.append(res(st, "b"))
        o.append(res(os.link, "a", "b"))
        os.mkdir("d")
        o.append(res(os.link, "d", "d2"))
        o.append(res(os.link, "none", "x"))
        os.symlink("a", "sl")
        o.append(res(os.link, "sl", "hl", follow_symlinks=False))
        o.append(res(st, "hl"))
        o.append(res(lambda: os.lstat("a").st_ino == os.lstat("b").st_ino))
        os.unlink("a")
        o.append(res(st, "b"))

    @case
    def chmod_cases(o):
        write("f")
        for m in (0o000, 0o777, 0o4755, 0o2755, 0o1777, 0o644):
            o.append(res(os.chmod, "f", m))
            o.append(res(st, "f"))
        os.mkdir("d")
        o.append(res(os.chmod, "d", 0o700))
        o.append(res(st, "d"))
        o.append(res(os.chmod, "nope", 0o644))
        os.symlink("f", "l")
        o.append(res(os.chmod, "l", 0o600))
        o.append(res(st, "f"))

    @case
    def chown_cases(o):
        write("f")
        o.append(res(os.chown, "f", 65534, 65534))
        o.append(res(st, "f"))
        o.append(res(os.chown, "f", -1, 0))
        o.append(res(st, "f"))
        os.symlink("f", "l")
        o.append(res(os.lchown, "l", 65534, -1))
        o.append(res(st, "l"))
        o.append(res(st, "f"))
        o.append(res(os.chown, "nope", 0, 0))

    @case
    def truncate_cases(o):
        write("f", b"0123456789")
        o.append(res(os.truncate, "f", 4))
        o.append(res(read, "f"))
        o.append(res(os.truncate, "f", 8))
        o.append(res(lambda: read("f").encode().hex()))
        o.append(res(os.truncate, "f", -1))
        os.mkdir("d")
        o.append(res(os.truncate, "d", 0))
        o.append(res(os.truncate, "nope", 0))
        fd = os.open("f", os.O_RDWR)
        o.append(res(os.ftruncate, fd, 2))
        o.append(res(lambda: os.fstat(fd).st_size))
        os.close(fd)
        fd = os.open("f", os.O_RDONLY)
        o.append(res(os.ftruncate, fd, 0))
        os.close(fd)

    @case
    def utimens_cases(o):
        write("f")
        o.append(res(os.utime, "f", ns=(1_000_000_123, 2_000_000_456)))
        s = os.stat("f")
        o.append(f"{s.st_atime_ns} {s.st_mtime_ns}")
        o.append(res(os.utime, "f", None))
        o.append(res(lambda: os.stat("f").st_mtime_ns > 2_000_000_456))
        os.symlink("f", "l")
        o.append(res(os.utime, "l", ns=(5_000_000_000, 6_000_000_000), follow_symlinks=False))
        o.append(res(lambda: os.lstat("l").st_mtime_ns))
        o.append(res(lambda: os.stat("f").st_mtime_ns == 6_000_000_000))
        o.append(res(os.utime, "nope", None))

    @case
    def io_cases(o):
        fd = os.open("f", os.O_RDWR | os.O_CREAT, 0o644)
        os.pwrite(fd, b"abc", 0)
        os.pwrite(fd, b"xyz", 1 << 20)
        o.append(res(lambda: os.fstat(fd).st_size))
        o.append(res(lambda: os.pread(fd, 3, 1 << 20).decode()))
        o.append(res(lambda: os.pread(fd, 4, 1).hex()))
        o.append(res(lambda: os.lseek(fd, 0, os.SEEK_END)))
        o.append(res(lambda: os.lseek(fd, 0, getattr(os, "SEEK_DATA", 3))))
        o.append(res(lambda: os.lseek(fd, 10, getattr(os, "SEEK_DATA", 3)) in (10, 1 << 20)))
        o.append(res(lambda: os.lseek(fd, 0, getattr(os, "SEEK_HOLE", 4)) in (3, 4096, (1 << 20) + 3)))
        o.append(res(os.fsync, fd))
        o.append(res(os.posix_fallocate, fd, 0, 8192))
        o.append(res(lambda: os.fstat(fd).st_size))
        g = os.open("g", os.O_RDWR | os.O_CREAT, 0o644)
        o.append(res(lambda: os.copy_file_range(fd, g, 3, 0, 0)))
        o.append(res(lambda: os.pread(g, 3, 0).decode()))
        import fcntl
        o.append(res(fcntl.flock, fd, fcntl.LOCK_EX | fcntl.LOCK_NB))
        o.append(res(fcntl.lockf, g, fcntl.LOCK_EX | fcntl.LOCK_NB))
        os.close(g)
        os.close(fd)
        o.append(res(lambda: sorted(os.listdir("."))))

    @case
    def xattr_cases(o):
        write("f")
        r = res(os.setxattr, "f", "user.k", b"v")
        o.append(r if r == "ok" else "refused")
        r = res(os.getxattr, "f", "user.k")
        o.append("ok:" if r.startswith("ok") else "refused")

    @case
    def nonroot(o):
        write("mine", b"m")
        os.chmod("mine", 0o600)
        for d, m in (("ro", 0o755), ("open", 0o777), ("sticky", 0o1777)):
            os.mkdir(d)
            os.chmod(d, m)
        write("sticky/roots", b"r")
        os.chmod("sticky/roots", 0o666)
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rfd)
            out = []
            try:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
                # stay dumpable: the daemon places callers by /proc/<tid>/ns/pid,
                # which a changed-uid process hides without CAP_SYS_PTRACE
                import ctypes
                ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE
                out.append(res(read, "mine"))
                out.append(res(os.open, "mine", os.O_WRONLY))
                out.append(res(os.open, "ro/new", os.O_CREAT | os.O_WRONLY, 0o644))
                out.append(res(os.mkdir, "ro/d"))
                out.append(res(os.chmod, "mine", 0o777))
                out.append(res(os.chown, "mine", 65534, 65534))
                out.append(res(os.truncate, "mine", 0))
                out.append(res(os.utime, "mine", ns=(1, 1)))
                out.append(res(os.utime, "mine", None))
                out.append(res(os.access, "mine", os.R_OK))
                out.append(res(write, "open/f", b"o"))
                out.append(res(st, "open/f"))
                out.append(res(os.chmod, "open/f", 0o640))
                out.append(res(os.chown, "open/f", 0, -1))
                out.append(res(os.chown, "open/f", -1, 0))
                out.append(res(os.chown, "open/f", -1, 65534))
                out.append(res(os.utime, "open/f", ns=(7, 7)))
                out.append(res(os.access, "open/f", os.W_OK))
                out.append(res(os.rename, "open/f", "ro/f"))
                out.append(res(os.unlink, "sticky/roots"))
                out.append(res(read, "sticky/roots"))
                out.append(res(os.unlink, "mine"))
            except Exception as e:  # noqa: BLE001
                out.append(f"exception {e!r}")
            os.write(wfd, json.dumps(out).encode())
            os._exit(0)
        os.close(wfd)
        data = b""
        while chunk := os.read(rfd, 65536):
            data += chunk
        os.close(rfd)
        os.waitpid(pid, 0)
        o.extend(json.loads(data))


if __name__ == "__main__":
    BASE = os.path.join(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("BOXFS_DIR", "."), "posix")
    os.mkdir(BASE)
    os.chmod(BASE, 0o777)
    tests()
    json.dump(R, sys.stdout, indent=1, sort_keys=True)
    print()
