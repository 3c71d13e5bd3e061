"""The Shell and the tools it starts as one system (issue 30): pipes,
here-documents, here-strings, `<file` and `n<file`/`n>file` reach a tool's
descriptors and stream both ways; `<(…)`/`>(…)` work for tools and the
Shell's own commands; a tool's /tmp is its command's RAM /tmp; deadlines,
Ctrl-C and the box's shutdown end a command's tools."""
import os
import signal
import subprocess
import time

import pytest

from conftest import ALLOW_ALL, table_cases

PY = "/usr/bin/python3"
# A tool that names its stdin (stream) and args, for the cases below.
UPPER = f"{PY} -c 'import sys; sys.stdout.write(sys.stdin.read().upper())'"


def start_box(b, agent_extra=""):
    """Starts b under a policy that permits everything, with python3 as a
    tool and agent_extra added to [agent]."""
    b.write_policy(ALLOW_ALL)
    b.write_config(extra=f'\n[tool.python3]\ncommand = ["{PY}"]\n'
                         'filesystem.write = ["~/src/project"]\n')
    if agent_extra:
        b.config.write_text(b.config.read_text().replace("[agent]\n", f"[agent]\n{agent_extra}\n", 1))
    return b.start()


@pytest.fixture
def tbox(box):
    return start_box(box)


STREAMS = [
    ("pipe", "echo 'print(42)' | " + PY + "; echo $?", "42\n0\n"),
    ("pipe_upper", "printf 'a\\nb\\n' | " + UPPER, "A\nB\n"),
    ("heredoc", PY + " - <<'EOF'\nprint(6 * 7)\nEOF", "42\n"),
    ("heredoc_expanded", "n=5; " + PY + " - <<EOF\nprint($n * 2)\nEOF", "10\n"),
    ("herestring", UPPER + " <<< 'here'", "HERE\n"),
    ("heredoc_large", PY + " -c 'import sys; print(len(sys.stdin.read()))' <<EOF\n$(seq 1 30000)\nEOF",
     "168894\n"),
    ("loop_shares_stdin", "printf '1\\n2\\n3\\n' > f; while read l; do echo \"got $l\"; " + PY
     + " -c 'import sys; print(\"tool\", sys.stdin.readline().strip())'; done < f",
     "got 1\ntool 2\n"),
    ("file", UPPER + " < src/main.rs | head -1", "FN MAIN() {\n"),
    ("out_of_tool", PY + " -c 'print(\"x\" * 300000)' | wc -c", "300001\n"),
    ("into_tool_large", "seq 1 200000 | " + PY + " -c 'import sys; print(sum(map(int, sys.stdin)))'",
     "20000100000\n"),
    ("tool_to_tool", "cat src/main.rs | " + PY + " -c 'import sys; print(len(sys.stdin.read()))' | "
     + PY + " -c 'import sys; print(int(sys.stdin.read()) * 2)'", "186\n"),
    ("eof_between_writes", "{ echo a; sleep 0.2; echo b; } | " + PY
     + " -c 'import sys; [print(l.strip(), flush=True) for l in sys.stdin]; print(\"eof\")'",
     "a\nb\neof\n"),
    ("reader_ends_early", PY + " -c 'import signal\nsignal.signal(signal.SIGPIPE, signal.SIG_DFL)\n"
     "while True: print(\"y\", flush=True)' | head -2; echo ${PIPESTATUS[0]}", "y\ny\n141\n"),
    ("fd3_in_fd4_out", PY + " -c 'import os; os.write(4, os.read(3, 11))' 3< src/main.rs 4> o.txt;"
     " cat o.txt; echo", "fn main() {\n"),
    ("fd9", PY + " -c 'import os; print(os.read(9, 2))' 9<<< 'hi'", "b'hi'\n"),
    ("procsub_in", PY + " -c 'import sys; print(open(sys.argv[1]).read() + open(sys.argv[2]).read(),"
     " end=\"\")' <(echo a) <(echo b)", "a\nb\n"),
    ("procsub_out", "echo hi > >(" + UPPER + "); wait", "HI\n"),
    ("shell_diff_procsub", "diff <(echo a) <(echo b); echo $?", "1c1\n< a\n---\n> b\n1\n"),
    ("shell_cat_fd3", "cat /dev/fd/3 3< src/main.rs | head -1", "fn main() {\n"),
    # A last stage that only starts a program runs from the Shell itself:
    # statuses, errexit, traps and PIPESTATUS as bash gives them.
    ("last_status", "echo x | " + PY + " -c 'import sys; sys.exit(len(sys.stdin.read()))'; "
     "echo $? ${PIPESTATUS[@]}", "2 0 2\n"),
    ("last_not_found", "echo x | no-such-program-here 2>/dev/null; echo $?", "127\n"),
    ("last_errexit", "set -e; echo x | " + PY + " -c 'raise SystemExit(3)'; echo not-here", ""),
    ("last_err_trap", "trap 'echo trapped $?' ERR; echo x | " + PY + " -c 'raise SystemExit(4)'",
     "trapped 4\n"),
    ("last_pipefail", "set -o pipefail; " + PY + " -c 'raise SystemExit(5)' | " + PY
     + " -c 'import sys; sys.stdin.read()'; echo $?", "5\n"),
    ("last_keeps_vars", "x=1; echo x | " + PY + " -c 'import sys'; echo $x", "1\n"),
    # An echo of words that only quotes spell writes into the pipe from the
    # Shell itself: what its stage leaves is still a child's.
    ("echo_quoted", "echo -e 'a\\tb' \"c  d\"'e' | " + UPPER, "A\tB C  DE\n"),
    ("echo_leaves_status", "false; echo x | " + PY + " -c 'import sys; sys.stdin.read()'; "
     "echo $? ${PIPESTATUS[@]}; false; echo x | cat > /dev/null; echo $?", "0 0 0\n0\n"),
    ("echo_status_in_next_stage", "false; echo x | echo $? | " + UPPER, "1\n"),
    ("echo_pipestatus_in_next_stage", "false | true; echo x | echo ${PIPESTATUS[@]} | " + UPPER,
     "1 0\n"),
    ("echo_leaves_last_arg", "echo y; echo x | " + PY + " -c 'import sys'; echo $_", "y\ny\n"),
    ("echo_over_pipe_size", "echo " + "y" * 70000 + " | " + PY
     + " -c 'import sys; print(len(sys.stdin.read()))'", "70001\n"),
]


