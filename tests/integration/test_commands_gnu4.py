"""Issue 5: diff, timeout, du and stat against the GNU tools, the options of
the issue's list the other tables did not reach yet, and the edge cases
(binary files, invalid UTF-8, 1 MB lines, a 2 GB file, names with spaces,
newlines and leading dashes).

Same method as test_commands_gnu.py: each case runs once through
`box-shell -c` and once through `bash -c` with the GNU tools (LC_ALL=C) in
two fresh copies of one generated tree; stdout, stderr, status and the
resulting tree must be equal.  Cases that print inode numbers or times of
the tree run both sides on one shared tree instead (SAME_TREE).
"""
import os
import subprocess

import pytest

from test_commands_gnu import BOX_SHELL, SETUP, tree

# Fixed times, so `diff -u` headers and `ls -t` agree between the copies.
EXTRA = r"""
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

DIFF = [
    'diff o1 o2', 'diff o1 o1; echo $?', 'diff -u o1 o2', 'diff -U 1 o1 o2', 'diff -U0 o1 o2', 'diff -U 10 o1 o2',
    'diff --unified=2 o1 o2', 'diff -q o1 o2; echo $?', 'diff -q o1 o1; echo $?', 'diff -s o1 o1',
    'diff w1 w2; echo $?', 'diff -b w1 w2; echo $?', 'diff -w w1 w2; echo $?', 'diff -u -b w1 w2', 'diff -bw w1 w2; echo $?',
    'diff -i o1 o2', 'diff nl1 nl2; echo $?', 'diff -u nl1 nl2', 'diff nl2 nl1', 'diff b1 b2; echo $?', 'diff -q b1 b2',
    'diff -a b1 b2 | od -c', 'diff A B; echo $?', 'diff -r A B; echo $?', 'diff -ru A B', 'diff -rN A B; echo $?', 'diff -ruN A B',
    'diff -rq A B; echo $?', 'diff -rNq A B', 'diff -r A C; echo $?', 'diff -r -x s A B', 'diff A/f B; echo $?', 'diff B A/f',
    'diff A/f B/s; echo $?', 'diff -N o1 nope; echo $?', 'diff -u -N nope o1', 'diff nope o1; echo $?', 'diff o1; echo $?',
    'diff; echo $?', 'diff o1 o2 o3; echo $?', 'diff -U x o1 o2; echo $?', 'diff -k o1 o2; echo $?', 'diff --bogus o1 o2; echo $?',
    'diff -u --label L1 --label L2 o1 o2', 'diff - o2 < o1', 'cat o2 | diff o1 -', 'diff "sp a" "sp b"', 'diff -- -dash1 -dash2',
    'diff /dev/null o1', 'diff -u o1 /dev/null | tail -n +3', 'diff -r A A; echo $?', 'seq 1 100 > s1; seq 1 100 | sed "50d;70s/0/X/" > s2; diff s1 s2',
    'seq 1 30 > s1; (seq 1 10; seq 12 30) > s2; diff -u s1 s2 | tail -n +3', 'diff -U 3 -r A B',
    # reordered lines: past GNU's cost bound the split is guessed, the same way
    'seq 1 20000 > s1; shuf --random-source=s1 s1 > s2; diff s1 s2 | md5sum; diff -u s1 s2 | tail -n +3 | md5sum',
]
TIMEOUT = [
    'timeout 5 echo hi', 'timeout 5 sh -c "exit 3"; echo $?', 'timeout 0.2 sleep 3; echo $?', 'timeout 0.1s sleep 3; echo $?',
    'timeout 0.001m sleep 3; echo $?', 'timeout 1h true; echo $?', 'timeout 1d true; echo $?', 'timeout 0 true; echo $?',
    'timeout -s INT 0.1 sleep 3; echo $?', 'timeout -s SIGTERM 0.1 sleep 3; echo $?', 'timeout -s 2 0.1 sleep 3; echo $?',
    'timeout -s int 0.1 sleep 3; echo $?', 'timeout --signal=HUP 0.1 sleep 3; echo $?',
    'timeout --preserve-status 0.1 sleep 3; echo $?', 'timeout -v 0.1 sleep 3; echo $?', 'timeout --foreground 0.1 sleep 3; echo $?',
    'timeout -k 1 0.1 sleep 3; echo $?', 'timeout --kill-after=1 5 true; echo $?',
    'timeout x sleep 1; echo $?', 'timeout 1x true; echo $?', 'timeout -s FOO 1 true; echo $?', 'timeout -k x 1 true; echo $?',
    'timeout; echo $?', 'timeout 1; echo $?', 'timeout -1 true; echo $?', 'timeout --bogus; echo $?',
    'timeout 5 cat a.txt', 'echo in | timeout 5 cat', 'timeout 5 timeout 0.1 sleep 3; echo $?',
]
# GNU's timeout dies of the KILL it sends (so bash reports "Killed");
# the Shell's returns 137 without dying: compare stdout and status only.
TIMEOUT_KILL = [
    'timeout -s KILL 0.1 sleep 3; echo $?', 'timeout -s 9 0.1 sleep 3; echo $?',
    "timeout -k 0.1 0.1 /usr/bin/python3 -c 'import signal,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(3)'; echo $?",
    'timeout 1 nope; echo $?', 'timeout 1 ./a.txt; echo $?',
]
DU = [
    'du d | sort -k2', 'du -a d | sort -k2', 'du -s d', 'du -sh d', 'du -h d/x', 'du -c d/x d/sub | sort -k2', 'du -d 0 d', 'du -d 1 d | sort -k2',
    'du --max-depth=1 -a d | sort -k2', 'du -a -d 1 d | sort -k2', 'du -s d d', 'du d/sub d | sort -k2', 'du -b d/x', 'du -ab d | sort -k2',
    'du --apparent-size -a d | sort -k2', 'du -k zeros', 'du -m zeros', 'du -hc zeros d/x', 'du -S d | sort -k2', 'du -L lnk', 'du lnk',
    'du nope; echo $?', 'du -s -a d; echo $?', 'du -s -d 1 d; echo $?', 'du -s -d 0 d', 'du -d x d; echo $?', 'du -0 d/x | tr "\\0" @',
    'du -- -dash', 'du "sp ace"', 'du -sh --si zeros', 'du -c d/x', 'du -l d/x d/x', 'du -x -s d',
]
STAT = [
    'stat -c "%n %s %F %a %A %h %U %G %u %g" a.txt', 'stat -c %s d/x nonl', 'stat --format="%n:%F" d lnk f', 'stat -c "%N" lnk f "sp ace"',
    'stat -L -c %F lnk', 'stat -c %F lnk', 'stat --dereference -c "%s %F" lnk', 'stat -c "%b %B %o" zeros', 'stat -c "[%10s][%-6s][%06s]" a.txt',
    'stat --printf "%n\\t%s\\n" a.txt nonl', 'stat --printf "%s\\\\x41\\n" a.txt', 'stat -c "%y" t_old', 'stat -c "%Y %X" t_mid',
    'stat -c "%.3Y %.9Y %.Y" t_old', 'stat -c "%%" a.txt', 'stat -c "%q" a.txt', 'stat nope; echo $?', 'stat; echo $?',
    'stat -c; echo $?', 'stat -c %n -- -dash', 'stat -c %F e2 bin', 'stat -c %s /dev/null', 'stat -c "%F %t %T" /dev/null',
    'stat -c "%n" a.txt nope "b c.txt"; echo $?',
]
# The options of the list no other table reached.
OPTIONS = [
    'sed -r "s/(o+)/[\\1]/" h', 'sed x h', 'sed "H;\\$!d;x" h', 'sed -n "1h;2{g;p}" h', 'sed "N;s/^f/X/M" h', 'sed -n "/^foo bar$/Mp" h',
    'sed "s/HELLO/X/i" h', 'sed "1!H;1h;\\$!d;g;s/\\n/+/g" h',
    'ls -t t_new t_old t_mid', 'ls -tr t_new t_old t_mid', 'ls -lt t_new t_old t_mid | cut -c1-10,31-',
    'cp -R d rd; ls -R rd', 'chmod 444 f; cp -f a.txt f; cat f', 'echo z > g; cp -f g d/x; cat d/x', 'cp -L lnk lcopy; ls -l lcopy | cut -c1-10',
    'cp -rL d dl; ls dl', 'mv -f f d/x; cat d/x', 'mv -f nope x; echo $?',
    'touch -a -d "2020-01-02 03:04:05" t_old; stat -c "%X %Y" t_old', 'touch -m -d "2020-01-02 03:04:05" t_old; stat -c "%X %Y" t_old',
    'find . -ipath "./D/E/*"', 'find . -ipath "*SUB*" | sort', 'find . -newer t_old -name "t_*" | sort',
]
# Names with spaces, newlines and leading dashes.
NAMES = [
    'ls', 'ls -l "sp a" | cut -c1-10,24-', 'cat "sp a" -- -dash1', 'cat -dash1; echo $?', 'wc -l "sp a" ./-dash1',
    'wc -l nl*', 'grep -H . nl*', 'grep -l . ./-dash1 "sp a"', 'grep -r a . --include="nl*"', 'head -n1 -- -dash1 "sp b"',
    'tail -n1 -- -dash2', 'sort -- -dash2 -dash1', 'md5sum nl*', 'sha256sum -- -dash1', 'find . -name "nl*" | sort',
    'find . -name "nl\n*" -print0 | od -c', 'find . -name "sp *" | sort', 'find . -name "-dash*" | sort', 'rm -- -dash1; ls -- -dash1; echo $?',
    'rm ./-dash2 "sp a"; ls', 'mv "sp a" "sp c"; cat "sp c"', 'cp -- -dash1 "x y"; cat "x y"', 'stat -c %n nl*', 'du nl*', 'diff nl* "sp a"',
    'ls -d nl*', 'printf "%s\\0" "sp a" -dash1 | xargs -0 cat', 'cut -c1 -- -dash1', 'du -a . | grep -c nl',
]


def run_both(tmp_path, text):
    results = []
    for kind in ("box", "gnu"):
        d = tmp_path / kind
        d.mkdir()
        subprocess.run(["bash", "-c", SETUP + EXTRA], cwd=d, check=True)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(d), "LC_ALL": "C", "TZ": "UTC"}
        argv = [str(BOX_SHELL), "-c", text] if kind == "box" else ["bash", "-c", text]
        p = subprocess.run(argv, cwd=d, env=env, capture_output=True, timeout=60)
        results.append((p.stdout, p.stderr, p.returncode, tree(d)))
    return results


def need_shell():
    if not BOX_SHELL.exists():
        pytest.skip("box-shell not built")


@pytest.mark.parametrize("text", DIFF + TIMEOUT + DU + STAT + OPTIONS + NAMES)
def test_against_gnu(tmp_path, text):
    need_shell()
    box, gnu = run_both(tmp_path, text)
    assert box[1].decode(errors="replace") == gnu[1].decode(errors="replace"), "stderr"
    assert box[0] == gnu[0], "stdout"
    assert box[2] == gnu[2], "status"
    assert box[3] == gnu[3], "resulting tree"


@pytest.mark.parametrize("text", TIMEOUT_KILL)
def test_timeout_kill_status(tmp_path, text):
    need_shell()
    box, gnu = run_both(tmp_path, text)
    assert box[0] == gnu[0], "stdout"
    assert box[2] == gnu[2], "status"


def test_timeout_really_stops(tmp_path):
    """The command is stopped at the deadline, not run to its end."""
    need_shell()
    import time
    t0 = time.monotonic()
    p = subprocess.run([str(BOX_SHELL), "-c", "timeout 0.3 sleep 10; echo $?"], cwd=tmp_path,
                       capture_output=True, timeout=30)
    took = time.monotonic() - t0
    assert p.stdout == b"124\n" and took < 3, (p, took)


# One shared tree for both: these print inode numbers, devices and times.
SAME_TREE = [
    'stat a.txt', 'stat d', 'stat -c "%N %s %F %h" lnk', 'stat /dev/null', 'stat -t a.txt', 'stat -t d', 'stat -c "%i %d %D %Hd %Ld %m" a.txt',
    'stat -c "%x|%y|%z|%w|%W" a.txt', 'stat -c "%X %Z %.2Z" a.txt', 'stat -L lnk', 'stat "sp ace"', 'stat nl*',
    'ls -i a.txt', 'ls -i1 d', 'ls -li a.txt | cut -d" " -f1-2', 'diff -u a.txt bin', 'diff -u a.txt nonl', 'diff -ru d d2',
]


@pytest.mark.parametrize("text", SAME_TREE)
def test_same_tree_against_gnu(tmp_path, text):
    need_shell()
    d = tmp_path / "t"
    d.mkdir()
    subprocess.run(["bash", "-c", SETUP + EXTRA + "cp -a d d2; echo changed > d2/x; rm d2/sub/y"], cwd=d, check=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(d), "LC_ALL": "C", "TZ": "UTC"}
    outs = []
    for argv in ([str(BOX_SHELL), "-c", text], ["bash", "-c", text]):
        p = subprocess.run(argv, cwd=d, env=env, capture_output=True, timeout=60)
        outs.append((p.stdout, p.stderr.decode(errors="replace"), p.returncode))
    assert outs[0][1] == outs[1][1], "stderr"
    assert outs[0][0] == outs[1][0], "stdout"
    assert outs[0][2] == outs[1][2], "status"


def test_binary_and_invalid_utf8(tmp_path):
    """NUL bytes, bytes >= 0x80 that are not UTF-8, and CRs through every text command."""
    need_shell()
    d = tmp_path / "w"
    d.mkdir()
    blob = bytes(range(256)) * 40 + b"\n\xff\xfe\xc3(\xe2\x82 tail needle\r\nlast"
    (d / "blob").write_bytes(blob)
    (d / "blob2").write_bytes(blob.replace(b"needle", b"NEEDLE"))
    (d / "u8").write_bytes(b"caf\xc3\xa9\n\xe9t\xe9\n\xc3\n\xf0\x9f\x98\x80 smile\n")
    cases = [
        "cat blob | md5sum", "cat -v blob | md5sum", "cat -A u8", "grep -c needle blob", "grep -a -o needle blob",
        "grep needle blob; echo $?", "grep -a -n smile u8", "grep -i CAF u8", "sed 's/needle/N/' blob | md5sum", "sed -n l u8",
        "tr -d '\\000' < blob | wc -c", "tr '\\200-\\377' X < u8", "wc blob u8", "wc -m u8", "wc -L u8", "head -c 300 blob | od -c | tail -3",
        "tail -c 20 blob | od -c", "sort u8", "uniq -c u8", "cut -b1-3 u8 | od -c", "cut -c2 u8 | od -c",
        "fold -w 3 u8 | od -c | head", "base64 blob | base64 -d | md5sum; md5sum < blob", "xxd u8", "od -c u8", "sha1sum blob",
        "diff blob blob2; echo $?", "diff -a blob blob2 | md5sum", "diff -q blob blob2", "cmp_ok=1; diff u8 u8; echo $?",
        "nl u8 | od -c | head -4", "paste u8 u8 | od -c | head -3", "expand u8 | md5sum", "comm u8 u8", "jq -R . u8",
        "find . -name blob -size +10k", "du -b blob", "stat -c %s blob", "ls -l blob | cut -c1-10,24-33",
    ]
    for text in cases:
        outs = []
        for argv in ([str(BOX_SHELL), "-c", text], ["bash", "-c", text]):
            p = subprocess.run(argv, cwd=d, capture_output=True, env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"})
            outs.append((p.stdout, p.stderr, p.returncode))
        assert outs[0] == outs[1], text


def test_megabyte_lines(tmp_path):
    """Lines of 1 MB and more through the line-based commands, diff included."""
    need_shell()
    d = tmp_path / "w"
    d.mkdir()
    line = b"ab" * (1 << 19)
    (d / "l1").write_bytes(line + b"\n" + line + b"X\nshort\n" + line)
    (d / "l2").write_bytes(line + b"\n" + line + b"Y\nshort\n" + line)
    cases = [
        "wc l1", "wc -L l1", "head -n 1 l1 | wc -c", "tail -n 1 l1 | wc -c", "tail -n 2 l1 | head -c 10", "sort l1 | md5sum",
        "sort -r l1 l2 | md5sum", "uniq -c l1 | cut -c1-12", "cut -c1048570-1048580 l1", "grep -c X l1", "grep -n short l1",
        "grep -o 'bX' l1", "sed -n '2s/X$/Z/p' l1 | tail -c 3", "sed 's/a/b/g' l1 | md5sum", "tr a c < l1 | md5sum", "rev l1 | md5sum",
        "diff l1 l2 | md5sum", "diff -u l1 l2 | tail -n +3 | md5sum", "diff -q l1 l2", "cmp_dummy=1; diff l1 l1; echo $?",
        "fold -w 100000 l1 | wc -l", "nl l1 | cut -c1-10", "paste l1 l2 | wc -c", "awk_free=1; jq -R length l1",
        "comm -3 l1 l2 | md5sum", "base64 -w 0 l1 | wc -c", "md5sum l1",
    ]
    for text in cases:
        outs = []
        for argv in ([str(BOX_SHELL), "-c", text], ["bash", "-c", text]):
            p = subprocess.run(argv, cwd=d, capture_output=True, env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"}, timeout=120)
            outs.append((p.stdout, p.stderr, p.returncode))
        assert outs[0] == outs[1], text


def test_two_gigabyte_file(tmp_path):
    """A 2 GB file (sparse, with data at both ends): sizes and offsets past 2^31."""
    need_shell()
    d = tmp_path / "w"
    d.mkdir()
    size = 2 * 1024 ** 3 + 12345
    with open(d / "big", "wb") as f:
        f.write(b"start\n")
        f.seek(size - 6)
        f.write(b"\nend!\n")
    cases = [
        "wc -c big", "wc -c < big", "cat big | wc -c", "tail -c 12 big | od -c", "tail -c +2147483640 big | od -c",
        "head -c 6 big", "head -c -2147483000 big | wc -c", "tail -n 1 big", "stat -c %s big", "du -b big", "du --apparent-size -h big",
        "ls -l big | cut -c1-10,24-34", "find . -size +2G", "find . -size +2097152k -name big", "od -A d -j 2147495989 -c big",
        "xxd -s 2147495990 big", "diff big big; echo $?", "cmp_dummy=1; tail -c 100 big | md5sum",
    ]
    for text in cases:
        outs = []
        for argv in ([str(BOX_SHELL), "-c", text], ["bash", "-c", text]):
            p = subprocess.run(argv, cwd=d, capture_output=True, env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"}, timeout=300)
            outs.append((p.stdout, p.stderr, p.returncode))
        assert outs[0] == outs[1], text
