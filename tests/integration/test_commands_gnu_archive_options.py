"""gzip -l -r -S -v, unzip -t -j, xz -l (issue 31) against gzip, Info-ZIP's
unzip and xz-utils, by the method of test_commands_gnu_archives.py
(gnu_compare.py): each case in two fresh copies of one generated tree, once
through `box-shell -c` and once through `bash -c` with the real tools;
stdout, stderr, status and the resulting tree must be equal.
"""
import pytest

from gnu_compare import assert_same_run, need_shell, run_both
from test_commands_gnu_archives import EXTRA_PACK


# gzip's -l, -r and -S (and the symbolic links gzip will not replace); the
# archives get fixed times, since -lv shows the file's time to the minute.
# A walk's order is the directory's: outputs of walks over more than one
# file are sorted.
EXTRA_GZIP = EXTRA_PACK + r"""
gzip -c small > small.gz; cat small.gz big.gz > sb.gz; cat big.gz small.gz > bs.gz
cp big.gz ren.gz; mkdir -p dd; cp big.gz dd/ren.gz; : > empty.gz; (cat big.gz; printf '\0\0\0\0') > zpad.gz
(cat big.gz; printf '\0\0x') > zjunk.gz; printf x | gzip -n > x.gz; ln -s small lk; ln -s big.gz lk.gz
mkdir -p r/a/b; seq 100 > r/f1; seq 50 > r/a/f2; echo x > r/a/b/f3; touch -d '2024-01-02 03:04:05' r/f1 r/a/f2 r/a/b/f3; gzip -k r/a/f2
touch -d '2024-03-04 05:06:07' *.gz dd/ren.gz r/a/f2.gz
"""

# -l: sizes of the last member, the file's time (-N: the member's name and
# time), the totals' ratio as GNU reckons it
GZIP_LIST = [
    'gzip -l big.gz', 'gzip -l big.gz small.gz', 'gzip -lv big.gz small.gz', 'gzip --list --verbose x.gz',
    'gzip -l small.gz small; echo $?', 'gzip -l big.gz small', 'gzip -l nope.gz small.gz; echo $?',
    'gzip -l < big.gz', 'cat big.gz | gzip -l', 'gzip -l two.gz', 'gzip -lv bs.gz sb.gz', 'gzip -lq big.gz small.gz',
    'gzip -l ren.gz', 'gzip -lN ren.gz dd/ren.gz', 'gzip -lvN dd/ren.gz', 'gzip -l junk.gz; echo $?',
]

# nothing listed of a file with more after its last member
GZIP_ENDS = [
    'gzip -l empty.gz big.gz; echo $?', 'gzip -l cut.gz; echo $?', 'gzip -l zpad.gz small.gz', 'gzip -l lk.gz',
    'gzip -dc zpad.gz | wc -l; gzip -t zpad.gz; echo $?', 'gzip -dc zjunk.gz | wc -l', 'gzip -l big; echo $?',
]

# -r: what has the suffix passed over without a word, each way
GZIP_WALK = [
    'gzip -r r; echo $?; find r | sort', 'gzip -r r/; echo $?; find r | sort', 'gzip -rk r 2>&1 | sort; find r | sort',
    'gzip -r r; gunzip -r r; echo $?; find r | sort', 'gzip -r r; gzip -lr r | sort', 'gzip -r r; gzip -tr r; echo $?',
    'gzip -rc r | gzip -dc | sort | md5sum', 'gzip -r nope; echo $?', 'gzip r; echo $?', 'gzip -rd r/a/f2.gz; ls r/a',
]

# -S: the suffix made, and taken before gzip's own
GZIP_SUFFIX = [
    'gzip -S .zz small; ls small*', 'gzip -S .zz small; gzip -S .zz small.zz; echo $?', 'gzip -S .zz big.gz; echo $?',
    'gzip -S .zz small; gzip -S .zz -d small.zz; ls small*', 'gzip -dS .zz big.gz; echo $?', 'gzip -S "" small; echo $?',
    'gzip --suffix=.Q small; ls small*; gunzip --suffix .Q small.Q; ls small*', 'gzip -S .zz -k big; gzip -dS .zz -c big.zz | wc -l',
    'gzip -S x/y small; echo $?', 'gzip -S .zz -k big; gzip -S .zz -l big.zz big.gz', 'gzip -S .q -d big; echo $?',
    'gzip -rS _z r; find r | sort; gunzip -rS _z r; find r | sort', 'gzip -S .zz r/f1; gzip -lS .zz r/f1.zz; gunzip -S .zz r/f1.zz; ls r',
]

# -v: each file's ratio on stderr
GZIP_VERBOSE = [
    'gzip -v big', 'gzip -vk big small', 'gzip -vc big > /dev/null', 'gzip -vck big > /dev/null', 'gzip -v < big > /dev/null',
    'gzip -dv big.gz; echo $?', 'gzip -tv big.gz', 'gzip -dvc big.gz > /dev/null', 'gunzip -vf big.gz', 'gzip -dv two.gz',
    'gzip -tv nope.gz big; echo $?', 'gzip -dv < big.gz > /dev/null', 'gzip -tv < big.gz; gzip -tv - < big.gz',
    'gzip -v9n big', 'gzip -vr r 2>&1 | sort', 'gzip -vS .zz small',
]

