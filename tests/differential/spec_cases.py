#!/usr/bin/env python3
"""Case files through GNU bash and the Shell, bash as the oracle.

Runs every case of a directory of case files — the layout public shell
conformance suites use: a case starts at a line `#### title` (older files:
`### title`), its code runs until the first `## ` annotation line — as
`bash -c CODE` and as `box-shell -c CODE`, each in a fresh scratch
directory with one small environment, and compares stdout and the exit status.  The annotations
(the suite's own expectations for many shells) are not read: bash's
answer is the expected one.  A case bash answers two ways (time, PIDs,
races) is left out as unstable.

No corpus lives in this repository; point the script at one:

  spec_cases.py DIR                     pass rate per file and overall
  spec_cases.py DIR --failing           and each divergent case's name
  spec_cases.py DIR --show FILE:N       one case (N counts from 1): its code, both answers
  spec_cases.py DIR --files a,b         only DIR/a.test.sh and DIR/b.test.sh

BOX_SHELL names the Shell's binary (default build/box/box-shell).  The
helper programs such suites call (argv.py, printenv.py, stdout_stderr.py,
read_from_fd.py) are provided as small scripts of our own on PATH.
"""
import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BOX_SHELL = os.environ.get("BOX_SHELL", str(REPO / "build" / "box" / "box-shell"))
BASH = shutil.which("bash") or "/bin/bash"
TIMEOUT = 5

# What the suites' helpers do, as they are used: print argv, print
# variables of the environment, write to both streams, read descriptors.
HELPERS = {
    "argv.py": "import sys\nprint(repr(sys.argv[1:]))\n",
    "printenv.py": ("import os, sys\n"
                    "for name in sys.argv[1:]:\n"
                    "    print(os.environ.get(name, 'None'))\n"),
    "stdout_stderr.py": ("import sys\n"
                         "print(sys.argv[1] if len(sys.argv) > 1 else 'STDOUT')\n"
                         "sys.stdout.flush()\n"
                         "print(sys.argv[2] if len(sys.argv) > 2 else 'STDERR', file=sys.stderr)\n"
                         "sys.exit(int(sys.argv[3]) if len(sys.argv) > 3 else 0)\n"),
    "read_from_fd.py": ("import os, sys\n"
                        "for a in sys.argv[1:]:\n"
                        "    fd = int(a)\n"
                        "    try:\n"
                        "        data = os.read(fd, 4096).decode('utf-8', 'replace')\n"
                        "    except OSError as e:\n"
                        "        data = '(%s)' % e.strerror\n"
                        "    print('%d: %s' % (fd, data))\n"),
}


def parse_cases(path):
    """[(title, code)] of one case file."""
    cases, title, code, in_code = [], None, [], False
    lines = path.read_text(errors="surrogateescape").split("\n")
    # older files of such suites open a case with three #
    head = "#### " if any(line.startswith("#### ") for line in lines) else "### "
    for line in lines:
        if line.startswith(head):
            if title is not None:
                cases.append((title, "\n".join(code) + "\n"))
            title, code, in_code = line[len(head):].strip(), [], True
        elif title is not None and in_code:
            if line.startswith("## ") or line == "##":
                in_code = False
            else:
                code.append(line)
    if title is not None:
        cases.append((title, "\n".join(code) + "\n"))
    return cases


def make_bin(root):
    bindir = Path(root) / "bin"
    bindir.mkdir()
    py = shutil.which("python3", path="/usr/bin:/bin") or "/usr/bin/python3"
    for name, body in HELPERS.items():
        p = bindir / name
        p.write_text(f"#!{py}\n" + body)
        p.chmod(0o755)
    return bindir


def run(shell, code, bindir):
    with tempfile.TemporaryDirectory(prefix="spec-case-") as d:
        env = {"PATH": f"{bindir}:/usr/bin:/bin", "HOME": d, "TMP": d, "LC_ALL": "C.UTF-8",
               "SH": "bash", "REPO_ROOT": d}
        for attempt in range(5):
            try:
                p = subprocess.run([shell, "-c", code], cwd=d, env=env, capture_output=True,
                                   stdin=subprocess.DEVNULL, timeout=TIMEOUT)
                return p.stdout, p.returncode, p.stderr
            except subprocess.TimeoutExpired:
                return b"<timeout>", -1, b""
            except OSError:  # the binary being relinked (ETXTBSY, EACCES): again
                time.sleep(0.5)
        return b"<could not run>", -1, b""


def judge(case, bindir):
    code = case[1]
    a = run(BASH, code, bindir)
    b = run(BASH, code, bindir)
    if a[:2] != b[:2]:
        return "unstable", a, None
    ours = run(BOX_SHELL, code, bindir)
    return ("same" if ours[:2] == a[:2] else "differs"), a, ours


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--files", help="comma-separated file names (without .test.sh)")
    ap.add_argument("--failing", action="store_true")
    ap.add_argument("--show", help="FILE:N")
    ap.add_argument("-j", type=int, default=4)
    args = ap.parse_args()
    if not Path(BOX_SHELL).exists():
        sys.exit(f"spec_cases.py: {BOX_SHELL}: no such file (build first, or set BOX_SHELL)")
    with tempfile.TemporaryDirectory(prefix="spec-bin-") as root:
        bindir = make_bin(root)
        if args.show:
            name, _, n = args.show.rpartition(":")
            cases = parse_cases(args.dir / f"{name}.test.sh")
            title, code = cases[int(n) - 1]
            verdict, want, got = judge((title, code), bindir)
            print(f"#### {title}\n{code}---- {verdict}")
            print(f"bash:  status {want[1]}\n{want[0].decode(errors='replace')}"
                  f"stderr: {want[2].decode(errors='replace')}")
            if got:
                print(f"ours:  status {got[1]}\n{got[0].decode(errors='replace')}"
                      f"stderr: {got[2].decode(errors='replace')}")
            return 0
        files = sorted(args.dir.glob("*.test.sh"))
        if args.files:
            keep = set(args.files.split(","))
            files = [f for f in files if f.name[:-len(".test.sh")] in keep]
        total = {"same": 0, "differs": 0, "unstable": 0}
        failing = []
        with concurrent.futures.ThreadPoolExecutor(args.j) as ex:
            for f in files:
                cases = parse_cases(f)
                verdicts = list(ex.map(lambda c: judge(c, bindir)[0], cases))
                counts = {k: verdicts.count(k) for k in total}
                for k in total:
                    total[k] += counts[k]
                name = f.name[:-len(".test.sh")]
                stable = counts["same"] + counts["differs"]
                print(f"{name:28} {counts['same']:4}/{stable:<4} same"
                      f"  ({counts['unstable']} unstable)")
                failing += [f"{name}:{i + 1} {c[0]}" for i, (c, v) in
                            enumerate(zip(cases, verdicts)) if v == "differs"]
        stable = total["same"] + total["differs"]
        print(f"overall: {total['same']}/{stable} same ({100.0 * total['same'] / max(stable, 1):.1f}%),"
              f" {total['unstable']} unstable left out")
        if args.failing:
            print("\n".join(failing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
