"""The egress gateway and the Shell's curl, against real local
HTTP and HTTPS servers that count what reaches them."""
import hashlib
import json
import socket
import time

import pytest

from gwutil import (FIELDS_POLICY, NET_POLICY, SERVER_ADDR, curl_echo, gateway_config,
                    gateway_port, pattern, raw_exchange)


@pytest.fixture
def netbox(box, test_ca):
    ca_pem, _ = test_ca
    box.write_config(extra=gateway_config(ca_pem))
    box.seed_policy(extra=NET_POLICY)
    box.start()
    return box


def net_decisions(box):
    out = []
    for d in box.decisions():
        if d["strands.box.policy.action"] in ("net:connect", "http:request"):
            out.append(d)
    return out


def test_shell_curl_methods_headers_bodies(netbox, servers):
    plain, secure = servers
    for srv, scheme in ((plain, "http"), (secure, "https")):
        base = f"{scheme}://{SERVER_ADDR}:{srv.port}"
        docs = curl_echo(netbox, "curl", base,
                         f"-H 'X-Test: yes' -A agent/1 -e http://ref/ -u u:p {base}/echo",
                         f"--json '{{\"k\":1}}' {base}/echo", f"-G --data-urlencode 'q=a b' {base}/echo")
        assert [d["method"] for d in docs] == ["GET", "POST", "PUT", "DELETE", "GET", "POST", "GET"]
        assert docs[1]["headers"]["content-type"] == "application/x-www-form-urlencoded"
        assert docs[4]["headers"]["x-test"] == "yes"
        assert docs[4]["headers"]["user-agent"] == "agent/1"
        assert docs[4]["headers"]["referer"] == "http://ref/"
        assert docs[4]["headers"]["authorization"] == "Basic dTpw"
        assert docs[5]["body"] == '{"k":1}'
        assert docs[5]["headers"]["content-type"] == "application/json"
        assert docs[6]["path"] == "/echo?q=a%20b"
        # HEAD and -i: the status line and headers, no body for HEAD.
        r = netbox.bash(f"curl -sS -I {base}/echo")
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith("HTTP/1.1 200"), r.stdout
        assert "Content-Type: application/json" in r.stdout
        assert "Connection established" not in r.stdout
        r = netbox.bash(f"curl -sS -i {base}/status/201")
        assert r.stdout.startswith("HTTP/1.1 201") and r.stdout.endswith("status 201\n")
        # Chunked responses arrive whole.
        r = netbox.bash(f"curl -sS {base}/chunked")
        assert r.returncode == 0 and r.stdout == "one,two,three\n", (r.stdout, r.stderr)
        # Redirects: followed with -L, each hop a request of its own.
        before = len(srv.requests)
        r = netbox.bash(f"curl -sS -L {base}/redirect/3 -w '%{{http_code}} %{{num_redirects}}'")
        assert r.returncode == 0, r.stderr
        assert r.stdout == "arrived\n200 3"
        assert [p for _, p in srv.requests[before:]] == [
            "/redirect/3", "/redirect/2", "/redirect/1", "/redirect/0"]
        r = netbox.bash(f"curl -sS {base}/redirect/1 -w '%{{http_code}}'")
        assert r.stdout == "302"
        r = netbox.bash(f"curl -sS -L --max-redirs 1 {base}/redirect/3")
        assert r.returncode == 47
        r = netbox.bash(f"curl -sS -L -d x=1 {base}/see-other")
        assert json.loads(r.stdout)["method"] == "GET"
        # Server errors keep curl's meaning.
        r = netbox.bash(f"curl -sS {base}/status/404")
        assert r.returncode == 0 and r.stdout == "status 404\n"
        r = netbox.bash(f"curl -sS -f {base}/status/404")
        assert r.returncode == 22 and r.stdout == ""
        assert "The requested URL returned error: 404" in r.stderr
        r = netbox.bash(f"curl -s --fail-with-body {base}/status/500")
        assert r.returncode == 22 and r.stdout == "status 500\n"
    # Every exchange was decided.
    reqs = [d for d in net_decisions(netbox) if d["strands.box.policy.action"] == "http:request"]
    assert len(reqs) >= 2 * 20
    assert all(d["strands.box.policy.verdict"] == "permit" for d in reqs)


