"""The agent's own telemetry (spec/runtime.md §8.5, §5.6, §2.1): the
OTEL_EXPORTER_OTLP_* environment, `${…}` in `command`, and the loopback
receiver relayed into the sandboxes: routes and answers, the strip, rename
and stamp of every payload (OTLP/JSON and protobuf), `include`, the caps
and the one relay slot."""
import json
import re
import subprocess
import threading
import time

from conftest import BOX, Box
from telemetry_util import Receiver, attrs, file_entries

# A tool that posts what it is given to the box's receiver, as an
# exporter inside the sandbox would, and prints each answer.
POST = r"""
import json, os, sys, threading, time, urllib.request
base = os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"]
direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
out = {}
def post(i, path, ctype, body):
    req = urllib.request.Request(base + path, data=body, method="POST",
                                 headers={"Content-Type": ctype})
    try:
        with direct.open(req, timeout=20) as r:
            out[i] = [r.status, r.read().decode()]
    except urllib.error.HTTPError as e:
        out[i] = [e.code, e.read().decode()]
threads = []
for i, (path, ctype, body, after) in enumerate(json.load(open(sys.argv[1]))):
    if after is None:  # once every request before it is answered
        for t in threads:
            t.join()
    else:
        time.sleep(after)
    t = threading.Thread(target=post, args=(i, path, ctype, bytes.fromhex(body)))
    t.start()
    threads.append(t)
for t in threads:
    t.join()
print(json.dumps([out[i] for i in range(len(threads))]))
"""


def kv(key, value):
    return {"key": key, "value": {"stringValue": value}}


def traces_json(scope="agent.lib"):
    return {"resourceSpans": [{
        "resource": {"attributes": [kv("service.name", "my-agent"), kv("strands.box.name", "forged"),
                                    kv("strands.box.source", "box")]},
        "scopeSpans": [{
            "scope": {"name": scope, "attributes": [kv("strands.box.scope", "x"), kv("ok", "1")]},
            "spans": [{
                "traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "spanId": "00f067aa0ba902b7",
                "name": "llm call", "kind": 3, "startTimeUnixNano": "1", "endTimeUnixNano": "2",
                "attributes": [
                    kv("strands.box.policy.verdict", "permit"), kv("gen_ai.system", "x"),
                    {"key": "nested", "value": {"kvlistValue": {"values": [
                        kv("strands.box.inner", "no"), kv("inner", "yes")]}}}],
                "events": [{"timeUnixNano": "1", "name": "e",
                            "attributes": [kv("strands.box.event", "no"), kv("e", "1")]}],
            }]}]}]}


# ---- protobuf, written by hand from opentelemetry-proto's field numbers ----

def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def field(number, payload):
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def pb_kv(key, value):
    return field(1, key.encode()) + field(2, field(1, value.encode()))


def logs_protobuf():
    record = (field(3, b"INFO") + field(5, field(1, b"hello")) +
              field(6, pb_kv("strands.box.policy.verdict", "deny")) + field(6, pb_kv("a", "b")))
    scope = field(1, b"strands-box.control")
    resource = field(1, pb_kv("strands.box.run.id", "forged")) + field(1, pb_kv("service.name", "s"))
    return field(1, field(1, resource) + field(2, field(1, scope) + field(2, record)))


def box_with_poster(tmp_path, extra_targets=None):
    box = Box(tmp_path)
    box.permit_spawn("/usr/bin/python3")
    (box.workspace / "post.py").write_text(POST)
    targets = extra_targets or ('\n[telemetry.all]\nkind = "file"\n'
                                f'destination = "{tmp_path}/all.jsonl"\n')
    box.write_config(extra='\n[tool.py]\ncommand = ["/usr/bin/python3"]\n'
                     'filesystem.read = ["~/src/project"]\n' + targets)
    return box


