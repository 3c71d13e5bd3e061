"""patch against GNU patch: unified, context and git diffs, -p, -R, -N,
--dry-run, -i, -F, -s, -t; offsets and fuzz reported, .rej and .orig files
written as GNU writes them.

Same method as test_commands_gnu.py (gnu_compare.py): each case runs once
through `box-shell -c` and once through `bash -c` with the GNU tools
(LC_ALL=C) in two fresh copies of one generated tree; stdout, stderr, status
and the resulting tree must be equal.
"""
import pytest

from gnu_compare import assert_same_run, need_shell, run_both

# One file's diffs (u.diff, c.diff) and copies of the file moved (off),
# fuzzed (fz), with a hunk that cannot apply (fl); the headers' dates are
# fixed so the .rej files agree.
ONE = r"""
seq 1 40 > a; cp a orig
(seq 1 3; echo ins1; echo ins2; seq 4 30; echo X; seq 31 40) > b
printf 'a\nb\n' > x; printf 'a\nc' > y; touch -d '2024-01-01' a b x y orig
diff -u a b > u.diff; diff -c a b > c.diff
(echo x; echo y; cat orig) > off; sed 1,3d orig > neg
sed 's/^3$/three/' orig > fz
sed 's/^31$/XXXI/' orig > fl
diff -u x y > nl.diff; cp x z
"""
# Trees A and B and their diff -ru / -rc; W has A/f moved and changed near
# the first hunk, V has A/f changed in the second hunk's context.
TREES = r"""
mkdir -p A/s B/s; seq 1 50 > A/f; seq 1 50 | sed 's/^10$/ten/;s/^40$/forty/' > B/f
printf 'x\ny\nz\n' > A/s/g; printf 'x\nY\nz\nw\n' > B/s/g
printf 'a\nb\nc\nd\ne\nf\ng\nh\n' > A/m; printf 'a\nB\nc\nd\ne\nf\nG\nh\nnl' > B/m
touch -d 2024-01-01 A/* A/s/* B/* B/s/*
diff -ru A B > r.diff; diff -rc A B > rc.diff; diff -ruN A/f B/f | sed 's/^@@.*@@/& fn()/' > fn.diff
cp -r A W; (seq 1 5 | sed 's/^/pre/'; cat A/f) > W/f; sed -i '1,3d' W/f; sed -i 's/^8$/eight/' W/f
cp -r A V; sed -i 's/^37$/XXX/;s/^43$/YYY/' V/f
"""
# A git repository's diff: a file changed, one created, one deleted, an
# empty one created, an executable created, one in a subdirectory.
GIT = r"""
mkdir -p src/sub && seq 1 20 > src/f && seq 1 3 > src/del && printf 'k\n' > src/sub/k
git init -q src; cd src; git add . ; git -c user.name=a -c user.email=a@b commit -qm i
seq 1 21 | sed 's/^5$/five/' > f; echo new > nf; git rm -q del; printf 'k\nl\n' > sub/k
printf '' > empty; printf '#!/bin/sh\n' > run; chmod +x run
git add -A; git diff --cached > ../g.diff; git reset -q --hard; rm -rf .git; cd ..
"""
# 300 hunks over a 3,000-line file, and the file moved by 7 lines.
MANY = r"""
seq 1 3000 > big; awk '{ print ($1 % 10 == 5) ? "changed " $1 : $1 }' big > big2
touch -d 2024-01-01 big big2; diff -u big big2 > many.diff; (seq 1 7; cat big) > moved
"""

