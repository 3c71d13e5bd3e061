"""diff, timeout, du and stat against the GNU tools, and the options of
sed, ls, cp, mv, touch and find the other tables leave out.

Same method as test_commands_gnu.py (gnu_compare.py): each case runs once
through `box-shell -c` and once through `bash -c` with the GNU tools
(LC_ALL=C) in two fresh copies of one generated tree; stdout, stderr, status
and the resulting tree must be equal.  Cases that print inode numbers or
times of the tree run both sides on one shared tree instead (SAME_TREE).
"""
import subprocess

import pytest

from gnu_compare import (BOX_SHELL, DIFF_TREE, SETUP, assert_same_run, need_shell,
                         run_both)

UTC = {"TZ": "UTC"}

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
    # TERM comes 1.5 s in, after even a loaded machine's python3 has set SIGTERM aside (at 0.1 s it raced python's start).
    "timeout -k 0.3 1.5 /usr/bin/python3 -c 'import signal,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(5)'; echo $?",
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
# Options of sed, ls, cp, mv, touch and find the other tables leave out.
OPTIONS = [
    'sed -r "s/(o+)/[\\1]/" h', 'sed x h', 'sed "H;\\$!d;x" h', 'sed -n "1h;2{g;p}" h', 'sed "N;s/^f/X/M" h', 'sed -n "/^foo bar$/Mp" h',
    'sed "s/HELLO/X/i" h', 'sed "1!H;1h;\\$!d;g;s/\\n/+/g" h',
    'ls -t t_new t_old t_mid', 'ls -tr t_new t_old t_mid', 'ls -lt t_new t_old t_mid | cut -c1-10,31-',
    'cp -R d rd; ls -R rd', 'chmod 444 f; cp -f a.txt f; cat f', 'echo z > g; cp -f g d/x; cat d/x', 'cp -L lnk lcopy; ls -l lcopy | cut -c1-10',
    'cp -rL d dl; ls dl', 'mv -f f d/x; cat d/x', 'mv -f nope x; echo $?',
    'touch -a -d "2020-01-02 03:04:05" t_old; stat -c "%X %Y" t_old', 'touch -m -d "2020-01-02 03:04:05" t_old; stat -c "%X %Y" t_old',
    'find . -ipath "./D/E/*"', 'find . -ipath "*SUB*" | sort', 'find . -newer t_old -name "t_*" | sort',
]
@pytest.mark.parametrize("text", DIFF + TIMEOUT + DU + STAT + OPTIONS)
def test_against_gnu(tmp_path, text):
    need_shell()
    assert_same_run(*run_both(tmp_path, text, DIFF_TREE, env=UTC))


@pytest.mark.parametrize("text", TIMEOUT_KILL)
def test_timeout_kill_status(tmp_path, text):
    need_shell()
    box, gnu = run_both(tmp_path, text, DIFF_TREE, env=UTC)
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
    subprocess.run(["bash", "-c", SETUP + DIFF_TREE + "cp -a d d2; echo changed > d2/x; rm d2/sub/y"], cwd=d, check=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(d), "LC_ALL": "C", "TZ": "UTC"}
    outs = []
    for argv in ([str(BOX_SHELL), "-c", text], ["bash", "-c", text]):
        p = subprocess.run(argv, cwd=d, env=env, capture_output=True, timeout=60)
        outs.append((p.stdout, p.stderr.decode(errors="replace"), p.returncode))
    assert outs[0][1] == outs[1][1], "stderr"
    assert outs[0][0] == outs[1][0], "stdout"
    assert outs[0][2] == outs[1][2], "status"
