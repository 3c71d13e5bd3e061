"""bc against GNU bc: POSIX bc with -l, scale rules, ibase/obase, arrays,
functions, control flow, print and strings, errors of syntax.

Same method as test_commands_gnu.py (gnu_compare.py): each case runs once
through `box-shell -c` and once through `bash -c` with the GNU tools
(LC_ALL=C) in two fresh copies of one generated tree; stdout, stderr and
status must be equal.  GNU's runtime errors name a byte-code address the
Shell's bc has not, so those cases compare the messages without it.
"""
import pytest

from gnu_compare import assert_same_run, need_shell, run_both

# Programs written to p0.bc, p1.bc, … before each case.
PROGRAMS = [
    'define f(n) { if (n <= 1) return (1); return (n * f(n - 1)); }\nf(10); f(30)\n',
    'define fib(n) {\n  auto a, b, t, i\n  a = 0; b = 1\n  for (i = 0; i < n; i++) { t = a + b; a = b; b = t }\n'
    '  return (a)\n}\nfib(10); fib(100)\n',
    'define s(a[], n) { auto i, t; for (i = 0; i < n; i++) t += a[i]; return t }\n'
    'for (i = 0; i < 5; i++) x[i] = i * i\ns(x[], 5)\nx[2]\n',
    'define g() { return y * 2 }\ndefine h(y) { return g() }\ny = 1; h(10); g()\n',
    '/* comment */ 1 + 2 # another\n3 \\\n+ 4\n"multi\nline"\n',
    'i = 0\nwhile (1) { i += 1; if (i == 3) continue; if (i > 5) break; i }\n',
    'scale = 4\nx = 1/3; x; x * 3; -x; x ^ 3; x ^ -2; (x + 1) ^ 2\nscale = 0; 7 / 2; -7 / 2; 7 % -2; -7 % 2\n',
    'obase = 16; -255.75; 4095; 0.1\nobase = 8; 64; obase = 2; 255; -5\n',
    'ibase = 16; FF.8; 10; ABC; obase = A; 1F\n',
    'a = 5; a++ + ++a; a; a--; --a; a\nb[3] += 4; b[3]++; b[3]\n',
    'scale = 20; 1 / 7; 22 / 7; 355 / 113\nlength(0); length(0.001); length(100); scale(100); length(1.000)\n',
    'x = 3; if (x > 2) print "big\\n" else print "small\\n"\nprint "x=", x, " y=", x * 2, "\\n"\n'
    'print "tab\\there\\\\back\\q\\n"\n',
    '1; 2+; 3\n4\nfoo bar\n5\n',
    'define f(x) { x = x * 2; return x }\nx = 5; f(x); x\n',
    '2 ^ 1000\n"abcdefghij"; 2 ^ 300\n',
    'scale = 3; sqrt(16); sqrt(0.25); sqrt(2); sqrt(1000000)\n',
    'define z() { }\nz()\ndefine w() { return }\nw()\n',
    '1 == 1; 1 != 2; 2 < 1; 2 <= 2; 3 > 2; 3 >= 4; !(1 < 2); 0 || 0; 1 && 2\n',
    'x = 2; x += 3; x; x -= 1; x; x *= 4; x; x /= 3; x; x %= 4; x; x ^= 2; x\n',
    'for (i = 1; i <= 3; i++) { for (j = 1; j <= 2; j++) { i * j } }\n',
    'halt\n5\n',
    'define p(n) { print n, "\\n"; halt }\np(3)\n4\n',
    '-.5 * 2; .5 + .5; 1.0000 - 1; 0 - 0.5; 10.50 * 2.0\n',
    '99999999999999999999 * 99999999999999999999; 12345678901234567890 / 9876543210\n',
    'obase = 20; 12345.6; 1.23456\nobase = 1000; 123456789\n(x = 5); (x += 2)\n',
    'scale; s(1); c(1); a(1); l(2); e(1); j(1,2); 4*a(1)\n',
    'scale = 5; e(2); l(10); s(-1); a(-100); e(-3); l(0.5); sqrt(3)\n',
    'e(10); e(0); e(-1); e(0.001); l(1); l(100); l(0.001); l(123456.789)\n',
    's(0); s(3.14159); s(100); c(0); c(2); c(-5); a(0.5); a(2); a(1000); a(-0.1)\n',
    'j(0,1); j(2,3.5); j(-1,2); j(5,10); j(-2, 1.5); j(3,-2)\n',
    'scale = 50; 4*a(1); e(1); l(2)\nscale = 0; e(1); s(1); l(10)\nscale = 2; e(5); l(3); a(1)\n',
    'e = 5; e; e(1)\nscale = 100; sqrt(2)\n',
    'break; 5\n6\n',
    'ibase = 16; FF; A; 1A; ibase = 2; 12; 3\n-2^2; 2^-1; scale = 3; 2^-2\na = 1 < 2; a\n',
    'quit; 5\n',
    '5 % 3; scale = 2; 5 % 3; 5.5 % 2\nif (1) 5 else 6\n',
]
EXTRA = "".join(f"cat > p{i}.bc <<'BC_EOF'\n{p}BC_EOF\n" for i, p in enumerate(PROGRAMS)) + r"""
printf '1+2\n' > f1.bc; printf 'define sq(x) { return x*x }\n' > lib.bc; printf 'sq(7)\nquit\n' > use.bc
printf '1+\n2\n' > bad.bc
"""

