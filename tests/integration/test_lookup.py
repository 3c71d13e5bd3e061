"""Lookup as bash does it, through real boxes: `command -v/-V`, `type`,
`which` and `hash` against GNU bash for builtins, functions, keywords and
missing names; the file a `[tool.*]` table runs; the Shell's own PATH
searched through the mount; scripts without `#!`; one resolution rule
for tables and the Shell's program words (shims and links)."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import ALLOW_ALL, Box, table_cases, module_box

BASH = shutil.which("bash")
GIT = os.path.realpath(shutil.which("git"))

FUNC = "f() { echo hi; }; "

# (id, text): each runs in a box (the default config's [tool.git]) and in
# bash -c with PATH=/usr/bin:/bin; stdout, stderr and status must match.
CASES = [
    ("command-v-builtins", "command -v echo cd; echo $?"),
    ("command-v-function", FUNC + "command -v f; echo $?"),
    ("command-v-keyword", "command -v if; echo $?"),
    ("command-v-missing", "command -v nosuch-xyz; echo $?; command -v echo nosuch-xyz cd; echo $?; "
                          "command -v nosuch-xyz nosuch-abc; echo $?"),
    ("command-V-builtin", "command -V cd; echo $?"),
    ("command-V-function", FUNC + "command -V f; echo $?"),
    ("command-V-missing", "command -V nosuch-xyz; echo $?; command -V nosuch-xyz cd; echo $?"),
    ("type-builtins", "type cd echo export :; echo $?"),
    ("type-function", FUNC + "type f; echo $?"),
    ("type-keyword", "type if while; echo $?"),
    ("type-missing", "type nosuch-xyz; echo $?; type cd nosuch-xyz; echo $?"),
    ("type-t", FUNC + "type -t cd f if nosuch-xyz; echo $?"),
    ("type-p", FUNC + "type -p cd f if; echo $?; type -p nosuch-xyz; echo $?"),
    ("type-P", FUNC + "type -P f; echo $?; type -P nosuch-xyz; echo $?"),
    ("type-a", FUNC + "type -a f; echo $?; type -a nosuch-xyz; echo $?"),
    ("type-f", FUNC + "type -f f; echo $?"),
    ("which-function-missing", FUNC + "which f; echo $?; which nosuch-xyz; echo $?; which cd; echo $?"),
    ("hash-empty", "hash; echo $?; hash 2>/dev/null; hash >/dev/null; echo $?"),
    ("hash-builtin-function", FUNC + "hash cd f; echo $?; hash; hash -t cd; echo $?"),
    ("hash-missing", "hash nosuch-xyz; echo $?; hash -t nosuch-xyz; echo $?; hash -r; hash"),
    # files execve refuses, and one made executable
    ("path-not-executable", "echo 'echo hi $0' > x.sh; ./x.sh; echo $?; mkdir -p d; ./d; echo $?; "
                            "chmod +x x.sh; ./x.sh; rm -r x.sh d"),
    # a program a table runs: the same file bash finds
    ("command-v-tool", "command -v git; echo $?; command -V git; type -t git"),
    ("type-tool", "type git; type -p git; type -P git; which git; echo $?"),
    ("hash-tool", "hash git; echo $?; hash; type git; hash -t git; hash -l"),
    ("hash-counts-runs", "git --version >/dev/null; git --version >/dev/null; hash; hash -d git; hash"),
]


def _norm(err: str) -> str:
    return re.sub(r"(?m)^(/usr)?(/bin/)?bash: (-c: )?(line \d+: )?", "strands-shell: ", err)


lookup_box = module_box("lookup_box")


@pytest.mark.skipif(not BASH, reason="bash not installed")
@table_cases("text", CASES)
def test_lookup_like_bash(lookup_box, text, tmp_path):
    ours = lookup_box.bash(text)
    ref = subprocess.run([BASH, "-c", text], cwd=tmp_path, capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LC_ALL": "C"},
                         timeout=30)
    got = (ours.stdout, ours.stderr, ours.returncode)
    want = (ref.stdout, _norm(ref.stderr), ref.returncode)
    assert got == want


def test_tool_path_only_when_a_table_runs_it(lookup_box):
    """A program on the host no table runs is not what the name would run."""
    r = lookup_box.bash("command -v tsort; echo $?; which tsort; echo $?; type -t tsort; echo $?")
    assert (r.stdout, r.stderr) == ("1\n1\n1\n", "")


def test_which_names_the_shells_own_programs(lookup_box):
    r = lookup_box.bash("which cat ls; echo $?")
    assert (r.stdout, r.stderr) == ("cat\nls\n0\n", "")


def test_shell_path_runs_workspace_scripts(box):
    """PATH=$PWD/bin:$PATH finds the workspace's scripts, with or without
    a #! line, through the mount: each file looked at is a decision."""
    box.start_seeded()
    bin_dir = box.workspace / "bin"
    bin_dir.mkdir()
    (bin_dir / "mycmd").write_text("#!/bin/sh\necho mycmd $# \"$1\"\n")
    (bin_dir / "plain").write_text("echo plain \"$0\" \"$@\"\n")
    for f in ("mycmd", "plain"):
        (bin_dir / f).chmod(0o755)
    r = box.bash('PATH=$PWD/bin:$PATH; mycmd a b; plain x; command -v mycmd; type -t plain; '
                 'which plain; hash')
    assert r.stderr == ""
    assert r.stdout == (f"mycmd 2 a\nplain {bin_dir}/plain x\n{bin_dir}/mycmd\nfile\n"
                        f"{bin_dir}/plain\nhits\tcommand\n   1\t{bin_dir}/mycmd\n"
                        f"   1\t{bin_dir}/plain\n")
    assert r.returncode == 0
    assert ("permit", "fs:read", "~/src/project/bin/mycmd") in box.decision_summary()
    # the Shell's PATH as it started is still the system's
    r = box.bash("mycmd; echo $?")
    assert (r.stdout, r.stderr) == ("127\n", "strands-shell: mycmd: command not found\n")


