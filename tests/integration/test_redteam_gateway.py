"""Red team of the egress gateway: a hostile agent gets
nothing past a path rule, a denied host, or the gateway's framing.

Policy permits `http:request` only on paths `like "/public/*"`.  Behind the
gateway are real servers that decode paths differently: Python's
`http.server` and Debian's nginx, each serving one directory with public/
and private/, plain and over TLS.  Every spelling of a way into private/ is
sent through the Shell's `curl`, through a tool's `/usr/bin/curl
--path-as-is`, and byte for byte by a tool's Python through the proxy.  Each
attack must come back refused (marked, or decided on the path the server
would serve) with the secret nowhere, the servers must not have seen it, and
boxd must answer the next command."""
import base64
import json
import re
import textwrap

import pytest

from conftest import Box, host_mounts
from gwutil import (SECRET, SERVER_ADDR, TOOLS_WRITING, CountingServer, Nginx, SiteServer,
                    gateway_config, make_site, make_test_ca)

DENIED_ADDR = "127.0.0.1"   # no allowance names it, and policy forbids it

# A client that writes exactly the bytes it is given to the gateway, the
# way a hostile tool would: absolute-form requests, or a CONNECT then TLS
# (SNI of its choosing, the box's CA trusted) then the bytes.
RAW_CLIENT = textwrap.dedent(r'''
    import base64, json, os, socket, ssl, sys
    gw = os.environ["http_proxy"].split("//", 1)[1].rstrip("/")
    gw_host, gw_port = gw.rsplit(":", 1)

    def drain(s):
        data = b""
        while True:
            try:
                c = s.recv(65536)
            except (OSError, ssl.SSLError):
                break
            if not c:
                break
            data += c
        return data

    out = []
    for r in json.load(open(sys.argv[1])):
        s = socket.create_connection((gw_host, int(gw_port)), timeout=15)
        if r.get("connect"):
            s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (r["connect"].encode(),
                                                                  r["connect"].encode()))
            head = b""
            while b"\r\n\r\n" not in head:
                c = s.recv(1)
                if not c:
                    break
                head += c
            if not head.startswith(b"HTTP/1.1 200"):
                out.append((head + drain(s)).decode("latin-1"))
                continue
            ctx = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
            ctx.check_hostname = False
            s = ctx.wrap_socket(s, server_hostname=r.get("sni"))
        s.sendall(base64.b64decode(r["data"]))
        out.append(drain(s).decode("latin-1"))
    print(json.dumps(out))
    ''')


