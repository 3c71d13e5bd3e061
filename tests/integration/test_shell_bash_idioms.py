"""The divergences from GNU bash that the differential tester
(tests/differential/) found, one case each, run as test_shell_bash.py runs
its cases (box-shell -c and bash -c in twin directories; stdout, stderr with
bash's prefix forgiven, and status compared).
"""
import pytest

from conftest import BOX_SHELL, table_cases
from test_shell_bash import BASH, _run
from test_shell_bash import test_like_bash as like_bash  # the comparison, not a test here

CASES = [
    # ---- text of -c is bytes: non-ASCII reaches the parser -----------------
    ("utf8-text", 's="μx"; echo "$s"'),
    # ---- substitutions ------------------------------------------------------
    ("subst-case", 'y=$(case abc in a*) echo A;; *) echo other;; esac); echo "$y"'),
    ("subst-case-unquoted", 'echo $(case a in b|a) echo A; esac) x'),
    ("subst-case-dq", 'echo "$(case x in x) echo X;; esac)"'),
    ("subst-in-cond", '[[ $(echo foo) == foo ]] && echo ok; [[ x$(echo a) == xa ]] && echo ok2'),
    ("subst-in-cond-pattern", '[[ $(echo foo) == f* ]]; echo $?'),
    ("subst-status-alone", '$(exit 4); echo $?; `false`; echo $?'),
    ("subst-status-if", 'if `false`; then echo T; else echo F; fi'),
    ("subst-status-assign", 'x=$(exit 3) y=1; echo $?'),
    ("subst-file", 'echo hi > f; y=$(< f); echo "[$y]"; y=$(<f); echo "[$y]"'),
    ("subst-file-missing", 'y=$(< nofile); echo "$? [$y]"'),
    # ---- the word inside ${v op word} -------------------------------------------
    ('pat-dq-trim', 'f=a/b.py; echo "${f##*/}" "${f%.*}"'),
    ('pat-dq-any', 'x=abc; echo "${x#?}"'),
    ('opword-split', "printf '[%s]' ${u:-a b c}; echo"),
    ('opword-dq-inner-dq', 'printf \'[%s]\' "${u:-"x y"}"; echo'),
    ('opword-dq-inner-sq', 'printf \'[%s]\' "${u:-\'x y\'}"; echo'),
    ('opword-unq-dq', 'printf \'[%s]\' ${u:-"x y"}; echo'),
    ('opword-unq-mixed', "printf '[%s]' ${u:-'x y' z}; echo"),
    ('repl-slash', 'x=abcb; echo ${x////c} "${x//b/}" ${x/b}'),
    ('pat-dq-inner-sq', 'foo="x\'a\'y"; echo "${foo%*\'a\'*}"'),
    ('pat-dq-quoted-star', 'x=\'a*b\'; echo "${x#"a*"}" "${x#\'a*\'}" "${x#a\\*}" "${x#a*}"'),
    ('repl-quotes', 'x=abc; echo "${x/b/\'q\'}" ${x/b/\'q\'} "${x/b/"q"}" "${x/b/\\q}"'),
    ('repl-amp', 'x=abc; echo "${x/b/&}" ${x/b/\\&}'),
    ('pat-dq-var', 'p=\'*.\'; b=a.b.c; echo "${b#$p}" "${b#"$p"}" ${b#$p}'),
    ('case-mod-pattern-dq', 'x=AbC; echo "${x,,[A-Z]}" "${x^^[a-z]}"'),
    ('opword-value-split', "s='  two  spaces '; printf '[%s]' ${s:-x}; echo"),
    ('opword-var-unq', "printf '[%s]' ${u-$s}; echo"),
    ('opword-var-dq', 'printf \'[%s]\' "${u-$s}"; echo'),
    ('opword-plus-mixed', 'x=a; printf \'[%s]\' ${x:+"a b" c}; echo'),
    ('opword-dq-escapes', 'printf \'[%s]\' "${u:-a\\"b}" "${u:-a\\\\b}" ${u:-a\\\\b}; echo'),
    ('repl-unq-space', "x='a b'; printf '[%s]' ${x/a/c d}; echo"),
    ('opword-star', 'printf \'[%s]\' "${u:-*}" ${u:-*}; echo'),
    # ---- arrays -------------------------------------------------------------------
    ('arr-selfref', 'arr=(a b); arr=("${arr[@]}" c); echo "${arr[@]}"'),
    ('arr-selfref-count', 'arr=(a b); arr=(x "${arr[@]}" "${#arr[@]}"); declare -p arr'),
    ('assoc-key-blank', 'declare -A m=([k]=v [x y]=z); declare -p m; echo "${m[x y]}"'),
    ('assoc-list-assign', 'declare -A m; m=([a]=1 [b]=2); echo "${!m[@]}" "${m[@]}"'),
    ('assoc-pairs', 'declare -A m=(k1 v1 k2 v2); declare -p m'),
    ('assoc-unset-quoted', "declare -A A=([k]=1 [j]=2); unset 'A[k]'; declare -p A"),
    ('nounset-empty-array', 'set -u; e=(); printf \'[%s]\' "${e[@]}"; echo "n=${#e[@]}"; echo "${e[*]}" end'),
    ('nounset-empty-array-for', 'set -u; e=(); for x in "${e[@]}"; do echo $x; done; echo ok'),
    ('arr-append-list', 'arr=(a \'b c\'); arr+=(d); echo ${#arr[@]} "${arr[2]}"'),
    ('arr-keyed-mixed', 'a=([2]=x y [0]=z w); declare -p a'),
    ('nounset-unset-array', 'set -u; echo "${nope[@]}"; echo after'),
    # ---- declarations: assignments as arguments are not split -----------------
    ("decl-local-export", "words='a b c'; fn2() { local q=$words; echo \"[$q]\"; }; fn2; export ex2=$words; echo \"[$ex2]\""),
    ("decl-declare-readonly", 'x="a  *"; declare y=$x z="$x"; echo "[$y][$z]"; readonly r=$x; echo "[$r]"'),
    ("decl-local-positional", 'f() { local foo=$1; echo "[$foo]"; }; f "a b"'),
    ("decl-subscript", 'k=key; declare -A m; declare m[$k]="v w"; declare -p m'),
    ("decl-not-assignment-splits", 'x="a b"; export $x 2>/dev/null; echo $?'),
    # ---- descriptors past 9 ------------------------------------------------------
    ("fd-12", 'exec 12>rf4; echo hi >&12; cat rf4'),
    ("fd-20-close", 'exec 20>rf4; echo hi >&20; exec 20>&-; cat rf4'),
    ("fd-200-lock", 'exec 200>lk; echo a >&200; { echo b >&200; } 3>x; cat lk'),
    ("fd-10-dup-in", 'exec 10<&0; echo ok'),
    ("trap-set-in-function-stays", "trap 'echo E' ERR; f() { trap 'echo F' ERR; false; }; f; false"),
    ("trap-return-not-inherited", "f() { trap 'echo ret' RETURN; }; f; echo x; f; g() { :; }; g"),
    ("trap-err-unset-in-function", "trap 'echo E' ERR; f() { trap - ERR; }; f; false; echo end"),
    ("trap-return-top-level", "trap 'echo ret' RETURN; r() { :; }; r; trap - RETURN"),
    ("trap-err-set-in-function", "f() { trap 'echo E' ERR; (false); echo a; { false; }; echo b; trap - ERR; return 3; }; f; echo $?"),
    # ---- [[ ]] errors ----------------------------------------------------------------
    ("cond-arith-error-status", '[[ 1 -eq 1x ]]; echo st=$?'),
    ("cond-expansion-error-fatal", '[[ ${a?msg} == x ]]; echo st=$?'),
    ("cond-pattern-error-fatal", '[[ x == ${a?msg} ]]; echo st=$?'),
    ("cond-nounset-subshell", '(set -u; [[ $nope == x ]]; echo in); echo st=$?'),
    # ---- smaller ------------------------------------------------------------------
    ("case-toggle", 'x=AbC; echo ${x~} ${x~~} "${x~~[bc]}"; a=(aB Cd); echo ${a[@]~}'),
    ("assoc-empty-key", 'declare -A m; m[$a]="x"; echo st=$?'),
    ("pipestatus-start", 'echo ${#PIPESTATUS[@]} ${PIPESTATUS[@]}'),
    ("pipestatus-simple-resets", 'true | false; echo ${PIPESTATUS[@]}; true; echo ${PIPESTATUS[@]}'),
    ("pipestatus-subshell", 'false; echo ${PIPESTATUS[@]}; (exit 3); echo ${PIPESTATUS[@]}'),
    ("pipestatus-unset", 'unset PIPESTATUS; true; echo ${PIPESTATUS[@]}'),
    # ---- errors that drop the command, not the shell --------------------------------
    ("discard-arith-line", 'echo a; echo $((1/0)); echo same-line\necho next $?'),
    ("discard-readonly", 'readonly r=1; r=2; echo same\necho next $?'),
    ("discard-in-function", 'f() { echo $((1/0)); echo infunc; }; f 2>/dev/null; echo after-f\necho next $?'),
    ("discard-assign", 'x=$((2/0)) ; echo s\necho n $?'),
    ("discard-loop", 'for i in 1 2; do echo $((i/0)); echo loop; done; echo afterloop\necho n $?'),
    ("readonly-prefix-assign", 'declare -r q=1; q=3 echo hi; echo s6\necho n6 $?'),
    ("arith-command-error", '((1/0)); echo same $?'),
    ("discard-in-subst", 'y=$(echo $((1/0)); echo b); echo "[$y] $?"'),
    ("discard-exit-trap", "trap 'echo exiting $?' EXIT; readonly ro=1; ro=2; echo \"st=$? ro=$ro\"\ntrue; echo $?"),
    ("arith-assign-non-variable", 'n=3; echo $(((-(-3) == n+=(010))))\necho next $?'),
    ("arith-ternary-assign", 'echo $((1 ? 20 : x+=2)); echo same\necho $?'),
    ("arith-compound-order", 'i=1; echo $(((i+=(++i))**2)); i=1;j=2; echo $((j+=(j-=(++i))))'),
    ("dollar-bracket-arith", 'echo $[1+2] "$[2*3]" $[ 4 - 1 ] x$[1]y; a=(1 2); echo ${a[1]} $[a[1]+1]'),
    ("cond-spans-lines", '[[ a == a\n]] && echo ok; [[\n -n x ]] && echo ok2'),
    ("length-with-operator", 'x=5; echo ${#x:1:3}; echo after'),
    ("last-arg", 'x=1; echo a b; echo "[$_]"; y=2; echo "[$_]"; f() { :; }; f p q; echo "[$_]"; (echo z); echo "[$_]"; ls /nonexist 2>/dev/null; echo "[$_]"; [[ x ]]; echo "[$_]"; for i in 1; do :; done; echo "[$_]"'),
    ("last-arg-loop", 'i=0; while [ $i -lt 3 ]; do echo "<$_>"; i=$((i+1)); echo "<$_>"; done; echo "<$_>"; while [ $i -lt 6 ]; do i=$((i+1)); done; echo "<$_>"; x=$(printf "%0300d" 7); for w in a $x b; do true $w; echo "${#_}"; true ]; echo "$_"; done; echo "<$_>"; y=1; echo "<$_>"'),
    ("exec-in-eval-function-source-stays", 'eval "exec 3>o3"; echo a >&3; f() { exec 4>o4; }; f; echo b >&4; echo "exec 5>o5" > s; . ./s; echo c >&5; exec 3>&- 4>&- 5>&-; cat o3 o4 o5; eval "exec 3>&-"; echo d >&3; echo $?'),
    ("literal-words-copies", 'for i in 1 2 3; do export A=$i B=lit; echo $A $B xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxy xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxz end; set -- one two; echo "$@"; readonly R$i=v; done; echo $R3; f() { echo "$#" "$1"; }; f a b c d e f g h i j k l m n o p q r s t u v w x y z xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'),
    ("function-recursion-990-deep", 'n=0; f() { n=$((n+1)); [ $n -lt 990 ] && f x y z; }; f; echo "$n $?"'),
    ("lineno-subshell-in-trap", 'for ((i=0; i<2; i++)); do trap \'echo "err:$?:$LINENO"\' ERR\n(exit 5)\necho done; done'),
    ("heredoc-opword-quotes", 's=ab; cat <<EOF\nline "${s:+"a"b}"\nEOF'),
    ("transform-Q", 'a=foo.tar.gz; b="it\'s"; echo ${a@Q} ${b@Q} "${e@Q}"'),
    ("assoc-empty-key-discards", 'declare -A m; m["$s"]="x y"\necho next $?'),
    # ---- arithmetic for, special variables, getopts ------------------------------
    ("arith-for-dollar", 'n=3; for ((i=0; i<$n; i++)); do echo $i; done'),
    ("arith-for-array-len", 'a=(1 2 3); for ((i=${#a[@]}-1; i>=0; i--)); do echo ${a[$i]}; done'),
    ("ostype", 'echo $OSTYPE'),
    ("uid-readonly", 'UID=5; echo $?'),
    ("seconds-from-start", 'echo $SECONDS'),
    ("getopts-local-optind-nested", 'f() { local OPTIND=1 opt; while getopts "xy" opt; do echo "opt: $opt"; [[ $opt = x ]] && f -y; done; }; f -x -y'),
    ("opword-assign-dq", "printf '[%s]' \"<${u='q r'}\"; echo \"[$u]\"; echo \"${v:=\"a b\"}\" \"$v\""),
    # ---- namerefs ------------------------------------------------------------------
    ("nameref-scalar", 'x=1; declare -n r=x; r=5; echo $x $r'),
    ("nameref-local-out-param", 'f() { local -n r=$1; r=5; }; f v; echo $v'),
    ("nameref-array", 'a=(x y); declare -n r=a; echo ${r[1]}; r[0]=z; echo ${a[@]}; r+=(w); echo ${#a[@]}'),
    ("nameref-array-param", 'f() { local -n arr=$1; arr+=(new); echo ${#arr[@]}; }; l=(1 2); f l; echo ${l[@]}'),
    ("fd-varname", 'exec {fd}>f1; echo $fd; echo hi >&$fd; exec {fd}>&-; cat f1'),
    ("fd-varname-two", 'exec {a}>f1 {b}>f2; echo $a $b; echo x >&$b; cat f2'),
    ("fd-varname-herestring", 'exec {in}<<<"data"; read -r l <&$in; echo $l'),
    ("fd-varname-not-redir", 'echo {x} {x}y'),
    # ---- traps --------------------------------------------------------------
    ("trap-err-status-line", 'trap \'echo "err:$?:$LINENO"\' ERR\necho a\nfalse\necho b'),
    ("trap-err-multiline-text", 'trap \'echo "e:$LINENO"\n echo "f:$LINENO"\' ERR\n\nfalse'),
    ("trap-err-not-in-subshells", "trap 'echo E' ERR; (false); echo a; { false; }; echo b; x=$(false); echo c; false & wait; echo d"),
    ("trap-err-not-in-functions", "trap 'echo E$?' ERR; h() { false; echo in-h; }; h; echo st=$?"),
    ("trap-err-contexts", "trap 'echo E$?' ERR; false || true; ! false; if false; then :; fi; while false; do :; done; false && true; true && false; echo z"),
    ("trap-err-function-status", "f() { return 3; }; trap 'echo E$?' ERR; f; echo $?"),
    ("trap-err-line-after-call", 'trap \'echo "E$? $LINENO"\' ERR\nf() {\n  false\n}\nf'),
    ("trap-err-pipeline", "trap 'echo E$?' ERR; false | true; true | false; echo x"),
    # ---- a variable named NAME[SUB] by printf -v, test -v, [[ -v ]] -----------------
    ("printf-v-bad-name", 'printf -v "a[" %s foo; echo $?; printf -v "a[x" %s foo; echo $?; printf -v 1a %s x; echo $?'),
    ("printf-v-bad-subscript", 'printf -v "a[]" %s foo; echo $?; printf -v "a[1]x" %s foo; echo $?; declare -p a'),
    ("printf-v-element", 'printf -v "a[2]" %s foo; declare -A m; printf -v "m[k y]" %d 7; declare -p a m'),
    ("test-v-element", "a=(1 2 3); test -v 'a[1]'; echo $?; test -v 'a[5]'; echo $?; test -v 'a[-1]'; echo $?"),
    ("test-v-array-zero", 'a=([1]=x); [[ -v a ]]; echo $?; test -v a; echo $?; test -v "a[@]"; echo $?; [[ -v a[@] ]]; echo $?; e=(); test -v "e[@]"; echo $?'),
    ("test-v-assoc", 'declare -A m=([k]=1); test -v "m[k]"; echo $?; test -v "m[j]"; echo $?; test -v m; echo $?; [[ -v m[k] ]]; echo $?; test -v "m[@]"; echo $?; m[@]=z; test -v "m[@]"; echo $?; s=1; test -v "s[@]"; echo $?'),
    ("test-v-scalar-forms", 'x=1; test -v "x[0]"; echo $?; test -v "x[1]"; echo $?; test -v 1x; echo $?; test -v "a["; echo $?; test -v RANDOM; echo $?; declare y; test -v y; echo $?'),
    # ---- getopts: a function's local OPTIND leaves the caller's parse as it was --------
    ("getopts-clustered-nested", 'f() { local OPTIND=1 opt; while getopts "xy" opt; do echo "opt: $opt"; [[ $opt = x ]] && f -y; done; }; f -xy'),
    ("getopts-clustered-nested-three", 'f() { local OPTIND=1 opt; while getopts "xyz" opt; do echo "opt: $opt"; [[ $opt = x ]] && f -yz; done; }; f -xyz'),
    ("getopts-optind-reset-mid-word", 'getopts xy o -xy; echo $o $OPTIND; OPTIND=1; getopts xy o -xy; echo $o $OPTIND; getopts xy o -xy; echo $o; getopts xy o -xy; echo $? $o $OPTIND'),
    # ---- errtrace / functrace, and where ERR fires ------------------------------------
    ("set-errtrace", "set -o errtrace; trap 'echo trapped' ERR; h() { false; echo in-h; }; h; echo st=$?"),
    ("set-E", "set -E; trap 'echo trapped' ERR; h() { false; echo in-h; }; h; echo st=$?"),
    ("set-E-subshells", "set -E; trap 'echo E' ERR; (false); x=$(false); echo \"[$x]\"; { false; echo x; } & wait"),
    ("set-T-return-trap", "set -T; trap 'echo ret' RETURN; f() { :; }; g() { f; }; g; set -o | grep trace; set +E; set +o | grep trace"),
    ("set-flags-letters", 'set -aefuxCET -o pipefail; echo $-; set +aefuxCET; echo $-'),
    ("err-not-for-job", "set -E; trap 'echo E' ERR; false & wait; echo $?; f() { false; }; f & wait"),
    ("err-not-for-pipe-element", "set -E; trap 'echo E$?' ERR; f() { false; }; f | cat; false | true; true | false; echo $(false)"),
    ("err-pipe-element-group", "set -E; trap 'echo E' ERR; true | { false; echo y; }; set -o pipefail; false | true; echo $?"),
    ("err-armed-at-start", "f() { trap 'echo E$?' ERR; return 3; }; f; echo $?; g() { trap 'echo G$?' ERR; (exit 4); }; g; echo $?"),
    ("err-armed-nested-function", "f() { g() { trap 'echo err:$?' ERR; false; echo after; return 1; }; g; }; f; f | cat"),
    ("err-armed-eval", "eval \"trap 'echo E' ERR; false\"; echo $?; eval false; echo $?"),
    # ---- shopt: all of bash's names, -o for set's options -------------------------------
    ("shopt-o-show", 'shopt -o errexit; echo $?; shopt -op errexit; echo $?; set -e; shopt -qo errexit; echo $?'),
    ("shopt-o-set", 'shopt -so pipefail; false | true; echo $?; shopt -uo pipefail; shopt -so; shopt -po; shopt -o nosuch; echo $?'),
    ("set-o-listing", 'set -o; set +o; set -o keyword; set -o posix; echo $?'),
    ("shopt-listing", 'shopt; shopt -p; shopt -s; shopt -u | head -5'),
    ("shopt-inert-names", 'shopt -s extdebug; shopt -u globskipdots; shopt -q globskipdots; echo $?; shopt -p extdebug globskipdots sourcepath'),
    ("shopt-xpg-echo", 'shopt -s xpg_echo; echo "a\\tb"; echo -E "a\\tb"; shopt -u xpg_echo; echo "a\\tb"'),
    ("shopt-bad-name", 'shopt nosuch extglob; echo $?; shopt -s nosuch; echo $?; shopt -pq extglob; echo $?'),
    # ---- arrays' substrings, replacing in "", here-document words, doubled signs --------
    ("arr-substr-sparse", 'a=([0]=a [5]=b [6]=c); echo ${a[@]:5}; echo ${a[@]: -1}; echo ${a[@]: -2}; echo "[${a[@]: -9}]"; echo ${a[@]:2:1}; unset "a[6]"; echo ${a[@]: -1}'),
    ("assoc-substr-counts-from-one", 'declare -A m=([k]=v [x]=y [z]=w); echo "${m[@]}"; echo "${m[@]:0}"; echo "${m[@]:1}"; echo "${m[@]:2}"; echo "${m[@]:1:1}"; echo "${m[@]: -1}"'),
    ("positional-substr", 'set -- a b c; echo ${@:1}; echo ${@: -1}; echo "[${@: -5}]"; echo ${*:2:1}; b=(1 2 3); echo ${b[@]:1:1} ${b[@]: -2:1}'),
    ("repl-empty-value", 'x=; echo "[${x//*/r}]" "[${x/#/r}]" "[${x/%/r}]" "[${x//?/r}]" "[${x/*/r}]"; echo "<${u//*//-}"; a=("" b); echo "${a[@]//*/z}"'),
    ("heredoc-assign-word-quotes", 'cat <<EOF\nA ${u=\'q r\'} ${v:-\'x\'} ${w:-"y"} ${k:="a b"}\nEOF\necho "[${u2=\'q r\'}]" "$u2"'),
    ("arith-doubled-signs", 'n=3; echo $((3+++n)) $n; echo $((n+++n)) $n; echo $((3++ +n)) $((1+++ +n)) $((++ n)) $((3---n)) $n'),
    ("arith-doubled-sign-errors", 'n=3; echo $((3--n)); echo $((3++n)); echo next'),
    ("arith-command-paren-after-shift", 'j=2; ((0x1f<<($j)**1)); echo $?; ((1<<($j))); echo $?; for ((i=0; i<($j); i++)); do echo $i; done; ((x=1>($j))); echo $x'),
    ("trap-err-line-backquote", 'trap \'echo "e:$LINENO"\' ERR\necho\n\n`false`; echo $LINENO\nfalse'),
    ("trap-keeps-pipestatus", "trap 'echo t; true | true | true' ERR; false | true | false; echo ${PIPESTATUS[@]}; f() { trap 'true|true' RETURN; false | true; }; f; echo ${PIPESTATUS[@]}"),
    # ---- break/continue counts ---------------------------------------------------------
    ("break-not-a-number-ends", 'x=abc; for i in 1 2; do break $x; done; echo after $?'),
    ("continue-not-a-number-in-function", 'f() { for i in 1; do continue 1x; done; echo in; }; f 2>/dev/null; echo after $?'),
    ("break-two-counts-ends", 'for i in 1 2; do break 1 2; done; echo after $?'),
    ("break-zero-leaves-all", 'for i in 1 2 3; do for j in 1 2; do break 0; done; echo $i; done; echo $?; for i in 1 2; do break -1; done; echo after $?'),
    ("break-in-subshell-no-loop", 'for i in 1 2; do (break); echo x; done; for i in 1 2; do { break; } & wait; echo y; done; for i in 1 2; do echo | break; echo z$?; done'),
    # ---- read: the last name's rest ----------------------------------------------------
    ("read-ifs-colon-space-rest", 'echo "::" | ( IFS=": " read x y; echo "($x)($y)" ); for l in "a:b:" "a::" "a: :" "a:b: " "a:b :" "a:b::"; do IFS=": " read x y <<< "$l"; echo "($x)($y)"; done'),
    ("read-ifs-colon-rest", 'for l in "a:b:" "a::" "a: :" "a:b: " " : : " "a :b: :"; do IFS=: read x y <<< "$l"; echo "($x)($y)"; IFS=: read x y z <<< "$l"; echo "($x)($y)($z)"; done'),
    # ---- UTF-8: ? is one character ----------------------------------------------------
    ("utf8-case-any", 's=μ; case $s in ?) echo one;; *) echo many;; esac; [[ μx == ?x ]] && echo y; [[ μx == [μ]x ]] && echo br'),
    ("utf8-trim-replace", 's=μxμ; echo ${s#?} ${s%?} ${s##*μ} ${s%%μ*} ${s/?/Z} ${s//?/Z} ${s/#?/Z} ${s/%?/Z}; a=(μa bμ); echo ${a[@]#?}'),
    ("utf8-glob-any", 'touch μ ab; echo ?'),
    # ---- the DEBUG trap: before each simple command, (( )), [[ ]], for round, case ------
    ("trap-debug-simple", 'trap \'echo "d[$BASH_COMMAND]$?"\' DEBUG; false; echo a; x=1; ((x++)); [[ $x == 2 ]]; trap - DEBUG; echo end'),
    ("trap-debug-compound", 'trap \'echo "d[$BASH_COMMAND]$LINENO"\' DEBUG; for i in 1 "$x"; do :; done\nfor ((i=0;i<2;i++)); do :; done; case x in x) true;; esac; if true; then :; fi; { echo g; }'),
    ("trap-debug-not-inherited", "trap 'echo \"d[$BASH_COMMAND]\"' DEBUG; f() { echo inf; }; f; (echo sub); y=$(echo cs); echo $y | cat; f | cat; echo x | (read v; echo $v)"),
    ("trap-debug-functrace", "trap 'echo \"d[$BASH_COMMAND]\"' DEBUG; set -T; f() { echo inf; }; f; (echo sub); g() { return 3; }; g; echo $?"),
    ("trap-debug-set-in-function", "f() { trap 'echo FD' DEBUG; echo in; }; f; echo out; trap -p DEBUG; trap - DEBUG; trap -p; echo none"),
    ("trap-debug-before-err", 'trap "echo E" ERR; trap \'echo "d[$BASH_COMMAND]$?"\' DEBUG; false; echo $?; df() { return 3; }; trap \'echo "d$?"\' DEBUG; df; echo $?; set -e; false; echo no'),
    ("trap-debug-exit", "trap 'echo X; exit 4' DEBUG; echo no; echo never"),
    # ---- namerefs to an array's element -------------------------------------------------
    ("nameref-assoc-elem", 'declare -A A=([k]=1); declare -n r="A[k]"; echo "$r"; r=5; echo "${A[k]}"; r+=6; declare -p A r'),
    ("nameref-indexed-elem", 'a=(x y z); declare -n e="a[1]"; echo $e ${e^^} "${e:-u}"; e=Y; echo "${a[@]}"; declare -n q=a[2]; q+=Q; echo ${a[2]}; read e <<< "from read"; declare -p a e'),
    ("nameref-local-elem", 'f() { local -n ref=$1; ref=7; echo "[$ref]"; }; a=(x y); f "a[1]"; declare -A m; f "m[key]"; declare -p a m'),
    ("nameref-declare-p", 'b=1; declare -n br=b; declare -p br; br=2; echo $b; declare -n c; declare -p c'),
    # ---- builtin: the shell's own command past a function of its name ---------------------
    ("builtin-wrapper", 'echo() { builtin echo "[$*]"; }; echo x; cd() { builtin cd "$@" && echo moved; }; cd /; pwd; builtin echo hi; builtin; echo $?; type -t builtin'),
    ("builtin-not-builtin", 'builtin nosuch; echo $?; builtin cat </dev/null; echo $?; builtin -- true; echo $?'),
    # ---- caller: where the function was called from -----------------------------------------
    ("caller-frames", 'f() { caller; caller 0; echo $?; }\ng() {\n f; caller 0; caller 1; echo $?\n}\ng\nf\nh() { g; }; h; caller; echo $?'),
    ("caller-bad-operand", 'f() { caller 1 2; echo $?; caller -1 2>/dev/null; echo $?; caller x 2>/dev/null; echo $?; }; f; g() { f; }; g'),
    # ---- lastpipe: the last element of a pipeline runs in the shell ---------------------------
    ("lastpipe-read", 'shopt -s lastpipe; echo hi | read x; echo "[$x]"; printf "a\\nb\\n" | while read l; do last=$l; done; echo $last; seq 3 | mapfile -t arr; echo ${#arr[@]}; yes | head -1'),
    ("lastpipe-status", 'shopt -s lastpipe; false | true; echo $? ${PIPESTATUS[@]}; true | false; echo $? ${PIPESTATUS[@]}; set -o pipefail; false | true; echo $?; echo 7 | { read v; (exit $v); }; echo $? $v; set -e; trap "echo E" ERR; echo x | false; echo no'),
    ("lastpipe-control", 'shopt -s lastpipe; for i in 1 2 3; do echo $i | while read l; do [ $l = 2 ] && break 2; echo $l; done; done; echo end; f() { echo r | { read v; return 4; }; echo not; }; f; echo $? $v; echo | exit 3; echo never'),
    # ---- mapfile -C: the callback every quantum lines -----------------------------------------
    ("mapfile-callback", 'mapfile -t -C "printf \\"<%s|%s>\\" " -c 2 b < <(seq 5); echo; echo "${b[@]}"; cb() { echo "at $1 [$2] have ${#c[@]}"; }; mapfile -t -C cb -c 3 c < <(seq 7); mapfile -C cb -c 1 -O 4 c <<< "it\'s"; mapfile -t -C cb d < <(seq 5001); echo ${#d[@]}; mapfile -c 0 -C cb e <<< y; echo $?'),
    # ---- declare -p: a value with a control character in $'…' -------------------------------
    ("declare-p-control-chars", "b='x\ty'; declare -p b; a=($'l\\n' \"q's\" $'\\e[0m' $'x\\001y'); declare -p a; declare -A m=([k]=$'a\\nb\\\\c'); declare -p m; export E=$'1\\n2'; declare -p E"),
    # ---- $LINENO inside `…`: counted on from the closing quote's line -------------------------
    ("lineno-backquote", 'echo a\nx=`echo $LINENO`; echo $x\necho `echo $LINENO` $(echo $LINENO)\ny=`\n\necho $LINENO`; echo $y\nf() {\n echo `echo $LINENO`\n}\nf; echo $LINENO'),
    # ---- a redirection's fatal expansion: a program's ends the command, a builtin's the shell --
    ("redir-expansion-program", 'cat <<< "${u:?}"; echo after $?; cat < "${u:?}"; echo after $?; set -u; cat <<< "$nope"; echo $?; f() { cat <<< "${v:?}"; }; f 2>/dev/null; echo after $?'),
    ("redir-expansion-heredoc", 'cat <<EOF\n${u:?}\nEOF\necho after $?'),
    ("redir-expansion-builtin-ends", 'echo <<< "${u:?}"; echo never'),
    ("redir-expansion-compound-ends", 'for i in 1; do :; done < "${u:?}"; echo never'),
    # ---- lookups pass aliases by while expand_aliases is off (bash -c's default) ------
    ("alias-lookup-expansion-off", "alias ll='ls -l'; type ll; echo $?; command -v ll; echo $?; type -t ll; echo $?; alias; shopt -s expand_aliases; type ll; command -v ll"),
    # ---- exec N>&- closes the descriptor; a command's redirections put back only theirs (#29)
    ("exec-close-pipe-end", 'exec 7> >(wc -c > n); echo abc >&7; exec 7>&-; wait $!; cat n'),
    ("exec-close-in-function-pipe-end",
     'f() { exec 6>&-; }; exec 6> >(tr a b > n); echo aa >&6; f >/dev/null; wait $!; cat n'),
    ("exec-close-named-twice", 'exec {fd}>&1; exec {fd}>&-; echo x {fd}>&-; echo $?; fd=99; echo y {fd}>&-; echo $?'),
    ("exec-close-named-unset", 'unset fd; echo x {fd}>&-; echo $?; fd=-1; echo x {fd}>&-; echo $?'),
    ("exec-close-named-for-one-command", 'exec {fd}>f; echo x {fd}>&-; echo y >&$fd; cat f'),
    ("exec-in-function-redirected-stays", 'f() { exec 8>&1; }; f >log; echo later >&8; cat log'),
    ("exec-close-in-group-stays", 'exec 4<&0; { exec 4<&-; } 6>g; cat <&4; echo $?'),
    ("exec-high-in-redirected-function",
     'f() { exec 12>out; echo in >&12; }; f 2>/dev/null; echo after >&12; cat out'),
    ("exec-failed-puts-back", 'exec 4>f; exec 4>&- 3>/no/x; echo hi >&4; echo $?; cat f'),
    # ---- the seeds of the 140000..199999 run, reduced (#29) ------------------------------
    ("repl-expanded-backslash", "b='a\\b'; echo \"<${b/*/*/$b}\" ${b/a/$b}; z='1\\\\2'; w='\\q\\&\\'; "
     "x=abc; echo \"${x/b/$z}\" ${x/b/$w} \"${x/b/\\q}\" ${x/b/\\\\}"),
    ("last-arg-after-dropped-line", 'j=2; declare -A m; g() { echo "$# $1"; m[$a]=""; }; g $((j)) > fo 2>/dev/null; cat fo\necho "$_"'),
    ("pipestatus-after-cond-arith", 'true | true; [[ -n x ]]; echo ${#PIPESTATUS[@]}; true | false; (( 0 )); '
     'echo ${PIPESTATUS[@]}; true | false; if [[ a = b ]]; then :; fi; echo ${PIPESTATUS[@]}'),
    ("lineno-same-subst-two-lines", 'y=$(echo $LINENO)\ny=$(echo $LINENO); echo $y\n'
     'set -T; trap \'echo "d$LINENO:$?"\' DEBUG; y=$(echo $LINENO); echo $y; trap - DEBUG'),
    ("cat-input-is-output", 'echo a > f; cat f >> f; echo $?; cat f; cat - f < f >> f; echo $?; : > e; cat e >> e; '
     'echo $?; f() { cat fo; }; echo x > fo; f > fo; echo $?; cat fo | wc -c'),
    # ---- smaller divergences (#29) -------------------------------------------------------
    ("ifs-multibyte-split", 'IFS=μ; x="aμbμc"; set -- $x; echo $# "$1" "$2"; echo "$*"; read -r a b <<< "1μ2μ3"; echo "[$a][$b]"'),
    ("ifs-multibyte-mixed", 'IFS="μ:"; x="aμb:c"; for w in $x; do echo "<$w>"; done; arr=(a b); echo "${arr[*]}"; '
     'read -r p q r <<< "xμy:zμ"; echo "[$p][$q][$r]"; y="νμν"; echo $y; IFS=é; read -ra A <<< "cafébé"; declare -p A'),
    ("temp-assign-unset-reveals", 'f() { unset x; echo "in:${x-unset}"; }; x=g; x=t f; echo "out:${x-unset}"; '
     'h() { unset y; echo "in:${y-unset}"; y=new; }; y=t h; echo "out:${y-unset}"; '
     'g() { unset z; }; k() { g; echo "in:${z-unset}"; }; z=gl; z=t k; echo "out:${z-unset}"'),
    ("brace-seq-with-inner-list", 'echo {1..{3,5}} {a..{b,c}} {1..2{a,b}} {a{b,c}..d} {1..{a..c}} {1..{x}} {x{a,b}..}; '
     "echo {a}b,c} {1..x}y{a,b} {1..'{a,b}'} {a{b,c}}"),
    ("unset-elem-messages", 'b=(1 2); unset "b[-5]"; echo $?; unset "b[-2]"; declare -p b; unset "b[-2]"; echo $?; '
     'x=1; unset "x[1]"; echo $? ${x-u}; unset "x[-1]"; echo $?; unset "x[0]"; echo $? ${x-u}; unset "c[x"; echo $?'),
    ("assoc-keys-printed-as-bash", 'declare -A A; for k in a=b --f=v "a~b" "~a" "a#" "#a" a=~b a:~b "=a" μ "a b" "a*b" $\'\\001\'; '
     'do A["$k"]=v; done; declare -p A'),
    # ---- what a redirection replaced is at the lowest free number from 10 meanwhile, as bash's copy
    ("exec-10-in-redirected-function", 'f() { echo "A"; exec 10>rf4; echo hi >&10; cat rf4; }; f > fo; cat fo; echo --; cat rf4'),
    ("copy-of-stdout-at-10", 'f() { echo x >&10; }; f > fo; echo $?; cat fo; { echo grp >&10; } > fo; cat fo; '
     'echo x >&10; echo $?'),
    ("copies-at-10-and-11", 'f() { echo in >&10; echo in11 >&11; }; f >a 2>b; echo $?; cat a; '
     'g() { exec {n}>h; echo $n; }; g > fo; cat fo; exec 3>&1; k() { echo x >&3; echo y >&10; }; k 3>g >i; cat g i'),
    ("glob-keeps-slashes", 'mkdir -p d/e; touch d/x d/e/y; echo d//* d///e//* d/*// ./d//x* .//d/* //us* //b*/; '
     'b="*"; echo ${b/#//.//$b} | head -c 40'),
    ("globstar-no-empty-match", 'mkdir -p d/e; touch d/x d/e/y; shopt -s globstar; echo **/y d/**/ **; echo **/ d/** ./**; '
     'echo d//**; echo d/**/y **/e/*'),
    ("last-arg-after-unset-element", 'arr=(a b); unset arr[0]; echo "$_"; unset "arr[1]"; echo "$_"; declare -A m; '
     'unset "m[k]"; echo "$_"; unset -v "arr[0]" b; echo $_; unset "c[x"; echo $_; unset() { :; }; unset a[1]; echo $_'),
    ("last-arg-after-exec-redirections", 'exec {fd}>fa; echo $fd; exec {fd}>&-; echo "$_"; echo x; exec 3>f; echo $_'),
    ("getopts-unset-optind", 'getopts xy o -xy; echo $o; unset OPTIND; getopts xy o -xy; echo $o $OPTIND'),
]


