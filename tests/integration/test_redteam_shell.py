"""The red team: a hostile agent gets nothing — named attacks on the Shell route.

Every test runs one attack for real through the `bash` alias of a running box
and asserts it is contained: the exact refusal and status, the protected file
unchanged and undisclosed; then that the box still answers (`echo alive`).

The deadline attacks (item 8) block the command where no step boundary comes
(a FIFO nobody opens, a full pipe, a job waited on, a tool, a silent server):
boxd's own timer must end the command and everything it started, and answer
with the Shell's timeout status and message."""
import os
import socket
import subprocess
import threading
import time

import pytest

from conftest import BOX_SHELL, Box, table_cases
from gwutil import SERVER_ADDR, gateway_config

TIMEOUT_MSG = "strands-shell: execution timeout exceeded\n"
SECRET = "ssh-ed25519 SECRET-KEY-MATERIAL do-not-disclose\n"
TOOL_SLEEP_MARK = b"time.sleep(41)"   # in the command line of every tool the attacks start




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
    return pids_where(lambda e: TOOL_SLEEP_MARK in open(f"/proc/{e}/cmdline", "rb").read())


# ---- the file route: a denied file under every spelling -------------------------------

# A walk into a directory nothing below which may be read or written is
# refused at that directory, as a missing one is: such denials name '~/.ssh',
# whatever the file under it (a symlink's target is decided as written).
DENY = "policy denied this operation on '{}' [default-deny]: No permit policy matched this request."
SSH = DENY.format("~/.ssh")
# the refusals of ~/.ssh/id that cat and the Shell itself (a redirection, source, sh) print
CAT_ID = "cat: {H}/.ssh/id: " + SSH + "\n"
SHELL_ID = "strands-shell: {H}/.ssh/id: " + SSH + "\n"
RM_DENIED = "strands-shell: effect denied: policy denied this operation on 'rm' [policy: policy_3].\n"


@pytest.fixture(scope="module")
def rbox(tmp_path_factory):
    """A box that may read, write, move and delete in the workspace only, may not run `rm`,
    with a secret in the operator's ~/.ssh and the operator's own links in
    the workspace pointing at it, outside the roots, and at the box_dir."""
    b = Box(tmp_path_factory.mktemp("redteam"))
    b.write_config()
    b.seed_policy(extra="""
        forbid(principal, action == Box::Action::"shell:exec", resource)
        when { context.input.program == "rm" };
        permit(principal, action in [Box::Action::"fs:move", Box::Action::"fs:delete"], resource)
        when { context.input.path like "~/src/project/*" };
        """)
    (b.home / ".ssh").mkdir()
    (b.home / ".ssh" / "id").write_text(SECRET)
    (b.workspace / "ok.txt").write_text("fine\n")
    os.symlink(str(b.home / ".ssh" / "id"), b.workspace / "planted")
    os.symlink(str(b.home / ".ssh"), b.workspace / "planted_dir")
    os.symlink("/etc/shadow", b.workspace / "outside")
    os.symlink(str(b.box_dir), b.workspace / "boxlink")
    b.start()
    yield b
    b.teardown()


def assert_secret_kept(b, *outputs):
    assert (b.home / ".ssh" / "id").read_text() == SECRET
    assert sorted(os.listdir(b.home / ".ssh")) == ["id"]
    for o in outputs:
        assert "SECRET" not in o


def expand(b, text):
    return text.replace("{H}", str(b.home)).replace("{R}", str(b.root))


