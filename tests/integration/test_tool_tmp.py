"""A tool's /tmp is its command's RAM /tmp (issue 30): what a tool does
there is decided by the policy that decides the Shell's /tmp, and logged
the same way."""
import pytest

from conftest import ALLOW_ALL

PY = "/usr/bin/python3"
NO_TMP_WRITES = ALLOW_ALL + ('forbid(principal, action in [Box::Action::"fs:write", '
                             'Box::Action::"fs:delete"], resource) '
                             'when { context.input.path like "/tmp/*" };\n')


def start_box(b, policy, extra=""):
    b.write_policy(policy)
    b.write_config(extra=f'\n[tool.python3]\ncommand = ["{PY}"]\n' + extra)
    return b.start()


def tmp_decisions(b):
    return [d for d in b.decision_summary() if d[1].startswith("fs:") and d[2].startswith("/tmp/")]


@pytest.mark.parametrize("who,source", [
    ("shell", "echo x > /tmp/w"),
    ("tool", PY + " -c 'open(\"/tmp/w\", \"w\").write(\"x\")'"),
])
def test_a_forbidden_write_in_tmp_is_refused_to_tools_too(box, who, source):
    start_box(box, NO_TMP_WRITES)
    r = box.bash(source + "; echo $?; ls /tmp/w")
    assert r.stdout == "1\n", (who, r.stdout, r.stderr)
    refusal = "Permission denied" if who == "tool" else "policy denied"
    assert refusal in r.stderr.splitlines()[-2], r.stderr
    assert ("deny", "fs:write", "/tmp/w") in tmp_decisions(box)


def test_a_tools_create_write_unlink_decided_as_the_shells(box):
    start_box(box, ALLOW_ALL)
    r = box.bash("echo a > /tmp/s; rm /tmp/s")
    assert (r.returncode, r.stderr) == (0, "")
    shell = tmp_decisions(box)
    r = box.bash(PY + " -c 'import os; open(\"/tmp/s\", \"w\").write(\"a\\n\"); os.unlink(\"/tmp/s\")'")
    assert (r.returncode, r.stderr) == (0, "")
    tool = tmp_decisions(box)[len(shell):]
    assert ("permit", "fs:write", "/tmp/s") in shell
    assert ("permit", "fs:delete", "/tmp/s") in shell
    assert ("permit", "fs:write", "/tmp/s") in tool
    assert ("permit", "fs:delete", "/tmp/s") in tool


def test_a_forbidden_unlink_in_tmp_is_refused_to_tools(box):
    policy = ALLOW_ALL + ('forbid(principal, action == Box::Action::"fs:delete", resource) '
                          'when { context.input.path like "/tmp/*" };\n')
    start_box(box, policy)
    r = box.bash("echo a > /tmp/k; " + PY + " -c 'import os; os.unlink(\"/tmp/k\")' 2>/dev/null;"
                 " echo $?; cat /tmp/k")
    assert r.stdout == "1\na\n", (r.stdout, r.stderr)
    assert ("deny", "fs:delete", "/tmp/k") in tmp_decisions(box)


def test_a_tools_mount_points_stay_out_of_the_shells_tmp(box):
    """The box lives under the host's /tmp here, so a tool's view binds
    paths below /tmp: their mount points are the launch's, not entries the
    Shell lists or finds, and no policy on /tmp decides them."""
    start_box(box, NO_TMP_WRITES)
    top = box.workspace.parent.parent.parent
    assert str(top).startswith("/tmp/")
    listing = f"ls -a {top}; ls -a {top}/*"
    before = box.bash(listing)
    r = box.bash(PY + " -c 'print(1)'; " + listing)
    assert (r.returncode, r.stdout, r.stderr) == (0, "1\n" + before.stdout, before.stderr)
    r = box.bash(f"test -e {box.box_dir}; echo $?")
    assert r.stdout == "1\n", r.stdout
