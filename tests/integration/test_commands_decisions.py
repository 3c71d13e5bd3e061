"""The decisions the Shell's file commands raise, read from the
decision log of a real box (spec/policy.md §4.1)."""
import os
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


def run(box, text, decisions_of=fs_decisions):
    """The alias's result for text, and the decisions it raised (decisions_of picks them)."""
    n = len(box.decisions())
    r = box.bash(text, cwd=box.workspace)
    return r, decisions_of(box, n)


def test_file_command_decisions(box):
    box.start_seeded(extra="""
        permit(principal, action in [Box::Action::"fs:move", Box::Action::"fs:delete"], resource)
        when { context.input.path like "~/src/project/*" };
        """)
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


def make_listing_tree(ws, tail):
    """d/ with x, y, z (each its name and tail on one line) and t/ with
    f0.txt..f9.txt: what the ls, find and xargs cases list."""
    (ws / "d").mkdir()
    for name in ("x", "y", "z"):
        (ws / "d" / name).write_text(name + tail + "\n")
    (ws / "t").mkdir()
    for i in range(10):
        (ws / "t" / f"f{i}.txt").write_text(f"{i}\n")


def test_ls_find_xargs_decisions(box):
    box.start_seeded(extra="""
        permit(principal, action in [Box::Action::"fs:move", Box::Action::"fs:delete"], resource)
        when { context.input.path like "~/src/project/*" };
        """)
    ws = box.workspace
    make_listing_tree(ws, "")

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


OPS = {
    "fs:read": ["read_content", "read_metadata", "enumerate", "read_link", "change_dir", "exec"],
    "fs:write": ["write_content", "create_dir", "set_permissions", "symlink"],
    "fs:delete": ["remove_file", "remove_dir"],
    "fs:move": ["rename"],
}
ENUM = {"fs:read": "FsReadOperation", "fs:write": "FsWriteOperation",
        "fs:delete": "FsDeleteOperation", "fs:move": "FsMoveOperation"}


def per_operation_policy(box, extra=""):
    """One permit per fs operation, each with the operation as its @id, so
    the log's rule attribute says which operation each decision was."""
    rules = [extra, f"""
        permit(principal, action == Box::Action::"shell:exec", resource)
        when {{ context.input.cwd == "{box.workspace}" || context.input.cwd like "{box.workspace}/*" }};
        """]
    for action, ops in OPS.items():
        for op in ops:
            rules.append(f"""
        @id("{op}")
        permit(principal, action == Box::Action::"{action}", resource)
        when {{ context.input.operation == Box::{ENUM[action]}::"{op}" &&
               (context.input.path == "~/src/project" || context.input.path like "~/src/project/*") }};
        """)
    box.write_policy("".join(rules))


def op_decisions(box, since):
    """(verdict, operation, path relative to the project) of the project's fs decisions."""
    out = []
    for d in box.decisions()[since:]:
        if not d["strands.box.policy.action"].startswith("fs:"):
            continue
        res = d["strands.box.policy.resource"]
        if res != "~/src/project" and not res.startswith("~/src/project/"):
            continue
        out.append((d["strands.box.policy.verdict"], d.get("strands.box.policy.rule"),
                    res[len("~/src/project/"):] if res != "~/src/project" else "."))
    return out


def run_ops(box, text):
    return run(box, text, op_decisions)


