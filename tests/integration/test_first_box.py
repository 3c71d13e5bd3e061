"""The first box, end to end (alias → boxd → Shell in the mount → policy → log)."""
import json
import os
import shutil
import signal
import subprocess
import time

from conftest import BOX, box_processes, host_mounts

SEED = "grep -n TODO src/main.rs > todo.txt && git add todo.txt"
DENIED_LINE = ("strands-shell: todo.txt: policy denied this operation on "
               "'~/src/project/todo.txt' [default-deny]: No permit policy matched this request.")


def git_path():
    return os.path.realpath(shutil.which("git"))


def staged(box):
    out = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=box.workspace,
                         capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_seed_example_runs_as_written(box):
    box.start_seeded()
    r = box.bash(SEED)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    assert (box.workspace / "todo.txt").read_text() == \
        "2:    // TODO: parse arguments\n4:    // TODO: handle errors\n"
    assert staged(box) == ["todo.txt"]
    assert box.decision_summary() == [
        ("permit", "shell:exec", "grep"),
        ("permit", "fs:write", "~/src/project/todo.txt"),
        ("permit", "fs:read", "~/src/project/src/main.rs"),
        ("permit", "shell:spawn", git_path()),
    ]
    d = box.decisions()
    assert d[0]["process.command"] == "grep"
    assert d[0]["process.command_args"] == {"values": [
        {"stringValue": "grep"}, {"stringValue": "-n"}, {"stringValue": "TODO"},
        {"stringValue": "src/main.rs"}]}
    assert d[0]["process.working_directory"] == str(box.workspace)
    assert d[1]["file.path"] == "~/src/project/todo.txt"
    assert all(x["strands.box.policy.principal"] == "agent:self" for x in d)
    assert box.stop() == 128 + signal.SIGTERM


def test_seed_example_without_fs_write(box):
    box.start_seeded(fs_write=False)
    r = box.bash(SEED)
    assert r.returncode == 1
    assert r.stderr == DENIED_LINE + "\n"
    assert not (box.workspace / "todo.txt").exists()
    assert staged(box) == []
    summary = box.decision_summary()
    assert ("deny", "fs:write", "~/src/project/todo.txt") in summary
    assert not any(a == "shell:spawn" for _, a, _ in summary)
    assert summary == [("permit", "shell:exec", "grep"), ("deny", "fs:write", "~/src/project/todo.txt")]
    deny = box.decisions()[1]
    assert deny["strands.box.policy.cause"] == "no_match"
    assert deny["strands.box.policy.rule"] == "<default-deny>"


def test_seed_as_the_agent_itself(box):
    """The agent runs `bash -c …` found on its PATH; box run exits with its status."""
    box.seed_policy()
    box.write_config(agent_command=["/bin/sh", "-c", f"bash -c '{SEED}' && echo agent-done"])
    assert box.run_to_end() == 0, box.stderr()
    assert (box.stdout_path).read_text() == "agent-done\n"
    assert staged(box) == ["todo.txt"]
    assert [a for _, a, _ in box.decision_summary()] == \
        ["shell:exec", "fs:write", "fs:read", "shell:spawn"]


def test_ram_tmp_lives_for_one_command_and_env_does_not_carry(box):
    box.start_seeded(extra="""
        permit(principal, action in [Box::Action::"fs:read", Box::Action::"fs:write"], resource)
        when { context.input.path like "/tmp/*" };
        """)
    name = f"/tmp/boxfs-ram-probe-{os.getpid()}-{time.time_ns()}"
    r = box.bash(f"echo hi > {name}; cat {name}")
    assert (r.returncode, r.stdout) == (0, "hi\n"), r.stderr
    r = box.bash(f"cat {name}")
    assert r.returncode == 1
    assert r.stdout == ""
    assert name in r.stderr
    # RAM never touched the host's /tmp.
    assert not os.path.exists(name)
    assert box.bash("export A=1").returncode == 0
    r = box.bash('echo "[$A]"')
    assert (r.returncode, r.stdout) == (0, "[]\n")


