"""od, xxd and hexdump against the real tools: GNU coreutils od, vim's xxd
and util-linux hexdump.  Each case runs the same text through
`box-shell -c` and `bash -c` (which runs the real tool) in twin scratch
directories holding the same fixture files, and compares the exit status,
stdout byte for byte, and stderr with bash's "bash: line N: " prefix
forgiven.

The locale is C: GNU od quotes a type string with curly quotes in a UTF-8
locale, the Shell's messages always use the C locale's.  Output of the
random devices is only counted (`| wc -c`), so it compares.  A case is
skipped only when its real tool is not installed (xxd comes with the xxd
package, hexdump with bsdextrautils: packaging/debian-packages.txt).
"""
import shutil
import struct
import subprocess

import pytest

from conftest import BOX_SHELL, table_cases
from test_shell_bash import BASH, _norm

# The files every case starts from.
FIXTURES = {
    "t": b"hello world\nline two\n",  # text, 21 bytes: no multiple of 2, 4 or 16
    "b": bytes(range(256)),  # every byte value
    "e": b"",
    "o23": b"abcdefghijklmnopqrstuvw",
    "rep": b"a" * 48 + b"0123456789abcdef" + b"a" * 32 + b"xyz",  # runs of equal lines
    "z64": bytes(64),
    "s": b"abc\0de\0fghij\0\n\tkl\0xyz",  # NUL-terminated strings for od -S
    "fl": struct.pack("<dddd", 1.0, -0.0, float("inf"), float("nan"))
    + struct.pack("<ffff", 0.1, 1e30, -3.5, 1e-40),
    "fmt1": b'"%07.7_ax " 8/2 "%04x " "\\n"\n# a comment\n  \n"%07.7_Ax\\n"\n',
    "bad.fmt": b'"%y"\n',
    "hd": b"00000000: 6865 6c6c 6f0a  hello.\n00000010: 4142  AB\n",
    "garbage": b"garbage\nmore junk\n",
}

