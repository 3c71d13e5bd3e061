"""Named time zones in a box.

The Shell's worker sees the host's /usr/share/zoneinfo read-only, as a
tool's view does, so `TZ=Europe/Paris date`, printf's %()T and Python's
zoneinfo give what they give on the host (GNU date and Debian's python3
are the oracles), and nothing of the box can change the host's zones.
"""
import os
import subprocess
from pathlib import Path

import pytest

from conftest import module_box

ZONES = Path("/usr/share/zoneinfo")
pytestmark = pytest.mark.skipif(not (ZONES / "Europe" / "Paris").exists(),
                                reason="the host has no tzdata")


running = module_box("running")


def host(argv, tz):
    env = dict(os.environ, TZ=tz)
    return subprocess.run(argv, capture_output=True, text=True, env=env, check=True).stdout


@pytest.mark.parametrize("tz", ["Europe/Paris", "America/New_York", "Asia/Kolkata",
                                "Australia/Lord_Howe", "UTC", "right/UTC"])
@pytest.mark.parametrize("when", ["0", "1719835200", "1704067200"])
def test_date_in_a_named_zone_as_on_the_host(running, tz, when):
    fmt = "+%Y-%m-%d %H:%M:%S %Z %z"
    want = host(["/usr/bin/date", "-d", f"@{when}", fmt], tz)
    got = running.bash(f"TZ={tz} date -d @{when} '{fmt}'")
    assert (got.returncode, got.stdout) == (0, want)


def test_printf_time_in_a_named_zone(running):
    want = host(["/usr/bin/date", "-d", "@1719835200", "+%H:%M %Z"], "Asia/Tokyo")
    got = running.bash("TZ=Asia/Tokyo printf '%(%H:%M %Z)T\\n' 1719835200")
    assert (got.returncode, got.stdout) == (0, want)


def test_python_zoneinfo_as_on_the_host(running):
    src = ("import datetime, zoneinfo; z = zoneinfo.ZoneInfo('America/New_York'); "
           "print(datetime.datetime(2024, 7, 1, 12, tzinfo=z).utcoffset(), "
           "len(zoneinfo.available_timezones()) > 300)")
    want = subprocess.run(["/usr/bin/python3", "-c", src], capture_output=True, text=True,
                          check=True).stdout
    got = running.bash(f'python3 -c "{src}"')
    assert (got.returncode, got.stdout, got.stderr) == (0, want, "")


@pytest.mark.parametrize("text", [
    "echo x > /usr/share/zoneinfo/Europe/Paris",
    "echo x > /usr/share/zoneinfo/new",
    "rm -f /usr/share/zoneinfo/UTC",
    "mv /usr/share/zoneinfo/UTC /usr/share/zoneinfo/UTC2",
    "mkdir /usr/share/zoneinfo/d",
    "touch /usr/share/zoneinfo/UTC",
    "chmod 777 /usr/share/zoneinfo/UTC",
])
def test_the_zones_are_read_only(running, text):
    before = (ZONES / "Europe" / "Paris").read_bytes(), sorted(os.listdir(ZONES))
    got = running.bash(text)
    assert got.returncode != 0
    assert "Read-only file system" in got.stderr
    assert ((ZONES / "Europe" / "Paris").read_bytes(), sorted(os.listdir(ZONES))) == before


@pytest.mark.parametrize("text", ["rm -rf /usr/share/zoneinfo", "rmdir /usr/share/zoneinfo",
                                  "mv /usr/share/zoneinfo /tmp/z", "mv /usr /tmp/u",
                                  "rm -rf /usr"])
def test_the_zones_stay_where_they_are(running, text):
    running.bash(text)
    got = running.bash("TZ=Europe/Paris date -d @0 +%H")
    assert (got.returncode, got.stdout) == (0, "01\n")
    assert (ZONES / "Europe" / "Paris").exists()


