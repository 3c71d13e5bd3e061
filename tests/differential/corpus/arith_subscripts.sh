### arith-negative-subscript-assign
# a subscript before the array's start: said, and the expression goes on with its value
b=(1 2); (( b[-5]=1 )); echo $?
(( b[-5]=1 )) || echo failed; echo after
(( b[-1]=7 )); echo $? "${b[@]}"
(( b[-3]+=5 )); echo $? "${b[@]}"
(( c=b[-5]=4, d=2 )); echo $? $c $d
b=(); (( b[-1]=1 )); echo $?
s=x; (( s[-2]=1 )); echo $? $s
### arith-negative-subscript-let-and-expansion
b=(1 2); let 'b[-5]=1' 'c=3'; echo $? $c
echo $(( b[-5]=1 )) after; echo $?
x=$(( b[-5]=9 )); echo $? "$x"
echo $(( b[-5] )) $(( b[-5]++ )) $(( ++b[-5] )); echo $?
(( b[-5]++ )); echo $?
declare -i n; n='b[-5]=1'; echo $? $n
for ((i=0; b[-5]=1; i++)); do echo loop; break; done; echo $?
[[ b[-5]=1 -eq 1 ]]; echo $?
### arith-readonly-stops
readonly r=1; (( r=2 )); echo $?
let r=2 c=3; echo $? "[$c]"
### errexit-bad-subscript-if
# under set -e a bad subscript ends the shell, even where set -e is off
set -e; b=(1 2); if (( b[-5]=1 )); then echo in; fi; echo after
### errexit-bad-subscript-or
set -e; b=(1 2); (( b[-5]=1 )) || true; echo after
### errexit-bad-subscript-expansion
set -e; b=(1 2); echo ${b[-5]}; echo after
### errexit-bad-subscript-let
set -e; b=(1 2); let 'b[-5]=1' || echo failed; echo after
### errexit-bad-subscript-subshell
set -e; b=(1); (echo ${b[-5]}; echo in); echo $?
### errexit-bad-subscript-function
set -e; f() { (( b[-5]=1 )); echo in; }; b=(1); f || echo fail; echo after
### errexit-bad-subscript-read
set -e; b=(1 2); x=$(( b[-5] )); echo after $x
### assign-negative-subscript-drops-line
# `a[-5]=x` before the array's start: the line is dropped with status 1, the shell goes on
b=(1); b[-5]=1; echo not reached
echo "next $?"
f() { b[-5]=1; echo in f; }; f; echo not reached
echo "next $?"
for i in 1 2; do b[-5]+=1; echo in loop; done
echo "next $?"
(b[-5]=1; echo not reached); echo "subshell $?"
x=$(b[-5]=1; echo not reached); echo "[$x] $?"
arr=()
arr[-1]=last; printf '[%s]' "${arr[@]}"
echo "last $?"
### comsub-ignores-errors-after-dropped-or
# a command dropped by an expansion error on the left of || leaves every later
# $( ) running as if on the left of || too: no ERR trap, no set -e inside
x=$(( 5%0 )) || echo not reached
out=$(trap 'echo "err:$?"' ERR; false; echo done); echo "[$out]"
g() { trap 'echo "err:$?"' ERR; false; echo g done; }; out=$(g); echo "[$out]"; g
shopt -s inherit_errexit; set -e
out=$(false; echo reached); echo "[$out]"
### comsub-errors-after-dropped-plain
# not so after a plain command, a for or case word, or a `!` pipeline
x=$(( 5%0 ))
for i in $(( 5%0 )); do :; done || :
case $(( 5%0 )) in *) ;; esac || :
! y=$(( 5%0 ))
out=$(trap 'echo "err:$?"' ERR; false; echo done); echo "[$out]"
### comsub-ignores-errors-after-dropped-if
if x=$(( 5%0 )); then :; fi
out=$(trap 'echo "err:$?"' ERR; false; echo done); echo "[$out]"
### nameref-negative-subscript-drops-line
# through a nameref to arr[i] too
a=(1 2); i=-7; declare -n nr=a[i]
nr=x; echo not reached
echo "next $?"; i=1; nr=y; echo "${a[@]}"
