"""Disclosure: a hostile agent learns nothing of what policy hides.

Each test is one attack, run for real through the alias against a running box:
it asks about a path the policy refuses — its existence, its type, its
metadata, where a link in it points — through one route of the Shell
(program lookup, `test`, `ls`, globbing, `cd`, redirections, Lua, `cp`…).
The answer for a refused path that exists is compared with the answer for a
refused path that does not, spelled with the same length in the same refused
directory: status, stdout and stderr must be byte-identical once the one
differing name is replaced.  Each test then checks the expected answer itself
(so two identical crashes do not pass) and that boxd still answers.
"""
import os

import pytest

from conftest import BOX, BUILD, Box, host_mounts, table_cases

NAME = "<NAME>"
DENY = "policy denied this operation on '{}' [default-deny]: No permit policy matched this request."
SECRET = "s3cret-notes-content"


def layout(b):
    """The hidden tree: ~/secretdir and ~/.ssh are refused (the seed policy
    reads and writes only ~/src/project/*), ~/vault is where links point."""
    h = b.home
    sd = h / "secretdir"
    sd.mkdir()
    (sd / "deploy.sh").write_text("#!/bin/sh\necho LEAKED-deploy\n")
    os.chmod(sd / "deploy.sh", 0o755)
    (sd / "notes.txt").write_text(SECRET + "\n")
    (sd / "subdir").mkdir()
    vault = h / "vault"
    vault.mkdir()
    (vault / "launch.sh").write_text("#!/bin/sh\necho LEAKED-launch\n")
    os.chmod(vault / "launch.sh", 0o755)
    (vault / "agent-helper.sh").write_text("#!/bin/sh\necho LEAKED-helper\n")
    os.chmod(vault / "agent-helper.sh", 0o755)
    ssh = h / ".ssh"
    ssh.mkdir()
    (ssh / "id_rsa").write_text("PRIVATE KEY\n")
    (ssh / ".known").write_text("known\n")
    os.symlink(vault / "agent-helper.sh", ssh / "tool")
    os.symlink(vault / "launch.sh", b.workspace / "tool-link")
    os.symlink(vault / "absent.sh", b.workspace / "absn-link")


def mountpoint(b):
    return (b.box_dir / "private" / "mount-dirs").read_text().splitlines()[0]


def stop(b):
    """Ends the box; its mount (not another box's on this host) is gone."""
    mnt = mountpoint(b)
    b.stop()
    assert mnt not in host_mounts()


def start_hidden(b):
    b.write_config()
    b.seed_policy(extra="""
        permit(principal, action == Box::Action::"shell:spawn", resource)
        when { context.input.program == "git" };
        """)
    layout(b)
    return b.start()


@pytest.fixture(scope="module")
def hidden(tmp_path_factory):
    b = start_hidden(Box(tmp_path_factory.mktemp("disclosure")))
    yield b
    stop(b)


@pytest.fixture(scope="module")
def open_box(tmp_path_factory):
    """A policy that reads everything and spawns anything: only the floors
    and the lookup itself stand between the agent and boxd's host paths."""
    b = Box(tmp_path_factory.mktemp("disclosure-open"))
    host = b.root / "host-only"   # outside every root: in-memory in the agent's view
    host.mkdir()
    for name in ("hostprog", "hosttool"):
        (host / name).write_text(f"#!/bin/sh\necho ran {name}\n")
        os.chmod(host / name, 0o755)
    b.write_config(extra=f'\n[tool.hosttool]\ncommand = ["{host}/hosttool"]\n')
    b.write_policy("""\
        permit(principal, action == Box::Action::"shell:exec", resource);
        permit(principal, action == Box::Action::"shell:spawn", resource);
        permit(principal, action == Box::Action::"fs:read", resource);
        permit(principal, action in [Box::Action::"fs:write", Box::Action::"fs:delete"], resource)
        when { context.input.path like "~/src/project/*" };
        """)
    (b.workspace / "run.sh").write_text("#!/bin/sh\necho LEAKED-run\n")
    os.chmod(b.workspace / "run.sh", 0o755)
    b.start()
    yield b
    stop(b)


def alive(b):
    r = b.bash("echo alive")
    assert (r.returncode, r.stdout, r.stderr) == (0, "alive\n", "")


def answer(b, template, token):
    r = b.bash(template.replace("@", token))
    norm = lambda s: s.replace(token, NAME)  # noqa: E731
    return r.returncode, norm(r.stdout), norm(r.stderr)


def compare(b, template, present, absent):
    """The attack on an existing refused path and on an absent one of the
    same spelling length: the same answer, byte for byte, but for the name."""
    assert len(present) == len(absent)
    got = answer(b, template, present)
    want = answer(b, template, absent)
    assert got == want, f"{template!r}: {present!r} answers {got!r}, {absent!r} answers {want!r}"
    for leak in ("LEAKED", SECRET, "PRIVATE KEY", "vault", "launch.sh", "agent-helper", str(BUILD),
                 "boxfs-mnt"):
        if leak not in template:  # the agent's own spelling may be echoed
            assert leak not in got[1] + got[2], f"{template!r} leaks {leak!r}: {got!r}"
    alive(b)
    return got


