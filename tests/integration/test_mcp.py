"""MCP servers in the box (spec/runtime.md §2.5, §1 `policy generate-schema`;
spec/policy.md per-tool actions), with the real reference servers from the
npm registry that tests/mcp pins (CI runs `npm ci` there)."""
import json
import subprocess
import sys
import time

import pytest

from conftest import BOX, REPO

NODE_BIN = REPO / "tests" / "mcp" / "node_modules" / ".bin"
PATH = f"{NODE_BIN}:/usr/bin:/bin"



def config(tmp_path, servers):
    (tmp_path / "home").mkdir(exist_ok=True)
    cfg = tmp_path / "box.toml"
    cfg.write_text(f'name = "m"\nbox_dir = "{tmp_path}/state"\n[agent]\ncommand = ["/bin/true"]\n'
                   f'workspace = "{tmp_path}/home"\n' + servers)
    return cfg


def stdio(name, *command, path=PATH):
    argv = ", ".join(f'"{c}"' for c in command)
    return f'[mcp.{name}]\ntype = "stdio"\ncommand = [{argv}]\nenv = {{ PATH = "{path}" }}\n'


def generate(cfg, out, env=None):
    return subprocess.run([str(BOX), "policy", "generate-schema", "--config", str(cfg),
                           "--output-dir", str(out)], capture_output=True, text=True, timeout=120,
                          env=env)


def test_mcp_tables_load(tmp_path):
    """[mcp.*] tables of both types are read, not refused as unsupported:
    an http server is asked for its tools, with its secret (here unset)."""
    import os
    cfg = config(tmp_path, '[mcp.gh]\ntype = "http"\ndestinations = ["mcp.example.com"]\n'
                           'secret.ref = "env://GH_TOKEN"\n')
    r = generate(cfg, tmp_path / "out", {"PATH": os.environ["PATH"]})
    assert (r.returncode, r.stderr) == (1, 'box: error: MCP server "gh" failed during initialize: '
                                           "`secret.ref` env://GH_TOKEN is not set in the "
                                           "environment\n")


def test_mcp_table_errors(tmp_path):
    cfg = config(tmp_path, '[mcp.py]\ntype = "stdio"\ncommand = ["python3", "srv.py"]\n')
    r = generate(cfg, tmp_path / "out")
    assert r.returncode == 1
    assert r.stderr == (
        "box: error: invalid `[mcp.py]` table: `command` element 0 \"python3\" is the name of the "
        "box's own Shell or Python alias; an MCP program cannot be zsh, bash, sh, python3, or "
        f"python (in {cfg})\n")
    cfg = config(tmp_path, '[mcp.x]\ntype = "sse"\n')
    r = generate(cfg, tmp_path / "out")
    assert r.returncode == 1
    assert r.stderr == f"box: error: invalid `[mcp.x]` table: `type` \"sse\" is not \"stdio\" or \"http\" (in {cfg})\n"


def test_generate_schema_real_servers(tmp_path):
    """Each stdio server's tools/list becomes one namespace of per-tool
    actions, the server name mangled and the arguments typed."""
    assert (NODE_BIN / "mcp-server-everything").exists(), "run `npm ci` in tests/mcp"
    home = tmp_path / "home"
    home.mkdir()
    cfg = config(tmp_path, stdio("demo-mcp", "mcp-server-everything") +
                 stdio("7-fs", "mcp-server-filesystem", str(home)))
    out = tmp_path / "out"
    r = generate(cfg, out)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"Generated {out}/actions.cedarschema\nGenerated {out}/events.dwschema\n"
    text = (out / "actions.cedarschema").read_text()
    assert 'action "mcp:call"' in text  # the Box schema stays in front
    assert "namespace demo_mcp {\n" in text and "namespace _7_fs {\n" in text
    assert ('  action "echo" appliesTo { principal: Box::Agent, resource: Box::Resource,\n'
            '    context: { input: { message: String } } };\n') in text
    assert 'action "get-sum" appliesTo' in text and "{ a: Long, b: Long }" in text
    assert ('  action "read_multiple_files" appliesTo { principal: Box::Agent, '
            'resource: Box::Resource,\n    context: { input: { paths: Set<String> } } };\n') in text
    assert "edits: Set<{ newText: String, oldText: String }>" in text
    # three event kinds for every generated action too (spec/policy.md §2.3)
    events = (out / "events.dwschema").read_text()
    for kind in ("request", "response", "error"):
        assert (f'event demo_mcp::Action::"get-sum"::{kind} {{ input: {{ a: Long, b: Long }}, '
                "callerPrincipal: Box::Agent, callerResource: Box::Resource, "
                "requestId: String };\n") in events
    assert 'event _7_fs::Action::"list_allowed_directories"::request { input: {}, ' in events


