"""git, make and cc on the mount: a tool clones a small C project
from a local bare repository into the workspace, another builds it with cc,
and the built program runs; every file they touch is on the host's workspace
afterwards, as the tools left it."""
import resource
import subprocess

import pytest

from conftest import PERMIT_TMP, git

HELLO_C = r"""#include <stdio.h>
#include "greet.h"
int main(int argc, char **argv) { printf("%s, %d args\n", greeting(), argc - 1); return 3; }
"""
GREET_H = "const char *greeting(void);\n"
GREET_C = '#include "greet.h"\nconst char *greeting(void) { return "hello from the mount"; }\n'
MAKEFILE = """\
hello: hello.o greet.o
\tcc -o $@ hello.o greet.o
%.o: %.c greet.h
\tcc -O1 -c -o $@ $<
check: hello
\t./hello a b > out.txt; test $$? -eq 3
"""


def test_clone_build_and_run_a_c_project(box):
    src = box.root / "upstream"
    src.mkdir()
    for name, text in (("hello.c", HELLO_C), ("greet.h", GREET_H), ("greet.c", GREET_C),
                       ("Makefile", MAKEFILE)):
        (src / name).write_text(text)
    git("init", "-q", cwd=src)
    git("add", ".", cwd=src)
    git("commit", "-q", "-m", "c project", cwd=src)
    bare = box.home / "upstream.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(bare)], check=True)
    box.seed_policy(extra="""
        permit(principal, action == Box::Action::"shell:spawn", resource)
        when { context.input.program == "git" || context.input.program == "make" };
        """ + PERMIT_TMP)
    box.write_config(extra='\n[tool.make]\ncommand = ["make"]\nfilesystem.write = ["~/src/project"]\n')
    box.config.write_text(box.config.read_text().replace(
        'filesystem.write = ["~/src/project"]\n',
        'filesystem.write = ["~/src/project"]\nfilesystem.read = ["~/upstream.git"]\n', 1))
    box.start()
    r = box.bash(f"git clone -q {bare} proj && cd proj && make -s check && cat out.txt")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == "hello from the mount, 2 args\n"
    proj = box.workspace / "proj"
    assert (proj / "out.txt").read_text() == "hello from the mount, 2 args\n"
    for obj in ("hello.o", "greet.o", "hello"):
        assert (proj / obj).stat().st_size > 0, obj
    # The binary built through the mount is a real one on the host too.
    host = subprocess.run([str(proj / "hello"), "x"], capture_output=True, text=True)
    assert (host.returncode, host.stdout) == (3, "hello from the mount, 1 args\n")
    # A second build finds everything up to date: mtimes went through the mount intact.
    r = box.bash("cd proj && make -q hello; echo $?")
    assert r.stdout == "0\n", r.stdout + r.stderr


def _open_files_limit(pid):
    for line in open(f"/proc/{pid}/limits"):
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return int(soft), int(hard)
    raise AssertionError("no open-files line")


def test_thousands_of_files_under_a_low_descriptor_limit(box):
    """The mount holds a descriptor per node the kernel keeps: started with
    the common soft limit of 1024, boxd raises its own to the hard limit,
    and what it runs (the Shell, tools) gets the 1024 back."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < 8192:
        pytest.skip(f"the hard limit ({hard}) leaves no room above 1024")
    box.seed_policy(extra="""
        permit(principal, action == Box::Action::"shell:spawn", resource)
        when { context.input.program == "/usr/bin/python3" };
        """)
    box.write_config(extra='\n[tool.py]\ncommand = ["/usr/bin/python3"]\n')
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
    try:
        box.start()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    boxd_soft, boxd_hard = _open_files_limit(box.proc.pid)
    assert boxd_soft == boxd_hard >= 8192
    r = box.bash("mkdir many && i=0; while [ $i -lt 3000 ]; do echo $i > many/f$i; i=$((i+1)); done; "
                 "ls -l many | wc -l; cat many/* | wc -l; ulimit -n; "
                 "/usr/bin/python3 -c 'import resource; print(resource.getrlimit(resource.RLIMIT_NOFILE)[0])'",
                 timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert r.stdout.split() == ["3001", "3000", "1024", "1024"]
    many = box.workspace / "many"
    assert len(list(many.iterdir())) == 3000
    assert (many / "f2999").read_text() == "2999\n"


def test_more_files_than_the_hard_descriptor_limit(box):
    """Where boxd cannot raise its limit (a hard limit of 1200, no
    CAP_SYS_RESOURCE), the nodes past its descriptor budget hold none and
    are reached by a walk: 3000 files are created, listed, read, renamed and
    removed through the mount, by the Shell and by a tool, with no EMFILE."""
    box.seed_policy(fs_write=True, extra="""
        permit(principal, action == Box::Action::"fs:delete", resource)
        when { context.input.path like "~/src/project/*" };
        permit(principal, action == Box::Action::"fs:move", resource)
        when { context.input.path like "~/src/project/*" };
        permit(principal, action == Box::Action::"shell:spawn", resource)
        when { context.input.program == "/usr/bin/python3" };
        """)
    box.write_config(extra='\n[tool.py]\ncommand = ["/usr/bin/python3"]\n'
                           'filesystem.write = ["~/src/project"]\n')
    box.start(prefix=["setpriv", "--bounding-set", "-sys_resource", "--inh-caps", "-sys_resource",
                      "prlimit", "--nofile=1200:1200", "--"])
    assert _open_files_limit(box.proc.pid) == (1200, 1200)
    r = box.bash("mkdir many && i=0; while [ $i -lt 3000 ]; do echo $i > many/f$i; i=$((i+1)); done; "
                 "ls -l many | wc -l; cat many/* | wc -l; cat many/f0 many/f1500 many/f2999",
                 timeout=180)
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    assert r.stdout.split() == ["3001", "3000", "0", "1500", "2999"]
    # every node again: the kernel still holds them all, a stat and a read each
    tool = ("import os; d='many'; n=0\n"
            "for f in sorted(os.listdir(d)):\n"
            "    st=os.stat(os.path.join(d,f)); n+=st.st_size==len(open(os.path.join(d,f)).read())\n"
            "for i in range(3000): os.rename(f'{d}/f{i}', f'{d}/g{i}')\n"
            "print(n, len(os.listdir(d)), open(f'{d}/g2999').read().strip())\n")
    r = box.bash(f"/usr/bin/python3 -c \"{tool}\"", timeout=180)
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    assert r.stdout == "3000 3000 2999\n"
    r = box.bash("rm many/g* && ls -A many | wc -l && rmdir many && echo gone", timeout=180)
    assert (r.returncode, r.stderr, r.stdout) == (0, "", "0\ngone\n")
    assert not (box.workspace / "many").exists()
    assert "EMFILE" not in box.stderr() and "Too many open files" not in box.stderr()