def expect(b, got, status, out, err):
    h = str(b.home)
    assert got == (status, out.format(H=h, N=NAME), err.format(H=h, N=NAME))


# bash's words for a path word that names nothing: a refused one says the same
NOT_FOUND = "strands-shell: {path}: No such file or directory\n"


def missing(path):
    return NOT_FOUND.format(path=path)


# ---- program lookup -------------------------------------------------------

LOOKUP = [
    # id, template, present, absent, expected stderr
    ("program_path_named", "~/secretdir/@", "deploy.sh", "absent.sh",
     missing("{H}/secretdir/{N}")),
    ("program_relative", "../../secretdir/@", "deploy.sh", "absent.sh",
     missing("../../secretdir/{N}")),
    ("program_dotdot_through_workspace", "./src/../../../secretdir/@", "deploy.sh", "absent.sh",
     missing("./src/../../../secretdir/{N}")),
    ("program_dir_in_refused_dir", "~/secretdir/@", "subdir", "subdix",
     missing("{H}/secretdir/{N}")),
    ("program_symlink_under_ssh", "~/.ssh/@", "tool", "toox", missing("{H}/.ssh/{N}")),
    ("program_permitted_link_into_refused_dir", "./@", "tool-link", "absn-link",
     missing("./{N}")),
    ("program_command_builtin_runs_path", "command ~/secretdir/@", "deploy.sh", "absent.sh",
     missing("{H}/secretdir/{N}")),
    ("program_exec_builtin", "exec ~/secretdir/@", "deploy.sh", "absent.sh",
     missing("{H}/secretdir/{N}")),
    ("program_xargs_runs_path", "xargs ~/secretdir/@ < /dev/null", "deploy.sh", "absent.sh",
     missing("{H}/secretdir/{N}")),
    ("program_timeout_runs_path", "timeout 5 ~/secretdir/@", "deploy.sh", "absent.sh",
     missing("{H}/secretdir/{N}")),
    ("program_env_runs_path", "env ~/secretdir/@", "deploy.sh", "absent.sh",
     missing("{H}/secretdir/{N}")),
    ("program_eval", "eval ~/secretdir/@", "deploy.sh", "absent.sh",
     missing("{H}/secretdir/{N}")),
    ("program_from_substitution", "$(echo ~/secretdir/@)", "deploy.sh", "absent.sh",
     missing("{H}/secretdir/{N}")),
    ("program_in_pipeline", "echo hi | ~/secretdir/@", "deploy.sh", "absent.sh",
     missing("{H}/secretdir/{N}")),
    ("program_with_env_prefix", "A=1 ~/secretdir/@", "deploy.sh", "absent.sh",
     missing("{H}/secretdir/{N}")),
    ("program_trailing_slash", "~/secretdir/@/", "deploy.sh", "absent.sh",
     missing("{H}/secretdir/{N}/")),
    ("program_link_from_subdir", "cd src && ../@", "tool-link", "absn-link", missing("../{N}")),
]


@table_cases("template,present,absent,err", LOOKUP)
def test_program_lookup(hidden, template, present, absent, err):
    got = compare(hidden, template, present, absent)
    expect(hidden, got, 127, "", err)


def test_program_lookup_is_an_fs_read_decision(hidden):
    """The lookup of a path-named program is decided as a stat of it is:
    fs:read (read_metadata) on the path as the agent named it, logged."""
    r = hidden.bash("~/secretdir/deploy.sh")
    assert r.returncode == 127
    recs = [(d["strands.box.policy.verdict"], d["strands.box.policy.action"],
             d["strands.box.policy.resource"]) for d in hidden.decisions()]
    assert ("deny", "fs:read", "~/secretdir/deploy.sh") in recs
    assert not any(a == "shell:spawn" and "secretdir" in (res or "") for _, a, res in recs)
    alive(hidden)


def test_program_link_under_ssh_names_no_target(hidden):
    """A link in a refused dir is not read at all: its target appears
    nowhere, neither in the answer nor in the decision log."""
    r = hidden.bash("~/.ssh/tool")
    assert (r.returncode, r.stdout) == (127, "")
    assert r.stderr == f"strands-shell: {hidden.home}/.ssh/tool: No such file or directory\n"
    log = (hidden.box_dir / "private" / "telemetry" / "records.jsonl").read_text()
    assert "agent-helper" not in log
    alive(hidden)


