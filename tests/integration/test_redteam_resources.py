"""Resources: a hostile agent spends resources — deep nesting
of every construct, text over the limit, fork bombs, floods of output, RAM
and inodes, loops, recursion, long pipelines, many jobs, huge here-docs and
arguments.  Each attack runs for real through the alias (or the broker's
socket) against one box; each ends contained — an exact refusal, a bounded
result — and boxd answers the next command."""
import os
import socket
import struct
import subprocess
import time

import pytest

from conftest import BOX_SHELL, Box, host_mounts
from test_alias import frame, read_frame
from test_shell_limits import worker_children

NEST = "strands-shell: maximum nesting depth exceeded (256)\n"
DEEP = "strands-shell: maximum recursion depth exceeded\n"
TIMEOUT = "strands-shell: execution timeout exceeded\n"
LIMIT = 256 * 1024


def started_box(tmp_path_factory, shell_timeout):
    b = Box(tmp_path_factory.mktemp("redteam"))
    b.write_config()
    text = b.config.read_text()
    b.config.write_text(text.replace("[tool.git]", f'shell_timeout = "{shell_timeout}"\n\n[tool.git]', 1))
    b.seed_policy(extra="""\
        permit(principal, action in [Box::Action::"fs:read", Box::Action::"fs:write"], resource)
        when { context.input.path like "/tmp/*" };
        """)
    b.start()
    return b


@pytest.fixture(scope="module")
def box(tmp_path_factory):
    b = started_box(tmp_path_factory, "3s")
    yield b
    b.stop()
    assert "boxfs-mnt" not in host_mounts()


@pytest.fixture(scope="module")
def roomy_box(tmp_path_factory):
    """For attacks that must run to their end (180 MB into /tmp, 12,000
    files, 200,000 words): each took more than 3 s on a loaded machine and
    the timeout cut it short."""
    b = started_box(tmp_path_factory, "120s")
    yield b
    b.stop()
    assert "boxfs-mnt" not in host_mounts()


def alive(box):
    """boxd is still there and runs the next command; nothing the attack
    started outlives it."""
    assert box.proc.poll() is None, box.stderr()
    r = box.bash("echo alive")
    assert (r.returncode, r.stdout, r.stderr) == (0, "alive\n", "")
    deadline = time.time() + 10
    while worker_children() and time.time() < deadline:
        time.sleep(0.05)
    assert worker_children() == []


def ends(box, source, expected, **kw):
    """The attack ends with exactly (status, stdout, stderr) and boxd is alive after."""
    r = box.bash(source, **kw)
    assert (r.returncode, r.stdout, r.stderr) == expected
    alive(box)


def nested(head, n, mid, tail, pre="", post=""):
    return pre + head * n + mid + tail * n + post


# ---- item 2: nesting (each overflowed the stack at 8,000: boxd or the worker died) ----

NESTINGS = {
    "brace-groups": nested("{ ", 8000, "true; ", "}; "),
    "subshells": nested("( ", 8000, "true ", ") "),
    "if": nested("if true; then ", 5000, "true; ", "fi; "),
    "while": nested("while false; do ", 5000, "true; ", "done; "),
    "until": nested("until true; do ", 5000, "true; ", "done; "),
    "for": nested("for i in 1; do ", 5000, "true; ", "done; "),
    "case": nested("case a in a) ", 5000, "true;; ", "esac;; ")[:-3],
    "function-definitions": nested("f() { ", 8000, "true; ", "}; "),
    "command-substitution": nested('"$( ', 8000, "true", ' )"', pre="echo "),
    "parameter-expansion": nested("${x:-", 8000, "a", "}", pre="echo "),
    "cond-parentheses": nested("( ", 8000, "a", " )", pre="[[ ", post=" ]]"),
    "cond-negation": nested("! ", 20000, "a", "", pre="[[ ", post=" ]]"),
}


@pytest.mark.parametrize("src", NESTINGS.values(), ids=NESTINGS.keys())
def test_deep_nesting_is_a_syntax_error(box, src):
    assert len(src.encode()) < 128 * 1024  # one argument of the alias
    ends(box, src, (2, "", NEST))


def test_deep_nesting_in_a_here_document(box):
    # a here-doc's body is expanded, never parsed: it ended the worker
    body = nested("${x:-", 20000, "y", "}")
    ends(box, f"cat <<E\n{body}\nE\necho after", (0, "after\n", NEST))


def test_deep_keywords_boxd_parses_itself(box):
    # no character that opens a construct: boxd's own pre-parse (first.c)
    # reads this text on its connection thread
    ends(box, "if " * 30000, (2, "", NEST))


def test_check_only_parse_of_deep_text(box):
    r = subprocess.run([str(BOX_SHELL), "-n", "-c", NESTINGS["subshells"]], capture_output=True,
                       text=True, timeout=30)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", NEST)
    alive(box)


@pytest.mark.parametrize("expr", ["(" * 20000 + "1" + ")" * 20000, "- " * 20000 + "1",
                                  "1?" * 10000 + "1" + ":1" * 10000],
                         ids=["arith-parentheses", "arith-unary", "arith-conditional"])