class Rig:
    """One box, its upstreams, and the ways to reach them."""

    def __init__(self, d):
        self.started = []  # what close() ends, in order of start
        try:
            self._start(d)
        except BaseException:
            self.close()
            raise

    def _start(self, d):
        self.ca_pem, tls = make_test_ca(d / "ca")
        site = make_site(d / "site")
        self.denied = self._up(CountingServer((DENIED_ADDR, 0)))      # a denied host
        self.denied_port = self._up(CountingServer((SERVER_ADDR, 0)))  # allowed host, denied port
        self.echo = self._up(CountingServer((SERVER_ADDR, 0)))  # answers with what it was sent
        self.py = self._up(SiteServer(site))
        self.pys = self._up(SiteServer(site, tls=tls))
        self.ng = self._up(Nginx(d / "nginx", site, d / "ca" / "srv.pem", d / "ca" / "srv.key", redirects=[
            ("/public/away", f"http://{DENIED_ADDR}:{self.denied.port}/x"),
            ("/public/inside", "/private/secret.txt")]))
        (d / "box").mkdir()
        self.box = Box(d / "box")
        self.box.write_config(extra=gateway_config(self.ca_pem) + TOOLS_WRITING)
        self.box.seed_policy(extra=f"""
            permit(principal, action == Box::Action::"shell:spawn", resource)
            when {{ context.input.program == "/usr/bin/curl" ||
                   context.input.program == "/usr/bin/python3" }};
            permit(principal, action == Box::Action::"net:connect", resource);
            forbid(principal, action == Box::Action::"net:connect", resource)
            when {{ context.input.port == {self.denied_port.port} ||
                   (context.input has ip && context.input.ip == "{DENIED_ADDR}") }};
            permit(principal, action == Box::Action::"http:request", resource)
            when {{ context.input.path like "/public/*" }};
            @id("no_wipe")
            forbid(principal, action == Box::Action::"http:request", resource)
            when {{ context.input.path like "*:wipe*" }};
            """)
        self.box.start()
        (self.box.workspace / "raw.py").write_text(RAW_CLIENT)
        self.n = 0

    def _up(self, server):
        self.started.append(server)
        return server

    def close(self):
        b = getattr(self, "box", None)
        if b:
            b.teardown()
        for srv in reversed(self.started):
            srv.close()

    # What every upstream has seen so far.
    def seen(self):
        return {"py": self.py.seen(), "pys": self.pys.seen(), "ng": self.ng.seen(),
                "denied": (self.denied.connections, list(self.denied.requests)),
                "denied_port": (self.denied_port.connections, list(self.denied_port.requests))}

    def raw(self, *reqs):
        """Each request (bytes, or (connect, sni, bytes)) sent by the tool's
        Python through the gateway; the replies, as text."""
        self.n += 1
        spec = []
        for r in reqs:
            if isinstance(r, tuple):
                connect, sni, data = r
                spec.append({"connect": connect, "sni": sni,
                             "data": base64.b64encode(data).decode()})
            else:
                spec.append({"data": base64.b64encode(r).decode()})
        name = f"req{self.n}.json"
        (self.box.workspace / name).write_text(json.dumps(spec))
        r = self.box.bash(f"/usr/bin/python3 raw.py {name}")
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    def alive(self):
        r = self.box.bash("echo alive")
        assert (r.returncode, r.stdout) == (0, "alive\n"), r.stderr


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    r = Rig(tmp_path_factory.mktemp("redteam"))
    yield r
    r.close()
    assert "boxfs-mnt" not in host_mounts()


def get(authority, target, extra=b""):
    """An absolute-form GET for the plain proxy."""
    t = target if isinstance(target, bytes) else target.encode()
    return (b"GET http://%s%s HTTP/1.1\r\nHost: %s\r\n%sConnection: close\r\n\r\n"
            % (authority.encode(), t, authority.encode(), extra))


def origin_get(authority, target, extra=b""):
    t = target if isinstance(target, bytes) else target.encode()
    return (b"GET %s HTTP/1.1\r\nHost: %s\r\n%sConnection: close\r\n\r\n"
            % (t, authority.encode(), extra))


def status_of(reply):
    m = re.match(r"HTTP/1\.1 (\d{3}) ", reply)
    return int(m.group(1)) if m else None


def assert_marked(reply, text):
    head, _, body = reply.partition("\r\n\r\n")
    assert head.startswith("HTTP/1.1 403 Forbidden\r\n"), reply
    assert "\r\nx-strands-box-egress: refused\r\n" in head, reply
    assert text in body, (text, body)
    assert SECRET not in reply


def policy_denied(authority, path, rule="default-deny"):
    rule = rule if rule == "default-deny" else f"policy: {rule}"
    return f"http:request gate: policy denied this operation on '{authority}{path}' [{rule}]"


# ---- the path rule: every spelling of a way into private/ ----

TARGET_REJECTED = "request target rejected: the target holds "
PRIVATE = "/private/secret.txt"