def test_executable_in_tmp_runs(box):
    box.seed_policy(extra="""
        permit(principal, action in [Box::Action::"fs:read", Box::Action::"fs:write"], resource)
        when { context.input.path like "/tmp/*" };
        """)
    box.write_config()
    box.start()
    r = box.bash("printf 'echo from tmp \"$1\"\\n' > /tmp/s.sh; chmod +x /tmp/s.sh; /tmp/s.sh a; "
                 "echo $?; s=/tmp/s.sh; $s b")
    assert (r.stdout, r.stderr, r.returncode) == ("from tmp a\n0\nfrom tmp b\n", "", 0)


def test_binary_without_table_is_not_run_as_a_script(box):
    """A file with a NUL in its first line is a binary: it goes to the host
    (which needs a table or an exec entry for it), never to the Shell."""
    box.start_seeded()
    prog = box.workspace / "prog"
    prog.write_bytes(b"\x7fELF\x00\x00echo ran-as-script\n")
    prog.chmod(0o755)
    r = box.bash("./prog; echo $?")
    assert "ran-as-script" not in r.stdout
    assert r.stdout.endswith("126\n")


def _shim_box(root, shim_text=None, link_to=None):
    """A box whose [tool.greet] command is "greet", found on the table's own
    PATH in a directory of the home that policy does not let the agent read
    (as pyenv's ~/.pyenv/shims on the operator's PATH)."""
    b = Box(root)
    shims = b.home / ".pyenv" / "shims"
    shims.mkdir(parents=True)
    greet = shims / "greet"
    if shim_text:
        greet.write_text(shim_text)
        greet.chmod(0o755)
    else:
        greet.symlink_to(link_to)
    b.permit_spawn("greet")
    b.write_config(extra=f'\n[tool.greet]\ncommand = ["greet"]\n'
                         f'env.PATH = "{shims}:/usr/bin:/bin"\n')
    return b, greet


def _greet(root, text, want, **shim):
    b, greet = _shim_box(root, **shim)
    try:
        b.start()
        r = b.bash(text)
        assert (r.stdout, r.stderr, r.returncode) == (want.format(greet=greet), "", 0)
    finally:
        b.teardown()


def test_table_and_shell_resolve_a_shim_alike(tmp_path):
    _greet(tmp_path, "greet a b; echo; command -v greet; type -t greet",
           "shim,a,b,\n{greet}\nfile\n",
           shim_text="#!/bin/sh\nexec /usr/bin/printf '%s,' shim \"$@\"\n")


def test_table_and_shell_resolve_a_link_alike(tmp_path):
    printf = os.path.realpath("/usr/bin/printf")
    _greet(tmp_path, "greet '%s.' x y; echo; command -v greet", f"x.y.\n{printf}\n",
           link_to=printf)
