"""box-shell's start: libcurl (about 30 shared libraries) is not linked at
load time; `curl` opens it on first use.  In a box the zygote maps none of
it (each fork would copy its mappings); a worker's first curl opens it
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
