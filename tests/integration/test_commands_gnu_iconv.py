"""iconv's common encodings (issue 31): Latin-1, Windows-1252, UTF-16 and
UTF-32 in their byte orders, UCS-2/UCS-4, ASCII//TRANSLIT, //IGNORE and -c,
converted by the command itself, against glibc's iconv.  Each case runs
through `box-shell -c` and `bash -c` in two copies of one tree (the method
of gnu_compare.py), and again in a real box, whose root holds none of
glibc's gconv modules: the results there must be the host's too.
"""
import pytest

from conftest import module_box
from gnu_compare import assert_same_run, need_shell, run_both
import test_commands_gnu_in_box as in_box

FILES = r"""
printf 'h\303\251llo \342\202\254\n' > u8; printf 'caf\351 na\357ve\n' > l1; printf '\223quoted\224 \200 \205\n' > w
printf 'ab\303' > cut8; printf 'a\377b\n' > bad8; printf '\360\237\230\200 \355\240\200\n' > sur
printf '\342\200\234q\342\200\235 \342\200\224 \342\200\246 \302\253\302\273 \302\251\302\256\342\204\242 \303\237 \302\275 \303\251 \302\267 \342\206\222 \357\254\201\n' > typo
printf 'x\360\237\230\200y\n' > emoji; printf '\201' > w81; printf 'a\0b' > odd16
"""

# each case with its status; binary output through od
CASES = [t + "; echo $?" for t in [
    'iconv -f utf-8 -t latin1 u8 | od -c', 'iconv -f UTF-8 -t ISO-8859-1 u8', 'iconv -c -f utf-8 -t latin1 u8 | od -c',
    'iconv -f latin1 -t utf-8 l1', 'iconv -f ISO8859-1 -t UTF-8 l1 | iconv -f utf8 -t latin1 | cmp - l1',
    'iconv -f cp1252 -t utf-8 w', 'iconv -f WINDOWS-1252 -t UTF-16 w | od -An -tx1', 'iconv -f utf-8 -t cp1252 typo | od -c',
    'iconv -f utf-8 -t cp1252//TRANSLIT typo | od -c', 'iconv -f cp1252 -t utf-8 w81', 'iconv -f UTF8 -t Latin1 u8 | od -c',
    'for t in UTF-16 UTF-16LE UTF-16BE UTF-32 UTF-32LE UTF-32BE UCS-2 UCS-4; do iconv -f utf-8 -t $t u8 | od -An -tx1; done',
    'for t in UTF-16 UTF-16LE UTF-16BE UTF-32 UTF-32LE UTF-32BE UCS-2 UCS-4; do iconv -f utf-8 -t $t u8 | iconv -f $t -t utf-8; done',
    'iconv -t UTF-16 -f utf-8 u8 u8 | od -An -tx1', 'iconv -f utf-8 -t utf-16le sur | od -An -tx1',
    'iconv -f utf-8 -t utf-16be emoji | od -An -tx1', 'iconv -f utf-8 -t ucs-2 emoji', 'iconv -f utf-8 -t utf-16 emoji | iconv -f utf-16 -t utf-8',
    'iconv -f utf-16le -t utf-8 odd16', 'printf "\\377\\376h\\0" | iconv -f UTF-16 -t utf-8 | od -An -tx1',
    'printf "\\376\\377\\0h" | iconv -f UTF-16 -t utf-8 | od -An -tx1', 'printf "h\\0" | iconv -f UTF-16 -t utf-8 | od -An -tx1',
    'printf "\\377\\376h\\0" | iconv -f UTF-16LE -t utf-8 | od -An -tx1', 'printf "\\0\\0\\21\\0" | iconv -f utf-32be -t utf-8',
    'printf "\\377\\376\\0\\0h\\0\\0\\0" | iconv -f UTF-32 -t utf-8', 'printf "\\0\\334" | iconv -f utf-16le -t utf-8',
    'printf "\\0\\330a\\0" | iconv -f utf-16le -t utf-8', 'iconv -f utf-8 -t ascii//TRANSLIT typo', 'iconv -f utf-8 -t latin1//TRANSLIT typo | od -c',
    'iconv -f utf-8 -t ascii//translit typo', 'iconv -c -f utf-8 -t ascii//TRANSLIT typo', 'iconv -f utf-8 -t ascii u8',
    'iconv -f utf-8 -t ascii//IGNORE u8', 'iconv -f utf-8 -t latin1 cut8', 'iconv -c -f utf-8 -t latin1 cut8',
    'iconv -f utf-8 -t latin1//IGNORE cut8', 'iconv -f utf-8 -t latin1 bad8', 'iconv -c -f utf-8 -t latin1 bad8',
    'iconv -c -f utf-8 -t latin1//IGNORE bad8', 'iconv -f utf-8 -t latin1//IGNORE bad8 u8', 'iconv -f utf-8//IGNORE -t latin1 u8',
    'iconv -f utf-8 -t ascii//TRANSLIT//IGNORE bad8', 'iconv -f utf-8 -t latin1 u8 l1 nope', 'iconv -f latin1 -t ascii l1',
    'printf "\\200" | iconv -f ascii -t utf-8', 'iconv -f utf-8 -t ascii < typo', 'iconv -t latin1 u8 | od -c',
]]


@pytest.mark.parametrize("text", CASES)
def test_iconv_against_glibc(tmp_path, text):
    need_shell()
    assert_same_run(*run_both(tmp_path, text, FILES))


iconv_box = module_box("iconv_box")


@pytest.mark.parametrize("text", CASES[::3])
def test_iconv_in_box_against_glibc(iconv_box, tmp_path, text):
    # the comparison test_commands_gnu_in_box.py makes, in a box of this file's
    in_box.test_in_box_against_gnu(iconv_box, tmp_path, text, FILES)
