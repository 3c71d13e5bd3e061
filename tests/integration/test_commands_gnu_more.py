"""column (util-linux) against the host's, tac, cmp and truncate against
GNU's.

Same method as test_commands_gnu.py (gnu_compare.py): each case runs once
through `box-shell -c` and once through `bash -c` with the host's tools
(LC_ALL=C) in two fresh copies of one generated tree; stdout, stderr,
status and the resulting tree must be equal.
"""
import pytest

from gnu_compare import assert_same_run, need_shell, run_both

EXTRA = r"""
printf 'a\nb\nc\n' > t1; printf 'a\nb' > t2; printf 'x::y::z' > t3; printf '' > t0; mkdir dd
printf 'abcdef\nxyz\n' > a; printf 'abXdef\nxyZ\n' > b; printf 'abc' > p; printf '' > e; cp a a2
seq 1 2000 > big; seq 1 2000 | sed 's/^1500$/X/' > big2; printf 'abc\n' > q1; printf 'abc\nd' > q2
printf 'a\nb\n' > r1; printf 'a\nc\n' > r2; printf '\n\001\200\377' > n1; printf 'x\002\201\376' > n2
printf 'a b c\nlonger x\n\nfoo  bar   baz qux\n' > ct; printf 'a:b::c\n:x:y\nlong:z\n' > cs; printf 'abcdefgh\nx\n' > c8
"""

COLUMN = [
    'column -t ct', 'column -t -s: cs', 'column -t -s: -o "|" cs', 'column -s: cs', 'seq 1 30 | column',
    'column nope; echo $?', 'printf "a\\tb c\\n" | column -t', 'printf "a,b;c\\n" | column -t -s ",;"',
    'printf "ab\\n\\ncd\\n" | column', 'seq 1 5 | column -c 20', 'printf "%085d\\n" 0 | column',
    'printf "a b\\n" | column -t -o " | "', 'printf "  lead  x\\n" | column -t', 'seq 100 130 | column -x',
    'printf "a b\\n" | column -z; echo $?', 'column c8', 'column ct cs', 'column -t ct cs', 'seq 1 100 | column -c 60',
    'seq 1 7 | column -x -c 20', 'printf "" | column -t', 'sort -k2 ct | uniq -c | column -t',
    'printf "a b\\n\\n  \\nc d\\n" | column -t', 'printf "a:b\\n\\n:\\n" | column -t -s:', 'column -c x ct; echo $?',
    'column --table --separator=: --output-separator=- cs', 'column -t nope ct; echo $?', 'column -t ct nope; echo $?',
    'column -t nope nope2; echo $?', 'column ct nope; echo $?', 'column nope nope2 nope3; echo $?',
]

TAC = [
    'tac t1', 'tac t2', 'tac t1 t2', 'tac -s :: t3', 'tac -b t1', 'tac -b -s :: t3', 'tac --separator=: t3',
    'tac -s "" t1; echo $?', 'tac nope; echo $?', 'tac t1 nope t2; echo $?', 'seq 1 5 | tac', 'tac t0', 'tac < t2',
    'tac -x; echo $?', 'printf "\\n\\n" | tac', 'tac -b t2', 'tac - t1 < t2', 'printf "a\\0b\\0" | tac -s "" | od -c',
    'tac dd; echo $?', 'tac "sp ace" dd; echo $?', 'tac --before --separator=b t1',
]

CMP = [t + '; echo $?' for t in [
    'cmp a b', 'cmp a a2', 'cmp -s a b', 'cmp -l a b', 'cmp -b a b', 'cmp a p', 'cmp p a', 'cmp a e', 'cmp e a',
    'cmp -l a p', 'cmp nope a', 'cmp a < /dev/null', 'cmp -n 2 a b', 'cmp -i 3 a b', 'cmp -i 1:2 a b', 'cmp big big2',
    'cmp -l big big2 > out; head -3 out; wc -l < out', 'cmp -lb a b', 'cmp - b < a', 'cmp a b 2 3', 'cmp --verbose a b', 'cmp -s a nope',
    'cmp q1 q2', 'cmp -b r1 r2', 'cmp -lb n1 n2', 'cmp -b n1 n2', 'cmp -n 2k big big2', 'cmp -n x a b', 'cmp -i x a b',
    'cmp dd a', 'cmp -l -s a b', 'cmp a b -', 'cmp', 'cmp a b 1 2 3', 'cmp -n 3 a p', 'cmp -n 4 a p',
    'cmp --bytes=10 --print-bytes a b', 'cmp --ignore-initial=2 p a', 'cmp a p 0 0', 'cmp --silent p a',
]]


TRUNCATE = [t + '; echo $?' for t in [
    'truncate -s 5 a; wc -c a', 'truncate -s +3 a; wc -c a', 'truncate -s -3 a; wc -c a', 'truncate -s 1K new; wc -c new',
    'truncate -c -s 5 nf; ls nf', 'truncate a', 'truncate -s 5', 'truncate -s x a', 'truncate -s 5 dd',
    'truncate -s 5 nodir/x', 'truncate -r big a; wc -c a', 'truncate -s %4 p; wc -c p', 'truncate -s /4 big; wc -c big',
    'truncate -s "<5" a; wc -c a', 'truncate -s ">50" a; wc -c a', 'truncate -r nope a', 'truncate -s 0 a big; wc -c a big',
    'truncate -s 10 a new2 dd new3; ls', 'truncate --size=2 --no-create a nf; cat a', 'truncate -s -100 p; wc -c p',
    'truncate -r p -s +2 a; wc -c a', 'truncate -s /0 a', 'truncate -s 1M a; wc -c a', 'truncate -s 5MB a; wc -c a',
]]


@pytest.mark.parametrize("text", COLUMN + TAC + CMP + TRUNCATE)
def test_against_gnu(tmp_path, text):
    need_shell()
    assert_same_run(*run_both(tmp_path, text, EXTRA))
