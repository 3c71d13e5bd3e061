"""`[egress.<name>]` env:// credential routes (spec/runtime.md §2.4, §7):
every process holds a phantom, the gateway swaps it for the real secret
inside TLS for the route's destinations only, and the secret reaches no
process, log or file of the box.  Real local HTTP and HTTPS servers record
what they receive."""
import base64
import json
import os
import re
import textwrap
import time
import urllib.parse

import pytest

from gwutil import NET_POLICY, SERVER_ADDR, SPAWN, TOOLS, gateway_config

SECRETS = {
    "API_TOKEN": "sk-live-REAL-0123456789",
    "BASIC_CRED": "robot:REAL-basic-pass",
    "Q_TOKEN": "REAL q&token=/+",
    "ALWAYS_KEY": "REAL-always-key",
    "PLAIN_TOKEN": "REAL-plain-token",
    "DENIED_TOKEN": "REAL-denied-token",
}
PHANTOM = re.compile(r"strands_box_[0-9a-f]{64}")

AGENT_FS = textwrap.dedent("""
    [agent.filesystem]
    exec = ["/usr/lib/python3.11"]
    """)


def routes(secure, plain):
    d = f"{SERVER_ADDR}:{secure.port}"
    return textwrap.dedent(f"""
        [egress.bearer]
        destinations = ["{d}/api"]
        secret.ref = "env://API_TOKEN"

        [egress.basic]
        destinations = ["{d}/basic"]
        secret.ref = "env://BASIC_CRED"
        secret.placement = "basic_auth"

        [egress.query]
        destinations = ["{d}/q"]
        secret.ref = "env://Q_TOKEN"
        secret.placement = "query_param"
        secret.param = "key"
        secret.phantom_prefix = "qq-"

        [egress.always]
        destinations = ["{d}/always"]
        secret.ref = "env://ALWAYS_KEY"
        secret.header = "X-Api-Key"
        secret.inject = "always"

        [egress.plain]
        destinations = ["{SERVER_ADDR}:{plain.port}/creds"]
        secret.ref = "env://PLAIN_TOKEN"

        [egress.denied]
        destinations = ["{d}/secret"]
        secret.ref = "env://DENIED_TOKEN"
        """)


def with_secrets(box):
    base = box.env

    def env():
        return {**base(), **SECRETS}
    box.env = env
    return box


@pytest.fixture
def credbox(box, test_ca, servers):
    plain, secure = servers
    ca_pem, _ = test_ca
    agent = ["/usr/bin/python3", "-c",
             "import os, json, time; print(json.dumps(dict(os.environ)), flush=True); time.sleep(600)"]
    box.write_config(agent_command=agent, extra=gateway_config(ca_pem) + TOOLS + AGENT_FS
                     + routes(secure, plain))
    box.seed_policy(extra=NET_POLICY + SPAWN)
    with_secrets(box).start()
    return box


@pytest.fixture
def https(credbox, servers):
    """The credentialed box, the HTTPS server, its base URL, and how many
    heads the server had seen when the test began."""
    plain, secure = servers
    return credbox, secure, f"https://{SERVER_ADDR}:{secure.port}", len(secure.heads)


def shell_var(box, name):
    r = box.bash(f'printf %s "${name}"')
    assert r.returncode == 0, r.stderr
    return r.stdout


def heads_since(srv, n):
    return srv.heads[n:]


def test_phantoms_in_every_environment_and_never_the_secret(credbox, servers):
    box = credbox
    phantoms = {name: shell_var(box, name) for name in SECRETS}
    for name, value in phantoms.items():
        if name == "Q_TOKEN":
            assert re.fullmatch(r"qq-[0-9a-f]{64}", value), value
        else:
            assert PHANTOM.fullmatch(value), (name, value)
    assert len(set(phantoms.values())) == len(phantoms)
    # The Shell exports them: `env` and a subshell see them too.
    r = box.bash("env | grep -c '^API_TOKEN=strands_box_'; (echo $BASIC_CRED)")
    assert r.stdout.splitlines() == ["1", phantoms["BASIC_CRED"]], r.stdout
    # A tool gets the same phantoms from the box's composition.
    r = box.bash("/usr/bin/python3 -c 'import os, json; print(json.dumps(dict(os.environ)))'")
    assert r.returncode == 0, r.stderr
    tool_env = json.loads(r.stdout)
    for name, value in phantoms.items():
        assert tool_env[name] == value
    # So does the agent.
    deadline = time.time() + 10
    while "API_TOKEN" not in box.stdout_path.read_text() and time.time() < deadline:
        time.sleep(0.05)
    agent_env = json.loads(box.stdout_path.read_text().splitlines()[0])
    for name, value in phantoms.items():
        assert agent_env[name] == value
    # The real secret is in no environment, and not in box run's own.
    texts = [r.stdout, json.dumps(agent_env),
             open(f"/proc/{box.proc.pid}/environ", "rb").read().decode("latin-1")]
    for secret in SECRETS.values():
        for t in texts:
            assert secret not in t


