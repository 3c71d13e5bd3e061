"""`[telemetry.<label>]` targets (spec/runtime.md §2.6, §8): every rule and
message, declared targets replacing the default file, `include`, an OTLP/HTTP
receiver getting the records a file target holds, a receiver that is down or
slow costing decisions nothing (its drops counted in box_stopped), and the
control records of a run, early failures included."""
import re
import subprocess
import time

import pytest

from conftest import BOX, Box, table_cases
from telemetry_util import (Receiver, canonical, closed_port_url, control_records, file_entries,
                            items, normalized)


def run_box(box, extra, agent=("/bin/true",)):
    box.seed_policy()
    box.write_config(agent_command=list(agent), extra=extra)
    r = subprocess.run([str(BOX), "run", "--quiet", "--config", str(box.config)],
                       capture_output=True, text=True, env=box.env(), timeout=120)
    return r


# ---- parse-time rules: refused before any box state exists ----

PARSE_CASES = [
    ("empty-include", 'kind = "file"\ndestination = "/tmp/x.jsonl"\ninclude = []\n',
     "invalid `[telemetry.t]` target: the target names no signal, so nothing would reach it; "
     "write one or more of: deny, permit, trace, logs, metrics, kernel"),
    ("twice", 'kind = "file"\ndestination = "/tmp/x.jsonl"\ninclude = ["deny", "permit", "deny"]\n',
     "invalid `[telemetry.t]` target: the target names deny twice"),
    ("unknown-word", 'kind = "file"\ndestination = "/tmp/x.jsonl"\ninclude = ["debug"]\n',
     'invalid `[telemetry.t]` target: "debug" is not a signal; write one or more of: deny, '
     "permit, trace, logs, metrics, kernel"),
    ("kind", 'kind = "syslog"\ndestination = "/tmp/x.jsonl"\n',
     'invalid `[telemetry.t]` target: `kind` "syslog" is not "file" or "otlp"'),
    ("no-kind", 'destination = "/tmp/x.jsonl"\n', "missing field `telemetry.t.kind`"),
    ("no-destination", 'kind = "otlp"\n', "missing field `telemetry.t.destination`"),
    ("unknown-key", 'kind = "file"\ndestination = "/tmp/x"\nformat = "json"\n',
     "unknown field `telemetry.t.format`"),
    ("signals-removed", 'kind = "file"\ndestination = "/tmp/x"\nsignals = ["deny"]\n',
     "carries `telemetry.t.signals`, which this build does not read; write `include` instead"),
    ("file-secret", 'kind = "file"\ndestination = "/tmp/x"\nsecret.ref = "env://T"\n',
     "invalid `[telemetry.t]` target: a file target takes no `secret`"),
    ("protocol", 'kind = "otlp"\ndestination = "http://127.0.0.1:1"\nprotocol = "grpc"\n',
     'invalid `[telemetry.t]` target: `protocol` "grpc" is not "http/json" or "http/protobuf" of an '
     "otlp target"),
    ("file-protocol", 'kind = "file"\ndestination = "/tmp/x"\nprotocol = "http/json"\n',
     'invalid `[telemetry.t]` target: `protocol` "http/json" is not "http/json" or '
     '"http/protobuf" of an otlp target'),
    ("literal-secret", 'kind = "otlp"\ndestination = "http://127.0.0.1:1"\nsecret.ref = "abc"\n',
     'invalid `[telemetry.t]` target: `secret.ref` "abc" is not a reference'),
]


@table_cases("table, message", PARSE_CASES)
def test_parse_time_rule(tmp_path, table, message):
    box = Box(tmp_path)
    r = run_box(box, "\n[telemetry.t]\n" + table)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith("box: error: "), r.stderr
    assert message in r.stderr, r.stderr
    assert not box.box_dir.exists()  # §2.7: nothing on disk yet


# ---- destinations: judged once box_dir exists, which stays behind ----

