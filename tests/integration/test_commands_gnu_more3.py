"""sha224sum, sha384sum, sha512sum, b2sum, mkfifo and nohup against GNU's,
iconv against glibc's, file against file(1) and pushd, popd and dirs
against bash's.  SHA-224 and BLAKE2b are written out in
shell/commands/digest.c, so the sums run over the sizes where padding
changes: 0, 55, 56, 63, 64, 65, 111, 112, 127, 128, 129 bytes and 1 MB.

Same method as test_commands_gnu.py (gnu_compare.py): each case runs once
through `box-shell -c` and once through `bash -c` with the host's tools
(LC_ALL=C) in two fresh copies of one generated tree; stdout, stderr,
status and the resulting tree must be equal.
"""
import re
import shlex
import subprocess

import pytest

from conftest import BOX_SHELL
from gnu_compare import SETUP, assert_same_run, need_shell, run_both

SIZES = [0, 1, 3, 55, 56, 57, 63, 64, 65, 111, 112, 119, 120, 127, 128, 129, 255, 256, 257, 1000, 1048576]

# Bytes that are not all alike (a program), so a wrong word order or
# rotation shows.
EXTRA = "".join(f"head -c {n} /usr/bin/bash > z{n}\n" for n in SIZES) + r"""
printf 'x\n' > 'back\\slash'; printf 'y\n' > "$(printf 'n\nl')"
for s in sha224 sha384 sha512 b2; do ${s}sum a.txt s > $s.ok; ${s}sum a.txt nope s 2>/dev/null > $s.miss; done
b2sum -l 256 a.txt s > b2-256.ok; b2sum -l 8 a.txt > b2-8.ok; cp b2-256.ok b2-mixed.ok; cat b2.ok >> b2-mixed.ok
printf 'garbage\n' >> sha224.bad; sha224sum s >> sha224.bad; printf '%056d  a.txt\n' 0 >> sha224.bad
"""

SUMS = ["sha224sum", "sha384sum", "sha512sum", "b2sum"]

ALL_SIZES = [f"{s} {' '.join(f'z{n}' for n in SIZES)}" for s in SUMS] + [
    f"b2sum -l {bits} {' '.join(f'z{n}' for n in SIZES)}" for bits in (8, 160, 256, 384, 504)]

CASES = [t + "; echo $?" for s in SUMS for t in [
    f"{s} a.txt s", f"{s} < a.txt", f"{s} -b a.txt", f"{s} nope a.txt", f"{s} back*", f"{s} n?l",
    f"{s} -z a.txt back* | tr '\\0' @", f"{s} -c {s.replace('sum', '')}.ok", f"{s} -c --quiet {s.replace('sum', '')}.ok",
    f"{s} -c --status {s.replace('sum', '')}.ok", f"echo x >> a.txt; {s} -c {s.replace('sum', '')}.ok",
    f"{s} -c {s.replace('sum', '')}.miss", f"{s} -c --ignore-missing {s.replace('sum', '')}.miss",
    f"{s} -c -w a.txt", f"{s} -c a.txt", f"{s} d; echo", f"{s} -x", f"{s} --check --strict md5.bad",
    f"{s} a.txt | {s} -c", f"{s} -c - < {s.replace('sum', '')}.ok",
    f"{s} --tag a.txt back* n?l", f"{s} --tag -z a.txt back* | tr '\\0' @", f"{s} --tag a.txt s | {s} -c",
    f"{s} --tag back* a.txt nope > t.sum; {s} -c t.sum", f"{s} --tag -t a.txt", f"{s} -t --tag a.txt",
    f"{s} --tag -b a.txt", f"{s} --tag -c {s.replace('sum', '')}.ok", f"{s} --tag a.txt | sed 's/) = /)= /' | {s} -c -w",
]] + [t + "; echo $?" for t in [
    "b2sum -l 256 a.txt", "b2sum --length=128 a.txt", "b2sum -l 0 a.txt", "b2sum -l 512 a.txt", "b2sum -l 7 a.txt",
    "b2sum -l 1024 a.txt", "b2sum -l x a.txt", "b2sum -l '' a.txt", "b2sum -l -8 a.txt", "b2sum -l", "b2sum -c b2-256.ok",
    "b2sum -c b2-8.ok", "b2sum -c b2-mixed.ok", "b2sum -l 128 -c b2-256.ok", "sha256sum -c b2-256.ok",
    "sha224sum -c sha224.bad", "sha224sum -c -w sha224.bad", "sha224sum -c --strict sha224.bad", "sha384sum -l 8 a.txt",
    "printf '%0130d  a.txt\\n' 0 | b2sum -c -w", "printf '%0126d  a.txt\\n' 0 | b2sum -c", "printf '0  a.txt\\n' | b2sum -c -w",
    "sha256sum -c -w 'sp ace'", "printf 'x\\n' | sha256sum -c -w",
    "b2sum --tag -l 256 a.txt s", "b2sum --tag -l 512 a.txt", "b2sum --tag -l 8 a.txt > t.sum; b2sum --tag s >> t.sum; b2sum -c t.sum",
    "b2sum --tag -l 256 a.txt | b2sum -l 128 -c", "sha224sum --tag a.txt | sha384sum -c", "sha512sum --tag a.txt | b2sum -c",
    "printf 'BLAKE2b-7 (a.txt) = 00\\n' | b2sum -c -w", "md5sum --tag a.txt s | md5sum -c",
    "sha224sum --tag a.txt | sed 's/^/  /; s/ (/(/; s/ = /   =/' | sha224sum -c -w",
    "sha224sum --tag a.txt | sed 's/ (/\\t(/' | sha224sum -c -w", "sha224sum --tag a.txt | sed 's/$/ /' | sha224sum -c -w",
    "sha224sum --tag a.txt | sed 's/(a.txt)/(a.txt))/' | sha224sum -c -w", "sha224sum a.txt | sed 's/^/\\t /' | sha224sum -c",
]]