# (id, target, outcome): outcome is "denied" (decided, and refused, on the
# path the servers would serve: /private/secret.txt), ("forbidden", path)
# (likewise, by the forbid no_wipe), a piece of the refusal's reason
# (refused before any decision), or ("miss", forwarded): permitted as the
# public path it is, forwarded exactly so, and the servers find nothing
# there.  Targets in bytes go only the raw way.
NOT_UTF8 = "bytes that are not UTF-8"
PATHS = [
    ("dot-dot", "/public/../private/secret.txt", "denied"),
    ("dot-then-dot-dot", "/public/./../private/secret.txt", "denied"),
    ("dot-dot-twice", "/public/sub/../../private/secret.txt", "denied"),
    ("dot-dot-above-root", "/public/../../../private/secret.txt", "denied"),
    ("encoded-dots", "/public/%2e%2e/private/secret.txt", "denied"),
    ("encoded-dots-upper", "/public/%2E%2E/private/secret.txt", "denied"),
    ("half-encoded-dots", "/public/.%2e/private/secret.txt", "denied"),
    ("half-encoded-dots-other-half", "/public/%2E./private/secret.txt", "denied"),
    ("encoded-letters-and-dots", "/%70ublic/%2e%2e/%70rivate/secret.txt", "denied"),
    ("encoded-slash", "/public/..%2Fprivate/secret.txt", "an encoded `/`"),
    ("encoded-slash-lower", "/public/..%2fprivate/secret.txt", "an encoded `/`"),
    ("encoded-dots-and-slash", "/public/%2e%2e%2fprivate/secret.txt", "an encoded `/`"),
    ("encoded-slashes-throughout", "/public%2F..%2Fprivate%2Fsecret.txt", "an encoded `/`"),
    ("encoded-backslash", "/public/..%5Cprivate/secret.txt", "an encoded `/` or `\\`"),
    ("encoded-backslash-lower", "/public/..%5cprivate/secret.txt", "an encoded `/` or `\\`"),
    ("backslash", "/public/..\\private/secret.txt", "a backslash"),
    ("double-encoded-dots", "/public/%252e%252e/private/secret.txt", "a double-encoded escape"),
    ("double-encoded-slash", "/public/..%252Fprivate/secret.txt", "a double-encoded escape"),
    ("double-encoded-backslash", "/public/..%255Cprivate/secret.txt", "a double-encoded escape"),
    ("double-encoded-by-parts", "/public/%25%32%65%25%32%65/private/secret.txt",
     "a double-encoded escape"),
    ("overlong-utf8-dots", "/public/%c0%ae%c0%ae/private/secret.txt", NOT_UTF8),
    ("overlong-utf8-slash", "/public/..%c0%afprivate/secret.txt", NOT_UTF8),
    ("overlong-utf8-3-byte-dots", "/public/%e0%80%ae%e0%80%ae/private/secret.txt", NOT_UTF8),
    ("overlong-utf8-backslash", "/public/..%c1%9cprivate/secret.txt", NOT_UTF8),
    ("raw-overlong-bytes", b"/public/\xc0\xae\xc0\xae/private/secret.txt", NOT_UTF8),
    ("raw-tab", b"/public/..\t/private/secret.txt", "a space or control byte"),
    ("nul", "/public/%00/../../private/secret.txt", "an encoded control byte"),
    ("nul-after-dots", "/public/..%00/private/secret.txt", "an encoded control byte"),
    ("encoded-tab", "/public/..%09/private/secret.txt", "an encoded control byte"),
    ("invalid-escape", "/public/%zz/../../private/secret.txt", "an invalid percent-escape"),
    ("truncated-escape", "/public/%2/../../private/secret.txt", "an invalid percent-escape"),
    ("iis-unicode-escape", "/public/%u002e%u002e/private/secret.txt", "an invalid percent-escape"),
    ("semicolon-parameter", "/public/..;/private/secret.txt", "a `;` path parameter"),
    ("semicolon-on-segment", "/public;x=1/../private/secret.txt", "a `;` path parameter"),
    ("encoded-dots-semicolon", "/public/%2e%2e;/private/secret.txt", "a `;` path parameter"),
    ("empty-segment-after-dot-dot", "/public/..//private/secret.txt", "an empty path segment"),
    ("leading-double-slash", "//private/secret.txt", "an empty path segment"),
    ("fragment", b"/public/x#/../../private/secret.txt", "a fragment"),
    ("forbid-encoded-colon", "/public/ops%3Awipe", ("forbidden", "/public/ops:wipe")),
    ("forbid-encoded-colon-lower", "/public/ops%3awipe", ("forbidden", "/public/ops:wipe")),
    ("forbid-encoded-dots-and-colon", "/public/x/%2e%2e/ops%3Awipe",
     ("forbidden", "/public/ops:wipe")),
    ("dot-dot-in-query", "/public/x?/../../private/secret.txt",
     ("miss", "/public/x?/../../private/secret.txt")),
    ("fullwidth-slash", "/public/..%ef%bc%8fprivate/secret.txt",
     ("miss", "/public/..%EF%BC%8Fprivate/secret.txt")),
    ("dots-with-space", "/public/..%20/private/secret.txt",
     ("miss", "/public/..%20/private/secret.txt")),
]


