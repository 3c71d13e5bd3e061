"""The egress gateway through a tool: `/usr/bin/curl` and `python3 urllib` inside a tool
sandbox reach real local HTTP and HTTPS servers only through the gateway,
by the proxy and CA variables the box composes (spec/runtime.md §5.6, §6);
a contained tool reaches nothing else, and `contain_egress = false` is
disclosed (§5.7)."""
import hashlib
import json
import socket
import textwrap

import pytest

from gwutil import (FIELDS_POLICY, NET_POLICY, SERVER_ADDR, SPAWN, TOOLS_WRITING, curl_echo,
                    gateway_config, gateway_port)

URLLIB = textwrap.dedent(r'''
    import json, sys, urllib.request, urllib.error
    base = sys.argv[1]
    out = []

    def call(method, path, body=None, headers=None):
        req = urllib.request.Request(base + path, data=body, method=method,
                                     headers=headers or {})
        with urllib.request.urlopen(req, timeout=20) as r:
            data = r.read()
            out.append({"status": r.status, "url": r.geturl(),
                        "te": r.headers.get("Transfer-Encoding"),
                        "body": data.decode("latin-1")})

    call("GET", "/echo?q=1", headers={"X-Tool": "urllib"})
    call("POST", "/echo", b"posted body", {"Content-Type": "text/x-test"})
    call("PUT", "/echo", b"put body")
    call("DELETE", "/echo")
    call("HEAD", "/echo")
    call("GET", "/redirect/2")
    call("GET", "/chunked")
    try:
        call("GET", "/status/404")
    except urllib.error.HTTPError as e:
        out.append({"status": e.code, "body": e.read().decode()})
    try:
        call("GET", "/secret/x")
    except urllib.error.HTTPError as e:
        out.append({"status": e.code, "marker": e.headers.get("x-strands-box-egress"),
                    "body": e.read().decode()})
    print(json.dumps(out))
    ''')


@pytest.fixture
def toolbox(box, test_ca):
    ca_pem, _ = test_ca
    box.write_config(extra=gateway_config(ca_pem) + TOOLS_WRITING)
    box.seed_policy(extra=NET_POLICY + SPAWN)
    box.start()
    return box


def final_head(text):
    """The last response head in curl -i / -I output (after a proxy's
    "Connection established")."""
    blocks = [b for b in text.replace("\r\n", "\n").split("\n\n") if b.startswith("HTTP/")]
    return blocks[-1] + "\n" if blocks else ""


def http_decisions(box):
    return [d for d in box.decisions() if d["strands.box.policy.action"] == "http:request"]


def test_tool_curl_through_gateway(toolbox, servers):
    plain, secure = servers
    for srv, scheme in ((plain, "http"), (secure, "https")):
        base = f"{scheme}://{SERVER_ADDR}:{srv.port}"
        before = len(http_decisions(toolbox))
        docs = curl_echo(toolbox, "/usr/bin/curl", base, f"-H 'X-Tool: curl' -A tool/1 {base}/echo")
        assert [d["method"] for d in docs] == ["GET", "POST", "PUT", "DELETE", "GET"]
        assert docs[4]["headers"]["x-tool"] == "curl"
        assert docs[4]["headers"]["user-agent"] == "tool/1"
        # The requests came through the gateway: every one was decided.
        reqs = http_decisions(toolbox)[before:]
        assert [d["http.request.method"] for d in reqs] == ["GET", "POST", "PUT", "DELETE", "GET"]
        assert all(d["strands.box.policy.verdict"] == "permit" for d in reqs)
        assert all(d["server.address"] == SERVER_ADDR for d in reqs)
        # HEAD, headers of a response, redirects, chunked.
        r = toolbox.bash(f"/usr/bin/curl -sS -I {base}/echo")
        assert r.returncode == 0, r.stderr
        head = final_head(r.stdout)
        assert head.startswith("HTTP/1.1 200 OK\n"), r.stdout
        assert "Content-Type: application/json" in head
        before = len(srv.requests)
        r = toolbox.bash(f"/usr/bin/curl -sS -L {base}/redirect/3 -w '%{{http_code}}'")
        assert (r.returncode, r.stdout) == (0, "arrived\n200"), r.stderr
        assert [p for _, p in srv.requests[before:]] == [
            "/redirect/3", "/redirect/2", "/redirect/1", "/redirect/0"]
        r = toolbox.bash(f"/usr/bin/curl -sS {base}/chunked")
        assert (r.returncode, r.stdout) == (0, "one,two,three\n"), r.stderr
        # A refusal is marked and nothing reaches the server.
        before = list(srv.requests)
        r = toolbox.bash(f"/usr/bin/curl -sS -i {base}/secret/x")
        assert r.returncode == 0
        head = final_head(r.stdout)
        assert head.startswith("HTTP/1.1 403"), r.stdout
        assert "x-strands-box-egress: refused" in head
        assert "http:request gate: policy denied this operation on " in r.stdout
        assert srv.requests == before


