"""Tools, workers and Lua: a hostile agent gets nothing.

Named attacks, each run for real against one box (module scope):
- from inside a Shell worker: the worker's own system calls, made by a
  pool worker of the box (a real box-shell, placed, filtered, waiting for
  its command) — the test stops it with ptrace and has it execute each call
  at its own `syscall` instruction, so the call meets exactly the filter and
  the privileges the worker runs agent text under; and Lua as the agent
  writes it (`lua -e`);
- from inside a tool: the host's python3 as a [tool.py] program.
Each asserts the exact refusal (or that nothing leaked) and that boxd still
answers the next command.
"""
import ctypes
import errno
import json
import os
import platform
import re
import socket
import subprocess
import textwrap
import time

import pytest

from conftest import PERMIT_TMP, Box, children_of

assert platform.machine() == "x86_64", "the worker attacks inject x86_64 system calls"

POLICY_EXTRA = """
    permit(principal, action == Box::Action::"shell:spawn", resource)
    when { context.input.program == "/usr/bin/python3" || context.input.program == "/usr/bin/mount" };
    """

# The probe a tool runs: one named attack, its outcome as JSON on stdout.
PROBE = textwrap.dedent(r'''
    import ctypes, errno, json, os, socket, sys
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long

    def sc(nr, *args):
        r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
        return errno.errorcode[ctypes.get_errno()] if r < 0 else "ok"

    def sock(family, kind, proto=0):
        try:
            socket.socket(family, kind, proto).close()
            return "ok"
        except OSError as e:
            return errno.errorcode[e.errno]

    def connect(addr):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(3)
        try:
            s.connect(addr)
            return "connected"
        except OSError as e:
            return errno.errorcode.get(e.errno, str(e))
        finally:
            s.close()

    def read(path):
        try:
            with open(path, "rb") as f:
                return f.read().decode("latin-1")
        except OSError as e:
            return errno.errorcode[e.errno]

    def listdir(path):
        try:
            return sorted(os.listdir(path))
        except OSError as e:
            return errno.errorcode[e.errno]

    def memfd():
        fd = libc.memfd_create(b"x", 0)
        return errno.errorcode[ctypes.get_errno()] if fd < 0 else "ok"

    def ptrace_sibling():
        pid = os.fork()
        if pid == 0:
            import time
            time.sleep(5)
            os._exit(0)
        try:
            return sc(101, 16, pid, 0, 0)  # PTRACE_ATTACH
        finally:
            os.kill(pid, 9)
            os.waitpid(pid, 0)

    def process_vm_readv():
        buf = ctypes.create_string_buffer(16)
        local = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 16)
        remote = (ctypes.c_void_p * 2)(0x400000, 16)
        return sc(310, 1, ctypes.addressof(local), 1, ctypes.addressof(remote), 1, 0)

    def chroot_escape():
        os.makedirs("/tmp/jail", exist_ok=True)
        r = sc(161, ctypes.addressof(ctypes.create_string_buffer(b"/tmp/jail")))
        return r + ":" + ",".join(sorted(os.listdir("/")))[:60]

    def all_environ_and_cmdline():
        seen = []
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                for what in ("cmdline", "environ"):
                    seen.append(pid + "/" + what + "=" + read("/proc/%s/%s" % (pid, what)))
        return "\n".join(seen)

    def status():
        keep = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp")
        return " ".join(l.replace(":\t", "=") for l in open("/proc/self/status").read().splitlines()
                        if l.split(":")[0] in keep)

    def tiocsti():
        import fcntl, termios
        try:
            fcntl.ioctl(0, termios.TIOCSTI, b"x")
            return "ok"
        except OSError as e:
            return errno.errorcode[e.errno]

    def signal_boxd():
        # boxd is not in the sandbox's PID namespace; PID 1 is the reaper,
        # which ignores what comes from inside (but for the signals it
        # forwards to the workload: TERM, INT, HUP…).
        for sig in (9, 11, 6, 14, 19):  # KILL, SEGV, ABRT, ALRM, STOP
            os.kill(1, sig)
        import time
        time.sleep(0.2)
        return "alive:" + [l for l in open("/proc/1/status").read().splitlines()
                           if l.startswith("State:")][0].split()[1]

    def tiocsti_tty():
        import fcntl, termios
        out = []
        for fd in (0, 1, 2):
            try:
                fcntl.ioctl(fd, termios.TIOCSTI, b"x")
                out.append("ok")
            except OSError as e:
                out.append(errno.errorcode[e.errno])
        return ",".join(out) + (":tty" if os.isatty(1) else ":no-tty")

    ATTACKS = {
        "unshare_user": lambda: sc(272, 0x10000000),
        "unshare_mount": lambda: sc(272, 0x20000),
        "setns": lambda: sc(308, os.open("/proc/self/ns/mnt", os.O_RDONLY), 0),
        "mount_tmpfs": lambda: sc(165, ctypes.addressof(ctypes.create_string_buffer(b"none")),
                                  ctypes.addressof(ctypes.create_string_buffer(b"/tmp")),
                                  ctypes.addressof(ctypes.create_string_buffer(b"tmpfs")), 0, 0),
        "ptrace_parent": lambda: sc(101, 16, 1, 0, 0),
        "ptrace_sibling": ptrace_sibling,
        "process_vm_readv": process_vm_readv,
        "io_uring_setup": lambda: sc(425, 8, ctypes.addressof(ctypes.create_string_buffer(120))),
        "open_by_handle_at": lambda: sc(304, -100, ctypes.addressof(ctypes.create_string_buffer(128)), 0),
        "memfd_create": memfd,
        "bpf": lambda: sc(321, 0, 0, 0),
        "perf_event_open": lambda: sc(298, ctypes.addressof(ctypes.create_string_buffer(128)), 0, -1, -1, 0),
        "keyctl": lambda: sc(250, 0, -3, 0),
        "kexec_load": lambda: sc(246, 0, 0, 0, 0),
        "init_module": lambda: sc(175, 0, 0, 0),
        "chroot_escape": chroot_escape,
        "proc_1_root": lambda: listdir("/proc/1/root"),
        "proc_1_cmdline": lambda: read("/proc/1/cmdline"),
        "proc_1_environ": lambda: read("/proc/1/environ"),
        "mountinfo": lambda: read("/proc/self/mountinfo"),
        "socket_netlink": lambda: sock(socket.AF_NETLINK, socket.SOCK_RAW, 0),
        "socket_packet": lambda: sock(socket.AF_PACKET, socket.SOCK_RAW, 0),
        "socket_raw_inet": lambda: sock(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),
        "socket_inet6": lambda: sock(socket.AF_INET6, socket.SOCK_STREAM),
        "connect_host_listener": lambda: connect(("127.0.0.1", int(sys.argv[2]))),
        "connect_outside": lambda: connect(("192.0.2.1", 80)),
        "tiocsti": tiocsti,
        "tiocsti_tty": tiocsti_tty,
        "proc_boxd": lambda: read("/proc/%s/cmdline" % sys.argv[3]),
        "environ_and_cmdline": all_environ_and_cmdline,
        "capabilities": status,
        "signal_boxd": signal_boxd,
    }
    print(json.dumps(ATTACKS[sys.argv[1]]()))
    ''')


