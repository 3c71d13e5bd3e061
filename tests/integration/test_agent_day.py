"""A day of an agent: one scripted session on a real Python project and a real
C project, run step by step through a box (the alias, the Shell, tools under
[tool.*] tables) and through GNU bash on a copy of the same tree. Every step's
stdout and exit status must be equal: the Shell and the programs it starts
have to behave as one system (pipes and here-documents into tools, /tmp
shared by the Shell and tools, timeouts reaching tools, background jobs,
lookups of programs)."""
import os
import shutil
import subprocess
import textwrap

import pytest

from conftest import ALLOW_ALL, Box, git

HOST_PATH = "/usr/bin:/bin"

FILES = {
    ".gitignore": "__pycache__/\n*.o\nc/app\nbuild/\n",
    "py/calc/__init__.py": "",
    "py/calc/ops.py": textwrap.dedent("""\
        def add(a, b):
            return a + b


        def mul(a, b):
            # TODO: overflow on huge ints is fine in Python
            return a * b
        """),
    "py/cli.py": textwrap.dedent("""\
        import sys

        sys.path.insert(0, __file__.rsplit("/", 1)[0] if "/" in __file__ else ".")
        from calc.ops import add, mul

        a, b = int(sys.argv[1]), int(sys.argv[2])
        print(add(a, b), mul(a, b))
        """),
    "py/tests/__init__.py": "",
    "py/tests/test_ops.py": textwrap.dedent("""\
        import sys, os
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
        from calc.ops import add, mul


        def test_add():
            assert add(2, 3) == 5


        def test_mul():
            assert mul(2, 3) == 6
        """),
    "py/tests/test_unit.py": textwrap.dedent("""\
        import unittest
        import sys, os
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
        from calc.ops import add


        class AddTest(unittest.TestCase):
            def test_add(self):
                self.assertEqual(add(1, 1), 2)

            def test_add_neg(self):
                self.assertEqual(add(-1, 1), 0)
        """),
    "py/data.txt": "apple\nbanana\napple\ncherry\nbanana\napple\n",
    "c/util.h": "int sum(int a, int b);\n",
    "c/util.c": "#include \"util.h\"\n/* TODO: saturate */\nint sum(int a, int b) { return a + b; }\n",
    "c/main.c": textwrap.dedent("""\
        #include <stdio.h>
        #include <stdlib.h>
        #include "util.h"

        int main(int argc, char **argv)
        {
          int a, b;
          if (argc == 3) {
            a = atoi(argv[1]);
            b = atoi(argv[2]);
          } else if (scanf("%d %d", &a, &b) != 2) {
            return 2;
          }
          printf("%d\\n", sum(a, b));
          return 0;
        }
        """),
    "c/Makefile": textwrap.dedent("""\
        app: main.c util.c util.h
        \tcc -O0 -o app main.c util.c
        run: app
        \t./app 3 4
        run-stdin: app
        \t./app
        clean:
        \trm -f app
        """),
}

