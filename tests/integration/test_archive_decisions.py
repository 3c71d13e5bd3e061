"""tar in a real box (issue 31): each member it writes is a decision of
its own on the mount, and an archive cannot write outside the roots, by a
`..` member, an absolute one, or a symlink it plants and then writes
through."""
import io
import subprocess
import tarfile
import time
import zipfile

from test_commands_decisions import run


def make_tgz(path, members):
    """members: (name, data bytes) for files, (name, "->target") for symlinks."""
    with tarfile.open(path, "w:gz") as t:
        for name, data in members:
            i = tarfile.TarInfo(name)
            i.mtime = 1700000000
            if isinstance(data, str):
                i.type = tarfile.SYMTYPE
                i.linkname = data[2:]
                t.addfile(i)
            else:
                i.size = len(data)
                t.addfile(i, io.BytesIO(data))


def test_tar_extract_one_decision_per_member(box):
    box.start_seeded()
    ws = box.workspace
    make_tgz(ws / "a.tgz", [(f"m{i:03}.txt", b"%d\n" % i) for i in range(100)])
    (ws / "out").mkdir()
    r, d = run(box, "tar -xzf a.tgz -C out")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (ws / "out").iterdir()) == [f"m{i:03}.txt" for i in range(100)]
    assert (ws / "out" / "m042.txt").read_text() == "42\n"
    print("tar -xzf", len(d), d[:3])
    reads = [x for x in d if x[2].endswith("/a.tgz")]
    assert [x[1] for x in reads] == ["fs:read"], reads
    writes = [x for x in d if "/out/m" in x[2]]
    # one decision a member, each permitted, each its own path
    assert len(writes) == 100 and all(x[:2] == ("permit", "fs:write") for x in writes), writes[:5]
    assert len({x[2] for x in writes}) == 100
    assert len(d) == 101, [x for x in d if x not in writes and x not in reads]


def test_tar_members_cannot_escape(box):
    # the placeholder of a symlink made last is deleted to make it
    box.start_seeded(extra="""
        permit(principal, action == Box::Action::"fs:delete", resource)
        when { context.input.path like "~/src/project/*" };
        """)
    ws = box.workspace
    outside = box.home / "other"
    outside.mkdir(exist_ok=True)
    (ws / "out").mkdir()
    make_tgz(ws / "evil.tgz", [
        ("../../../other/dotdot", b"x\n"),
        (f"{outside}/abs", b"x\n"),
        ("esc", f"->{outside}"),
        ("esc/through", b"x\n"),
        ("ok", b"fine\n"),
    ])
    r, d = run(box, "tar -xzf evil.tgz -C out")
    print("evil", r.returncode, r.stderr, d)
    assert r.returncode == 2
    assert "tar: ../../../other/dotdot: Member name contains '..'" in r.stderr
    assert "tar: esc/through: Cannot open: Not a directory" in r.stderr
    assert not (outside / "dotdot").exists() and not (outside / "through").exists()
    assert not (outside / "abs").exists()
    # the absolute member lands under out/; the symlink, made last, points
    # out of the roots, and the mount refuses it
    assert (ws / "out" / str(outside).lstrip("/") / "abs").read_text() == "x\n"
    assert f"tar: esc: Cannot create symlink to '{outside}': policy denied" in r.stderr
    assert not (ws / "out" / "esc").exists() and not (ws / "out" / "esc").is_symlink()
    assert (ws / "out" / "ok").read_text() == "fine\n"
    assert ("deny", "fs:write", "~/other", None) in d
    assert not any(x[2].startswith("~/other") and x[0] == "permit" for x in d), d

    # a symlink already in the tree: the member replaces it, never writes through it
    (ws / "out2").mkdir()
    (ws / "out2" / "ok").symlink_to(outside / "target")
    (outside / "target").write_text("keep\n")
    r, d = run(box, "tar -xzf evil.tgz -C out2 ok")
    assert r.returncode == 0, r.stderr
    assert (outside / "target").read_text() == "keep\n"
    assert (ws / "out2" / "ok").read_text() == "fine\n" and not (ws / "out2" / "ok").is_symlink()

    # and the mount decides where a write really lands: through a link the
    # archive did not make, outside the roots, it is refused
    (ws / "out3").mkdir()
    (ws / "out3" / "dir").symlink_to(outside)
    make_tgz(ws / "via.tgz", [("dir/planted", b"x\n")])
    r, d = run(box, "tar -xzf via.tgz -C out3")
    print("via link", r.returncode, r.stderr, d)
    assert r.returncode == 2 and "dir/planted: Cannot open" in r.stderr, r.stderr
    assert not (outside / "planted").exists()
    assert any(x[0] == "deny" and x[2].startswith("~/other") for x in d), d