def test_shell_curl_header_swapped_inside_tls(https):
    box, secure, base, n = https
    r = box.bash(f'curl -sS -H "Authorization: Bearer $API_TOKEN" {base}/api/v1?x=1')
    assert r.returncode == 0, r.stderr
    (path, headers), = heads_since(secure, n)
    assert path == "/api/v1?x=1"
    assert headers["authorization"] == "Bearer " + SECRETS["API_TOKEN"]
    assert headers["accept-encoding"] == "identity"
    # The server's echo carried the secret back: the reply is scrubbed.
    doc = json.loads(r.stdout)
    assert doc["headers"]["authorization"] == "Bearer [REDACTED]"
    assert SECRETS["API_TOKEN"] not in r.stdout + r.stderr
    # HEAD: the announced length survives re-framing.
    r = box.bash(f'curl -sS -I -H "Authorization: Bearer $API_TOKEN" {base}/api/head')
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("HTTP/1.1 200") and "Content-Length: " in r.stdout, r.stdout
    # The prefix compares case-insensitively.
    n = len(secure.heads)
    r = box.bash(f'curl -sS -H "authorization: bearer $API_TOKEN" {base}/api')
    assert r.returncode == 0, r.stderr
    assert heads_since(secure, n)[0][1]["authorization"] == "Bearer " + SECRETS["API_TOKEN"]


def test_tool_curl_header_swapped(https):
    box, secure, base, n = https
    r = box.bash(f'/usr/bin/curl -sS -H "Authorization: Bearer $API_TOKEN" {base}/api/tool')
    assert r.returncode == 0, r.stderr
    (path, headers), = heads_since(secure, n)
    assert path == "/api/tool"
    assert headers["authorization"] == "Bearer " + SECRETS["API_TOKEN"]
    assert json.loads(r.stdout)["headers"]["authorization"] == "Bearer [REDACTED]"


def test_phantom_to_a_destination_without_route_is_forwarded_unchanged(https):
    box, secure, base, n = https
    phantom = shell_var(box, "API_TOKEN")
    # /echo and /apix are not under /api (whole segments).
    r = box.bash(f'curl -sS -H "Authorization: Bearer $API_TOKEN" {base}/echo; '
                 f'/usr/bin/curl -sS -H "Authorization: Bearer $API_TOKEN" {base}/apix')
    assert r.returncode == 0, r.stderr
    got = heads_since(secure, n)
    assert [p for p, _ in got] == ["/echo", "/apix"]
    for _, headers in got:
        assert headers["authorization"] == "Bearer " + phantom
    assert phantom in r.stdout


def test_missing_or_wrong_phantom_is_refused_before_policy(https):
    box, secure, base, n = https
    before = len([d for d in box.decisions() if d["strands.box.policy.action"] == "http:request"])
    for args in ("", "-H 'Authorization: Bearer not-the-phantom'",
                 '-H "Authorization: Bearer $API_TOKEN" -H "Authorization: Bearer $API_TOKEN"'):
        r = box.bash(f"curl -sS -i {base}/api/x {args}")
        assert r.returncode == 1, (args, r.stdout, r.stderr)
        assert "blocked by egress control" in r.stderr, r.stderr
    r = box.bash(f"/usr/bin/curl -sS -i {base}/api/x")
    assert "403" in r.stdout and "x-strands-box-egress: refused" in r.stdout.lower(), r.stdout
    assert "blocked by egress control" in r.stdout
    assert heads_since(secure, n) == []
    after = len([d for d in box.decisions() if d["strands.box.policy.action"] == "http:request"])
    assert after == before  # refused before the request was decided


