#!/usr/bin/env python3
"""Permission suite: the checks the kernel leaves to a FUSE daemon mounted
without default_permissions, made by real uids.

    perm_suite.py DIR [CASE...]

Runs as root.  Each case works in a fresh subdirectory of DIR; the steps
that need another identity run in a forked child that drops to it with
setresgid/setresuid (supplementary groups included).  Prints one JSON object:
case name -> list of step results ("ok", "ok:<value>" or the errno name).
Run it on a tmpfs and through the mount and compare the outputs
(tests/integration/test_mount_perm.py does).

Cases: one per reproduction of issue 38 (sticky, umask, setuid_write,
search, fifo, longpath, other_users), setid_kill, setgid_dir, exec_modes and `matrix`, checks generated from
the rules: owner/group/other x modes x sticky x operations x uids."""
import ctypes
import itertools
import json
import os
import stat
import sys

from posix_suite import res  # one step's result: "ok", "ok:<value>" or the errno name

U1 = (65534, 65534, [65534])
U2 = (4321, 4321, [4321, 5555])  # 5555: a supplementary group only

R = {}


def mode(p):
    return f"{stat.S_IMODE(os.lstat(p).st_mode):o}"


def owner(p):
    s = os.lstat(p)
    return f"{s.st_uid}:{s.st_gid}"


def as_user(who, fn):
    """fn() run by uid/gid/groups who in a forked child: its list of results."""
    uid, gid, groups = who
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        try:
            os.setgroups(groups)
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            # the daemon places callers by /proc/<tid>/ns/pid: stay dumpable
            ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)
            out = fn()
        except Exception as e:  # noqa: BLE001
            out = [f"exception {e!r}"]
        os.write(wfd, json.dumps(out).encode())
        os._exit(0)
    os.close(wfd)
    data = b""
    while chunk := os.read(rfd, 1 << 16):
        data += chunk
    os.close(rfd)
    os.waitpid(pid, 0)
    return json.loads(data)


def touch(p, m=0o644, who=(0, 0)):
    fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o600)
    os.write(fd, b"data")
    os.close(fd)
    os.chown(p, *who)
    os.chmod(p, m)


def mkdir(p, m=0o755, who=(0, 0)):
    os.mkdir(p)
    os.chown(p, *who)
    os.chmod(p, m)


def write_one(p, flags=os.O_WRONLY):
    fd = os.open(p, flags)
    try:
        os.write(fd, b"w")
    finally:
        os.close(fd)


def open_close(p, flags, m=0o644):
    os.close(os.open(p, flags, m))


CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


@case
def sticky(o):
    mkdir("n0", 0o1777)
    for n in ("f", "g"):
        touch(f"n0/{n}", 0o666)
    mkdir("n0/d", 0o777)
    mkdir("n1", 0o1777, (U1[0], U1[1]))
    touch("n1/f", 0o666)

    def u():
        return [res(os.unlink, "n0/f"), res(os.rename, "n0/g", "n0/h"), res(os.rmdir, "n0/d"),
                res(open_close, "n0/mine", os.O_CREAT | os.O_WRONLY),
                res(os.rename, "n0/mine", "n0/g"), res(os.rename, "n0/mine", "n0/m2"),
                res(os.unlink, "n0/m2"), res(os.unlink, "n1/f")]
    o.extend(as_user(U1, u))
    o.extend([res(os.path.exists, p) for p in ("n0/f", "n0/g", "n0/d", "n1/f")])


@case
def umask(o):
    for m in (0, 0o027):
        old = os.umask(m)
        open_close(f"f{m}", os.O_CREAT | os.O_WRONLY, 0o4777)
        os.mkdir(f"d{m}", 0o777)
        os.mkfifo(f"p{m}", 0o666)
        os.symlink("x", f"l{m}")
        os.umask(old)
        o.extend(res(mode, f"{k}{m}") for k in "fdpl")
    os.chmod(".", 0o777)

    def u():
        os.umask(0)
        open_close("uf", os.O_CREAT | os.O_WRONLY, 0o6777)
        os.mkdir("ud", 0o2777)
        os.umask(0o077)
        open_close("uf2", os.O_CREAT | os.O_WRONLY, 0o777)
        return [res(mode, p) for p in ("uf", "ud", "uf2")] + [res(owner, "uf")]
    o.extend(as_user(U1, u))