def test_decisions_by_operation(box):
    """The operation of each decision (spec/policy.md §4.1), read from the log."""
    per_operation_policy(box)
    box.write_config()
    box.start()
    ws = box.workspace
    (ws / "a.txt").write_text("hello a\n")
    make_listing_tree(ws, " hello")

    def ops(d):
        assert all(v == "permit" for v, _, _ in d), d
        return [(op, p) for _, op, p in d]

    # ls -l of a directory of 3 files: the operand's metadata, 1 enumerate,
    # then 3 read_metadata, one per file
    r, d = run_ops(box, "ls -l d")
    assert r.returncode == 0, r.stderr
    print("ls -l", d)
    o = ops(d)
    assert o.count(("enumerate", "d")) == 1
    assert sorted(p for op, p in o if op == "read_metadata" and p != "d") == ["d/x", "d/y", "d/z"]
    assert {op for op, _ in o} <= {"enumerate", "read_metadata"}

    r, d = run_ops(box, "cp a.txt b.txt")
    assert r.returncode == 0, r.stderr
    print("cp", d)
    assert ops(d) == [("read_content", "a.txt"), ("write_content", "b.txt")]

    # mv: the rename legs of §4.1: fs:move src, fs:read src, fs:move dst
    r, d = run_ops(box, "mv b.txt c.txt")
    assert r.returncode == 0, r.stderr
    print("mv", d)
    assert ops(d) == [("rename", "b.txt"), ("read_content", "b.txt"), ("rename", "c.txt")]
    # onto an existing file: the fs:delete leg of the destination as well
    (ws / "e.txt").write_text("e\n")
    r, d = run_ops(box, "mv c.txt e.txt")
    assert r.returncode == 0, r.stderr
    print("mv onto", d)
    assert ops(d) == [("rename", "c.txt"), ("read_content", "c.txt"), ("remove_file", "e.txt"), ("rename", "e.txt")]

    r, d = run_ops(box, "grep -r hello d")
    assert r.returncode == 0, r.stderr
    print("grep -r", d)
    o = ops(d)
    assert o.count(("enumerate", "d")) == 1
    assert sorted(p for op, p in o if op == "read_content") == ["d/x", "d/y", "d/z"]
    assert {op for op, _ in o} <= {"enumerate", "read_content", "read_metadata"}

    r, d = run_ops(box, "sed -i s/hello/bye/ a.txt")
    assert r.returncode == 0, r.stderr
    assert (ws / "a.txt").read_text() == "bye a\n"
    print("sed -i", d)
    assert ops(d) == [("read_content", "a.txt"), ("write_content", "a.txt")]

    r, d = run_ops(box, "find t -name 'f[0-4].txt' -delete")
    assert r.returncode == 0, r.stderr
    print("find -delete", d)
    o = ops(d)
    assert sorted(p for op, p in o if op == "remove_file") == [f"t/f{i}.txt" for i in range(5)]
    assert o.count(("enumerate", "t")) == 1
    assert {op for op, _ in o} <= {"enumerate", "read_metadata", "remove_file"}

    # the commands added last: stat, du, diff
    r, d = run_ops(box, "stat -c %s a.txt")
    assert r.stdout == "6\n", r.stderr
    assert ops(d) == [("read_metadata", "a.txt")]

    r, d = run_ops(box, "du -a d")
    assert r.returncode == 0, r.stderr
    print("du -a", d)
    o = ops(d)
    assert o.count(("enumerate", "d")) == 1
    assert sorted(p for op, p in o if op == "read_metadata") == ["d", "d/x", "d/y", "d/z"]

    r, d = run_ops(box, "diff d/x d/y")
    assert r.returncode == 1 and r.stdout == "1c1\n< x hello\n---\n> y hello\n", r.stderr
    print("diff", d)
    assert sorted(ops(d)) == [("read_content", "d/x"), ("read_content", "d/y"),
                              ("read_metadata", "d/x"), ("read_metadata", "d/y")]

    r, d = run_ops(box, "timeout 5 cat d/x")
    assert r.stdout == "x hello\n", r.stderr
    assert ops(d) == [("read_content", "d/x")]

    # a denial: the policy's text in place of "Permission denied"
    other = box.home / "other"
    other.mkdir(exist_ok=True)
    (other / "f").write_text("secret\n")
    for text, prefix in ((f"stat {other}/f", "stat: cannot statx"), (f"du {other}/f", "du: cannot access"),
                         (f"diff {other}/f a.txt", "diff: "), (f"timeout 5 cat {other}/f", "cat: ")):
        r = box.bash(text, cwd=ws)
        print(text, r.returncode, r.stderr)
        assert r.stderr.startswith(prefix) and "policy denied" in r.stderr and "Permission denied" not in r.stderr
        assert r.returncode != 0 and "secret" not in r.stdout


