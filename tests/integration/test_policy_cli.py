"""`box policy check|decide|generate-schema`: the exact interface
users test their policies with, on real files and the real binary."""
import json
import subprocess

import pytest

from conftest import BOX


def run(*args, home=None):
    return subprocess.run([str(BOX), "policy", *map(str, args)], capture_output=True, text=True, timeout=30)


@pytest.fixture
def write(tmp_path):
    def _write(text, name="policy.dw"):
        p = tmp_path / name
        p.write_text(text)
        return p
    return _write


POLICY = """\
permit(principal, action == Box::Action::"shell:exec", resource);
permit(principal, action in [Box::Action::"fs:read", Box::Action::"fs:write"], resource)
when { context.input.path like "~/src/project/*" };
@id("no_env") @description("The .env file holds credentials the agent must not read.")
forbid(principal, action == Box::Action::"fs:read", resource)
when { context.input.path like "*/.env" };
@id("no_rm")
forbid(principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "rm" };
@id("  ") @description("   ")
forbid(principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "rm" };
forbid(principal, action == Box::Action::"fs:delete", resource)
when { context.input.path like "~/src/project/.git*" };
@id("overflow")
forbid(principal, action == Box::Action::"shell:exec", resource)
when { context.input.program == "boom" && context.input.arg_count + 9223372036854775807 + 1 > 0 };
permit(principal, action == Box::Action::"net:connect", resource) when { context.input.host == "crates.io" };
@id("no_post") @description("Only reads leave the box!")
forbid(principal, action == Box::Action::"http:request", resource) when { context.input.method == "POST" };
permit(principal, action == Box::Action::"http:request", resource) when { context.input.host == "crates.io" };
permit(principal, action == Box::Action::"fs:move", resource) when { context.input.path like "~/src/project/*" };
"""


def exec_input(program, *args):
    i = {"command": " ".join([program, *args]), "program": program, "arg_count": len(args), "cwd": "/w"}
    if args:
        i["arg1"] = args[0]
    if len(args) > 1:
        i["arg2"] = args[1]
    return json.dumps(i)


def test_check_ok_and_warnings(write, tmp_path):
    p = write(POLICY)
    r = run("check", p, "--home", tmp_path)
    assert (r.returncode, r.stdout, r.stderr) == (0, "ok\n", "")
    p = write('permit(principal, action == Box::Action::"shell:exec", resource) '
              'when { context.input.program == "/bin/ls" };\n')
    r = run("check", p, "--home", "/home/op")
    assert r.returncode == 0 and r.stdout == "ok\n"
    assert r.stderr == ('box: warning: the permit rule with no @id compares context.input.program with "/bin/ls", '
                        'which matches only a first word spelled that way; compare context.input.program_path to '
                        'match the resolved binary\n')


@pytest.mark.parametrize("text, error", [
    ('permit(principal, action, resource)',
     "failed to parse policy source: dogwood parse: unexpected end of input; expected `;` to end the policy, "
     "or `when`/`unless` to add a condition at line 2, column 1"),
    ('permit(principal, action == Box::Action::"fs:raed", resource);',
     'policy references unknown action: for policy `policy_0`, unrecognized action `Box::Action::"fs:raed"` at '
     'line 1, column 29; for policy `policy_0`, unable to find an applicable action given the policy scope '
     'constraints at line 1, column 19'),
    ('permit(principal, action == Box::Action::"fs:read", resource) when { context.input.path like "/home/op/x/*" };',
     'policy compares an inert literal: the permit rule with no @id compares context.input.path with the pattern '
     '"/home/op/x/*", and a path under the operator home is spelled ~/…; write "~/x/*" at line 1, column 89'),
    ('permit(principal, action, resource) when { Acme::spent_today() > 3 };',
     "failed to parse policy source: dogwood: information providers are not enabled in this build at line 1, "
     "column 44"),
])
def test_check_refused(write, text, error):
    p = write(text + "\n")
    r = run("check", p, "--home", "/home/op")
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == f"box: error: policy file {p} will not load: {error}\n"


