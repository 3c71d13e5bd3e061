"""What the telemetry and operator tests share: a local OTLP/HTTP receiver
(python's http.server), a port nobody listens on, the lines of a file
target read as records, and a Box kept in a registry of the test's own."""
import http.server
import json
import socket
import threading
import time

from conftest import Box


class Receiver:
    """An OTLP/HTTP JSON receiver on 127.0.0.1: every request's path, headers
    and decoded body, in arrival order; delay: seconds each request waits
    before its answer (a slow collector)."""

    def __init__(self, delay=0.0):
        self.requests = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if delay:
                    time.sleep(delay)
                with receiver.lock:
                    receiver.requests.append((self.path, dict(self.headers), json.loads(body)))
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"{}")
                except OSError:
                    pass  # the box gave up waiting (a slow receiver's case)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def entries(self):
        """(signal, resource entry) of every request, as file_entries gives them."""
        out = []
        with self.lock:
            for path, _, body in self.requests:
                key = {"/v1/logs": "resourceLogs", "/v1/traces": "resourceSpans"}[path]
                assert list(body) == [key], body
                out.extend((key, e) for e in body[key])
        return out

    def close(self):
        self.server.shutdown()
        self.server.server_close()


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


def canonical(entries):
    return sorted(json.dumps(e, sort_keys=True) for e in entries)


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
