"""The red team, the agent's part: the agent process is hostile
code that may run any system call.  It talks to boxd only through the broker
socket (<box_dir>/run/box.sock, spec/runtime.md §4.2) and sees only its own
sandbox (§5.10).  Each test is one named attack run for real FROM the agent
process; it asserts the exact refusal (or that nothing changed, nothing
leaked), and that boxd still answers a normal `bash -c 'echo alive'` from the
agent afterwards.

One box serves the module: its agent is a small attack server (AGENT below)
that reads one attack name per line on its stdin, runs it, runs the alias
`bash -c 'echo alive'`, and prints one JSON line on its stdout.
"""
import hashlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import textwrap
import time

import pytest

from conftest import BOX, AcceptCounter, Box, host_mounts

SECRET = "rt-agent-real-secret-8d1f0c"
# boxd's descriptor limit: low enough that the agent's processes can hold more
# connections than boxd has descriptors without a storm of threads.
BOXD_NOFILE = 1024
HOST_ONLY = "rt-agent-host-only-value"

AGENT = textwrap.dedent(r'''
    import array, ctypes, errno, json, os, select, socket, struct, subprocess, sys, time
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    BOX_DIR = sys.argv[1]
    SOCK = BOX_DIR + "/run/box.sock"
    ATTACKS = {}

    def attack(fn):
        ATTACKS[fn.__name__] = fn
        return fn

    def err(e):
        return errno.errorcode.get(e.errno, str(e.errno))

    def check(rc):
        if rc == -1:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
        return rc

    def frame(obj):
        data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        return struct.pack(">I", len(data)) + data

    def f(ftype, program=1, body=None):
        o = {"version": 6, "program": program, "frame_type": ftype}
        if body is not None:
            o["body"] = body
        return frame(o)

    def connect():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        end = time.time() + 10
        while True:  # a full backlog says EAGAIN at once: wait for boxd to accept
            try:
                s.connect(SOCK)
                return s
            except BlockingIOError:
                if time.time() > end:
                    raise
                time.sleep(0.005)

    def send(s, data, fds=()):
        if fds:
            s.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
        else:
            s.sendall(data)

    def replies(s, timeout=20):
        """Every frame boxd sends until it closes: [frame JSON...] + ["closed"],
        or + ["open"] when it neither answers nor closes within timeout."""
        buf, out = b"", []
        s.settimeout(timeout)
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                out.append("open")
                break
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                out.append("closed")
                break
            buf += chunk
            while len(buf) >= 4:
                n = struct.unpack(">I", buf[:4])[0]
                if len(buf) < 4 + n:
                    break
                out.append(json.loads(buf[4:4 + n]))
                buf = buf[4 + n:]
        s.close()
        return out

    def exchange(data, fds=(), shut=False, timeout=20):
        s = connect()
        send(s, data, fds)
        if shut:
            s.shutdown(socket.SHUT_WR)
        return replies(s, timeout)

    def denied(r):
        """A refusal, as the test compares it: (kind, reason, what followed)."""
        return [[x["body"]["kind"], x["body"]["reason"]] if isinstance(x, dict) and
                x.get("frame_type") == "denied" else x for x in r]

    def read_all(fd, timeout=10):
        out, end = b"", time.time() + timeout
        while time.time() < end:
            if not select.select([fd], [], [], max(0, end - time.time()))[0]:
                break
            chunk = os.read(fd, 65536)
            if not chunk:
                return out.decode(errors="replace")
            out += chunk
        return out.decode(errors="replace") + "<no EOF>"

    def call(source, stdin=None, extra_fds=(), frames=None):
        """A well-formed call with our own pipes as stdout/stderr: replies,
        stdout, stderr."""
        dn = os.open("/dev/null", os.O_RDONLY)
        ro, wo = os.pipe()
        re_, we = os.pipe()
        s = connect()
        data = frames if frames is not None else (
            f("open", body={"mode": "shell"}) + f("call", body={"source": source}) + f("input_eof"))
        send(s, data, [dn if stdin is None else stdin, wo, we, *extra_fds])
        for fd in (dn, wo, we):
            os.close(fd)
        r = replies(s, 40)
        out, e = read_all(ro), read_all(re_)
        os.close(ro)
        os.close(re_)
        return {"replies": r, "stdout": out, "stderr": e}

    def try_(fn, *a):
        try:
            v = fn(*a)
            return "ESCAPED" if v is None else v
        except OSError as e:
            return err(e)

    # ---- the broker socket, bad input ----
    @attack
    def frame_length_zero(a):
        return denied(exchange(b"\0\0\0\0"))

    @attack
    def frame_length_over_max(a):
        # Only the header: boxd must refuse on the length, before reading a body.
        return denied(exchange(struct.pack(">I", 1024 * 1024 + 1), timeout=10))

    @attack
    def frame_length_max_u32(a):
        return denied(exchange(b"\xff\xff\xff\xff", timeout=10))

    @attack
    def truncated_header(a):
        return denied(exchange(b"\0\0", shut=True))

    @attack
    def truncated_body(a):
        return denied(exchange(struct.pack(">I", 100) + b'{"version":6', shut=True))

    @attack
    def invalid_json(a):
        return denied(exchange(frame(b'{"version":6,"program":1,')))

    @attack
    def json_not_object(a):
        return [denied(exchange(frame(b'[1,2,3]'))), denied(exchange(frame(b'"call"'))),
                denied(exchange(frame(b'null')))]

    @attack
    def deep_json(a):
        """Nesting far past any parser's depth: as a frame, and as a body."""
        deep = b"[" * 200000 + b"]" * 200000
        body = b'{"version":6,"program":1,"frame_type":"open","body":' + \
            b'{"mode":' * 5000 + b'"shell"' + b"}" * 5000 + b"}"
        return [denied(exchange(frame(deep))), denied(exchange(frame(body)))]

    @attack
    def nul_and_bad_utf8_in_source(a):
        """A NUL inside the source (what follows it must not run unseen) and a
        source that is not UTF-8."""
        one = call(None, frames=f("open", body={"mode": "shell"}) + frame(
            b'{"version":6,"program":1,"frame_type":"call","body":'
            b'{"source":"echo seen\\u0000echo hidden > nul-ran"}}') + f("input_eof"))
        two = call(None, frames=f("open", body={"mode": "shell"}) + frame(
            b'{"version":6,"program":1,"frame_type":"call","body":{"source":"echo \xff\xfe"}}') +
            f("input_eof"))
        return {"nul": [denied(one["replies"]), one["stdout"],
                        os.path.exists(a["ws"] + "/nul-ran")],
                "utf8": [denied(two["replies"]), two["stdout"]]}

    @attack
    def wrong_version(a):
        return denied(exchange(frame({"version": 5, "program": 1, "frame_type": "open",
                                      "body": {"mode": "shell"}})))

    @attack
    def unknown_frame_type(a):
        return [denied(exchange(f("exit", body={"status": 0}))),
                denied(exchange(f("launch_missiles")))]

    @attack
    def missing_fields(a):
        return [denied(exchange(frame({"version": 6}))),
                denied(exchange(frame({"program": 1, "frame_type": "open"}))),
                denied(exchange(frame({"version": 6, "program": 1})))]

    @attack
    def wrong_types(a):
        return [denied(exchange(frame({"version": "6", "program": 1, "frame_type": "open"}))),
                denied(exchange(frame({"version": 6, "program": "1", "frame_type": "open"}))),
                denied(exchange(frame({"version": 6, "program": -1, "frame_type": "open"}))),
                denied(exchange(frame({"version": 6, "program": 1, "frame_type": 7}))),
                denied(exchange(f("open", body={"mode": "shell"}) +
                                f("call", body={"source": ["echo", "x"]}), fds=[0, 1, 2])),
                denied(exchange(f("open", body={"mode": "python"})))]

    @attack
    def unknown_field(a):
        return denied(exchange(frame({"version": 6, "program": 1, "frame_type": "open",
                                      "body": {"mode": "shell"}, "cwd": "/"})))

    @attack
    def call_without_open(a):
        return denied(exchange(f("call", body={"source": "echo x"}), fds=[0, 1, 2]))

    @attack
    def second_open(a):
        return denied(exchange(f("open", body={"mode": "shell"}) + f("open", 2, {"mode": "shell"})))

    @attack
    def call_without_fds(a):
        return denied(exchange(f("open", body={"mode": "shell"}) +
                               f("call", body={"source": "echo x > ran-without-fds"})))

    @attack
    def call_with_too_many_fds(a):
        """3 + 5, then 3 + 60 descriptors (beyond what one message's control
        buffer takes): the extras are boxd's to close, or the pipe below never
        sees its end."""
        res = {}
        for extra in (5, 60):
            r, w = os.pipe()
            got = call("echo many", extra_fds=[w] * extra)
            os.close(w)
            got["pipe"] = read_all(r, 5)
            os.close(r)
            res[extra] = got
        return res

    @attack
    def descriptor_hoarding(a):
        """One connection that never completes its request, each byte it sends
        carrying 8 descriptors: more than boxd has (BOXD_NOFILE), then a
        legitimate alias call while it is still open."""
        dn = os.open("/dev/null", os.O_RDONLY)
        s = connect()
        data = f("open", body={"mode": "shell"}) + struct.pack(">I", 100000)
        data += b"x" * (a["boxd_nofile"] // 8 + 100)
        sent = 0
        try:
            for i in range(len(data)):
                send(s, data[i:i + 1], [dn] * 8)
                sent += 8
        except OSError as e:
            sent = err(e)
        r = subprocess.run(["bash", "-c", "echo legit"], capture_output=True, text=True,
                           timeout=60)
        s.close()
        os.close(dn)
        return {"sent_over_boxd_limit": sent > a["boxd_nofile"] or sent,
                "legit": [r.returncode, r.stdout, r.stderr]}

    @attack
    def concurrent_calls(a):
        """Many commands at once, each holding a worker, then a legitimate call."""
        n = a.get("n", 100)
        dn = os.open("/dev/null", os.O_RDWR)
        socks = []
        for i in range(n):
            s = connect()
            send(s, f("open", body={"mode": "shell"}) + f("call", body={"source": "sleep 4"}) +
                 f("input_eof"), [dn, dn, dn])
            socks.append(s)
        os.close(dn)
        time.sleep(1)
        r = subprocess.run(["bash", "-c", "echo legit"], capture_output=True, text=True,
                           timeout=60)
        outcomes = {}
        for s in socks:
            got = json.dumps(denied(replies(s, 60)))
            outcomes[got] = outcomes.get(got, 0) + 1
        return {"legit": [r.returncode, r.stdout, r.stderr], "outcomes": outcomes}

    @attack
    def call_fds_are_sockets(a):
        x, y = socket.socketpair()
        s = connect()
        send(s, f("open", body={"mode": "shell"}) + f("call", body={"source": "echo via-socket"}) +
             f("input_eof"), [y.fileno(), y.fileno(), y.fileno()])
        y.close()
        r = replies(s, 40)
        x.settimeout(5)
        out = b""
        try:
            while True:
                c = x.recv(4096)
                if not c:
                    break
                out += c
        except socket.timeout:
            out += b"<no EOF>"
        return {"replies": r, "out": out.decode()}

    @attack
    def call_fds_are_o_path(a):
        # An O_PATH descriptor of a file as stdout: reopened through
        # /dev/fd/1 it would be a way to write where the fd points.
        target = a["ws"] + "/o-path-target"
        open(target, "w").write("before\n")
        p = os.open(target, os.O_PATH)
        dn = os.open("/dev/null", os.O_RDONLY)
        s = connect()
        send(s, f("open", body={"mode": "shell"}) +
             f("call", body={"source": "echo through-o-path > /dev/fd/1"}) + f("input_eof"),
             [dn, p, p])
        os.close(dn)
        os.close(p)
        r = denied(replies(s, 40))
        return {"replies": r, "target": open(target).read()}

    @attack
    def call_fds_are_proc(a):
        """A descriptor of the agent's own /proc/self/environ as stdin, and of
        /proc/self as stdin with the Shell walking it."""
        env_fd = os.open("/proc/self/environ", os.O_RDONLY)
        one = call("cat", stdin=env_fd)
        os.close(env_fd)
        d = os.open("/proc/self", os.O_RDONLY | os.O_DIRECTORY)
        two = call("cat /dev/fd/0/environ; ls /proc/self/fd/0/root/", stdin=d)
        os.close(d)
        return {"environ": [one["replies"], "real secret" if a["secret"] in one["stdout"]
                            else "no secret" if os.environ["RT_SECRET"] in one["stdout"] else
                            one["stdout"]],
                "walk": [denied(two["replies"]), two["stdout"]]}

    @attack
    def directory_fd_as_stdio(a):
        """A descriptor of the agent's root, and of the workspace, as the
        call's stdin: the Shell must not walk the agent's view through it."""
        res = {}
        for name, path in (("root", "/"), ("workspace", a["ws"])):
            d = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
            got = call("ls /dev/fd/0/; cat /dev/fd/0/etc/hostname; ls /proc/self/fd/0/", stdin=d)
            os.close(d)
            res[name] = [denied(got["replies"]), got["stdout"]]
        return res

    @attack
    def stdout_is_a_workspace_file(a):
        """Not an attack: the agent's `bash -c … > file` hands boxd a
        descriptor in the mount, and the check above must let it through."""
        out = os.open(a["ws"] + "/redirected.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        dn = os.open("/dev/null", os.O_RDONLY)
        s = connect()
        send(s, f("open", body={"mode": "shell"}) + f("call", body={"source": "echo into-file"}) +
             f("input_eof"), [dn, out, out])
        os.close(dn)
        os.close(out)
        return {"replies": replies(s, 40), "file": open(a["ws"] + "/redirected.txt").read()}

    @attack
    def alias_with_directory_stdin(a):
        """The real alias, its stdin a directory of the agent's view, the
        Shell told to walk it."""
        d = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
        try:
            r = subprocess.run(["bash", "-c", "ls /dev/fd/0/; cat /proc/self/fd/0/etc/hostname"],
                               stdin=d, capture_output=True, text=True, timeout=60)
        finally:
            os.close(d)
        return [r.returncode, r.stdout, r.stderr]

    @attack
    def frame_flood(a):
        """20,000 frames before the call, in one stream, then a real call."""
        s = connect()
        dn = os.open("/dev/null", os.O_RDONLY)
        ro, wo = os.pipe()
        flood = f("open", body={"mode": "shell"}) + f("signal", 7, {"kind": "interrupt"}) * 20000
        send(s, flood[:4096], [dn, wo, wo])
        os.close(dn)
        os.close(wo)
        s.sendall(flood[4096:] + f("call", body={"source": "echo after-flood"}) + f("input_eof"))
        r = replies(s, 60)
        out = read_all(ro)
        os.close(ro)
        return {"replies": r, "stdout": out}

    def hold_connections(limit, ready_w, release_r):
        """Connects until limit or until boxd stops taking connections; tells
        how many over ready_w, holds them until release_r closes."""
        held = []
        while len(held) < limit:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.setblocking(False)
            end = time.time() + 5
            while True:  # a full backlog says EAGAIN: wait for boxd to accept
                try:
                    s.connect(SOCK)
                    break
                except BlockingIOError:
                    if time.time() > end:
                        break
                    time.sleep(0.001)
            if time.time() > end:
                s.close()
                break
            held.append(s)
        os.write(ready_w, b"%d\n" % len(held))
        os.read(release_r, 1)
        for s in held:
            s.close()

    @attack
    def idle_connections(a):
        """Connections that never send a byte, more than boxd has descriptors
        (four processes of the agent's, each to its own descriptor limit; boxd
        runs under BOXD_NOFILE), then a legitimate alias call."""
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        per = min(hard - 64, 8000)
        ready_r, ready_w = os.pipe()
        release_r, release_w = os.pipe()
        kids = []
        first = connect()  # the oldest idle connection: it is told why it ends
        try:
            for _ in range(4):
                pid = os.fork()
                if pid == 0:
                    os.close(release_w)
                    try:
                        hold_connections(per, ready_w, release_r)
                    finally:
                        os._exit(0)
                kids.append(pid)
            text = b""
            while text.count(b"\n") < len(kids):
                text += os.read(ready_r, 64)
            counts = [int(n) for n in text.split()]
            t1 = time.time()
            r = subprocess.run(["bash", "-c", "echo legit"], capture_output=True, text=True,
                               timeout=60)
            return {"first": denied(replies(first, 10)),
                    "held_over_boxd_limit": sum(counts) > a["boxd_nofile"] or counts,
                    "legit": [r.returncode, r.stdout, r.stderr],
                    "legit_fast": time.time() - t1 < 10 or time.time() - t1}
        finally:
            os.close(release_w)
            for pid in kids:
                os.waitpid(pid, 0)
            for fd in (ready_r, ready_w, release_r):
                os.close(fd)
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    @attack
    def slowloris(a):
        """A valid request, one byte a second: boxd must give up on it."""
        data = f("open", body={"mode": "shell"})
        s = connect()
        s.setblocking(False)
        t0 = time.time()
        i = 0
        got = b""
        while time.time() - t0 < 45:
            try:
                s.send(data[i % len(data):i % len(data) + 1])
            except (BrokenPipeError, ConnectionResetError):
                break
            i += 1
            try:
                c = s.recv(4096)
                if not c:
                    break
                got += c
            except BlockingIOError:
                pass
            time.sleep(1)
        took = time.time() - t0
        s.settimeout(2)
        try:  # what boxd said before it closed, if a send failed first
            while True:
                c = s.recv(4096)
                if not c:
                    break
                got += c
        except OSError:
            pass
        s.close()
        frames = []
        while len(got) >= 4:
            n = struct.unpack(">I", got[:4])[0]
            frames.append(json.loads(got[4:4 + n]))
            got = got[4 + n:]
        return {"given_up_within_30s": took < 30, "replies": denied(frames)}

    @attack
    def signal_for_another_program(a):
        """Connection A runs a command; B (another connection) and A itself
        send signal frames for programs that are not A's."""
        dn = os.open("/dev/null", os.O_RDONLY)
        ro, wo = os.pipe()
        sa = connect()
        send(sa, f("open", body={"mode": "shell"}) +
             f("call", body={"source": "sleep 2; echo done"}) + f("input_eof"), [dn, wo, wo])
        os.close(dn)
        os.close(wo)
        time.sleep(0.5)
        other = denied(exchange(f("open", body={"mode": "shell"}) +
                                f("signal", 1, {"kind": "interrupt"}) + f("close")))
        sa.sendall(f("signal", 2, {"kind": "interrupt"}))
        r = replies(sa, 40)
        out = read_all(ro)
        os.close(ro)
        return {"other": other, "replies": r, "stdout": out}

    @attack
    def second_call_on_one_connection(a):
        got = call(None, frames=f("open", body={"mode": "shell"}) +
                   f("call", body={"source": "echo first"}) +
                   f("call", body={"source": "echo second > second-call-ran"}) + f("input_eof"))
        return [got["replies"], got["stdout"], os.path.exists(a["ws"] + "/second-call-ran")]

    # ---- the agent's sandbox ----
    @attack
    def read_box_private(a):
        return {p: try_(lambda q: open(q, "rb").read() and None, BOX_DIR + p)
                for p in ("/private/box-id", "/private/history.jsonl",
                          "/private/telemetry/records.jsonl")} | {
            "list": try_(lambda: ",".join(sorted(os.listdir(BOX_DIR))))}

    @attack
    def write_box_bin(a):
        b = BOX_DIR + "/bin/"
        return {
            "append": try_(lambda: open(b + "bash", "ab").write(b"#evil") and None),
            "truncate": try_(lambda: os.truncate(b + "sh", 0)),
            "create": try_(lambda: open(b + "python3", "w").write("x") and None),
            "unlink": try_(lambda: os.unlink(b + "zsh")),
            "rename": try_(lambda: os.rename(b + "zsh", b + "zsh2")),
            "chmod": try_(lambda: os.chmod(b + "bash", 0o777)),
        }

    @attack
    def replace_broker_socket(a):
        def rebind():
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(BOX_DIR + "/run/evil.sock")
        return {"unlink": try_(lambda: os.unlink(SOCK)), "bind": try_(rebind),
                "rename": try_(lambda: os.rename(SOCK, BOX_DIR + "/run/old.sock"))}

    @attack
    def open_config_and_policy(a):
        return {p: try_(lambda q: open(q, "rb").read() and None, p)
                for p in (a["config"], a["policy"], os.path.dirname(a["config"]))}

    @attack
    def find_boxd_in_proc(a):
        found = []
        for e in os.listdir("/proc"):
            if e.isdigit():
                try:
                    cmd = open("/proc/%s/cmdline" % e, "rb").read().split(b"\0")
                except OSError:
                    continue
                if cmd[0].endswith(b"/box") or cmd[0].endswith(b"/box-shell"):
                    found.append([e, b" ".join(cmd).decode(errors="replace")])
        return found

    @attack
    def signal_and_ptrace_boxd(a):
        pid = a["boxd"]
        pidfd = libc.syscall(434, pid, 0)  # pidfd_open
        pe = ctypes.get_errno()
        return {"kill": try_(lambda: check(libc.kill(pid, 0)) and None),
                "kill_term": try_(lambda: check(libc.kill(pid, 15)) and None),
                "ptrace": try_(lambda: check(libc.ptrace(16, pid, None, None)) and None),
                "pidfd_open": "fd" if pidfd >= 0 else errno.errorcode[pe],
                "tgkill": try_(lambda: check(libc.syscall(234, pid, pid, 15)) and None)}

    @attack
    def boxd_proc_files(a):
        out = {}
        for pid in (a["boxd"], 1):
            for what in ("environ", "root/", "cwd/", "fd/", "mem", "maps"):
                p = "/proc/%d/%s" % (pid, what)
                if what.endswith("/"):
                    out[p] = try_(lambda q: ",".join(sorted(os.listdir(q))), p)
                else:
                    out[p] = try_(lambda q: open(q, "rb").read(1) and None, p)
        return out

    @attack
    def gateway_forged_headers(a):
        """Through the gateway, to a host-loopback listener, with headers that
        claim the request was already judged."""
        port = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
        res = []
        for req in ("GET http://127.0.0.1:%d/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % port,
                    "CONNECT localhost:%d HTTP/1.1\r\nHost: localhost\r\n\r\n" % port,
                    "GET http://127.0.0.1:%d/ HTTP/1.1\r\nHost: example.com\r\n"
                    "x-strands-box-egress: permitted\r\nX-Forwarded-For: 10.0.0.1\r\n"
                    "Proxy-Authorization: Basic Ym94OmJveA==\r\n\r\n" % a["port"],
                    "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: example.com:443\r\n"
                    "x-strands-box-egress: permitted\r\n\r\n" % a["port"],
                    "GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % a["port"]):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(req.encode())
            reply = b""
            try:
                while b"\r\n\r\n" not in reply:
                    c = s.recv(4096)
                    if not c:
                        break
                    reply += c
            except socket.timeout:
                pass
            s.close()
            head = reply.partition(b"\r\n\r\n")[0].decode(errors="replace").lower()
            res.append([head.split("\r\n")[0].split(" ")[1] if head else "no reply",
                        "x-strands-box-egress: refused" in head])
        return res

    @attack
    def bypass_gateway(a):
        gw = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
        def conn(addr, fam=socket.AF_INET):
            s = socket.socket(fam, socket.SOCK_STREAM)
            s.settimeout(3)
            try:
                s.connect(addr)
            finally:
                s.close()
            return "connected"
        out = {"listener": try_(conn, ("127.0.0.1", a["port"])),
               "listener_127_1_2_3": try_(conn, ("127.1.2.3", a["port"])),
               "gateway": try_(conn, ("127.0.0.1", gw)),
               "abstract_unix": try_(conn, a["abstract"].encode("latin-1"), socket.AF_UNIX)}
        for ip in a["host_ips"]:
            out["host_" + ip] = try_(conn, (ip, a["port"]))
        return out

    @attack
    def unshare_mount_setns(a):
        fd = try_(lambda: os.open("/proc/1/ns/mnt", os.O_RDONLY))
        return {"unshare_user": try_(lambda: check(libc.unshare(0x10000000)) and None),
                "unshare_mount": try_(lambda: check(libc.unshare(0x00020000)) and None),
                "unshare_net": try_(lambda: check(libc.unshare(0x40000000)) and None),
                "mount": try_(lambda: check(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)) and None),
                "fsopen": try_(lambda: check(libc.syscall(430, b"tmpfs", 0)) and None),
                "open_tree": try_(lambda: check(libc.syscall(428, -100, b"/", 1)) and None),
                "setns_pid1_mnt": fd if isinstance(fd, str) else
                try_(lambda: check(libc.setns(fd, 0)) and None),
                "chroot": try_(lambda: check(libc.chroot(b"/tmp")) and None)}

    @attack
    def capabilities(a):
        st = dict(l.split(":\t", 1) for l in open("/proc/self/status").read().splitlines()
                  if ":\t" in l)
        return {k: st[k].strip() for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb",
                                            "NoNewPrivs", "Seccomp")}

    @attack
    def setuid_binaries(a):
        """Every setuid program the view shows runs without privilege."""
        found = []
        for d in ("/usr/bin", "/bin", "/usr/sbin", "/sbin"):
            try:
                names = os.listdir(d)
            except OSError:
                continue
            for n in names:
                try:
                    st = os.stat(os.path.join(d, n))
                except OSError:
                    continue
                if st.st_mode & 0o4000 and st.st_uid == 0:
                    found.append(os.path.join(d, n))
        def run(p):
            r = subprocess.run([p, "-u"], capture_output=True, text=True)
            return [r.returncode, r.stdout]
        st = os.stat(a["ws"] + "/suid-id")
        return {"found": found, "planted_mode": oct(st.st_mode & 0o7777),
                "planted": try_(run, a["ws"] + "/suid-id"),
                "own_chmod": try_(lambda: os.chmod(a["ws"] + "/own-suid", 0o4755) or
                                  oct(os.stat(a["ws"] + "/own-suid").st_mode & 0o7777))}

    @attack
    def environment_leak(a):
        env = dict(os.environ)
        raw = open("/proc/self/environ", "rb").read()
        return {"secret_anywhere": a["secret"].encode() in raw or
                any(a["secret"] in v for v in env.values()),
                "phantom": env.get("RT_SECRET", "")[:12] + "<%d>" % len(env.get("RT_SECRET", "")),
                "host_only": "RT_HOST_ONLY" in env or a["host_only"].encode() in raw,
                "user": env.get("USER")}

    @attack
    def shell_environment_leak(a):
        got = call("echo \"$RT_SECRET\"; echo \"${RT_HOST_ONLY-unset}\"; env")
        return {"secret_anywhere": a["secret"] in got["stdout"] + got["stderr"],
                "first": got["stdout"].splitlines()[:2] == [os.environ["RT_SECRET"], "unset"],
                "replies": got["replies"]}

    @attack
    def tiocsti(a):
        return {fd: try_(lambda q: check(libc.ioctl(q, 0x5412, ctypes.c_char_p(b"x"))) and None, fd)
                for fd in (0, 1, 2)}

    @attack
    def keyctl(a):
        return {"keyctl_join": try_(lambda: check(libc.syscall(250, 1, None)) and None),
                "keyctl_read_session": try_(lambda: check(libc.syscall(250, 11, -3, None, 0)) and None),
                "add_key": try_(lambda: check(libc.syscall(248, b"user", b"k", b"v", 1, -3)) and None),
                "request_key": try_(lambda: check(libc.syscall(249, b"user", b"k", None, -3)) and None)}

    @attack
    def box_control_files(a):
        """The mount's /.box control files: not in the agent's view, however
        the mount is reached; and a Shell command reads only its own denial."""
        out = {"root": try_(lambda: open("/.box/mydenial").read() and None)}
        mps = [l.split()[4] for l in open("/proc/self/mountinfo") if " fuse" in l]
        out["fuse_mounts_seen"] = bool(mps)
        reached = []
        for mp in mps:
            for rel in ("/.box/mydenial", "/../.box/mydenial", "/../../.box/mydenial",
                        "/../../../.box/mydenial", "/../../../../.box/mydenial"):
                try:
                    open(mp + rel).read()
                    reached.append(mp + rel)
                except OSError:
                    pass
        out["reached"] = reached
        # Command A holds a denial; command B, running meanwhile, reads the
        # control file: only its own denial, never A's.
        dn = os.open("/dev/null", os.O_RDONLY)
        ro, wo = os.pipe()
        sa = connect()
        send(sa, f("open", body={"mode": "shell"}) +
             f("call", body={"source": "cat ~/rt-denied-A; sleep 2; cat /.box/mydenial"}) +
             f("input_eof"), [dn, wo, wo])
        os.close(dn)
        os.close(wo)
        time.sleep(0.7)
        b = call("cat /.box/mydenial; echo ---; cat ~/rt-denied-B; cat /.box/mydenial")
        ra = replies(sa, 40)
        a_out = read_all(ro)
        os.close(ro)
        out["a"] = [ra, a_out]
        out["b"] = [b["replies"], b["stdout"], b["stderr"]]
        return out

    @attack
    def dangerous_syscalls(a):
        sc = lambda *args: try_(lambda: check(libc.syscall(*args)) and None)
        return {"io_uring_setup": sc(425, 8, ctypes.create_string_buffer(120)),
                "userfaultfd": sc(323, 0),
                "process_vm_readv": sc(310, 1, None, 0, None, 0, 0),
                "perf_event_open": sc(298, ctypes.create_string_buffer(128), 0, -1, -1, 0),
                "bpf": sc(321, 0, None, 0),
                "open_by_handle_at": sc(304, -100, ctypes.create_string_buffer(16), 0),
                "pidfd_getfd": sc(438, 0, 0, 0),
                "kexec_load": sc(246, 0, 0, None, 0),
                "init_module": sc(175, None, 0, b"")}

    @attack
    def devices_and_sysctls(a):
        return {p: try_(lambda q: os.close(os.open(q, os.O_WRONLY)), p)
                for p in ("/dev/fuse", "/dev/kmsg", "/dev/mem", "/dev/tty", "/dev/sda",
                          "/proc/sys/kernel/core_pattern", "/proc/sys/kernel/panic",
                          "/proc/sys/vm/drop_caches", "/proc/irq/default_smp_affinity",
                          "/sys/kernel/uevent_helper")}

    @attack
    def sysctl_rewrite_same(a):
        """Writes back exactly what a global sysctl holds (no change if it
        works): whether the host's kernel settings are writable at all."""
        uid = [l for l in open("/proc/self/status") if l.startswith("Uid:")][0].split()[1:]
        val = open("/proc/sys/kernel/core_pattern").read()
        def w():
            fd = os.open("/proc/sys/kernel/core_pattern", os.O_WRONLY)
            try:
                os.write(fd, val.encode())
            finally:
                os.close(fd)
        return {"uid": uid, "write": try_(w)}

    @attack
    def shell_sysctl(a):
        """The same from inside a Shell command: its worker is hostile code too."""
        got = call("cat /proc/sys/kernel/core_pattern; echo \"$(cat /proc/sys/kernel/core_pattern)\" "
                   "> /proc/sys/kernel/core_pattern; ls /proc | head -3")
        return [denied(got["replies"]), got["stdout"], got["stderr"]]

    @attack
    def nothing(a):
        return "ok"

    def alive():
        try:
            r = subprocess.run(["bash", "-c", "echo alive"], capture_output=True, text=True,
                               timeout=60)
            return [r.returncode, r.stdout, r.stderr]
        except Exception as e:  # noqa
            return repr(e)

    for line in sys.stdin:
        req = json.loads(line)
        try:
            result = ATTACKS[req["name"]](req["args"])
        except Exception as e:  # noqa
            import traceback
            result = "crashed: " + traceback.format_exc()
        print(json.dumps({"name": req["name"], "result": result, "alive": alive()},
                         default=str), flush=True)
    ''')