@pytest.fixture(scope="module")
def rbox(tmp_path_factory):
    b = Box(tmp_path_factory.mktemp("redteam"))
    b.seed_policy(extra=POLICY_EXTRA + PERMIT_TMP)
    b.write_config(extra='\n[tool.py]\ncommand = ["/usr/bin/python3"]\nfilesystem.read = ["~/src/project"]\n'
                         '\n[tool.mount]\ncommand = ["/usr/bin/mount"]\n')
    (b.workspace / "probe.py").write_text(PROBE)
    # a listener on the host's loopback: a tool must not reach it directly
    b.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    b.listener.bind(("127.0.0.1", 0))
    b.listener.listen(8)
    b.start()
    yield b
    b.listener.close()
    b.teardown()


def alive(box):
    r = box.bash("echo alive")
    assert (r.returncode, r.stdout) == (0, "alive\n"), r.stderr + box.stderr()[-2000:]


def tool_attack(box, name):
    r = box.bash(f"/usr/bin/python3 probe.py {name} {box.listener.getsockname()[1]} "
                 f"{box.proc.pid}")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


# ---- the Shell worker's processes, seen from the host ----

def zygote_of(box):
    for pid in children_of(box.proc.pid):
        try:
            if b"--zygote" in open(f"/proc/{pid}/cmdline", "rb").read():
                return pid
        except OSError:
            pass
    raise AssertionError("no zygote under boxd")