@table_cases("source,expected", STREAMS)
def test_streams_reach_tools(tbox, source, expected):
    r = tbox.bash(source)
    assert (r.stdout, r.stderr) == (expected, ""), (r.returncode, r.stdout, r.stderr)


def test_an_echo_into_a_tool_forks_no_stage(tbox):
    """`echo 'print(42)' | python3`: echo's words fit the pipe, so the Shell
    writes them itself instead of forking a stage (a fork, an exit and a
    wait, where its decision is asked ahead anyway); the tool is the last stage, which
    forks nothing either.  The worker's process numbers show it: the
    subshell after the pipeline is the next process after the one before."""
    r = tbox.bash("(echo $BASHPID); echo 'print(42)' | " + PY + "; (echo $BASHPID)")
    assert r.returncode == 0, r.stderr
    before, out, after = r.stdout.split()
    assert (out, int(after) - int(before)) == ("42", 1), r.stdout


# First stages of builtins that only print, with words that only read: the
# Shell runs them itself, so the pipeline forks nothing (the tool is the
# last stage, started from the Shell too).
IN_SHELL = [
    ("printf", "printf 'print(%d)\\n' 42"),
    ("printf_var", "x=42; printf 'print(%s)\\n' \"$x\""),
    ("group", "{ echo 'import sys'; echo 'print(42)'; }"),
    ("list", "{ true && echo 'print(42)' || echo 'print(0)'; }"),
    ("echo_params", "set -- 'print(' 42 ')'; echo \"$1$2$3\""),
]


@table_cases("first", IN_SHELL)
def test_a_builtin_first_stage_forks_nothing(tbox, first):
    """The worker's process numbers show it: the subshell after the
    pipeline is the next process after the one before."""
    r = tbox.bash("(echo $BASHPID); " + first + " | " + PY + "; (echo $BASHPID)")
    assert r.returncode == 0, r.stderr
    before, out, after = r.stdout.split()
    assert (out, int(after) - int(before)) == ("42", 1), r.stdout


def test_a_builtin_first_stage_before_forked_stages_forks_nothing_itself(tbox):
    """`printf | cat | tr`: cat and tr are forked, printf is not."""
    r = tbox.bash("(echo $BASHPID); printf 'a\\n' | cat | tr a b; (echo $BASHPID)")
    assert r.returncode == 0, r.stderr
    before, out, after = r.stdout.split()
    assert (out, int(after) - int(before)) == ("b", 3), r.stdout