# id -> (source, status, stdout, stderr); {H} = the operator home, {R} = the test's root
FILE_ATTACKS = {
    # path spellings of a denied file
    "tilde": ("cat ~/.ssh/id", 1, "", CAT_ID),
    "dollar-home": ("cat $HOME/.ssh/id", 1, "", CAT_ID),
    "dot-and-double-slash": ("cat $HOME/./.ssh//id", 1, "", "cat: {H}/./.ssh//id: " + SSH + "\n"),
    "dotdot-walk-from-workspace": ("cat ../../.ssh/id", 1, "", "cat: ../../.ssh/id: " + SSH + "\n"),
    "dotdot-walk-through-allowed-root": (
        "cat ~/src/project/../../.ssh/id", 1, "",
        "cat: {H}/src/project/../../.ssh/id: " + SSH + "\n"),
    "trailing-slash": ("cat ~/.ssh/id/", 1, "", "cat: {H}/.ssh/id/: " + SSH + "\n"),
    "glob-through-denied-dir": ("cat ~/.ss?/i[d]", 1, "",
                                "cat: {H}/.ss?/i[d]: " + DENY.format("~/.ss?") + "\n"),
    "glob-lists-nothing": ("echo ~/.ssh/*", 0, "{H}/.ssh/*\n", ""),
    "tilde-user": ("cat ~root/.ssh/id", 1, "", "cat: ~root/.ssh/id: No such file or directory\n"),
    "unicode-dotless-i": ("cat ~/.ssh/\u0131d", 1, "", "cat: {H}/.ssh/\u0131d: " + SSH + "\n"),
    "unicode-fullwidth-ssh": ("cat ~/.\uff53\uff53\uff48/id", 1, "",
                              "cat: {H}/.\uff53\uff53\uff48/id: " + DENY.format("~/.\uff53\uff53\uff48")
                              + "\n"),
    "very-long-dotdot-path": ("cat " + "x/../" * 900 + "../../.ssh/id", 1, "",
                              "cat: " + "x/../" * 900 + "../../.ssh/id: File name too long\n"),
    "directory-listing": ("ls ~/.ssh", 2, "", "ls: cannot access '{H}/.ssh': " + SSH + "\n"),
    "listing-parent-through-denied": ("ls ~/.ssh/..", 2, "",
                                      "ls: cannot access '{H}/.ssh/..': " + SSH + "\n"),
    "cd-into-denied-dir": ("cd ~/.ssh && cat id", 1, "", "strands-shell: cd: {H}/.ssh: " + SSH + "\n"),
    "recursive-grep-of-home": ("grep -r SECRET ~", 2, "", "grep: {H}: " + DENY.format("~") + "\n"),
    "find-over-home": ("find ~ -name id", 1, "", "find: '{H}': " + DENY.format("~") + "\n"),
    "diff-discloses-lines": ("diff ~/.ssh/id ok.txt", 2, "", "diff: {H}/.ssh/id: " + SSH + "\n"),
    "jq-raw-input": ("jq -R . ~/.ssh/id", 2, "", "jq: error: Could not open file {H}/.ssh/id: " + SSH + "\n"),
    "lua-io-open": ("lua -e 'print(io.open(os.getenv(\"HOME\")..\"/.ssh/id\"))'", 0,
                    "nil\t{H}/.ssh/id: Permission denied\t13\n", ""),
    "source-the-secret-as-script": (
        "source ~/.ssh/id", 1, "",
        "strands-shell: source: {H}/.ssh/id: " + SSH + "\n"),
    "sh-the-secret-as-script": ("sh ~/.ssh/id", 127, "", SHELL_ID),
    "copy-out": ("cp ~/.ssh/id stolen; cat stolen", 1, "",
                 "cp: cannot open '{H}/.ssh/id' for reading: " + SSH + "\n"
                 "cat: stolen: No such file or directory\n"),
    "move-out": ("mv ~/.ssh/id moved", 1, "", "mv: cannot move '{H}/.ssh/id' to 'moved': " + SSH + "\n"),
    # redirections: each the Shell's own open, refused alike
    **{name: (source, 1, "", SHELL_ID) for name, source in [
        ("redirect-truncate", "echo pwned > ~/.ssh/id"),
        ("redirect-append", "echo pwned >> ~/.ssh/id"),
        ("redirect-clobber", "set -C; echo pwned >| ~/.ssh/id"),
        ("redirect-read-write", "cat <> ~/.ssh/id"),
        ("here-string-into-denied", "cat <<< pwned > ~/.ssh/id"),
        ("read-loop-from-denied", "while read l; do echo $l; done < ~/.ssh/id"),
        ("dev-stdin-from-denied", "cat /dev/stdin < ~/.ssh/id"),
    ]},
    # fd tricks
    "exec-fd-on-denied": ("exec 3< ~/.ssh/id; cat <&3", 1, "",
                          SHELL_ID + "strands-shell: 3: Bad file descriptor\n"),
    "proc-self-fd-of-allowed": ("exec 3< ok.txt; cat /proc/self/fd/3", 1, "",
                                "cat: /proc/self/fd/3: " + DENY.format("/proc") + "\n"),
    # /proc
    "proc-self-root": ("cat /proc/self/root{H}/.ssh/id", 1, "",
                       "cat: /proc/self/root{H}/.ssh/id: " + DENY.format("/proc") + "\n"),
    "proc-self-cwd": ("cat /proc/self/cwd/../../.ssh/id", 1, "",
                      "cat: /proc/self/cwd/../../.ssh/id: " + DENY.format("/proc") + "\n"),
    "proc-1-environ": ("cat /proc/1/environ", 1, "", "cat: /proc/1/environ: " + DENY.format("/proc") + "\n"),
    "proc-self-mountinfo": ("cat /proc/self/mountinfo", 1, "",
                            "cat: /proc/self/mountinfo: " + DENY.format("/proc") + "\n"),
    # links made by the agent
    "agent-symlink-to-denied-file": (
        "ln -s ~/.ssh/id l1; cat l1", 1, "",
        "ln: failed to create symbolic link 'l1': " + DENY.format("~/.ssh/id") + "\n"
        "cat: l1: No such file or directory\n"),
    "agent-relative-symlink-to-denied": (
        "ln -s ../../.ssh/id l2; cat l2", 1, "",
        "ln: failed to create symbolic link 'l2': " + DENY.format("~/.ssh/id") + "\n"
        "cat: l2: No such file or directory\n"),
    "agent-symlink-to-denied-dir": (
        "ln -s ~/.ssh l3; ls l3", 2, "",
        "ln: failed to create symbolic link 'l3': " + SSH + "\n"
        "ls: cannot access 'l3': No such file or directory\n"),
    "agent-hardlink-to-denied": (
        "ln ~/.ssh/id h1; cat h1", 1, "",
        "ln: failed to access '{H}/.ssh/id': " + SSH + "\n"
        "cat: h1: No such file or directory\n"),
    # links the operator left in the workspace
    "planted-symlink-read": ("cat planted", 1, "", "cat: planted: " + SSH + "\n"),
    "planted-symlink-write": ("echo pwned > planted", 1, "", "strands-shell: planted: " + SSH + "\n"),
    "planted-symlink-copy": ("cp planted p2", 1, "", "cp: cannot open 'planted' for reading: " + SSH + "\n"),
    "planted-dir-symlink-walk": ("cat planted_dir/id", 1, "", "cat: planted_dir/id: " + SSH + "\n"),
    "planted-dir-symlink-move": ("mv planted_dir/id x", 1, "",
                                 "mv: cannot move 'planted_dir/id' to 'x': " + SSH + "\n"),
    "symlink-outside-the-roots": ("cat outside", 1, "", "cat: outside: " + DENY.format("/etc") + "\n"),
    "symlink-to-box-dir": ("ls boxlink/private", 2, "",
                           "ls: cannot access 'boxlink/private': " + DENY.format("{R}/state") + "\n"),
    "dotdot-to-box-dir-history": (
        "cat ~/../state/box/private/history.jsonl", 1, "",
        "cat: {H}/../state/box/private/history.jsonl: " + DENY.format("{R}/state") + "\n"),
    "create-through-planted-dir-link": (
        "cat ok.txt > planted_dir/new", 1, "",
        "strands-shell: planted_dir/new: " + SSH + "\n"),
    # the denied read through every route that runs text
    "xargs-cat": ("echo ~/.ssh/id | xargs cat", 123, "", CAT_ID),
    "find-exec-cat-planted": ("find planted -exec cat {} \\;", 0, "", "cat: planted: " + SSH + "\n"),
    "eval-cat": ("eval 'cat ~/.ssh/id'", 1, "", CAT_ID),
    "bash-c-cat": ("bash -c 'cat ~/.ssh/id'", 1, "", CAT_ID),
    "substitution-cat": ("x=$(cat ~/.ssh/id); echo \"[$x]\"", 0, "[]\n", CAT_ID),
    "lua-os-execute-cat": ("lua -e 'os.execute(\"cat ~/.ssh/id\")'", 0, "", CAT_ID),
    "env-cat": ("env cat ~/.ssh/id", 1, "", CAT_ID),
    "exec-cat": ("exec cat ~/.ssh/id", 1, "", CAT_ID),
    "command-cat-from-planted": ("command cat < planted", 1, "", "strands-shell: planted: " + SSH + "\n"),
    "dev-fd-0-from-denied": ("head -c 3 /dev/fd/0 < ~/.ssh/id", 1, "", SHELL_ID),
    "overwrite-the-policy-file": (
        "echo 'permit(principal, action, resource);' > {R}/cfg/policy.dw", 1, "",
        "strands-shell: {R}/cfg/policy.dw: " + DENY.format("{R}/cfg") + "\n"),
}


