### ol-printf-q
printf '%q\n' "a b" "it's" 'x$y' ''
### ol-var-Q
v="it's here"; echo "${v@Q}"
### ol-declare-p-array
a=(1 "two words" 3); declare -p a
### ol-declare-p-assoc
declare -A m=([k]=v); declare -p m
### ol-declare-p-scalar
x="q\"uote"; declare -p x
### ol-array-slice
a=(a b c d e); echo "${a[@]:1:3}"; echo "${a[@]: -2}"
### ol-array-indices-sparse
a=(); a[3]=x; a[7]=y; echo "${!a[@]} ${#a[@]}"
### ol-array-unset-element
a=(a b c); unset 'a[1]'; echo "${a[@]} ${!a[@]}"
### ol-array-append-self
arr=(a b); arr=("${arr[@]}" c); echo "${arr[@]}"
### ol-array-pattern-ops
files=(a.c b.c c.h); echo "${files[@]%.c}"; echo "${files[@]/#/src/}"
### ol-string-slice-negative
s=abcdefgh; echo "${s: -3}" "${s:2:3}" "${s: -5:2}"
### ol-string-replace-all
p=/a/b/c; echo "${p//\//_}" "${p/\//}" "${p/#\/a/X}" "${p/%c/Z}"
### ol-string-length-unicode
LC_ALL=C.UTF-8; s="héllo"; echo ${#s}
### ol-case-mod
s="hello World"; echo "${s^}" "${s^^o}" "${s,,[A-Z]}" "${s~~}"
### ol-indirect
name=target; target=value; echo "${!name}"
### ol-prefix-names
pre_a=1 pre_b=2; echo "${!pre_@}"
### ol-nameref
f() { local -n ref=$1; ref=changed; }; v=orig; f v; echo "$v"
### ol-printf-v
printf -v out '%05.1f' 3.14159; echo "$out"
### ol-printf-b
printf '%b\n' 'tab\there' 'nl\\n'
### ol-printf-reuse-format
printf '%s=%s\n' a 1 b 2 c
### ol-printf-hex-oct
printf '%x %o %X %#x %e\n' 255 8 255 255 1234.5
### ol-dollar-single-quote
echo $'a\tb\x41\u00e9\n'"end"
### ol-arith-bases
echo $((16#ff)) $((2#1010)) $((8#17)) $((0x1F)) $((010))
### ol-arith-ternary-comma
x=5; echo $((x > 3 ? x * 2 : 0)) $((a=1, b=2, a+b))
### ol-arith-incr
i=0; ((i++)); ((++i)); echo $i; ((i+=10)); echo $i
### ol-arith-exit-status
((0)); echo $?; ((5)); echo $?
### ol-let
let "a = 5 * 3" "b = a % 4"; echo $a $b
### ol-case-fallthrough
for v in a b; do case $v in a) echo A ;& b) echo B ;; esac; done
### ol-case-continue
case abc in a*) echo first ;;& *c) echo second ;; *) echo never ;; esac
### ol-mapfile
printf 'l1\nl2\nl3\n' > f; mapfile -t lines < f; echo "${#lines[@]} ${lines[1]}"
### ol-readarray-callback-free
readarray -t arr <<< $'x\ny'; printf '<%s>' "${arr[@]}"; echo
### ol-read-d-empty
printf 'a\0b\0' > z; while IFS= read -r -d '' x; do echo "[$x]"; done < z
### ol-read-n
echo abcdef | { read -n 3 x; echo "$x"; }
### ol-read-array
read -ra w <<< "  one  two   three "; echo "${#w[@]}:${w[2]}"
### ol-proc-subst-while
while read -r l; do echo "got $l"; done < <(printf 'a\nb\n')
### ol-proc-subst-diff
diff <(printf 'a\nb\n') <(printf 'a\nc\n'); echo "rc=$?"
### ol-proc-subst-paste
paste <(seq 1 3) <(seq 4 6)
### ol-herestring-var
v="multi word"; cat <<< "$v"
### ol-brace-seq-step
echo {1..10..3} {a..e} {05..08}
### ol-brace-nested
echo x{a,b{1,2}}y
### ol-tilde-in-assignment
HOME=/home/u; p=~/x; echo $p
### ol-word-splitting-ifs
IFS=,; set -- $(echo "a,b,,c"); echo $#; unset IFS
### ol-set-positional
set -- "a b" c; echo $#; for x in "$@"; do echo "[$x]"; done
### ol-dollar-star-vs-at
set -- a "b c"; printf '<%s>' "$*"; echo; printf '<%s>' "$@"; echo
### ol-shift-n
set -- 1 2 3 4; shift 2; echo "$@"
### ol-special-params
f() { echo "$# $1 ${@: -1}"; }; f x y z
### ol-exit-status-negation
! false; echo $?; ! true; echo $?
### ol-pipestatus
true | false | true; echo "${PIPESTATUS[@]}"
### ol-command-group-redirect
{ echo a; echo b; } > out; cat out
### ol-subshell-exit-status
(exit 42); echo $?
### ol-function-keyword
function greet { echo "hi $1"; }; greet there
### ol-recursive-function
fact() { if (( $1 <= 1 )); then echo 1; else echo $(( $1 * $(fact $(( $1 - 1 ))) )); fi; }; fact 6
### ol-unset-function
f() { echo f; }; unset -f f; type f >/dev/null 2>&1 || echo gone
### ol-type-builtin
type -t echo; type -t cd; type -t if
### ol-command-v-builtin
command -v echo; command -v cd
### ol-alias-expansion-off
alias ll='ls -l'; type ll 2>/dev/null | head -1; echo done
### ol-eval-quoting
cmd='echo "a  b"'; eval "$cmd"
### ol-eval-assignment
for i in 1 2; do eval "var_$i=$((i*10))"; done; echo $var_1 $var_2
### ol-exec-redirect-fd
exec 3> fd3.txt; echo to-fd3 >&3; exec 3>&-; cat fd3.txt
### ol-fd-swap
{ echo out; echo err >&2; } 3>&1 1>&2 2>&3 2>/dev/null
### ol-noclobber
set -C; echo a > nc; echo b > nc 2>/dev/null || echo refused; echo c >| nc; cat nc
### ol-here-doc-in-loop
for n in 1 2; do cat <<EOF
n=$n
EOF
done
### ol-nested-command-subst
echo "$(echo "$(echo inner)") outer"
### ol-backticks
echo `echo back` `expr 2 + 3`
### ol-expr
expr 7 \* 6; expr length hello; expr substr hello 2 3; expr 5 \> 3
### ol-test-file-ops
touch f; mkdir d; [ -f f ] && [ -d d ] && [ ! -e nope ] && echo files-ok
### ol-test-string-ops
[ -z "" ] && [ -n x ] && [ abc = abc ] && [ abc != abd ] && echo strings-ok
### ol-double-bracket-pattern
[[ foo.txt == *.txt ]] && echo match; [[ foo.txt == "*.txt" ]] || echo literal
### ol-double-bracket-regex-var
re='^[0-9]+$'; [[ 123 =~ $re ]] && echo num; [[ 12a =~ $re ]] || echo notnum
### ol-numeric-compare-strings
[[ 10 -gt 9 ]] && echo numeric; [[ 10 > 9 ]] || echo "lexical says no"
### ol-seq-formats
seq 3; seq 2 2 8; seq -s, 1 4; seq 1 0.5 2
### ol-sort-uniq-c
printf 'b\na\nb\n' | sort | uniq -c
### ol-sort-k-t
printf 'x:3\ny:1\nz:2\n' | sort -t: -k2
### ol-sort-stable-multi
printf 'a 2\nb 1\nc 2\nd 1\n' | sort -s -k2,2n
### ol-head-c-tail-n-plus
printf 'abcdef\n' | head -c 3; echo; seq 5 | tail -n +3
### ol-wc-variants
printf 'one two\nthree\n' | wc -w; printf 'abc' | wc -c; printf 'a\nb\n' | wc -l
### ol-tr-ranges
echo "Hello World" | tr 'a-zA-Z' 'n-za-mN-ZA-M'
### ol-tr-complement
echo "a1b2c3" | tr -cd '0-9'; echo
### ol-cut-fields-delim
echo "a:b:c:d" | cut -d: -f2,4; echo "a:b:c:d" | cut -d: -f3-
### ol-rev
echo hello | rev
### ol-nl
printf 'a\nb\n' | nl
### ol-fold
echo "abcdefghij" | fold -w 4
### ol-comm
printf 'a\nb\nc\n' > x; printf 'b\nc\nd\n' > y; comm -12 x y; comm -3 x y
### ol-od
printf 'AB\n' | od -c
### ol-base64-roundtrip
echo "hello world" | base64; echo aGVsbG8K | base64 -d
### ol-basename-suffix
basename /a/b/file.tar.gz .gz; dirname /a/b/file; dirname file
### ol-realpath-relative
mkdir -p x/y; cd x/y; realpath --relative-to=.. . 2>/dev/null || echo no-opt
### ol-grep-o-E
echo "a1 b22 c333" | grep -oE '[0-9]+'
### ol-grep-v-c
printf 'a\nb\na\n' | grep -vc a
### ol-grep-context
seq 1 10 | grep -A1 -B1 5
### ol-grep-w-i
printf 'Cat\ncatalog\ncat\n' | grep -wi cat
### ol-grep-F-multiple-e
printf 'a.b\naxb\n' | grep -F -e a.b -e zz
### ol-sed-multiple-expressions
echo "hello world" | sed -e 's/hello/bye/' -e 's/world/all/'
### ol-sed-capture-groups
echo "2024-01-15" | sed -E 's/([0-9]+)-([0-9]+)-([0-9]+)/\3.\2.\1/'
### ol-sed-delete-range
seq 1 6 | sed '2,4d'
### ol-sed-address-regex
printf 'a\n#c\nb\n' | sed '/^#/d'
### ol-sed-insert-append
printf 'x\n' | sed -e 'i\
before' -e 'a\
after'
### ol-sed-hold-reverse
printf '1\n2\n3\n' | sed -n '1!G;h;$p'
### ol-sed-n-p-line
seq 10 | sed -n '3p;7p'
### ol-sed-y
echo abc | sed 'y/abc/xyz/'
### ol-sed-ampersand
echo "word" | sed 's/.*/[&]/'
### ol-awk-fields-ofs
echo "a b c" | awk -v OFS=- '{$1=$1; print}'
### ol-awk-printf
awk 'BEGIN{printf "%5.2f|%-4s|%03d\n", 3.14159, "ab", 7}'
### ol-awk-nr-fnr
printf 'a\nb\n' > p; printf 'c\n' > q; awk '{print FILENAME, NR, FNR}' p q
### ol-awk-assoc-sum
printf 'x 1\ny 2\nx 3\n' | awk '{s[$1]+=$2} END{for(k in s) print k, s[k]}' | sort
### ol-awk-gsub-length
echo "aaa bb" | awk '{n=gsub(/a/,"z"); print n, $0, length($0)}'
### ol-awk-split
echo "1,2,3" | awk '{n=split($0,a,","); print n, a[3]}'
### ol-awk-substr-index
awk 'BEGIN{s="hello world"; print substr(s,7), index(s,"wor"), toupper(substr(s,1,1))}'
### ol-awk-range-pattern
seq 1 10 | awk '/3/,/5/'
### ol-awk-F-regex
echo "a1b22c" | awk -F'[0-9]+' '{print $2, NF}'
### ol-awk-last-field
echo "a b c d" | awk '{print $NF, $(NF-1)}'
### ol-find-name-type
mkdir -p t/u; touch t/a.txt t/u/b.txt t/c.md; find t -type f -name '*.txt' | sort
### ol-find-maxdepth
mkdir -p m/n/o; touch m/1 m/n/2 m/n/o/3; find m -maxdepth 2 | sort
### ol-find-prune
mkdir -p r/.git r/src; touch r/.git/x r/src/y; find r -path r/.git -prune -o -type f -print
### ol-find-newer-empty
mkdir -p e; touch e/full; echo x > e/full; touch e/empty; find e -empty -type f
### ol-ls-one-per-line
mkdir lsd; touch lsd/b lsd/a lsd/.h; ls lsd; ls -A lsd; ls -1 lsd | wc -l
### ol-cp-r-mv-rm
mkdir -p s1/in; echo x > s1/in/f; cp -r s1 s2; mv s2/in/f s2/in/g; rm -r s1; find s2 | sort
### ol-ln-s-readlink
echo data > target; ln -s target link; readlink link; cat link
### ol-touch-mkdir-p-exists
mkdir -p q/q; mkdir q 2>/dev/null || echo exists; mkdir -p q && echo ok
### ol-rm-f-missing
rm -f does-not-exist; echo $?; rm does-not-exist 2>/dev/null; echo $?
### ol-cat-n-A
printf 'a\tb\n' | cat -A; printf 'x\ny\n' | cat -n
### ol-tee-append
echo 1 | tee t.txt >/dev/null; echo 2 | tee -a t.txt >/dev/null; cat t.txt
### ol-date-fixed
date -u -d @0 +%Y-%m-%d 2>/dev/null || echo nodate
### ol-sleep-zero
sleep 0; echo slept
### ol-true-false-colon
true; echo $?; false; echo $?; :; echo $?
### ol-yes-head
yes ab | head -3
### ol-env-var-for-command
X=1 sh -c 'echo $X'; echo "[${X-unset}]"
### ol-export-subshell
export E=exported; sh -c 'echo $E'
### ol-readonly-error
readonly R=1; (R=2) 2>/dev/null || echo "readonly held"
### ol-unset-var
v=1; unset v; echo "[${v-unset}]"
### ol-default-assign
unset d; : ${d:=assigned}; echo $d
### ol-error-if-unset
( : ${must:?is required} ) 2>/dev/null || echo "error raised"
### ol-alternate-value
v=x; echo "${v:+set}" "${nope:+set}"
### ol-string-contains
s="hello world"; [[ $s == *wor* ]] && echo yes; case $s in *xyz*) echo no ;; *) echo "no xyz" ;; esac
### ol-loop-c-style
for ((i=0; i<3; i++)); do printf '%d ' $i; done; echo
### ol-while-break-continue
i=0; while true; do i=$((i+1)); [ $i -eq 2 ] && continue; [ $i -gt 4 ] && break; echo $i; done
### ol-until
n=3; until [ $n -eq 0 ]; do echo $n; n=$((n-1)); done
### ol-select-free-menu
options=(start stop); for i in "${!options[@]}"; do echo "$((i+1))) ${options[$i]}"; done
### ol-nested-loops-break-2
for a in 1 2; do for b in 1 2; do [ $b -eq 2 ] && break 2; echo "$a$b"; done; done
### ol-return-value-capture
f() { echo out; return 3; }; v=$(f); echo "$v $?"
### ol-wait-bg-status
(exit 5) & wait $!; echo "bg rc=$?"
### ol-bg-multiple-wait
for i in 1 2 3; do (echo "job $i" > job$i.out) & done; wait; cat job*.out
### ol-jobs-empty
jobs; echo "no jobs"
### ol-kill-0-self
kill -0 $$ && echo alive
### ol-timeout-status
timeout 1 sleep 3; echo $?
### ol-timeout-ok
timeout 5 true; echo $?