def test_output_larger_than_the_pipe_streams_while_the_tool_reads(tbox):
    """1 MB from a first stage the Shell runs: the pipe takes what fits, a
    child writes the rest while the tool reads; no deadlock, every byte."""
    r = tbox.bash("{ printf '%01048575d\\n' 0; echo end; } | " + PY
                  + " -c 'import sys; d = sys.stdin.read(); print(len(d), d[-4:-1])';"
                  " echo ${PIPESTATUS[@]}")
    assert (r.returncode, r.stdout, r.stderr) == (0, "1048580 end\n0 0\n", "")


def test_a_reader_that_ends_early_gives_the_writer_141(tbox):
    """As bash's child, killed by SIGPIPE when the tool stops reading."""
    r = tbox.bash("printf '%0200000d\\n' 0 | " + PY + " -c 'import sys; sys.stdin.read(3)';"
                  " echo ${PIPESTATUS[@]}")
    assert (r.returncode, r.stdout, r.stderr) == (0, "141 0\n", "")


def test_a_refused_echo_into_a_tool_feeds_it_nothing(box):
    """echo refused: its message, status 126 in PIPESTATUS, and the tool
    reads an empty pipe, as when the stage is a child."""
    box.write_policy(ALLOW_ALL + 'forbid(principal, action == Box::Action::"shell:exec", resource)'
                     ' when { context.input.program == "echo" };\n')
    box.write_config(extra=f'\n[tool.python3]\ncommand = ["{PY}"]\n')
    box.start()
    r = box.bash("echo 'x' | " + PY + " -c 'import sys; print(repr(sys.stdin.read()))';"
                 " printf '%s\\n' \"${PIPESTATUS[*]}\"")
    assert (r.returncode, r.stdout) == (0, "''\n126 0\n"), r.stderr
    assert "effect denied" in r.stderr, r.stderr


def exec_and_spawn(b, since):
    """The shell:exec and shell:spawn decisions logged after the first
    since, as (action, resource)."""
    return [(a, r) for v, a, r in b.decision_summary()[since:]
            if a in ("shell:exec", "shell:spawn")]


AHEAD = [
    ("plain_stages", "printf a | cat | tr a b | " + PY + " -c 'import sys; print(sys.stdin.read())'",
     ["printf", "cat", "tr", os.path.realpath(PY)], "b\n"),
    ("group_first", "{ echo a; echo b; } | cat | tr a b", ["echo", "cat", "tr", "echo"], "b\nb\n"),
    ("printf_first", "printf 'a\\n' | cat | tr a b", ["printf", "cat", "tr"], "b\n"),
]


@table_cases("source,order,out", AHEAD)
def test_stage_decisions_come_in_stage_order(tbox, source, order, out):
    """A forked stage whose first act is a Shell command of plain words has
    that decision asked by the Shell before the fork, with the next such
    stages in the same round, and asks nothing itself: the log shows the
    stages in their order, every time (their children used to ask each on
    a channel of its own and race, each other and the Shell's own spawn).
    What a child asks after that (a group's second command) comes after."""
    for _ in range(8):
        since = len(tbox.decisions())
        r = tbox.bash(source)
        assert (r.returncode, r.stdout, r.stderr) == (0, out, ""), r.stderr
        assert [res for _, res in exec_and_spawn(tbox, since)] == order


AS_BASH = [
    ("status", "printf a | cat | tr a b; echo; echo $? ${PIPESTATUS[@]}"),
    ("pipefail", "set -o pipefail; printf a | { cat > /dev/null; false; } | cat; "
     "echo $? ${PIPESTATUS[@]}"),
    ("errexit", "set -e; printf a | cat > /dev/null; printf a | false; echo not-here"),
    ("exit_trap_in_stage", "trap 'echo outer' EXIT; printf a | { trap 'echo inner' EXIT; cat; }; echo"),
    ("err_trap", "trap 'echo err $?' ERR; printf a | cat | false; echo after"),
    ("bashpid", "a=$BASHPID; { printf '%s\\n' a; echo $BASHPID; } | "
     "{ read x; read y; [ \"$y\" != \"$a\" ] && echo \"$x other\"; }"),
    ("function_stage", "f() { echo fn \"$@\"; }; f x | cat; cat() { echo shadow; }; printf a | cat"),
    ("vars_stay", "x=1; printf a | x=2 cat > /dev/null; echo $x"),
]


