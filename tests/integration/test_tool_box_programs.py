"""Programs the box writes, run as tools (issue 30): a `[tool.*]` command
may name a file in the box's /tmp or in the workspace that exists only once
the agent (or a tool) has written it.  It is checked at start for its form,
found at each run on the mount (an fs:read decision, then shell:spawn), and
run from the tool's view; /tmp stays noexec for every other file."""
import os
import uuid

import pytest

from conftest import ALLOW_ALL

HELLO_C = r'''#include <stdio.h>
int main(int argc, char **argv)
{
  printf("hello");
  for (int i = 1; i < argc; i++) printf(" %s", argv[i]);
  printf("\n");
  return 3;
}
'''


def unique(stem):
    """A /tmp name no file on the host holds: a table's /tmp path the host
    holds at start is that host program, as before."""
    path = f"/tmp/{stem}-{uuid.uuid4().hex[:12]}"
    assert not os.path.exists(path)
    return path


def tables(**named):
    return "".join(f'\n[tool.{label}]\ncommand = ["{cmd}"]\n' for label, cmd in named.items())


def start(b, policy, extra):
    b.write_policy(policy)
    b.write_config(extra=extra)
    return b.start()


def heredoc(path, text):
    return f"cat > {path} <<'EOF'\n{text}EOF\n"


def test_a_binary_built_in_tmp_runs_as_the_tool_that_names_it(box):
    prog = unique("hello")
    start(box, ALLOW_ALL, tables(cc="cc", hello=prog))
    r = box.bash(heredoc("/tmp/a.c", HELLO_C) +
                 f"cc -o {prog} /tmp/a.c && {prog} x 'y z'; echo $?; p={prog}; $p; echo $?; "
                 f"cd /tmp && ./{prog[5:]} here")
    assert (r.stdout, r.stderr, r.returncode) == ("hello x y z\n3\nhello\n3\nhello here\n", "", 3)
    summary = box.decision_summary()
    assert ("permit", "fs:read", prog) in summary
    assert ("permit", "shell:spawn", prog) in summary


def test_a_script_written_to_tmp_runs_by_its_path(box):
    prog = unique("report.py")
    start(box, ALLOW_ALL, tables(report=prog))
    script = '#!/usr/bin/python3\nimport sys\nprint("py", *sys.argv[1:])\n'
    r = box.bash(heredoc(prog, script) + f"chmod +x {prog}; {prog} a b; echo $?;"
                 f" echo q | {prog} piped")
    assert (r.stdout, r.stderr, r.returncode) == ("py a b\n0\npy piped\n", "", 0)


def test_a_program_not_written_yet_is_not_found(box):
    prog = unique("later")
    start(box, ALLOW_ALL, tables(later=prog))
    r = box.bash(f"{prog}; echo $?")
    assert (r.stdout, r.stderr) == ("127\n", f"strands-shell: {prog}: No such file or directory\n")


def test_the_hosts_file_of_that_name_never_runs(box):
    """The host's /tmp is not the box's: a file put there after the start
    is not what the table runs."""
    prog = unique("hostfile")
    start(box, ALLOW_ALL, tables(hostfile=prog))
    with open(prog, "w") as f:
        f.write("#!/bin/sh\necho RAN-HOST-FILE\n")
    try:
        os.chmod(prog, 0o755)
        r = box.bash(f"{prog}; echo $?")
        assert "RAN-HOST-FILE" not in r.stdout
        assert r.stdout == "127\n", r.stderr
    finally:
        os.unlink(prog)


def test_a_link_in_tmp_is_not_followed_out_of_the_box(box):
    prog = unique("link")
    start(box, ALLOW_ALL, tables(link=prog))
    r = box.bash(f"ln -s /usr/bin/id {prog}; {prog}; echo $?")
    assert r.stdout == "127\n", (r.stdout, r.stderr)


@pytest.mark.parametrize("refused", ["", ' && context.input.operation == Box::FsReadOperation::"read_content"'])
def test_a_refused_read_of_the_program_gives_the_policys_message(box, refused):
    """Refused outright, the Shell's own lookup finds nothing and boxd
    answers; refused its content only, boxd's decision refuses the run."""
    prog = unique("secret")
    policy = ALLOW_ALL + ('forbid(principal, action == Box::Action::"fs:read", resource) '
                          f'when {{ context.input.path == "{prog}"{refused} }};\n')
    start(box, policy, tables(secret=prog))
    r = box.bash(f"printf '#!/usr/bin/python3\\nprint(1)\\n' > {prog}; chmod +x {prog} 2>/dev/null;"
                 f" {prog}; echo $?")
    assert r.stdout == "126\n", (r.stdout, r.stderr)
    assert r.stderr == (f"strands-shell: effect denied: policy denied this operation on '{prog}'"
                        " [policy: policy_1].\n")
    assert ("deny", "fs:read", prog) in box.decision_summary()
    assert not [s for s in box.decision_summary() if s[1] == "shell:spawn"]


