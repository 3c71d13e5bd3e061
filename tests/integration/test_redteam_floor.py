"""The floors: a hostile agent gets nothing of the box's own state.

The layout an operator really writes (README): box_dir under the home
(~/.boxes/x), box.toml and the policy under ~/.config/box, and a policy
that lets the agent read, write, move and delete anything under ~ except
~/.ssh.  Every attack below runs for real through the alias (the Shell's
builtins and commands, Lua, a tool) and must be refused with the floor's
exact message, leave the protected object as it was, and leave boxd
answering the next command.  The box directory, the authority files and
every directory that holds them are guarded by identity (device, inode),
so neither a renamed ancestor nor a hard link reaches them.
"""
import hashlib
import os
import shlex
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from conftest import BUILD, Box, host_mounts, table_cases

TRUSTED = "resolves into trusted Box state, which no policy may open"
HOLDER = "holds trusted Box state, which no policy may move or change"
AUTHORITY = ("resolves to an authority source that this run loaded, which no policy may "
             "open or change")

BROAD_POLICY = """\
    permit(principal, action == Box::Action::"shell:exec", resource);
    permit(principal, action in [Box::Action::"fs:read", Box::Action::"fs:write",
                                 Box::Action::"fs:move", Box::Action::"fs:delete"], resource)
    when { context.input.path == "~" || context.input.path like "~/*" }
    unless { context.input.path == "~/.ssh" || context.input.path like "~/.ssh/*" };
    permit(principal, action == Box::Action::"shell:spawn", resource)
    when { context.input.program == "/usr/bin/python3" };
    """

EVIL = "#!/bin/sh\necho replaced\n"


class HomeBox(Box):
    """A box laid out as the README says: everything under the operator home."""

    def __init__(self, root: Path):
        super().__init__(root)
        self.box_dir = self.home / ".boxes" / "x"
        self.box_dir.parent.mkdir()
        self.cfg_dir = self.home / ".config" / "box"
        self.cfg_dir.mkdir(parents=True)
        self.config = self.cfg_dir / "box.toml"
        self.policy = self.cfg_dir / "policy.dw"
        (self.home / ".ssh").mkdir()
        (self.home / ".ssh" / "id").write_text("secret\n")
        (self.workspace / "evil").write_text(EVIL)
        self.write_config(extra=textwrap.dedent("""
            [tool.py]
            command = ["/usr/bin/python3"]
            filesystem.write = ["~/src/project"]
            """))
        self.write_policy(BROAD_POLICY)

    def alive(self):
        r = self.bash("echo alive")
        assert (r.returncode, r.stdout, r.stderr) == (0, "alive\n", "")


def stop(b):
    b.teardown()
    assert "boxfs-mnt" not in host_mounts()


@pytest.fixture
def hbox(tmp_path):
    b = HomeBox(tmp_path)
    yield b
    stop(b)


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One running box for the attacks that each must leave it untouched.
    Before it starts, the operator left hard links to the box's id file and
    to the policy in the workspace (links a run made before the floor knew
    better)."""
    b = HomeBox(tmp_path_factory.mktemp("floor"))
    b.start()
    os.link(b.box_dir / "private" / "box-id", b.workspace / "old-link")
    os.link(b.policy, b.workspace / "old-policy-link")
    b.stop()
    b.start()
    yield b
    stop(b)


def digest(p: Path):
    """What an object is: its identity, type and mode, and a file's bytes."""
    st = os.lstat(p)
    body = b""
    if os.path.isfile(p) and not os.path.islink(p):
        body = p.read_bytes()
    return (st.st_dev, st.st_ino, st.st_mode, hashlib.sha256(body).hexdigest())


def state(b):
    """Everything the attacks may not change (the logs grow with each
    command: their identity is compared, their bytes for a forged line)."""
    d = b.box_dir
    fixed = [b.home / ".boxes", d, d / "bin", d / "private", d / "run", d / "trust",
             d / "bin" / "zsh", d / "bin" / "bash", d / "bin" / "sh", d / "private" / "box-id",
             d / "trust" / "cert.pem", b.home / ".config", b.cfg_dir, b.config, b.policy]
    out = {str(p): digest(p) for p in fixed}
    for grows in [d / "private" / "telemetry" / "records.jsonl", d / "run" / "box.sock"]:
        st = os.lstat(grows)
        out[str(grows)] = (st.st_dev, st.st_ino, st.st_mode)
    return out


