"""Divergences from GNU bash that a public case-file corpus found
(tests/differential/spec_cases.py run on it), one case each, written here in
our own words and run as test_shell_bash.py runs its cases (box-shell -c and
bash -c in twin directories; stdout, stderr with bash's prefix forgiven, and
status compared).
"""
from test_shell_bash import bash_tables

# bash's syntax errors quote the line and its errors inside a function
# name the place as "environment": compared by stdout and status only
STATUS_CASES = [
    # ---- printf %(…)T takes a width and a precision, and 128 bytes at most --
    ("printf-time-width", 'export TZ=UTC; printf "[%10.5(%Y-%m-%d)T][%-8(%H:%M)T][%.2(%Y)T]\\n" 1557978599 0 0'),
    ("printf-time-long", 'export TZ=UTC; f=$(printf "%%Y%.0s" {1..32}); printf "%($f)T" 0 | wc -c; printf "%(${f#%Y})T" 0 | wc -c'),
    # ---- a builtin's NAME[KEY] argument: the key expanded as bash's ---------
    ("unset-assoc-key-expanded", 'declare -A A=([K]=v ["x y"]=w [z]=1); unset -v \'A["K"]\'; k="x y"; unset "A[$k]"; unset \'A[$(echo z)]\'; echo ${#A[@]}'),
    ("printf-v-assoc-key-expanded", 'declare -A A=([K]=v); printf -v \'A["K"]\' /%s/ 2; k=K; printf -v \'A[$k]\' %s-x "${A[K]}"; declare -p A'),
    ("read-assoc-key-expanded", 'declare -A A; k=b; read \'A[$k]\' <<< 3; declare -p A'),
    ("indexed-key-arith-expanded", 'a=(1 2 3); i=1; unset \'a[$i]\'; printf -v \'a[$i+2]\' %s x; read \'a[$i]\' <<< y; declare -p a'),
    # ---- declare -p's relatives: -pn filters, local -p, readonly -p NAME ----
    ("declare-p-filters", 'v1=1; readonly v2=2; export v3=3; declare -n v4=v1; f() { local v5=5; declare -pn | grep " v"; declare -pr | grep " v"; declare -n | grep " v"; }; f'),
    ("local-p-lists-locals", 'g=1; f() { local b=2 a; local -p; echo st=$?; }; f'),
    ("local-p-own-only", 'v1=1; f() { local v5=5; local -p v0 v1 v5; echo st=$?; }; f'),
    ("readonly-export-p-with-names-mark", 'v1=1; f() { local v5=5; readonly -p v1 v5; echo st=$?; export -p v5; declare -p v1 v5; }; f'),
    # ---- test -v NAME[KEY]: the key expanded as bash's ----------------------
    ("test-v-key-expanded", 'typeset -A A=([empty]="" [k]=v ["x y"]=1); for key in empty k none "x y"; do test -v "A[\\$key]"; echo $key=$?; done; a=(1 "" 3); i=1; test -v \'a[$i]\'; echo $?; test -v "a[i+1]"; echo $?'),
    # ---- ${!prefix*} and ${!a[*]} unquoted are joined, then split -----------
    ("names-star-joined", 'p_a=1 p_b=2; declare -A A=([x y]=1 [z]=2); a=(5 6 7); IFS=""; printf "<%s>" ${!p_@} ${!p_*} "${!p_*}" ${!a[@]} ${!a[*]} ${!A[*]} ${!nomatch*}; echo; IFS=:; printf "<%s>" ${!p_*} "${!p_*}" ${!A[*]}; echo; unset IFS; printf "<%s>" ${!p_*} ${!A[*]} "${!A[*]}"; echo'),
    # ---- `local` lists the function's locals; declare lists a reference's name
    ("local-lists-locals", 'a=1; f() { local zz=5 m; local -n q=a; local -a arr=(1 2); local; g() { local; local z=1; local; }; g; }; f'),
    ("declare-lists-reference-name", 'a=1; declare -n r=a; f() { local -n q=a; declare | grep -E "^(r|q)="; }; f'),
    # ---- an alias's name may hold ~ * { } , as bash's; quoted, it is none ---
    ("alias-punctuation", 'shopt -s expand_aliases\nalias e_+.~x=echo\nalias "ls*=echo star"\nalias "{a,b}=echo br"\ne_+.~x X\nls* 1\n{a,b} 2\n"e_+.~x" q\n\\e_+.~x q\necho end'),
    # ---- an indirection to nothing has no attributes --------------------------
    ("indirect-attr-of-nothing", 'declare -A A=(["x"]=y); echo x=${!A[@]@a} invalid=${!A@a}; a=(); r=a; echo "[${!r@a}]"; declare -i n=1; m=n; echo "[${!m@a}]"'),
    # ---- job specs: %% %+ %- %WORD %?WORD ----------------------------------
    # (each job still runs when it is named: bash drops a finished one)
    ("job-specs", 'sleep 2 & kill -15 %%; echo kill=$?; wait %%; echo w=$?; sleep 1 & kill %sleep; echo k=$?; wait %sle; echo s=$?; kill %nosuch; echo n=$?'),
    ("job-spec-previous", 'sleep 3 & sleep 3 & kill -9 %-; wait %-; echo p=$?; kill %+; wait %+; echo c=$?'),
    # ---- history -5 is an unknown option ------------------------------------
    ("history-negative-count", 'history; echo st=$?; history +5; echo st=$?; history -5; echo st=$?'),
    # ---- an alias after leading redirections and assignments ----------------
    ("alias-after-redirection", 'shopt -s expand_aliases\nalias e_=echo\n>a1 e_ 1\ne_ >a2 2\n>b1 >b2 e_ 3\ncat a1 a2 b2'),
    ("alias-after-assignments", 'shopt -s expand_aliases\nalias e_=echo\nx=1 e_ D\n>c1 x=1 y=2 e_ F\nx=1 >c2 e_ B\nx=1 >c3 y=2 e_ G\ncat c1'),
    # ---- {NAME}>… outlives its command (bash without varredir_close) -------
    ("varredir-persists", 'echo x {a}>/dev/null; echo $a; echo y {b}>/dev/null; echo $b; echo hi >&$a; echo z {a}>&-; echo w {c}>/dev/null; echo $c'),
    ("varredir-on-function-and-group", 'f() { echo in; }; f {d}>&1; echo $d; echo q >&$d; { echo g; } {e}>/dev/null; echo $e; exec {d}>&- {e}>&-; echo x {g}>/dev/null; echo $g'),
    # ---- "${unset[@]@a}" is no word; an empty array keeps its attributes ----
    ("attr-op-of-unset-list", 'declare -a e; declare -A E; declare -i n; printf "<%s>" "${u@a}" "${u[@]@a}" "${e[@]@a}" "${e@a}" "${E[@]@a}" "${n[@]@a}" "${u[*]@a}"; echo'),
    # ---- a slice's offset may hold ?: with colons of its own -----------------
    ("slice-ternary-offset", 's=abcdef; echo ${s: 0 < 1 ? 2 : 0 : 1} ${s:(1?2:0):2} ${s:1?3:0} ${s:0<1?1:0:0<1?3:1}'),
    ("slice-ternary-array", 'a=(a b c d); echo ${a[@]:1?2:0} ${a[@]:1:1?1:0}; echo ${s:1?2}; echo after'),
    # ---- $LINENO in for (( )) is the header's line each time round ----------
    ("lineno-arith-for", 'echo one\nfor (( i = 0; i < $LINENO; i++ )); do\n  echo $i\ndone\necho $LINENO'),
    # ---- test -o and [[ -o ]] ask set -o's options --------------------------
    ("test-o-option", 'test -o nounset; echo $?; set -u; test -o nounset; echo $?; [ -o errexit ]; echo $?'),
    ("cond-o-option", 'set -o pipefail; [[ -o pipefail ]]; echo $?; [[ -o bogus ]]; echo $?; set +o pipefail; [[ ! -o pipefail ]]; echo $?'),
    ("test-o-unknown", 'test -o no_such_option; echo $?; shopt -s extglob; [[ -o extglob ]]; echo $?'),
    # ---- a construct's body holds at least one command ----------------------
    ("empty-do", 'while false; do\ndone\necho not-reached'),
    ("empty-do-one-line", 'for i in a; do done; echo not-reached'),
    ("empty-then", 'if true; then\nfi\necho not-reached'),
    ("empty-else", 'if false; then :; else fi; echo not-reached'),
    ("empty-group", 'g() { }; echo not-reached'),
    ("empty-subshell", '( ); echo not-reached'),
    ("empty-arith-for", 'for ((i=0; i<1; i++)); do done'),
    ("empty-case-item-is-fine", 'case a in a) ;; b) ;; esac; echo fine $?'),
    ("empty-substitution-is-fine", 'x=$( ); echo "[$x]" $?'),
    ("list-word-in-for", 'for w in a=(); do echo w=$w; done; echo not-reached'),
    ("list-word-in-case", 'case k=(v) in *) echo never;; esac; echo not-reached'),
    ("assignment-like-words-elsewhere-are-fine", 'for w in a= b=c "d=(e)"; do echo $w; done; case b=c in b=c) echo m;; esac'),
    ("return-too-many", 'f() { return 3 4; }; f; echo not-reached'),
    ("nounset-errexit-in-function", 'set -eu; f() { echo $missing; }; f; echo not-reached'),
    ("local-of-readonly", 'readonly cap=5; f() { local cap=6 other=1; echo "in $cap $other"; }; f; echo out $cap'),
    ("local-of-own-readonly", 'f() { local -r lim=1; local lim=2; echo $lim; }; f'),
    # ---- a sourced file's syntax error --------------------------------------
    ("source-syntax-error", "printf 'echo first\\necho <\\necho never\\n' > bad.sh; . ./bad.sh; echo st=$?"),
    ("source-unclosed", "printf 'echo a\\nwhile true\\n' > open.sh; source ./open.sh; echo st=$?"),
]

