"""Divergences from GNU bash in the builtins and in the Shell's own bash/sh
command that a public case-file corpus found (tests/differential/spec_cases.py
run on it), one case each, written here in our own words and run as
test_shell_bash.py runs its cases (box-shell -c and bash -c in twin
directories; stdout, stderr with bash's prefix forgiven, and status compared).
On the bash side a nested `bash -c` is GNU bash; on ours, the Shell's own.
"""
from test_shell_bash import bash_tables

# bash -i and a bad invocation print what the Shell words otherwise (job
# control, its whole usage), and a syntax error quotes its line: compared
# by stdout and status only
STATUS_CASES = [
    ("nested-interactive-flag", "bash -i -c 'echo \"[$-]\"' | grep -c i; bash -c 'echo \"[$-]\"' | grep -c i"),
    ("nested-unknown-letter", "bash -Q -c 'echo never'; echo st=$?"),
    ("nested-unknown-long-option", "bash --frobnicate -c 'echo never'; echo st=$?"),
    # NAME=(…) as an argument is read only after a declaration builtin's name
    ("list-argument-after-builtin", "builtin typeset lst=(p q); echo not-reached"),
    ("list-argument-after-echo", "echo first; echo lst+=(r); echo not-reached"),
]

CASES = [
    # ---- the nested bash/sh: its options as bash reads them ------------------
    ("nested-dash-o-pipefail", "bash -o pipefail -c 'false | true; echo pf=$?'; bash -c 'false | true; echo plain=$?'"),
    ("nested-plus-o-braces", "bash +o braceexpand -c 'echo {p,q}'; bash -c 'echo {p,q}'"),
    ("nested-dollar-dash-letters", "bash -o nounset -c 'echo $-'; bash -efc 'echo $-'; bash -c 'echo $-'"),
    ("nested-long-options-first", "bash --norc --noprofile -c 'echo fine $0' zero"),
    ("nested-c-after-other-letters", "bash -c -f 'echo * $-'"),
    ("nested-o-unknown-name", "bash -o nosuchopt -c 'echo never'; echo st=$?"),
    ("nested-O-shopt", "bash -O nullglob -c 'echo [nomatch*]'; bash -c 'echo [nomatch*]'"),
    ("nested-script-file-and-stdin-dash", "printf 'echo \"<$->\"\\n' > flags.sh; bash flags.sh; bash -s < flags.sh; bash < flags.sh"),
    ("nested-errexit-missing-script", "bash -o errexit absent-file.sh; echo st=$?; bash absent-file.sh; echo st=$?"),
    # ---- the nested bash sees exported variables only ------------------------
    ("nested-sees-exported-only", "plain=p; export shared=s; readonly fixed=f; arr=(1 2)\n"
                                  "bash -c 'echo \"[$plain][$shared][$fixed][${arr[1]}]\"'"),
    ("nested-exported-readonly-is-plain", "declare -rx locked=one; bash -c 'locked=two; echo $locked'"),
    ("nested-ifs-reset", "IFS=:; bash -c 'set -- $(echo \"a b\"); echo $#'"),
    ("nested-no-aliases", "shopt -s expand_aliases; alias greet='echo hi'; bash -c 'alias; echo count=$?'"),
    ("nested-exported-shellopts", "export SHELLOPTS; set -o noglob; bash -c 'echo *; echo $-'; set +o noglob"),
    # ---- return outside a function -------------------------------------------
    ("return-at-top-is-usage", "return; echo st=$?; (return 7); echo sub=$?"),
    # ---- set: a lone + and a lone - ------------------------------------------
    ("set-lone-plus-skipped", "set -- one two; set +; echo \"$#:$*\"; set -f + -C three; echo \"$#:$1:$-\""),
    ("set-lone-dash-keeps-args", "set -- kept; set -; echo \"$@\"; set - + ; echo \"$@\"; set + -; echo \"$@\""),
    # ---- set with no operand lists arrays too --------------------------------
    ("set-lists-arrays", "declare -a zq_list=(p 'q r'); declare -A zq_map=([k]=v ['s t']=u)\n"
                         "declare -a zq_declared_only; zq_empty=(); set | grep '^zq_'"),
    # ---- umask's symbolic modes ----------------------------------------------
    ("umask-symbolic-clauses", "umask 0000; umask u-x,g=r,o-rwx; umask; umask -S; umask a+x; umask"),
    ("umask-symbolic-then-file", "umask 0022; umask g+w; : > made.txt; stat -c %a made.txt"),
    ("umask-symbolic-errors", "umask 027; umask u+z; echo st=$?; umask 'g!r'; echo st=$?; umask 9; echo st=$?; umask"),
    ("umask-S-with-mode-prints", "umask -S 0037; umask -p 0002; umask"),
    # ---- ulimit ---------------------------------------------------------------
    ("ulimit-set-is-both-limits", "ulimit -t 4000; ulimit -t; ulimit -S -t; ulimit -H -t"),
    ("ulimit-soft-and-hard-together", "ulimit -S -H -t 350; echo both=$?; ulimit -S -t 360; echo above=$?; ulimit -H -t 400; echo raise=$?"),
    ("ulimit-bad-number", "ulimit -f lots; echo st=$?; ulimit -f 12x; echo st=$?; ulimit -f"),
    ("ulimit-out-of-range", "ulimit -f 20000000000000000; echo st=$?; ulimit -f"),
    ("ulimit-file-size-kib-blocks", "ulimit -f 2; printf '%01800d' 0 > padded.txt; echo st=$?; wc -c < padded.txt"),
    ("ulimit-several-resources", "ulimit -t 77 -f 88; ulimit -t -f; ulimit -f hard; ulimit -f"),
    ("ulimit-unknown-letter", "ulimit -T; echo st=$?; ulimit -Z; echo st=$?"),
    # ---- exec -- with only redirections --------------------------------------
    ("exec-dashdash-redirect-stays", "exec -- 5>&1; echo through-five >&5; echo st=$?"),
    # ---- command -p: the standard PATH ---------------------------------------
    ("command-p-ignores-custom-path", "mkdir kit; printf 'echo from-kit\\n' > kit/kittool; chmod +x kit/kittool\n"
                                      "PATH=$PWD/kit; kittool; command -p kittool; echo st=$?; echo ${PATH##*/}"),
    # ---- declare: NAME=(…) quoted or expanded is a string --------------------
    ("declare-quoted-list-is-string", "declare 'qa=(m n)'; spec='qb=(o p)'; declare \"$spec\"; declare qc=(r s)\n"
                                      "declare -a 'qd=(t u)'; declare +a 'qe=(v w)'; declare -p qa qb qc qd qe"),
    ("declare-quoted-list-existing-array", "qf=(1); declare 'qf=(x y)'; declare -p qf; export 'qg=(z)'; declare -p qg"),
    # ---- set -o posix: special builtins --------------------------------------
    ("posix-special-assignment-stays", "set -o posix; kept=yes :; echo \"[$kept]\"; lost=no builtin :; echo \"[$lost]\"\n"
                                       "also=1 export other=2; echo \"[$also][$other]\"; printenv kept\n"
                                       "held=orig; held=temp unset held; echo \"[$held]\"\n"
                                       "f() { v=in; v=tmp eval 'unset v'; echo \"[$v]\"; }; f"),
    ("posix-special-beats-function", "shift() { echo fn-shift; }; set -- a b; shift; echo \"$1\"\n"
                                     "set -o posix; shift; echo \"$1\"; type -t shift; greet() { echo hello; }; greet"),
    ("posix-special-funcdef-fatal", "set -o posix; export() { :; }; echo not-reached"),
]


test_builtins_like_bash_spec, test_builtins_status_like_bash_spec = bash_tables(CASES, STATUS_CASES)
