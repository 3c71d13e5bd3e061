"""The options of issue 31's list that the other test_commands_gnu_* files
leave out or take only in one spelling: gzip's levels -2 to -8, zcat -f
and gunzip -f, xz's levels and -f, tar's long options, patch's options
together and -o (gnu_options.md maps every option to its cases).

Same method as test_commands_gnu.py (gnu_compare.py): each case runs once
through `box-shell -c` and once through `bash -c` with the GNU tools
(LC_ALL=C) in two fresh copies of one generated tree; stdout, stderr,
status and the resulting tree must be equal.
"""
import pytest

from gnu_compare import assert_same_run, need_shell, run_both
from test_commands_gnu_archives import EXTRA as TAR_TREE, EXTRA_PACK
from test_commands_gnu_patch import ONE

# gzip and xz at every level, then one case a line, each followed by its
# status: -f passing what is not compressed through, unzip's -q and -qq,
# zip to standard output ("-", its lines then on stderr), broken data ending
# gzip's run (a wrong format does not), xz -T's multithreaded format (-T1
# the plain one), what is shorter than xz's six-byte magic
GZIP = [t + '; echo $?' for t in [f'gzip -{n} -c big | md5sum' for n in range(1, 10)] + [
    f'xz -{n} -c big | md5sum' for n in range(0, 10)] + r"""
zcat -f small
zcat -f big.gz small | wc -l
gunzip -f small
gunzip -cf small
gzip -d -f big.gz; ls big*
touch big.gz; gzip -f big; ls big*
gzip big; echo x > big; gunzip -f big.gz; wc -l big
gzip -dk big.gz; ls big*
gzip -cd big.gz | wc -l
gzip --stdout --best small | gzip --decompress
gzip --fast --keep big; ls big*
gzip --force --quiet small; ls small*
zcat -c big.gz | wc -l
gunzip -k -c big.gz | wc -l
zcat small
gzip -10 -c small
gzip -0 -c small
gzip -c -- -x
xz -f big; ls big*
unxz -f big.xz; ls big*
xz -d -f small
xz -k -f big; xz -k -f big; ls big*
unxz -k big.xz; ls big*
unxz -c big.xz | wc -l
xz --keep --stdout small | xz --decompress
xz -dc big.xz | wc -l
xz -c -d -k two.xz | wc -l
xz -1e -c small | xz -d
unzip -q -o z.zip -d out; ls -R out
unzip -qq z.zip -d out; echo x
unzip -l -q z.zip
zip -q -r o.zip zd; unzip -l o.zip | tail -1; rm o.zip
zip -r - zd > o.zip; unzip -l o.zip; rm o.zip
zip -r - zd 2>err > o.zip; cat err; rm o.zip err
zip - nope
zip -q - zd/a > o.zip; mkdir x; cd x; unzip -q ../o.zip; md5sum zd/a; cd ..; rm -rf x o.zip
unzip -qq -l z.zip
unzip -lqq z.zip zd/a
unzip -l z.zip nope
unzip -l -q z.zip zd/a nope
unzip -qq z.zip -d out
unzip -q nope.zip
(cat big.gz; echo junk) | zcat -f | tail -2
(cat big.gz; printf "\037") | zcat -f | od -c | tail -2
(cat big.gz; echo junk) | gzip -tf
gzip -tf small
xz -tf small
: | xz -dcf
: | zcat -f
xz -dcf small
gunzip -f junk.gz; ls junk*
printf "\037\213" | zcat -f
zcat -f < small
gzip -x
zcat --bogus
xz -x
unxz --bogus
xz -1e -c big | md5sum
xz --extreme -c -3 small | xz -d
xz -e -k big; ls big*
zcat cut.gz big.gz | wc -l; echo ${PIPESTATUS[0]}
zcat big.gz cut.gz big.gz | wc -l
zcat *.gz | wc -l
cp cut.gz c2.gz; cp big.gz b2.gz; gunzip c2.gz b2.gz; ls c2* b2*
: > e.gz; zcat e.gz big.gz | wc -l
printf x | zcat
printf xy | zcat
: | gzip -d
zcat small big.gz | wc -l
gzip -t cut.gz big.gz
xz -dc cut.xz big.xz | wc -l
xz -T0 -c big | md5sum
xz -T2 -c big | md5sum
xz -T1 -c big | md5sum
xz --threads=0 -9 -c big | md5sum
xz -T0 -k big; xz -dc big.xz | md5sum
xz -T0 -c small | xz -dc
xz -T x -c small
xz -T -1 -c small
xz -T 99999 -c small
xz -dc -T0 big.xz | wc -l
xz -T0 -e -c small | md5sum
xz -dc < /dev/null
printf "\375" | xz -dc
printf "\3757zXZ" | xz -dc
printf "\3757zXZ\0" | xz -dc
: > e.xz; xz -d e.xz; ls e*
xz -t < /dev/null
""".strip().split("\n")]

