// http_server.mjs — the reference `everything` server behind the SDK's streamable HTTP
// transport, for tests/integration/test_mcp.py's http servers.
// Usage: TOKEN=... node http_server.mjs   Listens on 127.0.0.1 at a free port, prints the
// port on stdout, serves /mcp with one session per initialize, and refuses (401) a request
// whose Authorization is not "Bearer $TOKEN": the box must bring the route's secret.
// With CERT and KEY (PEM files) it serves https instead, at HOST:PORT when given.
// Each session keeps its events for a client that resumes a stream with Last-Event-ID.
// With LOG (a file) it appends a line for each resume ("resume ID"), each ended session
// ("delete SID") and each stream it cut ("cut ID"); with CUT=1 it ends each tools/call's
// stream as soon as the call is taken (the answer comes only to a client that resumes);
// with DIE=1 it exits at a tools/call, before it answers, and with DIE_ON_RESUME=1 at a
// resume.  With CUT_STREAM=1, a call of
// echo "cut the stream" sends the log message "before the cut" on the session's own
// stream (once the client opened it), ends that stream, sends "missed while cut" (which
// only a client that resumes gets), and is then answered.
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import { randomUUID } from "node:crypto";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createServer } from "@modelcontextprotocol/server-everything/dist/server/index.js";

const token = process.env.TOKEN ?? "";
const sessions = new Map();
const log = (line) => process.env.LOG && fs.appendFileSync(process.env.LOG, `${line}\n`);

// A session's events in the order they were sent, each id naming its stream, replayed
// after the id a client resumes from (the SDK's EventStore).
class Events {
  byId = new Map();
  count = 0;
  async storeEvent(streamId, message) {
    const id = String(++this.count);
    this.byId.set(id, { streamId, message });
    return id;
  }
  async getStreamIdForEventId(id) {
    return this.byId.get(id)?.streamId;
  }
  async replayEventsAfter(lastId, { send }) {
    const from = this.byId.get(lastId);
    if (!from) throw new Error(`no event ${lastId}`);
    for (const [id, { streamId, message }] of this.byId)
      /* a stream's first event primes a resume: it holds no message */
      if (Number(id) > Number(lastId) && streamId === from.streamId && message.jsonrpc)
        await send(id, message);
    return from.streamId;
  }
}

async function body(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? JSON.parse(text) : undefined;
}

const tls = process.env.CERT
  ? { cert: fs.readFileSync(process.env.CERT), key: fs.readFileSync(process.env.KEY) }
  : null;
/* Exits as a dead server: its listening socket closed first (at once,
 * unlike the exit's own closing), so that a connection made after the
 * call it died in is refused, never taken and then dropped. */
const die = () => {
  server.close();
  process.exit(7);
};
const serve = async (req, res) => {
  if (req.headers.authorization !== `Bearer ${token}`) {
    res.writeHead(401, { "content-type": "text/plain" }).end("no token\n");
    return;
  }
  if (!req.url.startsWith("/mcp")) {
    res.writeHead(404).end();
    return;
  }
  const parsed = req.method === "POST" ? await body(req) : undefined;
  const id = req.headers["mcp-session-id"];
  let transport = id ? sessions.get(id) : undefined;
  if (req.method === "GET" && req.headers["last-event-id"]) {
    log(`resume ${req.headers["last-event-id"]}`);
    if (process.env.DIE_ON_RESUME) die();
  }
  else if (req.method === "GET" && transport) {
    /* the session's own stream is in place once its head goes out */
    const head = res.writeHead;
    res.writeHead = function (status, ...rest) {
      if (status === 200) transport.streaming();
      return head.call(this, status, ...rest);
    };
  }
  if (!transport) {
    if (id || req.method !== "POST") {
      res.writeHead(404).end();
      return;
    }
    const { server: mcp } = createServer();
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: new Events(),
      retryInterval: 100,
      onsessioninitialized: (sid) => sessions.set(sid, transport),
      onsessionclosed: (sid) => {
        sessions.delete(sid);
        log(`delete ${sid}`);
      },
    });
    await mcp.connect(transport);
    const streaming = new Promise((resolve) => (transport.streaming = resolve));
    const note = (data) =>
      mcp.server.notification({ method: "notifications/message", params: { level: "info", data } });
    const take = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const call = message.method === "tools/call";
      if (call && process.env.DIE) die();
      if (call && process.env.CUT_STREAM && message.params.arguments?.message === "cut the stream") {
        (async () => {
          await streaming;
          await note("before the cut");
          transport.closeStandaloneSSEStream();
          log("cut stream");
          await note("missed while cut");
          take(message, extra);
        })();
        return;
      }
      take(message, extra);
      /* the call's answer is not sent yet: it is stored for the resume alone */
      if (call && process.env.CUT && extra?.closeSSEStream) {
        extra.closeSSEStream();
        log(`cut ${message.id}`);
      }
    };
  }
  await transport.handleRequest(req, res, parsed);
};
const server = tls ? https.createServer(tls, serve) : http.createServer(serve);
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? "127.0.0.1", () =>
  console.log(server.address().port),
);