def test_tar_extract_restores_mtimes(box):
    """-x gives each file its member's modification time, as GNU tar does,
    still one decision a member: the time is set on the descriptor that
    wrote the file.  Times of a file not open for writing are decided."""
    box.start_seeded()
    ws = box.workspace
    with tarfile.open(ws / "t.tgz", "w:gz") as t:
        for i in range(20):
            info = tarfile.TarInfo(f"m{i:02}.txt")
            info.mtime = 1600000000 + i * 86407
            data = b"%d\n" % i
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    gnu = box.home / "gnu-mtimes"
    gnu.mkdir()
    subprocess.run(["tar", "-xzf", str(ws / "t.tgz"), "-C", str(gnu)], check=True)
    want = {p.name: p.stat().st_mtime_ns for p in gnu.iterdir()}
    assert len(set(want.values())) == 20, want

    (ws / "out").mkdir()
    r, d = run(box, "tar -xzf t.tgz -C out")
    assert r.returncode == 0, r.stderr
    got = {p.name: p.stat().st_mtime_ns for p in (ws / "out").iterdir()}
    assert got == want
    writes = [x for x in d if "/out/m" in x[2]]
    assert len(writes) == 20 and len({x[2] for x in writes}) == 20, writes
    assert len(d) == 21, d

    # -m (--touch) leaves the extraction's own time
    (ws / "touched").mkdir()
    r, d = run(box, "tar -xmzf t.tgz -C touched m05.txt")
    assert r.returncode == 0, r.stderr
    assert (ws / "touched" / "m05.txt").stat().st_mtime > time.time() - 3600

    # a time set on a file the command did not open is its own decision
    r, d = run(box, "touch -c -d @1500000000 out/m03.txt")
    assert r.returncode == 0, r.stderr
    assert (ws / "out" / "m03.txt").stat().st_mtime == 1500000000
    assert [x[:2] for x in d if x[2].endswith("/out/m03.txt")] == [("permit", "fs:write")], d


def test_archive_escapes_named_in_the_issue(box):
    """A member named ../../etc/x and a symlink to /etc followed by a member
    under it: tar refuses the name, unzip drops the "../" as Info-ZIP does;
    neither writes outside the workspace, and the mount refuses the link."""
    box.start_seeded(extra="""
        permit(principal, action == Box::Action::"fs:delete", resource)
        when { context.input.path like "~/src/project/*" };
        """)
    ws = box.workspace
    make_tgz(ws / "e.tgz", [("../../etc/x", b"x\n"), ("lk", "->/etc"), ("lk/y", b"y\n"), ("ok", b"ok\n")])
    with zipfile.ZipFile(ws / "e.zip", "w") as z:
        z.writestr("../../etc/x", "x\n")
        link = zipfile.ZipInfo("lk")
        link.external_attr = 0o120777 << 16
        z.writestr(link, "/etc")
        z.writestr("lk/y", "y\n")
        z.writestr("ok", "ok\n")
    (ws / "t").mkdir()
    r, d = run(box, "tar -xzf e.tgz -C t")
    print("tar", r.returncode, r.stderr, d)
    assert r.returncode == 2
    assert "tar: ../../etc/x: Member name contains '..'" in r.stderr
    assert "tar: lk: Cannot create symlink to '/etc': policy denied" in r.stderr
    assert (ws / "t" / "ok").read_text() == "ok\n"
    assert not (ws / "t" / "lk").is_symlink()
    assert ("deny", "fs:write", "/etc", None) in d
    assert not any(x[0] == "permit" and x[1] == "fs:write" and not x[2].startswith("~/src/project/")
                   for x in d), d

    r, d = run(box, "unzip -q e.zip -d z")
    print("unzip", r.returncode, r.stdout, r.stderr, d)
    assert (ws / "z" / "etc" / "x").read_text() == "x\n"
    assert (ws / "z" / "ok").read_text() == "ok\n"
    assert not (ws / "z" / "lk").is_symlink()
    assert "error:  cannot create symlink z/lk -> /etc\n        policy denied" in r.stdout
    assert ("deny", "fs:write", "/etc", None) in d
    assert r.returncode != 0
    assert not any(x[0] == "permit" and x[1] == "fs:write" and not x[2].startswith("~/src/project/")
                   for x in d), d
    writes = {x[2] for x in d if x[:2] == ("permit", "fs:write")}
    assert "~/src/project/z/etc/x" in writes and "~/src/project/z/ok" in writes, writes
