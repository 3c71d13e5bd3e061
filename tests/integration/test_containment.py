"""The escape suite.  From inside a tool sandbox and from inside the
agent's sandbox, a probe tries every way out it can think of; each attempt is
a test, and every one must fail the way the spec says (spec/runtime.md §5)."""
import json
import os
import shutil
import signal
import socket
import subprocess
import textwrap
import time

import pytest

from conftest import AcceptCounter, Box, host_mounts

PROBE = textwrap.dedent(r'''
    import ctypes, errno, json, os, socket, subprocess, sys, time
    libc = ctypes.CDLL(None, use_errno=True)
    HOME = os.environ["HOME"]
    BOX_DIR, PORT, ROLE, WS = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    R = {}

    def attempt(name, fn):
        try:
            out = fn()
            R[name] = "ESCAPED" if out is None else out
        except OSError as e:
            R[name] = errno.errorcode.get(e.errno, str(e.errno))
        except Exception as e:  # noqa
            R[name] = "error: %r" % (e,)

    def check(rc):
        if rc == -1:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
        return None

    def read(p):
        with open(p) as f:
            f.read()

    def connect(addr, family=socket.AF_INET):
        s = socket.socket(family, socket.SOCK_STREAM)
        s.settimeout(3)
        s.connect(addr)

    def caps():
        st = dict(l.split(":\t", 1) for l in open("/proc/self/status").read().splitlines()
                  if ":\t" in l)
        return "CapEff=%s CapBnd=%s NoNewPrivs=%s" % (
            st["CapEff"].strip(), st["CapBnd"].strip(), st["NoNewPrivs"].strip())

    attempt("read_ungranted", lambda: read(HOME + "/secret.txt"))
    attempt("list_home", lambda: os.listdir(HOME + "/elsewhere"))
    attempt("write_ro_view", lambda: open(HOME + "/ro/file.txt", "a").write("x"))
    attempt("create_in_ro_view", lambda: open(HOME + "/ro/new.txt", "w").write("x"))
    attempt("open_box_dir", lambda: ",".join(sorted(os.listdir(BOX_DIR))))
    attempt("open_box_private", lambda: read(BOX_DIR + "/private/box-id"))
    attempt("connect_broker", lambda: connect(BOX_DIR + "/run/box.sock", socket.AF_UNIX) or "connected")
    attempt("symlink_to_secret", lambda: read(WS + "/escape-secret"))
    attempt("symlink_to_box_dir", lambda: ",".join(sorted(os.listdir(WS + "/escape-box"))))
    attempt("box_dir_trust", lambda: ",".join(sorted(os.listdir(BOX_DIR + "/trust"))))
    attempt("symlink_to_root", lambda: os.listdir(WS + "/escape-root"))
    attempt("symlink_to_host_file", lambda: read(WS + "/escape-shadow"))
    attempt("read_denied", lambda: read(WS + "/denied/secret.txt"))
    attempt("host_loopback", lambda: connect(("127.0.0.1", PORT)))
    attempt("any_address", lambda: connect(("192.0.2.1", 80)))
    attempt("public_address", lambda: connect(("1.1.1.1", 443)))
    attempt("ipv6_socket", lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM) and None)
    attempt("netlink_socket", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0) and None)

    def ptrace_other():
        pid = os.fork()
        if pid == 0:
            time.sleep(5)
            os._exit(0)
        try:
            return check(libc.ptrace(16, pid, None, None))  # PTRACE_ATTACH
        finally:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
    attempt("ptrace", ptrace_other)
    attempt("ptrace_parent", lambda: check(libc.ptrace(16, os.getppid(), None, None)))
    attempt("mount", lambda: check(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)))
    attempt("umount", lambda: check(libc.umount2(b"/proc", 2)))
    attempt("unshare_user", lambda: check(libc.unshare(0x10000000)))
    attempt("unshare_mount", lambda: check(libc.unshare(0x00020000)))
    attempt("init_module", lambda: check(libc.syscall(175, None, 0, b"")))
    attempt("finit_module", lambda: check(libc.syscall(313, 0, b"", 0)))
    attempt("bpf", lambda: check(libc.syscall(321, 0, None, 0)))
    attempt("tiocsti", lambda: check(libc.ioctl(1, 0x5412, ctypes.c_char_p(b"x"))))
    attempt("capabilities", caps)
    attempt("setuid_binary", lambda: subprocess.run([WS + "/suid-cat", "/proc/self/status"],
                                                    capture_output=True, text=True).stdout and
            [l for l in subprocess.run([WS + "/suid-cat", "/proc/self/status"], capture_output=True,
                                       text=True).stdout.splitlines() if l.startswith("CapEff")][0])
    # PID 1 of the sandbox is boxd's launcher: its memory (a copy of boxd's,
    # or boxd's own) is nobody's to read or write.
    def reaper_memory(mode):
        with open("/proc/1/mem", mode, buffering=0) as f:
            f.seek(0x400000)
            f.read(16)
    attempt("reaper_memory", lambda: reaper_memory("rb"))
    # proc is read-only as a whole: a write is refused before the check.
    attempt("reaper_memory_write", lambda: reaper_memory("r+b"))
    attempt("reaper_maps", lambda: read("/proc/1/maps"))
    attempt("reaper_environ", lambda: read("/proc/1/environ"))
    attempt("reaper_fds", lambda: ",".join(os.listdir("/proc/1/fd")))
    # Signals a sandboxed process may send PID 1 (those it does not forward
    # back to the workload): PID 1 neither ends nor runs a handler of boxd's.
    def signal_reaper():
        import signal as sg
        for sig in (sg.SIGPROF, sg.SIGALRM, sg.SIGPIPE, sg.SIGSEGV, sg.SIGBUS, sg.SIGABRT,
                    sg.SIGIO, sg.SIGVTALRM, sg.SIGXCPU, sg.SIGSYS, sg.SIGTRAP, sg.SIGKILL,
                    sg.SIGSTOP, 32, 33, 34):
            os.kill(1, sig)
        time.sleep(0.2)
        os.kill(1, 0)
        state = [l for l in open("/proc/1/status").read().splitlines()
                 if l.startswith("State:")][0].split()[1]
        return "alive:" + state
    attempt("signal_reaper", signal_reaper)
    attempt("agent_bin_contents", lambda: ",".join(sorted(os.listdir(BOX_DIR + "/bin"))))
    attempt("exec_ungranted", lambda: subprocess.run([HOME + "/elsewhere/true"],
                                                     capture_output=True) and None)

    # Leave a process behind: it must end with the sandbox.  It proves it
    # runs (a marker in the workspace) before the probe ends.
    marker = WS + "/left-behind-" + ROLE + ".started"
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            # /proc/self/exe: the view holds the canonical interpreter,
            # whatever sys.executable spells.
            os.execv("/proc/self/exe", [sys.executable, "-c",
                                      "import sys, time; open(sys.argv[1], 'w').write('up'); "
                                      "time.sleep(60)", marker, "left-behind-" + ROLE])
        os._exit(0)
    os.wait()
    deadline = time.time() + 10
    while not os.path.exists(marker) and time.time() < deadline:
        time.sleep(0.02)
    R["left_started"] = os.path.exists(marker)
    print(json.dumps(R))
    sys.stdout.flush()
    ''')

