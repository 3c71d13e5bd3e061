"""Integration fixtures: real boxes (box run), real FUSE mounts, real aliases.

Each test gets a temporary operator home with a git workspace ~/src/project,
a box directory outside it, and a config + policy written from the test.
A box is started with `box run`; the agent is either a long sleeper (the
test then drives the aliases itself) or a script that is the test's agent.
"""
import json
import os
import select
import signal
import subprocess
import textwrap
import threading
import time
import zlib
from pathlib import Path

import pytest

from gwutil import servers, test_ca  # noqa: F401  (fixtures shared by the gateway tests)

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("BOXFS_BUILD", REPO / "build"))
BOX = BUILD / "box" / "box"
BOX_SHELL = BUILD / "box" / "box-shell"

MAIN_RS = textwrap.dedent("""\
    fn main() {
        // TODO: parse arguments
        println!("hello");
        // TODO: handle errors
    }
    """)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "root_only(reason): cannot work for an ordinary user (the reason says why); "
        "deselected when the suite runs unprivileged (CI's second run)")


def pytest_collection_modifyitems(config, items):
    """Run as an ordinary user, the root-only tests are left out, not skipped:
    CI counts a skip as a failure."""
    if os.geteuid() == 0:
        return
    kept = [i for i in items if not i.get_closest_marker("root_only")]
    left = [i for i in items if i.get_closest_marker("root_only")]
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


def table_cases(argnames, table):
    """Parametrizes a test over table, a list of tuples whose first item is
    the case's id and the rest its arguments (argnames, as parametrize takes
    them).  Two cases of one id are an error at collection."""
    ids = [c[0] for c in table]
    if len(set(ids)) != len(ids):
        raise ValueError(f"case ids repeated: {sorted({i for i in ids if ids.count(i) > 1})}")
    one = "," not in argnames
    return pytest.mark.parametrize(argnames, [c[1] if one else c[1:] for c in table],
                                   ids=[c[0] for c in table])


def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})


def host_mounts():
    with open("/proc/self/mountinfo") as f:
        return f.read()


