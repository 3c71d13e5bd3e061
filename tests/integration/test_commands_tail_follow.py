"""tail -f/-F and its options against GNU tail: each case runs the same
text through `box-shell -c` and `bash -c` (GNU's tail, which uses inotify
on a local disk where the Shell polls) at the same time, in twin scratch
directories, and compares stdout, stderr and the exit status.

The texts that follow a file change it from a background job with gaps of
0.3 s at least while tail polls every 0.1 s (-s 0.1), and end it with
`timeout` (124) or --pid, so what is printed does not depend on when a
poll falls.  A replaced name is seen by the Shell only after some polls
without change (--max-unchanged-stats, 5 by default): those gaps are 1 s.
"""
import shutil
import subprocess

import pytest

from conftest import BOX_SHELL, table_cases
from test_shell_bash import _norm

BASH = shutil.which("bash")

# (id, text)
CASES = [
    # ---- following a descriptor -------------------------------------------------
    ("append-truncate", "printf 'a\\nb\\n' > f; (sleep 0.3; echo c >> f; sleep 0.3; : > f; echo d >> f) & "
     "timeout 1.5 tail -s 0.1 -f f; echo st=$?"),
    ("no-change-until-killed", "seq 3 > f; timeout 1 tail -s 0.1 -f f; echo st=$?"),
    ("partial-lines", "printf 'abc' > f; (sleep 0.3; printf 'def' >> f; sleep 0.3; printf 'g\\n' >> f) & "
     "timeout 1.5 tail -s 0.1 -c 2 -f f; echo st=$?"),
    ("from-line", "seq 5 > f; (sleep 0.3; echo 6 >> f) & timeout 1.5 tail -s 0.1 -n +3 -f f; echo st=$?"),
    ("zero-lines", "seq 5 > f; (sleep 0.3; echo 6 >> f) & timeout 1.5 tail -s 0.1 -n 0 -f f; echo st=$?"),
    ("obsolete-f", "seq 5 > f; (sleep 0.3; echo 6 >> f) & timeout 1.5 tail -s 0.1 -2f f; echo st=$?"),
    ("follow-descriptor", "seq 5 > f; (sleep 0.3; echo 6 >> f) & "
     "timeout 1.5 tail --sleep-interval=0.1 --follow=descriptor -n1 f; echo st=$?"),
    ("follow-long-abbrev", "seq 5 > f; (sleep 0.3; echo 6 >> f) & timeout 1.5 tail -s0.1 --fol -n1 f; echo st=$?"),
    ("renamed-still-followed", "seq 5 > f; (sleep 0.3; mv f g; echo 6 >> g) & "
     "timeout 1.5 tail -s 0.1 -f -n1 f; echo st=$?"),
    ("zero-terminated", "printf 'a\\0b\\0' > f; (sleep 0.3; printf 'c\\0' >> f) & "
     "timeout 1.5 tail -s 0.1 -z -n 1 -f f | od -c; echo st=$?"),
    ("stdin-regular-file", "echo x > f; (sleep 0.3; echo y >> f) & timeout 1.5 tail -s 0.1 -f < f; echo st=$?"),
    ("dev-null-operand", "timeout 1 tail -s 0.1 -f /dev/null; echo st=$?"),
    ("dev-null-stdin", "timeout 1 tail -s 0.1 -f; echo st=$?"),
    # ---- several files: a header when the file that grew changes ---------------
    ("headers-switch", "echo x > g; echo y > h; (sleep 0.3; echo g1 >> g; sleep 0.3; echo h1 >> h; "
     "sleep 0.3; echo h2 >> h; sleep 0.3; echo g2 >> g) & timeout 1.8 tail -s 0.1 -f g h; echo st=$?"),
    ("headers-need-data", "echo x > g; echo y > h; (sleep 0.3; printf z | dd of=g conv=notrunc status=none; "
     "sleep 0.3; echo h1 >> h; sleep 0.3; printf 'q\\n' > h; sleep 0.3; echo g1 >> g) & "
     "timeout 1.8 tail -s 0.1 -f g h; echo st=$?"),
    ("headers-quiet", "echo x > f; echo y > g; (sleep 0.3; echo g1 >> g; sleep 0.3; echo f1 >> f) & "
     "timeout 1.5 tail -s 0.1 -q -f f g; echo st=$?"),
    ("headers-verbose", "echo x > f; (sleep 0.3; echo f1 >> f) & timeout 1.5 tail -s 0.1 -v -f f; echo st=$?"),
    ("missing-then-file", "echo x > f; (sleep 0.3; echo f1 >> f) & timeout 1.5 tail -s 0.1 -f nosuch f; echo st=$?"),
    ("file-then-missing", "echo x > f; (sleep 0.3; echo f1 >> f) & timeout 1.5 tail -s 0.1 -f f nosuch; echo st=$?"),
    # ---- following a name ------------------------------------------------------
    ("name-replaced-truncated", "printf 'a\\nb\\n' > f; (sleep 0.3; echo new > t; mv t f; sleep 1; echo more >> f; "
     "sleep 0.3; echo x > f; sleep 0.3; echo y >> f) & timeout 2.6 tail -s 0.1 -F f; echo st=$?"),
    ("name-replaced-fast-recheck", "seq 3 > f; (sleep 0.3; echo new > t; mv t f; sleep 0.5; echo 4 >> f) & "
     "timeout 1.5 tail -s 0.1 --max-unchanged-stats=1 --follow=name --retry f; echo st=$?"),
    ("name-removed-recreated", "seq 5 > f; (sleep 0.3; rm f; sleep 1; echo new > f) & "
     "timeout 2.3 tail -s 0.1 -F -n1 f; echo st=$?"),
    ("name-removed-no-retry", "seq 5 > f; (sleep 0.3; rm f) & timeout 2 tail -s 0.1 --follow=name -n1 f; echo st=$?"),
    ("name-becomes-directory", "seq 3 > f; (sleep 0.3; rm f; sleep 1; mkdir f) & "
     "timeout 2.3 tail -s 0.1 -F f; echo st=$?"),
    ("name-appears", "(sleep 0.3; echo hi > late) & timeout 1.5 tail -s 0.1 -F late; echo st=$?"),
    ("name-appears-with-other", "echo a > a; (sleep 0.3; echo hi > late; sleep 0.3; echo a2 >> a) & "
     "timeout 1.8 tail -s 0.1 -F late a; echo st=$?"),
    ("retry-descriptor-appears", "(sleep 0.3; echo hi > late) & timeout 1.5 tail -s 0.1 --retry -f late; echo st=$?"),
    ("two-names-truncate", "echo a > a; echo b > b; (sleep 0.3; : > a; sleep 0.3; echo b2 >> b; sleep 0.3; "
     "echo a2 >> a) & timeout 1.8 tail -s 0.1 -F a b; echo st=$?"),
    # ---- ends: --pid, a closed pipe, pipes, signals -----------------------------
    ("pid-ends", "seq 5 > f; sleep 0.6 & timeout 3 tail -s 0.1 --pid=$! -f f; echo st=$?"),
    ("pid-ends-after-data", "seq 5 > f; (sleep 0.3; echo 6 >> f; sleep 0.3; echo 7 >> f) & "
     "timeout 3 tail -s 0.1 --pid=$! -n 2 -f f; echo st=$?"),
    ("pid-gone-already", "seq 3 > f; timeout 3 tail -s 0.1 --pid=2147483647 -f f; echo st=$?"),
    ("pid-alive", "seq 3 > f; timeout 1 tail -s 0.1 -n 1 --pid=$$ -f f; echo st=$?"),
    ("closed-output-idle", "seq 20 > f; timeout 3 tail -s 0.1 -f f | head -n 2; echo ${PIPESTATUS[@]}"),
    ("closed-output-data", "seq 20 > f; (sleep 0.3; seq 100 >> f) & timeout 3 tail -s 0.1 -n 1 -f f | head -n 5; "
     "echo ${PIPESTATUS[@]}"),
    ("closed-output-no-timeout", "seq 3 > f; tail -s 0.1 -f f | head -n 1; echo ${PIPESTATUS[@]}"),
    ("killed-job", "seq 3 > f; tail -s 0.1 -f f & p=$!; sleep 0.5; kill $p; wait $p; echo st=$?"),
    ("stdin-pipe-ignored", "(echo a; sleep 0.3; echo b) | timeout 2 tail -s 0.1 -f; echo st=$?"),
    ("stdin-pipe-dash-ignored", "echo x > f; (echo a; sleep 0.3; echo b) | timeout 1.5 tail -s 0.1 -f - f; echo st=$?"),
    ("stdin-pipe-bytes", "echo x | timeout 1 tail -s 0.1 -f -c 1; echo st=$?"),
    ("fifo-followed", "mkfifo p; (echo a; sleep 0.3; echo b) > p & timeout 1.5 tail -s 0.1 -f p; echo st=$?"),
    # ---- refusals and warnings (no waiting) ------------------------------------
    ("missing-only", "timeout 1 tail -f nosuch; echo st=$?"),
    ("missing-by-name", "timeout 1 tail --follow=name nosuch; echo st=$?"),
    ("directory", "mkdir d; timeout 1 tail -f d; echo st=$?"),
    ("directory-and-file", "mkdir d; echo x > f; timeout 1 tail -s 0.1 -n 1 -f d f; echo st=$?"),
    ("directory-by-name", "mkdir d; echo x > f; timeout 1 tail -s 0.1 -n 1 -F d f; echo st=$?"),
    ("directory-bytes", "mkdir d; echo x > f; tail -c 3 -f d f; echo st=$?"),
    ("dash-by-name", "tail -F -; echo st=$?; tail --follow=name; echo st=$?"),
    ("retry-warnings", "echo x > f; tail --retry f; echo st=$?; timeout 0.5 tail --retry -f f; echo st=$?"),
    ("pid-warning", "echo x > f; tail --pid=1 f; echo st=$?"),
    ("bad-pid", "echo x > f; for p in abc -1 5k '' 2147483648 99999999999999999999999; do "
     "tail --pid=\"$p\" f; echo st=$?; done"),
    ("bad-sleep", "echo x > f; for s in abc -1 1e400 nan '' 1s 1,5; do tail -s \"$s\" -f f; echo st=$?; done"),
    ("odd-sleep-ok", "echo x > f; for s in ' 1' 0x10 inf 1e-400 -0; do tail -s \"$s\" f; echo st=$?; done"),
    ("bad-follow", "echo x > f; tail --follow=foo f; echo st=$?; tail --follow= f; echo st=$?"),
    ("bad-max-unchanged", "echo x > f; tail --max-unchanged-stats=x f; echo st=$?; "
     "tail --max-unchanged-stats=99999999999999999999999 f; echo st=$?"),
    ("obsolete-forms", "seq 1000 > s; tail -2b s | wc -c; tail -b s | wc -c; tail +2b s | wc -c; tail -3c s; "
     "tail -3l s; tail -5 -- s; tail + s | wc -l; tail -l s | wc -l"),
    ("obsolete-refused", "seq 9 > s; tail -5 s s; echo st=$?; tail -n5 -5 s; echo st=$?; tail -2bc s; echo st=$?; "
     "tail -99999999999999999999999 s; echo st=$?"),
    ("count-forms", "seq 1000 > s; tail -n +2 -n 3 s | head -2; tail -n 3 -n +998 s; tail -n ' 5' s | wc -l; "
     "tail -c 1m s | wc -c; tail -c 1kB s | wc -c; tail -n -x s; tail -n +x s; tail -n 5c s; "
     "tail -n 99999999999999999999999 s; echo st=$?"),
    ("nothing-to-print", "tail -n 0 nosuch; echo st=$?; tail -c0 nosuch; echo st=$?; tail -n +0 nosuch; echo st=$?"),
    ("directory-plain", "mkdir d; tail d; echo st=$?; tail -c 3 d; echo st=$?; tail -n +1 d; echo st=$?"),
]


def _run(argv, cwd):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "LC_ALL": "C", "TERM": "dumb"}
    return subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)


def _result(p):
    out, err = p.communicate(timeout=30)
    return p.returncode, out, _norm(err)


@pytest.mark.skipif(not BASH, reason="bash not installed")
@table_cases("text", CASES)
def test_tail_follow_like_gnu(text, tmp_path):
    if not BOX_SHELL.exists():
        pytest.skip("box-shell not built")
    ours_dir, gnu_dir = tmp_path / "ours", tmp_path / "gnu"
    ours_dir.mkdir()
    gnu_dir.mkdir()
    # both at once: the same load on each, and half the wall time
    ours_p = _run([str(BOX_SHELL), "-c", text], ours_dir)
    gnu_p = _run([BASH, "-c", text], gnu_dir)
    ours, gnu = _result(ours_p), _result(gnu_p)
    assert ours == gnu, f"\n ours: {ours}\n  gnu: {gnu}"
