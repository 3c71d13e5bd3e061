"""The Shell against GNU bash on the real-snippet corpus (tests/differential/corpus/):
install and CI scripts, Makefile recipes, one-liners and text processing of the
kind agents run.  Each snippet runs as `bash -c` and `box-shell -c` in twin
scratch directories; stdout and status must match, apart from the snippets
corpus/known-divergent.txt lists with their reason."""
import shutil
import sys
from pathlib import Path

import pytest

from conftest import BOX_SHELL

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "differential"))
import corpus  # noqa: E402
import difftest  # noqa: E402


@pytest.mark.skipif(not shutil.which("bash"), reason="bash not installed")
def test_real_snippets_like_bash():
    difftest.BOX_SHELL = str(BOX_SHELL)
    items, bad = corpus.sweep()
    assert len(items) >= 300
    known = corpus.known_divergent()
    new = [(name, diff) for name, _, diff in bad if name not in known]
    agree = sorted(set(known) - {name for name, _, _ in bad})
    detail = "".join(f"\n{n}: ours {d[0][2]} {d[0][0]!r}\n   bash {d[1][2]} {d[1][0]!r}" for n, d in new[:5])
    assert not new, f"{len(new)} snippets diverge (corpus.py --show NAME):{detail}"
    assert not agree, f"listed as divergent but now agree, remove them: {agree}"
    assert (len(items) - len(bad)) / len(items) >= 0.99


def test_snippet_names_are_unique():
    names = [n for _, n, _ in corpus.snippets()]
    assert len(names) == len(set(names))