@case
def setuid_write(o):
    old = os.umask(0)
    for m in (0o4777, 0o2777, 0o6777, 0o2767, 0o4766):
        open_close(f"w{m:o}", os.O_CREAT | os.O_WRONLY, m)
        open_close(f"t{m:o}", os.O_CREAT | os.O_WRONLY, m)
        open_close(f"o{m:o}", os.O_CREAT | os.O_WRONLY, m)
    os.umask(old)

    def u():
        out = []
        for m in (0o4777, 0o2777, 0o6777, 0o2767, 0o4766):
            out.append(res(write_one, f"w{m:o}"))
            out.append(res(os.truncate, f"t{m:o}", 1))
            out.append(res(open_close, f"o{m:o}", os.O_WRONLY | os.O_TRUNC))
        return out
    o.extend(as_user(U1, u))
    for m in (0o4777, 0o2777, 0o6777, 0o2767, 0o4766):
        o.extend(res(mode, f"{k}{m:o}") for k in "wto")
    # the owner's own write clears them too; root's does not
    open_close("own", os.O_CREAT | os.O_WRONLY, 0o700)
    os.chown("own", U1[0], U1[1])
    os.chmod("own", 0o6770)
    o.extend(as_user(U1, lambda: [res(write_one, "own"), res(mode, "own")]))
    os.chmod("own", 0o6770)
    o.append(res(write_one, "own"))
    o.append(res(mode, "own"))


def ftruncate_one(p, n):
    fd = os.open(p, os.O_WRONLY)
    try:
        os.ftruncate(fd, n)
    finally:
        os.close(fd)


@case
def setid_kill(o):
    """Which set-id bits a truncate or write by another uid clears: set-user-ID
    always; set-group-ID with group execute, or when the caller is not in the
    file's group; through a path, an open O_TRUNC, an fd, a write."""
    modes = (0o6777, 0o6767, 0o6707, 0o2757, 0o2777, 0o4757)
    ways = {"t": lambda p: os.truncate(p, 1), "o": lambda p: open_close(p, os.O_WRONLY | os.O_TRUNC),
            "f": lambda p: ftruncate_one(p, 2), "w": write_one}
    users = {"u1": U1, "g": (4321, 4321, [4321, 5555])}
    old = os.umask(0)
    for u, m, k in itertools.product(users, modes, ways):
        open_close(f"{u}{k}{m:o}", os.O_CREAT | os.O_WRONLY, 0o600)
        os.chown(f"{u}{k}{m:o}", 0, 5555)
        os.chmod(f"{u}{k}{m:o}", m)
    os.umask(old)
    for u, who in users.items():
        o.extend(as_user(who, lambda u=u: [f"{u}{k}{m:o} {res(fn, f'{u}{k}{m:o}')}"
                                          for m in modes for k, fn in ways.items()]))
    o.extend(f"{u}{k}{m:o} {res(mode, f'{u}{k}{m:o}')}"
             for u, m, k in itertools.product(users, modes, ways))


@case
def search(o):
    mkdir("s", 0o755)
    touch("s/f", 0o644, (U1[0], U1[1]))
    mkdir("s/sub", 0o777, (U1[0], U1[1]))
    touch("s/sub/g", 0o644, (U1[0], U1[1]))
    o.extend(as_user(U1, lambda: [res(lambda: os.stat("s/f").st_uid), res(os.listdir, "s/sub")]))
    os.chmod("s", 0o644)

    def u():
        return [res(os.chmod, "s/f", 0o600), res(open_close, "s/f", os.O_RDONLY),
                res(os.truncate, "s/f", 0), res(lambda: os.stat("s/f").st_size),
                res(os.chmod, "s/sub/g", 0o600), res(open_close, "s/sub/new", os.O_CREAT | os.O_WRONLY),
                res(os.unlink, "s/sub/g"), res(os.access, "s/f", os.F_OK)]
    o.extend(as_user(U1, u))
    os.chmod("s", 0o755)
    o.extend(as_user(U1, lambda: [res(os.chmod, "s/f", 0o640), res(mode, "s/f")]))