def post(box, requests):
    """requests: (path, content type, body bytes, seconds to wait first, or
    None: until the requests before it are answered)."""
    (box.workspace / "req.json").write_text(json.dumps(
        [(p, t, b.hex(), after) for p, t, b, after in requests]))
    r = box.bash("/usr/bin/python3 post.py req.json", timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def agent_entries(path):
    return [(key, e) for key, e in file_entries(path)
            if {"key": "strands.box.source", "value": {"stringValue": "agent"}}
            in e.get("resource", {}).get("attributes", [])]


def test_environment_and_command_expansion(tmp_path):
    box = Box(tmp_path)
    box.seed_policy()
    box.write_config(agent_command=["/bin/sh", "-c",
                                    'echo "$OTEL_EXPORTER_OTLP_ENDPOINT|'
                                    '$OTEL_EXPORTER_OTLP_TRACES_ENDPOINT|'
                                    '$OTEL_EXPORTER_OTLP_PROTOCOL|$0|$1|$2"',
                                    "${OTEL_EXPORTER_OTLP_ENDPOINT}/v1",
                                    "p=${OTEL_EXPORTER_OTLP_PROTOCOL}"])
    r = subprocess.run([str(BOX), "run", "--quiet", "--config", str(box.config), "--",
                        "${OTEL_EXPORTER_OTLP_ENDPOINT}"],
                       capture_output=True, text=True, env=box.env(), timeout=120)
    assert r.returncode == 0, r.stderr
    endpoint, traces, protocol, arg0, arg1, arg2 = r.stdout.strip().split("|")
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", endpoint), r.stdout
    assert traces == endpoint + "/v1/traces"
    assert protocol == "http/protobuf"
    assert arg0 == endpoint + "/v1" and arg1 == "p=http/protobuf"
    assert arg2 == "${OTEL_EXPORTER_OTLP_ENDPOINT}"  # run's own arguments are never expanded


def test_strip_rename_stamp_and_routes(tmp_path):
    box = box_with_poster(tmp_path).start()
    try:
        answers = post(box, [
            ("/v1/traces", "application/json", json.dumps(traces_json("strands-box.policy")).encode(), 0),
            ("/v1/logs", "application/x-protobuf", logs_protobuf(), None),
            ("/v1/other", "application/json", b"{}", None),
            ("/v1/metrics", "application/json", b"not json", None),
        ])
    finally:
        box.stop()
    assert answers == [[200, "{}"], [200, "{}"], [404, "{}"], [200, "{}"]]
    got = agent_entries(tmp_path / "all.jsonl")
    assert [key for key, _ in got] == ["resourceSpans", "resourceLogs"]
    spans, logs = got[0][1], got[1][1]
    # the resource: its own attributes but the box's, and the stamp once
    assert spans["resource"]["attributes"] == [kv("service.name", "my-agent"),
                                               kv("strands.box.source", "agent")]
    scope = spans["scopeSpans"][0]["scope"]
    assert scope == {"name": "agent-claimed:strands-box.policy", "attributes": [kv("ok", "1")]}
    span = spans["scopeSpans"][0]["spans"][0]
    assert attrs(span) == {"gen_ai.system": "x",
                           "nested": {"values": [kv("inner", "yes")]}}
    assert span["events"][0]["attributes"] == [kv("e", "1")]
    assert logs["resource"]["attributes"] == [kv("service.name", "s"),
                                              kv("strands.box.source", "agent")]
    assert logs["scopeLogs"][0]["scope"]["name"] == "agent-claimed:strands-box.control"
    record = logs["scopeLogs"][0]["logRecords"][0]
    assert record["body"] == {"stringValue": "hello"} and attrs(record) == {"a": "b"}


def test_include_and_a_receiver_target_in_protobuf(tmp_path):
    receiver = Receiver()
    try:
        box = box_with_poster(tmp_path, '\n[telemetry.denials]\nkind = "file"\n'
                              f'destination = "{tmp_path}/denials.jsonl"\ninclude = ["deny"]\n'
                              '\n[telemetry.otel]\nkind = "otlp"\n'
                              f'destination = "{receiver.url}"\nprotocol = "http/protobuf"\n')
        box.start()
        try:
            post(box, [("/v1/traces", "application/json", json.dumps(traces_json()).encode(), 0),
                       ("/v1/logs", "application/x-protobuf", logs_protobuf(), None)])
        finally:
            box.stop()
        # without `trace`, no agent span; its logs always pass
        assert [k for k, _ in agent_entries(tmp_path / "denials.jsonl")] == ["resourceLogs"]
        # a receiver gets both, re-encoded in its protocol, as the file would hold them
        sent = [(k, e) for k, e in receiver.entries()
                if kv("strands.box.source", "agent") in e["resource"]["attributes"]]
        assert [k for k, _ in sent] == ["resourceSpans", "resourceLogs"]
        span = sent[0][1]["scopeSpans"][0]["spans"][0]
        assert span["traceId"] == "4bf92f3577b34da6a3ce929d0e0e4736" and span["kind"] == 3
        assert attrs(span)["gen_ai.system"] == "x" and "strands.box.policy.verdict" not in attrs(span)
    finally:
        receiver.close()


# A round of the relay slot: "first" is posted and held by a receiver that
# never answers; once the test says it holds it (the file go-ROUND appears),
# "second" is posted; after first's answer, "last".  Prints whether second
# was answered while first was still pending, which makes the round tell.
SLOT = r"""
import json, os, sys, threading, time, urllib.request
base = os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"]
direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
k = sys.argv[1]
def post(name):
    body = json.dumps({"resourceLogs": [{"resource": {"attributes": [
        {"key": "n", "value": {"stringValue": name}}]}}]}).encode()
    req = urllib.request.Request(base + "/v1/logs", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    with direct.open(req, timeout=60) as r:
        assert r.status == 200 and r.read() == b"{}"
first = threading.Thread(target=post, args=("first-" + k,))
first.start()
while not os.path.exists("go-" + k):
    time.sleep(0.02)
post("second-" + k)
pending = first.is_alive()
first.join()
post("last-" + k)
print("told" if pending else "untold")
"""


def test_caps_and_the_one_relay_slot(tmp_path):
    hanging = Receiver(delay="hold")
    try:
        box = box_with_poster(tmp_path, '\n[telemetry.a]\nkind = "file"\n'
                              f'destination = "{tmp_path}/all.jsonl"\n'
                              '\n[telemetry.hanging]\nkind = "otlp"\n'
                              f'destination = "{hanging.url}"\n')
        (box.workspace / "slot.py").write_text(SLOT)
        box.start()
        many = {"resourceLogs": [{"resource": {}, "scopeLogs": []}] * 65}
        big = json.dumps({"resourceLogs": [{"resource": {"attributes": [
            kv("pad", "x" * (4 * 1024 * 1024))]}}]}).encode()
        try:
            # past the resource cap, and past the byte cap: dropped
            answers = post(box, [("/v1/logs", "application/json", json.dumps(many).encode(), 0),
                                 ("/v1/logs", "application/json", big, None)])
            assert answers == [[200, "{}"]] * 2
            # one payload at a time: second arrives while first holds the
            # slot, so it is dropped; last comes after.  A round tells only
            # if the exporter has not given up on first before second got
            # its answer (a few seconds; a loaded machine may take as long).
            deadline = time.monotonic() + 120
            told = None
            for k in range(1000):
                out = {}
                run = threading.Thread(target=lambda: out.update(
                    r=box.bash(f"/usr/bin/python3 slot.py {k}", timeout=120)))
                run.start()
                hanging.wait_held(lambda body: f"first-{k}" in json.dumps(body))
                (box.workspace / f"go-{k}").write_text("")
                run.join()
                assert out["r"].returncode == 0, out["r"].stderr
                if out["r"].stdout == "told\n":
                    told = k
                    break
                assert time.monotonic() < deadline, "no round told"
        finally:
            box.stop()
        names = [attrs(e["resource"]).get("n") for _, e in agent_entries(tmp_path / "all.jsonl")]
        assert None not in names, names  # neither capped payload
        assert f"first-{told}" in names and f"last-{told}" in names, names
        assert f"second-{told}" not in names, names
    finally:
        hanging.close()


def test_the_agent_reaches_the_receiver_in_its_own_namespace(tmp_path):
    box = Box(tmp_path)
    box.seed_policy()
    # (no `${` in a command: only the receiver's names may follow one)
    body = ('{"resourceLogs":[{"resource":{"attributes":'
            '[{"key":"from","value":{"stringValue":"the agent"}}]}}]}')
    script = (
        "port=$(IFS=:; set -- $OTEL_EXPORTER_OTLP_ENDPOINT; echo $3)\n"
        "exec 3<>/dev/tcp/127.0.0.1/$port\n"
        "printf 'POST /v1/logs HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: application/json\\r\\n"
        f"Content-Length: {len(body)}\\r\\nConnection: close\\r\\n\\r\\n%s' '{body}' >&3\n"
        "IFS= read -r -d '' -u 3 reply; printf %s \"$reply\"\n")
    box.write_config(agent_command=["/bin/bash", "-c", script])
    r = subprocess.run([str(BOX), "run", "--quiet", "--config", str(box.config)],
                       capture_output=True, text=True, env=box.env(), timeout=120)
    assert r.returncode == 0, r.stderr
    # (text mode: the reply's CRLFs read as newlines)
    assert r.stdout.startswith("HTTP/1.1 200 OK\n") and r.stdout.endswith("\n\n{}"), r.stdout
    got = agent_entries(box.box_dir / "private" / "telemetry" / "records.jsonl")
    assert [e["resource"]["attributes"] for _, e in got] == [
        [kv("from", "the agent"), kv("strands.box.source", "agent")]]
