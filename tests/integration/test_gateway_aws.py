"""`[egress.<name>]` aws:// routes (spec/runtime.md §7): static keys from
the operator's ~/.aws/credentials, phantom AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY in every process, and the gateway re-signing each
request with SigV4 for the service and region its host names.  A real
local HTTPS server stands in for sts.us-east-1.amazonaws.com (box run gets
a private /etc/hosts naming it, in a mount namespace of its own) and
checks every signature it receives with botocore and the real keys."""
import json
import os
import re
import subprocess
import textwrap

import pytest

import conftest
from gwutil import NET_POLICY, SERVER_ADDR, SPAWN, CountingServer, gateway_config

# python3-botocore (packaging/debian-packages.txt): an independent SigV4.
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

AWS_HOST = "sts.us-east-1.amazonaws.com"
KEY_ID = "AKIAREALKEYID0000001"
SECRET = "REAL/secret+access/key0123456789abcdefghij"
TOKEN = "REAL-session-token-xyz"
PHANTOM = re.compile(r"strands_box_[0-9a-f]{64}")

TOOLS = textwrap.dedent("""
    [tool.curl]
    command = ["/usr/bin/curl"]

    [tool.py]
    command = ["/usr/bin/python3"]
    filesystem.read = ["~/src/project"]
    """)

# A tool that signs with whatever keys its environment holds (the phantoms).
SIGNER = textwrap.dedent(r'''
    import os, sys, ssl, urllib.request
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    url, body = sys.argv[1], sys.argv[2].encode()
    creds = Credentials(os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"])
    req = AWSRequest(method="POST", url=url, data=body,
                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    SigV4Auth(creds, "sts", "us-east-1").add_auth(req)
    r = urllib.request.Request(url, data=body, method="POST", headers=dict(req.headers.items()))
    with urllib.request.urlopen(r, timeout=20) as resp:
        print(resp.read().decode())
    ''')