def test_destination_rules(tmp_path):
    box = Box(tmp_path)
    cases = [
        ("relative.jsonl", "a file destination must be absolute or begin with `~/`"),
        ("/tmp/a/../b.jsonl", 'the destination "/tmp/a/../b.jsonl" carries a `..` component'),
        (f"{box.box_dir}/run/records.jsonl",
         f'"{box.box_dir}/run/records.jsonl" is inside the box directory {box.box_dir} but '
         "outside its private tree, where a process could truncate it; name a destination under "
         "`private/`, or outside the box, or declare no target and take the default"),
    ]
    for dest, message in cases:
        r = run_box(box, f'\n[telemetry.t]\nkind = "file"\ndestination = "{dest}"\n')
        assert r.returncode == 1, r.stderr
        assert f"box: error: invalid `[telemetry.t]` target: {message}\n" in r.stderr, r.stderr
        assert box.box_dir.is_dir()
    r = run_box(box, '\n[telemetry.t]\nkind = "otlp"\ndestination = "ftp://x"\n')
    assert "invalid `[telemetry.t]` target: an otlp destination must be an http:// or https:// " \
           "URL" in r.stderr, r.stderr
    # under private/ and under ~/ are fine
    r = run_box(box, f'\n[telemetry.t]\nkind = "file"\ndestination = "{box.box_dir}/private/t.jsonl"\n'
                     '\n[telemetry.u]\nkind = "file"\ndestination = "~/u.jsonl"\n')
    assert r.returncode == 0, r.stderr
    assert (box.box_dir / "private" / "t.jsonl").stat().st_size > 0
    assert (box.home / "u.jsonl").stat().st_mode & 0o777 == 0o600


def test_a_destination_reaching_the_box_through_a_link_is_refused(tmp_path):
    box = Box(tmp_path)
    assert run_box(box, "").returncode == 0  # the box directory, kept
    link = tmp_path / "into-the-box"
    link.symlink_to(box.box_dir / "run")
    dest = f"{link}/records.jsonl"
    r = run_box(box, f'\n[telemetry.t]\nkind = "file"\ndestination = "{dest}"\n')
    assert r.returncode == 1, r.stderr
    assert f'box: error: invalid `[telemetry.t]` target: "{dest}" is inside the box directory ' \
           f"{box.box_dir} but outside its private tree" in r.stderr, r.stderr
    assert not (box.box_dir / "run" / "records.jsonl").exists()


def test_logs_and_metrics_alone_are_accepted_and_take_no_box_record(tmp_path):
    box = Box(tmp_path)
    out = tmp_path / "agent.jsonl"
    r = run_box(box, f'\n[telemetry.t]\nkind = "file"\ndestination = "{out}"\n'
                     'include = ["logs", "metrics"]\n',
                agent=["/bin/sh", "-c", "cat src/main.rs > /dev/null; cat ~/.ssh/x; true"])
    assert r.returncode == 0, r.stderr
    # the target replaces the default, and no decision or control record reaches it
    assert not (box.box_dir / "private" / "telemetry" / "records.jsonl").exists()
    assert out.read_text() == ""


def test_missing_secret_variable(tmp_path):
    box = Box(tmp_path)
    r = run_box(box, '\n[telemetry.t]\nkind = "otlp"\ndestination = "http://127.0.0.1:9"\n'
                     'secret.ref = "env://NO_SUCH_TOKEN_VAR"\n')
    assert r.returncode == 1
    assert "invalid `[telemetry.t]` target: `secret.ref` env://NO_SUCH_TOKEN_VAR names a variable " \
           "that is not set" in r.stderr, r.stderr


# ---- declared targets and include ----

def test_declared_targets_replace_the_default_and_include_selects(tmp_path):
    box = Box(tmp_path)
    (box.home / "secret.txt").write_text("x\n")
    out = tmp_path / "out"
    out.mkdir()
    extra = "".join(
        f'\n[telemetry.{label}]\nkind = "file"\ndestination = "{out}/{label}.jsonl"\n{inc}'
        for label, inc in [("deny", 'include = ["deny"]\n'), ("permit", 'include = ["permit"]\n'),
                           ("trace", 'include = ["trace", "logs"]\n'), ("all", "")])
    r = run_box(box, extra, agent=["/bin/sh", "-c", f"bash -c 'cat src/main.rs >/dev/null; "
                                                     f"cat {box.home}/secret.txt'; true"])
    assert r.returncode == 0, r.stderr
    assert not (box.box_dir / "private" / "telemetry" / "records.jsonl").exists()
    every = file_entries(out / "all.jsonl")
    verdicts = {}
    for label in ("deny", "permit", "trace"):
        got = items(file_entries(out / f"{label}.jsonl"))
        verdicts[label] = {(scope, it.get("severityText")) for key, scope, it in got
                           if key == "resourceLogs"}
    assert verdicts["deny"] == {("strands-box.policy", "deny")}
    assert verdicts["permit"] == {("strands-box.policy", "permit")}
    assert {s for s, _ in verdicts["trace"]} == {"strands-box.control"}
    # the targets split the records, and together hold what the full one holds
    parts = sum((file_entries(out / f"{l}.jsonl") for l in ("deny", "permit", "trace")), [])
    assert canonical(parts) == canonical(every)
    # a decision's span travels with its record
    for label in ("deny", "permit"):
        got = items(file_entries(out / f"{label}.jsonl"))
        logs = {(it["traceId"], it["spanId"]) for k, _, it in got if k == "resourceLogs"}
        spans = {(it["traceId"], it["spanId"]) for k, _, it in got if k == "resourceSpans"}
        assert logs == spans and logs


