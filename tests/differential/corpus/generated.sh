### gen-796-program-redir-assigns
# bash expands a program's redirections in the child it forks: the
# assignments they make are gone after it, a builtin's stay
cat <<< "${u=a\ b}"; echo "[${u-unset}]"
true <<< $((j=5)); echo "[$j]"
i=0; cat <<< $((i++)) <<< $((i++)); echo "$i"
a=(1 2); cat <<< "${a[3]=z}" >/dev/null; echo "${#a[@]}"
cat {fd}</dev/null; echo "[${fd-unset}]"
f() { local x=1; cat <<< $((x=9)); echo "$x"; }; f
cat <<EOF2
$((k=4))
EOF2
echo "[${k-unset}]"
g() { echo "$# $1"; }; g "<${u:?msg}" | cat
