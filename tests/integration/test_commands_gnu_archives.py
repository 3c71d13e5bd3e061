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
    'tar -xf src.tar nope; echo $?', 'tar -xzf src.tgz', 'tar -xvvf src.tar', 'tar -xf src.tar -C nodir; echo $?', 'tar -xvf src.tar -C nodir; echo $?', 'tar -xzvvf src.tgz -C nodir/d; echo $?',
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