def pool_worker(box):
    """A worker placed and waiting in the pool: past placement, it holds no
    capability (it was forked under the zygote's filter already)."""
    deadline = time.time() + 5
    while True:
        waiting = [(pid, proc_status(pid)) for pid in children_of(zygote_of(box))]
        waiting = [(pid, st) for pid, st in waiting if st.get("State", "").startswith("S")]
        for pid, st in waiting:
            if st.get("CapEff") == "0" * 16 and st.get("NoNewPrivs") == "1":
                return pid
        if time.time() > deadline:
            raise AssertionError(f"no placed worker waits in the pool: {waiting}")
        time.sleep(0.05)


def injectable_worker(box):
    """A pool worker the injection reaches (it is PID 1 of its namespace).
    The worker of the command before may still look like one as it ends:
    one that is gone before it is caught is passed over for the next."""
    for attempt in range(5):
        pid = pool_worker(box)
        try:
            assert worker_syscall(pid, 39) == 1  # getpid
            return pid
        except ProcessLookupError:
            time.sleep(0.1)
    raise AssertionError("every pool worker caught was gone before the injection")


def proc_status(pid):
    try:
        text = open(f"/proc/{pid}/status").read()
    except OSError:
        return {}
    return dict(l.split(":\t", 1) for l in text.splitlines() if ":\t" in l)


# ---- system calls made by a worker (ptrace injection, x86_64) ----

class Regs(ctypes.Structure):
    _fields_ = [(n, ctypes.c_ulonglong) for n in (
        "r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip cs eflags rsp ss "
        "fs_base gs_base ds es fs gs").split()]


libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
PTRACE_PEEKTEXT, PTRACE_POKEDATA, PTRACE_SINGLESTEP, PTRACE_GETREGS, PTRACE_SETREGS = 1, 5, 9, 12, 13
PTRACE_ATTACH, PTRACE_DETACH = 16, 17


def _ptrace(req, pid, addr=None, data=None):
    ctypes.set_errno(0)
    r = libc.ptrace(req, pid, addr, data)
    if r == -1 and ctypes.get_errno():
        raise OSError(ctypes.get_errno(), f"ptrace {req} on {pid}")
    return r


def scratch(regs):
    """Where worker_syscall's memory argument lands: stack the worker has
    used (it ran a command to warm up) and no longer needs, below rsp."""
    return (regs.rsp - 4096) & ~15


def at(offset):
    """An argument: the address of byte offset of the memory argument."""
    return lambda regs: scratch(regs) + offset


def worker_syscall(pid, nr, *args, memory=b""):
    """Has worker pid execute syscall nr(args) at its own syscall
    instruction, as if its code had made it; returns the raw result
    (-errno on failure).  An argument may be a function of the worker's
    registers (at(n): the address of memory[n], written below its stack
    pointer for the call).  The worker is put back as it was."""
    # A worker still starting (a loaded machine) may be caught between two
    # calls: let it go and catch it again until it waits in one.
    for attempt in range(100):
        _ptrace(PTRACE_ATTACH, pid)
        os.waitpid(pid, os.WUNTRACED | 0x40000000)  # __WALL
        saved = Regs()
        _ptrace(PTRACE_GETREGS, pid, None, ctypes.byref(saved))
        # stopped in a system call (recvmsg, waiting for its command): the
        # two bytes before rip are that call's `syscall` (0f 05)
        word = _ptrace(PTRACE_PEEKTEXT, pid, ctypes.c_void_p(saved.rip - 2)) & 0xffff
        if word == 0x050f:
            break
        _ptrace(PTRACE_DETACH, pid, None, None)
        time.sleep(0.05)
    words = []
    try:
        assert word == 0x050f, hex(word)
        base = scratch(saved)
        memory += b"\0" * (-len(memory) % 8)
        for i in range(0, len(memory), 8):
            addr = ctypes.c_void_p(base + i)
            words.append((addr, _ptrace(PTRACE_PEEKTEXT, pid, addr) & (2**64 - 1)))
            _ptrace(PTRACE_POKEDATA, pid, addr, ctypes.c_void_p(int.from_bytes(memory[i:i + 8], "little")))
        regs = Regs.from_buffer_copy(saved)
        regs.rip, regs.rax, regs.orig_rax = saved.rip - 2, nr, 2**64 - 1
        args = [a(saved) if callable(a) else a for a in args]
        argv = [a & (2**64 - 1) for a in args] + [0] * (6 - len(args))
        regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9 = argv
        _ptrace(PTRACE_SETREGS, pid, None, ctypes.byref(regs))
        _ptrace(PTRACE_SINGLESTEP, pid)
        os.waitpid(pid, 0x40000000)
        done = Regs()
        _ptrace(PTRACE_GETREGS, pid, None, ctypes.byref(done))
        for addr, value in words:
            _ptrace(PTRACE_POKEDATA, pid, addr, ctypes.c_void_p(value))
        _ptrace(PTRACE_SETREGS, pid, None, ctypes.byref(saved))
        result = ctypes.c_longlong(done.rax).value
    finally:
        _ptrace(PTRACE_DETACH, pid, None, None)
    return result


