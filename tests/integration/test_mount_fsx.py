"""The mount under load: the fsx-style checker (tests/posix/fsx.py) for 30 s
through a stand-alone boxfs mount (bench/boxfs-run, real policy engine and
decisions), and stress-ng's directory, rename and I/O stressors run as a real
box's tool (`box run`, [tool.stress-ng]) over the workspace.  The 10-minute
fsx run is by hand:
    bench/boxfs-run --root DIR -- python3 tests/posix/fsx.py --seconds 600
Needs root and /dev/fuse."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import BUILD

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FSX = os.path.join(ROOT, "tests", "posix", "fsx.py")
RUN = str(BUILD / "bench" / "boxfs-run")

def needs_mount(test):
    return pytest.mark.root_only(reason="boxfs-run mounts in the host's namespaces")(
        pytest.mark.skipif(not os.path.exists("/dev/fuse") or not os.path.exists(RUN),
                           reason="needs /dev/fuse, a build")(test))


def assert_clean_run(r, min_ops):
    assert r.returncode == 0, r.stdout + r.stderr
    out = json.loads(r.stdout)
    assert out["mismatches"] == 0
    assert out["ops"] > min_ops
    # every kind of operation ran
    assert set(out["by_op"]) == {"write", "append", "truncate", "read", "mmap", "rename",
                                 "fsync", "reopen"}


@needs_mount
def test_fsx_30s_through_the_mount(tmp_path):
    d = tmp_path / "w"
    d.mkdir()
    r = subprocess.run([RUN, "--root", str(d), "--", sys.executable, FSX, "--seconds", "30"],
                       capture_output=True, text=True, timeout=120)
    assert_clean_run(r, min_ops=1000)
    assert "decisions (0 denied)" in r.stderr
    assert list(d.iterdir()) == []  # it cleaned up after itself


@needs_mount
def test_fsx_with_nodes_past_the_descriptor_budget(tmp_path):
    """fsx with boxfs-run under a hard limit of 300 descriptors (no
    CAP_SYS_RESOURCE): 100 files made first take the budget of 64 node
    descriptors, so fsx's files and their renames run on nodes that hold
    none, and a file renamed or truncated while open is read through its
    open handles."""
    d = tmp_path / "w"
    d.mkdir()
    fill = 'mkdir fill run && i=0; while [ $i -lt 100 ]; do : > fill/f$i; i=$((i+1)); done; exec "$@"'
    r = subprocess.run(["setpriv", "--bounding-set", "-sys_resource", "--inh-caps", "-sys_resource",
                        "prlimit", "--nofile=300:300", "--", RUN, "--root", str(d), "--",
                        "/bin/sh", "-c", fill, "sh", sys.executable, FSX, "--seconds", "15", "run"],
                       capture_output=True, text=True, timeout=120)
    assert_clean_run(r, min_ops=500)
    past = re.search(r"boxfs-run: (\d+) nodes past the descriptor budget of 64\n", r.stderr)
    assert past and int(past.group(1)) > 50, r.stderr
    assert sorted(p.name for p in d.iterdir()) == ["fill", "run"]
    assert list((d / "run").iterdir()) == []


@needs_mount
def test_fsx_detects_a_wrong_model(tmp_path):
    """The checker can fail: a file changed behind its back is reported."""
    d = tmp_path / "w"
    d.mkdir()
    r = subprocess.run([sys.executable, "-c", f"""
import os, runpy, sys, threading, time
sys.argv = ["fsx", "--seconds", "20", "--files", "1", {str(d)!r}]
def meddle():
    # Keep changing every file behind the checker's back until it notices:
    # one write can land on a range the model is about to overwrite.
    while True:
        time.sleep(0.05)
        for root, _, files in os.walk({str(d)!r}):
            for f in files:
                try:
                    with open(os.path.join(root, f), "r+b") as fh:
                        data = fh.read() or b"\\0"
                        fh.seek(0)
                        fh.write(bytes(b ^ 0x5a for b in data))
                except OSError:
                    pass
threading.Thread(target=meddle, daemon=True).start()
runpy.run_path({FSX!r}, run_name="__main__")
"""], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stdout + r.stderr
    assert json.loads(r.stdout)["mismatches"] == 1


@pytest.mark.skipif(shutil.which("stress-ng") is None, reason="stress-ng not installed")
@needs_mount
def test_stress_ng_as_a_box_tool(box):
    box.start_with_tool("stress-ng", "stress-ng")
    r = box.bash("mkdir -p st && stress-ng --temp-path st --dir 2 --dir-ops 2000 "
                 "--rename 2 --rename-ops 20000 --hdd 1 --hdd-bytes 16m --hdd-ops 2000 "
                 "--timeout 20s --verify --metrics-brief", timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    text = r.stdout + r.stderr
    assert "successful run completed" in text or "passed: " in text, text
    assert "failed: 0" in text or " failed" not in text.replace("failed: 0", ""), text
    # the stressors removed what they made
    assert [p.name for p in (box.workspace / "st").iterdir()] == []
