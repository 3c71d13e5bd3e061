"""The Shell's file, text and search commands against the GNU tools, same
generated input.

Each case runs the same text twice in two fresh copies of one generated
tree: once through `box-shell -c` (the Shell alone, no box) and once through
`bash -c` with GNU coreutils/grep/sed (LC_ALL=C), then compares stdout,
stderr, exit status and, for file commands, the resulting tree.
"""
import pytest

from gnu_compare import assert_same_in, assert_same_run, need_shell, run_both

GREP = [
    'grep foo a.txt', 'grep -n -C1 foo a.txt', 'grep -A1 -B2 -n qux a.txt "b c.txt"',
    'grep -i -c foo a.txt "b c.txt"', 'grep -w foo a.txt "b c.txt"', r'grep -o "o\+" a.txt',
    'grep -rn foo d', 'grep -r foo --include=*.c .', 'grep -rl foo --exclude=*.c d',
    'grep -r foo --exclude-dir=e d', 'grep -l foo a.txt nope', 'grep -L foo a.txt "b c.txt"',
    'grep -x foo a.txt', 'grep -E "fo{2}|baz" a.txt', 'grep -G "fo\\{2\\}\\|baz" a.txt',
    'grep -F -e "o b" -e xx a.txt', 'grep -m1 -A2 foo a.txt', 'grep -v -n foo a.txt',
    'grep foo bin', 'grep -a def bin', 'grep -c abc bin', r'grep -P "f\w+\b" a.txt',
    'grep -z foo a.txt', 'grep -q foo a.txt nope', 'grep -s foo nope', 'grep -h foo a.txt a.txt',
    'grep -H foo a.txt', 'grep -e', 'grep --bogus x', 'grep -k x', 'grep -f pats a.txt',
    'grep -f /dev/null a.txt', 'grep -c "" a.txt', 'grep foo d', 'grep -r foo', 'grep -R foo d',
    'grep -bo foo a.txt', 'grep -nH -A1 xx a.txt -', 'grep -A x a.txt', 'grep -y FOO a.txt',
    'grep -C 1 -o foo a.txt', 'grep -- -dash -dash; echo $?', 'grep "[" a.txt',
    'printf "a\\nz\\nz\\nz\\na\\n" | grep -o -A1 a', 'grep -n -B1 qux a.txt a.txt',
]
HEADTAIL = [
    'head s', 'head -n 3 s nonl', 'head -n -25 s', 'head -c 5 s', 'head -c -70 s', 'head -5 s',
    'head -q -n2 s s', 'head -v -n1 s', 'head nope', 'head -n x s', 'seq 5 | head -n -2',
    'head -3c s', 'head -n 0 s', 'tail s', 'tail -n 3 s nonl', 'tail -n +27 s', 'tail -c 5 s',
    'tail -c +75 s', 'tail -3 s', 'tail +28 s', 'seq 100 | tail -n 2', 'seq 10 | tail -n +8',
    'tail -n 2 nonl', 'tail nope', 'tail -v -n1 s', 'tail -q -n1 s s', 'tail -n 0 s',
    'seq 10 | tail -c 4', 'printf "a\\0b\\0c\\0" | tail -z -n 2 | tr "\\0" @',
]
SORT = [
    'sort so', 'sort -r so', 'sort -n so', 'sort -k2 so', 'sort -k2n so', 'sort -k2,2n -k1,1 so',
    'sort -t" " -k3 so', 'sort -f so', 'sort -u -f so', 'sort -b so', 'sort -h so', 'sort -V ver',
    'sort -M mon', 'sort -g so', 'sort -s -k1,1 so', 'sort -c so', 'sort -C so; echo $?',
    'sort -n -c so', 'seq 5 | sort -c', 'sort -o out so; cat out', 'sort -z so | tr "\\0" @',
    'sort nope', 'sort -k1.2 so', 'sort -k 2,2 -n -r so', 'sort -u so so', 'sort -d -f so',
    'sort -nr so', 'sort -rn -k2 so', 'sort -h -r so', 'sort -t: -k2 cu', 'sort -k 3 -t :  -n cu',
]
UNIQCUTTR = [
    'uniq u', 'uniq -c u', 'uniq -d u', 'uniq -u u', 'uniq -i u', 'uniq -D u', 'uniq -f1 u',
    'uniq -s1 u', 'uniq -w1 -c u', 'uniq -ic u', 'uniq nope', 'uniq u out; cat out', 'uniq -z u | tr "\\0" @',
    'cut -d: -f2 cu', 'cut -d: -f1,3- cu', 'cut -d: -f2 -s cu', 'cut -c2-3 cu', 'cut -b1,3 cu',
    'cut -d: --complement -f1 cu', 'cut -d: -f1,2 --output-delimiter=XX cu', 'cut -f1 cu',
    'cut cu', 'cut -f0 cu', 'cut -c3- cu', 'cut -d: -f-2 cu', 'cut -c1 --output-delimiter=, cu',
    'echo hello | tr a-z A-Z', 'echo hello | tr -d l', 'echo "aabbcc  d" | tr -s a-z',
    'echo hello | tr -c a-z X', 'echo hello world | tr "[:lower:]" "[:upper:]"',
    'echo hello | tr -d -c l', 'echo hello | tr el "[x*]"', r'printf "a  b\tc\n" | tr -s "[:space:]" "\n"',
    'echo abc | tr -t abc xy', 'echo abc | tr abc xy', 'echo abc | tr a', 'echo abc | tr -d a b',
    'echo hello | tr -ds l o', 'echo hi | tr "[:foo:]" x', r'echo a-b | tr "\-" _',
    r'printf "a\001b\n" | tr "\001" X', 'echo "a.b,c" | tr "[:punct:]" _',
]
WCTEE = [
    'wc u', 'wc -l u', 'wc u cu', 'wc -l u cu', 'cat u | wc', 'cat u | wc -l', 'wc -c nope u',
    'wc -w -L cu', 'wc -m u', 'wc nope', r'printf "a\tb\001c\n" | wc', 'wc -L bin', 'wc bin nonl',
    'echo hi | tee t1 t2; cat t1 t2', 'echo x > t3; echo y | tee -a t3; cat t3',
    'echo a | tee /nonexist/x',
]
SED = [
    'sed s/o/0/ h', 'sed s/o/0/g h', 'sed -n s/o/0/gp h', 'sed s/o/0/2 h', r'sed "s/\(l\+\)o/[\1]/" h',
    r'sed -E "s/(l+)o/[\1]/" h', 'sed "s/hello/X/I" h', 'sed -n "2,4p" n', 'sed "2,4d" n',
    'sed -n "/3/,/6/p" n', 'sed -n "0,/1/p" n', 'sed -n "1,/1/p" n', 'sed -n "1~3p" n',
    'sed -n "2,+2p" n', 'sed -n "5,~4p" n', r'sed -n "\$p" n', r'sed "\$!d" n', 'sed -n "/1/!p" n',
    'sed "3q" n', 'sed "3Q" n', 'sed "q5" n; echo $?', 'sed = h', 'sed -n l h', 'sed "a foo" h',
    'sed "2i\\\nbar" h', 'sed "2c changed" h', 'sed "2,3c changed" h', r'sed "1!G;h;\$!d" n',
    r'sed -n "\$=" n', r'sed ":a;N;\$!ba;s/\n/,/g" n', 'sed "N;P;D" n', 'sed "n;d" n',
    r'sed "\$!N;s/\n/ /" n', 'sed y/abc/xyz/ h', r'sed "s/o/\n/g" h', r'sed "s/\w\+/\u&/g" h',
    r'sed "s/.*/\U&/" h', 'sed -e "s/a/b/" -e "s/b/c/" h', 'sed "/foo/{s/foo/FOO/;s/bar/BAR/}" h',
    'sed "s/x*/-/g" h', 'sed "s/o*/x/g" h', r'sed -s -n "\$p" n h', r'sed -n "\$p" n h',
    'sed -n "/hello/Ip" h', 'sed p nope h', 'sed "s/a/b" h', 'sed k h', 'sed "3{p" n',
    'sed "b foo" n', 'sed "y/abc/de/" h', 'sed }', 'sed "2r h" n', 'sed "1w wout" h; cat wout',
    'sed "s/o/0/w wout2" h; cat wout2', r'sed -z "s/\n/,/g" n', r'sed "2{h;d};\$G" n',
    'sed "s/e/E/;T;s/l/L/" h', 'sed "s/e/E/;t;s/o/O/" h', 'sed "/foo/s//X/" h', 'sed "s/[/]/x/" h',
    'sed "1d;\\$d" n', 'sed -n "/2/{=;p}" n', 'sed "s/o/0/3" h', r'sed "s/\(o\)/\2/" h',
    'sed -n "2{n;p}" n', 'sed "/^$/d" h', 'sed "s/^/> /" h', 'sed "s/$/;/" h', 'sed "2,4!d" n',
    'sed "4,2p" n', 'sed "/1/,3d" n', 'sed -E "s/(o|l)+/<&>/g" h', r'sed "s/\t/T/" h',
    'sed -n "1~0p" n', 'sed "0~4d" n', 'sed "2R h" n', 'sed "1i\\  lead" h',
    'sed "1F" h', 'sed -n "/hello/,/foo/{/foo/!p}" h', r'sed "\$a foo" nonl', 'sed p nonl',
    'sed -n p nonl n', 'cp h h2; sed -i "s/o/0/" h2; cat h2',
    'cp h h3; sed -i.bak "s/o/0/" h3; cat h3 h3.bak', 'sed -i s/a/b/ nope',
    'cp nonl nn; sed -i p nn; cat nn', 'printf "s/o/O/g\\n2d\\n" > sc; sed -f sc h',
    'sed --expression=p -n h', 'sed -n --regexp-extended "/l{2}/p" h',
]
FILES = [
    'rm f', 'rm nope', 'rm -f nope', 'rm d', 'rm -r d', 'rm -rv d', 'rm -d e2', 'rm -d d',
    'rm -v f lnk', 'rm', 'rm -r /', 'rm -r .', 'rm -- -dash', 'rm "sp ace"', 'rmdir e2', 'rmdir d',
    'rmdir nope', 'mkdir -p a/b/c e2', 'mkdir e2', 'mkdir -v n1 n2', 'mkdir -pv p/q',
    'mkdir -m 700 m', 'mkdir -m u=rwx,go=rx m2', 'mkdir',
    'mkdir -p a/b/c && rmdir -pv a/b/c', 'mv f g', 'mv f d', 'mv f d/', 'mv d e2', 'mv nope x',
    'mv -v f d/x', 'mv -n f d/x', 'mv f', 'mv f lnk "sp ace" d', 'mv -t d f', 'mv -T d e2',
    'cp f g', 'cp f d', 'cp d e2', 'cp -r d e2', 'cp -r d newd', 'cp -rv d newd | sort', 'cp nope x',
    'cp -n f d/x', 'cp -v f d/x', 'cp f lnk d', 'cp -a d arch', 'cp -p f pf', 'cp -t e2 f d/x',
    'cp lnk l2', 'cp -P lnk l2', 'cp -r d/ e2', 'cp', 'cp f', 'cp -T d e2', 'cp -rT d e2',
]