def test_check_home_defaults_to_HOME(write, tmp_path):
    p = write(f'permit(principal, action == Box::Action::"fs:read", resource) when {{ context.input.path == "{tmp_path}/a" }};\n')
    r = subprocess.run([str(BOX), "policy", "check", str(p)], capture_output=True, text=True,
                       env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 1
    assert r.stderr.endswith('and a path under the operator home is spelled ~/…; write "~/a" at line 1, column 92\n')


@pytest.mark.parametrize("action, input, status, message", [
    ("shell:exec", exec_input("echo", "hi"), 0, "policy permitted this operation on 'echo'."),
    ("fs:read", '{"path":"~/notes.txt","operation":"read_content"}', 1,
     "policy denied this operation on '~/notes.txt' [default-deny]: No permit policy matched this request."),
    ("fs:read", '{"path":"~/src/project/.env","operation":"read_content"}', 1,
     "policy denied this operation on '~/src/project/.env' [policy: no_env]: The .env file holds credentials the "
     "agent must not read."),
    ("shell:exec", exec_input("rm", "-rf"), 1,
     "policy denied this operation on 'rm' [policy: no_rm]; [policy: policy_4]."),
    ("fs:delete", '{"path":"~/src/project/.git/index","operation":"remove_file"}', 1,
     "policy denied this operation on '~/src/project/.git/index' [policy: policy_5]."),
    ("shell:exec", exec_input("boom"), 1,
     "policy denied this operation on 'boom' because the request could not be evaluated."),
    ("fs:write", '{"path":"~/src/project/a","operation":"write_content"}', 0,
     "policy permitted this operation on '~/src/project/a'."),
    ("fs:move", '{"path":"~/src/project/a","operation":"rename"}', 0,
     "policy permitted this operation on '~/src/project/a'."),
    ("fs:read", '{"path":"/tmp/x","operation":"enumerate"}', 1,
     "policy denied this operation on '/tmp/x' [default-deny]: No permit policy matched this request."),
    ("net:connect", '{"host":"crates.io","port":443}', 0, "policy permitted this operation on 'crates.io:443'."),
    ("net:connect", '{"host":"evil.example","ip":"6.6.6.6","port":80}', 1,
     "policy denied this operation on 'evil.example:80' [default-deny]: No permit policy matched this request."),
    ("http:request", '{"host":"crates.io","port":443,"method":"GET","path":"/api","body_bytes":0,"intercepted":true}', 0,
     "policy permitted this operation on 'crates.io:443/api'."),
    ("http:request", '{"host":"crates.io","port":443,"method":"POST","path":"/api","body_bytes":5,"intercepted":true}', 1,
     "policy denied this operation on 'crates.io:443/api' [policy: no_post]: Only reads leave the box!"),
])
def test_decide(write, action, input, status, message):
    p = write(POLICY)
    r = run("decide", p, "--home", "/home/op", action, input)
    assert (r.returncode, r.stdout) == (status, message + "\n"), r.stderr


def test_decide_explain(write):
    p = write(POLICY)
    r = run("decide", p, "--explain", "shell:exec", exec_input("rm", "-rf"))
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        "box: explain: rule 1 (policy_0, permit, line 1) matched: its scope matches and it has no condition",
        "box: explain: rule 4 (no_rm, forbid, line 8) matched: its scope matches and every condition holds",
        "box: explain: rule 5 (policy_4, forbid, line 11) matched: its scope matches and every condition holds",
    ]
    r = run("decide", p, "shell:exec", exec_input("boom"), "--explain")
    assert "box: explain: rule 7 (overflow, forbid, line 16) erred: integer overflow; an evaluation error denies the whole request" in r.stderr


def test_decide_usage_and_load_errors(write):
    p = write(POLICY)
    assert run("decide", p, "fs:read").returncode == 2
    r = run("decide", p, "fs:read", "not json")
    assert r.returncode == 2 and r.stderr.startswith("box: error: INPUT_JSON is not a JSON object")
    bad = write("permit(", "bad.dw")
    r = run("decide", bad, "fs:read", '{"path":"/a","operation":"read_content"}')
    assert r.returncode == 2 and r.stderr.startswith(f"box: error: policy file {bad} will not load: ")
    assert run("frobnicate").returncode == 2


def test_generate_schema(tmp_path):
    (tmp_path / "home").mkdir()
    cfg = tmp_path / "box.toml"
    cfg.write_text(f'name = "s"\nbox_dir = "{tmp_path}/state"\n[agent]\ncommand = ["/bin/true"]\n'
                   f'workspace = "{tmp_path}/home"\n')
    out = tmp_path / "schema"
    r = run("generate-schema", "--config", cfg, "--output-dir", out)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"Generated {out}/actions.cedarschema\nGenerated {out}/events.dwschema\n"
    text = (out / "actions.cedarschema").read_text()
    assert 'action "shell:spawn"' in text and "credential_reads?: Set<String>" in text
    assert 'Box::Action::"http:request"::response' in (out / "events.dwschema").read_text()