def test_policy_check_knows_generated_actions(tmp_path):
    """`box policy check --config` lists the servers' tools: a rule on a
    tool's argument is checked against the tool's typed arguments."""
    cfg = config(tmp_path, fake_server(tmp_path, "paged"))
    pol = tmp_path / "p.dw"

    def check(text, *extra):
        pol.write_text(text)
        return subprocess.run([str(BOX), "policy", "check", str(pol), *extra],
                              capture_output=True, text=True, timeout=120)
    ok = ('forbid(principal, action == srv_paged::Action::"if", resource)\n'
          'when { context.input.k == "a" && context has input.n && context.input.n > 2 };\n')
    r = check(ok, "--config", str(cfg))
    assert (r.returncode, r.stdout) == (0, "ok\n"), r.stderr
    # without the box's servers the action is unknown
    r = check(ok)
    assert r.returncode == 1
    assert "unrecognized action `srv_paged::Action::\"if\"`" in r.stderr
    # an argument the tool does not take, and one compared as the wrong type
    r = check('forbid(principal, action == srv_paged::Action::"if", resource)\n'
              'when { context.input.kk == "a" };\n', "--config", str(cfg))
    assert r.returncode == 1
    assert ("attribute `input.kk` in context for srv_paged::Action::\"if\" not found"
            in r.stderr), r.stderr
    r = check('forbid(principal, action == srv_paged::Action::"if", resource)\n'
              'when { context.input.k > 1 };\n', "--config", str(cfg))
    assert r.returncode == 1
    assert "policy fails schema validation: " in r.stderr, r.stderr
    r = check('forbid(principal, action == srv_paged::Action::"one", resource);\n'
              'forbid(principal, action == srv_paged::Action::"two", resource);\n',
              "--config", str(cfg))
    assert r.returncode == 1
    assert "unrecognized action `srv_paged::Action::\"two\"`" in r.stderr, r.stderr


FAKE = r'''
import json, sys
mode = sys.argv[1]
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        if mode == "refuse":
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                              "error": {"code": -32600, "message": "no thanks"}}), flush=True)
            continue
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "1"}}}), flush=True)
    elif msg["method"] == "tools/list":
        if mode == "die":
            sys.exit(3)
        # a log notification and a request of the server's own come first
        print(json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                          "params": {"level": "info", "data": "hi"}}), flush=True)
        print(json.dumps({"jsonrpc": "2.0", "id": 99, "method": "roots/list"}), flush=True)
        if mode == "paged" and "params" not in msg:
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "tools": [{"name": "one", "inputSchema": {"type": "object"}}],
                "nextCursor": "p2"}}), flush=True)
            continue
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [
            {"name": "if", "inputSchema": {"type": "object", "properties": {
                "n": {"type": ["integer", "null"]}, "k": {"enum": ["a", "b"]}},
                "required": ["k"]}}]}}), flush=True)
'''


def fake_server(tmp_path, mode):
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    prog = bindir / f"fake-{mode}"
    prog.write_text(f"#!{sys.executable}\n{FAKE}")
    prog.chmod(0o755)
    return stdio(f"srv-{mode}", prog.name, mode, path=f"{bindir}:/usr/bin:/bin")


def test_generate_schema_paged_and_chatty(tmp_path):
    cfg = config(tmp_path, fake_server(tmp_path, "paged"))
    r = generate(cfg, tmp_path / "out")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "out" / "actions.cedarschema").read_text()
    assert text.endswith(
        '\nnamespace srv_paged {\n'
        '  action "one" appliesTo { principal: Box::Agent, resource: Box::Resource,\n'
        '    context: { input: {} } };\n'
        '  action "if" appliesTo { principal: Box::Agent, resource: Box::Resource,\n'
        '    context: { input: { k: String, n?: Long } } };\n'
        '}\n')