def test_basic_auth_password_half(https):
    box, secure, base, n = https
    r = box.bash(f'curl -sS -u "anyone:$BASIC_CRED" {base}/basic/x; '
                 f'/usr/bin/curl -sS -u "other:$BASIC_CRED" {base}/basic/y')
    assert r.returncode == 0, r.stderr
    want = "Basic " + base64.b64encode(SECRETS["BASIC_CRED"].encode()).decode()
    got = heads_since(secure, n)
    assert [h["authorization"] for _, h in got] == [want, want]
    assert want.split()[1] not in r.stdout and "[REDACTED]" in r.stdout
    r = box.bash(f'curl -sS -u "anyone:wrong" {base}/basic/x')
    assert r.returncode == 1 and "blocked by egress control" in r.stderr


def test_query_param(https):
    box, secure, base, n = https
    r = box.bash(f'curl -sS "{base}/q/x?a=1&key=$Q_TOKEN&b=2"')
    assert r.returncode == 0, r.stderr
    (path, _), = heads_since(secure, n)
    query = urllib.parse.urlsplit(path).query
    assert urllib.parse.parse_qsl(query) == [("a", "1"), ("key", SECRETS["Q_TOKEN"]), ("b", "2")]
    assert json.loads(r.stdout)["path"] == "/q/x?a=1&key=[REDACTED]&b=2"
    # The decision names the path the client sent, without its query.
    reqs = [d for d in box.decisions() if d["strands.box.policy.action"] == "http:request"]
    assert reqs[-1]["strands.box.policy.resource"] == f"{SERVER_ADDR}:{secure.port}/q/x"
    r = box.bash(f'curl -sS "{base}/q/x?a=1"')
    assert r.returncode == 1 and "blocked by egress control" in r.stderr


def test_inject_always_adds_and_warns(https):
    box, secure, base, n = https
    r = box.bash(f'curl -sS {base}/always/a; curl -sS -H "X-Api-Key: $ALWAYS_KEY" {base}/always/b')
    assert r.returncode == 0, r.stderr
    got = heads_since(secure, n)
    assert [h["x-api-key"] for _, h in got] == [SECRETS["ALWAYS_KEY"]] * 2
    assert "authorization" not in got[0][1]
    warnings = [line for line in box.stderr().splitlines() if "[egress.always]" in line]
    assert len(warnings) == 1, box.stderr()
    assert "/always/a" in warnings[0] and "did not carry the phantom" in warnings[0]


def test_plain_http_is_never_credentialed(credbox, servers):
    plain, secure = servers
    box = credbox
    base = f"http://{SERVER_ADDR}:{plain.port}"
    n = len(plain.heads)
    r = box.bash(f'curl -sS -H "Authorization: Bearer $PLAIN_TOKEN" {base}/creds/x')
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "credential not permitted on a plaintext request" in r.stderr
    r = box.bash(f'/usr/bin/curl -sS -i {base}/creds')
    assert "credential not permitted on a plaintext request" in r.stdout
    assert heads_since(plain, n) == []
    # A phantom over plain HTTP where no route is: forwarded unchanged.
    phantom = shell_var(box, "PLAIN_TOKEN")
    r = box.bash(f'curl -sS -H "Authorization: Bearer $PLAIN_TOKEN" {base}/echo')
    assert r.returncode == 0, r.stderr
    (path, headers), = heads_since(plain, n)
    assert path == "/echo" and headers["authorization"] == "Bearer " + phantom


def test_route_grants_no_reachability(credbox, servers):
    plain, secure = servers
    box = credbox
    n = len(secure.heads)
    r = box.bash(f'curl -sS -H "Authorization: Bearer $DENIED_TOKEN" '
                 f'https://{SERVER_ADDR}:{secure.port}/secret/x')
    assert r.returncode == 1
    assert "policy denied" in r.stderr, r.stderr
    assert heads_since(secure, n) == []


def test_compressed_reply_to_a_credentialed_request_is_refused(credbox, servers):
    plain, secure = servers
    box = credbox
    r = box.bash(f'curl -sS -H "Authorization: Bearer $API_TOKEN" '
                 f'https://{SERVER_ADDR}:{secure.port}/api/gzip')
    assert r.returncode == 1
    assert "response blocked by egress control" in r.stderr, r.stderr