TAR = [t + '; echo $?' for t in [
    'tar --list --gzip --file=src.tgz', 'tar --list --bzip2 --verbose --file src.tbz', 'tar --list --xz -f src.txz',
    'mkdir o && tar --extract --file=src.tgz --gzip --directory=o --strip-components=1 && find o | sort',
    'tar --extract --to-stdout --file=src.tgz src/f1', 'tar -xzOf src.tgz src/sub/f2', 'tar -xJOf src.txz src/f1',
    'tar -xjOf src.tbz src/f1', 'tar --create --gzip --file=o.tgz --exclude=big src && tar -tzf o.tgz; rm o.tgz',
    'tar --create --xz --verbose --file=o.txz src/sub && tar -tJf o.txz; rm o.txz',
    'tar --create --bzip2 -f o.tbz src/f1 && tar -tjvf o.tbz; rm o.tbz',
    'tar -cvzf o.tgz -C src sub && tar -tzf o.tgz; rm o.tgz', 'tar -Q', 'tar --bogus',
    'mkdir o && tar -xvzf src.tgz -C o --exclude="*big" --strip-components=1 && find o | sort',
    'mkdir o && tar -xf src.tgz -C o; find o | sort', 'tar -tf src.tbz', 'tar -tvf src.txz',
    'mkdir o && tar -x -v -z -f src.tgz -C o src/sub', 'tar -xzf src.tgz --strip-components=5; ls',
    'mkdir -p o/src/sub && tar -xf src.tar -C o && ls -ld o/src/sub | cut -c1-10',
    # member operands as patterns under --wildcards ('*' crosses '/'), GNU's warning without it
    'tar -tf src.tar --wildcards "src/*2"', 'tar -tf src.tar --wildcards "*/sub"', 'tar -tf src.tar --wildcards "sub*"',
    'tar -tf src.tar --wildcards "src/s?b/"', 'tar -tf src.tar "src/*2"', 'tar -tf src.tar --no-wildcards "src/*"',
    'tar -tf src.tar --wildcards "[s]rc/sub/f2" "x*"', 'tar -tf src.tar --wildcards "src*" "*f2"',
    'tar -xzf src.tgz --wildcards "*/f?" && find src | sort', 'tar -tf src.tar src src/sub',
]]

PATCH = [t + '; echo $?' for t in [
    'patch -i u.diff -p0 --dry-run -R', 'patch -R -i u.diff; patch -R -N -i u.diff b', 'patch -N -i c.diff; cat a',
    'patch --dry-run -i c.diff off', 'patch --dry-run -N a < u.diff', 'patch -i u.diff fl; ls; cat fl.rej',
    'patch -R --dry-run b c.diff', 'patch -s -N -i u.diff; patch -s -N -i u.diff', 'patch -p0 off u.diff',
    'patch --reverse --input=c.diff b', 'patch --dry-run --forward --input=u.diff a',
    # -o: the result elsewhere, a new file private, an old one keeping its mode, rejects beside it
    'patch -p0 -i u.diff -o out; cat out', 'patch -o - -i u.diff', 'patch --output=o2 a u.diff; cat o2 a | md5sum',
    'patch -o o1 -i u.diff; ls -l o1 | cut -c1-10', 'patch -o - -i u.diff 2>&1 >/dev/null | cat',
    'patch -o o3 fl u.diff; cat o3.rej', 'patch -R -o o6 b u.diff; cmp o6 a', 'patch -s -o o4 -i u.diff',
    'touch o7; chmod 644 o7; patch -o o7 a u.diff; ls -l o7 | cut -c1-10', 'patch -o o5 off u.diff',
    'patch -o - fl u.diff 2>&1; cat ./-.rej', 'patch -N -o o9 b u.diff', 'patch --dry-run -o o10 fl u.diff',
    'patch -N -o - b u.diff',
]]

# usage errors name the option as the tool does
USAGE = [t + '; echo $?' for t in ['iconv --bogus', 'iconv --list --bogus', 'iconv --to-code=ASCII --frobnicate a.txt']]

CASES = [(t, "") for t in USAGE] + [(t, EXTRA_PACK) for t in GZIP] + [(t, TAR_TREE) for t in TAR] + [(t, ONE) for t in PATCH]


@pytest.mark.parametrize("text,extra", CASES, ids=[t for t, _ in CASES])
def test_against_gnu(tmp_path, text, extra):
    need_shell()
    assert_same_run(*run_both(tmp_path, text, extra))