def test_fast_path_decisions(box):
    """The fast path (boxd opens regular files and passes the descriptors):
    the same decisions, the outcome descriptor_issued, and everything it
    must not judge itself left to the mount (symlinks, "..", floors, absent
    paths)."""
    # policy would let these be read: only the floor refuses them
    per_operation_policy(box, extra="""
        permit(principal, action == Box::Action::"fs:read", resource)
        when { context.input.path like "~/src/project/pol" || context.input.path like "*.toml" };
        """)
    box.write_config()
    box.start()
    ws = box.workspace
    (ws / "d").mkdir()
    for i in range(40):   # more than one batch
        (ws / "d" / f"f{i:02}").write_text(f"hello {i}\n")
    (ws / "target").write_text("the target\n")
    (ws / "lnk").symlink_to("target")

    r, d = run_ops(box, "grep -r hello d")
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.splitlines()) == sorted(f"d/f{i:02}:hello {i}" for i in range(40))
    reads = sorted(p for v, op, p in d if op == "read_content")
    assert reads == [f"d/f{i:02}" for i in range(40)], d
    # each permitted read raised its ::response with the descriptor handed out
    resp = [h for h in box.history() if h.get("a") == "fs:read" and h.get("k") == 1
            and h["i"].get("path", "").startswith("~/src/project/d/f")]
    assert len(resp) == 40 and {h["o"]["result"] for h in resp} == {"descriptor_issued"}, resp[:3]

    # through a symlink the mount decides, and policy sees the target
    r, d = run_ops(box, "cat lnk")
    assert r.stdout == "the target\n", r.stderr
    print("cat lnk", d)
    assert ("permit", "read_content", "target") in d and ("permit", "read_content", "lnk") not in d

    # ".." in the path: the mount's (the kernel resolves it)
    r, d = run_ops(box, "cat d/../target")
    assert r.stdout == "the target\n", r.stderr
    assert [op for _, op, p in d if p == "target"] == ["read_content"], d

    # a refused file and a refused absent file read the same, with the policy's text
    other = box.home / "other"
    other.mkdir(exist_ok=True)
    (other / "f").write_text("secret\n")
    r1 = box.bash(f"cat {other}/f", cwd=ws)
    r2 = box.bash(f"cat {other}/nope", cwd=ws)
    assert r1.returncode == r2.returncode == 1
    assert r1.stderr.replace("/f:", "/X:").replace("/f'", "/X'") == \
        r2.stderr.replace("/nope:", "/X:").replace("/nope'", "/X'"), (r1.stderr, r2.stderr)
    assert "policy denied" in r1.stderr and "secret" not in r1.stdout

    # the floors hold: a hard link to the policy file inside the workspace
    # is policy-readable, but never handed out (the mount records the floor)
    import os
    os.link(box.policy, ws / "pol")
    os.link(box.config, ws / "cfg.toml")
    for name in ("pol", "cfg.toml"):
        n = len(box.decisions())
        r = box.bash(f"cat {name}", cwd=ws)
        recs = box.decisions()[n:]
        print(name, r.returncode, r.stderr, [(x["strands.box.policy.resource"], x["strands.box.policy.rule"]) for x in recs])
        assert r.returncode == 1 and r.stdout == "", r.stdout
        assert any(x.get("strands.box.policy.rule") == "enforcement:reach-floor" for x in recs), recs

    # the fast path starts a relative path where open(2) would: from the
    # kernel's cwd, even after the directory was renamed under the Shell
    (ws / "cw").mkdir()
    (ws / "cw" / "f").write_text("old dir\n")
    r = box.bash("cd cw && mv ../cw ../cw2 && mkdir ../cw && echo decoy > ../cw/f && cat f && pwd", cwd=ws)
    assert r.stdout.splitlines()[0] == "old dir", (r.stdout, r.stderr)

    # files and directories interleaved: each file decided once, in order
    mixed = ws / "mixed"
    mixed.mkdir()
    for i in range(6):
        (mixed / f"f{i}").write_text("hello\n")
        (mixed / f"s{i}").mkdir()
        for j in range(3):
            (mixed / f"s{i}" / f"g{j}").write_text("hello\n")
    r, d = run_ops(box, "grep -rc hello mixed")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 24, r.stderr
    reads = [p for v, op, p in d if op == "read_content"]
    assert sorted(reads) == sorted(set(reads)) and len(reads) == 24, d
    assert [ln.split(":")[0] for ln in r.stdout.splitlines()] == reads   # decided in the order read


def test_timeout_stops_a_tool(box):
    """`timeout` over a program outside the Shell: the tool runs in its own
    sandbox, and still stops at the deadline (it dies with the Shell process
    that asked for it), while the command goes on."""
    box.start_with_tool("py", "/usr/bin/python3")
    ws = box.workspace
    import time
    t0 = time.monotonic()
    r = box.bash("timeout 0.5 /usr/bin/python3 -c 'import time; time.sleep(2.5); open(\"marker\", \"w\").write(\"late\")'; "
                 "echo $?; sleep 3.5; test -e marker && echo ran-on || echo stopped", cwd=ws)
    took = time.monotonic() - t0
    assert r.stdout.split() == ["124", "stopped"], (r.stdout, r.stderr)
    assert not (ws / "marker").exists() and took < 10
    # a tool that finishes in time: its status and output, as without timeout
    r = box.bash("timeout 5 /usr/bin/python3 -c 'print(\"hi\"); raise SystemExit(3)'; echo $?", cwd=ws)
    assert r.stdout.split() == ["hi", "3"], (r.stdout, r.stderr)


