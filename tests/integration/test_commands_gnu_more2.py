"""tree (Debian's tree 2.x), strings (binutils), hexdump (util-linux), join,
split and shuf (GNU) against the host's.

Same method as test_commands_gnu_more.py (gnu_compare.py): each case runs
once through `box-shell -c` and once through `bash -c` with the host's
tools (LC_ALL=C) in two fresh copies of one generated tree; stdout,
stderr, status and the resulting tree must be equal.  shuf is compared
exactly with --random-source (GNU's draws are then fixed); without one
only what does not depend on chance: sorted output, counts, messages.
"""
import subprocess

import pytest

from gnu_compare import BOX_SHELL, SETUP, assert_same_run, need_shell, run_both, tree

EXTRA = r"""
mkdir -p tt/a/b tt/.h tt/c; touch tt/f1 tt/a/f2 tt/a/b/f3 tt/.hid tt/c/x.log tt/B tt/.h/in
ln -s a tt/la; ln -s nowhere tt/ln; ln -s f1 tt/lf
printf 'ab\tcdef\001xyz\nhello world\200\377long string here' > sb; printf 'abcd' > s4; printf 'abc' > s3
printf 'abcdefghijklmnopqrstuvwxyz' > az; head -c 100 /dev/zero > z100; printf 'hello world, this is\001\377 a test' > hx
printf 'a 1\nb 2\nc 3\ne 5\n' > j1; printf 'a x\nb y\nb yy\nd z\ne w\n' > j2; printf 'a:1:p\nb::q\nc:3\n' > k1
printf 'a:X\nc:Y:Z\nd:W\n' > k2; printf 'b 1\na 2\nc 3\n' > u1; printf 'x 1 a\ny 2 b\n' > f3; printf 'A one\nB two\n' > up
printf 'H1 h\na 1\n' > h1; printf 'H2 g\na 2\n' > h2; printf '  a   1  \n b 2\n' > sp
seq 10 > in; seq 100 > big; seq 700 > s700; printf 'aaaaaaaaaaaaaaaaaaaaa\nb\nc\n' > lo
awk 'BEGIN { srand(7); for (i = 0; i < 65536; i++) printf "%c", int(rand() * 256) }' > rs; head -c 2 rs > rs2
seq 1000 > s1000
"""

TREE = [
    'tree tt; echo $?', 'cd tt && tree', 'tree -a tt', 'tree -a -L 1 tt', 'tree -d tt', 'tree -d -L 1 tt/a',
    'tree -I "*.log|b" tt', 'tree -I f2 -I c tt', 'tree -a -I ".h*" tt', 'tree nope; echo $?', 'tree tt tt/a',
    'tree tt/f1; echo $?', 'tree -L 0 tt; echo $?', 'tree -L x tt; echo $?', 'tree --noreport tt/a',
    'tree -L 2 -a tt', 'tree -d nope tt/a; echo $?', 'tree tt/c', 'tree d', 'tree -a -d tt',
    'LC_ALL=C.UTF-8 tree tt', 'LC_ALL=C.UTF-8 tree -a -d tt; echo $?',
    'tree -P "*.log" tt', 'tree -P "f*|*.log" -a tt', 'tree -P "f*" -d tt', 'tree -P "x*" -I c tt',
    'tree -f tt', 'cd tt && tree -f -a', 'tree -f -L 1 tt/a', 'tree -i tt', 'tree -i -f -a tt',
    'tree --dirsfirst tt', 'tree --dirsfirst -a tt', 'tree --dirsfirst -d tt', 'tree --dirsfirst -P "*.log" -f tt',
    'LC_ALL=C.UTF-8 tree -i --dirsfirst tt',
]

STRINGS = [
    'strings sb', 'strings -n 2 sb', 'strings -n 0 sb; echo $?', 'strings -n x sb; echo $?', 'strings -a sb',
    'strings -5 sb', 'strings --bytes=3 sb', 'strings s4 s3', 'printf "abcd" | strings', 'strings nope; echo $?',
    'strings d; echo $?', 'strings nope d sb; echo $?', 'strings -f sb s4', 'strings -t x sb', 'strings -t d -f -5 sb az',
    'strings -o sb', 'strings -w sb', 'strings -s "|" sb', 'strings -12 sb', 'strings bin', 'strings -n 1 bin',
]

