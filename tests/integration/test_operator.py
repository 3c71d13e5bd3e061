"""The operator's verbs: `box ls`/`box status` from the runs' live records,
`box stop NAME`, `box logs NAME [-f] [--deny] [--json]`, `box init`,
`box run --quiet`, and `--help` on every verb."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import BOX, Box
from telemetry_util import RegisteredBox, control_records, file_entries

VERBS = [["run"], ["lua"], ["mount"], ["demo"], ["policy"], ["policy", "check"],
         ["policy", "decide"], ["policy", "generate-schema"], ["policy", "replay"], ["ls"],
         ["status"], ["stop"], ["logs"], ["init"]]


@pytest.mark.parametrize("verb", VERBS, ids=[" ".join(v) for v in VERBS])
def test_help_on_every_verb(verb):
    r = subprocess.run([str(BOX), *verb, "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert re.match(r"Usage:\s+box ", r.stdout) and f"box {verb[0]}" in r.stdout, r.stdout


def test_box_help_names_every_verb():
    out = subprocess.run([str(BOX), "--help"], capture_output=True, text=True).stdout
    for verb in ("run --config", "lua --config", "mount --config", "demo", "replay", "init",
                 "ls | status", "stop NAME", "logs NAME"):
        assert verb in out, (verb, out)


def box_cli(runtime, *args, timeout=60, cwd=None, env=None):
    return subprocess.run([str(BOX), *args], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, env={**os.environ, "BOX_RUNTIME_DIR": str(runtime),
                                        **(env or {})})


def ls_json(runtime, *args):
    r = box_cli(runtime, "ls", "--json", *args)
    assert r.returncode == 0, r.stderr
    return [json.loads(l) for l in r.stdout.splitlines()]


@pytest.fixture
def two_boxes(tmp_path):
    runtime = tmp_path / "runtime"
    boxes = []
    for name in ("alpha", "beta"):
        (tmp_path / name).mkdir()
        b = RegisteredBox(tmp_path / name, runtime, name=name)
        b.seed_policy()
        b.write_config()
        boxes.append(b.start(args=["--quiet"]))
    yield runtime, boxes
    for b in boxes:
        b.teardown()


def test_ls_lists_running_boxes_and_stop_stops_one(two_boxes):
    runtime, (alpha, beta) = two_boxes
    assert alpha.bash("cat src/main.rs > /dev/null; cat ~/.ssh/none").returncode == 1
    listed = ls_json(runtime)
    assert [b["name"] for b in listed] == ["alpha", "beta"]
    a = listed[0]
    assert a["pid"] == alpha.proc.pid and a["box_dir"] == str(alpha.box_dir)
    assert a["commands"] == 1 and a["decisions"] >= 3 and a["denials"] == 1, a
    assert listed[1]["commands"] == 0 and listed[1]["decisions"] == 0
    table = box_cli(runtime, "ls").stdout.splitlines()
    assert table[0].split()[:6] == ["NAME", "PID", "UPTIME", "COMMANDS", "DECISIONS", "DENIALS"]
    assert [l.split()[0] for l in table[1:]] == ["alpha", "beta"]
    status = box_cli(runtime, "status", "beta", "--json")
    assert status.returncode == 0 and json.loads(status.stdout)["name"] == "beta"

    r = box_cli(runtime, "stop", "alpha")
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"stopped alpha (pid {alpha.proc.pid})\n"
    assert alpha.wait(30) == 143  # the agent (sleep) ended by SIGTERM
    assert [b["name"] for b in ls_json(runtime)] == ["beta"]
    control = control_records(file_entries(alpha.box_dir / "private" / "telemetry" / "records.jsonl"))
    assert control[-1]["strands.box.control.operation"] == "box_stopped"
    assert control[-1]["strands.box.control.outcome"] == "ok"
    assert control[-1]["strands.box.control.detail"] == "stopped by SIGTERM"

    r = box_cli(runtime, "stop", "alpha")
    assert r.returncode == 1
    assert r.stderr == "box: error: no box named alpha is running on this host\n"


def test_a_killed_runs_record_is_not_listed(tmp_path):
    runtime = tmp_path / "runtime"
    (tmp_path / "b").mkdir()
    b = RegisteredBox(tmp_path / "b", runtime, name="gone")
    b.seed_policy()
    b.write_config()
    b.start(args=["--quiet"])
    assert [x["name"] for x in ls_json(runtime)] == ["gone"]
    b.proc.kill()
    b.proc.wait()
    assert ls_json(runtime) == []


def test_logs(two_boxes):
    runtime, (alpha, _) = two_boxes
    for name in ("none", "later"):
        (alpha.home / name).write_text("secret\n")
    alpha.bash("cat src/main.rs > /dev/null; cat ~/none")
    r = box_cli(runtime, "logs", "alpha")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert [l.split()[:3] for l in lines] == [
        ["permit", "shell:exec", "cat"], ["permit", "fs:read", "~/src/project/src/main.rs"],
        ["permit", "shell:exec", "cat"], ["deny", "fs:read", "~/none"]], lines
    deny = box_cli(runtime, "logs", "alpha", "--deny").stdout.splitlines()
    assert deny == [lines[3]]
    raw = box_cli(runtime, "logs", "alpha", "--json", "--deny").stdout.splitlines()
    assert len(raw) == 1 and json.loads(raw[0])["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0][
        "severityText"] == "deny"
    every = box_cli(runtime, "logs", "alpha", "--json").stdout.splitlines()
    assert every == (alpha.box_dir / "private" / "telemetry" / "records.jsonl").read_text().splitlines()

    follow = subprocess.Popen([str(BOX), "logs", "alpha", "-f", "--deny"], stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "BOX_RUNTIME_DIR": str(runtime)})
    time.sleep(0.5)
    alpha.bash("cat ~/later")
    time.sleep(0.5)
    alpha.stop()
    out, _ = follow.communicate(timeout=30)  # -f ends with the box
    assert [l.split()[2] for l in out.splitlines()] == ["~/none", "~/later"]
    r = box_cli(runtime, "logs", "nobody")
    assert r.returncode == 1 and "no box named nobody is running" in r.stderr


def test_init_writes_a_box_that_runs():
    # short: the box's socket path must fit sun_path
    tmp = Path(tempfile.mkdtemp(prefix="bi-", dir="/tmp"))
    try:
        init_and_run(tmp / "home")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def init_and_run(home):
    project = home / "src" / "my project"
    project.mkdir(parents=True)
    env = {"HOME": str(home), "PATH": os.environ["PATH"]}
    r = subprocess.run([str(BOX), "init"], cwd=project, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    toml = (project / "box.toml").read_text()
    assert 'name = "my-project"' in toml and toml.count("\n# ") > 10
    assert f'box_dir = "{home}/.local/state/box/my-project"' in toml
    policy = (project / "policy.dw").read_text()
    assert 'like "~/src/my project/*"' in policy
    r = subprocess.run([str(BOX), "policy", "check", "policy.dw", "--home", str(home)],
                       cwd=project, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    (project / "notes.txt").write_text("hello\n")
    toml = toml.replace('command = ["/bin/bash", "-l"]',
                        'command = ["/bin/sh", "-c", "bash -c \'cat notes.txt; cat ~/.ssh/x\'"]')
    (project / "box.toml").write_text(toml)
    r = subprocess.run([str(BOX), "run", "--quiet", "--config", "box.toml"], cwd=project,
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 1 and r.stdout == "hello\n", r.stderr
    again = subprocess.run([str(BOX), "init"], cwd=project, capture_output=True, text=True,
                           env=env)
    assert again.returncode == 1 and "box init keeps existing files" in again.stderr


def test_run_quiet_drops_the_startup_disclosure(tmp_path):
    box = Box(tmp_path)
    box.seed_policy()
    box.write_config(agent_command=["/bin/true"])
    loud = subprocess.run([str(BOX), "run", "--config", str(box.config)], capture_output=True,
                          text=True, env=box.env(), timeout=120)
    quiet = subprocess.run([str(BOX), "run", "--quiet", "--config", str(box.config)],
                           capture_output=True, text=True, env=box.env(), timeout=120)
    assert loud.returncode == 0 and quiet.returncode == 0
    assert "with no policy decision over these paths" in loud.stderr
    assert quiet.stderr == "", quiet.stderr
