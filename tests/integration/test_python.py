"""`python3`/`python` in the Shell and as aliases: the real CPython 3.11,
embedded (python/), running in the box's worker on the mount.

Command-line behaviour is compared with /usr/bin/python3 run natively in
the same workspace; refusals with the policy's text.
"""
import contextlib
import shlex
import subprocess
import time

import pytest

from conftest import BUILD, Box, module_box

PY = "/usr/bin/python3"


@contextlib.contextmanager
def seeded_box(tmp_path, extra=""):
    """A box under the seed policy (plus extra), ended on the way out."""
    b = Box(tmp_path)
    try:
        b.seed_policy(extra=extra)
        b.write_config()
        b.start()
        yield b
    finally:
        b.teardown()


def forbid(action, condition):
    return f'forbid(principal, action == Box::Action::"{action}", resource) when {{ {condition} }};'


py_box = module_box("py_box")


def native(args, cwd, input=None):
    env = {"HOME": "/nonexistent", "PATH": "/usr/bin:/bin", "LANG": "C"}
    return subprocess.run(["python3", *args], executable=PY, capture_output=True, text=True,
                          input=input, cwd=cwd,
                          env=env, timeout=60)


def test_version_is_the_real_one(py_box):
    want = native(["--version"], py_box.workspace).stdout
    assert want.startswith("Python 3.11")
    for name in ("python3", "python"):
        r = py_box.bash(f"{name} --version")
        assert (r.stdout, r.stderr, r.returncode) == (want, "", 0)


# Programs whose stdout, stderr and status are CPython's own (no path,
# time or host detail in them).
SNIPPETS = [
    ["-c", "print(6 * 7)"],
    ["-c", "import json, re, collections; print(json.dumps({'a': re.sub('b+', 'c', 'abbb')}))"],
    ["-c", "import sys; print(sys.argv); sys.exit(3)"],
    ["-c", "import sys; print(sys.argv)", "x", "-y", "--z"],
    ["-c", "raise ValueError('boom')"],
    # a traceback through the standard library shows its source lines
    ["-c", "import json; json.loads('{')"],
    ["-c", "import sys; sys.exit('bye')"],
    ["-c", "import sqlite3, decimal, hashlib, ctypes, zlib; "
           "print(sqlite3.connect(':memory:').execute('select 2*21').fetchone(), "
           "decimal.Decimal('1.10') + 2, hashlib.sha256(b'x').hexdigest()[:8])"],
    ["-I", "-c", "import sys; print(sys.flags.isolated, sys.flags.ignore_environment, sys.path[0])"],
    ["-E", "-B", "-c", "import sys; print(sys.flags.ignore_environment, sys.dont_write_bytecode)"],
    ["-W", "error", "-c", "import warnings; warnings.warn('w')"],
    ["-X", "utf8", "-c", "import sys; print(sys.flags.utf8_mode, sys._xoptions)"],
    ["-u", "-c", "import sys; print(sys.stdout.line_buffering, sys.stdout.write_through)"],
    ["-m", "this"],
    ["-c", "import nosuchmodule"],
    ["--bogus"],
]


@pytest.mark.parametrize("args", SNIPPETS, ids=lambda a: " ".join(a)[:40])
def test_like_native_python(py_box, args):
    want = native(args, py_box.workspace)
    quoted = " ".join("'" + a.replace("'", "'\\''") + "'" for a in args)
    got = py_box.bash(f"python3 {quoted}")
    assert (got.stdout, got.stderr, got.returncode) == (want.stdout, want.stderr, want.returncode)


def test_stdin_script_and_module(py_box):
    ws = py_box.workspace
    (ws / "prog.py").write_text(
        "import os, sys\nprint(__file__, sys.argv, os.getcwd(), sys.executable)\n")
    r = py_box.bash("python3 prog.py a b; cd src && python3 ../prog.py")
    assert r.returncode == 0, r.stderr
    assert r.stdout == (f"{ws}/prog.py ['prog.py', 'a', 'b'] {ws} /usr/bin/python3\n"
                        f"{ws}/src/../prog.py ['../prog.py'] {ws}/src /usr/bin/python3\n")
    r = py_box.bash("echo 'print(6*7)' | python3")
    assert (r.stdout, r.returncode) == ("42\n", 0)
    r = py_box.bash("python3 - one <<'EOF'\nimport sys\nprint(sys.argv)\nEOF")
    assert (r.stdout, r.returncode) == ("['-', 'one']\n", 0)
    r = py_box.bash("echo '{\"b\": [1]}' | python3 -m json.tool --compact")
    assert (r.stdout, r.returncode) == ('{"b":[1]}\n', 0)
    # files the interpreter writes are the workspace's
    r = py_box.bash("python3 -c \"open('made.txt', 'w').write('hi')\" && cat made.txt")
    assert (r.stdout, r.returncode) == ("hi", 0)
    assert (ws / "made.txt").read_text() == "hi"


