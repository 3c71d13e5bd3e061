"""box-shell's start: libcurl (about 30 shared libraries) is not linked at
load time; `curl` opens it on first use (the zygote opens it before it
forks workers, see test_gateway.py for curl inside a box)."""
import subprocess

from conftest import BOX_SHELL


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
