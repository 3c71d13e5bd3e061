"""TRACEPARENT/TRACESTATE correlation (spec/runtime.md §4.1, §8.2): the alias
passes the two variables it reads, and the decisions of that command are
spans of the given trace, children of its parent, with the parent, its
sampled flag and the state on the log record; anything else is a root."""
import subprocess

from conftest import Box
from telemetry_util import attrs, file_entries, items

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"
POLICY = "strands-box.policy"


def policy_records(box):
    """(log record, its span) of each decision, in order."""
    entries = file_entries(box.box_dir / "private" / "telemetry" / "records.jsonl")
    logs = [it for key, _, it in items(entries, POLICY) if key == "resourceLogs"]
    spans = {it["spanId"]: it for key, _, it in items(entries, POLICY) if key == "resourceSpans"}
    return [(log, spans[log["spanId"]]) for log in logs]


def run_traced(box, source, traceparent=None, tracestate=None):
    env = {k: v for k, v in box.env().items() if k not in ("TRACEPARENT", "TRACESTATE")}
    if traceparent is not None:
        env["TRACEPARENT"] = traceparent
    if tracestate is not None:
        env["TRACESTATE"] = tracestate
    return subprocess.run([str(box.box_dir / "bin" / "bash"), "-c", source], capture_output=True,
                          text=True, env=env, cwd=str(box.workspace), timeout=60)


def of_action(box, action):
    return [(log, span) for log, span in policy_records(box)
            if attrs(log)["strands.box.policy.action"] == action]


def test_a_commands_decisions_are_children_of_the_aliass_trace(tmp_path):
    box = Box(tmp_path)
    box.permit_spawn("/bin/true")
    box.write_config(extra='\n[tool.true]\ncommand = ["/bin/true"]\n')
    box.start()
    try:
        r = run_traced(box, "echo hi; /bin/true", f"00-{TRACE}-{PARENT}-01", "vendor=x,other=y")
        assert r.returncode == 0 and r.stdout == "hi\n", r.stderr
    finally:
        box.stop()
    traced = of_action(box, "shell:exec") + of_action(box, "shell:spawn")
    assert len(traced) >= 2, policy_records(box)
    for log, span in traced:
        a = attrs(log)
        assert log["traceId"] == TRACE and span["traceId"] == TRACE
        assert span["parentSpanId"] == PARENT
        assert span["traceState"] == "vendor=x,other=y"
        assert span["spanId"] == log["spanId"] != PARENT
        assert a["strands.box.trace.parent_span_id"] == PARENT
        assert a["strands.box.trace.parent_sampled"] is True
        assert a["strands.box.trace.state"] == "vendor=x,other=y"
    # each decision its own span
    assert len({span["spanId"] for _, span in traced}) == len(traced)


def test_not_sampled_is_still_written_and_says_so(tmp_path):
    box = Box(tmp_path).start_seeded()
    try:
        assert run_traced(box, "echo hi", f"00-{TRACE}-{PARENT}-00").returncode == 0
    finally:
        box.stop()
    [(log, span)] = of_action(box, "shell:exec")
    a = attrs(log)
    assert log["traceId"] == TRACE and span["parentSpanId"] == PARENT
    assert a["strands.box.trace.parent_sampled"] is False
    assert "strands.box.trace.state" not in a and "traceState" not in span


def test_no_or_an_invalid_traceparent_makes_roots(tmp_path):
    box = Box(tmp_path).start_seeded()
    invalid = [None, f"00-{TRACE.upper()}-{PARENT}-01", f"00-{'0' * 32}-{PARENT}-01",
               f"00-{TRACE}-{'0' * 16}-01", f"ff-{TRACE}-{PARENT}-01", f"00-{TRACE}-{PARENT}-01-x",
               "garbage"]
    try:
        for tp in invalid:
            assert run_traced(box, "echo hi", tp, "vendor=x").returncode == 0, tp
    finally:
        box.stop()
    records = of_action(box, "shell:exec")
    assert len(records) == len(invalid)
    for log, span in records:
        assert "parentSpanId" not in span and "traceState" not in span
        assert not any(k.startswith("strands.box.trace.") for k in attrs(log))
        assert log["traceId"] != TRACE
    assert len({log["traceId"] for log, _ in records}) == len(invalid)


def test_a_later_versions_longer_form_is_accepted(tmp_path):
    box = Box(tmp_path).start_seeded()
    try:
        r = run_traced(box, "echo hi", f"01-{TRACE}-{PARENT}-03-more")
        assert r.returncode == 0, r.stderr
    finally:
        box.stop()
    [(log, span)] = of_action(box, "shell:exec")
    assert span["parentSpanId"] == PARENT and attrs(log)["strands.box.trace.parent_sampled"]


def test_file_reads_through_the_fast_path_are_spans_of_the_trace(tmp_path):
    """The Shell's and Python's reads of workspace files are decided by
    boxd's fast path, whose log lines are queued as the mount's are: they
    keep the command's trace all the same."""
    box = Box(tmp_path).start_seeded()
    (box.workspace / "a.txt").write_text("a\n")
    (box.workspace / "b.txt").write_text("b\n")
    try:
        r = run_traced(box, "cat a.txt; python3 -c 'print(open(\"b.txt\").read(), end=\"\")'",
                       f"00-{TRACE}-{PARENT}-01")
        assert (r.stdout, r.returncode) == ("a\nb\n", 0), r.stderr
    finally:
        box.stop()
    reads = [(log, span) for log, span in of_action(box, "fs:read")
             if attrs(log).get("strands.box.policy.resource", "").endswith((".txt", '.txt"'))]
    assert len(reads) >= 2, [attrs(log) for log, _ in of_action(box, "fs:read")]
    for log, span in reads:
        assert log["traceId"] == TRACE and span["parentSpanId"] == PARENT
        assert attrs(log)["strands.box.trace.parent_span_id"] == PARENT