def test_secret_in_no_file_of_the_box(credbox, servers):
    plain, secure = servers
    box = credbox
    base = f"https://{SERVER_ADDR}:{secure.port}"
    r = box.bash(f'curl -sS -H "Authorization: Bearer $API_TOKEN" {base}/api/a; '
                 f'curl -sS "{base}/q/x?key=$Q_TOKEN"; curl -sS -u "u:$BASIC_CRED" {base}/basic/b')
    assert r.returncode == 0, r.stderr
    box.stop()
    spellings = set()
    for s in SECRETS.values():
        spellings |= {s, urllib.parse.quote(s, safe=""), base64.b64encode(s.encode()).decode()}
    for root in (box.box_dir, box.workspace, box.home):
        for dirpath, _, files in os.walk(root):
            for f in files:
                p = os.path.join(dirpath, f)
                if os.path.islink(p) or not os.path.isfile(p):
                    continue
                data = open(p, "rb").read().decode("latin-1")
                for s in spellings:
                    assert s not in data, (p, s)
    assert box.decisions()  # the log exists and was searched


# ---- refusals at load ----

def refusal(box, extra, env=None):
    box.write_config(extra=extra)
    box.seed_policy()
    base = box.env
    box.env = lambda: {**base(), **(env if env is not None else SECRETS)}
    rc = box.run_to_end(timeout=30)
    assert rc != 0
    assert not (box.box_dir / "run").exists()  # refused before any box state
    return box.stderr()


def table(body, name="r"):
    return f"\n[egress.{name}]\n" + textwrap.dedent(body)