# A first stage the Shell runs itself (or forks, where it could change the
# Shell's state): what bash's child gives, and nothing of it stays.
IN_SHELL_AS_BASH = [
    ("group_status", "{ echo a; echo b; } | cat; echo ${PIPESTATUS[@]} $?"),
    ("errexit_in_group", "set -e; { false; echo no; } | cat; echo ${PIPESTATUS[@]}"),
    ("errexit_list", "set -e; { echo a && false; echo b; } | cat; echo ${PIPESTATUS[@]} end"),
    ("errexit_stage_fails", "set -e; false | cat; echo survived; printf x | false; echo not-here"),
    ("pipefail", "set -o pipefail; { true; false; } | cat; echo $?"),
    ("pipefail_epipe", "set -o pipefail; printf '%0100000d\\n' 0 | head -c1; echo; echo $?"),
    ("epipe", "printf '%0100000d\\n' 0 | head -c 5; echo; echo ${PIPESTATUS[@]}"),
    ("epipe_group", "{ printf '%070000d' 0; echo tail; } | tail -c 5; echo ${PIPESTATUS[@]}"),
    ("large_1mb", "printf '%01048575d\\n' 0 | wc -c; echo ${PIPESTATUS[@]}"),
    ("large_lastpipe", "shopt -s lastpipe; printf '%070000d\\n' 0 | { read l; echo ${#l}; }"),
    ("lastpipe_loop", "shopt -s lastpipe; printf '%s\\n' a b | while read l; do echo \"got $l\"; done;"
     " echo \"[$l]\""),
    # the writer waits: that the reader has gone when it writes is no race
    ("reader_not_reading", "{ sleep 0.1; echo x; } | true; echo ${PIPESTATUS[@]}"),
    ("reader_alive_not_reading", "echo x | sleep 0.1; echo ${PIPESTATUS[@]}"),
    ("status_in", "false; echo $? | cat; { echo $?; true; echo $?; } | cat; echo $?"),
    ("status_kept", "false; echo x | cat > /dev/null; echo $?; (exit 3); printf a | cat; echo \" $?\""),
    ("last_arg", "echo y; { echo $_; echo a; } | cat; echo $_"),
    ("params", "x=5; set -- p q; printf '%s-%s\\n' \"$x\" \"${x}\" $# \"$@\" ${#x} \"${#}\" | cat"),
    ("arrays", "printf '%s\\n' \"${arr[@]}\" | wc -l; arr=(1 2 3); printf '%s\\n' \"${arr[@]}\" ${#arr[@]} | cat"),
    ("quoting", "echo $'a\\tb' \"c\\$d\" 'e\"f' {a,b}{1,2} | cat"),
    ("split_glob", "IFS=:; x='a:b'; echo $x | cat; IFS=' '; y='*'; echo $y | wc -w"),
    ("pipestatus_in", "false | true | cat; echo ${PIPESTATUS[@]}; echo ${PIPESTATUS[@]} | cat"),
    ("test_stage", "[ -d / ] | cat; echo ${PIPESTATUS[@]}; test 1 -eq 2 | cat; echo ${PIPESTATUS[0]}"),
    ("not_in_group", "{ ! false; echo $?; } | cat; ! echo a | cat; echo $?"),
    ("lineno", "echo $LINENO | cat\necho $LINENO"),
    ("nounset", "set -u; echo \"$nosuch\" | cat; echo after ${PIPESTATUS[@]}"),
    ("nounset_group", "set -u; { echo a; echo \"$nosuch\"; echo b; } | cat; echo after ${PIPESTATUS[@]}"),
    ("exit_trap", "trap 'echo T' EXIT; { echo a; echo b; } | cat"),
    ("bashpid", "a=$BASHPID; echo $BASHPID | { read p; [ $p != $a ] && echo differs; }"),
    ("assign_stays_in", "x=1; { x=2; echo $x; } | cat; echo $x"),
    ("printf_v_stays_in", "printf -v y %s 1 | cat; echo \"[$y]\""),
    ("default_stays_in", ": ${z:=1} | cat; echo \"[$z]\"; echo $((i++)) | cat; echo \"[$i]\""),
    ("cd_stays_in", "{ cd /; echo a; } | cat; [ \"$PWD\" != / ] && echo kept"),
    ("exit_stays_in", "{ echo a; exit 3; echo b; } | cat; echo ${PIPESTATUS[@]}"),
    ("set_stays_in", "{ set -e; echo a; } | cat; false; echo after"),
    ("trap_stays_in", "{ trap 'echo t' EXIT; echo a; } | cat; echo b"),
    ("function_stage", "echo() { builtin echo fn \"$@\"; }; echo x | cat"),
    ("read_stays_in", "echo a | read x; echo \"[$x]\""),
]