def shell_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


@pytest.mark.parametrize("target,outcome", [pytest.param(t, o, id=i) for i, t, o in PATHS])
def test_path_spelling(rig, target, outcome):
    before = rig.seen()
    ups = [("http", rig.py.port), ("http", rig.ng.port), ("https", rig.pys.port),
           ("https", rig.ng.tls_port)]
    kind = outcome[0] if isinstance(outcome, tuple) else outcome
    miss = kind == "miss"
    if kind == "forbidden":
        denial = lambda port: policy_denied(f"{SERVER_ADDR}:{port}", outcome[1], "no_wipe")
    else:
        denial = lambda port: policy_denied(f"{SERVER_ADDR}:{port}", PRIVATE)
    decided = kind in ("denied", "forbidden")
    # The tool's Python: the exact bytes, plain and inside TLS.
    replies = rig.raw(get(f"{SERVER_ADDR}:{rig.py.port}", target),
                      get(f"{SERVER_ADDR}:{rig.ng.port}", target),
                      (f"{SERVER_ADDR}:{rig.pys.port}", None,
                       origin_get(f"{SERVER_ADDR}:{rig.pys.port}", target)),
                      (f"{SERVER_ADDR}:{rig.ng.tls_port}", None,
                       origin_get(f"{SERVER_ADDR}:{rig.ng.tls_port}", target)))
    for (_, port), reply in zip(ups, replies):
        assert SECRET not in reply
        if miss:
            assert status_of(reply) == 404, reply
        elif decided:
            assert_marked(reply, denial(port))
        else:
            assert_marked(reply, TARGET_REJECTED + outcome)
    if isinstance(target, str):
        # The Shell's curl, and a tool's curl that sends the path as it is.
        cmds = []
        for scheme, port in ups:
            url = shell_quote(f"{scheme}://{SERVER_ADDR}:{port}{target}")
            cmds.append(f"curl -sS {url} 2>&1; echo \"@@$?\"")
        for scheme, port in ups:
            url = shell_quote(f"{scheme}://{SERVER_ADDR}:{port}{target}")
            cmds.append(f"/usr/bin/curl -sS -i --path-as-is {url} 2>&1; echo \"@@$?\"")
        r = rig.box.bash("; ".join(cmds))
        assert r.returncode == 0, r.stderr
        # Each output ends "@@<status>"; split, output k then its status.
        parts = r.stdout.split("@@")
        assert len(parts) == 9, r.stdout
        outs = [parts[0]] + [p.partition("\n")[2] for p in parts[1:8]]
        codes = [int(p.partition("\n")[0]) for p in parts[1:]]
        for k, out in enumerate(outs):
            assert SECRET not in out, out
            if miss:
                assert "404" in out, out
                continue
            if k < 4:  # the Shell's curl: the refusal's text, status 1
                # (libcurl removes dot segments itself, so a spelling with
                # `..` may arrive as the private path, and be denied there)
                texts = [denial(ups[k][1])] + ([] if decided else [TARGET_REJECTED + outcome])
                assert any(out.startswith("curl: " + t) for t in texts), (texts, out)
                assert codes[k] == 1, (k, out)
            else:      # the tool's curl: the marked reply itself
                assert "403 Forbidden" in out and "x-strands-box-egress: refused" in out, out
                want = denial(ups[k - 4][1]) if decided else TARGET_REJECTED + outcome
                assert want in out, (want, out)
    after = rig.seen()
    if miss:
        # Permitted as the public path it is, and forwarded exactly so.
        fwd = outcome[1]
        for name in ("py", "pys", "ng"):
            new = after[name][len(before[name]):]
            assert new and all(line == f"GET {fwd} HTTP/1.1" for line in new), (name, new)
    else:
        assert after == before  # no server saw any of it
    rig.alive()


