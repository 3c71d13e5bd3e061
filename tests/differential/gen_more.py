"""The second grammar of gen.py: forms the first does not write (issue groups
1-14 as agents meet them): quotes inside ${v op word}, arrays and assoc
arrays edited in place, EXIT/ERR/DEBUG traps in subshells and functions,
getopts error paths, read with IFS and its options, mapfile's options,
printf -v, local -n, descriptors from 10 and {fd}>, arithmetic errors,
here-documents, case inside $( ), [[ ]] over several lines, UTF-8 text.

Its statements come from a random stream of their own and go between the
first grammar's, so a seed's first-grammar program stays what it was (its
listed divergence keeps its reason) and a new divergence is a new form's.
"""
from gen import Gen, sq

UTF8 = ["\u03bc", "\u03bcx", "h\u00e9llo", "\u00e9t\u00e9", "\u65e5\u672c", "a\u00df", "\u2192x\u2190"]

QUOTED_WORDS = [
    '"x y"', "'x y'", '"$a"', "'$a'", '"${a}b"', '"a"b"c"', "\"'\"", "'\"'", '"\\""', "\\'", '\\"',
    '"*"', "'*'", "a' 'b", '"$(echo "in q")"', "`echo bq`", '"a\\tb"', "$'t\\tx'", '"${b:-"n d"}"',
    "$b", "'}'", '"}"', "\\}", "a\\ b",
]

TRIM_PATTERNS = [
    "*'/'", "\"*/\"", "'a'*", "*\"a\"", "\"$p\"", "$p", "*'.'*", "'*'", "\\*", "?", "??", "\"?\"",
    "[\"a\"]", "*[/.]", "'a b'", "*' '*", "*${s:0:1}", "\"${s:0:1}\"*",
]


