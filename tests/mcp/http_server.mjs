// http_server.mjs — the reference `everything` server behind the SDK's streamable HTTP
// transport, for tests/integration/test_mcp.py's http servers.
// Usage: TOKEN=... node http_server.mjs   Listens on 127.0.0.1 at a free port, prints the
// port on stdout, serves /mcp with one session per initialize, and refuses (401) a request
// whose Authorization is not "Bearer $TOKEN": the box must bring the route's secret.
// With CERT and KEY (PEM files) it serves https instead, at HOST:PORT when given.
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import { randomUUID } from "node:crypto";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createServer } from "@modelcontextprotocol/server-everything/dist/server/index.js";

const token = process.env.TOKEN ?? "";
const sessions = new Map();

async function body(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? JSON.parse(text) : undefined;
}

const tls = process.env.CERT
  ? { cert: fs.readFileSync(process.env.CERT), key: fs.readFileSync(process.env.KEY) }
  : null;
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
  if (!transport) {
    if (id || req.method !== "POST") {
      res.writeHead(404).end();
      return;
    }
    const { server: mcp } = createServer();
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => sessions.set(sid, transport),
    });
    await mcp.connect(transport);
  }
  await transport.handleRequest(req, res, parsed);
};
const server = tls ? https.createServer(tls, serve) : http.createServer(serve);
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? "127.0.0.1", () =>
  console.log(server.address().port),
);
