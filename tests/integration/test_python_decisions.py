"""A Python script's file, process and network operations are the box's
decisions, logged in the order the script made them (issue's acceptance:
3 reads, 1 write, a listing, `git status` and a URL fetch, the fetch
through the egress gateway as the Shell's curl's)."""

import ssl
from pathlib import Path

from gwutil import NET_POLICY, SERVER_ADDR, gateway_config
from test_commands_decisions import per_operation_policy

SCRIPT = """\
import os, subprocess
for name in ("a.txt", "b.txt", "c.txt"):
    with open(name) as f:
        f.read()
with open("out.txt", "w") as f:
    f.write("written")
print(sorted(os.listdir("d")))
print(subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True).returncode)
"""
FETCH = """\
import urllib.request
print(urllib.request.urlopen("http://{addr}:{port}/echo").status)
"""

# what the script asked for, by kind; the rest it raises (the stat of an
# open file, net:connect before and after DNS) is left out
FS_KINDS = {("fs:read", "read_content"), ("fs:write", "write_content"), ("fs:read", "enumerate")}
OTHER_KINDS = {"shell:exec", "shell:spawn", "http:request"}
SPAWN_GIT = """
permit(principal, action == Box::Action::"shell:spawn", resource)
when { context.input.program == "git" };
"""


def logged(box, since):
    """What the script asked for, in order (see FS_KINDS)."""
    got = []
    for d in box.decisions()[since:]:
        action, res = d["strands.box.policy.action"], d["strands.box.policy.resource"]
        rule = d.get("strands.box.policy.rule")
        if (action, rule) in FS_KINDS:
            got.append((d["strands.box.policy.verdict"], rule, res))
        elif action in OTHER_KINDS:
            got.append((d["strands.box.policy.verdict"], action, res))
    return got


def net_box(box, test_ca):
    """box started with its gateway, each fs rule's @id naming its operation
    (the log's rule attribute)."""
    ca_pem, _ = test_ca
    per_operation_policy(box, extra=NET_POLICY + SPAWN_GIT)
    box.write_config(extra=gateway_config(ca_pem))
    return box.start()


def test_a_scripts_operations_are_logged_in_order(box, test_ca):
    net_box(box, test_ca)
    ws = box.workspace
    for name in ("a.txt", "b.txt", "c.txt"):
        (ws / name).write_text(name)
    (ws / "d").mkdir()
    (ws / "d" / "x").write_text("")
    (ws / "job.py").write_text(SCRIPT)
    since = len(box.decisions())
    # -I: the script's directory is not on sys.path, so no import lists it
    r = box.bash("python3 -I job.py")
    assert (r.stdout, r.stderr, r.returncode) == ("['x']\n0\n", "", 0)
    assert (ws / "out.txt").read_text() == "written"
    proj = "~/src/project"
    # CPython opens a script twice (its path made absolute, then run), as
    # natively
    reads = [("permit", "read_content", f"{proj}/{name}")
             for name in ("job.py", "job.py", "a.txt", "b.txt", "c.txt")]
    got = logged(box, since)
    assert got == [("permit", "shell:exec", "python3"), *reads,
                   ("permit", "write_content", f"{proj}/out.txt"),
                   ("permit", "enumerate", f"{proj}/d"),
                   # a [tool.*] program: its one decision is the spawn
                   ("permit", "shell:spawn", "/usr/bin/git")], got


def run_script(box, test_ca, name, text):
    """Runs the script text as name in a box whose network goes through the
    gateway: its result and the decisions it logged."""
    net_box(box, test_ca)
    (box.workspace / name).write_text(text)
    since = len(box.decisions())
    r = box.bash(f"python3 -I {name}")
    return r, logged(box, since)


def script_started(name):
    """The decisions of `python3 -I name` up to the script's own: the
    command, and the script read twice (its encoding, then its text)."""
    return [("permit", "shell:exec", "python3")] + \
        [("permit", "read_content", f"~/src/project/{name}")] * 2


def test_a_url_fetch_is_an_http_request_decision(box, servers, test_ca):
    plain, _ = servers
    r, decided = run_script(box, test_ca, "fetch.py", FETCH.format(addr=SERVER_ADDR, port=plain.port))
    assert (r.stdout, r.stderr, r.returncode) == ("200\n", "", 0)
    assert decided == script_started("fetch.py") + [
        ("permit", "http:request", f"{SERVER_ADDR}:{plain.port}/echo")]
    assert plain.requests == [("GET", "/echo")]


HTTPS_AND_REFUSED = """\
import urllib.error, urllib.request
print(urllib.request.urlopen("https://{addr}:{port}/echo").status)
try:
    urllib.request.urlopen("http://{addr}:{plain}/secret")
except urllib.error.HTTPError as e:
    print(e.code, e.headers.get("x-strands-box-egress"))
"""


