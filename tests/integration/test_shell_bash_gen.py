"""The divergences from GNU bash that the differential generator's second
grammar (tests/differential/gen_more.py) found, one case each, run as
test_shell_bash.py runs its cases (box-shell -c and bash -c in twin
directories; stdout, stderr with bash's prefix forgiven, and status).
"""
import pytest

from conftest import table_cases
from test_shell_bash import BASH
from test_shell_bash import test_like_bash as like_bash  # the comparison, not a test here

CASES = [
    # ---- builtins that take no option: "--" passed over, "-X" refused --------------------
    ("eval-dashdash", "eval -- 'echo ev'; eval -x; echo $?; eval -- ; echo $?; eval - 2>/dev/null; echo $?"),
    ("source-dashdash", "echo 'echo in $1' > s; source -- s a; . -- s; . -q s; echo $?; source --; echo $?"),
    # ---- a case inside $( ) inside "…": its pattern's `)` does not end the substitution --------
    ("subst-case-dq-inner-quotes", 'echo "$(case x in *) echo "in quotes";; esac)"; echo "$(case a in a) echo "x";; esac) y"'),
    ("subst-case-dq-nested", 'echo "$(case x in x) echo "a$(case y in y) echo "n";; esac)";; esac)"; '
     'echo "$(for i in 1; do case $i in 1) echo "one";; esac; done)"'),
    ("subst-case-dq-in-word", 'echo "${u:-$(case a in a) echo "d q";; esac)}"; cat <(case a in a) echo "pa";; esac); '
     'x="pre $(case $HOME in /*) echo "abs";; *) echo "rel";; esac) post"; echo "$x"'),
    ("subst-case-word-not-reserved", 'echo "$(echo case x in y)" "b"; echo "$(echo esac "(")"'),
    # ---- unset 'a[@]': every element of an indexed array, which stays declared -----------------
    ("unset-all-elements", 'arr=(a b); unset "arr[@]"; declare -p arr; echo ${#arr[@]}; arr+=(c); declare -p arr; '
     'a=(1 2); f() { local -a a=(x); unset "a[*]"; declare -p a; }; f; declare -p a; declare -ai ia=(1 2); '
     'unset "ia[@]"; ia+=(3+4); declare -p ia'),
    ("unset-all-elements-not-array", 's=x; unset "s[@]"; echo $?; declare -p s; unset "nope[@]"; echo $?; '
     'declare -A m=([k]=v [j]=w); unset "m[@]"; declare -p m; readonly ra=(1); unset "ra[@]"; echo $?; declare -p ra'),
    # ---- UTF-8: `?` and a bracket take one character, never one byte of it ---------------------
    ("utf8-question-cond", 'u=μ; [[ $u == ?? ]]; echo $?; [[ $u == ? ]]; echo $?; [[ $u == [μ] ]]; echo $?; '
     'u=μx; [[ $u == ?x ]]; echo $?; [[ $u == ??? ]]; echo $?; [[ $u == ?? ]]; echo $?'),
    ("utf8-question-case", 'for u in μ 日 héllo; do case $u in ???) echo three;; ??) echo two;; ?) echo one;; *) echo more;; esac; done'),
    ("utf8-trim-replace", 'u=μxé; echo "${u#?}" "${u%?}" "${u//?/.}" "${u/[[:alpha:]]/A}" "${u%%[!x]}" "${u#[μ]}" "${u/#??/_}" "${u/%[!a]?/_}"'),
    ("utf8-extglob", 'shopt -s extglob; u=ééx; [[ $u == +(é)x ]]; echo $?; [[ $u == !(é*) ]]; echo $?; '
     '[[ $u == @(é|x)* ]]; echo $?; echo ${u//+(é)/E} ${u##*(é)}; [[ $u == *([[:alpha:]]) ]]; echo $?'),
    ("utf8-nocasematch", 'shopt -s nocasematch; [[ ÉTÉ == été ]]; echo $?; [[ É == [é] ]]; echo $?; case Ä in [a-zä]) echo y;; esac'),
    ("utf8-glob", 'touch μ1 μ22 .μ μ ab 日; echo μ?; echo ?1; echo *; echo μ[0-9][0-9]; echo ??; echo ???; echo [!a]?'),
    ("utf8-invalid-bytes", "s=$'\\xff\\xfe'; [[ $s == ?? ]]; echo $?; [[ $s == ? ]]; echo $?; x=$'a\\xffb'; [[ $x == a?b ]]; echo $?"),
]


@pytest.mark.skipif(not BASH, reason="bash not installed")
@table_cases("text", CASES)
def test_like_bash_generated(text, tmp_path):
    like_bash(text, tmp_path)


def test_unique_ids():
    assert len({c[0] for c in CASES}) == len(CASES)