def test_a_workspace_program_built_later_runs(box):
    prog = box.workspace / "build" / "prog"
    extra = (f'\n[tool.cc]\ncommand = ["cc"]\nfilesystem.write = ["{box.workspace}"]\n' +
             tables(prog=str(prog)))
    start(box, ALLOW_ALL, extra)
    r = box.bash(heredoc("a.c", HELLO_C) + "mkdir -p build && cc -o build/prog a.c && "
                 "./build/prog w; echo $?; cd build && ./prog; echo $?")
    assert (r.stdout, r.stderr, r.returncode) == ("hello w\n3\nhello\n3\n", "", 0)


def test_a_refused_read_of_a_workspace_program_gives_the_policys_message(box):
    prog = box.workspace / "tool.sh"
    policy = ALLOW_ALL + ('forbid(principal, action == Box::Action::"fs:read", resource) '
                          'when { context.input.path like "*/tool.sh" };\n')
    start(box, policy, tables(ws=str(prog)))
    prog.write_text("#!/usr/bin/python3\nprint('ran')\n")
    prog.chmod(0o755)
    r = box.bash("./tool.sh; echo $?")
    assert r.stdout == "126\n", (r.stdout, r.stderr)
    assert r.stderr.startswith("strands-shell: effect denied: "), r.stderr


def test_a_missing_program_outside_the_box_is_refused_at_start(box):
    box.write_policy(ALLOW_ALL)
    box.write_config(extra=tables(ghost="/opt/boxfs-nowhere/ghost"))
    assert box.run_to_end() != 0
    assert box.stderr().endswith(
        'box: error: `[tool.ghost]` `command` "/opt/boxfs-nowhere/ghost" is refused: the host has '
        "no such program, and the path lies outside the box, where nothing the box writes could "
        "ever be; name a host program, or a path in the workspace, a home or /tmp\n")


def test_tmp_stays_noexec_but_for_the_named_file(box):
    """The named program runs in its table's sandbox like any tool: it may
    not run another file of /tmp, nor rewrite itself; and another tool may
    not run it, nor anything else there."""
    prog = unique("probe.py")
    start(box, ALLOW_ALL, tables(probe=prog, python3="/usr/bin/python3"))
    try_run = ("import subprocess, sys\n"
               "for p in sys.argv[1:]:\n"
               "    try:\n"
               "        subprocess.run([p])\n"
               "        print('ran', p)\n"
               "    except PermissionError:\n"
               "        print('refused', p)\n")
    probe = ("#!/usr/bin/python3\n" + try_run +
             "try:\n"
             "    open(sys.argv[0], 'a').write('#')\n"
             "    print('rewrote itself')\n"
             "except OSError:\n"
             "    print('write refused')\n")
    r = box.bash(heredoc(prog, probe) + heredoc("/tmp/try.py", try_run) + f"chmod +x {prog}; "
                 "printf '#!/bin/sh\\necho OTHER\\n' > /tmp/other.sh; chmod +x /tmp/other.sh; "
                 f"{prog} /tmp/other.sh; /usr/bin/python3 /tmp/try.py /tmp/other.sh {prog}; "
                 "/tmp/other.sh")
    assert r.stdout == (f"refused /tmp/other.sh\nwrite refused\nrefused /tmp/other.sh\n"
                        f"refused {prog}\nOTHER\n"), (r.stdout, r.stderr)


def test_with_a_box_ram_area_a_program_built_once_runs_in_later_commands(box):
    """`ram = "box"`: the program one command builds in /tmp is there for
    the next; per command (the default) it is gone with its command."""
    prog = unique("kept")
    box.write_policy(ALLOW_ALL)
    box.write_config(extra=tables(cc="cc", kept=prog))
    marker = f'workspace = "{box.workspace}"\n'
    box.config.write_text(box.config.read_text().replace(marker, marker + 'ram = "box"\n', 1))
    box.start()
    r = box.bash(heredoc("/tmp/a.c", HELLO_C) + f"cc -o {prog} /tmp/a.c")
    assert (r.returncode, r.stderr) == (0, "")
    r = box.bash(f"{prog} again; echo $?")
    assert (r.stdout, r.stderr) == ("hello again\n3\n", "")
    assert not os.path.exists(prog)


