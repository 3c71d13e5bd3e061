"""What the telemetry and operator tests share: a local OTLP/HTTP receiver
(tests/telemetry/receiver.mjs), a port nobody listens on, the lines of a file
target read as records, and a Box kept in a registry of the test's own."""
import json
import socket
import subprocess
import threading
import urllib.request
import uuid
from pathlib import Path

from conftest import Box


def normalized(o):
    """o without empty lists: the protocol's messages do not tell an empty
    repeated field from an absent one."""
    if isinstance(o, dict):
        return {k: normalized(v) for k, v in o.items() if v != []}
    if isinstance(o, list):
        return [normalized(v) for v in o]
    return o


RECEIVER = Path(__file__).resolve().parents[1] / "telemetry" / "receiver.mjs"


class Receiver:
    """An OTLP/HTTP receiver on 127.0.0.1 (tests/telemetry/receiver.mjs, on
    the OpenTelemetry project's protobuf definitions): every request's path,
    headers and body in the OTLP/JSON mapping, in arrival order; delay:
    seconds each request waits before it is taken (a slow collector), or
    "hold": none is ever answered, and held/closed number those that
    arrived and those their client gave up on (a collector that hangs)."""

    def __init__(self, delay=0.0):
        self.requests = []
        self.synced = set()
        self.held = {}
        self.closed = set()
        self.cond = threading.Condition()
        self.proc = subprocess.Popen(["node", str(RECEIVER), str(delay)], stdout=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, text=True)
        first = self.proc.stdout.readline()
        assert first, "the OTLP receiver did not start (npm ci in tests/telemetry?)"
        self.url = f"http://127.0.0.1:{json.loads(first)['port']}"
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            msg = json.loads(line)
            with self.cond:
                if "sync" in msg:
                    self.synced.add(msg["sync"])
                elif "held" in msg:
                    self.held[msg["held"]] = msg["body"]
                elif "closed" in msg:
                    self.closed.add(msg["closed"])
                else:
                    self.requests.append((msg["path"], msg["headers"], msg["body"]))
                self.cond.notify_all()

    def sync(self):
        """Waits until every request the receiver took so far is read."""
        mark = uuid.uuid4().hex
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        direct.open(f"{self.url}/sync/{mark}", timeout=30).read()
        with self.cond:
            assert self.cond.wait_for(lambda: mark in self.synced, timeout=30)

    def wait_held(self, which=lambda body: True):
        """The number of an export held and not yet given up on whose body
        which accepts, once there is one."""
        def held():
            return [n for n, body in self.held.items() if n not in self.closed and which(body)]
        with self.cond:
            assert self.cond.wait_for(held, timeout=30), "no export held"
            return max(held())

    def still_held(self, n):
        """Whether export n's client still waits for its answer."""
        self.sync()
        with self.cond:
            return n not in self.closed

    def entries(self):
        """(signal, resource entry) of every request, as file_entries gives them."""
        self.sync()
        out = []
        with self.cond:
            for path, _, body in self.requests:
                key = {"/v1/logs": "resourceLogs", "/v1/traces": "resourceSpans"}[path]
                assert list(body) == [key], body
                out.extend((key, e) for e in body[key])
        return out

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.proc.stdout.close()


def closed_port_url():
    """An http URL on a loopback port that nothing listens on."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


def file_entries(path):
    """(signal, resource entry) of each line of a file target: each line is
    one export request with one resource."""
    out = []
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        assert len(rec) == 1, rec
        key = next(iter(rec))
        assert len(rec[key]) == 1, rec
        out.append((key, rec[key][0]))
    return out


def one_record_entries(entries):
    """Each record of entries as an entry of its own, under its resource and
    scope: an exporter may join the records of one resource and scope into
    one entry (the same records), where a file line holds one."""
    out = []
    for key, e in entries:
        scopes_key, items_key = (("scopeLogs", "logRecords") if key == "resourceLogs"
                                 else ("scopeSpans", "spans"))
        for s in e[scopes_key]:
            for it in s[items_key]:
                out.append((key, {**e, scopes_key: [{**s, items_key: [it]}]}))
    return out


def canonical(entries):
    return sorted(json.dumps(e, sort_keys=True) for e in one_record_entries(entries))


def items(entries, scope=None):
    """The log records and spans of entries: (signal, scope name, item)."""
    out = []
    for key, e in entries:
        scopes = e["scopeLogs"] if key == "resourceLogs" else e["scopeSpans"]
        for s in scopes:
            if scope and s["scope"]["name"] != scope:
                continue
            for it in s["logRecords" if key == "resourceLogs" else "spans"]:
                out.append((key, s["scope"]["name"], it))
    return out


def attrs(item):
    return {a["key"]: next(iter(a["value"].values())) for a in item["attributes"]}


def control_records(entries):
    """The control-plane log records' attributes, in order."""
    return [attrs(it) for key, _, it in items(entries, "strands-box.control")
            if key == "resourceLogs"]


class RegisteredBox(Box):
    """A Box whose run is listed in runtime_dir (BOX_RUNTIME_DIR), named name."""

    def __init__(self, root, runtime_dir, name="test"):
        super().__init__(root)
        self.runtime_dir = runtime_dir
        self.name = name

    def env(self):
        return {**super().env(), "BOX_RUNTIME_DIR": str(self.runtime_dir)}

    def write_config(self, agent_command=None, extra=""):
        super().write_config(agent_command, extra)
        text = self.config.read_text().replace('name = "test"', f'name = "{self.name}"', 1)
        self.config.write_text(text)
