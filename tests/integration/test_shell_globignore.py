"""GLOBIGNORE, globskipdots, escaped extglob operators, the operand of
[[ =~ ]] and its syntax errors, and sed's numeric escapes: divergences from
GNU bash that a public case-file corpus found (tests/differential/
spec_cases.py), one case each, written here in our own words and run as
test_shell_bash.py runs its cases (box-shell -c and bash -c in twin
directories; stdout, stderr with bash's prefix forgiven, and status
compared).
"""
from test_shell_bash import bash_tables

# a nested shell's syntax error names its own place: stdout and status only
STATUS_CASES = [
    ("nested-stdin-cond-error-keeps-status",
     "bash <<'END'\n(exit 4)\n[[ m == m n ]]\necho unreached\nEND\necho st=$?"),
    ("nested-file-cond-error-fresh-status", "printf '[[ p q ]]\\n' > cond.sh; (exit 9); bash cond.sh; echo st=$?"),
]

CASES = [
    # ---- GLOBIGNORE drops matches ------------------------------------------------
    ("globignore-suffix", "touch one.log two.log three.md; GLOBIGNORE='*.log'; echo *"),
    ("globignore-question-mark", "touch k.c kk.c kkk.c; GLOBIGNORE='?.c'; echo *.c"),
    ("globignore-colon-list", "touch draft.bak draft.tmp draft.txt draft; GLOBIGNORE='*.tmp:*.bak'; echo draft*"),
    ("globignore-whole-path", "mkdir lib; touch lib/x.so lib/y.so; GLOBIGNORE=lib/y.so; echo lib/*"),
    ("globignore-directory-contents", "mkdir keep skip; touch keep/k1 keep/k2 skip/s1; GLOBIGNORE='skip/*'; echo */*"),
    ("globignore-star-not-across-slash", "mkdir p q; touch old.x p/old.x q/new.x; GLOBIGNORE='*old.x'; echo * */*"),
    ("globignore-trailing-star-across-slash", "mkdir p q; touch p/old.x q/new.x; GLOBIGNORE='p*'; echo */*"),
    ("globignore-bracket", "touch m n M N; GLOBIGNORE='[mN]'; echo *"),
    ("globignore-colon-in-bracket", "touch k:v kv kw; GLOBIGNORE='k[:]v'; echo k*"),
    ("globignore-class", "touch 7up _under plain; GLOBIGNORE='[[:digit:]_]*'; echo *"),
    ("globignore-escaped-star", "touch 'w*.q' wide.q; GLOBIGNORE='w\\*.q'; echo w*"),
    ("globignore-everything-left-as-is", "touch r1 r2; GLOBIGNORE='*'; echo *; echo r?"),
    ("globignore-everything-nullglob", "touch r1 r2; GLOBIGNORE='*'; shopt -s nullglob; echo n *"),
    ("globignore-failglob", "touch r1; GLOBIGNORE=r1; shopt -s failglob; echo r*; echo st=$?"),
    ("globignore-parent-dir", "mkdir inner; touch outer; cd inner; GLOBIGNORE='*'; echo ../*; GLOBIGNORE=zz; echo ../*"),
    ("globignore-nocaseglob", "touch A.LOG b.log c.txt; shopt -s nocaseglob; GLOBIGNORE='*.log'; echo *"),
    ("globignore-extglob", "shopt -s extglob\ntouch a.z b.z c.z; GLOBIGNORE='@(a|c).z'; echo *.z"),
    ("globignore-local", "touch v.log w.txt; f() { local GLOBIGNORE='*.txt'; echo *; }; f; echo *"),
    # ---- a GLOBIGNORE with patterns turns dotglob on; unsetting it, off ------------
    ("globignore-sets-dotglob", "touch .rc vis; GLOBIGNORE=nomatch; echo *; shopt dotglob; unset GLOBIGNORE; shopt dotglob; echo *"),
    ("globignore-empty-keeps-dotglob", "touch .rc vis; GLOBIGNORE=zz; GLOBIGNORE=; echo *; shopt -p dotglob"),
    ("globignore-dots-always-dropped", "touch .rc; shopt -u globskipdots; GLOBIGNORE=zz; echo .*; unset GLOBIGNORE; echo .*"),
    # ---- shopt -u globskipdots -----------------------------------------------------
    ("globskipdots-off", "touch .rc; mkdir d; touch d/.in; shopt -u globskipdots; echo .* d/.*; echo \\.*"),
    ("globskipdots-off-dotglob-star", "touch .rc vis; shopt -u globskipdots; shopt -s dotglob; echo * .*"),
    # ---- an escaped | or ) inside an extglob group is a character ------------------
    ("extglob-escaped-bar-glob", "shopt -s extglob\ntouch 'p|q' p q; echo @(p\\|q|zz)"),
    ("extglob-escaped-bar-match", "shopt -s extglob\n[[ 'p|q' == @(x|p\\|q) ]] && echo yes; case 'p|q' in +(p|\\||q)) echo case;; esac"),
    ("extglob-escaped-paren-match", "shopt -s extglob\n[[ 'k)' == @(k\\)|j) ]] && echo yes"),
    # ---- the operand of =~ ends at ; & < > outside ( ) -----------------------------
    ("regex-semicolon", "(exit 5)\n[[ ';' =~ ; ]] && echo no\necho unreached"),
    ("regex-word-then-semicolon", "[[ 'v;' =~ v; ]] && echo no"),
    ("regex-ampersand", "[[ 'v&w' =~ v&w ]] && echo no"),
    ("regex-angles", "[[ '<>' =~ <> ]] && echo no"),
    ("regex-word-then-angle", "[[ 'v>' =~ v> ]] && echo no"),
    ("regex-blank-in-brackets", "(exit 3)\n[[ q =~ [q r] ]] && echo no"),
    ("regex-newline-inside", "[[ $'q\\nr' =~ q\nr ]] && echo no"),
    ("regex-no-operand", "[[ q =~ ]] && echo no"),
    ("regex-newline-operand", "[[ q =~ \n ]] && echo no"),
    # ---- [[ ]]'s syntax errors in bash's words ------------------------------------
    ("cond-word-after-binary", "[[ s == s t ]] && echo no"),
    ("cond-two-words", "[[ s t ]] && echo no"),
    ("cond-word-then-operator", "[[ s ; ]] && echo no"),
    ("cond-binary-no-operand", "[[ s != ]] && echo no"),
    ("cond-binary-paren-operand", "[[ s == (t) ]] && echo no"),
    ("cond-unclosed-group", "[[ ( -n s ]] && echo no"),
    ("cond-empty-is-silent", "(exit 7)\n[[ ]]\necho unreached"),
    ("cond-and-nothing-is-silent", "(exit 7)\n[[ s && ]]\necho unreached"),
    ("cond-unterminated", "(exit 6)\n[[ s == s"),
    ("cond-operator-in-command", "[[ s && ; ]]"),
    # ---- sed's \xHH, \dNNN, \oNNN, \cX --------------------------------------------
    ("sed-hex-byte-in-regex", "printf 'x\\xc3\\xa9y\\n' | sed 's/\\xc3//g' | od -An -tx1"),
    ("sed-numeric-escapes", "echo mid | sed 's/i/\\x3c\\d062\\o041/'; echo 'v&w' | sed 's/&/\\x26\\x26/'; echo q | sed 's/q/\\cA/' | od -An -c"),
    ("sed-hex-special-in-regex", "echo 'a.b' | sed 's/\\x2e/_/g'"),
]


test_like_bash_globignore, test_status_like_bash_globignore = bash_tables(CASES, STATUS_CASES)