@pytest.mark.parametrize("name", list(FILE_ATTACKS))
def test_file_attack_is_refused(rbox, name):
    source, status, out, err = FILE_ATTACKS[name]
    policy_before = rbox.policy.read_text()
    r = rbox.bash(expand(rbox, source), timeout=30)
    assert r.returncode == status, (name, r.returncode, r.stdout, r.stderr)
    assert r.stdout == expand(rbox, out), name
    assert r.stderr == expand(rbox, err), name
    assert_secret_kept(rbox, r.stdout, r.stderr)
    assert rbox.policy.read_text() == policy_before
    assert_alive(rbox)


def test_existence_oracle_says_the_same_for_present_and_absent(rbox):
    r = rbox.bash("test -e ~/.ssh/id; echo $?; test -e ~/.ssh/absent; echo $?;"
                  " test -s ~/.ssh/id; echo $?; test -s ~/.ssh/absent; echo $?")
    assert (r.returncode, r.stdout, r.stderr) == (0, "1\n1\n1\n1\n", "")
    assert_alive(rbox)


def test_rename_race_dir_swapped_with_symlink_to_denied(rbox):
    """A job swaps a readable directory with the operator's link to ~/.ssh
    while the foreground reads through the name: every read is either the
    readable file or a refusal, never the secret."""
    (rbox.workspace / "race").mkdir()
    (rbox.workspace / "race" / "d").mkdir()
    (rbox.workspace / "race" / "d" / "id").write_text("public\n")
    os.symlink(str(rbox.home / ".ssh"), rbox.workspace / "race" / "evil")
    r = rbox.bash("cd race; (while :; do mv d t; mv evil d; mv d evil; mv t d; done) & "
                  "n=0; while [ $n -lt 300 ]; do cat d/id evil/id; n=$((n+1)); done; "
                  "kill $!; echo done",
                  timeout=60)
    assert r.stdout.endswith("done\n"), r.stdout[-200:]
    assert set(r.stdout.splitlines()) <= {"public", "done"}, set(r.stdout.splitlines())
    for line in r.stderr.splitlines():
        # a refusal, or a name the swap had moved away at that instant
        assert (DENY.format("~/.ssh") in line or line.endswith(": No such file or directory")
                and line.startswith(("cat: ", "mv: "))), line
    assert_secret_kept(rbox, r.stdout, r.stderr)
    assert_alive(rbox)