REFUSALS = [
    (table('secret.ref = "env://API_TOKEN"\n'), "missing field `egress.r.destinations`"),
    (table('destinations = []\nsecret.ref = "env://API_TOKEN"\n'),
     "invalid `[egress.r]` table: `destinations` is empty"),
    (table('destinations = ["*"]\nsecret.ref = "env://API_TOKEN"\n'),
     "`destinations` entry \"*\" is invalid: `*` would match every host"),
    (table('destinations = [""]\nsecret.ref = "env://API_TOKEN"\n'),
     "`destinations` entry \"\" is invalid: it is empty"),
    (table('destinations = ["api.example.com:0"]\nsecret.ref = "env://API_TOKEN"\n'),
     "is invalid: port 0 names no port"),
    (table('destinations = ["api.example.com", "API.example.com:443"]\n'
           'secret.ref = "env://API_TOKEN"\n'),
     "`destinations` entry \"API.example.com:443\" overlaps \"api.example.com\""),
    (table('destinations = ["*.example.com"]\nsecret.ref = "env://API_TOKEN"\n', "a") +
     table('destinations = ["api.example.com/v1"]\nsecret.ref = "env://BASIC_CRED"\n', "b"),
     "overlaps \"*.example.com\" of `[egress.a]`"),
    (table('destinations = ["api.example.com"]\n'),
     "an entry with no secret declares only a destination, which policy already decides; give "
     "it a secret, or set protocol = \"mcp\" for a remote MCP server"),
    (table('destinations = ["api.example.com"]\nsecret = "sk-literal"\n'),
     "a literal secret is refused"),
    (table('destinations = ["api.example.com"]\nsecret.ref = "sk-literal"\n'),
     "`secret.ref` \"sk-literal\" is not a reference"),
    (table('destinations = ["api.example.com"]\nsecret.ref = "credsd://x"\n'),
     "credsd:// credentials are not supported by this build yet"),
    (table('destinations = ["api.example.com"]\nsecret.ref = "env://HOME"\n'),
     "names a variable the box sets itself"),
    (table('destinations = ["api.example.com"]\nsecret.ref = "env://HTTPS_PROXY"\n'),
     "names a variable the box sets itself"),
    (table('destinations = ["api.example.com"]\nsecret.ref = "env://NOT_SET_ANYWHERE"\n'),
     "`secret.ref` env://NOT_SET_ANYWHERE is not set in the environment of `box run`"),
    (table('destinations = ["api.example.com"]\nsecret.ref = "env://BLANK"\n'),
     "`secret.ref` env://BLANK is blank"),
    (table('destinations = ["api.example.com"]\nsecret.ref = "env://API_TOKEN"\n'
           'secret.placement = "basic_auth"\n'),
     "is not `user:password`"),
    (table('destinations = ["api.example.com"]\nsecret.ref = "env://API_TOKEN"\n'
           'secret.placement = "cookie"\n'),
     "`secret.placement` \"cookie\" is not one of"),
    (table('destinations = ["api.example.com"]\nsecret.ref = "env://API_TOKEN"\n'
           'secret.placement = "query_param"\n'),
     "`secret.param` is required with placement = \"query_param\""),
    (table('destinations = ["api.example.com"]\nsecret.ref = "env://API_TOKEN"\n'
           'secret.param = "key"\n'),
     "`secret.param` is only valid with placement = \"query_param\""),
    (table('destinations = ["api.example.com"]\nsecret.ref = "env://API_TOKEN"\n'
           'secret.prefix = "Token {x}"\n'),
     "`secret.prefix` \"Token {x}\" contains a control character or a brace"),
    (table('destinations = ["api.example.com"]\nsecret.ref = "env://API_TOKEN"\n'
           'secret.inject = "sometimes"\n'),
     "`secret.inject` \"sometimes\" is not \"phantom\" or \"always\""),
    (table('destinations = ["api.example.com"]\nsecret.ref = "env://API_TOKEN"\n'
           'secret.phantom_prefix = "bad prefix"\n'),
     "`secret.phantom_prefix` \"bad prefix\" must be 1 to 64 characters"),
    (table('destinations = ["api.example.com"]\nsecret.ref = "env://API_TOKEN"\n'
           'secret.phantom = "x"\n'),
     "carries `egress.r.secret.phantom`, which this build does not read"),
    (table('destinations = ["api.example.com"]\nprotocol = "mcp"\nsecret.ref = "env://API_TOKEN"\n'),
     "carries `egress.r.protocol`, which this build does not read; write `[mcp.r] type = \"http\"`"),
    (table('destinations = ["api.example.com"]\nsecret.ref = "env://API_TOKEN"\nother = 1\n'),
     "unknown field `egress.r.other`"),
    (table('destinations = ["api.example.com"]\nsecret.ref = "env://API_TOKEN"\n', "a") +
     table('destinations = ["b.example.com"]\nsecret.ref = "env://API_TOKEN"\n', "b"),
     "env://API_TOKEN is already the secret of `[egress.a]`"),
    (table('destinations = ["api.example.com"]\nsecret.ref = "env://API_TOKEN"\n', '"bad/name"'),
     "invalid `[egress.bad/name]` table: the name must be one component"),
]


@pytest.mark.parametrize("extra,message", REFUSALS,
                         ids=[f"r{i}" for i in range(len(REFUSALS))])
def test_config_refusals(box, extra, message):
    err = refusal(box, extra, env={**SECRETS, "BLANK": "  "})
    assert err.startswith("box: error: "), err
    assert message in err, err
    assert str(box.config) in err, err  # the file is named


def test_credentialed_reply_keeps_the_tunnel_framed(https):
    """A credentialed reply is held, scrubbed and re-framed: the kept-alive
    tunnel still carries the next answers whole."""
    box, secure, base, n = https
    r = box.bash(f'/usr/bin/curl -sS -w " %{{num_connects}}\\n" '
                 f'-H "Authorization: Bearer $API_TOKEN" {base}/api/one {base}/echo '
                 f'{base}/api/two')
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    docs = [json.loads(lines[i]) for i in (0, 2, 4)]
    assert [lines[i] for i in (1, 3, 5)] == [" 1", " 0", " 0"]  # one connection for all three
    assert [d["path"] for d in docs] == ["/api/one", "/echo", "/api/two"]
    assert docs[0]["headers"]["authorization"] == "Bearer [REDACTED]"
    got = heads_since(secure, n)
    assert [p for p, _ in got] == ["/api/one", "/echo", "/api/two"]
    assert got[0][1]["authorization"] == got[2][1]["authorization"] == "Bearer " + SECRETS["API_TOKEN"]
    phantom = shell_var(box, "API_TOKEN")
    assert got[1][1]["authorization"] == "Bearer " + phantom  # no route for /echo
