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
import {
  CreateMessageRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [program] = process.argv.slice(2);
const client = new Client(
  { name: "boxfs-test", version: "1.0.0" },
  { capabilities: { sampling: {}, roots: { listChanged: true } } },
);
const logs = [];
let woken = () => {};
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
  logs.push(String(n.params.data));
  woken();
});
client.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
  role: "assistant",
  model: "boxfs-test",
  content: { type: "text", text: `sampled: ${req.params.messages[0].content.text}` },
}));
client.setRequestHandler(ListRootsRequestSchema, async () => ({
  roots: [{ uri: "file:///boxfs-root", name: "boxfs" }],
}));

// The first log message that holds text, once it came; throws after 30 seconds.
async function logged(text) {
  const deadline = Date.now() + 30000;
  for (;;) {
    const found = logs.find((l) => l.includes(text));
    if (found !== undefined) return found;
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`no log message with "${text}" in 30 seconds: ${logs}`);
    await new Promise((resolve) => {
      woken = resolve;
      setTimeout(resolve, left).unref(); /* it keeps no client alive once done */
    });
  }
}

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