OD_CASES = [
    # ---- default and the traditional letters ---------------------------------
    ("od-default", "od t"),
    ("od-empty", "od e; od -An e; echo $?"),
    ("od-c-all-bytes", "od -c b"),
    ("od-a-named", "od -a b"),
    ("od-traditional-letters", "od -b t; od -x t; od -o t; od -d t; od -s t; od -h t; od -B t"),
    ("od-traditional-wide", "od -D t; od -H t; od -X t; od -O t; od -i t; od -l t; od -I t; od -L t"),
    ("od-traditional-float", "od -f t; od -e t; od -F t"),
    ("od-letters-stack", "od -cb t"),
    # ---- -t -------------------------------------------------------------------
    ("od-t-u4", "od -t u4 t"),
    ("od-t-u8", "od -tu8 t; od -tuL t"),
    ("od-t-d-default-size", "od -td t; od -tx t; od -to t; od -tu t"),
    ("od-t-sizes-named", "od -tdC -w4 t; od -tdS t"),
    ("od-t-signed-all", "od -td1 -td2 -td4 -td8 b | tail -9"),
    ("od-t-octal-all", "od -to1 -to2 -to4 -to8 b | head -5"),
    ("od-t-f4", "od -tf4 b | head -5"),
    ("od-t-f8", "od -tf8 b | head -5"),
    ("od-t-fL", "od -tfL fl; od -tf16 b | head -3"),
    ("od-t-float-specials", "od -tf8 -tf4 fl"),
    ("od-t-f-then-x", "od -t fx t"),
    ("od-t-x1z", "od -t x1z t"),
    ("od-t-z-partial", "od -tx4z o23; od -td1z o23"),
    ("od-t-cz-az", "od -tcz t; od -taz t"),
    ("od-t-stacked", "od -tx1 -tc -ta t"),
    ("od-t-mixed-widths", "od -tdL -tx1 t; od -t xCz -t dSz t"),
    ("od-t-empty-string", "od -t '' t"),
    ("od-t-bad-char", "od -tq t; echo $?"),
    ("od-t-bad-size", "od -td3 t; od -tx9 t; od -td0 t; od -td16 t"),
    ("od-t-bad-float-size", "od -tf2 b; od -tf0 t"),
    ("od-t-size-overflow", "od -t d99999999999999999999999 t"),
    ("od-t-z-alone", "od -t x1 -t z t; od -tzx t"),
    ("od-t-errors-accumulate", "od -t q -t r t"),
    ("od-t-error-then-bad-option", "od -tq -Q t"),
    # ---- -A -j -N -w -v --endian -S ----------------------------------------------
    ("od-A-radixes", "od -Ax -tx1 t; od -Ad -tu1 t; od -An -tx1 t"),
    ("od-A-bad", "od -Aq t; echo $?"),
    ("od-A-first-letter", "od -A dd t"),
    ("od-j-N", "od -j 3 -N 4 -c t"),
    ("od-j-hex-octal", "od -j 0x10 -N 0x10 -tx1 b; od -j 010 -N 8 -c t"),
    ("od-N-beyond-eof", "od -N 100 t; echo $?"),
    ("od-N-zero", "od -N 0 t"),
    ("od-N-suffixes", "od -N 1kiB -c t; od -N k -c t; od -N 1E t"),
    ("od-N-bad", "od -N x t; od -N -1 t; od -N 1B t; od -N 1Ki t"),
    ("od-N-too-large", "od -N 99999999999999999999999 t"),
    ("od-N-long-option-message", "od --read-bytes=x t; od --read-bytes x t"),
    ("od-j-past-end", "od -j 100 t; echo $?; od -j 21 t"),
    ("od-j-bad-suffix", "od -j 1x t"),
    ("od-random-number", "od -An -N4 -tu4 /dev/urandom | wc -w"),
    ("od-random-bytes", "od -An -N16 -tx1 /dev/urandom | wc -c"),
    ("od-zero-device", "od -N 40 -tx1 /dev/zero"),
    ("od-w", "od -w8 -tx1 b | head -4; od -w t"),
    ("od-w-invalid", "od -w5 -tx2 t; od -w0 t"),
    ("od-w-bad", "od -wx t; od -w-1 t; od -w1k t"),
    ("od-w-last-wins", "od -w5 -tx1 -w3 t"),
    ("od-squeeze", "od rep; od -tx1 z64; od -w32 -tx1 rep"),
    ("od-v", "od -v rep"),
    ("od-endian", "od --endian=big -tx2 t; od -tx2 --endian=big -tx4 o23"),
    ("od-endian-float", "od -tf8 --endian=big fl"),
    ("od-endian-bad", "od --endian=foo t; od --endian= t"),
    ("od-S", "od -S 3 s; od -S 2 -Ax s; od -S1 -An s"),
    ("od-S-limit", "od -S3 -N 12 s; od -S3 -j4 s"),
    ("od-S-with-type", "od -S2 -tx1 s; od -c -S2 s"),
    ("od-S-bad", "od -S x s"),
    ("od-long-options", "od --format=x1 --address-radix=x --skip-bytes=2 --read-bytes=3 --width=4 "
                        "--output-duplicates t; od --strings=1 s"),
    # ---- operands -------------------------------------------------------------
    ("od-old-offset", "od t +5; od t 5; od t 0x3; od -c t +2"),
    ("od-old-offset-not", "od t 10.; od -tc t 5"),
    ("od-old-offset-blocks", "od t 1b"),
    ("od-traditional-label", "od --traditional t 5 10; od --traditional -c t 2"),
    ("od-traditional-extra", "od --traditional t 1 2 3"),
    ("od-files-concatenated", "od t t; od -j 3 t t -N 30 -c"),
    ("od-stdin", "echo hi | od -c - t; echo abc | od -j 2 -c"),
    ("od-stdin-N-leaves-rest", "{ od -N4 -c; cat; } < t"),
    ("od-missing-file", "od nope; echo $?; od nope t; od t nope"),
    ("od-skip-missing", "od -j 1000 t nope; od nope -j 5 t"),
    ("od-directory", "od d; od -j 3 d t"),
    ("od-unknown-option", "od -z t; echo $?"),
]

