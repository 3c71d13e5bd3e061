"""The SSRF floor beneath policy: local, private, link-local, metadata,
multicast and unspecified addresses are refused in every spelling, by the
Shell's curl before sending and by the gateway before and after DNS, while
policy permits everything.  Listeners on the loopback count what arrives."""
import socket

import pytest

from gwutil import SERVER_ADDR, gateway_config, gateway_port, raw_exchange

# (spelling as it appears in a URL, what it means)
SPELLINGS = [
    "127.0.0.1", "127.1", "127.0.1", "2130706433", "0x7f000001", "0X7F000001", "017700000001",
    "0177.0.0.1", "0x7f.0.0.1", "0x7f.1", "0177.1", "127.000.000.001", "0x7F.0x00.0x00.0x01",
    "127.0.0.1.", "0x00007f000001", "127.255.255.254", "127.127.127.127",
    "localhost", "LOCALHOST", "localhost.", "LocalHost", "foo.localhost", "a.b.localhost.",
    "%31%32%37.0.0.1", "[::1]", "[0:0:0:0:0:0:0:1]", "[0000::0001]", "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]", "[0:0:0:0:0:ffff:7f00:1]", "[::FFFF:7F00:0001]", "[::127.0.0.1]",
    "[::7f00:1]", "[2002:7f00:1::]", "[2002:7f00:0001:0:0:0:0:0]", "[64:ff9b::7f00:1]",
    "[64:ff9b::127.0.0.1]", "[2001:0:0:0:0:0:80ff:fffe]", "[2001::80ff:fffe]",
    "[::ffff:0:7f00:1]", "0.0.0.0", "0", "0x0", "00", "[::]", "[0:0:0:0:0:0:0:0]",
    "10.0.0.1", "10.255.255.255", "172.16.0.1", "172.31.255.254", "192.168.0.1", "192.168.1.1",
    "169.254.169.254", "2852039166", "0xa9fea9fe", "0251.0376.0251.0376", "169.254.0.1",
    "[::ffff:169.254.169.254]", "[::ffff:a9fe:a9fe]", "[fd00::1]", "[fd00:ec2::254]",
    "[fc00::1]", "[fe80::1]", "[febf::1]", "[fec0::1]", "224.0.0.1", "239.255.255.250",
    "[ff02::1]", "100.64.0.1", "255.255.255.255", "[::ffff:10.0.0.1]", "[2002:a9fe:a9fe::]",
]

# Names that resolve to a local address: refused after DNS (no rebinding).
def resolving_names():
    out = []
    for name in {socket.gethostname(), "runsc", "vm"}:
        try:
            infos = socket.getaddrinfo(name, None)
        except OSError:
            continue
        if infos and all(i[4][0].startswith("127.") or i[4][0] == "::1" for i in infos):
            out.append(name)
    return sorted(out)


class Listener:
    def __init__(self, family, addr, port=0):
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((addr, port))
        self.sock.listen(64)
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]

    def count(self):
        n = 0
        while True:
            try:
                c, _ = self.sock.accept()
            except BlockingIOError:
                return n
            c.close()
            n += 1


@pytest.fixture
def listeners():
    v4 = Listener(socket.AF_INET, "127.0.0.1")
    ls = [v4]
    # 0.0.0.0 and every 127/8 address reach this one port on the loopback.
    try:
        ls.append(Listener(socket.AF_INET6, "::1", v4.port))
    except OSError:
        pass
    yield ls
    for l in ls:
        l.sock.close()


def test_ssrf_table_everything_refused(box, listeners):
    assert len(SPELLINGS) >= 60
    box.write_config(extra=gateway_config(allow=(SERVER_ADDR,)))
    box.seed_policy(extra="""
        permit(principal, action == Box::Action::"net:connect", resource);
        permit(principal, action == Box::Action::"http:request", resource);
        """)
    box.start()
    port = listeners[0].port
    names = resolving_names()
    # 1. The Shell's curl refuses before sending, or the gateway refuses.
    denied_early = 0
    for s in SPELLINGS + names:
        r = box.bash(f"curl -sS http://{s}:{port}/")
        assert r.returncode == 1, (s, r.stdout, r.stderr)
        assert r.stdout == "", s
        if r.stderr.startswith("curl: access denied: "):
            denied_early += 1
        else:
            assert "curl: net:connect gate: " in r.stderr, (s, r.stderr)
    assert denied_early >= len(SPELLINGS) - 1
    # 2. The gateway itself, asked directly (as a tool would), plain and CONNECT.
    gw = gateway_port(box.proc.pid)
    for s in SPELLINGS + names:
        for req in (f"GET http://{s}:{port}/ HTTP/1.1\r\nHost: {s}:{port}\r\n\r\n",
                    f"CONNECT {s}:{port} HTTP/1.1\r\nHost: {s}:{port}\r\n\r\n"):
            reply = raw_exchange(gw, req.encode())
            head = reply.partition(b"\r\n\r\n")[0]
            assert head.startswith(b"HTTP/1.1 403 "), (s, reply[:300])
            assert b"\r\nx-strands-box-egress: refused" in head, (s, head)
    # 3. Nothing ever reached a listener.
    assert sum(l.count() for l in listeners) == 0
    # The floor's refusals are logged as the effective decision.
    floor = [d for d in box.decisions() if d["strands.box.policy.rule"] == "enforcement:egress"]
    assert floor and all(d["strands.box.policy.verdict"] == "deny" for d in floor)
    assert all(d["strands.box.policy.action"] == "net:connect" for d in floor)
    if names:
        after_dns = [d for d in floor if d["server.address"] == names[0]]
        assert after_dns


def test_allowance_opens_only_what_it_names(box, listeners):
    port = listeners[0].port
    box.write_config(extra=gateway_config(allow=(f"127.0.0.1:{port + 1}",)))
    box.seed_policy(extra="""
        permit(principal, action == Box::Action::"net:connect", resource);
        permit(principal, action == Box::Action::"http:request", resource);
        """)
    box.start()
    r = box.bash(f"curl -sS http://127.0.0.1:{port}/")
    assert r.returncode == 1 and r.stderr == "curl: access denied: 127.0.0.1\n"
    # Named with its port: the Shell's curl sends, the gateway dials.
    r = box.bash(f"curl -sS --max-time 5 http://127.0.0.1:{port + 1}/")
    assert "access denied" not in r.stderr and "egress floor" not in r.stderr
    assert sum(l.count() for l in listeners) == 0