# Each step is one `bash -c` of the agent; state carries through the files only.
STEPS = [
    "ls",
    "head -3 py/calc/ops.py",
    "python3 -c 'print(6*7)'",
    "echo 'print(42)' | python3; echo $?",
    "python3 - <<'EOF'\nimport sys\nprint(sys.version_info[0] >= 3)\nEOF",
    "python3 -c 'import sys; print(sys.stdin.read().upper(), end=\"\")' <<< hello",
    "seq 1 5 | python3 -c 'import sys; print(sum(int(x) for x in sys.stdin))'",
    "printf 'b\\na\\nc\\n' | python3 -c 'import sys; print(\"\".join(sorted(sys.stdin)), end=\"\")' | head -2",
    "python3 -c 'import sys; [print(l.strip()[::-1]) for l in sys.stdin]' < py/data.txt",
    "echo '{\"a\": 1}' | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"a\"])'",
    "python3 -B -m pytest -q -p no:cacheprovider py/tests > /tmp/ad_pytest.out; echo $?; "
    "grep -o '[0-9]* passed' /tmp/ad_pytest.out; rm -f /tmp/ad_pytest.out",
    "cd py && python3 -B -m unittest -q tests.test_unit 2>&1 | tail -1",
    "python3 -c 'import sys; sys.exit(3)'; echo $?",
    "python3 -c 'import sys; print(\"err\", file=sys.stderr)' 2>&1 | tr a-z A-Z",
    "python3 py/cli.py 3 4 | awk '{print $1 * 2, $2}'",
    "x=$(python3 -c 'print(7)'); echo $((x * 6))",
    "echo x > /tmp/ad_a; python3 -c 'print(open(\"/tmp/ad_a\").read().strip())'; rm -f /tmp/ad_a",
    "python3 -c 'open(\"/tmp/ad_b\", \"w\").write(\"from-python\\n\")'; cat /tmp/ad_b; rm -f /tmp/ad_b",
    "timeout 1 python3 -c 'import time; time.sleep(5)'; echo $?",
    "python3 -c 'print(1)' & python3 -c 'print(1)' & wait; echo done",
    "sleep 0.1 & wait $!; echo $?",
    "git status --short",
    "sed -i 's/return a + b/return a + b  # add/' py/calc/ops.py && grep -n '# add' py/calc/ops.py",
    "git diff --stat | tail -1",
    "git diff py/calc/ops.py | python3 -c 'import sys; print(sum(1 for l in sys.stdin if l.startswith(\"+\")))'",
    "cat > py/calc/extra.py <<'EOF'\ndef triple(x):\n    return 3 * x\nEOF\n"
    "python3 -B -c 'import sys; sys.path.insert(0, \"py\"); from calc.extra import triple; print(triple(5))'",
    "git add -A py && git commit -qm 'py: extra' && git log --oneline | wc -l",
    "git log -1 --format=%s",
    "for f in py/calc/*.py; do python3 -m py_compile \"$f\" && echo \"ok $f\"; done",
    "git status --short | wc -l",
    "cd c && make -s && ls",
    "cd c && make -s run",
    "cd c && echo 5 6 | make -s run-stdin",
    "cc -fsyntax-only -x c - <<< 'int main(void) { return 0; }'; echo $?",
    "cd c && make -s clean && ls",
    "grep -rn TODO c py | sort",
    "find . -name '*.py' -not -path './.git/*' | sort",
    "wc -l py/calc/*.py | tail -1",
    "sort py/data.txt | uniq -c | sort -rn | head -3",
    "diff <(echo a) <(echo b); echo $?",
    "command -v make",
    "type -t git",
    "mkdir -p build && python3 -c 'print(\"gen\")' > build/out.txt && cat build/out.txt",
    "git stash -q && git stash list | wc -l && git stash pop -q && git status --short | wc -l",
    "python3 -c 'import os; print(os.getcwd().endswith(\"project\"))'",
    "jq -n '[1,2,3] | add'",
    "git log --oneline | wc -l",
]


def lay_out(workspace):
    for rel, text in FILES.items():
        p = workspace / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    git("config", "user.email", "agent@example.com", cwd=workspace)
    git("config", "user.name", "agent", cwd=workspace)
    git("add", "-A", cwd=workspace)
    git("commit", "-q", "-m", "projects", cwd=workspace)


class DayBox(Box):
    def env(self):
        return {"HOME": str(self.home), "PATH": HOST_PATH, "LANG": "C"}


@pytest.fixture
def day(tmp_path):
    b = DayBox(tmp_path / "box")
    lay_out(b.workspace)
    shutil.copytree(b.home, tmp_path / "bash-home", symlinks=True)
    b.write_policy(ALLOW_ALL)
    tools = "".join(f'\n[tool.{name}]\ncommand = ["{name}"]\nfilesystem.write = ["~/src/project"]\n'
                    for name in ("python3", "make", "cc"))
    b.write_config(extra=tools)
    b.start()
    yield b, tmp_path / "bash-home"
    b.teardown()


def test_a_day_of_an_agent_matches_bash(day):
    box, bash_home = day
    bash_ws = bash_home / "src" / "project"
    env = {"HOME": str(bash_home), "PATH": HOST_PATH, "LANG": "C"}
    diverged = []
    for i, step in enumerate(STEPS):
        want = subprocess.run(["/bin/bash", "-c", step], cwd=bash_ws, env=env,
                              capture_output=True, text=True, timeout=60)
        got = box.bash(step)
        if (got.stdout, got.returncode) != (want.stdout, want.returncode):
            diverged.append(f"step {i}: {step!r}\n  bash: {want.returncode} {want.stdout!r}\n"
                            f"  box:  {got.returncode} {got.stdout!r} stderr {got.stderr[-300:]!r}")
    assert len(STEPS) >= 40
    assert not diverged, "\n".join(diverged)