@table_cases("source", IN_SHELL_AS_BASH)
def test_first_stages_in_the_shell_as_in_bash(tbox, source):
    """A first stage the Shell runs itself: output, $?, PIPESTATUS,
    set -e/pipefail, EPIPE's 141, 1 MB through the pipe, and its state
    staying in it, as GNU bash gives them."""
    r = tbox.bash(source)
    want = subprocess.run(["bash", "-c", source], capture_output=True, text=True,
                          cwd=str(tbox.workspace), timeout=30)
    assert (r.returncode, r.stdout) == (want.returncode, want.stdout), r.stderr


@table_cases("source", AS_BASH)
def test_stages_asked_ahead_run_as_in_bash(tbox, source):
    """Stages whose decisions the Shell asked before their forks: output,
    $?, PIPESTATUS, $BASHPID, set -e/pipefail and traps as GNU bash."""
    r = tbox.bash(source)
    want = subprocess.run(["bash", "-c", source], capture_output=True, text=True,
                          cwd=str(tbox.workspace), timeout=30)
    assert (r.returncode, r.stdout) == (want.returncode, want.stdout), r.stderr


def test_a_stage_refused_before_its_fork(box):
    """A stage refused when the Shell asked ahead: its child prints the
    policy's message and ends 126, the next stage reads an empty pipe, and
    the stage after runs."""
    box.write_policy(ALLOW_ALL + 'forbid(principal, action == Box::Action::"shell:exec", resource)'
                     ' when { context.input.program == "printf" };\n')
    box.write_config()
    box.start()
    r = box.bash('printf x | cat | wc -c; echo "${PIPESTATUS[*]}"')
    assert (r.returncode, r.stdout) == (0, "0\n126 0 0\n"), r.stderr
    assert r.stderr.count("effect denied") == 1, r.stderr


def test_a_debug_trap_still_runs_between_the_forks(tbox):
    """With a DEBUG trap, which bash runs before it forks each stage and
    which may change what the stage names, nothing is asked ahead: a
    function the trap defines is what the next stage runs."""
    src = ("trap 'cat() { echo from-fn; }' DEBUG; printf a | cat | tr a b; "
           "trap - DEBUG; unset -f cat")
    r = tbox.bash(src)
    want = subprocess.run(["bash", "-c", src], capture_output=True, text=True,
                          cwd=str(tbox.workspace), timeout=30)
    assert (r.returncode, r.stdout) == (want.returncode, want.stdout), r.stderr


def test_callers_stdin_stays_out_of_tools(tbox):
    """The alias's own stdin is the Shell's, never a tool's (§4.4): a tool
    fed nothing reads /dev/null, while one fed by the command reads that."""
    reader = PY + " -c 'import sys; print(repr(sys.stdin.read()))'"
    r = tbox.bash(reader, input="caller\n")
    assert (r.returncode, r.stdout) == (0, "''\n"), r.stderr
    r = tbox.bash("cat | " + reader, input="caller\n")
    assert (r.returncode, r.stdout) == (0, "'caller\\n'\n"), r.stderr


def test_tmp_is_the_commands_ram_tmp(tbox):
    r = tbox.bash("echo from-shell > /tmp/a; " + PY + " -c 'print(open(\"/tmp/a\").read(), end=\"\")'")
    assert (r.returncode, r.stdout) == (0, "from-shell\n"), r.stderr
    r = tbox.bash(PY + " -c 'open(\"/tmp/b\", \"w\").write(\"from-tool\\n\")'; cat /tmp/b; "
                  + PY + " -c 'print(open(\"/tmp/b\").read(), end=\"\")'")
    assert (r.returncode, r.stdout) == (0, "from-tool\nfrom-tool\n"), r.stderr
    # Per command: the next one starts with neither.
    r = tbox.bash(PY + " -c 'import os; print(os.path.exists(\"/tmp/a\"), os.path.exists(\"/tmp/b\"))'")
    assert (r.returncode, r.stdout) == (0, "False False\n"), r.stderr


def test_tmp_is_the_box_wide_area_with_ram_box(box):
    start_box(box, 'ram = "box"')
    r = box.bash("echo kept > /tmp/k")
    assert r.returncode == 0, r.stderr
    r = box.bash(PY + " -c 'print(open(\"/tmp/k\").read(), end=\"\"); open(\"/tmp/t\", \"w\").write(\"t\\n\")'")
    assert (r.returncode, r.stdout) == (0, "kept\n"), r.stderr
    r = box.bash("cat /tmp/t")
    assert (r.returncode, r.stdout) == (0, "t\n"), r.stderr