def test_download_to_file_intercepted(netbox, servers):
    _, secure = servers
    n = 24 * 1024 * 1024
    r = netbox.bash(f"curl -sS -o big.bin https://{SERVER_ADDR}:{secure.port}/bytes/{n}; "
                    f"curl -sS -O https://{SERVER_ADDR}:{secure.port}/bytes/1000")
    assert r.returncode == 0, r.stderr
    got = (netbox.workspace / "big.bin").read_bytes()
    assert len(got) == n
    assert hashlib.sha256(got).digest() == hashlib.sha256(pattern(n)).digest()
    assert (netbox.workspace / "1000").read_bytes() == pattern(1000)


def test_200_mb_download_through_the_shells_curl(netbox, servers):
    _, secure = servers
    n = 200 * 1024 * 1024
    r = netbox.bash(f"curl -sS -o huge.bin https://{SERVER_ADDR}:{secure.port}/bytes/{n}")
    assert r.returncode == 0, r.stderr
    path = netbox.workspace / "huge.bin"
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    assert path.stat().st_size == n
    assert h.digest() == hashlib.sha256(pattern(n)).digest()
    path.unlink()


def test_decision_log_connect_before_and_after_dns(netbox, servers):
    plain, secure = servers
    r = netbox.bash(f"curl -sS -d hello http://{SERVER_ADDR}:{plain.port}/a/./b/../c?x=1")
    assert r.returncode == 0, r.stderr
    r = netbox.bash(f"curl -sS https://{SERVER_ADDR}:{secure.port}/s")
    assert r.returncode == 0, r.stderr
    log = net_decisions(netbox)
    summary = [(d["strands.box.policy.action"], d["strands.box.policy.resource"]) for d in log]
    assert summary == [
        ("net:connect", f"{SERVER_ADDR}:{plain.port}"),
        ("net:connect", f"{SERVER_ADDR}:{plain.port}"),
        ("http:request", f"{SERVER_ADDR}:{plain.port}/a/c"),
        ("net:connect", f"{SERVER_ADDR}:{secure.port}"),
        ("net:connect", f"{SERVER_ADDR}:{secure.port}"),
        ("http:request", f"{SERVER_ADDR}:{secure.port}/s"),
    ]
    for d in log:
        assert d["server.address"] == SERVER_ADDR
        assert d["strands.box.policy.category"] == d["strands.box.policy.action"].split(":")[0]
    assert log[2]["http.request.method"] == "POST"
    assert log[5]["http.request.method"] == "GET"


def test_decision_fields_reach_policy(box, servers, test_ca):
    """The fields policy sees: ip only after DNS, body_bytes, intercepted."""
    plain, secure = servers
    ca_pem, _ = test_ca
    box.write_config(extra=gateway_config(ca_pem))
    box.seed_policy(extra=FIELDS_POLICY)
    box.start()
    r = box.bash(f"curl -sS -d hello https://{SERVER_ADDR}:{secure.port}/p")
    assert r.returncode == 0, r.stderr
    r = box.bash(f"curl -sS -d hello http://{SERVER_ADDR}:{plain.port}/p")
    assert r.returncode == 1 and "http:request gate: policy denied" in r.stderr
    r = box.bash(f"curl -sS -d hell https://{SERVER_ADDR}:{secure.port}/p")
    assert r.returncode == 1 and "http:request gate: policy denied" in r.stderr


