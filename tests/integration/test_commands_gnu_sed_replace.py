"""sed's s command against GNU sed: the replacement's &, \\1…\\9 and escapes,
with and without the case conversions \\U, \\L, \\u, \\l and \\E, each alone,
combined and spanning several groups, and the g flag over many matches (the
copy of a replacement's bytes has a path of its own where no conversion is
in force, shell/commands/sed.c append_case).  And regexes that are plain
text, which sed finds with memmem rather than regexec (sed.h SedRe): in s
with every flag, in addresses, reused by an empty regex, next to the
characters that make a regex not plain, over NUL bytes, invalid UTF-8 and
-z records."""
import pytest

from gnu_compare import assert_same_in, files_dir, need_shell

TEXT = "the quick brown fox jumps over a lazy dog\nHELLO World, hello WORLD\n\nabc-def_ghi 123\n"

CASES = [
    "sed 's/a/b/g' t",
    "sed 's/o/&&/g' t",
    "sed 's/o/[&]/2g' t",
    "sed 's/x*/-/g' t",
    "sed 's/\\(qu\\)\\(ick\\)/\\2\\1/' t",
    "sed 's/.*/\\U&/' t",
    "sed 's/.*/\\L&/' t",
    "sed 's/[a-z]\\+/\\u&/g' t",
    "sed 's/[A-Z]\\+/\\l&/g' t",
    "sed 's/\\(.*\\) \\(.*\\)/\\U\\1\\E \\2/' t",
    "sed 's/\\(o\\)\\(.\\)/\\u\\1\\U\\2x\\E/g' t",
    "sed 's/\\w\\+/\\L\\u&/g' t",
    "sed 's/\\w\\+/\\U\\l&/g' t",
    "sed 's/o/\\n/g' t | od -c | head -3",
    "sed 's/ /\\t/g' t",
    "sed 's/e/\\U/g' t",
    "sed 's/l/\\Ux\\Ey/g' t",
    "sed -E 's/(h)(e)(l*)/\\3\\2\\1/g' t",
    "sed -E 's/([a-z]+)-([a-z]+)_/\\U\\2\\E-\\u\\1_/' t",
    "sed 's/o/\\&/g' t",
    "sed 's/o/\\\\/g' t",
    "sed 's/World/\\L&\\E!/' t",
    "sed 's/^/\\u/' t",
    # plain-text regexes
    "sed 's/the/THE/2' t",
    "sed 's/o//g' t",
    "sed 's/o/0/3g' t",
    "sed 's/aa/X/g' a",
    "sed 's/aaa/X/2' a",
    "sed -n 's/fox/FOX/p' t",
    "sed 's/fox/FOX/w out' t; cat out",
    "sed '/fox/d' t",
    "sed '/fox/!d' t",
    "sed -n '/quick/,/hello/p' t",
    "sed '/fox/s//FOX/g' t",
    "sed 's/hello/bye/Ig' t",
    "sed 's/hello/bye/g' t",
    "sed 'N;s/dog\\nHELLO/X/' t",
    "sed 'N;s/dog/X/M' t",
    "sed 's/\\t/T/g' tabs",
    "sed 's/a\\tb/X/' tabs",
    "sed 's/o w/_/g' t",
    "sed 's/{/X/g' br",
    "sed 's/a{2}/X/g' br",
    "sed -E 's/a{2}/X/g' br",
    "sed 's/a+/X/g' br",
    "sed -E 's/a+/X/g' br",
    "sed 's/a|b/X/g' br",
    "sed -E 's/(a)/[\\1]/g' br",
    "sed 's/c.d/X/g' br",
    "sed 's/needle/N/g' blob | od -c | tail -4",
    "sed 's/a/b/g' blob | md5sum",
    "sed -z 's/a/_/g' nul | od -c",
    "sed 's/a/X/g' u8 | od -c",
    "sed 's/ a/_/g' u8 | od -c",
    "sed 's/ab/\\1/' t",
    "sed -n '/lazy/=' t",
    "sed 's/dog$/cat/' t",
    "sed 's/^the/A/' t",
    "sed 's/HELLO/x/;s/x/y/;s/y/z/' t",
    "sed -E 's/o/0/g;s/0 /o_/' t",
]


@pytest.fixture(scope="module")
def textdir(tmp_path_factory):
    return files_dir(tmp_path_factory, "sedrep", {
        "t": TEXT * 3,
        "a": "aaaaa\naaaaaaa\na\n\n",
        "tabs": "a\tb\tc\n\t\n",
        "br": "a{2} aa a+ a|b c.d cxd {x}\n",
        "blob": bytes(range(256)) * 4 + b"\n\xc3a needle \xe2\x82a\x00a\n",
        "nul": b"banana\x00apple\x00\x00cab",
        "u8": "café ça\n".encode() + b"\xc3a\n",
    })


@pytest.mark.parametrize("text", CASES)
def test_sed_replacement_against_gnu(textdir, text):
    need_shell()
    assert_same_in(textdir, [text])