PATHS = [
    ("path_var_prefix_refused_dir", "PATH=~/secretdir @; echo $?", "0", "127\n",
     "strands-shell: {N}: command not found\n"),
    ("path_exported_refused_dir", "export PATH=~/secretdir:$PATH; @; echo $?", "0", "127\n",
     "strands-shell: {N}: command not found\n"),
    ("command_v_path_named", "command -v ~/secretdir/@; echo $?", "0", "1\n", ""),
    ("command_v_via_path", "export PATH=~/secretdir:$PATH; command -v @; echo $?", "0", "1\n",
     ""),
    ("type_path_named", "type ~/secretdir/@; echo $?", "0", "1\n",
     "strands-shell: type: {H}/secretdir/{N}: not found\n"),
    ("command_V_path_named", "command -V ~/secretdir/@; echo $?", "0", "1\n",
     "strands-shell: command: {H}/secretdir/{N}: not found\n"),
    ("type_a_path_named", "type -a ~/secretdir/@; echo $?", "0", "1\n",
     "strands-shell: type: {H}/secretdir/{N}: not found\n"),
    ("type_P_path_named", "type -P ~/secretdir/@; echo $?", "0", "1\n", ""),
    ("type_t_path_named", "type -t ~/secretdir/@; echo $?", "0", "1\n", ""),
    ("find_exec_path", "find ./src -name main.rs -exec ~/secretdir/@ {} \\; ; echo $?", "0",
     "0\n", "strands-shell: {H}/secretdir/{N}: No such file or directory\n"),
    ("type_via_path", "export PATH=~/secretdir:$PATH; type @; echo $?", "0", "1\n",
     "strands-shell: type: {N}: not found\n"),
    ("hash_via_path", "export PATH=~/secretdir:$PATH; hash @; echo $?", "0", "1\n",
     "strands-shell: hash: {N}: not found\n"),
    ("which_path_named", "which ~/secretdir/@; echo $?", "0", "1\n", ""),
    ("which_via_path", "export PATH=~/secretdir:$PATH; which @; echo $?", "0", "1\n", ""),
]


@table_cases("template,status,out,err", PATHS)
def test_program_search(hidden, template, status, out, err):
    got = compare(hidden, template, "deploy.sh", "absent.sh")
    expect(hidden, got, int(status), out, err)


class OperatorPathBox(Box):
    """A box run from a shell whose PATH starts with a directory the policy
    refuses (~/bin, as many operators have): boxd searches bare names there."""

    def env(self):
        return {**super().env(), "PATH": f"{self.home}/bin:" + super().env()["PATH"]}


@pytest.fixture(scope="module")
def operator_path_box(tmp_path_factory):
    b = OperatorPathBox(tmp_path_factory.mktemp("disclosure-path"))
    b.write_config(extra='\n[tool.awk]\ncommand = ["awk"]\n')
    b.seed_policy(extra="""
        permit(principal, action == Box::Action::"shell:spawn", resource);
        """)
    (b.home / "bin").mkdir()
    (b.home / "bin" / "secret-tool").write_text("#!/bin/sh\necho LEAKED-tool\n")
    os.chmod(b.home / "bin" / "secret-tool", 0o755)
    b.start()
    yield b
    stop(b)


def test_program_bare_name_in_refused_operator_path_dir(operator_path_box):
    """A bare name resolves on boxd's PATH; found only in a directory policy
    refuses, it is not found, exactly as a name that is nowhere."""
    got = compare(operator_path_box, "@", "secret-tool", "absent-tool")
    expect(operator_path_box, got, 127, "", "strands-shell: {N}: command not found\n")


def test_program_bare_name_on_system_path_still_runs(operator_path_box):
    """The system tree asks nothing: a PATH program past the refused
    directory, and one reached through /etc/alternatives, still run."""
    r = operator_path_box.bash("git --version; awk 'BEGIN { print 6 * 7 }'; "
                               "/usr/bin/awk 'BEGIN { print 1 }'")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("git version ") and r.stdout.endswith("\n42\n1\n")
    recs = [(d["strands.box.policy.action"], d["strands.box.policy.resource"])
            for d in operator_path_box.decisions()]
    assert not any(a == "fs:read" and res.startswith(("/usr", "/etc")) for a, res in recs)
    alive(operator_path_box)


def test_lua_popen_and_execute_path(hidden):
    script = ("lua -e \"local p = io.popen('$HOME/secretdir/@'); io.write(p:read('a')); "
              "print(p:close()); print(os.execute('$HOME/secretdir/@'))\"")
    got = compare(hidden, script, "deploy.sh", "absent.sh")
    line = missing("{H}/secretdir/{N}")
    expect(hidden, got, 0, "nil\texit\t127\nnil\texit\t127\n", line + line)


# ---- host paths of boxd ---------------------------------------------------

HOST = [
    ("proc_self_exe", "/proc/self/@", "exe", "exf"),
    ("proc_thread_self_exe", "/proc/thread-self/@", "exe", "exf"),
    ("dev_fd_dotdot_exe", "/dev/fd/../@", "exe", "exf"),
    ("proc_self_cwd", "/proc/self/cwd/@", "box", "bxx"),
]