XXD_CASES = [
    ("xxd-default", "xxd t"),
    ("xxd-all-bytes", "xxd b"),
    ("xxd-empty", "xxd e; echo $?"),
    ("xxd-cols", "xxd -c 4 t; xxd -c4 -g1 t; xxd -cols 5 t"),
    ("xxd-cols-zero", "xxd -c 0 t"),
    ("xxd-cols-max", "xxd -c 256 t; xxd -c 300 t; xxd -c -1 t"),
    ("xxd-group", "xxd -g 3 t; xxd -g 0 t; xxd -g 16 t; xxd -groupsize 4 t"),
    ("xxd-bits", "xxd -b t; xxd -b -c 4 t; xxd -bits -c 3 -g 2 o23"),
    ("xxd-little-endian", "xxd -e t; xxd -e -g 2 t; xxd -e -g 8 b | head -2"),
    ("xxd-little-endian-odd-cols", "xxd -e -c 5 t"),
    ("xxd-little-endian-bad-group", "xxd -e -g 3 t; echo $?"),
    ("xxd-upper", "xxd -u t; xxd -u -p t"),
    ("xxd-plain", "xxd -p t; xxd -p -c 4 t; xxd -ps -c 7 -l 20 b"),
    ("xxd-plain-cols-zero", "xxd -ps -c 0 b; xxd -p -c 0 e | od -c; xxd -p e | od -c"),
    ("xxd-include", "xxd -i t"),
    ("xxd-include-stdin", "xxd -i < t"),
    ("xxd-include-capital", "xxd -i -C t"),
    ("xxd-include-name", "xxd -i -n foo t; xxd -i -n 9x t; xxd -i -C -n my.var t"),
    ("xxd-include-name-from-file", "cp t 1file.bin; xxd -i 1file.bin; cp t 'a b-c.d'; xxd -i 'a b-c.d'"),
    ("xxd-include-cols-upper", "xxd -i -c 4 t; xxd -i -u -c 3 o23; xxd -i e"),
    ("xxd-include-limits", "xxd -i -l 5 -s 2 t"),
    ("xxd-offset", "xxd -o 16 t; xxd -o -16 t; xxd -o 0x10 -s 0x3 t"),
    ("xxd-decimal", "xxd -d t; xxd -d -s 5 -o 100 t"),
    ("xxd-seek", "xxd -s 5 t; xxd -s -5 t; xxd -s +5 t; xxd -seek 4 t"),
    ("xxd-seek-past-end", "xxd -s 100 t; echo $?; xxd -s -100 t; echo $?"),
    ("xxd-seek-pipe", "cat t | xxd -s 5; cat t | xxd -s -5; echo $?; cat t | xxd -s 100; echo $?"),
    ("xxd-seek-relative", "exec 3< t; read -n 2 x <&3; xxd -s +3 -l 4 <&3; exec 3< t; read -n 2 x <&3; xxd -s +-3 <&3; echo $?"),
    ("xxd-length", "xxd -l 5 -s 3 t; xxd -l 0 t; xxd -l -5 t; xxd -len 4 t"),
    ("xxd-length-not-number", "xxd -l x t; echo $?"),
    ("xxd-urandom-limit", "xxd -l 16 -p /dev/urandom | wc -c"),
    ("xxd-urandom-seek", "xxd -s 16 -l 16 /dev/urandom | wc -c"),
    ("xxd-zero-device", "xxd -s 16 -l 40 /dev/zero"),
    ("xxd-autoskip", "xxd -a z64; xxd -a -c 8 z64; xxd -a -c 32 z64; xxd -a -a z64"),
    ("xxd-autoskip-runs", "printf 'abcd\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0xy' | xxd -a -c 4; "
                          "printf '\\0\\0\\0\\0\\0\\0\\0\\0' | xxd -a -c 4; printf '\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0' | xxd -a -c 4"),
    ("xxd-autoskip-device", "xxd -a -c 4 -s 8 -l 24 /dev/zero"),
    ("xxd-ebcdic", "xxd -E b; xxd -E -c 8 -g 4 t"),
    ("xxd-outfile", "xxd t out; cat out"),
    ("xxd-outfile-bad", "xxd t nodir/x; echo $?"),
    ("xxd-dash-operands", "xxd - < t; xxd -- t; xxd -p t -"),
    ("xxd-version", "xxd -v; echo $?"),
    ("xxd-usage", "xxd -q t; echo $?; xxd -l; echo $?; xxd t t2 t3; echo $?"),
    ("xxd-missing-file", "xxd nope; echo $?"),
    ("xxd-directory", "xxd d; echo $?"),
    # ---- -r ---------------------------------------------------------------------
    ("xxd-r-roundtrip", "xxd t | xxd -r; xxd b | xxd -r | cmp - b && echo same"),
    ("xxd-r-plain", "xxd -p t | xxd -r -p; xxd -p b | xxd -r -p | cmp - b && echo same"),
    ("xxd-r-file", "xxd -r hd | od -c"),
    ("xxd-r-offset-gap", "echo '00000010: 4142' | xxd -r | od -c; echo '00000010: 4142' | xxd -r -s -4 | od -c"),
    ("xxd-r-seek-arg", "xxd t | xxd -r -s 2 | od -c"),
    ("xxd-r-garbage", "xxd -r garbage | od -c"),
    ("xxd-r-plain-garbage", "printf 'zz41 42\\n4 3 4\\n' | xxd -r -p | od -c; printf '414' | xxd -r -p | od -c"),
    ("xxd-r-backwards-pipe", "printf '0: 41 42 43\\n2: 5a\\n' | xxd -r | cat | od -c; "
                             "printf '0:4142\\r\\n1:43\\n' | xxd -r | cat >/dev/null; echo ${PIPESTATUS[1]}"),
    ("xxd-r-backwards-file", "printf '8: 4344\\n0: 4142\\n' | xxd -r > rf; od -c rf"),
    ("xxd-r-columns", "printf '0: 414243444546474849505152535455565758  ABCD\\n' | xxd -r | od -c; "
                      "printf '0: 41424344\\n' | xxd -r -c 3 | od -c"),
    ("xxd-r-spaces", "printf '0: 4142 4344  4546\\n' | xxd -r | od -c; printf '0: 41 4 42\\n' | xxd -r | od -c"),
    ("xxd-r-patch", "printf 'abcdef' > pat; echo '2: 5859' | xxd -r - pat; cat pat; echo; "
                    "echo '2: 5859' | xxd -r -s 1 - pat; cat pat"),
    ("xxd-r-new-file", "echo '2: 5859' | xxd -r - pat2; od -c pat2"),
    ("xxd-r-cannot", "xxd -r -i t; echo $?; xxd -r -b t; echo $?; xxd -r -e t; echo $?"),
    ("xxd-r-missing", "xxd -r nope; echo $?"),
    ("xxd-r-upper", "echo 'DEADBEEF' | xxd -r -p | od -tx1; xxd -u -p t | xxd -r -p"),
]

