### set-euo-pipefail-basics
set -euo pipefail
name=tool
version=1.2.3
echo "installing ${name} ${version}"
### log-function-with-levels
log() { local level=$1; shift; printf '[%s] %s\n' "$level" "$*"; }
log INFO "starting"
log WARN "disk is" "almost full"
log ERROR done
### die-function
die() { echo "error: $*" >&2; exit 1; }
[ -d /nonexistent-dir-xyz ] || echo "no dir"
( die "boom" ); echo "status $?"
### require-command
need() { command -v "$1" >/dev/null 2>&1 || { echo "missing: $1"; return 1; }; }
need sh && echo "sh ok"
need definitely-not-a-command-xyz || echo "need failed"
### detect-os-from-uname
case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) os=unknown ;;
esac
echo "os=$os"
### detect-arch-mapping
arch=x86_64
case "$arch" in
  x86_64|amd64) arch=amd64 ;;
  aarch64|arm64) arch=arm64 ;;
  armv7*) arch=armv7 ;;
esac
echo "$arch"
### version-compare-sort-V
printf '%s\n' 1.10.0 1.2.0 1.9.9 | sort -t. -k1,1n -k2,2n -k3,3n | tail -1
### version-split-fields
v=3.14.159
IFS=. read -r major minor patch <<< "$v"
echo "major=$major minor=$minor patch=$patch"
### version-ge-function
version_ge() { [ "$(printf '%s\n' "$1" "$2" | sort -t. -k1,1n -k2,2n -k3,3n | head -1)" = "$2" ]; }
version_ge 2.10.1 2.9.0 && echo newer
version_ge 1.0.0 1.0.1 || echo older
### install-dir-defaults
PREFIX=${PREFIX:-/usr/local}
BINDIR=${BINDIR:-$PREFIX/bin}
echo "$PREFIX $BINDIR"
### install-dir-overrides
PREFIX=/opt/x
BINDIR=${BINDIR:-$PREFIX/bin}
echo "$BINDIR"
### mkdir-p-and-copy
mkdir -p dist/bin dist/share/doc
echo '#!/bin/sh' > dist/bin/tool
chmod +x dist/bin/tool
[ -x dist/bin/tool ] && echo executable
find dist -type d | sort
### tempdir-cleanup-trap
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; echo cleaned' EXIT
echo data > "$tmp/file"
cat "$tmp/file"
### trap-exit-status
trap 'echo "exit with $?"' EXIT
false || true
(exit 3)
### parse-args-while-case
set -- --prefix /opt --verbose -j 4 extra
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --verbose) verbose=1; shift ;;
    -j) jobs=$2; shift 2 ;;
    *) rest="${rest:+$rest }$1"; shift ;;
  esac
done
echo "prefix=$prefix verbose=$verbose jobs=$jobs rest=$rest"
### parse-args-equals-form
for arg in --name=foo --count=3 --flag; do
  case $arg in
    --*=*) key=${arg%%=*}; key=${key#--}; val=${arg#*=}; echo "$key -> $val" ;;
    --*) echo "flag ${arg#--}" ;;
  esac
done
### getopts-loop
set -- -v -o out.txt -n 3 file1 file2
verbose=0
while getopts "vo:n:" opt; do
  case $opt in
    v) verbose=1 ;;
    o) out=$OPTARG ;;
    n) n=$OPTARG ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
echo "verbose=$verbose out=$out n=$n files=$*"
### getopts-unknown-option
set -- -x
while getopts "ab" o 2>/dev/null; do echo "got $o"; done
echo "OPTIND=$OPTIND"
### write-config-heredoc
cat > app.conf <<EOF
name = demo
port = 8080
debug = false
EOF
grep -c = app.conf
sed -n 's/^port = //p' app.conf
### heredoc-with-vars
user=alice
home=/home/alice
cat <<EOF
User: $user
Home: $home
Shell: \$SHELL
EOF
### heredoc-quoted-delim
cat <<'EOF'
literal $HOME and $(whoami) and `id`
EOF
### heredoc-tab-strip
if true; then
	cat <<-EOF
	indented
		more
	EOF
