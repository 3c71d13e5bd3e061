"""The alias: every accepted and refused form of spec/runtime.md §4.1, and a gone box."""
import os
import socket
import struct
import json
import subprocess

import pytest

USAGE = ("box-alias: Shell alias accepts only -c COMMAND, -lc COMMAND, -c -l COMMAND, "
         "or SCRIPT\n")


@pytest.fixture
def running(box):
    box.start_seeded()
    return box


@pytest.mark.parametrize("name", ["bash", "sh", "zsh"])
@pytest.mark.parametrize("form", [["-c"], ["-lc"], ["-c", "-l"], ["-l", "-c"], ["-c", "-c"]])
def test_accepted_forms(running, name, form):
    r = running.alias(*form, "echo ok; exit 3", name=name)
    assert (r.returncode, r.stdout, r.stderr) == (3, "ok\n", "")


@pytest.mark.parametrize("args", [[], ["-l", "-l", "echo"], ["-x", "echo"], ["-c"],
                                  ["-c", "echo", "extra"], ["-l"], ["a", "b"], ["-lc"],
                                  ["--", "x"], ["-c", "-l", "-c", "x"]])
def test_refused_forms(running, args):
    r = running.alias(*args)
    assert (r.returncode, r.stdout, r.stderr) == (125, "", USAGE)
    assert running.decision_summary() == []


def test_script_file(running, tmp_path):
    script = tmp_path / "job.sh"
    script.write_text("echo from-script\ngrep -c TODO src/main.rs\n")
    r = running.alias(str(script))
    assert (r.returncode, r.stdout, r.stderr) == (0, "from-script\n2\n", "")


def test_script_knows_its_path(running):
    """`bash scripts/x.sh` through the alias: $0 and ${BASH_SOURCE[0]} are the
    path as given, as in bash, so a script finds the files beside it."""
    d = running.workspace / "scripts"
    d.mkdir()
    (d / "data.txt").write_text("beside\n")
    (d / "x.sh").write_text(
        'echo "$0|${BASH_SOURCE[*]}|${BASH_LINENO[*]}|${FUNCNAME[*]}"\n'
        'here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"\n'
        'cat "$here/data.txt"\n'
        'f() { echo "${FUNCNAME[*]} ${BASH_SOURCE[*]}"; caller 0; }\n'
        'f\n')
    r = running.alias("scripts/x.sh")
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout == ("scripts/x.sh|scripts/x.sh|0|\n"
                        "beside\n"
                        "f main scripts/x.sh scripts/x.sh\n"
                        "5 main scripts/x.sh\n")
    # -c text is no script: bash's $0 and an empty stack
    r = running.bash('echo "$0|${BASH_SOURCE[*]}|${#BASH_SOURCE[@]}"')
    assert (r.returncode, r.stdout) == (0, "bash||0\n")


def test_script_too_big(running, tmp_path):
    script = tmp_path / "big.sh"
    script.write_text("#" * 65537)
    r = running.alias(str(script))
    assert r.returncode == 125
    assert r.stderr == f"box-alias: Shell script {script} is 65537 bytes; maximum is 65536\n"


def test_script_unreadable(running, tmp_path):
    missing = tmp_path / "missing.sh"
    r = running.alias(str(missing))
    assert r.returncode == 125
    assert r.stderr == f"box-alias: read Shell script {missing}: No such file or directory\n"


def test_invalid_utf8(running):
    r = subprocess.run([str(running.box_dir / "bin" / "bash"), "-c", b"echo \xff"],
                       capture_output=True, env=running.env())
    assert r.returncode == 125
    assert r.stderr == b"box-alias: Shell command is not valid UTF-8\n"


def test_alias_by_its_own_name(running):
    alias = running.box_dir / "bin" / "bash"
    own = running.root / "box-alias"
    os.link(alias, own)
    r = subprocess.run([str(own), "-c", "true"], capture_output=True, text=True)
    assert r.returncode == 125
    assert r.stderr.startswith("box-alias: box-alias is not an alias name")


def _reaches_the_box(argv, running, **kw):
    r = subprocess.run(argv, capture_output=True, text=True, env=running.env(), **kw)
    assert (r.returncode, r.stdout, r.stderr) == (4, f"{running.workspace}\n", ""), argv
    assert ("permit", "shell:exec", "pwd") in running.decision_summary()


