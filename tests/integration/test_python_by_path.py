"""Python scripts run by path (`./s.py`, `/tmp/s.py`, a name on PATH) whose
`#!` names python3 run in the box's embedded CPython as `python3 PATH ARG…`
would, compared with the host running the same file; and box.toml's
`[tool.python3]` switch, which sends `python3` to the host's interpreter as
a tool instead."""
import os
import subprocess
import uuid
from pathlib import Path

import pytest

from conftest import ALLOW_ALL, Box, permissive_box

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


@pytest.fixture(scope="module")
def py_box(tmp_path_factory):
    b = permissive_box(tmp_path_factory.mktemp("pybox"))
    yield b
    b.teardown()


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