def test_generate_schema_mangled_names(tmp_path):
    """Each of spec/policy.md's cases of a server's name as its namespace, in
    generate-schema's output and known to `box policy check`: a byte outside
    [A-Za-z0-9_] becomes _, a leading digit (or nothing left) takes a _ in
    front, a reserved word a _ after it."""
    names = {"demo-mcp": "demo_mcp", "a.b": "a_b", "9lives": "_9lives", "-": "_",
             "if": "if_", "like": "like_", "__cedar": "__cedar_", "iffy": "iffy", "Ok_1": "Ok_1"}
    bindir = tmp_path / "bin"
    bindir.mkdir()
    servers = ""
    for i, name in enumerate(names):
        prog = bindir / f"fake-{i}"
        prog.write_text(f"#!{sys.executable}\n{FAKE}")
        prog.chmod(0o755)
        servers += stdio(json.dumps(name), prog.name, "plain", path=f"{bindir}:/usr/bin:/bin")
    cfg = config(tmp_path, servers)
    out = tmp_path / "out"
    r = generate(cfg, out)
    assert r.returncode == 0, r.stderr
    text = (out / "actions.cedarschema").read_text()
    events = (out / "events.dwschema").read_text()
    for ns in names.values():
        assert (f'\nnamespace {ns} {{\n'
                '  action "if" appliesTo { principal: Box::Agent, resource: Box::Resource,\n'
                '    context: { input: { k: String, n?: Long } } };\n}\n') in text, ns
        assert (f'event {ns}::Action::"if"::request {{ input: {{ k: String, n?: Long }}, '
                in events), ns
    pol = tmp_path / "p.dw"
    pol.write_text("".join(f'forbid(principal, action == {ns}::Action::"if", resource)\n'
                           'when { context.input.k == "a" };\n' for ns in names.values()))
    r = subprocess.run([str(BOX), "policy", "check", str(pol), "--config", str(cfg)],
                       capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout) == (0, "ok\n"), r.stderr


@pytest.mark.parametrize("mode,step,detail", [
    ("die", "tools/list", "the server closed its output"),
    ("refuse", "initialize", "the server answered with an error: no thanks"),
])
def test_generate_schema_server_fails(tmp_path, mode, step, detail):
    cfg = config(tmp_path, fake_server(tmp_path, mode))
    out = tmp_path / "out"
    r = generate(cfg, out)
    assert r.returncode == 1
    assert f'box: error: MCP server "srv-{mode}" failed during {step}: {detail}\n' in r.stderr
    assert not (out / "actions.cedarschema").exists()


def test_generate_schema_server_cannot_start(tmp_path):
    cfg = config(tmp_path, stdio("gone", "no-such-mcp-server", path="/nonexistent"))
    r = generate(cfg, tmp_path / "out")
    assert r.returncode == 1
    assert "cannot run no-such-mcp-server: No such file or directory" in r.stderr
    assert 'box: error: MCP server "gone" failed during initialize: ' in r.stderr


# ---- stdio servers through the alias (spec/runtime.md §4.1 MCP mode, §5.10) ----

CLIENT = REPO / "tests" / "mcp" / "client.mjs"


def mcp_box(tmp_path, policy_extra, server=None):
    from conftest import Box
    box = Box(tmp_path)
    server = server or stdio("demo-mcp", "mcp-server-everything") + \
        f'[mcp.demo-mcp.filesystem]\nread = ["{REPO}/tests/mcp"]\n'
    box.seed_policy(extra=policy_extra)
    box.write_config(extra="\n" + server)
    box.start()
    return box


def client(box, program, *steps, timeout=60):
    r = subprocess.run(["node", str(CLIENT), str(box.box_dir / "bin" / program),
                        *map(json.dumps, steps)], capture_output=True, text=True,
                       timeout=timeout, env={"PATH": "/usr/bin:/bin", "HOME": str(box.home)})
    return r, [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]


PERMIT_SERVER = """
permit(principal, action == Box::Action::"shell:spawn", resource)
when { context.input.program == "mcp-server-everything" };
"""


def test_stdio_list_and_call(tmp_path):
    box = mcp_box(tmp_path, PERMIT_SERVER + """
permit(principal, action == Box::Action::"mcp:call", resource)
when { context.input.server == "demo-mcp" };
""")
    try:
        r, out = client(box, "mcp-server-everything", {"list": True},
                        {"call": "echo", "args": {"message": "hi from the box"}})
        assert r.returncode == 0, r.stderr
        assert "echo" in out[0]["tools"] and "get-sum" in out[0]["tools"]
        assert out[1]["result"]["content"][0]["text"] == "Echo: hi from the box"
    finally:
        box.stop()


def records(box):
    path = box.box_dir / "private" / "telemetry" / "records.jsonl"
    out = []
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        attrs = rec.get("attributes") or {}
        out.append(attrs)
    return out


def test_stdio_refused_call_and_decisions(tmp_path):
    box = mcp_box(tmp_path, PERMIT_SERVER + """
permit(principal, action == Box::Action::"mcp:call", resource)
when { context.input.server == "demo-mcp" };
@id("no_sum")
forbid(principal, action == Box::Action::"mcp:call", resource)
when { context.input has tool && context.input.tool == "get-sum" };
""")
    try:
        r, out = client(box, "mcp-server-everything",
                        {"call": "get-sum", "args": {"a": 1, "b": 2}},
                        {"call": "echo", "args": {"message": "still served"}})
        assert r.returncode == 0, r.stderr
        assert out[0]["code"] == -32001
        assert out[0]["error"].startswith(
            'MCP error -32001: mcp:call gate (server "demo-mcp" method "tools/call"): '
            "policy denied this operation on 'demo-mcp/get-sum' [policy: no_sum]"), out[0]
        assert out[1]["result"]["content"][0]["text"] == "Echo: still served"
    finally:
        box.stop()
    text = (box.box_dir / "private" / "telemetry" / "records.jsonl").read_text()
    assert '"mcp:call"' in text and "demo-mcp/get-sum" in text and "no_sum" in text
    assert '"shell:spawn"' in text