def test_every_redirected_descriptor_reaches_the_program_at_its_number(py_box):
    """As bash gives python3 3…9 (`5<<<x`, `exec 6<f`): the worker's own
    descriptors (the host directories its interpreters read) keep above 9."""
    reads = "; ".join(f'python3 -c "import os; print(os.read({n}, 9))" {n}<<<fd{n}' for n in range(3, 10))
    r = py_box.bash(reads + '; exec 7<<<held; python3 -c "import os; print(os.read(7, 9))"')
    assert (r.stdout, r.stderr, r.returncode) == (
        "".join(f"b'fd{n}\\n'\n" for n in range(3, 10)) + "b'held\\n'\n", "", 0)


FDS_PY = ("import fcntl\n"
          "def is_open(n):\n"
          "    try:\n"
          "        return fcntl.fcntl(n, fcntl.F_GETFD) >= 0\n"
          "    except OSError:\n"
          "        return False\n"
          "print(*[n for n in range(10) if is_open(n)])\n")


def test_descriptors_0_to_9_are_the_scripts_alone(py_box, tmp_path):
    """python3 finds open at 0…9 what bash's python3 finds: the script's
    descriptors and nothing of the worker's own (host directories, channels,
    a slot `exec 7>&-` closed), as bash keeps its own above 9."""
    script = ("python3 fds.py; exec 7>f; python3 fds.py; exec 7>&-; python3 fds.py; "
              "python3 fds.py 5<<<x 3>&1; exec 4<fds.py 9>&2; python3 fds.py; "
              "{ exec 4<&-; python3 fds.py; } 6>g; python3 fds.py; exec {n}>h; python3 fds.py; "
              "f() { exec 8>&1; }; f >i; python3 fds.py")
    (py_box.workspace / "fds.py").write_text(FDS_PY)
    (tmp_path / "fds.py").write_text(FDS_PY)
    ours = py_box.bash(script)
    ref = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "LANG": "C"}, timeout=60)
    assert (ours.stdout, ours.stderr, ours.returncode) == (ref.stdout, ref.stderr, ref.returncode)
    assert ours.stdout.split("\n")[0] == "0 1 2"


def test_standard_library_reports_native_paths(py_box):
    r = py_box.bash("python3 -c \"import json, sys, _json; "
                    "print(json.__file__, _json.__file__, sys.path[1:4])\"")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("/usr/lib/python3.11/json/__init__.py "
                        "/usr/lib/python3.11/lib-dynload/_json.cpython-311-x86_64-linux-gnu.so "
                        "['/usr/lib/python311.zip', '/usr/lib/python3.11', "
                        "'/usr/lib/python3.11/lib-dynload']\n")


def test_each_run_is_a_shell_exec_decision(tmp_path):
    with seeded_box(tmp_path) as b:
        r = b.bash("python3 -c 'print(1)'; python -c 'print(2)'")
        assert (r.stdout, r.returncode) == ("1\n2\n", 0)
        execs = [d for d in b.decision_summary() if d[1] == "shell:exec"]
        assert execs == [("permit", "shell:exec", "python3"), ("permit", "shell:exec", "python")]


def test_refused_file_raises_permission_error_with_policy_text(tmp_path):
    with seeded_box(tmp_path, forbid("fs:read", 'context.input.path like "*secret*"')) as b:
        (b.workspace / "secret.txt").write_text("s")
        r = b.bash("python3 -c \"\ntry:\n    open('secret.txt')\nexcept PermissionError as e:\n"
                   "    print(e.errno, e.strerror, e.filename)\nopen('secret.txt')\"")
        text = "policy denied this operation on '~/src/project/secret.txt' [policy: policy_3]."
        assert r.stdout == f"13 {text} secret.txt\n"
        assert r.stderr.endswith(f"PermissionError: [Errno 13] {text}: 'secret.txt'\n")
        assert r.returncode == 1
        assert ("deny", "fs:read", "~/src/project/secret.txt") in b.decision_summary()
        # the Shell's own commands print the same text
        r = b.bash("cat secret.txt")
        assert r.stderr == f"cat: secret.txt: {text}\n"