def test_decided_path_is_the_served_path(rig):
    """Spellings of a public file are forwarded as the one path policy
    decided, so each server serves what was decided."""
    for target in ("/public/index.txt", "/public/%69ndex.txt", "/public/sub/../index.txt",
                   "/public/./sub/%2e%2e/index.txt", "/%70ublic/index%2Etxt"):
        before = rig.seen()
        replies = rig.raw(get(f"{SERVER_ADDR}:{rig.py.port}", target),
                          get(f"{SERVER_ADDR}:{rig.ng.port}", target),
                          (f"{SERVER_ADDR}:{rig.pys.port}", None,
                           origin_get(f"{SERVER_ADDR}:{rig.pys.port}", target)))
        for reply in replies:
            assert status_of(reply) == 200 and reply.endswith("\r\n\r\npublic ok\n"), reply
        after = rig.seen()
        for name in ("py", "ng", "pys"):
            assert after[name][len(before[name]):] == ["GET /public/index.txt HTTP/1.1"], name
    r = rig.box.bash(f"curl -sS http://{SERVER_ADDR}:{rig.ng.port}/public/%2e/sub/deep.txt; "
                     f"/usr/bin/curl -sS --path-as-is "
                     f"https://{SERVER_ADDR}:{rig.ng.tls_port}/public/sub/./%2E%2E/sub/deep.txt")
    assert (r.returncode, r.stdout) == (0, "public deep\npublic deep\n"), r.stderr
    rig.alive()


# ---- a denied host, by any spelling of its address ----

# (id, spelling, what the refusal names)
HOSTS = [
    ("short-127.1", "127.1", "127.0.0.1"), ("hex-0x7f.1", "0x7f.1", "127.0.0.1"),
    ("decimal-2130706433", "2130706433", "127.0.0.1"),
    ("octal-0177.0.0.1", "0177.0.0.1", "127.0.0.1"),
    ("hex-dotted", "0x7f.0x0.0x0.0x1", "127.0.0.1"),
    ("v4-mapped-v6", "[::ffff:127.0.0.1]", "127.0.0.1"),
    ("v4-mapped-v6-hex", "[::ffff:7f00:1]", "127.0.0.1"),
    ("trailing-dot", "127.0.0.1.", "127.0.0.1"),
    ("localhost-uppercase", "LOCALHOST", "the egress floor refuses localhost"),
    ("localhost-trailing-dot", "localhost.", "the egress floor refuses localhost"),
]


@pytest.mark.parametrize("host,named", [pytest.param(h, n, id=i) for i, h, n in HOSTS])
def test_denied_host_spelling(rig, host, named):
    before = rig.seen()
    p = rig.denied.port
    replies = rig.raw(get(f"{host}:{p}", "/x"), (f"{host}:{p}", None, b""))
    for reply in replies:
        head = reply.partition("\r\n\r\n")[0]
        assert head.startswith("HTTP/1.1 403 Forbidden\r\n"), reply
        assert "\r\nx-strands-box-egress: refused\r\n" in head, reply
        assert named in reply, reply
    # And through the tool's curl, which is told to use the proxy even here.
    r = rig.box.bash(f"/usr/bin/curl -sS -i --noproxy '' http://{host}:{p}/x 2>&1; echo \"@@$?\"")
    assert "403 Forbidden" in r.stdout and "x-strands-box-egress: refused" in r.stdout, r.stdout
    assert rig.seen() == before and rig.denied.connections == 0
    rig.alive()


