"""The red team, the agent's part: the agent process is hostile
code that may run any system call.  It talks to boxd only through the broker
socket (<box_dir>/run/box.sock, spec/runtime.md §4.2) and sees only its own
sandbox (§5.10).  Each test is one named attack run for real FROM the agent
process; it asserts the exact refusal (or that nothing changed, nothing
leaked), and that boxd still answers a normal `bash -c 'echo alive'` from the
agent afterwards.

One box serves the module: its agent is a small attack server (redteam_agent_probe.py)
that reads one attack name per line on its stdin, runs it, runs the alias
`bash -c 'echo alive'`, and prints one JSON line on its stdout.
"""
import hashlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from conftest import BOX, AcceptCounter, Box, host_mounts

SECRET = "rt-agent-real-secret-8d1f0c"
# boxd's descriptor limit: low enough that the agent's processes can hold more
# connections than boxd has descriptors without a storm of threads.
BOXD_NOFILE = 1024
HOST_ONLY = "rt-agent-host-only-value"

# the agent: an attack server, run from its own file inside the sandbox
AGENT = (Path(__file__).parent / "redteam_agent_probe.py").read_text()


class AgentBox(Box):
    """A box whose agent takes attacks on its stdin and answers on its stdout."""

    def env(self):
        return {**super().env(), "RT_SECRET": SECRET, "RT_HOST_ONLY": HOST_ONLY}

    def start_agent(self):
        self.proc = subprocess.Popen(
            ["prlimit", f"--nofile={BOXD_NOFILE}:{BOXD_NOFILE}", "--",
             str(BOX), "run", "--config", str(self.config)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=open(self.stderr_path, "wb"), env=self.env(),
            cwd=str(self.root))
        self.pending = b""

    def run_attack(self, name, args, timeout=240):
        self.proc.stdin.write((json.dumps({"name": name, "args": args}) + "\n").encode())
        self.proc.stdin.flush()
        fd = self.proc.stdout.fileno()
        deadline = time.time() + timeout
        while b"\n" not in self.pending:
            left = deadline - time.time()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise AssertionError(f"the agent never answered {name}: " + self.stderr()[-2000:])
            chunk = os.read(fd, 65536)
            if not chunk:
                raise AssertionError(f"the box ended during {name}: " + self.stderr()[-2000:])
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return json.loads(line)


class Listener(AcceptCounter):
    """Host loopback TCP and abstract AF_UNIX listeners nothing contained may reach."""

    def __init__(self):
        tcp = socket.socket()
        tcp.bind(("0.0.0.0", 0))
        tcp.listen(16)
        self.port = tcp.getsockname()[1]
        self.abstract = "\0boxfs-rt-agent-%d" % os.getpid()
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        unix.bind(self.abstract)
        unix.listen(16)
        super().__init__(tcp, unix)


def host_ips():
    out = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
    return [ip for ip in out if ":" not in ip][:3]


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def rt(tmp_path_factory):
    b = AgentBox(tmp_path_factory.mktemp("rt-agent"))
    probe = b.root / "probe"
    probe.mkdir()
    (probe / "agent.py").write_text(AGENT)
    b.seed_policy(extra="""
        permit(principal, action == Box::Action::"net:connect", resource);
        permit(principal, action == Box::Action::"http:request", resource);
        """)
    b.write_config(
        agent_command=["/usr/bin/python3", str(probe / "agent.py"), str(b.box_dir)],
        extra=textwrap.dedent(f"""
            [agent.filesystem]
            read = ["{probe}"]
            write = ["~/src/project"]
            exec = ["/usr/lib/python3.11"]

            [egress.api]
            destinations = ["api.example.com:443"]
            secret.ref = "env://RT_SECRET"
            """))
    listener = Listener()
    b.start_agent()
    try:
        deadline = time.time() + 20
        while not (b.box_dir / "run" / "box.sock").exists():
            assert b.proc.poll() is None and time.time() < deadline, b.stderr()
            time.sleep(0.05)
        first = b.run_attack("nothing", {})
        assert first["alive"] == [0, "alive\n", ""], (first, b.stderr())
        b.listener = listener
        b.args = {"ws": str(b.workspace), "config": str(b.config), "policy": str(b.policy),
                  "boxd": b.proc.pid, "port": listener.port, "abstract": listener.abstract,
                  "host_ips": host_ips(), "secret": SECRET, "host_only": HOST_ONLY,
                  "boxd_nofile": BOXD_NOFILE}
        yield b
    finally:
        status = b.proc.poll()
        if status is None:
            b.proc.stdin.close()  # the agent ends at EOF, and the box with it
            try:
                status = b.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                b.proc.send_signal(signal.SIGTERM)
                b.proc.wait(timeout=30)
        listener.close()
        assert "boxfs-mnt" not in host_mounts()
    # After every attack the box still ends as a box ends: with its agent's status.
    assert status == 0, b.stderr()[-2000:]


def attack(rt, name):
    got = rt.run_attack(name, rt.args)
    assert rt.proc.poll() is None, "boxd ended: " + rt.stderr()[-2000:]
    assert got["alive"] == [0, "alive\n", ""], (name, got)
    assert not (isinstance(got["result"], str) and got["result"].startswith("crashed")), \
        got["result"]
    return got["result"]


CUT = ["transport_error", "a frame was cut short or timed out"]
NOT_OBJECT = ["transport_error", "a frame is not a JSON object"]
STDIO = "a call's stdin, stdout and stderr must be files, pipes, sockets or character devices"
RUNNING = "at most 64 commands run at once in this box; this one was not started"
NEEDS = ["transport_error", "a frame needs a `program` number and a `frame_type`"]
# boxd's replies to a call whose command exited 0: the exit frame, then the end of the connection
EXITED = [{"version": 6, "program": 1, "frame_type": "exit", "body": {"status": 0}}, "closed"]


# ---- the broker socket, bad input ----

def test_frame_length_zero(rt):
    assert attack(rt, "frame_length_zero") == [NOT_OBJECT, "closed"]


@pytest.mark.parametrize("name", ["frame_length_over_max", "frame_length_max_u32"])
def test_frame_length_over_limit(rt, name):
    r = attack(rt, name)
    assert len(r) == 2 and r[1] == "closed", r
    assert r[0][0] == "transport_error" and "1048576" in r[0][1], r


def test_truncated_header(rt):
    assert attack(rt, "truncated_header") == [CUT, "closed"]


def test_truncated_body(rt):
    assert attack(rt, "truncated_body") == [CUT, "closed"]


def test_invalid_json(rt):
    assert attack(rt, "invalid_json") == [NOT_OBJECT, "closed"]


def test_json_not_an_object(rt):
    assert attack(rt, "json_not_object") == [[NOT_OBJECT, "closed"]] * 3


def test_deep_json(rt):
    assert attack(rt, "deep_json") == [[NOT_OBJECT, "closed"]] * 2


def test_nul_and_bad_utf8_in_source(rt):
    r = attack(rt, "nul_and_bad_utf8_in_source")
    assert r == {
        "nul": [[["transport_error", "a call's `source` contains a NUL character"], "closed"], "",
                False],
        "utf8": [[["transport_error", "a frame is not valid UTF-8"], "closed"], ""]}, r


def test_wrong_version(rt):
    assert attack(rt, "wrong_version") == [
        ["version_mismatch", "unsupported protocol version 5; this box speaks 6"], "closed"]


def test_unknown_frame_type(rt):
    assert attack(rt, "unknown_frame_type") == [
        [["transport_error", "a client may not send a `exit` frame"], "closed"],
        [["transport_error", "a client may not send a `launch_missiles` frame"], "closed"]]


def test_missing_fields(rt):
    assert attack(rt, "missing_fields") == [
        [NEEDS, "closed"],
        [["transport_error", "a frame carries no protocol version"], "closed"],
        [NEEDS, "closed"]]


def test_wrong_types(rt):
    assert attack(rt, "wrong_types") == [
        [["transport_error", "a frame carries no protocol version"], "closed"],
        [NEEDS, "closed"], [NEEDS, "closed"], [NEEDS, "closed"],
        [["transport_error", "a call frame needs a `source` string"], "closed"],
        [["transport_error", "this box serves only the shell and python modes"], "closed"]]


def test_unknown_frame_field(rt):
    assert attack(rt, "unknown_field") == [["transport_error", "unknown frame field `cwd`"],
                                           "closed"]


def test_call_without_open(rt):
    assert attack(rt, "call_without_open") == [
        ["transport_error", "transport program 1 is not open"], "closed"]


def test_second_open(rt):
    assert attack(rt, "second_open") == [
        ["over_budget", "this box serves one program per connection"], "closed"]


def test_call_without_fds(rt):
    assert attack(rt, "call_without_fds") == [
        ["transport_error", "a call frame must carry the caller's stdin, stdout and stderr"],
        "closed"]
    assert not (rt.workspace / "ran-without-fds").exists()


def test_call_with_too_many_fds(rt):
    r = attack(rt, "call_with_too_many_fds")
    for extra in ("5", "60"):
        # The call runs on the first three; boxd keeps none of the rest.
        assert r[extra] == {"replies": EXITED, "stdout": "many\n", "stderr": "",
                            "pipe": ""}, (extra, r[extra])


def test_descriptor_hoarding(rt):
    r = attack(rt, "descriptor_hoarding")
    assert r == {"sent_over_boxd_limit": True, "legit": [0, "legit\n", ""]}, r


def test_concurrent_calls(rt):
    r = attack(rt, "concurrent_calls")
    exit0 = json.dumps(EXITED)
    refused = json.dumps([["over_budget", RUNNING], "closed"])
    assert r == {"legit": [125, "", "box-alias: " + RUNNING + "\n"],
                 "outcomes": {exit0: 64, refused: 36}}, r


def test_call_fds_are_sockets(rt):
    r = attack(rt, "call_fds_are_sockets")
    assert r == {"replies": EXITED, "out": "via-socket\n"}, r


def test_call_fds_are_o_path(rt):
    r = attack(rt, "call_fds_are_o_path")
    assert r["target"] == "before\n", r
    assert r["replies"] == [
        ["transport_error", "the call's stdout is an O_PATH descriptor; " + STDIO],
        "closed"], r


def test_call_fds_are_proc(rt):
    r = attack(rt, "call_fds_are_proc")
    # Its own environment, read through its own descriptor: nothing it did
    # not hold already, and never the real secret.
    assert r["environ"][1] == "no secret", r
    assert r["walk"] == [[
        ["transport_error", "the call's stdin is a directory; " + STDIO],
        "closed"], ""], r


def test_directory_fd_as_stdin_walked_from_the_shell(rt):
    r = attack(rt, "directory_fd_as_stdio")
    refusal = [["transport_error", "the call's stdin is a directory; " + STDIO], "closed"]
    assert r == {"root": [refusal, ""], "workspace": [refusal, ""]}, r


def test_stdout_is_a_workspace_file(rt):
    r = attack(rt, "stdout_is_a_workspace_file")
    assert r == {"replies": EXITED, "file": "into-file\n"}, r


def test_alias_with_directory_stdin(rt):
    assert attack(rt, "alias_with_directory_stdin") == [
        125, "", "box-alias: the call's stdin is a directory; " + STDIO + "\n"]


def test_frame_flood(rt):
    r = attack(rt, "frame_flood")
    assert r == {"replies": EXITED, "stdout": "after-flood\n"}, r


def test_idle_connections_do_not_lock_out_the_alias(rt):
    r = attack(rt, "idle_connections")
    assert r == {"first": [["over_budget", "too many connections wait to send their request; "
                                           "this one waited longest"], "closed"],
                 "held_over_boxd_limit": True, "legit": [0, "legit\n", ""],
                 "legit_fast": True}, r


def test_slowloris(rt):
    r = attack(rt, "slowloris")
    assert r == {"given_up_within_30s": True, "replies": [CUT]}, r


def test_signal_for_another_program(rt):
    r = attack(rt, "signal_for_another_program")
    assert r == {"other": ["closed"], "replies": EXITED, "stdout": "done\n"}, r


def test_second_call_on_one_connection(rt):
    r = attack(rt, "second_call_on_one_connection")
    assert r == [EXITED, "first\n", False], r


# ---- the agent's sandbox ----

def test_read_box_private(rt):
    r = attack(rt, "read_box_private")
    assert r == {"/private/box-id": "ENOENT", "/private/history.jsonl": "ENOENT",
                 "/private/telemetry/records.jsonl": "ENOENT", "list": "bin,run,trust"}, r


def test_write_box_bin(rt):
    names = ("bash", "python", "python3", "sh", "zsh")
    before = {n: digest(rt.box_dir / "bin" / n) for n in names}
    r = attack(rt, "write_box_bin")
    assert r == {"append": "EACCES", "truncate": "EACCES", "create": "EROFS", "unlink": "EROFS",
                 "rename": "EROFS", "chmod": "EROFS"}, r
    assert {n: digest(rt.box_dir / "bin" / n) for n in names} == before
    assert sorted(os.listdir(rt.box_dir / "bin")) == list(names)


def test_replace_broker_socket(rt):
    before = sorted(os.listdir(rt.box_dir / "run"))
    r = attack(rt, "replace_broker_socket")
    # The socket is a bind mount of its own in the view: it can be neither
    # removed nor renamed; a new socket beside it lands in the view's own
    # scaffold, never in the real run directory.
    assert r == {"unlink": "EBUSY", "rename": "EBUSY", "bind": "ESCAPED"}, r
    assert sorted(os.listdir(rt.box_dir / "run")) == before
    assert "evil.sock" not in before


def test_open_config_and_policy(rt):
    r = attack(rt, "open_config_and_policy")
    assert set(r.values()) == {"ENOENT"}, r


def test_find_boxd_in_proc(rt):
    # The sandbox's PID 1 (boxd's reaper) shows boxd's arguments overwritten
    # with a neutral "box run", no path; boxd itself is in no namespace of
    # the agent's.  So no process names a box binary by its path.
    r = attack(rt, "find_boxd_in_proc")
    assert r == [], r


def test_signal_and_ptrace_boxd(rt):
    r = attack(rt, "signal_and_ptrace_boxd")
    # boxd's pid names nothing in the agent's PID namespace; ptrace is refused outright.
    assert r["ptrace"] == "EPERM", r
    assert set(r.values()) <= {"ESRCH", "EPERM"}, r


def test_boxd_proc_files(rt):
    r = attack(rt, "boxd_proc_files")
    boxd = rt.proc.pid
    for p, v in r.items():
        if p.startswith(f"/proc/{boxd}/"):
            assert v == "ENOENT", (p, v)
        else:
            assert v in ("EACCES", "EPERM") or (p == "/proc/1/fd/" and v == ""), (p, v)


def test_gateway_forged_headers(rt):
    r = attack(rt, "gateway_forged_headers")
    # An absolute URL or CONNECT to host loopback: the marked refusal; an
    # origin-form request naming it in Host: a plain 400, never forwarded.
    # The gateway asked for itself, in both forms: the same refusal.
    assert r == [["403", True], ["403", True], ["403", True], ["403", True], ["400", False]], r
    assert rt.listener.accepted == 0


def test_bypass_gateway(rt):
    r = attack(rt, "bypass_gateway")
    assert r.pop("gateway") == "connected"
    assert r.pop("abstract_unix") == "ECONNREFUSED"
    assert set(r.values()) <= {"ECONNREFUSED", "ENETUNREACH"}, r
    assert rt.listener.accepted == 0


def test_unshare_mount_setns(rt):
    r = attack(rt, "unshare_mount_setns")
    assert r.pop("setns_pid1_mnt") in ("EPERM", "EACCES")
    assert set(r.values()) == {"EPERM"}, r


def test_dangerous_syscalls(rt):
    r = attack(rt, "dangerous_syscalls")
    assert set(r.values()) == {"EPERM"}, r


def test_shell_sysctl(rt):
    before = open("/proc/sys/kernel/core_pattern").read()
    r = attack(rt, "shell_sysctl")
    deny = "policy denied this operation on '/proc' [default-deny]: No permit policy matched " \
           "this request.\n"
    assert r[1] == "" and r[2] == (
        "cat: /proc/sys/kernel/core_pattern: " + deny) * 2 + \
        "strands-shell: /proc/sys/kernel/core_pattern: " + deny + \
        "ls: cannot access '/proc': " + deny, r
    assert open("/proc/sys/kernel/core_pattern").read() == before


# The host's kernel settings: read-only, whatever the agent's uid (a tool's
# proc is mounted read-only as a whole, so that refusal comes first).
SYSCTL_REFUSED = "EROFS"


def test_devices_and_sysctls(rt):
    r = attack(rt, "devices_and_sysctls")
    assert r == {"/dev/fuse": "ENOENT", "/dev/kmsg": "ENOENT", "/dev/mem": "ENOENT",
                 "/dev/tty": "ENOENT", "/dev/sda": "ENOENT", "/sys/kernel/uevent_helper": "ENOENT",
                 "/proc/sys/kernel/core_pattern": SYSCTL_REFUSED,
                 "/proc/sys/kernel/panic": SYSCTL_REFUSED,
                 "/proc/sys/vm/drop_caches": SYSCTL_REFUSED,
                 "/proc/irq/default_smp_affinity": SYSCTL_REFUSED}, r


def test_sysctl_rewrite(rt):
    """Writing back what core_pattern holds (no change even if it worked):
    the agent runs as uid 0 when boxd does, and uid 0 needs no capability to
    write a sysctl; core_pattern names a program the host runs as root."""
    before = open("/proc/sys/kernel/core_pattern").read()
    r = attack(rt, "sysctl_rewrite_same")
    assert r["write"] == SYSCTL_REFUSED, r
    assert open("/proc/sys/kernel/core_pattern").read() == before


def test_capabilities(rt):
    r = attack(rt, "capabilities")
    zero = "0000000000000000"
    assert r == {"CapInh": zero, "CapPrm": zero, "CapEff": zero, "CapBnd": zero, "CapAmb": zero,
                 "NoNewPrivs": "1", "Seccomp": "2"}, r


def test_setuid_binaries(rt):
    # A setuid-root program planted in the workspace (the host's doing): the
    # writable workspace is noexec for the agent; the view itself holds none.
    shutil.copy("/usr/bin/id", rt.workspace / "suid-id")
    if os.geteuid() == 0:  # an ordinary user's own file is setuid root inside its box
        os.chown(rt.workspace / "suid-id", 0, 0)
    os.chmod(rt.workspace / "suid-id", 0o4755)
    (rt.workspace / "own-suid").write_text("#!/bin/sh\n")
    r = attack(rt, "setuid_binaries")
    assert r["found"] == [] and r["planted_mode"] == "0o4755" and r["planted"] == "EACCES", r
    # Setting the bit itself is harmless (noexec, no_new_privs) but must not error oddly.
    assert r["own_chmod"] in ("0o4755", "0o755", "EPERM"), r


def test_environment_leak(rt):
    r = attack(rt, "environment_leak")
    assert r == {"secret_anywhere": False, "phantom": "strands_box_<76>", "host_only": False,
                 "user": "strands-box"}, r


def test_shell_environment_leak(rt):
    r = attack(rt, "shell_environment_leak")
    assert r["secret_anywhere"] is False and r["first"] is True, r


def test_tiocsti(rt):
    assert attack(rt, "tiocsti") == {"0": "EPERM", "1": "EPERM", "2": "EPERM"}


def test_keyctl(rt):
    assert attack(rt, "keyctl") == {"keyctl_join": "EPERM", "keyctl_read_session": "EPERM",
                                    "add_key": "EPERM", "request_key": "EPERM"}


def test_box_control_files(rt):
    r = attack(rt, "box_control_files")
    assert r["root"] == "ENOENT" and r["reached"] == [] and r["fuse_mounts_seen"], r
    assert "rt-denied-A" not in json.dumps(r["b"]), r
    # A read its own denial back after B's: B's did not overwrite it.
    assert r["a"][1].endswith("\npolicy denied this operation on '~/rt-denied-A' [default-deny]: "
                              "No permit policy matched this request.") and \
        "rt-denied-B" not in r["a"][1], r
    assert r["b"][1].startswith("---\n") and "rt-denied-B" in r["b"][1], r