def test_box_shell_links_libpython_statically():
    """Debian's static libpython (the code /usr/bin/python3 runs) is linked
    into box-shell, which exports its C API for extension modules; the
    shared library is mapped by no Shell."""
    out = subprocess.run(["ldd", str(BUILD / "box" / "box-shell")], capture_output=True,
                         text=True, check=True).stdout
    assert "libpython" not in out
    exported = subprocess.run(["nm", "-D", "--defined-only", str(BUILD / "box" / "box-shell")],
                              capture_output=True, text=True, check=True).stdout.split()
    assert {"PyLong_FromLong", "_PyEval_EvalFrameDefault", "box_python_main"} <= set(exported)


PY_USAGE = "box-alias: Python alias accepts only -c SOURCE or SCRIPT\n"


@pytest.mark.parametrize("name", ["python3", "python"])
def test_alias_forms(py_box, name):
    r = py_box.alias("-c", "import sys; print('it''s', sys.argv); sys.exit(4)", name=name)
    assert (r.stdout, r.stderr, r.returncode) == ("its ['-c']\n", "", 4)
    r = py_box.alias("-c", "print(\"a 'quoted' $HOME `x` \\\\ word\")", name=name)
    assert (r.stdout, r.stderr, r.returncode) == ("a 'quoted' $HOME `x` \\ word\n", "", 0)
    script = py_box.workspace / "job.py"
    script.write_text("import os\nprint(len(os.listdir('.')) > 0, 'ran')\n")
    r = py_box.alias(str(script), name=name)
    assert (r.stdout, r.stderr, r.returncode) == ("True ran\n", "", 0)
    for args in ([], ["--version"], ["-c"], ["-c", "1", "2"], ["-m", "json"], ["a.py", "b.py"],
                 ["-i"], ["-", "x"]):
        r = py_box.alias(*args, name=name)
        assert (r.stdout, r.stderr, r.returncode) == ("", PY_USAGE, 125), args
    r = py_box.alias("missing.py", name=name)
    assert (r.stdout, r.returncode) == ("", 125)
    assert r.stderr == "box-alias: read Python script missing.py: No such file or directory\n"


def test_alias_runs_are_decided_as_python3(tmp_path):
    with seeded_box(tmp_path) as b:
        r = b.alias("-c", "print(1)", name="python")
        assert (r.stdout, r.returncode) == ("1\n", 0)
        assert [d for d in b.decision_summary() if d[1] == "shell:exec"] == [
            ("permit", "shell:exec", "python3")]


def test_subprocess_and_os_system_go_through_the_shell(tmp_path):
    with seeded_box(tmp_path) as b:
        (b.workspace / "src" / "x.txt").write_text("x")
        r = b.bash("python3 -c \"\nimport subprocess, os\n"
                   "r = subprocess.run(['echo', 'hi'], capture_output=True)\n"
                   "print(r.returncode, r.stdout)\n"
                   "print(subprocess.run('echo a | tr a b', shell=True, capture_output=True, "
                   "text=True).stdout, end='')\n"
                   "print(os.system('exit 3'), os.popen('echo popen').read(), end='')\n"
                   "print(subprocess.check_output(['cat'], input=b'fed'))\n"
                   "print(subprocess.run(['ls'], cwd='src', capture_output=True).stdout)\n\"")
        assert r.stderr == ""
        assert r.stdout == "0 b'hi\\n'\nb\n768 popen\nb'fed'\nb'main.rs\\nx.txt\\n'\n"
        assert r.returncode == 0
        execs = [d[2] for d in b.decision_summary() if d[1] == "shell:exec"]
        assert execs == ["python3", "echo", "echo", "tr", "exit", "echo", "cat", "cd", "ls"]


def test_subprocess_is_refused_like_the_shell(tmp_path):
    with seeded_box(tmp_path, forbid("shell:exec", 'context.input.program == "rm"')) as b:
        (b.workspace / "keep.txt").write_text("k")
        r = b.bash("python3 -c \"import subprocess; "
                   "r = subprocess.run(['rm', 'keep.txt'], capture_output=True, text=True); "
                   "print(r.returncode, r.stderr)\"")
        assert r.stdout.startswith("126 strands-shell: effect denied: policy denied this operation")
        assert (b.workspace / "keep.txt").exists()
        assert ("deny", "shell:exec", "rm") in b.decision_summary()