def test_denied_host_idn_fullwidth(rig):
    """ｌｏｃａｌｈｏｓｔ: IDNA maps it to localhost.  Raw on the wire it is
    no host name at all (400); the tool's curl will not send it, the Shell's
    refuses it as local."""
    before = rig.seen()
    p = rig.denied.port
    name = "ｌｏｃａｌｈｏｓｔ"
    replies = rig.raw(get(f"{name}:{p}", "/x"), (f"{name}:{p}", None, b""))
    assert all(status_of(x) == 400 for x in replies), replies
    r = rig.box.bash(f"/usr/bin/curl -sS -i --noproxy '' http://{name}:{p}/x 2>&1; "
                     f"echo \"@@$?\"; curl -sS http://{name}:{p}/x 2>&1; echo \"@@$?\"")
    assert r.stdout == ("curl: (3) URL using bad/illegal format or missing URL\n@@3\n"
                        f"curl: access denied: {name}\n@@1\n"), r.stdout
    assert rig.seen() == before
    rig.alive()


def test_userinfo_names_allowed_host_reaches_denied(rig):
    """http://allowed@denied/: the host is the part after the @."""
    before = rig.seen()
    p = rig.denied.port
    url = f"http://{SERVER_ADDR}:{rig.py.port}@{DENIED_ADDR}:{p}/x"
    replies = rig.raw(get(f"{SERVER_ADDR}:{rig.py.port}@{DENIED_ADDR}:{p}", "/x"))
    assert status_of(replies[0]) == 400, replies
    r = rig.box.bash(f"/usr/bin/curl -sS -i --noproxy '' {url} 2>&1; curl -sS {url} 2>&1")
    assert "403 Forbidden" in r.stdout and "x-strands-box-egress: refused" in r.stdout, r.stdout
    assert "curl: access denied: 127.0.0.1" in r.stdout, r.stdout
    assert rig.seen() == before
    rig.alive()


# ---- CONNECT ----

def test_connect_to_denied_host(rig):
    before = rig.seen()
    replies = rig.raw((f"{DENIED_ADDR}:{rig.denied.port}", None, b""),
                      (f"localhost:{rig.denied.port}", None, b""))
    assert_marked(replies[0], "127.0.0.1")
    assert_marked(replies[1], "the egress floor refuses localhost")
    assert rig.seen() == before
    rig.alive()


def test_connect_to_denied_port(rig):
    before = rig.seen()
    port = rig.denied_port.port
    replies = rig.raw((f"{SERVER_ADDR}:{port}", None, b""), get(f"{SERVER_ADDR}:{port}", "/x"))
    for reply in replies:
        assert_marked(reply, f"net:connect gate: policy denied this operation on "
                             f"'{SERVER_ADDR}:{port}'")
    assert rig.seen() == before
    rig.alive()


# ---- the authority: Host header, absolute-form, SNI ----

def test_host_header_names_denied_host(rig):
    """An allowed URL whose Host names the denied host: the proxy tells the
    server the URL's authority, the one decided (RFC 9112 §3.2.2)."""
    before = rig.seen()
    n = len(rig.echo.heads)
    a = f"{SERVER_ADDR}:{rig.echo.port}"
    bad = f"{DENIED_ADDR}:{rig.denied.port}".encode()
    replies = rig.raw(b"GET http://%s/public/x HTTP/1.1\r\nHost: %s\r\n"
                      b"Connection: close\r\n\r\n" % (a.encode(), bad))
    assert status_of(replies[0]) == 200, replies
    assert [(p, h["host"]) for p, h in rig.echo.heads[n:]] == [("/public/x", a)]
    assert rig.seen() == before
    rig.alive()