def forged(b):
    """Whether a line an attack writes landed in the box's logs (the log
    records the attack's text, inside a JSON line: a forged line is bare)."""
    d = b.box_dir / "private"
    for f in [d / "telemetry" / "records.jsonl", d / "history.jsonl"]:
        if f.exists() and b"FORGED" in f.read_bytes().split(b"\n"):
            return True
    return False


H = "~"
BOXES, BD, CFG = "~/.boxes", "~/.boxes/x", "~/.config/box"
LOG = BD + "/private/telemetry/records.jsonl"

# (id, shell text, the exact refusal line's tail "<spelled>: <reason>")
ATTACKS = [
    # the reproduction's first step, and every other way to move an ancestor
    ("mv-ancestor", "mv ~/.boxes ~/.m", f"{BOXES}: {HOLDER}"),
    ("mv-ancestor-into-workspace", "mv ~/.boxes ~/src/project/", f"{BOXES}: {HOLDER}"),
    ("mv-config-ancestor", "mv ~/.config ~/.c", f"~/.config: {AUTHORITY}"),
    ("mv-box-dir", "mv ~/.boxes/x ~/.boxes/y", f"{BD}: {TRUSTED}"),
    ("mv-config-dir", "mv ~/.config/box ~/.config/b", f"{CFG}: {AUTHORITY}"),
    ("rmdir-ancestor", "rmdir ~/.boxes", f"{BOXES}: {HOLDER}"),
    ("rm-rf-ancestor", "rm -rf ~/.boxes", f"{BD}: {TRUSTED}"),
    ("rm-rf-box-dir", "rm -rf ~/.boxes/x", f"{BD}: {TRUSTED}"),
    ("chmod-ancestor", "chmod 000 ~/.boxes", f"{BOXES}: {HOLDER}"),
    ("chmod-home", "chmod 0777 ~", f"{H}: {AUTHORITY}"),  # it holds both
    ("touch-ancestor", "touch ~/.boxes", f"{BOXES}: {HOLDER}"),
    ("chmod-box-dir", "chmod 0755 ~/.boxes/x", f"{BD}: {TRUSTED}"),
    # the box directory's contents, by their own paths
    ("ls-box-dir", "ls ~/.boxes/x", f"{BD}: {TRUSTED}"),
    ("cat-decision-log", "cat ~/.boxes/x/private/telemetry/records.jsonl", f"{LOG}: {TRUSTED}"),
    ("append-history", "echo FORGED >> ~/.boxes/x/private/history.jsonl",
     f"{BD}/private/history.jsonl: {TRUSTED}"),
    ("truncate-decision-log", ": > ~/.boxes/x/private/telemetry/records.jsonl", f"{LOG}: {TRUSTED}"),
    ("tee-decision-log", "echo FORGED | tee -a ~/.boxes/x/private/telemetry/records.jsonl",
     f"{LOG}: {TRUSTED}"),
    ("overwrite-alias", "printf '#!/bin/sh\\necho replaced\\n' > ~/.boxes/x/bin/zsh",
     f"{BD}/bin/zsh: {TRUSTED}"),
    ("cp-over-alias", "cp ~/src/project/evil ~/.boxes/x/bin/sh", f"{BD}/bin/sh: {TRUSTED}"),
    ("rm-alias", "rm -f ~/.boxes/x/bin/zsh", f"{BD}/bin/zsh: {TRUSTED}"),
    ("mv-over-alias", "mv ~/src/project/evil ~/.boxes/x/bin/bash", f"{BD}/bin/bash: {TRUSTED}"),
    ("sed-i-box-id", "sed -i s/box/xox/ ~/.boxes/x/private/box-id", f"{BD}/private/box-id: {TRUSTED}"),
    ("rm-socket", "rm -f ~/.boxes/x/run/box.sock", f"{BD}/run/box.sock: {TRUSTED}"),
    ("mv-socket", "mv ~/.boxes/x/run/box.sock ~/s", f"{BD}/run/box.sock: {TRUSTED}"),
    ("hardlink-out-of-box-dir", "ln ~/.boxes/x/private/box-id ~/src/project/id",
     f"{BD}/private/box-id: {TRUSTED}"),
    ("symlink-to-box-dir", "ln -s ~/.boxes/x ~/src/project/bx", f"{BD}: {TRUSTED}"),
    ("chmod-cert", "chmod 0666 ~/.boxes/x/trust/cert.pem", f"{BD}/trust/cert.pem: {TRUSTED}"),
    # a hard link the floor finds by identity, not by its path
    ("read-old-hardlink", "cat ~/src/project/old-link", f"~/src/project/old-link: {TRUSTED}"),
    ("write-old-hardlink", "echo FORGED > ~/src/project/old-link",
     f"~/src/project/old-link: {TRUSTED}"),
    # box.toml and the policy file
    ("cat-box-toml", "cat ~/.config/box/box.toml", f"{CFG}/box.toml: {AUTHORITY}"),
    ("overwrite-box-toml", "echo 'name = \"evil\"' > ~/.config/box/box.toml",
     f"{CFG}/box.toml: {AUTHORITY}"),
    ("mv-box-toml", "mv ~/.config/box/box.toml ~/t", f"{CFG}/box.toml: {AUTHORITY}"),
    ("rm-box-toml", "rm -f ~/.config/box/box.toml", f"{CFG}/box.toml: {AUTHORITY}"),
    ("hardlink-box-toml", "ln ~/.config/box/box.toml ~/src/project/t",
     f"{CFG}/box.toml: {AUTHORITY}"),
    ("touch-box-toml", "touch ~/.config/box/box.toml", f"{CFG}/box.toml: {AUTHORITY}"),
    ("chmod-policy", "chmod 0666 ~/.config/box/policy.dw", f"{CFG}/policy.dw: {AUTHORITY}"),
    ("sed-i-policy", "sed -i s/forbid/permit/ ~/.config/box/policy.dw",
     f"{CFG}/policy.dw: {AUTHORITY}"),
    ("tee-policy", "echo 'permit(principal, action, resource);' | tee -a ~/.config/box/policy.dw",
     f"{CFG}/policy.dw: {AUTHORITY}"),
    ("truncate-policy", ": > ~/.config/box/policy.dw", f"{CFG}/policy.dw: {AUTHORITY}"),
    ("cp-over-policy", "cp ~/src/project/evil ~/.config/box/policy.dw",
     f"{CFG}/policy.dw: {AUTHORITY}"),
    ("mv-over-box-toml", "mv ~/src/project/evil ~/.config/box/box.toml",
     f"{CFG}/box.toml: {AUTHORITY}"),
    ("symlink-over-policy",
     "ln -s ~/src/project/evil ~/src/project/l && mv ~/src/project/l ~/.config/box/policy.dw",
     f"{CFG}/policy.dw: {AUTHORITY}"),
]


