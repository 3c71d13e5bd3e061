"""The method of the test_commands_gnu*.py files: the same text runs twice,
in two fresh copies of one generated tree, once through `box-shell -c` (the
Shell alone, no box) and once through `bash -c` with the GNU tools
(LC_ALL=C); stdout, stderr, exit status and the resulting tree must agree.
"""
import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from conftest import BOX_SHELL

# The tree every case starts from; a file adds its own lines after it.
SETUP = r"""
printf 'foo bar\nbaz\nFoo\nqux foo\nxx\nyy\nzz\nfoo\n' > a.txt
printf 'x\nfoobar\n' > 'b c.txt'
mkdir -p d/e d/sub e2; cp a.txt d/; cp a.txt d/e/z.c; echo b > d/x; echo c > d/sub/y
printf 'abc\0def\nabc\n' > bin
printf 'a\nb\nc' > nonl
seq 1 30 > s
printf 'b 2 x\na 10 y\nB 1 z\na 2 w\n c 3 v\n10K\n2M\n1.5\n-3\n' > so
printf 'v1.10\nv1.2\nv1.9a\nfile-1.0.tar.gz\nfile-1.0.10.tar.gz\n' > ver
printf 'Mar x\nJAN y\nfeb z\nfoo\n' > mon
printf 'a\na\nb\nB\nb\n\n\nc x\nd x\nd x\n' > u
printf 'a:b:c\nd:e\nnodelim\n1:2:3:4\n' > cu
seq 1 12 > n
printf 'hello world\nfoo bar\nHello again\n' > h
printf 'foo\nbar\n' > pats
echo a > f; ln -s f lnk; echo s > 'sp ace'; touch -- -dash
"""

# The files diff, du and stat compare, and names with spaces, newlines and
# leading dashes; fixed times, so `diff -u` headers and `ls -t` agree
# between the copies.
DIFF_TREE = r"""
printf 'a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n' > o1
printf 'a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nK\nl\nm\n' > o2
printf 'one  two\nthree\tfour \nfive\n' > w1
printf 'one two\nthree four\n five\n' > w2
printf 'x\n' > nl1; printf 'x' > nl2
printf 'a\0b\n' > b1; printf 'a\0c\n' > b2
mkdir -p A/s A/only B/s C; echo 1 > A/f; echo 2 > B/f; echo x > A/o; echo z > A/s/q; echo y > B/s/q
echo same > A/same; echo same > B/same; echo n > B/newer; echo k > A/only/k; echo 1 > C/s
printf 'x\n' > 'sp a'; printf 'y\n' > 'sp b'; printf 'p\n' > -dash1; printf 'q\n' > -dash2
printf 'a\n' > "$(printf 'nl\nname')"
touch -d '2024-01-02 03:04:05.123456789' o1 o2 w1 w2 nl1 nl2 A/f B/f A/o B/newer A/s/q B/s/q A/same B/same A/only/k 'sp a' 'sp b' -- -dash1 -dash2
touch -d '2024-01-01 00:00:00' t_old; touch -d '2024-06-01 00:00:00' t_mid; touch -d '2025-01-01 00:00:00' t_new
head -c 10000 /dev/zero > zeros
"""


def files_dir(tmp_path_factory, name: str, files: dict) -> Path:
    """A new directory holding files (relative path: text or bytes)."""
    d = tmp_path_factory.mktemp(name)
    for rel, data in files.items():
        p = d / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            p.write_bytes(data)
        else:
            p.write_text(data)
    return d


def need_shell():
    if not BOX_SHELL.exists():
        pytest.skip("box-shell not built")


def tree(root: Path) -> list:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            rel = p.relative_to(root)
            st = p.lstat()
            if p.is_symlink():
                out.append((str(rel), "l", os.readlink(p)))
            elif p.is_dir():
                out.append((str(rel), "d", oct(st.st_mode & 0o7777)))
            else:
                out.append((str(rel), "f", oct(st.st_mode & 0o7777),
                            hashlib.md5(p.read_bytes()).hexdigest()))
    return sorted(out)


def run_both(tmp_path: Path, text: str, extra="", env=None):
    """(stdout, stderr, status, tree) of the Shell, then of bash, each in its
    own fresh tree; env adds to the fixed environment."""
    results = []
    for kind in ("box", "gnu"):
        d = tmp_path / kind
        d.mkdir()
        subprocess.run(["bash", "-c", SETUP + extra], cwd=d, check=True)
        run_env = {"PATH": "/usr/bin:/bin", "HOME": str(d), "LC_ALL": "C", **(env or {})}
        argv = [str(BOX_SHELL), "-c", text] if kind == "box" else ["bash", "-c", text]
        p = subprocess.run(argv, cwd=d, env=run_env, capture_output=True, timeout=60)
        results.append((p.stdout, p.stderr, p.returncode, tree(d)))
    return results


def assert_same_run(box, gnu):
    """The four parts of run_both's results agree, stderr first (it says why)."""
    assert box[1].decode(errors="replace") == gnu[1].decode(errors="replace"), "stderr"
    assert box[0] == gnu[0], "stdout"
    assert box[2] == gnu[2], "status"
    assert box[3] == gnu[3], "resulting tree"


def assert_same_in(d: Path, cases, timeout=None):
    """Each case through the Shell and through bash in the one directory d:
    stdout, stderr and status agree."""
    for text in cases:
        outs = []
        for argv in ([str(BOX_SHELL), "-c", text], ["bash", "-c", text]):
            p = subprocess.run(argv, cwd=d, capture_output=True,
                               env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"}, timeout=timeout)
            outs.append((p.stdout, p.stderr, p.returncode))
        assert outs[0] == outs[1], text
