"""tar, gzip/gunzip/zcat, xz/unxz, zip/unzip (issue 31) against GNU tar,
gzip, xz-utils and Info-ZIP.

Same method as test_commands_gnu.py (gnu_compare.py): each case runs once
through `box-shell -c` and once through `bash -c` with the real tools
(LC_ALL=C) in two fresh copies of one generated tree; stdout, stderr,
status and the resulting tree (extracted files, modes, links) must be
equal.  The archives both copies start from are made by the real tools in
the setup, with fixed times, so listings agree to the minute.
"""
import pytest

from gnu_compare import assert_same_run, need_shell, run_both

EXTRA = r"""
mkdir -p src/sub src/empty; printf 'one\n' > src/f1; printf 'two\n' > src/sub/f2; seq 1 2000 > src/big
ln -s f1 src/lk; ln src/f1 src/hl; chmod 750 src/sub; chmod 600 src/big; printf 'x\n' > 'src/sp ace'
touch -h -d '2024-01-02 03:04:05' src/* src/sub/f2 src
tar -cf src.tar src; tar -czf src.tgz src; tar -cjf src.tbz src; tar -cJf src.txz src
python3 - <<'PY'
import io, tarfile
t = tarfile.open('evil.tar', 'w')
def reg(name, data=b'data\n'):
    i = tarfile.TarInfo(name); i.size = len(data); i.mtime = 1700000000; t.addfile(i, io.BytesIO(data))
def sym(name, target):
    i = tarfile.TarInfo(name); i.type = tarfile.SYMTYPE; i.linkname = target; i.mtime = 1700000000; t.addfile(i)
reg('../../etc/x'); reg('/abs/y'); reg('a/../../b'); reg('ok')
sym('esc', '/tmp'); reg('esc/pwn', b'x'); sym('up', '../..'); reg('up/z'); sym('in', 'ok')
t.close()
PY
printf 'not an archive\n' > junk.tar; : > empty.tar; head -c 700 src.tgz > cut.tgz
"""

TAR = [
    'tar -tf src.tar', 'tar -tvf src.tar', 'tar -tzvf src.tgz', 'tar tjf src.tbz', 'tar -tJvf src.txz',
    'tar -tf src.tgz', 'tar -tf src.txz', 'tar --list --file=src.tar', 'tar -tvvf src.tar',
    'tar -tf src.tar src/sub nope; echo $?', 'tar -tf src.tar src/f1 src/sub/', 'tar -tf - < src.tar',
    'mkdir o && tar -xf src.tar -C o', 'mkdir o && tar -xzvf src.tgz -C o', 'mkdir o && tar -xjf src.tbz --directory o',
    'mkdir o && tar xJf src.txz -C o --strip-components=1', 'mkdir o && tar -xf src.tar -C o --strip-components 2',
    'mkdir o && tar -xf src.tar -C o --exclude=sub', "mkdir o && tar -xf src.tar -C o --exclude='*f[12]'",
    'tar -xOf src.tar src/f1 src/sub/f2', 'tar -xOvf src.tar src/sub', 'tar -xf src.tar src/sub && find src | sort',
    'tar -xf src.tar nope; echo $?', 'tar -xzf src.tgz', 'tar -xvvf src.tar', 'tar -xf src.tar -C nodir; echo $?',
    'mkdir -p o/src && echo old > o/src/f1 && tar -xkf src.tar -C o; echo $?',
    'mkdir -p o/src && echo old > o/src/f1 && tar -xf src.tar -C o; cat o/src/f1',
    'mkdir -p o/src && ln -s ../../a.txt o/src/f1 && tar -xf src.tar -C o; cat a.txt',
    'mkdir -p o/src/sub && ln -s /etc o/src/sub/f2 && tar -xf src.tar -C o; echo $?',
    'mkdir o && tar -xvf evil.tar -C o; echo $?', 'tar -tvf evil.tar', 'mkdir o && tar -xOf evil.tar ok in',
    'tar -tf junk.tar; echo $?', 'tar -tf empty.tar; echo $?', 'tar -xf nope.tar; echo $?', 'tar -f src.tar; echo $?',
    'tar -cf o.tar; echo $?', 'tar -ctf o.tar src; echo $?', 'tar -xf junk.tar; echo $?',
    'tar -cf o.tar src && tar -tvf o.tar', 'tar -czvf o.tgz src && tar -tzvf o.tgz && rm o.tgz', 'tar -cJf o.txz src && tar -tJvf o.txz && rm o.txz',
    'tar -cjf - src | tar -tjvf -', 'tar -cf - src | tar -xf - -C e2', 'tar -C src -cf o.tar . && tar -tvf o.tar',
    'tar -cvf o.tar src/sub nope src/f1; echo $?', 'tar -cf o.tar --exclude=sub src && tar -tf o.tar',
    'tar -czf o.tgz d && mkdir x && tar -xzf o.tgz -C x && rm o.tgz', 'tar cvf o.tar src/sub', 'tar -cvvf o.tar src/sub src/lk',
    'tar -cf o.tar /nonexistent; echo $?', 'tar -cf - src/sub | tar -tvf -', 'tar -cvf - src/sub > o.tar',
]


@pytest.mark.parametrize("text", TAR)
def test_tar_against_gnu(tmp_path, text):
    need_shell()
    box, gnu = run_both(tmp_path, text, EXTRA)
    assert_same_run(box, gnu)