def test_shell_timeout_ends_a_python_loop_and_its_subprocesses(box):
    from test_shell_limits import set_shell_timeout, worker_children
    set_shell_timeout(box, '"1s"')
    box.seed_policy()
    box.start()
    before = set(worker_children())
    r = box.bash("python3 -c \"import subprocess; subprocess.Popen(['sleep', '60']); "
                 "exec('while True: pass')\"; echo never")
    assert r.returncode == 124, r.stderr
    assert "strands-shell: execution timeout exceeded" in r.stderr
    assert r.stdout == ""
    deadline = time.time() + 5
    while set(worker_children()) - before and time.time() < deadline:
        time.sleep(0.05)
    assert not set(worker_children()) - before


def test_exec_and_posix_spawn_go_through_the_shell(tmp_path):
    with seeded_box(tmp_path) as b:
        r = b.bash("python3 -u -c \"\nimport os\n"
                   "pid = os.posix_spawnp('echo', ['echo', 'spawned'], os.environ)\n"
                   "print(os.waitpid(pid, 0)[1])\n"
                   "os.execlp('sh', 'sh', '-c', 'echo replaced; exit 5')\n"
                   "print('never')\"; echo status $?")
        assert (r.stdout, r.stderr) == ("spawned\n0\nreplaced\nstatus 5\n", "")
        execs = [d[2] for d in b.decision_summary() if d[1] == "shell:exec"]
        assert execs == ["python3", "echo", "sh", "echo", "exit", "echo"]


def test_pythonpath_and_workspace_imports(py_box):
    ws = py_box.workspace
    (ws / "lib").mkdir(exist_ok=True)
    (ws / "lib" / "helper.py").write_text("VALUE = 'from lib'\n")
    (ws / "pkg").mkdir(exist_ok=True)
    (ws / "pkg" / "__init__.py").write_text("from .inner import X\n")
    (ws / "pkg" / "inner.py").write_text("X = 'inner'\n")
    r = py_box.bash("PYTHONPATH=lib python3 -c \"import sys, helper, pkg; "
                    "print(helper.VALUE, pkg.X, sys.path[1], helper.__file__)\"")
    assert (r.stdout, r.stderr, r.returncode) == (
        f"from lib inner {ws}/lib {ws}/lib/helper.py\n", "", 0)
    r = py_box.bash("PYTHONPATH=lib python3 -E -c \"import helper\"")
    assert r.returncode == 1 and "No module named 'helper'" in r.stderr


def test_ctypes_meets_the_workers_seccomp_filter(py_box):
    r = py_box.bash("python3 -u -c \"\nimport ctypes, os, socket\n"
                    "libc = ctypes.CDLL(None, use_errno=True)\n"
                    "for name, call in (('execve', lambda: libc.execve(b'/bin/true', None, None)),\n"
                    "                   ('raw execve', lambda: libc.syscall(59, b'/bin/true', 0, 0)),\n"
                    "                   ('mount', lambda: libc.mount(b'none', b'/tmp', b'tmpfs', 0, None)),\n"
                    "                   ('ptrace', lambda: libc.ptrace(0, 0, None, None))):\n"
                    "    print(name, call(), os.strerror(ctypes.get_errno()))\n"
                    "s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
                    "s.settimeout(5)\n"
                    "print(s.connect_ex(('1.1.1.1', 80)) != 0)\"")
    assert (r.stdout, r.stderr, r.returncode) == (
        "execve -1 Operation not permitted\nraw execve -1 Operation not permitted\n"
        "mount -1 Operation not permitted\nptrace -1 Operation not permitted\nTrue\n", "", 0)


def test_sys_executable_runs_the_boxs_python(py_box):
    r = py_box.bash("python3 -c \"import subprocess, sys; "
                    "print(subprocess.run([sys.executable, '-c', 'import sys; print(sys.argv)', 'a'], "
                    "capture_output=True, text=True).stdout, end='')\"")
    assert (r.stdout, r.stderr, r.returncode) == ("['-c', 'a']\n", "", 0)


def natively_and_boxed(py_box, name, source, status=0):
    """source as the workspace's script name, run by the host's python3 and
    by the box's, which prints and exits as the host's (status); the host's
    result, for the test to say what that is."""
    (py_box.workspace / name).write_text(source)
    want = native([name], py_box.workspace)
    r = py_box.bash(f"python3 {name}")
    assert (r.stdout, r.stderr, r.returncode) == (want.stdout, want.stderr, status)
    return want