@table_cases("template,present,absent", HOST)
@pytest.mark.parametrize("which", ["hidden", "open_box"])
def test_program_proc_names_no_host_path(request, which, template, present, absent):
    """/proc in boxd is boxd's: its links (its binary, its cwd) are no
    program of the agent's, even under a policy that reads everything."""
    b = request.getfixturevalue(which)
    got = compare(b, template, present, absent)
    expect(b, got, 127, "", missing(template.replace("@", "{N}")))
    assert str(BOX.parent) not in got[2]


@pytest.mark.parametrize("which", ["hidden", "open_box"])
def test_program_alias_in_box_dir(request, which):
    """The box directory is trusted state (a floor): its alias is found as
    an absent name would be, and the binary it links to is never named."""
    b = request.getfixturevalue(which)
    template = f"{b.box_dir}/bin/@ -c 'echo ran'"
    got = compare(b, template, "bash", "bxsh")
    expect(b, got, 127, "", missing(f"{b.box_dir}/bin/{{N}}"))


def test_program_through_the_mount_host_path(open_box):
    """The mount's real path on the host is boxd's: a program reached
    through it is not found, though the same file runs by its own path."""
    mnt = mountpoint(open_box)
    template = f"{mnt}/pass{open_box.workspace}/@"
    got = compare(open_box, template, "run.sh", "rux.sh")
    expect(open_box, got, 127, "", missing(f"{mnt}/pass{open_box.workspace}/{{N}}"))


def test_program_host_file_outside_the_roots(open_box):
    """Outside the bound roots the agent sees in-memory paths, not the host's
    files: a host program there that no table declares is not found, though
    policy reads everywhere (ls sees no such file either)."""
    host = open_box.root / "host-only"
    got = compare(open_box, f"{host}/@", "hostprog", "hostprox")
    expect(open_box, got, 127, "", missing(f"{host}/{{N}}"))
    r = open_box.bash(f"ls {host}/hostprog")
    assert r.returncode == 2 and r.stderr.endswith(": No such file or directory\n")


def test_program_declared_outside_the_roots_still_runs(open_box):
    """A [tool.*] command the operator declared there runs by its path."""
    r = open_box.bash(f"{open_box.root}/host-only/hosttool")
    assert (r.returncode, r.stdout, r.stderr) == (0, "ran hosttool\n", "")
    alive(open_box)


# ---- tests of existence and type ------------------------------------------

TESTS = [
    ("test_e", "test -e ~/secretdir/@; echo $?", "deploy.sh", "absent.sh"),
    ("test_f", "test -f ~/secretdir/@; echo $?", "deploy.sh", "absent.sh"),
    ("test_d", "test -d ~/secretdir/@; echo $?", "subdir", "subdix"),
    ("test_L", "test -L ~/.ssh/@; echo $?", "tool", "toox"),
    ("test_s", "test -s ~/secretdir/@; echo $?", "notes.txt", "nopes.txt"),
    ("test_r", "test -r ~/secretdir/@; echo $?", "notes.txt", "nopes.txt"),
    ("test_x", "test -x ~/secretdir/@; echo $?", "deploy.sh", "absent.sh"),
    ("bracket_e", "[ -e ~/secretdir/@ ]; echo $?", "deploy.sh", "absent.sh"),
    ("double_bracket_e", "[[ -e ~/secretdir/@ ]]; echo $?", "deploy.sh", "absent.sh"),
    ("double_bracket_d", "[[ -d ~/secretdir/@ ]]; echo $?", "subdir", "subdix"),
]


@table_cases("template,present,absent", TESTS)
def test_existence_test(hidden, template, present, absent):
    got = compare(hidden, template, present, absent)
    expect(hidden, got, 0, "1\n", "")


# ---- commands that read metadata or content -------------------------------

# ~/secretdir and ~/.ssh are refused at their own lookup, as a missing name
# is (nothing below them is permitted): every denial below one names it,
# whether the name asked for exists or not.
def denied(prefix, path="~/secretdir", shown="{H}/secretdir/{N}"):
    return prefix.format(P=shown) + DENY.format(path) + "\n"