def test_per_command_the_program_ends_with_its_command(box):
    prog = unique("gone")
    start(box, ALLOW_ALL, tables(cc="cc", gone=prog))
    r = box.bash(heredoc("/tmp/a.c", HELLO_C) + f"cc -o {prog} /tmp/a.c && {prog}")
    assert (r.stdout, r.stderr, r.returncode) == ("hello\n", "", 3)
    r = box.bash(f"{prog}; echo $?")
    assert (r.stdout, r.stderr) == ("127\n", f"strands-shell: {prog}: No such file or directory\n")


PROBE_C = r'''#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>
static void try_open(const char *p)
{
  int fd = open(p, O_RDONLY);
  printf("open %s: %s\n", p, fd >= 0 ? "OPENED" : strerror(errno));
}
int main(int argc, char **argv)
{
  for (int i = 1; i < argc; i++) try_open(argv[i]);
  char *av[] = { "/tmp/other", NULL };
  execv(av[0], av);
  printf("exec /tmp/other: %s\n", strerror(errno));
  printf("mount: %s\n", mount("none", "/tmp", "tmpfs", 0, NULL) == 0 ? "MOUNTED" : "refused");
  printf("uid %d\n", (int)getuid());
  return 0;
}
'''


def test_a_program_in_tmp_is_contained_as_any_tool(box):
    """Built by the agent and named by a table, it runs in that table's
    sandbox: the host's files outside its grants are not there, nothing
    else in /tmp runs, and it holds no authority to change its view."""
    prog = unique("probe")
    secret = box.home / "secret.txt"
    secret.write_text("s3cret\n")
    start(box, ALLOW_ALL, tables(cc="cc", probe=prog))
    r = box.bash(heredoc("/tmp/p.c", PROBE_C) +
                 "printf '#!/bin/sh\\necho OTHER\\n' > /tmp/other; chmod +x /tmp/other; "
                 f"cc -o {prog} /tmp/p.c && {prog} /etc/shadow {secret} {box.config}")
    assert "OPENED" not in r.stdout and "OTHER" not in r.stdout and "MOUNTED" not in r.stdout
    assert r.stdout.splitlines()[:3] == ["open /etc/shadow: No such file or directory",
                                        f"open {secret}: No such file or directory",
                                        f"open {box.config}: No such file or directory"], r.stdout
    assert "exec /tmp/other: Permission denied" in r.stdout
    assert "mount: refused" in r.stdout


def test_a_binary_in_tmp_no_table_names_gets_the_table_to_add(box):
    """bash would run it; the box says which table would (issue 30), where
    it used to say the file it had just listed was not there."""
    prog = unique("nameless")
    start(box, ALLOW_ALL, "")
    r = box.bash(f"printf '\\177ELF\\000\\000' > {prog}; chmod +x {prog}; {prog}; echo $?; "
                 f"cd /tmp && ./{prog[5:]}; echo $?")
    label = prog[5:]
    why = (f"no tool runs {prog}: no `[tool.{label}]` table in box.toml runs this program; "
           f'add one with command = ["{prog}"] to run it outside the Shell\n')
    assert (r.stdout, r.stderr) == ("126\n126\n", f"strands-shell: {prog}: {why}"
                                    f"strands-shell: ./{label}: {why}")


def test_a_tmp_path_the_host_holds_at_start_is_the_hosts_program_with_a_warning(box):
    """As before, a path the host holds is the operator's program; in /tmp,
    which anyone on the host may write, the start says whose file it is."""
    prog = unique("hostheld")
    with open(prog, "w") as f:
        f.write("#!/bin/sh\necho host program\n")
    try:
        os.chmod(prog, 0o755)
        start(box, ALLOW_ALL, tables(hostheld=prog))
        assert (f'box: warning: `[tool.hostheld]` `command` "{prog}" is the host\'s file, which '
                "exists now; the box's /tmp is another place") in box.stderr()
        r = box.bash(f"{prog}")
        assert (r.stdout, r.stderr, r.returncode) == ("host program\n", "", 0)
    finally:
        os.unlink(prog)
