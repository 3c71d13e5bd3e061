"""box-shell's start: libcurl (about 30 shared libraries), libarchive (libxml2,
ICU, libstdc++, ...), libmagic, zlib and liblzma are not linked at load time;
`curl`, `tar`, `file`, gzip/zip/unzip and `xz` open them on first use.  In a box the zygote maps none of them
(each fork would copy its mappings); a worker's first use opens them
through directories the zygote kept open (see test_gateway.py for curl
inside a box)."""
import os
import subprocess

from conftest import BOX_SHELL, parent_of


def needed(path):
    out = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True,
                         check=True).stdout
    return [line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def test_box_shell_does_not_link_libcurl():
    libs = needed(BOX_SHELL)
    assert libs, "readelf found no NEEDED entries"
    assert not [lib for lib in libs if "curl" in lib or "ssl" in lib or "crypto" in lib], libs


# what a Shell start would load and bind with libarchive, libmagic, zlib and
# liblzma linked
LAZY = ("libarchive", "libmagic", "libxml2", "libicu", "libstdc++", "libnettle", "libzstd",
        "libz.so", "liblzma")


def test_box_shell_loads_no_archive_magic_or_compression_chain():
    out = subprocess.run(["ldd", str(BOX_SHELL)], capture_output=True, text=True,
                         check=True).stdout
    assert "libc.so" in out, out  # ldd did list what it loads
    assert not [lib for lib in LAZY if lib in out], out


def test_archive_commands_load_their_libraries_on_first_use(tmp_path):
    (tmp_path / "a.txt").write_text("hello\n")
    r = subprocess.run([str(BOX_SHELL), "-c", "tar -czf t.tgz a.txt && tar -tzf t.tgz && "
                        "gzip -c a.txt | zcat && xz -c a.txt | xz -dc && zip -q z.zip a.txt && "
                        "unzip -p z.zip && file -b a.txt t.tgz; echo status=$?"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=30)
    host = subprocess.run(["file", "-b", "a.txt", "t.tgz"], cwd=tmp_path, capture_output=True,
                          text=True, check=True).stdout
    assert r.stdout == "a.txt\nhello\nhello\nhello\n" + host + "status=0\n", (r.stdout, r.stderr)


def test_start_reads_no_proc_maps():
    # the main thread's stack is found without /proc/self/maps (a tenth of a
    # Shell start's instructions in pthread_getattr_np's sscanf)
    r = subprocess.run(["strace", "-f", "-e", "trace=open,openat", str(BOX_SHELL), "-c",
                        "f() { eval f; }; f"], capture_output=True, text=True, timeout=60)
    assert "maximum recursion depth exceeded" in r.stderr, r.stderr[-2000:]
    assert "/proc/self/maps" not in r.stderr, r.stderr


def test_curl_loads_libcurl_on_first_use():
    # `curl` opens libcurl before anything else (status 2, "failed to
    # initialize" when it cannot); with no gateway configured it then stops
    # at the gateway check
    r = subprocess.run([str(BOX_SHELL), "-c", "curl -sS http://127.0.0.1:1/; echo status=$?"],
                       capture_output=True, text=True, timeout=30)
    assert "status=7" in r.stdout, (r.stdout, r.stderr)
    assert "egress gateway is not reachable" in r.stderr, r.stderr
    assert "failed to initialize" not in r.stderr


def descendants(pid):
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            ppid = parent_of(entry)
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c in children.get(p, []):
            out.append(c)
            todo.append(c)
    return out


def shell_processes(box):
    found = []
    for pid in descendants(box.proc.pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"--zygote" in f.read():
                    found.append(pid)
        except OSError:
            pass
    return found


def test_zygote_and_waiting_workers_map_no_libcurl_yet_curl_loads(box):
    box.write_config()
    box.seed_policy()
    box.start()
    assert box.bash("true").returncode == 0
    procs = shell_processes(box)
    assert len(procs) >= 2, procs  # the zygote and its waiting workers
    for pid in procs:
        with open(f"/proc/{pid}/maps") as f:
            maps = f.read()
        assert "libcurl" not in maps and "libssl" not in maps, (pid, maps)
        assert not [lib for lib in LAZY if lib in maps], (pid, maps)
    # rooted in the mount, a worker still opens libcurl on first use: curl
    # then fails at the network, not at loading ("failed to initialize", 2)
    r = box.bash("curl -sS http://127.0.0.1:1/; echo status=$?")
    assert "failed to initialize" not in r.stderr, r.stderr
    assert "status=2" not in r.stdout and "status=" in r.stdout, (r.stdout, r.stderr)


def test_worker_devices(box):
    box.write_config()
    box.seed_policy()
    box.start()
    r = box.bash("echo /dev/*; echo gone > /dev/null && echo null-ok; "
                 "head -c 3 /dev/zero | od -An -tx1; head -c 8 /dev/urandom | wc -c; "
                 "echo x > /dev/new; echo status=$?")
    assert r.stdout.splitlines()[:4] == ["/dev/null /dev/random /dev/urandom /dev/zero",
                                         "null-ok", " 00 00 00", "8"], (r.stdout, r.stderr)
    # dev/ holds the devices and nothing else: a new name there is refused
    assert "status=1" in r.stdout and "/dev/new" in r.stderr, (r.stdout, r.stderr)
    assert box.bash("echo /dev/*").stdout.strip() == "/dev/null /dev/random /dev/urandom /dev/zero"


def test_every_worker_has_the_gateway_environment(box):
    # The first workers are asked for before the gateway starts (their run
    # message carries its environment); the zygote gets it once after that
    # and every later worker inherits it.  Either way the Shell's curl
    # reaches the gateway, whose policy check answers (default deny).
    box.write_config()
    box.seed_policy()
    box.start()
    for i in range(8):
        r = box.bash("curl -sS http://example.invalid/; echo status=$?")
        assert "net:connect gate: policy denied this operation on 'example.invalid:80'" in r.stderr, \
            (i, r.stdout, r.stderr)


def test_archive_commands_and_file_in_a_box(box):
    # rooted in the mount, a worker loads libarchive through the directories
    # the zygote kept, and libmagic reads the database the zygote kept open
    # (by name it is out of reach there: "could not find any valid magic
    # files!")
    box.start_seeded()
    ws = box.workspace
    (ws / "a.txt").write_text("hello\n")
    r = box.bash("tar -czf t.tgz a.txt && tar -tvzf t.tgz | wc -l && zip -q z.zip a.txt && "
                 "unzip -p z.zip && gzip -c a.txt > a.gz && gzip -dc a.gz && xz -c a.txt | xz -dc"
                 " && file -b a.txt t.tgz a.gz && file -i a.txt; echo status=$?", cwd=ws)
    host = subprocess.run(["file", "-b", "a.txt", "t.tgz", "a.gz"], cwd=ws, capture_output=True,
                          text=True, check=True).stdout
    assert r.stdout == ("1\nhello\nhello\nhello\n" + host +
                        "a.txt: text/plain; charset=us-ascii\nstatus=0\n"), (r.stdout, r.stderr)
    assert r.stderr == "", r.stderr
    # the workers that ran them are gone; the zygote still maps none of it
    procs = shell_processes(box)
    zygotes = [p for p in procs if int(parent_of(str(p))) not in procs]
    assert len(zygotes) == 1, procs
    with open(f"/proc/{zygotes[0]}/maps") as f:
        maps = f.read()
    assert not [lib for lib in LAZY if lib in maps], maps