def test_a_python3_subprocess_starts_a_fresh_interpreter(py_box):
    # the child the route forks is a copy of this interpreter: the python3
    # it runs must not find it initialized (its modules, __main__, sys.stdout
    # and atexit handlers)
    want = natively_and_boxed(py_box, "nested.py",
        "import atexit, io, subprocess, sys\n"
        "atexit.register(print, 'parent atexit')\n"
        "marker = 1\n"
        "sys.stdout = io.StringIO()\n"
        "child = \"import sys; print('marker' in dir(), 'subprocess' in sys.modules, sys.argv)\"\n"
        "r = subprocess.run([sys.executable, '-c', child, 'a'], capture_output=True, text=True)\n"
        "sys.stdout = sys.__stdout__\n"
        "print(r.returncode, repr(r.stdout), repr(r.stderr))\n")
    assert want.stdout == "0 \"False False ['-c', 'a']\\n\" ''\nparent atexit\n"


def test_uid_0_is_root_as_the_shell_says(py_box):
    # the box's root has no /etc/passwd: pwd and grp answer for root as
    # whoami and ls do (tarfile, shutil.make_archive and Path.home need it)
    r = py_box.bash("whoami; python3 -c \"import grp, os, pathlib, pwd\n"
                    "print(pwd.getpwuid(os.getuid()).pw_name, pwd.getpwnam('root').pw_uid, "
                    "grp.getgrgid(0).gr_name, grp.getgrnam('root').gr_gid)\n"
                    "print([e.pw_name for e in pwd.getpwall()], [e.gr_name for e in grp.getgrall()])\n"
                    "home = os.environ.pop('HOME')\n"
                    "print(pathlib.Path.home() == pathlib.Path(home), os.path.expanduser('~root') == home)\n"
                    "try:\n    pwd.getpwuid(4242)\nexcept KeyError as e:\n    print(e)\"")
    assert (r.stdout, r.stderr, r.returncode) == (
        "root\nroot 0 root 0\n['root'] ['root']\nTrue True\n'getpwuid(): uid not found: 4242'\n",
        "", 0)


def test_exec_refuses_bad_arguments_as_natively(py_box):
    # routed or not, an exec whose arguments exec would refuse raises in the
    # caller; it must not end the process with the Shell's "not found"
    want = natively_and_boxed(py_box, "badexec.py",
        "import os\n"
        "calls = [(os.execv, ('notepad', ())), (os.execv, ('notepad', [''])),\n"
        "         (os.execv, ('notepad', 'ab')), (os.execvpe, ('notepad', [], None)),\n"
        "         (os.execvpe, ('notepad', [''], {})), (os.execv, ('x', ['x', 'a\\0b'])),\n"
        "         (os.execve, ('x', ['x'], {'A=B': 'c'})), (os.execve, ('x', ['x'], {'A': 'c\\0'})),\n"
        "         (os.execve, ('x', ['x'], 3))]\n"
        "for f, a in calls:\n"
        "    try:\n"
        "        f(*a)\n"
        "    except Exception as e:\n"
        "        print(type(e).__name__, e)\n")
    assert want.stdout.count("\n") == 9 and want.returncode == 0


def test_io_open_kept_as_a_class_attribute_is_called_unbound(py_box):
    # as the builtin is (test_io keeps it so); tracebacks still show the
    # standard library's source through it
    want = natively_and_boxed(py_box, "ioattr.py", status=1, source=
        "import io\n"
        "class Files:\n"
        "    open = io.open\n"
        "with Files().open('ioattr.txt', 'w', -1, 'utf-8', newline='') as f:\n"
        "    f.write('hi')\n"
        "print(Files.open('ioattr.txt', 'rb').read(), io.open.__name__)\n"
        "import json\n"
        "json.loads('{')\n")
    assert want.stdout == "b'hi' open\n" and "obj, end = self.scan_once(s, idx)" in want.stderr


def test_a_thread_may_end_through_pthread_exit(py_box):
    # what a daemon thread does at the interpreter's exit: the C library
    # then needs libgcc_s, which the mount does not hold
    source = ("import ctypes, os, threading, time\n"
              "threading.Thread(target=ctypes.CDLL(None).pthread_exit, args=(None,), daemon=True)"
              ".start()\ntime.sleep(0.2)\nprint('ended', flush=True)\nos._exit(0)")
    r = py_box.bash("python3 -c " + shlex.quote(source))
    assert (r.stdout, r.stderr, r.returncode) == ("ended\n", "", 0)