def test_grep_q_early_stop_decides_few_unread(box):
    """grep -q -r stops at its first match: the fast path's batches grow
    from one file, so it leaves at most as many files decided and unread as
    it read (before, a whole batch of 32 was decided after the first file).
    The history holds the same reads as the log, each before its answer."""
    per_operation_policy(box)
    box.write_config()
    box.start()
    ws = box.workspace
    (ws / "q").mkdir()
    for i in range(60):   # every file matches: grep -q reads one
        (ws / "q" / f"f{i:02}").write_text(f"hello {i}\n")
    r, d = run_ops(box, "grep -q -r hello q")
    assert r.returncode == 0, r.stderr
    first = [p for v, op, p in d if op == "read_content"]
    print("grep -q -r", first)
    assert 1 <= len(first) <= 2, first
    # and a full walk still decides each file once, in batches
    r, d = run_ops(box, "grep -rc hello q")
    reads = [p for v, op, p in d if op == "read_content"]
    assert r.returncode == 0 and sorted(reads) == sorted(set(reads)) and len(reads) == 60, d
    issued = [h for h in box.history() if h.get("a") == "fs:read" and h.get("k") == 1
              and h["i"].get("path", "").startswith("~/src/project/q/")]
    assert len(issued) == len(first) + 60 and {h["o"]["result"] for h in issued} == {"descriptor_issued"}, len(issued)


def test_fast_path_batches_keep_order(box):
    """Two directories of files, the second past the batches' growth (two
    full batches asked for ahead while one is read): the log, the history
    (each ::request followed by its ::response, which points back to it)
    and the answers come in the order the files were read, and a refusal
    inside a batch is the policy's."""
    per_operation_policy(box, extra="""
        @id("not-f027")
        forbid(principal, action == Box::Action::"fs:read", resource)
        when { context.input.path like "*/d/b/f027" };
        """)
    box.write_config()
    box.start()
    ws = box.workspace
    files = []
    for sub, count in (("a", 64), ("b", 200)):   # b's first batch: 32 files, waited for
        (ws / "d" / sub).mkdir(parents=True)
        for i in range(count):
            (ws / "d" / sub / f"f{i:03}").write_text(f"hello {i}\n")
            files.append(f"d/{sub}/f{i:03}")
    n_hist = len(box.history())
    r, d = run_ops(box, "grep -r hello d")
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith("grep: d/b/f027: policy denied") and "[policy: not-f027]" in r.stderr, r.stderr
    printed = [ln.split(":")[0] for ln in r.stdout.splitlines()]
    assert sorted(printed) == sorted(f for f in files if f != "d/b/f027")
    reads = [(v, p) for v, op, p in d if op in ("read_content", "not-f027")]
    assert len(reads) == len(files) and len({p for _, p in reads}) == len(files)
    assert [p for v, p in reads if v == "permit"] == printed           # decided in the order read
    assert [p for v, p in reads if v == "deny"] == ["d/b/f027"]
    # each directory's listing before its files (b's first files come with it)
    seq = [p for v, op, p in d if op in ("enumerate", "read_content", "not-f027")]
    for sub in ("a", "b"):
        at = seq.index(f"d/{sub}")
        mine = [k for k, p in enumerate(seq) if p.startswith(f"d/{sub}/")]
        assert mine == list(range(at + 1, at + 1 + len(mine))), (sub, at, mine[:3])
    recs = [h for h in box.history()[n_hist:] if h.get("a") == "fs:read" and h["i"].get("operation") == "read_content"]
    order = []
    for k, h in enumerate(recs):
        p = h["i"]["path"].split("/project/")[1]
        if h["k"] == 0:
            order.append(p)
            if p != "d/b/f027":   # a permit's outcome comes right after its request
                nxt = recs[k + 1]
                assert nxt["k"] == 1 and nxt["i"] == h["i"] and nxt["q"] == h["s"], (h, nxt)
                assert nxt["o"] == {"result": "descriptor_issued"}
    assert order == [p for _, p in reads]


def start_refusing_a_listing(box, rule, pattern):
    """The box started under per_operation_policy, refusing (as rule) to
    list the directories whose path is like pattern; its workspace."""
    per_operation_policy(box, extra=f"""
        @id("{rule}")
        forbid(principal, action == Box::Action::"fs:read", resource)
        when {{ context.input.path like "{pattern}" &&
               context.input.operation == Box::FsReadOperation::"enumerate" }};
        """)
    box.write_config()
    box.start()
    return box.workspace