def test_stdio_server_may_not_start(tmp_path):
    box = mcp_box(tmp_path, "")
    try:
        r = subprocess.run([str(box.box_dir / "bin" / "mcp-server-everything")],
                           input="", capture_output=True, text=True, timeout=30)
        assert r.returncode == 125
        assert r.stderr.startswith('box-alias: MCP server "demo-mcp" may not start: '
                                   "policy denied this operation on "), r.stderr
        r = subprocess.run([str(box.box_dir / "bin" / "mcp-server-everything"), "-x"],
                           input="", capture_output=True, text=True, timeout=30)
        assert r.returncode == 125
        assert "takes no arguments" in r.stderr
    finally:
        box.stop()


def script_server(tmp_path, name, text):
    """[mcp.NAME] running the Python script text as NAME-mcp, its
    directory readable to it."""
    bindir = tmp_path / "srvbin"
    bindir.mkdir(exist_ok=True)
    prog = bindir / f"{name}-mcp"
    prog.write_text(f"#!/usr/bin/python3\n{text}")
    prog.chmod(0o755)
    return (stdio(name, prog.name, path=f"{bindir}:/usr/bin:/bin") +
            f'[mcp.{name}.filesystem]\nread = ["{bindir}"]\n')


def started_and_called(program):
    """Policy: the server PROGRAM may start, and every call of it is permitted."""
    return f"""
permit(principal, action == Box::Action::"shell:spawn", resource)
when {{ context.input.program == "{program}" }};
permit(principal, action == Box::Action::"mcp:call", resource);
"""


def test_stdio_server_dies_mid_call(tmp_path):
    server = script_server(tmp_path, "dying", "mode = 'die'\n" + SCRIPTED)
    box = mcp_box(tmp_path, started_and_called("dying-mcp"), server=server)
    try:
        r, out = client(box, "dying-mcp", {"call": "t", "args": {}})
        assert out and out[0].get("code") == -32001, (out, r.stderr)
        assert 'MCP server "dying" ended before it answered' in out[0]["error"]
    finally:
        box.stop()


def two_gates(server, ns):
    """Policy: SERVER's calls permitted by mcp:call, and get-sum's own rule
    refusing a large first argument."""
    return f"""
@id("coarse")
permit(principal, action == Box::Action::"mcp:call", resource)
when {{ context.input.server == "{server}" }};
@id("small_sums")
forbid(principal, action == {ns}::Action::"get-sum", resource)
when {{ context.input.a > 100 }};
"""


def test_stdio_per_tool_gate(tmp_path):
    """The broker lists the server's tools itself: get-sum is the action
    demo_mcp::Action::"get-sum", typed { a: Long, b: Long }, and its own
    rule refuses a call mcp:call permitted; a call no per-tool rule
    matches rides the coarse grant."""
    box = mcp_box(tmp_path, PERMIT_SERVER + two_gates("demo-mcp", "demo_mcp"))
    try:
        r, out = client(box, "mcp-server-everything",
                        {"call": "get-sum", "args": {"a": 1, "b": 2}},
                        {"call": "get-sum", "args": {"a": 500, "b": 1}},
                        {"call": "echo", "args": {"message": "rides the coarse grant"}})
        assert r.returncode == 0, r.stderr
        assert "3" in out[0]["result"]["content"][0]["text"], out
        assert out[1]["code"] == -32001, out
        assert out[1]["error"] == (
            'MCP error -32001: per-tool gate (demo_mcp::Action::"get-sum"): policy denied this '
            "operation on 'demo-mcp/get-sum' [policy: small_sums].")
        assert out[2]["result"]["content"][0]["text"] == "Echo: rides the coarse grant"
    finally:
        box.stop()
    recs = [a for a in records_attrs(box) if a.get("strands.box.policy.category") == "demo_mcp"]
    got = [(a["strands.box.policy.action"], a["strands.box.policy.resource"],
            a["strands.box.policy.verdict"], a["strands.box.policy.cause"],
            a["strands.box.policy.rule"]) for a in recs]
    control = [(a["strands.box.control.operation"], a["strands.box.control.outcome"],
                a.get("strands.box.control.detail")) for a in records_attrs(box)
               if a.get("strands.box.control.subject") == "mcp:demo-mcp"]
    assert [c[:2] for c in control] == [("discovery_complete", "ok"), ("schema_installed", "ok")]
    assert control[0][2].endswith(" tools") and int(control[0][2].split()[0]) > 5, control
    assert got == [("get-sum", "demo-mcp/get-sum", "permit", "permitted", "coarse"),
                   ("get-sum", "demo-mcp/get-sum", "deny", "forbidden", "small_sums"),
                   ("echo", "demo-mcp/echo", "permit", "permitted", "coarse")], got