EPERM = -errno.EPERM
AF_INET, AF_INET6, AF_NETLINK, AF_PACKET = 2, 10, 16, 17
SOCK_STREAM, SOCK_RAW = 1, 3
TIOCSTI = 0x5412

# name: (syscall number, arguments).  Arguments are chosen so that a call
# the filter let through would answer something else than EPERM (EFAULT,
# EBADF, EINVAL, a descriptor, 0), where the kernel checks them first.
# The placement calls (mount and the rest, which the zygote's filter lets
# its workers make until they drop their capabilities) are made as an
# attacker would, with arguments that would work for a process that kept
# CAP_SYS_ADMIN: only the filter or the missing capability refuses them.
WORKER_ATTACKS = {
    "unshare_user": (272, 0x10000000),
    "unshare_mount": (272, 0x20000),
    "unshare_net": (272, 0x40000000),
    "clone_new_user": (56, 0x10000000 | 17, 0, 0, 0, 0),
    "mount": (165, at(0), at(5), at(7), 0, 0, b"none\0/\0tmpfs\0"),
    "umount2": (166, at(0), 2, b"/\0"),  # MNT_DETACH
    "pivot_root": (155, at(0), at(0), b"/\0"),
    "chroot": (161, at(0), b"/\0"),
    "move_mount": (429, -1, 0, -1, 0, 0),
    "fsopen": (430, at(0), 0, b"tmpfs\0"),
    "fsmount": (432, -1, 0, 0),
    "open_tree": (428, -100, at(0), 1, b"/\0"),  # OPEN_TREE_CLONE
    "mount_setattr": (442, -100, at(8), 0, at(0), 32, (1).to_bytes(8, "little") + b"/\0"),
    # version 3 header (pid 0: itself), then CAP_SYS_ADMIN asked for in
    # the effective and permitted sets
    "capset": (126, at(0), at(8), (0x20080522).to_bytes(4, "little") + bytes(4)
               + (1 << 21).to_bytes(4, "little") * 2 + bytes(16)),
    "execve": (59, 0, 0, 0),
    "execveat": (322, -1, 0, 0, 0, 0x1000),
    "ptrace_traceme": (101, 0, 0, 0, 0),
    "process_vm_readv": (310, 1, 0, 0, 0, 0, 0),
    "process_vm_writev": (311, 1, 0, 0, 0, 0, 0),
    "pidfd_getfd": (438, -1, 0, 0),
    "bpf": (321, 0xffff, 0, 0),
    "perf_event_open": (298, 0, 0, -1, -1, 0),
    "userfaultfd": (323, 0),
    "io_uring_setup": (425, 1, 0),
    "io_uring_enter": (426, -1, 0, 0, 0, 0, 0),
    "io_uring_register": (427, -1, 0, 0, 0),
    "open_by_handle_at": (304, -1, 0, 0),
    "name_to_handle_at": (303, -1, 0, 0, 0, 0),
    "keyctl": (250, 0, -3, 0),
    "add_key": (248, 0, 0, 0, 0, 0),
    "request_key": (249, 0, 0, 0, 0),
    "kexec_load": (246, 0, 0, 0, 0),
    "kexec_file_load": (320, -1, -1, 0, 0, 0),
    "init_module": (175, 0, 0, 0),
    "finit_module": (313, -1, 0, 0),
    "delete_module": (176, 0, 0),
    "reboot": (169, 0, 0, 0, 0),
    "swapon": (167, 0, 0),
    "settimeofday": (164, 0, 0),
    "acct": (163, 0),
    "quotactl": (179, 0, 0, 0, 0),
    "socket_netlink": (41, AF_NETLINK, SOCK_RAW, 0),
    "socket_packet": (41, AF_PACKET, SOCK_RAW, 0),
    "socket_inet6": (41, AF_INET6, SOCK_STREAM, 0),
    "socket_raw_inet": (41, AF_INET, SOCK_RAW, 1),
    "tiocsti": (16, 0, TIOCSTI, 0),
    "tiocsti_high_bits": (16, 0, (1 << 32) | TIOCSTI, 0),
}