# Which TZ the Shell's own commands use, as bash has it: the exported one
# (a prefix assignment exports to the command; a plain assignment does not).
TZ_CASES = [
    'TZ=Asia/Tokyo; printf "%(%H %Z)T\\n" 0; date -d @0 "+%H %Z"',
    'TZ=Asia/Tokyo printf "%(%H %Z)T\\n" 0; printf "%(%H %Z)T\\n" 0',
    'TZ=Asia/Tokyo date -d @0 "+%H %Z"; date -d @0 "+%H %Z"',
    'export TZ=Europe/Paris; printf "%(%H %Z)T\\n" 0; unset TZ; printf "%(%H %Z)T\\n" 0',
    'export TZ=America/New_York; date -u -d @0 "+%H %Z"; date -d @0 "+%H %Z"',
    'export TZ=Asia/Kolkata; ls -l --time-style=+%H:%M /dev/null >/dev/null; date -d @0 +%H:%M',
    'export TZ=Asia/Kolkata; awk "BEGIN { print strftime(\\"%H:%M\\", 0) }"',
    'TZ=UTC-3 printf "%(%H)T\\n" 0; TZ=Nowhere/Else printf "%(%H %Z)T\\n" 0',
]


@pytest.mark.parametrize("text", TZ_CASES)
def test_which_tz_like_bash(running, tmp_path, text):
    bash = "/bin/bash"
    env = {k: v for k, v in os.environ.items() if k != "TZ"}
    want = subprocess.run([bash, "-c", text], capture_output=True, text=True, cwd=tmp_path,
                          env=env)
    got = running.bash(text)
    assert (got.returncode, got.stdout) == (want.returncode, want.stdout)


def test_the_callers_tz_is_not_the_commands(running):
    """spec/runtime.md: a Shell call's environment is HOME, PATH, PWD and
    USER only; the agent's TZ is not among them."""
    env = dict(running.env(), TZ="Asia/Tokyo")
    got = subprocess.run([str(running.box_dir / "bin" / "bash"), "-c",
                          'date -d @0 "+%H %Z"; printf "%(%H %Z)T\\n" 0'],
                         capture_output=True, text=True, cwd=running.workspace, env=env)
    assert (got.returncode, got.stdout) == (0, "00 UTC\n00 UTC\n")


def test_the_local_zone_is_the_hosts(running):
    env = {k: v for k, v in os.environ.items() if k != "TZ"}
    want = subprocess.run(["/usr/bin/date", "-d", "@1719835200", "+%H %Z"], capture_output=True,
                          text=True, env=env, check=True).stdout
    got = running.bash('date -d @1719835200 "+%H %Z"; printf "%(%H %Z)T\\n" 1719835200')
    assert (got.returncode, got.stdout) == (0, want * 2)


@pytest.mark.parametrize("text", [
    "mkdir /usr/lib", "mkdir -p /usr/lib/python3/dist-packages", "touch /usr/pyvenv.cfg",
    "ln -s /tmp /usr/bin", "echo x > /tmp/f; mv /tmp/f /usr/pyvenv.cfg",
    "mkdir -p /tmp/d; mv /tmp/d /usr/local", "touch /usr/share/x", "mkdir /usr/share/python3",
    "python3 -c 'import os; os.mkfifo(\"/usr/p\")'", "chmod 755 /usr; mkdir /usr/lib",
])
def test_nothing_is_made_in_the_box_s_usr(running, text):
    """A box's /usr holds its time zones and nothing else (a python3 takes it
    so: python/boxpython.h, usr_bare): no name can be made there."""
    got = running.bash(text + "; ls -A /usr /usr/share")
    # mkdir -p names the path it was given, with the error of its last step
    assert ("Permission denied" in got.stderr or
            "/usr/lib/python3/dist-packages': No such file or directory" in got.stderr), got
    assert got.stdout == "/usr:\nshare\n\n/usr/share:\nzoneinfo\n", got


def test_a_python_command_asks_nothing_of_usr(running):
    """python3's start looks for no venv or site-packages under the box's
    /usr and reads the zone again only when TZ moved: its one decision is its
    own shell:exec, and it finds Debian's dist-packages as on the host."""
    since = len(running.decisions())
    got = running.bash("python3 -c 'import sys, time; print(sys.path[-1], time.tzname)'")
    want = host(["/usr/bin/python3", "-c", "import sys; print(sys.path[-1])"], "UTC").strip()
    assert (got.returncode, got.stdout) == (0, f"{want} ('UTC', 'UTC')\n"), got
    asked = [(d["strands.box.policy.action"], d["strands.box.policy.resource"])
             for d in running.decisions()[since:]]
    assert [a for a, _ in asked] == ["shell:exec"], asked
    got = running.bash("export TZ=Asia/Tokyo; python3 -c 'import time; print(time.tzname)'")
    assert (got.returncode, got.stdout) == (0, "('JST', 'JST')\n"), got