def test_stdio_history_rules_see_tool_calls(tmp_path):
    """A tool's calls are in the history as Box's actions are: get-sum only
    after an answered echo("unlock"), and at most three get-sum attempts an
    hour (a refused one is an attempt too)."""
    box = mcp_box(tmp_path, PERMIT_SERVER + """
@id("coarse")
permit(principal, action == Box::Action::"mcp:call", resource)
when { context.input.server == "demo-mcp" };
@id("echo_first")
forbid(principal, action == demo_mcp::Action::"get-sum", resource)
unless temporal { formerly within 1h demo_mcp::Action::"echo"::response{ input.message: "unlock" } };
@id("three_sums")
forbid(principal, action == demo_mcp::Action::"get-sum", resource)
when temporal { (count for (t: Timepoint). where (formerly within 1h (
  demo_mcp::Action::"get-sum"::request{ input.a: _ } && tp(t)))) > 3 };
@id("after_a_sum")
forbid(principal, action == Box::Action::"mcp:call", resource)
when { context.input has tool && context.input.tool == "get-tiny-image" }
unless temporal { formerly within 1h Box::Action::"mcp:call"::response{ input.tool: "get-sum" } };
""")
    try:
        r, out = client(box, "mcp-server-everything",
                        {"call": "get-sum", "args": {"a": 1, "b": 2}},
                        {"call": "echo", "args": {"message": "other"}},
                        {"call": "get-sum", "args": {"a": 1, "b": 2}},
                        {"call": "get-tiny-image", "args": {}},
                        {"call": "echo", "args": {"message": "unlock"}},
                        {"call": "get-sum", "args": {"a": 1, "b": 2}},
                        {"call": "get-tiny-image", "args": {}},
                        {"call": "get-sum", "args": {"a": 2, "b": 2}})
        assert r.returncode == 0, r.stderr
        assert len(out) == 8, (out, r.stderr)
        refused = [o.get("error", "").split("[policy: ")[-1].rstrip("].") for o in out]
        assert [o.get("code") for o in out] == [-32001, None, -32001, -32001,
                                                None, None, None, -32001], out
        assert [refused[i] for i in (0, 2, 3, 7)] == [
            "echo_first", "echo_first", "after_a_sum", "three_sums"], out
        assert out[0]["error"].startswith(
            'MCP error -32001: per-tool gate (demo_mcp::Action::"get-sum"): '), out
        assert "3" in out[5]["result"]["content"][0]["text"], out
    finally:
        box.stop()
    # the history file holds the tools' events, their terms escaped (a
    # record is its checksum, a space, its JSON)
    events = [json.loads(line.split(" ", 1)[1]) for line in
              (box.box_dir / "private" / "history.jsonl").read_text().splitlines()
              if '"a":' in line]
    tools = [(e["a"], e["k"]) for e in events if e["a"].startswith("demo_mcp::")]
    assert tools[:3] == [('demo_mcp::Action::"get-sum"', 0), ('demo_mcp::Action::"echo"', 0),
                         ('demo_mcp::Action::"echo"', 1)], tools


def records_attrs(box):
    """Every record's attributes (decisions and control), as name -> plain value."""
    text = (box.box_dir / "private" / "telemetry" / "records.jsonl").read_text()
    recs = [rec for line in text.splitlines() for rl in json.loads(line).get("resourceLogs", [])
            for sl in rl["scopeLogs"] for rec in sl.get("logRecords", [])]
    return [{kv["key"]: kv["value"].get("stringValue", kv["value"])
             for kv in rec.get("attributes", [])} for rec in recs]


SCRIPTED = r'''
import json, os, subprocess, sys
# mode (set in front): "list" lists the tool t and answers its calls, "fail"
# fails tools/list, "die" lists t and dies at a call, "probe" runs the file
# probe (set in front too) with t's args at each call
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": mode, "version": "1"}}}), flush=True)
    elif msg.get("method") == "tools/list":
        if mode == "fail":
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                              "error": {"code": -32603, "message": "cannot list"}}), flush=True)
        else:
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [
                {"name": "t", "inputSchema": {"type": "object", "properties": {
                    "args": {"type": "array", "items": {"type": "string"}}}}}]}}), flush=True)
    elif msg.get("method") == "tools/call":
        if mode == "die":
            os._exit(7)
        text = "called"
        if mode == "probe":
            r = subprocess.run([sys.executable, probe, *msg["params"]["arguments"]["args"]],
                               capture_output=True, text=True)
            text = r.stdout or r.stderr
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "content": [{"type": "text", "text": text}]}}), flush=True)
'''