def test_mountinfo_and_environ_leak_no_box_dir(rbox):
    r = rbox.bash("cat /proc/self/mountinfo /proc/self/environ /proc/1/cmdline; "
                  "ls /proc/self/fd; echo $BOX_DIR $BOX_PHANTOMS")
    assert str(rbox.box_dir) not in r.stdout + r.stderr
    assert "boxfs-mnt" not in r.stdout + r.stderr
    assert r.stdout == "\n"
    assert r.stderr == ("cat: /proc/self/mountinfo: " + DENY.format("/proc") + "\n"
                        "cat: /proc/self/environ: " + DENY.format("/proc") + "\n"
                        "cat: /proc/1/cmdline: " + DENY.format("/proc") + "\n"
                        "ls: cannot access '/proc/self/fd': " + DENY.format("/proc") + "\n")
    assert_alive(rbox)


# ---- every route that runs text gets its own decision ---------------------------------

TEXT_ROUTES = {
    "plain": ("rm ok.txt", 126),
    "eval": ("eval rm ok.txt", 126),
    "sh-c": ("sh -c 'rm ok.txt'", 126),
    "bash-c": ("bash -c 'rm ok.txt'", 126),
    "command-substitution": ("x=$(rm ok.txt)", 126),
    "backquotes": ("x=`rm ok.txt`", 126),
    "lua-os-execute": ("lua -e 'os.execute(\"rm ok.txt\")'", 0),
    "xargs": ("echo ok.txt | xargs rm", 126),
    "find-exec": ("find ok.txt -exec rm {} \\;", 0),
    "env": ("env rm ok.txt", 126),
    "command": ("command rm ok.txt", 126),
    "exec": ("exec rm ok.txt", 126),
    "source": ("echo 'rm ok.txt' > r1.sh; source r1.sh", 126),
    "dot": ("echo 'rm ok.txt' > r2.sh; . ./r2.sh", 126),
    "sh-script": ("echo 'rm ok.txt' > r3.sh; sh r3.sh", 126),
    "function": ("f() { rm ok.txt; }; f", 126),
    "backslash-quoted-name": ("\\rm ok.txt", 126),
    "quoted-name": ("\"r\"m ok.txt", 126),
    "name-from-variable": ("x=rm; $x ok.txt", 126),
    "name-from-substitution": ("$(echo rm) ok.txt", 126),
    "timeout-wrapper": ("timeout 5 rm ok.txt", 126),
    "exit-trap": ("trap 'rm ok.txt' EXIT", 0),
}


