"""MCP servers over HTTP in the box (spec/runtime.md §2.5): a server reached
through its alias and the gateway, its refusals, streams, resumed calls,
a server that dies or is not there, teardown, and TLS through the
gateway's tunnel.  The stdio servers and the helpers: test_mcp.py."""
import json
import signal
import subprocess
import time

import pytest

from conftest import REPO
from test_mcp import CLIENT, client, config, generate, records_attrs, two_gates


HTTP_SERVER = REPO / "tests" / "mcp" / "http_server.mjs"


def serve_http(extra_env=None):
    """The reference server behind the SDK's streamable HTTP transport:
    the process, its port and the token it wants."""
    import os
    token = "tok-" + os.urandom(8).hex()
    srv = subprocess.Popen(["node", str(HTTP_SERVER)], stdout=subprocess.PIPE, text=True,
                           env={"PATH": "/usr/bin:/bin", "TOKEN": token, **(extra_env or {})})
    return srv, int(srv.stdout.readline()), token


@pytest.fixture
def http_server():
    srv, port, token = serve_http()
    try:
        yield port, token
    finally:
        srv.kill()
        srv.wait()


def http_box(tmp_path, port, token, policy, host="127.0.0.1", gateway=""):
    from conftest import Box
    box = Box(tmp_path)
    box.seed_policy(extra=policy)
    dest = host if port == 443 else f"{host}:{port}"
    box.write_config(extra=f'\n[gateway]\nallow_local = ["{host}:{port}"]\n{gateway}'
                           f'[mcp.remote]\ntype = "http"\ndestinations = ["{dest}"]\n'
                           'secret.ref = "env://REMOTE_TOKEN"\n')
    env = box.env
    box.env = lambda: {**env(), "REMOTE_TOKEN": token}
    box.start()
    return box


REACH_LOCAL = """
permit(principal, action in [Box::Action::"net:connect", Box::Action::"http:request"], resource)
when { context.input.host == "127.0.0.1" };
"""


def test_http_server_through_its_alias(tmp_path, http_server):
    """An http server is reached by its name's alias: the broker posts each
    message to http://127.0.0.1:<port>/mcp through the gateway with the
    route's secret, and decides the calls as a stdio server's."""
    port, token = http_server
    box = http_box(tmp_path, port, token, REACH_LOCAL + two_gates("remote", "remote"))
    try:
        r, out = client(box, "remote", {"list": True},
                        {"call": "echo", "args": {"message": "over http"}},
                        {"call": "get-sum", "args": {"a": 500, "b": 1}},
                        {"call": "get-sum", "args": {"a": 2, "b": 3}})
        assert r.returncode == 0, r.stderr
        assert "echo" in out[0]["tools"], out
        assert out[1]["result"]["content"][0]["text"] == "Echo: over http"
        assert out[2]["code"] == -32001
        assert out[2]["error"] == (
            'MCP error -32001: per-tool gate (remote::Action::"get-sum"): policy denied this '
            "operation on 'remote/get-sum' [policy: small_sums].")
        assert "5" in out[3]["result"]["content"][0]["text"], out
    finally:
        box.stop()
    attrs = records_attrs(box)
    # an http server's initialize is decided; the exchanges went through the gateway
    assert any(a.get("strands.box.policy.resource") == "remote/initialize" for a in attrs)
    assert any(a.get("strands.box.policy.action") == "http:request" and
               a.get("strands.box.policy.resource") == f"127.0.0.1:{port}/mcp" for a in attrs)
    assert token not in (box.box_dir / "private" / "telemetry" / "records.jsonl").read_text()


def test_http_server_refusals(tmp_path, http_server):
    """A method mcp:call refuses never leaves the box; an exchange the
    gateway refuses is the agent's error, with the gateway's reason."""
    port, token = http_server
    box = http_box(tmp_path / "a", port, token, REACH_LOCAL + """
permit(principal, action == Box::Action::"mcp:call", resource)
when { context.input.server == "remote" && context.input.method == "initialize" };
""")
    try:
        r, out = client(box, "remote", {"list": True})
        assert out[0]["error"].startswith(
            'MCP error -32001: mcp:call gate (server "remote" method "tools/list"): policy denied '
            "this operation on 'remote/tools/list' [default-deny]"), out
    finally:
        box.stop()
    box = http_box(tmp_path / "b", port, token, """
permit(principal, action == Box::Action::"mcp:call", resource);
""")
    try:
        r, out = client(box, "remote", {"list": True})
        assert r.returncode == 3, (out, r.stderr)
        assert out[0]["error"] == (
            'MCP error -32001: MCP server "remote" was not reached: net:connect gate: policy '
            f"denied this operation on '127.0.0.1:{port}' [default-deny]: No permit policy "
            "matched this request."), out
    finally:
        box.stop()


