"""How `python3` starts in the box: from the Python zygote's warm interpreter
(initialized once, forked for each command), yet looking as a fresh
/usr/bin/python3 would to the program — sys.argv, sys.executable,
__file__, os.getcwd(), the environment, flags, streams and signals.

Each observation is compared with /usr/bin/python3 run natively in the
same workspace with the box's environment.
"""
import subprocess

import pytest

from conftest import permissive_box
from gwutil import gateway_port

PY = "/usr/bin/python3"

# What start-up decides, as the program sees it (sys.modules aside: the
# warm interpreter has more loaded).
PROBE = r"""
import os, signal, site, sys
print(sys.argv, sys.orig_argv, sys.executable, __name__, os.getcwd())
print(sorted(kv for kv in os.environ.items() if kv[0] != "OLDPWD"))  # set by the test's cd
print(sys.flags)
print([p for p in sys.path if not p.startswith("/usr/local/")])  # the host's own, not the box's
print(site.ENABLE_USER_SITE, site.USER_SITE, site.USER_BASE)
for s in (sys.stdin, sys.stdout, sys.stderr):
    print(s.name, s.mode, s.encoding, s.errors, s.line_buffering, s.write_through)
print(signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGPIPE),
      signal.getsignal(signal.SIGXFSZ))
print(__debug__, sys.dont_write_bytecode, sys.getfilesystemencoding())
"""


WARM = "python3 -c 'import sys; print(\"json\" in sys.modules)'"


def warm_up(b):
    """Runs python3 until a command starts from the warm interpreter (the
    Python zygote's workers, for a text that starts with python3).
    Returns how many ran cold."""
    for cold in range(8):
        r = b.bash(WARM)
        assert r.returncode == 0, r.stderr
        if r.stdout == "True\n":
            return cold
    raise AssertionError("python3 never started warm")


@pytest.fixture(scope="module")
def py_box(tmp_path_factory):
    b = permissive_box(tmp_path_factory.mktemp("pystart"))
    (b.workspace / "probe.py").write_text(PROBE)
    warm_up(b)
    yield b
    b.teardown()


def box_env(b, extra=None):
    """The environment the box's Shell gives a command, plus extra; with the
    egress gateway's proxy variables, which python3 gets as a contained
    tool does (its sockets reach nothing but the gateway)."""
    env = {"HOME": str(b.home), "PATH": "/usr/bin:/bin", "PWD": str(b.workspace),
           "USER": "strands-box"}
    proxy = f"http://127.0.0.1:{gateway_port(b.proc.pid)}"
    env.update(dict.fromkeys(("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"), proxy))
    env.update(dict.fromkeys(("NO_PROXY", "no_proxy"), "127.0.0.1,localhost"))
    env.update(extra or {})
    return env


def quote(words):
    return " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)


def native(b, argv, extra=None, cwd=None):
    """argv run natively, /usr/bin/python3 by its name python3 (as a Shell
    that found it on PATH starts it)."""
    return subprocess.run(["python3", *argv[1:]] if argv[0] == PY else argv,
                          executable=argv[0], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, cwd=cwd or b.workspace,
                          env=box_env(b, extra), timeout=60)


def in_box(b, text, extra=None):
    assigns = " ".join(f"{k}={quote([v])}" for k, v in (extra or {}).items())
    return b.bash(f"{'export ' + assigns + '; ' if assigns else ''}{text} </dev/null")


def test_python3_starts_warm_from_the_first_text_that_starts_with_it(tmp_path):
    b = permissive_box(tmp_path)
    try:
        # commands that run no Python leave the zygote without an interpreter
        for _ in range(4):
            assert b.bash("true").returncode == 0
        cold = warm_up(b)
        assert cold == 0  # the first text that starts with python3 starts the Python zygote
        r = b.bash("python3 -c 'import sys; print(\"pathlib\" in sys.modules, "
                   "\"re\" in sys.modules)'")
        assert (r.stdout, r.stderr, r.returncode) == ("True True\n", "", 0)
    finally:
        b.teardown()


# Options and environments: those the warm interpreter takes, and those
# that need a fresh one (-O, -X, -W, a UTF-8 locale, PYTHONHASHSEED…).
CASES = [
    ([], {}),
    (["-u"], {}),
    (["-B", "-s"], {}),
    (["-E"], {"PYTHONUNBUFFERED": "1"}),
    (["-I"], {}),
    (["-S"], {}),
    (["-P"], {}),
    ([], {"PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1"}),
    ([], {"PYTHONIOENCODING": "latin-1:replace"}),
    (["-O"], {}),
    (["-X", "utf8=0"], {}),
    (["-W", "ignore"], {}),
    ([], {"LANG": "C.UTF-8"}),
    ([], {"PYTHONHASHSEED": "0"}),
]


@pytest.mark.parametrize("opts,extra", CASES)
def test_start_up_looks_like_native(py_box, opts, extra):
    for how in (["probe.py", "one", "two words"], ["-c", PROBE, "x"]):
        want = native(py_box, [PY, *opts, *how], extra)
        assert want.returncode == 0, want.stderr
        got = in_box(py_box, "python3 " + quote(opts + how), extra)
        assert (got.stdout, got.stderr, got.returncode) == (want.stdout, want.stderr, 0)


def test_hash_seed_from_the_environment_is_honoured(py_box):
    src = "print(hash('boxfs'), {'a', 'b', 'c', 'd'}.__repr__())"
    want = native(py_box, [PY, "-c", src], {"PYTHONHASHSEED": "123"})
    got = in_box(py_box, f"python3 -c {quote([src])}", {"PYTHONHASHSEED": "123"})
    assert (got.stdout, got.returncode) == (want.stdout, 0)


def test_version(py_box):
    want = native(py_box, [PY, "--version"])
    for text in ("python3 --version", "python3 -V", "python --version"):
        got = in_box(py_box, text)
        assert (got.stdout, got.stderr, got.returncode) == (want.stdout, "", 0)


def test_a_command_leaves_nothing_to_the_next(py_box):
    r = py_box.bash("python3 -c 'import json, os, sys; json.marker = 1; sys.path.append(\"/x\"); "
                    "os.environ[\"LEFT\"] = \"1\"'; "
                    "python3 -c 'import json, os, sys; print(hasattr(json, \"marker\"), "
                    "\"/x\" in sys.path, \"LEFT\" in os.environ)'")
    assert (r.stdout, r.stderr, r.returncode) == ("False False False\n", "", 0)


def test_cwd_and_processes_follow_the_command(py_box):
    (py_box.workspace / "src" / "deep").mkdir(exist_ok=True)
    r = py_box.bash("cd src/deep && python3 -c 'import os, subprocess; print(os.getcwd()); "
                    "subprocess.run([\"pwd\"]); os.system(\"echo $PWD\")'")
    d = py_box.workspace / "src" / "deep"
    assert (r.stdout, r.stderr, r.returncode) == (f"{d}\n{d}\n{d}\n", "", 0)
