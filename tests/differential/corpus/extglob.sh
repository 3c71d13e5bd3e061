### extglob-off-case-syntax
# without `shopt -s extglob` an @( in a case pattern is a syntax error
case x in @(a|x)) echo y;; esac; echo after
### extglob-off-word-syntax
echo a+(b)
### extglob-off-same-line
# the option works from the next line: this one was read before it ran
shopt -s extglob; case x in @(a|x)) echo y;; esac
### extglob-off-same-compound
if true; then shopt -s extglob; case x in !(x)) echo y;; esac; fi
echo not reached
### extglob-on-next-line
shopt -s extglob
case x in @(a|x)) echo y;; esac
v=ax; echo "${v#@(a|b)}" ${v/+(a)/Z}
eval 'case xx in +(x)) echo plus;; esac'
### extglob-off-patterns-literal
# a group from a variable or inside ${v op word} is plain text without the option
p='@(a|x)'; case x in $p) echo y;; *) echo n;; esac
p='!(x)'; case y in $p) echo y;; *) echo n;; esac
v='@(a|b)x'; echo "${v#@(a|b)}" "${v/@(a|b)/Z}"
v=abc; echo ${v//@(b)/X} ${v//+(b|c)/X} ${v/#?(a)/X}
p='@(a|x)'; v=xa; echo ${v##$p} ${v/$p/Z}
### extglob-off-cond-always
# [[ == ]] reads and matches the right side's groups whatever the option
[[ x == @(a|x) ]]; echo $?
[[ x != !(x) ]]; echo $?
p='@(a|x)'; [[ x == $p ]]; echo $?
[[ "@(x)" == @(x) ]]; echo $?
[[ xy == x@(y) && ab == a*(b) ]]; echo $?
### extglob-off-cond-left-side
[[ @(x) == x ]]
echo not reached
### extglob-casemod-always
# ${v^^pat} matches its pattern as extglob whatever the option
v=abc; echo ${v^^@(b)} ${v,,?(b)}
### extglob-option-at-run-time
# a function read with the option on matches by the option when it runs
shopt -s extglob
f() { case $1 in @(a|b)) echo y;; *) echo n;; esac; }
f a
shopt -u extglob
f a
### extglob-glob
touch a b c.txt
p='@(a)'; echo $p; echo *(a)x
shopt -s extglob
echo $p +(b) !(a|b); q='!(a)'; echo $q
### extglob-subscript-assign
# an assignment's subscript is read whole, parentheses and blanks too
declare -A m; m[@(a)]=1; m[x(y]=2; echo "${!m[@]}"
a[(1+1)]=x; a[ 3 ]=y; i=1; a[$i + 3]="z w"; echo "${a[@]}"
### syntax-cond-keeps-status
# a syntax error inside [[ ]] ends `bash -c` with the last command's status
(exit 7)
[[ a b ]]
echo not reached
### syntax-cond-missing-operand
false
[[ a == ]]
### syntax-cond-unclosed
(exit 3)
[[ ( a ]]
### syntax-comsub-bad-token
# a bad token inside $( ) ends it with 127, a text that ends inside with 2
echo $(if)
echo not reached
### syntax-comsub-eof
echo $(echo "x