def test_refusals_are_marked_and_send_nothing(netbox, servers):
    plain, secure = servers
    for srv, scheme in ((plain, "http"), (secure, "https")):
        before = list(srv.requests)
        r = netbox.bash(f"curl -sS {scheme}://{SERVER_ADDR}:{srv.port}/secret/x")
        assert r.returncode == 1
        assert r.stdout == ""
        assert r.stderr.startswith(
            f"curl: http:request gate: policy denied this operation on "
            f"'{SERVER_ADDR}:{srv.port}/secret/x' [default-deny]"), r.stderr
        assert srv.requests == before
    # The marked reply itself, seen raw at the gateway.
    port = gateway_port(netbox.proc.pid)
    reply = raw_exchange(port, f"GET http://{SERVER_ADDR}:{plain.port}/secret HTTP/1.1\r\n"
                               f"Host: {SERVER_ADDR}:{plain.port}\r\n\r\n".encode())
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 403 Forbidden")
    assert b"\r\nx-strands-box-egress: refused" in head
    assert body.startswith(b"http:request gate: policy denied this operation on ")
    assert not any(p.startswith("/secret") for _, p in plain.requests)


def test_net_connect_denied_before_any_connection(box, servers, test_ca):
    plain, secure = servers
    ca_pem, _ = test_ca
    box.write_config(extra=gateway_config(ca_pem))
    box.seed_policy(extra="""
        permit(principal, action == Box::Action::"http:request", resource);
        permit(principal, action == Box::Action::"net:connect", resource)
        when { context.input.port == 1 };
        """)
    box.start()
    for srv, scheme in ((plain, "http"), (secure, "https")):
        r = box.bash(f"curl -sS {scheme}://{SERVER_ADDR}:{srv.port}/")
        assert r.returncode == 1 and r.stdout == ""
        assert r.stderr.startswith("curl: net:connect gate: policy denied this operation on "
                                   f"'{SERVER_ADDR}:{srv.port}'"), r.stderr
        assert srv.connections == 0
    log = net_decisions(box)
    assert [(d["strands.box.policy.action"], d["strands.box.policy.verdict"]) for d in log] == \
        [("net:connect", "deny")] * 2


def test_framing_and_limits(netbox, servers):
    plain, _ = servers
    port = gateway_port(netbox.proc.pid)
    target = f"http://{SERVER_ADDR}:{plain.port}/echo"
    reply = raw_exchange(port, (f"POST {target} HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
                                "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n").encode())
    assert reply.startswith(b"HTTP/1.1 400 ")
    assert b"Content-Length: 0\r\n" in reply or b"Content-Length: 12\r\n" in reply
    reply = raw_exchange(port, (f"GET {target} HTTP/1.1\r\nHost: x\r\nX-Big: "
                                + "a" * 70000 + "\r\n\r\n").encode())
    assert reply.startswith(b"HTTP/1.1 431 ")
    # A chunked upload is buffered and re-framed under a Content-Length.
    reply = raw_exchange(port, (f"POST {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                                "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
                                ).encode())
    assert reply.startswith(b"HTTP/1.1 200 "), reply[:200]
    doc = json.loads(reply.partition(b"\r\n\r\n")[2])
    assert doc["body"] == "abcde" and doc["headers"]["content-length"] == "5"
    assert plain.requests == [("POST", "/echo")]
    assert plain.connections == 1
    # An aborted upload opens nothing upstream.
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall((f"POST {target} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nshort"
                   ).encode())
        s.shutdown(socket.SHUT_WR)
        s.recv(100)
    assert plain.connections == 1, plain.requests


def test_curl_usage_and_local_refusals(netbox):
    r = netbox.bash("curl")
    assert r.returncode == 2 and "no URL" in r.stderr
    r = netbox.bash("curl --frobnicate http://example.com/")
    assert r.returncode == 1 and "invalid option" in r.stderr
    r = netbox.bash("curl -k https://example.com/")
    assert r.returncode != 0
    for url in ("ftp://example.com/x", "file:///etc/passwd", "gopher://example.com/"):
        r = netbox.bash(f"curl {url}")
        assert r.returncode == 1 and "not supported" in r.stderr, (url, r.stderr)
    r = netbox.bash("curl http://0x7f000001:8080/")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == "curl: access denied: 127.0.0.1\n"
    assert net_decisions(netbox) == []