@pytest.mark.parametrize("mode,policy,tail", [
    # a server that cannot list its tools is degraded: each call is refused
    ("fail", "", "policy denied this operation on 'unlisted/t' [default-deny]: "
                 "No permit policy matched this request."),
    # a rule that names a tool the server does not list leaves the schema pending
    ("list", '@id("ghost") forbid(principal, action == unlisted::Action::"gone", resource);',
     "policy denied this operation on 'unlisted/t' [policy-pending]: "
     "The complete policy bundle is not installed."),
])
def test_stdio_tools_degraded_or_pending(tmp_path, mode, policy, tail):
    server = script_server(tmp_path, "unlisted", f"mode = {mode!r}\n" + SCRIPTED)
    box = mcp_box(tmp_path, started_and_called("unlisted-mcp") + policy, server=server)
    try:
        r, out = client(box, "unlisted-mcp", {"call": "t", "args": {}})
        assert out and out[0].get("code") == -32001, (out, r.stderr)
        assert out[0]["error"] == f'MCP error -32001: per-tool gate (unlisted::Action::"t"): {tail}'
    finally:
        box.stop()
    control = [(a["strands.box.control.operation"], a["strands.box.control.outcome"])
               for a in records_attrs(box)
               if a.get("strands.box.control.subject") == "mcp:unlisted"]
    assert control == ([("discovery_complete", "refused")] if mode == "fail" else
                       [("discovery_complete", "ok"), ("schema_installed", "refused")]), control


def start_fails(tmp_path, server):
    from conftest import Box
    box = Box(tmp_path)
    box.seed_policy()
    box.write_config(extra="\n" + server)
    r = subprocess.run([str(BOX), "run", "--config", str(box.config), "--", "/bin/true"],
                       capture_output=True, text=True, timeout=60, env=box.env(), cwd=str(tmp_path))
    assert r.returncode == 1
    return r.stderr


def test_stdio_server_lists_and_program_judged_at_start(tmp_path):
    err = start_fails(tmp_path / "a", stdio("fs", "mcp-server-filesystem") +
                      '[mcp.fs.filesystem]\nread_file = ["/etc/shadow"]\n')
    assert 'box: error: `[mcp.fs]` filesystem entry "/etc/shadow" is refused: ' in err, err
    err = start_fails(tmp_path / "b", stdio("gone", "no-such-mcp-server"))
    assert "box: error: containment config failed: path does not exist: no-such-mcp-server" in err, err


