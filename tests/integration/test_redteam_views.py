"""A tool's view holds even when the agent takes a mount point away.

A view's masks (a `deny` entry, box state) and its nested read-only binds
sit on names of the box's mount.  When a lookup of such a name fails, the
kernel drops the name and detaches every mount on it, in every namespace:
so a Shell walk the policy refuses (`ls ~/vault/secretdir`) unmasks the denied
tree in a running tool's view, and in the prepared view the next launch
enters.  The mount therefore holds each tool to its view itself.  Each
attack: the tool starts, the agent walks the refused name while it runs
(or just before it starts), and the tool tries again."""
import json
import textwrap

import pytest

SPAWN = """
    permit(principal, action == Box::Action::"shell:spawn", resource)
    when { context.input.program_path like "/usr/bin/python3*" };
    """

# Runs each step now, then again after the agent's walk (a sleep).
PROBE = textwrap.dedent(r'''
    import json, os, sys, time
    H = os.path.expanduser("~")
    def steps():
        out = {}
        for name, f in STEPS:
            try:
                r = f()
                out[name] = "ok" if r is None else "ok:" + str(r)
            except OSError as e:
                out[name] = type(e).__name__
        return out
    STEPS = [
        ("read_secret", lambda: open(H + "/vault/secretdir/key.txt").read().strip()),
        ("list_secret", lambda: sorted(os.listdir(H + "/vault/secretdir"))),
        ("stat_secret", lambda: os.stat(H + "/vault/secretdir/key.txt").st_size),
        ("write_ro", lambda: open(H + "/src/ro/new.txt", "w").write("x")),
        ("overwrite_ro", lambda: open(H + "/src/ro/keep.txt", "w").write("x")),
        ("unlink_ro", lambda: os.unlink(H + "/src/ro/keep.txt")),
        ("rename_ro", lambda: os.rename(H + "/src/ro/keep.txt", H + "/src/moved.txt")),
        ("mkdir_ro", lambda: os.mkdir(H + "/src/ro/d")),
        ("symlink_ro", lambda: os.symlink("/x", H + "/src/ro/l")),
        ("write_rw", lambda: open(H + "/src/rw.txt", "w").write("x")),
    ]
    first = steps()
    time.sleep(float(sys.argv[1]))
    print(json.dumps([first, steps()]))
''')

EXPECT = {"read_secret": "FileNotFoundError", "list_secret": "ok:[]",
          "stat_secret": "FileNotFoundError", "write_ro": "OSError", "overwrite_ro": "OSError",
          "unlink_ro": "OSError", "rename_ro": "OSError", "mkdir_ro": "OSError",
          "symlink_ro": "OSError", "write_rw": "ok:1"}
# after the mask or bind is gone, the mount's own refusals (EACCES, EROFS)
AFTER = {**EXPECT, "read_secret": "PermissionError", "list_secret": "PermissionError",
         "stat_secret": "PermissionError"}


@pytest.fixture
def viewbox(box):
    h = box.home
    (h / "vault" / "secretdir").mkdir(parents=True)
    (h / "vault" / "secretdir" / "key.txt").write_text("SECRET-KEY\n")
    (h / "src" / "ro").mkdir(parents=True)
    (h / "src" / "ro" / "keep.txt").write_text("keep\n")
    box.write_config(extra=textwrap.dedent('''
        [tool.py]
        command = ["/usr/bin/python3"]
        filesystem.read = ["~/vault", "~/src/ro"]
        filesystem.write = ["~/src"]
        filesystem.deny = ["~/vault/secretdir"]
        '''))
    box.seed_policy(extra=SPAWN)
    (h / "src" / "project" / "probe.py").write_text(PROBE)
    b = box.start()
    yield b
    assert (h / "vault" / "secretdir" / "key.txt").read_text() == "SECRET-KEY\n"
    assert (h / "src" / "ro" / "keep.txt").read_text() == "keep\n"
    assert sorted(p.name for p in (h / "src" / "ro").iterdir()) == ["keep.txt"]