EXPECTED = {
    "read_ungranted": {"ENOENT"},
    "list_home": {"ENOENT"},
    "write_ro_view": {"EROFS"},
    "create_in_ro_view": {"EROFS"},
    # The view holds only trust/cert.pem of box_dir (the CA variables name it).
    "open_box_dir": {"trust"},
    "open_box_private": {"ENOENT"},
    "symlink_to_secret": {"ENOENT"},
    "symlink_to_box_dir": {"trust"},
    # Only the gateway's public CA certificate, which the CA variables name.
    "box_dir_trust": {"cert.pem"},
    "symlink_to_root": {"ENOENT"},
    "symlink_to_host_file": {"ENOENT"},
    "read_denied": {"ENOENT"},
    "host_loopback": {"ECONNREFUSED", "ENETUNREACH"},
    "any_address": {"ENETUNREACH"},
    "public_address": {"ENETUNREACH"},
    "ipv6_socket": {"EPERM"},
    "netlink_socket": {"EPERM"},
    "ptrace": {"EPERM"},
    "ptrace_parent": {"EPERM", "ESRCH"},
    "mount": {"EPERM"},
    "umount": {"EPERM"},
    "unshare_user": {"EPERM"},
    "unshare_mount": {"EPERM"},
    "init_module": {"EPERM"},
    "finit_module": {"EPERM"},
    "bpf": {"EPERM"},
    "tiocsti": {"EPERM"},
    "capabilities": {"CapEff=0000000000000000 CapBnd=0000000000000000 NoNewPrivs=1"},
    "setuid_binary": {"CapEff:\t0000000000000000"},
    "exec_ungranted": {"ENOENT"},
    "reaper_memory": {"EACCES", "EPERM"},
    "reaper_memory_write": {"EROFS"},
    "reaper_maps": {"EACCES", "EPERM"},
    "reaper_environ": {"EACCES", "EPERM"},
    # PID 1 keeps no descriptor of boxd's (the mount's device, the broker).
    "reaper_fds": {"", "EACCES", "EPERM"},
    "signal_reaper": {"alive:S"},
}
TOOL_EXPECTED = dict(EXPECTED, connect_broker={"ENOENT"}, agent_bin_contents={"ENOENT"})
# The agent sees of box_dir only its aliases and the broker socket; its
# writable workspace is noexec (W^X), so the setuid copy does not even run.
AGENT_EXPECTED = dict(EXPECTED, connect_broker={"connected"}, agent_bin_contents={"bash,python,python3,sh,zsh"}, open_box_dir={"bin,run,trust"},
                      symlink_to_box_dir={"bin,run,trust"},
                      setuid_binary={"EACCES", "CapEff:\t0000000000000000"})


