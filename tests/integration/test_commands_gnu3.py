"""Issue 5: the text, checksum and misc commands against the GNU tools.

Same method as test_commands_gnu.py: each case runs once through
`box-shell -c` and once through `bash -c` with the GNU tools (LC_ALL=C) in
two fresh copies of one generated tree; stdout, stderr, status and the
resulting tree must be equal.
"""
import subprocess

import pytest

from test_commands_gnu import BOX_SHELL, SETUP, tree

EXTRA = r"""
printf 'one\ttwo\tthree\n\tlead\n  \tsp\nab\bc\tx\n' > tabs
printf 'the quick brown fox jumps over the lazy dog and keeps running far away\nshort\n%0100d\n' 0 > long
printf 'apple\nbanana\ncherry\nfig\n' > c1
printf 'banana\ncarrot\ncherry\ngrape\n' > c2
printf 'b\na\nc\n' > unsorted
printf 'hello\n\nworld\n\n\nlast' > blank
printf '1\n2\n3\n' > p1; printf 'a\nb\n' > p2
printf 'Man is distinguished, not only by his reason\n' > m
head -c 300 /bin/sh > binf
printf 'aGVsbG8gd29ybGQK\n' > enc; printf 'aGVsbG8*gd29y\n' > badenc
md5sum a.txt s > md5.ok; sha1sum a.txt s > sha1.ok; sha256sum a.txt s nope 2>/dev/null > sha256.ok
printf '%s  a.txt\n' 0123456789abcdef0123456789abcdef > md5.bad; echo garbage >> md5.bad
printf 'x\n' > 'back\\slash'
"""