fi
### append-to-profile-once
rc=profile.rc
touch "$rc"
line='export PATH="$HOME/.local/bin:$PATH"'
for i in 1 2; do
  grep -qxF "$line" "$rc" || echo "$line" >> "$rc"
done
wc -l < "$rc"
cat "$rc"
### path-prepend-unless-present
PATH=/usr/bin:/bin
add_path() { case ":$PATH:" in *":$1:"*) ;; *) PATH="$1:$PATH" ;; esac; }
add_path /opt/bin
add_path /usr/bin
add_path /opt/bin
echo "$PATH"
### checksum-verify
printf 'hello\n' > pkg.tar
sum=$(sha256sum pkg.tar | cut -d' ' -f1)
echo "$sum  pkg.tar" > pkg.sha256
sha256sum -c pkg.sha256
echo "rc=$?"
### checksum-mismatch
printf 'hello\n' > a.bin
echo "0000000000000000000000000000000000000000000000000000000000000000  a.bin" > a.sha
sha256sum -c a.sha 2>/dev/null
echo "rc=$?"
### md5-of-string
printf 'abc' | md5sum
### confirm-default-yes
answer=""
case "${answer:-y}" in
  [Yy]*) echo proceeding ;;
  *) echo aborted ;;
esac
### color-off-when-not-tty
if [ -t 1 ]; then red='\033[31m'; reset='\033[0m'; else red=''; reset=''; fi
printf "${red}%s${reset}\n" "error text"
### retry-loop
attempt=0
until [ $attempt -ge 3 ]; do
  attempt=$((attempt + 1))
  echo "attempt $attempt"
  [ $attempt -eq 2 ] && break
done
echo "done after $attempt"
### retry-function-with-status
retry() { local n=0; until "$@"; do n=$((n+1)); [ $n -ge 3 ] && return 1; done; }
count=0
flaky() { count=$((count+1)); [ $count -ge 2 ]; }
retry flaky && echo "ok after $count"
retry false || echo "gave up"
### env-file-load
cat > .env <<'EOF'
# comment
DB_HOST=localhost
DB_PORT=5432