JQ = [
    "echo '{\"a\":1,\"b\":[1,2]}' | jq .", "echo '{\"a\":1}' | jq .a.b; echo $?", "echo '[1,2,3]' | jq -c 'map(.*2)'",
    "echo '{\"k\":\"v\"}' | jq -r .k", "echo '\"x\"' | jq -j .", "jq -n '1+2'", "printf '1 2 3' | jq -s add",
    "printf 'a\\nb' | jq -R .", "printf 'a\\nb\\n' | jq -Rs .", "echo null | jq -e .; echo $?", "echo 1 | jq -e empty; echo $?",
    "echo '{\"b\":1,\"a\":2}' | jq -S .", "echo '\"\\u00e9\"' | jq -a .", "echo '[1]' | jq -M --tab .", "echo '[1,[2]]' | jq --indent 1 .",
    "jq -n --arg x 1 --argjson y '{\"a\":2}' '[$x,$y,$ARGS.named]' -c", "jq -n '$ARGS' -c --args a b", "jq -n -c '$ARGS.positional' --jsonargs 1 '{}'",
    "echo '[3]' > j1; jq -n -c --slurpfile s j1 --rawfile r j1 '[$s,$r]'", "echo '{\"a\":1}' > j2; jq .a j2 j2", "jq . nope; echo $?",
    "echo '1 x' | jq .; echo $?", "jq 'foo bar'; echo $?", "jq -x; echo $?", "jq -n 'error(\"boom\")'; echo $?",
    "jq -n '\"a\\n\" | halt_error'; echo $?", "jq -n '{a:1} | halt_error(3)'; echo $?", "echo '{}' | jq", "jq -n '[inputs]' -c <<< '1 2'",
    "jq -n 'input?' <<< 'x'; echo $?", "echo '[\"a\",\"b\"]' | jq -r '.[]'", "echo '{\"a\":[1,2]}' | jq -c 'to_entries'",
    "echo '[1,2]' | jq '.[] | select(. > 1)'", "echo '\"a,b\"' | jq -c 'split(\",\")'", "echo '{\"x\":1}' | jq 'keys, length, type'",
    "printf '{\"a\":1}\\n{\"a\":2}\\n' | jq -c 'select(.a==2)'", "echo 1 | jq -n 'input, input'; echo $?",
]
FIND = [
    'find d | sort', 'find . -name "*.c"', 'find . -type d | sort', 'find d -type f | sort', 'find . -maxdepth 1 -name "*.txt" | sort',
    'find d -mindepth 2', 'find . -name "x*" -o -name "y*" | sort', 'find . -not -name "*.txt" -type f -path "./d/*" | sort',
    'find . -iname A.TXT', 'find . -path "*/e/*"', 'find . -regex ".*/[xy]"| sort', 'find . -type l', 'find -L . -name lnk -type f',
    'find . -empty | sort', 'find . -size +0 -name "a*"', 'find . -size -1k -type f -name s', 'find . -size 1 -name nonl',
    'find . -newer s -name a.txt', 'find . -mtime -1 -name a.txt', 'find . -mtime +1 -name a.txt', 'find . -mmin -10 -name f',
    'find . -perm 644 -name f', 'find . -perm -u+w -name f', 'find d -name x -print0 | tr "\\0" @', 'find d -name x -printf "%p|%f|%h|%P|%s|%d|%m|%y|%M\\n"',
    'find . -path ./d -prune -o -name "*.c" -print', 'find d -name "*.c" -exec cat {} \\;', 'find d -type f -exec wc -l {} + | sort',
    'find d -name x -execdir echo {} \\;', 'find d -name "*.c" -delete; ls d/e', 'find d -depth | sort', 'find . -name a.txt -print -quit',
    'find nope; echo $?', 'find . -bogus; echo $?', 'find . -name; echo $?', 'find . -type z; echo $?', 'find . \\( -name a; echo $?',
    'find . -mtime x; echo $?', 'find . -size 3q; echo $?', 'find . -maxdepth x; echo $?', 'find . -exec echo; echo $?',
    'find -- -dash', 'find "sp ace" "b c.txt"', 'find d -name x -ls | wc -l', 'find d \\( -name x -o -name y \\) -a -type f | sort',
    'find d ! -type d | sort', 'find d -name x , -name y | sort', 'find d -type f -exec sh -c "exit 1" \\; ; echo $?',
]
LS = [
    'ls', 'ls -a', 'ls -A', 'ls -1', 'ls -R', 'ls -l a.txt', 'ls -la d | tail -n +2 | cut -c1-10,24-', 'ls -d d', 'ls -F', 'ls -p d',
    'ls -S', 'ls -Sr', 'ls -r', 'ls -t nonl s | wc -l', 'ls -lh s | cut -c1-10,24-', 'ls -i a.txt | wc -w', 'ls nope; echo $?',
    'ls d a.txt nope', 'ls -l lnk | cut -c1-10,40-', 'ls --color=never d', 'ls -ld d | cut -c1-10', 'ls -n f | cut -c1-15', 'ls -R d',
    'ls -- -dash', 'ls "sp ace"', 'ls -lF d | cut -c1-10', 'ls -g f | cut -c1-14', 'ls -o f | cut -c1-14',
]
XARGS = [
    'printf "a b\\nc\\n" | xargs echo', 'printf "a\\nb\\nc\\nd\\n" | xargs -n 2 echo', 'printf "a\\nb\\n" | xargs -I X echo item:X',
    'printf "a\\0b c\\0" | xargs -0 -n1 echo', 'echo "a,b,c" | xargs -d , echo', 'printf "" | xargs echo x', 'printf "" | xargs -r echo x',
    'printf "a b  \\nc\\nd e\\n" | xargs -L1 echo', 'printf "  a  b \\n c\\n" | xargs -I X echo "[X]"', 'printf "\\"a b\\" c\\n" | xargs -t echo',
    'echo "it\'s" | xargs echo; echo $?', 'xargs -n 0 echo </dev/null; echo $?', 'echo a | xargs -P 1 echo', 'echo a b c d e | xargs -s 12 echo',
    'echo a | xargs -x -s 5 echo; echo $?', 'echo "a EOF b" | xargs -E EOF echo', 'printf "a\\\\ b\\n" | xargs echo', 'echo a.txt | xargs cat',
    'seq 3 | xargs -I % sh -c "echo %; exit 1"; echo $?', 'seq 12 | xargs', 'echo x | xargs -i echo {}{}', 'echo s | xargs -a pats echo',
]
MISC = [
    'touch new; ls new', 'touch -c nope2; ls nope2; echo $?', 'touch -d "2020-01-02 03:04:05" f; ls -l f | cut -c24-', 'touch -t 202001020304.05 f; date -r f +%s',
    'touch -r s -m f; test f -nt s; echo $?', 'touch nodir/x; echo $?', 'touch; echo $?', 'touch -d bogus f; echo $?',
    'ln f hard; ls hard', 'ln -s f soft; readlink soft', 'ln -s f lnk; echo $?', 'ln -sf a.txt lnk; readlink lnk', 'ln nope x; echo $?',
    'ln d d2; echo $?', 'ln -v f v1; ln -sv f v2', 'ln f s2 d; ls d', 'ln a.txt s f; echo $?', 'ln -sr a.txt d/e/rel; readlink d/e/rel',
    'ln -sn e2 lnk2; ln -sfn d lnk2; readlink lnk2', 'ln -T f d; echo $?', 'ln; echo $?', 'ln -f f f; echo $?',
    'chmod 600 f; ls -l f | cut -c1-10', 'chmod u+x,g-r f; ls -l f | cut -c1-10', 'chmod -w f; ls -l f | cut -c1-10', 'chmod a=rx f; ls -l f | cut -c1-10',
    'chmod -R go-rx d; ls -lR d | cut -c1-10', 'chmod -v 755 f; chmod -c 755 f; chmod -c 700 f', 'chmod xyz f; echo $?', 'chmod; echo $?',
    'chmod 644; echo $?', 'chmod 644 nope; echo $?', 'chmod 1755 e2; ls -ld e2 | cut -c1-10', 'chmod =r f; ls -l f | cut -c1-10',
    'sleep 0.01; echo $?', 'sleep x; echo $?', 'sleep; echo $?', 'sleep 0.01s 0; echo $?',
    'basename /a/b/c.txt .txt', 'basename -a x/y z/', 'basename -s .c a.c b.c', 'basename /', 'basename; echo $?', 'basename a b c; echo $?',
    'dirname /a/b/c a/ / // x', 'dirname; echo $?', 'd=$(mktemp -d -p .) && test -d "$d" && rmdir "$d" && echo ok', 'mktemp -u | cut -c1-9',
    'mktemp fooXX; echo $?', 'f=$(mktemp -t x.XXXX) && test -f "$f" && rm "$f" && echo ok', 'mktemp -u abcXXX | cut -c1-3',
    'env -i A=1 B=2', 'env -i X=1 printenv X', 'env -u HOME -i Y=2', 'printenv NOPE; echo $?', 'printenv HOME | wc -l', 'env -i - Z=1',
    'date -d @0 -u', 'date -u -d "2024-03-05 10:20:30" +"%F %T %s %N %:z %-d %j"', 'date foo; echo $?', 'date -d "2024-01-31 +1 month" +%F',
    'date -u -d @100 -I; date -u -d @100 -Iseconds; date -u -R -d @100; date -u --rfc-3339=ns -d @100.5', 'date -d xx; echo $?',
    'date -r f +%Y | wc -c', 'TZ=Asia/Tokyo date -d @0', 'date -d "2024-01-01T10:00:00Z" +%s', 'date -u -d "2024-02-28 +2 days" +%F',
    'seq 5', 'seq 2 4', 'seq 1 2 9', 'seq 5 -1 1', 'seq -w 8 10', 'seq -s, 3', 'seq 1 0.5 3', 'seq 0.1 0.1 0.3', 'seq -f "%.2f" 1 2',
    'seq x; echo $?', 'seq; echo $?', 'seq 1 0 2; echo $?', 'seq 5 1', 'seq -- -2 0',
    'readlink lnk', 'readlink f; echo $?', 'readlink -f lnk | sed "s|^$PWD/||"', 'readlink -e nope; echo $?', 'readlink -m a/../b | sed "s|^$PWD/||"', 'readlink -n lnk',
    'realpath lnk | sed "s|^$PWD/||"', 'realpath -m x/../y | sed "s|^$PWD/||"', 'realpath -s lnk | sed "s|^$PWD/||"', 'realpath nope/x; echo $?', 'realpath --relative-to=d d/e/z.c',
    'cat -n a.txt', 'cat -b u', 'cat -s u', 'cat -A bin', 'cat -E nonl', 'cat -T so', 'printf "\\001\\177\\351x\\n" | cat -v', 'cat -e u', 'cat -t u',
    'uname; uname -s -m', 'uname -a | wc -w', 'uname x; echo $?', 'whoami', 'id', 'id -u; id -g; id -un; id -G', 'id -n; echo $?',
    'nproc', 'nproc --ignore=100', 'yes | head -3', 'yes a b | head -2', 'which sh', 'which nope; echo $?', 'which -a sh | head -1',
]


