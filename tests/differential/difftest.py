#!/usr/bin/env python3
"""Differential tester: generated programs through GNU bash and the Shell.

Each program (gen.py) runs as `bash -c TEXT` and as `box-shell -c TEXT`, in
twin scratch directories with one environment; stdout and the exit status
must match (stderr's presence is counted apart, --stderr makes it count).

  difftest.py --seeds 0:2000                 pass rate and the divergent seeds
  difftest.py --seeds 0:2000 --by-tag        which idioms the divergences use
  difftest.py --show 17                      one program, both answers
  difftest.py --reduce 17                    the smallest statement subset that still diverges
  difftest.py --seeds 0:100000 --stable      also drop programs bash answers two ways
  difftest.py --seeds 0:2000 --write-known   rewrite known-divergent.txt (CI's ratchet)

BOX_SHELL names the Shell's binary (default build/box/box-shell).
"""
import argparse
import collections
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen import gen_program  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BOX_SHELL = os.environ.get("BOX_SHELL", str(REPO / "build" / "box" / "box-shell"))
BASH = shutil.which("bash") or "/bin/bash"
TIMEOUT = 10
KNOWN = Path(__file__).resolve().parent / "known-divergent.txt"
KNOWN_HEAD = ("# Seeds of gen.py whose program the Shell answers differently from bash today, each\n"
              "# class with its reason (CI's seeds 0..1999 and longer runs by hand: difftest.py\n"
              "# --seeds 0:100000 --stable).  CI replays them and fails on a divergent seed not listed\n"
              "# here; a fix removes seeds.  Reduce one: difftest.py --reduce SEED\n")


REPLAY = Path(__file__).resolve().parent / "replay-seeds.txt"


def seed_file(path):
    """The seeds of a list: one a line, `#` starts a comment."""
    out = []
    for line in path.read_text().split("\n"):
        line = line.split("#", 1)[0].strip()
        if line:
            out.append(int(line))
    return out


def known_divergent():
    return set(seed_file(KNOWN))


def replay_seeds():
    """Seeds past CI's range that a long run found divergent: the fixed
    ones (replay-seeds.txt) and the listed ones, for CI to replay."""
    return sorted(set(seed_file(REPLAY)) | known_divergent())


def run(argv, text):
    with tempfile.TemporaryDirectory(prefix="difft-") as d:
        env = {"PATH": "/usr/bin:/bin", "HOME": d, "LC_ALL": "C.UTF-8", "TERM": "dumb"}
        try:
            p = subprocess.run(argv + ["-c", text], cwd=d, env=env, capture_output=True,
                               timeout=TIMEOUT, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as e:
            return (e.stdout or b"", b"timeout", -1)
        return (p.stdout, p.stderr, p.returncode)


def compare(text, stderr=False, stable=False):
    """None when the Shell gives bash's answer (or bash is unstable), else
    (ours, bash)."""
    ref = run([BASH], text)
    if stable and run([BASH], text)[0::2] != ref[0::2]:
        return None
    ours = run([BOX_SHELL], text)
    # a program that loops for ever under both (`for ((…; i++))` whose body
    # sets i) has no answer to compare: how much each printed is speed
    same = (ours[0] == ref[0] and ours[2] == ref[2]) or ours[2] == ref[2] == -1
    if stderr:
        same = same and bool(ours[1]) == bool(ref[1])
    return None if same else (ours, ref)


def check_seed(seed, stderr=False, stable=False):
    prog = gen_program(seed)
    return seed, prog, compare(prog.text, stderr, stable)


def sweep(seeds, jobs=2, stderr=False, stable=False):
    """(number run, [(seed, program, (ours, bash))] divergent)."""
    bad = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        for seed, prog, diff in ex.map(lambda s: check_seed(s, stderr, stable), seeds):
            if diff:
                bad.append((seed, prog, diff))
    return len(seeds), bad


def reduce(stmts, stderr=False):
    """Drops statements (never the first, which sets the stage) while the
    program still diverges."""
    changed = True
    while changed:
        changed = False
        for i in range(len(stmts) - 1, 0, -1):
            trial = stmts[:i] + stmts[i + 1:]
            if compare("\n".join(trial) + "\n", stderr):
                stmts = trial
                changed = True
    return stmts


def parse_range(s):
    a, _, b = s.partition(":")
    return list(range(int(a), int(b))) if b else [int(a)]


def show(text, diff):
    print(text, end="")
    if diff:
        ours, ref = diff
        print("--- ours:", ours)
        print("--- bash:", ref)
    else:
        print("--- same")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="0:2000")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--stderr", action="store_true", help="stderr's presence must match too")
    ap.add_argument("--stable", action="store_true", help="run bash twice; skip programs it answers two ways")
    ap.add_argument("--by-tag", action="store_true")
    ap.add_argument("--list", type=int, default=0, help="print the first N divergent seeds")
    ap.add_argument("--show", type=int)
    ap.add_argument("--reduce", type=int)
    ap.add_argument("--write-known", action="store_true",
                    help="write the divergent seeds to known-divergent.txt")
    a = ap.parse_args()
    if a.show is not None:
        prog = gen_program(a.show)
        show(prog.text, compare(prog.text, a.stderr))
        return 0
    if a.reduce is not None:
        stmts = reduce(gen_program(a.reduce).stmts, a.stderr)
        text = "\n".join(stmts) + "\n"
        show(text, compare(text, a.stderr))
        return 0
    seeds = parse_range(a.seeds)
    n, bad = sweep(seeds, a.jobs, a.stderr, a.stable)
    print(f"{n - len(bad)}/{n} identical ({100.0 * (n - len(bad)) / n:.2f}%), {len(bad)} divergent")
    if a.by_tag:
        all_tags = collections.Counter()
        bad_tags = collections.Counter()
        for s in seeds:
            all_tags.update(gen_program(s).tags)
        for _, prog, _ in bad:
            bad_tags.update(prog.tags)
        for t, c in sorted(bad_tags.items(), key=lambda kv: -kv[1] / all_tags[kv[0]]):
            print(f"  {t:20} {c:5}/{all_tags[t]:<5} {100.0 * c / all_tags[t]:5.1f}%")
    for seed, _, _ in bad[:a.list]:
        print(seed)
    if a.write_known:
        KNOWN.write_text(KNOWN_HEAD + "".join(f"{s}\n" for s, _, _ in bad))
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