@case
def fifo(o):
    old = os.umask(0)
    os.mkfifo("q", 0o600)
    os.mkfifo("q2", 0o666)
    os.mkfifo("q3", 0o604)
    os.umask(old)

    def u():
        nb = os.O_NONBLOCK
        return [res(open_close, "q", os.O_RDONLY | nb), res(open_close, "q", os.O_RDWR),
                res(open_close, "q", os.O_WRONLY | nb), res(open_close, "q2", os.O_RDONLY | nb),
                res(open_close, "q2", os.O_RDWR), res(open_close, "q2", os.O_WRONLY | nb),
                res(open_close, "q3", os.O_RDONLY | nb), res(open_close, "q3", os.O_RDWR)]
    o.extend(as_user(U1, u))


@case
def longpath(o):
    top = os.getcwd()
    name = "d" * 200
    depth = 0
    mkdir("sub", 0o777)
    os.chdir("sub")
    while depth * 201 < 4300:
        os.mkdir(name)
        os.chdir(name)
        depth += 1
    try:
        open_close("f", os.O_CREAT | os.O_WRONLY)
        o.append(res(lambda: os.stat("f").st_size))
        o.append(res(os.chmod, "f", 0o640))
        o.append(res(mode, "f"))
        o.append(res(os.chown, "f", U1[0], U1[1]))
        o.append(res(owner, "f"))
        o.append(res(os.truncate, "f", 3))
        o.append(res(lambda: os.stat("f").st_size))
        o.append(res(os.link, "f", "g"))
        o.append(res(lambda: os.stat("g").st_nlink))
        o.append(res(os.utime, "g", ns=(5, 5)))
        o.append(res(lambda: os.stat("f").st_mtime_ns))
        o.append(res(os.rename, "g", "h"))
        o.append(res(os.symlink, "f", "l"))
        o.append(res(os.readlink, "l"))
        o.append(res(os.mkdir, "e"))
        o.append(res(os.rmdir, "e"))
        o.append(res(lambda: sorted(os.listdir("."))))
        o.extend(as_user(U1, lambda: [res(write_one, "f"), res(os.chmod, "f", 0o600),
                                      res(open_close, "h", os.O_WRONLY)]))
        for n in ("f", "h", "l"):
            o.append(res(os.unlink, n))
    finally:
        for _ in range(depth):
            os.chdir("..")
            os.rmdir(name)
        os.chdir(top)


@case
def other_users(o):
    mkdir("open", 0o777)
    mkdir("mine", 0o700, (U2[0], U2[1]))
    touch("open/roots", 0o640, (0, 5555))

    def u2():
        return [res(write_one, "open/new", os.O_CREAT | os.O_WRONLY), res(owner, "open/new"),
                res(mode, "open/new"), res(open_close, "mine/x", os.O_CREAT | os.O_WRONLY),
                res(lambda: open("open/roots").read()), res(os.chown, "mine/x", -1, 5555),
                res(owner, "mine/x"), res(os.chown, "mine/x", -1, 65534),
                res(lambda: sorted(os.listdir("mine")))]
    o.extend(as_user(U2, u2))

    def u1():
        return [res(lambda: sorted(os.listdir("open"))), res(lambda: open("open/new").read()),
                res(write_one, "open/new"), res(os.listdir, "mine"), res(lambda: os.stat("mine/x") and None),
                res(lambda: open("open/roots").read()), res(os.unlink, "open/new")]
    o.extend(as_user(U1, u1))


@case
def setgid_dir(o):
    mkdir("g", 0o2777, (0, 5555))
    mkdir("h", 0o2770, (0, 5555))

    def u(who):
        def run():
            os.umask(0)
            out = [res(open_close, f"g/f{who}", os.O_CREAT | os.O_WRONLY, 0o2775),
                   res(os.mkdir, f"g/d{who}", 0o777), res(os.mkfifo, f"g/p{who}", 0o666),
                   res(os.symlink, "x", f"g/l{who}"), res(open_close, f"h/f{who}", os.O_CREAT | os.O_WRONLY)]
            for n in ("f", "d", "p", "l"):
                out += [res(mode, f"g/{n}{who}"), res(owner, f"g/{n}{who}")]
            out.append(res(lambda: os.mkdir(f"g/d{who}/sub") or mode(f"g/d{who}/sub")))
            out.append(res(lambda: owner(f"g/d{who}/sub")))
            return out
        return run
    o.extend(as_user(U1, u(1)))
    o.extend(as_user(U2, u(2)))


def exec_file(p):
    """Runs p (exec needs only execute permission); its errno if refused."""
    pid = os.fork()
    if pid == 0:
        try:
            os.execv(p, [p])
        except OSError as e:
            os._exit(e.errno)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code:
        raise OSError(code, os.strerror(code))


