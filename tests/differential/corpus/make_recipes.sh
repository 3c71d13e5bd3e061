### mk-objs-from-srcs
SRCS="main.c util.c io.c"; OBJS=""; for s in $SRCS; do OBJS="$OBJS ${s%.c}.o"; done; echo $OBJS
### mk-mkdir-dirname-target
target=build/obj/src/main.o; mkdir -p "$(dirname $target)" && echo made && [ -d build/obj/src ] && echo present
### mk-if-exists-rm
rm -f app app.o; [ ! -e app ] && echo clean
### mk-for-subdirs
mkdir -p lib app; for d in lib app; do (cd $d && echo "make -C $d all" && pwd | sed 's|.*/||'); done
### mk-dollar-escaping
echo "$$" | grep -Eq '^[0-9]+$' && echo pid-ok; echo '$$literal'
### mk-test-runner-fail-count
fail=0; for t in t_ok t_bad t_ok2; do case $t in *bad*) echo "FAIL $t"; fail=$((fail+1));; *) echo "PASS $t";; esac; done; test $fail -eq 0 || { echo "$fail failed"; exit 1; }
### mk-install-loop
mkdir -p stage/bin; for f in tool1 tool2; do echo "#!/bin/sh" > $f; install -m 755 $f stage/bin/ 2>/dev/null || cp $f stage/bin/; done; ls stage/bin
### mk-version-from-git-fallback
VERSION=$(git describe --tags 2>/dev/null || echo 0.0.0-dev); echo $VERSION
### mk-ldflags-string
VERSION=1.2; COMMIT=abc123; LDFLAGS="-X main.version=$VERSION -X main.commit=$COMMIT"; echo "go build -ldflags \"$LDFLAGS\""
### mk-check-tool-versions
for tool in sh cat; do printf '%-4s %s\n' "$tool" "$(command -v $tool >/dev/null && echo found || echo missing)"; done
### mk-dist-tarball-name
NAME=pkg; VERSION=2.1.0; echo "$NAME-$VERSION.tar.gz"; echo "${NAME}_${VERSION//./_}"
### mk-help-target
cat > Makefile <<'EOF'
build: ## Build the project
test: ## Run tests
clean: ## Remove artifacts
EOF
grep -E '^[a-zA-Z_-]+:.*?## .*$' Makefile | awk 'BEGIN {FS = ":.*?## "}; {printf "%-10s %s\n", $1, $2}'
### mk-phony-list
printf 'all:\nclean:\ntest:\n' > M; grep -o '^[a-z]*' M | tr '\n' ' '; echo
### mk-deps-file-parse
echo 'main.o: main.c util.h \' > main.d; echo ' config.h' >> main.d; tr -d '\\\n' < main.d | tr -s ' ' | cut -d: -f2
### mk-gen-header
cat > version.h <<EOF
#define VERSION "$(echo 3.2.1)"
#define BUILD_NUM $((40 + 2))
EOF
cat version.h
### mk-compare-and-update
echo old > gen.txt; new=new; if [ "$(cat gen.txt)" != "$new" ]; then echo $new > gen.txt; echo updated; fi; cat gen.txt
### mk-wildcard-substitute
touch a.md b.md; for f in *.md; do echo "${f%.md}.html"; done
### mk-patsubst-like-sed
echo "src/a.c src/b.c" | sed 's|src/\([^ ]*\)\.c|obj/\1.o|g'
### mk-filter-out
all="a b c d"; out="b d"; for x in $all; do case " $out " in *" $x "*) ;; *) printf '%s ' $x;; esac; done; echo
### mk-ifeq-shell
DEBUG=1; if [ "$DEBUG" = 1 ]; then CFLAGS="-g -O0"; else CFLAGS=-O2; fi; echo "$CFLAGS"
### mk-nproc-jobs
j=$(nproc 2>/dev/null || echo 1); [ "$j" -ge 1 ] && echo jobs-ok
### mk-silent-errors-ignored
rm nonexistent-file 2>/dev/null; true; echo continue
### mk-or-die
cd nonexistent-dir 2>/dev/null || { echo "no such dir"; exit 2; }
### mk-multi-line-continuation
echo one \
  two \
  three
### mk-semicolon-chain-status
false; echo "after false"; true && echo "and true"
### mk-coverage-awk-percent
printf 'lines......: 75.0%% (3 of 4 lines)\n' > cov.txt; awk '/lines/ {gsub("%","",$2); if ($2+0 < 80) {print "low", $2; exit 1}}' cov.txt; echo rc=$?
### mk-lint-find-xargs-wc
mkdir -p src; printf 'a\nb\n' > src/a.c; printf 'c\n' > src/b.h; find src -type f \( -name '*.c' -o -name '*.h' \) | sort | xargs wc -l
### mk-generate-list-file
ls -1 /dev/null > list.txt; printf '%s\n' one two >> list.txt; sed -n '2,$p' list.txt
### mk-docker-tag-sanitize
branch="Feature/ABC_123"; echo "$branch" | tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9.-]/-/g'
### mk-env-check
: "${CC:=cc}"; echo "CC=$CC"; CC=clang; : "${CC:=cc}"; echo "CC=$CC"
### mk-sum-sizes-awk
printf '10 a\n20 b\n30 c\n' | awk '{t+=$1} END {printf "total %d KB\n", t}'
### mk-release-notes-git-free
printf 'feat: a\nfix: b\nfeat: c\nchore: d\n' > log.txt; for t in feat fix; do echo "## $t"; grep "^$t:" log.txt | sed "s/^$t: /- /"; done
### mk-count-todo-per-dir
mkdir -p x y; echo TODO > x/1; echo TODO > x/2; echo ok > y/1; for d in x y; do echo "$d $(grep -rl TODO $d | wc -l)"; done
### mk-check-executable-bits
touch s1.sh s2.sh; chmod +x s1.sh; for f in s*.sh; do [ -x "$f" ] || echo "not executable: $f"; done
### mk-strip-comments-blank
printf '# c\nA=1\n\n  # d\nB=2\n' | grep -v '^[[:space:]]*#' | grep -v '^$'