CASES = [
    # ---- exit and return with more than one operand end the shell -----------
    ("exit-too-many", 'exit 3 4; echo not-reached'),
    ("exit-too-many-in-subshell", '(exit 3 4; echo not-reached); echo after $?'),
    ("return-too-many-top", 'return 5 6; echo not-reached'),
    ("exit-word-then-more", 'exit x y; echo not-reached'),
    # ---- set -u's error under set -e ends the shell with 1 ------------------
    ("nounset-errexit", 'set -eu\necho "[$missing]"\necho not-reached'),
    ("nounset-errexit-in-if", 'set -eu; if echo $missing; then :; fi; echo not-reached'),
    ("nounset-alone-127", 'set -u; echo $missing; echo not-reached'),
    ("question-errexit", 'set -e; : ${missing:?gone}; echo not-reached'),
    # ---- an alias used inside $( ) after its definition ---------------------
    ("alias-in-substitution", 'shopt -s expand_aliases\nalias say="echo said"\necho $(say it)\n( say sub )'),
    ("alias-blank-in-substitution", 'shopt -s expand_aliases\nalias lb="echo [ "\nalias w=word\necho $(lb w)'),
    # ---- a readonly variable assigned under set -e ends the shell ------------
    ("readonly-errexit-statement", 'set -e\nreadonly lock=1\nlock=2\necho not-reached'),
    ("readonly-errexit-in-condition", 'set -e\nreadonly lock=1\nif lock=3; then :; fi\necho not-reached'),
    ("readonly-errexit-for-and-read", 'set -e\nreadonly v=1\n(for v in a; do :; done; echo no) ; echo sub=$?\nread v <<< z\necho not-reached'),
    ("readonly-errexit-builtin-goes-on", 'set -e\nreadonly lock=1\ndeclare lock=2 || echo handled\necho after'),
    ("readonly-no-errexit-goes-on", 'readonly lock=1\nlock=2\necho next $?'),
    # ---- wait -n: the first job to end ---------------------------------------
    ("wait-n-first-to-end", '{ sleep 0.3; exit 4; } & { sleep 0.05; exit 6; } & wait -n; echo first=$?; wait -n; echo second=$?; wait -n; echo none=$?'),
    ("wait-n-named", '{ sleep 0.3; exit 4; } & a=$!; { sleep 0.05; exit 6; } & b=$!; sleep 0.5 & wait -n $a $b; echo $?'),
    ("wait-n-nothing-running", 'wait -n; echo $?; true & sleep 0.2; wait -n; echo $?'),
    ("wait-bad-operands", 'wait nonsense; echo $?; wait %4; echo $?; wait 1234567; echo $?; wait -n junk; echo $?'),
    # ---- local of a name readonly where it is seen ----------------------------
    # ---- a function name with quoting or an expansion: not defined ------------
    ("function-name-quoted", 'v=x; $v-run() { echo never; }; echo st=$?; q"t"() { :; }; echo st=$?; function s\\l { :; }; echo st=$?; dash-ok.x() { echo fine; }; dash-ok.x'),
    # ---- ${v@A}, ${v@K}, ${v@k} of one value ----------------------------------
    ("at-A-K-k-scalars", 'w=word; e=; declare -ix num=7; arr=(p "q r"); s="it\'s"; echo ${w@A} ${e@A} ${none@A}. ${num@A} ${arr[1]@A} ${arr@A}; echo ${w@K} ${e@k} ${s@K} ${arr[1]@k}'),
    # ---- $HOSTNAME is hostname's, $PPID the parent's ---------------------------
    ("hostname-and-ppid", 'test "$HOSTNAME" = "$(hostname)" && echo same-host; test "$PPID" -gt 1 && echo has-parent; sh -c \'echo $PPID\' > pp; test "$(cat pp)" = $$ && echo child-sees-us'),
    # ---- unset of a name no variable can have: a function's, silently --------
    ("unset-odd-name", 'unset %; echo $?; unset 2x "p q" "7[1]"; echo $?; unset -v %; echo $?; h-i() { echo hi; }; unset h-i; h-i; echo $?'),
    # ---- umask's options, -p and its range ------------------------------------
    ("umask-p-and-range", 'umask -p; umask -pS; umask -- 027; umask; umask 01000; echo $?; umask 12345; echo $?; umask -q; echo $?; umask -w; echo $?; umask 022'),
    # ---- a backslash-newline inside $(( )) and (( )) continues the line ------
    ("arith-line-continuation", 'echo $((\n2 *\n3 + \\\n4\n)); (( n = 5 - \\\n 1 )); echo $n; for ((i=0; i<\\\n2; i++)); do echo i$i; done'),
    ("arith-backslash-otherwise-an-error", 'echo $(( 1 \\+ 2 )); echo st=$?'),
    # ---- 1>&word names a file, as >&word does --------------------------------
    ("dup-out-one-to-file", 'echo kept 1>&saved.txt; echo st=$?; ls /no/such/dir 1>&both.txt; cat saved.txt; grep -c such both.txt; echo x 2>&not-a-fd; echo st=$?'),
    # ---- traps --------------------------------------------------------------
    ("trap-kill-kept-not-run", 'trap "echo never" 9 STOP; echo st=$?; trap -p KILL SIGSTOP; trap - KILL; trap -p'),
    ("trap-one-word-usage", 'trap nonsignal; echo st=$?; trap -- alsonot; echo st=$?'),
    ("err-trap-sees-pipestatus", "trap 'echo \"err [${PIPESTATUS[*]}] $?\"' ERR; false; true | false; echo x | grep -q y | cat; echo after \"[${PIPESTATUS[*]}]\""),
    ("err-trap-pipefail-pipestatus", "set -o pipefail; t() { echo \"in [${PIPESTATUS[*]}]\"; true | true; }; trap t ERR; false | true | true; echo \"out [${PIPESTATUS[*]}]\""),
    # ---- printf's integers past their range ----------------------------------
    ("printf-unsigned-range", "printf '%u|' 18446744073709551615 18446744073709551616 -1 -18446744073709551615; echo st=$?"),
    ("printf-signed-range", "printf '%d|%i|' 9223372036854775808 -9223372036854775809 99999999999999999999 7; echo st=$?"),
    ("printf-hex-octal-range", "printf '%x %X %o\\n' 18446744073709551615 -2 -1; echo st=$?"),
    # ---- an alias ending in a blank: the word after its text is looked up ----
    ("alias-blank-chains", 'shopt -s expand_aliases\nalias lb="echo [ " w=word\nlb w\nalias hi="echo hi " p="!!"\nhi p\nalias hi="echo hi"\nhi p'),
    ("alias-blank-two-deep", 'shopt -s expand_aliases\nalias a1="a2 " a2="echo two " a3=x\na1 a3 a3'),
]


test_like_bash_spec, test_status_like_bash_spec = bash_tables(CASES, STATUS_CASES)