@pytest.mark.skipif(not BASH, reason="bash not installed")
@table_cases("text", CASES)
def test_like_bash_idiom(text, tmp_path):
    like_bash(text, tmp_path)


def test_trap_on_signal_ignored_at_entry_is_a_no_op(tmp_path):
    """bash started with SIGINT ignored lists it as trapped to '' and
    neither traps nor resets it; box-shell -c, started so, does the same."""
    import signal
    import subprocess
    text = ('trap "echo got" INT; trap "echo t" TERM; kill -INT $$; echo after; trap; '
            'trap - INT; trap INT; trap -p INT; echo end')
    out = []
    for argv in ([str(BOX_SHELL), "-c", text], [BASH, "-c", text]):
        p = subprocess.run(argv, cwd=tmp_path, capture_output=True, timeout=30, stdin=subprocess.DEVNULL,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        out.append((p.stdout, p.returncode))
    assert out[0] == out[1]
    assert b"trap -- '' SIGINT" in out[0][0]


def test_getopts_clustered_nested_reads_no_garbage(tmp_path):
    """A nested getopts on `-xy` read past its word (a
    stale position in the cluster): no "illegal option" of a byte the
    arguments never held.  (That the outer loop then starts over is
    getopts.c's own remembered OPTIND, for shell/commands/.)"""
    text = ('n=0; f() { local OPTIND=1 opt; while getopts "xy" opt; do echo "opt: $opt"; '
            '[[ $opt = x ]] && (( n++ < 3 )) && f -y; done; }; f -xy')
    out, err, _ = _run([str(BOX_SHELL), "-c", text], tmp_path)
    assert b"illegal option" not in err
    assert out.startswith(b"opt: x\nopt: y\n")