HEXDUMP_CASES = [
    # ---- the built-in formats -------------------------------------------------------
    ("hd-default", "hexdump t"),
    ("hd-canonical", "hexdump -C t; hexdump -C b"),
    ("hd-empty", "hexdump e; hexdump -C e; echo $?"),
    ("hd-b", "hexdump -b t"),
    ("hd-c", "hexdump -c t; hexdump -c b"),
    ("hd-d", "hexdump -d t"),
    ("hd-o", "hexdump -o t"),
    ("hd-x", "hexdump -x t; hexdump -x z64"),
    ("hd-stacked", "hexdump -b -c t; hexdump --two-bytes-decimal --two-bytes-octal t"),
    ("hd-squeeze", "hexdump rep; hexdump -C rep; hexdump z64"),
    ("hd-v", "hexdump -v rep; hexdump -v -C z64"),
    ("hd-n", "hexdump -n 5 -c t; hexdump -n 0 -c t; hexdump -n 49 rep"),
    ("hd-n-squeezed-end", "hexdump -n 32 rep; hexdump -n 48 rep; hexdump -C -n 48 /dev/zero"),
    ("hd-s", "hexdump -s 5 -c t; hexdump -s 20 -c t; hexdump -s 21 -c t; hexdump -s 100 -c t"),
    ("hd-s-n", "hexdump -s 16 -n 40 -C rep; hexdump -s 0x10 -n 16 -C b"),
    ("hd-s-across-files", "hexdump -s 25 -C t o23; hexdump -s 3 -n 30 -C t o23"),
    ("hd-s-stdin-file", "hexdump < t -s 5 -c; hexdump -s 100 < t"),
    ("hd-s-pipe", "cat t | hexdump -s 5 -c; echo $?"),
    ("hd-n-suffixes", "hexdump -n 0x10 -c b; hexdump -n 010 -c b; hexdump -n 1K b | tail -1; "
                      "hexdump -n 1KiB b | tail -1; hexdump -n 1KB b | tail -1; hexdump -n ' 5' -c b"),
    ("hd-n-bad", "hexdump -n -1 b; hexdump -n '' b; hexdump -n 5x b; echo $?"),
    ("hd-n-too-large", "hexdump -n 99999999999999999999 b"),
    ("hd-s-bad", "hexdump -s x t; echo $?"),
    ("hd-zero-device", "hexdump -C -n 16 /dev/zero; hexdump -n 64 -v -C /dev/zero"),
    ("hd-urandom", "hexdump -n 16 -e '4/4 \"%08X\" 1 \"\\n\"' /dev/urandom | wc -c"),
    ("hd-files", "hexdump -C t o23 t; cat t | hexdump -C"),
    ("hd-long-options", "hexdump --skip 2 --length 4 --canonical t; hexdump --one-byte-octal t; "
                        "hexdump --format '\"%x\"' t"),
    ("hd-missing", "hexdump nope; echo $?; hexdump nope t; echo $?; hexdump t nope"),
    ("hd-all-missing", "hexdump nope nope2; echo $?; hexdump -n 0 nope; echo $?"),
    ("hd-missing-skip", "hexdump -s 5 nope; echo $?; hexdump -s 5 nope t"),
    ("hd-directory", "hexdump d; echo $?; hexdump -c t d; hexdump -s 3 d"),
    ("hd-unknown-option", "hexdump -q t; echo $?; hexdump --bogus t; hexdump -e"),
    # ---- -e ---------------------------------------------------------------------------
    ("hd-e-words", "hexdump -n 16 -e '4/4 \"%08X\" 1 \"\\n\"' /dev/zero; hexdump -e '4/4 \"%08X\" 1 \"\\n\"' t"),
    ("hd-e-plain-hex", "hexdump -v -e '/1 \"%02x\"' t; echo; hexdump -v -e '/1 \"%02x\"' b"),
    ("hd-e-int-default", "hexdump -e '\"%x\"' t; echo; hexdump -e '4 \"%x\"' t; echo"),
    ("hd-e-bytes-per-line", "hexdump -e '16/1 \"%02x \" \"\\n\"' t; hexdump -e '8/1 \"%02x\" \"\\n\"' rep"),
    ("hd-e-address", "hexdump -e '\"%_ad \" 16/1 \"%02x\" \"\\n\"' rep; hexdump -e '\"%_ao: \" 8/2 \"%6d \" \"\\n\"' b"),
    ("hd-e-end-address", "hexdump -e '\"%_Ad\\n\"' -e '16/1 \"%x\" \"\\n\"' rep; hexdump -e '\"%_Ad\\n\" \"%x\"' t"),
    ("hd-e-end-address-only", "hexdump -e '\"%_A\"' t; hexdump -e '\"%_Ad\\n\"' t; hexdump -e '\"%_Ad\\n\"' e"),
    ("hd-e-end-address-text", "hexdump -e '\"[\" \"%_Ax\" \"]\\n\"' -e '\"%x \"' t"),
    ("hd-e-three-strings", "hexdump -e '\"%07.7_Ax\\n\"' -e '4/1 \"%02x\" \"\\n\"' -e '8/1 \"%c\" \"\\n\"' t"),
    ("hd-e-c", "hexdump -e '\"%07.7_ax \" 16/1 \"%_c\" \"\\n\"' t; hexdump -e '\"%_ax: \" 16/1 \"%_c \" \"\\n\"' b"),
    ("hd-e-u", "hexdump -e '/1 \"%_u \"' b; hexdump -e '/1 \"%4_u|\" \"\\n\"' -s 250 b"),
    ("hd-e-p", "hexdump -e '/1 \"%5_p|\"' t; hexdump -e '\"%_p%_p\"' -e '\"\\n\"' t"),
    ("hd-e-chars", "hexdump -e '4/1 \"%c\" \"\\n\"' t; hexdump -e '\"%c%c|\"' t; hexdump -e '\"%3c|\"' t"),
    ("hd-e-strings", "hexdump -e '/4 \"%s\" \"\\n\"' t; hexdump -e '\"%.3s|\"' t; hexdump -e '/4 \"%.2s|\"' t; "
                     "hexdump -e '/4 \"%10.6s|\"' t"),
    ("hd-e-string-nul", "printf 'ab\\0cdefgh' | hexdump -e '/4 \"%s|\"'"),
    ("hd-e-string-past-unit", "hexdump -e '2/1 \"%.3s \"' -e '/8 \"%_ad|\" \"\\n\"' z64 t; "
                              "hexdump -e '/2 \"%.3s:\" 4/2 \"%d\" \"\\n\"' o23"),
    ("hd-e-signed", "hexdump -e '/1 \"%d \"' b; hexdump -e '/2 \"%i \"' b; hexdump -e '/8 \"%d\\n\"' b"),
    ("hd-e-unsigned", "hexdump -e '/4 \"%X\\n\"' o23; hexdump -e '/2 \"%u\\n\"' o23; hexdump -e '/8 \"%o\\n\"' o23"),
    ("hd-e-float", "hexdump -e '/8 \"%e \"' b; hexdump -e '/4 \"%g\\n\"' fl; hexdump -e '4/4 \"%E \" \"\\n\"' fl; "
                   "hexdump -e '/4 \"%10.3e \"' t"),
    ("hd-e-flags", "hexdump -e '\"%-5d|\"' t; hexdump -e '\"%+d|\"' t; hexdump -e '\"%#x|\"' t; "
                   "hexdump -e '/1 \"%-#5x|\" \"\\n\"' t; hexdump -e '\"%.3d \"' t"),
    ("hd-e-pad-end", "hexdump -n 3 -e '\"%_ad\" 2/1 \" %02x\" \" %_ad\\n\"' t; "
                     "hexdump -e '2/1 \"%02x\" 1/2 \"|%d\" \"\\n\"' t"),
    ("hd-e-trailing-blank", "hexdump -e '3/1 \"%02x \"' -e '\"\\n\"' t; hexdump -e '1/1 \"%02x \" \"\\n\"' t"),
    ("hd-e-squeeze-small-blocks", "printf 'aaaaaaaabbbbbbbbaaaaaaaaaaaaaaaa' | hexdump -e '8/1 \"%c\" \"\\n\"'; "
                                  "hexdump -e '/1 \"%02x\" \"\\n\"' -n 5 /dev/zero"),
    ("hd-e-escapes", "hexdump -e '\"\\t%x\\n\"' -n 8 t; hexdump -e '\"a\\nbcd\" 1/1 \"\"' -n 1 t | od -c"),
    ("hd-e-colour-spec", "hexdump -e '/1 \"%02x_L[red] \"' t"),
    ("hd-e-bad-format", "hexdump -e 'x' t; hexdump -e '\"abc' t; hexdump -e '/1\"%02x\"' t; echo $?"),
    ("hd-e-bad-conversion", "hexdump -e '\"%%\"' t; hexdump -e '\"%y\"' t; hexdump -e '\"%lx\"' t; "
                            "hexdump -e '\"%_ay\"' t; hexdump -e '\"%_\"' t; echo $?"),
    ("hd-e-bad-count", "hexdump -e '2/3 \"%x\"' t; hexdump -e '/3 \"%f \"' b; hexdump -e '/2 \"%c|\"' t; "
                       "hexdump -e '/2 \"%_p\"' t; hexdump -e '/16 \"%e\"' t"),
    ("hd-e-bad-string", "hexdump -e '\"%s\"' t; hexdump -e '/2 \"%d %d\"' t"),
    ("hd-f", "hexdump -f fmt1 rep"),
    ("hd-f-bad", "hexdump -f nope t; hexdump -f bad.fmt t; echo $?"),
]