def test_forbid_with_id_and_description(box):
    box.start_seeded(extra="""
        @id("no-cat")
        @description("Reading with cat is not allowed.")
        forbid(principal, action == Box::Action::"shell:exec", resource)
        when { context.input.program == "cat" };
        """)
    r = box.bash("cat src/main.rs")
    assert r.returncode == 126
    assert r.stdout == ""
    assert r.stderr == ("strands-shell: effect denied: policy denied this operation on 'cat' "
                        "[policy: no-cat]: Reading with cat is not allowed.\n")
    d = box.decisions()[-1]
    assert d["strands.box.policy.verdict"] == "deny"
    assert d["strands.box.policy.cause"] == "forbidden"
    assert d["strands.box.policy.rule"] == "no-cat"
    assert d["strands.box.policy.description"] == "Reading with cat is not allowed."


def test_unknown_command_is_127(box):
    box.start_seeded()
    r = box.bash("no-such-program-xyz --flag")
    assert r.returncode == 127
    assert r.stderr == "strands-shell: no-such-program-xyz: command not found\n"
    assert box.decision_summary() == []


def test_spawn_denied_and_no_tool(box):
    box.seed_policy(extra="""
        permit(principal, action == Box::Action::"shell:spawn", resource)
        when { context.input.program == "tsort" };
        """)
    box.write_config(extra='\n[tool.pr]\ncommand = ["pr"]\n')
    box.start()
    # No table runs it: the message names the table to add, whether policy
    # would permit the spawn (tsort) or not (factor), and no spawn is asked.
    for prog in ("factor", "tsort"):
        r = box.bash(f"{prog} /dev/null")
        assert r.returncode == 126
        path = os.path.realpath(shutil.which(prog))
        assert r.stderr == (f"strands-shell: {prog}: no tool runs {path}: no `[tool.{prog}]` "
                            "table in box.toml runs this program; add one with command = "
                            f"[\"{prog}\"] to run it outside the Shell\n")
    assert not [d for d in box.decision_summary() if d[1] == "shell:spawn"]
    # A program a table runs is still policy's to refuse.
    r = box.bash("pr /dev/null")
    assert r.returncode == 126
    pr = os.path.realpath(shutil.which("pr"))
    assert r.stderr == (f"strands-shell: effect denied: policy denied this operation on '{pr}' "
                        "[default-deny]: No permit policy matched this request.\n")


def test_output_streams_and_status(box):
    box.start_seeded()
    r = box.bash("echo out; echo err 1>&2; false || echo recovered; exit 7")
    assert r.returncode == 7
    assert r.stdout == "out\nrecovered\n"
    assert r.stderr == "err\n"
    r = box.bash("grep -c TODO src/main.rs | cat")
    assert (r.returncode, r.stdout) == (0, "2\n"), r.stderr
    r = box.bash("cat", input="from stdin\n")
    assert (r.returncode, r.stdout) == (0, "from stdin\n"), r.stderr


def test_config_error_creates_nothing(box):
    box.seed_policy()
    box.write_config(extra="\n[agent.bogus]\nx = 1\n")
    r = subprocess.run([str(BOX), "run", "--config", str(box.config)], capture_output=True,
                       text=True, env=box.env())
    assert r.returncode == 1
    assert r.stderr.startswith(f"box: error: cannot parse config file {box.config}")
    assert "agent.bogus" in r.stderr
    assert not box.box_dir.exists()


def test_policy_that_will_not_load(box):
    box.write_policy("permit(principal, action, resource) when { context.input.path like };\n")
    box.write_config()
    r = subprocess.run([str(BOX), "run", "--config", str(box.config)], capture_output=True,
                       text=True, env=box.env())
    assert r.returncode == 1
    assert r.stderr.startswith(f"box: error: policy file {box.policy} will not load: ")
    assert "line 1, column" in r.stderr
    assert not box.box_dir.exists()


def test_second_run_on_same_box_dir_is_refused(box):
    box.start_seeded()
    r = subprocess.run([str(BOX), "run", "--config", str(box.config)], capture_output=True,
                       text=True, env=box.env(), timeout=30)
    assert r.returncode == 1
    assert "is already running, and one run owns a box at a time" in r.stderr
    assert box.bash("echo still-here").stdout == "still-here\n"