MD5_BAD = r"""
printf '%s  a.txt\n' 0123456789abcdef0123456789abcdef > md5.bad; echo garbage >> md5.bad
"""


@pytest.mark.parametrize("text", ALL_SIZES + CASES)
def test_sums_against_gnu(tmp_path, text):
    need_shell()
    assert_same_run(*run_both(tmp_path, text, EXTRA + MD5_BAD))


# each case removes its fifos: the comparison of the trees would open them
MKFIFO = [t + '; echo $?; rm -f ff* p1' for t in [
    'mkfifo ff; ls -l ff | cut -c1-10', 'mkfifo ff ff', 'mkfifo -m 600 ff2; ls -l ff2 | cut -c1-10', 'mkfifo -m x ff3',
    'mkfifo', 'mkfifo nodir/f', 'mkfifo -m u=rw,g=r ff4; ls -l ff4 | cut -c1-10', 'mkfifo -m +x ff; ls -l ff | cut -c1-10',
    'mkfifo --mode=644 ff5; ls -l ff5 | cut -c1-10', 'mkfifo -m 1777 ff6; ls -l ff6 | cut -c1-10', 'mkfifo a.txt ff',
    'mkfifo ffa ffb; ls -l ffa ffb | cut -c1-10', 'mkfifo -z ff7', 'mkfifo p1 && (echo hi > p1 &) && cat p1',
    'umask 077; mkfifo ff; ls -l ff | cut -c1-10', 'umask 077; mkfifo -m g+w ff; ls -l ff | cut -c1-10',
    'mkfifo -m 0 ff nodir/x ff8; ls -l ff ff8 | cut -c1-10', 'mkdir d2 d2 d3/x; echo $?; mkdir -p d/e d4/e/f; ls -d d*',
]]


@pytest.mark.parametrize("text", MKFIFO)
def test_mkfifo_against_gnu(tmp_path, text):
    need_shell()
    assert_same_run(*run_both(tmp_path, text))


# The commands above, with no program on PATH: the Shell's own answer what
# GNU's is, so a host tool cannot stand in for a missing one.
BUILT_IN = r"""
sha224sum a.txt
sha384sum a.txt
sha512sum a.txt
b2sum -l 96 a.txt
sha224sum -c sha224.ok
mkfifo ff; echo $?; [ -p ff ] && echo fifo; rm -f ff
nohup sha256sum a.txt; echo $?
nohup; echo $?
iconv -f UTF-8 -t UTF-16 a.txt | od -c
pushd d; dirs -p; popd
file a.txt d lnk
""".strip().split("\n")


@pytest.mark.parametrize("text", BUILT_IN)
def test_built_in_without_path(tmp_path, text):
    need_shell()
    d = tmp_path / "t"
    d.mkdir()
    subprocess.run(["bash", "-c", SETUP + EXTRA], cwd=d, check=True)
    runs = []
    for argv, path in (([str(BOX_SHELL), "-c", text], "/nonexistent"), (["bash", "-c", text], "/usr/bin:/bin")):
        p = subprocess.run(argv, cwd=d, env={"PATH": path, "LC_ALL": "C"}, capture_output=True, timeout=60)
        runs.append((p.stdout, p.stderr, p.returncode))
    assert runs[0] == runs[1]


