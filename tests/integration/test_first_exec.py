"""boxd decides a command's first shell:exec itself when the
text is one simple command of plain words naming a command the Shell
implements, and sends the verdict with "run" (box/worker_command.c decide_first).
Such a command must leave exactly what the worker's own request leaves:
the same output, status and message, the same decision record and the
same history events in the same order.  Each case is run once in the form
boxd decides (`true`) and once in a form only the worker can (`'true'`:
quoted, so it is not plain, yet it asks for the same decision)."""

DENY_FALSE = """\
    @id("no-false")
    forbid(principal, action == Box::Action::"shell:exec", resource)
    when { context.input.program == "false" };
    """

# (the form boxd decides, the same command in a form the worker decides)
PAIRS = [
    ("true", "'true'"),
    ("echo hi there", "echo 'hi' there"),
    ("exit 3", "'exit' 3"),
    ("false", "'false'"),              # refused by policy: 126 and its message
    ("cat src/main.rs", "cat 'src/main.rs'"),  # a file read follows the decision
]

# Varying from one record to the next whatever the path: times and ids.
VOLATILE_ATTRS = ("time", "trace", "span", "_id", "duration")


def stable_decision(d):
    return {k: v for k, v in d.items() if not any(x in k for x in VOLATILE_ATTRS)}


def stable_event(e, base):
    """A history event without its time, its sequence numbers made relative
    to the first event of its command (so two commands compare)."""
    e = dict(e)
    for k in ("t", "ts", "time"):
        e.pop(k, None)
    for k in ("s", "q"):
        if k in e:
            e[k] -= base
    return e


def run_and_capture(box, source):
    nd, nh = len(box.decisions()), len(box.history())
    r = box.bash(source)
    box.bash(":")  # a later command: this one's bookkeeping has ended by then
    dec = box.decisions()[nd:]
    hist = box.history()[nh:]
    # the trailing `:` leaves its own decision and events: drop them
    assert dec[-1]["strands.box.policy.resource"] == ":"
    dec = dec[:-1]
    last = max(i for i, e in enumerate(hist) if e.get("i", {}).get("program") == ":" and e.get("k") == 0)
    hist = hist[:last]
    base = hist[0]["s"] if hist and "s" in hist[0] else 0
    return r, [stable_decision(d) for d in dec], [stable_event(e, base) for e in hist]


def test_boxd_decided_first_command_leaves_what_the_worker_would(box):
    box.write_config()
    box.seed_policy(extra=DENY_FALSE)
    box.start()
    for fast, slow in PAIRS:
        rf, df, hf = run_and_capture(box, fast)
        rs, ds, hs = run_and_capture(box, slow)
        assert (rf.returncode, rf.stdout, rf.stderr) == (rs.returncode, rs.stdout, rs.stderr), fast
        assert df == ds, fast
        assert hf == hs, fast
        assert len(df) >= 1 and df[0]["strands.box.policy.action"] == "shell:exec"
    r = box.bash("false")
    assert r.returncode == 126
    assert r.stderr.startswith("strands-shell: effect denied: ") and "[policy: no-false]" in r.stderr
    assert box.bash("exit 3").returncode == 3


def test_status_of_a_boxd_decided_command_reaches_history_first(box):
    # The next command's decision reads the status of the one before.
    box.write_config()
    box.seed_policy(extra="""\
        @id("after-3")
        forbid(principal, action == Box::Action::"shell:exec", resource)
        when { context.input.program == "echo" }
        when temporal { formerly within 10m Box::Action::"shell:exec"::response{
          input.program: "exit", output.status: 3 } };
        """)
    box.start()
    assert box.bash("echo ok").stdout == "ok\n"
    assert box.bash("exit 2").returncode == 2
    assert box.bash("echo ok").returncode == 0
    assert box.bash("exit 3").returncode == 3
    r = box.bash("echo ok")
    assert r.returncode == 126 and "[policy: after-3]" in r.stderr
    statuses = [(e["i"]["command"], e["o"]["status"]) for e in box.history()
                if e.get("a") == "shell:exec" and e.get("k") == 1 and e["i"]["program"] == "exit"]
    assert statuses == [("exit 2", 2), ("exit 3", 3)]


def test_texts_boxd_leaves_to_the_worker(box):
    # Expansions, redirections and lists are decided by the worker as before:
    # one record per command run, expanded words redacted, in order.
    box.write_config()
    box.seed_policy()
    box.start()
    r = box.bash("echo $HOME > out.txt; cat out.txt")
    assert r.returncode == 0 and r.stdout == f"{box.home}\n", r.stderr
    summary = box.decision_summary()
    execs = [(v, res) for v, a, res in summary if a == "shell:exec"]
    assert execs == [("permit", "echo"), ("permit", "cat")]
    echo = [d for d in box.decisions() if d["strands.box.policy.action"] == "shell:exec"][0]
    assert [v["stringValue"] for v in echo["process.command_args"]["values"]] == ["echo", "<redacted>"]
    writes = [i for i, (v, a, res) in enumerate(summary) if a == "fs:write"]
    assert writes and writes[0] > 0  # the redirect's write comes after echo's decision
    n = len(box.decisions())
    r = box.bash("A=1 true")
    assert r.returncode == 0
    assert [d["strands.box.policy.resource"] for d in box.decisions()[n:]] == ["true"]
