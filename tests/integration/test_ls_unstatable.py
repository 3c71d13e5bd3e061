"""ls -l of entries it cannot stat (a directory it may read but not search):
each prints as GNU ls prints it, the type from the listing and "?" for every
field it could not read, the widths shared with the other entries, after a
"cannot access" message; status 1.  Run as uid 65534 (root reads anyway),
through `box-shell -c` and through GNU ls, LC_ALL=C."""
import os
import shutil
import subprocess
import tempfile

import pytest
from pathlib import Path

from conftest import BOX_SHELL

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture
def unsearchable():
    # under /tmp itself: pytest's own tmp_path sits in a 0700 directory
    top = Path(tempfile.mkdtemp(prefix="ls-unstatable-", dir="/tmp"))
    os.chmod(top, 0o755)
    d = top / "d"
    d.mkdir()
    (d / "file1").write_text("x")
    (d / "f2").write_text("yy")
    (d / "sub").mkdir()
    os.symlink("file1", d / "lnk")
    os.chmod(d, 0o644)
    yield d
    os.chmod(d, 0o755)
    shutil.rmtree(top)


@pytest.mark.parametrize("opts", ["-l", "-li", "-lg", "-ln", "-la", "-lh", "-lo", "-lG"])
def test_unstatable_entries_as_gnu(unsearchable, opts):
    env = dict(os.environ, LC_ALL="C", TZ="UTC")
    gnu = subprocess.run(NOBODY + ["ls", opts, str(unsearchable)], capture_output=True, text=True, env=env)
    ours = subprocess.run(NOBODY + [str(BOX_SHELL), "-c", f"ls {opts} {unsearchable}"],
                          capture_output=True, text=True, env=env)
    assert "?????????" in gnu.stdout  # the case is what it claims to be
    assert ours.stdout == gnu.stdout
    if opts == "-la":
        # GNU stats "." and ".." where the directory lists them, the Shell
        # first: the same messages, in another order
        assert sorted(ours.stderr.splitlines()) == sorted(gnu.stderr.splitlines())
    else:
        assert ours.stderr == gnu.stderr
    assert ours.returncode == gnu.returncode == 1