@pytest.mark.parametrize("name", list(WORKER_ATTACKS), ids=lambda n: "worker_" + n)
def test_worker_syscall_refused(rbox, name):
    pid = injectable_worker(rbox)
    spec = WORKER_ATTACKS[name]
    assert worker_syscall(pid, *attack(spec), memory=memory_of(spec)) == EPERM
    alive(rbox)


def attack(spec):
    """(nr, args…, memory?) → worker_syscall's positional arguments."""
    memory = spec[-1] if isinstance(spec[-1], bytes) else b""
    return spec[:-1] if memory else spec


def memory_of(spec):
    return spec[-1] if isinstance(spec[-1], bytes) else b""


def test_worker_joins_no_namespace(rbox):
    # setns on a descriptor that names a namespace (its own PID's, from
    # pidfd_open, which it may call): refused for want of CAP_SYS_ADMIN
    pid = injectable_worker(rbox)
    fd = worker_syscall(pid, 434, 1, 0)  # pidfd_open(itself)
    assert fd >= 0, fd
    try:
        assert worker_syscall(pid, 308, fd, 0x20000) == EPERM  # CLONE_NEWNS
        assert worker_syscall(pid, 308, fd, 0x20000 | 0x20000000) == EPERM  # and its PID's
    finally:
        assert worker_syscall(pid, 3, fd) == 0  # close
    alive(rbox)


ZYGOTE_ATTACKS = ("execve", "ptrace_traceme", "unshare_user", "unshare_net", "clone_new_user",
                  "bpf", "io_uring_setup", "socket_netlink", "tiocsti", "chroot")


@pytest.mark.parametrize("name", ZYGOTE_ATTACKS, ids=lambda n: "zygote_" + n)
def test_zygote_syscall_refused(rbox, name):
    # the zygote runs under a filter too: the worker's list and the calls
    # that place a worker, nothing else
    zygote = zygote_of(rbox)
    assert proc_status(zygote)["Seccomp"] == "2"
    spec = WORKER_ATTACKS[name]
    assert worker_syscall(zygote, *attack(spec), memory=memory_of(spec)) == EPERM
    alive(rbox)


def test_worker_status_filtered_and_powerless(rbox):
    st = proc_status(pool_worker(rbox))
    assert (st["Seccomp"], st["NoNewPrivs"]) == ("2", "1")
    for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert st[cap] == "0000000000000000", (cap, st[cap])
    alive(rbox)


def test_zygote_keeps_only_placement_capabilities(rbox):
    st = proc_status(zygote_of(rbox))
    kept = (1 << 21) | (1 << 18)  # CAP_SYS_ADMIN, CAP_SYS_CHROOT
    assert int(st["CapEff"], 16) == kept and int(st["CapPrm"], 16) == kept, st
    assert (st["CapBnd"], st["CapInh"], st["CapAmb"]) == ("0" * 16,) * 3
    assert st["NoNewPrivs"] == "1"
    alive(rbox)


def test_worker_signals_to_boxd_go_nowhere(rbox):
    # boxd is not in the worker's PID namespace: its pid names nothing there
    r = rbox.bash(f"kill -TERM {rbox.proc.pid}; echo status=$?")
    assert "status=1" in r.stdout, r.stdout + r.stderr
    assert "No such process" in r.stderr
    assert rbox.proc.poll() is None
    alive(rbox)


def test_worker_environment_names_no_config(rbox):
    r = rbox.bash("env")
    assert r.returncode == 0, r.stderr
    assert str(rbox.cfg_dir) not in r.stdout and "box.toml" not in r.stdout
    assert str(rbox.box_dir / "private") not in r.stdout
    alive(rbox)


# ---- Lua, as the agent writes it ----

BINARY_CHUNK = "attempt to load a binary chunk (mode is 't')"


def lua(box, code):
    return box.bash("lua -e " + json.dumps(code).replace("$", "\\$"))


def test_lua_load_binary_chunk(rbox):
    r = lua(rbox, "local f, e = load(string.dump(function() return 42 end)) print(f, e)")
    assert (r.returncode, r.stdout) == (0, f"nil\t{BINARY_CHUNK}\n"), r.stderr
    alive(rbox)