READS = [
    ("ls_file", "ls ~/secretdir/@", "deploy.sh", "absent.sh", 2, "",
     denied("ls: cannot access '{P}': ")),
    ("ls_l_dir", "ls -l ~/secretdir/@", "subdir", "subdix", 2, "",
     denied("ls: cannot access '{P}': ")),
    ("ls_d_dir", "ls -d ~/secretdir/@", "subdir", "subdix", 2, "",
     denied("ls: cannot access '{P}': ")),
    ("stat_file", "stat ~/secretdir/@", "deploy.sh", "absent.sh", 1, "",
     denied("stat: cannot statx '{P}': ")),
    ("find_dir", "find ~/secretdir/@", "subdir", "subdix", 1, "",
     denied("find: '{P}': ")),
    ("du_file", "du ~/secretdir/@", "deploy.sh", "absent.sh", 1, "",
     denied("du: cannot access '{P}': ")),
    ("wc_file", "wc ~/secretdir/@", "notes.txt", "nopes.txt", 1, "", denied("wc: {P}: ")),
    ("cat_file", "cat ~/secretdir/@", "notes.txt", "nopes.txt", 1, "", denied("cat: {P}: ")),
    ("head_file", "head -c1 ~/secretdir/@", "notes.txt", "nopes.txt", 1, "",
     denied("head: cannot open '{P}' for reading: ")),
    ("grep_file", "grep s3 ~/secretdir/@", "notes.txt", "nopes.txt", 2, "",
     denied("grep: {P}: ")),
    ("walk_through_a_file", "cat ~/secretdir/@/x", "notes.txt", "nopes.txt", 1, "",
     "cat: {H}/secretdir/{N}/x: " + DENY.format("~/secretdir") + "\n"),
    ("realpath_file", "realpath ~/secretdir/@", "deploy.sh", "absent.sh", 1, "",
     denied("realpath: {P}: ")),
    ("readlink_link", "readlink ~/.ssh/@; echo $?", "tool", "toox", 0, "1\n", ""),
    ("readlink_f_link", "readlink -f ~/.ssh/@; echo $?", "tool", "toox", 0, "1\n", ""),
    ("cat_link_under_ssh", "cat ~/.ssh/@", "tool", "toox", 1, "",
     denied("cat: {P}: ", "~/.ssh", "{H}/.ssh/{N}")),
    ("sh_script", "sh ~/secretdir/@; echo $?", "deploy.sh", "absent.sh", 0, "127\n",
     denied("strands-shell: {P}: ")),
    ("source_script", "source ~/secretdir/@; echo $?", "deploy.sh", "absent.sh", 0, "1\n",
     denied("strands-shell: source: {P}: ")),
]


@table_cases("template,present,absent,status,out,err", READS)
def test_read_route(hidden, template, present, absent, status, out, err):
    got = compare(hidden, template, present, absent)
    expect(hidden, got, status, out, err)


def test_denial_under_ssh_names_the_link_not_its_target(hidden):
    """The policy message for a denied file under ~/.ssh names the path the
    agent used (its refused directory), never where the symlink points."""
    r = hidden.bash("cat ~/.ssh/tool; ls -l ~/.ssh/tool; stat ~/.ssh/tool")
    for line in r.stderr.splitlines():
        assert DENY.format("~/.ssh") in line
    assert len(r.stderr.splitlines()) == 3
    assert "vault" not in r.stdout + r.stderr and "helper" not in r.stdout + r.stderr
    alive(hidden)


# ---- globbing and completion-like routes ----------------------------------

GLOBS = [
    ("glob_star_in_refused_dir", "echo ~/@/*", "secretdir", "secretdix", "{H}/{N}/*\n"),
    ("glob_prefix_in_ssh", "echo ~/.ssh/@*", "id_", "ix_", "{H}/.ssh/{N}*\n"),
    ("glob_dotfiles_in_ssh", "echo ~/@/.??*", ".ssh", ".sxh", "{H}/{N}/.??*\n"),
    ("glob_deep", "echo ~/@/*/*", "secretdir", "secretdix", "{H}/{N}/*/*\n"),
    ("glob_home_prefix", "echo ~/@*", "secretd", "secretx", "{H}/{N}*\n"),
    ("glob_for_loop", "for f in ~/@/*; do echo \"$f\"; done", "secretdir", "secretdix",
     "{H}/{N}/*\n"),
    ("completion_printf_prefix", "printf '%s\\n' ~/secretdir/@*", "dep", "abs",
     "{H}/secretdir/{N}*\n"),
]


@table_cases("template,present,absent,out", GLOBS)
def test_glob_route(hidden, template, present, absent, out):
    got = compare(hidden, template, present, absent)
    expect(hidden, got, 0, out, "")


def test_glob_ls_home_prefix(hidden):
    got = compare(hidden, "ls ~/@*", "secretd", "secretx")
    expect(hidden, got, 2, "", "ls: cannot access '{H}/{N}*': " + DENY.format("~/{N}*") + "\n")


# ---- cd and redirections --------------------------------------------------

def test_cd_into_refused_dir(hidden):
    got = compare(hidden, "cd ~/secretdir/@; echo $?; pwd", "subdir", "subdix")
    expect(hidden, got, 0, "1\n" + str(hidden.workspace) + "\n",
           denied("strands-shell: cd: {P}: "))


def test_cd_into_refused_file(hidden):
    got = compare(hidden, "cd ~/secretdir/@; echo $?", "notes.txt", "nopes.txt")
    expect(hidden, got, 0, "1\n", denied("strands-shell: cd: {P}: "))


def test_redirect_input_from_refused(hidden):
    got = compare(hidden, "cat < ~/secretdir/@", "notes.txt", "nopes.txt")
    expect(hidden, got, 1, "", denied("strands-shell: {P}: "))


def test_redirect_append_to_refused(hidden):
    got = compare(hidden, "echo x >> ~/secretdir/@; echo $?", "notes.txt", "nopes.txt")
    expect(hidden, got, 0, "1\n", denied("strands-shell: {P}: "))
    assert (hidden.home / "secretdir" / "notes.txt").read_text() == SECRET + "\n"
    assert not (hidden.home / "secretdir" / "nopes.txt").exists()


