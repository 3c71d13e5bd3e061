#!/usr/bin/env python3
"""An outside shell-conformance corpus through GNU bash and the Shell.

The corpus is not kept here (its text is another project's): fetch or copy
its files into a directory and point this at it.  Two layouts are read:

  spec-test files (NAME.test.sh): cases, each after a line `#### NAME` (or
      `### NAME` in older files); lines starting `## ` (or `# ` right after
      a `### ` header's metadata) hold that project's expected answers and
      are dropped: bash is the reference here, not them.
  plain scripts (anything else, e.g. a shell's own tests/*.tests): the whole
      file is one case, compared by output line (the measure for such files
      is the share of bash's output lines the Shell prints too).

Each case runs as `bash -c TEXT` and `box-shell -c TEXT`, in twin scratch
directories with one environment (difftest.py's, with a directory of small
helpers first on PATH: argv.py prints its arguments as a Python list,
printenv.py the named variables, read_from_fd.py reads the named fds,
stdout_stderr.py writes a line to each).
bash runs twice; a case bash answers two ways is not counted.

Differences this leaves on purpose or for later (bash 5.2 as reference):
  ~user is not expanded (spec/shell.md: left literal, for security);
  bash 5.2's own bugs the Shell does not copy: a tilde right of [k]= in an
    assoc literal, [k]+= in an assoc literal keeping only the last part,
    [k]=-{a,b}- brace-expanded in an indexed literal, set -e set inside a
    function run under `!` (${!prefix*} and ${!a[*]} unquoted with IFS=''
    are joined as bash joins them: scripts test for it);
  for later: a multibyte character in IFS splits by byte; `unset x` in a
    function where x is a temporary binding (x=t f) shows empty, not the
    global.

  outside.py DIR                 agreement rate and the divergent cases
  outside.py DIR --show NAME     one case, both answers
  outside.py DIR --lines         plain scripts: share of bash's output lines
"""
import argparse
import concurrent.futures
import difflib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import difftest  # noqa: E402

HELPERS = {
    "argv.py": "import sys\nprint(repr(sys.argv[1:]))\n",
    "printenv.py": ("import os, sys\n"
                    "for n in sys.argv[1:]:\n"
                    "    print(os.environ.get(n, 'None'))\n"),
    "stdout_stderr.py": "import sys\nprint('STDOUT')\nprint('STDERR', file=sys.stderr)\n",
    "read_from_fd.py": ("import os, sys\n"
                        "for a in sys.argv[1:]:\n"
                        "    fd = int(a)\n"
                        "    data = b''\n"
                        "    while True:\n"
                        "        b = os.read(fd, 4096)\n"
                        "        if not b:\n"
                        "            break\n"
                        "        data += b\n"
                        "    print('%d: %s' % (fd, data.decode().rstrip('\\n')))\n"),
}

HEADER = re.compile(r"^#{3,4} (.*)$")


def helper_dir():
    d = Path(tempfile.mkdtemp(prefix="outside-bin-"))
    for name, body in HELPERS.items():
        p = d / name
        p.write_text("#!/usr/bin/python3\n" + body)
        p.chmod(0o755)
    return d


def spec_cases(path):
    """[(name, text)] of one spec-test file."""
    out, name, lines = [], None, []
    for line in path.read_text(errors="replace").split("\n") + ["#### "]:
        m = HEADER.match(line)
        if m:
            if name is not None and "".join(lines).strip():
                out.append((f"{path.name.removesuffix('.test.sh')}: {name}", "\n".join(lines).strip("\n") + "\n"))
            name, lines = m.group(1).strip(), []
        elif line.startswith("## ") or line.startswith("# stdout") or line.startswith("# status"):
            continue
        elif name is not None:
            lines.append(line)
    return out


def cases(root):
    """[(name, text, kind)]: kind 'case' for spec-test cases, 'file' for plain scripts."""
    out = []
    for f in sorted(Path(root).rglob("*")):
        if not f.is_file():
            continue
        if f.name.endswith(".test.sh"):
            out += [(n, t, "case") for n, t in spec_cases(f)]
        else:
            out.append((f.name, f.read_text(errors="replace"), "file"))
    return out


def run(argv, text, bindir):
    with tempfile.TemporaryDirectory(prefix="outside-") as d:
        env = {"PATH": f"{bindir}:/usr/bin:/bin", "HOME": d, "LC_ALL": "C.UTF-8", "TERM": "dumb",
               "SH": "bash", "TMP": d}
        os.makedirs(Path(d) / "_tmp")
        os.makedirs(Path(d) / "tests")
        try:
            p = subprocess.run(argv + ["-c", text], cwd=d, env=env, capture_output=True,
                               timeout=difftest.TIMEOUT, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as e:
            return (e.stdout or b"", b"timeout", -1)
        return (p.stdout, p.stderr, p.returncode)


def judge(item, bindir):
    """(name, kind, ours, bash) or None when bash is not stable."""
    name, text, kind = item
    ref = run([difftest.BASH], text, bindir)
    if run([difftest.BASH], text, bindir)[0::2] != ref[0::2]:
        return None
    return name, kind, run([difftest.BOX_SHELL], text, bindir), ref


def line_share(ours, ref):
    """How many of bash's output lines the Shell prints too, in order."""
    a, b = ours.split(b"\n"), ref.split(b"\n")
    same = sum(m.size for m in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())
    return same, len(b)


def sweep(root, jobs=2):
    bindir = helper_dir()
    items = cases(root)
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        return [r for r in ex.map(lambda it: judge(it, bindir), items) if r], len(items)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--show", metavar="NAME")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quiet", action="store_true", help="only the rates")
    a = ap.parse_args()
    if a.show:
        bindir = helper_dir()
        text = next(t for n, t, _ in cases(a.dir) if n == a.show)
        print(text)
        for who, argv in (("bash", [difftest.BASH]), ("ours", [difftest.BOX_SHELL])):
            out, err, rc = run(argv, text, bindir)
            print(f"--- {who}: status {rc}\n{out.decode(errors='replace')}"
                  f"--- {who} stderr\n{err.decode(errors='replace')}")
        return 0
    results, total = sweep(a.dir, a.jobs)
    stable = [r for r in results if r[1] == "case"]
    bad = [r for r in stable if (r[2][0], r[2][2]) != (r[3][0], r[3][2])]
    for name, _, ours, ref in bad if not a.quiet else []:
        print(f"{name}: ours {ours[2]} {ours[0][:100]!r}\n    bash {ref[2]} {ref[0][:100]!r}")
    if stable:
        n = len(stable)
        print(f"cases: {n - len(bad)}/{n} of bash's stable answers ({100.0 * (n - len(bad)) / n:.1f}%), "
              f"{sum(1 for i in cases(a.dir) if i[2] == 'case') - n} unstable under bash left out")
    files = [r for r in results if r[1] == "file"]
    if files:
        same = lines = ident = 0
        for name, _, ours, ref in files:
            s, n = line_share(ours[0], ref[0])
            same, lines = same + s, lines + n
            ident += ours[0] == ref[0] and ours[2] == ref[2]
            if not a.quiet and s < n:
                print(f"{name}: {s}/{n} lines")
        print(f"files: {ident}/{len(files)} identical, {same}/{lines} of bash's output lines "
              f"({100.0 * same / max(lines, 1):.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