STREAM_CLIENT = REPO / "tests" / "mcp" / "stream_client.mjs"


def test_http_server_streams(tmp_path, http_server):
    """The server's own messages reach the agent: its sampling request on a
    call's reply stream (answered while that stream is open), and its log
    notifications and roots/list request on the stream the bridge opens
    with GET once the session is initialized."""
    port, token = http_server
    box = http_box(tmp_path, port, token, REACH_LOCAL + """
permit(principal, action == Box::Action::"mcp:call", resource);
""")
    try:
        r = subprocess.run(["node", str(STREAM_CLIENT), str(box.box_dir / "bin" / "remote")],
                           capture_output=True, text=True, timeout=150,
                           env={"PATH": "/usr/bin:/bin", "HOME": str(box.home)})
        out = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
        assert r.returncode == 0 and len(out) == 3, (out, r.stderr)
        assert "sampled: Resource trigger-sampling-request context: from the box" in \
            out[0].get("sampled", ""), out
        assert " - SessionId " in out[1].get("log", ""), out
        assert out[2] == {"roots": "Roots updated: 1 root(s) received from client"}, out
    finally:
        box.stop()
    attrs = records_attrs(box)
    # the agent's answers to the server's requests were decided as their methods
    for method in ("sampling/createMessage", "roots/list"):
        assert any(a.get("strands.box.policy.resource") == f"remote/{method}" for a in attrs), method
    # the server's stream is a GET through the gateway
    assert any(a.get("strands.box.policy.action") == "http:request" and
               a.get("strands.box.policy.resource") == f"127.0.0.1:{port}/mcp" and
               a.get("http.request.method") == "GET" for a in attrs)


def server_log(log, first):
    """The lines of an http server's LOG once one begins with FIRST, or
    after 30 seconds (the server writes them as it goes)."""
    deadline = time.monotonic() + 30
    while True:
        lines = log.read_text().splitlines() if log.exists() else []
        if any(line.startswith(first) for line in lines) or time.monotonic() > deadline:
            return lines
        time.sleep(0.1)


def test_http_server_resumed_call_and_ended_session(tmp_path):
    """The server ends each call's stream before it answers (the transport's
    polling): the bridge resumes the stream with a GET naming the last event
    it read (Last-Event-ID), and the answer the stream missed reaches the
    agent.  Once the agent is done, the session is ended with a DELETE."""
    log = tmp_path / "server.log"
    srv, port, token = serve_http({"CUT": "1", "LOG": str(log)})
    try:
        box = http_box(tmp_path / "box", port, token, REACH_LOCAL + two_gates("remote", "remote"))
        try:
            r, out = client(box, "remote", {"call": "echo", "args": {"message": "resumed"}},
                            {"call": "get-sum", "args": {"a": 2, "b": 3}},
                            {"call": "get-sum", "args": {"a": 500, "b": 1}})
            assert r.returncode == 0, (out, r.stderr)
            assert out[0]["result"]["content"][0]["text"] == "Echo: resumed", out
            assert "5" in out[1]["result"]["content"][0]["text"], out
            assert out[2]["error"].endswith("[policy: small_sums]."), out
            lines = server_log(log, "delete ")
        finally:
            box.stop()
    finally:
        srv.kill()
        srv.wait()
    cuts = [line for line in lines if line.startswith("cut ")]
    resumes = [line for line in lines if line.startswith("resume ")]
    assert len(cuts) == 2 and len(resumes) >= 2, lines
    assert len([line for line in lines if line.startswith("delete ")]) == 1, lines


def test_http_server_own_stream_resumed(tmp_path):
    """The server ends its own stream (the GET the bridge opened) between two
    log messages: the bridge opens it again from the last event it read, and
    the message sent while it was closed reaches the agent too."""
    log = tmp_path / "server.log"
    srv, port, token = serve_http({"CUT_STREAM": "1", "LOG": str(log)})
    try:
        box = http_box(tmp_path / "box", port, token, REACH_LOCAL + """
permit(principal, action == Box::Action::"mcp:call", resource);
""")
        try:
            r, out = client(box, "remote", {"call": "echo", "args": {"message": "cut the stream"}},
                            {"log": "before the cut"}, {"log": "missed while cut"})
            assert r.returncode == 0, (out, r.stderr)
            assert out == [{"result": {"content": [{"type": "text",
                                                    "text": "Echo: cut the stream"}]}},
                           {"log": "before the cut"}, {"log": "missed while cut"}], out
        finally:
            box.stop()
    finally:
        srv.kill()
        srv.wait()
    lines = log.read_text().splitlines()
    assert lines[0] == "cut stream" and lines[1].startswith("resume "), lines