def test_tool_python_urllib_through_gateway(toolbox, servers):
    plain, secure = servers
    (toolbox.workspace / "fetch.py").write_text(URLLIB)
    for srv, scheme in ((plain, "http"), (secure, "https")):
        before = len(http_decisions(toolbox))
        r = toolbox.bash(f"/usr/bin/python3 fetch.py {scheme}://{SERVER_ADDR}:{srv.port}")
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        docs = [json.loads(o["body"]) for o in out[:4]]
        assert [d["method"] for d in docs] == ["GET", "POST", "PUT", "DELETE"]
        assert docs[0]["path"] == "/echo?q=1" and docs[0]["headers"]["x-tool"] == "urllib"
        assert docs[1]["body"] == "posted body"
        assert docs[1]["headers"]["content-type"] == "text/x-test"
        assert docs[2]["body"] == "put body"
        assert out[4]["status"] == 200 and out[4]["body"] == ""          # HEAD
        assert out[5]["body"] == "arrived\n" and out[5]["url"].endswith("/redirect/0")
        assert out[6]["body"] == "one,two,three\n"                         # chunked
        assert (out[7]["status"], out[7]["body"]) == (404, "status 404\n")
        assert out[8]["status"] == 403 and out[8]["marker"] == "refused"
        assert out[8]["body"].startswith("http:request gate: policy denied")
        reqs = http_decisions(toolbox)[before:]
        assert [d["http.request.method"] for d in reqs] == [
            "GET", "POST", "PUT", "DELETE", "HEAD"] + ["GET"] * 6
        assert [d["strands.box.policy.verdict"] for d in reqs] == ["permit"] * 10 + ["deny"]


def test_tool_decisions_carry_ip_and_interception(box, servers, test_ca):
    """What policy sees of a tool's exchange: net:connect before DNS (no ip)
    and after (ip), http:request with method, path, body_bytes, intercepted."""
    plain, secure = servers
    ca_pem, _ = test_ca
    box.write_config(extra=gateway_config(ca_pem) + TOOLS_WRITING)
    box.seed_policy(extra=SPAWN + FIELDS_POLICY)
    box.start()
    r = box.bash(f"/usr/bin/curl -sS -d hello https://{SERVER_ADDR}:{secure.port}/p")
    assert r.returncode == 0 and json.loads(r.stdout)["body"] == "hello", r.stderr
    r = box.bash(f"/usr/bin/curl -sS -d hello http://{SERVER_ADDR}:{plain.port}/p")
    assert "http:request gate: policy denied" in r.stdout, (r.stdout, r.stderr)
    assert plain.requests == []
    log = [(d["strands.box.policy.action"], d["strands.box.policy.verdict"])
           for d in box.decisions() if d["strands.box.policy.action"] != "shell:spawn"]
    assert log == [("net:connect", "permit"), ("net:connect", "permit"),
                   ("http:request", "permit"),
                   ("net:connect", "permit"), ("net:connect", "permit"),
                   ("http:request", "deny")]


