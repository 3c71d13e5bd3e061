"""base64 against GNU's, for the streaming encoder and decoder: each case
runs the same text through `box-shell -c` and `bash -c` in twin scratch
directories and compares stdout (byte for byte), stderr and the exit
status.  The inputs, random binary files and their encodings, are made
once and read by both through $D.

The sizes straddle the blocks either side reads in (GNU's 30 KiB, the
Shell's 48 KiB, a pipe's 64 KiB) so that a group of 3 bytes or 4
characters cut by a block, and a line cut by one, show.
"""
import base64
import random
import shutil
import subprocess

import pytest

from conftest import BOX_SHELL, table_cases
from test_shell_bash import _norm

BASH = shutil.which("bash")

SMALL = range(0, 201)
BLOCKS = [30719, 30720, 30721, 49151, 49152, 49153, 65535, 65536, 65537, 98305, 1048577]
WRAPS = ["0", "1", "76", "77"]

ENCODE = [(f"small-w{w}", f'for n in $(seq 0 200); do base64 -w {w} "$D/r$n"; echo "|$?"; done')
          for w in WRAPS]
ENCODE += [
    ("small-default", 'for n in $(seq 0 200); do base64 "$D/r$n"; echo "|$?"; done'),
    ("small-stdin", 'for n in 0 1 2 3 4 5 57 58 59 60 199 200; do base64 -w 7 < "$D/r$n"; echo "|$?"; done'),
]
ENCODE += [(f"block-{n}-w{w}", f'base64 -w {w} "$D/r{n}"; echo "|$?"') for n in BLOCKS for w in WRAPS]
ENCODE += [(f"block-{n}-pipe", f'cat "$D/r{n}" | base64 --wrap=77; echo "|$?"') for n in BLOCKS]
ENCODE += [
    ("wrap-forms", 'for w in 9223372036854775807 9223372036854775808 -0 " 5" +5 05 3; do '
     'base64 -w "$w" "$D/r10"; echo "|$?"; done'),
    ("wrap-invalid", 'for w in -1 -99999999999999999999 "" x "5 " 0x5; do base64 -w "$w" "$D/r10"; echo "|$?"; done'),
    ("wrap-missing", 'base64 -w; echo "|$?"'),
    ("operands", 'base64 "$D/r1" "$D/r2"; echo "|$?"; base64 nosuch; echo "|$?"; mkdir d; base64 d; echo "|$?"; '
     'base64 -d d; echo "|$?"; base64 - < "$D/r5"; echo "|$?"'),
    ("zero-endless", 'base64 /dev/zero | head -c 100; echo; echo "${PIPESTATUS[@]}"'),
    ("zero-endless-wrapped", 'base64 -w 0 /dev/zero | head -c 100000 | tail -c 20; echo; echo "${PIPESTATUS[@]}"'),
    ("zero-decode", 'base64 -d /dev/zero | head -c 5; echo "${PIPESTATUS[@]}"'),
    ("round-trip", 'for n in 0 1 2 3 65535 65537 1048577; do base64 "$D/r$n" | base64 -d | cmp - "$D/r$n" '
     '&& echo same; done'),
]

DECODE = [(f"decode-{n}-{form}", f'base64 -d "$D/r{n}.{form}" | od -A d -t x1 | tail -n 3; echo "${{PIPESTATUS[@]}}"')
          for n in (0, 1, 2, 3, 4, 5, 100, 65535, 65536, 65537, 1048577) for form in ("w0", "w76", "w77", "w1")]
DECODE += [
    ("decode-whole-1m", 'base64 -d "$D/r1048577.w76"; echo "|$?"'),
    ("decode-small-all", 'for n in $(seq 0 200); do base64 -d "$D/r$n.w77"; echo "|$?"; done'),
    ("decode-stdin-pipe", 'cat "$D/r65537.w1" | base64 -d | cmp - "$D/r65537"; echo "|$?"'),
    ("decode-junk-ignored", 'base64 -d -i "$D/r65537.junk"; echo "|$?"'),
    ("decode-junk-small", 'for n in $(seq 0 60); do base64 --decode --ignore-garbage "$D/r$n.junk"; echo "|$?"; done'),
    ("decode-junk-refused", 'base64 -d "$D/r65537.junk"; echo "|$?"'),
    ("decode-junk-refused-small", 'for n in $(seq 0 60); do base64 -d "$D/r$n.junk"; echo "|$?"; done'),
    ("decode-invalid-late", 'base64 -d "$D/r1048577.bad"; echo "|$?"'),
    ("decode-invalid-late-ignored", 'base64 -di "$D/r1048577.bad"; echo "|$?"'),
    ("decode-crlf", 'base64 -d "$D/r100.crlf"; echo "|$?"; base64 -d -i "$D/r100.crlf"; echo "|$?"'),
]

