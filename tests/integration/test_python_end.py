"""How `python3 -c TEXT` ends in the box (python/end.c): after the atexit
handlers and the flush of the standard streams, without the teardown of
every module and object when that teardown would show nothing — and as
/usr/bin/python3 ends in every case, whatever the program left behind.

Each case is compared with /usr/bin/python3 run natively in the same
workspace with the box's environment (test_python_start's helpers)."""
import os
import re

import pytest

from conftest import children_of
from test_python_start import PY, in_box, native, py_box, quote  # noqa: F401 (fixture)

# Texts whose end shows something: output, status, files, tracebacks.
CASES = {
    "print": "print(1)",
    "no newline": "import sys; sys.stdout.write('partial')",
    "stderr": "import sys; sys.stderr.write('err'); print('out', end='')",
    "buffer": "import sys; sys.stdout.buffer.write(b'raw'); print('text', end='')",
    "exception": "x = 1\nraise ValueError('bad')",
    "keyboard": "raise KeyboardInterrupt",
    "exit code": "import sys; print('a'); sys.exit(3)",
    "exit text": "import sys; sys.exit('gone')",
    "exit none": "raise SystemExit",
    "atexit": "import atexit; atexit.register(print, 'bye'); print('hi')",
    "atexit order": ("import atexit\nfor i in range(3): atexit.register(print, i)\n"
                     "atexit.register(lambda: 1/0)"),
    "del in module": ("import json\nclass A:\n def __del__(self): print('del json')\n"
                      "json.keep = A()"),
    "cycle del": ("class A:\n def __del__(self): print('cycle')\n"
                  "a = A(); a.me = a; del a"),
    # a cycle through __main__'s globals (a method's or a frame's __globals__):
    # only the collector ends it, and __main__ is the command's own
    "global del": "class A:\n def __del__(self): print('del A')\na = A()",
    "generator finally": ("def g():\n try:\n  yield 1\n finally:\n  print('finally')\n"
                          "it = g(); next(it); print('end')"),
    "weakref callback": ("import weakref\nclass A: pass\na = A()\n"
                         "r = weakref.ref(a, lambda _: print('gone'))"),
    "finalize": "import weakref\nclass A: pass\na = A()\nweakref.finalize(a, print, 'fin')",
    "open file": "f = open('written.txt', 'w'); f.write('unflushed')",
    "open binary": "f = open('written.bin', 'wb'); f.write(b'unflushed')",
    "thread": ("import threading, time\n"
               "threading.Thread(target=lambda: (time.sleep(0.2), print('joined'))).start()"),
    "gc callback": "import gc; gc.callbacks.append(lambda *a: print('gc', a[0]))",
    "audit hook": ("import sys\nsys.addaudithook(lambda e, a: e.startswith('cpython._PySys')"
                   " and print(e))"),
    "resource warning": ("import warnings, os; warnings.simplefilter('always')\n"
                         "it = os.scandir('.'); next(it)"),
    "plain objects": ("class A: pass\nclass B(dict): pass\nd = {i: [A(), B()] for i in range(9)}\n"
                      "print(len(d))"),
    "stdout replaced": ("import io, sys\nsys.stdout = io.TextIOWrapper(open(1, 'wb', "
                        "closefd=False))\nprint('via another')"),
    "stdout closed": "import sys; print('x'); sys.stdout.close()",
    "inspect asked": "import os; os.environ['PYTHONINSPECT'] = '1'; print('x')",
    "exit in atexit": "import atexit, sys; atexit.register(sys.exit, 4); print('y')",
    "print at exit": "import atexit, sys; atexit.register(sys.stdout.write, 'late')",
    # the process ends at once: the worker's supervisor reports it (python_split.c)
    "os._exit": "import os; print('a', flush=True); os._exit(7)",
    "killed": "import os, signal; print('b', flush=True); os.kill(os.getpid(), signal.SIGKILL)",
    "segfault": "import ctypes; ctypes.string_at(0)",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_ends_as_native(py_box, name):
    text = CASES[name]
    for f in ("written.txt", "written.bin"):
        if (py_box.workspace / f).exists():
            os.unlink(py_box.workspace / f)
    want = native(py_box, [PY, "-c", text])
    files = {f: (py_box.workspace / f).read_bytes() for f in ("written.txt", "written.bin")
             if (py_box.workspace / f).exists()}
    for f in files:
        os.unlink(py_box.workspace / f)
    got = in_box(py_box, "python3 -c " + quote([text]))
    got_files = {f: (py_box.workspace / f).read_bytes() for f in files
                 if (py_box.workspace / f).exists()}
    # the box's Shell reports a signal's death as 128+N, as bash does
    want_status = want.returncode if want.returncode >= 0 else 128 - want.returncode
    def addr(t):
        return re.sub(r"0x[0-9a-f]+", "0x", t)  # an object's address in a message
    assert (got.stdout, addr(got.stderr), got.returncode, got_files) == \
        (want.stdout, addr(want.stderr), want_status, files)


def test_two_programs_of_one_text_start_each_from_a_fresh_interpreter(py_box):
    """A python3 that is its text's only command runs in the worker itself
    (python_split.c); in a longer text each runs in a child as before, none
    seeing what another left, a substitution's included."""
    mark = "import sys; print('marked' in sys.modules); sys.modules['marked'] = sys"
    line = "python3 -c {0}; python3 -c {0}".format(quote([mark]))
    r = py_box.bash(line)
    assert (r.stdout, r.stderr, r.returncode) == ("False\nFalse\n", "", 0)
    inner = "python3 -c {}".format(quote([mark]))
    r = py_box.bash('python3 -c "print(\'$({})\')"; {}'.format(inner, inner))
    assert (r.stdout, r.stderr, r.returncode) == ("False\nFalse\n", "", 0)
    r = py_box.bash('python3 -c "print(\'$({})\')"'.format(inner))
    assert (r.stdout, r.stderr, r.returncode) == ("False\n", "", 0)
    r = py_box.bash("true")  # and the box answers after each
    assert r.returncode == 0


def test_a_script_by_path_ends_as_native(py_box):
    text = ("import atexit\nclass A:\n def __del__(self): print('del A')\n"
            "def g():\n try:\n  yield 1\n finally:\n  print('finally')\n"
            "a = A(); it = g(); next(it); atexit.register(print, 'atexit'); print('end')\n")
    (py_box.workspace / "ends.py").write_text(text)
    want = native(py_box, [PY, "ends.py"])
    assert want.stdout == "end\natexit\ndel A\nfinally\n"
    for line in ("python3 ends.py </dev/null", "python3 - < ends.py"):
        got = py_box.bash(line)
        assert (got.stdout, got.stderr, got.returncode) == (want.stdout, want.stderr, 0), line


def test_a_broken_pipe_ends_as_native(py_box):
    text = "print('x' * 200000)"
    pipe = "-c {} | head -c 1; echo \" ${{PIPESTATUS[0]}}\"".format(quote([text]))
    want = native(py_box, ["/bin/bash", "-c", f"{PY} {pipe}"])
    got = in_box(py_box, f"python3 {pipe}")
    assert (got.stdout, got.stderr) == (want.stdout, want.stderr)


def test_print_ends_sooner_than_a_teardown_would(py_box):
    """The teardown writes to most of the warm interpreter's pages, each a
    copy-on-write fault in the command's process: ending without it shows
    in the time of python3 -c 'print(1)', against that of one that must
    tear down (an object with __del__), the two run in turn.  (The faults
    themselves are out of sight: the command's process is a grandchild the
    box's zygote never reaps, python_split.c.)"""
    import statistics
    import time
    texts = ("print(1)", "class A:\n def __del__(self): pass\na = A()\nprint(1)")
    times = ([], [])
    for _ in range(25):
        for i, text in enumerate(texts):
            t = time.perf_counter()
            r = py_box.bash(f"python3 -c {quote([text])}")
            times[i].append(time.perf_counter() - t)
            assert (r.returncode, r.stdout) == (0, "1\n"), r.stderr
    quick, torn = (statistics.median(t) for t in times)
    assert quick < torn * 0.9, (quick, torn)


def descendants(pid):
    out = []
    for c in children_of(pid):
        out += [c, *descendants(c)]
    return out


def host_pid(b, inner):
    """The host's pid of the box's Shell process whose own pid (its
    namespace's) is inner."""
    for pid in descendants(b.proc.pid):
        try:
            with open(f"/proc/{pid}/status") as f:
                ns = next(line for line in f if line.startswith("NSpid:")).split()[1:]
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                shell = f.read().startswith(b"box-shell\0")  # not the agent's, in its own namespace
        except (OSError, StopIteration):
            continue
        if shell and int(ns[-1]) == inner:
            return pid
    raise AssertionError(f"no process {inner} in the box")


def test_the_waiting_shell_launches_the_programs_processes(py_box):
    """A python3 run forks no launcher of its own (a fork of a process the
    interpreter's size per run): while the program runs its process has no
    child, and the Shell that waits for it still runs its subprocesses."""
    import threading
    import time
    started = py_box.workspace / "started"
    started.unlink(missing_ok=True)
    text = ("import os, subprocess, time\n"
            "open('started', 'w').write(str(os.getpid()))\n"
            "time.sleep(2)\n"
            "subprocess.run(['echo', 'sub'])\n"
            "print(os.system('python3 -c \"print(2)\"'))")
    result = {}
    t = threading.Thread(target=lambda: result.update(r=py_box.bash("python3 -c " + quote([text]))))
    t.start()
    try:
        deadline = time.time() + 30
        while not (started.exists() and started.read_text()) and time.time() < deadline:
            time.sleep(0.05)
        pid = host_pid(py_box, int(started.read_text()))
        assert children_of(pid) == []
    finally:
        t.join(60)
    r = result["r"]
    assert (r.stdout, r.stderr, r.returncode) == ("sub\n2\n0\n", "", 0)