def _run(argv, cwd):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "LC_ALL": "C", "TERM": "dumb"}
    p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, _norm(p.stderr)


def _compare(text, tmp_path):
    outs = []
    for argv, name in (([str(BOX_SHELL), "-c", text], "ours"), ([BASH, "-c", text], "real")):
        d = tmp_path / name
        d.mkdir()
        (d / "d").mkdir()
        for fname, data in FIXTURES.items():
            (d / fname).write_bytes(data)
        outs.append(_run(argv, d))
    assert outs[0] == outs[1], f"\n ours: {outs[0]}\n real: {outs[1]}"


def _missing(tool):
    return pytest.mark.skipif(not BASH or not shutil.which(tool), reason=f"{tool} (or bash) not installed")


@_missing("od")
@table_cases("text", OD_CASES)
def test_od_like_coreutils(text, tmp_path):
    _compare(text, tmp_path)


@_missing("xxd")
@table_cases("text", XXD_CASES)
def test_xxd_like_vim(text, tmp_path):
    _compare(text, tmp_path)


@_missing("hexdump")
@table_cases("text", HEXDUMP_CASES)
def test_hexdump_like_util_linux(text, tmp_path):
    _compare(text, tmp_path)


def test_enough_cases():
    assert len(OD_CASES) + len(XXD_CASES) + len(HEXDUMP_CASES) >= 80
