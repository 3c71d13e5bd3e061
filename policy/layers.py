#!/usr/bin/env python3
"""The layers of policy/, bottom first, and a check that no file includes
a header of a layer above its own: the includes then form no circle.

Usage: layers.py POLICY_DIR          check the tree (exit 1 on a breach)
       layers.py --self-test POLICY_DIR
                                      check that the check fails on an
                                      upward include and on an unlisted file

A file may include the headers of its own layer and of the layers below.
A new file of policy/ goes into LAYERS (and DESIGN.md's list) before it
builds through this test.
"""
import os
import re
import shutil
import sys
import tempfile

# (layer, its files), bottom first: the order DESIGN.md gives, one a line.
LAYERS = [
    ("path", ["path.h", "path.c"]),
    ("api", ["policy.h", "decision_log.h", "history.h"]),
    ("ext", ["ext.h", "ext.c"]),
    ("schema", ["schema.h", "schema.c"]),
    ("json_out", ["json_out.h", "json_out.c"]),
    ("model", ["policy-private.h"]),
    ("lexer", ["lexer.h", "lexer.c"]),
    ("message", ["message.h", "message.c"]),
    ("decision", ["decision.h", "decision.c"]),
    ("beneath", ["beneath.c"]),
    ("events", ["events.h", "events.c"]),
    ("history_store", ["history_store.h", "history_store.c"]),
    ("temporal_parse", ["temporal.h", "temporal_parse.c"]),
    ("parser", ["parser.h", "parser.c"]),
    ("typecheck", ["typecheck.h", "typecheck.c"]),
    ("inert", ["inert.h", "inert.c"]),
    ("temporal_eval", ["temporal_eval.h", "temporal_eval.c"]),
    ("temporal_check", ["temporal_check.h", "temporal_check.c"]),
    ("validate", ["validate.h", "validate.c"]),
    ("history", ["history_hooks.h", "history.c"]),
    ("eval", ["eval.c"]),
    ("decision_log", ["decision_log-private.h", "decision_log.c"]),
    ("load", ["load.c"]),
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"policy/([^"]+)"', re.M)


def check(policy_dir):
    """The breaches found in policy_dir, as lines to print."""
    level = {}
    for i, (_, files) in enumerate(LAYERS):
        for f in files:
            level[f] = i
    problems = []
    for name in sorted(os.listdir(policy_dir)):
        if not name.endswith((".c", ".h")):
            continue
        if name not in level:
            problems.append(f"{name}: in no layer (add it to policy/layers.py and DESIGN.md)")
            continue
        with open(os.path.join(policy_dir, name), encoding="utf-8") as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            if inc not in level:
                problems.append(f"{name}: includes policy/{inc}, which is in no layer")
            elif level[inc] > level[name]:
                problems.append(f"{name} (layer {LAYERS[level[name]][0]}) includes policy/{inc}, "
                                f"of the layer above it {LAYERS[level[inc]][0]}")
    return problems


def self_test(policy_dir):
    """The check must fail on an upward include and on an unlisted file."""
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "policy")
        shutil.copytree(policy_dir, copy)
        if check(copy):
            print("self-test: the tree itself fails the check")
            return False
        with open(os.path.join(copy, "lexer.c"), "a", encoding="utf-8") as f:
            f.write('\n#include "policy/eval.h"\n')
        if not any("lexer.c" in p and "eval.h" in p for p in check(copy)):
            print("self-test: an upward include (lexer.c -> eval.h) was not caught")
            ok = False
        os.remove(os.path.join(copy, "lexer.c"))
        with open(os.path.join(copy, "stray.c"), "w", encoding="utf-8") as f:
            f.write('#include "policy/path.h"\n')
        if not any(p.startswith("stray.c") for p in check(copy)):
            print("self-test: a file in no layer was not caught")
            ok = False
    return ok


def main(argv):
    if len(argv) == 3 and argv[1] == "--self-test":
        ok = self_test(argv[2])
        print("self-test: " + ("the check fails where it must" if ok else "FAILED"))
        return 0 if ok else 1
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems = check(argv[1])
    for p in problems:
        print(p)
    print(f"{len(LAYERS)} layers, {'no upward include' if not problems else f'{len(problems)} breaches'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