@pytest.mark.parametrize("text", GREP + HEADTAIL + SORT + UNIQCUTTR + WCTEE + SED + FILES + JQ + FIND + LS + XARGS + MISC)
def test_against_gnu(tmp_path, text):
    need_shell()
    assert_same_run(*run_both(tmp_path, text))


def test_long_lines_and_binary(tmp_path):
    """Lines of 1 MB, NUL bytes and invalid UTF-8 through grep/sed/sort/wc/cut."""
    need_shell()
    d = tmp_path / "w"
    d.mkdir()
    big = b"x" * (1 << 20) + b"needle" + b"y" * 1000 + b"\n"
    (d / "big").write_bytes(b"head\0with nul needle\n" + big * 3 + b"\xff\xfe bad utf8 needle\n")
    (d / "text").write_bytes(big * 2 + b"\xff\xfe bad utf8 needle\n")
    assert_same_in(d, ["grep -c needle big", "grep -a -o needle big | wc -l", "sed 's/needle/N/' big | wc -c",
                       "sort big | tail -c 50", "wc big", "cut -c1-5 big | tr \"\\0\\377\" @_", "tail -c 30 big | tr \"\\0\" @",
                       "head -c 10 big", "grep needle big; echo $?", "grep -c needle text", "grep -o needle text", "sed -n '$p' text", "uniq -c big | wc -l", "tr -d x < big | wc -c"])