# The alias finds its box beside the file it runs from, whatever path
# started it: a symlink elsewhere, a symlinked directory, a relative path
# or a PATH search all lead back to <box_dir>/bin.
def test_alias_through_a_symlink_elsewhere(running):
    other = running.root / "elsewhere"
    other.mkdir()
    (other / "bash").symlink_to(running.box_dir / "bin" / "bash")
    _reaches_the_box([str(other / "bash"), "-c", "pwd; exit 4"], running)


def test_alias_through_a_symlinked_directory(running):
    (running.root / "binlink").symlink_to(running.box_dir / "bin")
    _reaches_the_box([str(running.root / "binlink" / "bash"), "-c", "pwd; exit 4"], running)


def test_alias_by_a_relative_path(running):
    _reaches_the_box(["bin/bash", "-c", "pwd; exit 4"], running, cwd=str(running.box_dir))


def test_alias_found_on_path(running):
    env = running.env()
    env["PATH"] = f"{running.box_dir / 'bin'}:/usr/bin:/bin"
    r = subprocess.run(["sh", "-c", 'exec bash -c "pwd; exit 4"'], capture_output=True, text=True,
                       env=env)
    assert (r.returncode, r.stdout, r.stderr) == (4, f"{running.workspace}\n", "")


def test_one_invocation_is_one_command(running):
    assert running.bash("cd src; X=1; export Y=2").returncode == 0
    r = running.bash('pwd; echo "[$X][$Y]"')
    assert r.stdout == f"{running.workspace}\n[][]\n"


def test_a_command_that_never_waits_to_connect_or_send_reads_no_clock(running):
    """The alias's deadlines start when the socket first makes it wait: the
    first read of the clock faults in two vDSO pages, paid by every command
    while the usual connect and send never wait."""
    r = subprocess.run(["gdb", "-batch", "-nx", "-ex", "break clock_gettime", "-ex", "run",
                        "-ex", "info breakpoints", "--args",
                        str(running.box_dir / "bin" / "bash"), "-c", "exit 3"],
                       capture_output=True, text=True, env=running.env(), timeout=120)
    assert "exited with code 03" in r.stdout, r.stdout + r.stderr
    assert "already hit" not in r.stdout, r.stdout


def test_box_gone_gives_125(box):
    box.start_seeded()
    box.stop()
    r = box.bash("true")
    assert r.returncode == 125
    assert r.stderr.startswith("box-alias: connect to ")
    assert "run/box.sock" in r.stderr


def frame(obj):
    data = json.dumps(obj).encode()
    return struct.pack(">I", len(data)) + data


def read_frame(sock):
    head = b""
    while len(head) < 4:
        chunk = sock.recv(4 - len(head))
        if not chunk:
            return None
        head += chunk
    (n,) = struct.unpack(">I", head)
    body = b""
    while len(body) < n:
        body += sock.recv(n - len(body))
    return json.loads(body)


def test_broker_refuses_bad_frames(running):
    path = str(running.box_dir / "run" / "box.sock")
    cases = [
        (frame({"version": 5, "program": 1, "frame_type": "open", "body": {"mode": "shell"}}),
         "version_mismatch", "unsupported protocol version 5; this box speaks 6"),
        (frame({"version": 6, "program": 1, "frame_type": "open", "body": {"mode": "shell"},
                "extra": 1}), "transport_error", "unknown frame field `extra`"),
        (struct.pack(">I", 2 * 1024 * 1024), "transport_error",
         "a frame exceeds the 1048576-byte limit of this protocol"),
        (frame({"version": 6, "program": 2, "frame_type": "call", "body": {"source": "true"}}),
         "transport_error", "transport program 2 is not open"),
        (b"\x00\x00\x00\x03abc", "transport_error", "a frame is not a JSON object"),
    ]
    for data, kind, reason in cases:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        s.sendall(data)
        reply = read_frame(s)
        s.close()
        assert reply["frame_type"] == "denied", data
        assert reply["body"] == {"kind": kind, "reason": reason}
    # The box still serves after all that.
    assert running.bash("echo fine").stdout == "fine\n"