# Lua's own calls reach the same floor; Lua reports the errno (its message
# names the path when the call has one), the log the floor's refusal.
# (id, Lua code, the path refused as policy spells it, Lua's error tail)
LUA_ATTACKS = [
    ("lua-rename-ancestor", 'assert(os.rename(H .. "/.boxes", H .. "/.m"))', BOXES,
     "Permission denied"),
    ("lua-rename-onto-ancestor", 'assert(os.rename(H .. "/empty", H .. "/.boxes"))', BOXES,
     "Permission denied"),
    ("lua-read-decision-log",
     'assert(io.open(H .. "/.boxes/x/private/telemetry/records.jsonl"))', LOG,
     "{home}/.boxes/x/private/telemetry/records.jsonl: Permission denied"),
    ("lua-write-alias", 'assert(io.open(H .. "/.boxes/x/bin/zsh", "w"))', BD + "/bin/zsh",
     "{home}/.boxes/x/bin/zsh: Permission denied"),
    ("lua-append-history", 'assert(io.open(H .. "/.boxes/x/private/history.jsonl", "a"))',
     BD + "/private/history.jsonl", "{home}/.boxes/x/private/history.jsonl: Permission denied"),
    ("lua-write-policy", 'assert(io.open(H .. "/.config/box/policy.dw", "a"))',
     CFG + "/policy.dw", "{home}/.config/box/policy.dw: Permission denied"),
    ("lua-remove-box-toml", 'assert(os.remove(H .. "/.config/box/box.toml"))',
     CFG + "/box.toml", "{home}/.config/box/box.toml: Permission denied"),
]


def floor_denied(b, spelled):
    """The floor's refusal of spelled is the effective decision in the log."""
    floor = [d for d in b.decisions()
             if d["strands.box.policy.rule"] == "enforcement:reach-floor"
             and d["strands.box.policy.resource"] == spelled]
    return bool(floor) and all(d["strands.box.policy.verdict"] == "deny" for d in floor)


@table_cases("text,refusal", ATTACKS)
def test_attack_is_refused(shared, text, refusal):
    b = shared
    before = state(b)
    r = b.bash(text)
    assert r.returncode != 0, (r.stdout, r.stderr)
    assert refusal in r.stderr, r.stderr
    assert state(b) == before
    assert not forged(b)
    assert floor_denied(b, refusal.split(": ", 1)[0])
    b.alive()


