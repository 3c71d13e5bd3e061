### gen-796-program-redir-assigns
# bash expands a program's redirections in the child it forks: the
# assignments they make are gone after it, a builtin's stay
cat <<< "${u=a\ b}"; echo "[${u-unset}]"
true <<< $((j=5)); echo "[$j]"
i=0; cat <<< $((i++)) <<< $((i++)); echo "$i"
a=(1 2); cat <<< "${a[3]=z}" >/dev/null; echo "${#a[@]}"
cat {fd}</dev/null; echo "[${fd-unset}]"
f() { local x=1; cat <<< $((x=9)); echo "$x"; }; f
cat <<EOF2
$((k=4))
EOF2
echo "[${k-unset}]"
g() { echo "$# $1"; }; g "<${u:?msg}" | cat
### gen-bash-command-outside-debug
# $BASH_COMMAND outside a DEBUG trap: the command being run, the one a
# trap interrupted (ERR, EXIT), the eval or source that ran a text
echo "$BASH_COMMAND"; x=$BASH_COMMAND; echo "$x"
f() { echo "in f: $BASH_COMMAND"; }; f a   b
echo $(echo "$BASH_COMMAND"); for i in 1; do echo "$BASH_COMMAND" | cat; done
true; (( y=${#BASH_COMMAND} )); echo "$y"
true; [ -n "${w:=$BASH_COMMAND}" ]; echo "$w"
echo "$BASH_COMMAND" >&2 2>&1 <<< "a b"; cat <<< "$BASH_COMMAND"
trap 'echo "ERR $BASH_COMMAND"' ERR
(( 0 )); [[ a == b ]]; g() { false; }; g; x=$(false)
true 1; echo a | false; true 2; (false); true 3; { false; }
eval "true a; false"; . /dev/null; [ 1 = 2 ]
trap 'true q; echo "exit: $BASH_COMMAND"' EXIT
v=$BASH_COMMAND echo2=1; echo "$v"
### gen-print-dup-redirections
# declare -f spells descriptor copies and closes as bash does
f() { echo a >&2; cat <&3; echo b 2>&1; echo c >&-; cat <&-; echo d 3<&-; echo e >&"$x"; echo f 5>&2; cat 4<&0; echo j 2>&1 >&2; }
declare -f f
### gen-nameref-to-element
# a nameref to an array element: its value is the element's, but bash's
# ${#r} measures it only under set -u, -v finds nothing, ${!r} is its name
declare -A A=([k]=hello [e]=)
declare -n r='A[k]'
echo "${#r}" "$r" "${r:1:2}" "${r^^}" "${r-unset}" "${r@Q}" "${!r}"
[[ -v r ]] && echo set1; test -v r || echo unset1
declare -n s='A[nope]'; [[ -v s ]] || echo unset2; echo "${#s}" "${s-unset}"
a=(x yy zzz); declare -n t='a[2]'; echo "${#t}" "$t"; t+=X; echo "${a[@]}"
echo "${#t[@]}" "[${t[@]}]" "[${!t[@]}]"
x=val; declare -n p=x; echo "${!p}" "${#p}"
set -u; echo "${#r}" "${#s}" "${#t}"
### gen-7986-substring-negative-length
# a length that ends before the offset: bash says so, drops the rest of
# the top-level command (a function's caller too) and goes on with $? 1
x=; echo ${x:0:-1}; echo same-line
echo next-line $?
y=abc; echo ${y:1:-5}; echo same2
f() { echo in-f; echo "${y: -1:-3}"; echo after-in-f; }; f; echo after-f
echo next3 $?
z=${y:0:-9}; echo same3
a=(1 2 3); echo "${a[@]:1:-1}" "${a[@]:1:-5}"; echo same5
trap 'echo "e:$?:$LINENO"' ERR
$(false)
echo end $?
### gen-15309-fatal-in-simple-stage
# a fatal expansion in a simple pipeline stage or & job ends it as it would
# end the shell (127); in a ( ), a compound stage or a substitution with 1
echo "${a?oops}" | cat; echo "simple=${PIPESTATUS[0]}"; { echo "${a?oops}"; } | cat; echo "group=${PIPESTATUS[0]}"; f() { echo "${a?oops}"; }; f | cat; echo "func=${PIPESTATUS[0]}"; (echo "${a?oops}") | cat; echo "subsh=${PIPESTATUS[0]}"; cat | echo "${a?oops}"; echo "last=${PIPESTATUS[1]}"; echo "${a?oops}" & wait $!; echo "bg=$?"; { echo "${a?oops}"; } & wait $!; echo "bggroup=$?"; f & wait $!; echo "bgf=$?"; x=$(f); echo "csf=$?"
[[ ${a?x} ]] | cat; echo "cond=${PIPESTATUS[0]}"; (( ${a?x} )) | cat; echo "arith=${PIPESTATUS[0]}"; x=1 ${a?x} | cat; echo "assign=${PIPESTATUS[0]}"; echo hi > ${a?x} | cat; echo "redir=${PIPESTATUS[0]}"; f() { (echo ${a?x}); echo "in f $?"; }; f | cat; echo "fsub=${PIPESTATUS[0]}"
g() { trap 'echo exiting $?' EXIT; echo "${a?oops}"; }; g | cat
set -u; echo "$zz" | cat; echo "u-simple=${PIPESTATUS[0]}"; { echo "$zz"; } | cat; echo "u-group=${PIPESTATUS[0]}"; g() { echo "$zz"; }; g | cat; echo "u-func=${PIPESTATUS[0]}"; (( zz + 1 )) | cat; echo "u-arith=${PIPESTATUS[0]}"; h() { (( zz + 1 )); }; h | cat;  echo "u-harith=${PIPESTATUS[0]}"
### gen-16434-exit-trap-in-simple-stage
# a simple stage whose own words fail fatally still runs the shell's EXIT
# trap (127); a failure inside the function it runs, or in its redirections, does not
trap 'echo exiting $?' EXIT
echo ${u?} | cat; echo "PS ${PIPESTATUS[@]}"
f() { echo ${u?}; }; f | cat; echo "PS ${PIPESTATUS[@]}"
f() { :; }; f ${u?} | cat; echo "PS ${PIPESTATUS[@]}"
echo ${u?} & wait; echo "PS ${PIPESTATUS[@]}"
f > ${u?} | cat; echo "PS ${PIPESTATUS[@]}"
x=${u?} | cat; echo "PS ${PIPESTATUS[@]}"
exit 3 | cat; echo "PS ${PIPESTATUS[@]}"
{ echo ${u?}; } | cat; echo "PS ${PIPESTATUS[@]}"
echo ${u?} | cat; ${u:?} | cat
### gen-20999-replace-all-slash
# ${v//pat/rep} whose pattern starts with "/": bash looks for the
# separator from the pattern's second character
b=/usr/local/bin; echo "${b////c}" "${b/////&}" "${b///x}" "${b/////}" "${b/////x}" "${b//////}"
echo "${b/#//x}" "${b/%n/&&}" "${b//\//_}"; a=(/a/b /c); echo "${a[@]////-}"
### gen-22985-arith-postfix-after-prefix
# a doubled sign right after ++name/--name is its postfix operator: bash
# refuses it (no lvalue), where one sign apart it is a prefix again
n=3; j=1; echo $(( n---j )) $n $j; echo $(( --n - --j )) $n $j
echo $(( ++n + ++j )) $n $j
echo $(( --n---j )); echo not-here
echo "st=$?"; x=$(( ++n++ )); echo "st=$?"
### gen-26724-replace-quoted-pattern
# single quotes in ${v//pat/rep}'s pattern quote it, in double quotes too
b='a*b'; printf '[%s]' ${b//'*'/X} "${b//'*'/X}" ${b/'*'/X} ${b//"*"/X} ${b//\*/X} ${b//*/X}; echo
c="x'a'y"; printf '[%s]' "${c//'a'/Z}" ${c//'a'/Z} "${c//'/'/Z}" "${c/'"'/Z}" "${c//\'/Z}" ${b//'b'}; echo
### gen-61051-last-arg-compound-declaration
# $_ after a declaration whose last word is NAME=(…): bash leaves NAME
f() { local -a la=("$@"); echo "1[$_]"; local x=1; echo "2[$_]"; local -a lb=(a b) y=2; echo "3[$_]"
  declare -A m=([k]=v); echo "5[$_]"; declare -a q=(); echo "6[$_]"; export e=(1); echo "8[$_]"
  a=(1 2); echo "9[$_]"; declare -a la+=(x); echo "10[$_]"; echo "a=(b)"; echo "11[$_]"; }
f p q | cat
### gen-99733-unset-through-a-nameref
# unset -n drops the reference; a plain unset reaches the variable (or element) it names
k=0; while (( k < 2 )); do declare -n nr=v; echo "[$nr]"; declare -p nr; unset -n nr; ((k++)); done
declare -n nr=v; v=5; unset nr; declare -p nr; echo "${v-gone}"
A=(1 2 3); declare -n e="A[1]"; unset e; declare -p A e; x=1; declare -n rx=x; unset -v rx; echo "${x-gone}"