ONE_CASES = [
    'patch < u.diff; cat a', 'patch < c.diff; cat a', 'patch off < u.diff; cat off', 'patch neg < u.diff',
    'patch fz < u.diff; cat fz', 'patch -F1 fz < u.diff; echo $?', 'patch -F3 fl < u.diff; cat fl',
    'patch fl < u.diff; cat fl.rej', 'patch fl < c.diff; cat fl.rej', 'patch z < nl.diff; od -c z',
    'patch < u.diff; patch < u.diff; echo $?', 'patch -N < u.diff; patch -N < u.diff; echo $?',
    'patch -R b < u.diff; cat b', 'patch -R a < u.diff; echo $?', 'patch --dry-run < u.diff; cat a',
    'patch --dry-run fl < u.diff; echo $?', 'patch -i c.diff -R', 'patch -s fl < u.diff', 'patch -s < u.diff',
    'patch -p1 < u.diff; echo $?', 'patch -p x < u.diff; echo $?', 'patch -i nope; echo $?',
    'patch -t a < u.diff; patch -t a < u.diff; cat a', 'patch -f a < u.diff; patch -f a < u.diff; echo $?',
    'patch a u.diff', 'patch --input=u.diff --strip=0 --reverse b', 'patch --forward --silent a < u.diff',
    'patch --fuzz=0 fz < u.diff; echo $?', 'cat u.diff | patch off', 'echo garbage | patch; echo $?',
    'patch < /dev/null; echo $?', 'patch a b c; echo $?', 'patch --bogus; echo $?',
]
TREE_CASES = [
    'cd W && patch -p1 < ../r.diff; cat f.rej', 'cd W && patch -p1 < ../rc.diff; cat f.rej',
    'cd V && patch -p1 < ../r.diff; cat f.rej', 'cd V && patch -p1 -F0 < ../rc.diff; cat f.rej',
    'cd A && patch -p1 < ../r.diff && patch -p1 -R < ../rc.diff; diff -r . ../A',
    'cd B && patch -p1 -R --dry-run < ../r.diff', 'cd V && patch -p1 -R < ../r.diff; cat *.rej s/*.rej',
    'cd V && patch -p1 -R < ../rc.diff; cat *.rej s/*.rej', 'cd A && patch f ../fn.diff; cat f',
    'cd V && patch -F0 f ../fn.diff; cat f.rej', 'cat r.diff | (cd A && patch -p1 -s); cat A/m',
    'cd A && patch -p0 < ../r.diff; echo $?', 'cd A && patch < ../r.diff; echo $?',
]
GIT_CASES = [
    'cd src && patch -p1 < ../g.diff; ls -l; cat f nf sub/k', 'cd src && patch -p1 --dry-run < ../g.diff; ls',
    'cd src && patch -p1 < ../g.diff; patch -p1 < ../g.diff', 'cd src && patch -p1 -R < ../g.diff',
    'cd src && patch -p1 -N < ../g.diff; patch -p1 -N < ../g.diff', 'cd src && patch < ../g.diff',
    'cd src && patch -p2 < ../g.diff', 'mkdir t && cd t && patch -p1 < ../g.diff; find . | sort',
    'patch -p0 < g.diff', 'cd src && patch -p1 -F0 < ../g.diff', 'cd src && patch -p1 -i ../g.diff; cat f',
    'cd src && patch -p1 < ../g.diff && patch -p1 -R < ../g.diff; ls',
]
# diff -N's trees: a file only in B (created) and one only in A (deleted),
# the missing side dated the epoch (in UTC and, tz.diff, five hours west),
# and a /dev/null patch creating a file.
NEWDEL = r"""
mkdir -p A/s B/s; seq 1 5 > A/f; seq 1 6 > B/f; printf 'gone\n' > A/old; printf 'new\n' > B/s/new
touch -d 2024-01-01 A/f A/old B/f B/s/new
diff -ruN A B > n.diff; diff -rcN A B > nc.diff; TZ=EST5 diff -ruN A B > tz.diff
printf -- '--- /dev/null\n+++ b/h\n@@ -0,0 +1 @@\n+hh\n' > dn.diff
"""
NEWDEL_CASES = [
    'cp -r A W && cd W && patch -p1 < ../n.diff; find . -type f | sort; cat s/new',
    'cp -r A W && cd W && patch -p1 < ../nc.diff; find . -type f | sort; cat s/new',
    'cp -r A W && cd W && patch -p1 < ../tz.diff; find . -type f | sort',
    'cp -r B W && cd W && patch -p1 -R < ../n.diff; find . -type f | sort; cat old',
    'cp -r A W && cd W && patch -p1 --dry-run < ../n.diff; find . -type f | sort',
    'cp -r A W && echo here > W/s/new && cd W && patch -p1 < ../n.diff; echo $?; cat s/new',
    'cp -r A W && : > W/s/new && cd W && patch -p1 < ../n.diff; echo $?; cat s/new',
    'cp -r A W && cd W && patch -p1 -N < ../n.diff; patch -p1 -N < ../n.diff; echo $?',
    'cp -r A W && cd W && rm old && patch -p1 < ../n.diff; echo $?; find . -type f | sort',
    'mkdir w && : > w/h && cd w && patch -p1 < ../dn.diff; echo $?; cat h',
    'mkdir w && echo x > w/h && cd w && patch -p1 < ../dn.diff; echo $?; cat h',
]
MANY_CASES = [
    'patch big < many.diff; cmp big big2', 'patch moved < many.diff | tail -3', 'patch -R big2 < many.diff; cmp big big2',
]


CASES = ([(t, ONE) for t in ONE_CASES] + [(t, TREES) for t in TREE_CASES] + [(t, GIT) for t in GIT_CASES]
         + [(t, MANY) for t in MANY_CASES] + [(t, NEWDEL) for t in NEWDEL_CASES])


@pytest.mark.parametrize("text,setup", CASES)
def test_against_gnu(tmp_path, text, setup):
    need_shell()
    assert_same_run(*run_both(tmp_path, text, setup))