# ---- Lua ------------------------------------------------------------------

LUA = [
    ("lua_io_open", "lua -e \"print(io.open('$HOME/secretdir/@'))\"",
     "nil\t{H}/secretdir/{N}: Permission denied\t13\n"),
    ("lua_os_rename", "lua -e \"print(os.rename('$HOME/secretdir/@', '$HOME/src/project/x'))\"",
     "nil\tPermission denied\t13\n"),
    ("lua_os_remove", "lua -e \"print(os.remove('$HOME/secretdir/@'))\"",
     "nil\t{H}/secretdir/{N}: Permission denied\t13\n"),
]


@table_cases("template,out", LUA)
def test_lua_route(hidden, template, out):
    got = compare(hidden, template, "notes.txt", "nopes.txt")
    expect(hidden, got, 0, out, "")
    assert (hidden.home / "secretdir" / "notes.txt").read_text() == SECRET + "\n"
    assert not (hidden.workspace / "x").exists()


# ---- commands naming their sources ----------------------------------------

WRITES = [
    ("cp_names_source", "cp ~/secretdir/@ ./copied; echo $?",
     denied("cp: cannot open '{P}' for reading: ")),
    ("mv_names_source", "mv ~/secretdir/@ ./moved; echo $?",
     denied("mv: cannot move '{P}' to './moved': ")),
    ("rm_refused", "rm ~/secretdir/@; echo $?", denied("rm: cannot remove '{P}': ")),
    ("touch_refused", "touch ~/secretdir/@; echo $?", denied("touch: cannot touch '{P}': ")),
    ("mkdir_over_file", "mkdir ~/secretdir/@; echo $?",
     denied("mkdir: cannot create directory '{P}': ")),
    ("ln_over_file", "ln -s /x ~/secretdir/@; echo $?",
     denied("ln: failed to create symbolic link '{P}': ")),
]


@table_cases("template,err", WRITES)
def test_write_route(hidden, template, err):
    got = compare(hidden, template, "notes.txt", "nopes.txt")
    expect(hidden, got, 0, "1\n", err)
    assert (hidden.home / "secretdir" / "notes.txt").read_text() == SECRET + "\n"
    for left in ("copied", "moved"):
        assert not (hidden.workspace / left).exists()
    assert not (hidden.home / "secretdir" / "nopes.txt").exists()


# ---- a directory in a refused directory ---------------------------------
# Once the kernel's lookup found a directory here (a walk goes through
# directories), mkdir and O_CREAT were answered from that entry (EEXIST,
# EISDIR) before any operation reached the daemon.  The mount now refuses
# a directory nothing permitted lies below at its lookup, as it refuses a
# missing name.

KNOWN = [
    ("mkdir_over_dir", "mkdir ~/secretdir/@; echo $?", denied("mkdir: cannot create directory '{P}': ")),
    ("mkdir_p_over_dir", "mkdir -p ~/secretdir/@; echo $?",
     denied("mkdir: cannot create directory '{P}': ")),
    ("redirect_write_to_dir", "echo x > ~/secretdir/@; echo $?", denied("strands-shell: {P}: ")),
]


@table_cases("template,err", KNOWN)
def test_known_leak_of_a_refused_dir(hidden, template, err):
    got = compare(hidden, template, "subdir", "subdix")
    expect(hidden, got, 0, "1\n", err)
    assert sorted(p.name for p in (hidden.home / "secretdir" / "subdir").iterdir()) == []
    assert not (hidden.home / "secretdir" / "subdix").exists()


# ---- every command against a refused directory --------
# A directory under a refused one, or a refused directory of the home
# itself, asked about by every command that creates, replaces, moves into,
# removes or walks through it: the answer for one that exists is the answer
# for one that does not, and nothing on the host changes.  Each of these
# but the removals and `cd` answered differently before (EEXIST, EISDIR,
# "cannot overwrite existing file", a denial naming a path below the
# directory, a move or copy into it).

def hidden_tree(b):
    """Every name under the refused trees, with each file's content."""
    out = []
    for top in (b.home / "secretdir", b.home / ".ssh"):
        for p in sorted(top.rglob("*")):
            kind = "l" if p.is_symlink() else "d" if p.is_dir() else "f"
            out.append((str(p.relative_to(b.home)), kind, p.read_text() if kind == "f" else ""))
    return out


@pytest.fixture
def refused_tree(hidden):
    """A non-empty directory in ~/secretdir and three files in the
    workspace to move, copy and link into it; the trees as they were."""
    full = hidden.home / "secretdir" / "fulldir"
    full.mkdir(exist_ok=True)
    (full / "inner.txt").write_text("inner\n")
    srcs = [hidden.workspace / n for n in ("mvsrc", "cpsrc", "lnsrc")]
    for p in srcs:
        p.write_text("source\n")
    before = hidden_tree(hidden)
    yield hidden
    assert hidden_tree(hidden) == before
    for p in srcs:
        assert p.read_text() == "source\n"
        p.unlink()


