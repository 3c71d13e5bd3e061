"""Issue 5: the decisions the Shell's file commands raise, read from the
decision log of a real box (spec/policy.md §4.1)."""
from pathlib import Path


def fs_decisions(box, since):
    """(verdict, action, resource, operation) of the fs decisions after index since."""
    out = []
    for d in box.decisions()[since:]:
        if not d["strands.box.policy.action"].startswith("fs:"):
            continue
        op = next((v for k, v in d.items() if k.endswith(".operation")), None)
        out.append((d["strands.box.policy.verdict"], d["strands.box.policy.action"],
                    d["strands.box.policy.resource"], op))
    return out


def run(box, text):
    n = len(box.decisions())
    r = box.bash(text, cwd=box.workspace)
    return r, fs_decisions(box, n)


def test_file_command_decisions(box):
    box.seed_policy(extra="""
        permit(principal, action in [Box::Action::"fs:move", Box::Action::"fs:delete"], resource)
        when { context.input.path like "~/src/project/*" };
        """)
    box.write_config()
    box.start()
    ws = box.workspace
    (ws / "a.txt").write_text("hello a\n")
    (ws / "d").mkdir()
    for name in ("x", "y", "z"):
        (ws / "d" / name).write_text(name + " hello\n")

    r, d = run(box, "cp a.txt b.txt")
    assert r.returncode == 0, r.stderr
    assert (ws / "b.txt").read_text() == "hello a\n"
    print("cp", d)
    assert [x[1] for x in d] == ["fs:read", "fs:write"]
    assert d[0][2].endswith("/a.txt") and d[1][2].endswith("/b.txt")

    r, d = run(box, "mv b.txt c.txt")
    assert r.returncode == 0, r.stderr
    assert not (ws / "b.txt").exists() and (ws / "c.txt").exists()
    print("mv", d)
    assert {x[1] for x in d} <= {"fs:read", "fs:move"} and "fs:move" in {x[1] for x in d}

    r, d = run(box, "grep -r hello d")
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.splitlines()) == ["d/x:x hello", "d/y:y hello", "d/z:z hello"]
    print("grep -r", d)
    assert len(d) == 4 and all(x[1] == "fs:read" for x in d)

    r, d = run(box, "sed -i s/hello/bye/ a.txt")
    assert r.returncode == 0, r.stderr
    assert (ws / "a.txt").read_text() == "bye a\n"
    print("sed -i", d)
    assert [x[1] for x in d] == ["fs:read", "fs:write"]

    r, d = run(box, "rm c.txt")
    assert r.returncode == 0, r.stderr
    print("rm", d)
    assert [x[1] for x in d] == ["fs:delete"]


def exec_decisions(box, since):
    return [d for d in box.decisions()[since:]
            if d["strands.box.policy.action"] in ("shell:exec", "shell:spawn")]


def test_ls_find_xargs_decisions(box):
    box.seed_policy(extra="""
        permit(principal, action in [Box::Action::"fs:move", Box::Action::"fs:delete"], resource)
        when { context.input.path like "~/src/project/*" };
        """)
    box.write_config()
    box.start()
    ws = box.workspace
    (ws / "d").mkdir()
    for name in ("x", "y", "z"):
        (ws / "d" / name).write_text(name + "\n")
    (ws / "t").mkdir()
    for i in range(10):
        (ws / "t" / f"f{i}.txt").write_text(f"{i}\n")

    r, d = run(box, "ls -l d")
    assert r.returncode == 0, r.stderr
    assert [ln.split()[-1] for ln in r.stdout.splitlines()[1:]] == ["x", "y", "z"]
    print("ls -l", d)
    # the log carries no operation field yet: count by resource.  The
    # operand: its read_metadata + the enumerate; then one read_metadata each.
    ws_d = [x for x in d if x[2].startswith("~/src/project/")]
    assert sorted(x[2].rsplit("/", 1)[1] for x in ws_d) == ["d", "d", "x", "y", "z"], d
    assert all(x[0] == "permit" and x[1] == "fs:read" for x in ws_d)

    r, d = run(box, "ls d")
    assert r.stdout == "x\ny\nz\n"
    ws_d = [x for x in d if x[2].startswith("~/src/project/")]
    assert [x[2].rsplit("/", 1)[1] for x in ws_d] == ["d", "d"], d   # no stat per entry

    n = len(box.decisions())
    r = box.bash("find t -name '*.txt' -exec cat {} \\;", cwd=ws)
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.split()) == [str(i) for i in range(10)]
    ex = exec_decisions(box, n)
    print("find -exec", [x["strands.box.policy.action"] for x in ex])
    assert len(ex) == 11   # find itself + one cat per file

    n = len(box.decisions())
    r = box.bash("printf 'd/x\\nd/y\\n' | xargs -n1 cat", cwd=ws)
    assert r.stdout == "x\ny\n", r.stderr
    assert len(exec_decisions(box, n)) == 4   # printf, xargs, cat, cat

    r, d = run(box, "find t -name 'f[0-4].txt' -delete")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (ws / "t").iterdir()) == [f"f{i}.txt" for i in range(5, 10)]
    print("find -delete", d)
    assert [x[1] for x in d].count("fs:delete") == 5