TEXT = [
    'rev a.txt', 'rev nonl', 'printf "abc\\ndef\\n" | rev', 'rev nope; echo $?',
    'nl a.txt', 'nl blank', 'nl -b a blank', 'nl -b n blank', 'nl -w 3 -s ": " a.txt', 'nl -n ln a.txt',
    'nl -n rz -w 4 a.txt', 'nl -v 10 -i 5 a.txt', 'nl -b x a.txt; echo $?', 'nl -w 0 a.txt; echo $?', 'nl nope; echo $?',
    'nl -n xx a.txt; echo $?', 'cat a.txt | nl -', 'nl nonl',
    'paste p1 p2', 'paste -d, p1 p2 p1', 'paste -s p1 p2', 'paste -s -d ":," s', 'paste -d "\\n" p1 p2',
    'paste - - < s', 'paste -d "\\0" p1 p2', 'paste p1 nope; echo $?', 'paste nonl p1', 'paste -z p1 p2 | tr "\\0" @',
    'fold -w 20 long', 'fold -s -w 20 long', 'fold -b -w 7 tabs', 'fold -w 7 tabs', 'fold long', 'fold -10 long',
    'fold -w 0 long; echo $?', 'fold -w x long; echo $?', 'fold -s -w 5 tabs', 'fold nope; echo $?', 'fold -w 3 nonl',
    'expand tabs', 'expand -t 4 tabs', 'expand -t 2,5,9 tabs', 'expand -i tabs', 'expand -t 0 tabs; echo $?',
    'expand -t 5,3 tabs; echo $?', 'expand -t x tabs; echo $?', 'expand nope; echo $?', 'printf "a\\tb" | expand -t3',
    'comm c1 c2', 'comm -1 c1 c2', 'comm -2 c1 c2', 'comm -3 c1 c2', 'comm -12 c1 c2', 'comm -23 c1 c2',
    'comm --output-delimiter=:: c1 c2', 'comm c1 unsorted; echo $?', 'comm --check-order c1 unsorted; echo $?',
    'comm --nocheck-order c1 unsorted; echo $?', 'comm c1; echo $?', 'comm c1 c2 c1; echo $?', 'comm c1 nope; echo $?',
    'comm - c2 < c1', 'comm --total c1 c2', 'comm nonl c2',
]
CODEC = [
    'base64 m', 'base64 -w 20 m', 'base64 -w0 m', 'base64 binf', 'base64 < m', 'base64 -d enc', 'base64 -d badenc; echo $?',
    'base64 -d -i badenc | od -c', 'base64 -d -i badenc', 'base64 m | base64 -d', 'base64 binf | base64 -d | md5sum; md5sum < binf',
    'base64 -w x m; echo $?', 'base64 nope; echo $?', 'base64 m s; echo $?', 'printf "" | base64', 'printf a | base64',
    'printf ab | base64', 'printf "YQ" | base64 -d; echo " $?"', 'printf "YWI=\\nYWI=\\n" | base64 -d',
    'md5sum a.txt s', 'sha1sum a.txt s', 'sha256sum a.txt s', 'sha256sum < a.txt', 'md5sum nope a.txt; echo $?',
    'sha256sum -b a.txt', 'md5sum back*', 'md5sum -z a.txt | tr "\\0" @', 'md5sum bin binf',
    'md5sum -c md5.ok', 'sha1sum -c sha1.ok', 'sha256sum -c sha256.ok', 'echo x >> a.txt; md5sum -c md5.ok; echo $?',
    'md5sum -c md5.bad; echo $?', 'md5sum -c --quiet md5.ok', 'md5sum -c --status md5.bad; echo $?',
    'md5sum -c a.txt; echo $?', 'rm s; md5sum -c md5.ok; echo $?', 'rm s; md5sum -c --ignore-missing md5.ok; echo $?',
    'md5sum -c --strict md5.bad; echo $?', 'md5sum -c -w md5.bad; echo $?', 'md5sum back* | md5sum -c',
    'md5sum a.txt | sha1sum -c; echo $?', 'md5sum --bogus; echo $?',
]
MISC3 = [
    'hostname',
    'od -c bin', 'od -c a.txt', 'od -b nonl', 'od -t x1 bin', 'od -A x -c m', 'od -A d -t x1 m', 'od -A n -c nonl',
    'od bin', 'od nonl', 'od -x m', 'od -c -t x1 bin', 'od -t d1 binf | head -3', 'od -t u2 nonl',
    'head -c 100 /dev/zero > z; od -c z', 'head -c 100 /dev/zero > z; od -v -c z', 'od -N 5 -j 2 -c m', 'od -c nope; echo $?',
    'od -w8 -c m', 'od -t q m; echo $?', 'printf abc | od -c',
    'xxd m', 'xxd bin', 'xxd -p binf', 'xxd -p m', 'xxd -c 8 m', 'xxd -g 1 m', 'xxd -g 4 -c 12 m', 'xxd -l 10 m',
    'xxd -s 5 m', 'xxd -u binf | head -3', 'printf "" | xxd', 'xxd -g 0 m',
    'expr 1 + 2', 'expr 7 \\* 6', 'expr 10 / 3', 'expr 10 % 3', 'expr 5 - 8', 'expr 1 / 0; echo $?', 'expr a + 1; echo $?',
    'expr 3 \\> 2', 'expr abc \\< abd', 'expr 10 = 10.0; echo $?', 'expr 0; echo $?', 'expr "" ; echo $?',
    'expr length hello', 'expr substr hello 2 3', 'expr index hello l', 'expr hello : "h\\(.*\\)o"', 'expr hello : "hel"',
    'expr match abc "b"; echo $?', 'expr 0 \\| 5', 'expr 0 \\& 5; echo $?', 'expr "" \\| ""; echo $?', 'expr \\( 1 + 2 \\) \\* 3',
    'expr 1 +; echo $?', 'expr 1 2; echo $?', 'expr; echo $?', 'expr \\( 1; echo $?', 'expr -5 + 2', 'expr 2 != 3',
    'expr + length', 'expr abc : "\\(x\\)*"; echo $?',
]


def run_both(tmp_path, text):
    results = []
    for kind in ("box", "gnu"):
        d = tmp_path / kind
        d.mkdir()
        subprocess.run(["bash", "-c", SETUP + EXTRA], cwd=d, check=True)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(d), "LC_ALL": "C"}
        argv = [str(BOX_SHELL), "-c", text] if kind == "box" else ["bash", "-c", text]
        p = subprocess.run(argv, cwd=d, env=env, capture_output=True, timeout=60)
        results.append((p.stdout, p.stderr, p.returncode, tree(d)))
    return results


@pytest.mark.parametrize("text", TEXT + CODEC + MISC3)
def test_against_gnu(tmp_path, text):
    if not BOX_SHELL.exists():
        pytest.skip("box-shell not built")
    box, gnu = run_both(tmp_path, text)
    assert box[1].decode(errors="replace") == gnu[1].decode(errors="replace"), "stderr"
    assert box[0] == gnu[0], "stdout"
    assert box[2] == gnu[2], "status"
    assert box[3] == gnu[3], "resulting tree"
