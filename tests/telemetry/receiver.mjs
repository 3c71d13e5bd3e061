// receiver.mjs — an OTLP/HTTP receiver for the telemetry tests, decoding
// with the OpenTelemetry project's own protobuf definitions (the messages
// of opentelemetry-proto, as @opentelemetry/otlp-transformer generates them
// for protobufjs), so a field the box writes that the protocol does not
// define is lost here and the tests that compare with the file target fail.
//
// Prints {"port": N} once it listens on 127.0.0.1, then one JSON line per
// request: {"path", "headers", "body"} (and {"sync": ID} for a GET of
// /sync/ID, after every line before it), body being the export request in
// the OTLP/JSON mapping (ids as hex, 64-bit integers as strings, enums as
// numbers).  A JSON request goes through the same messages (fromObject and
// back), so both encodings are judged by one schema.
//
// With DELAY_SECONDS "hold", no export is ever answered: {"held": N, "body"}
// is printed when the Nth arrives, and {"closed": N} when its client gives
// up on it (a collector that hangs).
//
// Usage: node receiver.mjs [DELAY_SECONDS | hold]
import http from "node:http";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const root = require("@opentelemetry/otlp-transformer/build/src/generated/root.js");
const proto = root.opentelemetry.proto.collector;
const requests = {
  "/v1/logs": proto.logs.v1.ExportLogsServiceRequest,
  "/v1/traces": proto.trace.v1.ExportTraceServiceRequest,
  "/v1/metrics": proto.metrics.v1.ExportMetricsServiceRequest,
};
const hold = process.argv[2] === "hold";
const delayMs = hold ? 0 : Number(process.argv[2] || 0) * 1000;
let held = 0;
// The fields the JSON mapping spells as hex rather than base64.
const IDS = new Set(["traceId", "spanId", "parentSpanId"]);

function mapIds(o, convert) {
  if (Array.isArray(o)) return o.map((v) => mapIds(v, convert));
  if (o === null || typeof o !== "object" || Buffer.isBuffer(o) || o instanceof Uint8Array)
    return o;
  const out = {};
  for (const [k, v] of Object.entries(o)) out[k] = IDS.has(k) ? convert(v) : mapIds(v, convert);
  return out;
}

const toObjectOptions = { longs: String, enums: Number, bytes: String };

function decode(type, contentType, body) {
  let message;
  if (contentType === "application/x-protobuf") {
    message = type.decode(body);
  } else {
    const parsed = mapIds(JSON.parse(body.toString("utf8")), (hex) => Buffer.from(hex, "hex"));
    // the JSON mapping's 64-bit integers are strings, which verify()
    // refuses and fromObject() reads; a field no message defines is lost
    message = type.fromObject(parsed);
  }
  const object = type.toObject(message, toObjectOptions);
  return mapIds(object, (b64) => Buffer.from(b64, "base64").toString("hex"));
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const answer = (status, text) => {
      res.writeHead(status, {
        "Content-Type": "application/json",
        "Content-Length": Buffer.byteLength(text),
      });
      res.end(text);
    };
    // a marker after every line written so far: the test reads up to it
    if (req.method === "GET" && req.url.startsWith("/sync/")) {
      process.stdout.write(JSON.stringify({ sync: req.url.slice(6) }) + "\n");
      return answer(200, "{}");
    }
    const type = requests[req.url];
    if (req.method !== "POST" || !type) return answer(404, "{}");
    let body;
    try {
      body = decode(type, req.headers["content-type"], Buffer.concat(chunks));
    } catch (e) {
      process.stderr.write(`receiver: ${req.url}: ${e.message}\n`);
      return answer(400, JSON.stringify({ error: e.message }));
    }
    const headers = {};
    for (let i = 0; i < req.rawHeaders.length; i += 2)
      headers[req.rawHeaders[i]] = req.rawHeaders[i + 1];
    // a slow collector: it takes the request only once its delay is over
    const take = () => {
      process.stdout.write(JSON.stringify({ path: req.url, headers, body }) + "\n");
      answer(200, "{}");
    };
    if (hold) {
      const n = ++held;
      process.stdout.write(JSON.stringify({ held: n, body }) + "\n");
      res.on("close", () => process.stdout.write(JSON.stringify({ closed: n }) + "\n"));
    } else if (delayMs) setTimeout(take, delayMs);
    else take();
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + "\n");
});
