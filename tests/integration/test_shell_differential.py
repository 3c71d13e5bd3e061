"""The Shell against GNU bash on generated programs.

tests/differential/gen.py writes seeded random programs from a grammar of
the idioms agents use; each runs through `bash -c` and `box-shell -c` and
stdout and status are compared.  CI replays seeds 0..1999 (about 20 s on two
cores).  A divergence that known-divergent.txt does not list fails the test
(a regression, or a generator change: rewrite the list with
`difftest.py --write-known`); a longer run is by hand:
`tests/differential/difftest.py --seeds 0:100000 --stable --by-tag`.
"""
import shutil
import sys
from pathlib import Path

import pytest

from conftest import BOX_SHELL

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "differential"))
import difftest  # noqa: E402

SEEDS = range(0, 2000)


def ci_seeds():
    """SEEDS, and the ones a longer run found divergent (replay-seeds.txt,
    known-divergent.txt)."""
    return sorted(set(SEEDS) | set(difftest.replay_seeds()))


@pytest.mark.skipif(not shutil.which("bash"), reason="bash not installed")
def test_generated_programs_like_bash():
    difftest.BOX_SHELL = str(BOX_SHELL)
    n, bad = difftest.sweep(ci_seeds())
    known = difftest.known_divergent()
    new = [(seed, diff) for seed, _, diff in bad if seed not in known]
    fixed = sorted(known - {seed for seed, _, _ in bad})
    print(f"{n - len(bad)}/{n} identical; {len(fixed)} listed seeds now agree: {fixed[:20]}")
    detail = "".join(f"\nseed {s}: ours {d[0]!r}\n         bash {d[1]!r}" for s, d in new[:5])
    assert not new, f"{len(new)} new divergences (tests/differential/difftest.py --reduce SEED):{detail}"


def test_generator_is_reproducible():
    a = difftest.gen_program(12345).text
    assert a == difftest.gen_program(12345).text
    assert a != difftest.gen_program(12346).text