@case
def exec_modes(o):
    with open("/bin/true", "rb") as f:
        binary = f.read()
    modes = (0o700, 0o711, 0o744, 0o755, 0o750, 0o710, 0o701, 0o4711, 0o000)
    for m in modes:
        fd = os.open(f"e{m:o}", os.O_CREAT | os.O_WRONLY, 0o700)
        os.write(fd, binary)
        os.close(fd)
        os.chown(f"e{m:o}", 0, 5555)
        os.chmod(f"e{m:o}", m)
    for who in (U1, U2):
        o.extend(as_user(who, lambda: [res(exec_file, f"./e{m:o}") for m in modes] +
                         [res(open_close, f"e{m:o}", os.O_RDONLY) for m in modes]))
    o.extend(res(exec_file, f"./e{m:o}") for m in modes)


# ---- the generated matrix ----
DIR_MODES = (0o777, 0o1777, 0o755, 0o1733, 0o770, 0o1770, 0o707, 0o311)
FILE_MODES = (0o644, 0o620, 0o406, 0o070)
OWNERS = ((0, 0), (U1[0], U1[1]), (U2[0], 5555), (0, U2[1]))
CALLERS = (U1, U2)


def matrix_ops(d):
    f, s = f"{d}/f", f"{d}/s"
    return [
        ("stat", lambda: os.stat(f) and None),
        ("read", lambda: open_close(f, os.O_RDONLY)),
        ("write", lambda: open_close(f, os.O_WRONLY)),
        ("touch", lambda: os.utime(f, None)),
        ("utime", lambda: os.utime(f, ns=(3, 3))),
        ("trunc", lambda: os.truncate(f, 2)),
        ("chmod", lambda: os.chmod(f, 0o640)),
        ("chgrp", lambda: os.chown(f, -1, 5555)),
        ("access", lambda: os.access(f, os.W_OK) or None),
        ("list", lambda: sorted(os.listdir(d))),
        ("create", lambda: open_close(f"{d}/new", os.O_CREAT | os.O_WRONLY)),
        ("mkdir", lambda: os.mkdir(f"{d}/m")),
        ("symlink", lambda: os.symlink("f", f"{d}/l")),
        ("link", lambda: os.link(f, f"{d}/h")),
        ("rename", lambda: os.rename(f, f"{d}/g")),
        ("unlink", lambda: os.unlink(f"{d}/g") if os.path.lexists(f"{d}/g") else os.unlink(f)),
        ("movedir", lambda: os.rename(s, f"{d}.s")),
        ("rmdir", lambda: os.rmdir(s) if os.path.lexists(s) else os.rmdir(f"{d}.s")),
        ("chmod_dir", lambda: os.chmod(d, 0o755)),
    ]


@case
def matrix(o):
    fixtures = []
    for i, (who, dm, do, fo, fm) in enumerate(itertools.product(
            CALLERS, DIR_MODES, OWNERS, OWNERS, FILE_MODES)):
        d = f"x{i}"
        os.mkdir(d)
        touch(f"{d}/f", fm, fo)
        mkdir(f"{d}/s", 0o755, fo)
        os.chown(d, *do)
        os.chmod(d, dm)
        fixtures.append((who, d, f"{dm:o} {do} {fo} {fm:o}"))
    for who in CALLERS:
        mine = [(d, label) for w, d, label in fixtures if w == who]

        def run(mine=mine):
            out = []
            for d, label in mine:
                for op, fn in matrix_ops(d):
                    out.append(f"{who[0]} {label} {op}: {res(fn)}")
            return out
        o.extend(as_user(who, run))
    for _, d, _ in fixtures:
        o.append(f"{d}: {sorted(os.listdir(d))} {mode(d)} " +
                 " ".join(f"{n}={mode(d + '/' + n)}" for n in sorted(os.listdir(d))))


def main():
    base = os.path.join(sys.argv[1], "perm")
    os.mkdir(base)
    os.chmod(base, 0o777)
    names = sys.argv[2:] or list(CASES)
    for name in names:
        d = os.path.join(base, name)
        os.mkdir(d)
        os.chmod(d, 0o777)
        os.chdir(d)
        out = []
        try:
            CASES[name](out)
        except Exception as e:  # noqa: BLE001
            out.append(f"exception {e!r}")
        R[name] = out
        os.chdir("/")
    json.dump(R, sys.stdout, indent=0, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