# the ones from p25 on call the library
CASES = [f'bc p{i}.bc < /dev/null' for i in range(len(PROGRAMS)) if not 25 <= i <= 31] + \
        [f'bc -l p{i}.bc < /dev/null' for i in range(len(PROGRAMS))] + [
    'bc f1.bc < /dev/null', 'bc lib.bc use.bc', 'bc bad.bc < /dev/null', 'bc nope; echo $?', 'echo 5 | bc f1.bc',
    'echo "x" | bc -q', 'bc -z; echo $?', 'bc --bogus; echo $?', 'echo "s(1)" | bc --mathlib', 'echo "s(1)" | bc -ql',
    'echo 1 | bc f1.bc nope f1.bc; echo $?', 'echo "scale=2; 3/7" | bc', 'echo "3/7" | bc -l',
    'echo "sum=0; for(i=1;i<=100;i++) sum+=i; sum" | bc', 'printf "1\\n2\\n" | bc', 'echo "obase=16; 255" | bc',
    'echo "ibase=2; 1010" | bc', 'echo "a=" | bc', 'echo "}" | bc', 'echo "if (1) { 5" | bc', 'echo "define f( { }" | bc',
    'printf "1+" | bc', 'printf "1+\\n\\n" | bc', 'printf "{\\n1\\n" | bc', 'printf "1\\n2" | bc',
    'printf "5\\n\\n\\nif (1) {\\n1\\n2\\n3" | bc', 'printf "1;\\n2;" | bc', 'printf "define f() { return 3 }\\nf()" | bc',
    'printf "1; 2;\\n3\\n" | bc', 'printf "1+\\n2\\n3\\nfoo bar\\n4\\n" | bc', 'printf "1 2\\n3\\n" | bc',
    'echo "2.5 * 4; 10 / 4; scale=3; 10 / 4" | bc', 'echo "(1.5 + 2.25) * 3" | bc -l', 'echo "1/3" | bc -l',
    'echo "return 5" | bc', 'printf "1; return\\n6\\n" | bc', 'printf "break\\n6\\n" | bc', 'echo "x=1/0; 5" | bc 2>&1 | sed "s/adr=[0-9]*//"',
    'echo "1 % 0" | bc 2>&1 | sed "s/adr=[0-9]*//"', 'echo "x[-1]" | bc 2>&1 | sed "s/adr=[0-9]*//"',
    'echo "f(1)" | bc 2>&1 | sed "s/adr=[0-9]*//"', 'echo "sqrt(-4)" | bc 2>&1 | sed "s/adr=[0-9]*//"',
    'echo "2^0.5" | bc 2>&1 | sed "s/adr=[0-9]*//"', 'echo "scale=-1; ibase=1; obase=1" | bc 2>&1 | sed "s/adr=[0-9]*//"',
    'echo "ibase=17; ibase; ibase=100" | bc 2>&1 | sed "s/adr=[0-9]*//"',
]


@pytest.mark.parametrize("text", CASES)
def test_against_gnu(tmp_path, text):
    need_shell()
    assert_same_run(*run_both(tmp_path, text, EXTRA))