def test_two_host_headers(rig):
    before = rig.seen()
    n = len(rig.echo.heads)
    a = f"{SERVER_ADDR}:{rig.echo.port}"
    replies = rig.raw(b"GET http://%s/public/x HTTP/1.1\r\nHost: %s\r\nHost: "
                      b"localhost\r\nConnection: close\r\n\r\n" % (a.encode(), a.encode()))
    assert status_of(replies[0]) == 200, replies
    doc = json.loads(replies[0].partition("\r\n\r\n")[2])
    assert doc["headers"]["host"] == a
    assert [(p, h["host"]) for p, h in rig.echo.heads[n:]] == [("/public/x", a)]
    assert rig.seen() == before
    rig.alive()


def test_tunnel_host_header_names_another_host(rig):
    before = rig.seen()
    a = f"{SERVER_ADDR}:{rig.pys.port}"
    replies = rig.raw((a, None, origin_get(f"localhost:{rig.pys.port}", "/public/index.txt")))
    assert_marked(replies[0], "request authority rejected")
    assert rig.seen() == before
    rig.alive()


def test_tunnel_absolute_form_names_another_host(rig):
    """Inside a tunnel to an allowed host, an absolute-form target naming
    the denied one (its Host header naming the tunnel's)."""
    before = rig.seen()
    a = f"{SERVER_ADDR}:{rig.pys.port}"
    data = (b"GET https://%s:%d/public/index.txt HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
            % (DENIED_ADDR.encode(), rig.denied.port, a.encode()))
    replies = rig.raw((a, None, data))
    assert_marked(replies[0], "request authority rejected")
    assert rig.seen() == before
    rig.alive()


def test_origin_form_to_the_proxy(rig):
    """An origin-form request names no host: the proxy takes none."""
    before = rig.seen()
    replies = rig.raw(origin_get(f"{SERVER_ADDR}:{rig.py.port}", PRIVATE))
    assert status_of(replies[0]) == 400, replies
    assert "the gateway takes absolute-form http:// requests and CONNECT" in replies[0]
    assert rig.seen() == before
    rig.alive()


def test_sni_names_another_host(rig):
    """The SNI a client offers chooses nothing: the request goes to the
    host the CONNECT named and was decided for."""
    before = rig.seen()
    a = f"{SERVER_ADDR}:{rig.pys.port}"
    replies = rig.raw((a, "localhost", origin_get(a, "/public/index.txt")),
                      (a, "localhost",
                       origin_get(f"localhost:{rig.pys.port}", "/public/index.txt")))
    assert status_of(replies[0]) == 200 and replies[0].endswith("public ok\n"), replies[0]
    assert_marked(replies[1], "request authority rejected")
    after = rig.seen()
    assert after["pys"][len(before["pys"]):] == ["GET /public/index.txt HTTP/1.1"]
    assert after["denied"] == before["denied"]
    rig.alive()


# ---- redirects: each hop is a request of its own, decided ----

def test_redirect_to_denied_host(rig):
    before = rig.seen()
    url = f"http://{SERVER_ADDR}:{rig.ng.port}/public/away"
    r = rig.box.bash(f"/usr/bin/curl -sS -i -L --noproxy '' {url} 2>&1; echo \"@@$?\"; "
                     f"curl -sS -L {url} 2>&1; echo \"@@$?\"")
    tool, shell = r.stdout.split("@@")[:2]
    assert "302 Moved Temporarily" in tool and "x-strands-box-egress: refused" in tool, tool
    assert f"{DENIED_ADDR}:{rig.denied.port}" in tool
    assert "curl: access denied: 127.0.0.1" in shell or "x-strands-box-egress" in shell, shell
    after = rig.seen()
    assert after["denied"] == before["denied"] == (0, [])
    assert after["ng"][len(before["ng"]):] == ["GET /public/away HTTP/1.1"] * 2
    rig.alive()


