"""The edge cases against the GNU tools: names with spaces, newlines and
leading dashes; binary files and invalid UTF-8; lines of 1 MB; a 2 GB file.

Same method as test_commands_gnu.py (gnu_compare.py): the names run in two
fresh copies of one generated tree; the others run both sides in one
directory of their own files and compare stdout, stderr and status.
"""
import pytest

from gnu_compare import DIFF_TREE, assert_same_in, assert_same_run, need_shell, run_both

# Names with spaces, newlines and leading dashes.
NAMES = [
    'ls', 'ls -l "sp a" | cut -c1-10,24-', 'cat "sp a" -- -dash1', 'cat -dash1; echo $?', 'wc -l "sp a" ./-dash1',
    'wc -l nl*', 'grep -H . nl*', 'grep -l . ./-dash1 "sp a"', 'grep -r a . --include="nl*"', 'head -n1 -- -dash1 "sp b"',
    'tail -n1 -- -dash2', 'sort -- -dash2 -dash1', 'md5sum nl*', 'sha256sum -- -dash1', 'find . -name "nl*" | sort',
    'find . -name "nl\n*" -print0 | od -c', 'find . -name "sp *" | sort', 'find . -name "-dash*" | sort', 'rm -- -dash1; ls -- -dash1; echo $?',
    'rm ./-dash2 "sp a"; ls', 'mv "sp a" "sp c"; cat "sp c"', 'cp -- -dash1 "x y"; cat "x y"', 'stat -c %n nl*', 'du nl*', 'diff nl* "sp a"',
    'ls -d nl*', 'printf "%s\\0" "sp a" -dash1 | xargs -0 cat', 'cut -c1 -- -dash1', 'du -a . | grep -c nl',
]


@pytest.mark.parametrize("text", NAMES)
def test_names_against_gnu(tmp_path, text):
    need_shell()
    assert_same_run(*run_both(tmp_path, text, DIFF_TREE, env={"TZ": "UTC"}))


def test_binary_and_invalid_utf8(tmp_path):
    """NUL bytes, bytes >= 0x80 that are not UTF-8, and CRs through every text command."""
    need_shell()
    d = tmp_path / "w"
    d.mkdir()
    blob = bytes(range(256)) * 40 + b"\n\xff\xfe\xc3(\xe2\x82 tail needle\r\nlast"
    (d / "blob").write_bytes(blob)
    (d / "blob2").write_bytes(blob.replace(b"needle", b"NEEDLE"))
    (d / "u8").write_bytes(b"caf\xc3\xa9\n\xe9t\xe9\n\xc3\n\xf0\x9f\x98\x80 smile\n")
    cases = [
        "cat blob | md5sum", "cat -v blob | md5sum", "cat -A u8", "grep -c needle blob", "grep -a -o needle blob",
        "grep needle blob; echo $?", "grep -a -n smile u8", "grep -i CAF u8", "sed 's/needle/N/' blob | md5sum", "sed -n l u8",
        "tr -d '\\000' < blob | wc -c", "tr '\\200-\\377' X < u8", "wc blob u8", "wc -m u8", "wc -L u8", "head -c 300 blob | od -c | tail -3",
        "tail -c 20 blob | od -c", "sort u8", "uniq -c u8", "cut -b1-3 u8 | od -c", "cut -c2 u8 | od -c",
        "fold -w 3 u8 | od -c | head", "base64 blob | base64 -d | md5sum; md5sum < blob", "xxd u8", "od -c u8", "sha1sum blob",
        "diff blob blob2; echo $?", "diff -a blob blob2 | md5sum", "diff -q blob blob2", "cmp_ok=1; diff u8 u8; echo $?",
        "nl u8 | od -c | head -4", "paste u8 u8 | od -c | head -3", "expand u8 | md5sum", "comm u8 u8", "jq -R . u8",
        "find . -name blob -size +10k", "du -b blob", "stat -c %s blob", "ls -l blob | cut -c1-10,24-33",
    ]
    assert_same_in(d, cases)


def test_megabyte_lines(tmp_path):
    """Lines of 1 MB and more through the line-based commands, diff included."""
    need_shell()
    d = tmp_path / "w"
    d.mkdir()
    line = b"ab" * (1 << 19)
    (d / "l1").write_bytes(line + b"\n" + line + b"X\nshort\n" + line)
    (d / "l2").write_bytes(line + b"\n" + line + b"Y\nshort\n" + line)
    cases = [
        "wc l1", "wc -L l1", "head -n 1 l1 | wc -c", "tail -n 1 l1 | wc -c", "tail -n 2 l1 | head -c 10", "sort l1 | md5sum",
        "sort -r l1 l2 | md5sum", "uniq -c l1 | cut -c1-12", "cut -c1048570-1048580 l1", "grep -c X l1", "grep -n short l1",
        "grep -o 'bX' l1", "sed -n '2s/X$/Z/p' l1 | tail -c 3", "sed 's/a/b/g' l1 | md5sum", "tr a c < l1 | md5sum", "rev l1 | md5sum",
        "diff l1 l2 | md5sum", "diff -u l1 l2 | tail -n +3 | md5sum", "diff -q l1 l2", "cmp_dummy=1; diff l1 l1; echo $?",
        "fold -w 100000 l1 | wc -l", "nl l1 | cut -c1-10", "paste l1 l2 | wc -c", "awk_free=1; jq -R length l1",
        "comm -3 l1 l2 | md5sum", "base64 -w 0 l1 | wc -c", "md5sum l1",
    ]
    assert_same_in(d, cases, timeout=120)


def test_two_gigabyte_file(tmp_path):
    """A 2 GB file (sparse, with data at both ends): sizes and offsets past 2^31."""
    need_shell()
    d = tmp_path / "w"
    d.mkdir()
    size = 2 * 1024 ** 3 + 12345
    with open(d / "big", "wb") as f:
        f.write(b"start\n")
        f.seek(size - 6)
        f.write(b"\nend!\n")
    cases = [
        "wc -c big", "wc -c < big", "cat big | wc -c", "tail -c 12 big | od -c", "tail -c +2147483640 big | od -c",
        "head -c 6 big", "head -c -2147483000 big | wc -c", "tail -n 1 big", "stat -c %s big", "du -b big", "du --apparent-size -h big",
        "ls -l big | cut -c1-10,24-34", "find . -size +2G", "find . -size +2097152k -name big", "od -A d -j 2147495989 -c big",
        "xxd -s 2147495990 big", "diff big big; echo $?", "cmp_dummy=1; tail -c 100 big | md5sum",
    ]
    assert_same_in(d, cases, timeout=300)
