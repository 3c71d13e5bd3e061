"""Random bash programs from a grammar of the idioms agents write.

gen_program(seed) -> Program: the same seed gives the same text on every
machine and Python version (random.Random with an int seed is stable).
A program is a list of top-level statements, so a divergence can be
reduced by dropping statements (difftest.py --reduce).

Nothing here is unstable under bash itself: no $$, $RANDOM, $SECONDS, time,
dates, background pids, reads of the terminal, or unbounded loops.
"""
import random
from dataclasses import dataclass, field

SCALARS = ["a", "b", "s", "f", "x"]
INTS = ["i", "j", "n"]

VALUES = [
    "abc", "a/b.py", "x y", "foo.tar.gz", "", "a*b", "  two  spaces ", "/usr/local/bin",
    "hello world", "AbC", "a:b:c", "\u03bcx", "1", "42", "-n", "a\\b", "it's", 'q"d',
    "path/to/file.txt", "*", "a b c", "src/main.rs", "v1.2.3", "--flag=val", "UPPER lower",
    "a,b,,c", "x\ty",
]

PATTERNS = [
    "*/", "*.", ".*", "*", "?", "a", "a*", "*b", "[a-c]", "[!a]*", "\\*", "'*'", '"*"',
    "$p", '"$p"', "*/*", "/", "//", "o", "*.py", ".", " ", "[[:space:]]", "[[:upper:]]",
    "b*", "*c",
]

REPLS = ["X", "", "_", "'q'", '"x y"', "$b", "&", "\\/", "-"]

OP_WORDS = [
    "def", "x y", '"x y"', "'q r'", "$b", '"$b"', "${b:-z}", "", "'$b'", '"a"b', "\\$b",
    "*", '"*"', "$(echo sub)", "a\\ b",
]


def sq(s):
    """s as one single-quoted shell word."""
    return "'" + s.replace("'", "'\\''") + "'"