def stop_timed(box):
    """The box stopped (SIGTERM, as `box stop`): how long it took to end."""
    start = time.monotonic()
    assert box.stop() == 128 + signal.SIGTERM, box.stderr()
    return time.monotonic() - start


def assert_prompt_teardown(box, took):
    """Its teardown ended by itself, well before the watchdog's limit."""
    assert "teardown took longer" not in box.stderr()
    assert took <= 3, (took, box.stderr())


@pytest.mark.parametrize("env,first", [
    # it exits as the call reaches it: the gateway tells it
    ({"DIE": "1"}, 'MCP server "remote" was not reached: the server sent no valid response'),
    # it ends the call's stream, and exits when the bridge resumes it
    ({"CUT": "1", "DIE_ON_RESUME": "1"}, 'MCP server "remote" ended before it answered'),
])
def test_http_server_dies_mid_call(tmp_path, env, first):
    """A server that exits while a call is in flight: the call is answered
    with the box's error, and so is the next; and the box's teardown after
    it is prompt (its 10 s watchdog once hid a hang there)."""
    srv, port, token = serve_http(env)
    try:
        box = http_box(tmp_path, port, token, REACH_LOCAL + """
permit(principal, action == Box::Action::"mcp:call", resource);
""")
        took = None
        try:
            r, out = client(box, "remote", {"call": "echo", "args": {"message": "first"}},
                            {"call": "echo", "args": {"message": "second"}})
            assert srv.wait(timeout=30) == 7
            assert r.returncode == 0, (out, r.stderr)
            assert [o.get("code") for o in out] == [-32001, -32001], out
            assert [o["error"] for o in out] == [
                f"MCP error -32001: {first}",
                'MCP error -32001: MCP server "remote" was not reached: could not reach '
                f"127.0.0.1:{port}: Connection refused"], out
            took = stop_timed(box)
        finally:
            box.stop()
    finally:
        srv.kill()
        srv.wait()
    assert_prompt_teardown(box, took)


def test_teardown_with_a_session_open_after_the_server_died(tmp_path):
    """The agent's client still holds its session (it waits for a log
    message) after the server died mid-call: stopping the box ends the
    session at once; its teardown once waited out its drain for it."""
    srv, port, token = serve_http({"DIE": "1"})
    held = None
    try:
        box = http_box(tmp_path, port, token, REACH_LOCAL + """
permit(principal, action == Box::Action::"mcp:call", resource);
""")
        try:
            held = subprocess.Popen(
                ["node", str(CLIENT), str(box.box_dir / "bin" / "remote"),
                 json.dumps({"call": "echo", "args": {"message": "first"}}),
                 json.dumps({"log": "never sent"})],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                env={"PATH": "/usr/bin:/bin", "HOME": str(box.home)})
            assert srv.wait(timeout=30) == 7
            first = held.stdout.readline()
            assert "was not reached" in first, first
            took = stop_timed(box)
        finally:
            box.stop()
    finally:
        if held:
            held.kill()
            held.wait()
        srv.kill()
        srv.wait()
    assert_prompt_teardown(box, took)


def test_http_server_not_there(tmp_path):
    """An http server nothing listens for (its port held, never listening):
    the agent's client is told at initialize that it was not reached, in
    the gateway's words (its 502 is no answer of the server's)."""
    import socket
    held = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    held.bind(("127.0.0.1", 0))
    port = held.getsockname()[1]
    try:
        box = http_box(tmp_path, port, "tok", REACH_LOCAL + """
permit(principal, action == Box::Action::"mcp:call", resource);
""")
        try:
            r, out = client(box, "remote", {"list": True})
            assert r.returncode == 3, (out, r.stderr)
            assert out == [{"error": "MCP error -32001: MCP server \"remote\" was not reached: "
                                     f"could not reach 127.0.0.1:{port}: Connection refused"}], out
        finally:
            box.stop()
    finally:
        held.close()


