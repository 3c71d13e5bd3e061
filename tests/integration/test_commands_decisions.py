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
