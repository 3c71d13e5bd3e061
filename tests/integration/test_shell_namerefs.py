"""Namerefs (declare -n) and indirect expansion (${!v}) as GNU bash 5.2 has
them: divergences a public case-file corpus found (tests/differential/
spec_cases.py run on it), one case each, written here in our own words and
run as test_shell_bash.py runs its cases (box-shell -c and bash -c in twin
directories; stdout, stderr with bash's prefix forgiven, and status compared).
"""
from test_shell_bash import bash_tables

# bash's messages from inside a function name the place as "environment":
# compared by stdout and status only
STATUS_CASES = [
    ("local-nameref-invalid-target", 'g() { local -n pick=%; echo st=$?; }; g'),
]

CASES = [
    # ---- -n and +n act on the reference, with the attributes given with them
    ("plus-n-drops-reference", 'fruit=pear; declare -n alias=fruit; declare +n alias; echo "$alias"; declare -p alias'),
    ("readonly-reference-not-target", 'color=red; declare -rn hue=color; hue=blue; echo $color; color=green; echo $hue; declare -p hue color'),
    ("readonly-reference-refuses-retarget", 'p=1; q=2; declare -rn cur=p; declare -n cur=q; echo st=$?; declare +n cur; echo st=$?; echo $cur'),
    ("readonly-local-reference-target-writable", 'res=start; f() { typeset -n -r out=res; out=done; }; f; echo "$res"; res=later; echo "$res"'),
    ("exported-reference-is-its-name", "city=Oslo; declare -nx where=city; env | grep -E '^(city|where)='; export city; env | grep -E '^(city|where)=' | sort"),
    # ---- what a reference may name --------------------------------------------
    ("reference-to-invalid-value", 'slot=9lives; declare -n slot; echo st=$?; slot=other; declare -p slot'),
    ("reference-to-at-sign", 'set -- u v; declare -n everyone=@; echo st=$?; echo "[$everyone]"'),
    ("reference-to-bad-names", 'declare -n r1="2x" r2="k[" r3="m[1]"; echo st=$?; declare -p r3'),
    ("reference-to-itself", 'declare -n loop=loop; echo st=$?'),
    ("array-cannot-be-reference", 'list=(a b); declare -n list; echo st=$?; declare -p list'),
    # ---- circular chains ------------------------------------------------------
    ("circular-read", 'declare -n ping=pong; declare -n pong=ping; echo "got [$ping]"; echo "braced [${ping}]"'),
    ("circular-write", 'declare -n ping=pong\ndeclare -n pong=ping\nping=9\necho st=$?\ndeclare -p ping pong'),
    ("chain-too-long", 'declare -n h1=h2 h2=h3 h3=h4 h4=h5 h5=h6 h6=h7 h7=h8 h8=h9 h9=end; end=ok; echo "[$h1] [$h2]"'),
    # ---- a reference to an array element --------------------------------------
    ("element-subscript-expanded", 'nums=(10 20 30 40); declare -n third=\'nums[$(echo 1) + 1]\'; echo "$third"; third=33; echo "${nums[*]}"'),
    ("element-at-is-whole-array", 'cols=("a b" c); declare -n allcols=\'cols[@]\'; printf "<%s>" "$allcols"; echo; printf "<%s>" $allcols; echo'),
    ("element-at-list-assignment-refused", 'cols=(p q); declare -n allcols=\'cols[@]\'\nallcols=(r s)\necho st=$?; echo "${cols[@]}"'),
    ("element-reference-subscripted-refused", 'vals=(A B C); declare -n first=\'vals[0]\'\nfirst[2]=Z\necho st=$?; echo "${vals[@]}"'),
    ("element-at-scalar-assignment", 'cols=(p q); declare -n allcols=\'cols[@]\'\nallcols=z\necho st=$?; echo "${cols[@]}"'),
    # ---- indirect expansion ${!v} ---------------------------------------------
    ("indirect-unset-name", 'echo "${!nothing-fallback}"\necho st=$?\nset -u\necho "${!nothing}"\necho st=$?'),
    ("indirect-bad-value", 'holder="two words"; echo "${!holder}"\necho st=$?\nholder=/; echo "${!holder}"\necho st=$?'),
    ("indirect-text-not-a-name", 'p="q:-dflt"; echo "${!p}"\necho st=$?\np="#q"; echo "${!p}"\necho st=$?\np="z[3"; echo "${!p}"\necho st=$?'),
    ("indirect-subscript-quote", 'arr=(m n); p=\'arr[1"]\'; echo "${!p}"\necho st=$?'),
    ("indirect-array-at-with-operator", 'echo "${!gone[@]-none}"\necho st=$?\nwords=(k l); echo "${!words[@]-none}"\necho st=$?'),
    ("indirect-assign-default", 'ptr=target; target=; echo "${!ptr:=first}"; echo "${!ptr:=second}" "$target"; echo "${ptr}"'),
    ("indirect-unset-target-messages", 'ptr=absent; echo "${!ptr?is missing}"\necho st=$?\nset -u; echo "${!ptr}"\necho st=$?'),
    ("indirect-circular-nameref", 'declare -n left=right; declare -n right=left; echo "v=[${left}]"; q=r; r=q; echo "w=${!q}"'),
    # ---- subscripts take no tilde ----------------------------------------------
    ("subscript-no-tilde", 'pair=(zero one); HOME=1; echo "${pair[~]}"\necho st=$?\np=\'pair[~]\'; echo "${!p}"\necho st=$?'),
    ("assoc-key-tilde-literal", 'declare -A tbl; tbl[~]=home; tbl[~+]=here; declare -p tbl; echo "${tbl[~]}"'),
]


test_like_bash_namerefs, test_status_like_bash_namerefs = bash_tables(CASES, STATUS_CASES)
