"""What the telemetry and operator tests share: a local OTLP/HTTP receiver
(python's http.server), a port nobody listens on, the lines of a file
target read as records, and a Box kept in a registry of the test's own."""
import http.server
import json
import socket
import threading
import time

from conftest import Box


# OTLP/protobuf, decoded from the wire back into the JSON mapping's names:
# message -> {field number: (JSON name, type, repeated)}; the field numbers
# are opentelemetry-proto v1's.
PROTO = {
    "LogsRequest": {1: ("resourceLogs", "ResourceLogs", True)},
    "TracesRequest": {1: ("resourceSpans", "ResourceSpans", True)},
    "ResourceLogs": {1: ("resource", "Resource", False), 2: ("scopeLogs", "ScopeLogs", True)},
    "ResourceSpans": {1: ("resource", "Resource", False), 2: ("scopeSpans", "ScopeSpans", True)},
    "Resource": {1: ("attributes", "KeyValue", True)},
    "ScopeLogs": {1: ("scope", "Scope", False), 2: ("logRecords", "LogRecord", True)},
    "ScopeSpans": {1: ("scope", "Scope", False), 2: ("spans", "Span", True)},
    "Scope": {1: ("name", "string", False), 2: ("version", "string", False),
              3: ("attributes", "KeyValue", True)},
    "LogRecord": {1: ("timeUnixNano", "fixed64", False), 2: ("severityNumber", "int", False),
                  3: ("severityText", "string", False), 5: ("body", "AnyValue", False),
                  6: ("attributes", "KeyValue", True), 9: ("traceId", "hex", False),
                  10: ("spanId", "hex", False), 11: ("observedTimeUnixNano", "fixed64", False),
                  12: ("eventName", "string", False)},
    "Span": {1: ("traceId", "hex", False), 2: ("spanId", "hex", False),
             3: ("traceState", "string", False), 4: ("parentSpanId", "hex", False),
             5: ("name", "string", False), 6: ("kind", "int", False),
             7: ("startTimeUnixNano", "fixed64", False), 8: ("endTimeUnixNano", "fixed64", False),
             9: ("attributes", "KeyValue", True), 15: ("status", "Status", False)},
    "Status": {2: ("message", "string", False), 3: ("code", "int", False)},
    "KeyValue": {1: ("key", "string", False), 2: ("value", "AnyValue", False)},
    "AnyValue": {1: ("stringValue", "string", False), 2: ("boolValue", "bool", False),
                 3: ("intValue", "int64", False), 5: ("arrayValue", "ArrayValue", False)},
    "ArrayValue": {1: ("values", "AnyValue", True)},
}


def _varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, i


def decode_message(buf, message):
    """One protobuf message of type message, as the JSON mapping spells it."""
    schema, out, i = PROTO[message], {}, 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            raw, i = _varint(buf, i)
        elif wire == 1:
            raw, i = int.from_bytes(buf[i:i + 8], "little"), i + 8
        elif wire == 2:
            n, i = _varint(buf, i)
            raw, i = buf[i:i + n], i + n
        elif wire == 5:
            raw, i = int.from_bytes(buf[i:i + 4], "little"), i + 4
        else:
            raise AssertionError(f"wire type {wire} in {message}")
        name, kind, repeated = schema[number]  # an unknown field fails the test
        value = {"string": lambda r: r.decode(), "hex": lambda r: r.hex(),
                 "fixed64": str, "int": int, "bool": bool,
                 "int64": lambda r: str(r - (1 << 64) if r >= 1 << 63 else r)}.get(
                     kind, lambda r: decode_message(r, kind))(raw)
        if repeated:
            out.setdefault(name, []).append(value)
        else:
            out[name] = value
    return out


def normalized(o):
    """o without empty lists: protobuf does not tell an empty repeated field
    from an absent one."""
    if isinstance(o, dict):
        return {k: normalized(v) for k, v in o.items() if v != []}
    if isinstance(o, list):
        return [normalized(v) for v in o]
    return o


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
                kind = "Logs" if self.path == "/v1/logs" else "Traces"
                if self.headers.get("Content-Type") == "application/x-protobuf":
                    decoded = normalized(decode_message(body, kind + "Request"))
                else:
                    decoded = json.loads(body)
                with receiver.lock:
                    receiver.requests.append((self.path, dict(self.headers), decoded))
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