# gzip replaces no symbolic link, nor xz (but with -k), which says so
GZIP_LINKS = [
    'gzip lk; echo $?; ls lk*', 'gzip -f lk; echo $?; ls lk*', 'gzip -c lk | gzip -d', 'gunzip lk.gz; echo $?',
    'gzip -k lk; echo $?', 'xz lk; echo $?; ls lk*', 'xz -f lk; echo $?; ls lk*', 'xz -k lk; echo $?; ls lk*',
    'ln -s big.xz lx.xz; xz -d lx.xz; echo $?; xz -dk lx.xz; echo $?; xz -t lx.xz; echo $?; ls lx*',
    'xz lk small; echo $?; ls lk* small*',
]


# a member whose recorded CRC is not its data's, and one whose deflate data
# is broken
EXTRA_UNZIP = EXTRA_PACK + r"""
python3 - <<'PY'
import struct, zipfile
d = bytearray(open('z.zip', 'rb').read())
i = zipfile.ZipFile('z.zip').getinfo('zd/a')
crc = bytearray(d)
for where in (i.header_offset + 14, d.rfind(b'PK\x01\x02', 0, d.rfind(b'zd/a')) + 16):
    crc[where:where + 4] = struct.pack('<I', 0x12345678)
open('crc.zip', 'wb').write(crc)
d[i.header_offset + 30 + len(i.filename) + len(i.extra)] = 0x07
open('inflate.zip', 'wb').write(d)
PY
"""

# -t: each member tested, unzip's complaints on standard output
UNZIP_TEST = [
    'unzip -t z.zip', 'unzip -tq z.zip', 'unzip -t crc.zip; echo $?', 'unzip -tq crc.zip', 'unzip -tqq crc.zip; echo $?',
    'unzip -t inflate.zip; echo $?', 'unzip -tq inflate.zip', 'unzip -t z.zip zd/a', 'unzip -t z.zip zd/a zd/e/b',
    'unzip -t z.zip nope; echo $?', 'unzip -t z.zip zd/a nope; echo $?', 'unzip -t crc.zip zd/a nope; echo $?',
    'unzip -t z.zip "zd/*" zd/a; echo $?', 'unzip -t nope.zip; echo $?', 'unzip -t small; echo $?', 'unzip -tl z.zip',
]

# the same troubles met extracting; -j: the members' last components
UNZIP_JUNK = [
    'unzip -t plain', 'unzip crc.zip -d o; echo $?', 'unzip -q crc.zip -d o; echo $?', 'unzip inflate.zip -d o; echo $?',
    'unzip -p crc.zip zd/a | wc -c', 'unzip -q z.zip zd/a nope -d o; echo $?', 'unzip -q crc.zip zd/a nope -d o; echo $?',
    'unzip -j z.zip', 'unzip -j z.zip -d out', 'unzip -jo z.zip zd/e/b', 'unzip -jq z.zip -d o; ls o', 'unzip -tj z.zip zd/a',
    'unzip -j z.zip zd/a zd/a; echo $?', 'unzip -jl z.zip', 'unzip -j evil.zip -d out; echo $?', 'unzip -qj z.zip; unzip -j z.zip; echo $?',
]


# xz -l: the index read from the file's end (several streams, checks, the
# multithreaded format, padding), the totals of more than one file
EXTRA_XZ = EXTRA_PACK + r"""
: > e; : > empty; touch -d '2024-01-02 03:04:05' e; xz -k small e; xz -T2 -c big > mt.xz
xz --check=sha256 -c small > s256.xz; xz --check=none -c small > none.xz; xz -C crc32 -c small > c32.xz
seq 1 200000 | xz > huge.xz; (cat big.xz; printf '\0\0\0\0') > pad.xz; cat small.xz s256.xz > mixed.xz
"""

XZ_LIST = [
    'xz -l big.xz', 'xz -l big.xz small.xz e.xz', 'xz -l two.xz', 'xz -l cut.xz; echo $?', 'xz -l big; echo $?',
    'xz -l nope.xz big.xz; echo $?', 'xz -l < big.xz; echo $?', 'xz -l mt.xz s256.xz none.xz c32.xz', 'xz -lq big.xz',
    'unxz -l big.xz', 'xz -l -- -; echo $?', 'xz -l big.xz -; echo $?', 'xz -l huge.xz', 'xz -l empty; echo $?',
    'xz -l big.xz big.xz', 'xz -lc big.xz', 'xz -lt big.xz', 'xz -tl big.xz', 'xz -l e.xz e.xz', 'xz -l pad.xz mixed.xz',
    'xz --list two.xz big.xz',
]


# each option case with the tree its tool's cases start from
OPTIONS = ([("gzip", t) for t in GZIP_LIST + GZIP_ENDS + GZIP_WALK + GZIP_SUFFIX + GZIP_VERBOSE + GZIP_LINKS]
           + [("unzip", t) for t in UNZIP_TEST + UNZIP_JUNK] + [("xz", t) for t in XZ_LIST])
OPTION_TREES = {"gzip": EXTRA_GZIP, "unzip": EXTRA_UNZIP, "xz": EXTRA_XZ}


@pytest.mark.parametrize("tool,text", OPTIONS)
def test_options_against_gnu(tmp_path, tool, text):
    need_shell()
    box, gnu = run_both(tmp_path, text, OPTION_TREES[tool])
    assert_same_run(box, gnu)