def test_box_dir_layout(box):
    box.start_seeded()
    assert sorted(os.listdir(box.box_dir)) == ["bin", "private", "run", "trust"]
    assert os.stat(box.box_dir).st_mode & 0o7777 == 0o700
    assert sorted(os.listdir(box.box_dir / "bin")) == ["bash", "python", "python3", "sh", "zsh"]
    assert (box.box_dir / "run" / "box.sock").exists()


def test_teardown_leaves_nothing(box):
    box.start_seeded()
    assert box.bash("echo warm").returncode == 0
    assert box_processes()
    assert box.stop(signal.SIGINT) == 128 + signal.SIGINT
    assert not (box.box_dir / "run" / "box.sock").exists()
    assert "boxfs-mnt" not in host_mounts()
    deadline = time.time() + 5
    while box_processes() and time.time() < deadline:
        time.sleep(0.05)
    assert box_processes() == []


def test_agent_killed_by_signal(box):
    box.seed_policy()
    box.write_config(agent_command=["/bin/sh", "-c", "kill -9 $$"])
    assert box.run_to_end() == 128 + 9
    assert not (box.box_dir / "run" / "box.sock").exists()
    deadline = time.time() + 5
    while box_processes() and time.time() < deadline:
        time.sleep(0.05)
    assert box_processes() == []
    assert "boxfs-mnt" not in host_mounts()


def test_agent_args_appended_and_env(box):
    box.seed_policy()
    box.write_config(agent_command=["/bin/sh", "-c", 'echo "$0 $1 $HOME $PWD $USER"; echo "$PATH"'])
    box2_status = subprocess.run(
        [str(BOX), "run", "--config", str(box.config), "--", "first", "second"],
        capture_output=True, text=True, env=box.env(), timeout=60)
    assert box2_status.returncode == 0, box2_status.stderr
    lines = box2_status.stdout.splitlines()
    assert lines[0] == f"first second {box.home} {box.workspace} strands-box"
    assert lines[1].startswith(f"{box.box_dir}/bin:")


