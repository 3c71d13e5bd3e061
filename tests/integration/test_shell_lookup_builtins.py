"""Lookup and the builtins around it (type, command -v/-V, getopts, kill,
cd, pwd) against GNU bash: divergences a public case-file corpus found
(tests/differential/spec_cases.py), one case each, written here in our own
words and run as test_shell_bash.py runs its cases (box-shell -c and bash -c
in twin directories; stdout, stderr with bash's prefix forgiven, status).
"""
from test_shell_bash import bash_tables

# bash reports a background job a signal ended on stderr, with its pid:
# compared by stdout and status only
STATUS_CASES = [
    ("kill-n-number", 'sleep 3 & p=$!; kill -n 15 $p; echo k=$?; wait $p; echo w=$?'),
    ("kill-s-glued", 'sleep 3 & kill -sTERM $!; echo k=$?; wait $!; echo w=$?'),
]

CASES = [
    # ---- a program the Shell implements is named as the file PATH holds ----
    ("utility-named-as-its-file", 'type -t sort cut; command -v head; type -P wc; command -V uniq; '
                                  'type tr'),
    ("utility-shadowed-on-path", 'mkdir alt; for n in sed head; do printf "#!/bin/sh\\n" > alt/$n; '
                                 'chmod +x alt/$n; done; PATH=alt:$PATH; type -p sed head; '
                                 'type -t head; command -v sed'),
    ("type-f-function-then-file", 'mkdir b; : > b/tac; chmod +x b/tac; PATH=b:/usr/bin; '
                                  'tac() { :; }; type -f tac; type -t tac; type -ft tac'),
    # ---- type -a goes on past a builtin or function to every file ----------
    ("type-a-builtin-then-files", 'type -a printf; type -ap echo; echo() { :; }; type -a echo; '
                                  'type -ap echo; echo st=$?'),
    ("type-a-every-file-on-path", 'mkdir x y; for d in x y; do : > $d/zq; chmod +x $d/zq; done; '
                                  'PATH=x:y; type -a zq; type -ap zq; type zq; type -aP zq'),
    # ---- a file that is not executable is bash's last resort ---------------
    ("type-unexecutable-file", 'mkdir tools; : > tools/plainfile; PATH=tools:$PATH; '
                               'type -t plainfile; command -v plainfile; type -P plainfile; '
                               'type plainfile; type -a plainfile; echo st=$?'),
    # ---- getopts ------------------------------------------------------------
    ("getopts-bad-name-still-moves", "set -- -q val -r; getopts 'rq:' bad.name; "
                                     "echo st=$? OPTARG=$OPTARG OPTIND=$OPTIND"),
    ("getopts-optind-clamped-at-end", 'set -- -x -y p q r; while getopts xy o; do :; done; '
                                      'echo $OPTIND; set -- -z; while getopts z o; do echo in; done; '
                                      'echo $OPTIND; set --; getopts z o; echo $? $OPTIND'),
    ("getopts-end-unsets-optarg", "getopts 'k:' o -kvalue; echo $o $OPTARG; "
                                  "getopts 'k:' o -kvalue; echo $? \"$o\" ${OPTARG-none}"),
    ("getopts-readonly-name", 'readonly fixed; getopts m fixed -m; echo st=$? OPTIND=$OPTIND'),
    # ---- kill -l and -L: names and numbers both ways ------------------------
    ("kill-l-names-to-numbers", 'kill -l hup SIGQUIT 12 usr1; echo st=$?; kill -l 137 RTMIN+2 rtmax; '
                                'kill -L 3 nosig 400; echo st=$?'),
    ("kill-l-table", 'kill -L | head -n 2; kill -l | tail -n 1; kill -l | wc -l'),
    ("kill-option-errors", 'kill -n; echo st=$?; kill -s; echo st=$?; kill -sbogus 1; echo st=$?; '
                           'kill -n 15; echo st=$?; kill -l -- 9'),
    # ---- cd -------------------------------------------------------------------
    ("cd-dotdot-after-missing", 'cd gone/..; echo st=$?; : > f; cd f/..; echo st=$? ${PWD#$HOME}'),
    ("cd-physical-through-link", 'mkdir -p real/in; ln -s real lnk; cd lnk/in; echo ${PWD#$HOME}; '
                                 'cd -P ..; echo ${PWD#$HOME}; cd ../lnk; cd -P .; echo ${PWD#$HOME}; '
                                 'cd - >/dev/null; echo ${OLDPWD#$HOME}'),
    ("cd-set-physical", 'mkdir -p t2; ln -s t2 l2; set -o physical; cd l2; echo ${PWD#$HOME}; '
                        'set +o physical; cd -L ../l2; echo ${PWD#$HOME}; set -P; cd -L ../l2; '
                        'pwd | sed "s|^$HOME||"; pwd -L | sed "s|^$HOME||"'),
    ("cd-cdpath-search", 'mkdir -p one/proj two/proj two/only; CDPATH=$HOME/one:$HOME/two; '
                         'cd only | sed "s|^$HOME||"; cd proj >/dev/null; echo ${PWD#$HOME}; '
                         'cd $HOME; cd ./only; echo st=$?; CDPATH=:$HOME/two; cd proj | sed "s|^$HOME||"; '
                         'echo ${PWD#$HOME}; cd $HOME; CDPATH=two; cd -P only; echo ${PWD#$HOME}'),
    ("cd-combined-letters", 'mkdir -p r; ln -s r s; cd -LP s; echo ${PWD#$HOME}; cd -PL ../s; '
                            'echo ${PWD#$HOME}; cd -x; echo st=$?'),
]


test_like_bash_lookup, test_status_like_bash_lookup = bash_tables(CASES, STATUS_CASES)