def test_stdio_server_is_contained(tmp_path):
    """The filesystem server is told it may serve a whole directory, but its
    own lists grant one file there: the box's containment, not the
    server's word, decides what it reads."""
    from conftest import Box
    box = Box(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    secret = data / "secret.txt"
    secret.write_text("the server must not read this\n")
    (data / "open.txt").write_text("served\n")
    box.seed_policy(extra="""
permit(principal, action == Box::Action::"shell:spawn", resource)
when { context.input.program == "mcp-server-filesystem" };
permit(principal, action == Box::Action::"mcp:call", resource);
""")
    box.write_config(extra="\n" + stdio("fs", "mcp-server-filesystem", str(data)) +
                     f'[mcp.fs.filesystem]\nread = ["{REPO}/tests/mcp"]\n'
                     f'read_file = ["{data}/open.txt"]\n')
    box.start()
    try:
        r, out = client(box, "mcp-server-filesystem",
                        {"call": "read_text_file", "args": {"path": str(data / "open.txt")}},
                        {"call": "read_text_file", "args": {"path": str(secret)}})
        assert len(out) == 2, r.stderr
        assert out[0]["result"]["content"][0]["text"] == "served\n", out
        assert "the server must not read this" not in json.dumps(out[1])
        assert out[1]["result"]["isError"], out
    finally:
        box.stop()


STUBBORN = r'''
import sys, time
sys.stdin.read()
time.sleep(3600)  # ignores the end of its input
'''


def test_stdio_server_outliving_its_input_is_ended(tmp_path):
    """Once the agent's client is gone, a server that does not leave is
    ended after a short grace, and the alias returns."""
    server = script_server(tmp_path, "stubborn", STUBBORN)
    box = mcp_box(tmp_path, """
permit(principal, action == Box::Action::"shell:spawn", resource)
when { context.input.program == "stubborn-mcp" };
""", server=server)
    try:
        t0 = time.monotonic()
        r = subprocess.run([str(box.box_dir / "bin" / "stubborn-mcp")], input="",
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        assert time.monotonic() - t0 < 20
    finally:
        box.stop()


def frames(sock):
    """Every frame the broker sends until it closes."""
    import struct
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    out = []
    while data:
        (n,) = struct.unpack(">I", data[:4])
        out.append(json.loads(data[4:4 + n]))
        data = data[4 + n:]
    return out


def test_open_names_no_server(tmp_path):
    import socket
    import struct
    box = mcp_box(tmp_path, PERMIT_SERVER)
    try:
        def open_frame(server, fds):
            body = json.dumps({"version": 6, "program": 1, "frame_type": "open",
                               "body": {"mode": {"mcp": {"server": server}}}}).encode()
            s = socket.socket(socket.AF_UNIX)
            s.connect(str(box.box_dir / "run" / "box.sock"))
            socket.send_fds(s, [struct.pack(">I", len(body)) + body], fds)
            got = frames(s)
            s.close()
            return got
        with open("/dev/null", "rb") as i, open("/dev/null", "wb") as o:
            got = open_frame("nope", [i.fileno(), o.fileno(), o.fileno()])
            assert got == [{"version": 6, "program": 1, "frame_type": "denied", "body": {
                "kind": "internal",
                "reason": 'no MCP server declares the program "nope" in box.toml'}}]
        got = open_frame("demo-mcp", [])
        assert got[0]["body"] == {"kind": "transport_error", "reason":
                                  "an MCP open frame must carry the caller's stdin, stdout and stderr"}
    finally:
        box.stop()


def test_two_clients_at_once(tmp_path):
    """Each open gets its own server; two agents' clients run side by side."""
    box = mcp_box(tmp_path, PERMIT_SERVER + """
permit(principal, action == Box::Action::"mcp:call", resource);
""")
    try:
        procs = [subprocess.Popen(["node", str(CLIENT), str(box.box_dir / "bin" / "mcp-server-everything"),
                                   json.dumps({"call": "echo", "args": {"message": f"n{i}"}})],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env={"PATH": "/usr/bin:/bin", "HOME": str(box.home)})
                 for i in range(2)]
        for i, p in enumerate(procs):
            out, err = p.communicate(timeout=60)
            assert p.returncode == 0, err
            assert json.loads(out.splitlines()[-1])["result"]["content"][0]["text"] == f"Echo: n{i}"
    finally:
        box.stop()


ASKING = r'''
import json, sys
def send(m):
    print(json.dumps(m), flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": "2025-06-18",
              "capabilities": {"tools": {}}, "serverInfo": {"name": "asking", "version": "1"}}})
    elif msg.get("method") == "tools/list":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [{"name": "t"}]}})
    elif msg.get("method") == "tools/call":
        # ask the client for its roots, and report what came back
        send({"jsonrpc": "2.0", "id": "s1", "method": "roots/list"})
        reply = json.loads(sys.stdin.readline())
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {
              "content": [{"type": "text", "text": json.dumps(reply)}]}})
'''


@pytest.mark.parametrize("forbid_roots", [False, True])
def test_client_reply_is_decided_as_the_servers_method(tmp_path, forbid_roots):
    server = script_server(tmp_path, "asking", ASKING)
    forbid = """
@id("no_roots")
forbid(principal, action == Box::Action::"mcp:call", resource)
when { context.input.method == "roots/list" };
""" if forbid_roots else ""
    box = mcp_box(tmp_path, """
permit(principal, action == Box::Action::"shell:spawn", resource)
when { context.input.program == "asking-mcp" };
permit(principal, action == Box::Action::"mcp:call", resource);
""" + forbid, server=server)
    try:
        p = subprocess.Popen([str(box.box_dir / "bin" / "asking-mcp")], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        def send(m):
            p.stdin.write(json.dumps(m) + "\n")
            p.stdin.flush()
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
        assert json.loads(p.stdout.readline())["id"] == 1
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "t"}})
        ask = json.loads(p.stdout.readline())
        assert ask == {"jsonrpc": "2.0", "id": "s1", "method": "roots/list"}
        send({"jsonrpc": "2.0", "id": "s1", "result": {"roots": []}})
        seen = json.loads(json.loads(p.stdout.readline())["result"]["content"][0]["text"])
        p.stdin.close()
        assert p.wait(timeout=20) == 0
        if forbid_roots:
            assert seen["error"]["code"] == -32001
            assert seen["error"]["message"].startswith(
                'mcp:call gate (server "asking" method "roots/list"): policy denied this operation '
                "on 'asking/roots/list' [policy: no_roots]"), seen
        else:
            assert seen == {"jsonrpc": "2.0", "id": "s1", "result": {"roots": []}}
    finally:
        box.stop()


