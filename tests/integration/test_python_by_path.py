"""Python scripts run by path (`./s.py`, `/tmp/s.py`, a name on PATH) whose
`#!` names python3 run in the box's embedded CPython as `python3 PATH ARG…`
would, compared with the host running the same file; and box.toml's
`[tool.python3]` switch, which sends `python3` to the host's interpreter as
a tool instead."""
import contextlib
import os
import subprocess
import uuid
from pathlib import Path

import pytest

from conftest import ALLOW_ALL, Box
from test_python import py_box  # noqa: F401 (a fixture)
from test_python_zygote import zygotes

PY = "/usr/bin/python3"

# Everything a script sees of how it was started, its stdin, both streams
# and its status (argv[1], when given).
SCRIPT = """\
import os, sys
data = sys.stdin.read()
print(sys.argv, __name__, __file__, sys.executable, os.getcwd())
print(repr(data), sys.stdout.write_through, os.environ.get("GREETING"))
sys.stderr.write("to stderr\\n")
if len(sys.argv) > 1 and sys.argv[1] == "raise":
    raise ValueError("from the script")
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
"""

SHEBANGS = ["#!/usr/bin/env python3", "#!/usr/bin/python3", "#!/usr/bin/python3 -u",
            "#! /usr/bin/env  python3  "]


def native(argv, cwd, input, env=None):
    """argv run by the host, as the kernel runs a script: through its #!."""
    env = {"HOME": "/nonexistent", "PATH": "/usr/bin:/bin", "LANG": "C", **(env or {})}
    return subprocess.run(argv, capture_output=True, text=True, input=input, cwd=cwd, env=env,
                          timeout=60)


def outcome(r):
    return r.stdout, r.stderr, r.returncode


def write_script(path, shebang):
    path.write_text(f"{shebang}\n{SCRIPT}")
    path.chmod(0o755)


@pytest.mark.parametrize("shebang", SHEBANGS)
@pytest.mark.parametrize("args", [[], ["3"], ["0", "two words", "-c"], ["raise"]],
                         ids=["none", "status", "words", "raise"])
def test_script_by_path_runs_as_the_hosts(py_box, shebang, args):
    ws = py_box.workspace
    name = f"s{uuid.uuid4().hex[:8]}.py"
    write_script(ws / name, shebang)
    want = native([f"./{name}", *args], ws, "fed\n")
    assert want.stderr.startswith("to stderr\n")
    quoted = " ".join("'" + a + "'" for a in args)
    got = py_box.bash(f"./{name} {quoted}", input="fed\n")
    assert outcome(got) == outcome(want)


def test_script_in_tmp_piped_and_with_a_prefix(py_box):
    # the command's /tmp is its RAM area: the script is written, run and
    # gone within one command; the host runs a file of the same name
    path = f"/tmp/boxpy-{uuid.uuid4().hex}.py"
    try:
        write_script(Path(path), "#!/usr/bin/env python3")
        want = native([path, "a"], py_box.workspace, "piped\n", env={"GREETING": "hi"})
        text = f"#!/usr/bin/env python3\n{SCRIPT}"
        got = py_box.bash(f"cat > {path} <<'EOF'\n{text}EOF\nchmod +x {path}\n"
                          f"echo piped | GREETING=hi {path} a")
        assert outcome(got) == outcome(want)
    finally:
        os.unlink(path)


def test_script_found_on_path(py_box):
    ws = py_box.workspace
    (ws / "bin").mkdir(exist_ok=True)
    write_script(ws / "bin" / "onpath.py", "#!/usr/bin/python3")
    want = native(["onpath.py", "7"], ws, "", env={"PATH": f"{ws}/bin:/usr/bin:/bin"})
    assert want.returncode == 7
    got = py_box.bash("PATH=$PWD/bin:$PATH; onpath.py 7 </dev/null")
    assert outcome(got) == outcome(want)


@pytest.mark.parametrize("source", [
    "command ./routes.py a", "echo a b | xargs ./routes.py",
    "find . -name routes.py -exec {} x \\;", "timeout 20 ./routes.py a", "env ./routes.py a",
    "(./routes.py a)", "f() { ./routes.py \"$@\"; }; f q",
    "python3 -c 'import subprocess; print(subprocess.run([\"./routes.py\", \"z\"]).returncode)'"])
def test_script_by_path_through_other_routes(py_box, source):
    # what runs a program (command, xargs, find, timeout, env, a subshell,
    # a function, Python's subprocess) runs the script as bash does
    ws = py_box.workspace
    write_script(ws / "routes.py", "#!/usr/bin/env python3")
    want = native(["bash", "-c", source], ws, "")
    assert outcome(py_box.bash(source, input="")) == outcome(want)


