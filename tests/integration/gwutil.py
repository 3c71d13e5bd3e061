"""Helpers for the egress gateway tests: real local HTTP and HTTPS servers
that count what reaches them, a test CA made with openssl, and raw access
to a running box's gateway port."""
import hashlib
import http.server
import json
import os
import socket
import ssl
import subprocess
import textwrap
import threading
import time
from pathlib import Path

import pytest

SERVER_ADDR = "127.0.0.2"   # named in the boxes' [gateway] allow_local


def pattern(n):
    """n deterministic bytes."""
    block = hashlib.sha256(b"boxfs").digest() * 2048  # 64 KiB
    out = bytearray()
    while len(out) < n:
        out += block[: n - len(out)]
    return bytes(out)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _count(self):
        with self.server.lock:
            self.server.requests.append((self.command, self.path))
            self.server.heads.append((self.path, {k.lower(): v for k, v in self.headers.items()}))

    def _send(self, status, body=b"", ctype="text/plain", extra=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _handle(self):
        self._count()
        if hasattr(self.connection, "cipher"):
            name, version, _ = self.connection.cipher()
            self.server.last_cipher = f"{version} / {name}"
        body = self._body()
        with self.server.lock:
            self.server.bodies.append(body)
        path = self.path.split("?")[0]
        if path.startswith("/redirect/"):
            n = int(path.rsplit("/", 1)[1])
            if n > 0:
                return self._send(302, b"", extra=[("Location", f"/redirect/{n-1}")])
            return self._send(200, b"arrived\n")
        if path.endswith("/gzip"):  # a compressed reply (a credentialed request refuses it)
            return self._send(200, b"\x1f\x8b", extra=[("Content-Encoding", "gzip")])
        if path == "/see-other":
            return self._send(303, b"", extra=[("Location", "/echo")])
        if path == "/chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for part in (b"one,", b"two,", b"three\n"):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
            return
        if path.startswith("/chunks/"):  # /chunks/<count>/<size>: the pattern in chunks
            count, size = (int(x) for x in path.split("/")[2:4])
            data = self.server.pattern(count * size)
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(count):
                self.wfile.write(b"%x\r\n%s\r\n" % (size, data[i * size:(i + 1) * size]))
            self.wfile.write(b"0\r\nX-Trailer: yes\r\n\r\n")
            return
        if path.startswith("/bytes/"):
            n = int(path.rsplit("/", 1)[1])
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(n))
            self.end_headers()
            data = self.server.pattern(n)
            view = memoryview(data)
            for i in range(0, n, 1 << 20):
                self.wfile.write(view[i:i + (1 << 20)])
            return
        if path.startswith("/status/"):
            code = int(path.rsplit("/", 1)[1])
            return self._send(code, b"status %d\n" % code)
        doc = {"method": self.command, "path": self.path,
               "headers": {k.lower(): v for k, v in self.headers.items()},
               "body": body.decode("latin-1")}
        return self._send(200, json.dumps(doc).encode() + b"\n", "application/json")

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = _handle


class LocalServer(http.server.ThreadingHTTPServer):
    """A test server answering on its own thread (through TLS when given a
    context); a client that goes away mid-exchange is no error of the test."""
    daemon_threads = True

    def serve(self, tls):
        if tls:
            self.socket = tls.wrap_socket(self.socket, server_side=True)
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    def handle_error(self, request, client_address):
        pass

    @property
    def port(self):
        return self.server_address[1]

    def close(self):
        self.shutdown()
        self.server_close()


class CountingServer(LocalServer):
    def __init__(self, addr, family=socket.AF_INET, tls=None):
        self.address_family = family
        super().__init__(addr, Handler)
        self.lock = threading.Lock()
        self.connections = 0
        self.requests = []
        self.heads = []  # (path, lowercase headers) of each request
        self.bodies = []  # and its body
        self.last_cipher = None
        self._patterns = {}
        self.serve(tls)

    def pattern(self, n):
        if n not in self._patterns:
            self._patterns[n] = pattern(n)
        return self._patterns[n]

    def get_request(self):
        conn = super().get_request()
        with self.lock:
            self.connections += 1
        return conn


