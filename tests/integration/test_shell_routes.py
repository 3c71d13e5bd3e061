"""Every route that runs text raises its own decisions.
Command substitution, eval, `.`/source, `sh FILE`/`bash FILE` inside the
Shell and the EXIT trap each run their commands through the one decision
point, so each command they run appears in the decision log of a real box
(find -exec and xargs are tested with those commands)."""


def exec_decisions(box, since):
    """(verdict, action, argv) of the shell decisions after index since."""
    out = []
    for d in box.decisions()[since:]:
        action = d["strands.box.policy.action"]
        if not action.startswith("shell:"):
            continue
        argv = tuple(v["stringValue"] for v in d["process.command_args"]["values"])
        out.append((d["strands.box.policy.verdict"], action, argv))
    return out


PF = ("printf", "from-file\\n")


def run(box, text):
    n = len(box.decisions())
    r = box.bash(text, cwd=box.workspace)
    return r, exec_decisions(box, n)


def test_each_route_decides_its_commands(box):
    box.start_seeded()
    ws = box.workspace
    (ws / "lib.sh").write_text("printf 'from-file\\n'\n")

    r, d = run(box, 'echo "$(printf sub)"')
    assert (r.returncode, r.stdout) == (0, "sub\n"), r.stderr
    # echo's word came from an expansion: the log redacts it (runtime.md §8.2).
    assert [x[2] for x in d] == [("printf", "sub"), ("echo", "<redacted>")]

    r, d = run(box, "eval 'printf ev'")
    assert (r.returncode, r.stdout) == (0, "ev"), r.stderr
    assert [x[2] for x in d] == [("eval", "printf ev"), ("printf", "ev")]

    r, d = run(box, "source lib.sh; . ./lib.sh")
    assert (r.returncode, r.stdout) == (0, "from-file\n" * 2), r.stderr
    assert [x[2] for x in d] == [("source", "lib.sh"), PF, (".", "./lib.sh"), PF]

    r, d = run(box, "sh lib.sh; bash lib.sh")
    assert (r.returncode, r.stdout) == (0, "from-file\n" * 2), r.stderr
    assert [x[2] for x in d] == [("sh", "lib.sh"), PF, ("bash", "lib.sh"), PF]

    r, d = run(box, "trap 'printf bye' EXIT; true")
    assert (r.returncode, r.stdout) == (0, "bye"), r.stderr
    assert [x[2] for x in d] == [("trap", "printf bye", "EXIT"), ("true",), ("printf", "bye")]
    assert all(v == "permit" and a == "shell:exec" for v, a, _ in d)


def test_a_denied_route_is_refused_on_its_own(box):
    # printf may not run; the routes that would run it are refused at printf
    box.start_seeded(extra="""
        forbid(principal, action == Box::Action::"shell:exec", resource)
        when { context.input.program == "printf" };
        """)
    r, d = run(box, "x=$(printf a); echo \"[$x]\"; eval 'printf b'; echo $?")
    assert r.stdout == "[]\n126\n", r.stderr
    assert "effect denied" in r.stderr
    verdicts = [(v, c) for v, _, c in d]
    assert verdicts == [("deny", ("printf", "a")), ("permit", ("echo", "<redacted>")),
                        ("permit", ("eval", "printf b")), ("deny", ("printf", "b")),
                        ("permit", ("echo", "<redacted>"))]


def test_a_script_run_by_path_is_decided_then_each_of_its_commands(box):
    # `./run.sh` with a #! line naming a shell runs in the Shell: one
    # decision for the script as written, then one per command inside it.
    box.start_seeded()
    ws = box.workspace
    (ws / "run.sh").write_text("#!/bin/sh\nprintf 'from-file\\n'\nexit 4\n")
    (ws / "run.sh").chmod(0o755)
    r, d = run(box, "./run.sh")
    assert (r.returncode, r.stdout) == (4, "from-file\n"), r.stderr
    assert [x[2] for x in d] == [("./run.sh",), PF, ("exit", "4")]
    assert all(v == "permit" and a == "shell:exec" for v, a, _ in d)


def test_a_denied_script_runs_none_of_its_commands(box):
    box.start_seeded(extra="""
        forbid(principal, action == Box::Action::"shell:exec", resource)
        when { context.input.program == "./run.sh" };
        """)
    ws = box.workspace
    (ws / "run.sh").write_text("#!/bin/bash\nprintf 'from-file\\n'\n")
    (ws / "run.sh").chmod(0o755)
    r, d = run(box, "./run.sh; echo $?")
    assert r.stdout == "126\n", r.stderr
    assert "effect denied" in r.stderr
    assert [(v, c) for v, _, c in d] == [("deny", ("./run.sh",)), ("permit", ("echo", "<redacted>"))]


def test_decision_sees_the_whole_command_line(box):
    """The command line a decision carries is built on the stack when it is
    short and on the heap when not: both reach the policy whole."""
    box.start_seeded(extra="""
        forbid(principal, action == Box::Action::"shell:exec", resource)
        when { context.input.command like "echo * tail-marker" };
        """)
    for size in (10, 493, 494, 495, 496, 502, 503, 504, 505, 600, 5000):
        word = "x" * size
        r = box.bash(f"echo {word} ok", cwd=box.workspace)
        assert (r.returncode, r.stdout) == (0, f"{word} ok\n"), (size, r.stderr)
        r = box.bash(f"echo {word} tail-marker", cwd=box.workspace)
        assert r.returncode == 126 and r.stdout == "", (size, r.returncode, r.stdout)
        assert "effect denied" in r.stderr, (size, r.stderr)
