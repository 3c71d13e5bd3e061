### ci-matrix-loop
for py in 3.9 3.10 3.11; do
  for os in linux mac; do
    echo "job: py$py-$os"
  done
done | sort -r | head -4
### ci-changed-files-filter
printf '%s\n' src/a.c src/b.h docs/readme.md tests/t1.py Makefile > changed.txt
grep -E '\.(c|h)$' changed.txt | wc -l
grep -v '^docs/' changed.txt | sed 's|/.*||' | sort -u
### ci-skip-docs-only
files="docs/a.md docs/b.md"
only_docs=1
for f in $files; do case $f in docs/*|*.md) ;; *) only_docs=0 ;; esac; done
[ $only_docs -eq 1 ] && echo "skip build" || echo "build"
### ci-junit-count
cat > results.xml <<'EOF'
<testsuite tests="3" failures="1">
<testcase name="a"/>
<testcase name="b"><failure message="x"/></testcase>
<testcase name="c"/>
</testsuite>
EOF
grep -c '<testcase' results.xml
grep -o 'failures="[0-9]*"' results.xml | tr -dc 0-9; echo
### ci-fail-on-todo
mkdir -p src
printf 'int a;\n// TODO fix\n' > src/x.c
printf 'int b;\n' > src/y.c
if grep -rq TODO src; then echo "found TODOs:"; grep -rl TODO src; fi
### ci-coverage-threshold
coverage=83.5
threshold=80
if awk "BEGIN{exit !($coverage >= $threshold)}"; then echo pass; else echo fail; fi
### ci-parse-key-value-output
out="passed=12 failed=0 skipped=3"
for kv in $out; do
  k=${kv%%=*}; v=${kv#*=}
  printf '%-8s %3d\n' "$k" "$v"
done
### ci-sum-column-awk
printf 'a 10\nb 20\nc 12\n' > sizes
awk '{s+=$2} END {print s, NR, s/NR}' sizes
### ci-step-timer-free
step() { echo "::group::$1"; shift; "$@"; local rc=$?; echo "::endgroup:: rc=$rc"; return $rc; }
step build true
step test false || echo "test step failed"
### ci-env-defaults-and-bool
CI=${CI:-false}
if [ "$CI" = true ]; then mode=ci; else mode=local; fi
echo $mode
### ci-git-ref-parsing
ref=refs/heads/feature/login-page
branch=${ref#refs/heads/}
slug=$(echo "$branch" | tr '/' '-' | tr -cd 'a-z0-9-')
echo "$branch -> $slug"
### ci-tag-semver-check
for t in v1.2.3 v1.2 1.2.3 v1.2.3-rc1; do
  if [[ $t =~ ^v([0-9]+)\.([0-9]+)\.([0-9]+)(-.*)?$ ]]; then
    echo "$t ok major=${BASH_REMATCH[1]} pre=${BASH_REMATCH[4]:-none}"
  else
    echo "$t bad"
  fi
done
### ci-artifact-names
for os in linux darwin; do for arch in amd64 arm64; do
  printf 'app-%s-%s%s\n' "$os" "$arch" "$([ $os = windows ] && echo .exe)"
done; done
### ci-lint-count-by-file
cat > lint.txt <<'EOF'
src/a.py:1: E501 line too long
src/a.py:9: W291 trailing whitespace
src/b.py:3: E501 line too long
EOF
cut -d: -f1 lint.txt | sort | uniq -c | sort -rn
awk -F': ' '{print $2}' lint.txt | cut -d' ' -f1 | sort | uniq -c
### ci-exit-nonzero-if-any-failed
failed=0
for t in ok ok fail ok; do [ "$t" = ok ] || failed=$((failed + 1)); done
echo "failed=$failed"
[ $failed -eq 0 ]
### ci-collect-statuses
status=0
check() { echo "check $1"; return $2; }
check a 0 || status=1
check b 1 || status=1
check c 0 || status=1
echo "overall $status"
exit $status
### ci-wait-for-file-loop
touch ready.flag
for i in 1 2 3 4 5; do
  [ -f ready.flag ] && { echo "ready after $i"; break; }
done
### ci-cache-key
printf 'dep1==1.0\ndep2==2.0\n' > requirements.txt
key="deps-$(sha256sum requirements.txt | cut -c1-12)"
echo "$key"
### ci-shard-tests
tests=(t1 t2 t3 t4 t5 t6 t7)
shard=1; total=3
for i in "${!tests[@]}"; do
  [ $((i % total)) -eq $shard ] && echo "${tests[$i]}"
done
### ci-print-env-sorted
env -i A=1 C=3 B=2 env | sort
### ci-dotenv-mask
SECRET_TOKEN=abcdef123456
echo "token: ${SECRET_TOKEN:0:3}***"
### ci-yaml-like-extract
cat > ci.yml <<'EOF'
jobs:
  build:
    runs-on: ubuntu
  test:
    runs-on: debian
EOF
grep -E '^  [a-z]+:$' ci.yml | tr -d ' :'
sed -n 's/^ *runs-on: //p' ci.yml | sort -u
### ci-check-trailing-whitespace
printf 'ok\nbad \nfine\n\tbad2\t\n' > f.txt
grep -n '[[:space:]]$' f.txt | cut -d: -f1
### ci-check-final-newline
printf 'no newline' > a.txt
printf 'newline\n' > b.txt
for f in a.txt b.txt; do
  if [ -n "$(tail -c1 "$f")" ]; then echo "$f: missing final newline"; fi
done
### ci-count-lines-by-ext
mkdir -p p/q
printf 'a\nb\n' > p/x.py; printf 'c\n' > p/q/y.py; printf 'd\ne\nf\n' > p/z.sh
for ext in py sh; do
  n=$(find p -name "*.$ext" -exec cat {} + | wc -l)
  echo "$ext: $n"
done
### ci-find-exec-grep-l
mkdir -p s
echo 'import os' > s/a.py; echo 'print(1)' > s/b.py
find s -name '*.py' -exec grep -l 'import' {} \; | sort
### ci-xargs-batch
printf '%s\n' a b c d e | xargs -n 2 echo
### ci-xargs-replace
printf 'x\ny\n' | xargs -I{} echo "item-{}-end"
### ci-xargs-null
printf 'a b\0c\0' | xargs -0 -n1 printf '[%s]\n'
### ci-junit-summary-printf
passed=10 failed=2 skipped=1
total=$((passed + failed + skipped))
printf 'Total: %d  Passed: %d (%d%%)\n' $total $passed $((passed * 100 / total))
### ci-compare-versions-file
echo 1.4.2 > VERSION
expected=1.4.2
actual=$(cat VERSION)
[ "$actual" = "$expected" ] && echo "version ok" || { echo "mismatch: $actual"; exit 1; }
### ci-changelog-top-entry
cat > CHANGELOG.md <<'EOF'
# Changelog

## 2.0.0
- big change
- other

## 1.0.0
- first
EOF
awk '/^## /{n++} n==1' CHANGELOG.md
### ci-changelog-sed-range
printf '## 2.0\na\nb\n## 1.0\nc\n' > C.md
sed -n '/^## 2.0/,/^## 1.0/p' C.md | sed '$d'
### ci-case-glob-branch
for b in main release/1.2 feature/x hotfix-3; do
  case $b in
    main) echo "$b: deploy prod" ;;
    release/*) echo "$b: deploy staging" ;;
    feature/*|hotfix-*) echo "$b: test only" ;;
  esac
done
### ci-function-returns-string
get_name() { echo "build-$1"; }
name=$(get_name 42)
echo "$name"
### ci-local-scope
x=global
f() { local x=local; echo "in f: $x"; }
f
echo "after f: $x"
### ci-arith-percent
done_=7 total=9
echo "$(( done_ * 100 / total ))%"
### ci-seq-padding
for i in $(seq -w 8 11); do echo "shard-$i"; done
### ci-printf-table
printf '%-10s|%5s\n' name count
printf '%-10s|%5d\n' alpha 3 beta 12 gamma 100
### ci-while-read-fields
printf 'alice 30 admin\nbob 25 user\n' | while read -r name age role; do
  echo "$role:$name:$age"
done
### ci-ifs-colon-path
IFS=: read -ra parts <<< "/usr/local/bin:/usr/bin:/bin"
echo "${#parts[@]} ${parts[0]} ${parts[-1]}"
### ci-join-array
arr=(a b c)
( IFS=,; echo "${arr[*]}" )
joined=$(printf '%s;' "${arr[@]}"); echo "${joined%;}"
### ci-dedupe-preserve-order
printf 'b\na\nb\nc\na\n' | awk '!seen[$0]++'
### ci-count-occurrences
echo "the cat and the hat and the bat" | tr ' ' '\n' | sort | uniq -c | sort -k1,1nr -k2 | head -2
### ci-nested-functions-return
inner() { return 4; }
outer() { inner; echo "inner said $?"; return 0; }
outer; echo "outer said $?"
### ci-test-operators
a=5 b=10
[ $a -lt $b ] && echo lt
[[ $a < $b ]] && echo "string-lt"
[[ -n $a && -z "" ]] && echo both
test "$a" != "$b" && echo ne
### ci-regex-capture-loop
log='2024-01-02 ERROR db timeout
2024-01-02 INFO ok
2024-01-03 ERROR disk full'
while IFS= read -r line; do
  [[ $line =~ ERROR\ (.*) ]] && echo "err: ${BASH_REMATCH[1]}"
done <<< "$log"
### ci-subshell-cd-isolation
mkdir -p sub
(cd sub && pwd | sed 's|.*/||')
pwd | grep -q sub && echo "leaked" || echo "isolated"
### ci-pushd-like-cd-minus
mkdir -p d1
cd d1; cd - >/dev/null; basename "$(pwd)" | grep -c d1
### ci-brace-expansion-files
touch file{1..3}.txt
ls file*.txt
echo {a,b}{1,2}
### ci-glob-no-match
shopt -s nullglob
for f in *.nomatch; do echo "got $f"; done
echo "nullglob ok"
shopt -u nullglob
for f in *.nomatch; do echo "literal $f"; done
### ci-extglob
shopt -s extglob
touch keep.txt drop.log drop.tmp
ls !(*.log|*.tmp)
### ci-exit-trap-with-function
cleanup() { echo "cleanup rc=$1"; }
trap 'cleanup $?' EXIT
exit 7
### ci-err-output-redirect
{ echo out; echo err >&2; } 2>/dev/null
{ echo out2; echo err2 >&2; } 2>&1 | sort
### ci-tee-log
echo "build ok" | tee build.log
cat build.log
### ci-append-summary
summary=summary.md
echo "## Results" > $summary
for r in pass fail pass; do echo "- $r" >> $summary; done
grep -c pass $summary
cat $summary
### ci-count-with-grep-c-multiple
printf 'a\nb\na\n' > one; printf 'a\n' > two
grep -c a one two
### ci-head-tail-middle
seq 1 20 | head -12 | tail -3
### ci-paste-join-lines
seq 1 6 | paste -sd, -
seq 1 6 | paste - - -
### ci-cut-characters
echo "abcdefghij" | cut -c2-4,8-
### ci-tr-squeeze-delete
echo "a   b    c" | tr -s ' '
echo "h-e-l-l-o" | tr -d '-'
### ci-sort-numeric-keys
printf 'x 10\ny 9\nz 100\n' | sort -k2,2n
printf 'x 10\ny 9\nz 100\n' | sort -k2,2nr | head -1
### ci-sort-unique-case
printf 'b\nA\na\nB\n' | sort -f | uniq -i