# ---- control records ----

def test_control_records_of_a_run(tmp_path):
    box = Box(tmp_path)
    r = run_box(box, "", agent=["/bin/sh", "-c", "exit 3"])
    assert r.returncode == 3
    entries = file_entries(box.box_dir / "private" / "telemetry" / "records.jsonl")
    control = control_records(entries)
    assert [c["strands.box.control.operation"] for c in control] == [
        "box_started", "policy_installed", "box_stopped"]
    assert control[0]["strands.box.control.outcome"] == "ok"
    assert control[0]["strands.box.control.subject"] == "test"
    assert control[1]["strands.box.control.subject"] == "policy.dw"
    assert control[2]["strands.box.control.outcome"] == "ok"
    assert control[2]["strands.box.control.detail"] == "the agent exited with status 3"
    assert "strands.box.control.reason" not in control[2]
    # one trace, one root: box_started's span; the others its children
    spans = [it for k, _, it in items(entries, "strands-box.control") if k == "resourceSpans"]
    assert [s["name"] for s in spans] == ["control box_started", "control policy_installed",
                                          "control box_stopped"]
    assert len({s["traceId"] for s in spans}) == 1
    assert "parentSpanId" not in spans[0]
    assert {s["parentSpanId"] for s in spans[1:]} == {spans[0]["spanId"]}


def test_box_stopped_on_an_early_failure(tmp_path):
    box = Box(tmp_path)
    r = run_box(box, '\n[tool.gone]\ncommand = ["/nonexistent/tool"]\n')
    assert r.returncode == 1
    m = re.search(r"box: error: (.*)\n", r.stderr)
    assert m, r.stderr
    control = control_records(file_entries(box.box_dir / "private" / "telemetry" / "records.jsonl"))
    assert [c["strands.box.control.operation"] for c in control] == [
        "box_started", "policy_installed", "box_stopped"]
    assert control[2]["strands.box.control.outcome"] == "refused"
    assert control[2]["strands.box.control.reason"] == m.group(1)


BAD_POLICY = "permit(principal, action, resource) when { context.input.path like };\n"


def refused_policy_run(box, extra=""):
    """box run with a policy that will not load: (its status, the load error)."""
    box.write_policy(BAD_POLICY)
    box.write_config(agent_command=["/bin/true"], extra=extra)
    r = subprocess.run([str(BOX), "run", "--quiet", "--config", str(box.config)],
                       capture_output=True, text=True, env=box.env(), timeout=120)
    m = re.fullmatch(r"box: error: (policy file \S+ will not load: (.*))\n", r.stderr)
    assert m, r.stderr
    return r.returncode, m.group(1), m.group(2)


def assert_policy_refused(entries, whole, load_error):
    control = control_records(entries)
    assert [c["strands.box.control.operation"] for c in control] == [
        "box_started", "policy_refused", "box_stopped"]
    assert control[1]["strands.box.control.subject"] == "policy.dw"
    assert control[1]["strands.box.control.outcome"] == "refused"
    assert control[1]["strands.box.control.reason"] == load_error
    assert control[2]["strands.box.control.outcome"] == "refused"
    assert control[2]["strands.box.control.reason"] == whole
    spans = [it for k, _, it in items(entries, "strands-box.control") if k == "resourceSpans"]
    assert [s["name"] for s in spans] == ["control box_started", "control policy_refused",
                                          "control box_stopped"]
    assert "parentSpanId" not in spans[0]
    assert {s["parentSpanId"] for s in spans[1:]} == {spans[0]["spanId"]}


def test_policy_refused_reaches_a_declared_target_before_any_box_state(tmp_path):
    box = Box(tmp_path)
    status, whole, load_error = refused_policy_run(
        box, f'\n[telemetry.file]\nkind = "file"\ndestination = "{tmp_path}/refused.jsonl"\n')
    assert status == 1
    assert not box.box_dir.exists()  # the policy is judged before any box state
    assert_policy_refused(file_entries(tmp_path / "refused.jsonl"), whole, load_error)


