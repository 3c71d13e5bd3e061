"""The GNU comparisons of issue 31's commands again, in a real box: a
sample of each test_commands_gnu_* list named below runs through the box's
`bash` alias (a Shell worker whose every file is a decision through the
FUSE mount) in a fresh directory of the workspace, and through `bash -c`
with the GNU tools in a native directory made by the same setup; stdout,
stderr, status and the resulting tree must be equal.  The box-shell runs
of those files prove the commands; these prove the mount changes nothing
of what they print or write (gnu_options.md maps each option to its
cases).
"""
import itertools
import subprocess
from pathlib import Path

import pytest

from conftest import ALLOW_ALL, Box
from gnu_compare import SETUP, tree
import test_commands_gnu_archives as archives
import test_commands_gnu_bc as bc
import test_commands_gnu_more as more
import test_commands_gnu_more2 as more2
import test_commands_gnu_more3 as more3
import test_commands_gnu_options as options
import test_commands_gnu_patch as patch

# A worker rooted in the mount cannot reach glibc's gconv modules and
# configuration (nor its locales), so in a box iconv converts only between
# the two charsets glibc knows without them, UTF-8 and ASCII.  These cases
# keep to them.
ICONV_BUILT_IN = [t + "; echo $?" for t in [
    "iconv -f UTF-8 -t ASCII u8", "iconv -c -f UTF-8 -t ASCII u8", "iconv -f XX -t UTF-8 u8",
    "iconv -f UTF-8 -t ASCII nope u8", "iconv -f utf8 -t ascii -c u8 bad", "iconv -f ascii -t utf-8 a.txt | md5sum",
    "iconv -x", "iconv --bogus",
]]

# (case, the setup added to SETUP): every fourth case of the long lists
# (each list still has a dozen or more in the box), all of the short ones
EVERY = 4
CASES = ([(t, archives.EXTRA) for t in archives.TAR[::EVERY]]
         + [(t, archives.EXTRA_PACK) for t in archives.PACK[::EVERY]]
         + patch.CASES[::EVERY]
         + [(t, more.EXTRA) for t in (more.COLUMN + more.TAC + more.CMP + more.TRUNCATE)[::EVERY]]
         + [(t, more2.EXTRA) for t in (more2.TREE + more2.STRINGS + more2.HEXDUMP + more2.JOIN + more2.SPLIT
                                       + more2.SHUF)[::EVERY]]
         + [(t, more3.EXTRA + more3.MD5_BAD) for t in more3.CASES[::EVERY]]
         + [(t, "") for t in more3.MKFIFO + more3.NOHUP]
         + [(t, more3.ICONV_FILES) for t in ICONV_BUILT_IN + more3.FILE[::EVERY]]
         + [(t, bc.EXTRA) for t in bc.CASES[::EVERY]]
         + options.CASES)

_count = itertools.count()


@pytest.fixture(scope="module")
def gnu_box(tmp_path_factory):
    # the box lives as long as its agent: a sleeper that outlasts the
    # module however slow a loaded machine makes it (teardown ends it)
    b = Box(tmp_path_factory.mktemp("gnu-in-box"))
    b.write_policy(ALLOW_ALL)
    b.write_config(agent_command=["/bin/sleep", "86400"])
    b.start()
    yield b
    b.teardown()


def run(argv, cwd: Path, d: Path, env):
    """(stdout, stderr, status, d's tree) of argv run in cwd."""
    p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, stdin=subprocess.DEVNULL, timeout=120)
    return p.stdout, p.stderr.decode(errors="replace"), p.returncode, tree(d)


@pytest.mark.parametrize("text,extra", CASES, ids=[t for t, _ in CASES])
def test_in_box_against_gnu(gnu_box, tmp_path, text, extra):
    n = next(_count)
    inside = gnu_box.workspace / f"c{n}"
    native = tmp_path / "gnu"
    for d in (inside, native):
        d.mkdir()
        subprocess.run(["bash", "-c", SETUP + extra], cwd=d, check=True)
    # the alias starts in the workspace whatever its caller's directory
    box = run([str(gnu_box.box_dir / "bin" / "bash"), "-c", f"cd {inside.name} || exit 99\n{text}"],
              gnu_box.workspace, inside, gnu_box.env())
    gnu = run(["bash", "-c", text], native, native, {"PATH": "/usr/bin:/bin", "HOME": str(native), "LC_ALL": "C"})
    assert box[1] == gnu[1], "stderr"
    assert box[0] == gnu[0], "stdout"
    assert box[2] == gnu[2], "status"
    assert box[3] == gnu[3], "resulting tree"