# short texts to decode: padding, groups cut short, '=' inside, garbage
TEXTS = [
    "QQ==QUJD", "QQ=", "QQ", "Q", "QUJ\\nD", "QQ==\\n", "QQ=\\n=", "Q=Q=", "QU!JD", "QUJD\\r\\n", "QUI=QUJD",
    "QUJ=", "QUJDQ", "====", "", "\\n\\n", "QUJDRA", "QUJDRA=", "QUJDRA==", "QUJDRA===", "QUJDRA==x", "QUJD RA==",
    "Q U J D", "QQ=\\n", "=QUJD", "QUJD=", "QUJD==", "Q\\nU\\nJ\\nD\\n", "QU\\0JD", "QUJD\\nQU", "//+/", "-_-_",
    "QUJDRA==QUJD", "QUJDRA=\\n=QUJD", "YQ=a", "YWI=YQ==",
]
DECODE += [(f"text-{i}", f"printf -- '{t}' | base64 -d; echo \"|$?\"; printf -- '{t}' | base64 -d -i; echo \"|$?\"")
           for i, t in enumerate(TEXTS)]

CASES = ENCODE + DECODE


def _wrapped(data: bytes, cols: int) -> bytes:
    text = base64.b64encode(data)
    if not cols:
        return text
    return b"".join(text[i:i + cols] + b"\n" for i in range(0, len(text), cols))


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("b64data")
    rnd = random.Random(64)
    for n in list(SMALL) + BLOCKS:
        data = rnd.randbytes(n)
        (d / f"r{n}").write_bytes(data)
        if n <= 200 or n in (65535, 65536, 65537, 1048577):
            for cols in (0, 1, 76, 77):
                (d / f"r{n}.w{cols}").write_bytes(_wrapped(data, cols))
        if n <= 60 or n == 65537:
            # garbage between the characters, newlines included
            text = _wrapped(data, 76)
            junk = bytearray()
            for ch in text:
                junk.append(ch)
                if rnd.random() < 0.1:
                    junk.append(rnd.choice(b"*!- \t\r_~.\x00\xff"))
            (d / f"r{n}.junk").write_bytes(bytes(junk))
    big = _wrapped((d / "r1048577").read_bytes(), 76)
    (d / "r1048577.bad").write_bytes(big[:1000003] + b"*" + big[1000003:])
    (d / "r100.crlf").write_bytes(_wrapped((d / "r100").read_bytes(), 20).replace(b"\n", b"\r\n"))
    return d


def _run(argv, cwd, data):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "LC_ALL": "C", "TERM": "dumb", "D": str(data)}
    p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, _norm(p.stderr)


def _show(r):
    st, out, err = r
    return f"status {st}, {len(out)} bytes out ({out[:80]!r}…{out[-80:]!r}), err {err!r}"


@pytest.mark.skipif(not BASH, reason="bash not installed")
@table_cases("text", CASES)
def test_base64_like_gnu(text, data_dir, tmp_path):
    if not BOX_SHELL.exists():
        pytest.skip("box-shell not built")
    ours_dir, gnu_dir = tmp_path / "ours", tmp_path / "gnu"
    ours_dir.mkdir()
    gnu_dir.mkdir()
    ours = _run([str(BOX_SHELL), "-c", text], ours_dir, data_dir)
    gnu = _run([BASH, "-c", text], gnu_dir, data_dir)
    if ours != gnu:
        first = next((i for i, (a, b) in enumerate(zip(ours[1], gnu[1])) if a != b),
                     min(len(ours[1]), len(gnu[1])))
        pytest.fail(f"\n ours: {_show(ours)}\n  gnu: {_show(gnu)}\n stdout differs from byte {first}")
