"""The red team's agent: an attack server the box runs as its agent (see
test_redteam_agent.py).  It reads one attack a line on stdin and answers
each with its result on stdout; it runs inside the agent's sandbox."""
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
            denied(exchange(f("open", body={"mode": ["python"]})))]

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
        "create": try_(lambda: open(b + "node", "w").write("x") and None),
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
