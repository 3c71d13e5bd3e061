"""Issue 28: a hostile agent gets nothing — named attacks on the Shell route.

Every test runs one attack for real through the `bash` alias of a running box
and asserts it is contained: the exact refusal and status, the protected file
unchanged and undisclosed; then that the box still answers (`echo alive`).

The deadline attacks (item 8) block the command where no step boundary comes
(a FIFO nobody opens, a full pipe, a job waited on, a tool, a silent server):
boxd's own timer must end the command and everything it started, and answer
with the Shell's timeout status and message."""
import os
import signal
import socket
import subprocess
import threading
import time

import pytest

from conftest import BOX_SHELL, Box
from gwutil import SERVER_ADDR, gateway_config

TIMEOUT_MSG = "strands-shell: execution timeout exceeded\n"
SECRET = "ssh-ed25519 SECRET-KEY-MATERIAL do-not-disclose\n"
TOOL_SLEEP_CMDLINE = b"/usr/bin/python3\x00-c\x00import time; time.sleep(41)\x00"


def stop_box(b):
    if b.proc and b.proc.poll() is None:
        b.proc.send_signal(signal.SIGTERM)
        try:
            b.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            b.proc.kill()
            b.proc.wait()


def assert_alive(b):
    r = b.bash("echo alive", timeout=30)
    assert (r.returncode, r.stdout, r.stderr) == (0, "alive\n", "")


def pids_where(pred):
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if pred(entry):
                    out.append(int(entry))
            except OSError:
                pass
    return out


def worker_children():
    """Host PIDs of box-shell processes that are not the init of their PID
    namespace: what a running command forked (subshells, jobs, stages)."""
    target = str(BOX_SHELL.resolve())

    def pred(entry):
        if os.readlink(f"/proc/{entry}/exe") != target:
            return False
        with open(f"/proc/{entry}/status") as f:
            nspid = next(line for line in f if line.startswith("NSpid:")).split()[1:]
        return len(nspid) > 1 and nspid[-1] != "1"
    return pids_where(pred)


def tool_sleepers():
    return pids_where(lambda e: open(f"/proc/{e}/cmdline", "rb").read() == TOOL_SLEEP_CMDLINE)


# ---- the deadline (item 8) ------------------------------------------------------------


class SilentServer:
    """Accepts connections on SERVER_ADDR and never answers a byte."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind((SERVER_ADDR, 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.conns = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)

    def close(self):
        self.sock.close()
        for c in self.conns:
            c.close()


@pytest.fixture(scope="module")
def silent_server():
    s = SilentServer()
    yield s
    s.close()


@pytest.fixture(scope="module")
def dbox(tmp_path_factory):
    """A box whose commands get 2 s."""
    b = Box(tmp_path_factory.mktemp("deadline"))
    b.write_config(extra='\n[tool.python3]\ncommand = ["/usr/bin/python3"]\n' + gateway_config())
    text = b.config.read_text().replace("[tool.git]", 'shell_timeout = "2s"\n\n[tool.git]', 1)
    b.config.write_text(text)
    b.seed_policy(extra="""
        permit(principal, action == Box::Action::"shell:spawn", resource)
        when { context.input.program == "/usr/bin/python3" };
        permit(principal, action == Box::Action::"net:connect", resource);
        permit(principal, action == Box::Action::"http:request", resource);
        """)
    os.mkfifo(b.workspace / "fifo")
    b.start()
    yield b
    stop_box(b)


DEADLINE_ATTACKS = {
    "cat-fifo-nobody-opens": "cat fifo; echo never",
    "read-from-fifo": "read x < fifo; echo never",
    "builtin-sleep": "sleep 30; echo never",
    "lua-busy-loop": "lua -e 'while true do end'; echo never",
    "curl-silent-server": "curl -sS http://{addr}:{port}/; echo never",
    "write-to-full-pipe": "yes | { read x < fifo; }; echo never",
    "wait-on-blocked-job": "cat fifo & wait; echo never",
    "subshell-blocked-in-fifo": "( cat fifo ); echo never",
    "command-substitution-blocked": "x=$(cat fifo); echo never",
    "eval-blocked": "eval 'cat fifo'; echo never",
    "tool-sleeping-in-its-sandbox": "/usr/bin/python3 -c 'import time; time.sleep(41)'; echo never",
    "job-and-tool-together": ("/usr/bin/python3 -c 'import time; time.sleep(41)' & "
                              "cat fifo; echo never"),
    "trap-exit-blocks-after-timeout": "trap 'cat fifo' EXIT; sleep 30",
}


@pytest.mark.parametrize("name", list(DEADLINE_ATTACKS))
def test_deadline_ends_a_blocked_command(dbox, silent_server, name):
    source = DEADLINE_ATTACKS[name].replace("{addr}", SERVER_ADDR).replace("{port}", str(silent_server.port))
    before = set(worker_children())
    t0 = time.monotonic()
    p = subprocess.Popen([str(dbox.box_dir / "bin" / "bash"), "-c", source],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd=str(dbox.workspace), env=dbox.env())
    try:
        out, err = p.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        pytest.fail(f"{name}: the command outlived its 2 s deadline by 13 s")
    elapsed = time.monotonic() - t0
    assert (p.returncode, out, err) == (124, "", TIMEOUT_MSG), name
    assert 1.9 <= elapsed < 6, elapsed
    # nothing it started survives: no forked Shell process, no tool
    deadline = time.time() + 5
    while (set(worker_children()) - before or tool_sleepers()) and time.time() < deadline:
        time.sleep(0.05)
    assert set(worker_children()) - before == set()
    assert tool_sleepers() == []
    assert (dbox.workspace / "fifo").exists()
    assert_alive(dbox)


def test_box_shutdown_ends_an_in_flight_command_with_125(box):
    """A command still running when `box run` stops is answered 125 (boxd
    failed to serve it, spec/runtime.md §4.2), not the 137 of its kill."""
    box.write_config()
    box.seed_policy()
    os.mkfifo(box.workspace / "fifo")
    box.start()
    p = subprocess.Popen([str(box.box_dir / "bin" / "bash"), "-c", "cat fifo; echo never"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd=str(box.workspace), env=box.env())
    time.sleep(1)
    assert p.poll() is None, "the command ended before the box stopped"
    box.stop()
    out, err = p.communicate(timeout=20)
    assert (p.returncode, out, err) == (125, "", "")