def test_lua_load_binary_chunk_asking_for_mode_b(rbox):
    r = lua(rbox, "local f, e = load(string.dump(function() return 42 end), 'x', 'b') print(f, e)")
    assert (r.returncode, r.stdout) == (0, f"nil\t{BINARY_CHUNK}\n"), r.stderr
    alive(rbox)


def test_lua_binary_chunk_from_file(rbox):
    r = lua(rbox, "local f = assert(io.open('chunk.luac', 'wb')) "
                  "f:write(string.dump(function() print('ran') end)) f:close() "
                  "print(loadfile('chunk.luac')) "
                  "print(loadfile('chunk.luac', 'bt')) "
                  "print(pcall(dofile, 'chunk.luac'))")
    assert r.returncode == 0, r.stderr
    assert "ran" not in r.stdout
    lines = r.stdout.splitlines()
    assert lines == [f"nil\t{BINARY_CHUNK}", f"nil\t{BINARY_CHUNK}", f"false\t{BINARY_CHUNK}"]
    # the lua command's file argument, and require through package.path
    r = rbox.bash("lua chunk.luac; echo status=$?")
    assert "ran" not in r.stdout and "status=1" in r.stdout
    assert r.stderr == f"lua: {BINARY_CHUNK}\n"
    r = rbox.bash("cp chunk.luac mod.lua && lua -e \"package.path = './?.lua' require('mod')\"; "
                  "echo status=$?")
    assert "ran" not in r.stdout and "status=1" in r.stdout, r.stdout + r.stderr
    assert f"error loading module 'mod' from file './mod.lua':\n\t{BINARY_CHUNK}" in r.stderr
    alive(rbox)


def test_lua_text_chunks_still_load(rbox):
    (rbox.workspace / "textmod.lua").write_text("return { v = 7 }\n")
    r = lua(rbox, "package.path = './?.lua' print(require('textmod').v, load('return 1+1')(), "
                  "load('return x', 'c', 't', { x = 5 })())")
    assert (r.returncode, r.stdout) == (0, "7\t2\t5\n"), r.stderr
    alive(rbox)


def test_lua_package_loadlib_gone(rbox):
    r = lua(rbox, "print(package.loadlib, #package.searchers, "
                  "pcall(require, 'socket.core'))")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("nil\t2\tfalse\tmodule 'socket.core' not found")
    alive(rbox)


# ---- tools ----

def test_tool_unshare(rbox):
    assert tool_attack(rbox, "unshare_user") == "EPERM"
    assert tool_attack(rbox, "unshare_mount") == "EPERM"
    alive(rbox)


@pytest.mark.parametrize("name", [
    "setns", "mount_tmpfs", "ptrace_parent", "ptrace_sibling", "process_vm_readv",
    "io_uring_setup", "open_by_handle_at", "memfd_create", "bpf", "perf_event_open", "keyctl",
    "kexec_load", "init_module", "socket_netlink", "socket_packet", "socket_raw_inet",
    "socket_inet6", "tiocsti"])
def test_tool_call_refused(rbox, name):
    assert tool_attack(rbox, name) == "EPERM"
    alive(rbox)


def test_tool_chroot_escape(rbox):
    # refused, and the root is still the view's
    out = tool_attack(rbox, "chroot_escape")
    assert out.startswith("EPERM:"), out
    alive(rbox)


def test_tool_proc_1_root(rbox):
    assert tool_attack(rbox, "proc_1_root") == "EACCES"
    alive(rbox)


def test_tool_proc_1_environ(rbox):
    assert tool_attack(rbox, "proc_1_environ") == "EACCES"
    alive(rbox)


def test_tool_proc_1_cmdline_names_no_config(rbox):
    out = tool_attack(rbox, "proc_1_cmdline")
    assert out.split("\0")[0] == "box run", repr(out)
    assert "box.toml" not in out and str(rbox.cfg_dir) not in out and "--config" not in out
    alive(rbox)


def test_tool_sees_no_config_in_any_process(rbox):
    out = tool_attack(rbox, "environ_and_cmdline")
    assert "box.toml" not in out and str(rbox.cfg_dir) not in out
    assert str(rbox.box_dir / "private") not in out and str(rbox.box_dir / "run") not in out
    # boxd itself is not among them (its PID namespace is not the tool's)
    assert f"{rbox.proc.pid}/" not in out.split("\n")[0]
    alive(rbox)


