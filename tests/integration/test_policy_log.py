"""The decision log of a real box (spec/runtime.md §8.1-§8.2): per decision one
OTLP/JSON log record and one span, sharing trace and span ids, each line one
complete export request."""
import json


def test_each_decision_is_a_record_and_a_span(box):
    box.write_config()
    box.seed_policy()
    box.start()
    r = box.bash("echo hi; cat src/main.rs > /dev/null; rm -f nothing")
    assert r.stdout == "hi\n"
    box.stop()
    lines = (box.box_dir / "private" / "telemetry" / "records.jsonl").read_text().splitlines()
    recs = [json.loads(l) for l in lines]
    for rec in recs:
        assert len(rec) == 1 and next(iter(rec)) in ("resourceLogs", "resourceSpans", "resourceMetrics"), rec
    logs = [r for r in recs if "resourceLogs" in r
            and r["resourceLogs"][0]["scopeLogs"][0]["scope"]["name"] == "strands-box.policy"]
    spans = {}
    for r in recs:
        for rs in r.get("resourceSpans", []):
            for ss in rs["scopeSpans"]:
                if ss["scope"]["name"] != "strands-box.policy":
                    continue
                for sp in ss["spans"]:
                    spans[(sp["traceId"], sp["spanId"])] = (rs["resource"], sp)
    actions = []
    for r in logs:
        rl = r["resourceLogs"][0]
        lr = rl["scopeLogs"][0]["logRecords"][0]
        assert len(lr["traceId"]) == 32 and len(lr["spanId"]) == 16
        resource, sp = spans.pop((lr["traceId"], lr["spanId"]))
        attrs = {a["key"]: a["value"] for a in lr["attributes"]}
        action = attrs["strands.box.policy.action"]["stringValue"]
        actions.append((attrs["strands.box.policy.verdict"]["stringValue"], action,
                        attrs["strands.box.policy.resource"]["stringValue"]))
        assert sp["name"] == f"policy {action}"
        assert sp["kind"] == 1  # INTERNAL
        assert sp["startTimeUnixNano"] == sp["endTimeUnixNano"] == lr["timeUnixNano"]
        assert sp["attributes"] == lr["attributes"]
        assert resource == rl["resource"]
    assert spans == {}  # no span without its record
    assert ("permit", "shell:exec", "echo") in actions
    assert ("permit", "fs:read", "~/src/project/src/main.rs") in actions
    # the shared reader skips span lines
    assert [(d["strands.box.policy.verdict"], d["strands.box.policy.action"], d["strands.box.policy.resource"])
            for d in box.decisions()] == actions