def test_redirect_into_private(rig):
    before = rig.seen()
    n = len(rig.box.decisions())
    url = f"http://{SERVER_ADDR}:{rig.ng.port}/public/inside"
    r = rig.box.bash(f"curl -sS -L {url} 2>&1; /usr/bin/curl -sS -i -L {url} 2>&1")
    assert SECRET not in r.stdout
    denied = policy_denied(f"{SERVER_ADDR}:{rig.ng.port}", PRIVATE)
    shell, _, tool = r.stdout.partition("\n")
    assert shell.startswith("curl: " + denied), r.stdout
    assert "302 Moved Temporarily" in tool and "\n\n" + denied in tool.replace("\r", ""), tool
    hops = [(d["strands.box.policy.verdict"], d["strands.box.policy.resource"])
            for d in rig.box.decisions()[n:] if d["strands.box.policy.action"] == "http:request"]
    a = f"{SERVER_ADDR}:{rig.ng.port}"
    assert hops == [("permit", f"{a}/public/inside"), ("deny", f"{a}{PRIVATE}")] * 2
    assert rig.seen()["ng"][len(before["ng"]):] == ["GET /public/inside HTTP/1.1"] * 2
    rig.alive()


# ---- request smuggling: what the gateway frames is what it decided ----

def smuggle_refused(rig, method, rest, status="400 Bad Request"):
    """Sends `METHOD http://…/public/index.txt` with its Host header and then
    rest: the gateway answers status, the secret is nowhere in the reply, the
    test server sees none of it and boxd answers after."""
    a = f"{SERVER_ADDR}:{rig.py.port}".encode()
    before = rig.seen()
    reply = rig.raw(b"%s http://%s/public/index.txt HTTP/1.1\r\nHost: %s\r\n%s"
                    % (method, a, a, rest))[0]
    assert rig.seen() == before
    assert reply.startswith(f"HTTP/1.1 {status}\r\n") and SECRET not in reply, reply
    rig.alive()


def test_smuggle_content_length_and_transfer_encoding(rig):
    a = f"{SERVER_ADDR}:{rig.py.port}".encode()
    inner = b"GET /private/secret.txt HTTP/1.1\r\nHost: %s\r\n\r\n" % a
    smuggle_refused(rig, b"POST", b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + inner)


def test_smuggle_two_content_lengths(rig):
    smuggle_refused(rig, b"POST", b"Content-Length: 0\r\nContent-Length: 40\r\n\r\n"
                                  b"GET /private/secret.txt HTTP/1.1\r\n\r\n")


def test_smuggle_content_length_list(rig):
    smuggle_refused(rig, b"POST", b"Content-Length: 3, 3\r\n\r\nabc")


def test_smuggle_obs_fold_header(rig):
    smuggle_refused(rig, b"GET", b"X-Pad: a\r\n Transfer-Encoding: chunked\r\n\r\n")


def test_smuggle_obfuscated_transfer_encoding(rig):
    smuggle_refused(rig, b"POST", b"Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n",
                    "501 Not Implemented")


def test_smuggle_pipelined_request_is_decided(rig):
    """A second request riding after the first's body is a request of its
    own: decided, and refused."""
    before = rig.seen()
    a = f"{SERVER_ADDR}:{rig.py.port}".encode()
    replies = rig.raw(b"GET http://%s/public/index.txt HTTP/1.1\r\nHost: %s\r\n"
                      b"Content-Length: 0\r\n\r\n"
                      b"GET http://%s/private/secret.txt HTTP/1.1\r\nHost: %s\r\n\r\n"
                      % (a, a, a, a))
    reply = replies[0]
    assert reply.startswith("HTTP/1.1 200 OK\r\n") and "public ok\n" in reply, reply
    assert SECRET not in reply
    assert policy_denied(a.decode(), PRIVATE) in reply
    assert rig.seen()["py"][len(before["py"]):] == ["GET /public/index.txt HTTP/1.1"]
    rig.alive()
