#!/usr/bin/env python3
"""The real-snippet corpus: scripts of the kind agents run (install and CI
scripts, Makefile recipes, one-liners, text processing), each run through
GNU bash and through the Shell with difftest.py's scratch directory and
environment; stdout and the exit status must match.

Snippets live in corpus/*.sh, each after a line `### NAME`.  A snippet the
Shell answers differently on purpose is listed in corpus/known-divergent.txt
(`NAME  reason`); CI fails on any other divergence.

  corpus.py                 pass rate and the divergent snippets
  corpus.py --show NAME     one snippet, both answers
"""
import argparse
import concurrent.futures
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import difftest  # noqa: E402

CORPUS = Path(__file__).resolve().parent / "corpus"


def snippets():
    """[(file stem, name, text)] in file order."""
    out = []
    for f in sorted(CORPUS.glob("*.sh")):
        name, lines = None, []
        for line in f.read_text().split("\n") + ["### "]:
            if line.startswith("### "):
                if name:
                    out.append((f.stem, name, "\n".join(lines).strip("\n") + "\n"))
                name, lines = line[4:].strip(), []
            else:
                lines.append(line)
    return out


def known_divergent():
    p = CORPUS / "known-divergent.txt"
    if not p.exists():
        return {}
    out = {}
    for line in p.read_text().split("\n"):
        if line.strip() and not line.startswith("#"):
            name, _, reason = line.partition(" ")
            out[name] = reason.strip()
    return out


def sweep(jobs=2):
    """(all snippets, [(name, text, (ours, bash))] divergent)."""
    items = snippets()
    bad = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        for (_, name, text), diff in zip(items, ex.map(lambda s: difftest.compare(s[2]), items)):
            if diff:
                bad.append((name, text, diff))
    return items, bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--show", metavar="NAME")
    args = ap.parse_args()
    if args.show:
        text = next(t for _, n, t in snippets() if n == args.show)
        print(text)
        for who, argv in (("bash", [difftest.BASH]), ("ours", [difftest.BOX_SHELL])):
            out, err, rc = difftest.run(argv, text)
            print(f"--- {who}: status {rc}\n{out.decode(errors='replace')}"
                  f"--- {who} stderr\n{err.decode(errors='replace')}")
        return 0
    items, bad = sweep()
    known = known_divergent()
    for name, _, (ours, ref) in bad:
        mark = "known" if name in known else "NEW"
        print(f"{mark} {name}: ours {ours[2]} {ours[0][:120]!r}\n      bash {ref[2]} {ref[0][:120]!r}")
    n = len(items)
    print(f"{n - len(bad)}/{n} identical ({100.0 * (n - len(bad)) / n:.2f}%)")
    return 1 if any(name not in known for name, _, _ in bad) else 0


if __name__ == "__main__":
    sys.exit(main())