def outcomes(r):
    assert r.returncode == 0, r.stderr
    first, later = json.loads(r.stdout.splitlines()[0])
    # the refusals the view gives, either way: never the data
    for k in ("write_ro", "overwrite_ro", "unlink_ro", "rename_ro", "mkdir_ro", "symlink_ro"):
        for got in (first, later):
            if got[k] in ("PermissionError", "OSError"):
                got[k] = "OSError"
    return first, later


def test_walking_a_denied_tree_while_a_tool_runs_unmasks_nothing(viewbox):
    r = viewbox.bash("/usr/bin/python3 ~/src/project/probe.py 3 & sleep 1.5; "
                     "ls ~/vault/secretdir ~/src/ro 2>/dev/null; cat ~/vault/secretdir/key.txt 2>/dev/null; "
                     "wait")
    first, later = outcomes(r)
    assert first == EXPECT
    assert "SECRET-KEY" not in r.stdout
    assert later in (EXPECT, AFTER), later


def test_a_tool_launched_after_the_walk_enters_no_unmasked_view(viewbox):
    # the first launch prepares the view; the walk detaches its masks; the
    # next launch (within the prepared view's life) enters what is left
    r = viewbox.bash("/usr/bin/python3 ~/src/project/probe.py 0 >/dev/null; "
                     "ls ~/vault/secretdir ~/src/ro 2>/dev/null; sleep 1.2; ls ~/vault/secretdir 2>/dev/null; "
                     "/usr/bin/python3 ~/src/project/probe.py 0")
    first, later = outcomes(r)
    assert "SECRET-KEY" not in r.stdout
    assert first in (EXPECT, AFTER), first
    assert later in (EXPECT, AFTER), later


AGENT = textwrap.dedent(r'''
    import json, os, subprocess, sys, time
    box_dir, home, out = sys.argv[1], sys.argv[2], sys.argv[3]
    def read():
        try:
            return "ok:" + open(home + "/vault/secretdir/key.txt").read().strip()
        except OSError as e:
            return type(e).__name__
    first = read()
    walk = subprocess.run([box_dir + "/bin/bash", "-c", "ls ~/vault/secretdir; sleep 1.2; "
                           "ls ~/vault/secretdir"], capture_output=True, text=True)
    later = read()
    with open(out, "w") as f:
        json.dump([first, walk.returncode, later], f)
''')


def test_the_agent_cannot_unmask_its_own_view_through_the_shell(box):
    """The agent's own view masks ~/vault/secretdir inside its read grant;
    its Shell's refused walk of that name must not hand it the secret.
    (Held before the mount checked the reach too: the Shell's refusal here
    left the agent's mask in place; kept as a named attack.)"""
    h = box.home
    (h / "vault" / "secretdir").mkdir(parents=True)
    (h / "vault" / "secretdir" / "key.txt").write_text("SECRET-KEY\n")
    probe = box.root / "probe"
    probe.mkdir()
    (probe / "agent.py").write_text(AGENT)
    out = box.workspace / "agent-out.json"
    box.seed_policy()
    lists = {"read": [str(probe), "~/vault"], "write": ["~/src/project"],
             "exec": ["/usr/lib/python3.11"], "deny": ["~/vault/secretdir"]}
    argv = ["/usr/bin/python3", str(probe / "agent.py"), str(box.box_dir), str(h), str(out)]
    box.write_config(agent_command=argv, extra="\n[agent.filesystem]\n" + "".join(
        f"{k} = {json.dumps(v)}\n" for k, v in lists.items()))
    assert box.run_to_end(timeout=60) == 0, box.stderr()
    first, walked, later = json.loads(out.read_text())
    assert walked != 0  # the Shell's walk was refused
    assert first == "FileNotFoundError"
    assert later in ("FileNotFoundError", "PermissionError"), later
