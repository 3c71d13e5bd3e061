"""The divergences from GNU bash that the differential generator's second
grammar (tests/differential/gen_more.py) found, one case each, run as
test_shell_bash.py runs its cases (box-shell -c and bash -c in twin
directories; stdout, stderr with bash's prefix forgiven, and status).
"""
import pytest

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
    # ---- arithmetic: constants, quotes, and bash's error texts ----------------------------------
    ("arith-0x-alone", 'echo $((0x)) $((0x+1)) $((0X)); for ((q=0; q<0x; q++)); do echo no; done; echo st=$?'),
    ("arith-base-no-digits", 'echo $((10#)); echo after'),
    ("arith-base-no-digits-cmd", '(( 2# )); echo st=$?; x=$(( 3# + 1 )) || echo failed; echo next'),
    ("arith-constant-errors", 'for e in "1#1" "65#1" "2#3" "0xg" "0x1g" "08" "1a" "10#a" "10#1a" "0#1" "2#1_" "09" "1a+1" '
     '"2#3*2" "10#+1"; do (echo $((e)) ); (( $e )); echo "st=$?"; done'),
    ("arith-dq-quotes-dropped", 'echo $(( "1" + 1 )); x=5; (( "$x" > 3 )) && echo big; echo $(( "${x}" * 2 )); '
     'for (( i="0"; i<1; i++ )); do echo x; done'),
    ("arith-sq-quotes-kept", "(( '1' )); echo $?; for (( i='0'; i<1; i++ )); do echo x; done; echo $?; let \"x='1'\"; echo $?"),
    ("arith-assoc-quoted-key", "declare -A m=([a]=5 ['a b']=6); echo $(( m['a'] + 1 )) $(( m[\"a\"] )) $(( m['a b'] )); "
     "(( m['a b']++ )); k=a; (( m[\"$k\"] += 2 )); (( m['c']=1 )); declare -p m"),
    ("arith-error-texts", 'for e in "1 + " "1 +" "1/0 " "5 % 0 " "x[ " "1 2 " "1 ? 20 : x+=2 " "2**-1 " "a b " "1 = 2 " '
     '"e= " "--i++ " "3 > " "! " "1,  " "x = 1 ? : 2 " "1 ** 64 ** " "1/0 + 1 " "2**-1 + 3 " "x[ + 1 " "1 ? 2 " '
     '"1 ? 2 : " "1 ? " "1 ? 2 : 3 ? "; do (echo $(( $e ))); done'),
    ("arith-error-texts-cmd", "(( '1' )); (( 1/0 )); let 'y=2**-1'; for ((i=0; i<1+; i++)); do :; done; echo end"),
    # ---- getopts: OPTERR=0 silences its messages ----------------------------------------------
    ("getopts-opterr", 'for v in 0 1 00 "" x " 0" -0 2; do OPTERR=$v; OPTIND=1; echo "[$v]"; getopts a o -z; echo "$o"; done'),
    ("getopts-opterr-local", 'gm() { local OPTIND=1 o; local OPTERR=0; while getopts "a:" o; do echo "o=$o a=${OPTARG-none}"; '
     'done; echo "ind=$OPTIND st=$?"; }; gm -c -a; gm -z; getopts a o -z; echo $o'),
    # ---- read -N: the characters as read, not split or trimmed ---------------------------------
    ("read-N-unsplit", "read -N 3 v <<< '  lead'; echo \"$? [$v]\"; read -N 4 a b <<< ' x y z'; echo \"[$a][$b]\"; "
     "IFS=: read -N 3 v <<< ':a:'; echo \"[$v]\"; read -n 3 v <<< '  lead'; echo \"[$v]\"; read -N 4 -a x <<< ' a b c'; "
     "declare -p x; read -N 3 <<< '  ab'; echo \"[$REPLY]\"; read -N 9 v <<< 'ab'; echo \"$? [$v]\""),
    # ---- backslashes in the word of "${v-word}": `\}` is `}`, and inside its own "…" unquoted ---------
    ("opword-dq-backslash-brace", 'printf "[%s]" "${w:=\\}}" "${u:-\\}}" "${u:-a\\}b}" ${u:-\\}}; echo "[$w]"'),
    ("opword-dq-inner-backslash", 'a="x  y"; printf "[%s]" "${u-a\\tb}" "${u-"a\\tb"}" "${u-"a\\}b"}" "${u-"a\'b"}" '
     '"${u-"$a"}" "${u-"*"}" "${u-"a\\"b"}" "${u-\'a\\tb\'}" "${u-"\\a"\\b}" "${a/x/"\\t"}" "${a#"\\x"}" "${u:-\\"}"; echo'),
    ("opword-heredoc-backslash", 'cat <<E\n${u-"a\\tb"} ${u-a\\}b} "${u-x}" ${u-"\\$x"} \\} "\\t" ${u-\\t}\nE'),
    # ---- declare -n again on a reference: it now names the new variable ---------------------------
    ("nameref-redeclare", 'x1=one x2=two; declare -n cur=x1; declare -n cur=x2; echo "$cur $x1"; declare -p cur; '
     'for ref in x1 x2; do declare -n it=$ref; echo "$it"; done; f() { local -n r=x1; local -n r=x2; echo $r; }; f; '
     'a=(1 2); declare -n e=a; declare -n e="a[1]"; echo $e; e=z; declare -p a e'),
    # ---- enable: builtins listed, turned off (then found as programs) and on again -----------------
    ("enable-n-off-on", 'enable -n echo; echo hi; type -t echo; command -v echo; enable echo; type -t echo; '
     'enable -n type; command -v type; enable type; command -v type'),
    ("enable-list-errors", 'enable -a | grep -c -w -e "enable echo" -e "enable printf"; enable -n printf test; enable -n; '
     'enable nosuch; echo $?; enable -x; echo $?; enable -s | grep -c -w "enable eval"'),
    ("enable-builtin-off", 'enable -n echo; f() { echo in-f; }; f; builtin echo still; echo $?; enable -a | grep -w echo'),
    # ---- $'…' in the word of "${v-word}" is decoded, outside the word's inner "…" ------------------
    ("opword-dq-ansi-c", "printf '[%s]' \"${u-$'t\\tx'}\" \"$'a\\tb'\" \"${u:-x$'\\x41'y}\" \"${u-\"$'q'\"}\" "
     "\"${a:-${u:-$'n\\tm'}}\"; x=abc; echo \"${x/b/$'\\t'}\" \"${x#$'a'}\"; cat <<E\n${u-$'t\\tx'} $'n'\nE"),
    # ---- an alias defined on the line of a $( ) applies inside it (bash parses it again to run it) --
    ("alias-in-subst-same-line", 'shopt -s expand_aliases; alias e="echo x"; echo $(e); y=$(e; e); echo "$y"; '
     'f() { echo "$(e)"; }; f; unalias e; echo "$(e 2>/dev/null)" $?'),
    # ---- printf %q: bash's backslash set (',' too) and multibyte characters as they are ----------
    ("printf-q-comma-utf8", 'for s in "a,b" "μx" "a{b}" "é," "a~b" "~a" "a=b" "a:b" "#a" "a#" "!a" "a b" "it\'s" "q\\"d" '
     '"a*b" "" "-n" "a%b" "a@b"; do printf "%q|" "$s"; done; echo; printf -v v %q "a,b c"; echo "$v"'),
    # ---- an extglob group never closed: the rest of the pattern is compared as it is ----------
    ("pattern-unclosed-group", "p='*(k'; for s in 'x(k' '(k' '*(k' abc; do [[ $s == $p ]] && echo \"y $s\"; done; "
     "shopt -s extglob; p='a*(k'; case 'ab(k' in $p) echo m;; *) echo n;; esac; v='b(|a'; p='*(|a'; echo ${v#$p} ${v%$p}"),
    ("pattern-unclosed-group-utf8", "shopt -s extglob; p='*(μ'; for s in 'x(μ' '*(μ' 'μ'; do [[ $s == $p ]] && echo \"y $s\"; "
     "case $s in $p) echo \"c $s\";; esac; done; p='x+(μ)?(k'; [[ 'xμμ?(k' == $p ]] && echo y; [[ 'xμ' == $p ]] || echo n"),
    # ---- an array subscript's arithmetic error drops the command, wherever the subscript is ---
    ("subscript-error-unset-name", "echo ${u[08]}; echo not"),
    ("subscript-error-unset-name-default", "echo ${u[1/0]:-d}; echo not"),
    ("subscript-error-unset-length", "echo ${#u[08]}; set -u; echo ${#v[1/0]}; echo not"),
    ("nounset-length-of-element", "set -u; (echo ${#v[1]}); echo \"st=$?\"; (echo ${#v[@]}); echo \"st=$?\"; (echo ${#v}); echo \"st=$?\"; "
     "declare -a w; (echo ${#w[1]}); echo \"st=$?\""),
    ("subscript-error-assign", "b=(1 2); b[08]=1; echo not"),
    ("subscript-error-assign-div0", "b[1/0]=3; echo not"),
    ("subscript-error-append", "b=(1 2); b[2#2]+=x; echo not"),
    ("subscript-error-let", "b=(1 2); let 'b[08]=1'; echo not"),
    ("subscript-error-let-read", "b=(1 2); let 'x=b[1/0]'; echo not"),
    ("subscript-error-arith-cmd", "b=(1 2); (( b[08] )) || echo or; echo not"),
    ("subscript-error-arith-if", "b=(1 2); if (( b[09] > 1 )); then echo t; else echo f; fi; echo not"),
    ("subscript-error-arith-subshell", "b=(1 2); ( (( b[08] )); echo in ); echo \"st=$?\""),
    ("subscript-error-arith-subst", "b=(1 2); x=$( (( b[08] )); echo in ); echo \"st=$? $x\""),
    ("subscript-error-arith-expansion", "b=(1 2); echo $(( b[08] + 1 )); echo not"),
    ("subscript-error-arith-expansion-assign", "b=(1 2); x=$(( b[1/0] )); echo not"),
    ("subscript-error-unset", "b=(1 2); unset 'b[08]'; echo not"),
    ("subscript-error-test-v", "b=(1 2); test -v 'b[08]'; echo not"),
    ("subscript-error-cond-v", "b=(1 2); [[ -v b[1/0] ]]; echo not"),
    ("subscript-error-printf-v", "b=(1 2); printf -v 'b[08]' %s x; echo not"),
    ("subscript-error-declare", "declare b[08]=1; echo not"),
    ("subscript-error-valid-octal", "b=(1 2 3 4 5 6 7 8); echo ${b[07]} ${b[010]} ${b[0x2]} ${b[2#11]}; b[010]=x; echo ${b[8]}"),
    ("subscript-negative-out-of-range", "a=(1 2); echo ${a[-5]}; echo \"st=$?\"; x=5; echo ${x[-1]}; echo ${a[-2]}"),
    ("arith-errors-plain-go-on", "let x=09; echo \"st=$?\"; (( 1/0 )); echo \"st=$?\"; (( y = 2#2 )); echo \"st=$?\"; "
     "let 'z=64#zz' 'w=65#1'; echo \"st=$? $z\"; [[ 08 -eq 8 ]]; echo \"st=$?\""),
    # ---- arithmetic error texts: the parameter of ${v:off:len}, a second base, integer variables --
    ("arith-error-substring-names-param", "s=abc; echo ${s:08}; echo not"),
    ("arith-error-substring-names-elem", "b=(1 2); echo ${b[1]:1:1/0}; echo not"),
    ("arith-error-substring-names-list", "b=(1 2); echo \"${b[*]:08}\"; echo not"),
    ("arith-error-substring-positional", "set -- a b; echo ${@:1:2#2}; echo not"),
    ("arith-error-second-base", "for e in 2#10#1 10#5#3 8#7# 0x1#2 07#1; do (echo $(( e ))); echo \"$e $?\"; done"),
    ("arith-error-declare-integer", "declare -i n=1/0; echo not"),
    ("arith-error-typeset-integer", "typeset -i n=08; echo not"),
    ("arith-error-export-integer", "declare -i n; export n=09; echo not"),
    ("arith-error-read-integer", "declare -i n; read n <<< 08; echo not"),
    ("arith-error-integer-append", "declare -i n=5; n+=1/0; echo not"),
    ("arith-error-integer-append-octal", "declare -i n; n+=08; echo not"),
    ("arith-integer-append", "declare -i n=5; n+=3; n+=n; echo $n; declare -ai a=(1 2); a[1]+=5; a+=(7); a[0]+=a[1]; "
     "echo ${a[@]}; declare -i m; m=2+3; m+=2*2; echo $m"),
    # ---- brace sequences: whole, however long; bash's own limit of INT_MAX words ------------------
    ("brace-seq-long", "a=({1..200000}); echo ${#a[@]} ${a[-1]}; b=({0..999999..7}); echo ${#b[@]} ${b[-1]}; "
     "echo {1..1000000} | wc -c"),
    ("brace-seq-int-max", "echo {1..2147483647} {0..4294967296..2} {1..2147483648} x{-5..5..4}y"),
    ("brace-seq-long-edges", "echo {9223372036854775806..9223372036854775807} {-9223372036854775807..-9223372036854775808}"),
    ("brace-many-groups", "x=$(printf '{a,b}%.0s' {1..16}); eval \"echo $x\" | wc -c"),
    # ---- a backslash from an unquoted expansion escapes in a pattern; one alone at the end is itself -
    ("pattern-backslash-from-expansion", "p='\\*'; [[ '*' == $p ]] && echo y1; [[ a == $p ]] && echo y2; "
     "case '*' in $p) echo c1;; esac; case a in $p) echo c2;; esac; p='a\\b'; [[ ab == $p ]] && echo y3; "
     "[[ 'a\\b' == $p ]] && echo y4; p='[\\]]'; [[ ']' == $p ]] && echo y5"),
    ("pattern-backslash-from-expansion-end", "p='a\\'; [[ 'a\\' == $p ]] && echo y1; p='\\\\'; [[ '\\' == $p ]] && echo y2; "
     "p='x\\'; q=\"$p*\"; [[ 'x\\yz' == $q ]] && echo y3; [[ 'x*' == $q ]] && echo y4; p='\\*'; v='x*y'; echo ${v/$p/-} ${v#*$p}"),
    # ---- read into array elements -------------------------------------------------------------
    ("read-into-element", "read 'a[1]' <<< x; echo ${a[1]}; declare -A m; read 'm[k]' 'm[j k]' <<< 'v w'; echo ${m[k]} ${m[j k]}; "
     "b=(1); read 'b[-1]' 'b[1+1]' <<< 'x y'; echo ${b[@]}; read 'c[' <<< x; echo \"st=$?\"; read '1a' <<< x; echo \"st=$?\""),
    ("read-into-element-bad-subscript", "b=(1 2); read 'b[08]' <<< x; echo not"),
    # ---- invalid UTF-8: each byte of a bad or cut sequence is a character of its own ----------------
    ("utf8-invalid-length-substring", "for s in $'\\xcb)' $'a\\xff' $'\\xe6\\x97' $'\\xe6\\x97\\xa5x' $'\\xf0\\x9f\\x98' $'\\xce\\xbc\\xcex'; "
     "do echo ${#s} ${s:1} ${s:0:1} ${s: -1} ${s:1:2} | od -An -c; done"),
    # ---- a list assignment's subscripts: evaluated once, negative ones from the end so far --------
    ("list-assign-subscript-error-once", "b=(1 2); b+=([08]=1); echo not"),
    ("list-assign-subscript-error-once-declare", "declare -a b=([1/0]=1); echo not"),
    ("list-assign-negative-subscript", "b=(1 2 3); b+=([-1]=z w); declare -p b; c=(1 2); c+=([-1]+=x [-2]=y); declare -p c; "
     "d=([2]=x y [-1]=z [0]=a b); declare -p d; e=([-1]=x); echo \"st=$?\"; f=(1 2); f+=([-5]=x y); echo \"st=$?\"; declare -p f"),
]


IDS = [name for name, _ in CASES]


@pytest.mark.skipif(not BASH, reason="bash not installed")
@pytest.mark.parametrize("text", [text for _, text in CASES], ids=IDS)
def test_like_bash_generated(text, tmp_path):
    like_bash(text, tmp_path)


def test_case_names_unique():
    assert sorted(set(IDS)) == sorted(IDS)
