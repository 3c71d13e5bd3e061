# Snippets in the manner of GNU bash's own test files (tests/*.tests of its source): read with
# IFS and its options, IFS splitting and $*, mapfile -C, namerefs, ${!-}, caller/enable/builtin,
# arithmetic and its errors, written for this corpus.
### bt-read-ifs-colon-empty
echo "::" | ( IFS=": " read x y; echo "($x)($y)" )
### bt-read-ifs-colon-fields
echo "a:b:c:d" | { IFS=: read w x y; echo "[$w][$x][$y]"; }
### bt-read-ifs-trailing-sep
printf 'a:b:\n' | { IFS=: read x y; echo "[$x][$y]"; }
### bt-read-ifs-trailing-two
printf 'a:b::\n' | { IFS=: read x y; echo "[$x][$y]"; }
### bt-read-ifs-ws-mixed
printf ' a , b ,c \n' | { IFS=' ,' read x y z; echo "[$x][$y][$z]"; }
### bt-read-backslash-join
printf 'one \\\ntwo\n' | { read line; echo "[$line]"; }
### bt-read-raw-backslash
printf 'a\\tb\\\\c\n' | { read -r line; echo "[$line]"; read line2; echo "[$line2]"; }
### bt-read-no-newline-status
printf 'last' | { read v; echo "$? [$v]"; }
### bt-read-empty-input
read v < /dev/null; echo "$? [$v]"
### bt-read-delim
printf 'a,b,c' | { read -d , x; echo "[$x]"; read -d , y; echo "[$y]"; read -d , z; echo "$? [$z]"; }
### bt-read-delim-empty
printf 'one\0two\0' | { while IFS= read -r -d '' f; do echo "<$f>"; done; }
### bt-read-n-chars
echo abcdef | { read -n 2 a; read -n 3 b; echo "$a $b"; }
### bt-read-array-ifs
IFS=, read -ra parts <<< 'x,,y,'; echo "${#parts[@]}"; printf '<%s>' "${parts[@]}"; echo
### bt-read-reply-keeps-blanks
echo '  padded  ' | { read; echo "[$REPLY]"; }
### bt-read-ifs-empty-no-split
IFS= read -r a b <<< '  one two  '; echo "[$a][$b]"
### bt-read-u-fd
exec 4<<< 'from four'; read -u 4 w1 w2; echo "$w2 $w1"; exec 4<&-
### bt-ifs-star-join
set -- a b c; IFS=:; echo "$*"; IFS=; echo "$*"; unset IFS; echo "$*"
### bt-ifs-split-nonws
IFS=: ; v='a::b:'; set -- $v; echo $#; printf '<%s>' "$@"; echo
### bt-ifs-split-ws-and-nonws
IFS=' :'; v=' a : b::c '; set -- $v; echo $#; printf '<%s>' "$@"; echo
### bt-ifs-unset-default
unset IFS; v=$'a\tb  c\nd'; set -- $v; echo $#
### bt-ifs-at-in-string
set -- 'x y' z; IFS=-; a="$@"; echo "$a"; b="$*"; echo "$b"
### bt-mapfile-callback
mapfile -C "echo cb" -c 1 a <<< $'x\ny'; echo "${#a[@]}"
### bt-mapfile-callback-args
cb() { echo "cb:$1:${2%$'\n'}"; }; printf 'l%s\n' 1 2 3 4 5 | { mapfile -t -C cb -c 2 arr; echo "${arr[*]}"; }
### bt-mapfile-origin-skip
printf '%s\n' a b c d | { mapfile -t -O 3 -s 1 -n 2 arr; declare -p arr; }
### bt-mapfile-delim
printf 'a:b:c' | { mapfile -t -d : arr; declare -p arr; }
### bt-mapfile-keeps-newlines
printf 'a\nb\n' | { mapfile arr; printf '[%s]' "${arr[@]}"; echo; }
### bt-readarray-existing
arr=(old1 old2 old3); readarray -t arr <<< 'new'; declare -p arr
### bt-local-n-assign
f() { local -n r=$1; r=5; }; f v; echo $v
### bt-local-n-array
push() { local -n _a=$1; shift; _a+=("$@"); }; list=(a); push list b 'c d'; declare -p list
### bt-local-n-assoc
setk() { local -n _m=$1; _m[$2]=$3; }; declare -A conf; setk conf host example; setk conf port 80; echo "${conf[host]}:${conf[port]}"
### bt-local-n-read
getv() { local -n out=$1; read -r out <<< 'read into ref'; }; getv res; echo "$res"
### bt-nameref-chain
a=1; declare -n b=a; declare -n c=b; c=9; echo $a; unset -n c; echo ${c-unset}
### bt-nameref-loop-var
x1=one x2=two; for ref in x1 x2; do declare -n cur=$ref; echo "$cur"; done
### bt-nameref-printf-v
f() { local -n o=$1; printf -v o '%05d' 42; }; f num; echo $num
### bt-dollar-bang-dash
echo "${!-}" | wc -c
### bt-dollar-dash-flags
set -u; case $- in *u*) echo has-u;; esac; set +u; case $- in *u*) echo still;; *) echo no-u;; esac
### bt-caller-top
f() { caller 0 | cut -d' ' -f2; }; f
### bt-caller-no-frame
caller; echo $?
### bt-enable-list
enable -a | grep -c -w -e 'enable echo' -e 'enable printf'
### bt-enable-n
enable -n echo; echo hi; type -t echo; enable echo; type -t echo
### bt-builtin-bypass-function
echo() { builtin echo "wrapped: $*"; }; echo x; unset -f echo; echo plain
### bt-builtin-not-builtin
builtin ls >/dev/null 2>&1; echo $?
### bt-arith-ternary-assign-error
echo $(( 1 ? 20 : x+=2 )) 2>/dev/null; echo "st=$?"
### bt-arith-divzero-status
( echo $(( 5 / 0 )) ) 2>/dev/null; echo "st=$?"
### bt-arith-let-zero-status
let 'x = 0'; echo $?; let 'x = 3'; echo $?
### bt-arith-comma-assign
echo $(( a = 2, b = a * 3, a + b ))
### bt-arith-nested-ternary
n=5; echo $(( n > 3 ? n > 4 ? 2 : 1 : 0 ))
### bt-arith-pre-post
i=5; echo $(( i++ + ++i )) $i
### bt-arith-base-out
echo $(( 2#1010 + 8#17 + 16#ff + 36#zz + 64#_ ))
### bt-arith-negative-mod
echo $(( -7 % 3 )) $(( 7 % -3 )) $(( -7 / 2 ))
### bt-arith-shift-overflow
echo $(( 1 << 63 )) $(( 1 << 64 )) $(( -1 >> 1 ))
### bt-arith-string-var-recursive
a=b; b=c; c=7; echo $(( a + 1 ))
### bt-arith-empty-var
e=; echo $(( e + 1 )) $(( ${e:-0} * 2 ))
### bt-bare-bang
! true; echo $?; ! false; echo $?
### bt-bang-pipeline
! echo x | grep -q y; echo $?
### bt-pipestatus-reset
false | true; true; echo "${PIPESTATUS[@]}"
### bt-underscore-last-arg
echo one two; echo "$_"
### bt-printf-v-array-element
printf -v 'arr[2]' '%s-%s' a b; declare -p arr
### bt-printf-q-roundtrip
s=$'a b\'c"d\te'; q=$(printf %q "$s"); eval "r=$q"; [[ $r == "$s" ]] && echo same
### bt-eval-dashdash
eval -- 'echo evaluated'
### bt-case-in-subst
v=$(case x in x) echo matched;; esac); echo "$v"
### bt-cond-multiline
if [[ -n x &&
      -z "" ]]; then echo both; fi
### bt-heredoc-in-function
f() {
  cat <<-EOF
	indented $1
	EOF
}
f arg
### bt-fd-variable
exec {fd}>out.txt; echo data >&$fd; exec {fd}>&-; cat out.txt
### bt-fd-ten
exec 10>ten.txt; echo ten >&10; exec 10>&-; cat ten.txt