def test_unplaced_caller_is_refused(box):
    """A process the mount cannot place in a command (here a host process that
    entered boxd's mount namespace: the agent is contained and never sees the
    mount) gets nothing through the mount."""
    script = r'''
mnt=$(grep -o '/[^ ]*/boxfs-mnt-[A-Za-z0-9]*' /proc/self/mountinfo | head -1)
[ -n "$mnt" ] || { echo "no mount"; exit 3; }
cat "$mnt/pass$HOME/src/project/src/main.rs" 2>/dev/null; echo "read=$?"
ls "$mnt/ram" >/dev/null 2>&1; echo "list=$?"
touch "$mnt/pass$HOME/src/project/planted" 2>/dev/null; echo "create=$?"
stat "$mnt" >/dev/null 2>&1; echo "root=$?"
'''
    box.start_seeded()
    # an ordinary user's boxd owns its mount namespace through its user one
    user = [] if os.geteuid() == 0 else ["-U", "--preserve-credentials"]
    r = subprocess.run(["nsenter", "-t", str(box.proc.pid), *user, "-m", "/bin/sh", "-c", script],
                       capture_output=True, text=True, env=box.env(), timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == "read=1\nlist=2\ncreate=1\nroot=0\n"
    assert not (box.workspace / "planted").exists()
    assert box.decision_summary() == []


def test_cd_is_a_change_dir_decision(box):
    box.start_seeded()
    r = box.bash("cd src && pwd && cat main.rs | grep -c TODO")
    assert (r.returncode, r.stdout) == (0, f"{box.workspace}/src\n2\n"), r.stderr
    assert box.decision_summary()[:2] == [("permit", "shell:exec", "cd"),
                                          ("permit", "fs:read", "~/src/project/src")]
    ops = [d.get("strands.box.policy.resource") for d in box.decisions()]
    assert "~/src/project/src/main.rs" in ops


def test_read_denied_prints_policy_text(box):
    box.start_seeded(extra="""
        @id("no-main")
        @description("main.rs is off limits")
        forbid(principal, action == Box::Action::"fs:read", resource)
        when { context.input.path == "~/src/project/src/main.rs" };
        """)
    r = box.bash("cat src/main.rs; echo after")
    assert r.returncode == 0
    assert r.stdout == "after\n"
    assert r.stderr == ("cat: src/main.rs: policy denied this operation on "
                        "'~/src/project/src/main.rs' [policy: no-main]: main.rs is off limits.\n")
    assert box.decision_summary()[-2] == ("deny", "fs:read", "~/src/project/src/main.rs")


# Debian's own interpreter: the first python3 on PATH may be a shim.
SLEEPER = "/usr/bin/python3 -c 'import time; time.sleep(37)'"
SLEEPER_CMDLINE = b"/usr/bin/python3\x00-c\x00import time; time.sleep(37)\x00"


def sleep_processes():
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if open(f"/proc/{entry}/cmdline", "rb").read() == SLEEPER_CMDLINE:
                    out.append(int(entry))
            except OSError:
                pass
    return out


def test_signal_to_alias_ends_the_command_and_its_tool(box):
    box.seed_policy(extra="""
        permit(principal, action == Box::Action::"shell:spawn", resource)
        when { context.input.program == "/usr/bin/python3" };
        """)
    box.write_config(extra='\n[tool.python3]\ncommand = ["/usr/bin/python3"]\n')
    box.start()
    for sig in (signal.SIGINT, signal.SIGTERM):
        p = subprocess.Popen([str(box.box_dir / "bin" / "bash"), "-c", SLEEPER],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=box.env(),
                             cwd=str(box.workspace))
        deadline = time.time() + 10
        while not sleep_processes() and time.time() < deadline:
            time.sleep(0.02)
        assert sleep_processes(), "the tool never started"
        started = time.time()
        p.send_signal(sig)
        out, err = p.communicate(timeout=10)
        assert p.returncode == 125
        assert time.time() - started < 5
        deadline = time.time() + 5
        while sleep_processes() and time.time() < deadline:
            time.sleep(0.02)
        assert sleep_processes() == []
    # A builtin blocked on the alias's stdin ends the same way.
    p = subprocess.Popen([str(box.box_dir / "bin" / "bash"), "-c", "cat"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=box.env())
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    # Keep stdin open until the alias has exited: EOF would end `cat` too.
    assert p.wait(timeout=10) == 125
    p.communicate(timeout=10)
    assert box.bash("echo alive").stdout == "alive\n"


def test_shell_environment_is_exactly_the_spec(box):
    box.seed_policy()
    box.write_config(extra='\n[agent.env]\nSECRET_TOKEN = "do-not-leak"\n')
    box.start()
    r = box.bash("export")
    assert r.returncode == 0, r.stderr
    names = sorted(line.split()[2].split("=")[0] for line in r.stdout.splitlines())
    assert names == ["HOME", "PATH", "PWD", "USER"]
    r = box.bash('echo "$HOME|$PATH|$PWD|$USER|$SECRET_TOKEN"')
    assert r.stdout == f"{box.home}|/usr/bin:/bin|{box.workspace}|strands-box|\n"


def test_spawned_program_status_stdin_and_cwd(box):
    box.start_seeded()
    r = box.bash("git rev-parse --verify no-such-ref")
    assert r.returncode == 128
    assert "fatal:" in r.stderr
    # stdin of a spawned program is /dev/null, not the alias's stdin.
    r = box.bash("git hash-object --stdin", input="not read\n")
    assert (r.returncode, r.stdout) == (0, "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\n"), r.stderr
    # cwd is the Shell's cwd.
    r = box.bash("cd src && git rev-parse --show-prefix")
    assert (r.returncode, r.stdout) == (0, "src/\n"), r.stderr
    # output of a spawned program goes through the Shell's redirections.
    r = box.bash("git rev-parse --show-toplevel > top.txt && cat top.txt")
    assert (r.returncode, r.stdout) == (0, f"{box.workspace}\n"), r.stderr


def test_spawned_program_environment(box):
    """A tool sees the composed environment plus the Shell's exported variables
    and prefixes, never a name the box owns or a loader hook."""
    box.seed_policy(extra="""
        permit(principal, action == Box::Action::"shell:spawn", resource)
        when { context.input.program == "/usr/bin/python3" };
        """)
    box.write_config(extra='\n[tool.python3]\ncommand = ["/usr/bin/python3"]\n')
    box.start()
    show = "/usr/bin/python3 -c 'import os, json; print(json.dumps(dict(os.environ)))'"
    r = box.bash(f"export FOO=bar; NOT_EXPORTED=1; A=1 LD_PRELOAD=/x/evil.so USER=root {show}")
    assert r.returncode == 0, r.stderr
    env = json.loads(r.stdout)
    assert env["FOO"] == "bar"
    assert env["A"] == "1"
    assert "NOT_EXPORTED" not in env
    assert "LD_PRELOAD" not in env
    assert env["USER"] == "strands-box"
    assert env["HOME"] == str(box.home)
    # The table grants no path, so the Shell's cwd is not in its view.
    assert env["PWD"] == "/"
    assert env["HTTPS_PROXY"].startswith("http://127.0.0.1:")


def test_log_redacts_words_that_came_from_expansions(box):
    box.start_seeded()
    r = box.bash('T=hunter2; F=-n; L=--color=always; grep $F "$T" $L --count src/main.rs')
    assert r.returncode in (0, 1), r.stderr
    d = [x for x in box.decisions() if x["strands.box.policy.action"] == "shell:exec"][-1]
    words = [v["stringValue"] for v in d["process.command_args"]["values"]]
    assert words == ["grep", "-n", "<redacted>", "--color=<redacted>", "--count", "src/main.rs"]


def test_box_dir_is_the_runners_own_with_the_same_modes(box):
    """Root or an ordinary user (CI runs this file both ways): what the box
    keeps, and what its Shell writes, belongs to whoever ran it, with the
    same modes."""
    box.start_seeded()
    r = box.bash("echo hi > f.txt")
    assert r.returncode == 0, r.stderr
    status = box.stop()
    assert status == 128 + signal.SIGTERM, (status, box.stderr())
    modes = {}
    for top, dirs, files in os.walk(box.box_dir):
        for path in [top, *(os.path.join(top, f) for f in files)]:
            st = os.lstat(path)
            assert (st.st_uid, st.st_gid) == (os.geteuid(), os.getegid()), path
            rel = os.path.relpath(path, box.box_dir)
            if not rel.startswith("private/checkpoints.git/"):  # libgit2's own layout
                modes[rel] = st.st_mode & 0o7777
    assert modes == {
        "private/checkpoints.git": 0o755, "private/checkpoints.lock": 0o600, "private/stats": 0o600,
        ".": 0o700, "private": 0o700, "private/.lock": 0o600, "private/history.jsonl": 0o600,
        "private/box-id": 0o600, "private/telemetry": 0o700,
        "private/telemetry/records.jsonl": 0o600, "trust": 0o700, "trust/cert.pem": 0o644,
        "run": 0o700, "bin": 0o700, "bin/sh": 0o555, "bin/bash": 0o555, "bin/zsh": 0o555,
        "bin/python": 0o555, "bin/python3": 0o555}, box.stderr()
    st = os.stat(box.workspace / "f.txt")
    assert (st.st_uid, st.st_mode & 0o7777) == (os.geteuid(), 0o644)


def test_a_hung_teardown_still_clears_what_says_the_box_runs(box):
    """A teardown that hangs past its limit (held here by a test switch,
    with the mount still up) still ends the run, and private/live and the
    mount directories do not outlive it."""
    env = box.env
    box.env = lambda: {**env(), "BOXFS_TEST_TEARDOWN_STALL": "1"}
    box.start_seeded()
    assert box.bash("echo hi > f.txt").returncode == 0
    mountpoint = (box.box_dir / "private" / "mount-dirs").read_text().split("\n")[0]
    assert os.path.isdir(mountpoint)
    assert box.stop(timeout=40) == 128 + signal.SIGTERM, box.stderr()
    # the warning names the step that hung, for a teardown that hangs by itself
    assert "teardown took longer than 10 s (at the test's stall)" in box.stderr()
    left = sorted(p.name for p in (box.box_dir / "private").iterdir())
    assert "live" not in left and "mount-dirs" not in left, left
    assert not os.path.exists(mountpoint)