def test_deep_arithmetic_is_bash_s_error(box, expr):
    r = box.bash(f"echo $(({expr})); echo after")
    assert r.returncode == 1
    assert r.stdout == ""
    assert r.stderr.startswith("strands-shell: ")
    assert "expression recursion level exceeded (error token is " in r.stderr
    alive(box)


# ---- item 9: text over the limit ----

def raw_call(box, source):
    """A call on the broker's socket, as a client that is not the alias
    (which cannot pass 256 KiB in one argument): exit frame, stdout, stderr."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(str(box.box_dir / "run" / "box.sock"))
    s.sendall(frame({"version": 6, "program": 1, "frame_type": "open", "body": {"mode": "shell"}}))
    r_out, w_out = os.pipe()
    r_err, w_err = os.pipe()
    nul = os.open("/dev/null", os.O_RDONLY)
    call = frame({"version": 6, "program": 1, "frame_type": "call", "body": {"source": source}})
    socket.send_fds(s, [call], [nul, w_out, w_err])
    for fd in (nul, w_out, w_err):
        os.close(fd)
    reply = read_frame(s)
    while reply and reply["frame_type"] == "output":
        reply = read_frame(s)
    s.close()
    out, err = os.read(r_out, 1 << 16), os.read(r_err, 1 << 16)
    os.close(r_out)
    os.close(r_err)
    return reply, out.decode(), err.decode()


@pytest.mark.parametrize("size", [LIMIT + 1, 1000000], ids=["one-byte-over", "four-times-over"])
def test_text_over_the_limit_names_its_size(box, size):
    reply, out, err = raw_call(box, "echo x; : " + "a" * (size - 10))
    assert reply["frame_type"] == "exit", reply
    assert reply["body"] == {"status": 2}
    assert out == ""
    assert err == f"strands-shell: command text is {size} bytes; the limit is {LIMIT} bytes\n"
    alive(box)


def test_text_at_the_limit_runs(box):
    # it did not fit the worker's channel: "no Shell worker could be started"
    reply, out, err = raw_call(box, "echo x; : " + "a" * (LIMIT - 10))
    assert reply["body"] == {"status": 0}, reply
    assert (out, err) == ("x\n", "")
    alive(box)


def test_deeply_nested_json_frame(box):
    # boxd parses the frame itself: json-c's depth bound refuses it
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(str(box.box_dir / "run" / "box.sock"))
    data = ('{"version": 6, "program": 1, "frame_type": "open", "body": {"mode": '
            + "[" * 200000 + "]" * 200000 + "}}").encode()
    s.sendall(struct.pack(">I", len(data)) + data)
    reply = read_frame(s)
    s.close()
    assert reply["frame_type"] == "denied"
    assert reply["body"] == {"kind": "transport_error", "reason": "a frame is not a JSON object"}
    alive(box)


# ---- processes ----

@pytest.mark.parametrize("src", ["bomb() { bomb | bomb & }; bomb", ":() { : | : & }; :"],
                         ids=["fork-bomb-named", "fork-bomb-colon"])
def test_fork_bomb_ends_with_its_command(box, src):
    t0 = time.monotonic()
    r = box.bash(src, timeout=60)
    assert r.returncode in (0, 1, 124), r
    assert time.monotonic() - t0 < 30
    alive(box)


def test_long_pipeline(box):
    r = box.bash("true | " * 400 + "echo end | cat", timeout=60)
    assert (r.returncode, r.stdout) == (0, "end\n")
    alive(box)


def test_many_background_jobs_end_at_the_deadline(box):
    t0 = time.monotonic()
    r = box.bash("for i in $(seq 1 300); do sleep 30 & done; echo started", timeout=60)
    assert r.stdout == "started\n"
    assert TIMEOUT in r.stderr
    assert time.monotonic() - t0 < 25  # not the jobs' 30 s
    alive(box)


def test_infinite_loop_ends_at_shell_timeout(box):
    t0 = time.monotonic()
    r = box.bash("while :; do :; done; echo never")
    assert (r.returncode, r.stdout, r.stderr) == (124, "", TIMEOUT)
    assert 2.5 < time.monotonic() - t0 < 10
    alive(box)


def test_output_flood_ends_at_shell_timeout(box):
    t0 = time.monotonic()
    p = subprocess.run([str(box.box_dir / "bin" / "bash"), "-c",
                        "while :; do echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       cwd=str(box.workspace), env=box.env(), timeout=60)
    assert (p.returncode, p.stderr) == (124, TIMEOUT)
    assert time.monotonic() - t0 < 10
    alive(box)


# ---- RAM and inodes ----

def test_one_huge_tmp_file_stops_at_the_file_size_limit(roomy_box):
    r = roomy_box.bash("head -c 200000000 /dev/zero > /tmp/big; echo $?; wc -c < /tmp/big", timeout=180)
    assert r.stdout == "1\n10485760\n"
    assert r.stderr == "strands-shell: head: write error: No space left on device\n"
    alive(roomy_box)


def test_tmp_filled_with_big_files_is_given_back(roomy_box):
    fill = "for i in $(seq 1 20); do head -c 9000000 /dev/zero > /tmp/f$i || break; done; echo $i"
    ends(roomy_box, fill, (0, "20\n", ""), timeout=180)
    # the command's RAM root went with it: the next one starts empty and
    # has the same room again
    ends(roomy_box, "[ -e /tmp/f1 ] || echo gone; " + fill, (0, "gone\n20\n", ""), timeout=180)


def test_inode_flood_stops_at_the_inode_limit(roomy_box):
    r = roomy_box.bash("for i in $(seq 1 12000); do : > /tmp/i$i || break; done; echo $i", timeout=180)
    n = int(r.stdout)
    assert 9000 < n <= 10000
    assert r.stderr == f"strands-shell: /tmp/i{n}: No space left on device\n"
    alive(roomy_box)


# ---- recursion at run time ----

def test_recursive_function(box):
    r = box.bash("f() { f; }; f; echo after")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == "strands-shell: f: maximum function nesting level exceeded (1000)\n"
    alive(box)


def test_command_substitution_recursion(box):
    r = box.bash("f() { echo $(f); }; f", timeout=60)
    assert r.returncode == 0
    assert r.stderr == DEEP
    alive(box)


def test_eval_of_itself(box):
    # it ended the worker with SIGSEGV (139)
    ends(box, 'x=\'eval "$x"\'; eval "$x"', (2, "", DEEP))


def test_function_eval_recursion(box):
    r = box.bash("f() { eval f; }; f")
    assert r.returncode in (1, 2)
    assert r.stderr == DEEP
    alive(box)


def test_source_of_itself(box):
    ends(box, "echo '. /tmp/self.sh' > /tmp/self.sh; . /tmp/self.sh", (1, "", DEEP))


def test_sh_of_itself(box):
    # sh starts each level afresh (no function depth): only the text depth bounds it
    r = box.bash("echo 'sh /tmp/self2.sh' > /tmp/self2.sh; sh /tmp/self2.sh", timeout=60)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.endswith(DEEP)
    alive(box)


# ---- size ----

def test_long_command_list(box):
    # a left-leaning list as deep as it was long ended the worker
    ends(box, "true;" * 20000 + "echo end", (0, "end\n", ""))


def test_long_and_chain(box):
    ends(box, "true&&" * 20000 + "echo end", (0, "end\n", ""))


def test_huge_here_document(box):
    body = "".join(f"line {i} of a long here-document\n" for i in range(3000))
    ends(box, f"cat <<'EOF'\n{body}EOF\n", (0, body, ""))


def test_huge_argument_count(roomy_box):
    ends(roomy_box, "set -- $(seq 1 20000); echo $# ${20000}", (0, "20000 20000\n", ""), timeout=180)


def test_argument_count_past_the_decision_channel(roomy_box):
    # 200,000 words make a shell:exec request larger than the worker's
    # channel takes: refused loudly, not run undecided
    r = roomy_box.bash("set -- $(seq 1 200000) || echo refused; echo $#", timeout=180)
    assert (r.returncode, r.stdout) == (0, "refused\n0\n")
    assert r.stderr.startswith("strands-shell: effect denied: ")
    alive(roomy_box)


def test_huge_single_argument(box):
    word = "a" * 120000
    ends(box, f"x={word}; echo ${{#x}}", (0, "120000\n", ""))


# ---- pathological patterns ----

PATTERNS = {
    "regex-cond": ("[[ x =~ " + nested("(", 20000, "x", ")") + " ]]; echo $?", "2\n",
                   "strands-shell: maximum nesting depth exceeded (256)\n"),
    "extglob-case": ("shopt -s extglob\ncase x in " + nested("@(", 20000, "x", ")") + ") echo m;; esac; echo $?",
                     "0\n", "strands-shell: maximum nesting depth exceeded (256)\n"),
    "grep-regex": ("echo x | grep -E '" + nested("(", 20000, "x", ")") + "'; echo $?", "2\n",
                   "grep: maximum nesting depth exceeded (256)\n"),
}


@pytest.mark.parametrize("src,out,err", PATTERNS.values(), ids=PATTERNS.keys())
def test_deeply_nested_pattern(box, src, out, err):
    # glibc's regcomp and fnmatch recurse per `(`: these ended the worker
    ends(box, src, (0, out, err))


def test_regex_backtracking(box):
    t0 = time.monotonic()
    r = box.bash("[[ " + "a" * 40 + "b =~ ^(a+)+$ ]]; echo $?")
    assert (r.returncode, r.stdout) == (0, "1\n")
    assert time.monotonic() - t0 < 10
    alive(box)


def test_glob_backtracking(box):
    t0 = time.monotonic()
    r = box.bash("case " + "a" * 60 + "b in " + "*a" * 30 + "c) echo match;; *) echo none;; esac")
    assert (r.returncode, r.stdout) == (0, "none\n")
    assert time.monotonic() - t0 < 10
    alive(box)
