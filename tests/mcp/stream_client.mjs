// stream_client.mjs — an MCP client on the official SDK that answers a server's own requests
// (sampling, roots) and awaits its log notifications, for tests/integration/test_mcp.py's
// streams of an http server.
// Usage: node stream_client.mjs PROGRAM   Connects to PROGRAM over stdio (the box's alias) and
// prints one JSON line per step:
//   {"sampled": text}   the result of a call whose server asks the client for a sampling
//   {"log": text}       a log message of the server's own, once its simulated logging is on
//   {"roots": text}     the server's log once it asked for (and got) the client's roots
//   {"error": message}  a step that failed, or waited more than 30 seconds
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CreateMessageRequestSchema, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { awaitingLogs } from "./logs.mjs";

const [program] = process.argv.slice(2);
const client = new Client(
  { name: "boxfs-test", version: "1.0.0" },
  { capabilities: { sampling: {}, roots: { listChanged: true } } },
);
const logged = awaitingLogs(client);
client.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
  role: "assistant",
  model: "boxfs-test",
  content: { type: "text", text: `sampled: ${req.params.messages[0].content.text}` },
}));
client.setRequestHandler(ListRootsRequestSchema, async () => ({
  roots: [{ uri: "file:///boxfs-root", name: "boxfs" }],
}));

async function step(name, fn) {
  try {
    console.log(JSON.stringify({ [name]: await fn() }));
  } catch (e) {
    console.log(JSON.stringify({ error: String(e.message ?? e) }));
  }
}

await client.connect(new StdioClientTransport({ command: program, args: [], stderr: "inherit" }));
await step("sampled", async () => {
  const r = await client.callTool({
    name: "trigger-sampling-request",
    arguments: { prompt: "from the box", maxTokens: 5 },
  });
  return r.content[0].text;
});
await step("log", async () => {
  await client.callTool({ name: "toggle-simulated-logging", arguments: {} });
  return logged(" - SessionId ");
});
await step("roots", async () => {
  await client.sendRootsListChanged();
  return logged("Roots updated: 1 root(s)");
});
await client.close();