def make_test_ca(d: Path):
    """A CA and a server certificate for 127.0.0.2 / localhost."""
    d.mkdir(parents=True, exist_ok=True)
    run = lambda *a: subprocess.run(a, check=True, capture_output=True, cwd=d)
    run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
        "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=boxfs test CA",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
    run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", "srv.key", "-out", "srv.csr", "-subj", f"/CN={SERVER_ADDR}")
    (d / "ext.cnf").write_text(
        f"subjectAltName=IP:{SERVER_ADDR},DNS:localhost\nbasicConstraints=CA:FALSE\n"
        "keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n")
    run("openssl", "x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "srv.pem", "-days", "2", "-extfile", "ext.cnf")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(d / "srv.pem", d / "srv.key")
    return d / "ca.pem", ctx


def _proxy_port(pid):
    """The port HTTP_PROXY names in the environment of a process box run
    (pid) started, or None."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    todo = list(children.get(pid, []))
    while todo:
        p = todo.pop()
        todo.extend(children.get(p, []))
        try:
            with open(f"/proc/{p}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        for var in env:
            if var.startswith(b"HTTP_PROXY=http://127.0.0.1:"):
                return int(var.rsplit(b":", 1)[1])
    return None


def gateway_port(pid):
    """The 127.0.0.1 port box run (pid) listens on for its gateway: the one
    its processes' HTTP_PROXY names (it listens for the agent's telemetry
    too, on another)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    ports = []
    with open(f"/proc/{pid}/net/tcp") as f:
        next(f)
        for line in f:
            parts = line.split()
            local, state, inode = parts[1], parts[3], parts[9]
            ip, port = local.split(":")
            if state == "0A" and ip == "0100007F" and inode in inodes:
                ports.append(int(port, 16))
    assert ports, "box run has no 127.0.0.1 listener"
    # the agent, whose environment says, may start a moment after the socket
    deadline = time.time() + 15
    while (proxy := _proxy_port(pid)) is None and time.time() < deadline:
        time.sleep(0.05)
    assert proxy in ports, (proxy, ports)
    return proxy