@table_cases("code,spelled,error", LUA_ATTACKS)
def test_lua_attack_is_refused(shared, code, spelled, error):
    b = shared
    (b.home / "empty").mkdir(exist_ok=True)
    before = state(b)
    r = b.bash("lua -e " + shlex.quote('local H = os.getenv("HOME") ' + code))
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert r.stderr.startswith("lua: (command line):1: " + error.format(home=b.home) + "\n"), \
        r.stderr
    assert state(b) == before
    assert not forged(b)
    assert floor_denied(b, spelled)
    b.alive()


# A tool's own calls raise no decision, but what its writable view holds of
# Box state by identity (the hard links left in the workspace) it may
# neither open nor change.  (id, the link, Python statement on it)
TOOL_ATTACKS = [
    ("tool-read-old-hardlink", "old-link", "open(LINK).read()"),
    ("tool-append-old-hardlink", "old-link", "open(LINK, 'a').write('FORGED\\n')"),
    ("tool-truncate-old-hardlink", "old-link", "os.truncate(LINK, 0)"),
    ("tool-chmod-old-hardlink", "old-link", "os.chmod(LINK, 0o666)"),
    ("tool-read-policy-hardlink", "old-policy-link", "open(LINK).read()"),
    ("tool-write-policy-hardlink", "old-policy-link",
     "open(LINK, 'w').write('permit(principal, action, resource);')"),
    ("tool-touch-policy-hardlink", "old-policy-link", "os.utime(LINK)"),
]


@table_cases("name,stmt", TOOL_ATTACKS)
def test_tool_attack_is_refused(shared, name, stmt):
    b = shared
    link = b.workspace / name
    assert os.path.samefile(b.workspace / "old-link", b.box_dir / "private" / "box-id")
    assert os.path.samefile(b.workspace / "old-policy-link", b.policy)
    (b.workspace / "tool_attack.py").write_text(textwrap.dedent(f"""\
        import errno, os
        LINK = "{link}"
        try:
            {stmt}
            print("done")
        except OSError as e:
            print(errno.errorcode[e.errno])
        """))
    before = state(b)
    r = b.bash("/usr/bin/python3 tool_attack.py")
    assert (r.returncode, r.stdout) == (0, "EACCES\n"), r.stderr
    assert state(b) == before
    assert not forged(b)
    b.alive()


def test_the_reproduction(hbox):
    """The reported escape: move the box directory's ancestor away, then
    read the log, forge history, replace the alias, and move it back."""
    b = hbox
    b.start()
    b.alive()
    alias_before = (b.box_dir / "bin" / "zsh").read_bytes()
    before = state(b)
    r = b.bash("mv ~/.boxes ~/.m && cat ~/.m/x/private/telemetry/records.jsonl; "
               "echo FORGED >> ~/.m/x/private/history.jsonl; "
               "printf '#!/bin/sh\\necho replaced\\n' > ~/.m/x/bin/zsh; mv ~/.m ~/.boxes")
    assert r.returncode != 0
    assert r.stdout == ""
    assert f"mv: cannot move '{b.home}/.boxes' to '{b.home}/.m': {BOXES}: {HOLDER}\n" in r.stderr
    assert (b.home / ".boxes" / "x").is_dir() and not (b.home / ".m").exists()
    assert (b.box_dir / "bin" / "zsh").read_bytes() == alias_before
    assert state(b) == before
    assert not forged(b)
    z = subprocess.run([str(b.box_dir / "bin" / "zsh"), "-c", "echo still-the-alias"],
                       capture_output=True, text=True, timeout=60, cwd=str(b.workspace),
                       env=b.env())
    assert (z.returncode, z.stdout) == (0, "still-the-alias\n")
    b.alive()