def test_policy_refused_in_the_default_file_of_a_box_that_exists(tmp_path):
    box = Box(tmp_path)
    assert run_box(box, "").returncode == 0
    records = box.box_dir / "private" / "telemetry" / "records.jsonl"
    first_run = len(records.read_text().splitlines())
    status, whole, load_error = refused_policy_run(box)
    assert status == 1
    entries = file_entries(records)[first_run:]
    assert_policy_refused(entries, whole, load_error)
    # the box's own id, a run of its own
    resource = {a["key"]: a["value"]["stringValue"] for a in entries[0][1]["resource"]["attributes"]}
    assert resource["strands.box.name"] == (box.box_dir / "private" / "box-id").read_text().strip()
    first = file_entries(records)[0][1]["resource"]["attributes"]
    assert {a["key"]: a["value"]["stringValue"] for a in first}["strands.box.run.id"] != \
        resource["strands.box.run.id"]

# ---- OTLP export ----

def otlp_box(tmp_path, url, protocol="http/json"):
    box = Box(tmp_path)
    box.seed_policy()
    box.write_config(extra=f'\n[telemetry.file]\nkind = "file"\ndestination = "{tmp_path}/file.jsonl"\n'
                           f'\n[telemetry.otel]\nkind = "otlp"\ndestination = "{url}"\n'
                           f'protocol = "{protocol}"\n'
                           'secret.ref = "env://OTLP_TEST_TOKEN"\nsecret.header = "X-Token"\n')
    return box


def start_with_token(box):
    env = box.env

    def with_token():
        return {**env(), "OTLP_TEST_TOKEN": "t0ken"}
    box.env = with_token
    return box.start(args=["--quiet"])


@pytest.mark.parametrize("protocol, content_type", [("http/json", "application/json"),
                                                    ("http/protobuf", "application/x-protobuf")])
def test_otlp_receiver_gets_the_file_targets_records(tmp_path, protocol, content_type):
    receiver = Receiver()
    try:
        box = start_with_token(otlp_box(tmp_path, receiver.url, protocol))
        r = box.bash("for i in 1 2 3; do cat src/main.rs > /dev/null; done; cat ~/.ssh/nothing")
        assert r.returncode == 1
        assert box.stop() in (0, 143)
        expected = file_entries(tmp_path / "file.jsonl")
        assert len(items(expected, "strands-box.policy")) >= 8
        # the protocol's messages do not keep an empty list
        expected = [(key, normalized(e)) for key, e in expected]
        assert canonical(receiver.entries()) == canonical(expected)
        # the records of one resource and scope travel as one entry: fewer
        # entries than the file's lines
        assert len(receiver.entries()) < len(expected)
        assert {h.get("X-Token") for _, h, _ in receiver.requests} == {"t0ken"}
        assert {h.get("Content-Type") for _, h, _ in receiver.requests} == {content_type}
    finally:
        receiver.close()


def dropped_of(entries):
    stopped = control_records(entries)[-1]
    assert stopped["strands.box.control.operation"] == "box_stopped"
    m = re.search(r"\[telemetry\.otel\] dropped (\d+) records", stopped.get(
        "strands.box.control.detail", ""))
    return int(m.group(1)) if m else 0


@pytest.mark.parametrize("receiver_kind", ["down", "hanging"])
def test_a_receiver_down_or_hanging_holds_no_decision_and_every_drop_is_counted(
        tmp_path, receiver_kind):
    receiver = Receiver(delay="hold") if receiver_kind == "hanging" else None
    url = receiver.url if receiver else closed_port_url()
    try:
        box = start_with_token(otlp_box(tmp_path, url))
        try:
            r = box.bash("cat src/main.rs > /dev/null")
            assert r.returncode == 0, r.stderr
            if receiver:
                # Decisions are made and answered while an export hangs: the
                # commands end before the exporter gives up on it.  A command
                # that waited for the export would end only after that, so
                # try until one round ends while it is still held (the
                # exporter gives up after a few seconds; a loaded machine may
                # take as long for a round).
                deadline = time.monotonic() + 60
                while True:
                    held = receiver.wait_held()
                    r = box.bash("for i in 1 2 3 4 5; do cat src/main.rs > /dev/null; done")
                    assert r.returncode == 0, r.stderr
                    if receiver.still_held(held):
                        break
                    assert time.monotonic() < deadline, "no round of commands ended while an " \
                        "export was held"
            else:
                r = box.bash("for i in $(seq 50); do cat src/main.rs > /dev/null; done")
                assert r.returncode == 0, r.stderr
        finally:
            box.stop()
        lines = file_entries(tmp_path / "file.jsonl")
        assert len(items(lines, "strands-box.policy")) >= 20
        # every line sent before box_stopped was lost, and each is counted
        assert dropped_of(lines) == len(lines) - 2
    finally:
        if receiver:
            receiver.close()