class KeyUpdateServer:
    """A TLS server (pyOpenSSL over memory BIOs) whose every answer is
    followed, in the same TCP segment, by a TLS 1.3 KeyUpdate: a record that
    carries no data.  It then waits for the next request, so a relay that
    waits for more data after the KeyUpdate never delivers the answer."""

    def __init__(self, ca_dir, requested=False):
        import ctypes
        import threading
        from OpenSSL import SSL
        from OpenSSL._util import ffi
        self._ssl, self._ffi = SSL, ffi
        self._libssl = ctypes.CDLL("libssl.so.3")
        self._ctypes = ctypes
        # update_requested: the peer must answer with a KeyUpdate of its own
        # before its next data, which the message callback counts.
        self.requested = requested
        self.peer_key_updates = 0
        self.answers = 0
        cb_type = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                   ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                                   ctypes.c_void_p)

        def on_message(write_p, version, content_type, buf, length, ssl, arg):
            if not write_p and content_type == 22 and length >= 1 and \
                    ctypes.string_at(buf, 1) == b"\x18":
                self.peer_key_updates += 1
        self._on_message = cb_type(on_message)  # kept alive with the server
        self.ctx = SSL.Context(SSL.TLS_SERVER_METHOD)
        self.ctx.set_min_proto_version(SSL.TLS1_3_VERSION)
        self.ctx.use_certificate_file(str(ca_dir / "srv.pem"))
        self.ctx.use_privatekey_file(str(ca_dir / "srv.key"))
        self.sock = socket.socket()
        self.sock.bind((SERVER_ADDR, 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.key_updates = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _drain(self, conn, s):
        out = b""
        while True:
            try:
                out += conn.bio_read(65536)
            except self._ssl.WantReadError:
                break
        if out:
            s.sendall(out)

    def _recv_into(self, conn, s, step):
        while True:
            try:
                return step()
            except (self._ssl.ZeroReturnError, self._ssl.SysCallError):
                return None
            except self._ssl.WantReadError:
                self._drain(conn, s)
                data = s.recv(65536)
                if not data:
                    return None
                conn.bio_write(data)

    def _serve(self):
        s, _ = self.sock.accept()
        s.settimeout(15)
        with s:
            conn = self._ssl.Connection(self.ctx, None)
            self._libssl.SSL_set_msg_callback(
                self._ctypes.c_void_p(int(self._ffi.cast("uintptr_t", conn._ssl))), self._on_message)
            conn.set_accept_state()
            self._recv_into(conn, s, conn.do_handshake)
            self._drain(conn, s)
            while True:
                head = b""
                while b"\r\n\r\n" not in head:
                    chunk = self._recv_into(conn, s, lambda: conn.recv(65536))
                    if not chunk:
                        return
                    head += chunk
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello\n")
                self.answers += 1
                ptr = self._ctypes.c_void_p(int(self._ffi.cast("uintptr_t", conn._ssl)))
                if self._libssl.SSL_key_update(ptr, 1 if self.requested else 0) == 1 and \
                        self._libssl.SSL_do_handshake(ptr) == 1:
                    self.key_updates += 1
                self._drain(conn, s)  # the answer and the KeyUpdate, one send

    def close(self):
        self.sock.close()


def test_records_without_data_do_not_hold_back_an_answer(netbox, test_ca):
    ca_pem, _ = test_ca
    srv = KeyUpdateServer(ca_pem.parent)
    try:
        t0 = time.monotonic()
        r = netbox.bash(f"curl -sS --max-time 5 https://{SERVER_ADDR}:{srv.port}/k")
        took = time.monotonic() - t0
        assert r.returncode == 0, r.stderr
        assert r.stdout == "hello\n"
        assert srv.key_updates == 1
        assert took < 4, took
    finally:
        srv.close()


def test_a_key_update_the_server_requests_is_answered(netbox, test_ca):
    """The server moves to new keys after each answer and asks the gateway
    to do the same: the gateway reads on under the server's new key and
    sends its own KeyUpdate before its next request, on one connection."""
    ca_pem, _ = test_ca
    srv = KeyUpdateServer(ca_pem.parent, requested=True)
    try:
        url = f"https://{SERVER_ADDR}:{srv.port}/k"
        r = _curl_through(netbox, "--max-time", "10", url, url, url)
        assert r.returncode == 0, r.stderr
        assert r.stdout == "hello\n" * 3
        assert srv.answers == 3 and srv.key_updates == 3
        # One KeyUpdate before each of the second and third requests.
        assert srv.peer_key_updates == 2
    finally:
        srv.close()


def test_a_key_update_the_client_requests_is_answered(netbox, servers):
    """openssl s_client asks the gateway, mid-connection, for new keys
    (its "K" command): the gateway reads the next request under the
    client's new key and answers under a new key of its own, announced by
    a KeyUpdate the client reports; the body arrives whole, and the
    connection ends with a close_notify."""
    import subprocess
    _, secure = servers
    port = gateway_port(netbox.proc.pid)
    n = 3 * 1000 * 1000
    msgs = netbox.root / "s_client.msg"
    # Not -quiet: that would send "K" as data.
    p = subprocess.Popen(["openssl", "s_client", "-msg", "-msgfile", str(msgs),
                          "-proxy", f"127.0.0.1:{port}",
                          "-connect", f"{SERVER_ADDR}:{secure.port}", "-CAfile",
                          str(netbox.box_dir / "trust" / "cert.pem"), "-verify_return_error"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        req = f"GET /bytes/{n} HTTP/1.1\r\nHost: {SERVER_ADDR}:{secure.port}\r\n" \
              "Connection: close\r\n\r\n".encode()
        time.sleep(1)
        p.stdin.write(b"K\n")
        p.stdin.flush()
        time.sleep(1)
        p.stdin.write(req)
        p.stdin.flush()
        # The session's description comes first, then the answer; stdin
        # stays open until it is whole (its end would end the session).
        import os
        out = b""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            at = out.find(b"HTTP/1.1 ")
            end = out.find(b"\r\n\r\n", at) if at >= 0 else -1
            if end >= 0 and len(out) >= end + 4 + n:
                break
            chunk = os.read(p.stdout.fileno(), 1 << 20)
            if not chunk:
                break
            out += chunk
        p.stdin.close()
        p.wait(timeout=10)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    head, _, body = out[out.find(b"HTTP/1.1 "):].partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 "), out[-300:]
    assert body[:n] == pattern(n)
    trace = msgs.read_text()
    assert "KEYUPDATE" in p.stderr.read().decode()
    assert ">>> TLS 1.3, Handshake [length 0005], KeyUpdate" in trace, trace[-2000:]
    assert "<<< TLS 1.3, Handshake [length 0005], KeyUpdate" in trace, trace[-2000:]
    # And the end of the answer ("Connection: close") is a close_notify.
    assert "<<< TLS 1.3, Alert [length 0002], warning close_notify" in trace, trace[-2000:]


class EofServer:
    """TLS server whose answers have no length: the body ends where the
    server closes the connection, once without close_notify."""

    def __init__(self, ca_dir, n):
        import ssl
        import threading
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(str(ca_dir / "srv.pem"), str(ca_dir / "srv.key"))
        self.data = pattern(n)
        self.sock = socket.socket()
        self.sock.bind((SERVER_ADDR, 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        for notify in (True, False):
            s, _ = self.sock.accept()
            with s:
                t = self.ctx.wrap_socket(s, server_side=True)
                head = b""
                while b"\r\n\r\n" not in head:
                    head += t.recv(65536)
                t.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + self.data)
                if notify:
                    t.unwrap()

    def close(self):
        self.sock.close()


def test_an_intercepted_body_that_ends_at_close_arrives_whole(netbox, test_ca):
    ca_pem, _ = test_ca
    n = 20 * 1000 * 1000 + 7
    srv = EofServer(ca_pem.parent, n)
    try:
        for name in ("a.bin", "b.bin"):
            r = netbox.bash(f"curl -sS -o {name} https://{SERVER_ADDR}:{srv.port}/e")
            assert r.returncode == 0, r.stderr
            got = (netbox.workspace / name).read_bytes()
            assert len(got) == n and got == srv.data, name
    finally:
        srv.close()


def _threads(pid, prefix):
    import os
    n = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/comm") as f:
                n += f.read().startswith(prefix)
        except OSError:
            pass
    return n


def assert_threads_end_and_gateway_serves(netbox, secure, *names):
    """The gateway's threads of these names end within 10 s of their client
    leaving, and the gateway still relays a large answer whole."""
    deadline = time.monotonic() + 10
    while any(_threads(netbox.proc.pid, name) for name in names) and time.monotonic() < deadline:
        time.sleep(0.05)
    for name in names:
        assert _threads(netbox.proc.pid, name) == 0
    r = netbox.bash(f"curl -sS https://{SERVER_ADDR}:{secure.port}/bytes/3000000 | wc -c")
    assert r.returncode == 0 and r.stdout.strip() == "3000000", r.stderr


def test_large_body_relay_and_a_client_that_goes_away(netbox, servers):
    plain, secure = servers
    port = gateway_port(netbox.proc.pid)
    n = 64 * 1024 * 1024
    plain.pattern(n)
    # A large body is relayed by a reader thread beside the connection's.
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(f"GET http://{SERVER_ADDR}:{plain.port}/bytes/{n} HTTP/1.1\r\n"
                  f"Host: x\r\n\r\n".encode())
        got = b""
        while len(got) < 1 << 20:
            got += s.recv(65536)
        assert got.startswith(b"HTTP/1.1 200 ")
        assert _threads(netbox.proc.pid, "box-gw-pump") == 1
    # The client left mid-body: both threads end, and the gateway serves on.
    assert_threads_end_and_gateway_serves(netbox, secure, "box-gw-pump", "box-gw-conn")


def test_an_intercepted_client_that_goes_away_mid_body_ends_its_relay(netbox, servers):
    """The record-by-record relay between two taken-over legs notices a
    client that left: the connection's thread ends, and the gateway serves
    on."""
    import ssl
    _, secure = servers
    port = gateway_port(netbox.proc.pid)
    n = 64 * 1024 * 1024
    secure.pattern(n)
    ctx = ssl.create_default_context(cafile=str(netbox.box_dir / "trust" / "cert.pem"))
    with socket.create_connection(("127.0.0.1", port)) as raw:
        raw.sendall(f"CONNECT {SERVER_ADDR}:{secure.port} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += raw.recv(1)
        assert answer.startswith(b"HTTP/1.1 200 ")
        with ctx.wrap_socket(raw, server_hostname=SERVER_ADDR) as s:
            assert s.version() == "TLSv1.3"
            s.sendall(f"GET /bytes/{n} HTTP/1.1\r\nHost: {SERVER_ADDR}:{secure.port}\r\n\r\n"
                      .encode())
            got = b""
            while len(got) < 1 << 20:
                got += s.recv(65536)
            assert got.startswith(b"HTTP/1.1 200 ")
            assert _threads(netbox.proc.pid, "box-gw-conn") == 1
    assert_threads_end_and_gateway_serves(netbox, secure, "box-gw-conn")


def test_one_tunnel_carries_large_and_small_answers_in_turn(netbox, servers):
    """Kept-alive intercepted connection: a large body (relayed by the
    reader thread) must end exactly at its length, leaving the next answer
    whole for the next request."""
    import subprocess
    _, secure = servers
    port = gateway_port(netbox.proc.pid)
    base = f"https://{SERVER_ADDR}:{secure.port}"
    out = netbox.root / "out"
    out.mkdir()
    sizes = [3000000, 10, 5000000, 1]
    args = []
    for i, n in enumerate(sizes):
        args += [f"{base}/bytes/{n}", "-o", str(out / str(i))]
    r = subprocess.run(["/usr/bin/curl", "-sS", "--cacert", str(netbox.box_dir / "trust" / "cert.pem"),
                        "--proxy", f"http://127.0.0.1:{port}", "-w", "%{num_connects} ", *args],
                       capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "0", "0", "0"]  # one connection for all four
    for i, n in enumerate(sizes):
        assert (out / str(i)).read_bytes() == pattern(n), i
    assert secure.connections == 1


def test_chunked_bodies_pass_through_as_they_came(netbox, servers):
    plain, secure = servers
    port = gateway_port(netbox.proc.pid)
    for count, size in ((2000, 100), (3, 3 * 1024 * 1024)):
        # Plain: the body on the wire is the server's own framing, byte for
        # byte, trailers included.
        reply = raw_exchange(port, (f"GET http://{SERVER_ADDR}:{plain.port}/chunks/{count}/{size} "
                                    "HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").encode(),
                             timeout=30)
        head, _, body = reply.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200 ") and b"Transfer-Encoding: chunked" in head
        data = pattern(count * size)
        want = b"".join(b"%x\r\n%s\r\n" % (size, data[i * size:(i + 1) * size])
                        for i in range(count)) + b"0\r\nX-Trailer: yes\r\n\r\n"
        assert body == want
        # Intercepted, through the Shell's curl: the data whole.
        r = netbox.bash(f"curl -sS -o c.bin https://{SERVER_ADDR}:{secure.port}/chunks/{count}/{size}")
        assert r.returncode == 0, r.stderr
        assert (netbox.workspace / "c.bin").read_bytes() == data


def _free_port():
    with socket.socket() as s:
        s.bind((SERVER_ADDR, 0))
        return s.getsockname()[1]


def _curl_through(netbox, *args):
    import subprocess
    port = gateway_port(netbox.proc.pid)
    return subprocess.run(["/usr/bin/curl", "-v", "-sS", "--cacert",
                           str(netbox.box_dir / "trust" / "cert.pem"),
                           "--proxy", f"http://127.0.0.1:{port}", *args],
                          capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, timeout=60)


def _suite(curl_stderr):
    return next(line.split("using ", 1)[1].strip() for line in curl_stderr.splitlines()
                if "SSL connection using" in line)


def test_intercepted_legs_prefer_aes_128_gcm(netbox, servers):
    """The gateway picks TLS_AES_128_GCM_SHA256 facing the client and
    offers it upstream, even to a client and a server (Python's, which
    picks by its own order) that would otherwise settle on AES-256."""
    _, secure = servers
    n = 3 * 1024 * 1024
    r = _curl_through(netbox, "-o", "/dev/null", "-w", "%{size_download}",
                      f"https://{SERVER_ADDR}:{secure.port}/bytes/{n}")
    assert r.returncode == 0 and r.stdout == str(n), r.stderr
    assert _suite(r.stderr) == "TLSv1.3 / TLS_AES_128_GCM_SHA256"
    assert secure.last_cipher == "TLSv1.3 / TLS_AES_128_GCM_SHA256"
    # A client that puts ChaCha20 first (no AES instructions) keeps it.
    r = _curl_through(netbox, "--tls13-ciphers", "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256",
                      "-o", "/dev/null", f"https://{SERVER_ADDR}:{secure.port}/bytes/10")
    assert r.returncode == 0, r.stderr
    assert _suite(r.stderr) == "TLSv1.3 / TLS_CHACHA20_POLY1305_SHA256"


class FlipProxy:
    """A TCP relay in front of a server that flips one bit of what the
    server sends, at byte `at` of its stream."""

    def __init__(self, upstream_port, at):
        import threading
        self.upstream_port, self.at = upstream_port, at
        self.sock = socket.socket()
        self.sock.bind((SERVER_ADDR, 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _pipe(self, src, dst, flip):
        seen = 0
        try:
            while data := src.recv(65536):
                if flip and seen <= self.at < seen + len(data):
                    i = self.at - seen
                    data = data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1:]
                seen += len(data)
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _serve(self):
        import threading
        c, _ = self.sock.accept()
        u = socket.create_connection((SERVER_ADDR, self.upstream_port))
        threading.Thread(target=self._pipe, args=(c, u, False), daemon=True).start()
        self._pipe(u, c, True)

    def close(self):
        self.sock.close()


def test_a_record_altered_on_the_way_is_never_delivered(netbox, servers, tmp_path):
    """One bit flipped in the server's stream, inside the body: that
    record fails its authentication, the gateway ends the connection, and
    the client got only bytes from before it, none altered."""
    _, secure = servers
    n = 6 * 1000 * 1000
    at = 2 * 1000 * 1000
    flip = FlipProxy(secure.port, at)
    try:
        out = tmp_path / "got"
        r = _curl_through(netbox, "-o", str(out), f"https://{SERVER_ADDR}:{flip.port}/bytes/{n}")
        assert r.returncode != 0
        got = out.read_bytes() if out.exists() else b""
        assert len(got) < at
        assert got == pattern(n)[:len(got)]
    finally:
        flip.close()


def test_a_tls_1_2_client_gets_a_large_body_whole(netbox, servers, tmp_path):
    """A TLS 1.2 leg keeps OpenSSL's records (only TLS 1.3 legs are taken
    over): a large body crosses from the gateway's own upstream records to
    OpenSSL's, and back on a kept-alive connection, byte for byte."""
    _, secure = servers
    n = 9 * 1000 * 1000 + 3
    url = f"https://{SERVER_ADDR}:{secure.port}/bytes/{n}"
    r = _curl_through(netbox, "--tls-max", "1.2", "-o", str(tmp_path / "a"), url,
                      "-o", str(tmp_path / "b"), f"https://{SERVER_ADDR}:{secure.port}/bytes/10")
    assert r.returncode == 0, r.stderr
    assert _suite(r.stderr).startswith("TLSv1.2 / ")
    assert (tmp_path / "a").read_bytes() == pattern(n)
    assert (tmp_path / "b").read_bytes() == pattern(10)


def test_server_without_aes_128_is_reached_on_a_second_decided_connection(netbox, test_ca):
    """A server whose only TLS 1.3 suite is AES-256 refuses the first hello
    (AES-128 alone); the gateway dials again, deciding that connection too,
    offers every suite, and still verifies the server."""
    import subprocess
    ca_pem, _ = test_ca
    port = _free_port()
    srv = subprocess.Popen(["openssl", "s_server", "-quiet", "-accept", f"{SERVER_ADDR}:{port}",
                            "-cert", str(ca_pem.parent / "srv.pem"),
                            "-key", str(ca_pem.parent / "srv.key"),
                            "-tls1_3", "-ciphersuites", "TLS_AES_256_GCM_SHA384", "-www"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection((SERVER_ADDR, port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "s_server did not start"
                time.sleep(0.05)
        before = len(net_decisions(netbox))
        r = netbox.bash(f"curl -sS https://{SERVER_ADDR}:{port}/")
        assert r.returncode == 0, r.stderr
        assert "Cipher is TLS_AES_256_GCM_SHA384" in r.stdout, r.stdout[:500]
        log = net_decisions(netbox)[before:]
        assert [(d["strands.box.policy.action"], d["strands.box.policy.verdict"]) for d in log] == [
            ("net:connect", "permit"), ("net:connect", "permit"), ("http:request", "permit"),
            ("net:connect", "permit"), ("net:connect", "permit")]
    finally:
        srv.terminate()
        srv.wait(timeout=10)