NOHUP = [t + '; echo $?' for t in [
    'nohup', 'nohup nosuch', 'nohup ./a.txt', 'nohup d', 'nohup /nonexistent/x', 'nohup /tmp', 'nohup echo hi',
    'nohup -x', 'nohup --', 'nohup -- echo x', 'nohup false', 'nohup sh -c "exit 3"', 'echo in | nohup cat',
    'nohup sh -c "kill -HUP \\$\\$; echo alive"', 'nohup sha256sum a.txt', 'nohup nosuch 2>&1 | cat',
]]

# Through a terminal (script(1) gives the case one): nohup.out, its messages
# and the input made unreadable.
NOHUP_TTY = [t + '; echo $?; cat nohup.out' for t in [
    'nohup echo hi', 'nohup echo hi < /dev/null', 'nohup echo hi > o; cat o', 'nohup sh -c "echo e >&2" 2> e; cat e',
    'nohup sh -c "echo e >&2; echo o" > o; cat o', 'nohup cat; nohup read x', 'nohup nosuch', 'nohup echo a; nohup echo b',
    'nohup sh -c "echo e >&2" < /dev/null > o; cat o',
]]


@pytest.mark.parametrize("text", NOHUP)
def test_nohup_against_gnu(tmp_path, text):
    need_shell()
    assert_same_run(*run_both(tmp_path, text))


@pytest.mark.parametrize("text", NOHUP_TTY)
def test_nohup_on_a_terminal(tmp_path, text):
    need_shell()
    results = []
    for shell in (str(BOX_SHELL), "bash"):
        d = tmp_path / shell.replace("/", "_")
        d.mkdir()
        subprocess.run(["bash", "-c", SETUP], cwd=d, check=True)
        cmd = f"script -qec {shlex.quote(shell + ' -c ' + shlex.quote(text))} /dev/null"
        p = subprocess.run(["bash", "-c", cmd], cwd=d, capture_output=True, timeout=60,
                           env={"PATH": "/usr/bin:/bin", "HOME": str(d), "LC_ALL": "C", "TERM": "dumb"})
        results.append((p.stdout, p.stderr, p.returncode))
    assert results[0] == results[1]


# bash's directory stack; HOME is each run's own directory, so the paths
# dirs prints (with "~") are the same in both.
DIRSTACK = [
    'pushd; echo $?; popd; echo $?; dirs; dirs +3; echo $?', 'pushd d; pushd ../e2; dirs; dirs -v; dirs -p; dirs -l',
    'pushd d >/dev/null; pushd /tmp; echo ${DIRSTACK[@]}; pushd +1; pushd -1; pushd; popd +5; echo $?',
    'pushd d; popd -n; echo $?; popd -n; echo $?; dirs', 'pushd -n /tmp; dirs; pwd', 'pushd -x; echo $?',
    'pushd +x; echo $?', 'dirs +x; echo $?', 'dirs -lv; echo $?', 'dirs a; echo $?', 'popd a; echo $?', 'popd -x; echo $?',
    'pushd a b; echo $?', 'pushd nosuch; echo $?', 'pushd a.txt; echo $?', 'pushd d; pushd d/e; echo $?; dirs',
    'pushd d >/dev/null; dirs +9; echo $?; dirs -9; echo $?; popd -9; echo $?; pushd +9; echo $?; pushd -9; echo $?',
    'pushd d >/dev/null; dirs -c; echo $?; dirs; pushd e; dirs -c -v; dirs', 'dirs -0; dirs +0; dirs -1; echo $?',
    'pushd d; pushd e; dirs -v -l; dirs -l -p +1; dirs -v +1; dirs -2; popd +1; pwd; popd; pwd; popd; echo $?',
    'pushd -- d; echo $?; dirs -- ; cd /; pushd /tmp; pushd +0; popd +0; echo ${DIRSTACK[@]}',
    'pushd d; pushd /; pushd e2; pushd +2; pushd -0; popd -1; popd; echo $PWD $OLDPWD; dirs -v',
    'HOME=/; pushd /tmp; dirs', 'cd d; pushd ..; cd e2; dirs; pushd; pwd', 'pushd d >/dev/null; rmdir e 2>&1; pushd +1; popd; echo $?',
]


@pytest.mark.parametrize("text", DIRSTACK)
def test_dirstack_against_bash(tmp_path, text):
    need_shell()
    runs = []
    for name, argv in (("box", [str(BOX_SHELL), "-c", text]), ("bash", ["bash", "-c", text])):
        d = tmp_path / name
        d.mkdir()
        subprocess.run(["bash", "-c", SETUP], cwd=d, check=True)
        p = subprocess.run(argv, cwd=d, capture_output=True, timeout=60,
                           env={"PATH": "/usr/bin:/bin", "HOME": str(d), "LC_ALL": "C"})
        err = re.sub(rb"(?m)^bash: (line \d+: )?", b"strands-shell: ", p.stderr)
        runs.append((p.stdout.replace(bytes(d), b"HOME"), err.replace(bytes(d), b"HOME"), p.returncode))
    assert runs[0] == runs[1]


