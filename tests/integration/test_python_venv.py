"""A virtualenv in the workspace, as agents make and use one: its python
run by path and, once activate has put its bin/ first on PATH, by name;
its site-packages (a pure package and a C extension) imported, and
sys.prefix, sys.executable and sys.path as /usr/bin/python3's own venv
python gives them.  The venv is made by the host's python3 -m venv, the
oracle for everything it answers."""
import subprocess
import sysconfig

import pytest

from conftest import permissive_box

PROBE = ("import sys, mypkg, myext; "
         "print(sys.prefix, sys.base_prefix, sys.executable); "
         "print([p for p in sys.path if not p.startswith('/usr/local/')]); "
         "print(mypkg.X, myext.answer())")

# the host's /usr/local is not in the box's view (test_python_start.py)
HOSTS_OWN = "[p for p in sys.path if not p.startswith('/usr/local/')]"

EXT = r"""
#include <Python.h>
static PyObject *answer(PyObject *self, PyObject *args) { return PyLong_FromLong(42); }
static PyMethodDef methods[] = { { "answer", answer, METH_NOARGS, NULL }, { NULL } };
static struct PyModuleDef mod = { PyModuleDef_HEAD_INIT, "myext", NULL, -1, methods };
PyMODINIT_FUNC PyInit_myext(void) { return PyModule_Create(&mod); }
"""


@pytest.fixture(scope="module")
def venv_box(tmp_path_factory):
    b = permissive_box(tmp_path_factory.mktemp("venv"))
    ws = b.workspace
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", str(ws / ".venv")], check=True)
    site = ws / ".venv" / "lib" / "python3.11" / "site-packages"
    (site / "mypkg").mkdir()
    (site / "mypkg" / "__init__.py").write_text("X = 'pure'\n")
    (site / "mypkg" / "__main__.py").write_text("import sys; print('main of', sys.prefix)\n")
    (ws / "ext.c").write_text(EXT)
    so = site / ("myext" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run(["gcc", "-shared", "-fPIC", "-I" + sysconfig.get_paths()["include"],
                    "-o", str(so), str(ws / "ext.c")], check=True)
    yield b
    b.teardown()


def native(b, text):
    r = subprocess.run(["/bin/bash", "-c", text], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, cwd=b.workspace, timeout=60,
                       env={"HOME": str(b.home), "PATH": "/usr/bin:/bin"})
    return r.stdout, r.stderr, r.returncode


def boxed(b, text):
    r = b.bash(f"export PATH=/usr/bin:/bin; {text} </dev/null")
    return r.stdout, r.stderr, r.returncode


@pytest.mark.parametrize("text", [
    f'.venv/bin/python -c "{PROBE}"',
    f'"$PWD/.venv/bin/python3" -c "{PROBE}"',
    f'.venv/bin/python3.11 -c "{PROBE}"',
    f'. .venv/bin/activate; python -c "{PROBE}"',
    f'. .venv/bin/activate; python3 -c "{PROBE}"; python3 -m mypkg; deactivate; python3 -c "import mypkg"',
    # a text that starts with python3 is served by a worker whose interpreter
    # is warm: the venv's python starts from it
    f'python3 -c pass; .venv/bin/python -c "{PROBE}"',
    f'python3 -c pass; . .venv/bin/activate; python -c "{PROBE}"; deactivate; python3 -c "import sys; print(sys.prefix, {HOSTS_OWN})"',
], ids=["by-path", "absolute", "versioned", "activated", "activate-then-deactivate", "warm-by-path",
        "warm-activated"])
def test_a_venv_is_what_the_hosts_python_makes_of_it(venv_box, text):
    want = native(venv_box, text)
    assert "pure 42" in want[0]
    assert boxed(venv_box, text) == want


def test_a_venv_python_is_decided_as_python3(venv_box):
    since = len(venv_box.decisions())
    assert boxed(venv_box, ".venv/bin/python -c 'print(1)'") == ("1\n", "", 0)
    execs = [d["strands.box.policy.resource"] for d in venv_box.decisions()[since:]
             if d["strands.box.policy.action"] == "shell:exec"]
    assert execs[-1:] == ["python3"], execs


MADE = ("python3 -m venv --without-pip .made && ls .made/bin && . .made/bin/activate && "
        "which python python3 && python -c 'import sys; print(sys.prefix == sys.exec_prefix)' && "
        "deactivate && echo ${VIRTUAL_ENV-deactivated}")


def test_a_venv_made_in_the_box_is_the_hosts_own(venv_box):
    """`python3 -m venv` run in the box makes what the host's makes: the
    activate scripts (which venv copies from beside its own module, a
    directory of the host's the box's view lacks) with this venv's paths in
    them, and `which` finds its python on PATH once activated."""
    ws = venv_box.workspace
    got = boxed(venv_box, MADE)
    scripts = {p.name: p.read_bytes() for p in (ws / ".made" / "bin").iterdir() if not p.is_symlink()}
    subprocess.run(["rm", "-rf", str(ws / ".made")], check=True)
    want = native(venv_box, MADE)
    assert "activate" in want[0]
    assert got == want
    assert {p.name: p.read_bytes() for p in (ws / ".made" / "bin").iterdir()
            if not p.is_symlink()} == scripts
    subprocess.run(["rm", "-rf", str(ws / ".made")], check=True)