CONTAINED_PROBE = textwrap.dedent(r'''
    import errno, json, socket, sys
    srv_port, gw_port, host_port = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    R = {}
    def attempt(name, addr, family=socket.AF_INET):
        s = socket.socket(family, socket.SOCK_STREAM)
        s.settimeout(3)
        try:
            s.connect(addr)
            R[name] = "connected"
        except OSError as e:
            R[name] = errno.errorcode.get(e.errno, str(e.errno))
        finally:
            s.close()
    attempt("server_direct", ("%s", srv_port))
    attempt("server_other_loopback", ("127.0.0.1", srv_port))
    attempt("host_listener", ("127.0.0.1", host_port))
    attempt("gateway", ("127.0.0.1", gw_port))
    attempt("gateway_other_address", ("127.0.0.2", gw_port))
    attempt("public", ("192.0.2.1", 80))
    print(json.dumps(R))
    ''' % SERVER_ADDR)


def test_contained_tool_reaches_only_the_gateway(toolbox, servers):
    plain, _ = servers
    gw = gateway_port(toolbox.proc.pid)
    host = socket.socket()
    host.bind(("127.0.0.1", 0))
    host.listen(4)
    host.settimeout(0.5)
    try:
        (toolbox.workspace / "probe.py").write_text(CONTAINED_PROBE)
        r = toolbox.bash(f"/usr/bin/python3 probe.py {plain.port} {gw} {host.getsockname()[1]}")
        assert r.returncode == 0, r.stderr
        got = json.loads(r.stdout)
        assert got["gateway"] == "connected"        # the relay is there ...
        # ... and the only listener in the sandbox's network: 127/8 is its own
        # loopback, every other address has no route.
        assert got["server_direct"] == "ECONNREFUSED"
        assert got["gateway_other_address"] == "ECONNREFUSED"
        assert got["public"] == "ENETUNREACH"
        assert got["server_other_loopback"] == "ECONNREFUSED"
        assert got["host_listener"] == "ECONNREFUSED"
        # A client told to ignore the proxy variables reaches nothing.
        r = toolbox.bash(f"/usr/bin/curl -sS --noproxy '*' --max-time 5 "
                         f"http://{SERVER_ADDR}:{plain.port}/echo")
        assert r.returncode == 7, (r.returncode, r.stderr)
        assert plain.connections == 0
        with pytest.raises(socket.timeout):
            host.accept()
    finally:
        host.close()


def test_host_network_tool_is_disclosed(box, servers, test_ca):
    plain, _ = servers
    ca_pem, _ = test_ca
    box.write_config(extra=gateway_config(ca_pem) + textwrap.dedent("""
        [tool.curl]
        command = ["/usr/bin/curl"]
        network.contain_egress = false
        """))
    box.seed_policy(extra=NET_POLICY + SPAWN)
    box.start()
    err = box.stderr()
    assert ("strands-box: [tool.curl] native egress: connects to the network directly, with "
            "the arguments the agent passes, with no egress gateway, no net:connect or "
            "http:request decision, and no credential injection\n") in err, err
    # It joined the host's network: a direct connection lands, undecided.
    r = box.bash(f"/usr/bin/curl -sS --noproxy '*' http://{SERVER_ADDR}:{plain.port}/echo")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["method"] == "GET"
    assert plain.connections == 1
    assert http_decisions(box) == []


def test_tool_large_download_intercepted(toolbox, servers):
    """200 MB over HTTPS through the gateway's interception, hashed in the tool."""
    _, secure = servers
    n = 200 * 1024 * 1024
    (toolbox.workspace / "big.py").write_text(textwrap.dedent("""\
        import hashlib, sys, urllib.request
        h, total = hashlib.sha256(), 0
        with urllib.request.urlopen(sys.argv[1], timeout=60) as r:
            while True:
                chunk = r.read(1 << 20)
                if not chunk:
                    break
                h.update(chunk)
                total += len(chunk)
        print(total, h.hexdigest())
        """))
    r = toolbox.bash(f"/usr/bin/python3 big.py https://{SERVER_ADDR}:{secure.port}/bytes/{n}",
                     timeout=120)
    assert r.returncode == 0, r.stderr
    want = hashlib.sha256(secure.pattern(n)).hexdigest()
    assert r.stdout == f"{n} {want}\n"
    reqs = http_decisions(toolbox)
    assert len(reqs) == 1 and reqs[0]["strands.box.policy.verdict"] == "permit"