def sleepers(marker):
    out = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout
    return out.split()


def until(cond, limit):
    deadline = time.monotonic() + limit
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


SLEEP_TOOL = PY + " -c 'import time; time.sleep(30)  # {marker}'"


@table_cases("how,status", [("interrupt", "int", 125), ("shutdown", "term", 125)])
def test_interrupt_and_shutdown_end_tools(box, how, status):
    start_box(box)
    marker = f"tio-{how}-{time.monotonic_ns()}"
    p = subprocess.Popen([str(box.box_dir / "bin" / "bash"), "-c",
                          SLEEP_TOOL.format(marker=marker) + "; echo after"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=str(box.workspace), env=box.env())
    assert until(lambda: sleepers(marker), 20)
    t = time.monotonic()
    if how == "int":
        p.send_signal(signal.SIGINT)
    else:
        box.proc.send_signal(signal.SIGTERM)
    out, _ = p.communicate(timeout=20)
    assert (p.returncode, out) == (status, "")
    # Gone within 100 ms of the signal (and 50 ms for pgrep's own runs).
    assert until(lambda: not sleepers(marker), 0.15 - (time.monotonic() - t))


@table_cases("source,status,limit", [
    ("shell_timeout", "{tool}; echo after", 124, 2.0),
    ("timeout", "timeout 1 {tool}; echo status $?", 0, 1.0),
])
def test_deadlines_end_tools(box, source, status, limit):
    start_box(box, 'shell_timeout = "2s"')
    marker = f"tio-deadline-{time.monotonic_ns()}"
    t = time.monotonic()
    r = box.bash(source.format(tool=SLEEP_TOOL.format(marker=marker)), timeout=30)
    took = time.monotonic() - t
    assert r.returncode == status, r.stderr
    assert r.stdout == ("" if status else "status 124\n"), r.stdout
    assert limit <= took < limit + 0.5, took
    assert until(lambda: not sleepers(marker), 0.1)


SIGNALLED = [
    ("timeout_int", "timeout -s INT 1 " + PY + " -c 'import time\ntry:\n time.sleep(8)\n"
     "except KeyboardInterrupt:\n print(\"interrupted\")'; echo $?"),
    ("timeout_term_handled", "timeout 1 " + PY + " -c 'import signal, sys, time\n"
     "signal.signal(signal.SIGTERM, lambda *a: (print(\"cleanup\"), sys.exit(3)))\n"
     "time.sleep(8)'; echo $?"),
    ("timeout_preserve", "timeout --preserve-status 1 " + PY + " -c 'import time; time.sleep(8)';"
     " echo $?"),
    ("kill_job", PY + " -c 'import signal, sys, time\n"
     "signal.signal(signal.SIGTERM, lambda *a: (print(\"term\"), sys.exit(5)))\n"
     "print(\"up\", flush=True)\ntime.sleep(8)' & sleep 0.5; kill $!; wait $!; echo $?"),
    ("timeout_kill_after", "timeout -k 0.5 1 " + PY + " -c 'import signal, time\n"
     "signal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(8)'; echo $?"),
]


@table_cases("source", SIGNALLED)
def test_signals_reach_tools_as_in_bash(tbox, source):
    """The signal a job or `timeout` sends reaches the tool itself, which
    may handle it, as bash's child would be the program."""
    r = tbox.bash(source)
    want = subprocess.run(["bash", "-c", source], capture_output=True, text=True,
                          cwd=str(tbox.workspace), timeout=30)
    assert (r.returncode, r.stdout) == (want.returncode, want.stdout), r.stderr


@pytest.mark.parametrize("run", range(12))
def test_a_fresh_boxs_first_command_starts_two_tools_at_once(box, run):
    """The first tool of a box makes the watch expire the kernel's entries
    for the host directories it holds.  boxd's own walk of the mount (a
    launch checking its plan) then asks LOOKUP again; refused, the kernel
    dropped the entry and detached the binds the other launch was making
    from below it ("could not build the view: …: No such file or
    directory"), about one fresh box in six on a loaded machine."""
    start_box(box)
    r = box.bash("cat src/main.rs | " + PY + " -c 'import sys; print(len(sys.stdin.read()))' | "
                 + PY + " -c 'import sys; print(int(sys.stdin.read()) * 2)'")
    assert (r.returncode, r.stdout, r.stderr) == (0, "186\n", "")
