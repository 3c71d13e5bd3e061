"""Name patterns against GNU find and bash: a pattern that is plain text
after at most one leading `*`, with no flag, is matched by its tail alone
(shell/expand.c box_fnmatch); the names here hold leading dots, slashes in
paths, and the characters that make a pattern not plain (`*`, `?`, `[`,
`\\`), so that every case the short way takes, and the ones it must leave
to fnmatch, agree with find and bash."""
import pytest

from gnu_compare import assert_same_in, files_dir, need_shell

NAMES = ["a.c", ".c", ".hidden.c", "b.cc", "c", "x*y.c", "q?.c", "br[1].c", "back\\slash.c", "C.C",
         "dir.c/in.c", "dir.c/.c", "sub/deep/last.c", "sub/deep/c"]

CASES = [
    "find . -name '*.c' | sort", "find . -name 'a.c'", "find . -name '*' | sort", "find . -name '' | sort",
    "find . -name '*c' | sort", "find . -name '.c' | sort", "find . -name 'c' | sort", "find . -path '*/in.c'",
    "find . -path '*deep/c'", "find . -path './sub/deep/last.c'", "find . -name 'x*y.c'", "find . -name '*\\*y.c'",
    "find . -name '*?.c' | sort", "find . -name 'q\\?.c'", "find . -name '*]*'", "find . -name '*[1].c'",
    "find . -name '*\\\\slash.c'", "find . -name '*.C'", "find . -iname '*.c' | sort", "find . -name '**.c' | sort",
    "find . ! -name '*.c' | sort", "find . -name '*.cc' -o -name '*.c' | sort",
    "for f in a.c .c b.cc '' /x/y.c 'x*.c' .; do case $f in *.c) echo \"$f yes\";; *) echo \"$f no\";; esac; done",
    "for f in ab .ab a/b ''; do case $f in ab) echo \"$f eq\";; *b) echo \"$f tail\";; *) echo \"$f none\";; esac; done",
    "for f in .x x /x 'a*x'; do [[ $f == *x ]] && echo \"$f y\" || echo \"$f n\"; [[ $f == 'x' ]] && echo \"$f eq\"; done",
    "shopt -s extglob; for f in a.c ab.c; do case $f in *.c) echo $f;; esac; [[ $f == *(a).c ]] && echo ext $f; done",
    "shopt -s nocasematch; case C.C in *.c) echo nocase;; esac",
]


@pytest.fixture(scope="module")
def namedir(tmp_path_factory):
    return files_dir(tmp_path_factory, "names", {n: n + "\n" for n in NAMES})


@pytest.mark.parametrize("text", CASES)
def test_name_patterns_against_gnu(namedir, text):
    need_shell()
    assert_same_in(namedir, [text])
