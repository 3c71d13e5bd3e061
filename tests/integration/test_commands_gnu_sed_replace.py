"""sed's s command against GNU sed: the replacement's &, \\1…\\9 and escapes,
with and without the case conversions \\U, \\L, \\u, \\l and \\E, each alone,
combined and spanning several groups, and the g flag over many matches (the
copy of a replacement's bytes has a path of its own where no conversion is
in force, shell/commands/sed.c append_case)."""
import pytest

from gnu_compare import assert_same_in, need_shell

TEXT = "the quick brown fox jumps over a lazy dog\nHELLO World, hello WORLD\n\nabc-def_ghi 123\n"

CASES = [
    "sed 's/a/b/g' t", "sed 's/o/&&/g' t", "sed 's/o/[&]/2g' t", "sed 's/x*/-/g' t",
    "sed 's/\\(qu\\)\\(ick\\)/\\2\\1/' t", "sed 's/.*/\\U&/' t", "sed 's/.*/\\L&/' t",
    "sed 's/[a-z]\\+/\\u&/g' t", "sed 's/[A-Z]\\+/\\l&/g' t", "sed 's/\\(.*\\) \\(.*\\)/\\U\\1\\E \\2/' t",
    "sed 's/\\(o\\)\\(.\\)/\\u\\1\\U\\2x\\E/g' t", "sed 's/\\w\\+/\\L\\u&/g' t", "sed 's/\\w\\+/\\U\\l&/g' t",
    "sed 's/o/\\n/g' t | od -c | head -3", "sed 's/ /\\t/g' t", "sed 's/e/\\U/g' t", "sed 's/l/\\Ux\\Ey/g' t",
    "sed -E 's/(h)(e)(l*)/\\3\\2\\1/g' t", "sed -E 's/([a-z]+)-([a-z]+)_/\\U\\2\\E-\\u\\1_/' t",
    "sed 's/o/\\&/g' t", "sed 's/o/\\\\/g' t", "sed 's/World/\\L&\\E!/' t", "sed 's/^/\\u/' t",
]


@pytest.fixture(scope="module")
def textdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("sedrep")
    (d / "t").write_text(TEXT * 3)
    return d


@pytest.mark.parametrize("text", CASES)
def test_sed_replacement_against_gnu(textdir, text):
    need_shell()
    assert_same_in(textdir, [text])