def leaf_for(ca_dir, name):
    """A server certificate for name, signed by the test CA."""
    run = lambda *a: subprocess.run(a, check=True, capture_output=True, cwd=ca_dir)
    run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-keyout", "aws.key", "-out", "aws.csr", "-subj", f"/CN={name}")
    (ca_dir / "aws.cnf").write_text(f"subjectAltName=DNS:{name}\nbasicConstraints=CA:FALSE\n"
                                    "extendedKeyUsage=serverAuth\n")
    run("openssl", "x509", "-req", "-in", "aws.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "aws.pem", "-days", "2", "-extfile", "aws.cnf")
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(ca_dir / "aws.pem", ca_dir / "aws.key")
    return ctx


@pytest.fixture
def aws_server(test_ca):
    ca_pem, _ = test_ca
    srv = CountingServer((SERVER_ADDR, 0), tls=leaf_for(ca_pem.parent, AWS_HOST))
    yield srv
    srv.close()


def with_hosts(box, monkeypatch):
    """box run in a mount namespace of its own, where /etc/hosts names
    AWS_HOST at the local server."""
    hosts = box.root / "hosts"
    hosts.write_text(f"127.0.0.1 localhost\n{SERVER_ADDR} {AWS_HOST}\n")
    wrapper = box.root / "box-in-ns"
    # an ordinary user owns a mount namespace only in a user namespace of
    # its own, where it is root as its box would be in the one it makes
    user = "" if os.geteuid() == 0 else "--map-root-user "
    wrapper.write_text(
        "#!/bin/sh\n"
        f"exec unshare {user}--mount --propagation private sh -c "
        f"'mount --bind \"$0\" /etc/hosts && exec \"$@\"' {hosts} {conftest.BOX} \"$@\"\n")
    wrapper.chmod(0o755)
    monkeypatch.setattr(conftest, "BOX", wrapper)


def write_profile(box, text):
    d = box.home / ".aws"
    d.mkdir(exist_ok=True)
    (d / "credentials").write_text(text)


ROUTE = textwrap.dedent("""
    [egress.aws]
    destinations = ["{dest}"]
    secret.ref = "aws://dev"
    """)


@pytest.fixture
def awsbox(box, test_ca, aws_server, monkeypatch):
    ca_pem, _ = test_ca
    write_profile(box, f"[other]\naws_access_key_id = AKIAOTHER\naws_secret_access_key = x\n"
                       f"[dev]\naws_access_key_id = {KEY_ID}\naws_secret_access_key = {SECRET}\n"
                       f"aws_session_token = {TOKEN}\n")
    box.write_config(extra=gateway_config(ca_pem) + TOOLS +
                     ROUTE.format(dest=f"{AWS_HOST}:{aws_server.port}"))
    box.seed_policy(extra=NET_POLICY + SPAWN)
    with_hosts(box, monkeypatch)
    box.start()
    return box


def check_signature(srv, head_index, method="GET"):
    """The request the server saw is signed with the real keys."""
    path, headers = srv.heads[head_index]
    auth = headers["authorization"]
    m = re.fullmatch(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/us-east-1/sts/aws4_request, "
                     r"SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})", auth)
    assert m, auth
    assert m.group(1) == KEY_ID
    signed = m.group(3).split(";")
    assert {"host", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token"} <= set(signed)
    assert headers["x-amz-security-token"] == TOKEN
    body = srv.bodies[head_index]
    req = AWSRequest(method=method, url=f"https://{AWS_HOST}:{srv.port}{path}", data=body,
                     headers={n: headers[n] for n in signed})
    req.context["timestamp"] = headers["x-amz-date"]
    signer = SigV4Auth(Credentials(KEY_ID, SECRET, TOKEN), "sts", "us-east-1")
    canonical = signer.canonical_request(req)
    want = signer.signature(signer.string_to_sign(req, canonical), req)
    assert m.group(4) == want, canonical


def test_phantom_keys_and_resigning(awsbox, aws_server):
    box = awsbox
    r = box.bash('printf "%s %s" "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY"')
    phantom_id, phantom_secret = r.stdout.split()
    assert PHANTOM.fullmatch(phantom_id) and PHANTOM.fullmatch(phantom_secret)
    assert phantom_id != phantom_secret
    base = f"https://{AWS_HOST}:{aws_server.port}"
    # The Shell's curl with a hand-made SigV4 header naming the phantom id.
    n = len(aws_server.heads)
    r = box.bash(f'curl -sS -H "Authorization: AWS4-HMAC-SHA256 Credential=$AWS_ACCESS_KEY_ID/'
                 f'20260101/us-east-1/sts/aws4_request, SignedHeaders=host, Signature=00" '
                 f'-H "X-Amz-Date: 20260101T000000Z" -H "X-Amz-Target: Test.Op" '
                 f'"{base}/?Version=2011-06-15&Action=GetCallerIdentity"')
    assert r.returncode == 0, r.stderr
    check_signature(aws_server, n)
    assert aws_server.heads[n][1]["x-amz-target"] == "Test.Op"
    doc = json.loads(r.stdout)
    assert SECRET not in r.stdout and TOKEN not in r.stdout
    assert doc["headers"]["x-amz-security-token"] == "[REDACTED]"
    # A tool signing with botocore and the phantoms it was given.
    (box.workspace / "signer.py").write_text(SIGNER)
    n = len(aws_server.heads)
    r = box.bash(f'/usr/bin/python3 signer.py "{base}/a/b%20c" "Action=GetCallerIdentity&Version=2011-06-15"')
    assert r.returncode == 0, r.stderr
    check_signature(aws_server, n, method="POST")
    assert aws_server.bodies[n] == b"Action=GetCallerIdentity&Version=2011-06-15"
    # /usr/bin/curl's own --aws-sigv4 with the phantoms.
    n = len(aws_server.heads)
    r = box.bash(f'/usr/bin/curl -sS --aws-sigv4 "aws:amz:us-east-1:sts" '
                 f'--user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" "{base}/x?b=2&a=1"')
    assert r.returncode == 0, r.stderr
    check_signature(aws_server, n)


def test_missing_or_foreign_credential_is_refused(awsbox, aws_server):
    box = awsbox
    base = f"https://{AWS_HOST}:{aws_server.port}"
    n = len(aws_server.heads)
    r = box.bash(f'curl -sS {base}/')
    assert r.returncode == 1 and "blocked by egress control" in r.stderr, r.stderr
    r = box.bash(f'curl -sS -H "Authorization: AWS4-HMAC-SHA256 Credential=AKIAOTHER/'
                 f'20260101/us-east-1/sts/aws4_request, SignedHeaders=host, Signature=00" {base}/')
    assert r.returncode == 1 and "blocked by egress control" in r.stderr, r.stderr
    assert aws_server.heads[n:] == []


AWS_REFUSALS = [
    ('[egress.a]\ndestinations = ["api.example.com"]\nsecret.ref = "aws://dev"\n',
     "`destinations` entry \"api.example.com\" is not below amazonaws.com or api.aws"),
    ('[egress.a]\ndestinations = ["sts.amazonaws.com"]\nsecret.ref = "aws://dev"\n'
     'secret.placement = "header"\n',
     "`secret.placement` does not apply to an aws:// route"),
    ('[egress.a]\ndestinations = ["sts.amazonaws.com"]\nsecret.ref = "aws://"\n',
     "does not name a profile"),
    ('[egress.a]\ndestinations = ["sts.amazonaws.com"]\nsecret.ref = "aws://nope"\n',
     "`secret.ref` aws://nope cannot be read from"),
    ('[egress.a]\ndestinations = ["sts.amazonaws.com"]\nsecret.ref = "aws://proc"\n',
     "runs a credential_process"),
    ('[egress.a]\ndestinations = ["sts.amazonaws.com"]\nsecret.ref = "aws://dev"\n'
     '[egress.b]\ndestinations = ["x.example.com"]\nsecret.ref = "env://AWS_SECRET_ACCESS_KEY"\n',
     "env://AWS_SECRET_ACCESS_KEY names a variable the aws:// route `[egress.a]` gives its "
     "phantom under"),
    ('[egress.a]\ndestinations = ["sts.amazonaws.com"]\nsecret.ref = "aws://dev"\n'
     '[egress.b]\ndestinations = ["s3.amazonaws.com"]\nsecret.ref = "aws://dev"\n',
     "invalid `[egress.b]` table: one aws:// route per box"),
]


@pytest.mark.parametrize("extra,message", AWS_REFUSALS,
                         ids=[f"r{i}" for i in range(len(AWS_REFUSALS))])
def test_aws_config_refusals(box, extra, message):
    write_profile(box, f"[dev]\naws_access_key_id = {KEY_ID}\naws_secret_access_key = {SECRET}\n"
                       "[proc]\naws_access_key_id = A\naws_secret_access_key = B\n")
    (box.home / ".aws" / "config").write_text("[profile proc]\ncredential_process = /bin/true\n")
    box.write_config(extra="\n" + extra)
    box.seed_policy()
    base = box.env
    box.env = lambda: {**base(), "AWS_SECRET_ACCESS_KEY": "x"}
    assert box.run_to_end(timeout=30) != 0
    err = box.stderr()
    assert err.startswith("box: error: ") and message in err, err
    assert str(box.config) in err