# zip -X and fixed ZipInfo times: the archives the copies start from are
# the same bytes
EXTRA_PACK = r"""
seq 1 3000 > big; printf 'hi\n' > small; mkdir -p zd/e; seq 1 500 > zd/a; echo hi > zd/e/b; : > zd/empty
chmod 755 zd/a; touch -d '2024-01-02 03:04:05' big small zd/a zd/e/b zd/empty zd/e zd
gzip -c big > big.gz; cat big.gz big.gz > two.gz; (cat big.gz; echo junk) > junk.gz; head -c 100 big.gz > cut.gz
xz -c big > big.xz; cat big.xz big.xz > two.xz; head -c 100 big.xz > cut.xz
zip -X -qr z.zip zd; zip -X -q plain.zip small
python3 - <<'PY'
import zipfile
z = zipfile.ZipFile('evil.zip', 'w')
for name, data in (('../../etc/x', 'data\n'), ('/abs/y', 'y\n'), ('ok', 'ok\n')):
    z.writestr(zipfile.ZipInfo(name, (2024, 1, 2, 3, 4, 6)), data)
z.close()
PY
"""

PACK = [
    # gzip, gunzip, zcat: the same bytes as gzip (the header too) where zlib's
    # deflate makes gzip's; an incompressible input is compared unpacked
    'gzip -c big | md5sum', 'gzip -c < big | md5sum', 'cat big | gzip | md5sum', 'gzip -9c big | md5sum',
    'gzip -1 -c big | md5sum', 'gzip -n -c big | md5sum', 'gzip big', 'gzip -k big small', 'gzip -f big.gz; echo $?; gunzip -c big.gz.gz | md5sum; rm big.gz.gz',
    'gzip big.gz; echo $?', 'gzip -k big; gzip -k big; echo $?', 'gzip -kf big; gzip -kf big; echo $?',
    'gunzip big.gz', 'gunzip -k big.gz', 'gzip -d big.gz', 'gunzip -c two.gz | md5sum', 'zcat big.gz | tail -2',
    'zcat junk.gz | wc -l', 'zcat junk.gz > /dev/null; echo $?', 'zcat cut.gz > /dev/null; echo $?',
    'gunzip small; echo $?', 'gunzip -c small; echo $?', 'gzip -c nope; echo $?', 'gzip zd; echo $?',
    'gzip -t big.gz; echo $?', 'gzip -t small; echo $?', 'gzip -dc < big.gz | md5sum', 'zcat nope.gz big.gz | wc -l',
    'gzip --best -c small | gzip -d', 'gzip -c big small | gunzip | wc -l',
    # xz, unxz: liblzma's bytes are xz's
    'xz -c big | md5sum', 'xz -c < big | md5sum', 'xz -9 -c big | md5sum', 'xz -0 -c small | md5sum', 'xz big',
    'xz -k big', 'unxz big.xz', 'xz -d -k big.xz', 'xz -dc two.xz | md5sum', 'xz -dc cut.xz > /dev/null; echo $?',
    'xz big.xz; echo $?', 'xz -k big; xz -k big; echo $?', 'unxz small; echo $?', 'unxz -c small; echo $?',
    'xz -c nope; echo $?', 'xz zd; echo $?', 'xz -t big.xz; echo $?', 'xz -dc big.gz; echo $?',
    # zip, unzip
    'unzip -l z.zip', 'unzip -l z.zip zd/a nope', 'unzip -l plain', 'unzip z.zip', 'unzip -q z.zip -d out',
    'unzip z.zip -d out', 'unzip z.zip zd/e/b -d out', 'unzip z.zip "zd/e/*" -dout', 'unzip -p z.zip zd/e/b zd/a | md5sum',
    'unzip z.zip nope -d out; echo $?', 'unzip nope.zip; echo $?', 'unzip big; echo $?',
    'unzip -q z.zip -d out; unzip -o z.zip -d out; echo $?', 'unzip -q z.zip -d out; unzip -n z.zip -d out; echo $?',
    'unzip -q z.zip -d out; unzip z.zip -d out; echo $?', 'unzip evil.zip -d out; echo $?',
    'unzip -o -q evil.zip -d out; echo $?',
    'zip -r o.zip zd && unzip -l o.zip && rm o.zip', 'zip -q o.zip big small && unzip -l o && mkdir x && unzip -q o -d x && rm o.zip',
    'zip o.zip zd && unzip -l o.zip && rm o.zip', 'zip -r9 o zd && unzip -l o.zip && rm o.zip',
    'zip -0 o.zip big && unzip -l o.zip && rm o.zip', 'zip o.zip nope big && rm o.zip', 'zip o.zip nope; echo $?',
    'cp z.zip o.zip && zip o.zip small zd/a && unzip -l o.zip && mkdir x && unzip -q o.zip -d x && rm o.zip',
]


@pytest.mark.parametrize("text", PACK)
def test_compress_against_gnu(tmp_path, text):
    need_shell()
    box, gnu = run_both(tmp_path, text, EXTRA_PACK)
    assert_same_run(box, gnu)


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

# gzip replaces no symbolic link
GZIP_LINKS = [
    'gzip lk; echo $?; ls lk*', 'gzip -f lk; echo $?; ls lk*', 'gzip -c lk | gzip -d', 'gunzip lk.gz; echo $?',
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