SUBPROCESS_AS_EXEC = '''\
import os, subprocess, sys
os.environ["FRUIT"] = "orange"
os.putenv("VEG", "leek")
os.environ.pop("USER", None)
code = ("import os; print(os.environ.get('FRUIT'), os.environ.get('VEG'), "
        "os.environ.get('USER'), os.environ.get('ONLY'), oct(os.umask(0)))")
for kw in ({}, {"env": {"ONLY": "this"}}, {"umask": 0o027}):
    print(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, **kw).stdout, end="")
print(subprocess.run("echo $FRUIT $ONLY", shell=True, env={"ONLY": "sh"}, capture_output=True, text=True).stdout, end="")
print(subprocess.run([sys.executable, "-c", "import os; print(os.environ['PRE'])"], capture_output=True,
                     text=True, preexec_fn=lambda: os.putenv("PRE", "apple")).stdout, end="")
try:
    subprocess.run(["echo"], cwd="/no/such/dir")
except FileNotFoundError as e:
    print(type(e).__name__, e.errno, e.filename)
def bad():
    raise ValueError("x")
try:
    subprocess.run(["echo"], preexec_fn=bad)
except subprocess.SubprocessError as e:
    print(type(e).__name__, e)
r = subprocess.run([sys.executable, "-c", "import sys; sys.stdout.write('out'); sys.stderr.write('err')"],
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
print(r.stdout)
for kw in ({"args": ["echo", "a\\0b"]}, {"args": ["echo"], "env": {"A": "b\\0c"}}):
    try:
        subprocess.run(**kw)
    except ValueError as e:
        print("ValueError", e)
'''


def test_subprocess_gets_what_exec_would_give(py_box):
    # the environment (os.environ's changes, env=), umask=, cwd= and
    # preexec_fn, and their failures raised in the parent, as exec's; NUL
    # bytes refused before the fork
    want = natively_and_boxed(py_box, "asexec.py", SUBPROCESS_AS_EXEC)
    assert want.stdout.startswith("orange leek None None 0o22\nNone None None this 0o22\n")


def test_a_warning_from_io_open_names_the_callers_line(py_box):
    # the traceback printer's io.open adds no frame of its own
    (py_box.workspace / "enc.txt").write_text("x")
    code = "from io import open\nwith open('enc.txt') as f:\n    pass\n"
    want = native(["-X", "warn_default_encoding", "-c", code], py_box.workspace)
    assert want.stderr.startswith("<string>:2: EncodingWarning: 'encoding' argument not specified")
    r = py_box.bash(f"python3 -X warn_default_encoding -c \"{code}\"")
    assert (r.stdout, r.stderr, r.returncode) == (want.stdout, want.stderr, 0)


def test_an_unlinked_open_file_takes_ftruncate_and_fchmod(py_box):
    # the mount answers for the object once its name is gone, as fstat does
    # (tempfile's files are unlinked while open)
    want = natively_and_boxed(py_box, "unlinked.py",
        "import os, tempfile\n"
        "fd = os.open('u.bin', os.O_RDWR | os.O_CREAT, 0o600)\n"
        "os.write(fd, b'abc')\n"
        "os.unlink('u.bin')\n"
        "os.ftruncate(fd, 20)\n"
        "os.fchmod(fd, 0o640)\n"
        "st = os.fstat(fd)\n"
        "print(st.st_size, oct(st.st_mode & 0o777), os.pread(fd, 4, 0))\n"
        "f = tempfile.SpooledTemporaryFile(max_size=10, dir='.')\n"
        "f.write(b'abcdefg')\n"
        "f.truncate(20)\n"
        "print(f._rolled, os.fstat(f.fileno()).st_size)\n")
    assert want.stdout == "20 0o640 b'abc\\x00'\nTrue 20\n"


def test_popen_runs_its_executable_argument(py_box):
    # executable= is the program; args[0] only names it
    want = natively_and_boxed(py_box, "exe.py",
        "import os, subprocess, sys\n"
        "ghost = os.path.join(os.path.dirname(sys.executable), 'doesnotexist')\n"
        "print(subprocess.run([ghost, '-c', 'import sys; sys.exit(47)'], "
        "executable=sys.executable).returncode)\n"
        "print(subprocess.run(['whatever', 'hi'], executable='echo', capture_output=True, "
        "text=True).stdout, end='')\n")
    assert want.stdout == "47\nhi\n"
