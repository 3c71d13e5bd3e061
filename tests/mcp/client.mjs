// client.mjs — an MCP client on the official SDK, for tests/integration/test_mcp.py.
// Usage: node client.mjs PROGRAM STEP...   where each STEP is JSON:
//   {"list": true} | {"call": NAME, "args": {...}} | {"log": TEXT}
// Connects to PROGRAM over stdio (the box's alias), runs the steps in order and
// prints one JSON line per step: {"tools": [names]} | {"result": ...} | {"error": message}
// | {"log": the first log message of the server's that holds TEXT, awaited 30 seconds}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { awaitingLogs } from "./logs.mjs";

const [program, ...steps] = process.argv.slice(2);
const transport = new StdioClientTransport({ command: program, args: [], stderr: "inherit" });
const client = new Client({ name: "boxfs-test", version: "1.0.0" });
const awaitLog = awaitingLogs(client);
try {
  await client.connect(transport);
} catch (e) {
  console.log(JSON.stringify({ error: String(e.message ?? e) }));
  process.exit(3);
}
for (const text of steps) {
  const step = JSON.parse(text);
  try {
    if (step.log !== undefined) {
      console.log(JSON.stringify({ log: await awaitLog(step.log) }));
    } else if (step.list) {
      const r = await client.listTools();
      console.log(JSON.stringify({ tools: r.tools.map((t) => t.name) }));
    } else {
      const r = await client.callTool({ name: step.call, arguments: step.args ?? {} });
      console.log(JSON.stringify({ result: r }));
    }
  } catch (e) {
    console.log(JSON.stringify({ error: String(e.message ?? e), code: e.code }));
  }
}
await client.close();