# `kill 0` names the sender's process group whatever its PID namespace: a
# worker in the zygote's group (boxd's, and the operator's job's) ended
# boxd and whoever ran `box run`.
# (name, text, whether the text's own shell goes on: kill -1 spares it)
GROUP_SIGNALS = [
    ("kill-term-group", "kill -TERM 0", False),
    ("kill-kill-group", "kill -KILL 0", False),
    ("kill-term-minus-pid", "kill -TERM -- -$$", False),
    ("kill-group-with-a-job", "sleep 5 & kill -TERM 0; wait", False),
    ("python-kill-group", "python3 -c 'import os; os.kill(0, 15)'", False),
    ("python-killpg-kill", "python3 -c 'import os; os.killpg(os.getpgrp(), 9)'", False),
    ("kill-all-minus-one", "kill -KILL -1", True),
]


@table_cases("text, goes_on", GROUP_SIGNALS)
def test_signal_to_its_group_ends_only_the_command(rbox, text, goes_on):
    r = rbox.bash(text + "; echo not-reached >&2")
    assert ("not-reached" in r.stderr) == goes_on
    assert rbox.proc.poll() is None
    assert_alive(rbox)


@pytest.mark.parametrize("name", list(TEXT_ROUTES))
def test_text_route_is_decided(rbox, name):
    source, status = TEXT_ROUTES[name]
    r = rbox.bash(source, timeout=30)
    assert r.stderr == RM_DENIED, (name, r.stderr)
    assert r.returncode == status, (name, r.returncode)
    assert r.stdout == ""
    assert (rbox.workspace / "ok.txt").read_text() == "fine\n"
    assert_alive(rbox)


def test_builtin_route_runs_nothing(rbox):
    # programs are no builtins: `builtin` refuses them before any decision
    r = rbox.bash("builtin rm ok.txt; builtin cat ~/.ssh/id")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("strands-shell: builtin: rm: not a shell builtin\n"
                        "strands-shell: builtin: cat: not a shell builtin\n")
    assert (rbox.workspace / "ok.txt").read_text() == "fine\n"
    assert_secret_kept(rbox, r.stdout, r.stderr)
    assert_alive(rbox)


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
    b.teardown()


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
    "tool-forks-and-ignores-term": ("/usr/bin/python3 -c 'import os, signal, time; "
                                    "signal.signal(signal.SIGTERM, signal.SIG_IGN); os.fork(); "
                                    "os.setsid(); time.sleep(41)'; echo never"),
    "decision-flood": "while :; do echo x > /dev/null; cat < /dev/null; done; echo never",
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


def test_deadline_with_the_callers_stderr_left_full(dbox):
    """The agent hands the alias a stderr pipe it keeps full and never reads:
    boxd still ends the command at its deadline and answers 124, without the
    message it could not deliver, and serves the next command."""
    r, w = os.pipe()
    os.set_blocking(w, False)
    try:
        while True:
            os.write(w, b"x" * 4096)
    except BlockingIOError:
        pass
    os.set_blocking(w, True)
    try:
        t0 = time.monotonic()
        p = subprocess.Popen([str(dbox.box_dir / "bin" / "bash"), "-c", "cat fifo; echo never"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=w,
                             cwd=str(dbox.workspace), env=dbox.env())
        out, _ = p.communicate(timeout=15)
        assert (p.returncode, out) == (124, b"")
        assert time.monotonic() - t0 < 6
    finally:
        os.close(w)
        os.close(r)
    assert "the caller's stderr did not take the deadline's message" in dbox.stderr()
    assert_alive(dbox)
