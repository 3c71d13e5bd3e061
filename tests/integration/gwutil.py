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
import threading
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


class CountingServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

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
        if tls:
            self.socket = tls.wrap_socket(self.socket, server_side=True)
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    def pattern(self, n):
        if n not in self._patterns:
            self._patterns[n] = pattern(n)
        return self._patterns[n]

    def get_request(self):
        conn = super().get_request()
        with self.lock:
            self.connections += 1
        return conn

    def handle_error(self, request, client_address):
        pass

    @property
    def port(self):
        return self.server_address[1]

    def close(self):
        self.shutdown()
        self.server_close()


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


def gateway_port(pid):
    """The 127.0.0.1 port box run (pid) listens on: its gateway."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    with open(f"/proc/{pid}/net/tcp") as f:
        next(f)
        for line in f:
            parts = line.split()
            local, state, inode = parts[1], parts[3], parts[9]
            ip, port = local.split(":")
            if state == "0A" and ip == "0100007F" and inode in inodes:
                return int(port, 16)
    raise AssertionError("box run has no 127.0.0.1 listener")


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


def gateway_config(ca_pem=None, allow=(SERVER_ADDR,)):
    allow_list = ", ".join(json.dumps(a) for a in allow)
    text = f"\n[gateway]\nallow_local = [{allow_list}]\n"
    if ca_pem:
        text += f"extra_ca = [{json.dumps(str(ca_pem))}]\n"
    return text


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