def under(prefix, below="", path="~/secretdir"):
    """stderr for an operation on {H}/secretdir/{N}<below>, refused at the
    refused directory the walk meets first."""
    return prefix.format(P="{H}/secretdir/{N}" + below) + DENY.format(path) + "\n"


def in_home(prefix, below=""):
    return prefix.format(P="{H}/{N}" + below) + DENY.format("~/{N}") + "\n"


SD = ("subdir", "subdix")
FD = ("fulldir", "fullxir")
REFUSED_DIR = [
    # id, template, (present, absent), status, stdout, stderr
    ("symlink_over_dir", "ln -s /x ~/secretdir/@; echo $?", SD, 0, "1\n",
     under("ln: failed to create symbolic link '{P}': ")),
    ("hard_link_over_dir", "ln ./lnsrc ~/secretdir/@; echo $?", SD, 0, "1\n",
     under("ln: failed to create hard link '{P}': ")),
    ("noclobber_create_excl_on_dir", "set -C; echo x > ~/secretdir/@; echo $?", SD, 0, "1\n",
     under("strands-shell: {P}: ")),
    ("append_redirect_to_dir", "echo x >> ~/secretdir/@; echo $?", SD, 0, "1\n",
     under("strands-shell: {P}: ")),
    ("touch_dir", "touch ~/secretdir/@; echo $?", SD, 0, "1\n", under("touch: cannot touch '{P}': ")),
    ("mv_file_into_dir", "mv ./mvsrc ~/secretdir/@; echo $?", SD, 0, "1\n",
     under("mv: cannot move './mvsrc' to '{P}': ")),
    ("cp_file_into_dir", "cp ./cpsrc ~/secretdir/@; echo $?", SD, 0, "1\n",
     under("cp: cannot create regular file '{P}': ")),
    ("rmdir_non_empty_dir", "rmdir ~/secretdir/@; echo $?", FD, 0, "1\n",
     under("rmdir: failed to remove '{P}': ")),
    ("rm_r_dir", "rm -r ~/secretdir/@; echo $?", FD, 0, "1\n", under("rm: cannot remove '{P}': ")),
    ("mkdir_in_dir", "mkdir ~/secretdir/@/new; echo $?", SD, 0, "1\n",
     under("mkdir: cannot create directory '{P}': ", "/new")),
    ("mkdir_p_below_dir", "mkdir -p ~/secretdir/@/a/b; echo $?", SD, 0, "1\n",
     under("mkdir: cannot create directory '{P}': ", "/a/b")),
    ("touch_in_dir", "touch ~/secretdir/@/new; echo $?", SD, 0, "1\n",
     under("touch: cannot touch '{P}': ", "/new")),
    ("cat_through_dir", "cat ~/secretdir/@/inner.txt", FD, 1, "", under("cat: {P}: ", "/inner.txt")),
    ("ls_listing_of_non_empty_dir", "ls ~/secretdir/@", FD, 2, "",
     under("ls: cannot access '{P}': ")),
    ("ls_dotdot_through_dir", "ls ~/secretdir/@/..", SD, 2, "",
     under("ls: cannot access '{P}': ", "/..")),
    ("cd_dot_in_dir", "cd ~/secretdir/@/.; echo $?", SD, 0, "1\n",
     under("strands-shell: cd: {P}: ", "/.")),
    ("stat_after_cached_lookup", "ls ~/secretdir/@/x; stat ~/secretdir/@", SD, 1, "",
     under("ls: cannot access '{P}': ", "/x") + under("stat: cannot statx '{P}': ")),
    ("mv_dir_out", "mv ~/secretdir/@ ./moved; echo $?", SD, 0, "1\n",
     under("mv: cannot move '{P}' to './moved': ")),
    ("lua_open_dir_for_writing", "lua -e \"print(io.open('$HOME/secretdir/@', 'w'))\"", SD, 0,
     "nil\t{H}/secretdir/{N}: Permission denied\t13\n", ""),
    ("mkdir_over_ssh", "mkdir ~/@; echo $?", (".ssh", ".sxh"), 0, "1\n",
     in_home("mkdir: cannot create directory '{P}': ")),
    ("mkdir_over_refused_home_dir", "mkdir ~/@; echo $?", ("secretdir", "secretdix"), 0, "1\n",
     in_home("mkdir: cannot create directory '{P}': ")),
    ("cat_below_refused_home_dir", "cat ~/@/notes.txt", ("secretdir", "secretdix"), 1, "",
     in_home("cat: {P}: ", "/notes.txt")),
    ("cat_key_below_ssh", "cat ~/@/id_rsa", (".ssh", ".sxh"), 1, "", in_home("cat: {P}: ", "/id_rsa")),
    ("cd_ssh", "cd ~/@; echo $?", (".ssh", ".sxh"), 0, "1\n", in_home("strands-shell: cd: {P}: ")),
]