def parent_of(pid):
    """The parent pid of pid, from /proc (OSError, ValueError or IndexError
    when pid is gone or its stat is cut short)."""
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def children_of(pid):
    """The pids whose parent is pid now, from /proc."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if parent_of(entry) == pid:
                    out.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    return out


def zygotes(boxd_pid):
    """{pid: argv} of boxd's box-shell zygotes."""
    found = {}
    for pid in children_of(boxd_pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if b"--zygote" in argv:
            found[pid] = argv
    return found


def box_processes():
    """PIDs of processes running this build's box or box-shell."""
    found = []
    targets = {str(BOX.resolve()), str(BOX_SHELL.resolve())}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            exe = os.readlink(f"/proc/{entry}/exe")
        except OSError:
            continue
        if exe in targets:
            found.append(int(entry))
    return found


class AcceptCounter:
    """Accepts, counts and closes what connects to listening sockets, on a
    thread of its own, until close(): the red-team tests' proof that nothing
    contained reached a host listener."""

    def __init__(self, *socks):
        self.socks = socks
        self.accepted = 0
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop:
            for s in select.select(self.socks, [], [], 0.2)[0]:
                try:
                    c, _ = s.accept()
                    self.accepted += 1
                    c.close()
                except OSError:
                    pass

    def close(self):
        self.stop = True
        self.thread.join()
        for s in self.socks:
            s.close()


class Box:
    def __init__(self, root: Path):
        self.root = root
        self.home = root / "home"
        self.workspace = self.home / "src" / "project"
        self.box_dir = root / "state" / "box"
        self.cfg_dir = root / "cfg"
        self.config = self.cfg_dir / "box.toml"
        self.policy = self.cfg_dir / "policy.dw"
        self.proc = None
        self.stderr_path = root / "box-run.stderr"
        self.stdout_path = root / "box-run.stdout"
        (self.workspace / "src").mkdir(parents=True)
        (root / "state").mkdir()
        self.cfg_dir.mkdir()
        (self.workspace / "src" / "main.rs").write_text(MAIN_RS)
        git("init", "-q", cwd=self.workspace)
        git("add", "src/main.rs", cwd=self.workspace)
        git("commit", "-q", "-m", "init", cwd=self.workspace)

    # ---- configuration ----
    def write_config(self, agent_command=None, extra=""):
        agent_command = agent_command or ["/bin/sleep", "600"]
        cmd = ", ".join(json.dumps(c) for c in agent_command)
        self.config.write_text(textwrap.dedent(f"""\
            name = "test"
            box_dir = "{self.box_dir}"
            policy = "policy.dw"

            [agent]
            command = [{cmd}]
            workspace = "{self.workspace}"

            [tool.git]
            command = ["git"]
            filesystem.write = ["~/src/project"]
            """) + extra)

    def write_policy(self, text):
        self.policy.write_text(textwrap.dedent(text))

    def seed_policy(self, fs_write=True, extra=""):
        actions = '[Box::Action::"fs:read", Box::Action::"fs:write"]' if fs_write \
            else '[Box::Action::"fs:read"]'
        self.write_policy(f"""\
            permit(principal, action == Box::Action::"shell:exec", resource)
            when {{ context.input.cwd == "{self.workspace}" || context.input.cwd like "{self.workspace}/*" }};
            permit(principal, action in {actions}, resource)
            when {{ context.input.path like "~/src/project/*" }};
            permit(principal, action == Box::Action::"shell:spawn", resource)
            when {{ context.input.program == "git" }};
            """ + textwrap.dedent(extra))

    def permit_spawn(self, *programs, extra=""):
        """The seed policy, and the Shell may spawn any of programs as a tool."""
        cond = " || ".join(f'context.input.program == "{p}"' for p in programs)
        self.seed_policy(extra=f"""
            permit(principal, action == Box::Action::"shell:spawn", resource)
            when {{ {cond} }};
            """ + extra)

    def start_with_tool(self, name, command, extra=""):
        """A box whose Shell may run one tool: [tool.<name>] runs command
        with the workspace writable."""
        self.permit_spawn(command, extra=extra)
        self.write_config(extra=f'\n[tool.{name}]\ncommand = ["{command}"]\n'
                                'filesystem.write = ["~/src/project"]\n')
        return self.start()

    def start_seeded(self, **policy):
        """The seed policy (seed_policy's arguments), the default config, and
        the box started: the set-up most tests begin with."""
        self.seed_policy(**policy)
        self.write_config()
        return self.start()

    # ---- running ----
    def env(self):
        env = {"HOME": str(self.home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
               "LANG": "C"}
        # the route of an ordinary user's mount, when a run chooses it
        if "BOXFS_MOUNT" in os.environ:
            env["BOXFS_MOUNT"] = os.environ["BOXFS_MOUNT"]
        return env

    def start(self, wait_socket=True, args=(), prefix=()):
        self.proc = subprocess.Popen(
            [*prefix, str(BOX), "run", "--config", str(self.config), *args],
            stdin=subprocess.DEVNULL, stdout=open(self.stdout_path, "wb"),
            stderr=open(self.stderr_path, "wb"), env=self.env(), cwd=str(self.root))
        if wait_socket:
            sock = self.box_dir / "run" / "box.sock"
            deadline = time.time() + 15
            while time.time() < deadline:
                if sock.exists():
                    return self
                if self.proc.poll() is not None:
                    raise AssertionError("box run exited early: " + self.stderr())
                time.sleep(0.02)
            raise AssertionError("box run never bound its socket: " + self.stderr())
        return self

    def run_to_end(self, timeout=60):
        self.start(wait_socket=False)
        return self.wait(timeout)

    def wait(self, timeout=60):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            return self.wait(timeout)
        return self.proc.returncode if self.proc else None

    def teardown(self):
        """Ends the box as a test's teardown does: TERM, then KILL after 20 s."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def stderr(self):
        return self.stderr_path.read_text(errors="replace") if self.stderr_path.exists() else ""

    def alias(self, *args, name="bash", input=None, timeout=60, cwd=None):
        return subprocess.run([str(self.box_dir / "bin" / name), *args], capture_output=True,
                              text=True, input=input, timeout=timeout,
                              cwd=str(cwd or self.workspace), env=self.env())

    def bash(self, source, **kw):
        return self.alias("-c", source, **kw)

    # ---- the decision log ----
    def decisions(self):
        path = self.box_dir / "private" / "telemetry" / "records.jsonl"
        if not path.exists():
            return []
        out = []
        # only whole lines: a record being written may show half of itself
        for line in path.read_text().split("\n")[:-1]:
            rec = json.loads(line)
            for rl in rec.get("resourceLogs", []):
                for sl in rl["scopeLogs"]:
                    if sl["scope"]["name"] != "strands-box.policy":
                        continue
                    for lr in sl["logRecords"]:
                        attrs = {}
                        for a in lr["attributes"]:
                            v = a["value"]
                            attrs[a["key"]] = next(iter(v.values())) if v else None
                        out.append(attrs)
        return out

    def history(self):
        """The policy history's records (private/history.jsonl) whose checksums hold."""
        path = self.box_dir / "private" / "history.jsonl"
        out = []
        for line in path.read_bytes().split(b"\n"):
            if len(line) > 9 and line[8:9] == b" " and int(line[:8], 16) == zlib.crc32(line[9:]):
                out.append(json.loads(line[9:]))
        return out

    def decision_summary(self):
        return [(d["strands.box.policy.verdict"], d["strands.box.policy.action"],
                 d["strands.box.policy.resource"]) for d in self.decisions()]


ALLOW_ALL = "permit(principal, action, resource);\n"
# A tool's /tmp is its command's RAM /tmp, decided as the Shell's is: a
# compiler's or a probe's temporary files need this as the Shell's would.
PERMIT_TMP = """
    permit(principal, action in [Box::Action::"fs:read", Box::Action::"fs:write",
                                 Box::Action::"fs:delete"], resource)
    when { context.input.path == "/tmp" || context.input.path like "/tmp/*" };
    """


def permissive_box(root: Path):
    """A box at root under a policy that permits everything, started: the
    comparisons that test the Shell, not the policy, run in one."""
    b = Box(root)
    b.write_policy(ALLOW_ALL)
    b.write_config()
    return b.start()


def module_box(fixture_name):
    """A module-scoped fixture called fixture_name: a permissive_box of its
    own, started once for the module's tests and torn down after them."""
    @pytest.fixture(scope="module", name=fixture_name)
    def started(tmp_path_factory):
        b = permissive_box(tmp_path_factory.mktemp(fixture_name))
        yield b
        b.teardown()
    return started


@pytest.fixture
def box(tmp_path):
    b = Box(tmp_path)
    yield b
    b.teardown()
    # Nothing of the box may outlive it.
    assert "boxfs-mnt" not in host_mounts()