HEXDUMP = [
    'hexdump az', 'hexdump -C az', 'printf abc | hexdump', 'printf abc | hexdump -C', 'printf "" | hexdump -C; echo $?',
    'hexdump -C z100', 'hexdump z100', 'hexdump -v -C z100', 'hexdump -C hx', 'hexdump hx', 'hexdump nope; echo $?',
    'hexdump d; echo $?', 'hexdump -C nope sb; echo $?', 'hexdump -C az az', 'hexdump -C -n 5 -s 3 az',
    'hexdump -s 100 az', 'hexdump -C -s 100 az', 'hexdump -C -n 0 az', 'hexdump -C -v /dev/zero -n 40',
    'hexdump -n x az; echo $?', 'hexdump -s x az; echo $?', 'hexdump -C - ; echo $?', 'hexdump -s 3 -n 30 az az',
    'printf "abcdefghijklmnopq" | hexdump', 'hexdump -C bin', 'hexdump -C nope nope2; echo $?',
    'hexdump --canonical --length=4 az',
]

JOIN = [
    'join j1 j2', 'join -a 1 j1 j2', 'join -a 2 j1 j2', 'join -a1 -a2 j1 j2', 'join -v 1 j1 j2', 'join -v 2 j1 j2',
    'join -t: k1 k2', 'join -t: -a1 -a2 -e NA -o 0,1.2,1.3,2.2,2.3 k1 k2', 'join -t: -o auto -e - -a1 -a2 k1 k2',
    'join -t: -e E k1 k2', 'join u1 j2; echo $?', 'join j2 u1; echo $?', 'join --check-order u1 j2; echo $?',
    'join --nocheck-order u1 j2; echo $?', 'join -a1 u1 j2; echo $?', 'join -2 3 j1 f3', 'join -1 2 -2 2 j1 f3',
    'join -j 1 j1 j2', 'join -i up j1; echo $?', 'join --header h1 h2', 'join -o 1.1,2.2,0 j1 j2',
    'join -o "1.2 2.2" j1 j2', 'join sp sp', 'join nope j1; echo $?', 'join j1; echo $?', 'join; echo $?',
    'join a b c; echo $?', 'join -o 3.1 j1 j2; echo $?', 'join -o x j1 j2; echo $?', 'join -1 0 j1 j2; echo $?',
    'join -a 3 j1 j2; echo $?', 'join -t ab j1 j2; echo $?', 'join - j2 < j1', 'join -v1 -v2 j1 j2',
    'printf "b 1\\na 2\\n" | join - j1; echo $?', 'join -t "" j1 j1', 'join -o 1.5 j1 j2', 'join -e X -o 1.5 j1 j2',
    'join -a1 -a2 -o auto j1 f3', 'join -o 1.x j1 j2; echo $?',
]

SPLIT = [t + '; echo $?; ls' for t in [
    'split -l 1 s700; ls | sed -n 649,653p', 'seq 100 | split -l 1 -d; ls | sed -n 89,92p',
    'for s in 3 l/3 l/4 r/3 7 l/7 r/7 5; do split -n $s in p_; echo "== $s"; for f in p_*; do printf "%s:" $f; '
    'tr "\\n" , < $f; echo; done; rm -f p_*; done',
    'split -n 2/3 in', 'split -n l/2/3 in', 'split -n r/2/3 in', 'split -n 1/7 in', 'split -n 3/3 big',
    'split -n l/3/3 big', 'split -n 3 -e in q; ls q*', 'split -n l/7 big z; wc -c z*', 'split -n 30 -e in',
    'split -n 30 in', 'split -n l/30 in; cat xab', 'split -l 0 in', 'split -b 0 in', 'split -n 0 in',
    'split -l 2 -b 3 in', 'split nope', 'split -a 1 -l 1 big', 'split -l x in', 'split -n x in', 'split -n 4/3 in',
    'split -n x/3 in', 'split -n 0/3 in', 'printf abc | split -n 2', 'split -n r/2 - < in', 'split -n l/4 lo; wc -c x*',
    'seq 5 | split -n r/2; cat xab', 'split -a 0 -l 1 in', 'split -a x in', 'split -b 7 in pre; cat preaa',
    'split -b 1K big', 'split -l 3 -a 3 -d --additional-suffix=.txt in p; cat p002.txt', 'split -x -l 1 big',
    'split in a b c', 'cat in | split -l 4 - y', 'printf abc | split -l 1; cat xaa', 'split -n l/3 /dev/null',
    'split -l 2 in nodir/x', 'printf "" | split', 'split in', 'split -l 3 in', 'split -b 10 big',
    'split --lines=4 --numeric-suffixes --suffix-length=4 big n_',
]]