def test_generate_schema_http_server(tmp_path, http_server):
    """generate-schema lists an http server's tools too: straight at its
    endpoint (streamable HTTP), with the route's secret read from its own
    environment and sent in the route's header."""
    import os
    port, token = http_server
    cfg = config(tmp_path, f'[mcp.remote-x]\ntype = "http"\ndestinations = ["127.0.0.1:{port}"]\n'
                           'secret.ref = "env://REMOTE_TOKEN"\n')
    out = tmp_path / "out"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home")}
    r = generate(cfg, out, {**env, "REMOTE_TOKEN": token})
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"Generated {out}/actions.cedarschema\nGenerated {out}/events.dwschema\n"
    text = (out / "actions.cedarschema").read_text()
    assert "namespace remote_x {\n" in text
    assert ('  action "echo" appliesTo { principal: Box::Agent, resource: Box::Resource,\n'
            '    context: { input: { message: String } } };\n') in text
    assert "{ a: Long, b: Long }" in text
    assert ('event remote_x::Action::"get-sum"::response { input: { a: Long, b: Long }, '
            in (out / "events.dwschema").read_text())
    # the server's refusal of another secret, and a secret the environment lacks
    r = generate(cfg, tmp_path / "out2", {**env, "REMOTE_TOKEN": "not-" + token})
    assert (r.returncode, r.stderr) == (1, 'box: error: MCP server "remote-x" failed during '
                                           "initialize: the server answered HTTP 401: no token\n")
    r = generate(cfg, tmp_path / "out2", env)
    assert (r.returncode, r.stderr) == (1, 'box: error: MCP server "remote-x" failed during '
                                           "initialize: `secret.ref` env://REMOTE_TOKEN is not "
                                           "set in the environment\n")
    assert not (tmp_path / "out2").exists()


# ---- the containment escape attacks, from inside a stdio server ----

def test_https_server_through_the_gateways_tunnel(tmp_path):
    """A destination without a port is https://host/mcp: the broker's
    exchange goes through a CONNECT tunnel of the gateway, which verifies
    the server's certificate (here one [gateway] extra_ca names)."""
    import os
    if os.geteuid() != 0:
        pytest.skip("the server listens on port 443")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.2",
                    "-addext", "subjectAltName=IP:127.0.0.2"], check=True, capture_output=True)
    srv, port, token = serve_http({"CERT": str(cert), "KEY": str(key), "HOST": "127.0.0.2",
                                   "PORT": "443"})
    try:
        box = http_box(tmp_path / "box", port, token, """
permit(principal, action in [Box::Action::"net:connect", Box::Action::"http:request"], resource)
when { context.input.host == "127.0.0.2" };
permit(principal, action == Box::Action::"mcp:call", resource);
""", host="127.0.0.2", gateway=f'extra_ca = ["{cert}"]\n')
        try:
            r, out = client(box, "remote", {"call": "echo", "args": {"message": "over https"}})
            assert r.returncode == 0, (out, r.stderr)
            assert out[0]["result"]["content"][0]["text"] == "Echo: over https", out
        finally:
            box.stop()
        attrs = records_attrs(box)
        # decided inside the tunnel, as any https request is
        assert any(a.get("strands.box.policy.action") == "http:request" and
                   a.get("strands.box.policy.resource") == "127.0.0.2:443/mcp" for a in attrs)
        # generate-schema trusts the CA [gateway] names too, and no other
        server = ('[mcp.remote]\ntype = "http"\ndestinations = ["127.0.0.2"]\n'
                  'secret.ref = "env://REMOTE_TOKEN"\n')
        env = {"PATH": os.environ["PATH"], "REMOTE_TOKEN": token}
        (tmp_path / "gen").mkdir()
        (tmp_path / "gen2").mkdir()
        cfg = config(tmp_path / "gen", f'[gateway]\nextra_ca = ["{cert}"]\n' + server)
        r = generate(cfg, tmp_path / "gen" / "out", env)
        assert r.returncode == 0, r.stderr
        assert "namespace remote {\n" in (tmp_path / "gen" / "out" / "actions.cedarschema").read_text()
        cfg = config(tmp_path / "gen2", server)
        r = generate(cfg, tmp_path / "gen2" / "out", env)
        assert (r.returncode, r.stderr) == (1, 'box: error: MCP server "remote" failed during '
                                               "initialize: TLS with 127.0.0.2 failed\n")
    finally:
        srv.kill()
        srv.wait()


def test_http_server_pretty_json_replies(tmp_path):
    """A server that answers with JSON bodies laid out over several lines:
    each reply reaches the agent as one message."""
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            msg = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if "id" not in msg:
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            result = {"initialize": {"protocolVersion": msg.get("params", {}).get(
                          "protocolVersion", "2025-06-18"), "capabilities": {"tools": {}},
                          "serverInfo": {"name": "pretty", "version": "1"}},
                      "tools/list": {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]},
                      "tools/call": {"content": [{"type": "text", "text": "laid out"}]}}
            body = json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                               "result": result[msg["method"]]}, indent=2).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        box = http_box(tmp_path, srv.server_address[1], "tok", REACH_LOCAL + """
permit(principal, action == Box::Action::"mcp:call", resource);
""")
        try:
            r, out = client(box, "remote", {"call": "t", "args": {}})
            assert r.returncode == 0, (out, r.stderr)
            assert out[0]["result"]["content"][0]["text"] == "laid out", out
        finally:
            box.stop()
    finally:
        srv.shutdown()