def test_tool_cannot_reach_box_dir(hbox):
    """A tool sees its bind views of the mount only: the Shell cannot move
    the box directory's ancestor into the tool's writable workspace, and the
    tool reaches the box directory by no path."""
    b = hbox
    b.start()
    r = b.bash("mv ~/.boxes ~/src/project/boxes")
    assert r.returncode != 0 and f"{BOXES}: {HOLDER}" in r.stderr, r.stderr
    (b.workspace / "probe.py").write_text(textwrap.dedent(f"""\
        import errno, os
        for p in ["{b.workspace}/boxes/x/private/box-id", "{b.box_dir}/private/box-id",
                  "{b.box_dir}/bin/zsh"]:
            try:
                open(p, "a").close()
                print("reached", p)
            except OSError as e:
                print(errno.errorcode[e.errno])
        # of box_dir, the view holds only trust/cert.pem (the CA the
        # gateway's variables name), bound from the host, read-only
        print(sorted(os.listdir("{b.box_dir}")), sorted(os.listdir("{b.box_dir}/trust")))
        for src, dst in [("{b.home}/.boxes", "{b.home}/.m"),
                         ("{b.home}/.boxes", "{b.workspace}/boxes")]:
            try:
                os.rename(src, dst)
                print("moved")
            except OSError as e:
                print(errno.errorcode[e.errno])
        """))
    r = b.bash("/usr/bin/python3 probe.py")
    assert r.returncode == 0, r.stderr
    # the first rename moves the view's own scaffolding (a directory of the
    # tool's private root), not the host's: the real one stays in place
    assert r.stdout.split("\n") == ["ENOENT"] * 3 + ["['trust'] ['cert.pem']", "moved", "EXDEV",
                                                    ""], r.stdout
    assert (b.home / ".boxes" / "x" / "private" / "box-id").exists()
    assert not (b.home / ".m").exists() and not (b.workspace / "boxes").exists()
    b.alive()


def alias_binary():
    return BUILD / "alias" / "box-alias"


def test_aliases_are_own_read_only_copies(hbox):
    """Never a hard link: rewriting one box's alias must not rewrite the
    binary the host runs."""
    b = hbox
    b.start()
    installed = os.stat(alias_binary())
    image = alias_binary().read_bytes()
    for name in ["zsh", "bash", "sh"]:
        st = os.lstat(b.box_dir / "bin" / name)
        assert (st.st_dev, st.st_ino) != (installed.st_dev, installed.st_ino)
        assert st.st_nlink == 1
        assert st.st_mode & 0o7777 == 0o555
        assert (b.box_dir / "bin" / name).read_bytes() == image
    b.alive()


@pytest.mark.parametrize("tamper", ["rewritten", "hard-link", "symlink"])
def test_tampered_alias_is_replaced_at_start(hbox, tamper):
    b = hbox
    b.start()
    b.stop()
    zsh = b.box_dir / "bin" / "zsh"
    decoy = b.root / "decoy"
    decoy.write_text(EVIL)
    os.chmod(decoy, 0o755)
    zsh.unlink()
    if tamper == "rewritten":
        zsh.write_text(EVIL)
        os.chmod(zsh, 0o555)
        why = "its contents differ from box-alias"
    elif tamper == "hard-link":
        # an ordinary user may not link the build's root-owned file
        # (protected_hardlinks): its own copy is as much another file
        source = alias_binary()
        if os.geteuid() != 0:
            source = b.root / "box-alias"
            shutil.copy(alias_binary(), source)
        os.link(source, zsh)
        why = "it is a hard link, so it is one file with another"
    else:
        os.symlink(decoy, zsh)
        why = "it is not a regular file"
    b.start()
    assert (f"box: warning: alias {zsh} was changed since Box installed it ({why}); "
            "installing a fresh copy of box-alias\n") in b.stderr()
    st = os.lstat(zsh)
    assert st.st_nlink == 1 and st.st_mode & 0o7777 == 0o555
    assert zsh.read_bytes() == alias_binary().read_bytes()
    assert decoy.read_text() == EVIL
    r = b.alias("-c", "echo alive", name="zsh")
    assert (r.returncode, r.stdout) == (0, "alive\n")


def test_a_freed_inode_number_is_not_box_state(hbox):
    """The floor guards what the box directory held at start by (device,
    inode); an object Box or the operator removes frees its number and the
    filesystem gives it to the next file made.  That file is not Box state:
    the Shell and a tool read it."""
    b = hbox
    b.start()
    b.stop()
    old = b.box_dir / "private" / "old-note"
    old.write_text("box state\n")
    b.start()
    number = os.lstat(old).st_ino
    old.unlink()
    made = []
    for i in range(64):
        f = b.box_dir / "private" / f"new-{i}"
        f.write_text("plain\n")
        made.append(f)
        if os.lstat(f).st_ino == number:
            break
    else:
        for f in made:
            f.unlink()
        pytest.skip("this filesystem gave the freed inode number to none of 64 new files")
    reused = b.workspace / "reused.txt"
    os.rename(made.pop(), reused)
    for f in made:
        f.unlink()
    assert os.lstat(reused).st_ino == number
    r = b.bash("cat ~/src/project/reused.txt")
    assert (r.returncode, r.stdout, r.stderr) == (0, "plain\n", "")
    r = b.bash("/usr/bin/python3 -c 'print(open(\"reused.txt\").read(), end=\"\")'")
    assert (r.returncode, r.stdout, r.stderr) == (0, "plain\n", "")
    b.alive()
