"""tar -x's fast path (issue 31): boxd decides and makes an extraction's
small files in batches and hands the descriptors back.  An extraction must
leave the same files, print the same messages and raise the same decisions,
in the same order, and the same history, as through the mount alone
(--box-slow-path)."""
import io
import json
import re
import tarfile

from test_archive_decisions import make_tgz


def raw_records(box):
    """The decision log's records: their attributes and their times."""
    path = box.box_dir / "private" / "telemetry" / "records.jsonl"
    out = []
    for line in path.read_text().splitlines():
        for rl in json.loads(line).get("resourceLogs", []):
            for sl in rl["scopeLogs"]:
                if sl["scope"]["name"] == "strands-box.policy":
                    out += sl["logRecords"]
    return out


def comparable(recs, here):
    """Records as they must be in both runs: no time, the output
    directory's name left out, each trace and span id by its first place."""
    ids = {}
    out = []
    for rec in recs:
        rec = {k: ids.setdefault(v, len(ids)) if k in ("traceId", "spanId") else v
               for k, v in rec.items() if "time" not in k.lower()}
        out.append(json.dumps(rec, sort_keys=True).replace(here, "OUT"))
    return out


def history_of(box, since, here):
    out = []
    for h in box.history()[since:]:
        if not h.get("a", "").startswith("fs:"):
            continue   # the command itself, its options differ
        h = {k: v for k, v in h.items() if k in ("a", "k", "i", "o", "p")}
        out.append(json.dumps(h, sort_keys=True).replace(here, "OUT"))
    return out


def extraction(box, out, slow):
    ws = box.workspace
    (ws / out).mkdir()
    (ws / out / "m010.txt").write_text("an older file\n")   # a member over an existing file
    n, h = len(raw_records(box)), len(box.history())
    r = box.bash(f"tar -xzf a.tgz -C {out}" + (" --box-slow-path" if slow else ""), cwd=ws)
    # the command's own record names its options: the rest must be alike
    recs = raw_records(box)[n:]
    assert "shell:exec" in json.dumps(recs[0]["attributes"])
    recs = recs[:1] + [x for x in recs[1:] if "shell:exec" not in json.dumps(x["attributes"])]
    files = {}
    for p in sorted((ws / out).rglob("*")):
        st = p.lstat()
        # a directory's time is when the extraction made its last name
        files[str(p.relative_to(ws / out))] = (
            st.st_mode, st.st_uid, *((st.st_mtime_ns, p.read_bytes()) if p.is_file() else ()))
    return r, recs, history_of(box, h, f"/{out}"), files


def test_tar_fast_path_matches_the_mount(box):
    box.start_seeded(extra="""
        forbid(principal, action == Box::Action::"fs:write", resource)
        when { context.input.path like "*/refused.txt" };
        permit(principal, action == Box::Action::"fs:delete", resource)
        when { context.input.path like "~/src/project/*" };
        """)
    ws = box.workspace
    members = [(f"m{i:03}.txt", b"%d\n" % i) for i in range(150)]
    members.insert(70, ("refused.txt", b"no\n"))              # refused, mid-archive
    with tarfile.open(ws / "a.tgz", "w:gz") as t:
        for name, data in members[:100]:
            i = tarfile.TarInfo(name)
            i.mtime, i.mode, i.size = 1700000000 + len(name), 0o640, len(data)
            t.addfile(i, io.BytesIO(data))
        d = tarfile.TarInfo("sub")                            # a directory member,
        d.type, d.mode, d.mtime = tarfile.DIRTYPE, 0o755, 1700000000
        t.addfile(d)
        for name, data in members[100:]:                     # then files in it
            i = tarfile.TarInfo("sub/" + name)
            i.mtime, i.size = 1700000001, len(data)
            t.addfile(i, io.BytesIO(data))
        i = tarfile.TarInfo("deep/er/f.txt")                  # parents made on the way
        i.size = 3
        t.addfile(i, io.BytesIO(b"df\n"))
    slow = extraction(box, "slow", True)
    fast = extraction(box, "fast", False)
    for r, *_ in (slow, fast):
        assert r.returncode == 2, r.stderr
    assert "tar: refused.txt: Cannot open: " in fast[0].stderr, fast[0].stderr
    assert fast[0].stderr.replace("fast", "OUT") == slow[0].stderr.replace("slow", "OUT")
    assert fast[0].stdout == slow[0].stdout == ""
    assert fast[3] == slow[3]
    assert fast[3]["m010.txt"][3] == b"10\n" and "refused.txt" not in fast[3]
    assert fast[3]["sub/m120.txt"][3] == b"120\n" and fast[3]["deep/er/f.txt"][3] == b"df\n"
    # the same decisions, in the same order, and the same history
    assert comparable(fast[1][1:], "/fast") == comparable(slow[1][1:], "/slow")
    # each record the command's, as through the mount
    assert comparable(fast[1], "/fast")[1:] == comparable(slow[1], "/slow")[1:]
    assert fast[2] == slow[2]
    def member_writes(recs, here):
        return [x for x in recs if re.search(here + r"/(sub/)?m\d+", json.dumps(x["attributes"]))
                and "fs:write" in json.dumps(x["attributes"])]
    writes = member_writes(fast[1], "/fast")
    assert len(writes) == 150
    # the batches were boxd's: a batch's records share its time, where
    # the mount gives each of its requests its own
    fast_times = {x["timeUnixNano"] for x in writes}
    slow_times = {x["timeUnixNano"] for x in member_writes(slow[1], "/slow")}
    assert len(fast_times) < 20 and len(slow_times) > 100, (len(fast_times), len(slow_times))