@dataclass
class Program:
    seed: int
    stmts: list = field(default_factory=list)
    tags: set = field(default_factory=set)

    @property
    def text(self):
        return "\n".join(self.stmts) + "\n"


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.tags = set()
        self.depth = 0

    def pick(self, xs):
        return xs[self.r.randrange(len(xs))]

    def chance(self, p):
        return self.r.random() < p

    def tag(self, t):
        self.tags.add(t)

    # ---- words ------------------------------------------------------------
    def value_word(self):
        v = self.pick(VALUES)
        k = self.r.randrange(4)
        if k == 0 and v and all(c.isalnum() or c in "/._-:," for c in v):
            return v
        if k == 1 and '"' not in v and "\\" not in v and "$" not in v and "`" not in v:
            return '"' + v + '"'
        if k == 2 and "\t" in v:
            return "$'" + v.replace("\\", "\\\\").replace("'", "\\'").replace("\t", "\\t") + "'"
        return sq(v)

    def var(self):
        return self.pick(SCALARS)

    def param(self, quoted):
        """One ${…} form on a scalar."""
        v = self.var()
        k = self.r.randrange(20)
        if k == 0:
            self.tag("param-plain")
            return "$" + v if self.chance(0.5) else "${" + v + "}"
        if k in (1, 2, 3):
            op = self.pick([":-", "-", ":+", "+", ":=", "="])
            w = self.pick(OP_WORDS)
            self.tag("param-default" + ("-q" if quoted else ""))
            if op in (":=", "="):
                v = self.pick(["u", "w"])
            return "${" + v + op + w + "}"
        if k in (4, 5, 6, 7):
            op = self.pick(["#", "##", "%", "%%"])
            self.tag("param-trim" + ("-q" if quoted else ""))
            return "${" + v + op + self.pick(PATTERNS) + "}"
        if k in (8, 9):
            op = self.pick(["/", "//", "/#", "/%"])
            self.tag("param-repl" + ("-q" if quoted else ""))
            pat = self.pick(PATTERNS)
            if self.chance(0.2):
                return "${" + v + op + pat + "}"
            return "${" + v + op + pat + "/" + self.pick(REPLS) + "}"
        if k == 10:
            self.tag("param-len")
            return "${#" + v + "}"
        if k in (11, 12):
            self.tag("param-substr")
            off = self.pick(["0", "1", "2", " -1", " -3", "(-2)", "i", "1+1", "10"])
            if self.chance(0.5):
                return "${" + v + ":" + off + "}"
            return "${" + v + ":" + off + ":" + self.pick(["1", "2", "0", "-1", "j", "5"]) + "}"
        if k == 13:
            self.tag("param-case")
            return "${" + v + self.pick(["^", "^^", ",", ",,", "~", "~~"]) + "}"
        if k == 14:
            self.tag("param-indirect")
            return "${!" + self.pick(["ref", "r2"]) + "}"
        if k == 15:
            self.tag("param-error")
            return "${" + self.pick(["u", "a"]) + self.pick([":?", "?"]) + self.pick(["", "msg", '"oops x"']) + "}"
        if k == 16:
            self.tag("param-transform")
            return "${" + v + "@" + self.pick(["Q", "U", "L", "u", "a"]) + "}"
        if k == 17:
            self.tag("param-special")
            return self.pick(["$#", "$?", "${1-none}", '"$*"', "$*", '"$@"', "$@", "${#@}", "${@:2}", "$0x"]).replace("$0x", "${2:-two}")
        if k == 18:
            self.tag("param-nested")
            return "${" + v + ":-${" + self.var() + self.pick(["#*/", "%.*", "//a/b", ":-w"]) + "}}"
        self.tag("arr-expand")
        return self.array_expand(quoted)

    def array_expand(self, quoted):
        k = self.r.randrange(12)
        arr = self.pick(["arr", "arr", "m", "e"])
        if k == 0:
            return "${" + arr + "[@]}"
        if k == 1:
            return "${" + arr + "[*]}"
        if k == 2:
            return "${#" + arr + "[@]}"
        if k == 3:
            return "${!" + arr + "[@]}"
        if k == 4:
            return "${" + arr + "[" + self.pick(["0", "1", "-1", "i", "k", "x y", "$j"]) + "]}"
        if k == 5:
            return "${" + arr + "[@]:" + self.pick(["1", "0:2", "1:1", " -1", "2", "3", " -2:1", "0"]) + "}"
        if k == 6:
            return "${" + arr + "[@]" + self.pick(["#a", "%.*", "/a/X", "//?/_", "^^", "#*/"]) + "}"
        if k == 7:
            return "${#" + arr + "[" + self.pick(["0", "1", "k"]) + "]}"
        if k == 8:
            return "${" + arr + "[@]:-none}"
        if k == 9:
            return "${" + arr + "}"
        if k == 10:
            return "${" + arr + "[*]:1}"
        return "${!" + arr + "[*]}"

    def expansion_word(self):
        """A word for an argument list: a mix of quoting and expansions."""
        k = self.r.randrange(8)
        if k < 3:
            return self.param(False)
        if k < 6:
            inner = self.param(True)
            pre = self.pick(["", "", "<", "x:", " "])
            return '"' + pre + inner + '"'
        if k == 6:
            self.tag("arith-expand")
            return "$((" + self.arith(2) + "))"
        return self.value_word()

    # ---- arithmetic ------------------------------------------------------
    def arith(self, d):
        if d <= 0 or self.chance(0.3):
            k = self.r.randrange(6)
            if k < 2:
                return str(self.r.randrange(-3, 12))
            if k == 2:
                return self.pick(INTS)
            if k == 3:
                return "$" + self.pick(INTS)
            if k == 4:
                return self.pick(["0x1f", "010", "2#101", "16#ff", "36#z", "0"])
            return self.pick(INTS) + self.pick(["++", "--"]) if self.chance(0.5) else self.pick(["++", "--"]) + self.pick(INTS)
        k = self.r.randrange(9)
        a, b = self.arith(d - 1), self.arith(d - 1)
        if k < 4:
            op = self.pick(["+", "-", "*", "<<", ">>", "&", "|", "^", "<", "<=", "==", "!=", ">", "&&", "||"])
            return "(" + a + " " + op + " " + b + ")" if self.chance(0.5) else a + op + b
        if k == 4:
            return a + self.pick(["/", "%"]) + str(self.r.randrange(1, 7))
        if k == 5:
            return "(" + a + ")" + "**" + str(self.r.randrange(0, 4))
        if k == 6:
            return a + " ? " + b + " : " + self.arith(d - 1)
        if k == 7:
            return self.pick(INTS) + self.pick(["=", "+=", "-=", "*=", "<<=", "|="]) + "(" + b + ")"
        return self.pick(["-", "!", "~"]) + "(" + a + ")"

    # ---- statements ------------------------------------------------------
    def pattern(self):
        """A pattern that stands as a word of its own (a bare blank does not)."""
        p = self.pick(PATTERNS)
        return p if p != " " else "' '"

    def show(self, words):
        """Prints words bracketed one by one: shows splitting and globbing."""
        return "printf '[%s]' " + " ".join(words) + "; echo"

    def assign(self):
        k = self.r.randrange(5)
        v = self.var()
        self.tag("assign")
        if k < 3:
            return v + "=" + self.value_word()
        if k == 3:
            self.tag("assign-expand")
            return v + "=" + self.param(False)
        return v + "+=" + self.value_word()

    def stmt(self):
        if self.depth > 2:
            return self.simple()
        self.depth += 1
        try:
            k = self.r.randrange(100)
            if k < 30:
                return self.simple()
            if k < 38:
                return self.arrays()
            if k < 44:
                return self.arith_stmt()
            if k < 50:
                return self.if_stmt()
            if k < 55:
                return self.case_stmt()
            if k < 62:
                return self.loop()
            if k < 68:
                return self.function()
            if k < 72:
                return self.trap()
            if k < 77:
                return self.heredoc()
            if k < 83:
                return self.redirection()
            if k < 88:
                return self.subst()
            if k < 93:
                return self.builtins()
            return self.conds()
        finally:
            self.depth -= 1

    def body(self, n=None):
        n = n or self.r.randrange(1, 3)
        return "; ".join(self.stmt() for _ in range(n))

    def simple(self):
        k = self.r.randrange(6)
        if k < 3:
            return self.show([self.expansion_word() for _ in range(self.r.randrange(1, 4))])
        if k == 3:
            return self.assign()
        if k == 4:
            self.tag("echo")
            return "echo " + " ".join(self.expansion_word() for _ in range(self.r.randrange(1, 3)))
        self.tag("status")
        return self.pick(["false; echo $?", "true; echo $?", "(exit 3); echo $?", "! true; echo $?",
                          "! false; echo $?", "false || echo or $?", "true && echo and",
                          "$(exit 4); echo $?", "x=$(false); echo $?", "`false`; echo $?"])

    def arrays(self):
        self.tag("arrays")
        k = self.r.randrange(17)
        if k == 16:
            self.tag("nameref")
            target = self.pick(["arr", "'arr[1]'", "arr[i]", "'m[k]'", "'m[x y]'", "v"])
            return ("declare -n nr=" + target + "; " + self.pick(["echo \"[$nr]\"", "nr=" + self.value_word(),
                                                                "nr+=" + self.value_word(), "read nr <<< " + self.value_word(),
                                                                "printf -v nr %s " + self.value_word()])
                    + "; declare -p nr; unset -n nr")
        if k == 0:
            return "arr=(" + " ".join(self.value_word() for _ in range(self.r.randrange(0, 4))) + ")"
        if k == 1:
            self.tag("arr-selfref")
            return 'arr=("${arr[@]}" ' + self.value_word() + ")"
        if k == 2:
            return "arr+=(" + self.value_word() + ")"
        if k == 3:
            return "arr[" + self.pick(["0", "3", "i", "-1", "j+1"]) + "]=" + self.value_word()
        if k == 4:
            self.tag("arr-unset")
            return "unset " + self.pick(["'arr[1]'", "arr[0]", '"arr[-1]"', "'m[k]'", "'m[x y]'", "arr"])
        if k == 5:
            self.tag("assoc")
            return "declare -A m=(" + " ".join("[" + self.pick(["k", "x", "'x y'", "1", "z"]) + "]=" + self.value_word()
                                              for _ in range(self.r.randrange(1, 4))) + ")"
        if k == 6:
            self.tag("assoc")
            return "m[" + self.pick(["k", "x", "$a", '"$s"', "new"]) + "]=" + self.value_word()
        if k == 7:
            self.tag("arr-test-v")
            return ("test -v " + self.pick(["'arr[1]'", "'arr[0]'", "'m[k]'", "arr", "'e[0]'", "'arr[-1]'", "'m[@]'",
                                            "'arr[5]'", "'e[@]'", "m", "'a['", "1x"]) + "; echo $?; [[ -v "
                    + self.pick(["arr[2]", "m[x]", "a", "e"]) + " ]]; echo $?")
        if k == 8:
            return 'for el in "${arr[@]}"; do printf "<%s>" "$el"; done; echo'
        if k == 9:
            self.tag("arr-declare-p")
            return "declare -p " + self.pick(["arr", "e", "m"])
        if k == 10:
            self.tag("nounset-arr")
            return '(set -u; printf "[%s]" "${e[@]}"; echo "n=${#e[@]}")'
        if k == 11:
            return self.show(['"${arr[@]}"', '"${!arr[@]}"'])
        if k == 12:
            return 'echo "${#arr[@]}" "${arr[*]}"'
        if k == 13:
            self.tag("arr-split")
            return "IFS=" + self.pick([":", ",", "' '", "/"]) + " read -ra arr <<< " + self.value_word() + '; echo "${#arr[@]}:${arr[0]-}"'
        if k == 14:
            self.tag("arr-mapfile")
            return "mapfile -t arr < <(printf '%s\\n' " + " ".join(self.value_word() for _ in range(2)) + '); echo "${#arr[@]}"'
        self.tag("assoc")
        return 'for k in "${!m[@]}"; do echo "$k=${m[$k]}"; done | sort'

    def arith_stmt(self):
        self.tag("arith")
        k = self.r.randrange(4)
        if k == 0:
            return "echo $((" + self.arith(3) + "))"
        if k == 1:
            return "((" + self.arith(2) + ")); echo $?"
        if k == 2:
            return "let " + self.pick(INTS) + "=" + sq(self.arith(2)) + "; echo $" + self.pick(INTS)
        return self.pick(INTS) + "=$((" + self.arith(2) + ")); echo $i $j $n"

    def cond(self):
        k = self.r.randrange(8)
        if k == 0:
            return "[[ " + self.param(True) + " == " + self.pattern() + " ]]"
        if k == 1:
            return "[[ -n " + self.param(True) + " ]]"
        if k == 2:
            return "[ " + '"$' + self.var() + '"' + " = " + self.value_word() + " ]"
        if k == 3:
            return "(( " + self.arith(2) + " ))"
        if k == 4:
            return "[[ $" + self.var() + " =~ " + self.pick(["^a", "[0-9]+", "(.*)/(.*)", "\\.py$", "^$"]) + " ]]"
        if k == 5:
            return self.pick(["true", "false", "[[ -z $u ]]", "test -n \"$a\"", "[[ $i -lt 3 ]]"])
        if k == 6:
            return "[[ " + self.pick(["-v a", "-v u", "$a < $b", "-f f", "-d .", "! -e nope"]) + " ]]"
        return "[[ $(echo " + self.value_word() + ") == " + self.pattern() + " ]]"

    def if_stmt(self):
        self.tag("if")
        t = "if " + self.cond() + "; then " + self.body() + ";"
        if self.chance(0.3):
            t += " elif " + self.cond() + "; then " + self.body() + ";"
        if self.chance(0.5):
            t += " else " + self.body() + ";"
        return t + " fi"

    def case_stmt(self):
        self.tag("case")
        items = []
        for _ in range(self.r.randrange(1, 4)):
            pats = "|".join(self.pick([p for p in PATTERNS if p != " "] + ["abc", "x\\ y", "'x y'", "*.gz", "[0-9]*"])
                            for _ in range(self.r.randrange(1, 3)))
            items.append(pats + ") " + self.body(1) + " " + self.pick([";;", ";;", ";;", ";&", ";;&"]))
        items.append("*) echo default ;;")
        return "case " + self.pick(['"$' + self.var() + '"', "$" + self.var(), self.param(True)]) + " in " + " ".join(items) + " esac"

    def loop(self):
        k = self.r.randrange(6)
        if k == 0:
            self.tag("for-in")
            return "for w in " + " ".join(self.expansion_word() for _ in range(self.r.randrange(1, 3))) + '; do printf "<%s>" "$w"; done; echo'
        if k == 1:
            self.tag("for-arith")
            return "for ((i=0; i<" + self.pick(["3", "$n", "n", "j+1"]) + "; i++)); do " + self.body(1) + "; done"
        if k == 2:
            self.tag("while")
            return "k=0; while (( k < " + str(self.r.randrange(0, 4)) + " )); do " + self.body(1) + "; ((k++)); done; echo k=$k"
        if k == 3:
            self.tag("break")
            return ("for x in 1 2 3 4; do " + self.pick(["[[ $x == 3 ]] && break", "[[ $x == 2 ]] && continue",
                                                          "for y in a b; do [[ $y == b ]] && continue 2; echo $x$y; done",
                                                          "for y in a b; do break 2; done"]) + "; echo $x; done")
        if k == 4:
            self.tag("while-read")
            return "printf '%s\\n' " + " ".join(self.value_word() for _ in range(2)) + ' | while IFS= read -r line; do echo "got:$line"; done'
        self.tag("until")
        return "c=0; until [[ $c -ge 2 ]]; do echo c$c; c=$((c+1)); done"

    def function(self):
        self.tag("function")
        name = self.pick(["f", "g"])
        body = [self.pick(["local l=$1", "local l=\"$*\"", "local -a la=(\"$@\")", "local v=$" + self.var(), "echo \"$# $1\"",
                           "shift; echo \"$@\""])]
        body.append(self.body(1))
        if self.chance(0.5):
            body.append("return " + self.pick(["0", "1", "3", "$#"]))
        args = " ".join(self.expansion_word() for _ in range(self.r.randrange(0, 3)))
        call = self.pick([name + " " + args + "; echo \"rc=$?\"", "out=$(" + name + " " + args + "); echo \"[$out]\"",
                          name + " " + args + " | cat", name + " " + args + " > fo; cat fo"])
        return name + "() { " + "; ".join(body) + "; }; " + call

    def trap(self):
        self.tag("trap")
        k = self.r.randrange(11)
        if k in (9, 10):
            self.tag("trap-debug")
            show = self.pick(["'echo \"d[$BASH_COMMAND]$?\"'", "'echo \"d$LINENO:$?\"'", "'echo d'"])
            return ("set " + self.pick(["-T", "+T"]) + "; trap " + show + " DEBUG; "
                    + self.pick(["false; echo a", "x=1; ((x++)); echo $x", "for i in 1 2; do :; done",
                                 "case a in a) true;; esac", "df() { echo in; }; df", "(echo sub)",
                                 "y=$(echo cs); echo $y", "[[ a == a ]]", "if true; then :; fi",
                                 "df() { return 3; }; df; echo $?"])
                    + "; trap - DEBUG; set +T")
        if k == 6:
            self.tag("trap-err-pipe")
            return ("set " + self.pick(["-E", "+E"]) + "; trap 'echo E$?' ERR; ef() { false; }; "
                    + self.pick(["ef | cat", "true | false", "false & wait", "{ false; echo x; } & wait", "ef & wait",
                                 "true | { false; echo y; }"])
                    + "; echo ${PIPESTATUS[@]}; trap - ERR; set +E")
        if k == 7:
            self.tag("trap-err-armed")
            return ("ef() { trap 'echo E$?' ERR; " + self.pick(["return 3", "(exit 4)", "false", "eval false"])
                    + "; }; ef; echo $?; trap - ERR")
        if k == 8:
            self.tag("trap-err-lineno")
            return "trap 'echo \"e:$?:$LINENO\"' ERR\n" + self.pick(["`false`", "$(false)", "x=`false`", "false | true"]) + "\ntrap - ERR"
        if k == 0:
            return "trap 'echo \"err:$?\"' ERR; false; echo after"
        if k == 1:
            self.tag("trap-err-lineno")
            return "trap 'echo \"err:$?:$LINENO\"' ERR\n" + self.pick(["false", "(exit 5)", "[[ a == b ]]", "x=$(false)"]) + "\necho done"
        if k == 2:
            return "trap 'echo exiting $?' EXIT; " + self.body(1)
        if k == 3:
            self.tag("trap-errtrace")
            return "set " + self.pick(["-E", "-o errtrace", "+E"]) + "; trap 'echo trapped' ERR; h() { false; echo in-h; }; h; echo st=$?"
        if k == 4:
            self.tag("trap-return")
            return "trap 'echo ret' RETURN; r() { :; }; r; trap - RETURN"
        self.tag("trap-subshell")
        return "trap 'echo E' ERR; (false); echo a; { false; }; echo b; trap - ERR"

    def heredoc(self):
        self.tag("heredoc")
        # a here-document's terminator must stand alone on its line: inside
        # a one-line compound the statement after it would follow it
        k = self.r.randrange(4) if self.depth <= 1 else 3
        word = self.expansion_word().replace("\n", " ")
        if k == 0:
            return "cat <<EOF\nline $" + self.var() + " " + word + "\n$((1+2)) \\$x `echo bt`\nEOF"
        if k == 1:
            return "cat <<'EOF'\nraw $" + self.var() + " `x` \\n\nEOF"
        if k == 2:
            return "cat <<-EOF\n\tindented $" + self.var() + "\n\tEOF"
        return 'cat <<< "' + self.param(True) + '"'

    def redirection(self):
        self.tag("redir")
        k = self.r.randrange(8)
        if k == 0:
            return "echo " + self.value_word() + " > rf; echo more >> rf; cat rf"
        if k == 1:
            return "{ echo out; echo err >&2; } 2>&1 | cat"
        if k == 2:
            return "{ echo out; echo err >&2; } 2>/dev/null"
        if k == 3:
            self.tag("redir-exec-fd")
            return "exec 3>rf3; echo via3 >&3; exec 3>&-; cat rf3"
        if k == 4:
            return "printf 'l1\\nl2\\n' > rf; while read -r ln; do echo \"[$ln]\"; done < rf"
        if k == 5:
            self.tag("redir-highfd")
            return "exec " + self.pick(["10", "20", "12"]) + ">rf4; echo hi >&" + "XX" + "; cat rf4"
        if k == 6:
            return "cat < nofile; echo st=$?"
        return "echo x > rd; read -r v < rd; echo \"$v\"; cat rd > rd2 && cat rd2"

    def subst(self):
        self.tag("subst")
        k = self.r.randrange(6)
        if k == 0:
            return "y=$(" + self.simple() + "); echo \"[$y]\""
        if k == 1:
            self.tag("subst-file")
            return "echo " + self.value_word() + " > sf; y=$(< sf); echo \"[$y]\""
        if k == 2:
            return "( " + self.assign() + "; echo in:$" + self.var() + " ); echo out:$" + self.var()
        if k == 3:
            return "echo \"$(echo \"$(echo nested " + self.param(True) + ")\")\""
        if k == 4:
            self.tag("subst-case")
            return "y=$(case $" + self.var() + " in a*) echo A;; *) echo other;; esac); echo $y"
        return "echo `echo back` $(echo $(echo " + self.value_word() + "))"

    def builtins(self):
        self.tag("builtins")
        k = self.r.randrange(12)
        if k == 0:
            return "set -- " + " ".join(self.value_word() for _ in range(self.r.randrange(0, 4))) + '; echo $#; printf "[%s]" "$@"; echo'
        if k == 1:
            return "IFS=" + self.pick([":", "': '", ",", "''"]) + " read -r p1 p2 <<< " + self.value_word() + '; echo "($p1)($p2)"'
        if k == 2:
            self.tag("printf-v")
            name = self.pick(["pv", "pv", "'arr[1]'", "'m[k]'", "'a['", "1pv", "'arr[x'"])
            return "printf -v " + name + " '%s-%d' " + self.value_word() + " 5; echo \"$? ${pv-} ${arr[1]-} ${m[k]-}\""
        if k == 3:
            return "declare -p " + self.var() + " 2>/dev/null || echo undeclared"
        if k == 4:
            self.tag("readonly")
            return "readonly ro=1; ro=2; echo \"st=$? ro=$ro\""
        if k == 5:
            return "export ex=$" + self.var() + "; echo \"[$ex]\""
        if k == 6:
            return "unset " + self.var() + "; echo \"[${" + self.var() + "-unset}]\""
        if k == 7:
            self.tag("getopts")
            return ("go() { local OPTIND=1 o; while getopts 'ab:c' o; do echo \"o=$o ${OPTARG-}\"; done; shift $((OPTIND-1)); echo \"rest=$*\"; }; go "
                    + self.pick(["-a -b x y", "-ac z", "-b", "-x", "--", "-a -- -b"])
                    + self.pick(["", "", "; g2() { local OPTIND=1 o; while getopts 'xy' o; do echo \"o:$o\"; [[ $o = x ]] && g2 -y; done; }; g2 -xy"]))
        if k == 8:
            self.tag("special-vars")
            return self.pick(["true | false; echo ${PIPESTATUS[@]}", "echo \"$_\"", "echo ${#PIPESTATUS[@]}",
                              "f1() { echo ${FUNCNAME[0]}; }; f1", "echo $LINENO", "echo $OSTYPE"])
        if k == 9:
            self.tag("shopt")
            return self.pick(["shopt -s nullglob; echo none*; shopt -u nullglob", "shopt -q extglob; echo $?",
                              "set -o | grep -c pipefail", "shopt -s extglob; x=aab; echo ${x/+(a)/Z}",
                              "set -f; echo *; set +f", "shopt -o -p errexit", "shopt -po errexit pipefail",
                              "shopt -so pipefail; false | true; echo $?; shopt -uo pipefail", "set -ET; echo $-; set +ET",
                              "shopt -p extdebug globskipdots", "shopt -s xpg_echo; echo 'a\\tb'; shopt -u xpg_echo",
                              "set +o | grep -c trace", "shopt -q nosuch; echo $?"])
        if k == 10:
            self.tag("local-split")
            return "words='a b c'; fn2() { local q=$words; echo \"[$q]\"; }; fn2; export ex2=$words; echo \"[$ex2]\""
        return "eval " + sq("echo " + self.expansion_word())

    def conds(self):
        self.tag("cond")
        return self.cond() + "; echo $?"


def gen_program(seed):
    g = Gen(seed)
    stmts = ["p='*.'; ref=a; r2=s; i=1; j=2; n=3; arr=(alpha 'b c' d); declare -A m=([k]=v [x]=y); e=()"]
    for _ in range(g.r.randrange(1, 3)):
        stmts.append(g.assign())
    for _ in range(g.r.randrange(2, 5)):
        stmts.append(g.stmt())
    # the second grammar's statements, from a stream of their own, go
    # between the first's (gen_more.py says why)
    from gen_more import More
    more = More(seed + 1_000_003)
    for _ in range(more.r.randrange(1, 3)):
        stmts.insert(more.r.randrange(1, len(stmts) + 1), more.stmt_more())
    g.tags |= more.tags
    text = "\n".join(stmts)
    if "XX" in text:
        # the fd a high-descriptor redirection opened, named once
        stmts = [s.replace(">&XX", ">&" + s.split("exec ", 1)[1].split(">", 1)[0]) if "XX" in s else s for s in stmts]
    return Program(seed, stmts, g.tags)