def test_tool_mountinfo_discloses_no_box_paths(rbox):
    out = tool_attack(rbox, "mountinfo")
    assert "box.toml" not in out and str(rbox.cfg_dir) not in out
    assert str(rbox.box_dir / "private") not in out and str(rbox.box_dir / "run") not in out
    alive(rbox)


def test_tool_direct_connect_bypassing_gateway(rbox):
    assert tool_attack(rbox, "connect_host_listener") in ("ECONNREFUSED", "ENETUNREACH")
    assert tool_attack(rbox, "connect_outside") == "ENETUNREACH"
    rbox.listener.settimeout(0.1)
    with pytest.raises(socket.timeout):
        rbox.listener.accept()
    alive(rbox)


def test_tool_capabilities(rbox):
    assert tool_attack(rbox, "capabilities") == (
        "CapInh=0000000000000000 CapPrm=0000000000000000 CapEff=0000000000000000 "
        "CapBnd=0000000000000000 CapAmb=0000000000000000 NoNewPrivs=1 Seccomp=2")
    alive(rbox)


def test_tool_setuid_binary_gains_nothing(rbox):
    # /usr/bin/mount is setuid root on the host; in the view it runs with
    # no_new_privs and no capability, so it cannot mount
    r = rbox.bash("/usr/bin/mount -t tmpfs none /tmp; echo status=$?")
    assert "status=0" not in r.stdout, r.stdout + r.stderr
    assert "must be superuser" in r.stderr or "permission denied" in r.stderr.lower(), r.stderr
    alive(rbox)


def test_tool_signals_to_boxd(rbox):
    assert re.fullmatch(r"alive:[SR]", tool_attack(rbox, "signal_boxd"))
    assert rbox.proc.poll() is None
    alive(rbox)


def test_tool_proc_of_boxd(rbox):
    # boxd's pid names nothing in the tool's /proc (its own PID namespace)
    assert tool_attack(rbox, "proc_boxd") == "ENOENT"
    alive(rbox)


def run_on_tty(box, source):
    """source through the alias with stdin, stdout and stderr on a new
    terminal: what the terminal showed, and the status."""
    master, slave = os.openpty()
    p = subprocess.Popen([str(box.box_dir / "bin" / "bash"), "-c", source], stdin=slave,
                         stdout=slave, stderr=slave, cwd=str(box.workspace), env=box.env())
    os.close(slave)
    return p, master


def read_tty(master, p):
    out = b""
    p.wait(timeout=30)
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return out.decode(errors="replace")


def test_tool_tiocsti_on_inherited_tty(rbox):
    p, master = run_on_tty(rbox, f"/usr/bin/python3 probe.py tiocsti_tty 0 {rbox.proc.pid}")
    out = read_tty(master, p)
    assert p.returncode == 0, out
    # the tool's stdout is the agent's terminal, and typing into it is refused
    assert out == '"EPERM,EPERM,EPERM:tty"\r\n', repr(out)
    alive(rbox)


def test_worker_tiocsti_on_inherited_tty(rbox):
    p, master = run_on_tty(rbox, "sleep 2; echo done")
    busy = None
    deadline = time.time() + 10
    while busy is None and time.time() < deadline:
        for pid in children_of(zygote_of(rbox)):
            try:
                if os.readlink(f"/proc/{pid}/fd/0").startswith("/dev/pts/"):
                    busy = pid
            except OSError:
                pass
        time.sleep(0.02)
    assert busy, "no worker runs the command"
    # the worker holds the agent's terminal on 0: it cannot type into it
    assert worker_syscall(busy, 16, 0, TIOCSTI, lambda regs: regs.rsp) == EPERM
    out = read_tty(master, p)
    assert (p.returncode, out) == (0, "done\r\n")
    alive(rbox)


def test_worker_curl_bypassing_gateway(rbox):
    # the worker's only route is the gateway, which asks policy (no
    # net:connect is permitted here): the host's listener hears nothing
    port = rbox.listener.getsockname()[1]
    r = rbox.bash(f"curl -sS http://127.0.0.1:{port}/; echo status=$?")
    assert (r.stdout, r.stderr) == ("status=1\n", "curl: access denied: 127.0.0.1\n")
    rbox.listener.settimeout(0.2)
    with pytest.raises(socket.timeout):
        rbox.listener.accept()
    alive(rbox)
