"""History rules through real boxes: budgets and preconditions
that hold across a restart of `box run`, and a history that survives
SIGKILL of boxd with every answered decision in it."""
import json
import re
import os
import signal
import subprocess
import textwrap
import time

from conftest import git, host_mounts, permissive_box


def write_config(box, tools):
    """box.toml with the given [tool.*] tables: name -> writable dirs."""
    text = textwrap.dedent(f"""\
        name = "test"
        box_dir = "{box.box_dir}"
        policy = "policy.dw"

        [agent]
        command = ["/bin/sleep", "600"]
        workspace = "{box.workspace}"
        """)
    for name, writable in tools.items():
        dirs = ", ".join(json.dumps(str(d)) for d in writable)
        text += f'\n[tool.{name}]\ncommand = ["{name}"]\nfilesystem.write = [{dirs}]\n'
    box.config.write_text(text)


def base_policy(box):
    return f"""\
        permit(principal, action == Box::Action::"shell:exec", resource);
        permit(principal, action in [Box::Action::"fs:read", Box::Action::"fs:write", Box::Action::"fs:delete",
          Box::Action::"fs:move"], resource);
        permit(principal, action == Box::Action::"shell:spawn", resource)
        when {{ context.input.program == "git" || context.input.program == "make" }};
        """


def restart(box):
    box.stop()
    sock = box.box_dir / "run" / "box.sock"
    if sock.exists():  # start() waits for a fresh socket
        sock.unlink()
    box.start()


def test_push_budget_across_restart(box):
    remote = box.root / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    git("remote", "add", "origin", str(remote), cwd=box.workspace)
    write_config(box, {"git": [box.workspace, remote]})
    box.write_policy(base_policy(box) + """\
        @id("push-budget") @description("At most 3 pushes an hour.")
        forbid (principal, action == Box::Action::"shell:spawn", resource)
        when { context.input.program == "git" && context.input has arg1 && context.input.arg1 == "push" }
        when temporal { (count for (t: Timepoint). where formerly within 1h (
          Box::Action::"shell:spawn"::request{ input.program: "git", input.arg1: "push" } && tp(t))) > 3 };
        """)
    box.start()
    for i in range(3):
        r = box.bash("git push -q origin HEAD:main")
        assert r.returncode == 0, r.stderr
    r = box.bash("git push -q origin HEAD:main")
    assert r.returncode == 126
    assert "[policy: push-budget]: At most 3 pushes an hour." in r.stderr
    # other git commands are not counted
    assert box.bash("git status --short").returncode == 0
    restart(box)
    r = box.bash("git push -q origin HEAD:main")
    assert r.returncode == 126, r.stderr
    assert "push-budget" in r.stderr
    recs = box.history()
    pushes = [r for r in recs if r.get("a") == "shell:spawn" and r.get("k") == 0
              and r["i"].get("arg1") == "push"]
    assert len(pushes) == 5
    # a permitted spawn's response carries its status
    statuses = [r["o"]["status"] for r in recs if r.get("k") == 1 and r["i"].get("arg1") == "push"]
    assert statuses == [0, 0, 0]


def test_commit_only_after_passing_tests_across_restart(box):
    git("config", "user.name", "t", cwd=box.workspace)
    git("config", "user.email", "t@t", cwd=box.workspace)
    (box.workspace / "Makefile").write_text("test:\n\ttest -f ok\n")
    write_config(box, {"git": [box.workspace], "make": [box.workspace]})
    box.write_policy(base_policy(box) + """\
        @id("tests-first")
        forbid (principal, action == Box::Action::"shell:spawn", resource)
        when { context.input.program == "git" && context.input has arg1 && context.input.arg1 == "commit" }
        unless temporal { formerly within 10m (Box::Action::"shell:spawn"::response{
          input.program: "make", input.arg1: "test", output.status: 0 }) };
        """)
    box.start()
    assert box.bash("git commit -q --allow-empty -m one").returncode == 126
    r = box.bash("make test")
    assert r.returncode != 0  # `ok` is missing: make fails
    r = box.bash("git commit -q --allow-empty -m two")
    assert r.returncode == 126 and "tests-first" in r.stderr
    (box.workspace / "ok").write_text("")
    assert box.bash("make test").returncode == 0
    r = box.bash("git commit -q --allow-empty -m three")
    assert r.returncode == 0, r.stderr
    restart(box)
    r = box.bash("git commit -q --allow-empty -m four")
    assert r.returncode == 0, r.stderr
    log = subprocess.run(["git", "log", "--format=%s"], cwd=box.workspace, capture_output=True,
                         text=True, check=True).stdout.split()
    assert log[:2] == ["four", "three"] and "one" not in log and "two" not in log