def raw_exchange(port, data: bytes, timeout=10):
    """Sends data to the gateway and returns everything it answers."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            out += chunk
        return out


def curl_echo(box, curl, base, *more):
    """Runs curl (a path or the Shell's own) through box against the echo
    server at base: a GET with a query, a form POST, a PUT with a body, a
    DELETE, then one call for each of more (curl's arguments). Checks what the
    first four delivered; returns the echo documents of all."""
    calls = [f"{base}/echo?q=1", f"-d 'a=1' -d b=2 {base}/echo",
             f"-X PUT --data-binary 'put body' {base}/echo", f"-X DELETE {base}/echo", *more]
    r = box.bash("; ".join(f"{curl} -sS {c}" for c in calls))
    assert r.returncode == 0, r.stderr
    docs = [json.loads(line) for line in r.stdout.splitlines()]
    assert [d["method"] for d in docs[:4]] == ["GET", "POST", "PUT", "DELETE"]
    assert docs[0]["path"] == "/echo?q=1"
    assert docs[1]["body"] == "a=1&b=2"
    assert docs[2]["body"] == "put body"
    return docs


def gateway_config(ca_pem=None, allow=(SERVER_ADDR,)):
    allow_list = ", ".join(json.dumps(a) for a in allow)
    text = f"\n[gateway]\nallow_local = [{allow_list}]\n"
    if ca_pem:
        text += f"extra_ca = [{json.dumps(str(ca_pem))}]\n"
    return text


# The curl and python3 tools of the gateway tests, curl's workspace writable
# (the [tool.py] table comes last, so a test may add keys to it).
TOOLS = textwrap.dedent("""
    [tool.curl]
    command = ["/usr/bin/curl"]
    filesystem.write = ["~/src/project"]

    [tool.py]
    command = ["/usr/bin/python3"]
    """)
# The same, both tools writing the workspace.
TOOLS_WRITING = TOOLS + 'filesystem.write = ["~/src/project"]\n'

# Lets the Shell start the curl and python3 tools of the gateway tests.
SPAWN = """
permit(principal, action == Box::Action::"shell:spawn", resource)
when { context.input.program == "/usr/bin/curl" || context.input.program == "/usr/bin/python3" };
"""

# The fields policy sees of an exchange: net:connect is permitted before DNS
# (no ip) and to the test server's ip, http:request only for a 5-byte
# intercepted POST to /p.
FIELDS_POLICY = textwrap.dedent(f"""
    permit(principal, action == Box::Action::"net:connect", resource)
    unless {{ context.input has ip }};
    permit(principal, action == Box::Action::"net:connect", resource)
    when {{ context.input has ip && context.input.ip == "{SERVER_ADDR}" }};
    permit(principal, action == Box::Action::"http:request", resource)
    when {{ context.input.method == "POST" && context.input.body_bytes == 5 &&
           context.input.intercepted == true && context.input.path == "/p" }};
    """)

NET_POLICY = """
permit(principal, action == Box::Action::"net:connect", resource);
permit(principal, action == Box::Action::"http:request", resource)
when { !(context.input.path like "/secret*") };
"""


# Fixtures of the gateway tests (registered through conftest.py).
@pytest.fixture(scope="module")
def test_ca(tmp_path_factory):
    return make_test_ca(tmp_path_factory.mktemp("ca"))


@pytest.fixture
def servers(test_ca):
    _, tls = test_ca
    plain = CountingServer((SERVER_ADDR, 0))
    secure = CountingServer((SERVER_ADDR, 0), tls=tls)
    yield plain, secure
    plain.close()
    secure.close()


# ---- upstreams that serve a directory, for the path rules ----

SECRET = "private-secret-7f3a9c\n"


def make_site(root: Path):
    """A directory with public/ (readable by policy) and private/ (not)."""
    (root / "public" / "sub").mkdir(parents=True)
    (root / "private").mkdir()
    (root / "public" / "index.txt").write_text("public ok\n")
    (root / "public" / "sub" / "deep.txt").write_text("public deep\n")
    (root / "private" / "secret.txt").write_text(SECRET)
    (root / "public" / "ops:wipe").write_text(SECRET)  # a path a forbid names
    return root


def free_port(addr=SERVER_ADDR):
    with socket.socket() as s:
        s.bind((addr, 0))
        return s.getsockname()[1]


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Python's own file server (it decodes %2F, .. and the rest), which
    records every request line that reaches it."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def parse_request(self):
        ok = super().parse_request()
        with self.server.lock:
            self.server.lines.append(self.requestline)
        return ok


class SiteServer(LocalServer):
    def __init__(self, root: Path, tls=None, addr=SERVER_ADDR):
        self.lock = threading.Lock()
        self.lines = []
        handler = lambda *a, **kw: SiteHandler(*a, directory=str(root), **kw)
        super().__init__((addr, 0), handler)
        self.serve(tls)

    def seen(self):
        with self.lock:
            return list(self.lines)


class Nginx:
    """Debian's nginx serving root on SERVER_ADDR (plain and TLS), started
    as this test's own process (no daemon, no master) with its config, pid
    file, logs and temp paths in d; stopped by its PID.  Every request line
    it receives goes to access.log.  `redirects` maps a location to a URL it
    answers 302 with."""

    def __init__(self, d: Path, root: Path, cert: Path, key: Path, redirects=()):
        import time
        d.mkdir(parents=True, exist_ok=True)
        self.dir = d
        self.port = free_port()
        self.tls_port = free_port()
        self.log = d / "access.log"
        self.log.write_text("")
        tmp = "".join(f"    {k}_temp_path {d}/{k};\n"
                      for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        redir = "".join(f"        location = {loc} {{ return 302 {url}; }}\n"
                        for loc, url in redirects)
        server = (f"        root {root};\n"
                  f"        location / {{ }}\n{redir}")
        (d / "nginx.conf").write_text(
            f"daemon off;\nmaster_process off;\nworker_processes 1;\n"
            f"pid {d}/nginx.pid;\nerror_log {d}/error.log;\n"
            f"events {{ worker_connections 64; }}\n"
            f"http {{\n{tmp}"
            f"    log_format line '$request';\n"
            f"    access_log {self.log} line;\n"
            f"    default_type text/plain;\n"
            f"    server {{\n        listen {SERVER_ADDR}:{self.port};\n{server}    }}\n"
            f"    server {{\n        listen {SERVER_ADDR}:{self.tls_port} ssl;\n"
            f"        ssl_certificate {cert};\n        ssl_certificate_key {key};\n{server}    }}\n"
            f"}}\n")
        self.proc = subprocess.Popen(
            ["/usr/sbin/nginx", "-p", str(d), "-c", str(d / "nginx.conf"),
             "-e", str(d / "error.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(d / "stderr", "wb"))
        deadline = time.time() + 10
        while True:
            try:
                socket.create_connection((SERVER_ADDR, self.port), timeout=1).close()
                socket.create_connection((SERVER_ADDR, self.tls_port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.time() > deadline:
                    self.close()
                    raise AssertionError("nginx did not start: " +
                                         (d / "stderr").read_text(errors="replace") +
                                         (d / "error.log").read_text(errors="replace"))
                time.sleep(0.05)

    def seen(self):
        """The request lines logged so far.  nginx logs a request after it
        has answered, so the log is read until it holds still."""
        import time
        text = self.log.read_text(errors="replace")
        while True:
            time.sleep(0.03)
            again = self.log.read_text(errors="replace")
            if again == text:
                return text.splitlines()
            text = again

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