APP_NAME="my app"
EOF
while IFS='=' read -r key value; do
  case $key in ''|\#*) continue ;; esac
  value=${value%\"}; value=${value#\"}
  echo "$key=[$value]"
done < .env
### env-file-export-set-a
printf 'A=1\nB=two\n' > vars.env
set -a
. ./vars.env
set +a
sh -c 'echo "$A $B"'
### symlink-current-version
mkdir -p releases/1.0 releases/1.1
ln -sfn releases/1.1 current
readlink current
ln -sfn releases/1.0 current
readlink current
### backup-before-overwrite
echo old > config.yml
[ -f config.yml ] && cp config.yml config.yml.bak
echo new > config.yml
cat config.yml.bak config.yml
### uninstall-list
mkdir -p root/bin root/lib
touch root/bin/a root/bin/b root/lib/c
printf '%s\n' root/bin/a root/lib/c > manifest
while read -r f; do rm -f "$f" && echo "removed $f"; done < manifest
ls root/bin root/lib
### sudo-if-not-root
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "cmd: ${SUDO:+$SUDO }install"
### default-shell-detect
shell_name=$(basename "/usr/bin/bash")
echo "$shell_name"
### dirname-of-script
script=/opt/app/bin/run.sh
dir=$(dirname "$script")
base=$(basename "$script" .sh)
echo "$dir $base"
### realpath-ish-cd-pwd
mkdir -p a/b/c
cd a/b/c && cd ../.. && pwd | sed 's|.*/||'
### json-field-with-grep-sed
echo '{"tag_name": "v2.4.1", "name": "Release"}' > release.json
grep -o '"tag_name": *"[^"]*"' release.json | sed 's/.*"\(v[^"]*\)"/\1/'
### json-field-with-jq
echo '{"assets":[{"name":"tool-linux-amd64.tar.gz","size":10},{"name":"tool-darwin.tar.gz","size":20}]}' > r.json
jq -r '.assets[] | select(.name | test("linux")) | .name' r.json
jq '[.assets[].size] | add' r.json
### strip-v-prefix
tag=v1.4.0
echo "${tag#v}"
### url-build
base=https://example.invalid/releases
ver=1.2.0
os=linux
arch=amd64
url="$base/download/v$ver/tool_${ver}_${os}_${arch}.tar.gz"
echo "$url"
echo "${url##*/}"
### check-disk-count-files
mkdir -p data
for i in 1 2 3 4 5; do echo $i > data/f$i; done
n=$(ls data | wc -l)
echo "files: $n"
### lowercase-uppercase
name="MyProject"
echo "$name" | tr '[:upper:]' '[:lower:]'
echo "${name,,} ${name^^}"
### here-string-read-split
read -r first rest <<< "one two three"
echo "$first|$rest"
### read-with-default-from-devnull
read -r reply < /dev/null || reply=default
echo "$reply"
### service-file-template
svc=myapp
user=deploy
cat > "$svc.service" <<EOF
[Unit]
Description=$svc

[Service]
User=$user
ExecStart=/usr/local/bin/$svc --port \${PORT:-80}
EOF
cat "$svc.service"
### cron-line-dedupe
printf '0 * * * * job1\n0 * * * * job2\n' > crontab.txt
new='0 * * * * job1'
grep -qF "$new" crontab.txt && echo present || echo "$new" >> crontab.txt
wc -l < crontab.txt
### ensure-line-in-file-sed
printf 'a=1\nb=2\n' > conf
if grep -q '^b=' conf; then sed -i 's/^b=.*/b=3/' conf; else echo b=3 >> conf; fi
cat conf
### array-of-packages
pkgs=(curl git jq)
pkgs+=(make)
echo "${#pkgs[@]} packages: ${pkgs[*]}"
for p in "${pkgs[@]}"; do printf -- '- %s\n' "$p"; done
### missing-from-array
have=(git make)
want=(git curl make jq)
missing=()
for w in "${want[@]}"; do
  found=0
  for h in "${have[@]}"; do [ "$w" = "$h" ] && found=1; done
  [ $found -eq 0 ] && missing+=("$w")
done
echo "missing: ${missing[*]}"
### assoc-array-config
declare -A cfg=([host]=localhost [port]=80)
cfg[port]=8080
for k in $(printf '%s\n' "${!cfg[@]}" | sort); do echo "$k=${cfg[$k]}"; done
### progress-dots
for i in 1 2 3; do printf '.'; done; printf ' done\n'
### shellcheck-style-quoting
file="my file.txt"
touch "$file"
[ -e "$file" ] && echo "exists: $file"
rm "$file"
[ -e "$file" ] || echo gone
### exit-code-propagation
run() { "$@"; local rc=$?; echo "rc=$rc"; return $rc; }
run true
run false || echo "failed as expected"
### command-substitution-trailing-newlines
x=$(printf 'a\n\n\n')
echo "[$x]"
### pipefail-effect
set -o pipefail
false | true; echo "pipefail: $?"
set +o pipefail
false | true; echo "no pipefail: $?"
### nounset-default
set -u
echo "${UNSET_VAR_XYZ:-fallback}"
echo "${UNSET_VAR_XYZ-dash}"
### errexit-in-if-ok
set -e
if false; then echo no; fi
false || echo "or-list ok"
echo "still running"
### errexit-subshell-exits
set -e
( false; echo "not reached" ) || echo "subshell failed"
echo end
### umask-print
umask 022
umask
umask -S
### mktemp-pattern
f=$(mktemp tmp.XXXXXX)
[ -f "$f" ] && echo "made ${f%%.*}"
rm -f "$f"
### line-count-of-file-without-name
printf 'a\nb\nc\n' > f.txt
wc -l < f.txt
wc -l f.txt
### trim-whitespace
s="   padded value   "
trimmed="${s#"${s%%[![:space:]]*}"}"
trimmed="${trimmed%"${trimmed##*[![:space:]]}"}"
echo "[$trimmed]"
### repeat-char
printf '%*s\n' 10 '' | tr ' ' '-'
### banner
title="Install complete"
line=$(printf '%*s' ${#title} '' | tr ' ' '=')
printf '%s\n%s\n%s\n' "$line" "$title" "$line"