def test_fast_path_listing(box):
    """boxd lists a directory for the Shell (one request instead of the
    mount's OPENDIR, READDIRs and RELEASEDIR): the same enumerate decision
    and outcome, every name as the directory holds it over several chunks,
    the policy's refusal, and a symlinked directory left to the mount."""
    ws = start_refusing_a_listing(box, "no-hidden", "*/hidden")
    big = ws / "big"
    big.mkdir()
    names = [f"entry-{i:05}-{'x' * 40}" for i in range(3000)]   # ~200 KB of records
    names += ["with space", "new\nline", "-dash", "caf\u00e9"]
    for n in names:
        (big / n).write_text("")
    os_names = set(os.listdir(big)) | {os.fsdecode(b"bad\xffname")}
    with open(os.path.join(os.fsencode(big), b"bad\xffname"), "w"):
        pass
    n0 = len(box.history())
    import subprocess
    r = subprocess.run([str(box.box_dir / "bin" / "bash"), "-c", "find big -mindepth 1 -print0"],
                       capture_output=True, cwd=str(ws), env=box.env(), timeout=60)
    assert r.returncode == 0, r.stderr
    assert {os.fsdecode(p)[len("big/"):] for p in r.stdout.split(b"\0") if p} == os_names
    r, d = run_ops(box, "ls big | wc -l")
    assert r.stdout.split() == [str(len(os_names) + 1)], r.stdout   # the newline name is two lines
    assert d == [("permit", "read_metadata", "big"), ("permit", "enumerate", "big")], d
    recs = [h for h in box.history()[n0:] if h.get("a") == "fs:read" and h["i"].get("operation") == "enumerate"]
    last = recs[-2:]
    assert [h["k"] for h in last] == [0, 1] and last[1]["o"] == {"result": "descriptor_issued"}
    assert last[1]["q"] == last[0]["s"]

    (ws / "hidden").mkdir()
    (ws / "hidden" / "f").write_text("x")
    r, d = run_ops(box, "ls hidden")
    assert r.returncode == 2 and r.stdout == "", r.stdout
    assert r.stderr.startswith("ls: cannot open directory 'hidden': policy denied"), r.stderr
    assert d == [("permit", "read_metadata", "hidden"), ("deny", "no-hidden", "hidden")], d

    # through a symlink: the mount's, which decides the target
    (ws / "real").mkdir()
    (ws / "real" / "inside").write_text("x")
    (ws / "via").symlink_to("real")
    r, d = run_ops(box, "ls via/")
    assert r.stdout == "inside\n", r.stderr
    assert ("permit", "enumerate", "real") in d and ("permit", "enumerate", "via") not in d, d


def test_find_lists_each_directory_once_in_walk_order(box):
    """find lists every directory once, in its walk's order (names sorted,
    depth first), with the listing's decision and refusal where the walk
    reaches it, whatever the expression: the output is the walk's."""
    ws = start_refusing_a_listing(box, "no-b", "*/t/b")
    layout = ["t/a/x/deep/1.c", "t/a/x/2.h", "t/a/3.c", "t/a/y/4.c", "t/a0.c", "t/b/5.c",
              "t/b1.txt", "t/c/6.c", "t/c/z/7.c", "t/d/8.c", "t/e.c"]
    for p in layout:
        (ws / p).parent.mkdir(parents=True, exist_ok=True)
        (ws / p).write_text("x\n")
    (ws / "t" / "empty").mkdir()
    (ws / "t" / "link").symlink_to("a")
    walk = []   # (path, is_dir) in the box's order: names sorted, depth first
    def visit(p):
        walk.append(p)
        full = ws / p
        if full.is_dir() and not full.is_symlink() and p != "t/b":
            for n in sorted(os.listdir(full)):
                visit(f"{p}/{n}")
    visit("t")
    dirs = [p for p in walk if (ws / p).is_dir() and not (ws / p).is_symlink()]
    for text, printed in (("find t -name '*.c'", [p for p in walk if p.endswith(".c")]),
                          ("find t", walk),
                          ("find t -type d -print", dirs),
                          ("find t -size -2k", None)):
        r, d = run_ops(box, text)
        assert r.returncode == 1, (text, r.stderr)
        assert r.stderr.startswith("find: t/b: policy denied"), (text, r.stderr)
        if printed is not None:
            assert r.stdout.splitlines() == printed, (text, r.stdout)
        listed = [(v, p) for v, op, p in d if op in ("enumerate", "no-b")]
        assert [p for _, p in listed] == dirs, (text, listed)
        assert [p for v, p in listed if v == "deny"] == ["t/b"], (text, listed)