class More(Gen):
    def stmt_more(self):
        k = self.r.randrange(20)
        return [self.op_word, self.op_word, self.arrays_more, self.assoc_more, self.traps_more,
                self.getopts_more, self.read_more, self.read_more, self.mapfile_more, self.printf_v,
                self.nameref, self.fds, self.arith_errors, self.heredoc_more, self.case_subst,
                self.cond_lines, self.utf8, self.utf8, self.misc, self.op_word][k]()

    def op_word(self):
        """${v op word} with quoting inside the word, inside and outside "…"."""
        self.tag("more-op-word")
        v = self.pick(["a", "b", "s", "f", "u", "x"])
        k = self.r.randrange(5)
        if k == 0:
            op = self.pick([":-", "-", ":+", "+", ":=", "="])
            if op in (":=", "="):
                v = self.pick(["u", "w"])
            e = "${" + v + op + self.pick(QUOTED_WORDS) + "}"
        elif k == 1:
            e = "${" + v + self.pick(["#", "##", "%", "%%"]) + self.pick(TRIM_PATTERNS) + "}"
        elif k == 2:
            op = self.pick(["/", "//", "/#", "/%"])
            e = "${" + v + op + self.pick(TRIM_PATTERNS + ["/", "'/'"]) + "/" + self.pick(QUOTED_WORDS + ["c", "", "\\/"]) + "}"
        elif k == 3:
            e = self.pick(["${" + v + "////c}", "${" + v + "//\\//c}", "${" + v + "/\\//\\\\}",
                           "${" + v + ":-a b c}", "${" + v + "-a\\ b c}", "${#" + v + "}",
                           "${" + v + ":-'a'\"b\"}", "${" + v + "@Q}", "${" + v + "%%[\"/\"]*}"])
        else:
            e = "${" + v + ":-${" + self.pick(["b", "u"]) + ":-" + self.pick(QUOTED_WORDS) + "}}"
        how = self.r.randrange(3)
        if how == 0:
            return self.show(['"' + e + '"'])
        if how == 1:
            return self.show([e])
        return "y=" + e + "; " + self.show(['"$y"'])

    def arrays_more(self):
        self.tag("more-arrays")
        return self.pick([
            "arr[-1]=last; " + self.show(['"${arr[@]}"']),
            "arr+=([7]=seven); echo \"${!arr[@]}\"; echo \"${arr[@]: -2:1}\"",
            "unset 'arr[@]'; echo \"${#arr[@]}\"; arr=(p q)",
            "arr=(\"${arr[@]/#/-}\"); " + self.show(['"${arr[@]}"']),
            "IFS=,; echo \"${arr[*]}\"; IFS=$' \\t\\n'",
            "a2=(\"${arr[@]:1}\"); declare -p a2",
            "local_arr() { local -a la=(\"$@\"); la+=(end); echo \"${#la[@]} ${la[-1]}\"; }; local_arr \"${arr[@]}\"",
            "read -ra ra <<< " + self.value_word() + "; declare -p ra",
            "arr=(); arr[5]=x; arr+=(y); echo \"${!arr[@]}\"",
            "arr=([2]=b [0]=a c); declare -p arr",
            "cp_arr=(\"${arr[@]}\"); cp_arr[0]=z; echo \"${arr[0]} ${cp_arr[0]}\"",
            "unset 'arr[0]'; echo \"${arr[0]-gone} ${#arr[@]}\"",
            "echo \"${arr[@]:1:1}\" \"${arr[*]:0:2}\" \"${#arr}\"",
            "set -- \"${arr[@]}\"; echo $#; " + self.show(['"$@"']),
            "arr=(${arr[*]}); echo ${#arr[@]}",
            "declare -a da; da[3]=x; echo \"${#da[@]} ${!da[*]}\"",
            "printf '<%s>' \"${arr[@]^}\"; echo",
            "arr=(\"$s\" \"$f\"); " + self.show(['"${arr[@]%%/*}"', '"${arr[@]#*.}"']),
        ])

    def assoc_more(self):
        self.tag("more-assoc")
        key = self.pick(["k", "x", "'x y'", "\"$a\"", "1", "-", "a.b"])
        return self.pick([
            "declare -A A; A[" + key + "]=" + self.value_word() + "; A[" + key + "]+=more; declare -p A",
            "declare -A A=([k]=v [j]=w); unset 'A[k]'; echo \"${#A[@]} ${!A[*]}\"",
            "declare -A A=([one]=1 [two]=2 [three]=3); for k in \"${!A[@]}\"; do echo \"$k=${A[$k]}\"; done | sort",
            "declare -A A=([k]=v); [[ -v A[k] ]] && echo set; [[ -v A[nope] ]] || echo unset",
            "declare -A A=([k]=v); declare -n ar='A[k]'; echo \"$ar\"; ar=new; echo \"${A[k]}\"",
            "declare -A A=(['a b']=1 [c]=2); echo \"${A['a b']}\" \"${A[c]}\" \"${#A[@]}\"",
            "declare -A A; A[$s]=1; echo \"${!A[@]}\"",
            "declare -A A=([x]=1); A+=([y]=2 [x]=3); for k in x y; do echo \"$k=${A[$k]}\"; done",
            "declare -A A=([k]=); echo \"[${A[k]-unset}] [${A[k]:-empty}]\"",
            "declare -A A=([k]=v); echo \"${A[@]@Q}\"",
            "declare -A A=([b]=2 [a]=1); printf '%s\\n' \"${A[@]}\" | sort",
            "m[new]=" + self.value_word() + "; echo \"${m[new]} ${#m[@]}\"",
        ])

    def traps_more(self):
        self.tag("more-traps")
        return self.pick([
            "( trap 'echo sub-exit $?' EXIT; echo in; exit 3 ); echo st=$?",
            "( trap 'echo sub-exit' EXIT; false ); echo st=$?",
            "( set -e; trap 'echo E$? $LINENO' ERR; false; echo not )",
            "te() { trap 'echo ret-trap' RETURN; echo body; }; te; trap - RETURN",
            "( trap 'echo EX' EXIT; trap - EXIT; echo cleared )",
            "( trap 'echo one' EXIT; trap 'echo two' EXIT; : )",
            "trap 'echo e:$?' ERR; f_e() { return 2; }; f_e; echo st=$?; trap - ERR",
            "( set -E; trap 'echo E:${FUNCNAME[0]-top}' ERR; ie() { false; }; ie; true )",
            "trap -p EXIT; trap 'echo x' EXIT; trap -p EXIT; trap - EXIT",
            "( trap '' ERR; false; echo ignored-$? )",
            "trap 'echo err' ERR; if false; then :; fi; false || true; ! false; echo quiet; trap - ERR",
            "( trap 'echo dbg' DEBUG; echo a; trap - DEBUG )",
            "( trap 'echo \"[$BASH_COMMAND]\"' DEBUG; x=1; echo $x; trap - DEBUG )",
            "( set -e; trap 'echo cleanup' EXIT; false; echo not )",
            "trap 'echo e$?' ERR; x=$(exit 6); echo st=$?; trap - ERR",
            "( exit_in() { exit 4; }; trap 'echo bye $?' EXIT; exit_in )",
        ])

    def getopts_more(self):
        self.tag("more-getopts")
        optstr = self.pick(["ab:c", ":ab:c", "a:", ":a:", "x", "vh"])
        args = self.pick(["-a", "-b", "-b val", "-abval", "-c -a", "-z", "-a -z -b", "-- -a", "-ac", "x -a", "-bc"])
        silent = self.chance(0.3)
        pre = "local OPTERR=0; " if silent else ""
        return ("gm() { local OPTIND=1 o; " + pre + "while getopts '" + optstr
                + "' o; do echo \"o=$o a=${OPTARG-none}\"; done; echo \"ind=$OPTIND st=$?\"; }; gm " + args
                + " 2>&1 | sed 's/^[^:]*: //'")

    def read_more(self):
        self.tag("more-read")
        data = self.pick(["'  lead trail  '", "'a:b:c'", "'x::y'", "'::'", "'a b c d'", "'a\\\\b c'", "'a\\tb'",
                          "$'t\\tu v'", "''", "'one'", "',a,,b,'", "' : x : '"])
        ifs = self.pick(["", "IFS=: ", "IFS=', ' ", "IFS= ", "IFS=$'\\t' ", "IFS=\": \" ", "IFS=, "])
        k = self.r.randrange(8)
        if k == 0:
            return ifs + "read " + self.pick(["-r ", ""]) + "x y <<< " + data + '; echo "($x)($y)"'
        if k == 1:
            return ifs + "read -r x y z <<< " + data + '; echo "($x)($y)($z)"'
        if k == 2:
            return "echo " + data + " | ( " + ifs + 'read x y; echo "($x)($y)" )'
        if k == 3:
            return "printf 'ab' | { read -r v; echo \"$? [$v]\"; }"
        if k == 4:
            return "read " + self.pick(["-n 2", "-N 3", "-d :", "-d ''", "-n 1 -r"]) + " v <<< " + data + '; echo "$? [$v]"'
        if k == 5:
            return "v=" + data + "; " + ifs + "set -- $v; echo $#; " + self.show(['"$@"'])
        if k == 6:
            return "set -- a 'b c' d; " + ifs + 'echo "$*"; ' + ifs.replace("IFS", "x") + "echo \"${*}\""
        return ifs + "read -ra ra <<< " + data + '; echo "${#ra[@]}"; ' + self.show(['"${ra[@]}"'])

    def mapfile_more(self):
        self.tag("more-mapfile")
        src = "printf '%s\\n' l1 'l 2' l3 l4"
        opt = self.pick(["-t", "", "-n 2", "-s 1 -t", "-O 2 -t", "-t -n 1 -s 2", "-C 'echo cb' -c 1",
                         "-t -C 'printf \"<%s|%s>\"' -c 2", "-d ' '"])
        cmd = self.pick(["mapfile", "readarray"])
        return (self.pick(["ma=(z); ", ""]) + cmd + " " + opt + " ma < <(" + src + "); echo; declare -p ma")

    def printf_v(self):
        self.tag("more-printf-v")
        return self.pick([
            "printf -v 'arr[2]' %s x; echo \"${arr[@]}\"",
            "printf -v pq %q " + self.value_word() + "; echo \"$pq\"",
            "printf -v pm '%s,' a b c; echo \"$pm\"",
            "printf -v 'm[k2]' '%d' 7; echo \"${m[k2]}\"",
            "printf -v pe '%b' 'a\\tb'; echo \"[$pe]\"",
            "printf -v pw '%5s|%-3s|' ab c; echo \"$pw\"",
            "printf -v 'a[' %s foo; echo \"st=$?\"",
            "pvf() { local out; printf -v out '%s-%s' \"$1\" \"$2\"; echo \"$out\"; }; pvf x y",
        ])

    def nameref(self):
        self.tag("more-nameref")
        return self.pick([
            "nr1() { local -n r=$1; r=5; }; nr1 nv; echo \"$nv\"",
            "nr2() { local -n r=$1; r+=(x); }; nr2 arr; echo \"${arr[@]}\"",
            "nr3() { local -n r=$1; echo \"${#r[@]} ${r[0]}\"; }; nr3 arr",
            "nr4() { local -n r=$1; r[k]=nk; }; nr4 m; echo \"${m[k]}\"",
            "declare -n ref1=a; ref1=via; echo \"$a\"; unset -n ref1",
            "declare -n n1=n2; declare -n n2=a; echo \"[$n1]\"; unset -n n1 n2",
            "nr5() { local -n r=$1; for e in \"${r[@]}\"; do printf '<%s>' \"$e\"; done; echo; }; nr5 arr",
            "nr6() { local v=inner; local -n r=$1; echo \"$r\"; }; v=outer; nr6 v",
            "declare -n nd=a; echo \"${!nd}\"; unset -n nd",
        ])

    def fds(self):
        self.tag("more-fds")
        return self.pick([
            "exec {fd}>fa; echo hi >&$fd; exec {fd}>&-; cat fa",
            "exec {fd}>fa; echo $fd; exec {fd}>&-",
            "echo line > fb; exec {rfd}<fb; read -r -u $rfd v; exec {rfd}<&-; echo \"$v\"",
            "exec 11>fc; echo eleven >&11; exec 11>&-; cat fc",
            "{ echo to12 >&12; } 12>fd12; cat fd12",
            "exec 15<<<'here str'; read -r v <&15; exec 15<&-; echo \"$v\"",
            "exec {fd}<<<'x y'; read -r -u \"$fd\" p q; echo \"$q\"",
            "exec 3>&1; echo via3 >&3; exec 3>&-",
            "{ echo out; echo err >&2; } 3>&1 1>&2 2>&3 | cat",
            "echo x 2>&1 >/dev/null | cat; echo y",
            "exec 10>f10; echo ten >&10; exec 10>&-; cat f10",
        ])

    def arith_errors(self):
        self.tag("more-arith-error")
        e = self.pick(["1/0", "5%0", "1 ? 20 : x+=2", "08", "2**-1", "a b", "1 +", "(1 +)", "x[", "1 2",
                       "0x", "2#3", "i++ ++", "'1'", "10#", "64#@", "1=2", "++5", "e=", "--i++"])
        # every expression balances its parentheses: an unbalanced one is the parser's error, not
        # arithmetic's, and bash's parser reads on past it
        loop = "for ((q=0; q<" + e + "; q++)); do :; done; echo st=$?"
        return "{ " + self.pick([
            "echo \"$(( " + e + " ))\"; echo after=$?",
            "(( " + e + " )); echo st=$?",
            "x=$(( " + e + " )) || echo failed; echo next",
            "let 'v=" + e + "'; echo st=$?",
            "( echo $(( " + e + " )); echo in ); echo out=$?",
            loop,
        ]) + "; } 2>/dev/null"

    def heredoc_more(self):
        self.tag("more-heredoc")
        if self.depth > 1:
            return "cat <<< 'depth'"
        return self.pick([
            "cat <<A; cat <<B\nfirst $a\nA\nsecond ${s:-\"q\"}\nB",
            "cat <<\"E\"OF\nraw $a\nEOF",
            "cat <<-X\n\t\ttabs $a\n\tX",
            "hf() { cat <<E\nin f: $1 ${FUNCNAME[0]}\nE\n}; hf arg",
            "y=$(cat <<E\n${a:-\"d\"} '$s'\nE\n); echo \"[$y]\"",
            "cat <<E\nline \\\ncontinued\\$a \\\\ \\`\nE",
            "while read -r hl; do echo \"<$hl>\"; done <<E\n1 $a\n  2\nE",
            "cat <<E | tr a-z A-Z\nlower $s\nE",
            "cat <<'E'\n$'x\\ty' ${a}\nE",
            "cat <<E\n$(echo cmd) $((2*3)) ${arr[1]}\nE",
            "cat <<E >hd; cat hd\nto file\nE",
        ])

    def case_subst(self):
        self.tag("more-case-subst")
        v = self.pick(["$a", "\"$s\"", "$f", "x"])
        return self.pick([
            "y=$(case " + v + " in (a*) echo A;; (*) echo other;; esac); echo \"$y\"",
            "echo $(case " + v + " in a|x) echo ax;; *.py) echo py;; *) echo no;; esac)",
            "y=$(case " + v + " in\n  a*) echo A\n    ;;\n  *) echo B;;\nesac\n); echo $y",
            "echo \"$(case " + v + " in *) echo \"in quotes\";; esac)\"",
            "y=`case " + v + " in a*) echo bq;; *) echo bo;; esac`; echo $y",
            "y=$(case x in x) case y in y) echo nested;; esac;; esac); echo $y",
        ])

    def cond_lines(self):
        self.tag("more-cond-lines")
        return self.pick([
            "[[ -n $a &&\n   $s != '' ]]; echo $?",
            "if [[ $a == a* ||\n      $f == *.py ]]; then echo yes; else echo no; fi",
            "[[ ( $a == x ) || ( -n $s ) ]]; echo $?",
            "[[ $(echo foo) == foo ]] && echo subst-ok",
            "[[ ! -z $a && ! -n $u ]]; echo $?",
            "[[ $s =~ ^(.)(.*)$ ]] && echo \"${BASH_REMATCH[1]}|${BASH_REMATCH[2]}\"",
            "[[ a < b && 2 -gt 1 ]]; echo $?",
            "[[ $a == \"$a\" ]] && [[ '*' == * ]]; echo $?",
            "[[ x == @(x|y) ]]; echo $?",
            "[[ 010 -eq 8 ]]; echo $?",
            "[[ -v arr[1] && ! -v arr[9] ]]; echo $?",
        ])

    def utf8(self):
        self.tag("more-utf8")
        s = self.pick(UTF8)
        return "u8=" + sq(s) + "; " + self.pick([
            "echo ${#u8}",
            "case $u8 in ?) echo one;; ??) echo two;; *) echo more;; esac",
            "echo \"${u8:1}\" \"${u8:0:1}\"",
            "echo \"${u8%?}\" \"${u8#?}\"",
            "[[ $u8 == ?* ]] && echo m; [[ $u8 == ?? ]]; echo $?",
            "echo \"${u8^^}\" \"${u8//?/.}\"",
            "printf '%s\\n' \"${u8: -1}\"",
            "echo \"${u8/[[:alpha:]]/A}\"",
            "for ((ci=0; ci<${#u8}; ci++)); do printf '<%s>' \"${u8:ci:1}\"; done; echo",
            "echo \"${u8@Q}\"",
        ])

    def misc(self):
        self.tag("more-misc")
        return self.pick([
            "echo $[1+2]",
            "for x in 1 2; do break " + self.pick(["x", "0", "-1", "1"]) + "; done; echo st=$?",
            "echo \"${!-}\" >/dev/null; echo ok",
            "if `false`; then echo t; else echo f; fi",
            "$(exit 42); echo $?",
            "echo a > zf; y=$(< zf); echo \"[$y]\"",
            "builtin echo bi; builtin printf '%s\\n' bp",
            "eval -- 'echo ev'",
            "command -v echo; type -t echo",
            "shopt -s expand_aliases; alias ea='echo aliased'\nea",
            "x=5; readonly x; x=6; echo \"still $x\"",
            "declare -i di=3+4; echo $di; di+=1; echo $di",
            "declare -l lw=ABC; declare -u uw=abc; echo $lw $uw",
            "echo ${#PIPESTATUS[@]}; true | true | false; echo ${PIPESTATUS[*]}",
            "f_c() { caller 0 >/dev/null; echo $?; }; f_c",
            "echo \"$_\" >/dev/null; echo xx; echo \"$_\"",
        ])