ICONV_FILES = r"""
printf 'caf\303\251 \342\202\254\n' > u8; printf 'bad\377\376ok\n' > bad; printf 'ab\303' > cut
"""

# one case a line, each followed by its status
ICONV = [t + "; echo $?" for t in r"""
iconv -f UTF-8 -t LATIN1 u8
iconv -f UTF-8 -t ASCII u8
iconv -c -f UTF-8 -t ASCII u8
iconv -f UTF-8 -t UTF-16 u8 | od -c
iconv -f XX -t UTF-8 u8
iconv -f UTF-8 -t YY u8
iconv -f UTF-8 -t LATIN1 bad
iconv -c -f UTF-8 -t LATIN1 bad
iconv -f UTF-8 -t LATIN1 nope
iconv -f UTF-8 -t LATIN1 nope u8
iconv u8
iconv -f latin1 -t utf-8 bad | od -c
iconv -t ASCII//TRANSLIT u8
iconv -f UTF-8 -t LATIN1 < cut
iconv -x
iconv --from-code=UTF-8 --to-code=ASCII -c u8
iconv -f UTF-8 -t ASCII u8 u8
iconv -f UTF-8 -t ASCII d
iconv -f UTF-8 -t ASCII d u8
iconv -f UTF-8 -t UTF-16 u8 u8 | od -c
iconv -f
iconv -t ASCII - < u8
iconv -c -f UTF-8 -t ASCII bad u8
iconv -f UTF-16 -t UTF-8 < u8
iconv -c -f UTF-16 -t UTF-8 < u8 | od -c
iconv -cf utf8 -t ascii u8
iconv -f utf8 -t ascii -c u8
iconv --to-code ascii -c u8
iconv -c -t ASCII//TRANSLIT u8
seq 1 5000 | iconv -f ascii -t utf-16 | iconv -f utf-16 -t ascii | md5sum
iconv -f UTF-8 -t UTF-7 u8 u8 | od -c
iconv -f UTF-8 -t ISO-2022-JP u8 - u8 < u8 | od -c
iconv -f LATIN1 -t UTF-8 a.txt bin | od -c
iconv --to-code
LC_ALL=C.UTF-8 iconv -c -t ASCII//TRANSLIT u8
LC_ALL=C.UTF-8 iconv -t LATIN1 u8 | od -c
LC_ALL= LANG=C.UTF-8 iconv -t UTF-16LE u8 | od -c
iconv -l
iconv --list | grep -c //
iconv -cl nope
iconv -l -f XX -t YY u8
iconv -f UTF-8 -l
iconv -lf
""".strip().split("\n")]


@pytest.mark.parametrize("text", ICONV)
def test_iconv_against_glibc(tmp_path, text):
    need_shell()
    assert_same_run(*run_both(tmp_path, text, ICONV_FILES))


def test_iconv_list_on_a_terminal_against_glibc(tmp_path):
    # on a terminal glibc's iconv -l prints a preamble, then the names
    # without their slashes in comma-separated lines
    need_shell()
    outs = []
    for argv in ([str(BOX_SHELL), "-c", "iconv -l"], ["iconv", "-l"]):
        p = subprocess.run(["script", "-qec", shlex.join(argv), "/dev/null"], cwd=tmp_path,
                           capture_output=True, env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
                           timeout=60)
        outs.append((p.stdout, p.returncode))
    assert outs[0] == outs[1]
    assert outs[0][0].startswith(b"The following list contains all the coded character sets")
    assert b"  437, 500, 500V1," in outs[0][0] and b"UTF-8, " in outs[0][0]


# file(1) and the Shell's `file` read the same magic database
FILE = [t + "; echo $?" for t in r"""
file a.txt bin d nope lnk
file -b a.txt
file -i a.txt bin s
file -L lnk f
file -x
file
file lnk
file -bi lnk
file -biL lnk
file --foo
file --mime --brief a.txt
file -- -dash 'sp ace'
file u8 bad cut
file --dereference --no-dereference lnk
file -h -L lnk
printf '#!/bin/sh\necho\n' > sc; file sc
printf '%s' '{"a": 1}' > j.json; file j.json
touch -d '2024-01-02 03:04:05' a.txt; gzip -c a.txt > a.gz; file a.gz; file -i a.gz
""".strip().split("\n")]


@pytest.mark.parametrize("text", FILE)
def test_file_against_file(tmp_path, text):
    need_shell()
    assert_same_run(*run_both(tmp_path, text, ICONV_FILES))