def test_https_goes_through_the_gateway_and_a_refusal_is_its_answer(box, servers, test_ca):
    plain, secure = servers
    r, decided = run_script(box, test_ca, "tls.py", HTTPS_AND_REFUSED.format(
        addr=SERVER_ADDR, port=secure.port, plain=plain.port))
    # the gateway's CA is the default context's root; its refusal is its
    # marked answer
    assert (r.stdout, r.stderr, r.returncode) == ("200\n403 refused\n", "", 0)
    assert decided == script_started("tls.py") + [
        ("permit", "http:request", f"{SERVER_ADDR}:{secure.port}/echo"),
        ("deny", "http:request", f"{SERVER_ADDR}:{plain.port}/secret")]
    assert secure.requests == [("GET", "/echo")] and plain.requests == []


def test_requests_reaches_the_gateway_from_the_proxy_variables(box, servers, test_ca):
    plain, _ = servers
    net_box(box, test_ca)
    (box.workspace / "req.py").write_text(
        "import requests\n"
        f"r = requests.get('http://{SERVER_ADDR}:{plain.port}/echo')\n"
        "print(r.status_code)\n")
    since = len(box.decisions())
    r = box.bash("python3 -I req.py")
    assert (r.stdout, r.stderr, r.returncode) == ("200\n", "", 0)
    assert [g for g in logged(box, since) if g[1] == "http:request"] == [
        ("permit", "http:request", f"{SERVER_ADDR}:{plain.port}/echo")]
    assert plain.requests == [("GET", "/echo")]


def test_requests_over_https_trusts_the_gateway(box, servers, test_ca):
    # requests passes its own bundle (certifi's path, or REQUESTS_CA_BUNDLE)
    # to every context it makes: in a box every HTTPS answer comes signed by
    # the gateway, so its CA must be trusted through that route too
    _, secure = servers
    r, decided = run_script(box, test_ca, "reqs.py",
                            "import requests\n"
                            f"r = requests.get('https://{SERVER_ADDR}:{secure.port}/echo')\n"
                            "print(r.status_code)\n")
    assert (r.stdout, r.stderr, r.returncode) == ("200\n", "", 0), r.stderr[-2000:]
    assert [g for g in decided if g[1] == "http:request"] == [
        ("permit", "http:request", f"{SERVER_ADDR}:{secure.port}/echo")]
    assert secure.requests == [("GET", "/echo")]


def test_a_bundle_of_the_programs_own_trusts_the_gateway_too(box, servers, test_ca):
    # a venv's certifi names its own bundle (here: the upstream's CA, which
    # the gateway's re-signed answer does not chain to)
    ca_pem, _ = test_ca
    _, secure = servers
    pkg = box.workspace / "vend" / "certifi"
    pkg.mkdir(parents=True)
    (pkg / "cacert.pem").write_text(Path(ca_pem).read_text())
    (pkg / "__init__.py").write_text(
        "import os\ndef where():\n    return os.path.join(os.path.dirname(__file__), 'cacert.pem')\n")
    r, decided = run_script(box, test_ca, "vreq.py",
                            "import sys; sys.path.insert(0, 'vend')\n"
                            "import certifi, requests\n"
                            "print(certifi.where().endswith('vend/certifi/cacert.pem'))\n"
                            f"print(requests.get('https://{SERVER_ADDR}:{secure.port}/echo').status_code)\n")
    assert (r.stdout, r.stderr, r.returncode) == ("True\n200\n", "", 0), r.stderr[-2000:]
    assert secure.requests == [("GET", "/echo")]


def test_the_gateways_ca_is_shown_read_only(box, test_ca):
    net_box(box, test_ca)
    path = "/.box/gateway-ca.pem"
    got = box.bash(f"python3 -c 'import ssl, certifi; print(certifi.where()); "
                   f"print(ssl.PEM_cert_to_DER_cert(open(\"{path}\").read()).hex())'")
    assert got.returncode == 0, got.stderr
    host = (box.box_dir / "trust" / "cert.pem").read_text()
    assert got.stdout == f"{path}\n{ssl.PEM_cert_to_DER_cert(host).hex()}\n"
    for attempt in (f"echo x > {path}", f"rm -f {path}", f"mv {path} /tmp/x",
                    f"chmod 666 {path}", f"ln -sf /tmp/y {path}"):
        r = box.bash(f"{attempt}; cat {path}")
        assert r.stdout == host, (attempt, r)
        assert r.returncode == 0 and r.stderr, (attempt, r)