class AgentBox(Box):
    """A box whose agent takes attacks on its stdin and answers on its stdout."""

    def env(self):
        return {**super().env(), "RT_SECRET": SECRET, "RT_HOST_ONLY": HOST_ONLY}

    def start_agent(self):
        self.proc = subprocess.Popen(
            ["prlimit", f"--nofile={BOXD_NOFILE}:{BOXD_NOFILE}", "--",
             str(BOX), "run", "--config", str(self.config)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=open(self.stderr_path, "wb"), env=self.env(),
            cwd=str(self.root))
        self.pending = b""

    def run_attack(self, name, args, timeout=240):
        self.proc.stdin.write((json.dumps({"name": name, "args": args}) + "\n").encode())
        self.proc.stdin.flush()
        fd = self.proc.stdout.fileno()
        deadline = time.time() + timeout
        while b"\n" not in self.pending:
            left = deadline - time.time()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise AssertionError(f"the agent never answered {name}: " + self.stderr()[-2000:])
            chunk = os.read(fd, 65536)
            if not chunk:
                raise AssertionError(f"the box ended during {name}: " + self.stderr()[-2000:])
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return json.loads(line)


class Listener(AcceptCounter):
    """Host loopback TCP and abstract AF_UNIX listeners nothing contained may reach."""

    def __init__(self):
        tcp = socket.socket()
        tcp.bind(("0.0.0.0", 0))
        tcp.listen(16)
        self.port = tcp.getsockname()[1]
        self.abstract = "\0boxfs-rt-agent-%d" % os.getpid()
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        unix.bind(self.abstract)
        unix.listen(16)
        super().__init__(tcp, unix)


def host_ips():
    out = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
    return [ip for ip in out if ":" not in ip][:3]


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def rt(tmp_path_factory):
    b = AgentBox(tmp_path_factory.mktemp("rt-agent"))
    probe = b.root / "probe"
    probe.mkdir()
    (probe / "agent.py").write_text(AGENT)
    b.seed_policy(extra="""
        permit(principal, action == Box::Action::"net:connect", resource);
        permit(principal, action == Box::Action::"http:request", resource);
        """)
    b.write_config(
        agent_command=["/usr/bin/python3", str(probe / "agent.py"), str(b.box_dir)],
        extra=textwrap.dedent(f"""
            [agent.filesystem]
            read = ["{probe}"]
            write = ["~/src/project"]
            exec = ["/usr/lib/python3.11"]

            [egress.api]
            destinations = ["api.example.com:443"]
            secret.ref = "env://RT_SECRET"
            """))
    listener = Listener()
    b.start_agent()
    try:
        deadline = time.time() + 20
        while not (b.box_dir / "run" / "box.sock").exists():
            assert b.proc.poll() is None and time.time() < deadline, b.stderr()
            time.sleep(0.05)
        first = b.run_attack("nothing", {})
        assert first["alive"] == [0, "alive\n", ""], (first, b.stderr())
        b.listener = listener
        b.args = {"ws": str(b.workspace), "config": str(b.config), "policy": str(b.policy),
                  "boxd": b.proc.pid, "port": listener.port, "abstract": listener.abstract,
                  "host_ips": host_ips(), "secret": SECRET, "host_only": HOST_ONLY,
                  "boxd_nofile": BOXD_NOFILE}
        yield b
    finally:
        status = b.proc.poll()
        if status is None:
            b.proc.stdin.close()  # the agent ends at EOF, and the box with it
            try:
                status = b.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                b.proc.send_signal(signal.SIGTERM)
                b.proc.wait(timeout=30)
        listener.close()
        assert "boxfs-mnt" not in host_mounts()
    # After every attack the box still ends as a box ends: with its agent's status.
    assert status == 0, b.stderr()[-2000:]


def attack(rt, name):
    got = rt.run_attack(name, rt.args)
    assert rt.proc.poll() is None, "boxd ended: " + rt.stderr()[-2000:]
    assert got["alive"] == [0, "alive\n", ""], (name, got)
    assert not (isinstance(got["result"], str) and got["result"].startswith("crashed")), \
        got["result"]
    return got["result"]


CUT = ["transport_error", "a frame was cut short or timed out"]
NOT_OBJECT = ["transport_error", "a frame is not a JSON object"]
STDIO = "a call's stdin, stdout and stderr must be files, pipes, sockets or character devices"
RUNNING = "at most 64 commands run at once in this box; this one was not started"
NEEDS = ["transport_error", "a frame needs a `program` number and a `frame_type`"]
# boxd's replies to a call whose command exited 0: the exit frame, then the end of the connection
EXITED = [{"version": 6, "program": 1, "frame_type": "exit", "body": {"status": 0}}, "closed"]


# ---- the broker socket, bad input ----

def test_frame_length_zero(rt):
    assert attack(rt, "frame_length_zero") == [NOT_OBJECT, "closed"]


@pytest.mark.parametrize("name", ["frame_length_over_max", "frame_length_max_u32"])
def test_frame_length_over_limit(rt, name):
    r = attack(rt, name)
    assert len(r) == 2 and r[1] == "closed", r
    assert r[0][0] == "transport_error" and "1048576" in r[0][1], r


def test_truncated_header(rt):
    assert attack(rt, "truncated_header") == [CUT, "closed"]


def test_truncated_body(rt):
    assert attack(rt, "truncated_body") == [CUT, "closed"]


def test_invalid_json(rt):
    assert attack(rt, "invalid_json") == [NOT_OBJECT, "closed"]


def test_json_not_an_object(rt):
    assert attack(rt, "json_not_object") == [[NOT_OBJECT, "closed"]] * 3


def test_deep_json(rt):
    assert attack(rt, "deep_json") == [[NOT_OBJECT, "closed"]] * 2


def test_nul_and_bad_utf8_in_source(rt):
    r = attack(rt, "nul_and_bad_utf8_in_source")
    assert r == {
        "nul": [[["transport_error", "a call's `source` contains a NUL character"], "closed"], "",
                False],
        "utf8": [[["transport_error", "a frame is not valid UTF-8"], "closed"], ""]}, r


def test_wrong_version(rt):
    assert attack(rt, "wrong_version") == [
        ["version_mismatch", "unsupported protocol version 5; this box speaks 6"], "closed"]


def test_unknown_frame_type(rt):
    assert attack(rt, "unknown_frame_type") == [
        [["transport_error", "a client may not send a `exit` frame"], "closed"],
        [["transport_error", "a client may not send a `launch_missiles` frame"], "closed"]]


def test_missing_fields(rt):
    assert attack(rt, "missing_fields") == [
        [NEEDS, "closed"],
        [["transport_error", "a frame carries no protocol version"], "closed"],
        [NEEDS, "closed"]]


def test_wrong_types(rt):
    assert attack(rt, "wrong_types") == [
        [["transport_error", "a frame carries no protocol version"], "closed"],
        [NEEDS, "closed"], [NEEDS, "closed"], [NEEDS, "closed"],
        [["transport_error", "a call frame needs a `source` string"], "closed"],
        [["transport_error", "this box serves only the shell mode"], "closed"]]


def test_unknown_frame_field(rt):
    assert attack(rt, "unknown_field") == [["transport_error", "unknown frame field `cwd`"],
                                           "closed"]


def test_call_without_open(rt):
    assert attack(rt, "call_without_open") == [
        ["transport_error", "transport program 1 is not open"], "closed"]


def test_second_open(rt):
    assert attack(rt, "second_open") == [
        ["over_budget", "this box serves one program per connection"], "closed"]


def test_call_without_fds(rt):
    assert attack(rt, "call_without_fds") == [
        ["transport_error", "a call frame must carry the caller's stdin, stdout and stderr"],
        "closed"]
    assert not (rt.workspace / "ran-without-fds").exists()


def test_call_with_too_many_fds(rt):
    r = attack(rt, "call_with_too_many_fds")
    for extra in ("5", "60"):
        # The call runs on the first three; boxd keeps none of the rest.
        assert r[extra] == {"replies": EXITED, "stdout": "many\n", "stderr": "",
                            "pipe": ""}, (extra, r[extra])


def test_descriptor_hoarding(rt):
    r = attack(rt, "descriptor_hoarding")
    assert r == {"sent_over_boxd_limit": True, "legit": [0, "legit\n", ""]}, r


def test_concurrent_calls(rt):
    r = attack(rt, "concurrent_calls")
    exit0 = json.dumps(EXITED)
    refused = json.dumps([["over_budget", RUNNING], "closed"])
    assert r == {"legit": [125, "", "box-alias: " + RUNNING + "\n"],
                 "outcomes": {exit0: 64, refused: 36}}, r


def test_call_fds_are_sockets(rt):
    r = attack(rt, "call_fds_are_sockets")
    assert r == {"replies": EXITED, "out": "via-socket\n"}, r


def test_call_fds_are_o_path(rt):
    r = attack(rt, "call_fds_are_o_path")
    assert r["target"] == "before\n", r
    assert r["replies"] == [
        ["transport_error", "the call's stdout is an O_PATH descriptor; " + STDIO],
        "closed"], r


def test_call_fds_are_proc(rt):
    r = attack(rt, "call_fds_are_proc")
    # Its own environment, read through its own descriptor: nothing it did
    # not hold already, and never the real secret.
    assert r["environ"][1] == "no secret", r
    assert r["walk"] == [[
        ["transport_error", "the call's stdin is a directory; " + STDIO],
        "closed"], ""], r


def test_directory_fd_as_stdin_walked_from_the_shell(rt):
    r = attack(rt, "directory_fd_as_stdio")
    refusal = [["transport_error", "the call's stdin is a directory; " + STDIO], "closed"]
    assert r == {"root": [refusal, ""], "workspace": [refusal, ""]}, r


def test_stdout_is_a_workspace_file(rt):
    r = attack(rt, "stdout_is_a_workspace_file")
    assert r == {"replies": EXITED, "file": "into-file\n"}, r


def test_alias_with_directory_stdin(rt):
    assert attack(rt, "alias_with_directory_stdin") == [
        125, "", "box-alias: the call's stdin is a directory; " + STDIO + "\n"]


def test_frame_flood(rt):
    r = attack(rt, "frame_flood")
    assert r == {"replies": EXITED, "stdout": "after-flood\n"}, r


def test_idle_connections_do_not_lock_out_the_alias(rt):
    r = attack(rt, "idle_connections")
    assert r == {"first": [["over_budget", "too many connections wait to send their request; "
                                           "this one waited longest"], "closed"],
                 "held_over_boxd_limit": True, "legit": [0, "legit\n", ""],
                 "legit_fast": True}, r


def test_slowloris(rt):
    r = attack(rt, "slowloris")
    assert r == {"given_up_within_30s": True, "replies": [CUT]}, r


def test_signal_for_another_program(rt):
    r = attack(rt, "signal_for_another_program")
    assert r == {"other": ["closed"], "replies": EXITED, "stdout": "done\n"}, r


def test_second_call_on_one_connection(rt):
    r = attack(rt, "second_call_on_one_connection")
    assert r == [EXITED, "first\n", False], r


# ---- the agent's sandbox ----

def test_read_box_private(rt):
    r = attack(rt, "read_box_private")
    assert r == {"/private/box-id": "ENOENT", "/private/history.jsonl": "ENOENT",
                 "/private/telemetry/records.jsonl": "ENOENT", "list": "bin,run,trust"}, r


def test_write_box_bin(rt):
    before = {n: digest(rt.box_dir / "bin" / n) for n in ("bash", "sh", "zsh")}
    r = attack(rt, "write_box_bin")
    assert r == {"append": "EACCES", "truncate": "EACCES", "create": "EROFS", "unlink": "EROFS",
                 "rename": "EROFS", "chmod": "EROFS"}, r
    assert {n: digest(rt.box_dir / "bin" / n) for n in ("bash", "sh", "zsh")} == before
    assert sorted(os.listdir(rt.box_dir / "bin")) == ["bash", "sh", "zsh"]


def test_replace_broker_socket(rt):
    before = sorted(os.listdir(rt.box_dir / "run"))
    r = attack(rt, "replace_broker_socket")
    # The socket is a bind mount of its own in the view: it can be neither
    # removed nor renamed; a new socket beside it lands in the view's own
    # scaffold, never in the real run directory.
    assert r == {"unlink": "EBUSY", "rename": "EBUSY", "bind": "ESCAPED"}, r
    assert sorted(os.listdir(rt.box_dir / "run")) == before
    assert "evil.sock" not in before


def test_open_config_and_policy(rt):
    r = attack(rt, "open_config_and_policy")
    assert set(r.values()) == {"ENOENT"}, r


def test_find_boxd_in_proc(rt):
    # The sandbox's PID 1 (boxd's reaper) shows boxd's arguments overwritten
    # with a neutral "box run", no path; boxd itself is in no namespace of
    # the agent's.  So no process names a box binary by its path.
    r = attack(rt, "find_boxd_in_proc")
    assert r == [], r


def test_signal_and_ptrace_boxd(rt):
    r = attack(rt, "signal_and_ptrace_boxd")
    # boxd's pid names nothing in the agent's PID namespace; ptrace is refused outright.
    assert r["ptrace"] == "EPERM", r
    assert set(r.values()) <= {"ESRCH", "EPERM"}, r


def test_boxd_proc_files(rt):
    r = attack(rt, "boxd_proc_files")
    boxd = rt.proc.pid
    for p, v in r.items():
        if p.startswith(f"/proc/{boxd}/"):
            assert v == "ENOENT", (p, v)
        else:
            assert v in ("EACCES", "EPERM") or (p == "/proc/1/fd/" and v == ""), (p, v)


def test_gateway_forged_headers(rt):
    r = attack(rt, "gateway_forged_headers")
    # An absolute URL or CONNECT to host loopback: the marked refusal; an
    # origin-form request naming it in Host: a plain 400, never forwarded.
    # The gateway asked for itself, in both forms: the same refusal.
    assert r == [["403", True], ["403", True], ["403", True], ["403", True], ["400", False]], r
    assert rt.listener.accepted == 0


def test_bypass_gateway(rt):
    r = attack(rt, "bypass_gateway")
    assert r.pop("gateway") == "connected"
    assert r.pop("abstract_unix") == "ECONNREFUSED"
    assert set(r.values()) <= {"ECONNREFUSED", "ENETUNREACH"}, r
    assert rt.listener.accepted == 0


def test_unshare_mount_setns(rt):
    r = attack(rt, "unshare_mount_setns")
    assert r.pop("setns_pid1_mnt") in ("EPERM", "EACCES")
    assert set(r.values()) == {"EPERM"}, r


def test_dangerous_syscalls(rt):
    r = attack(rt, "dangerous_syscalls")
    assert set(r.values()) == {"EPERM"}, r


def test_shell_sysctl(rt):
    before = open("/proc/sys/kernel/core_pattern").read()
    r = attack(rt, "shell_sysctl")
    deny = "policy denied this operation on '/proc' [default-deny]: No permit policy matched " \
           "this request.\n"
    assert r[1] == "" and r[2] == (
        "cat: /proc/sys/kernel/core_pattern: " + deny) * 2 + \
        "strands-shell: /proc/sys/kernel/core_pattern: " + deny + \
        "ls: cannot access '/proc': " + deny, r
    assert open("/proc/sys/kernel/core_pattern").read() == before


def test_devices_and_sysctls(rt):
    r = attack(rt, "devices_and_sysctls")
    assert r == {"/dev/fuse": "ENOENT", "/dev/kmsg": "ENOENT", "/dev/mem": "ENOENT",
                 "/dev/tty": "ENOENT", "/dev/sda": "ENOENT", "/sys/kernel/uevent_helper": "ENOENT",
                 # The host's kernel settings: read-only, whatever the agent's uid.
                 "/proc/sys/kernel/core_pattern": "EROFS", "/proc/sys/kernel/panic": "EROFS",
                 "/proc/sys/vm/drop_caches": "EROFS", "/proc/irq/default_smp_affinity": "EROFS"}, r


def test_sysctl_rewrite(rt):
    """Writing back what core_pattern holds (no change even if it worked):
    the agent runs as uid 0 when boxd does, and uid 0 needs no capability to
    write a sysctl; core_pattern names a program the host runs as root."""
    before = open("/proc/sys/kernel/core_pattern").read()
    r = attack(rt, "sysctl_rewrite_same")
    assert r["write"] == "EROFS", r
    assert open("/proc/sys/kernel/core_pattern").read() == before


def test_capabilities(rt):
    r = attack(rt, "capabilities")
    zero = "0000000000000000"
    assert r == {"CapInh": zero, "CapPrm": zero, "CapEff": zero, "CapBnd": zero, "CapAmb": zero,
                 "NoNewPrivs": "1", "Seccomp": "2"}, r


def test_setuid_binaries(rt):
    # A setuid-root program planted in the workspace (the host's doing): the
    # writable workspace is noexec for the agent; the view itself holds none.
    shutil.copy("/usr/bin/id", rt.workspace / "suid-id")
    os.chown(rt.workspace / "suid-id", 0, 0)
    os.chmod(rt.workspace / "suid-id", 0o4755)
    (rt.workspace / "own-suid").write_text("#!/bin/sh\n")
    r = attack(rt, "setuid_binaries")
    assert r["found"] == [] and r["planted_mode"] == "0o4755" and r["planted"] == "EACCES", r
    # Setting the bit itself is harmless (noexec, no_new_privs) but must not error oddly.
    assert r["own_chmod"] in ("0o4755", "0o755", "EPERM"), r


def test_environment_leak(rt):
    r = attack(rt, "environment_leak")
    assert r == {"secret_anywhere": False, "phantom": "strands_box_<76>", "host_only": False,
                 "user": "strands-box"}, r


def test_shell_environment_leak(rt):
    r = attack(rt, "shell_environment_leak")
    assert r["secret_anywhere"] is False and r["first"] is True, r


def test_tiocsti(rt):
    assert attack(rt, "tiocsti") == {"0": "EPERM", "1": "EPERM", "2": "EPERM"}


def test_keyctl(rt):
    assert attack(rt, "keyctl") == {"keyctl_join": "EPERM", "keyctl_read_session": "EPERM",
                                    "add_key": "EPERM", "request_key": "EPERM"}


def test_box_control_files(rt):
    r = attack(rt, "box_control_files")
    assert r["root"] == "ENOENT" and r["reached"] == [] and r["fuse_mounts_seen"], r
    assert "rt-denied-A" not in json.dumps(r["b"]), r
    # A read its own denial back after B's: B's did not overwrite it.
    assert r["a"][1].endswith("\npolicy denied this operation on '~/rt-denied-A' [default-deny]: "
                              "No permit policy matched this request.") and \
        "rt-denied-B" not in r["a"][1], r
    assert r["b"][1].startswith("---\n") and "rt-denied-B" in r["b"][1], r
