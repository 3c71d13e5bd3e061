"""The raisers of ::response events (spec/policy.md §2.3) through
real boxes: the Shell reports each command it implements with its exit
status (also from forked stages and background jobs), and the egress
gateway each exchange with its upstream status and delivered bytes."""

import textwrap

import pytest

from gwutil import SERVER_ADDR, CountingServer, gateway_config


def responses(box, action):
    return [r for r in box.history() if r.get("a") == action and r.get("k") == 1]


TESTED = """\
    @id("tested")
    forbid(principal, action == Box::Action::"shell:exec", resource)
    when { context.input.program == "cat" }
    unless temporal { formerly within 10m Box::Action::"shell:exec"::response{
      input.program: "test", output.status: 0 } };
    """


def test_shell_exec_status(box):
    box.write_config()
    box.seed_policy(extra=TESTED)
    box.start()
    # a failing test records status 1: cat stays refused
    r = box.bash("test -f nothere; cat src/main.rs")
    assert r.returncode == 126 and "[policy: tested]" in r.stderr
    # a passing test in a subshell (a forked child) records 0: cat runs in the same command
    r = box.bash("(test -f src/main.rs) && cat src/main.rs")
    assert r.returncode == 0 and "fn main" in r.stdout, r.stderr
    recs = responses(box, "shell:exec")
    tests = [(x["i"]["command"], x["o"]["status"]) for x in recs if x["i"]["program"] == "test"]
    assert tests == [("test -f nothere", 1), ("test -f src/main.rs", 0)]
    # every response names the request it answers (requestId), which was permitted before it
    reqs = {x["s"]: x for x in box.history() if x.get("k") == 0}
    for x in recs:
        q = x.get("q")
        assert q is not None and q < x["s"] and reqs[q]["i"] == x["i"], x
    # builtins and commands alike; a refused cat has no response
    progs = [x["i"]["program"] for x in recs]
    assert progs.count("cat") == 1 and "test" in progs


def test_background_job_status(box):
    box.write_config()
    box.seed_policy(extra=TESTED)
    box.start()
    r = box.bash("test -f src/main.rs & wait; cat src/main.rs")
    assert r.returncode == 0 and "fn main" in r.stdout, r.stderr
    assert [x["o"]["status"] for x in responses(box, "shell:exec") if x["i"]["program"] == "test"] == [0]


def test_status_survives_restart(box):
    box.write_config()
    box.seed_policy(extra=TESTED)
    box.start()
    assert box.bash("test -d src").returncode == 0
    box.stop()
    sock = box.box_dir / "run" / "box.sock"
    if sock.exists():
        sock.unlink()
    box.start()
    r = box.bash("cat src/main.rs")
    assert r.returncode == 0, r.stderr


@pytest.fixture
def server():
    srv = CountingServer((SERVER_ADDR, 0))
    yield srv
    srv.close()


def start_gateway(box, server, permits):
    """Starts box with the gateway, permits and a stop on /echo after an
    upstream's 503 in its policy; returns the test server's base URL."""
    box.write_config(extra=gateway_config())
    box.seed_policy(extra=textwrap.dedent(permits) + textwrap.dedent("""\
        @id("after-5xx")
        forbid(principal, action == Box::Action::"http:request", resource)
        when { context.input.path == "/echo" }
        when temporal { formerly within 1h Box::Action::"http:request"::response{ output.status: 503 } };
        """))
    box.start()
    return f"http://{SERVER_ADDR}:{server.port}"


def test_gateway_status_and_delivered_bytes(box, server):
    # §2.7's outbound byte budget (the sole http:request permit), and a stop after a 5xx
    base = start_gateway(box, server, """\
        permit(principal, action == Box::Action::"net:connect", resource);
        permit (principal, action == Box::Action::"http:request", resource)
        when temporal { exists (total: Long). ((sum b for (b: Long), (t: Timepoint). where (
          formerly within 60s (Box::Action::"http:request"::response{ input.host: _, input.body_bytes: b }
          && tp(t)))) == total && total < 100) };
        """)
    body = "x" * 60
    assert box.bash(f"curl -sS -d {body} {base}/status/201").returncode == 0
    assert box.bash(f"curl -sS -d {body} {base}/status/200").returncode == 0  # 60 < 100 delivered so far
    r = box.bash(f"curl -sS -d {body} {base}/status/200")  # 120 delivered: over budget
    assert r.returncode != 0
    recs = responses(box, "http:request")
    assert [(x["i"]["body_bytes"], x["i"]["intercepted"], x["o"].get("status")) for x in recs] == [
        (60, True, 201), (60, True, 200)]
    assert all("q" in x for x in recs)


def test_gateway_server_status_read(box, server):
    base = start_gateway(box, server, """\
        permit(principal, action == Box::Action::"net:connect", resource);
        permit(principal, action == Box::Action::"http:request", resource);
        """)
    assert box.bash(f"curl -sS {base}/echo").returncode == 0
    box.bash(f"curl -sS {base}/status/503")
    r = box.bash(f"curl -sS {base}/echo")
    assert r.returncode != 0 and "after-5xx" in r.stdout + r.stderr
    assert [x["o"].get("status") for x in responses(box, "http:request")] == [200, 503]


def test_unreported_status_is_minus_one(box):
    """A permitted command the client stopped reports no status: -1 (§2.3)."""
    import signal
    import subprocess
    import time
    box.write_config()
    box.seed_policy()
    box.start()
    p = subprocess.Popen([str(box.box_dir / "bin" / "bash"), "-c", "sleep 30"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=box.env(), cwd=str(box.workspace))
    deadline = time.time() + 10
    while time.time() < deadline and not any(
            r.get("k") == 0 and r["i"].get("program") == "sleep" for r in box.history()):
        time.sleep(0.02)
    p.send_signal(signal.SIGINT)
    assert p.wait(timeout=10) == 125
    p.communicate(timeout=10)
    deadline = time.time() + 10
    while time.time() < deadline and not responses(box, "shell:exec"):
        time.sleep(0.02)
    assert [(x["i"]["program"], x["o"]["status"]) for x in responses(box, "shell:exec")] == [("sleep", -1)]
