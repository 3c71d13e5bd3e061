"""A fleet on one host: 50 boxes, each running its
commands, all exporting to one OTLP receiver: every record a box's file
target holds reaches the receiver or is counted as dropped in that box's
box_stopped, and `box ls` lists all 50 while they run.

50 boxes of 100 commands took 44 s on two shared cores; BOX_FLEET_BOXES and
BOX_FLEET_COMMANDS make it smaller or larger."""
import json
import os
import re
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor

from conftest import BOX
from telemetry_util import Receiver, RegisteredBox, canonical, control_records, file_entries

BOXES = int(os.environ.get("BOX_FLEET_BOXES", "50"))
COMMANDS = int(os.environ.get("BOX_FLEET_COMMANDS", "100"))


def ls_names(runtime):
    r = subprocess.run([str(BOX), "ls", "--json"], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "BOX_RUNTIME_DIR": str(runtime)})
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


def start_box(tmp_path, runtime, receiver, n):
    root = tmp_path / f"b{n}"
    root.mkdir()
    b = RegisteredBox(root, runtime, name=f"fleet-{n:02d}")
    b.seed_policy()
    b.write_config(extra=f'\n[telemetry.file]\nkind = "file"\n'
                         f'destination = "{tmp_path}/b{n}.jsonl"\n'
                         f'\n[telemetry.otel]\nkind = "otlp"\ndestination = "{receiver.url}"\n')
    return b.start(args=["--quiet"])


def test_fifty_boxes_export_to_one_receiver_and_ls_lists_them_all(tmp_path):
    runtime = tmp_path / "runtime"
    receiver = Receiver()
    boxes = []
    try:
        with ThreadPoolExecutor(8) as pool:
            boxes = list(pool.map(lambda n: start_box(tmp_path, runtime, receiver, n),
                                  range(BOXES)))
        names = [f"fleet-{n:02d}" for n in range(BOXES)]
        half = threading.Barrier(BOXES + 1)
        listed_midway = []

        def work(b):
            for i in range(COMMANDS):
                if i == COMMANDS // 2:
                    half.wait(timeout=600)  # every box halfway: ls looks now
                r = b.bash("cat src/main.rs > /dev/null; echo $((1 + 1))")
                assert r.returncode == 0 and r.stdout == "2\n", r.stderr

        with ThreadPoolExecutor(BOXES) as pool:
            done = [pool.submit(work, b) for b in boxes]
            half.wait(timeout=600)
            listed_midway = ls_names(runtime)
            for f in done:
                f.result()
        # while every box runs commands, ls lists each of them
        assert sorted(x["name"] for x in listed_midway) == names
        listed = ls_names(runtime)
        assert sorted(x["name"] for x in listed) == names
        assert {x["commands"] for x in listed} == {COMMANDS}
        with ThreadPoolExecutor(8) as pool:
            assert set(pool.map(lambda b: b.stop(), boxes)) == {143}

        received = canonical(receiver.entries())
        expected, dropped = [], 0
        for n in range(BOXES):
            lines = file_entries(tmp_path / f"b{n}.jsonl")
            expected += lines
            detail = control_records(lines)[-1].get("strands.box.control.detail", "")
            m = re.search(r"\[telemetry\.otel\] dropped (\d+) records", detail)
            dropped += int(m.group(1)) if m else 0
        # nothing arrives that no file holds, nothing twice, and whatever did
        # not arrive is counted (a batch the receiver took after the box
        # stopped waiting is counted too, though it arrived)
        assert set(received) <= set(canonical(expected))
        assert len(set(received)) == len(received)
        missing = len(expected) - len(received)
        assert missing <= dropped, (len(received), dropped, len(expected))
        print(f"fleet: {BOXES} boxes x {COMMANDS} commands: {len(expected)} records, "
              f"{len(received)} received, {dropped} counted as dropped")
        # two decisions (cat, echo's shell:exec and the read) per command at least
        assert len(expected) >= BOXES * COMMANDS * 2
    finally:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda b: b.teardown(), boxes))
        receiver.close()