def test_mount_view_shows_servers_and_calls(tmp_path):
    """`box mount` lists a running MCP server under .box/commands/ with its
    calls so far, and drops it when the agent's client leaves."""
    import os
    from test_mount_view import View, mounted_at
    if os.geteuid() != 0:
        pytest.skip("box mount binds the view where host processes see it, which needs root")
    box = mcp_box(tmp_path, PERMIT_SERVER + """
permit(principal, action == Box::Action::"mcp:call", resource);
@id("no_sum") forbid(principal, action == demo_mcp::Action::"get-sum", resource);
""")
    mnt = tmp_path / "view"
    mnt.mkdir()
    view = View(box, mnt)
    p = subprocess.Popen([str(box.box_dir / "bin" / "mcp-server-everything")],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        def ask(msg):
            p.stdin.write(json.dumps(msg) + "\n")
            p.stdin.flush()
            if "id" not in msg:
                return None
            while True:
                got = json.loads(p.stdout.readline())
                if got.get("id") == msg["id"]:
                    return got
        ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}})
        ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
        ask({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "echo", "arguments": {"message": "m"}}})
        assert "error" in ask({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                               "params": {"name": "get-sum", "arguments": {"a": 1, "b": 2}}})
        cmds = mnt / ".box" / "commands"
        names = os.listdir(cmds)
        assert len(names) == 1, names
        # calls in quick succession are shown together, a moment later
        want = "text: mcp demo-mcp: mcp-server-everything (2 calls; last: tools/call get-sum, refused)\n"
        deadline = time.monotonic() + 30
        while want not in (text := (cmds / names[0]).read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert want in text, text
        p.stdin.close()
        assert p.wait(timeout=20) == 0
        deadline = time.time() + 5
        while time.time() < deadline and os.listdir(cmds):
            time.sleep(0.05)
        assert os.listdir(cmds) == []
    finally:
        if p.poll() is None:
            p.kill()
        view.stop()
        box.stop()
    assert not mounted_at(str(mnt))


@pytest.fixture(scope="module")
def attacker(tmp_path_factory):
    """One box whose stdio server runs the red team's probe at each call,
    and one session with it (raw JSON-RPC through the alias)."""
    import socket
    from conftest import Box
    from test_redteam_tools import PROBE
    tmp = tmp_path_factory.mktemp("mcp-redteam")
    probe = tmp / "srvbin" / "probe.py"
    server = script_server(tmp, "attacker", f"mode = 'probe'\nprobe = {str(probe)!r}\n" + SCRIPTED)
    probe.write_text(PROBE)
    box = Box(tmp)
    box.seed_policy(extra=started_and_called("attacker-mcp"))
    box.write_config(extra="\n" + server)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    box.start()
    p = subprocess.Popen([str(box.box_dir / "bin" / "attacker-mcp")], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    ids = iter(range(1, 10**6))

    def ask(method, params=None, notify=False):
        msg = {"jsonrpc": "2.0", "method": method, "params": params or {}}
        if not notify:
            msg["id"] = next(ids)
        p.stdin.write(json.dumps(msg) + "\n")
        p.stdin.flush()
        while not notify:
            got = json.loads(p.stdout.readline())
            if got.get("id") == msg["id"]:
                return got

    ask("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}})
    ask("notifications/initialized", notify=True)

    def attack(name):
        got = ask("tools/call", {"name": "t", "arguments": {"args": [
            name, str(listener.getsockname()[1]), str(box.proc.pid)]}})
        return json.loads(got["result"]["content"][0]["text"])
    attack.box = box
    yield attack
    p.stdin.close()
    p.wait(timeout=20)
    listener.close()
    box.teardown()


@pytest.mark.parametrize("name", [
    "unshare_user", "unshare_mount", "setns", "mount_tmpfs", "ptrace_parent", "ptrace_sibling",
    "process_vm_readv", "io_uring_setup", "open_by_handle_at", "memfd_create", "bpf",
    "perf_event_open", "keyctl", "kexec_load", "init_module", "socket_netlink", "socket_packet",
    "socket_raw_inet", "socket_inet6"])
def test_stdio_server_call_refused(attacker, name):
    assert attacker(name) == "EPERM"


def test_stdio_server_escapes_refused(attacker):
    assert attacker("chroot_escape").startswith("EPERM:")
    assert attacker("proc_1_root") == "EACCES"
    assert attacker("proc_1_environ") == "EACCES"
    assert attacker("connect_host_listener") in ("ECONNREFUSED", "ENETUNREACH")
    assert attacker("connect_outside") == "ENETUNREACH"
    box = attacker.box
    for name in ("mountinfo", "environ_and_cmdline"):
        out = attacker(name)
        assert "box.toml" not in out and str(box.box_dir / "private") not in out, name