def left_behind(role):
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if f"left-behind-{role}".encode() in open(f"/proc/{entry}/cmdline", "rb").read():
                    found.append(int(entry))
            except OSError:
                pass
    return found


class Listener(AcceptCounter):
    """A TCP listener on host loopback: nothing contained may reach it."""
    def __init__(self):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        self.port = sock.getsockname()[1]
        super().__init__(sock)


def prepare(b: Box):
    home = b.home
    (home / "secret.txt").write_text("secret\n")
    (home / "elsewhere").mkdir()
    shutil.copy("/usr/bin/true", home / "elsewhere" / "true")
    (home / "ro").mkdir()
    (home / "ro" / "file.txt").write_text("read only\n")
    ws = b.workspace
    (ws / "denied").mkdir()
    (ws / "denied" / "secret.txt").write_text("denied\n")
    os.symlink(home / "secret.txt", ws / "escape-secret")
    os.symlink(b.box_dir, ws / "escape-box")
    os.symlink("/root", ws / "escape-root")
    os.symlink("/etc/shadow", ws / "escape-shadow")
    shutil.copy("/usr/bin/cat", ws / "suid-cat")
    # An ordinary user's box maps that user to uid 0 inside: its own setuid
    # file is the setuid-root file there.
    if os.geteuid() == 0:
        os.chown(ws / "suid-cat", 0, 0)
    os.chmod(ws / "suid-cat", 0o4755)
    (ws / "probe.py").write_text(PROBE)


@pytest.fixture(scope="module")
def tool_results(tmp_path_factory):
    b = Box(tmp_path_factory.mktemp("tool-escape"))
    prepare(b)
    b.seed_policy(extra="""
        permit(principal, action == Box::Action::"shell:spawn", resource)
        when { context.input.program == "/usr/bin/python3" };
        """)
    b.write_config(extra=textwrap.dedent("""
        [tool.py]
        command = ["/usr/bin/python3"]
        filesystem.write = ["~/src/project"]
        filesystem.read = ["~/ro"]
        filesystem.deny = ["~/src/project/denied"]
        """))
    listener = Listener()
    b.start()
    try:
        r = b.bash(f"/usr/bin/python3 probe.py {b.box_dir} {listener.port} tool {b.workspace}")
        assert r.returncode == 0, r.stderr
        results = json.loads(r.stdout)
        deadline = time.time() + 5
        while left_behind("tool") and time.time() < deadline:
            time.sleep(0.05)
        results["left_behind"] = left_behind("tool")
        results["loopback_accepted"] = listener.accepted
        yield results
    finally:
        listener.close()
        for pid in left_behind("tool"):
            os.kill(pid, signal.SIGKILL)
        b.stop()
        assert "boxfs-mnt" not in host_mounts()