COMMANDS = 5000


def test_sigkill_keeps_every_answered_decision(box):
    write_config(box, {})
    box.write_policy(base_policy(box) + """\
        forbid (principal, action == Box::Action::"shell:exec", resource)
        when { context.input.program == "rm" }
        when temporal { formerly within 1h Box::Action::"shell:exec"::request{ input.program: "echo", input.arg1: "never" } };
        """)
    mounts_before = host_mounts()
    box.start()
    # long enough that boxd is still deciding when the log shows 300 (a
    # loaded machine polled too late for a script of 1,000)
    script = "; ".join(f"echo n{i}" for i in range(COMMANDS))
    alias = subprocess.Popen([str(box.box_dir / "bin" / "bash"), "-c", script], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, cwd=str(box.workspace), env=box.env())
    # let a few hundred decisions through, then kill boxd mid-stream
    log = box.box_dir / "private" / "telemetry" / "records.jsonl"
    deadline = time.time() + 30
    while time.time() < deadline:
        if log.exists() and log.read_bytes().count(b'{"resourceLogs"') >= 300:  # one per decision (+ its span line)
            break
        time.sleep(0.005)
    box.proc.send_signal(signal.SIGKILL)
    box.proc.wait()
    out, _ = alias.communicate(timeout=30)
    answered_to_agent = {l for l in out.decode().split() if l.startswith("n")}
    # the decisions boxd answered: every one it logged after deciding
    logged = set()
    for d in box.decisions():
        if d["strands.box.policy.action"] == "shell:exec":
            logged.update(re.findall(r"\bn[0-9]+\b", json.dumps(d)))
    assert 300 <= len(logged) < COMMANDS, len(logged)
    assert answered_to_agent <= logged
    # clean up what the killed daemon left: its mount and its socket
    for line in host_mounts().splitlines():
        if "boxfs-mnt" in line and line not in mounts_before:
            subprocess.run(["umount", "-l", line.split()[4]], check=False)
    sock = box.box_dir / "run" / "box.sock"
    if sock.exists():
        sock.unlink()
    box.start()  # restart: recovery cuts any torn tail
    assert box.bash("echo after").returncode == 0
    recs = box.history()
    recorded = {r["i"]["arg1"] for r in recs if r.get("a") == "shell:exec" and r.get("k") == 0
                and r["i"].get("program") == "echo"}
    missing = logged - recorded
    assert not missing, f"{len(missing)} answered decisions lost, e.g. {sorted(missing)[:5]}"
    assert "after" in recorded


def history_flusher_wakeups(boxd_pid):
    """How often boxd's history flusher thread has gone to sleep and woken."""
    for tid in os.listdir(f"/proc/{boxd_pid}/task"):
        try:
            with open(f"/proc/{boxd_pid}/task/{tid}/comm") as f:
                if f.read().strip() != "box-history":
                    continue
            with open(f"/proc/{boxd_pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        return int(line.split()[1])
        except FileNotFoundError:
            continue
    raise AssertionError("boxd has no box-history thread")


def test_an_idle_box_s_history_flusher_sleeps_until_a_record_comes(tmp_path):
    """The flusher batches fdatasync 50 ms after a round's first record; with
    nothing written it waits for the next record, not for a clock, so an idle
    boxd is not woken 20 times a second."""
    b = permissive_box(tmp_path)
    try:
        assert b.bash("true").returncode == 0
        time.sleep(0.5)  # its rounds for that command's records are over
        before = history_flusher_wakeups(b.proc.pid)
        time.sleep(1.0)
        assert history_flusher_wakeups(b.proc.pid) - before <= 1
        # a record wakes it, and its round syncs the file
        records = (b.box_dir / "private" / "history.jsonl").read_text().count("\n")
        assert b.bash("true").returncode == 0
        deadline = time.monotonic() + 5
        while history_flusher_wakeups(b.proc.pid) == before and time.monotonic() < deadline:
            time.sleep(0.02)
        assert history_flusher_wakeups(b.proc.pid) > before
        assert (b.box_dir / "private" / "history.jsonl").read_text().count("\n") > records
    finally:
        b.teardown()
