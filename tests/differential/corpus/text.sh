### tx-csv-column-sum
printf 'name,qty,price\napple,3,0.5\npear,2,1.25\n' > s.csv; awk -F, 'NR>1 {t += $2 * $3} END {printf "%.2f\n", t}' s.csv
### tx-csv-header-index
printf 'a,b,c\n1,2,3\n4,5,6\n' > t.csv; col=$(head -1 t.csv | tr , '\n' | grep -n '^b$' | cut -d: -f1); cut -d, -f$col t.csv | tail -n +2
### tx-group-by-awk
printf 'eu 5\nus 3\neu 2\nap 1\n' | awk '{c[$1]++; s[$1]+=$2} END {for (k in c) printf "%s %d %d\n", k, c[k], s[k]}' | sort
### tx-log-status-codes
printf '1.1.1.1 - - "GET / HTTP/1.1" 200 12\n2.2.2.2 - - "GET /x HTTP/1.1" 404 0\n1.1.1.1 - - "POST /a HTTP/1.1" 200 5\n' > access.log; awk '{print $(NF-1)}' access.log | sort | uniq -c | sort -rn
### tx-log-top-ips
printf '1.1.1.1 a\n2.2.2.2 b\n1.1.1.1 c\n3.3.3.3 d\n1.1.1.1 e\n2.2.2.2 f\n' | cut -d' ' -f1 | sort | uniq -c | sort -rn | head -2
### tx-log-time-window
printf '10:00 a\n10:05 b\n10:10 c\n10:15 d\n' | awk '$1 >= "10:05" && $1 <= "10:10"'
### tx-json-lines-jq
printf '{"level":"info","msg":"a"}\n{"level":"error","msg":"b"}\n{"level":"error","msg":"c"}\n' | jq -r 'select(.level=="error") | .msg'
### tx-jq-group-count
echo '[{"k":"a"},{"k":"b"},{"k":"a"}]' | jq -c 'group_by(.k) | map({k: .[0].k, n: length})'
### tx-jq-raw-join
echo '{"tags":["x","y","z"]}' | jq -r '.tags | join(",")'
### tx-jq-arg
jq -n --arg name bob --argjson n 3 '{name: $name, n: $n}' | jq -c .
### tx-ini-section-value
printf '[db]\nhost=a\n[web]\nhost=b\nport=80\n' > c.ini; awk -F= '/^\[/{s=$0; next} s=="[web]" && $1=="host" {print $2}' c.ini
### tx-replace-in-place-backup
printf 'color=red\n' > conf; sed -i.bak 's/red/blue/' conf; cat conf conf.bak
### tx-number-lines-awk
printf 'a\nb\n' | awk '{printf "%3d: %s\n", NR, $0}'
### tx-wrap-long-lines
echo "aaaa bbbb cccc dddd" | fold -s -w 10
### tx-uniq-d-u
printf 'a\na\nb\nc\nc\n' | uniq -d; printf 'a\na\nb\nc\nc\n' | uniq -u
### tx-sort-by-length
printf 'ccc\na\nbb\n' | awk '{print length, $0}' | sort -n | cut -d' ' -f2-
### tx-reverse-words
echo "one two three" | awk '{for (i=NF; i>0; i--) printf "%s%s", $i, (i>1 ? " " : "\n")}'
### tx-transpose
printf '1 2 3\n4 5 6\n' | awk '{for (i=1;i<=NF;i++) a[i]=a[i] (NR>1?" ":"") $i} END {for (i=1;i<=3;i++) print a[i]}'
### tx-markdown-headings-toc
printf '# Title\n## Install\ntext\n## Usage\n### Flags\n' | grep -E '^#{2,3} ' | sed -E 's/^## /- /; s/^### /  - /'
### tx-extract-urls
echo 'see https://a.example/x and http://b.example/y?z=1 now' | grep -oE 'https?://[^ ]+'
### tx-extract-emails
printf 'a@x.org, b.c@y.com\nnone here\n' | grep -oE '[a-z.]+@[a-z]+\.[a-z]+'
### tx-count-chars
echo "mississippi" | fold -w1 | sort | uniq -c | sort -k1,1nr -k2 | head -2
### tx-hex-dump-xxd
printf 'AB' | xxd
### tx-printf-columns-align
printf '%s\t%s\n' key value longerkey v2 | awk -F'\t' '{printf "%-10s %s\n", $1, $2}'
### tx-sed-between-markers
printf 'x\nBEGIN\na\nb\nEND\ny\n' | sed -n '/BEGIN/,/END/{/BEGIN/d;/END/d;p}'
### tx-awk-between-markers
printf 'x\nBEGIN\na\nEND\ny\n' | awk '/END/{f=0} f; /BEGIN/{f=1}'
### tx-join-lines-sed
printf 'a\nb\nc\n' | sed ':a;N;$!ba;s/\n/,/g'
### tx-last-line-match
printf 'v1\nx\nv2\ny\n' | grep '^v' | tail -1
### tx-sum-times-minutes
printf '1:30\n0:45\n2:05\n' | awk -F: '{m += $1*60 + $2} END {printf "%d:%02d\n", m/60, m%60}'
### tx-diff-unified-labels
printf 'a\nb\n' > old; printf 'a\nc\n' > new; diff -u old new | tail -n +3