@table_cases("template,names,status,out,err", REFUSED_DIR)
def test_refused_dir(refused_tree, template, names, status, out, err):
    b = refused_tree
    got = compare(b, template, *names)
    expect(b, got, status, out, err)
    assert not (b.workspace / "moved").exists()


# A tool that the operator lets read ~/secretdir looks the refused names up
# too (tools decide nothing; their views bound them).  An entry the kernel
# kept from that lookup would answer the agent's next walk without asking
# the mount (EISDIR, EEXIST, ENOTDIR from the entry's type), so a tool's
# lookups leave no entry, and the agent's walk that the mount then refuses
# (which makes the kernel detach mounts on the name) leaves no prepared
# tool view behind to be entered again: the tool runs again right after.

def start_tool_box(b):
    b.write_config(extra='\n[tool.py]\ncommand = ["/usr/bin/python3"]\nfilesystem.read = ["~/secretdir"]\n')
    b.seed_policy(extra="""
        permit(principal, action == Box::Action::"shell:spawn", resource)
        when { context.input.program_path like "/usr/bin/python3*" };
        """)
    layout(b)
    full = b.home / "secretdir" / "fulldir"
    full.mkdir()
    (full / "inner.txt").write_text("inner\n")
    (b.workspace / "lnsrc").write_text("source\n")
    return b.start()


SF = ("notes.txt", "notes.txx")
ECHO = (0, "1\n")
# id, template, status and stdout, stderr's prefix and what follows the
# name, the (present, absent) pairs tried: each a case of its own
AFTER_TOOL = [
    ("redirect_write", "echo x > ~/secretdir/@; echo $?", ECHO, "strands-shell: {P}: ", "", [SD]),
    ("append", "echo x >> ~/secretdir/@; echo $?", ECHO, "strands-shell: {P}: ", "", [SD]),
    ("noclobber", "set -C; echo x > ~/secretdir/@; echo $?", ECHO, "strands-shell: {P}: ", "",
     [SD, SF]),
    ("stat", "stat ~/secretdir/@", (1, ""), "stat: cannot statx '{P}': ", "", [SD, SF]),
    ("ls", "ls ~/secretdir/@", (2, ""), "ls: cannot access '{P}': ", "", [FD, SF]),
    ("cd", "cd ~/secretdir/@; echo $?", ECHO, "strands-shell: cd: {P}: ", "", [SD]),
    ("mkdir_over", "mkdir ~/secretdir/@; echo $?", ECHO, "mkdir: cannot create directory '{P}': ",
     "", [SD, SF]),
    ("mkdir_below", "mkdir ~/secretdir/@/new; echo $?", ECHO,
     "mkdir: cannot create directory '{P}': ", "/new", [SF]),
    ("touch", "touch ~/secretdir/@; echo $?", ECHO, "touch: cannot touch '{P}': ", "", [SD, SF]),
    ("touch_below", "touch ~/secretdir/@/new; echo $?", ECHO, "touch: cannot touch '{P}': ", "/new",
     [SF]),
    ("symlink_over", "ln -s /x ~/secretdir/@; echo $?", ECHO,
     "ln: failed to create symbolic link '{P}': ", "", [SD, SF]),
    ("hard_link_over", "ln ./lnsrc ~/secretdir/@; echo $?", ECHO,
     "ln: failed to create hard link '{P}': ", "", [SF]),
    ("cat_through", "cat ~/secretdir/@/inner.txt", (1, ""), "cat: {P}: ", "/inner.txt", [FD]),
]
TOOL_FIRST = [
    (f"{what}_{'file' if names is SF else 'dir'}_after_tool_lookup", template, names, *answer_,
     under(prefix, below))
    for what, template, answer_, prefix, below, pairs in AFTER_TOOL for names in pairs
]


@table_cases("template,names,status,out,err", TOOL_FIRST)
def test_refused_dir_after_a_tool_looked_it_up(box, template, names, status, out, err):
    b = start_tool_box(box)
    r = b.bash("/usr/bin/python3 -c \"import os; print(os.path.isdir('$HOME/secretdir/subdir'))\"")
    assert (r.returncode, r.stdout) == (0, "True\n"), r.stderr  # the tool's own view has it
    # the tool looks the name up (and lists its directory, READDIRPLUS);
    # the same tool runs again after the agent's attack, in its view
    tool = ("/usr/bin/python3 -c \"import os; os.listdir('$HOME/secretdir'); "
            "os.path.exists('$HOME/secretdir/@/.')\" >/dev/null 2>&1; ")
    again = "; s=$?; /usr/bin/python3 -c \"import os; print(os.listdir('$HOME/secretdir/subdir'))\" >&2; (exit $s)"
    got = compare(b, tool + template + again, *names)
    expect(b, got[:2] + (got[2].replace("[]\n", ""),), status, out, err)
    assert got[2].endswith("[]\n"), got
    assert not (b.home / "secretdir" / "subdir" / "new").exists()