SHUF = [
    'seq 5 | shuf --random-source=rs2; echo $?', 'shuf --random-source=nope -i 1-3; echo $?', 'shuf -i x; echo $?',
    'shuf -n x; echo $?', 'shuf -e -i 1-2; echo $?', 'shuf a b; echo $?', 'shuf -r -i 1-0; echo $?',
    'shuf -r -e; echo $?', 'shuf -n 0 nope; echo $?', 'shuf -i 3-1; echo $?', 'shuf -i 1-5 -n 2 --random-source=rs',
    'shuf -n 2 -i 5-4; echo $?', 'shuf --random-source=rs s1000', 'shuf --random-source=rs -n 10 s1000',
    'seq 1000 | shuf --random-source=rs -n 10', 'seq 1000 | shuf --random-source=rs -n 1',
    'shuf --random-source=rs -i 1-100000 -n 5', 'shuf --random-source=rs -i 10-20 -r -n 30',
    'shuf --random-source=rs -e a b c d e f', 'shuf --random-source=rs -e a b c -r -n 7',
    'printf "a\\0b\\0c" | shuf -z --random-source=rs | od -c', 'shuf --random-source=rs2 -i 1-1000; echo $?',
    'printf "x\\ny" | shuf --random-source=rs', 'shuf nope; echo $?', 'seq 100 | shuf -n 3 --random-source=rs2; echo $?',
    'shuf -n 3 -n 5 --random-source=rs s1000', 'shuf --random-source=rs -n 4 < s1000', 'shuf s1000 | sort -n | cmp - s1000',
    'shuf -i 1-50 -n 50 | sort -n | uniq | wc -l', 'shuf -r -n 5 -e a | uniq -c', 'shuf -n 7 s1000 | wc -l',
    'shuf -e x y z | sort', 'shuf -r -i 3-3 -n 4', 'seq 3 | shuf -n 5 | sort', 'shuf --random-source=rs -i 0-0',
]


@pytest.mark.parametrize("text", TREE + STRINGS + HEXDUMP + JOIN + SPLIT + SHUF)
def test_against_gnu(tmp_path, text):
    need_shell()
    assert_same_run(*run_both(tmp_path, text, EXTRA))


# A sample of the cases with no PATH on the Shell's side: the answer must
# be the Shell's own (bash finds the host's tools as before), not the
# host program's run through PATH.
OWN = ['tree tt', 'strings sb', 'hexdump -C az', 'join j1 j2', 'split -n l/3 in; cat xab', 'shuf --random-source=rs s1000']


@pytest.mark.parametrize("text", OWN)
def test_the_shells_own(tmp_path, text):
    need_shell()
    box, gnu = run_both(tmp_path, text, EXTRA)
    d = tmp_path / "nopath"
    d.mkdir()
    subprocess.run(["bash", "-c", SETUP + EXTRA], cwd=d, check=True)
    p = subprocess.run([str(BOX_SHELL), "-c", text], cwd=d, capture_output=True, timeout=60,
                       env={"PATH": "/nonexistent", "HOME": str(d), "LC_ALL": "C"})
    assert_same_run((p.stdout, p.stderr, p.returncode, tree(d)), gnu)