def test_a_function_of_the_same_name_is_not_the_interpreter(py_box):
    ws = py_box.workspace
    write_script(ws / "fn.py", "#!/usr/bin/env python3")
    want = native(["./fn.py"], ws, "")
    got = py_box.bash("python3() { echo function; }; ./fn.py </dev/null")
    assert outcome(got) == outcome(want)


def test_a_script_run_by_path_is_one_python3_decision(tmp_path):
    b = Box(tmp_path)
    try:
        b.write_policy(ALLOW_ALL + 'forbid(principal, action == Box::Action::"shell:exec", '
                       'resource) when { context.input.command like "*denied.py*" };\n')
        b.write_config()
        b.start()
        write_script(b.workspace / "ok.py", "#!/usr/bin/env python3")
        write_script(b.workspace / "denied.py", "#!/usr/bin/env python3")
        r = b.bash("./ok.py 5 </dev/null")
        assert r.returncode == 5, r.stderr
        execs = [d for d in b.decisions() if d["strands.box.policy.action"] == "shell:exec"]
        assert [d["strands.box.policy.resource"] for d in execs] == ["python3"]
        words = [v["stringValue"] for v in execs[0]["process.command_args"]["values"]]
        assert words == ["python3", "./ok.py", "5"]
        r = b.bash("./denied.py; echo $?")
        assert r.stdout == "126\n"
        assert r.stderr.startswith("strands-shell: effect denied: policy denied"), r.stderr
    finally:
        b.teardown()


# ---- box.toml's [tool.python3]: python3 is the host's interpreter ----

@contextlib.contextmanager
def tool_box_at(root):
    """A box whose box.toml has a [tool.python3] table, ended on the way out."""
    b = Box(root)
    try:
        b.write_policy(ALLOW_ALL)
        b.write_config(extra=f'\n[tool.python3]\ncommand = ["{PY}"]\n'
                       'filesystem.read = ["~/src/project"]\n')
        yield b.start()
    finally:
        b.teardown()


@pytest.fixture(scope="module")
def tool_box(tmp_path_factory):
    with tool_box_at(tmp_path_factory.mktemp("toolbox")) as b:
        yield b


def shell_decisions(b, since):
    return [d for d in b.decision_summary()[since:] if d[1].startswith("shell:")]


def test_tool_table_takes_python3_from_the_shell(tool_box):
    spawn = ("permit", "shell:spawn", os.path.realpath(PY))
    ws = tool_box.workspace
    (ws / "prog.py").write_text("import sys\nprint(sys.argv)\n")
    write_script(ws / "tooled.py", "#!/usr/bin/env python3")
    script = native(["./tooled.py", "d"], ws, "in\n")
    # a flat text (the one boxd decides before the worker asks), a quoted
    # one, a script run by path, the alias
    for run, want, decided in [
            (lambda: tool_box.bash("python3 prog.py a"), ("['prog.py', 'a']\n", "", 0), [spawn]),
            (lambda: tool_box.bash("python3 -c 'import sys; print(sys.argv)' b"),
             ("['-c', 'b']\n", "", 0), [spawn]),
            # a tool never reads the caller's stdin (spec/runtime.md §4.4)
            (lambda: tool_box.bash("./tooled.py d <<<in"), outcome(script), [spawn]),
            (lambda: tool_box.alias("-c", "print(3)", name="python3"), ("3\n", "", 0), [spawn])]:
        since = len(tool_box.decision_summary())
        assert outcome(run()) == want
        assert shell_decisions(tool_box, since) == decided
    # bash's answer for a program it ran
    assert tool_box.bash("python3 -c 1; type python3").stdout == f"python3 is hashed ({PY})\n"


def test_python_without_its_own_table_stays_the_shells(tool_box):
    since = len(tool_box.decision_summary())
    r = tool_box.bash("python -c 'import sys; print(sys.argv)' c")
    assert (r.stdout, r.stderr, r.returncode) == ("['-c', 'c']\n", "", 0)
    assert shell_decisions(tool_box, since) == [("permit", "shell:exec", "python")]


def test_no_warm_interpreter_is_started_for_the_tools_python3(tmp_path):
    with tool_box_at(tmp_path) as b:
        assert b.bash("python3 -c 1").returncode == 0
        # boxd waits for the Python zygote's worker before a command it
        # sends there runs: had it sent this one, the zygote would be there
        assert not [argv for argv in zygotes(b.proc.pid).values() if b"--warm-python" in argv]
