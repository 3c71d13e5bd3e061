"""The Shell's awk against gawk (issue 31): each program of awk_cases.py
runs through `box-shell -c` and through `bash -c` with `awk` meaning gawk,
each in its own copy of the same input files; stdout and the exit status
must agree.  Messages on stderr are the Shell's own (gawk's name its
program text differently), so they are not compared."""
import shutil
import subprocess
from pathlib import Path

import pytest

from awk_cases import CASES, INPUTS, KNOWN_GAPS
from conftest import BOX_SHELL

GAWK = shutil.which("gawk")


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    if not BOX_SHELL.exists():
        pytest.skip("box-shell not built")
    if not GAWK:
        pytest.skip("gawk not installed (packaging/debian-packages.txt)")
    root = tmp_path_factory.mktemp("awk")
    out = {}
    for kind in ("box", "gnu"):
        d = root / kind
        d.mkdir()
        subprocess.run(["bash", "-c", INPUTS], cwd=d, check=True)
        out[kind] = d
    return out


def run(kind: str, d: Path, text: str):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(d), "LC_ALL": "C"}
    if kind == "box":
        argv = [str(BOX_SHELL), "-c", text]
    else:
        argv = ["bash", "-c", 'awk() { command gawk "$@"; }\n' + text]
    p = subprocess.run(argv, cwd=d, env=env, capture_output=True, timeout=60)
    return p.stdout, p.returncode, p.stderr


@pytest.mark.parametrize("text", CASES, ids=[f"{i:03d}" for i in range(len(CASES))])
def test_awk_like_gawk(dirs, text):
    box = run("box", dirs["box"], text)
    gnu = run("gnu", dirs["gnu"], text)
    assert box[0].decode(errors="replace") == gnu[0].decode(errors="replace"), (text, box[2], gnu[2])
    assert box[1] == gnu[1], (text, box[2], gnu[2])


@pytest.mark.xfail(strict=True, reason="a NUL inside an awk string ends it")
@pytest.mark.parametrize("text", KNOWN_GAPS, ids=[f"gap{i}" for i in range(len(KNOWN_GAPS))])
def test_awk_known_gap(dirs, text):
    test_awk_like_gawk(dirs, text)


def test_enough_programs():
    assert len(CASES) >= 300
