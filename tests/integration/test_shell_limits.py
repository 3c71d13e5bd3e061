"""The per-command wall clock comes from box.toml
(`[agent] shell_timeout`); a command that exceeds it ends with the Shell's
timeout status and message, and takes everything it started with it."""
import os
import subprocess
import time

from conftest import BOX_SHELL


def set_shell_timeout(box, value):
    box.write_config()
    text = box.config.read_text()
    assert "[tool.git]" in text
    box.config.write_text(text.replace("[tool.git]", f"shell_timeout = {value}\n\n[tool.git]", 1))


def worker_children():
    """Host PIDs of box-shell processes that are not the init of their PID
    namespace: what a running command forked (subshells, background jobs).
    A Python worker's runner waiting in the pool for its command (named
    box-runner until it comes, python_split.c) is none of those."""
    found = []
    target = str(BOX_SHELL.resolve())
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{entry}/exe") != target:
                continue
            with open(f"/proc/{entry}/status") as f:
                status = f.read().splitlines()
            if status[0].split()[1:] == ["box-runner"]:
                continue
            nspid = next(line for line in status if line.startswith("NSpid:")).split()[1:]
        except (OSError, StopIteration):
            continue
        if len(nspid) > 1 and nspid[-1] != "1":
            found.append(int(entry))
    return found


def test_a_one_second_limit_ends_a_busy_loop_and_its_jobs(box):
    set_shell_timeout(box, '"1s"')
    box.seed_policy()
    box.start()
    # a short command is unaffected
    r = box.bash("echo ok")
    assert (r.returncode, r.stdout, r.stderr) == (0, "ok\n", "")

    before = set(worker_children())
    t0 = time.monotonic()
    p = subprocess.Popen([str(box.box_dir / "bin" / "bash"), "-c",
                          "(while :; do :; done) & while :; do :; done; echo never"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=str(box.workspace), env=box.env())
    # the background job exists while the command runs
    seen = set()
    while p.poll() is None and time.monotonic() - t0 < 20:
        seen |= set(worker_children()) - before
        time.sleep(0.05)
    out, err = p.communicate(timeout=20)
    elapsed = time.monotonic() - t0
    assert seen, "the background job never appeared"
    assert p.returncode == 124, (p.returncode, err)
    assert out == ""
    assert "strands-shell: execution timeout exceeded" in err
    assert 0.9 <= elapsed < 10, elapsed
    # nothing the command started survives it
    deadline = time.time() + 5
    while set(worker_children()) & seen and time.time() < deadline:
        time.sleep(0.05)
    assert not set(worker_children()) & seen

    # the box keeps serving
    r = box.bash("echo still")
    assert (r.returncode, r.stdout) == (0, "still\n")


def test_a_bad_shell_timeout_stops_the_box_naming_file_and_key(box):
    set_shell_timeout(box, '"soon"')
    box.seed_policy()
    box.start(wait_socket=False)
    assert box.wait(timeout=30) != 0
    err = box.stderr()
    assert str(box.config) in err and "`agent.shell_timeout`" in err, err
    assert "expected a duration" in err, err