@pytest.fixture(scope="module")
def agent_results(tmp_path_factory):
    b = Box(tmp_path_factory.mktemp("agent-escape"))
    prepare(b)
    probe_dir = b.root / "probe"
    probe_dir.mkdir()
    (probe_dir / "probe.py").write_text(PROBE)
    b.seed_policy()
    listener = Listener()
    b.write_config(
        agent_command=["/usr/bin/python3", str(probe_dir / "probe.py"), str(b.box_dir),
                       str(listener.port), "agent", str(b.workspace)],
        extra=textwrap.dedent(f"""
            [agent.filesystem]
            read = ["{probe_dir}", "~/ro"]
            write = ["~/src/project"]
            exec = ["/usr/lib/python3.11"]
            deny = ["~/src/project/denied"]
            """))
    try:
        status = b.run_to_end(timeout=60)
        assert status == 0, b.stderr()
        results = json.loads(b.stdout_path.read_text())
        deadline = time.time() + 5
        while left_behind("agent") and time.time() < deadline:
            time.sleep(0.05)
        results["left_behind"] = left_behind("agent")
        results["loopback_accepted"] = listener.accepted
        results["stderr"] = b.stderr()
        yield results
    finally:
        listener.close()
        for pid in left_behind("agent"):
            os.kill(pid, signal.SIGKILL)
        assert "boxfs-mnt" not in host_mounts()


@pytest.mark.parametrize("attempt", sorted(TOOL_EXPECTED))
def test_tool_escape(tool_results, attempt):
    assert tool_results[attempt] in TOOL_EXPECTED[attempt], tool_results[attempt]


@pytest.mark.parametrize("attempt", sorted(AGENT_EXPECTED))
def test_agent_escape(agent_results, attempt):
    assert agent_results[attempt] in AGENT_EXPECTED[attempt], agent_results[attempt]


def test_tool_leaves_no_process_behind(tool_results):
    assert tool_results["left_started"] is True
    assert tool_results["left_behind"] == []


def test_agent_leaves_no_process_behind(agent_results):
    assert agent_results["left_started"] is True
    assert agent_results["left_behind"] == []


def test_tool_background_process_seen_then_ended(box):
    """The detector the two tests above rely on sees a process a tool left
    running while the tool still runs, and sees it gone once it ends."""
    (box.workspace / "bg.py").write_text(textwrap.dedent("""\
        import os, subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "left-behind-live"],
                         start_new_session=True)
        while not os.path.exists("release"):
            time.sleep(0.02)
        """))
    box.start_with_tool("py", "/usr/bin/python3")
    proc = subprocess.Popen([str(box.box_dir / "bin" / "bash"), "-c", "/usr/bin/python3 bg.py"],
                            cwd=box.workspace, env=box.env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 15
        while not left_behind("live") and time.time() < deadline:
            time.sleep(0.02)
        assert left_behind("live"), "the background process never showed up"
        (box.workspace / "release").write_text("go\n")
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        deadline = time.time() + 5
        while left_behind("live") and time.time() < deadline:
            time.sleep(0.02)
        assert left_behind("live") == []
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in left_behind("live"):
            os.kill(pid, signal.SIGKILL)


def test_loopback_listener_never_reached(tool_results, agent_results):
    assert tool_results["loopback_accepted"] == 0
    assert agent_results["loopback_accepted"] == 0


def test_agent_disclosure(agent_results):
    err = agent_results["stderr"]
    assert "strands-box: [agent] runs /usr/bin/python3.11 with no policy decision over these " \
           "paths:\n" in err
    assert "\n  write       " in err and "(readable too: a writable bind reads)" in err
    assert "\n  exec        /usr/lib/python3.11\n" in err
    assert "strands-box: [agent] runtime minimum, added by Core:\n" in err
    assert "strands-box: [agent] HOME=" in err
    assert "/bin:" in err.split("strands-box: [agent] HOME=")[1].split("PATH=")[1]


def test_agent_exec_entry_below_an_unread_workspace(box):
    """An exec entry inside a workspace the agent may only enter: the
    workspace's empty placeholder must not hide the entry's mount point
    (the box died at start with "namespace reaper could not build the
    view")."""
    build = box.workspace / "build"
    build.mkdir()
    (build / "hello").write_text("#!/bin/sh\necho built\n")
    (build / "hello").chmod(0o755)
    box.seed_policy()
    box.write_config(agent_command=["/bin/sh", "-c", "cd \"$1\" && ./build/hello && echo *", "sh",
                                    str(box.workspace)])
    text = box.config.read_text().replace(
        f'workspace = "{box.workspace}"\n',
        f'workspace = "{box.workspace}"\nfilesystem.exec = ["{build}"]\n')
    box.config.write_text(text)
    assert box.run_to_end() == 0, box.stderr()
    # the workspace stays entry only: the exec entry is all that shows
    assert box.stdout_path.read_text() == "built\nbuild\n"
