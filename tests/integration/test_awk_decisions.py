"""awk in a real box (issue 31): each file it reads or writes is a
decision on the mount, a refused file is refused with the policy's text,
and each command it runs (print | cmd, cmd | getline, system) raises its
own shell:exec decision, as `eval` would."""
from test_commands_decisions import exec_decisions, run


def test_awk_file_decisions(box):
    box.start_seeded()
    ws = box.workspace
    (ws / "a.txt").write_text("x 1\ny 2\n")

    r, d = run(box, "awk '{ s += $2 } END { print s }' a.txt")
    assert r.returncode == 0 and r.stdout == "3\n", r.stderr
    print("awk read", d)
    assert [x[1] for x in d if x[2].endswith("/a.txt")] == ["fs:read"]

    r, d = run(box, "awk '{ print $1 > \"out.txt\" }' a.txt")
    assert r.returncode == 0, r.stderr
    assert (ws / "out.txt").read_text() == "x\ny\n"
    print("awk print >", d)
    mine = [(x[1], x[2].rsplit("/", 1)[1]) for x in d if x[2].startswith("~/src/project/")]
    assert ("fs:read", "a.txt") in mine and ("fs:write", "out.txt") in mine, mine
    # one open of the file for the whole run, not one per print
    assert mine.count(("fs:write", "out.txt")) == 1, mine

    r, d = run(box, "awk 'BEGIN { while ((getline l < \"a.txt\") > 0) n++; print n }'")
    assert r.stdout == "2\n", r.stderr
    assert [x[1] for x in d if x[2].endswith("/a.txt")] == ["fs:read"], d


def test_awk_refused_file(box):
    box.start_seeded()
    other = box.home / "other"
    other.mkdir(exist_ok=True)
    (other / "f").write_text("secret\n")
    r, d = run(box, f"awk '{{ print }}' {other}/f")
    print("awk refused", r.returncode, r.stderr, d)
    assert r.returncode == 2
    assert "secret" not in r.stdout
    # gawk's fatal error: the run stops at the operand it cannot open
    assert r.stderr.startswith("awk: fatal: cannot open file") and "policy denied" in r.stderr, r.stderr
    # the mount refuses the way to the file (~/other) or the file itself
    assert any(x[0] == "deny" and x[2].startswith("~/other") for x in d), d

    # writing outside the roots: refused, the message and status of a failed redirection
    r, d = run(box, f"awk 'BEGIN {{ print \"x\" > \"{other}/g\" }}'")
    print("awk refused write", r.returncode, r.stderr, d)
    assert r.returncode == 2 and "policy denied" in r.stderr, r.stderr
    assert not (other / "g").exists()
    assert any(x[0] == "deny" and x[2].startswith("~/other") for x in d), d


def test_awk_commands_are_decisions(box):
    box.start_seeded()
    ws = box.workspace
    (ws / "a.txt").write_text("b\na\n")
    n = len(box.decisions())
    r = box.bash("awk '{ print | \"sort\" } END { close(\"sort\"); system(\"echo done\"); "
                 "\"echo piped\" | getline x; print x }' a.txt", cwd=ws)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "a\nb\ndone\npiped\n", r.stdout
    ex = exec_decisions(box, n)
    names = [x["strands.box.policy.action"] for x in ex]
    print("awk commands", names, [x["strands.box.policy.resource"] for x in ex])
    # awk itself, sort, echo (system), echo (getline)
    assert len(ex) == 4, [x["strands.box.policy.resource"] for x in ex]
